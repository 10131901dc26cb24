"""Fixes as data for a size-0/1 example, fixes and ``apply`` agreeing, and a user's
``torch._check`` recognised from torch's check path whatever its spelling."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch import _check
from torch.export import Dim

from step_cases import PositionTable  # noqa: E402
from zero_one_models import ClsToken, LinView  # noqa: E402

import export  # noqa: E402
from export.spec.inputs import Inputs  # noqa: E402
from export.diagnose.probe import enlarged_inputs  # noqa: E402
from shapes.spec import InputDim  # noqa: E402


class Bcast(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


@pytest.mark.parametrize("make, shape, spec", [
    (ClsToken, (1, 5, 8), lambda: {"x": {0: Dim("b")}}),
    (LinView, (1, 5, 8), lambda: {"x": {0: Dim("b"), 1: Dim("s")}}),
])
def test_batch_1_example_gets_both_choices_as_verified_data(make, shape, spec) -> None:
    model, x = make(), torch.randn(*shape)
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, (x,), dynamic_shapes=spec(), zero_one_examples="raise")  # torch's semantics
    fixes = info.value.fixes
    assert fixes is not None and fixes.verified
    # choice 1: the dim static at the example size, re-exported with exactly apply's result
    ep = export.export(model, (x,), dynamic_shapes=fixes.apply(spec()))
    assert "x.size(0)" not in ep.symshape.ranges
    # choice 2: the same spec with a larger example, given as sizes
    assert fixes.larger_example == {"x.size(0)": 2}
    inputs = Inputs.bind(model, (x,), None)
    sizes = {InputDim("x", 0): fixes.larger_example["x.size(0)"]}
    args, _ = enlarged_inputs(inputs, (x,), None, sizes)
    ep = export.export(model, args, dynamic_shapes=spec())
    assert ep.symshape.ranges["x.size(0)"] == (1, None)
    assert torch.allclose(ep.module()(x), model(x), atol=1e-6)  # and it runs the batch-1 input
    assert "larger example: x.size(0) = 2" in str(info.value)
    # the default: one call returns that program
    with pytest.warns(export.SymshapeWarning, match="traced at 2"):
        one = export.export(model, (x,), dynamic_shapes=spec())
    assert one.symshape.ranges["x.size(0)"] == (1, None)
    assert one.module().code == fixes.larger_example_program.module().code
    for b in (1, 2, 5):
        y = torch.randn(b, *shape[1:])
        assert torch.allclose(one.module()(y), model(y), atol=1e-6)


def test_broadcasting_size_1_gets_the_static_fix() -> None:
    x, y = torch.randn(4, 3), torch.randn(1, 3)
    spec = {"x": {0: Dim("b")}, "y": {0: Dim("c")}}
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Bcast(), (x, y), dynamic_shapes=spec)
    fixes = info.value.fixes
    assert fixes is not None and fixes.verified and fixes.larger_example is None
    ep = export.export(Bcast(), (x, y), dynamic_shapes=fixes.apply({"x": {0: Dim("b")}, "y": {0: Dim("c")}}))
    assert "y.size(0)" not in ep.symshape.ranges


class FlatTorchCheck(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch._check(x.shape[1] * x.shape[2] == 64)
        return x.reshape(x.shape[0], 64)


class FlatBareCheck(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check(x.shape[1] * x.shape[2] == 64)  # from torch import _check
        return x.reshape(x.shape[0], 64)


class FlatNoCheck(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], 64)


def _hw() -> dict:
    return {"x": {0: Dim("b"), 1: Dim("h"), 2: Dim("w")}}


@pytest.mark.parametrize("make", [FlatTorchCheck, FlatBareCheck], ids=["torch._check", "bare _check"])
def test_a_user_check_is_recognised_whatever_its_spelling(make) -> None:
    ep = export.export(make(), (torch.randn(2, 8, 8),), dynamic_shapes=_hw())
    x = torch.randn(3, 4, 16)
    assert torch.equal(ep.module()(x), x.reshape(3, 64))


def test_a_fix_needing_checks_is_offered_as_such_never_verified_when_relations_raise() -> None:
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(FlatNoCheck(), (torch.randn(2, 8, 8),), dynamic_shapes=_hw(), dim_relations="raise")
    fixes = info.value.fixes
    assert fixes.checks and not fixes.verified and fixes.verified_with_checks
    assert "apply() cannot add these" in fixes.render()
    with pytest.raises(export.ConstraintViolationError):  # apply alone cannot make it pass
        export.export(FlatNoCheck(), (torch.randn(2, 8, 8),), dynamic_shapes=fixes.apply(_hw()), dim_relations="raise")
    check = fixes.checks[0]
    assert check.startswith("torch._check(") and "x.shape[1]" in check


def test_a_batch_1_example_next_to_a_range_cause_gets_one_verified_fix_for_both(monkeypatch) -> None:
    """The 0/1 dim goes static inside the general fix, verified once: the diagnosis
    re-exports twice (the probe with a larger example, the fix), not once per partial fix."""
    from export.exporter import Exporter

    traced = []
    real = Exporter.trace
    monkeypatch.setattr(Exporter, "trace", lambda *a, **k: traced.append(1) or real(*a, **k))
    spec = lambda: {"x": {0: Dim("b"), 1: Dim("s")}}  # noqa: E731
    model, x = PositionTable(), torch.randn(1, 5, 8)
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, (x,), dynamic_shapes=spec(), zero_one_examples="raise")
    assert len(traced) == 3  # the failing export, the probe (b = 2), the fix's verification
    kinds = [c.kind for c in info.value.causes]
    assert "specialized" in kinds and any(k != "specialized" for k in kinds)
    fixes = info.value.fixes
    assert fixes.verified and fixes.program is not None
    assert {type(f).__name__ for f in fixes.records} >= {"SpecializeFix"}
    ep = export.export(model, (x,), dynamic_shapes=fixes.apply(spec()))
    assert "x.size(0)" not in ep.symshape.ranges and ep.symshape.ranges["x.size(1)"][1] == 16
    for s in (1, 7, 16):
        y = torch.randn(1, s, 8)
        assert torch.equal(ep.module()(y), model(y)) and torch.equal(fixes.program.module()(y), model(y))


def test_a_batch_1_example_next_to_a_range_cause_keeps_the_batch_dynamic_by_default(monkeypatch) -> None:
    """By default the export traces at batch 2: the error is the range cause alone, and its
    fix (verified at that example) keeps the batch dynamic; re-exporting with it in one call
    gives the program that runs batch 1, 2, 5."""
    from export.exporter import Exporter

    traced = []
    real = Exporter.trace
    monkeypatch.setattr(Exporter, "trace", lambda *a, **k: traced.append(1) or real(*a, **k))
    spec = lambda: {"x": {0: Dim("b"), 1: Dim("s")}}  # noqa: E731
    model, x = PositionTable(), torch.randn(1, 5, 8)
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, (x,), dynamic_shapes=spec())
    assert len(traced) == 1  # the export at b = 2; the fix (a range) is verified by replaying it
    assert info.value.stats["replays"] == 1
    assert [c.kind for c in info.value.causes] == ["guard"] and info.value.causes[0].dims == ("x.size(1)",)
    assert "traced at a larger example, x.size(0) = 2 (example 1)" in str(info.value)
    fixes = info.value.fixes
    assert fixes.verified and fixes.program is not None
    with pytest.warns(export.SymshapeWarning, match="traced at 2"):
        ep = export.export(model, (x,), dynamic_shapes=fixes.apply(spec()))
    assert ep.symshape.ranges["x.size(0)"] == (1, None) and ep.symshape.ranges["x.size(1)"][1] == 16
    for b, s in ((1, 1), (2, 7), (5, 16)):
        y = torch.randn(b, s, 8)
        assert torch.equal(ep.module()(y), model(y))


class ShiftRight(torch.nn.Module):
    """BART's ``shift_tokens_right``: the copy's overlap check asks ``s - 1 != 1`` (a hole,
    ``s != 2``), and the batch dim's own 0/1 decisions are relieved by a boundary re-trace."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.new_zeros(x.shape)
        y[:, 1:] = x[:, :-1].clone()
        return y * 2


def test_a_hole_fix_floors_only_the_dim_of_its_hole() -> None:
    """``s != 2`` says itself as ``s >= 3`` with ``s``'s floor kept; the batch dim, which no
    cause mentions, gets no ``min=2`` (its re-export's evidence relieves it): the offered
    program and ``apply``'s re-export both run batch 1, like eager (BART's fix once refused it)."""
    spec = lambda: {"x": {0: Dim("b"), 1: Dim("s")}}  # noqa: E731
    model = ShiftRight()
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, (torch.randn(2, 8),), dynamic_shapes=spec())
    fixes = info.value.fixes
    assert fixes.verified and fixes.program is not None and not fixes.checks
    applied = fixes.apply(spec())
    assert applied["x"][0].min <= 1 and applied["x"][1].min == 3
    assert "Dim('b', min=2)" not in fixes.render() and "Dim('s', min=3)" in fixes.render()
    ep = export.export(model, (torch.randn(2, 8),), dynamic_shapes=applied)
    for b, s in ((1, 3), (1, 7), (3, 5)):
        y = torch.randn(b, s)
        assert torch.equal(fixes.program.module()(y), model(y)) and torch.equal(ep.module()(y), model(y))
