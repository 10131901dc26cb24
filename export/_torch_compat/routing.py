"""The routing ``ShapeEnv``: torch's guard entry points ask a :class:`Decider` first.

Installed into torch.export by :mod:`export._torch_compat.patches`; the torch internals it
overrides (with line numbers) are in docs/torch_internals.md.
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import dataclasses
import dis
import os
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import sympy
import torch
from torch.fx.experimental import symbolic_shapes as _ss
from torch.fx.experimental.symbolic_shapes import ConstraintViolationError, DimDynamic, ShapeEnv
from torch.utils._sympy.value_ranges import ValueRanges

from export._torch_compat.decider import NEUTRAL, Api, Decider
from export._torch_compat.symbols import range_bounds
from export.errors import InconsistentDecisionError

__all__ = ["RoutingShapeEnv"]


def _bool_answer(value: bool) -> sympy.Basic:
    return sympy.true if value else sympy.false


_EXPORT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _in_python_assert() -> bool:
    """Whether the user code asking (the first frame outside torch and symshape's ``export``
    package) tests the value in a Python ``assert``. torch's non-strict export then makes a
    data-dependent question a runtime assertion (``ShapeEnv._is_python_assert``, whose frame
    walk would stop at this module's frames, and which knows ``assert c`` only, not
    ``assert c, "message"``)."""
    skip = _ss.uninteresting_files()
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename in skip or frame.f_code.co_filename.startswith(_EXPORT_DIR)):
        frame = frame.f_back
    if frame is None:
        return False
    insts = list(dis.get_instructions(frame.f_code))
    cur = bisect.bisect_left([i.offset for i in insts], frame.f_lasti) if sys.version_info >= (3, 11) else frame.f_lasti // 2
    if cur >= len(insts):
        return False
    if sys.version_info >= (3, 13) and insts[cur].opname in ("TO_BOOL", "COMPARE_OP"):
        cur += 1
    seen = [i.opname for i in insts[cur + 1:]]
    return any(seen[:len(want)] == want for want in (  # ``assert c`` and ``assert c, msg`` (torch: the first only)
        torch._dynamo.symbolic_convert.get_assert_bytecode_sequence(False),
        torch._dynamo.symbolic_convert.get_assert_bytecode_sequence(True)))


# ---------------------------------------------------------------------------------------
# The routing ShapeEnv


class RoutingShapeEnv(ShapeEnv):
    """A ``ShapeEnv`` whose symbolic decisions are offered to ``self.decider`` first.

    Injection points (torch 2.13, 2.14 and 2.15, see docs/torch_internals.md):

    * :meth:`evaluate_expr` -- every backed guard (``guard_bool/int/float``,
      ``guard_size_oblivious``, ``guard_or_false/true``, produce_guards' equalities);
    * :meth:`guard_or_defer_runtime_assert` -- ``torch._check`` / ``expect_true`` on
      unbacked or deferred expressions;

      each asks :meth:`Decider.on_question` once per question (called from these
      methods directly: the decider reads the asking site from its caller's frame);
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

    def _is_symbolic(self, expr: sympy.Basic) -> bool:
        """Whether ``expr`` has free symbols. Memoized per expression: ``free_symbols``
        walks the whole tree on every call, and a trace asks the same few hundred
        expressions thousands of times (a third of the routing's own time on GPT-2)."""
        cache: dict[sympy.Basic, bool] = self.__dict__.setdefault("_symshape_symbolic", {})
        known = cache.get(expr)
        if known is None:
            known = cache[expr] = bool(expr.free_symbols)
        return known

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

        if decider is None or not self._is_symbolic(orig_expr) or self._suppress_guards_tls():
            return vanilla()  # (under torch's suppress_guards: the example's answer, and no guard, as torch does)
        is_bool = isinstance(orig_expr, sympy.logic.boolalg.Boolean)
        value = hint if hint is not None else self._backed_hint(orig_expr)
        if size_oblivious:
            api = Api.GUARD_SIZE_OBLIVIOUS
        elif fallback_value is not None:
            api = Api.GUARD_OR_TRUE if fallback_value else Api.GUARD_OR_FALSE
        else:
            api = Api.GUARD_BOOL if is_bool else Api.GUARD_INT
        if not is_bool:  # an int/float evaluation specializes: expr == value
            if value is None:
                return vanilla()  # unbacked: torch raises its data-dependent error
            said = decider.on_question(sympy.Eq(orig_expr, value), True, api)
            if said is NEUTRAL or (said is not None and not said):  # (NEUTRAL: it would record no guard)
                raise InconsistentDecisionError(
                    f"{api}({orig_expr}) must specialize to the example value {value}, "
                    f"but the decider {'answered NEUTRAL' if said is NEUTRAL else 'refused'}"
                )
            return vanilla()
        hint_b = None if value is None else bool(value)
        if hint_b is None and getattr(self, "trace_asserts", False) and _in_python_assert():
            # a data-dependent Python assert: a runtime assertion, as torch's non-strict export makes it
            return _bool_answer(self.guard_or_defer_runtime_assert(orig_expr, f"python assert: {orig_expr}"))
        said = decider.on_question(orig_expr, hint_b, api)
        if said is NEUTRAL:
            if hint_b is None:
                raise InconsistentDecisionError(f"decider answered NEUTRAL for {orig_expr}, which has no example value")
            return _bool_answer(hint_b)  # the example's answer, no guard: either answer is right
        if said is None:
            return vanilla()
        answer = bool(said)
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
        if decider is None or not self._is_symbolic(orig_expr):
            with self._passthrough():
                return super().guard_or_defer_runtime_assert(orig_expr, msg, fx_node)
        hint = self._backed_hint(orig_expr)
        answer = decider.on_question(orig_expr, None if hint is None else bool(hint), Api.RUNTIME_ASSERT)
        if answer is NEUTRAL:
            raise InconsistentDecisionError(f"decider answered NEUTRAL for the assertion {orig_expr}")
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
            or not self._is_symbolic(expr)
        ):
            return result
        answer = decider.on_static(expr, None if result is None else bool(result))
        if answer is NEUTRAL:
            return None  # not statically known: the general path, whatever torch's ranges say
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
        if self.decider is not None and val == 0 and not self.specialize_zero_one:
            positive = None  # a boundary re-trace at size 0: sympy must not fold s == 0 to False unseen
        out = super().create_symbol(
            val, source, dynamic_dim, constraint_dim, positive, do_not_specialize_zero_one,
            symbolic_context,
        )
        if self.decider is not None:
            if out.is_number:
                self.decider.on_specialize(source.name, int(out) if out.is_Integer else out)
            else:
                self.decider.on_symbol(out, source.name, val)
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
        if self.decider is not None and self.replacements.get(a) == tgt:
            self.decider.on_replacement(a, tgt, msg)

    # -- torch's constraint-violation errors -----------------------------------------

    def produce_guards_verbose(self, *args: Any, **kwargs: Any) -> Any:
        if self.decider is None:
            return super().produce_guards_verbose(*args, **kwargs)
        hook = self.decider.on_constraint_violation
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
