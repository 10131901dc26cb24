"""Small models for the 0/1 tests: each names what torch decides on a size 1."""

from __future__ import annotations

import torch
import torch.nn.functional as F


class ClsToken(torch.nn.Module):
    """ViT's class token: the fake-tensor cache re-creates the expand's output."""

    def __init__(self) -> None:
        super().__init__()
        self.cls = torch.nn.Parameter(torch.randn(1, 1, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1)


class LinView(torch.nn.Module):
    """A view after a linear layer: view grouping and the stride of a size-1 dim."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        return self.lin(x).view(b, s, 2, 4)


class EqOne(torch.nn.Module):
    """A user branch on size 1: size 1 must never run the other branch."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] == 1:
            return x * 2
        return x + 1


class CausalIfNoMask(torch.nn.Module):
    """transformers' sdpa line: ``q_length > 1 and mask is None`` with a mask given: both
    answers give the same graph, so the boundary re-trace relieves the dim."""

    def forward(self, q: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        causal = bool(q.shape[2] > 1) and mask is None
        return F.scaled_dot_product_attention(q, q, q, attn_mask=mask, is_causal=causal)


class CausalAlways(torch.nn.Module):
    """``is_causal = q_length > 1`` without a mask: the graph at 1 differs (not causal)."""

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, q, q, is_causal=bool(q.shape[2] > 1))


class TwoBranches(torch.nn.Module):
    """Branches on two dims whose graphs agree at 1 for each dim alone and together."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.sum(0) if x.shape[0] > 1 else x.sum(0)
        return a.mean(0) if x.shape[1] > 1 else a.mean(0)


class SecondDimOnly(torch.nn.Module):
    """A branch whose graph at 1 agrees for dim 0 but not for dim 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 3 if x.shape[0] > 1 else x * 3
        return y + 1 if x.shape[1] > 1 else y - 1


class Gram(torch.nn.Module):
    """matmul's decomposition folds the batch dims of its first operand (a transposed view)."""

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        return torch.matmul(q.transpose(3, 2), q)


class Scores(torch.nn.Module):
    """Attention scores: matmul's decomposition folds the batch dims of ``k.transpose``."""

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.matmul(q, k.transpose(3, 2))


class EmptyBranch(torch.nn.Module):
    """A branch on size 0 that torch folds unseen (its size symbols are positive): torch's
    program admits 0 and runs the sum there, where eager returns ones."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(0) if x.shape[0] != 0 else x.new_ones(x.shape[1:])


class ThreeWay(torch.nn.Module):
    """PyTorch's ``test_automatic_dynamic_shapes_simple_equality``: x + y + z, fully dynamic."""

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return x + y + z



class PadInto(torch.nn.Module):
    """PyTorch's ``test_export_max_onnx_reported``: x and y written into zeros of the larger
    shape. With y at size 1, ``max(x, y)`` is x and torch drops the now whole slice
    ``z[:, :x.shape[1]]``; the program (``Max(x, y)`` columns, slice kept) computes the same."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.zeros((max(x.shape[0], y.shape[0]), max(x.shape[1], y.shape[1])), dtype=x.dtype)
        z[: x.shape[0], : x.shape[1]] = x
        z[: y.shape[0], : y.shape[1]] += y
        return z
