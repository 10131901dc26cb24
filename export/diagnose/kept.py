"""Relations no ``Dim`` can say, kept as runtime checks instead of raised (issue 21, item 2).

torch exports ``cat((x, y), 1) + z`` with separate Dims and checks ``z.size(1) == x.size(1) +
y.size(1)`` when the program runs; no ``Dim`` spec can say that relation, so a violation would
ask the user to edit the model. With ``dim_relations="check"`` (the default) an export whose
every blocking violation follows from such relations is no error: the program keeps them as
runtime checks (torch's guards already hold them), lists them in ``ep.symshape.checks`` and says
so in one SymshapeWarning. Ranges, equalities and divisibility a ``Dim`` can say stay violations
with verified fixes; a fix whose re-export keeps the rest as checks needs no model edit.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver import Truth

from export.diagnose.redundant import irredundant
from export.diagnose.violations import SPECIALIZED, blocking_violations, causes_of
from export.fixes.verify import SpecFix, fix_spec
from export.program.refusals import KeptCheck
from export.tracing.trace import Trace

__all__ = ["kept_checks", "Kept"]


@dataclass(frozen=True)
class Kept:
    """What :func:`kept_checks` found: ``checks`` to keep (``()``: nothing blocks; None: a
    violation needs a change a Dim can say, or a 0/1 cause), and the solver's ``fix`` for
    the trace when it was worked out (the error's fix then starts from it, not again)."""

    checks: tuple[KeptCheck, ...] | None
    fix: SpecFix | None = None


def kept_checks(trace: Trace) -> Kept:
    """The trace's blocking violations as checks to keep, when the spec plus the relations no
    Dim can say (the fix's ``torch._check`` relations) implies every one of them."""
    blocking = blocking_violations(trace)
    if not blocking:
        return Kept(())
    causes = causes_of(irredundant(blocking, trace), trace)
    if any(c.kind == SPECIALIZED for c in causes):
        return Kept(None)
    fix = fix_spec(trace)
    fixed = fix[1]
    if not fixed.checks:
        return Kept(None, fix)
    given = trace.solver.replica(kinds=("spec",))
    try:
        for rel in fixed.checks:
            given.assume(rel)
        if any(given.decide(f.rel) is not Truth.TRUE for f in blocking):
            return Kept(None, fix)
    except Exception:  # noqa: BLE001 - relations the solver cannot take are no checks to keep
        return Kept(None, fix)
    return Kept(tuple(KeptCheck(c.constraint, c.origin, c.code, tuple(c.dims)) for c in causes), fix)
