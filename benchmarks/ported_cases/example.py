"""A format example (not from PyTorch's suite): the two rows every case file follows."""
from __future__ import annotations

import torch
from torch.export import Dim

from benchmarks.bench_ported import Ported


class _Branch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sin() if x.shape[0] > 4 else x.cos()


CASES = [
    Ported("example_branch", "symshape format example", _Branch, lambda: (torch.randn(6, 3),),
           lambda: {"x": {0: Dim("b")}}, runs=lambda: [(torch.randn(9, 3),)]),
    Ported("example_branch_batch1", "symshape format example", _Branch, lambda: (torch.randn(1, 3),),
           lambda: {"x": {0: Dim("b")}}),
]
