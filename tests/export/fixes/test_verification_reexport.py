"""Diagnosis re-exports (fix verification, 0/1 probes) build a program (its final ranges,
runtime asserts, report: about a third of the failing export's time on pad_to_max_sym_max,
issue 9 item 3) only when they offer it: the verified fix's ``err.fixes.program``, which
saves the user's own re-export (issue 8); a re-export that fails, or that verifies a fix
needing ``torch._check`` lines (no program offered), builds none."""
from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

import export
import export.exporter as exporter


class Slice6(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 5:] * 2


class Broadcast(torch.nn.Module):
    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return x + z


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = exporter.finish

    def counted(ep: Any, trace: Any, *rest: Any) -> Any:
        calls.append(1)
        return real(ep, trace, *rest)

    monkeypatch.setattr(exporter, "finish", counted)
    return calls


def test_verified_fix_builds_its_program_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    x = torch.randn(2, 8)
    spec = {"x": {1: Dim("n", max=16)}}
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Slice6(), (x,), dynamic_shapes=spec)
    fixes = info.value.fixes
    assert fixes is not None and fixes.verified  # the verification re-export ran and succeeded
    assert calls == [1] and fixes.program is not None  # it built the program it offers
    assert fixes.program.module()(torch.randn(2, 12)).shape == (2, 7)
    ep = export.export(Slice6(), (x,), dynamic_shapes=fixes.apply(spec))
    assert calls == [1, 1]
    assert ep.module()(torch.randn(2, 12)).shape == (2, 7)


def test_probe_builds_no_program_when_it_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    x, z = torch.randn(3, 8), torch.randn(1, 8)
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Broadcast(), (x, z), dynamic_shapes={"x": {0: Dim("b")}, "z": {0: Dim("b1")}},
                      zero_one_examples="raise")
    assert "broadcasts" in str(info.value)  # the probe re-export ran, and failed
    fixes = info.value.fixes
    assert fixes.larger_example_program is None
    assert calls == [1] and fixes.program is not None  # only the verified static fix's program
    # by default the larger example is tried first, fails the same way, and the same error follows
    with pytest.raises(export.ConstraintViolationError) as again:
        export.export(Broadcast(), (x, z), dynamic_shapes={"x": {0: Dim("b")}, "z": {0: Dim("b1")}})
    assert str(again.value) == str(info.value) and again.value.fixes.larger_example_program is None


class Flat(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], 64)


def test_a_fix_with_checks_builds_no_program_when_relations_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Flat(), (torch.randn(2, 8, 8),), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("h"), 2: Dim("w")}},
                      dim_relations="raise")
    fixes = info.value.fixes
    assert fixes.checks and fixes.verified_with_checks and fixes.program is None
    assert calls == []
