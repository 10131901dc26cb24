"""The real torch modules both periodic test files export: a two-level 1-d U-Net and
``view(b, -1, 4)`` groups (test_periodic_models.py: divisibility fixes as derived Dims;
test_zero_one_fixes.py: fixes and sizes 0/1)."""

from __future__ import annotations

import torch
from torch import nn


class UNet1d(nn.Module):
    """Two stride-2 levels down (``channels -> 2 * channels``), two up, skip connections at
    both levels: the length ``L`` must be a multiple of 4."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        wide = 2 * channels
        self.down1 = nn.Conv1d(channels, wide, 3, stride=2, padding=1)
        self.down2 = nn.Conv1d(wide, wide, 3, stride=2, padding=1)
        self.up2 = nn.ConvTranspose1d(wide, wide, 2, stride=2)
        self.up1 = nn.ConvTranspose1d(wide, channels, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h1 = torch.relu(self.down1(x))
        h2 = torch.relu(self.down2(h1))
        u2 = self.up2(h2) + h1
        return self.up1(u2) + x


class Groups(nn.Module):
    """Groups of 4 along the feature dim: ``view(b, -1, 4)``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], -1, 4).sum(-1)
