"""Reading and writing a finished export: its ShapeEnv, ranges, run-time size checks,
recorded guards, and where torch's symbols and dynamo's frames come from."""

from __future__ import annotations

import linecache
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sympy
import torch
from torch._guards import TracingContext
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from export._torch_compat.symbols import value_range

__all__ = [
    "shape_env_of", "set_range_constraints", "add_size_asserts", "dynamo_stack",
    "symbol_origin_frames", "unbacked_symbols_with_stacks", "recorded_guards", "sym_expr",
    "decider_of", "reword_asserts", "static_input_sizes",
]


def shape_env_of(program: Any) -> ShapeEnv | None:
    """The ShapeEnv behind an ExportedProgram or GraphModule, found via its SymInts.

    Returns None when the graph carries no symbolic values (a fully static export).
    """
    graph = program.graph
    for node in graph.nodes:
        val = node.meta.get("val")
        vals = val if isinstance(val, (list, tuple)) else [val]
        for v in vals:
            syms: list[Any] = []
            if isinstance(v, torch.Tensor):
                syms = [*v.shape, *v.stride(), v.storage_offset()]
            elif isinstance(v, (torch.SymInt, torch.SymBool, torch.SymFloat)):
                syms = [v]
            for s in syms:
                env = getattr(getattr(s, "node", None), "shape_env", None)
                if env is not None:
                    return env
    return None


def set_range_constraints(
    program: torch.export.ExportedProgram,
    ranges: Mapping[sympy.Symbol, tuple[int | None, int | None]],
) -> None:
    """Replace ``program.range_constraints`` (whose public setter raises).

    ``ranges`` maps torch symbols to ``(lo, hi)`` (None = unbounded). These are what
    ``program.module()`` checks inputs against at call time.
    """
    program._range_constraints = {s: value_range(lo, hi) for s, (lo, hi) in ranges.items()}


def add_size_asserts(program: torch.export.ExportedProgram,
                     checks: list[tuple[str, int | None, str, int, str]]) -> int:
    """Insert runtime checks on input sizes into ``program``'s graph.

    Each check is ``(placeholder_name, dim, op, bound, message)`` with ``op`` in
    ``>= <= ==``; it becomes ``_assert_scalar(sym_size(x, dim) op bound, message)`` right
    after the placeholders (``x op bound`` for an int input, ``dim=None``), so
    ``program.module()`` and a saved/loaded program enforce it. torch itself leaves lower
    bounds <= 2 unchecked, for int inputs too. Returns the number inserted.
    """
    ops = {">=": operator.ge, "<=": operator.le, "==": operator.eq}
    graph = program.graph_module.graph
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    anchor = list(placeholders.values())[-1] if placeholders else None
    done = 0
    for name, dim, op, bound, message in checks:
        ph = placeholders.get(name)
        val = ph.meta.get("val") if ph is not None else None
        if anchor is None or ph is None:
            continue
        if dim is None:  # an int input (a SymInt placeholder): compare the value itself
            if not isinstance(val, torch.SymInt):
                continue
            size, value = ph, val  # type: Any, Any
            with graph.inserting_after(anchor):
                cond = graph.call_function(ops[op], (size, bound))
        else:
            if not isinstance(val, torch.Tensor) or dim >= val.dim():
                continue
            with graph.inserting_after(anchor):
                size = graph.call_function(torch.ops.aten.sym_size.int, (ph, dim))
            with graph.inserting_after(size):
                cond = graph.call_function(ops[op], (size, bound))
            value = val.shape[dim]
            size.meta["val"] = value
        with graph.inserting_after(cond):
            check = graph.call_function(torch.ops.aten._assert_scalar.default, (cond, message))
        cond.meta["val"] = ops[op](value, bound)
        check.meta["val"] = None
        anchor = check
        done += 1
    if done:
        program.graph_module.recompile()
    return done


_TORCH_ASSERT = "Runtime assertion failed for expression"


def reword_asserts(program: torch.export.ExportedProgram, reword: Callable[[sympy.Basic], str | None]) -> int:
    """Give torch's deferred runtime assertions in ``program``'s graph (``Runtime assertion
    failed for expression s17 <= 2*s77 on node 'le'``, torch's symbols) the message
    ``reword(condition)`` returns for the asserted condition (torch's sympy expression); None
    keeps torch's. Returns the number reworded."""
    graph = program.graph_module.graph
    done = 0
    for node in graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.aten._assert_scalar.default or len(node.args) < 2:
            continue
        cond, message = node.args[0], node.args[1]
        if not isinstance(message, str) or not message.startswith(_TORCH_ASSERT) or not isinstance(cond, torch.fx.Node):
            continue
        expr = sym_expr(cond.meta.get("val"))
        text = reword(expr) if expr is not None else None
        if text:
            node.args = (cond, text, *node.args[2:])
            done += 1
    if done:
        program.graph_module.recompile()
    return done


def static_input_sizes(program: torch.export.ExportedProgram, names: Sequence[str | None]) -> dict[str, int]:
    """``{"x.size(2)": 6}``: the static dims of the program's user inputs (``names`` in the
    order of its user-input placeholders), from the placeholders' fake values."""
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    user = [s.arg.name for s in program.graph_signature.input_specs
            if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    out: dict[str, int] = {}
    for name, ph in zip(names, user):
        val = placeholders[ph].meta.get("val") if ph in placeholders else None
        if name is None or not isinstance(val, torch.Tensor):
            continue
        for d, n in enumerate(val.shape):
            if isinstance(n, int):
                out[f"{name}.size({d})"] = n
    return out


def dynamo_stack() -> list[tuple[str, int, str, str]]:
    """The user frames dynamo is tracing (strict mode), innermost last: ``(file, line,
    function, code)``. Empty outside a dynamo trace, where the Python stack is the truth."""
    out = []
    for fr in TracingContext.extract_stack():
        line = fr.line if fr.line else ""
        if not line and fr.lineno:
            line = linecache.getline(fr.filename, fr.lineno).strip()
        out.append((fr.filename, fr.lineno or 0, fr.name, line.strip()))
    return out


def symbol_origin_frames(env: Any, sym: sympy.Symbol) -> list[tuple[str, int, str, str]]:
    """Where torch allocated an unbacked symbol (the ``.item()`` call), innermost last:
    ``(file, line, function, code)``; empty when torch did not record it."""
    captured = getattr(env, "var_to_stack", {}).get(sym)
    if captured is None:
        return []
    try:
        summary = captured.summary()
    except Exception:  # noqa: BLE001 - a best-effort location
        return []
    return [(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip()) for fr in summary]


def unbacked_symbols_with_stacks(env: Any) -> list[sympy.Symbol]:
    """The symbols whose allocation stack ``env`` recorded (see :func:`symbol_origin_frames`)."""
    return list(getattr(env, "var_to_stack", {}) or {})


def recorded_guards(program: Any) -> list[sympy.Basic]:
    """The guards torch recorded in the ShapeEnv behind ``program`` (they become the
    program's own run-time input checks), as torch sympy expressions."""
    env = shape_env_of(program)
    return [g.expr for g in getattr(env, "guards", ())] if env is not None else []


def sym_expr(value: Any) -> sympy.Basic | None:
    """The symbolic expression behind a SymInt/SymBool (torch's symbols), an int as a
    sympy Integer, else None: how a graph node's ``meta["val"]`` reads as a size."""
    if isinstance(value, bool):
        return sympy.true if value else sympy.false
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, (torch.SymInt, torch.SymBool)):
        return value.node.expr
    return None


def returns_self(target: Any) -> bool:
    """Whether an op returns its first argument, mutated (``aten.copy_``, ``aten.add_``:
    its schema writes the first argument and returns that alias), so that the node's value
    is that argument's tensor."""
    schema = getattr(target, "_schema", None)
    if schema is None or not schema.arguments or len(schema.returns) != 1:
        return False
    first, ret = schema.arguments[0].alias_info, schema.returns[0].alias_info
    return first is not None and ret is not None and first.is_write and ret.is_write and \
        first.before_set == ret.before_set


def graph_mutates(program: Any) -> bool:
    """Whether ``program``'s graph may write a tensor: a node whose op schema is mutable
    (an in-place or ``out=`` op), a higher-order op (not looked into), or a mutated input or
    buffer in its signature."""
    signature = program.graph_signature
    if signature.buffers_to_mutate or signature.user_inputs_to_mutate:
        return True
    for module in program.graph_module.modules():
        graph = getattr(module, "graph", None)
        for node in graph.nodes if graph is not None else ():
            if node.op != "call_function":
                continue
            target = node.target
            if isinstance(target, torch._ops.HigherOrderOperator):
                return True
            schema = getattr(target, "_schema", None)
            if schema is not None and schema.is_mutable:
                return True
    return False


def decider_of(value: Any) -> Any:
    """The decider of the routed ShapeEnv behind a SymInt (None outside a routed trace)."""
    env = getattr(getattr(value, "node", None), "shape_env", None)
    return getattr(env, "decider", None)
