"""Models with a plain Python ``assert``. They live outside the test modules: pytest rewrites
a test module's ``assert`` into an ``if`` with messages, which dynamo would trace as a branch
on a data-dependent value instead of the runtime assertion it makes of an ``assert``."""

from __future__ import annotations

import torch


class AssertPositive(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        n = y.sum().item()
        assert n > 0, "need a positive count"
        return x * n


class AssertMax(torch.nn.Module):
    """PyTorch's ``test_python_asserts_with_sym_int``: ``assert`` on a data-dependent value."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x + 1
        assert y.max().item() > 0
        return y


class AssertMaxWithMessage(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x + 1
        assert y.max().item() > 0, "y must have a positive entry"
        return y
