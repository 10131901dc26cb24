"""``Dim.DYNAMIC`` judged as torch does: the trace may relate and bound the dim freely,
but it must not become a constant.

A ``Dim.DYNAMIC`` dim is a *hint* dim (:attr:`shapes.spec.DimDecl.is_hint`) of mode
``dynamic``: the bridge declares it like ``Dim.AUTO`` (its guards and relations are part of
the program, never violations), and :func:`specialized_error` refuses the export when the
trace's facts pin it to one value (a guard ``x.size(0) == 6``, a range that closed). A 0/1
example size is judged with the other specializations by :mod:`export.diagnose.violations`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from export.fixes.suggested import ReExporter
from export.fixes.verify import static_fixes
from export.errors import ConstraintViolationError
from export.program.document import error_document
from export.diagnose.violations import PINNED, Cause
from export.tracing.assumptions import Assumption, is_assumption
from export.tracing.trace import Trace, trace_stats
from shapes.spec import DimDecl
from solver import Fact, SolverError


__all__ = ["pinned_dynamic_dims", "specialized_error"]


def pinned_dynamic_dims(trace: Trace) -> list[tuple[DimDecl, int]]:
    """The ``Dim.DYNAMIC`` dims the trace's facts pin to one value (with that value),
    except those torch specialized for a 0/1 example (diagnosed elsewhere)."""
    out = []
    for decl in trace.spec.decls:
        sym = trace.dim_syms.get(decl.dim)
        if sym is None or not decl.is_hint or decl.mode != "dynamic" or _specialized_by_example(trace, sym):
            continue
        lo, hi = trace.solver.bounds(sym)
        if lo is not None and lo == hi:
            out.append((decl, lo))
    return out


def _specialized_by_example(trace: Trace, sym: sympy.Symbol) -> bool:
    return any(is_assumption(f, Assumption.SPECIALIZED) and sym in f.rel.free_symbols
               for f in trace.solver.facts)


def specialized_error(trace: Trace, exporter: ReExporter | None,
                      pinned: Sequence[tuple[DimDecl, int]] | None = None) -> ConstraintViolationError | None:
    """The error for ``Dim.DYNAMIC`` dims the model makes constant (``pinned``, when already
    worked out: :class:`export.diagnose.judgement.Judgement`), or None. Each names the lines
    that pinned it; the fix (verified by re-exporting) makes them static."""
    if pinned is None:
        pinned = pinned_dynamic_dims(trace)
    if not pinned:
        return None
    lines = ["Constraints violated: the model needs more than the declared dynamic shapes guarantee."]
    facts: list[Fact] = []
    causes = []
    for i, (decl, value) in enumerate(pinned, 1):
        why = _why(trace, trace.dim_syms[decl.dim], value)
        facts.extend(why)
        text = f"{decl.dim} is declared {decl.text}, but the model specializes it to {value}; " \
               f"declare it static {value} (or Dim.AUTO)"
        first = next((f.reason for f in why if f.reason.origin), None)
        causes.append(Cause((str(decl.dim),), first.origin if first else None, first.op if first else None,
                            text, PINNED, tuple(why)))
        lines.append(f"  {i}. {text}")
        lines.extend(f"     at {f.reason.origin}: {f.reason.text}" if f.reason.origin else f"     because {f.reason.text}"
                     for f in why)
    fixes = static_fixes(trace, exporter, [d.dim for d, _ in pinned], values=[v for _, v in pinned])
    lines += ["", fixes.render()]
    return ConstraintViolationError("\n".join(lines), document=error_document, causes=tuple(causes), fixes=fixes, guards=tuple(facts),
                                    problem=trace.problem, stats=trace_stats(trace))


def _why(trace: Trace, sym: sympy.Symbol, value: int) -> list[Fact]:
    """The trace's own facts (guards, not the spec) that pin ``sym`` to ``value``."""
    try:
        core = trace.solver.explain(sympy.Eq(sym, value))
    except SolverError:
        core = ()
    return [f for f in core if f.reason.kind != "spec"]


