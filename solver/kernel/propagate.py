"""Interval propagation through linear facts the union-find keeps outside its classes.

A linear fact ``sum(a_i * r_i) + c >= 0`` (or ``== 0``) over class leaders bounds each
``r_j`` by what the other terms can reach at most: ``a_j * r_j >= -c - sum(max(a_i * r_i))``.
Every range this narrows is implied by the facts, so deciding by intervals stays sound; the
engine runs it to a fixpoint through the facts that mention a narrowed class, within a fixed
number of fact visits (stopping early only leaves ranges wider, never wrong).

>>> from shapes import int_symbol
>>> x, y = int_symbol("x"), int_symbol("y")
>>> ranges = {x: (0, 100), y: (0, 10)}
>>> sorted(implied(">=", {x: -1, y: 1}, 3, ranges.__getitem__).items(), key=str)   # y + 3 >= x
[(x, (-inf, 13)), (y, (-3, inf))]
"""

from __future__ import annotations

import math
from collections.abc import Callable

import sympy

from solver.kernel.interval import Interval

__all__ = ["implied", "MAX_VISITS"]

MAX_VISITS = 64  # fact visits per new fact


def implied(op: str, coeffs: dict[sympy.Symbol, int], const: int,
            range_of: Callable[[sympy.Symbol], Interval]) -> dict[sympy.Symbol, Interval]:
    """The range each leader must lie in for ``sum(coeffs[r] * r) + const op 0`` (``op`` is
    ``>=`` or ``==``) given the others' ranges; sides that nothing bounds are infinite."""
    out: dict[sympy.Symbol, Interval] = {}
    if op == "==":
        up = _lower_bounds(coeffs, const, range_of)
        down = _lower_bounds({r: -a for r, a in coeffs.items()}, -const, range_of)
        for r in coeffs:
            out[r] = (max(up[r][0], down[r][0]), min(up[r][1], down[r][1]))
        return out
    return _lower_bounds(coeffs, const, range_of)


def _lower_bounds(coeffs: dict[sympy.Symbol, int], const: int,
                  range_of: Callable[[sympy.Symbol], Interval]) -> dict[sympy.Symbol, Interval]:
    """For ``sum(a_i r_i) + const >= 0``: each ``r_j`` from the others' largest values."""
    inf = math.inf
    tops: list[tuple[sympy.Symbol, int, int | float]] = []
    finite, n_inf = 0, 0
    for r, a in coeffs.items():
        lo, hi = range_of(r)
        t = a * hi if a > 0 else a * lo  # the largest a*r can be (inf when unbounded)
        if t == inf:
            n_inf += 1
        else:
            finite += t  # type: ignore[assignment]  # a finite top is an int
        tops.append((r, a, t))
    out: dict[sympy.Symbol, Interval] = {}
    need: int | float
    for r, a, t in tops:
        if t == inf:
            if n_inf > 1:
                out[r] = (-inf, inf)
                continue
            need = -const - finite  # a*r >= need, the others' largest sum being finite
        elif n_inf:
            out[r] = (-inf, inf)
            continue
        else:
            need = -const - (finite - t)
        out[r] = (-(-need // a), inf) if a > 0 else (-inf, need // a)  # ceil / floor of need/a
    return out
