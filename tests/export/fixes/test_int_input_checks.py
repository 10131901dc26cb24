"""A fix's ``torch._check`` line names an int input as the model's code does: ``n``, not
``n.shape[None]`` (issue 34: the fix copied ``export.spec.render.dim_text`` without its int-input
case)."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import export


class ReshapeByInt(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return x.reshape(n, -1) * 2


@pytest.mark.parametrize("relations", ["raise", "check"])
def test_a_check_on_an_int_input_names_it(relations: str) -> None:
    spec = {"x": {0: Dim("a")}, "n": Dim("n", max=64)}
    with pytest.raises(export.ConstraintViolationError, match="x.size\\(0\\) % n must be 0") as info:
        export.export(ReshapeByInt(), (torch.randn(12), 3), dynamic_shapes=spec, dim_relations=relations)
    fixes = info.value.fixes
    assert fixes.checks == ("torch._check(x.shape[0] % n == 0)",)
    assert "shape[None]" not in str(info.value)
