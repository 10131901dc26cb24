"""An int input whose own ``Dim`` has a negative bound (``Dim("v", min=-3, max=9)``), end to end
through ``export.export``. torch's ``Dim.AUTO`` / ``Dim.DYNAMIC`` take no negative bound (a bare
AssertionError), so torch traces the int over a wider range while symshape's solver holds it to
the declared one. The oracle: on a grid of ints the program agrees with eager wherever it runs,
runs exactly the declared range when the model needs nothing more, and refuses the rest with a
RefusedInputError; a model that needs less gets a verified fix in the Dim form."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
from torch.export import Dim

import export
from export.errors import ConstraintViolationError, RefusedInputError


class Mul(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return x * n


class Branch(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        if n > 4:
            return x * n
        return x - n


X = torch.randn(8, 3)
GRID = range(-12, 13)


def _export(model: torch.nn.Module, n: int, ds: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return export.export(model, (X, n), dynamic_shapes=ds)


def _runs(ep: Any, model: torch.nn.Module) -> list[int]:
    out = []
    for n in GRID:
        try:
            got = ep.module()(X, n)
        except RefusedInputError:
            continue
        assert torch.equal(got, model(X, n)), f"n={n} silently wrong"
        out.append(n)
    return out


@pytest.mark.parametrize("example", [-3, 0, 6])
def test_a_range_with_a_negative_min_is_held_as_declared(example: int) -> None:
    ep = _export(Mul(), example, {"x": None, "n": Dim("v", min=-3, max=9)})
    assert ep.symshape.ranges["n"] == (-3, 9)
    assert _runs(ep, Mul()) == list(range(-3, 10))


def test_a_range_of_negative_ints_only() -> None:
    ep = _export(Mul(), -4, {"x": None, "n": Dim("v", min=-9, max=-1)})
    assert ep.symshape.ranges["n"] == (-9, -1)
    assert _runs(ep, Mul()) == list(range(-9, 0))


def test_a_negative_range_the_model_narrows_gets_a_verified_fix() -> None:
    ds = {"x": None, "n": Dim("v", min=-3, max=9)}
    with pytest.raises(ConstraintViolationError) as info:
        _export(Branch(), -3, ds)
    fixes = info.value.fixes
    assert "v = Dim('v', min=-3, max=4)" in fixes.modern and "'n': v" in fixes.modern
    assert fixes.verified
    ep = _export(Branch(), -3, fixes.apply(ds))
    assert ep.symshape.ranges["n"] == (-3, 4)
    assert _runs(ep, Branch()) == list(range(-3, 5))
