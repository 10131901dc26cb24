"""The site table: each entry is hit by a real export, names a torch 2.13 source line that
exists, and covers a decision only when every site that asked it is listed."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest
import torch
from torch.export import Dim

from zero_one_models import EqOne, Gram, LinView, Scores  # noqa: E402

from periodic_models import Glu, Groups, UNet1d  # noqa: E402

import export  # noqa: E402
from export.api import traced  # noqa: E402
from export.tracing.sites import (  # noqa: E402
    NEUTRAL_SITES, STRIDE_ORDER_SITES, Site, any_answer, asking_site, covered, justification)

_FUNCTIONS = {
    "_reshape_view_helper_core_alg": torch._refs._reshape_view_helper_core_alg,
    "_collapse_view_helper": torch._prims._collapse_view_helper,
    "_get_output_tensor_from_cache_entry": torch._subclasses.fake_tensor.FakeTensorMode._get_output_tensor_from_cache_entry,
    "check_contiguous_sizes_strides": torch._prims_common.check_contiguous_sizes_strides,
    "_broadcast_shapes": torch._refs._broadcast_shapes,
    "should_expand": torch._refs._maybe_broadcast,  # a closure inside _maybe_broadcast
    "infer_size": torch._subclasses.fake_impls.infer_size,
    "conv": torch._subclasses.fake_impls.conv,
    "_broadcast_in_dim_meta": torch._prims._broadcast_in_dim_meta,
    "is_contiguous": torch._prims_common.is_contiguous,
    "convert": torch._subclasses.fake_impls.conv,  # a closure inside conv
    "are_strides_like_channels_last_or_false": torch._prims_common.are_strides_like_channels_last_or_false,
    "matmul": torch._decomp.decompositions.matmul,
}

# (file suffix, function, line) -> a model whose export asks a floor-needing decision there
HITS = {
    ("torch/_refs/__init__.py", "_reshape_view_helper_core_alg", "if length == a_.shape[idx]:"): "view",
    ("torch/_refs/__init__.py", "_reshape_view_helper_core_alg", "while accum % length != 0:"): "view",
    ("torch/_refs/__init__.py", "_reshape_view_helper_core_alg", "if accum != length:"): "view",
    ("torch/_prims/__init__.py", "_collapse_view_helper", "if shape[idx] != 1:"): "view",
    ("torch/_decomp/decompositions.py", "matmul",
     "tensor1_expanded = tensor1.expand(tensor1_expand_size).reshape("): "gram",
    ("torch/_decomp/decompositions.py", "matmul",
     "tensor2_expanded = tensor2.expand(tensor2_expand_size).reshape("): "scores",
    ("torch/_subclasses/fake_impls.py", "conv", "mem_fmt = torch._C._conv_determine_backend_memory_format("):
        "convpool",
}
# (file suffix, function, line) -> a model whose export asks there whether a derived or
# intermediate size is 0/1, answered with no fact (Trace.neutral, Questions.neutral)
NEUTRAL_HITS = {
    ("torch/_prims_common/__init__.py", "check_contiguous_sizes_strides", "if maybe_guard_or_false(x == 1):"): "groups",
    ("torch/_refs/__init__.py", "_broadcast_shapes", "if guard_or_false(shape[idx] == common_shape[idx]):"): "glu",
    ("torch/_refs/__init__.py", "_broadcast_shapes",
     "if not is_nested_int(shape[idx]) and guard_or_false(shape[idx] == 1):"): "glu",
    ("torch/_refs/__init__.py", "should_expand", "if guard_or_false(sym_and(x == 1, y == 1)):"): "glu",
    ("torch/_refs/__init__.py", "should_expand", "elif guard_or_false(sym_or(x == 1, y == 1)):"): "glu",
    ("torch/_subclasses/fake_impls.py", "infer_size",
     "guard_or_false(sizeA == 1) or guard_or_false(sizeB == 1) or sizeA == sizeB,"): "glu",
    ("torch/_subclasses/fake_impls.py", "infer_size", "expandedSizes[i] = sizeB if guard_or_false(sizeA == 1) else sizeA"):
        "glu",
    ("torch/_subclasses/fake_impls.py", "conv", "conv_backend = torch._C._select_conv_backend("): "conv",
    ("torch/_prims/__init__.py", "_broadcast_in_dim_meta", "if guard_or_false(a.shape[original_idx] == 1):"): "conv",
    ("torch/_prims_common/__init__.py", "is_contiguous", "if maybe_guard_or_false(a.numel() < 2):"): "downup",
    ("torch/_subclasses/fake_impls.py", "convert", "t = t.to(memory_format=mem_fmt)"): "downup",
    ("torch/_prims_common/__init__.py", "are_strides_like_channels_last_or_false",
     "if guard_or_true(strides[d] < min):"): "downup",
    ("torch/_prims_common/__init__.py", "check_contiguous_sizes_strides",
     "if maybe_guard_or_true(y != expected_stride) and maybe_guard_or_true("): "patch",
}


class _NormConvPool(torch.nn.Module):
    """ConvNeXt's downsampling and head: a channels-last norm permuted back, a conv (its fake
    kernel picks a memory format from the permuted strides, asking ``b > 1``), a pool."""

    def __init__(self) -> None:
        super().__init__()
        self.down = torch.nn.Conv2d(8, 8, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.layer_norm(x.permute(0, 2, 3, 1), (8,)).permute(0, 3, 1, 2)
        return torch.nn.functional.adaptive_avg_pool2d(self.down(y), 1)


class _DownUp(torch.nn.Module):
    """x + upsample2x(conv_stride2(x)) (the corpus's down_up_even)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = torch.nn.Conv2d(1, 1, 3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.nn.functional.interpolate(self.down(x), scale_factor=2.0, mode="nearest")


class _Patch(torch.nn.Module):
    """Patchify (conv k4 s4) plus a 16-token table (the corpus's patch_pos_product)."""

    def __init__(self) -> None:
        super().__init__()
        self.patch = torch.nn.Conv2d(3, 8, 4, stride=4)
        self.pos = torch.nn.Parameter(torch.randn(1, 16, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.patch(x).flatten(2).transpose(1, 2) + self.pos


NEUTRAL_MODELS = {
    "groups": (Groups, (torch.randn(2, 16),), {"x": {1: Dim("n")}}),
    "glu": (Glu, (torch.randn(3, 8),), {"x": {1: Dim("c")}}),
    "conv": (lambda: UNet1d(4), (torch.randn(2, 4, 16),), {"x": {2: Dim("L", min=4, max=256)}}),
    "downup": (_DownUp, (torch.randn(1, 1, 8, 8),), {"x": {2: Dim("h"), 3: Dim("w")}}),
    "patch": (_Patch, (torch.randn(2, 3, 16, 16),), {"x": {0: Dim("B"), 2: Dim("H"), 3: Dim("W")}}),
}

MODELS = {
    "view": (LinView, (torch.randn(3, 5, 8),), {"x": {0: Dim("b"), 1: Dim("s")}}),
    "gram": (Gram, (torch.randn(2, 4, 5, 8),), {"q": {0: Dim("b"), 2: Dim("s")}}),
    "scores": (Scores, (torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8)),
               {"q": {0: Dim("b"), 2: Dim("s")}, "k": {0: Dim("b"), 2: Dim("s")}}),
    "convpool": (lambda: _NormConvPool().eval(), (torch.randn(2, 8, 12, 12),), {"x": {0: Dim("b")}}),
}


def test_every_entry_has_a_hit_and_a_justification() -> None:
    assert set(HITS) | set(NEUTRAL_HITS) == set(NEUTRAL_SITES)
    assert all(len(why) > 20 and "\n" not in why for why in NEUTRAL_SITES.values())


@pytest.mark.parametrize("key", sorted(NEUTRAL_SITES), ids=lambda k: f"{k[1]}:{k[2][:20]}")
def test_entry_is_a_line_of_torch_2_13(key: tuple[str, str, str]) -> None:
    _, function, code = key
    lines = [line.strip() for line in inspect.getsource(_FUNCTIONS[function]).splitlines()]
    assert code in lines


@pytest.fixture(scope="module")
def programs() -> dict[str, export.SymshapeProgram]:
    return {name: export.export(m(), args, dynamic_shapes=ds) for name, (m, args, ds) in MODELS.items()}


@pytest.mark.parametrize("key", sorted(HITS), ids=lambda k: f"{k[1]}:{k[2][:20]}")
def test_entry_is_hit_by_a_real_export(key: tuple[str, str, str], programs: dict) -> None:
    ep = programs[HITS[key]]
    sites = [e.site for e in ep.symshape.zero_one if e.kind == "site"]
    assert any(key[0] in s and key[2] in s for s in sites), sites
    assert all(e.kind == "site" for e in ep.symshape.zero_one)
    assert all(lo == 1 for lo, _ in ep.symshape.ranges.values())


@pytest.mark.parametrize("key", sorted(NEUTRAL_HITS), ids=lambda k: f"{k[1]}:{k[2][:20]}")
def test_neutral_entry_is_hit_by_a_real_trace(key: tuple[str, str, str]) -> None:
    make, args, ds = NEUTRAL_MODELS[NEUTRAL_HITS[key]]
    _, trace = traced(make(), args, dynamic_shapes=ds)
    sites = [s for sites in trace.neutral.values() for s in sites]
    assert any(s.file.replace("\\", "/").endswith(key[0]) and s.function == key[1] and s.code == key[2]
               for s in sites), sites


def test_a_changed_line_is_not_covered() -> None:
    suffix, function, code = next(iter(NEUTRAL_SITES))
    site = Site("/x/site-packages/" + suffix, 1, function, code)
    assert justification(site) is not None
    assert justification(Site(site.file, 1, function, code + "  # 2.14")) is None
    assert justification(Site("/x/site-packages/torch/other.py", 1, function, code)) is None
    assert justification(Site(site.file, 1, "other_function", code)) is None


def test_covered_needs_every_site() -> None:
    neutral = Site("/x/torch/_prims/__init__.py", 1483, "_collapse_view_helper", "if shape[idx] != 1:")
    user = Site("model.py", 3, "forward", "if x.shape[0] != 1:")
    assert covered([neutral]) and not covered([neutral, user]) and not covered([])


def test_user_branch_is_not_covered() -> None:
    ep = export.export(EqOne(), (torch.randn(3, 2),), dynamic_shapes={"x": {0: Dim("b")}})
    (record,) = ep.symshape.zero_one
    assert record.kind == "kept" and "if x.shape[0] == 1:" in record.site
    assert "boundary graph differs" in record.why


def test_asking_site_skips_torch_check_and_says_so() -> None:
    seen = []

    def probe() -> bool:
        seen.append(asking_site(sys._getframe(1)))
        return True

    probe()
    (raw, via_check), = seen
    assert raw[2] == "test_asking_site_skips_torch_check_and_says_so" and not via_check


@pytest.mark.parametrize("name", ["gram", "scores"])
def test_matmul_fold_at_size_1_runs_like_eager(name: str, programs: dict) -> None:
    make, args, _ = MODELS[name]
    model, ep = make(), programs[name]
    assert ep.symshape.stats["boundary_retraces"] == 0
    for b, s in [(1, 1), (3, 1), (1, 4)]:
        small = tuple(torch.randn(b, a.shape[1], s, a.shape[3]) for a in args)
        assert torch.allclose(ep.module()(*small), model(*small), atol=1e-5)


# -- STRIDE_ORDER_SITES: value-neutral whatever the answer --------------------------------------

class _ChannelsLastConv(torch.nn.Module):
    """A channels-last image through a stride-2 conv, batch norm and SiLU: the fake kernels sort
    the downsampled tensor's strides, comparing ``W' * C < H' * W' * C`` (``H' > 1``)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x.contiguous(memory_format=torch.channels_last))
        return torch.nn.functional.silu(self.bn(y))


_HW = {"x": {0: Dim("b"), 2: Dim("h"), 3: Dim("w")}}


def test_stride_order_entries_are_lines_of_torch_and_are_hit() -> None:
    lines = [line.strip() for line in inspect.getsource(torch._prims_common.K.__lt__).splitlines()]
    assert all(code in lines and len(why) > 20 for (_, _, code), why in STRIDE_ORDER_SITES.items())
    _, trace = traced(_ChannelsLastConv().eval(), (torch.randn(2, 3, 8, 10),), dynamic_shapes=_HW)
    asked = {(s.function, s.code) for sites in trace.neutral.values() for s in sites}
    assert {(function, code) for _, function, code in STRIDE_ORDER_SITES} <= asked


def test_a_downsampled_size_1_runs_like_eager_where_stride_order_was_asked() -> None:
    model = _ChannelsLastConv().eval()
    ep = export.export(model, (torch.randn(2, 3, 8, 10),), dynamic_shapes=_HW)
    assert all(lo == 1 for lo, _ in ep.symshape.ranges.values())
    with torch.no_grad():
        for shape in [(1, 3, 1, 1), (2, 3, 2, 7), (1, 3, 6, 1), (1, 3, 3, 3)]:
            y = torch.randn(*shape)
            torch.testing.assert_close(ep.module()(y), model(y))


def test_any_answer_is_only_the_listed_line() -> None:
    assert any_answer(Site("/x/torch/_prims_common/__init__.py", 484, "__lt__", "guard_or_false("))
    assert not any_answer(Site("/x/torch/_prims_common/__init__.py", 620, "ge",
                               "return guard_or_false(a >= b) or guard_or_false(a % b == 0)"))
    assert not any_answer(Site("/x/model.py", 3, "__lt__", "guard_or_false("))
