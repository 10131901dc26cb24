"""``export.diagnose.replayed``: a replayed solver problem as the report's document
(``symshape replay --json``), its guards in the words of an export's causes.

Fast: the problems are hand-built traces' (``trace_builder``), as JSON; every document is
checked against docs/report.schema.json."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

import json_schema
from export.diagnose.replayed import problem_document, replay_violations
from export.program.analysis import analyse
from solver.errors import ProtocolError
from step_cases import REPORT_SCHEMA, divisible_trace, pinned_trace, problem_of
from trace_builder import TraceBuilder, user_site

DIVISIBLE = {"dims": ["x.size(1)"], "origin": "model.py:14", "code": "y = x.view(x.shape[0], -1, 4)",
             "constraint": "x.size(1) must be divisible by 4", "kind": "guard"}


def _problem(size0: int, spec: Any, *asked: tuple[str, bool, str]) -> dict[str, Any]:
    b = TraceBuilder("x", (torch.randn(size0, 8),), {"x": spec})
    for question, answer, code in asked:
        b.ask(question, answer, site=user_site(code))
    return problem_of(b.trace())


@pytest.mark.parametrize("problem, violations", [
    (problem_of(divisible_trace()), [DIVISIBLE]),
    (problem_of(divisible_trace({"x": {0: Dim("b"), 1: Dim.AUTO}})), []),  # an adapting dim: no violation
    (problem_of(pinned_trace()), []),  # a Dim.DYNAMIC adapts here: the export's pinned check is not replayed
    (_problem(3, {0: Dim("b"), 1: Dim("s")}, ("x.size(1) >= 16", False, "if x.shape[1] >= 16:")),
     [{"dims": ["x.size(1)"], "origin": "model.py:10", "code": "if x.shape[1] >= 16:",
       "constraint": "x.size(1) must be <= 15", "kind": "guard"}]),
    (_problem(1, {0: Dim("b")}),
     [{"dims": ["x.size(0)"], "origin": None, "code": None, "kind": "specialized",
       "constraint": "x.size(0) was specialized to 1: the example input has size 1 on a dim declared dynamic; use "
                     "an example of size >= 2"}]),
    (_problem(3, {0: Dim("b")}), []),  # torch's >= 1 / >= 2 assumptions alone are no violations
])
def test_replay_violations(problem: dict[str, Any], violations: list[dict[str, Any]]) -> None:
    assert replay_violations(analyse(problem)) == violations


def test_two_guards_of_one_line_are_one_cause() -> None:
    problem = _problem(3, {0: Dim("b"), 1: Dim("s")}, ("x.size(1) >= 16", False, "if 16 <= x.shape[1] or x.shape[1] < 4:"),
                       ("x.size(1) < 4", False, "if 16 <= x.shape[1] or x.shape[1] < 4:"))
    [cause] = replay_violations(analyse(problem))
    assert cause["dims"] == ["x.size(1)"] and cause["constraint"] == "x.size(1) must be <= 15; x.size(1) must be >= 4"


@pytest.mark.parametrize("problem, status", [(problem_of(divisible_trace()), "violations"),
                                             (problem_of(pinned_trace()), "replayed")])
def test_problem_document(problem: dict[str, Any], status: str) -> None:
    doc = problem_document(problem)
    json_schema.validate(doc, REPORT_SCHEMA)
    assert (doc["status"], doc["message"], doc["problem"]) == (status, None, problem)
    assert doc["violations"] == replay_violations(analyse(problem))
    assert doc["stats"]["symbols"] == len(problem["symbols"]) and doc["stats"]["traces"] is None


def test_problem_document_of_a_replayed_analysis() -> None:
    problem = problem_of(divisible_trace())
    analysis = analyse(problem)
    doc = problem_document(problem, analysis)
    assert doc == problem_document(problem)
    assert doc["congruences"] == ["s % 4 == 0"] and doc["violations"] == [DIVISIBLE]


def test_a_damaged_problem_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match='^format: expected "symshape.problem"'):
        problem_document({"format": "symshape.report/1"})
