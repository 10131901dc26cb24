"""Relations no ``Dim`` can say, kept as runtime checks instead of raised (issue 21, item 2).

torch exports ``cat((x, y), 1) + z`` with separate Dims and checks ``z.size(1) == x.size(1) +
y.size(1)`` when the program runs; no ``Dim`` spec can say that relation, so a violation would
ask the user to edit the model. With ``dim_relations="check"`` (the default) an export whose
every blocking violation follows from such relations is no error: the program keeps them as
runtime checks (torch's guards already hold them), lists them in ``ep.symshape.checks`` and says
so in one SymshapeWarning. Ranges, equalities and divisibility a ``Dim`` can say stay violations
with verified fixes; a fix whose re-export keeps the rest as checks needs no model edit.

With torch's ``prefer_deferred_runtime_asserts_over_guards=True`` (``deferred``), torch turns
each guard it cannot make a range or a replacement into a runtime assertion of the program
instead of a guard: symshape keeps every blocking guard that no ``Dim`` can say as a check
(even where its fix would also narrow a range, e.g. ``x.reshape(x.shape[0] - 1, 4, -1)``), and
still raises for a range, an equality, a divisibility or a specialization, as torch does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from shapes.affine import dim_expressible
from shapes.spec import InputDim
from solver import CheckFix, Fact, Fixes, Solver, SpecializeFix, Truth

from export.diagnose.violations import SPECIALIZED, Cause
from export.fixes.apply import FixedSpec
from export.fixes.verify import SpecFix, fix_spec
from export.program.refusals import KeptCheck
from export.tracing.trace import Trace

__all__ = ["kept_checks", "Kept"]


@dataclass(frozen=True)
class Kept:
    """What :func:`kept_checks` found: ``checks`` to keep (``()``: nothing blocks; None: a
    violation needs a change a Dim can say, or a 0/1 cause), the ``causes`` the error of the
    trace says (the blocking violations' own, or reworded where relations pin a declared dim),
    and the solver's ``fix`` for the trace when it was worked out."""

    checks: tuple[KeptCheck, ...] | None
    causes: tuple[Cause, ...]
    fix: SpecFix | None = None


def _as_checks(causes: tuple[Cause, ...]) -> tuple[KeptCheck, ...]:
    """The causes as the program's runtime checks, in the causes' words."""
    return tuple(KeptCheck(c.constraint, c.origin, c.code, tuple(c.dims)) for c in causes)


def _deferred(blocking: list[Fact], causes: tuple[Cause, ...]) -> Kept | None:
    """torch's deferral (``prefer_deferred_runtime_asserts_over_guards``): every blocking
    guard kept as a check when no Dim can say any of them; None otherwise."""
    if any(f.reason.kind != "guard" or dim_expressible(f.rel) for f in blocking):
        return None
    return Kept(_as_checks(causes), causes)


def kept_checks(trace: Trace, blocking: list[Fact], causes: tuple[Cause, ...], deferred: bool = False) -> Kept:
    """The trace's ``blocking`` violations (with their ``causes``) as checks to keep, when the
    spec plus the relations no Dim can say (the fix's ``torch._check`` relations) implies every
    one of them; with ``deferred`` (torch's ``prefer_deferred_runtime_asserts_over_guards``),
    also when no Dim can say any of them. Read through :func:`export.diagnose.judgement.judge`."""
    if not blocking:
        return Kept((), causes)
    if any(c.kind == SPECIALIZED for c in causes):
        return Kept(None, causes)
    if deferred:
        kept = _deferred(blocking, causes)
        if kept is not None:
            return kept
    fix = fix_spec(trace)
    fixed = fix[1]
    if not fixed.checks:
        return Kept(None, causes, fix)
    given = trace.solver.replica(kinds=("spec",))
    try:
        for rel in fixed.checks:
            given.assume(rel)
        if any(given.decide(f.rel) is not Truth.TRUE for f in blocking):
            return Kept(None, causes, fix)
        pinned = _pinned(trace, given)
    except Exception:  # noqa: BLE001 - relations the solver cannot take are no checks to keep
        return Kept(None, causes, fix)
    if pinned:  # a dim declared dynamic the relations leave one size: torch's specialization, raised
        return Kept(None, _pinning(trace, causes, pinned), _static_fix(trace, fix, pinned))
    return Kept(_as_checks(causes), causes, fix)


def _pinned(trace: Trace, given: Solver) -> dict[InputDim, int]:
    """The input dims declared dynamic that the spec plus the relations to keep leave one size
    (``2 * dx`` and ``dx + 1`` held equal: both 2), with that size; a relation that does this is
    no check of a dynamic program but a specialization the user did not declare."""
    spec = trace.solver.replica(kinds=("spec",))
    out = {}
    for d, sym in trace.dim_syms.items():
        if sym not in trace.dynamic_syms:
            continue
        lo, hi = given.bounds(sym)
        if lo is not None and lo == hi and spec.bounds(sym) != (lo, hi):
            out[d] = lo
    return out


def _pinning(trace: Trace, causes: tuple[Cause, ...], pinned: Mapping[InputDim, int]) -> tuple[Cause, ...]:
    """The causes, the last one saying which declared dims they leave a single size."""
    declared = [f"{d} = {decl.text}" for d in pinned for decl in [trace.spec.decl(d)] if decl is not None]
    sizes = ", ".join(f"{d} = {n}" for d, n in pinned.items())
    said = f" (declared {', '.join(declared)})" if declared else ""
    last = causes[-1]
    words = f"{last.constraint}, which leaves only {sizes}{said}: no dynamic size"
    return (*causes[:-1], dataclasses.replace(last, constraint=words))


def _static_fix(trace: Trace, fix: SpecFix, pinned: Mapping[InputDim, int]) -> SpecFix:
    """The fix that makes the ``pinned`` dims static at their sizes (what torch suggests), and
    keeps the solver's other fixes."""
    records, fixed = fix
    specialized = tuple(SpecializeFix(trace.dim_syms[d], n) for d, n in pinned.items())
    return (Fixes(tuple(r for r in records.items if not isinstance(r, CheckFix)) + specialized, records.verified),
            FixedSpec(fixed.spec.without(pinned), (), fixed.unexpressed))
