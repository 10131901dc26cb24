"""``export.program.document``: the report as one JSON document, the same keys on every status.

Fast: the documents are built from values, from a :class:`Report` made by hand, and from an
error of a hand-built trace (``step_cases``); every one is checked against
docs/report.schema.json."""

from __future__ import annotations

import json
from typing import Any

import pytest

import json_schema
from export.diagnose.dynamic_hints import specialized_error
from export.errors import DataDependentError
from export.program.analysis import analyse
from export.program.document import (CLI_KEYS, KEYS, SCHEMA, STATUSES, document, empty_document, error_document,
                                     fixes_document, program_document, solver_fields)
from export.program.exported import Report
from export.program.refusals import KeptCheck
from export.program.zero_one import ZeroOneEvidence
from step_cases import REPORT_SCHEMA, divisible_trace, pinned_trace, problem_of

STATS = {"symbols": None, "facts": None, "guards": None, "violations": 0, "asked": 0, "routed": 0, "to_torch": 0,
         "solver_seconds": 0.0, "boundary_retraces": 0, "traces": None, "trace_reasons": {}, "replays": 0,
         "verified_by": None, "stages": {}}


def test_the_constants() -> None:
    assert SCHEMA == "symshape.report/2" == REPORT_SCHEMA["properties"]["schema"]["const"]
    assert set(KEYS) == set(REPORT_SCHEMA["required"])
    assert set(STATUSES) == set(REPORT_SCHEMA["properties"]["status"]["enum"])
    assert not set(CLI_KEYS) & set(KEYS)


def test_an_empty_document_golden() -> None:
    doc = empty_document("error", "no such file: model.py")
    assert doc == {"schema": SCHEMA, "status": "error", "message": "no such file: model.py", "ranges": {},
                   "classes": [], "relations": [], "congruences": [], "checks": [], "assumptions": [],
                   "warnings": [], "violations": [], "fixes": None, "zero_one": [], "stats": STATS, "problem": None}
    json_schema.validate(doc, REPORT_SCHEMA)
    assert tuple(doc) == KEYS


@pytest.mark.parametrize("hi, shown", [(64, 64), (None, None), (2**63 - 2, None), (2**62, None)])
def test_a_range_hides_the_classic_default_maximum(hi: int | None, shown: int | None) -> None:
    assert document("replayed", ranges={"x.size(0)": (2, hi)})["ranges"] == {"x.size(0)": [2, shown]}


def test_stats_count_the_problem_unless_given() -> None:
    problem = {"symbols": [1, 2, 3], "facts": [1], "guards": []}
    stats = document("replayed", problem=problem, violations=[{"dims": []}],
                     stats={"facts": 9, "asked": "4", "traces": 2, "trace_reasons": {"boundary": 1.0},
                            "solver_seconds": 1})["stats"]
    assert stats == {**STATS, "symbols": 3, "facts": 9, "guards": 0, "violations": 1, "asked": 4,
                     "solver_seconds": 1.0, "traces": 2, "trace_reasons": {"boundary": 1}}
    assert list(stats) == list(STATS)


def test_a_program_document() -> None:
    evidence = ZeroOneEvidence("x.size(0)", "x.size(0) != 1", "site", "torch/_refs/__init__.py:4170", "a view")
    report = Report({"x.size(0)": (1, 2**63 - 2)}, (("b", "x.size(0)"),), ("y.size(0) == 2 * b",),
                    ("x.size(0) >= 1: positive",), {"asked": 3}, json.dumps({"symbols": [1]}),
                    ("a warning",), (evidence,), ("b % 4 == 0",),
                    (KeptCheck("x.size(0) * y.size(0) <= 64", "model.py:3", "x @ y", ("x.size(0)", "y.size(0)")),))
    doc = program_document(report)
    json_schema.validate(doc, REPORT_SCHEMA)
    assert (doc["status"], doc["message"], doc["ranges"]) == ("exported", None, {"x.size(0)": [1, None]})
    assert doc["checks"] == [{"relation": "x.size(0) * y.size(0) <= 64", "origin": "model.py:3", "code": "x @ y",
                              "dims": ["x.size(0)", "y.size(0)"]}]
    assert doc["problem"] == {"symbols": [1]} and doc["stats"]["symbols"] == 1 and doc["stats"]["asked"] == 3
    assert report.to_dict() == doc
    assert doc["zero_one"] == [{"dim": "x.size(0)", "rel": "x.size(0) != 1", "kind": "site",
                                "site": "torch/_refs/__init__.py:4170", "why": "a view"}]
    assert program_document(Report({}, (), (), (), problem="not json"))["problem"] is None


def test_an_error_document_of_a_violation() -> None:
    err = specialized_error(pinned_trace(), None)
    assert err is not None
    doc = error_document(err)
    json_schema.validate(doc, REPORT_SCHEMA)
    assert (doc["status"], doc["message"]) == ("violations", str(err))
    assert [{k: v for k, v in c.items() if k != "code"} for c in doc["violations"]] == [
        {"dims": ["x.size(0)"], "origin": "model.py:10", "kind": "pinned",
         "constraint": "x.size(0) is declared Dim.DYNAMIC, but the model specializes it to 6; declare it static 6 "
                       "(or Dim.AUTO)"}]
    assert doc["ranges"] == {"x.size(0)": [6, 6], "x.size(1)": [2, None]}
    assert doc["fixes"] == {"modern": "from torch.export import Dim\n\ns = Dim('s')\ndynamic_shapes = {'x': {1: s}}",
                            "classic": "def specify_constraints(x):\n    return [\n        dynamic_dim(x, 1),\n    ]",
                            "checks": [], "verified": False, "flags": ["--dynamic x:1:s"], "larger_example": None}
    assert err.to_dict()["violations"] == doc["violations"]


def test_an_error_document_of_a_data_dependent_error() -> None:
    err = DataDependentError("Could not guard on data-dependent expression u0 > 3\n  more", origin="model.py:7",
                             code="if n > 3:", problem=None, stats={"asked": 2})
    doc = error_document(err)
    json_schema.validate(doc, REPORT_SCHEMA)
    assert doc["status"] == "data_dependent" and doc["ranges"] == {} and doc["problem"] is None
    assert doc["violations"] == [{"dims": [], "origin": "model.py:7", "code": "if n > 3:",
                                  "constraint": "Could not guard on data-dependent expression u0 > 3",
                                  "kind": "data_dependent"}]


def test_solver_fields_of_a_replayed_problem() -> None:
    fields = solver_fields(analyse(problem_of(divisible_trace())))
    assert fields["ranges"] == {"x.size(0)": (2, None), "x.size(1)": (4, None)}
    assert fields["classes"] == [["b", "x.size(0)"], ["s", "x.size(1)"]]
    assert (fields["relations"], fields["congruences"]) == ([], ("s % 4 == 0",))
    assert fields["assumptions"][1] == "x.size(0) >= 2: torch assumes sizes >= 2 (0/1 specialization)"
    assert solver_fields(None) == {}


@pytest.mark.parametrize("fixes", [None, "not fixes", object()])
def test_fixes_document_of_no_fixes(fixes: Any) -> None:
    assert fixes_document(fixes) is None
