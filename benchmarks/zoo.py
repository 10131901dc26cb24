"""A zoo of small CPU models with dynamic shapes, shared by tests/e2e/models and bench_export.

Every :class:`ZooEntry` has

* ``build()`` -> ``(model, args, kwargs)``: a fresh model (eval mode, fixed seed) and
  example inputs;
* ``dynamic_shapes()``: torch ``Dim`` specs, with fresh ``Dim`` objects on every call;
* ``sizes()``: alternative ``(args, kwargs)`` across the declared ranges (the minimum,
  the maximum and something in between), to run the exported program on;
* ``ranges``: the final range of each dynamic input dim, by user-facing name
  (``x.size(0)``): what the spec declares, unless ``notes`` says why the trace narrowed it;
* ``tied``: groups of input dims the spec declares equal (the same ``Dim``); each must
  end up in one of the program's ``equality_constraints`` classes;
* ``outside()``: ``(args, kwargs)`` just outside the ranges (above the max, below the
  min), which the exported (and the saved/loaded) program must reject;
* ``strict``: whether the model is also exported with ``strict=True`` in the tests.

Inputs are generated deterministically (``torch.Generator`` seeded by the shape).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

__all__ = ["ZooEntry", "ZOO", "entry"]

Call = tuple[tuple[Any, ...], dict[str, Any]]


def _randn(*shape: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(hash((seed, *shape)) & 0xFFFF_FFFF)
    return torch.randn(*shape, generator=g)


def _fresh(cls: Callable[..., nn.Module], *a: Any, **k: Any) -> nn.Module:
    torch.manual_seed(0)
    return cls(*a, **k).eval()


@dataclass(frozen=True)
class ZooEntry:
    name: str
    make_model: Callable[[], nn.Module]
    make_inputs: Callable[..., Call]  # make_inputs(**dims) -> (args, kwargs)
    example: dict[str, int]  # dims of the export's example inputs
    dynamic_shapes: Callable[[], Any]
    alt: tuple[dict[str, int], ...]  # dims of the alternative inputs
    over: tuple[dict[str, int], ...]  # dims just outside the ranges
    ranges: dict[str, tuple[int, int]]
    tied: tuple[tuple[str, ...], ...] = ()
    strict: bool = False
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def build(self) -> tuple[nn.Module, tuple[Any, ...], dict[str, Any]]:
        args, kwargs = self.make_inputs(**self.example)
        return self.make_model(), args, kwargs

    def sizes(self) -> list[Call]:
        return [self.make_inputs(**d) for d in self.alt]

    def outside(self) -> list[Call]:
        return [self.make_inputs(**d) for d in self.over]


# ---------------------------------------------------------------------------------------
# MLP


class MLP(nn.Module):
    def __init__(self, d_in: int = 16, hidden: int = 32, d_out: int = 8) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.GELU(),
                                 nn.Linear(hidden, d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def _mlp_inputs(b: int) -> Call:
    return (_randn(b, 16),), {}


def _mlp_shapes() -> Any:
    return {"x": {0: Dim("batch", min=2, max=64)}}


# ---------------------------------------------------------------------------------------
# Conv net: H and W multiples of 4 (two 2x2 poolings)


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.head = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn(self.c1(x))), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)


def _conv_inputs(b: int, h: int, w: int) -> Call:
    return (_randn(b, 3, 4 * h, 4 * w),), {}


def _conv_shapes() -> Any:
    batch = Dim("batch", min=2, max=32)
    _h, _w = Dim("_h", min=2, max=16), Dim("_w", min=2, max=16)
    return {"x": {0: batch, 2: 4 * _h, 3: 4 * _w}}


# ---------------------------------------------------------------------------------------
# Transformer encoder layer (with and without key padding mask)

D_MODEL = 32


def _encoder() -> nn.Module:
    return _fresh(nn.TransformerEncoderLayer, d_model=D_MODEL, nhead=4, dim_feedforward=64, dropout=0.0,
                  batch_first=True)


class EncoderWithMask(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = _encoder()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.layer(x, src_key_padding_mask=mask)


def _tf_inputs(b: int, s: int) -> Call:
    return (_randn(b, s, D_MODEL),), {}


def _pad_mask(b: int, s: int) -> torch.Tensor:
    lengths = torch.tensor([max(1, s - (i * 3) % s) for i in range(b)])  # never a fully padded row
    return torch.arange(s)[None, :] >= lengths[:, None]


def _tf_mask_inputs(b: int, s: int) -> Call:
    return (_randn(b, s, D_MODEL), _pad_mask(b, s)), {}


def _tf_shapes() -> Any:
    return {"src": {0: Dim("batch", min=2, max=16), 1: Dim("seq", min=2, max=128)}}


def _tf_mask_shapes() -> Any:
    batch, seq = Dim("batch", min=2, max=16), Dim("seq", min=2, max=128)
    return {"x": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}}


# ---------------------------------------------------------------------------------------
# Decoder step with a KV cache


class KVDecoder(nn.Module):
    """One attention block over ``past + new`` tokens with a causal mask; returns the
    output and the grown cache."""

    def __init__(self, d: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.h, self.hd = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.norm = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def split(self, t: torch.Tensor) -> torch.Tensor:
        b, n, _ = t.shape
        return t.view(b, n, self.h, self.hd).transpose(1, 2)

    def forward(self, x: torch.Tensor, past_k: torch.Tensor, past_v: torch.Tensor):
        b, t, d = x.shape
        p = past_k.shape[2]
        y = self.norm(x)
        q, k, v = self.split(self.q(y)), self.split(self.k(y)), self.split(self.v(y))
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        rows = torch.arange(t)[:, None] + p
        cols = torch.arange(p + t)[None, :]
        causal = cols <= rows  # (t, p + t)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        scores = scores.masked_fill(~causal, float("-inf"))
        att = scores.softmax(-1) @ v  # (b, h, t, hd)
        out = x + self.o(att.transpose(1, 2).reshape(b, t, d))
        out = out + self.mlp(out)
        return out, k, v


def _kv_inputs(b: int, t: int, p: int) -> Call:
    return (_randn(b, t, 32), _randn(b, 4, p, 8, seed=1), _randn(b, 4, p, 8, seed=2)), {}


def _kv_shapes() -> Any:
    batch, new, past = Dim("batch", min=2, max=8), Dim("new", min=2, max=16), Dim("past", min=2, max=256)
    return {"x": {0: batch, 1: new}, "past_k": {0: batch, 2: past}, "past_v": {0: batch, 2: past}}


# ---------------------------------------------------------------------------------------
# ViT-style patch embedding: H, W multiples of the patch size


class PatchEmbed(nn.Module):
    def __init__(self, patch: int = 16, d: int = 32, max_side: int = 32) -> None:
        super().__init__()
        self.proj = nn.Conv2d(3, d, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, max_side * max_side + 1, d) * 0.02)
        self.norm = nn.LayerNorm(d)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        x = self.proj(img).flatten(2).transpose(1, 2)  # (b, h*w, d)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        x = x + self.pos[:, : x.shape[1]]
        return self.norm(x)


def _vit_inputs(b: int, h: int, w: int) -> Call:
    return (_randn(b, 3, 16 * h, 16 * w),), {}


def _vit_shapes() -> Any:
    batch = Dim("batch", min=2, max=8)
    _h, _w = Dim("_h", min=1, max=32), Dim("_w", min=1, max=32)
    return {"img": {0: batch, 2: 16 * _h, 3: 16 * _w}}


# ---------------------------------------------------------------------------------------
# Nested pytree inputs


class Nested(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, inputs: dict[str, Any], extra: tuple[torch.Tensor, list[torch.Tensor]]):
        a = self.a(inputs["a"])  # (b, 4)
        b0, b1 = inputs["b"]
        c = inputs["c"][0].sum(-1)  # (b, 3, 5) -> (b, 3)
        e, (f,) = extra
        y = a + self.b(b0 * b1) + c.mean(-1, keepdim=True) + e
        return {"y": y, "z": [f.view(f.shape[0], -1) * 2, c]}


def _nested_inputs(b: int) -> Call:
    inputs = {"a": _randn(b, 8), "b": [_randn(b, 4, seed=1), _randn(b, 4, seed=2)], "c": (_randn(b, 3, 5),)}
    extra = (_randn(b, 4, seed=3), [_randn(b, 2, 3, seed=4)])
    return (inputs, extra), {}


def _nested_shapes() -> Any:
    batch = Dim("batch", min=2, max=64)
    return {"inputs": {"a": {0: batch}, "b": [{0: batch}, {0: batch}], "c": ({0: batch},)},
            "extra": ({0: batch}, [{0: batch}])}


# ---------------------------------------------------------------------------------------

ZOO: tuple[ZooEntry, ...] = (
    ZooEntry("mlp", lambda: _fresh(MLP), _mlp_inputs, {"b": 4}, _mlp_shapes,
             ({"b": 2}, {"b": 13}, {"b": 64}), ({"b": 65}, {"b": 1}), {"x.size(0)": (2, 64)}, strict=True),
    ZooEntry("convnet", lambda: _fresh(ConvNet), _conv_inputs, {"b": 3, "h": 4, "w": 5}, _conv_shapes,
             ({"b": 2, "h": 2, "w": 2}, {"b": 5, "h": 3, "w": 7}, {"b": 2, "h": 16, "w": 16}),
             ({"b": 33, "h": 2, "w": 2}, {"b": 2, "h": 17, "w": 2}, {"b": 2, "h": 2, "w": 1}),
             {"x.size(0)": (2, 32), "x.size(2)": (8, 64), "x.size(3)": (8, 64)}),
    ZooEntry("transformer", _encoder, _tf_inputs, {"b": 3, "s": 10}, _tf_shapes,
             ({"b": 2, "s": 2}, {"b": 5, "s": 37}, {"b": 16, "s": 128}), ({"b": 2, "s": 129}, {"b": 17, "s": 4}),
             {"src.size(0)": (2, 16), "src.size(1)": (2, 128)}, strict=True),
    ZooEntry("transformer_mask", EncoderWithMask, _tf_mask_inputs, {"b": 3, "s": 10}, _tf_mask_shapes,
             ({"b": 2, "s": 2}, {"b": 5, "s": 37}, {"b": 16, "s": 128}), ({"b": 17, "s": 4}, {"b": 3, "s": 1}),
             {"x.size(0)": (2, 16), "x.size(1)": (2, 128), "mask.size(0)": (2, 16), "mask.size(1)": (2, 128)},
             tied=(("x.size(0)", "mask.size(0)"), ("x.size(1)", "mask.size(1)")), strict=True),
    ZooEntry("kv_decoder", lambda: _fresh(KVDecoder), _kv_inputs, {"b": 2, "t": 3, "p": 5}, _kv_shapes,
             ({"b": 2, "t": 2, "p": 2}, {"b": 3, "t": 7, "p": 41}, {"b": 8, "t": 16, "p": 256}),
             ({"b": 2, "t": 2, "p": 257}, {"b": 9, "t": 2, "p": 2}, {"b": 2, "t": 17, "p": 2}),
             {"x.size(0)": (2, 8), "x.size(1)": (2, 16), "past_k.size(0)": (2, 8), "past_k.size(2)": (2, 256),
              "past_v.size(0)": (2, 8), "past_v.size(2)": (2, 256)},
             tied=(("x.size(0)", "past_k.size(0)", "past_v.size(0)"), ("past_k.size(2)", "past_v.size(2)"))),
    ZooEntry("vit_patch", lambda: _fresh(PatchEmbed), _vit_inputs, {"b": 2, "h": 3, "w": 2}, _vit_shapes,
             ({"b": 2, "h": 2, "w": 2}, {"b": 3, "h": 2, "w": 5}, {"b": 2, "h": 32, "w": 4}, {"b": 8, "h": 7, "w": 32},
              {"b": 2, "h": 1, "w": 3}, {"b": 2, "h": 3, "w": 1}, {"b": 2, "h": 1, "w": 1}),
             ({"b": 2, "h": 33, "w": 2}, {"b": 2, "h": 3, "w": 33}),
             {"img.size(0)": (2, 8), "img.size(2)": (16, 512), "img.size(3)": (16, 512)},
             notes="_h, _w are declared min=1; torch traces them >= 2 (its 0/1 specialization) and records "
                   "(h // 16) * (w // 16) != h // 16 for the flatten, a guard over input dims that the program "
                   "drops once the view/reshape site table relieves the floor: 16-pixel sides run"),
    ZooEntry("nested", lambda: _fresh(Nested), _nested_inputs, {"b": 5}, _nested_shapes,
             ({"b": 2}, {"b": 9}, {"b": 64}), ({"b": 65}, {"b": 1}),
             {"inputs['a'].size(0)": (2, 64), "inputs['b'][0].size(0)": (2, 64),
              "inputs['b'][1].size(0)": (2, 64), "inputs['c'][0].size(0)": (2, 64),
              "extra[0].size(0)": (2, 64), "extra[1][0].size(0)": (2, 64)},
             tied=(("inputs['a'].size(0)", "inputs['b'][0].size(0)", "inputs['b'][1].size(0)",
                    "inputs['c'][0].size(0)", "extra[0].size(0)", "extra[1][0].size(0)"),), strict=True),
)


def entry(name: str) -> ZooEntry:
    return next(e for e in ZOO if e.name == name)
