"""Fixes for a failing trace, verified: the solver's weakest fix, applied to the user's spec and
re-exported with exactly what ``apply()`` returns.

:func:`suggest_fixes` turns the trace's facts about input dims into the solver's fixes
(:func:`solver.suggest`), applies them (:mod:`export.fixes.apply`) and re-exports the result,
following the re-export's own suggestion for at most three rounds; :func:`static_fixes` is
the fix that makes 0/1-specialized dims static (or the larger example that keeps them
dynamic). Both re-export through a :class:`export.fixes.suggested.ReExporter` (None:
nothing re-exported, nothing verified) and hand back
:class:`export.fixes.suggested.SuggestedFixes`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from export.errors import ConstraintViolationError, ExportError
from export.fixes.apply import FixedSpec, apply_fixes
from export.program.floor_policy import floor_policy, is_floor
from export.program.exported import SymshapeProgram
from export.spec.render import dim_text, render_checks, render_classic, render_modern
from export.fixes.suggested import ReExporter, SuggestedFixes, verify
from export.program.refusals import CHECK
from export.program.zero_one import zero_one
from export.tracing.assumptions import Assumption, is_assumption
from export.tracing.trace import Trace
from shapes.spec import InputDim
from solver import CheckFix, Fact, Fixes, SpecializeFix, suggest

__all__ = ["static_fixes", "suggest_fixes", "fix_spec"]

_log = logging.getLogger("symshape")
"""Progress of the steps that trace again (the CLI prints it; ``logging`` users may too)."""


def static_fixes(trace: Trace, exporter: ReExporter | None, dims: list[InputDim],
                 larger: Mapping[str, int] | None = None, values: list[int] | None = None,
                 larger_program: SymshapeProgram | None = None) -> SuggestedFixes:
    """The dims static at ``values`` (default: their example sizes, as torch does),
    re-exported with exactly what ``apply()`` returns (that program is offered); and
    ``larger``, the example sizes with which the spec itself exports (``larger_program``)."""
    inputs = trace.inputs
    if values is None:
        values = [inputs.size(d) for d in dims]
    fixed = FixedSpec(trace.spec.without(dims), (), ())
    program = None
    if exporter is not None:
        try:
            program = verify(fixed, inputs, exporter)
        except ExportError:
            program = None
    verified = program is not None
    records = Fixes(tuple(SpecializeFix(trace.dim_syms[d], v) for d, v in zip(dims, values)), verified)
    return SuggestedFixes(records, fixed, render_modern(fixed.spec, inputs), render_classic(fixed.spec, inputs), (),
                          verified, inputs, False, larger, program=program, larger_example_program=larger_program)


def _fix_fact(trace: Trace, fact: Fact) -> bool:
    """Whether a fact of the trace belongs in the fix: a fact about input dims, but never
    torch's ``>= 2`` trace assumption (a floor is no user obligation: the re-export decides,
    from its own evidence, whether its program keeps it as a run-time range) nor a 0/1
    specialization (reported apart)."""
    if is_floor(fact) or is_assumption(fact, Assumption.SPECIALIZED):
        return False
    return trace.is_about_inputs(fact)


def _with_floors(trace: Trace, records: Fixes) -> Callable[[Fact], bool]:
    """The fix's facts plus the ``>= 2`` floors the trace needs (those the site table leaves)
    on the dims of ``records``' runtime checks only: a hole such as ``s != 2`` says itself
    as ``s >= 3`` once ``s >= 2`` is kept, while a floor on a dim no check mentions would
    refuse size 1 on a dim the re-export's own 0/1 evidence may relieve."""
    roots = {trace.solver.root_of(x) for fix in records if isinstance(fix, CheckFix) for x in fix.rel.free_symbols}
    found = zero_one(trace)  # the site table's evidence only: no boundary re-trace
    policy = found.policy or floor_policy(trace, found.covered)

    def keep(fact: Fact) -> bool:
        if not is_floor(fact):
            return _fix_fact(trace, fact)
        return policy.about_inputs(fact) and all(trace.solver.root_of(x) in roots for x in fact.rel.free_symbols)
    return keep


def _suggested(trace: Trace, keep: Callable[[Fact], bool]) -> tuple[Fixes, FixedSpec]:
    """The solver's fixes for the trace's facts that ``keep`` accepts, and the spec they give."""
    records = suggest(trace.solver.replica(kinds=("spec", "guard", "trace_assumption"), keep=keep), reasons=False)
    return records, apply_fixes(trace, records)


SpecFix = tuple[Fixes, FixedSpec]
"""The solver's fix records for a trace and the spec they give (:func:`fix_spec`)."""


def fix_spec(trace: Trace) -> SpecFix:
    """The solver's fix for the trace's facts and the spec it gives (not verified): its
    ``checks`` are the relations no Dim can say."""
    records, fixed = _suggested(trace, lambda f: _fix_fact(trace, f))
    if fixed.checks:  # a fact only the floor implies: the floors the site table leaves, if that says it with a Dim
        floored = _suggested(trace, _with_floors(trace, records))
        if len(floored[1].checks) < len(fixed.checks):
            records, fixed = floored
    return records, fixed


def suggest_fixes(trace: Trace, exporter: ReExporter | None, static: Sequence[InputDim] = (),
                  fix: SpecFix | None = None) -> SuggestedFixes:
    """The solver's fix for the trace's facts (``fix``, when already worked out by
    :func:`fix_spec`), with the ``static`` dims (0/1 specializations) static at their example
    sizes, verified by re-exporting what ``apply()`` returns (with ``dim_relations="check"``
    the re-export keeps the fix's relations as runtime checks)."""
    inputs = trace.inputs
    records, fixed = fix if fix is not None else fix_spec(trace)
    if static:
        fixed = FixedSpec(fixed.spec.without(static), fixed.checks, fixed.unexpressed)
        records = Fixes(records.items + tuple(SpecializeFix(trace.dim_syms[d], inputs.size(d)) for d in static),
                        records.verified)
    fixed, passed, program = _verified(trace, fixed, exporter)
    names = {sym: dim_text(d) for d, sym in trace.dim_syms.items()}
    # apply() returns the spec without the checks: verified when no check is needed, or when
    # the re-export keeps them as runtime checks (dim_relations="check")
    kept = exporter is not None and exporter.dim_relations == CHECK
    verified = passed and (not fixed.checks or kept)
    return SuggestedFixes(records, fixed, render_modern(fixed.spec, inputs), render_classic(fixed.spec, inputs),
                          tuple(render_checks(fixed.checks, names)), verified, inputs, passed and bool(fixed.checks),
                          program=program if verified else None, checks_kept=kept and bool(fixed.checks))


def _verified(trace: Trace, fixed: FixedSpec,
              exporter: ReExporter | None) -> tuple[FixedSpec, bool, SymshapeProgram | None]:
    """Re-export ``fixed``, and while that fails, what its re-export's own error suggests
    (at most three rounds): the last fix, whether it re-exported, and the program it gave."""
    if exporter is None:
        return fixed, False, None
    for round_ in range(1, 4):
        _log.info("verifying the suggested fix: re-exporting with it%s", f" (round {round_})" if round_ > 1 else "")
        try:
            return fixed, True, verify(fixed, trace.inputs, exporter)
        except ConstraintViolationError as e:
            more = e.fixes
            if not isinstance(more, SuggestedFixes):
                break
            fixed = more.fixed
        except ExportError:  # apply()'s result is no spec export takes: not verified
            break
    return fixed, False, None
