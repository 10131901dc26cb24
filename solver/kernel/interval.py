"""Integer interval arithmetic with infinite endpoints, over symbolic-dim expressions.

An interval is a pair ``(lo, hi)``; endpoints are Python ints (or Fractions inside
rational intermediates) or ``-math.inf`` / ``math.inf``. Every function returns a *sound*
over-approximation: each value the expression takes lies inside.

>>> import sympy
>>> from shapes import FloorDiv, int_symbol
>>> n = int_symbol("n")
>>> bound(FloorDiv(3 * n + 1, 2) + sympy.Mod(n, 4), {n: (2, 10)}.__getitem__)
(3, 18)
>>> bound(n * n, {n: (-2, 3)}.__getitem__)
(0, 9)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Union

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import FloorDiv

__all__ = ["Interval", "Endpoint", "bound", "mul", "floor", "ceil", "intersect", "is_empty", "TOP"]

Endpoint = Union[int, float, Fraction]
Interval = tuple[Endpoint, Endpoint]
TOP: Interval = (-math.inf, math.inf)


def floor(v: Endpoint) -> Endpoint:
    """``math.floor`` that keeps infinities."""
    return v if isinstance(v, float) and math.isinf(v) else math.floor(v)


def ceil(v: Endpoint) -> Endpoint:
    """``math.ceil`` that keeps infinities."""
    return v if isinstance(v, float) and math.isinf(v) else math.ceil(v)


def mul(a: Endpoint, b: Endpoint) -> Endpoint:
    """Endpoint product with ``0 * inf == 0`` (the limit that interval products need)."""
    if a == 0 or b == 0:
        return 0
    return a * b


def _div(a: Endpoint, b: Endpoint) -> Endpoint:
    """Endpoint quotient for b != 0, exact (Fraction) for finite values."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(b, float) and math.isinf(b):
            return 0 if not (isinstance(a, float) and math.isinf(a)) else math.copysign(math.inf, a) * math.copysign(1, b)
        return a / b  # inf / finite
    return Fraction(a) / Fraction(b)


def intersect(x: Interval, y: Interval) -> Interval:
    return (max(x[0], y[0]), min(x[1], y[1]))


def is_empty(x: Interval) -> bool:
    return x[0] > x[1]


def _mul_iv(x: Interval, y: Interval) -> Interval:
    c = (mul(x[0], y[0]), mul(x[0], y[1]), mul(x[1], y[0]), mul(x[1], y[1]))
    return (min(c), max(c))


def _pow_iv(x: Interval, n: int) -> Interval:
    if n == 0:
        return (1, 1)
    lo, hi = x
    if n % 2 == 1:
        return (lo**n, hi**n)
    if lo >= 0:
        return (lo**n, hi**n)
    if hi <= 0:
        return (hi**n, lo**n)
    return (0, max(lo**n, hi**n))


def _floordiv_iv(a: Interval, b: Interval) -> Interval:
    if b[0] > 0 or b[1] < 0:
        q = [_div(x, y) for x in a for y in b]
        return (floor(min(q)), floor(max(q)))
    return TOP


def _mod_iv(a: Interval, b: Interval) -> Interval:
    if b[0] == b[1] and isinstance(b[0], int) and b[0] != 0:
        k = b[0]
        if isinstance(a[0], int) and isinstance(a[1], int) and a[0] // k == a[1] // k:
            base = k * (a[0] // k)
            return (a[0] - base, a[1] - base)
        if k > 0:
            return (0, k - 1) if a[0] < 0 else (0, min(k - 1, a[1]))
        return (k + 1, 0)
    if b[0] > 0:
        if a[0] >= 0 and a[1] < b[0]:
            return a  # 0 <= a < b: Mod(a, b) is a
        hi = b[1] - 1
        return (0, hi) if a[0] < 0 else (0, min(hi, a[1]))
    if b[1] < 0:
        return (b[0] + 1, 0)
    return TOP


def bound(expr: sympy.Basic, lookup: Callable[[sympy.Symbol], Interval]) -> Interval:
    """A sound interval for ``expr`` given an interval for each symbol."""
    if expr.is_Integer:
        v = int(expr)
        return (v, v)
    if expr.is_Symbol:
        return lookup(expr)
    if expr.is_Rational:
        q = Fraction(int(expr.p), int(expr.q))
        return (q, q)
    args = expr.args
    if isinstance(expr, sympy.Add):
        lo: Endpoint = 0
        hi: Endpoint = 0
        for a in args:
            x = bound(a, lookup)
            lo, hi = lo + x[0], hi + x[1]
        return (lo, hi)
    if isinstance(expr, sympy.Mul):
        acc: Interval = (1, 1)
        for a in args:
            acc = _mul_iv(acc, bound(a, lookup))
        return acc
    if isinstance(expr, sympy.Pow) and args[1].is_Integer and int(args[1]) >= 0:
        return _pow_iv(bound(args[0], lookup), int(args[1]))
    if isinstance(expr, FloorDiv):
        return _floordiv_iv(bound(args[0], lookup), bound(args[1], lookup))
    if isinstance(expr, sympy.Mod):
        return _mod_iv(bound(args[0], lookup), bound(args[1], lookup))
    if isinstance(expr, sympy.floor):
        x = bound(args[0], lookup)
        return (floor(x[0]), floor(x[1]))
    if isinstance(expr, sympy.Min):
        xs = [bound(a, lookup) for a in args]
        return (min(x[0] for x in xs), min(x[1] for x in xs))
    if isinstance(expr, sympy.Max):
        xs = [bound(a, lookup) for a in args]
        return (max(x[0] for x in xs), max(x[1] for x in xs))
    raise UnsupportedExpressionError(f"no interval rule for {expr}")
