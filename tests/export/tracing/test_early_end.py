"""A trace that fails for a violation ends where torch would produce guards, before torch builds
its program (issue 22): the error and its verified fix are those of a full trace."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

import export
import export.errors as errors


class Branch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.shape[0] <= 6 else x + 1


class CatSum(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.cat((x, y), 1) + z


@pytest.fixture
def ended(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    seen: list[Any] = []
    plain = errors.TraceEnded.__init__

    def spy(self: errors.TraceEnded, trace: Any) -> None:
        seen.append(trace)
        plain(self, trace)

    monkeypatch.setattr(errors.TraceEnded, "__init__", spy)
    return seen


def test_a_failing_trace_ends_early_and_its_fix_is_verified(ended: list[Any]) -> None:
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Branch(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b", max=64)}})
    err = info.value
    assert len(ended) == 1  # the first trace; the verification builds its program
    assert err.fixes.verified and err.fixes.program is not None
    assert err.stats["traces"] == 2
    assert "x.size(0)" in str(err) and "<= 6" in str(err)
    x = torch.randn(5, 3)
    torch.testing.assert_close(err.fixes.program.module()(x), Branch()(x))


@pytest.mark.parametrize("relations, fails", [("check", False), ("raise", True)])
def test_a_kept_check_export_is_not_ended(ended: list[Any], relations: str, fails: bool) -> None:
    args = (torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 7))
    spec = {"x": {1: Dim("a")}, "y": {1: Dim("c")}, "z": {1: Dim("d")}}
    if fails:
        with pytest.raises(export.ConstraintViolationError):
            export.export(CatSum(), args, dynamic_shapes=spec, dim_relations=relations)
        assert ended
        return
    ep = export.export(CatSum(), args, dynamic_shapes=spec, dim_relations=relations)
    assert not ended and ep.symshape.checks
    torch.testing.assert_close(ep.module()(*args), CatSum()(*args))


def test_a_clean_export_is_not_ended(ended: list[Any]) -> None:
    ep = export.export(Branch(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b", max=6)}})
    assert not ended
    assert ep.symshape.ranges == {"x.size(0)": (1, 6)}
