"""``export.program.exported``: the ExportedProgram with the solver's ranges and a symshape Report,
kept across save/load. One tiny torch.export per module (a 2-line model), finished once."""

from __future__ import annotations

import io
from typing import Any

import pytest
import torch
from torch.export import Dim

from export.api import traced
from export.errors import ArchiveError, RefusedInputError
from export.program.exported import Report, SymshapeProgram, amend, finish, load, report_of, save
from export.program.refusals import KeptCheck
from export.program.zero_one import ZeroOneEvidence


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x[:, :4] + y


@pytest.fixture(scope="module")
def program() -> SymshapeProgram:
    ep, trace = traced(Model(), (torch.randn(3, 8), torch.randn(3, 4)),
                       dynamic_shapes={"x": {0: Dim("b", max=64)}, "y": {0: Dim("b", max=64)}})
    return finish(ep, trace)


def test_finish_writes_the_solvers_conclusions(program: SymshapeProgram) -> None:
    assert isinstance(program, SymshapeProgram)
    report = program.symshape
    assert report.ranges == {"x.size(0)": (1, 64), "y.size(0)": (1, 64)}  # the 0/1 evidence relieves the floor
    assert report.classes == (("b", "x.size(0)", "y.size(0)"),)
    assert (report.relations, report.congruences, report.checks, report.warnings) == ((), (), (), ())
    assert report.inputs == ("x", "y")
    assert program.equality_constraints and str(program).endswith(
        f"Equality constraints: [{', '.join(f'({a!r}, {b!r})' for a, b in program.equality_constraints)}]\n")
    assert program.symshape_solver is not None


def test_the_problem_is_rendered_on_first_read(program: SymshapeProgram) -> None:
    assert report_of(program) is program.__dict__["_symshape_report"]
    assert program.symshape.problem is not None and '"symshape.problem"' in program.symshape.problem


@pytest.mark.parametrize("x, y, message", [
    (torch.randn(3, 5), torch.randn(3, 4), "x.size(1) must be 8 (static in the program; got x.size(1) = 5)"),
    (torch.randn(65, 8), torch.randn(65, 4), "x.size(0) must be <= 64"),
])
def test_a_refused_call_says_why(program: SymshapeProgram, x: torch.Tensor, y: torch.Tensor, message: str) -> None:
    with pytest.raises(RefusedInputError) as info:
        program.module()(x, y)
    assert message in str(info.value)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, AssertionError)


def test_an_accepted_call_runs(program: SymshapeProgram) -> None:
    x, y = torch.randn(1, 8), torch.randn(1, 4)
    assert torch.equal(program.module()(x, y), x[:, :4] + y)


def test_save_and_load_keep_the_report(program: SymshapeProgram) -> None:
    buf = io.BytesIO()
    save(program, buf)
    loaded = load(io.BytesIO(buf.getvalue()))
    assert isinstance(loaded, SymshapeProgram) and loaded.symshape_solver is None
    assert loaded.symshape == program.symshape
    assert loaded.equality_constraints == program.equality_constraints
    with pytest.raises(RefusedInputError, match="x.size\\(1\\) must be 8"):
        loaded.module()(torch.randn(3, 5), torch.randn(3, 4))


@pytest.mark.parametrize("data, message", [
    (b"PK not really", "<stream>: not a .pt2 archive (File is not a zip file)"),
    (b"", "<stream>: not a .pt2 archive (File is not a zip file)"),
])
def test_load_refuses_what_is_no_archive(data: bytes, message: str) -> None:
    with pytest.raises(ArchiveError) as info:
        load(io.BytesIO(data))
    assert str(info.value) == message


def test_report_archived_round_trip() -> None:
    report = Report({"x.size(0)": (2, None)}, (("b", "x.size(0)"),), ("y.size(0) == 2 * b",), ("a: b",),
                    {"asked": 1}, None, ("w",),
                    (ZeroOneEvidence("x.size(0)", "x.size(0) != 1", "kept", "model.py:3", "a branch"),),
                    ("b % 4 == 0",), (KeptCheck("x.size(0) * y.size(0) <= 64", None, None, ("x.size(0)",)),), ("x",))
    assert Report.from_archived(report.archived()) == report
    assert Report.from_archived({"ranges": {}, "classes": [], "relations": [], "assumptions": [], "stats": {}}) == \
        Report({}, (), (), (), {})  # a report saved before the later fields


def test_amend_adds_notes_and_stats(program: SymshapeProgram) -> None:
    before = report_of(program)
    try:
        amend(program, notes=("traced at a larger example",), stats={"traces": 2})
        after = report_of(program)
        assert after.warnings == before.warnings + ("traced at a larger example",)
        assert after.stats == {**before.stats, "traces": 2}
    finally:
        program.__dict__["_symshape_report"] = before
