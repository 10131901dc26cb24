"""The README demo's encoder: needs seq <= 128, seq % 4 == 0 and mask to match tokens."""

import torch


class TinyEncoder(torch.nn.Module):
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


def make():
    torch.manual_seed(0)
    return TinyEncoder(), (torch.randn(2, 32, 16), torch.ones(2, 32))
