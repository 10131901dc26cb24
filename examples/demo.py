"""symshape demo: a failing dynamic-shape export, its explained error, and the verified fix.

Run: python examples/demo.py
"""

from __future__ import annotations

import torch
from torch.export import Dim

import export


class TinyEncoder(torch.nn.Module):
    """Token features plus a learned positional table, pooled in groups of 4 positions."""

    def __init__(self) -> None:
        super().__init__()
        self.pos = torch.nn.Parameter(torch.randn(128, 16))
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, d = tokens.shape
        x = tokens + self.pos[:s]                      # needs s <= 128
        x = x * mask.unsqueeze(-1)                     # needs mask to match tokens
        x = x.reshape(b, s // 4, 4, d).mean(dim=2)     # needs s % 4 == 0
        return self.proj(x)


def make() -> tuple[TinyEncoder, tuple[torch.Tensor, torch.Tensor]]:
    """The model and example inputs (also the CLI's factory: ``symshape export examples/demo.py:make``)."""
    torch.manual_seed(0)
    return TinyEncoder(), (torch.randn(2, 32, 16), torch.ones(2, 32))


def main() -> None:
    model, (tokens, mask) = make()
    dynamic_shapes = {
        "tokens": {0: Dim("batch"), 1: Dim("seq")},
        "mask": {0: Dim("mask_batch"), 1: Dim("mask_seq")},
    }
    print("Exporting TinyEncoder with dynamic batch and sequence dims...\n")
    try:
        export.export(model, (tokens, mask), dynamic_shapes=dynamic_shapes)
    except export.ConstraintViolationError as err:
        print(err)
        fixed = err.fixes.apply(dynamic_shapes)
    print("\nRe-exporting with the suggested fix (err.fixes.apply(dynamic_shapes))...")
    ep = export.export(model, (tokens, mask), dynamic_shapes=fixed)
    print("Range constraints:", dict(ep.symshape.ranges))
    print("Equality constraints:", ep.equality_constraints)
    for b, s in ((1, 8), (2, 4), (3, 64), (5, 128)):  # batch 1 and seq 4 too: no decision needed them >= 2
        t, m = torch.randn(b, s, 16), torch.ones(b, s)
        same = torch.allclose(ep.module()(t, m), model(t, m), atol=1e-5)
        print(f"  batch={b} seq={s}: matches eager: {same}")
    try:
        ep.module()(torch.randn(2, 6, 16), torch.ones(2, 6))
    except (RuntimeError, AssertionError) as e:
        print(f"  seq=6 is rejected: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
