"""From the solver's violations to what the user reads: root causes and verified fixes.

:func:`blocking_violations` picks the facts that restrict what the user declared (a guard
on an ``AUTO`` dim, or a range torch assumes and the program enforces, is not an error);
:func:`causes_of` collapses the guards one source line produced into one :class:`Cause`;
:func:`violation_error` builds the ConstraintViolationError with fixes in both forms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sympy

from export.errors import ConstraintViolationError
from export.program.document import error_document
from export.program.words import congruence_words, guard_words, specialized_words
from export.fixes.verify import SpecFix, static_fixes, suggest_fixes
from export.diagnose.probe import probe_specializations
from export.diagnose.unpin import unpinned
from export.fixes.suggested import ReExporter, SuggestedFixes
from export.tracing.assumptions import Assumption, assumption, is_assumption
from export.tracing.trace import Trace, relation_text, trace_stats
from shapes.spec import InputDim
from shapes.expr import FloorDiv
from solver import Fact, Solver, Truth
from shapes.affine import linear_terms
from shapes.errors import ShapesError
from shapes.relation import as_difference

__all__ = ["Cause", "blocking_violations", "causes_of", "violation_error"]

SPECIALIZED = "specialized"
PINNED = "pinned"
"""A cause kind: a dim declared ``Dim.DYNAMIC`` that the model makes constant."""


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
        tag = assumption(f.reason)
        if tag is Assumption.SPECIALIZED:
            return bool(syms & dynamic)  # a named Dim or a Dim.DYNAMIC made static by a 0/1 example
        if not syms & user or not trace.is_about_inputs(f):
            return False  # torch's own bookkeeping, or a runtime check on data (in the graph)
        if tag in (Assumption.FLOOR, Assumption.POSITIVE):
            return False  # enforced by the program's ranges and runtime checks
        return not _adapts(f.rel, trace, spec_solver)

    spec_solver: list[Solver] = []  # the spec's own solver, built when a hint dim needs it
    return [v.fact for v in trace.solver.violations(only=may_block)]


def _hint_bounds(trace: Trace) -> dict[sympy.Symbol, tuple[int | None, int | None]]:
    """The declared bounds of the hint dims (AUTO, DYNAMIC)."""
    out: dict[sympy.Symbol, tuple[int | None, int | None]] = {}
    for d, sym in trace.dim_syms.items():
        if sym in trace.auto_syms:
            decl = trace.spec.decl(d)
            out[sym] = (0, None) if decl is None else (decl.lo, decl.hi)
    return out


def _adapts(rel: sympy.Basic, trace: Trace, spec: list[Solver]) -> bool:
    """A relation a hint dim (AUTO, DYNAMIC) satisfies by itself, taking whatever value is
    needed, whatever the declared dims are, read in its normal form ``d op 0``
    (:func:`shapes.relation.as_difference`: the gcd of the coefficients divided out, so
    ``2*x == 2*y`` is ``x - y == 0``): an equality where it has coefficient +-1; an
    inequality it satisfies at the end of its declared range it moves towards (``x <= y``
    for a hint ``y`` without a max; ``x >= y`` when ``x >= min(y)`` holds by the spec)."""
    auto = trace.auto_syms
    if not rel.free_symbols & auto or not isinstance(rel, (sympy.Eq, sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt)):
        return False
    try:
        op, d = as_difference(rel)
    except ShapesError:
        return False
    lin = linear_terms(d)
    if lin is None:
        return False
    if op == "==":  # (a gcd that does not divide the constant is left in: no integer solution)
        return any(abs(a) == 1 and s in auto for s, a in lin[0].items())
    bounds = _hint_bounds(trace)
    for s, a in lin[0].items():  # d >= 0: d grows with s when a > 0
        if s not in bounds or not a:
            continue
        end = bounds[s][1] if a > 0 else bounds[s][0]
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
        if is_assumption(first, Assumption.SPECIALIZED):
            value = first.rel.rhs if isinstance(first.rel, sympy.Eq) else "?"
            text = specialized_words(dims, value)
            out.append(Cause(dims, origin, None, text, SPECIALIZED, tuple(fs)))
            continue
        periodic = [f for f in fs if f.rel.has(FloorDiv, sympy.Mod)]
        said = congruence_words(trace, periodic) if periodic else None
        rest = fs if said is None else [f for f in fs if f not in periodic]
        words = "; ".join(dict.fromkeys((said or []) + [_words(trace, f.rel, names) for f in rest]))
        out.append(Cause(dims, origin, first.reason.op, words, "guard", tuple(fs)))
    return tuple(out)


LONGEST_WORDS = 400
"""A relation whose words run longer than this many characters is named, not printed (the
window arithmetic of a shifted-window attention reads thousands of characters): its dims and
length, with where the whole of it is."""


def _words(trace: Trace, rel: sympy.Basic, names: Mapping[sympy.Symbol, str]) -> str:
    try:
        text = guard_words(trace.solver, rel, names)
    except Exception:  # noqa: BLE001 - a message must never fail the export
        text = relation_text(rel, names)
    if len(text) <= LONGEST_WORDS:
        return text
    dims = sorted(names.get(s, str(s)) for s in rel.free_symbols if isinstance(s, sympy.Symbol))
    kind = " (with floor divisions and remainders)" if rel.has(FloorDiv, sympy.Mod) else ""
    return (f"the model requires a relation of {', '.join(dims)}{kind} too long to print here "
            f"({len(text):,} characters; in full in err.guards and the JSON report)")


# -- the error -------------------------------------------------------------------------------

def violation_error(trace: Trace, exporter: ReExporter | None, fix: SpecFix | None,
                    causes: tuple[Cause, ...]) -> ConstraintViolationError:
    """The error for an export whose guards the spec does not imply, with the ``causes`` of its
    blocking violations and the solver's ``fix`` for the trace (None: worked out here), as
    :func:`export.diagnose.judgement.judge` found them; its fixes and 0/1 probes re-export
    through ``exporter`` (None: none)."""
    fixes = None
    static: list[InputDim] = []
    if any(c.kind == SPECIALIZED for c in causes):
        # with a cause of another kind too, the 0/1 dims go static inside the general fix (one
        # verification of both): a fix of the 0/1 dims alone cannot re-export
        alone = all(c.kind == SPECIALIZED for c in causes)
        causes, static, fixes = _diagnose_specializations(causes, trace, exporter, build=alone)
    note = None
    if fixes is None:
        fixes = suggest_fixes(trace, exporter, static, fix)  # err.fixes is never None
        better = unpinned(trace, exporter, fixes) if not static else None
        if better is not None:
            fixes, note = better
    lines = ["Constraints violated: the model needs more than the declared dynamic shapes guarantee."]
    for i, c in enumerate(causes, 1):
        lines.append(f"  {i}. {c.describe()}")
    if fixes is not None:
        lines += ["", fixes.render()]
    if note is not None:
        lines += ["", note]
    return ConstraintViolationError("\n".join(lines), document=error_document, causes=causes, fixes=fixes,
                                    guards=tuple(f for c in causes for f in c.facts), problem=trace.problem,
                                    stats=trace_stats(trace))


def _diagnose_specializations(causes: tuple[Cause, ...], trace: Trace, exporter: ReExporter | None, *,
                              build: bool) -> tuple[tuple[Cause, ...], list[InputDim], SuggestedFixes | None]:
    """The 0/1 causes explained by a probe with a larger example (:mod:`export.diagnose.probe`), the
    dims a fix makes static, and (``build``) that fix, verified: the dims static at their
    example sizes, or the larger example."""
    spec, inputs = trace.spec, trace.inputs
    by_name = {str(d): d for d in trace.dim_syms}
    special = {c: by_name[c.dims[0]] for c in causes if c.kind == SPECIALIZED and c.dims and c.dims[0] in by_name}
    result = None
    if exporter is not None and special:
        result = probe_specializations(trace, list(special.values()), exporter)
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
    fixes = static_fixes(trace, exporter, static, larger, larger_program=program) if static and build else None
    return tuple(out), static, fixes




