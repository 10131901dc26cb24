"""Where a decision was asked, and the table of torch places whose answer never changes values.

The bridge records, for every hard decision, the **site** that asked it: the innermost
frame outside torch's symbolic machinery (``torch/fx/experimental``, ``torch/utils/_sympy``,
``torch/__init__.py``'s ``sym_*``/``_check`` helpers) and outside symshape. A site is a
:class:`Site`: file, line, function and the stripped source text of the line.

:data:`NEUTRAL_SITES` lists the places of torch 2.13 whose decision only chooses metadata
that cannot change the values a graph computes at size 1: the stride of a size-1 dim,
how a view/reshape groups dims (the values of a view/reshape are the row-major data of
its input whatever the grouping), the fake-tensor cache re-creating an output's metadata.
Each entry is keyed by (file suffix, function, source line text) and carries a one-line
justification. A line whose text changed (another torch) is not in the table: unknown
means not covered. Every entry was read in the torch 2.13 source; nothing else is listed
(``squeeze()`` without dims, for instance, changes a shape at size 1 and is not here).

A decision is covered (:func:`covered`) only if EVERY site that asked it is in the table.
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import FrameType, MappingProxyType

__all__ = ["Site", "NEUTRAL_SITES", "RawSite", "asking_site", "resolve", "covered", "justification"]

RawSite = tuple[str, int, str]
"""``(filename, lineno, function)`` of a frame: what the bridge keeps while tracing."""


@dataclass(frozen=True, slots=True)
class Site:
    """One place that asked a decision: ``file`` (as Python names it), ``line``,
    ``function`` and ``code`` (the stripped source line)."""

    file: str
    line: int
    function: str
    code: str

    def __str__(self) -> str:
        short = self.file.replace(os.sep, "/").split("site-packages/")[-1]
        return f"{short}:{self.line} ({self.function}): {self.code}"


_REFS = "torch/_refs/__init__.py"
_PRIMS = "torch/_prims/__init__.py"
_FAKE = "torch/_subclasses/fake_tensor.py"
_COMMON = "torch/_prims_common/__init__.py"
_FAKE_IMPLS = "torch/_subclasses/fake_impls.py"
_VIEW_GROUPING = ("view/reshape grouping: which input dims collapse or split to form the target "
                  "shape; the result holds the input's row-major data whatever the grouping, and "
                  "the graph records the view/reshape op with its target shape")

_BROADCAST = ("broadcast bookkeeping: whether a dim already equals the common size or is 1; the "
              "elementwise op the graph records broadcasts by its kernel at run time, and the "
              "undecided path adds torch._check(common == size), a hard decision judged apart")

_BROADCAST_STRIDE = ("broadcast_in_dim's strides: a broadcast dim gets stride 0, a kept one its input's "
                     "stride (the undecided path adds torch._check(size == target), a hard decision judged "
                     "apart); a size-1 dim's stride never locates an element")

NEUTRAL_SITES: Mapping[tuple[str, str, str], str] = MappingProxyType({
    (_REFS, "_reshape_view_helper_core_alg", "if length == a_.shape[idx]:"): _VIEW_GROUPING,
    (_REFS, "_reshape_view_helper_core_alg", "while accum % length != 0:"): _VIEW_GROUPING,
    (_REFS, "_reshape_view_helper_core_alg", "if accum != length:"): _VIEW_GROUPING,
    (_REFS, "_broadcast_shapes", "if guard_or_false(shape[idx] == common_shape[idx]):"): _BROADCAST,
    (_REFS, "_broadcast_shapes", "if not is_nested_int(shape[idx]) and guard_or_false(shape[idx] == 1):"):
        _BROADCAST,
    (_REFS, "should_expand", "if guard_or_false(sym_and(x == 1, y == 1)):"): _BROADCAST,
    (_REFS, "should_expand", "elif guard_or_false(sym_or(x == 1, y == 1)):"): _BROADCAST,
    (_FAKE_IMPLS, "infer_size", "guard_or_false(sizeA == 1) or guard_or_false(sizeB == 1) or sizeA == sizeB,"):
        _BROADCAST,
    (_FAKE_IMPLS, "infer_size", "expandedSizes[i] = sizeB if guard_or_false(sizeA == 1) else sizeA"): _BROADCAST,
    (_FAKE_IMPLS, "conv", "conv_backend = torch._C._select_conv_backend("):
        "the fake convolution picks a backend only to choose its output's memory format (strides); "
        "the graph records aten.convolution, whose real kernel selects its backend from the real sizes",
    (_PRIMS, "_broadcast_in_dim_meta", "if guard_or_false(a.shape[original_idx] == 1):"): _BROADCAST_STRIDE,
    (_FAKE_IMPLS, "convert", "t = t.to(memory_format=mem_fmt)"):
        "the fake convolution gives its output the expected memory format (strides only; a tensor of "
        "0 or 1 elements has every format); the graph records aten.convolution, not this conversion",
    (_COMMON, "are_strides_like_channels_last_or_false", "if guard_or_true(strides[d] < min):"):
        "memory-format detection from strides (is the layout channels-last?): it only picks the "
        "strides of an output, never a value",
    (_COMMON, "is_contiguous", "if maybe_guard_or_false(a.numel() < 2):"):
        "contiguity: a tensor of fewer than 2 elements is contiguous whatever its strides; the "
        "answer only chooses the contiguity flag (metadata), never a value",
    (_PRIMS, "_collapse_view_helper", "if shape[idx] != 1:"):
        "the stride of a collapsed view skips size-1 dims; a size-1 dim's stride never locates an element",
    (_COMMON, "check_contiguous_sizes_strides", "if maybe_guard_or_false(x == 1):"):
        "contiguity: a size-1 dim's stride is skipped when checking contiguous strides; the answer "
        "only chooses the contiguity flag (metadata), never a value",
    (_COMMON, "check_contiguous_sizes_strides",
     "if maybe_guard_or_true(y != expected_stride) and maybe_guard_or_true("):
        "contiguity: whether a stride differs from the contiguous one; the answer only chooses the "
        "contiguity flag (metadata), never a value",
    (_FAKE, "_get_output_tensor_from_cache_entry", "empty.set_(storage, storage_offset, shape, stride)"):
        "the fake-tensor cache re-creates a cached output's metadata (guards suppressed by torch); "
        "no op is recorded and no value computed",
})
"""(torch file suffix, function, stripped line) -> why its answer never changes values (torch 2.13)."""

_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_MACHINERY = tuple(p.replace("/", os.sep) for p in (
    "/torch/fx/experimental/", "/torch/utils/_sympy/", "/torch/__init__.py", "/torch/_logging/"))
_CHECK_FUNCTIONS = frozenset({"_check_with", "expect_true", "_check", "_check_is_size"})


def _is_machinery(filename: str) -> bool:
    return filename.startswith(_HERE) or any(p in filename for p in _MACHINERY)


def asking_site(frame: FrameType | None = None) -> tuple[RawSite | None, bool]:
    """The innermost frame outside torch's symbolic machinery and symshape (as a
    :data:`RawSite`), and whether the decision came through ``torch._check`` /
    ``expect_true`` (what torch records for a check, whatever the spelling at the call).

    >>> asking_site()[0][2]
    '<module>'
    """
    f: FrameType | None = frame if frame is not None else sys._getframe(1)
    via_check = False
    while f is not None:
        code = f.f_code
        if not _is_machinery(code.co_filename):
            return (code.co_filename, f.f_lineno, code.co_name), via_check
        via_check = via_check or code.co_name in _CHECK_FUNCTIONS
        f = f.f_back
    return None, via_check


def resolve(raw: RawSite) -> Site:
    """A :data:`RawSite` with its source line read."""
    filename, lineno, function = raw
    return Site(filename, lineno, function, linecache.getline(filename, lineno).strip())


def justification(site: Site) -> str | None:
    """Why ``site``'s answer never changes values, or None when it is not in the table.

    >>> justification(Site("/x/site-packages/torch/_prims/__init__.py", 1483,
    ...                    "_collapse_view_helper", "if shape[idx] != 1:"))[:28]
    'the stride of a collapsed vi'
    >>> justification(Site("model.py", 3, "forward", "if shape[idx] != 1:")) is None
    True
    """
    path = site.file.replace(os.sep, "/")
    for (suffix, function, code), why in NEUTRAL_SITES.items():
        if function == site.function and code == site.code and path.endswith("/" + suffix):
            return why
    return None


def covered(sites: Iterable[Site]) -> bool:
    """Whether every site is in the table (and there is at least one).

    >>> covered([Site("a/torch/_prims/__init__.py", 1, "_collapse_view_helper", "if shape[idx] != 1:")])
    True
    >>> covered([])
    False
    """
    seen = list(sites)
    return bool(seen) and all(justification(s) is not None for s in seen)
