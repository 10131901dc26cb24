"""Fixes and sizes 0/1 (issue 8's refusals after a fix, issue 9 item 2), end to end with real
torch modules: a fix never declares torch's ``>= 2`` floor (``min=2``), a ``!= 1`` on a derived
or intermediate size is a fix fact only when the trace depends on it, and the program built
from exactly ``err.fixes.apply(spec)`` runs the smallest admitted sizes like eager, while a
branch that really depends on a size of 1 is still refused at run time (never silently wrong).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.export import Dim

import export
from export.api import traced

from periodic_models import Glu, Groups, UNet1d  # noqa: E402


class Add(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class AddBranchOnOne(nn.Module):
    """The soundness rule's model: a size of 1 takes another branch."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if x.shape[0] == 1:
            return (x + y) * 2
        return x + y + 1


class GroupsBranchOnOne(nn.Module):
    """A user branch on the derived size: the ``!= 1`` is the model's own decision."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.view(x.shape[0], -1, 4)
        if y.shape[1] == 1:
            return y * 2
        return y + 1


@dataclass(frozen=True)
class Case:
    name: str
    model: Callable[[], nn.Module]
    shapes: tuple[tuple[int, ...], ...]  # the example inputs
    spec: Callable[[], dict]
    runs: tuple[tuple[tuple[int, ...], ...], ...]  # inputs the fixed program must run like eager
    refuses: tuple[tuple[tuple[int, ...], ...], ...] = ()  # inputs it must refuse


CASES = [
    Case("separate_dims_equal", Add, ((3, 4), (3, 4)),
         lambda: {"x": {0: Dim("a")}, "y": {0: Dim("b")}}, (((1, 4), (1, 4)), ((2, 4), (2, 4)))),
    Case("separate_dims_branch_on_one", AddBranchOnOne, ((3, 4), (3, 4)),
         lambda: {"x": {0: Dim("a")}, "y": {0: Dim("b")}}, (((2, 4), (2, 4)), ((5, 4), (5, 4))),
         refuses=(((1, 4), (1, 4)),)),
    Case("view_groups_of_4", Groups, ((3, 8),), lambda: {"x": {0: Dim("b"), 1: Dim("n")}},
         (((3, 4),), ((1, 4),), ((2, 12),))),
    Case("view_groups_user_branch", GroupsBranchOnOne, ((3, 8),), lambda: {"x": {0: Dim("b"), 1: Dim("n")}},
         (((3, 8),), ((2, 12),)), refuses=(((3, 4),),)),
    Case("chunk_glu", Glu, ((3, 8),), lambda: {"x": {1: Dim("c")}}, (((3, 2),), ((3, 4),), ((3, 10),))),
    Case("unet1d_two_levels", lambda: UNet1d(2), ((2, 2, 16),), lambda: {"x": {2: Dim("L", min=4, max=256)}},
         (((2, 2, 4),), ((2, 2, 8),), ((2, 2, 12),))),
]


def _export(model: nn.Module, args: tuple[torch.Tensor, ...], spec: dict) -> export.SymshapeProgram:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return export.export(model, args, dynamic_shapes=spec)


@pytest.fixture(scope="module", params=CASES, ids=[c.name for c in CASES])
def fixed(request: pytest.FixtureRequest) -> tuple[Case, nn.Module, export.ConstraintViolationError, object]:
    case: Case = request.param
    torch.manual_seed(0)
    model = case.model().eval()
    args = tuple(torch.randn(*s) for s in case.shapes)
    with pytest.raises(export.ConstraintViolationError) as info:
        _export(model, args, case.spec())
    ep = _export(model, args, info.value.fixes.apply(case.spec()))
    return case, model, info.value, ep


def test_fix_is_verified_and_declares_no_floor(fixed) -> None:
    case, _, err, _ = fixed
    assert err.fixes.verified, str(err)
    if case.name != "view_groups_user_branch":  # the model's own n // 4 == 1 (see the test below)
        assert "min=2" not in err.fixes.modern, err.fixes.modern
        assert "must not be 1" not in str(err), str(err)


def test_fixed_program_runs_the_smallest_sizes_like_eager(fixed) -> None:
    case, model, _, ep = fixed
    for shapes in case.runs:
        args = tuple(torch.randn(*s) for s in shapes)
        with torch.no_grad():
            torch.testing.assert_close(ep.module()(*args), model(*args), msg=f"{case.name} at {shapes}")


def test_fixed_program_refuses_what_the_trace_depends_on(fixed) -> None:
    case, _, _, ep = fixed
    for shapes in case.refuses:
        args = tuple(torch.randn(*s) for s in shapes)
        with pytest.raises(export.RefusedInputError, match="the exported program refuses these inputs"):
            ep.module()(*args)


def test_user_branch_on_a_derived_size_stays_a_cause() -> None:
    """``y.shape[1] == 1`` asked by the model itself: a cause, and the fix excludes it."""
    with pytest.raises(export.ConstraintViolationError) as info:
        _export(GroupsBranchOnOne(), (torch.randn(3, 8),), {"x": {0: Dim("b"), 1: Dim("n")}})
    assert "x.size(1) // 4 must not be 1" in str(info.value)
    assert "min=2" in info.value.fixes.modern  # _n >= 2: the model's own branch on n // 4 == 1


def test_neutral_questions_are_recorded_with_their_places() -> None:
    _, trace = traced(Groups(), (torch.randn(3, 8),), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("n")}})
    texts = {str(rel): sorted(s.function for s in sites) for rel, sites in trace.neutral.items()}
    assert any("FloorDiv(x_size1, 4)" in t for t in texts), texts
    assert not any("FloorDiv" in str(f.rel) and "Ne" in str(f.rel) for f in trace.solver.facts)
