"""Diagnosis re-exports (fix verification, 0/1 probes) only need to know whether the export
succeeds: they do not build the program (its final ranges, runtime asserts, report), which
took about a third of the failing export's time on pad_to_max_sym_max (issue 9 item 3)."""
from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

import export
import export.api as api


class Slice6(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 5:] * 2


class Broadcast(torch.nn.Module):
    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return x + z


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = api.finish

    def counted(ep: Any, trace: Any, *rest: Any) -> Any:
        calls.append(1)
        return real(ep, trace, *rest)

    monkeypatch.setattr(api, "finish", counted)
    return calls


def test_verified_fix_builds_no_program(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    x = torch.randn(2, 8)
    spec = {"x": {1: Dim("n", max=16)}}
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Slice6(), (x,), dynamic_shapes=spec)
    fixes = info.value.fixes
    assert fixes is not None and fixes.verified  # the verification re-export ran and succeeded
    assert calls == []
    ep = export.export(Slice6(), (x,), dynamic_shapes=fixes.apply(spec))
    assert calls == [1]
    assert ep.module()(torch.randn(2, 12)).shape == (2, 7)


def test_probe_builds_no_program(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    x, z = torch.randn(3, 8), torch.randn(1, 8)
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Broadcast(), (x, z), dynamic_shapes={"x": {0: Dim("b")}, "z": {0: Dim("b1")}})
    assert "broadcasts" in str(info.value)  # the probe re-export ran
    assert calls == []
