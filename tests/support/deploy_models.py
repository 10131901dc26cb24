"""The models of issue 33 ("right wherever the program runs"), shared by the contract oracle and
the tests of each consumer (AOTInductor, ONNX + onnxruntime, ExecuTorch).

Each relies on a check no dim range says: a cat that must give a multiple of 64 rows, a
reshape that needs ``s % 4 == 0`` under ``Dim.AUTO``, ``x0 * x1 == y0 * y1``, ``mask.size(1) ==
past + seq``, ``y.size(1) <= x.size(1)``, the README's TinyEncoder (``4 * _seq``, a shared
batch), an ``if x.shape[0] == 1`` branch (its size-1 path differs), a derived ``2 * b``, a
``reshape(8, 8, -1)`` of ``64 * _n`` rows (size ``_n = 1`` runs: torch's own guard for it is one
symshape's solver owns, issue 34).
:func:`grid` gives each model's calls: every dynamic dim over a few sizes, the others as in the
example; :func:`case` builds a model, its example and spec afresh.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.export import Dim


class Cat64(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, y]).reshape(8, 8, -1)


class Groups(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s = x.shape
        return x.reshape(b, s // 4, 4).sum(-1)


class Product(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.reshape(-1) + y.reshape(-1)


class KVStep(torch.nn.Module):
    def forward(self, q: torch.Tensor, past: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        k = torch.cat([past, q], 1)
        return k * mask.unsqueeze(-1)


class Prefix(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x[:, : y.shape[1]] + y


class TinyEncoder(torch.nn.Module):
    """The README's model (examples/demo.py)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.pos = torch.nn.Parameter(torch.randn(128, 16))
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, d = tokens.shape
        x = tokens + self.pos[:s]
        x = x * mask.unsqueeze(-1)
        x = x.reshape(b, s // 4, 4, d).mean(dim=2)
        return self.proj(x)


class OneBranch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] == 1:
            return x * 2
        return x + 1


class View64(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(8, 8, -1)


class Doubled(torch.nn.Module):
    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x]) + z


@dataclass(frozen=True)
class Case:
    """One model of the table: ``make()`` returns the model, its example inputs and its spec;
    ``sizes`` are the sizes each dynamic dim takes on the grid."""

    name: str
    make: Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...], Any]]
    sizes: tuple[int, ...] = (1, 2, 3, 4, 6, 8, 24, 40, 64)


def _auto(*dims: int) -> dict[int, Any]:
    return {d: Dim.AUTO for d in dims}


CASES: tuple[Case, ...] = (
    Case("cat64", lambda: (Cat64(), (torch.randn(40, 2), torch.randn(24, 2)), {"x": _auto(0), "y": _auto(0)})),
    Case("groups AUTO", lambda: (Groups(), (torch.randn(2, 8),), {"x": _auto(0, 1)})),
    Case("product", lambda: (Product(), (torch.randn(2, 6), torch.randn(3, 4)), {"x": _auto(0, 1), "y": _auto(0, 1)}),
         (1, 2, 3, 4, 6)),
    Case("kv step", lambda: (KVStep(), (torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 8)),
                             {"q": {0: Dim("b"), 1: Dim("s")}, "past": {0: Dim("b"), 1: Dim("p")},
                              "mask": {0: Dim("b"), 1: Dim("m")}}), (1, 2, 3, 5)),
    Case("prefix", lambda: (Prefix(), (torch.randn(2, 8), torch.randn(2, 5)),
                            {"x": {0: Dim("b"), 1: Dim("n")}, "y": {0: Dim("b"), 1: Dim("k")}}), (1, 2, 3, 5, 8)),
    Case("tiny encoder", lambda: (TinyEncoder(), (torch.randn(2, 32, 16), torch.ones(2, 32)),
                                  _tiny_spec()), (1, 2, 4, 6, 32, 132)),
    Case("one branch", lambda: (OneBranch(), (torch.randn(3, 4),), {"x": {0: Dim("b")}})),
    Case("doubled", lambda: (Doubled(), (torch.randn(3, 4), torch.randn(6, 4)), {"x": {0: Dim("b")}, "z": {0: 2 * Dim("b")}})),
    Case("view64", lambda: (View64(), (torch.randn(128),), {"x": {0: 64 * Dim("_n")}}), (1, 63, 64, 100, 128, 192)),
)


def _tiny_spec() -> Any:
    batch, seq = Dim("batch"), Dim("_seq", min=1, max=32)
    return {"tokens": {0: batch, 1: 4 * seq}, "mask": {0: batch, 1: 4 * seq}}


def case(name: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...], Any]:
    """A fresh model, example and spec of the case named ``name``."""
    return next(c for c in CASES if c.name == name).make()


def grid(ep: Any, args: tuple[torch.Tensor, ...], sizes: tuple[int, ...]) -> list[tuple[torch.Tensor, ...]]:
    """Calls of ``ep`` (a symshape program): every dynamic dim of its contract over ``sizes``,
    every other dim as in ``args``; seeded, so each run makes the same tensors."""
    contract = ep.symshape.contract
    dyn = [(i, d) for i, entry in enumerate(contract.inputs) for d, size in enumerate(entry.shape) if isinstance(size, str)]
    gen = torch.Generator().manual_seed(0)
    out = []
    for combo in itertools.product(sizes, repeat=len(dyn)):
        shapes = [list(a.shape) for a in args]
        for (i, d), v in zip(dyn, combo):
            shapes[i][d] = v
        out.append(tuple(torch.randn(*shape, generator=gen) for shape in shapes))
    return out


def outcome(fn: Callable[..., Any], call: tuple[torch.Tensor, ...]) -> tuple[bool, Any]:
    """``(True, the result)`` when ``fn(*call)`` runs, ``(False, the exception)`` when it raises."""
    try:
        return True, fn(*call)
    except Exception as e:  # noqa: BLE001 - any refusal, compared by the caller
        return False, e


def first(value: Any) -> torch.Tensor:
    """The first tensor of a program's result (a tensor, or a tuple/list of them)."""
    return value if isinstance(value, torch.Tensor) else first(value[0])
