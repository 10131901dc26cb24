"""Real torch modules whose sizes must be multiples (a two-level 1-d U-Net, ``view(b, -1, 4)``
groups, a GLU's ``chunk(2)``), exported by tests/export_periodic (divisibility fixes as
derived Dims; fixes and sizes 0/1) and tests/export_zero_one/test_sites.py (the value-neutral
site table). Import it after putting this folder on ``sys.path``."""

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


class Glu(nn.Module):
    """A gated linear unit without weights: ``chunk(2)`` on the last dim, which must be even."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, dim=-1)
        return a * torch.sigmoid(b)
