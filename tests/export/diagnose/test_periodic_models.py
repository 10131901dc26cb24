"""Divisibility fixes as derived Dims, end to end (issue 9 item 1), with real torch modules.

Each model's guards are periodic relations (``2*((c+1)//2) == c`` from ``chunk``,
``(L+3) % 4 == 3`` from two stride-2 levels, ``h*w == 4*(h//2)*(w//2)`` from patchify,
``n % 4 == 0`` from ``view(b, -1, 4)``). The export fails with a fix that says it as a derived
``Dim`` (``2 * _c``), with no ``torch._check`` line; re-exporting with exactly
``err.fixes.apply(spec)`` succeeds, and the fixed program matches eager on sizes inside it,
the smallest one included.

Issue 9 item 2: the trace's ``!= 1`` on the derived size (``x.size(1) // 4``), asked only at
value-neutral torch places, is no cause and no fix fact, so the smallest multiple is admitted
(n = 4 for ``view(b, -1, 4)``, c = 2 for ``chunk(2)``, L = 4 for the U-Net, h = w = 2 for
patchify, whose ``h // 2 != 1`` is asked inside reshape's recorded kernel: the site table's
recorded-op entries) and runs like eager.
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

from periodic_models import Groups, UNet1d  # noqa: E402


class GLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, dim=-1)
        return a * torch.sigmoid(b) + self.proj.weight.sum()


class Patchify(nn.Module):
    """ViT-style 2x2 patches: ``view(b, c, h // 2, 2, w // 2, 2)``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        y = x.view(b, c, h // 2, 2, w // 2, 2)
        return y.permute(0, 1, 3, 5, 2, 4).reshape(b, c * 4, h // 2, w // 2)


@dataclass(frozen=True)
class Case:
    name: str
    model: Callable[[], nn.Module]
    shape: tuple[int, ...]
    spec: Callable[[], dict]
    derived: tuple[str, ...]  # what the Dim form must say
    sizes: tuple[dict[int, int], ...]  # dim -> size, inside the fixed spec


CASES = [
    Case("chunk_glu", GLU, (3, 8), lambda: {"x": {1: Dim("c", min=2, max=64)}},
         ("2 * _c",), ({1: 2}, {1: 4}, {1: 6}, {1: 10}, {1: 64})),
    Case("unet1d_two_levels", lambda: UNet1d(4), (2, 4, 16), lambda: {"x": {2: Dim("L", min=4, max=256)}},
         ("4 * _L",), ({2: 4}, {2: 8}, {2: 12}, {2: 36}, {2: 256})),
    Case("patchify_h_w", Patchify, (2, 3, 8, 12), lambda: {"x": {2: Dim("h"), 3: Dim("w")}},
         ("2 * _h", "2 * _w"), ({2: 2, 3: 2}, {2: 2, 3: 6}, {2: 4, 3: 4}, {2: 6, 3: 10}, {2: 30, 3: 8})),
    Case("view_groups_of_4", Groups, (2, 16), lambda: {"x": {1: Dim("n", min=2, max=64)}},
         ("4 * _n",), ({1: 4}, {1: 8}, {1: 12}, {1: 64})),
]


def _export(model: nn.Module, x: torch.Tensor, spec: dict):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return export.export(model, (x,), dynamic_shapes=spec)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_divisibility_fix_is_a_derived_dim_and_runs_like_eager(case: Case) -> None:
    torch.manual_seed(0)
    model = case.model().eval()
    x = torch.randn(*case.shape)
    spec = case.spec()
    with pytest.raises(export.ConstraintViolationError) as info:
        _export(model, x, spec)
    fixes = info.value.fixes
    assert fixes is not None and fixes.verified, str(info.value)
    assert fixes.checks == (), f"a torch._check line instead of a derived Dim:\n{info.value}"
    for text in case.derived:
        assert text in fixes.modern, fixes.modern
    ep = _export(model, x, fixes.apply(spec))
    for sizes in case.sizes:
        shape = [sizes.get(i, n) for i, n in enumerate(case.shape)]
        y = torch.randn(*shape)
        with torch.no_grad():
            torch.testing.assert_close(ep.module()(y), model(y), msg=f"{case.name} at {shape}")
