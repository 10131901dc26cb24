"""Where a decision was asked, and the table of torch places whose answer never changes values.

The bridge records, for every hard decision, the **site** that asked it: the innermost
frame outside torch's symbolic machinery (``torch/fx/experimental``, ``torch/utils/_sympy``,
``torch/__init__.py``'s ``sym_*``/``_check`` helpers) and outside symshape. A site is a
:class:`Site`: file, line, function and the stripped source text of the line.

:data:`NEUTRAL_SITES` lists the places of torch 2.13 whose decision only chooses metadata
that cannot change the values a graph computes at size 1: the stride of a size-1 dim,
how a view/reshape groups dims (the values of a view/reshape are the row-major data of
its input whatever the grouping), matmul's decomposition folding batch dims
(``expand(...).reshape(...)``: view or copy). Questions torch asks under ``suppress_guards``
(the fake-tensor cache re-creating an output's metadata) get no fact at all (routing).
Each entry is keyed by (file suffix, function, source line text) and carries a one-line
justification. A line whose text changed (another torch) is not in the table: unknown
means not covered. Every entry was read in the torch 2.13 source; nothing else is listed
(``squeeze()`` without dims, for instance, changes a shape at size 1 and is not here).

Three more kinds of entries, each with its own justification:

* :data:`NEUTRAL_OPS`: a decision asked while torch computes the fake output of an aten op
  that ``proxy_call`` has **already recorded as one graph node** (the op, with its
  arguments). The answer shapes only the fake output's metadata (strides, which kernel
  the meta function mimics); the node runs the real kernel at run time, which handles
  size 1 as eager does. Listed only for ops whose output shape is a function of the
  arguments with no size-1 case (so the graph traced after them stays valid at 1).
* :data:`NEUTRAL_FUNCTIONS`: a decision asked directly by a torch function's C++ code (as
  non-strict export's torch-function mode calls it), for functions whose every outcome
  yields the same values (``contiguous()``: its input or a contiguous copy of it).
* :data:`CONTIGUOUS_LINE`: any line (torch's, a library's, the user's) whose only call is
  ``.contiguous()`` on a plain name (``.contiguous()`` alone, the tail of a chained call
  split over lines; ``y = x.contiguous()``; ``return x.contiguous()``): Python reports the
  line of the call in progress, so the decision came from ``contiguous()``, which returns its
  input or a contiguous copy of it, the same values either way.
* :data:`CONDITIONAL_SITES`: a line whose decision cannot change what the line computes
  **given the state of its frame when the question was asked** (a condition read from
  the frame's locals/globals, without calling user code). The condition is checked for
  every asking, and the site is covered only when it held each time.

* a **layout-only branch** (any file): the test of an ``if`` whose arms only rebind tensors to
  their ``.contiguous()`` (:mod:`export.tracing.layout_branch`): either answer computes the
  same values (a copy, when a tensor is not contiguous, is kept only if the graph mutates
  nothing). Read from the source and the frame, not from a table; its detail names the tensors.

A decision is covered (:func:`covered`) only if EVERY site that asked it is in the tables.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import FrameType, MappingProxyType

from export.tracing.layout_branch import (LAYOUT_WHY, LayoutBranch, layout_branches, layout_detail, layout_now,
                                          same_graph)

__all__ = ["Site", "NEUTRAL_SITES", "NEUTRAL_OPS", "NEUTRAL_FUNCTIONS", "CONDITIONAL_SITES", "CONTIGUOUS_LINE",
           "STRIDE_ORDER_SITES", "any_answer", "Conditional", "RawSite",
           "asking_site", "resolve", "covered", "justification"]

RawSite = tuple[str, int, str, str]
"""``(filename, lineno, function, detail)`` of a frame: what the bridge keeps while
tracing. ``detail`` is ``"recorded op aten.x.y"`` for a decision inside a recorded op's
fake kernel, the condition text of a :data:`CONDITIONAL_SITES` entry that held, or ``""``."""


@dataclass(frozen=True, slots=True)
class Site:
    """One place that asked a decision: ``file`` (as Python names it), ``line``,
    ``function`` and ``code`` (the stripped source line)."""

    file: str
    line: int
    function: str
    code: str
    detail: str = ""

    def __str__(self) -> str:
        short = self.file.replace(os.sep, "/").split("site-packages/")[-1]
        more = f" [{self.detail}]" if self.detail else ""
        return f"{short}:{self.line} ({self.function}): {self.code}{more}"


_REFS = "torch/_refs/__init__.py"
_PRIMS = "torch/_prims/__init__.py"
_FAKE = "torch/_subclasses/fake_tensor.py"
_COMMON = "torch/_prims_common/__init__.py"
_FAKE_IMPLS = "torch/_subclasses/fake_impls.py"
_DECOMP = "torch/_decomp/decompositions.py"
_MATMUL_FOLD = ("matmul's decomposition folds batch dims: expand(...).reshape(...) of an operand; reshape's "
                "kernel decides view-or-copy (computeStride skips size-1 dims), either op holds the expanded "
                "operand's row-major data, and a size-1 dim never blocks a view, so the op recorded stays valid at 1")
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
    (_FAKE_IMPLS, "conv", "mem_fmt = torch._C._conv_determine_backend_memory_format("):
        "the fake convolution picks its output's memory format from the backend and the input's strides "
        "(a size-1 batch's stride is ignored); strides only: the graph records aten.convolution, whose "
        "real kernel computes the same values in any layout",
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
    (_DECOMP, "matmul", "tensor1_expanded = tensor1.expand(tensor1_expand_size).reshape("): _MATMUL_FOLD,
    (_DECOMP, "matmul", "tensor2_expanded = tensor2.expand(tensor2_expand_size).reshape("): _MATMUL_FOLD,
})
"""(torch file suffix, function, stripped line) -> why its answer never changes values (torch 2.13)."""

_STRIDE_ORDER = ("sorting a tensor's (size, stride) pairs by stride to test whether it is non-overlapping and "
                 "dense: every caller only picks strides from the answer (a clone's or a conversion's output "
                 "strides, an elementwise op's output layout, index_fill's copy_strided); the graph's ops "
                 "compute the same values in any layout, so either answer to either comparison is right")

STRIDE_ORDER_SITES: Mapping[tuple[str, str, str], str] = MappingProxyType({
    (_COMMON, "__lt__", "guard_or_false("): _STRIDE_ORDER,  # self.stride < other.stride
})
"""Places whose decision is value-neutral **whatever** the answer, even one against a 0/1-safe
query's fallback (``guard_or_false`` answered True), and whatever it compares: the stride
comparison of ``K.__lt__`` in ``torch/_prims_common`` (torch 2.13, 2.14, 2.15: the same
line). A channels-last tensor's strides ``(H*W*C, 1, W*C, C)`` compare as ``H > 1`` and
``W > 1``: without it, every image dim downsampled to 1 (a 32x32 image in an efficientnet)
was refused. (The other comparisons nearby, e.g. ``compute_elementwise_output_logical_to_physical_perm``'s
``ge``, are not listed: no export here needs them.)"""

_OP_PREFIX = "recorded op "
_OPS = "torch/_ops.py"
_PROXY = "torch/fx/experimental/proxy_tensor.py"
_RECORDED_CALL = "out = func(*args, **kwargs)"  # proxy_call, right after create_proxy(func, ...)

NEUTRAL_OPS: Mapping[str, str] = MappingProxyType({
    "aten.reshape.default":
        "reshape's kernel decides view-or-copy (computeStride skips size-1 dims); the output shape is "
        "the requested shape and holds the input's row-major data either way",
    "aten.linear.default":
        "linear's kernel folds the leading dims of its input (view or copy, computeStride skips size-1 "
        "dims) before its matmul; the output shape is the input's leading dims plus out_features and "
        "the node computes x @ W.T + b at every size",
    "aten.adaptive_avg_pool2d.default":
        "adaptive_avg_pool2d's meta function picks the output's memory format from the input's strides "
        "(whether a permuted input suggests channels_last: a size-1 batch's stride is ignored); the "
        "output shape is (N, C, *output_size) and the node averages each adaptive window at every size",
    "aten.adaptive_avg_pool1d.default":
        "adaptive_avg_pool1d runs adaptive_avg_pool2d on its input with a size-1 dim inserted, whose meta "
        "function picks the output's memory format from the strides (a size-1 batch's stride is "
        "ignored); the output shape is (N, C, output_size) and the node averages each adaptive window "
        "at every size",
})
"""aten op -> why a decision asked inside its fake kernel, once ``proxy_call`` recorded it
as a node, never changes the graph's values at size 1 (torch 2.13)."""

_FUNCTION_PREFIX = "torch function "
_NON_STRICT = "torch/_export/non_strict_utils.py"
_FUNCTION_CALL = "return func(*args, **kwargs)"  # non-strict export's torch-function mode calling a torch function

NEUTRAL_FUNCTIONS: Mapping[str, str] = MappingProxyType({
    "torch._C.TensorBase.contiguous":
        "contiguous() returns its input or a contiguous copy of it: the same values whichever the "
        "contiguity check answers (the graph's aten.contiguous is a value identity)",
})
"""torch function (module.qualname) -> why a decision its C++ code asks directly (no Python
frame of torch's between it and the decision, only the tracer's machinery) never changes
values, as non-strict export's torch-function mode calls it (torch 2.13)."""


CONTIGUOUS_LINE = re.compile(r"^(return\s+|[A-Za-z_]\w*\s*=\s*)?([A-Za-z_]\w*)?\.contiguous\(\)$")
"""A source line whose only call is ``.contiguous()`` on a plain name (or continuing a call
chain from the lines above): a decision asked there is contiguous()'s own."""
_CONTIGUOUS_WHY = ("contiguous() returns its input or a contiguous copy of it: the same values whichever the "
                   "contiguity check answers (a size-1 dim's stride is skipped), and the graph's clone, if any, "
                   "copies values at every size; the line calls nothing else")


@dataclass(frozen=True, slots=True)
class Conditional:
    """A :data:`CONDITIONAL_SITES` entry: ``holds`` reads the asking frame (locals and
    globals only, no user code), ``text`` says what it checks, ``why`` why the line's
    decision cannot change what it computes when the condition holds."""

    holds: Callable[[FrameType], bool]
    text: str
    why: str


def _mask_given(frame: FrameType) -> bool:
    return frame.f_locals.get("attention_mask") is not None


def _compiling(frame: FrameType) -> bool:
    check = frame.f_globals.get("is_torchdynamo_compiling")
    return check is not None and getattr(check, "__module__", "").startswith("transformers.") and check() is True


_SDPA = "transformers/integrations/sdpa_attention.py"

CONDITIONAL_SITES: Mapping[tuple[str, str, str], Conditional] = MappingProxyType({
    (_SDPA, "sdpa_attention_forward", "is_causal = q_length > 1 and attention_mask is None and is_causal"):
        Conditional(_mask_given, "attention_mask is not None",
                    "with a mask, `... and attention_mask is None and ...` is falsy whatever `q_length > 1` answers: "
                    "is_causal is falsy either way and sdpa gets the mask"),
    (_SDPA, "sdpa_attention_forward", "elif q_length == 1 and not is_torchdynamo_compiling():"):
        Conditional(_compiling, "is_torchdynamo_compiling() is True",
                    "while exporting, `not is_torchdynamo_compiling()` is False, so the branch is not taken "
                    "whatever `q_length == 1` answers"),
})
"""(file suffix, function, stripped line) -> the condition under which the line's decision
never changes what it computes (transformers' sdpa integration, as installed)."""

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
"""The export package's folder: its frames are machinery, never the asking site."""
_MACHINERY = tuple(p.replace("/", os.sep) for p in (
    "/torch/fx/experimental/", "/torch/utils/_sympy/", "/torch/__init__.py", "/torch/_logging/"))
_CHECK_FUNCTIONS = frozenset({"_check_with", "expect_true", "_check", "_check_is_size"})
_CONDITIONAL_FUNCTIONS = frozenset(function for _, function, _ in CONDITIONAL_SITES)


def _is_machinery(filename: str) -> bool:
    return filename.startswith(_HERE) or any(p in filename for p in _MACHINERY)


def asking_site(frame: FrameType | None = None, machinery: dict[str, bool] | None = None,
                layouts: dict[str, Mapping[int, LayoutBranch]] | None = None) -> tuple[RawSite | None, bool]:
    """The innermost frame outside torch's symbolic machinery and symshape (as a
    :data:`RawSite`, with its detail), and whether the decision came through
    ``torch._check`` / ``expect_true`` (what torch records for a check, whatever the
    spelling at the call). ``machinery`` memoizes which file names are machinery (a
    trace walks the same few files thousands of times), ``layouts`` each file's
    layout-only branches (:func:`export.tracing.layout_branch.layout_branches`; None: that
    rule is off).

    >>> asking_site()[0][2:]
    ('<module>', '')
    """
    f: FrameType | None = frame if frame is not None else sys._getframe(1)
    known = machinery if machinery is not None else {}
    via_check = False
    while f is not None:
        code = f.f_code
        inside = known.get(code.co_filename)
        if inside is None:
            inside = known[code.co_filename] = _is_machinery(code.co_filename)
        if not inside:
            return (code.co_filename, f.f_lineno, code.co_name, _detail(f, layouts)), via_check
        via_check = via_check or code.co_name in _CHECK_FUNCTIONS
        f = f.f_back
    return None, via_check


def _detail(f: FrameType, layouts: dict[str, Mapping[int, LayoutBranch]] | None = None) -> str:
    """The recorded op (a decision inside the fake kernel of an op ``proxy_call`` has
    recorded), or the text of a conditional entry's condition that holds now, or the
    names of a layout-only branch (:mod:`export.tracing.layout_branch`), or ``""``."""
    code = f.f_code
    layout = _layout(f, layouts) if layouts is not None else ""
    if layout:
        return layout
    if code.co_name == "__call__" and _path(code.co_filename).endswith("/" + _OPS):
        caller = f.f_back
        if caller is not None and caller.f_code.co_name == "proxy_call" and \
                _path(caller.f_code.co_filename).endswith("/" + _PROXY) and \
                linecache.getline(caller.f_code.co_filename, caller.f_lineno).strip() == _RECORDED_CALL:
            return _OP_PREFIX + str(f.f_locals.get("self"))
        return ""
    if code.co_name == "__torch_function__" and _path(code.co_filename).endswith("/" + _NON_STRICT) and \
            linecache.getline(code.co_filename, f.f_lineno).strip() == _FUNCTION_CALL:
        return _FUNCTION_PREFIX + _qualified(f.f_locals.get("func"))
    if code.co_name in _CONDITIONAL_FUNCTIONS:
        entry = _conditional(_path(code.co_filename), code.co_name,
                             linecache.getline(code.co_filename, f.f_lineno).strip())
        if entry is not None:
            try:
                return entry.text if entry.holds(f) else ""
            except Exception:  # noqa: BLE001 - a condition that cannot be read does not hold
                return ""
    return ""


def _layout(f: FrameType, layouts: dict[str, Mapping[int, LayoutBranch]]) -> str:
    """:func:`export.tracing.layout_branch.layout_detail` when ``f`` is at the test of a
    layout-only ``if`` whose names are tensors now, else ``""``. Only a line that starts
    an ``if`` followed by a ``.contiguous()`` line is looked at further (its file parsed once)."""
    filename, lineno = f.f_code.co_filename, f.f_lineno
    line = linecache.getline(filename, lineno).lstrip()
    if not line.startswith(("if ", "elif ", "if(")) or ".contiguous()" not in linecache.getline(filename, lineno + 1):
        return ""
    branches = layouts.get(filename)
    if branches is None:
        branches = layouts[filename] = layout_branches("".join(linecache.getlines(filename)))
    branch = branches.get(lineno)
    contiguous = layout_now(f, branch) if branch is not None else None
    return "" if branch is None or contiguous is None else layout_detail(branch.names, contiguous)


def _qualified(func: object) -> str:
    owner = getattr(func, "__objclass__", None)
    module = getattr(owner, "__module__", None) or getattr(func, "__module__", None) or "?"
    return f"{module}.{getattr(func, '__qualname__', type(func).__name__)}"


def _path(filename: str) -> str:
    return filename.replace(os.sep, "/")


def _conditional(path: str, function: str, code: str) -> Conditional | None:
    for (suffix, fn, line), entry in CONDITIONAL_SITES.items():
        if fn == function and line == code and path.endswith("/" + suffix):
            return entry
    return None


def resolve(raw: RawSite) -> Site:
    """A :data:`RawSite` with its source line read."""
    filename, lineno, function, detail = raw
    return Site(file=filename, line=lineno, function=function, code=linecache.getline(filename, lineno).strip(),
                detail=detail)


def justification(site: Site) -> str | None:
    """Why ``site``'s answer never changes values, or None when it is in no table.

    >>> justification(Site("/x/site-packages/torch/_prims/__init__.py", 1483,
    ...                    "_collapse_view_helper", "if shape[idx] != 1:"))[:28]
    'the stride of a collapsed vi'
    >>> justification(Site("model.py", 3, "forward", "if shape[idx] != 1:")) is None
    True
    >>> justification(Site("/x/torch/_ops.py", 875, "__call__", "return self._op(*args, **kwargs)",
    ...                    "recorded op aten.reshape.default"))[:24]
    "reshape's kernel decides"
    >>> justification(Site("/x/torch/nn/functional.py", 6262, "_in_projection_packed", ".contiguous()"))[:24]
    'contiguous() returns its'
    >>> justification(Site("model.py", 3, "forward", "y = x.view(-1).contiguous()")) is None
    True
    """
    path = _path(site.file)
    for (suffix, function, code), why in (*NEUTRAL_SITES.items(), *STRIDE_ORDER_SITES.items()):
        if function == site.function and code == site.code and path.endswith("/" + suffix):
            return why
    if site.detail.startswith(_OP_PREFIX) and site.function == "__call__" and path.endswith("/" + _OPS):
        return NEUTRAL_OPS.get(site.detail[len(_OP_PREFIX):])
    if site.detail.startswith(_FUNCTION_PREFIX) and site.function == "__torch_function__" and \
            path.endswith("/" + _NON_STRICT):
        return NEUTRAL_FUNCTIONS.get(site.detail[len(_FUNCTION_PREFIX):])
    entry = _conditional(path, site.function, site.code)
    if entry is not None and site.detail == entry.text:
        return f"when {entry.text}: {entry.why}"
    if not site.detail and CONTIGUOUS_LINE.match(site.code):
        return _CONTIGUOUS_WHY
    if same_graph(site.detail):
        return LAYOUT_WHY
    return None


def any_answer(site: Site) -> bool:
    """Whether ``site`` is a :data:`STRIDE_ORDER_SITES` place: value-neutral whatever it answers.

    >>> any_answer(Site("/x/torch/_prims_common/__init__.py", 484, "__lt__", "guard_or_false("))
    True
    """
    if same_graph(site.detail):
        return True
    path = _path(site.file)
    return any(function == site.function and code == site.code and path.endswith("/" + suffix)
               for (suffix, function, code) in STRIDE_ORDER_SITES)


def covered(sites: Iterable[Site]) -> bool:
    """Whether every site is in the table (and there is at least one).

    >>> covered([Site("a/torch/_prims/__init__.py", 1, "_collapse_view_helper", "if shape[idx] != 1:")])
    True
    >>> covered([])
    False
    """
    seen = list(sites)
    return bool(seen) and all(justification(s) is not None for s in seen)
