"""Common layers with a dynamic batch (and sequence, and image size): symshape's program runs every
size that eager and torch's own program run, and runs it like eager (issue 34).

A user found that the README's own TinyEncoder refused batch 1 on torch 2.15 while 2.13 and 2.14.1
admitted it: symshape's 0/1 rules (``export/tracing/sites.py``, tables keyed by the text of
torch's source lines) matched torch 2.13's lines only. This table guards that whole class of
regression on every release CI runs (``.ci/run`` runs ``tests/e2e`` on 2.13.0, 2.14.1 and 2.15.0).

Each row is a small layer (d_model 16, 2 heads, ...) with example inputs and a ``torch.export.Dim``
spec. Each is exported once by ``torch.export.export`` and once by ``export.export``; then, in the
same run and side by side at each size of the row's grid (every dynamic dim at 1 and 2, and
larger), the oracle is:

* eager: does the model run, and its output;
* torch's program (``ep.module()``): does it run, and does it agree with eager;
* symshape's program (``ep.module()``): does it run, and does it agree with eager.

Asserted per row: no size that eager and torch's program run (with eager's result) is refused by
symshape's program, nor by symshape's export (when torch's export succeeds); every size
symshape's program runs equals eager (never silently wrong); the grid holds the size-1 and
size-2 calls, and eager runs the size-1 ones. A size torch's program runs wrongly (its 0/1
specialization, unchecked) may be refused: that is the point of symshape's lower bounds.

``python tests/e2e/layers/test_common_layers.py`` prints the whole table for the torch installed.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
import torch
import torch.nn.functional as F
from torch.export import Dim

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import export  # noqa: E402


def _readme_model() -> type[torch.nn.Module]:
    """The README's TinyEncoder, from examples/demo.py (not a package: loaded from its file)."""
    spec = importlib.util.spec_from_file_location("symshape_examples_demo", ROOT / "examples" / "demo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model: type[torch.nn.Module] = module.TinyEncoder
    return model


TinyEncoder = _readme_model()

D = 16  # d_model of every layer
Size = tuple[tuple[str, int], ...]
"""One call's sizes, by the row's dim names: ``(("batch", 1), ("seq", 5))``."""


# ---------------------------------------------------------------------------------------------
# The layers (each forward a plain function of its inputs; eval mode, no dropout)


class SelfAttention(torch.nn.Module):
    def __init__(self, need_weights: bool = False) -> None:
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(D, 2, batch_first=True)
        self.need_weights = need_weights

    def forward(self, x: torch.Tensor) -> Any:
        out, weights = self.mha(x, x, x, need_weights=self.need_weights)
        return (out, weights) if self.need_weights else out


class MaskedSelfAttention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(D, 2, batch_first=True)

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor) -> torch.Tensor:
        return self.mha(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)[0]


class Recurrent(torch.nn.Module):
    """A batch-first GRU or LSTM, returning the outputs and the last hidden state(s)."""

    def __init__(self, cell: Callable[..., torch.nn.Module], **kwargs: Any) -> None:
        super().__init__()
        self.rnn = cell(D, D, batch_first=True, **kwargs)

    def forward(self, x: torch.Tensor) -> Any:
        return self.rnn(x)


class SplitHeads(torch.nn.Module):
    """Attention written out: ``view(b, s, h, d // h)`` to split heads, ``reshape(b, s, d)`` back."""

    def __init__(self, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(D, 3 * D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        weights = (q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5).softmax(-1)
        return (weights @ v).transpose(1, 2).reshape(b, s, d)


class FlattenUnflatten(torch.nn.Module):
    """``flatten(2)`` / ``unflatten``, ``flatten(0, 1)`` merging batch and seq, ``view`` back."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (b, s, 4, 4)
        b, s = x.shape[:2]
        y = self.proj(x.flatten(2))  # (b, s, 16)
        z = self.proj(y.flatten(0, 1)).view(b, s, D)  # (b * s, 16) -> (b, s, 16)
        return (y + z).unflatten(2, (4, 4))


class ReshapeBatch(torch.nn.Module):
    """``reshape(b, -1)`` before a classifier, and ``reshape(-1, d)`` of a dynamic sequence back to ``(b, -1)``."""

    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Linear(4 * 4 * 4, 8)
        self.proj = torch.nn.Linear(D, 8)

    def forward(self, image: torch.Tensor, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b = image.shape[0]
        logits = self.head(image.reshape(b, -1))  # (b, 4, 4, 4) -> (b, 64)
        per_token = self.proj(tokens.reshape(-1, D)).reshape(b, -1)  # (b * s, 8) -> (b, 8 * s)
        return logits, per_token


class ReshapeOwnBatch(torch.nn.Module):
    """The same reshapes, each input's batch read from itself."""

    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Linear(4 * 4 * 4, 8)
        self.proj = torch.nn.Linear(D, 8)

    def forward(self, image: torch.Tensor, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.head(image.reshape(image.shape[0], -1))
        return logits, self.proj(tokens.reshape(-1, D)).reshape(tokens.shape[0], -1)


class Gather(torch.nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, index)


class IndexSelect(torch.nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return x.index_select(1, index) * 2


class Interpolate(torch.nn.Module):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.kwargs = kwargs
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(F.interpolate(x, **self.kwargs))


class EmbedNormLinear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(50, D)
        self.norm = torch.nn.LayerNorm(D)
        self.head = torch.nn.Linear(D, 8)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.embed(ids)))


def _conv_bn(strided: bool) -> torch.nn.Module:
    layers: list[torch.nn.Module] = [torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU()]
    if strided:
        layers += [torch.nn.Conv2d(8, 8, 3, stride=2, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers)
    for m in model.modules():  # running statistics that are not the identity
        if isinstance(m, torch.nn.BatchNorm2d):
            assert m.running_mean is not None and m.running_var is not None
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return model


# ---------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True)
class Row:
    """One layer: its model, its inputs at a size, its spec (fresh ``Dim``s), its grid."""

    name: str
    build: Callable[[], torch.nn.Module]
    inputs: Callable[[dict[str, int]], tuple[Any, ...]]
    spec: Callable[[], Any]
    example: dict[str, int]
    grid: Grid
    tolerance: tuple[float, float] = (1e-5, 1e-4)  # atol, rtol

    def sizes(self) -> list[Size]:
        names = list(self.grid)
        return [tuple(zip(names, values)) for values in itertools.product(*self.grid.values())]


Grid = dict[str, tuple[int, ...]]
"""Each dim's sizes; a call per point of their product."""

BATCH: tuple[int, ...] = (1, 2, 3, 8)
SEQ: tuple[int, ...] = (1, 2, 5, 16)


def _x(z: dict[str, int]) -> tuple[torch.Tensor]:
    return (torch.randn(z["batch"], z["seq"], D),)


def _batch_seq() -> dict[str, Any]:
    return {"x": {0: Dim("batch"), 1: Dim("seq")}}


def _batch() -> dict[str, Any]:
    return {"x": {0: Dim("batch")}}


def _masked(z: dict[str, int]) -> tuple[torch.Tensor, torch.Tensor]:
    mask = torch.rand(z["batch"], z["seq"]) < 0.3
    mask[:, 0] = False  # every row keeps a key
    return torch.randn(z["batch"], z["seq"], D), mask


def _masked_spec() -> dict[str, Any]:
    batch, seq = Dim("batch"), Dim("seq")
    return {"x": {0: batch, 1: seq}, "key_padding_mask": {0: batch, 1: seq}}


def _image(z: dict[str, int]) -> tuple[torch.Tensor]:
    return (torch.randn(z["batch"], 3, z.get("h", 16), z.get("w", 16)),)


def _interpolate_spec() -> dict[str, Any]:
    return {"x": {0: Dim("batch"), 2: Dim("h", max=64), 3: Dim("w", max=64)}}


def _image_spec(hw: bool) -> Callable[[], dict[str, Any]]:
    def spec() -> dict[str, Any]:
        dims = {0: Dim("batch")}
        if hw:
            dims |= {2: Dim("h", max=64), 3: Dim("w", max=64)}
        return {"input": dims}  # nn.Sequential's argument

    return spec


def _reshape_inputs(z: dict[str, int]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(z["batch"], 4, 4, 4), torch.randn(z["batch"], z["seq"], D)


def _reshape_spec() -> dict[str, Any]:
    batch = Dim("batch")
    return {"image": {0: batch}, "tokens": {0: batch, 1: Dim("seq")}}


def _gather_inputs(z: dict[str, int]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(z["batch"], z["seq"], D), torch.randint(0, z["seq"], (z["batch"], z["k"], D))


def _gather_spec() -> dict[str, Any]:
    batch = Dim("batch")
    return {"x": {0: batch, 1: Dim("seq")}, "index": {0: batch, 1: Dim("k")}}


def _index_select_inputs(z: dict[str, int]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(z["batch"], z["seq"], D), torch.randint(0, z["seq"], (z["k"],))


def _index_select_spec() -> dict[str, Any]:
    return {"x": {0: Dim("batch"), 1: Dim("seq")}, "index": {0: Dim("k")}}


def _readme_inputs(z: dict[str, int]) -> tuple[torch.Tensor, torch.Tensor]:
    s = 4 * z["_seq"]
    return torch.randn(z["batch"], s, D), torch.ones(z["batch"], s)


def _readme_spec() -> dict[str, Any]:
    """The fixed spec the README prints (``err.fixes.apply(spec)``)."""
    batch, _seq = Dim("batch", min=1), Dim("_seq", min=1, max=32)
    return {"tokens": {0: batch, 1: 4 * _seq}, "mask": {0: batch, 1: 4 * _seq}}


LOOSE = (1e-4, 1e-4)  # attention and recurrences: fused and unfused kernels agree to ~1e-6

HW: Grid = {"batch": (1, 2, 8), "h": (1, 2, 5, 16), "w": (1, 2, 7)}
TOKENS: Grid = {"batch": BATCH, "seq": SEQ}
BATCH_ONLY: Grid = {"batch": BATCH, "seq": (8,)}  # a recurrence over a static sequence

ROWS: tuple[Row, ...] = (
    Row("mha self-attention", lambda: SelfAttention(), _x, _batch_seq, {"batch": 2, "seq": 8}, TOKENS, LOOSE),
    Row("mha self-attention, weights", lambda: SelfAttention(need_weights=True), _x, _batch_seq,
        {"batch": 2, "seq": 8}, TOKENS, LOOSE),
    Row("mha key_padding_mask", MaskedSelfAttention, _masked, _masked_spec, {"batch": 2, "seq": 8}, TOKENS, LOOSE),
    Row("transformer encoder layer",
        lambda: torch.nn.TransformerEncoderLayer(D, 2, dim_feedforward=32, dropout=0.0, batch_first=True),
        lambda z: (torch.randn(z["batch"], z["seq"], D),), lambda: {"src": {0: Dim("batch"), 1: Dim("seq")}},
        {"batch": 2, "seq": 8}, TOKENS, LOOSE),
    Row("conv bn relu, batch", lambda: _conv_bn(strided=False), _image, _image_spec(hw=False),
        {"batch": 2}, {"batch": BATCH}),
    Row("conv bn relu, batch h w", lambda: _conv_bn(strided=True), _image, _image_spec(hw=True),
        {"batch": 2, "h": 16, "w": 12}, HW),
    Row("gru, batch", lambda: Recurrent(torch.nn.GRU), _x, _batch, {"batch": 2, "seq": 8}, BATCH_ONLY, LOOSE),
    Row("lstm, batch", lambda: Recurrent(torch.nn.LSTM), _x, _batch, {"batch": 2, "seq": 8}, BATCH_ONLY, LOOSE),
    Row("lstm 2 layers, batch", lambda: Recurrent(torch.nn.LSTM, num_layers=2), _x, _batch, {"batch": 2, "seq": 8},
        BATCH_ONLY, LOOSE),
    Row("gru", lambda: Recurrent(torch.nn.GRU), _x, _batch_seq, {"batch": 2, "seq": 8}, TOKENS, LOOSE),
    Row("gru bidirectional 2 layers", lambda: Recurrent(torch.nn.GRU, num_layers=2, bidirectional=True), _x,
        _batch_seq, {"batch": 2, "seq": 8}, TOKENS, LOOSE),
    Row("lstm", lambda: Recurrent(torch.nn.LSTM), _x, _batch_seq, {"batch": 2, "seq": 8}, TOKENS, LOOSE),
    Row("lstm 2 layers", lambda: Recurrent(torch.nn.LSTM, num_layers=2), _x, _batch_seq,
        {"batch": 2, "seq": 8}, TOKENS, LOOSE),
    Row("view split heads", SplitHeads, _x, _batch_seq, {"batch": 2, "seq": 8}, TOKENS, LOOSE),
    Row("flatten unflatten", FlattenUnflatten, lambda z: (torch.randn(z["batch"], z["seq"], 4, 4),), _batch_seq,
        {"batch": 2, "seq": 8}, TOKENS),
    Row("reshape(b, -1)", ReshapeOwnBatch, _reshape_inputs, _reshape_spec, {"batch": 2, "seq": 8}, TOKENS),
    Row("reshape(b, -1), b of another input", ReshapeBatch, _reshape_inputs, _reshape_spec, {"batch": 2, "seq": 8},
        TOKENS),
    Row("gather", Gather, _gather_inputs, _gather_spec, {"batch": 2, "seq": 8, "k": 3},
        {"batch": (1, 2, 8), "seq": (1, 2, 5, 16), "k": (1, 2, 7)}),
    Row("index_select", IndexSelect, _index_select_inputs, _index_select_spec, {"batch": 2, "seq": 8, "k": 3},
        {"batch": (1, 2, 8), "seq": (1, 2, 5, 16), "k": (1, 2, 7)}),
    Row("interpolate scale_factor", lambda: Interpolate(scale_factor=2, mode="nearest"), _image, _interpolate_spec,
        {"batch": 2, "h": 16, "w": 12}, HW),
    Row("interpolate size bilinear", lambda: Interpolate(size=(8, 8), mode="bilinear", align_corners=False), _image,
        _interpolate_spec, {"batch": 2, "h": 16, "w": 12}, HW),
    Row("embedding layernorm linear", EmbedNormLinear, lambda z: (torch.randint(0, 50, (z["batch"], z["seq"])),),
        lambda: {"ids": {0: Dim("batch"), 1: Dim("seq")}}, {"batch": 2, "seq": 8}, TOKENS),
    Row("readme TinyEncoder", TinyEncoder, _readme_inputs, _readme_spec, {"batch": 2, "_seq": 8},
        {"batch": BATCH, "_seq": (1, 2, 5, 32)}),
    Row("readme TinyEncoder, batch-1 example", TinyEncoder, _readme_inputs, _readme_spec, {"batch": 1, "_seq": 8},
        {"batch": BATCH, "_seq": (1, 2, 5, 32)}),
    Row("conv bn relu, batch-1 example", lambda: _conv_bn(strided=False), _image, _image_spec(hw=False),
        {"batch": 1}, {"batch": BATCH}),
)


# ---------------------------------------------------------------------------------------------
# One run per row: both exports, then each size through eager and both programs


@dataclass(frozen=True)
class Outcome:
    """A call's result: the output, or why it did not run (``Type: first line``)."""

    output: Any = None
    error: str | None = None

    @property
    def ran(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Call:
    size: Size
    eager: Outcome
    torch: Outcome
    symshape: Outcome
    torch_agrees: bool  # torch's program ran and gave eager's result
    symshape_mismatch: str | None  # symshape's program ran and differs from eager (or eager failed): how


@dataclass(frozen=True)
class Result:
    row: Row
    torch_export: str | None  # torch.export's failure, if it failed
    symshape_export: str | None  # export.export's refusal (an ExportError), if it refused
    symshape_crash: str | None  # anything else export.export raised: a defect
    symshape_warnings: tuple[str, ...]
    calls: tuple[Call, ...]
    seconds: float


def _why(e: BaseException) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    text = " / ".join(lines[:6])
    return f"{type(e).__name__}: {text[:600]}"


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> Outcome:
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            return Outcome(output=fn(*args))
    except Exception as e:  # the oracle records any failure of a call: eager's, torch's or symshape's
        return Outcome(error=_why(e))


def _differs(want: Any, got: Any, tolerance: tuple[float, float]) -> str | None:
    atol, rtol = tolerance
    try:
        torch.testing.assert_close(got, want, atol=atol, rtol=rtol, equal_nan=True)
    except AssertionError as e:
        return _why(e)
    return None


def _label(size: Size) -> str:
    return ",".join(f"{k}={v}" for k, v in size)


@functools.cache
def run(name: str) -> Result:
    row = next(r for r in ROWS if r.name == name)
    start = time.perf_counter()
    torch.manual_seed(0)
    model = row.build().eval()
    args = row.inputs(row.example)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch_module: Callable[..., Any] | None = torch.export.export(
                model, args, dynamic_shapes=row.spec()).module()
        torch_export = None
    except Exception as e:  # torch's export failing is a recorded outcome of the row, not an error here
        torch_module, torch_export = None, _why(e)
    symshape_module: Callable[..., Any] | None = None
    symshape_export = symshape_crash = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", export.SymshapeWarning)
        try:
            symshape_module = export.export(model, args, dynamic_shapes=row.spec()).module()
        except export.ExportError as e:
            symshape_export = _why(e)
        except Exception as e:  # not an ExportError: a crash, reported as a defect by the tests
            symshape_crash = _why(e)
    said = tuple(str(w.message).splitlines()[0] for w in caught if issubclass(w.category, export.SymshapeWarning))
    calls = []
    for size in row.sizes():
        torch.manual_seed(1)
        call_args = row.inputs(dict(size))
        eager = _call(model, call_args)
        theirs = _call(torch_module, call_args) if torch_module else Outcome(error=f"no program: {torch_export}")
        ours = (_call(symshape_module, call_args) if symshape_module
                else Outcome(error=f"no program: {symshape_export or symshape_crash}"))
        torch_agrees = eager.ran and theirs.ran and _differs(eager.output, theirs.output, row.tolerance) is None
        mismatch = None
        if ours.ran:
            mismatch = (_differs(eager.output, ours.output, row.tolerance) if eager.ran
                        else f"eager fails ({eager.error}) but symshape's program runs")
        calls.append(Call(size, eager, theirs, ours, torch_agrees, mismatch))
    return Result(row, torch_export, symshape_export, symshape_crash, said, tuple(calls),
                  time.perf_counter() - start)


# ---------------------------------------------------------------------------------------------
# The oracle

KNOWN_REFUSALS: dict[str, str] = {}
"""Rows whose refusals are known defects of files owned elsewhere: xfail(strict) on the refusal test only."""


def _id(name: str) -> str:
    return name.replace(", -1)", ",-1)").replace(", ", "-").replace(" ", "-")


ROW_PARAMS = [pytest.param(r.name, id=_id(r.name)) for r in ROWS]
REFUSAL_PARAMS = [
    pytest.param(r.name, id=_id(r.name),
                 marks=[pytest.mark.xfail(strict=True, reason=KNOWN_REFUSALS[r.name])] if r.name in KNOWN_REFUSALS else [])
    for r in ROWS
]


@pytest.mark.parametrize("name", REFUSAL_PARAMS)
def test_symshape_runs_every_size_eager_and_torchs_program_run(name: str) -> None:
    result = run(name)
    assert result.symshape_crash is None, f"{name}: export.export crashed: {result.symshape_crash}"
    refused = [c for c in result.calls if c.torch_agrees and not c.symshape.ran]
    assert not refused, f"{name}: symshape refuses {len(refused)} of {len(result.calls)} sizes that eager and " \
        f"torch's program run (torch {torch.__version__}):\n" + "\n".join(
            f"  ({name}, {_label(c.size)}): {c.symshape.error}" for c in refused)


@pytest.mark.parametrize("name", ROW_PARAMS)
def test_symshapes_program_is_never_silently_wrong(name: str) -> None:
    result = run(name)
    wrong = [c for c in result.calls if c.symshape_mismatch is not None]
    assert not wrong, f"{name}: symshape's program runs {len(wrong)} sizes unlike eager:\n" + "\n".join(
        f"  ({name}, {_label(c.size)}): {c.symshape_mismatch}" for c in wrong)


@pytest.mark.parametrize("name", ROW_PARAMS)
def test_the_grid_holds_size_one_and_two_and_eager_runs_size_one(name: str) -> None:
    row, result = next(r for r in ROWS if r.name == name), run(name)
    for dim, values in row.grid.items():
        if len(values) == 1:  # a static dim
            continue
        assert 1 in values and 2 in values and max(values) > 2, (name, dim, values)
    ones = [c for c in result.calls if 1 in dict(c.size).values()]
    assert ones, name
    failing = [c for c in ones if not c.eager.ran]
    assert not failing, f"{name}: eager fails at size 1, the row checks nothing there: " + "; ".join(
        f"{_label(c.size)}: {c.eager.error}" for c in failing)


def test_the_table_covers_the_common_layers() -> None:
    names = " ".join(r.name for r in ROWS)
    for layer in ("mha", "key_padding_mask", "transformer encoder", "conv bn", "gru", "lstm", "split heads",
                  "flatten", "reshape(b, -1)", "gather", "index_select", "interpolate scale_factor",
                  "interpolate size", "embedding layernorm", "readme TinyEncoder"):
        assert layer in names, layer


# ---------------------------------------------------------------------------------------------
# The table, printed (python tests/e2e/layers/test_common_layers.py)


def report(result: Result) -> str:
    calls = result.calls
    eager = sum(c.eager.ran for c in calls)
    theirs = sum(c.torch.ran for c in calls)
    agrees = sum(c.torch_agrees for c in calls)
    ours = sum(c.symshape.ran for c in calls)
    refused = [c for c in calls if c.torch_agrees and not c.symshape.ran]
    guarded = [c for c in calls if c.torch.ran and not c.torch_agrees and not c.symshape.ran]
    wrong = [c for c in calls if c.symshape_mismatch]
    lines = [f"{result.row.name}: {len(calls)} sizes, eager runs {eager}, torch's program {theirs} "
             f"({agrees} like eager), symshape's {ours}; refused vs torch {len(refused)}, refused where torch's is "
             f"wrong {len(guarded)}, wrong {len(wrong)} ({result.seconds:.1f} s)"]
    if result.torch_export:
        lines.append(f"    torch.export failed: {result.torch_export}")
    if result.symshape_export or result.symshape_crash:
        lines.append(f"    export.export refused: {result.symshape_export or result.symshape_crash}")
    lines += [f"    warning: {w}" for w in result.symshape_warnings]
    lines += [f"    refused ({_label(c.size)}): {c.symshape.error}" for c in refused[:3]]
    lines += [f"    torch's wrong, refused ({_label(c.size)}): {c.symshape.error}" for c in guarded[:2]]
    lines += [f"    wrong ({_label(c.size)}): {c.symshape_mismatch}" for c in wrong[:3]]
    return "\n".join(lines)


if __name__ == "__main__":
    t0 = time.perf_counter()
    wanted = sys.argv[1:]
    for r in ROWS:
        if not wanted or any(w in r.name for w in wanted):
            print(report(run(r.name)), flush=True)
    done = [run(r.name) for r in ROWS if not wanted or any(w in r.name for w in wanted)]
    calls = [c for res in done for c in res.calls]
    print(f"torch {torch.__version__}: {len(done)} rows, {len(calls)} sizes; eager runs {sum(c.eager.ran for c in calls)}, "
          f"torch's program {sum(c.torch.ran for c in calls)}, symshape's {sum(c.symshape.ran for c in calls)}; "
          f"refused vs torch {sum(c.torch_agrees and not c.symshape.ran for c in calls)}, "
          f"wrong {sum(c.symshape_mismatch is not None for c in calls)}; {time.perf_counter() - t0:.1f} s")
