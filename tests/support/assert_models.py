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
