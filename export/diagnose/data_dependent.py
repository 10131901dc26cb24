"""Data-dependent errors explained: which value (``v = x.max().item()`` at its line), which
branch asked about it, and the ``constrain_as_value`` / ``constrain_as_size`` /
``torch._check`` line to add, or why no constraint can help.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Any

import sympy

from export import _torch_compat as tc
from export.errors import DataDependentError, ExportError
from export.program.document import error_document
from export.tracing.provenance import UserFrame, is_user_file
from export.diagnose.value_reads import ValueRead, size_read
from export.tracing.trace import Trace, relation_text, trace_stats
from shapes.relation import is_relation

__all__ = ["data_dependent_error"]


def data_dependent_error(e: BaseException, trace: Trace) -> DataDependentError | None:
    """Explain torch's data-dependent guard error: which value, where, and the line to add."""
    chain = []
    x: BaseException | None = e
    while x is not None and x not in chain:
        chain.append(x)
        x = x.__cause__ or x.__context__
    dd = next((c for c in chain if isinstance(c, tc.GuardOnDataDependentSymNode)), None)
    if dd is None and not any("data-dependent" in str(c) for c in chain):
        return None
    cond = getattr(dd, "cond", None)
    rel = trace.convert(cond) if cond is not None else None
    at = _user_frame_of(e)
    where = _describe(at) if at is not None else None
    values = sorted((cond.free_symbols if cond is not None else set()), key=str)
    made = {s: trace.unbacked_origins.get(s) for s in values}
    reads = {s: _read_of(made[s], at) for s in values}
    names: dict[sympy.Basic, str] = {_symbol(trace, s): _value_name(s, made[s], reads[s]) for s in values}
    kw = _located(at, trace)
    if cond is not None and not is_relation(cond):
        return _concrete_value_error(cond, made, names, trace, where, kw)
    shown = relation_text(rel, names) if rel is not None else (str(cond) if cond is not None else "a data-dependent value")
    msg = [f"Could not decide {shown}: it depends on tensor data that export cannot see."]
    if where:
        msg.append(f"  at {where}")
    for s in values:
        msg += _value_origin(made[s], reads[s], str(s))
    msg.append("Say what holds, right after the value is computed:")
    for s in values:
        frame, read = made[s], reads[s]
        var = _value_name(s, frame, read)
        computed = read.frame if read is not None and read.frame is not None else frame
        after = f"  # after {computed.origin}" if computed else ""
        if tc.symbol_kind(s) == "unbacked":
            msg.append(f"    export.constrain_as_value({var}, min=..., max=...){after}")
            msg.append(f"    export.constrain_as_size({var}, min=..., max=...)   # if {var} is used as a size")
        else:
            msg.append(f"    torch._check(...)  # a condition on {var}{after}")
    if rel is not None:
        msg.append(f"or, if it always holds: torch._check({shown})")
    msg.append("If both branches are needed, use torch.cond(pred, true_fn, false_fn, operands) instead of `if`.")
    return DataDependentError("\n".join(msg), document=error_document, **kw)


def _located(at: UserFrame | None, trace: Trace) -> dict[str, Any]:
    """The error's structured fields: where (``origin``, ``code``), the solver problem, the stats."""
    return {"origin": at.origin if at is not None else None, "code": (at.code or None) if at is not None else None,
            "problem": trace.problem, "stats": trace_stats(trace)}


def _concrete_value_error(cond: sympy.Basic, made: Mapping[Any, UserFrame | None], names: Mapping[sympy.Basic, str],
                          trace: Trace, where: str | None, kw: Mapping[str, Any]) -> DataDependentError:
    """torch needed the concrete value of a data-dependent int (a loop count, a Python int)."""
    expr = trace.expression(cond)
    shown = relation_text(expr, names) if expr is not None else str(cond)
    msg = [f"The model needs the concrete value of {shown} (a Python loop count or int), but it is "
           "computed from tensor data, which export cannot see."]
    if where:
        msg.append(f"  at {where}")
    for frame in made.values():
        if frame is not None:
            msg.append(f"  {_var_name(frame, shown)} comes from {frame.code} at {frame.origin}.")
    msg.append("No constraint fixes this: a traced program has one fixed loop count. Rewrite the loop with "
               "tensor operations, use torch._higher_order_ops.while_loop, or pass the value as a plain "
               "int input (it is then specialized).")
    return DataDependentError("\n".join(msg), document=error_document, **kw)


def _symbol(trace: Trace, sym: sympy.Symbol) -> sympy.Basic:
    try:
        return trace.symbol(sym)
    except ExportError:  # not an integer (a float value): printed as torch names it
        return sym


def _var_name(frame: UserFrame | None, default: str) -> str:
    """The variable an unbacked value was assigned to where it was made (``v = x.item()``)."""
    return frame.assigned(default) if frame is not None else default


def _read_of(frame: UserFrame | None, at: UserFrame | None) -> ValueRead | None:
    """How the deciding line reads the size of the tensor ``frame`` made (``y = x.nonzero()``)."""
    if frame is None or at is None:
        return None
    tensor = _var_name(frame, "")
    return size_read(tensor, at) if tensor else None


def _value_name(sym: sympy.Symbol, frame: UserFrame | None, read: ValueRead | None) -> str:
    """The value as user code names it: ``z`` (``z = y.shape[0]``), ``y.shape[0]``, or ``v`` (``v = x.item()``)."""
    return read.name if read is not None else _var_name(frame, str(sym))


def _value_origin(frame: UserFrame | None, read: ValueRead | None, default: str) -> list[str]:
    """Where a data-dependent value comes from: its own line, then the tensor it is a size of."""
    if frame is None:
        return []
    made = f"{frame.code} at {frame.origin}"
    if read is None:
        return [f"  {_var_name(frame, default)} comes from {made}."]
    tensor = _var_name(frame, default)
    if read.frame is None:
        return [f"  {read.name} is a size of {tensor}, which comes from {made}."]
    return [f"  {read.name} comes from {read.frame.code} at {read.frame.origin}, a size of {tensor}, "
            f"which comes from {made}."]


def _user_frame_of(e: BaseException) -> UserFrame | None:
    """The innermost user frame the error passed through."""
    for fr in reversed(traceback.extract_tb(e.__traceback__)):
        if is_user_file(fr.filename):
            return UserFrame(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip())
    return None


def _describe(frame: UserFrame) -> str:
    """``file:line: code``."""
    return f"{frame.origin}: {frame.code}" if frame.code else frame.origin
