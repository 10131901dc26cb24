"""The report of ``symshape export``: the JSON document (:mod:`export.program.document`, plus the
command's keys) and its text rendering.

Inputs with their symbolic shapes, ranges, equality classes, relations, trace assumptions, and
for a failed export the causes with the verified fixes (also as ``--dynamic`` flags).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from export.program.analysis import Analysis
from export.program.document import CLI_KEYS, empty_document, error_document
from export.errors import ConstraintViolationError, DataDependentError
from export.spec.inputs import Inputs
from export.program.exported import SymshapeProgram
from shapes.ranges import range_text

__all__ = ["input_shapes", "export_document", "error_doc", "print_report"]


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


def export_document(ep: SymshapeProgram | None, error: ConstraintViolationError | DataDependentError | None,
                    analysis: Analysis | None, *, target: str, inputs: Mapping[str, list[str]], elapsed: float,
                    warnings: list[str]) -> dict[str, Any]:
    """``symshape export --json``: the report's document (``ep.symshape.to_dict()`` or
    ``err.to_dict()``, :mod:`export.program.document`) plus the command's own keys."""
    if ep is not None:
        core = ep.symshape.to_dict()
    else:
        assert error is not None
        core = error_document(error, analysis)
    core["warnings"] = list(dict.fromkeys([*warnings, *core["warnings"]]))
    return {**core, "target": target, "inputs": dict(inputs), "elapsed_seconds": round(elapsed, 3),
            "out": None, "out_note": None, "graph": None}


def error_doc(message: str, code: int) -> dict[str, Any]:
    """``symshape ... --json`` on an error: every key, empty, with ``exit`` and ``error``."""
    return {**empty_document("error", message), **{k: None for k in CLI_KEYS}, "inputs": {},
            "exit": code, "error": message}


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
    if doc.get("checks"):
        p("")
        p("Runtime checks (relations no Dim can say; the program refuses inputs that break them):")
        for c in doc["checks"]:
            p(f"  {c['relation']}" + (f"\n    at {c['origin']}" + (f": {c['code']}" if c.get("code") else "")
                                      if c.get("origin") else ""))
    if doc.get("congruences"):
        p("")
        p("Congruences:")
        for c in doc["congruences"]:
            p(f"  {c}")
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
