"""One judgement per trace: what a finished trace means for the export, as one value.

After a trace (never inside it), :func:`judge` works out once what every later step reads:

* ``blocking``: the facts that restrict a dim the user declared dynamic
  (:func:`export.diagnose.violations.blocking_violations`) and their irredundant ``causes``;
* ``checks``: the relations no ``Dim`` can say that the program keeps as runtime checks
  instead of raising (:mod:`export.diagnose.kept`), ``()`` when nothing blocks, None when a
  violation needs a change a Dim can say (or a 0/1 cause, or ``dim_relations="raise"``);
* ``fix``: the solver's fix for the trace, the one diagnosis verifies;
* ``pinned``: the ``Dim.DYNAMIC`` dims the trace makes constant
  (:func:`export.diagnose.dynamic_hints.pinned_dynamic_dims`).

The program (:func:`export.program.exported.finish`) reads ``checks``; the error
(:func:`error_of`) reads the causes, the fix and the pinned dims; nothing is worked out twice,
and nothing is remembered between traces (no memo, no weak references).
"""

from __future__ import annotations

from dataclasses import dataclass

from export.diagnose.dynamic_hints import pinned_dynamic_dims, specialized_error
from export.diagnose.kept import kept_checks
from export.diagnose.redundant import irredundant
from export.diagnose.violations import Cause, blocking_violations, causes_of, violation_error
from export.errors import ConstraintViolationError
from export.fixes.suggested import ReExporter
from export.fixes.verify import SpecFix
from export.program.refusals import CHECK, KeptCheck, check_relations_mode
from export.tracing.trace import Trace
from shapes.spec import DimDecl
from solver import Fact

__all__ = ["Judgement", "judge", "error_of"]


@dataclass(frozen=True)
class Judgement:
    """What :func:`judge` found for ``trace`` (see the module docstring). ``fails``: the
    export raises (:func:`error_of`); else the program keeps ``checks``."""

    trace: Trace
    blocking: tuple[Fact, ...]
    causes: tuple[Cause, ...]
    checks: tuple[KeptCheck, ...] | None
    fix: SpecFix | None
    pinned: tuple[tuple[DimDecl, int], ...]

    @property
    def fails(self) -> bool:
        """Whether the export of this trace is an error: a blocking violation no kept check
        covers, or a ``Dim.DYNAMIC`` dim made constant."""
        return (bool(self.blocking) and self.checks is None) or bool(self.pinned)

    @property
    def kept(self) -> tuple[KeptCheck, ...]:
        """The relations the program checks at run time (none when the export fails)."""
        return self.checks or ()


def judge(trace: Trace, dim_relations: str = CHECK, deferred: bool = False) -> Judgement:
    """The judgement of ``trace`` under ``dim_relations`` (``"check"``: relations no Dim can
    say are kept as runtime checks; ``"raise"``: they are violations) and ``deferred``
    (torch's ``prefer_deferred_runtime_asserts_over_guards``)."""
    relations = check_relations_mode(dim_relations)
    blocking = tuple(blocking_violations(trace))
    pinned = tuple(pinned_dynamic_dims(trace))
    if not blocking:
        return Judgement(trace, (), (), (), None, pinned)
    causes = causes_of(irredundant(list(blocking), trace), trace)
    if relations != CHECK:
        return Judgement(trace, blocking, causes, None, None, pinned)
    kept = kept_checks(trace, list(blocking), causes, deferred)
    return Judgement(trace, blocking, kept.causes, kept.checks, kept.fix, pinned)


def error_of(judgement: Judgement, exporter: ReExporter | None) -> ConstraintViolationError | None:
    """The error of a judged trace (None: it gives a program); its fixes are verified and its
    0/1 causes probed by re-exporting through ``exporter`` (None: nothing re-exported)."""
    trace = judgement.trace
    if judgement.blocking and judgement.checks is None:
        return violation_error(trace, exporter, judgement.fix, judgement.causes)
    return specialized_error(trace, exporter, judgement.pinned) if judgement.pinned else None
