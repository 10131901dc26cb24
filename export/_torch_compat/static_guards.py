"""The guards torch would not have recorded had its trace started with narrower ranges
(issue 35: a program verified by replay must be the re-export's, its guards included).

torch records a guard on a symbolic size only when it cannot decide it statically: from its
ranges (``ShapeEnv.var_to_range``: at fakify, the ``Dim``'s ``[min, max]`` and a floor of 2)
and the guards recorded before it (as axioms). A failing trace's program, replayed under a
fixed spec with narrower bounds, still holds the guards its wider ranges left open: the
fix's ``Dim(max=6)`` makes ``x.size(0) <= 6`` static to a re-export, which never records it,
while the failing trace did, and ``ep.module()`` checks it again (``_guards_code``). Every
such guard is implied by the fixed spec's ranges, which the program checks itself.

:func:`drop_static_guards` walks the recorded guards in their order, each decided by torch's
``_maybe_evaluate_static`` over the narrower ranges, with the guards kept before it as its
axioms and the ranges they refine (torch's ``_refine_ranges``: a one-symbol bound narrows
that symbol's range), and drops the ones the narrowing decides (not the ones the traced
spec's ranges decide too), their code with them. It changes nothing
else in the ShapeEnv (its ranges, divisibility and caches are as they were).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy
import torch
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.utils._sympy.solve import try_solve
from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

from export._torch_compat.program import drop_guards, shape_env_of
from export._torch_compat.symbols import value_range

__all__ = ["drop_static_guards", "SIZE_FLOOR"]

SIZE_FLOOR = 2
"""The least value torch gives a backed size symbol's range at fakify (sizes 0 and 1 are
specialized)."""


def drop_static_guards(program: torch.export.ExportedProgram,
                       ranges: Mapping[sympy.Symbol, tuple[int | None, int | None]],
                       traced: Mapping[sympy.Symbol, tuple[int | None, int | None]]) -> int:
    """Drop the guards of ``program`` that torch would have decided statically had its trace
    started with ``ranges`` (torch symbol of an input size -> the fixed spec's ``(lo, hi)``,
    None unbounded; floored at :data:`SIZE_FLOOR` as torch does) and did not decide from the
    ``traced`` spec's ranges: decided by the narrowing, not by what torch learnt later in the
    trace (an equality guard is true once torch replaced one dim's symbol by the other's, and
    a re-export of the equality records it too). Returns how many."""
    env = shape_env_of(program)
    if env is None or not env.guards or not ranges:
        return 0
    new, old = _start(env.var_to_range, ranges), _start(env.var_to_range, traced)
    full = set(env.divisible)
    kept: list[sympy.Basic] = []
    before: list[sympy.Basic] = []
    decided: list[sympy.Basic] = []
    try:
        env.divisible = set()  # each guard as torch met it: the divisibility of the guards before it
        for guard in env.guards:
            if _static(env, guard.expr, kept, new) and not _static(env, guard.expr, before, old):
                decided.append(guard.expr)
            else:
                kept.append(guard.expr)
                _refine(env, guard.expr, new)
            before.append(guard.expr)
            _refine(env, guard.expr, old)
            env.divisible |= {m for m in full if guard.expr.has(m)}
    finally:
        env.divisible = full
        _clear(env)
    if not decided:
        return 0
    gone = set(decided)
    dropped = drop_guards(program, lambda e: e not in gone)
    env.guards[:] = [g for g in env.guards if g.expr not in gone]
    return dropped


def _start(current: Mapping[sympy.Symbol, Any], ranges: Mapping[sympy.Symbol, tuple[int | None, int | None]]
           ) -> dict[sympy.Symbol, Any]:
    """torch's ranges at fakify: ``ranges`` floored at :data:`SIZE_FLOOR`, the rest as they are."""
    out = dict(current)
    for sym, (lo, hi) in ranges.items():
        if sym in out:
            out[sym] = value_range(max(lo if lo is not None else 0, SIZE_FLOOR), hi)
    return out


def _static(env: ShapeEnv, guard: sympy.Basic, axioms: list[sympy.Basic], ranges: Mapping[sympy.Symbol, Any]) -> bool:
    """Whether torch decides ``guard`` true without recording it, over ``ranges`` and ``axioms``."""
    _clear(env)
    verdict = ShapeEnv._maybe_evaluate_static(env, guard, axioms=tuple(axioms), var_to_range=tuple(ranges.items()))
    return verdict is not None and bool(verdict)


def _clear(env: ShapeEnv) -> None:
    for fn in (ShapeEnv._maybe_evaluate_static, ShapeEnv.simplify):
        clear = getattr(fn, "cache_clear", None)
        if clear is not None:
            clear()


def _refine(env: ShapeEnv, guard: sympy.Basic, ranges: dict[sympy.Symbol, Any]) -> None:
    """Narrow ``ranges`` by a kept ``guard`` the way torch's ``_refine_ranges`` narrows its own
    when it records one: a relation solved for one of its symbols bounds it by the range of
    the other side."""
    expr = env.simplify(guard)
    for sym in expr.free_symbols:
        if not isinstance(sym, sympy.Symbol) or sym not in ranges:
            continue
        solved = try_solve(expr, sym)
        if solved is None or not (sym.is_integer and solved[1].is_integer):
            continue
        rel, rhs = solved
        vr = ranges[sym]
        lower, upper = vr.lower, vr.upper
        other = bound_sympy(rhs, ranges)
        if lower <= other.lower and isinstance(rel, (sympy.Eq, sympy.Ge, sympy.Gt)):
            lower = other.lower + int(isinstance(rel, sympy.Gt))
        if upper >= other.upper and isinstance(rel, (sympy.Eq, sympy.Le, sympy.Lt)):
            upper = other.upper - int(isinstance(rel, sympy.Lt))
        ranges[sym] = ValueRanges(lower, upper) & vr
