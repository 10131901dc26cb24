"""From the solver's violations to what the user reads: root causes and verified fixes.

:func:`blocking_violations` picks the facts that restrict what the user declared (a guard
on an ``AUTO`` dim, or a range torch assumes and the program enforces, is not an error);
:func:`causes_of` collapses the guards one source line produced into one :class:`Cause`;
:func:`violation_error` builds the ConstraintViolationError with fixes in both forms.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from export import _torch_compat as tc
from export.errors import ConstraintViolationError, DataDependentError, ExportError
from export.fixspec import FixedSpec, apply_fixes
from export.floor_policy import floor_policy, is_floor
from export.program import SymshapeProgram
from export.provenance import UserFrame, is_user_file
from export.render import plain_words, render_checks, render_classic, render_modern
from export.render_words import congruence_words
from export.probe import probe_specializations, without_dims
from export.redundant import irredundant
from export.suggested import Retry, SuggestedFixes, verify
from export.value_reads import ValueRead, size_read
from export.zero_one import zero_one
from export.trace import FLOOR_OP, POSITIVE_OP, SPECIALIZED_OP, Trace
from shapes.spec import InputDim
from shapes.printing import to_python
from shapes.relation import is_relation
from shapes.expr import FloorDiv
from solver import CheckFix, Fact, Fixes, Solver, SpecializeFix, Truth, suggest, to_json
from shapes.affine import linear_terms

__all__ = ["Cause", "Retry", "SuggestedFixes", "blocking_violations", "causes_of", "violation_error",
           "data_dependent_error", "static_fixes"]

SPECIALIZED = "specialized"


@dataclass(frozen=True, slots=True)
class Cause:
    """One root cause: the dims at fault, where, and the constraint in plain words."""

    dims: tuple[str, ...]
    origin: str | None
    code: str | None
    constraint: str
    kind: str
    facts: tuple[Fact, ...]

    def describe(self) -> str:
        """``x.size(1) must be divisible by 4`` and, below it, ``at model.py:14: x.reshape(...)``."""
        if not self.origin:
            return self.constraint
        return f"{self.constraint}\n     at {self.origin}" + (f": {self.code}" if self.code else "")


# -- which violations block the export ------------------------------------------------------

def blocking_violations(trace: Trace) -> list[Fact]:
    """Facts the spec does not imply that restrict a user-declared dynamic dim."""
    user, dynamic = trace.user_syms, trace.dynamic_syms

    def may_block(f: Fact) -> bool:
        syms = f.rel.free_symbols
        op = f.reason.op or ""
        if f.reason.kind == "trace_assumption" and op.startswith(SPECIALIZED_OP):
            return bool(syms & dynamic)  # a named Dim or a Dim.DYNAMIC made static by a 0/1 example
        if not syms & user or not trace.is_about_inputs(f):
            return False  # torch's own bookkeeping, or a runtime check on data (in the graph)
        if f.reason.kind == "trace_assumption":
            if op in (FLOOR_OP, POSITIVE_OP):
                return False  # enforced by the program's ranges and runtime checks
        return not _adapts(f.rel, trace, spec_solver)

    spec_solver: list[Solver] = []  # the spec's own solver, built when a hint dim needs it
    return [v.fact for v in trace.solver.violations(only=may_block)]


def _hint_bounds(trace: Trace) -> dict[sympy.Symbol, tuple[int, int | None]]:
    """The declared bounds of the hint dims (AUTO, DYNAMIC)."""
    out = {}
    for d, sym in trace.dim_syms.items():
        if sym in trace.auto_syms:
            decl = trace.spec.decl(d)
            out[sym] = (0, None) if decl is None else (decl.lo, decl.hi)
    return out


def _adapts(rel: sympy.Basic, trace: Trace, spec: list[Solver]) -> bool:
    """A relation a hint dim (AUTO, DYNAMIC) satisfies by itself, taking whatever value is
    needed, whatever the declared dims are: an equality where it has coefficient +-1; an
    inequality it satisfies at the end of its declared range it moves towards (``x <= y``
    for a hint ``y`` without a max; ``x >= y`` when ``x >= min(y)`` holds by the spec)."""
    auto = trace.auto_syms
    if not rel.free_symbols & auto or not isinstance(rel, (sympy.Eq, sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt)):
        return False
    lin = linear_terms(sympy.expand(rel.lhs - rel.rhs))
    if lin is None:
        return False
    if isinstance(rel, sympy.Eq):
        return any(abs(a) == 1 and s in auto for s, a in lin[0].items())
    grows = 1 if isinstance(rel, (sympy.Ge, sympy.Gt)) else -1  # lhs - rhs must grow (Ge) or shrink (Le)
    bounds = _hint_bounds(trace)
    for s, a in lin[0].items():
        if s not in bounds or not a:
            continue
        end = bounds[s][1] if a * grows > 0 else bounds[s][0]
        if end is None:
            return True
        if not spec:
            spec.append(trace.solver.replica(kinds=("spec",)))
        if spec[0].decide(rel.xreplace({s: end})) is Truth.TRUE:
            return True
    return False


# -- root causes -----------------------------------------------------------------------------

def causes_of(facts: list[Fact], trace: Trace) -> tuple[Cause, ...]:
    """One cause per (source line, dims): the guards one op produced collapse into one."""
    names = trace.names
    groups: dict[tuple[str | None, tuple[str, ...]], list[Fact]] = {}
    for f in facts:
        dims = tuple(sorted(names.get(s, str(s)) for s in f.rel.free_symbols if s in names))
        groups.setdefault((f.reason.origin, dims), []).append(f)
    out = []
    for (origin, dims), fs in groups.items():
        first = fs[0]
        if first.reason.op and first.reason.op.startswith(SPECIALIZED_OP):
            value = first.rel.rhs if isinstance(first.rel, sympy.Eq) else "?"
            text = (f"{', '.join(dims)} was specialized to {value}: the example input has size {value} "
                    f"on a dim declared dynamic; use an example of size >= 2")
            out.append(Cause(dims, origin, None, text, SPECIALIZED, tuple(fs)))
            continue
        periodic = [f for f in fs if f.rel.has(FloorDiv, sympy.Mod)]
        said = congruence_words(trace, periodic) if periodic else None
        rest = fs if said is None else [f for f in fs if f not in periodic]
        words = "; ".join(dict.fromkeys((said or []) + [_words(trace, f.rel, names) for f in rest]))
        out.append(Cause(dims, origin, first.reason.op, words, "guard", tuple(fs)))
    return tuple(out)


def _words(trace: Trace, rel: sympy.Basic, names: Mapping[sympy.Symbol, str]) -> str:
    try:
        simple = trace.solver.simplify(rel)
        if isinstance(simple, sympy.logic.boolalg.BooleanAtom):  # true given the other facts: say it as asked
            return _plain(rel, names)
        return plain_words(simple, names)
    except Exception:  # noqa: BLE001 - a message must never fail the export
        return _plain(rel, names)


def _plain(rel: sympy.Basic, names: Mapping[sympy.Basic, str]) -> str:
    try:
        return to_python(rel, names)
    except Exception:  # noqa: BLE001
        return str(rel)


# -- the error -------------------------------------------------------------------------------

def violation_error(trace: Trace, retry: Retry | None) -> ConstraintViolationError | None:
    """The error for an export whose guards the spec does not imply, or None."""
    blocking = blocking_violations(trace)
    if not blocking:
        return None
    causes = causes_of(irredundant(blocking, trace), trace)
    fixes = None
    static: list[InputDim] = []
    if any(c.kind == SPECIALIZED for c in causes):
        # with a cause of another kind too, the 0/1 dims go static inside the general fix (one
        # verification of both): a fix of the 0/1 dims alone cannot re-export
        alone = all(c.kind == SPECIALIZED for c in causes)
        causes, static, fixes = _diagnose_specializations(causes, trace, retry, build=alone)
    if fixes is None:
        fixes = _fixes(trace, retry, static)  # err.fixes is never None
    lines = ["Constraints violated: the model needs more than the declared dynamic shapes guarantee."]
    for i, c in enumerate(causes, 1):
        lines.append(f"  {i}. {c.describe()}")
    if fixes is not None:
        lines += ["", fixes.render()]
    return ConstraintViolationError("\n".join(lines), causes=causes, fixes=fixes,
                                    guards=tuple(f for c in causes for f in c.facts), problem=_json(trace))


def _diagnose_specializations(causes: tuple[Cause, ...], trace: Trace, retry: Retry | None, *,
                              build: bool) -> tuple[tuple[Cause, ...], list[InputDim], SuggestedFixes | None]:
    """The 0/1 causes explained by a probe with a larger example (:mod:`export.probe`), the
    dims a fix makes static, and (``build``) that fix, verified: the dims static at their
    example sizes, or the larger example."""
    spec, inputs = trace.spec, trace.inputs
    by_name = {str(d): d for d in trace.dim_syms}
    special = {c: by_name[c.dims[0]] for c in causes if c.kind == SPECIALIZED and c.dims and c.dims[0] in by_name}
    result = None
    if retry is not None and special:
        result = probe_specializations(trace, retry.args, retry.kwargs, list(special.values()), retry.run)
    out = []
    for c in causes:
        d = special.get(c)
        if d is None:
            out.append(c)
            continue
        value = inputs.size(d)
        decl = spec.decl(d)
        declared = f" ({decl.text})" if decl is not None else ""
        head = (f"{d} was specialized to {value}: its example size is {value} but it is declared dynamic{declared}, "
                "and torch never keeps sizes 0 and 1 dynamic")
        if result is not None and d in result.partners:
            other, origin, code = result.partners[d]
            if other.startswith("a static dim"):
                size = other.rsplit(" ", 1)[-1]
                text = (f"{d} broadcasts against {other}: declare {d} static {value} if it is always "
                        f"broadcast, or static {size} if it always matches")
                dims = c.dims
            else:
                text = (f"{d} broadcasts against {other}: declare {d} static {value} if it is always "
                        f"broadcast, or make it the same Dim as {other} and use an example of size >= 2")
                dims = c.dims + (other,)
            out.append(Cause(dims, origin, code, text, SPECIALIZED, c.facts))
        elif result is not None and result.ok:
            n = result.sizes.get(d, 2)
            out.append(Cause(c.dims, c.origin, c.code,
                             f"{head}: use an example of size >= 2 (exporting with {d} = {n} succeeds)",
                             SPECIALIZED, c.facts))
        else:
            out.append(Cause(c.dims, c.origin, c.code, f"{head}: use an example of size >= 2", SPECIALIZED, c.facts))
    static = list(result.partners) if result is not None and result.partners else list(special.values())
    ok = result is not None and result.ok
    larger = {str(d): n for d, n in result.sizes.items()} if result is not None and ok else None
    program = result.program if result is not None and ok else None
    fixes = static_fixes(trace, retry, static, larger, larger_program=program) if static and build else None
    return tuple(out), static, fixes


def static_fixes(trace: Trace, retry: Retry | None, dims: list[InputDim],
                 larger: Mapping[str, int] | None = None, values: list[int] | None = None,
                 larger_program: SymshapeProgram | None = None) -> SuggestedFixes:
    """The dims static at ``values`` (default: their example sizes, as torch does),
    re-exported with exactly what ``apply()`` returns (that program is offered); and
    ``larger``, the example sizes with which the spec itself exports (``larger_program``)."""
    inputs = trace.inputs
    if values is None:
        values = [inputs.size(d) for d in dims]
    fixed = FixedSpec(without_dims(trace.spec, dims), (), ())
    program = None
    if retry is not None:
        try:
            program = verify(fixed, inputs, retry)
        except ExportError:
            program = None
    verified = program is not None
    records = Fixes(tuple(SpecializeFix(trace.dim_syms[d], v) for d, v in zip(dims, values)), verified)
    return SuggestedFixes(records, fixed, render_modern(fixed.spec, inputs), render_classic(fixed.spec, inputs), (),
                          verified, inputs, False, larger, program=program, larger_example_program=larger_program)


def _json(trace: Trace) -> str | None:
    try:
        return to_json(trace.solver)
    except Exception:  # noqa: BLE001
        return None


def _fix_fact(trace: Trace, fact: Fact) -> bool:
    """Whether a fact of the trace belongs in the fix: a fact about input dims, but never
    torch's ``>= 2`` trace assumption (a floor is no user obligation: the re-export decides,
    from its own evidence, whether its program keeps it as a run-time range) nor a 0/1
    specialization (reported apart)."""
    if is_floor(fact) or (fact.reason.op or "").startswith(SPECIALIZED_OP):
        return False
    return trace.is_about_inputs(fact)


def _with_floors(trace: Trace, records: Fixes) -> Callable[[Fact], bool]:
    """The fix's facts plus the ``>= 2`` floors the trace needs (those the site table leaves)
    on the dims of ``records``' runtime checks only: a hole such as ``s != 2`` says itself
    as ``s >= 3`` once ``s >= 2`` is kept, while a floor on a dim no check mentions would
    refuse size 1 on a dim the re-export's own 0/1 evidence may relieve."""
    roots = {trace.solver.root_of(x) for fix in records if isinstance(fix, CheckFix) for x in fix.rel.free_symbols}
    policy = floor_policy(trace, zero_one(trace).covered)

    def keep(fact: Fact) -> bool:
        if not is_floor(fact):
            return _fix_fact(trace, fact)
        return policy.about_inputs(fact) and all(trace.solver.root_of(x) in roots for x in fact.rel.free_symbols)
    return keep


def _suggested(trace: Trace, keep: Callable[[Fact], bool]) -> tuple[Fixes, FixedSpec]:
    """The solver's fixes for the trace's facts that ``keep`` accepts, and the spec they give."""
    records = suggest(trace.solver.replica(kinds=("spec", "guard", "trace_assumption"), keep=keep))
    return records, apply_fixes(trace, records)


def _fixes(trace: Trace, retry: Retry | None, static: Sequence[InputDim] = ()) -> SuggestedFixes:
    """The solver's fix for the trace's facts, with the ``static`` dims (0/1 specializations)
    static at their example sizes, verified by re-exporting what ``apply()`` returns."""
    inputs = trace.inputs
    records, fixed = _suggested(trace, lambda f: _fix_fact(trace, f))
    if fixed.checks:  # a fact only the floor implies: the floors the site table leaves, if that says it with a Dim
        floored = _suggested(trace, _with_floors(trace, records))
        if len(floored[1].checks) < len(fixed.checks):
            records, fixed = floored
    if static:
        fixed = FixedSpec(without_dims(fixed.spec, static), fixed.checks, fixed.unexpressed)
        records = Fixes(records.items + tuple(SpecializeFix(trace.dim_syms[d], inputs.size(d)) for d in static),
                        records.verified)
    fixed, passed, program = _verified(trace, fixed, retry)
    names = {sym: f"{d.input_name}.shape[{d.dim}]" for d, sym in trace.dim_syms.items()}
    # apply() returns the spec without the checks: verified only when no check is needed
    verified = passed and not fixed.checks
    return SuggestedFixes(records, fixed, render_modern(fixed.spec, inputs), render_classic(fixed.spec, inputs),
                          tuple(render_checks(fixed.checks, names)), verified, inputs, passed and bool(fixed.checks),
                          program=program if verified else None)


def _verified(trace: Trace, fixed: FixedSpec, retry: Retry | None) -> tuple[FixedSpec, bool, SymshapeProgram | None]:
    """Re-export ``fixed``, and while that fails, what its re-export's own error suggests
    (at most three rounds): the last fix, whether it re-exported, and the program it gave."""
    if retry is None:
        return fixed, False, None
    for _ in range(3):
        try:
            return fixed, True, verify(fixed, trace.inputs, retry)
        except ConstraintViolationError as e:
            more = e.fixes
            if not isinstance(more, SuggestedFixes):
                break
            fixed = more.fixed
        except ExportError:  # apply()'s result is no spec export takes: not verified
            break
    return fixed, False, None


# -- data-dependent errors -----------------------------------------------------------------------

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
    if cond is not None and not is_relation(cond):
        return _concrete_value_error(cond, made, names, trace, where)
    shown = _plain(rel, names) if rel is not None else (str(cond) if cond is not None else "a data-dependent value")
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
    return DataDependentError("\n".join(msg))


def _concrete_value_error(cond: sympy.Basic, made: Mapping[Any, UserFrame | None], names: Mapping[sympy.Basic, str],
                          trace: Trace, where: str | None) -> DataDependentError:
    """torch needed the concrete value of a data-dependent int (a loop count, a Python int)."""
    expr = trace.expression(cond)
    shown = _plain(expr, names) if expr is not None else str(cond)
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
    return DataDependentError("\n".join(msg))


def _symbol(trace: Trace, sym: sympy.Symbol) -> sympy.Basic:
    try:
        return trace.symbol(sym)
    except ExportError:  # not an integer (a float value): printed as torch names it
        return sym


def _var_name(frame: UserFrame | None, default: str) -> str:
    """The variable an unbacked value was assigned to where it was made (``v = x.item()``)."""
    m = re.match(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*=[^=]", frame.code) if frame is not None else None
    return m[1] if m else default


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
