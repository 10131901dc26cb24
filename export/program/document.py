"""The report as one JSON document, ``"schema": "symshape.report/2"`` (docs/report.schema.json).

One form for every outcome: a program's report (:meth:`Report.to_dict`), a failed export's error
(``ConstraintViolationError.to_dict``, ``DataDependentError.to_dict``), a replayed solver problem
(``symshape replay --json``, :mod:`export.diagnose.replayed`) and, with empty fields, a command-line error. Every document has
every key of :data:`KEYS`; ``symshape export --json`` adds the command's own (:data:`CLI_KEYS`).
Text for users never shows internal root names (``x_0``) or the classic default maximum
(``2**63 - 2``: a range's ``null``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from export.errors import ConstraintViolationError, DataDependentError
from export.program.analysis import Analysis, analyse, congruence_texts
from export.spec.render import render_flags
from shapes.ranges import open_max

__all__ = ["SCHEMA", "KEYS", "CLI_KEYS", "STATUSES", "document", "program_document", "error_document",
           "empty_document", "fixes_document", "solver_fields"]

SCHEMA = "symshape.report/2"
"""The document's ``schema`` field: the form's name and version (a new version changes keys)."""

KEYS = ("schema", "status", "message", "ranges", "classes", "relations", "congruences", "checks", "assumptions",
        "warnings", "violations", "fixes", "zero_one", "stats", "problem")
"""Every document has these keys, whatever its status."""

CLI_KEYS = ("target", "inputs", "elapsed_seconds", "out", "out_note", "graph")
"""``symshape export --json`` adds these (on every status, ``error`` included)."""

STATUSES = ("exported", "violations", "data_dependent", "replayed", "error")

STATS_KEYS = ("symbols", "facts", "guards", "violations", "asked", "routed", "to_torch", "solver_seconds",
              "boundary_retraces", "traces", "trace_reasons", "replays", "verified_by", "stages")


def document(status: str, message: str | None = None, *, ranges: Mapping[str, Sequence[int | None]] | None = None,
              classes: Sequence[Sequence[str]] = (), relations: Sequence[str] = (), congruences: Sequence[str] = (),
              checks: Sequence[Mapping[str, Any]] = (), assumptions: Sequence[str] = (),
              warnings: Sequence[str] = (), violations: Sequence[Mapping[str, Any]] = (),
              fixes: Mapping[str, Any] | None = None, zero_one: Sequence[Mapping[str, Any]] = (),
              stats: Mapping[str, Any] | None = None, problem: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A document with every key of :data:`KEYS` (empty where no value is given)."""
    doc = {"schema": SCHEMA, "status": status, "message": message,
           "ranges": {k: [lo, open_max(hi)] for k, (lo, hi) in (ranges or {}).items()},
           "classes": [list(c) for c in classes], "relations": list(relations), "congruences": list(congruences),
           "checks": [dict(c) for c in checks], "assumptions": list(assumptions),
           "warnings": list(warnings), "violations": [dict(v) for v in violations],
           "fixes": None if fixes is None else dict(fixes), "zero_one": [dict(e) for e in zero_one],
           "stats": _stats(stats or {}, problem, len(violations)), "problem": problem}
    assert tuple(doc) == KEYS
    return doc


def _stats(given: Mapping[str, Any], problem: Mapping[str, Any] | None, violations: int) -> dict[str, Any]:
    """The same keys on every document: counts of the problem, then what tracing asked."""
    def count(key: str) -> int | None:
        if key in given:
            return int(given[key])
        return len(problem.get(key, [])) if problem is not None else None

    out: dict[str, Any] = {"symbols": count("symbols"), "facts": count("facts"), "guards": count("guards"),
                           "violations": violations}
    for key in ("asked", "routed", "to_torch", "boundary_retraces"):
        out[key] = int(given.get(key, 0))
    out["solver_seconds"] = float(given.get("solver_seconds", 0.0))
    out["traces"] = int(given["traces"]) if "traces" in given else None  # None: not counted (a replay)
    out["trace_reasons"] = {str(k): int(v) for k, v in dict(given.get("trace_reasons", {})).items()}
    out["replays"] = int(given.get("replays", 0))  # re-runs verified by replaying a failing trace
    out["verified_by"] = given.get("verified_by")  # a program's: "trace" or "replay"; None for an error
    out["stages"] = dict(given.get("stages", {}))
    return {k: out[k] for k in STATS_KEYS}


def _parsed(problem: str | None) -> dict[str, Any] | None:
    try:
        return json.loads(problem) if problem else None
    except ValueError:
        return None


def program_document(report: Any) -> dict[str, Any]:
    """An exported program's report (``ep.symshape``, an :class:`export.program.exported.Report`)."""
    return document("exported", None, ranges=report.ranges, classes=report.classes, relations=report.relations,
                     congruences=report.congruences,
                     checks=[{**dataclasses.asdict(k), "dims": list(k.dims)} for k in report.checks], assumptions=report.assumptions, warnings=report.warnings,
                     zero_one=[dataclasses.asdict(e) for e in report.zero_one], stats=report.stats,
                     problem=_parsed(report.problem))


def _analysed(problem: Mapping[str, Any] | None) -> Analysis | None:
    try:
        return analyse(problem) if problem is not None else None
    except Exception:  # noqa: BLE001 - a report must never fail on its problem
        return None


def solver_fields(analysis: Analysis | None) -> dict[str, Any]:
    """Ranges, classes, relations and trace assumptions of a replayed problem."""
    if analysis is None:
        return {}
    return {"ranges": {analysis.names[s]: analysis.bounds(s) for s in analysis.input_dims},
            "classes": analysis.class_names(), "relations": [analysis.text(r) for r in analysis.relations()],
            "congruences": congruence_texts(analysis.solver, analysis.names),
            "assumptions": [f"{f.reason.text}: {f.reason.op}" for f in analysis.solver.facts
                            if f.reason.kind == "trace_assumption"]}


def fixes_document(fixes: Any) -> dict[str, Any] | None:
    """``err.fixes`` (a :class:`export.fixes.suggested.SuggestedFixes`) as data, with the flags."""
    if fixes is None or not hasattr(fixes, "modern"):
        return None
    larger = getattr(fixes, "larger_example", None)
    return {"modern": fixes.modern, "classic": fixes.classic, "checks": list(fixes.checks),
            "verified": bool(fixes.verified), "flags": render_flags(fixes.fixed.spec),
            "larger_example": None if larger is None else {str(k): int(v) for k, v in larger.items()}}


def error_document(error: ConstraintViolationError | DataDependentError,
                   analysis: Analysis | None = None) -> dict[str, Any]:
    """A failed export: its causes (``violations``), fixes, and the solver's view of its problem
    (``analysis``: that problem already replayed, else it is replayed here)."""
    problem = _parsed(error.problem)
    if analysis is None:
        analysis = _analysed(problem)
    if isinstance(error, ConstraintViolationError):
        status = "violations"
        violations = [{"dims": list(c.dims), "origin": c.origin, "code": c.code, "constraint": c.constraint,
                       "kind": c.kind} for c in error.causes]
    else:
        status = "data_dependent"
        violations = [{"dims": [], "origin": error.origin, "code": error.code,
                       "constraint": str(error).splitlines()[0], "kind": "data_dependent"}]
    return document(status, str(error), violations=violations, fixes=fixes_document(getattr(error, "fixes", None)),
                     stats=error.stats, problem=problem, **solver_fields(analysis))


def empty_document(status: str, message: str | None) -> dict[str, Any]:
    """A document without results (a command-line error: ``status`` ``error``)."""
    return document(status, message)
