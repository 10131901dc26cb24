"""The report of ``symshape export``: the JSON document's fields and their text rendering.

Inputs with their symbolic shapes, ranges, equality classes, relations, trace assumptions, and
for a failed export the causes with the verified fixes (also as ``--dynamic`` flags).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from export.cli.analysis import Analysis, range_text
from export.cli.args import fix_flags
from export.fixes.suggested import SuggestedFixes
from export.errors import ConstraintViolationError, DataDependentError
from export.spec.inputs import Inputs
from export.program.exported import Report, SymshapeProgram

__all__ = ["input_shapes", "success_doc", "failure_doc", "print_report"]


def input_shapes(inputs: Inputs, analysis: Analysis | None, labels: Mapping[tuple[str, int], str]) -> dict[str, list[str]]:
    """Each tensor input's shape in the user's terms: Dim names, derived expressions, sizes."""
    out: dict[str, list[str]] = {}
    by_dim: dict[str, Any] = {}
    if analysis is not None:
        for sym in analysis.input_dims:
            by_dim[analysis.names[sym]] = sym
    for leaf in inputs.tensors:
        dims = []
        for i, n in enumerate(leaf.value.shape):
            sym = by_dim.get(f"{leaf.name}.size({i})")
            if sym is not None:
                dims.append(analysis.value_of(sym))  # type: ignore[union-attr]
            elif analysis is None and (leaf.name, i) in labels and labels[(leaf.name, i)] != "static":
                dims.append(labels[(leaf.name, i)])
            else:
                dims.append(str(int(n)))
        out[leaf.name] = dims
    return out


def _classes(analysis: Analysis | None, report: Report) -> list[list[str]]:
    if analysis is None:
        return [list(c) for c in report.classes]
    return [[analysis.names[s] for s in cls] for cls in analysis.classes()]


def _relations(analysis: Analysis | None, report: Report) -> list[str]:
    if analysis is None:
        return list(report.relations)
    return [analysis.text(r) for r in analysis.relations()]


def success_doc(ep: SymshapeProgram, analysis: Analysis | None) -> dict[str, Any]:
    """The report's fields for an exported program."""
    report = ep.symshape
    return dict(status="exported", ranges={k: list(v) for k, v in report.ranges.items()},
                classes=_classes(analysis, report), relations=_relations(analysis, report),
                assumptions=list(report.assumptions), violations=[], fixes=None, stats=dict(report.stats),
                equality_constraints=[[str(a), str(b)] for a, b in ep.equality_constraints])


def failure_doc(error: ConstraintViolationError | DataDependentError, analysis: Analysis | None) -> dict[str, Any]:
    """The report's fields for a failed export: causes, fixes (with flags), the solver's view."""
    status = "violations" if isinstance(error, ConstraintViolationError) else "data_dependent"
    return {"status": status, **_failure(error, analysis)}


def _failure(error: Any, analysis: Analysis | None) -> dict[str, Any]:
    violations = [{"dims": list(c.dims), "origin": c.origin, "code": c.code, "constraint": c.constraint,
                   "kind": c.kind} for c in getattr(error, "causes", ())]
    if not violations:
        violations = [{"dims": [], "origin": None, "code": None, "constraint": str(error).splitlines()[0],
                       "kind": "data_dependent"}]
    fixes = getattr(error, "fixes", None)
    fix_doc = None
    if isinstance(fixes, SuggestedFixes):
        fix_doc = {"modern": fixes.modern, "classic": fixes.classic, "checks": list(fixes.checks),
                   "verified": fixes.verified, "flags": fix_flags(fixes.fixed.spec)}
    stats = {}
    if analysis is not None:
        p = analysis.problem
        stats = {"symbols": len(p.get("symbols", [])), "facts": len(p.get("facts", [])),
                 "guards": len(p.get("guards", [])), "violations": len(violations)}
    return {"ranges": {analysis.names[s]: list(analysis.bounds(s)) for s in analysis.input_dims} if analysis else {},
            "classes": [[analysis.names[s] for s in c] for c in analysis.classes()] if analysis else [],
            "relations": [analysis.text(r) for r in analysis.relations()] if analysis else [],
            "assumptions": _assumptions(analysis), "violations": violations, "fixes": fix_doc,
            "stats": stats, "message": str(error)}


def _assumptions(analysis: Analysis | None) -> list[str]:
    if analysis is None:
        return []
    return [f"{f.reason.text}: {f.reason.op}" for f in analysis.solver.facts if f.reason.kind == "trace_assumption"]


def print_report(doc: Mapping[str, Any], error: Any, out: TextIO) -> None:
    """The human-readable report of an export document."""
    p = lambda *a: print(*a, file=out)  # noqa: E731
    verdict = {"exported": "exported", "violations": "constraint violations",
               "data_dependent": "data-dependent branch"}[doc["status"]]
    p(f"{doc['target']}: {verdict} ({doc['elapsed_seconds']:.2f}s)")
    p("")
    p("Inputs:")
    width = max((len(k) for k in doc["inputs"]), default=0)
    for name, dims in doc["inputs"].items():
        p(f"  {(name + ':').ljust(width + 1)} [{', '.join(dims)}]")
    if doc.get("ranges"):
        p("")
        p("Ranges:")
        w = max(len(k) for k in doc["ranges"])
        for name, (lo, hi) in doc["ranges"].items():
            p(f"  {name.ljust(w)}  {range_text(lo, hi)}")
    if doc.get("classes"):
        p("")
        p("Equality classes:")
        for cls in doc["classes"]:
            p("  " + " == ".join(cls))
    if doc.get("relations"):
        p("")
        p("Relations:")
        for r in doc["relations"]:
            p(f"  {r}")
    if doc.get("assumptions"):
        p("")
        p("Trace assumptions (what torch took for granted while tracing; an exported program keeps, "
          "in its ranges and runtime checks, the ones a decision relied on):")
        for a in doc["assumptions"]:
            p(f"  {a}")
    if error is not None:
        p("")
        p(str(error))
        fixes = doc.get("fixes")
        if fixes is not None:
            p("")
            p("The fix was verified: re-exporting with it succeeds." if fixes["verified"]
              else "The fix is not verified: re-exporting with it did not succeed.")
            if fixes.get("flags") == [] and not fixes["checks"]:
                p("")
                p("Suggested flags: none (export with static shapes)")
            elif fixes.get("flags"):
                p("")
                p("Suggested flags (replace the --dynamic/--constraint flags with these):")
                p("    " + " ".join(fixes["flags"]))
    if doc.get("warnings"):
        p("")
        for text in doc["warnings"]:
            p(f"symshape: warning: {text}")
    if doc.get("out"):
        p("")
        note = doc.get("out_note") or "the exported program"
        p(f"Saved {note} to {doc['out']}" if note == "the exported program" else f"Saved to {doc['out']}: {note}")
    elif doc.get("out_note"):
        p("")
        p(f"Program {doc['out_note']}")
    if doc.get("graph"):
        p(f"Wrote the constraint graph to {doc['graph']}")
