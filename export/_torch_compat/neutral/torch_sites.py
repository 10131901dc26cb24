"""torch's places whose 0/1 decision never changes values, each with the fingerprint of its function.

Four tables (see ``docs/design.md``, "Sizes 0 and 1"), each entry with a one-line
justification and the :class:`~export._torch_compat.neutral.fingerprint.Scope` it needs
unchanged:

* ``NEUTRAL_SITES``: lines of torch whose decision only chooses metadata that cannot change
  the values a graph computes at size 1 (the stride of a size-1 dim, how a view/reshape groups
  dims, matmul's decomposition folding batch dims, broadcast bookkeeping, memory formats).
* ``STRIDE_ORDER_SITES``: lines value-neutral **whatever** they answer and compare, even a
  0/1-safe query answered against its fallback (``K.__lt__``'s stride comparison).
* ``NEUTRAL_OPS``: an aten op whose fake kernel asks, once ``proxy_call`` recorded it as one
  graph node (read at the anchor line ``out = func(*args, **kwargs)``): stated on the op, not
  on a line, for ops whose output shape has no size-1 case; the anchor's functions are its scopes.
* ``NEUTRAL_FUNCTIONS``: a torch function whose C++ code asks directly, as non-strict export's
  torch-function mode calls it (its ``return func(*args, **kwargs)``), every outcome the same values.

Every line entry was read in torch 2.13.0, 2.14.1 and 2.15.0 and its function fingerprinted
there (:func:`~export._torch_compat.neutral.fingerprint.releases`); two functions changed
between 2.13 and 2.14 without changing what their entries say (``docs/torch_internals.md``,
section 8). Nothing else is listed (``squeeze()`` without dims changes a shape at size 1).
"""

from __future__ import annotations

import functools
import linecache
from importlib.metadata import PackageNotFoundError, version
from collections.abc import Mapping
from types import FrameType, MappingProxyType

import torch

from export._torch_compat.neutral.entry import Entry, SiteLike, path_of
from export._torch_compat.neutral.fingerprint import Scope, releases, scope_problem
from export._torch_compat.version import check_torch_version

__all__ = ["ENTRIES", "NEUTRAL_SITES", "STRIDE_ORDER_SITES", "NEUTRAL_OPS", "NEUTRAL_FUNCTIONS", "OP_PREFIX",
           "FUNCTION_PREFIX", "SYMBOLIC_MACHINERY", "CHECK_FUNCTIONS", "torch_release", "release_of", "entry_problem",
           "op_detail", "function_detail", "site_why", "stride_order_why", "op_why", "function_why"]

_REFS = "torch/_refs/__init__.py"
_PRIMS = "torch/_prims/__init__.py"
_COMMON = "torch/_prims_common/__init__.py"
_FAKE_IMPLS = "torch/_subclasses/fake_impls.py"
_DECOMP = "torch/_decomp/decompositions.py"

# The functions the entries sit in (a closure's: the function defining it), fingerprinted in 2.13.0, 2.14.1, 2.15.0.
_RESHAPE = Scope("torch._refs", "_reshape_view_helper_core_alg",
                 releases("830c45328f04", "830c45328f04", "830c45328f04"))
_BROADCAST_SHAPES = Scope("torch._refs", "_broadcast_shapes",
                          releases("fdb146ffee68", "fdb146ffee68", "fdb146ffee68"))
_MAYBE_BROADCAST = Scope("torch._refs", "_maybe_broadcast",  # should_expand
                         releases("68f8551e77ba", "68f8551e77ba", "68f8551e77ba"))
_INFER_SIZE = Scope("torch._subclasses.fake_impls", "infer_size",
                    releases("a91789a75c4d", "a91789a75c4d", "a91789a75c4d"))
# conv changed in 2.14 (re-read, accepted): FakeTensor checks of its arguments, a same-device check, and an
# unbatched input taking mem_fmt = None before backend selection; the listed lines still pick strides only.
_CONV = Scope("torch._subclasses.fake_impls", "conv",  # and its convert
              releases("b2c90df92f7b", "b4f512dcd59e", "b4f512dcd59e"))
_BROADCAST_IN_DIM = Scope("torch._prims", "_broadcast_in_dim_meta",
                          releases("d638d5aa24c7", "d638d5aa24c7", "d638d5aa24c7"))
_CHANNELS_LAST = Scope("torch._prims_common", "are_strides_like_channels_last_or_false",
                       releases("b7663ccc4714", "b7663ccc4714", "b7663ccc4714"))
_IS_CONTIGUOUS = Scope("torch._prims_common", "is_contiguous",
                       releases("56dd77480426", "56dd77480426", "56dd77480426"))
_COLLAPSE = Scope("torch._prims", "_collapse_view_helper",
                  releases("1f9cde5c4ed4", "1f9cde5c4ed4", "1f9cde5c4ed4"))
_CONTIGUOUS_STRIDES = Scope("torch._prims_common", "check_contiguous_sizes_strides",
                            releases("60bff10fb96b", "60bff10fb96b", "60bff10fb96b"))
_MATMUL = Scope("torch._decomp.decompositions", "matmul", releases("b775bd42833f", "b775bd42833f", "b775bd42833f"))
_STRIDE_LT = Scope("torch._prims_common", "K.__lt__", releases("a562135cf7ed", "a562135cf7ed", "a562135cf7ed"))
# The anchors: where an op or a torch function is read from a frame. All three changed in 2.14 (re-read,
# accepted): proxy_call swaps a baked device operand for current_device() under compile-on-one-rank (the
# operand only; create_proxy then out = func(*args, **kwargs) as before), OpOverload.__call__ gained a fast
# path for a Python dispatcher skipping torch functions (still the op's call), __torch_function__ type hints
# and a re-raise of a triton data_ptr error (the call line the same).
_PROXY_CALL = Scope("torch.fx.experimental.proxy_tensor", "proxy_call",
                    releases("8a047fcbee0a", "e373db6bf34d", "e373db6bf34d"))
_OP_CALL = Scope("torch._ops", "OpOverload.__call__", releases("9a30de793992", "380afd845063", "380afd845063"))
_TORCH_FUNCTION = Scope("torch._export.non_strict_utils", "_NonStrictTorchFunctionHandler.__torch_function__",
                        releases("d29b501dcf7a", "9eeb65b7aa32", "9eeb65b7aa32"))

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
_STRIDE_ORDER = ("sorting a tensor's (size, stride) pairs by stride to test whether it is non-overlapping and "
                 "dense: every caller only picks strides from the answer (a clone's or a conversion's output "
                 "strides, an elementwise op's output layout, index_fill's copy_strided); the graph's ops "
                 "compute the same values in any layout, so either answer to either comparison is right")


def _site(file: str, function: str, code: str, why: str, scope: Scope, table: str = "NEUTRAL_SITES") -> Entry:
    return Entry(table, (file, function, code), why, (scope,))


ENTRIES: tuple[Entry, ...] = (
    _site(_REFS, "_reshape_view_helper_core_alg", "if length == a_.shape[idx]:", _VIEW_GROUPING, _RESHAPE),
    _site(_REFS, "_reshape_view_helper_core_alg", "while accum % length != 0:", _VIEW_GROUPING, _RESHAPE),
    _site(_REFS, "_reshape_view_helper_core_alg", "if accum != length:", _VIEW_GROUPING, _RESHAPE),
    _site(_REFS, "_broadcast_shapes", "if guard_or_false(shape[idx] == common_shape[idx]):", _BROADCAST,
          _BROADCAST_SHAPES),
    _site(_REFS, "_broadcast_shapes", "if not is_nested_int(shape[idx]) and guard_or_false(shape[idx] == 1):",
          _BROADCAST, _BROADCAST_SHAPES),
    _site(_REFS, "should_expand", "if guard_or_false(sym_and(x == 1, y == 1)):", _BROADCAST, _MAYBE_BROADCAST),
    _site(_REFS, "should_expand", "elif guard_or_false(sym_or(x == 1, y == 1)):", _BROADCAST, _MAYBE_BROADCAST),
    _site(_FAKE_IMPLS, "infer_size", "guard_or_false(sizeA == 1) or guard_or_false(sizeB == 1) or sizeA == sizeB,",
          _BROADCAST, _INFER_SIZE),
    _site(_FAKE_IMPLS, "infer_size", "expandedSizes[i] = sizeB if guard_or_false(sizeA == 1) else sizeA",
          _BROADCAST, _INFER_SIZE),
    _site(_FAKE_IMPLS, "conv", "conv_backend = torch._C._select_conv_backend(",
          "the fake convolution picks a backend only to choose its output's memory format (strides); "
          "the graph records aten.convolution, whose real kernel selects its backend from the real sizes", _CONV),
    _site(_FAKE_IMPLS, "conv", "mem_fmt = torch._C._conv_determine_backend_memory_format(",
          "the fake convolution picks its output's memory format from the backend and the input's strides "
          "(a size-1 batch's stride is ignored); strides only: the graph records aten.convolution, whose "
          "real kernel computes the same values in any layout", _CONV),
    _site(_PRIMS, "_broadcast_in_dim_meta", "if guard_or_false(a.shape[original_idx] == 1):", _BROADCAST_STRIDE,
          _BROADCAST_IN_DIM),
    _site(_FAKE_IMPLS, "convert", "t = t.to(memory_format=mem_fmt)",
          "the fake convolution gives its output the expected memory format (strides only; a tensor of "
          "0 or 1 elements has every format); the graph records aten.convolution, not this conversion", _CONV),
    _site(_COMMON, "are_strides_like_channels_last_or_false", "if guard_or_true(strides[d] < min):",
          "memory-format detection from strides (is the layout channels-last?): it only picks the "
          "strides of an output, never a value", _CHANNELS_LAST),
    _site(_COMMON, "is_contiguous", "if maybe_guard_or_false(a.numel() < 2):",
          "contiguity: a tensor of fewer than 2 elements is contiguous whatever its strides; the "
          "answer only chooses the contiguity flag (metadata), never a value", _IS_CONTIGUOUS),
    _site(_PRIMS, "_collapse_view_helper", "if shape[idx] != 1:",
          "the stride of a collapsed view skips size-1 dims; a size-1 dim's stride never locates an element",
          _COLLAPSE),
    _site(_COMMON, "check_contiguous_sizes_strides", "if maybe_guard_or_false(x == 1):",
          "contiguity: a size-1 dim's stride is skipped when checking contiguous strides; the answer "
          "only chooses the contiguity flag (metadata), never a value", _CONTIGUOUS_STRIDES),
    _site(_COMMON, "check_contiguous_sizes_strides",
          "if maybe_guard_or_true(y != expected_stride) and maybe_guard_or_true(",
          "contiguity: whether a stride differs from the contiguous one; the answer only chooses the "
          "contiguity flag (metadata), never a value", _CONTIGUOUS_STRIDES),
    _site(_DECOMP, "matmul", "tensor1_expanded = tensor1.expand(tensor1_expand_size).reshape(", _MATMUL_FOLD,
          _MATMUL),
    _site(_DECOMP, "matmul", "tensor2_expanded = tensor2.expand(tensor2_expand_size).reshape(", _MATMUL_FOLD,
          _MATMUL),
    # self.stride < other.stride; a channels-last tensor's strides compare as H > 1, W > 1
    _site(_COMMON, "__lt__", "guard_or_false(", _STRIDE_ORDER, _STRIDE_LT, "STRIDE_ORDER_SITES"),
    Entry("NEUTRAL_OPS", ("aten.reshape.default",),
          "reshape's kernel decides view-or-copy (computeStride skips size-1 dims); the output shape is "
          "the requested shape and holds the input's row-major data either way", (_PROXY_CALL, _OP_CALL)),
    Entry("NEUTRAL_OPS", ("aten.linear.default",),
          "linear's kernel folds the leading dims of its input (view or copy, computeStride skips size-1 "
          "dims) before its matmul; the output shape is the input's leading dims plus out_features and "
          "the node computes x @ W.T + b at every size", (_PROXY_CALL, _OP_CALL)),
    Entry("NEUTRAL_OPS", ("aten.adaptive_avg_pool2d.default",),
          "adaptive_avg_pool2d's meta function picks the output's memory format from the input's strides "
          "(whether a permuted input suggests channels_last: a size-1 batch's stride is ignored); the "
          "output shape is (N, C, *output_size) and the node averages each adaptive window at every size",
          (_PROXY_CALL, _OP_CALL)),
    Entry("NEUTRAL_OPS", ("aten.adaptive_avg_pool1d.default",),
          "adaptive_avg_pool1d runs adaptive_avg_pool2d on its input with a size-1 dim inserted, whose meta "
          "function picks the output's memory format from the strides (a size-1 batch's stride is "
          "ignored); the output shape is (N, C, output_size) and the node averages each adaptive window "
          "at every size", (_PROXY_CALL, _OP_CALL)),
    Entry("NEUTRAL_FUNCTIONS", ("torch._C.TensorBase.contiguous",),
          "contiguous() returns its input or a contiguous copy of it: the same values whichever the "
          "contiguity check answers (the graph's aten.contiguous is a value identity)", (_TORCH_FUNCTION,)),
)
"""Every torch entry, in the order each table tries them."""


def _lines(table: str) -> Mapping[tuple[str, str, str], str]:
    return MappingProxyType({e.key: e.why for e in ENTRIES if e.table == table})  # type: ignore[misc]


def _names(table: str) -> Mapping[str, str]:
    return MappingProxyType({e.key[0]: e.why for e in ENTRIES if e.table == table})


NEUTRAL_SITES = _lines("NEUTRAL_SITES")
"""(torch file suffix, function, stripped line) -> why its answer never changes values."""
STRIDE_ORDER_SITES = _lines("STRIDE_ORDER_SITES")
"""(torch file suffix, function, stripped line) -> why its answer, whatever it is, never changes values."""
NEUTRAL_OPS = _names("NEUTRAL_OPS")
"""aten op -> why a decision asked inside its fake kernel, once ``proxy_call`` recorded it as a
node, never changes the graph's values at size 1."""
NEUTRAL_FUNCTIONS = _names("NEUTRAL_FUNCTIONS")
"""torch function (module.qualname) -> why a decision its C++ code asks directly never changes values."""

SYMBOLIC_MACHINERY: tuple[str, ...] = ("/torch/fx/experimental/", "/torch/utils/_sympy/", "/torch/__init__.py",
                                       "/torch/_logging/")
"""torch's folders and files (``/``-separated) whose frames are symbolic machinery, never the asking site."""
CHECK_FUNCTIONS = frozenset({"_check_with", "expect_true", "_check", "_check_is_size"})
"""torch's functions a ``torch._check`` / ``expect_true`` decision passes through."""

OP_PREFIX = "recorded op "
FUNCTION_PREFIX = "torch function "
_OPS = "/torch/_ops.py"
_PROXY = "/torch/fx/experimental/proxy_tensor.py"
_RECORDED_CALL = "out = func(*args, **kwargs)"  # proxy_call, right after create_proxy(func, ...)
_NON_STRICT = "/torch/_export/non_strict_utils.py"
_FUNCTION_CALL = "return func(*args, **kwargs)"  # non-strict export's torch-function mode calling a torch function


@functools.cache
def torch_release() -> str:
    """The installed torch's ``major.minor`` (the key of a torch scope's recorded fingerprints)."""
    major, minor = check_torch_version(torch.__version__)
    return f"{major}.{minor}"


@functools.cache
def entry_problem(entry: Entry) -> str | None:
    """None when every scope of ``entry`` is accepted as installed, else why it is disabled."""
    for scope in entry.scopes:
        problem = scope_problem(scope, release_of(scope))
        if problem is not None:
            return problem
    return None


def release_of(scope: Scope) -> str:
    """The installed release of ``scope``'s library, as its recorded fingerprints are keyed
    (``2.15`` for torch, ``transformers 5.25``)."""
    if scope.library == "torch":
        return torch_release()
    try:
        return f"{scope.library} " + ".".join(version(scope.library).split(".")[:2])
    except PackageNotFoundError:
        return f"{scope.library} (not installed)"


def op_detail(f: FrameType) -> str:
    """``"recorded op aten.x.y"`` when ``f`` is an op's ``__call__`` that ``proxy_call`` made
    right after recording it as a node (its anchor line), else ``""``."""
    code = f.f_code
    if code.co_name != "__call__" or not path_of(code.co_filename).endswith(_OPS):
        return ""
    caller = f.f_back
    if caller is not None and caller.f_code.co_name == "proxy_call" and \
            path_of(caller.f_code.co_filename).endswith(_PROXY) and \
            linecache.getline(caller.f_code.co_filename, caller.f_lineno).strip() == _RECORDED_CALL:
        return OP_PREFIX + str(f.f_locals.get("self"))
    return ""


def function_detail(f: FrameType) -> str:
    """``"torch function module.qualname"`` when ``f`` is non-strict export's torch-function mode
    calling that function (its anchor line), else ``""``."""
    code = f.f_code
    if code.co_name == "__torch_function__" and path_of(code.co_filename).endswith(_NON_STRICT) and \
            linecache.getline(code.co_filename, f.f_lineno).strip() == _FUNCTION_CALL:
        return FUNCTION_PREFIX + _qualified(f.f_locals.get("func"))
    return ""


def _qualified(func: object) -> str:
    owner = getattr(func, "__objclass__", None)
    module = getattr(owner, "__module__", None) or getattr(func, "__module__", None) or "?"
    return f"{module}.{getattr(func, '__qualname__', type(func).__name__)}"


def _line_index(table: str) -> Mapping[tuple[str, str], tuple[tuple[str, str, int], ...]]:
    """(function, line) -> ((``/``-prefixed file suffix, why, position in :data:`ENTRIES`), ...) of
    the table's entries, in table order. Built at import; no fingerprint is read here."""
    index: dict[tuple[str, str], tuple[tuple[str, str, int], ...]] = {}
    for i, e in enumerate(ENTRIES):
        if e.table == table:
            suffix, function, code = e.key
            index[(function, code)] = (*index.get((function, code), ()), ("/" + suffix, e.why, i))
    return MappingProxyType(index)


def _name_index(table: str) -> Mapping[str, tuple[str, int]]:
    """op or function name -> (why, position in :data:`ENTRIES`) of the table's entries."""
    return MappingProxyType({e.key[0]: (e.why, i) for i, e in enumerate(ENTRIES) if e.table == table})


_SITE_LINES = _line_index("NEUTRAL_SITES")
_STRIDE_ORDER_LINES = _line_index("STRIDE_ORDER_SITES")
_OP_NAMES = _name_index("NEUTRAL_OPS")
_FUNCTION_NAMES = _name_index("NEUTRAL_FUNCTIONS")


@functools.cache
def _enabled(position: int) -> bool:
    """Whether ``ENTRIES[position]`` is enabled: its scopes' fingerprints are read at its first
    match (once per process, 0.5-5 ms a function), so a trace pays only for the entries it hits."""
    return entry_problem(ENTRIES[position]) is None


def _line_why(index: Mapping[tuple[str, str], tuple[tuple[str, str, int], ...]], site: SiteLike) -> str | None:
    candidates = index.get((site.function, site.code))
    if candidates:
        path = path_of(site.file)
        for suffix, why, position in candidates:
            if path.endswith(suffix) and _enabled(position):
                return why
    return None


def site_why(site: SiteLike) -> str | None:
    """The justification of the enabled ``NEUTRAL_SITES`` entry ``site`` is at, or None."""
    return _line_why(_SITE_LINES, site)


def stride_order_why(site: SiteLike) -> str | None:
    """The justification of the enabled ``STRIDE_ORDER_SITES`` entry ``site`` is at, or None."""
    return _line_why(_STRIDE_ORDER_LINES, site)


def op_why(site: SiteLike) -> str | None:
    """The justification of the enabled ``NEUTRAL_OPS`` entry whose recorded op ``site`` asked in, or None."""
    if site.detail.startswith(OP_PREFIX) and site.function == "__call__" and path_of(site.file).endswith(_OPS):
        return _named(_OP_NAMES, site.detail[len(OP_PREFIX):])
    return None


def function_why(site: SiteLike) -> str | None:
    """The justification of the enabled ``NEUTRAL_FUNCTIONS`` entry whose function ``site`` asked in, or None."""
    if site.detail.startswith(FUNCTION_PREFIX) and site.function == "__torch_function__" and \
            path_of(site.file).endswith(_NON_STRICT):
        return _named(_FUNCTION_NAMES, site.detail[len(FUNCTION_PREFIX):])
    return None


def _named(index: Mapping[str, tuple[str, int]], name: str) -> str | None:
    found = index.get(name)
    return found[0] if found is not None and _enabled(found[1]) else None
