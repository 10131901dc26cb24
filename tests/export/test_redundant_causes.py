"""Causes the others imply are not listed (issue 8 item 5): the table gives a model, its spec
and the texts the message must and must not hold; the fix still re-exports."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import export


class ViewByOther(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.view(y.shape[0], -1) + y[:, :1]


class MaskView(torch.nn.Module):
    """GPT-2's ``attention_mask.view(batch_size, -1)`` then a broadcast with the ids."""

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return ids.float() * mask.view(ids.shape[0], -1)


CASES = [
    ("view_by_other", ViewByOther, (torch.randn(4, 3), torch.randn(4, 2)),
     {"x": {0: Dim("a")}, "y": {0: Dim("b")}}, "must equal", "%"),
    ("mask_view", MaskView, (torch.ones(2, 8, dtype=torch.long), torch.ones(2, 8)),
     {"ids": {0: Dim("b1"), 1: Dim("s1")}, "mask": {0: Dim("b2"), 1: Dim("s2")}}, "must equal", "%"),
]


@pytest.mark.parametrize(("name", "model", "args", "spec", "said", "unsaid"), CASES, ids=[c[0] for c in CASES])
def test_implied_causes_are_dropped(name: str, model: type[torch.nn.Module], args: tuple, spec: dict,
                                    said: str, unsaid: str) -> None:
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model(), args, dynamic_shapes=spec)
    causes = str(info.value).split("Suggested fix")[0]
    assert said in causes and unsaid not in causes, causes
    fixed = info.value.fixes.apply(spec)
    ep = export.export(model(), args, dynamic_shapes=fixed)
    assert torch.equal(ep.module()(*args), model()(*args))
