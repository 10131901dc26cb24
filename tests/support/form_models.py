"""The small models and the input maker both parity tables use (test_forms.py for the forms
torch 2.13 accepts, test_forms_214.py for those torch 2.14 added)."""

from __future__ import annotations

import torch


def ramp(*shape: int) -> torch.Tensor:
    """A float tensor of ``shape`` with distinct values ``0, 1/7, 2/7, ...`` in order."""
    return torch.arange(float(torch.Size(shape).numel())).reshape(shape) / 7


class Sub(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x - y


class Upto10(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1 if x.size(0) <= 10 else x - 1


class Double(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


class Concat(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, y]) * 2


class VarKw(torch.nn.Module):
    def forward(self, x: torch.Tensor, **kw: torch.Tensor) -> torch.Tensor:
        return x + kw["y"] * 2
