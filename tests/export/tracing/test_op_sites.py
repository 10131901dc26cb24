"""The op, torch-function and conditional tables of :mod:`export.tracing.sites`: every entry is hit
by a real export, names something that exists, and a model where the decision matters
still refuses size 1 (a wrong entry would let it through)."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest
import torch
from torch.export import Dim

transformers = pytest.importorskip("transformers")
from transformers.integrations import sdpa_attention  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from benchmarks.hf_zoo import MODELS, example_sizes, spec  # noqa: E402

import export  # noqa: E402
from export.api import traced  # noqa: E402
from export.tracing.sites import CONDITIONAL_SITES, NEUTRAL_FUNCTIONS, NEUTRAL_OPS, Site, covered, justification  # noqa: E402


class HFAttention(torch.nn.Module):
    """transformers' ``sdpa_attention_forward`` on given heads; ``groups`` > 1 takes its
    grouped-query path (``q_length == 1 and not is_torchdynamo_compiling()``)."""

    def __init__(self, groups: int = 1) -> None:
        super().__init__()
        self.num_key_value_groups = groups

    def forward(self, q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return sdpa_attention_forward_(self, q, k, k, mask, is_causal=True)[0]


sdpa_attention_forward_ = sdpa_attention.sdpa_attention_forward
B, S = Dim("b"), Dim("s")
GQA_ARGS = (torch.randn(2, 4, 5, 8), torch.randn(2, 2, 5, 8), torch.zeros(2, 1, 5, 5))
GQA_SPEC = {"q": {0: B, 2: S}, "k": {0: B, 2: S}, "mask": {0: B, 2: S, 3: S}}


def _gpt2() -> export.SymshapeProgram:
    m = MODELS["gpt2"]
    args, kwargs = m.inputs(example_sizes(m, "shared"))
    return export.export(m.build(), args, kwargs, dynamic_shapes=spec(m, "shared"))


@pytest.fixture(scope="module")
def programs() -> dict[str, export.SymshapeProgram]:
    return {"gpt2": _gpt2(), "gqa": export.export(HFAttention(2), GQA_ARGS, dynamic_shapes=GQA_SPEC),
            "pool": export.export(PermutedPool(), (torch.randn(2, 8, 6, 6),), dynamic_shapes={"x": {0: B}}),
            "pool1d": export.export(PermutedPool1d(), (torch.randn(2, 6, 8),), dynamic_shapes={"x": {0: B}})}


class PermutedPool(torch.nn.Module):
    """ConvNeXt's head: a channels-last layer norm, permuted back, then a global average pool
    (timm convnext): the pool's meta function asks ``b > 1`` to pick a memory format."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.layer_norm(x.permute(0, 2, 3, 1), (8,)).permute(0, 3, 1, 2)
        return torch.nn.functional.adaptive_avg_pool2d(y, 1)


class PermutedPool1d(torch.nn.Module):
    """Swin's pooler (transformers): a layer norm over (b, s, c), transposed to (b, c, s), then
    a 1-d global average pool, whose meta function asks ``b > 1`` to pick a memory format."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.layer_norm(x, (8,)).transpose(1, 2)
        return torch.nn.functional.adaptive_avg_pool1d(y, 1).flatten(1)


# entry -> the program whose export asks a floor-needing decision there
HITS = {
    "recorded op aten.reshape.default": "gpt2",
    "torch function torch._C.TensorBase.contiguous": "gqa",
    "attention_mask is not None": "gpt2",
    "is_torchdynamo_compiling() is True": "gqa",
    "recorded op aten.adaptive_avg_pool2d.default": "pool",
    "recorded op aten.adaptive_avg_pool1d.default": "pool1d",
}


# entry -> a trace whose 0/1 question on a derived size is asked there (Trace.neutral)
NEUTRAL_HITS = {"recorded op aten.linear.default"}


class GroupsThenLinear(torch.nn.Module):
    """``view(b, -1, 4)`` then a Linear on the 3-D result: linear's kernel asks ``n // 4 == 1``."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x.view(x.shape[0], -1, 4))


def test_every_entry_has_a_hit() -> None:
    details = {"recorded op " + k for k in NEUTRAL_OPS} | {"torch function " + k for k in NEUTRAL_FUNCTIONS} | \
        {c.text for c in CONDITIONAL_SITES.values()}
    assert details == set(HITS) | NEUTRAL_HITS
    whys = [*NEUTRAL_OPS.values(), *NEUTRAL_FUNCTIONS.values(), *(c.why for c in CONDITIONAL_SITES.values())]
    assert all(len(why) > 20 and "\n" not in why for why in whys)


@pytest.mark.parametrize("detail", sorted(HITS))
def test_entry_is_hit_by_a_real_export(detail: str, programs: dict) -> None:
    ep = programs[HITS[detail]]
    assert any(f"[{detail}]" in e.site for e in ep.symshape.zero_one if e.kind == "site")
    assert all(e.kind == "site" for e in ep.symshape.zero_one)  # no re-trace needed
    assert ep.symshape.stats["boundary_retraces"] == 0
    assert all(lo == 1 for lo, _ in ep.symshape.ranges.values())


def test_linear_entry_is_hit_by_a_derived_size_and_its_smallest_multiple_runs() -> None:
    model, x = GroupsThenLinear(), torch.randn(2, 8)
    _, trace = traced(model, (x,), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("n")}})
    sites = {str(site) for sites in trace.neutral.values() for site in sites}
    assert any("[recorded op aten.linear.default]" in site for site in sites), sites
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, (x,), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("n")}})
    assert "must not be 1" not in str(info.value)
    ep = export.export(model, (x,), dynamic_shapes=info.value.fixes.apply({"x": {0: Dim("b"), 1: Dim("n")}}))
    for b, n in [(1, 4), (3, 4), (2, 12)]:
        z = torch.randn(b, n)
        assert torch.allclose(ep.module()(z), model(z), atol=1e-6)


def test_entries_name_real_ops_functions_and_lines() -> None:
    for name in NEUTRAL_OPS:
        _, op, overload = name.split(".")
        assert isinstance(getattr(getattr(torch.ops.aten, op), overload), torch._ops.OpOverload)
    assert set(NEUTRAL_FUNCTIONS) == {"torch._C.TensorBase.contiguous"}
    lines = [line.strip() for line in inspect.getsource(sdpa_attention.sdpa_attention_forward).splitlines()]
    for (suffix, function, code) in CONDITIONAL_SITES:
        assert suffix.endswith("sdpa_attention.py") and function == "sdpa_attention_forward" and code in lines


def test_size_1_runs_like_eager_where_the_tables_cover_it(programs: dict) -> None:
    ep, model = programs["gqa"], HFAttention(2)
    for b, s in [(1, 1), (3, 1), (1, 4)]:
        args = (torch.randn(b, 4, s, 8), torch.randn(b, 2, s, 8), torch.zeros(b, 1, s, s))
        assert torch.allclose(ep.module()(*args), model(*args), atol=1e-5)


def test_the_pool_entry_runs_batch_1_like_eager(programs: dict) -> None:
    ep, model = programs["pool"], PermutedPool()
    for b in (1, 3, 5):
        x = torch.randn(b, 8, 6, 6)
        assert torch.allclose(ep.module()(x), model(x), atol=1e-5)


def test_without_a_mask_the_causal_decision_matters_and_size_1_is_refused() -> None:
    ep = export.export(HFAttention(), GQA_ARGS[1:2] * 2, dynamic_shapes={"q": {0: B, 2: S}, "k": {0: B, 2: S}})
    assert ep.symshape.ranges["q.size(2)"] == (2, None)
    kept = [e for e in ep.symshape.zero_one if e.kind == "kept"]
    assert any("is_causal = q_length > 1" in e.site for e in kept)
    assert not any("[attention_mask is not None]" in e.site for e in ep.symshape.zero_one)
    with pytest.raises(RuntimeError, match=r"q.size\(2\) must be >= 2"):
        ep.module()(torch.randn(2, 2, 1, 8), torch.randn(2, 2, 1, 8))


def test_the_compiling_condition_does_not_hold_outside_export() -> None:
    entry = next(c for c in CONDITIONAL_SITES.values() if c.text.startswith("is_torchdynamo_compiling"))
    scope = {"is_torchdynamo_compiling": sdpa_attention.is_torchdynamo_compiling, "sys": sys}
    exec("def probe():\n    return sys._getframe()", scope)  # a frame whose globals hold transformers' check
    assert entry.holds(scope["probe"]()) is False
    scope["is_torchdynamo_compiling"] = lambda: True  # not transformers' own: never trusted
    assert entry.holds(scope["probe"]()) is False


@pytest.mark.parametrize("site", [
    Site("/x/torch/_ops.py", 875, "__call__", "return self._op(*args, **kwargs)", "recorded op aten.squeeze.default"),
    Site("/x/torch/_ops.py", 875, "__call__", "return self._op(*args, **kwargs)", ""),  # not recorded by proxy_call
    Site("/x/torch/_ops.py", 875, "__call__", "return self._op(*args, **kwargs)", "aten.reshape.default"),
    Site("/x/model.py", 3, "__call__", "y = f(x)", "recorded op aten.reshape.default"),
    Site("/x/torch/_export/non_strict_utils.py", 1205, "__torch_function__", "return func(*args, **kwargs)",
         "torch function torch._C.TensorBase.reshape"),
    Site("/x/transformers/integrations/sdpa_attention.py", 148, "sdpa_attention_forward",
         "is_causal = q_length > 1 and attention_mask is None and is_causal", ""),  # the condition did not hold
    Site("/x/transformers/integrations/sdpa_attention.py", 148, "sdpa_attention_forward",
         "is_causal = q_length > 1 and attention_mask is None", "attention_mask is not None"),  # another line
], ids=["unlisted op", "not recorded", "no prefix", "not torch", "unlisted function", "condition false", "changed line"])
def test_what_is_not_covered(site: Site) -> None:
    assert justification(site) is None and not covered([site])


# -- CONTIGUOUS_LINE: a line whose only call is .contiguous() -----------------------------------

@pytest.mark.parametrize("code,listed", [
    (".contiguous()", True),                      # the tail of a chain split over lines (nn.functional)
    ("y = x.contiguous()", True),
    ("return x.contiguous()", True),
    ("x.contiguous()", True),
    ("y = x.view(-1).contiguous()", False),       # view runs on the same line
    ("y = self.proj(x).contiguous()", False),     # a module call on the same line
    ("y = x.contiguous().squeeze()", False),      # squeeze changes a shape at size 1
    ("y = x.contiguous(memory_format=f)", False),
])
def test_the_contiguous_line_rule_lists_only_lines_that_call_nothing_else(code: str, listed: bool) -> None:
    assert (justification(Site("/x/any.py", 3, "forward", code)) is not None) is listed


def test_transformer_encoder_layer_needs_no_boundary_retrace_and_runs_batch_1_like_eager() -> None:
    """``nn.MultiheadAttention``'s packed in-projection ends in ``.contiguous()`` on a line of its
    own, whose contiguity check asks ``b == 1``: covered, so one trace, and the program
    runs batch and sequence 1 as eager does."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True).eval()
    ep = export.export(layer, (torch.randn(3, 5, 16),), dynamic_shapes={"src": {0: B, 1: S}})
    assert ep.symshape.stats["traces"] == 1
    assert any("contiguous() returns its input" in e.why for e in ep.symshape.zero_one)
    assert ep.symshape.ranges["src.size(0)"][0] == 1
    for b, s in [(1, 1), (1, 5), (4, 1), (2, 3)]:
        x = torch.randn(b, s, 16)
        with torch.no_grad():
            torch.testing.assert_close(ep.module()(x), layer(x))


class ContiguousAfterTranspose(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.transpose(0, 1)
        z = y.contiguous()
        return z.view(z.shape[0], -1) * 2


def test_a_user_contiguous_line_is_covered_and_size_1_runs_like_eager() -> None:
    model = ContiguousAfterTranspose()
    ep = export.export(model, (torch.randn(3, 4, 5),), dynamic_shapes={"x": {0: B, 1: S}})
    for b, s in [(1, 1), (1, 4), (3, 1), (2, 2)]:
        x = torch.randn(b, s, 5)
        torch.testing.assert_close(ep.module()(x), model(x))


class ConvThenPool(torch.nn.Module):
    """ConvNeXt's downsampling: a channels-last layer norm, permuted back, then a convolution
    (its fake kernel picks a memory format from the permuted input's strides, asking
    ``b > 1``), then the head of :class:`PermutedPool`."""

    def __init__(self) -> None:
        super().__init__()
        self.down = torch.nn.Conv2d(8, 8, 2, stride=2)
        self.head = PermutedPool()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.layer_norm(x.permute(0, 2, 3, 1), (8,)).permute(0, 3, 1, 2)
        return self.head(self.down(y))


def test_a_conv_memory_format_decision_needs_no_retrace_and_batch_1_runs_like_eager() -> None:
    model = ConvThenPool().eval()
    ep = export.export(model, (torch.randn(2, 8, 12, 12),), dynamic_shapes={"x": {0: B}})
    assert ep.symshape.stats["traces"] == 1
    assert any("_conv_determine_backend_memory_format" in e.site for e in ep.symshape.zero_one)
    assert all(e.kind == "site" for e in ep.symshape.zero_one)
    for b in (1, 3):
        x = torch.randn(b, 8, 12, 12)
        with torch.no_grad():
            torch.testing.assert_close(ep.module()(x), model(x))


@pytest.mark.parametrize("make, shape", [(PermutedPool, (8, 6, 6)), (PermutedPool1d, (6, 8))])
def test_pool_entries_run_batch_1_like_eager(make, shape) -> None:
    model = make()
    ep = export.export(model, (torch.randn(2, *shape),), dynamic_shapes={"x": {0: B}})
    for b in (1, 3):
        x = torch.randn(b, *shape)
        torch.testing.assert_close(ep.module()(x), model(x))
