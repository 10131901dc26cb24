"""A replayed solver problem as the report's document (``symshape replay --json``): the guards its
spec does not imply, in the words of an export's causes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy

from export.program.words import plain_words, specialized_words
from export.program.analysis import Analysis, analyse
from export.program.document import document, solver_fields
from export.tracing.assumptions import Assumption, assumption

__all__ = ["problem_document", "replay_violations"]


def replay_violations(analysis: Analysis) -> list[dict[str, Any]]:
    """The guards of a replayed problem its spec does not imply, as an export's causes: one per
    (source line, dims), in the same words; torch's own size assumptions (``>= 1``, ``>= 2``,
    which the program's ranges enforce), facts about no input dim, and guards on dims whose
    declaration adapts (``Dim.AUTO``/``DYNAMIC``: symbols declared ``adapts``) alone are not
    violations, as in the export."""
    solver, names = analysis.solver, analysis.names
    dims = set(analysis.input_dims) | set(analysis.hidden)
    declared = {s for s in dims if not solver.info(s).adapts}

    def blocks(f: Any) -> bool:
        tag = assumption(f.reason)
        if tag in (Assumption.FLOOR, Assumption.POSITIVE):
            return False
        if tag is Assumption.SPECIALIZED:
            return bool(f.rel.free_symbols & dims)
        return bool(f.rel.free_symbols & declared)

    groups: dict[tuple[str | None, tuple[str, ...]], list[Any]] = {}
    for v in solver.violations(only=blocks):
        f = v.fact
        key = tuple(sorted({names[s] for s in f.rel.free_symbols if s in dims}))
        groups.setdefault((f.reason.origin, key), []).append(f)
    out = []
    for (origin, key), facts in groups.items():
        first = facts[0]
        if assumption(first.reason) is Assumption.SPECIALIZED:
            value = first.rel.rhs if isinstance(first.rel, sympy.Eq) else "?"
            out.append({"dims": list(key), "origin": origin, "code": None,
                        "constraint": specialized_words(key, value), "kind": "specialized"})
            continue
        words = "; ".join(dict.fromkeys(_words(analysis, f.rel) for f in facts))
        out.append({"dims": list(key), "origin": origin, "code": first.reason.op, "constraint": words,
                    "kind": "guard"})
    return out


def _words(analysis: Analysis, rel: Any) -> str:
    """A guard in the words of an export's causes (:func:`export.program.words.plain_words`)."""
    try:
        simple = analysis.solver.simplify(rel)
        if isinstance(simple, sympy.logic.boolalg.BooleanAtom):
            return analysis.text(rel)
        return plain_words(simple, analysis.names)
    except Exception:  # noqa: BLE001 - a report line must never fail
        return analysis.text(rel)


def problem_document(problem: Mapping[str, Any], analysis: Analysis | None = None) -> dict[str, Any]:
    """A replayed solver problem (``symshape replay --json``): status ``replayed``, or
    ``violations`` when its spec does not imply a guard an export would report
    (``analysis``: the problem already replayed)."""
    analysis = analysis if analysis is not None else analyse(problem)
    violations = replay_violations(analysis)
    return document("violations" if violations else "replayed", None, violations=violations,
                     problem=dict(problem), **solver_fields(analysis))

