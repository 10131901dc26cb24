"""The one module that touches torch's private symbolic-shape APIs (torch 2.13 and 2.14).

Everything here is version-gated: importing this module with a torch outside
``[2.13, 2.15)`` raises :class:`export.errors.UnsupportedTorchVersionError`. See
``docs/torch_internals.md`` for the torch internals (with line numbers) this relies on,
and for what differs between the supported versions. Per-version differences live in
this module only, in the "Per-version differences" section below (:data:`TORCH_VERSION`).

What an exporter bridge needs:

* :class:`RoutingShapeEnv` -- a ``ShapeEnv`` subclass whose guard entry points ask a
  :class:`Decider` first (``decider=None`` keeps torch's vanilla behaviour);
* :func:`route_shape_env` / :func:`install_shape_env_class` -- make ``torch.export.export``
  (non-strict and ``strict=True``) build that subclass for the duration of a ``with``;
* :func:`shape_env_of`, :func:`set_range_constraints`, :func:`value_range`,
  :func:`range_bounds`, :func:`symbol_kind` -- reading and writing the results;
* torch's sympy function classes, re-exported for :mod:`export.convert`;
* pytrees (:func:`tree_flatten_with_path`, :func:`keystr`, :func:`key_entry` ...), torch's
  source names of input sizes (:func:`size_source`) and the kinds of ``Dim`` objects
  (:func:`is_dim_hint`, :func:`is_derived_dim`), for the rest of :mod:`export`, which
  never touches a private torch name itself (``tests/test_layering.py`` checks).

Thread-safety: the install functions patch module globals of torch, which is
process-wide, so they hold one process-wide re-entrant lock for the whole ``with``:
routed exports from several threads run one at a time, nesting on one thread works, and
when the last block ends torch's original globals are back (identical objects), under
any order of exits and any exception. See ``docs/design.md`` ("Threads and archives").
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import importlib
import linecache
import operator
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

import sympy
import torch

from export.errors import InconsistentDecisionError, UnsupportedTorchVersionError

SUPPORTED_TORCH: tuple[tuple[int, int], tuple[int, int]] = ((2, 13), (2, 15))
"""Supported torch versions: ``lower <= (major, minor) < upper`` (pyproject says the same)."""


def check_torch_version(version: str) -> tuple[int, int]:
    """``(major, minor)`` of ``version``; raise :class:`UnsupportedTorchVersionError`
    unless it is supported.

    >>> check_torch_version("2.13.0+cpu")
    (2, 13)
    >>> check_torch_version("2.14.1+cu130")
    (2, 14)
    >>> check_torch_version("2.15.0")
    Traceback (most recent call last):
    ...
    export.errors.UnsupportedTorchVersionError: torch 2.15.0 is not supported: ...
    """
    (lo, hi) = SUPPORTED_TORCH
    m = re.match(r"(\d+)\.(\d+)(?!\d)", version)
    found = (int(m[1]), int(m[2])) if m else None
    if found is None or not lo <= found < hi:
        wanted = f"torch>={lo[0]}.{lo[1]},<{hi[0]}.{hi[1]}"
        raise UnsupportedTorchVersionError(
            f"torch {version} is not supported: symshape overrides torch's private "
            f"symbolic-shape internals and is verified on {wanted} only; install a "
            f"supported torch (pip install '{wanted}')"
        )
    return found


TORCH_VERSION: tuple[int, int] = check_torch_version(torch.__version__)
"""``(major, minor)`` of the installed torch, inside :data:`SUPPORTED_TORCH`."""

# Per-version differences -------------------------------------------------------------
# torch 2.13 -> 2.14: none in what this module touches (measured by diffing the two
# installs, docs/torch_internals.md section 6): the install sites, the signatures and
# bodies of evaluate_expr / _inner_evaluate_expr / _evaluate_expr /
# guard_or_defer_runtime_assert / create_symbol's 0/1 specialization /
# create_unbacked_symint / _update_var_to_range / _set_replacement / _refine_ranges, the
# symbolic-context dataclasses and torch's sympy functions are the same, so no code
# below branches on the version. A future difference goes here, as a function named
# after what it adapts that branches on TORCH_VERSION, and is listed in that section;
# tests/export/test_torch_compat.py checks the overridden signatures against the
# installed torch.

# Private torch imports: only after the version gate.
from torch.fx.experimental import symbolic_shapes as _ss  # noqa: E402
from torch.fx.experimental.symbolic_shapes import (  # noqa: E402
    ConstraintViolationError,
    DimDynamic,
    GuardOnDataDependentSymNode,
    ShapeEnv,
)
from torch.utils._sympy.functions import (  # noqa: E402
    CeilToInt,
    CleanDiv,
    FloorDiv,
    FloorToInt,
    Identity,
    IntTrueDiv,
    IsNonOverlappingAndDenseIndicator,
    LShift,
    Max,
    Min,
    Mod,
    ModularIndexing,
    PowByNatural,
    PythonMod,
    RoundToInt,
    RShift,
    TruncToInt,
    Where,
)
from torch.utils._sympy.numbers import int_oo  # noqa: E402
from torch.utils._sympy.symbol import SymT, symbol_is_type  # noqa: E402
from torch.utils._sympy.value_ranges import ValueRanges  # noqa: E402
from torch._guards import TracingContext  # noqa: E402
from torch.export.dynamic_shapes import _DerivedDim, _DimHint  # noqa: E402
from torch.utils import _pytree as _pytree  # noqa: E402

__all__ = [
    "SUPPORTED_TORCH",
    "TORCH_VERSION",
    "SHAPE_ENV_SITES",
    "check_torch_version",
    "Decider",
    "BaseDecider",
    "RoutingShapeEnv",
    "install_shape_env_class",
    "route_shape_env",
    "shape_env_of",
    "set_range_constraints",
    "add_size_asserts",
    "dynamo_stack",
    "symbol_origin_frames",
    "value_range",
    "range_bounds",
    "symbol_kind",
    "symbol_range",
    "symbol_hint",
    "unbacked_symbols_with_stacks",
    "decider_of",
    "sym_expr",
    "recorded_guards",
    "tree_flatten_with_path",
    "tree_map",
    "tree_map_with_path",
    "keystr",
    "key_entry",
    "SizeSource",
    "size_source",
    "is_dim_hint",
    "is_derived_dim",
    # dynamic_shapes forms new in torch 2.14
    "is_shapes_spec", "decorated_dynamic_shapes", "shapes_spec_leaves", "shapes_spec_assumptions",
    "spec_symbol_range", "normalize_kwargs_shapes", "decorator_resolved",
    "ShapeEnv",
    "ConstraintViolationError",
    "GuardOnDataDependentSymNode",
    # torch's sympy functions (for export.convert)
    "FloorDiv", "CleanDiv", "ModularIndexing", "PythonMod", "Mod", "IntTrueDiv",
    "FloorToInt", "CeilToInt", "TruncToInt", "RoundToInt", "PowByNatural", "Max", "Min",
    "Where", "Identity", "LShift", "RShift", "IsNonOverlappingAndDenseIndicator", "int_oo",
]

SHAPE_ENV_SITES: tuple[str, ...] = (
    "torch._export.non_strict_utils",  # make_fake_inputs: the non-strict ShapeEnv
    "torch._dynamo.output_graph",  # OutputGraph.__init__: the strict (dynamo) ShapeEnv
    "torch.export._trace",  # _extract_fake_inputs fallback (no fake inputs found)
    "torch._dynamo.eval_frame",  # dynamo export of a function without tensor ops
)
"""Modules whose global name ``ShapeEnv`` export calls to construct its ShapeEnv."""


# ---------------------------------------------------------------------------------------
# Deciders


class Decider(Protocol):
    """What :class:`RoutingShapeEnv` asks. ``None`` answers mean "let torch decide".

    Optional extra hooks, called only if the object has them:
    ``attach(shape_env) -> bool | None`` (the env was built and routes to this decider;
    returning False declines it, and that env decides on its own),
    ``on_symbol(expr, source_name, value) -> None`` (an input size/stride became the
    symbolic ``expr``, with example ``value``),
    ``on_replacement(symbol, expr, reason) -> None`` (torch unified a symbol) and
    ``on_constraint_violation(message) -> bool`` (True suppresses torch's own
    "Constraints violated" / forced-specialization error; the bridge must report) and
    ``on_neutral(expr, hint, api) -> bool`` (True: answer the example value ``hint``
    with no guard recorded, because either answer yields a right program).
    """

    def on_guard(self, expr: sympy.Basic, hint: bool | None, api: str) -> bool | None:
        """Decide a guard (a torch sympy boolean); ``hint`` is its value on the example."""

    def on_static(self, expr: sympy.Basic) -> bool | None:
        """Answer a guard-free "is this statically known?" query, or None if unknown."""

    def on_specialize(self, source_name: str, value: int) -> None:
        """An input size/stride/offset (``source_name``) became the constant ``value``."""

    def on_range_update(self, symbol: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        """torch's range for ``symbol`` is now ``[lo, hi]`` (None = unbounded)."""


class BaseDecider:
    """A decider that decides nothing: subclass and override what you need."""

    def on_guard(self, expr: sympy.Basic, hint: bool | None, api: str) -> bool | None:
        return None

    def on_static(self, expr: sympy.Basic) -> bool | None:
        return None

    def on_specialize(self, source_name: str, value: int) -> None:
        return None

    def on_range_update(self, symbol: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        return None


# ---------------------------------------------------------------------------------------
# Ranges and symbols


def value_range(lo: int | None, hi: int | None) -> ValueRanges:
    """torch's ``ValueRanges`` for ``[lo, hi]``; None means unbounded (``int_oo``)."""
    return ValueRanges(-int_oo if lo is None else lo, int_oo if hi is None else hi)


def range_bounds(vr: ValueRanges) -> tuple[int | None, int | None]:
    """``(lo, hi)`` of a torch ``ValueRanges`` as Python ints, None for infinite bounds."""

    def conv(b: Any) -> int | None:
        if b in (int_oo, -int_oo, sympy.oo, -sympy.oo):
            return None
        return int(b)

    return conv(vr.lower), conv(vr.upper)


def symbol_kind(sym: sympy.Symbol) -> str:
    """``"backed"`` (input size ``s*``), ``"unbacked"`` (``u*``, e.g. from ``.item()``),
    ``"float"`` or ``"other"``."""
    if symbol_is_type(sym, SymT.SIZE):
        return "backed"
    if symbol_is_type(sym, SymT.UNBACKED_INT):
        return "unbacked"
    if symbol_is_type(sym, (SymT.FLOAT, SymT.UNBACKED_FLOAT)):
        return "float"
    return "other"


def _bool_answer(value: bool) -> sympy.Basic:
    return sympy.true if value else sympy.false


# ---------------------------------------------------------------------------------------
# The routing ShapeEnv


class RoutingShapeEnv(ShapeEnv):
    """A ``ShapeEnv`` whose symbolic decisions are offered to ``self.decider`` first.

    Injection points (torch 2.13 and 2.14, see docs/torch_internals.md):

    * :meth:`evaluate_expr` -- every backed guard (``guard_bool/int/float``,
      ``guard_size_oblivious``, ``guard_or_false/true``, produce_guards' equalities);
    * :meth:`guard_or_defer_runtime_assert` -- ``torch._check`` / ``expect_true`` on
      unbacked or deferred expressions;
    * :meth:`_maybe_evaluate_static` -- guard-free queries (``statically_known_true``);
    * :meth:`create_symbol` / :meth:`create_unbacked_symint` -- specialization
      (0/1, static dims) and fresh symbols' initial ranges;
    * :meth:`_update_var_to_range`, :meth:`_set_replacement` -- notifications;
    * :meth:`produce_guards_verbose` -- torch's constraint-violation errors.

    A decided answer is still *recorded* by torch (guard, replacement, range refinement
    or deferred runtime assert), so the ExportedProgram stays consistent with it. Calls
    torch makes while recording a decision are not offered again (``_routing_depth``).
    """

    decider: Decider | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._routing_depth = 0
        super().__init__(*args, **kwargs)

    # -- helpers ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _passthrough(self) -> Iterator[None]:
        self._routing_depth += 1
        try:
            yield
        finally:
            self._routing_depth -= 1

    def _router(self) -> Decider | None:
        if self.decider is None or vars(self).get("_routing_depth", 0):
            return None
        return self.decider

    def _backed_hint(self, expr: sympy.Basic) -> Any:
        """The value of ``expr`` on the example inputs, or None if it has unbacked symbols.
        Memoized per expression: the example inputs do not change during a trace."""
        cache: dict[sympy.Basic, Any] = self.__dict__.setdefault("_symshape_hints", {})
        if expr in cache:
            return cache[expr]
        value: Any = None
        if expr.free_symbols <= self.backed_var_to_val.keys():
            try:
                v = expr.xreplace(self.backed_var_to_val)
            except Exception:  # noqa: BLE001 - a hint is best-effort
                v = None
            if v in (sympy.true, sympy.false):
                value = bool(v)
            elif v is not None and v.is_number:
                value = v
        cache[expr] = value
        return value

    # -- guards ----------------------------------------------------------------------

    def evaluate_expr(
        self,
        orig_expr: sympy.Basic,
        hint: int | bool | float | None = None,
        fx_node: torch.fx.Node | None = None,
        size_oblivious: bool = False,
        fallback_value: bool | None = None,
        *,
        forcing_spec: bool = False,
    ) -> sympy.Basic:
        decider = self._router()

        def vanilla(h: Any = hint) -> sympy.Basic:
            self._routing_depth += 1  # (inline, not the context manager: this is the hot path)
            try:
                return ShapeEnv.evaluate_expr(
                    self, orig_expr, h, fx_node, size_oblivious, fallback_value, forcing_spec=forcing_spec
                )
            finally:
                self._routing_depth -= 1

        if decider is None or not orig_expr.free_symbols:
            return vanilla()
        is_bool = isinstance(orig_expr, sympy.logic.boolalg.Boolean)
        value = hint if hint is not None else self._backed_hint(orig_expr)
        if size_oblivious:
            api = "guard_size_oblivious"
        elif fallback_value is not None:
            api = "guard_or_true" if fallback_value else "guard_or_false"
        else:
            api = "guard_bool" if is_bool else "guard_int"
        if not is_bool:  # an int/float evaluation specializes: expr == value
            if value is None:
                return vanilla()  # unbacked: torch raises its data-dependent error
            answer = decider.on_guard(sympy.Eq(orig_expr, value), True, api)
            if answer is not None and not answer:
                raise InconsistentDecisionError(
                    f"{api}({orig_expr}) must specialize to the example value {value}, "
                    "but the decider refused"
                )
            return vanilla()
        hint_b = None if value is None else bool(value)
        if hint_b is not None:
            neutral = getattr(decider, "on_neutral", None)
            if neutral is not None and neutral(orig_expr, hint_b, api):
                return _bool_answer(hint_b)  # the example's answer, no guard: either answer is right
        answer = decider.on_guard(orig_expr, hint_b, api)
        if answer is None:
            return vanilla()
        answer = bool(answer)
        if hint_b is not None and answer != hint_b:
            raise InconsistentDecisionError(
                f"decider answered {answer} for {orig_expr}, but it is {hint_b} on the example inputs"
            )
        if hint_b is not None:
            got = vanilla(answer)
        elif fallback_value is not None and answer == fallback_value:
            return _bool_answer(answer)  # torch's own semantics: no assert needed
        else:
            rel = orig_expr if answer else sympy.Not(orig_expr)
            with self._passthrough():
                got = super().guard_or_defer_runtime_assert(rel, f"symshape {api}: {orig_expr}")
            got = _bool_answer(answer if got else not answer)
        if bool(got) != answer:
            raise InconsistentDecisionError(
                f"decider answered {answer} for {orig_expr}, but torch knows it is {bool(got)}"
            )
        return got

    def guard_or_defer_runtime_assert(  # type: ignore[override]  # torch's is lru_cache-wrapped
        self, orig_expr: sympy.Basic, msg: str, fx_node: torch.fx.Node | None = None
    ) -> bool:
        decider = self._router()
        if decider is None or not orig_expr.free_symbols:
            with self._passthrough():
                return super().guard_or_defer_runtime_assert(orig_expr, msg, fx_node)
        hint = self._backed_hint(orig_expr)
        answer = decider.on_guard(orig_expr, None if hint is None else bool(hint), "runtime_assert")
        if answer is not None and not answer:
            return False  # the caller (torch._check) raises its own error
        with self._passthrough():
            ok = super().guard_or_defer_runtime_assert(orig_expr, msg, fx_node)
        if answer and not ok:
            raise InconsistentDecisionError(
                f"decider accepted the assertion {orig_expr}, but torch knows it is False"
            )
        return ok

    def _maybe_evaluate_static(  # type: ignore[override]  # torch's is lru_cache-wrapped
        self,
        expr: sympy.Basic,
        *,
        unbacked_only: bool = False,
        compute_hint: bool = False,
        size_oblivious: bool = False,
        axioms: tuple[sympy.Basic] | None = None,
        var_to_range: tuple[tuple[sympy.Symbol, ValueRanges]] | None = None,
    ) -> sympy.Basic | None:
        result = super()._maybe_evaluate_static(
            expr,
            unbacked_only=unbacked_only,
            compute_hint=compute_hint,
            size_oblivious=size_oblivious,
            axioms=axioms,
            var_to_range=var_to_range,
        )
        decider = self._router()
        if (
            decider is None
            or unbacked_only
            or compute_hint
            or size_oblivious
            or axioms is not None
            or var_to_range is not None
            or not isinstance(expr, sympy.logic.boolalg.Boolean)
            or not expr.free_symbols
        ):
            return result
        answer = decider.on_static(expr)
        if answer is None:
            return result
        if result is not None and bool(result) != bool(answer):
            raise InconsistentDecisionError(
                f"decider answered {bool(answer)} for {expr}, but torch knows it is {bool(result)}"
            )
        return _bool_answer(bool(answer))

    # torch calls self._maybe_evaluate_static.cache_clear() (in _refine_ranges).
    _maybe_evaluate_static.cache_clear = ShapeEnv._maybe_evaluate_static.cache_clear  # type: ignore[attr-defined]
    _maybe_evaluate_static.cache_info = ShapeEnv._maybe_evaluate_static.cache_info  # type: ignore[attr-defined]

    # -- symbols, ranges, replacements -------------------------------------------------

    def create_symbol(
        self,
        val: Any,
        source: Any,
        dynamic_dim: DimDynamic = DimDynamic.DUCK,
        constraint_dim: Any = None,
        positive: bool | None = True,
        do_not_specialize_zero_one: bool = False,
        symbolic_context: Any = None,
    ) -> sympy.Expr:
        out = super().create_symbol(
            val, source, dynamic_dim, constraint_dim, positive, do_not_specialize_zero_one,
            symbolic_context,
        )
        if self.decider is not None:
            if out.is_number:
                self.decider.on_specialize(source.name, int(out) if out.is_Integer else out)
            else:
                hook = getattr(self.decider, "on_symbol", None)
                if hook is not None:
                    hook(out, source.name, val)
                if isinstance(out, sympy.Symbol) and out in self.var_to_range:
                    self.decider.on_range_update(out, *range_bounds(self.var_to_range[out]))
        return out

    def create_unbacked_symint(self, source: Any = None) -> torch.SymInt:
        out = super().create_unbacked_symint(source)
        if self.decider is not None:
            sym = out.node.expr
            self.decider.on_range_update(sym, *range_bounds(self.var_to_range[sym]))
        return out

    def _update_var_to_range(
        self, symbol: sympy.Symbol, vr: ValueRanges, vr_sloc: Any = None, *, is_constraint: bool = False
    ) -> None:
        super()._update_var_to_range(symbol, vr, vr_sloc, is_constraint=is_constraint)
        if self.decider is not None:
            self.decider.on_range_update(symbol, *range_bounds(self.var_to_range[symbol]))

    def _set_replacement(self, a: sympy.Symbol, tgt: sympy.Expr, msg: str) -> None:
        super()._set_replacement(a, tgt, msg)
        hook = getattr(self.decider, "on_replacement", None)
        if hook is not None and self.replacements.get(a) == tgt:
            hook(a, tgt, msg)

    # -- torch's constraint-violation errors -----------------------------------------

    def produce_guards_verbose(self, *args: Any, **kwargs: Any) -> Any:
        hook: Callable[[str], bool] | None = getattr(self.decider, "on_constraint_violation", None)
        if hook is None:
            return super().produce_guards_verbose(*args, **kwargs)
        try:
            out = super().produce_guards_verbose(*args, **kwargs)
        except ConstraintViolationError as e:
            if not hook(str(e)):
                raise
            # Re-run with warn-only constraints to get the guard code dynamo needs.
            out = super().produce_guards_verbose(*args, **_warn_only_kwargs(kwargs))
        _route_forced_specializations(self, hook)
        return out


def _warn_only(c: Any) -> Any:
    if c is None or isinstance(c, type) or not dataclasses.is_dataclass(c) or getattr(c, "warn_only", True):
        return c
    instance: Any = c
    return dataclasses.replace(instance, warn_only=True)


def _warn_only_context(ctx: Any) -> Any:
    if isinstance(ctx, _ss.StatelessSymbolicContext):
        new = copy.copy(ctx)
        for field in ("constraint_sizes", "constraint_strides"):
            cs = getattr(ctx, field)
            if cs is not None:
                object.__setattr__(new, field, [_warn_only(c) for c in cs])
        return new
    if isinstance(ctx, _ss.SymIntSymbolicContext):
        return dataclasses.replace(ctx, constraint=_warn_only(ctx.constraint))
    return ctx


def _warn_only_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    out = dict(kwargs)
    if out.get("input_contexts") is not None:
        out["input_contexts"] = [_warn_only_context(c) for c in out["input_contexts"]]
    if out.get("equalities_inputs") is not None:
        out["equalities_inputs"] = _warn_only(out["equalities_inputs"])
    return out


def _route_forced_specializations(env: ShapeEnv, hook: Callable[[str], bool]) -> None:
    """Offer export's forced-specialization error (raised after dim_constraints.solve())
    to ``hook``; if it returns True, report none to torch."""
    dc = env.dim_constraints
    if dc is None:
        return
    original = dc.forced_specializations

    def forced_specializations() -> dict[str, sympy.Expr]:
        forced = original()
        if forced and hook(
            "Constraints violated: export forced specializations "
            + ", ".join(f"{k} = {v}" for k, v in forced.items())
        ):
            return {}
        return forced

    dc.forced_specializations = forced_specializations  # type: ignore[method-assign]


# ---------------------------------------------------------------------------------------
# Installing the class


class _Patches:
    """The process-wide bookkeeping of :func:`install_shape_env_class`: one re-entrant lock
    (serializes routed exports across threads, lets one thread nest them) and the stack of
    open installs with the originals found under the first one.

    The globals always hold the class of the innermost open install, or torch's originals
    when none is open, whatever order the installs end in (an inner one may outlive its
    outer one when ``__enter__``/``__exit__`` are called by hand).
    """

    __slots__ = ("lock", "stack", "originals")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.stack: list[tuple[object, type[ShapeEnv]]] = []
        self.originals: list[Any] = []

    def push(self, token: object, cls: type[ShapeEnv], modules: list[Any]) -> None:
        if not self.stack:
            self.originals = [getattr(m, "ShapeEnv") for m in modules]
        self.stack.append((token, cls))
        self._bind(modules)

    def pop(self, token: object, modules: list[Any]) -> None:
        self.stack = [entry for entry in self.stack if entry[0] is not token]
        self._bind(modules)
        if not self.stack:
            self.originals = []

    def _bind(self, modules: list[Any]) -> None:
        for i, m in enumerate(modules):
            setattr(m, "ShapeEnv", self.stack[-1][1] if self.stack else self.originals[i])


_PATCHES = _Patches()
"""The only module-level mutable state: torch's globals are process-wide, so is their guard."""


@contextlib.contextmanager
def install_shape_env_class(cls: type[ShapeEnv]) -> Iterator[None]:
    """Make torch.export build ``cls`` instead of ``ShapeEnv`` inside the ``with``.

    Patches the global ``ShapeEnv`` of every module in :data:`SHAPE_ENV_SITES` and, when
    the last open ``with`` ends (normally or by an exception), puts torch's originals back
    (the identical objects). Holds a process-wide re-entrant lock for the whole block:
    another thread's install waits until this one ends, while the same thread may nest
    (an inner block's class is in force until it ends, in any order).
    """
    if not (isinstance(cls, type) and issubclass(cls, ShapeEnv)):
        raise TypeError(f"{cls!r} is not a subclass of torch's ShapeEnv")
    modules = [importlib.import_module(name) for name in SHAPE_ENV_SITES]
    token = object()
    with _PATCHES.lock:
        _PATCHES.push(token, cls, modules)
        try:
            yield
        finally:
            _PATCHES.pop(token, modules)


@contextlib.contextmanager
def route_shape_env(
    decider: Decider | None, cls: type[RoutingShapeEnv] = RoutingShapeEnv, *, specialize_zero_one: bool = True
) -> Iterator[list[RoutingShapeEnv]]:
    """Route the decisions of exports inside the ``with`` to ``decider``.

    ``specialize_zero_one=False`` builds the ShapeEnvs with torch's own switch off: an
    example size 0/1 on a dynamic dim stays symbolic and sizes get no ``>= 2`` default
    range (the boundary re-trace of :mod:`export.zero_one`).

    Yields the list of ShapeEnvs torch creates meanwhile, in creation order. One export
    may create several (``torch.cond`` in non-strict mode traces its branches with
    dynamo, which builds its own; dynamo restarts); :func:`shape_env_of` finds the one
    behind the resulting program. Routed exports are serialized process-wide (see
    :func:`install_shape_env_class`); a ShapeEnv another thread builds meanwhile (a plain
    ``torch.export.export`` there) gets no decider, i.e. torch's vanilla behaviour.

    >>> with route_shape_env(BaseDecider()) as envs:  # doctest: +SKIP
    ...     ep = torch.export.export(model, args, dynamic_shapes=shapes)
    """
    created: list[RoutingShapeEnv] = []
    owner = threading.get_ident()

    def __init__(self: RoutingShapeEnv, *args: Any, **kwargs: Any) -> None:
        if not specialize_zero_one:
            kwargs["specialize_zero_one"] = False
        cls.__init__(self, *args, **kwargs)
        if threading.get_ident() != owner:
            return  # another thread's plain torch.export meanwhile: vanilla (decider None)
        self.decider = decider
        created.append(self)
        attach = getattr(decider, "attach", None)
        if attach is not None and attach(self) is False:
            self.decider = None  # the decider declined this env (e.g. a nested dynamo trace)

    bound = type(f"Routed{cls.__name__}", (cls,), {"__init__": __init__, "__module__": __name__})
    with install_shape_env_class(bound):
        yield created


# ---------------------------------------------------------------------------------------
# Reading and writing a finished export


def shape_env_of(program: Any) -> ShapeEnv | None:
    """The ShapeEnv behind an ExportedProgram or GraphModule, found via its SymInts.

    Returns None when the graph carries no symbolic values (a fully static export).
    """
    graph = program.graph
    for node in graph.nodes:
        val = node.meta.get("val")
        vals = val if isinstance(val, (list, tuple)) else [val]
        for v in vals:
            syms: list[Any] = []
            if isinstance(v, torch.Tensor):
                syms = [*v.shape, *v.stride(), v.storage_offset()]
            elif isinstance(v, (torch.SymInt, torch.SymBool, torch.SymFloat)):
                syms = [v]
            for s in syms:
                env = getattr(getattr(s, "node", None), "shape_env", None)
                if env is not None:
                    return env
    return None


def set_range_constraints(
    program: torch.export.ExportedProgram,
    ranges: Mapping[sympy.Symbol, tuple[int | None, int | None]],
) -> None:
    """Replace ``program.range_constraints`` (whose public setter raises).

    ``ranges`` maps torch symbols to ``(lo, hi)`` (None = unbounded). These are what
    ``program.module()`` checks inputs against at call time.
    """
    program._range_constraints = {s: value_range(lo, hi) for s, (lo, hi) in ranges.items()}


def add_size_asserts(program: torch.export.ExportedProgram, checks: list[tuple[str, int, str, int, str]]) -> int:
    """Insert runtime checks on input sizes into ``program``'s graph.

    Each check is ``(placeholder_name, dim, op, bound, message)`` with ``op`` in
    ``>= <= ==``; it becomes ``_assert_scalar(sym_size(x, dim) op bound, message)`` right
    after the placeholders, so ``program.module()`` and a saved/loaded program enforce it.
    torch itself leaves lower bounds <= 2 unchecked. Returns the number inserted.
    """
    ops = {">=": operator.ge, "<=": operator.le, "==": operator.eq}
    graph = program.graph_module.graph
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    anchor = list(placeholders.values())[-1] if placeholders else None
    done = 0
    for name, dim, op, bound, message in checks:
        ph = placeholders.get(name)
        val = ph.meta.get("val") if ph is not None else None
        if anchor is None or not isinstance(val, torch.Tensor) or dim >= val.dim():
            continue
        with graph.inserting_after(anchor):
            size = graph.call_function(torch.ops.aten.sym_size.int, (ph, dim))
        with graph.inserting_after(size):
            cond = graph.call_function(ops[op], (size, bound))
        with graph.inserting_after(cond):
            check = graph.call_function(torch.ops.aten._assert_scalar.default, (cond, message))
        size.meta["val"] = val.shape[dim]
        cond.meta["val"] = ops[op](val.shape[dim], bound)
        check.meta["val"] = None
        anchor = check
        done += 1
    if done:
        program.graph_module.recompile()
    return done


def dynamo_stack() -> list[tuple[str, int, str, str]]:
    """The user frames dynamo is tracing (strict mode), innermost last: ``(file, line,
    function, code)``. Empty outside a dynamo trace, where the Python stack is the truth."""
    out = []
    for fr in TracingContext.extract_stack():
        line = fr.line if fr.line else ""
        if not line and fr.lineno:
            line = linecache.getline(fr.filename, fr.lineno).strip()
        out.append((fr.filename, fr.lineno or 0, fr.name, line.strip()))
    return out


def symbol_origin_frames(env: Any, sym: sympy.Symbol) -> list[tuple[str, int, str, str]]:
    """Where torch allocated an unbacked symbol (the ``.item()`` call), innermost last:
    ``(file, line, function, code)``; empty when torch did not record it."""
    captured = getattr(env, "var_to_stack", {}).get(sym)
    if captured is None:
        return []
    try:
        summary = captured.summary()
    except Exception:  # noqa: BLE001 - a best-effort location
        return []
    return [(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip()) for fr in summary]


def symbol_range(env: ShapeEnv, sym: sympy.Symbol) -> tuple[int | None, int | None]:
    """torch's current range of ``sym`` in ``env`` (None = unbounded)."""
    return range_bounds(env.var_to_range[sym])


def symbol_hint(env: ShapeEnv, sym: sympy.Symbol) -> int | None:
    """The example value of a backed symbol of ``env``, or None."""
    value = env.backed_var_to_val.get(sym)
    return None if value is None else int(value)


def unbacked_symbols_with_stacks(env: Any) -> list[sympy.Symbol]:
    """The symbols whose allocation stack ``env`` recorded (see :func:`symbol_origin_frames`)."""
    return list(getattr(env, "var_to_stack", {}) or {})


def recorded_guards(program: Any) -> list[sympy.Basic]:
    """The guards torch recorded in the ShapeEnv behind ``program`` (they become the
    program's own run-time input checks), as torch sympy expressions."""
    env = shape_env_of(program)
    return [g.expr for g in getattr(env, "guards", ())] if env is not None else []


def sym_expr(value: Any) -> sympy.Basic | None:
    """The symbolic expression behind a SymInt/SymBool (torch's symbols), an int as a
    sympy Integer, else None: how a graph node's ``meta["val"]`` reads as a size."""
    if isinstance(value, bool):
        return sympy.true if value else sympy.false
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, (torch.SymInt, torch.SymBool)):
        return value.node.expr
    return None


def decider_of(value: Any) -> Any:
    """The decider of the routed ShapeEnv behind a SymInt (None outside a routed trace)."""
    env = getattr(getattr(value, "node", None), "shape_env", None)
    return getattr(env, "decider", None)


# ---------------------------------------------------------------------------------------
# Pytrees, source names, Dim objects


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[tuple[tuple[Any, ...], Any]]:
    """The leaves of ``tree`` with their key paths (torch's pytree, so the same containers
    as export: dicts, lists, tuples, namedtuples, registered dataclasses).

    >>> [(keystr(p), v) for p, v in tree_flatten_with_path({"a": [1, 2]})]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    flat, _ = _pytree.tree_flatten_with_path(tree, is_leaf=is_leaf)
    return [(tuple(p), v) for p, v in flat]


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with every leaf replaced by ``fn(leaf)``."""
    return _pytree.tree_map(fn, tree)


def tree_map_with_path(fn: Callable[[tuple[Any, ...], Any], Any], tree: Any) -> Any:
    """``tree`` with every leaf replaced by ``fn(key_path, leaf)``."""
    return _pytree.tree_map_with_path(fn, tree)


def keystr(path: tuple[Any, ...]) -> str:
    """A key path as Python source (``['y']['a']``, ``[0]``, ``.n``)."""
    return _pytree.keystr(tuple(path))


def key_entry(entry: Any) -> tuple[str, Any]:
    """One step of a key path: ``("key", k)`` (a mapping key), ``("index", i)`` (a
    sequence position), ``("attr", name)`` (an attribute), or ``("other", entry)``.

    >>> [key_entry(e) for e in tree_flatten_with_path({"a": [1]})[0][0]]
    [('key', 'a'), ('index', 0)]
    """
    if isinstance(entry, _pytree.MappingKey):
        return "key", entry.key
    if isinstance(entry, _pytree.SequenceKey):
        return "index", entry.idx
    if isinstance(entry, _pytree.GetAttrKey):
        return "attr", entry.name
    return "other", entry


@dataclasses.dataclass(frozen=True, slots=True)
class SizeSource:
    """An input size as torch names it: ``L['y']['a'].size()[0]`` (non-strict: ``path``
    is the key path ``['y']['a']`` of the bound arguments) or
    ``L['flat_args'][3].size()[0]`` (strict: ``flat_index`` 3 of the flattened inputs)."""

    dim: int
    path: str | None = None
    flat_index: int | None = None


_SOURCE_DIM = re.compile(r"^(?P<base>.*)\.size\(\)\[(?P<dim>\d+)\]$")
_FLAT_ARG = re.compile(r"L\['flat_args'\]\[(\d+)\]")


def size_source(name: str) -> SizeSource | None:
    """The input size behind torch's source name ``name``; None for anything else
    (strides, storage offsets, locals).

    >>> size_source("L['y']['a'].size()[0]"), size_source("L['flat_args'][3].size()[1]")
    (SizeSource(dim=0, path="['y']['a']", flat_index=None), SizeSource(dim=1, path=None, flat_index=3))
    >>> size_source("L['x'].stride()[0]") is None
    True
    """
    m = _SOURCE_DIM.match(name)
    if m is None:
        return None
    base, dim = m["base"], int(m["dim"])
    flat = _FLAT_ARG.fullmatch(base)
    if flat is not None:
        return SizeSource(dim, flat_index=int(flat[1]))
    if base.startswith("L["):
        return SizeSource(dim, path=base[1:])
    return None


def is_dim_hint(spec: Any) -> bool:
    """Whether ``spec`` is ``Dim.AUTO``, ``Dim.STATIC`` or ``Dim.DYNAMIC`` (possibly
    with a range): it has ``.type.name``, ``.min`` and ``.max``."""
    return isinstance(spec, _DimHint)


def is_derived_dim(spec: Any) -> bool:
    """Whether ``spec`` is a derived ``Dim`` (``2 * b + 1``): it has ``.root`` (a Dim)
    and ``.fn`` (the function of the root's symbol)."""
    return isinstance(spec, _DerivedDim)


# ---------------------------------------------------------------------------------------
# dynamic_shapes forms new in torch 2.14 (absent on 2.13: each function is then the identity)


def _dynamic_spec_module() -> Any:
    """torch's ``dynamic_spec`` module if ``torch.export`` takes its specs (2.14: it has
    ``_resolve_dynamic_shapes``; 2.13 has the module for ``torch.compile`` only), else None."""
    try:
        ds = importlib.import_module("torch.fx.experimental.dynamic_spec")
    except ImportError:
        return None
    return ds if hasattr(ds, "_resolve_dynamic_shapes") else None


def is_shapes_spec(spec: Any) -> bool:
    """``spec`` is a torch 2.14 ``ShapesSpec`` / ``ParamsSpec`` (never on 2.13).

    >>> is_shapes_spec({"x": {0: None}})
    False
    """
    ds = _dynamic_spec_module()
    return ds is not None and isinstance(spec, (ds.ShapesSpec, ds.ParamsSpec))


def decorated_dynamic_shapes(f: Any, dynamic_shapes: Any) -> Any:
    """torch 2.14's own resolution of an ``@dynamic_spec`` on ``f`` (``forward`` for a
    module): its ``ShapesSpec`` if ``dynamic_shapes`` is None; ValueError if both are given."""
    ds = _dynamic_spec_module()
    return dynamic_shapes if ds is None else ds._resolve_dynamic_shapes(f, dynamic_shapes)


def shapes_spec_leaves(f: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any] | None,
                       spec: Any) -> list[tuple[Any, Any]]:
    """``(input leaf, its spec)`` for a ``ShapesSpec``/``ParamsSpec``, bound by torch's own
    ``_bind_spec_to_args`` (the order of ``tree_flatten((args, kwargs))``)."""
    ds = _dynamic_spec_module()
    binding = importlib.import_module("torch.fx.experimental._spec_binding")
    shapes_spec = ds._coerce_to_shapes_spec(spec)
    leaf_specs, flat, _ = binding._bind_spec_to_args(f, args, dict(kwargs or {}), shapes_spec)
    return list(zip(flat, leaf_specs))


def shapes_spec_assumptions(spec: Any) -> list[Any]:
    """The ``assumptions`` of a ``ShapesSpec`` (none for a ``ParamsSpec``)."""
    return list(getattr(spec, "assumptions", []))


def spec_symbol_range(value: Any, sym: sympy.Symbol) -> tuple[int | None, int | None]:
    """The declared range of an ``IntVar``/``ShapeVar`` symbol of a 2.14 spec SymInt."""
    return range_bounds(value.node.shape_env.var_to_range[sym])


def normalize_kwargs_shapes(dynamic_shapes: Any, f: Any, args: tuple[Any, ...],
                            kwargs: Mapping[str, Any] | None) -> Any:
    """torch 2.14's ``_normalize_dynamic_shapes``: a ``**kwargs`` entry given at top level
    by its call-site name moves under the ``**kwargs`` parameter (identity on 2.13)."""
    from_torch = getattr(importlib.import_module("torch.export.dynamic_shapes"), "_normalize_dynamic_shapes", None)
    if from_torch is None:
        return dynamic_shapes
    return from_torch(dynamic_shapes, f, args, dict(kwargs) if kwargs is not None else None)


@contextlib.contextmanager
def decorator_resolved() -> Iterator[None]:
    """Inside the ``with``, ``torch.export.export`` does not apply an ``@dynamic_spec``
    again: symshape resolved it itself and passes the equivalent ``Dim`` spec."""
    ds = _dynamic_spec_module()
    if ds is None:
        yield
        return
    original = ds._resolve_dynamic_shapes
    owner = threading.get_ident()

    def resolve(f: Any, dynamic_shapes: Any) -> Any:
        # another thread's plain torch.export meanwhile: torch's own resolution
        return dynamic_shapes if threading.get_ident() == owner else original(f, dynamic_shapes)

    with _PATCHES.lock:
        ds._resolve_dynamic_shapes = resolve
        try:
            yield
        finally:
            ds._resolve_dynamic_shapes = original
