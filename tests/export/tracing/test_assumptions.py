"""Typed reasons (export/tracing/assumptions.py): torch's own assumptions are told apart by a
tag from a closed set, never by their words, so rewording a message cannot change behaviour.

Table: each assumption the bridge records, its tag and its words; oracle: a real trace whose
every torch assumption carries its tag, and the same judgement and program when the words of
every tagged reason are replaced (the tags alone decide).
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch.export import Dim

from export.diagnose.judgement import judge
from export.exporter import Exporter
from export.program.floor_policy import is_floor
from export.tracing.assumptions import FLOOR_OP, POSITIVE_OP, SPECIALIZED_OP, Assumption, assumption, is_assumption
from solver import Reason, Solver
from solver.service import from_json, to_json


@pytest.mark.parametrize("reason, expected", [
    (Reason("trace_assumption", "n >= 2", None, FLOOR_OP, Assumption.FLOOR), Assumption.FLOOR),
    (Reason("trace_assumption", "n >= 1", None, POSITIVE_OP, Assumption.POSITIVE), Assumption.POSITIVE),
    (Reason("trace_assumption", "n == 1", None, "reworded", Assumption.SPECIALIZED), Assumption.SPECIALIZED),
    (Reason("trace_assumption", "n >= 3", None, "range", "range"), Assumption.RANGE),
    (Reason("trace_assumption", "n >= 2", None, FLOOR_OP), Assumption.FLOOR),  # a version-1 problem: no tag
    (Reason("trace_assumption", "n == 1", None, f"{SPECIALIZED_OP} n to 1"), Assumption.SPECIALIZED),
    (Reason("guard", "n >= 2", "m.py:3", FLOOR_OP), None),  # a user's line that happens to read like it
    (Reason("spec", "n <= 8"), None),
    (Reason("trace_assumption", "n >= 2", None, FLOOR_OP, "no such tag"), None),
])
def test_assumption_of_a_reason(reason: Reason, expected: Assumption | None) -> None:
    assert assumption(reason) is expected


class Branch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.shape[0] <= 6 else x + 1


def _trace(spec: dict) -> tuple[Exporter, object]:
    exporter = Exporter.of(Branch(), (torch.randn(4, 3),))
    _, trace = exporter.trace(exporter.parse(spec, classic=False))
    return exporter, trace


def test_every_torch_assumption_of_a_real_trace_is_tagged() -> None:
    _, trace = _trace({"x": {0: Dim("b", max=64)}})
    assumed = [f for f in trace.solver.facts if f.reason.kind == "trace_assumption"]
    assert assumed and all(f.reason.tag is not None for f in assumed)
    assert {assumption(f.reason) for f in assumed} >= {Assumption.FLOOR, Assumption.POSITIVE}


def _reworded(solver: Solver) -> Solver:
    """The solver with every tagged reason's words replaced."""
    out = solver.replica(kinds=("spec", "guard", "trace_assumption"))
    for f in out.facts:
        if f.reason.tag is not None:
            object.__setattr__(f, "reason", dataclasses.replace(f.reason, op="words nobody reads"))
    return out


def test_rewording_tagged_reasons_changes_no_judgement() -> None:
    _, trace = _trace({"x": {0: Dim("b", max=64)}})
    reworded = dataclasses.replace(trace, solver=_reworded(trace.solver))
    assert [f.reason.op for f in reworded.solver.facts if f.reason.tag] == \
        ["words nobody reads"] * sum(1 for f in trace.solver.facts if f.reason.tag)
    plain, other = judge(trace), judge(reworded)
    assert [c.constraint for c in plain.causes] == [c.constraint for c in other.causes] == ["x.size(0) must be <= 6"]
    assert [is_floor(f) for f in trace.solver.facts] == [is_floor(f) for f in reworded.solver.facts]


def test_tags_survive_the_problem_json() -> None:
    _, trace = _trace({"x": {0: Dim("b", max=64)}})
    back = from_json(to_json(trace.solver))
    tags = [f.reason.tag for f in trace.solver.facts if f.reason.tag]
    assert tags and [f.reason.tag for f in back.facts if f.reason.tag] == tags
    assert sum(is_assumption(f, Assumption.FLOOR) for f in back.facts) == \
        sum(is_assumption(f, Assumption.FLOOR) for f in trace.solver.facts)
