"""The cheap decision stages: canonical form, intervals, congruences.

Every stage has one signature, :data:`Stage`: it takes a :class:`Question` (``lhs op rhs``
over integers) and a :class:`View` of what the union-find knows, and answers a
:class:`~solver.truth.Truth` or ``None`` (this stage cannot tell). The engine runs a list
of them, cheapest first. A stage only answers TRUE or FALSE when it is sound over the
over-approximation it sees; UNKNOWN only when its view of the symbols involved is exact.

Questions in *normal form* have ``rhs == 0``, ``op`` in ``'==', '!=', '>='`` and every
symbol a union-find root (see :func:`solver.kernel.normal_form.normalize`).

>>> import sympy
>>> from shapes import int_symbol
>>> from solver.kernel.normal_form import Question, View
>>> r = int_symbol("r")
>>> by_interval(Question(">=", r - 2), View.of({r: (2, 10)}))
<Truth.TRUE: 'true'>
"""

from __future__ import annotations

import math
from typing import Protocol

import sympy
from sympy.polys.polyfuncs import horner

from shapes.affine import linear_terms
from shapes.errors import UnsupportedExpressionError
from solver.kernel import congruence as cg
from solver.kernel.interval import bound
from solver.kernel.normal_form import ZERO, Question, View
from solver.truth import Truth

__all__ = ["Stage", "by_constant", "by_interval", "by_horner", "by_exact", "by_congruence", "decide_on_values"]


class Stage(Protocol):
    """The one stage signature: decide ``q`` from ``view`` or return None."""

    def __call__(self, q: Question, view: View, /) -> Truth | None: ...


def by_constant(q: Question, view: View) -> Truth | None:
    """Decide a question whose sides are both integers.

    >>> by_constant(Question(">=", sympy.Integer(-1)), View.of({}))
    <Truth.FALSE: 'false'>
    """
    if not (q.lhs.is_Integer and q.rhs.is_Integer):
        return None
    a, b = int(q.lhs), int(q.rhs)
    return Truth.of({"==": a == b, "!=": a != b, ">=": a >= b, ">": a > b, "<=": a <= b, "<": a < b}[q.op])


def decide_on_values(op: str, lo: object, hi: object) -> Truth | None:
    """Decide ``d op 0`` from a sound interval ``[lo, hi]`` of ``d``."""
    if op == ">=":
        if lo >= 0:  # type: ignore[operator]
            return Truth.TRUE
        if hi < 0:  # type: ignore[operator]
            return Truth.FALSE
        return None
    if lo > 0 or hi < 0:  # type: ignore[operator]
        return Truth.FALSE if op == "==" else Truth.TRUE
    if lo == hi == 0:
        return Truth.TRUE if op == "==" else Truth.FALSE
    return None


def by_interval(q: Question, view: View) -> Truth | None:
    """Compare interval bounds of the two sides as written (no rewriting): on a normal form
    this bounds ``d``; on a relation as the tracer wrote it, it settles most size checks
    (``Ne(Min(32, 32*s), 32)``) before any sympy algebra.

    >>> from shapes import int_symbol
    >>> s = int_symbol("s")
    >>> by_interval(Question.of(sympy.Ne(sympy.Min(32, 32 * s), 32)), View.of({s: (2, 64)}))
    <Truth.FALSE: 'false'>
    """
    try:
        lo1, hi1 = bound(q.lhs, view.range_of)
        lo2, hi2 = (0, 0) if q.rhs is ZERO else bound(q.rhs, view.range_of)
    except (UnsupportedExpressionError, ZeroDivisionError, TypeError):
        return None
    op = q.op
    if op in ("==", "!="):
        if hi1 < lo2 or hi2 < lo1:
            t = Truth.FALSE
        elif lo1 == hi1 == lo2 == hi2:
            t = Truth.TRUE
        else:
            return None
        return t if op == "==" else t.negate()
    if op in ("<", ">"):
        small, big = ((lo1, hi1), (lo2, hi2)) if op == "<" else ((lo2, hi2), (lo1, hi1))
        if small[1] < big[0]:
            return Truth.TRUE
        return Truth.FALSE if small[0] >= big[1] else None
    small, big = ((lo1, hi1), (lo2, hi2)) if op == "<=" else ((lo2, hi2), (lo1, hi1))
    if small[1] <= big[0]:
        return Truth.TRUE
    return Truth.FALSE if small[0] > big[1] else None


def by_horner(q: Question, view: View) -> Truth | None:
    """:func:`by_interval` on a nonlinear polynomial normal form rewritten in Horner form,
    the same polynomial with each symbol appearing once per nesting level, so that interval
    arithmetic loses less: ``s**2 - s - 1`` bounds to (-oo, oo) over ``s >= 2`` but
    ``s*(s - 1) - 1`` to [1, oo) (T5's relative-position guard ``s < s**2``).

    >>> from shapes import int_symbol
    >>> s = int_symbol("s")
    >>> by_horner(Question(">=", s**2 - s - 1), View.of({s: (2, math.inf)}))
    <Truth.TRUE: 'true'>
    """
    d = q.lhs
    if not q.normal or d.is_Integer or not d.is_polynomial() or linear_terms(d) is not None:
        return None
    gens = sorted(d.free_symbols, key=lambda x: x.name)
    h = horner(d, *gens)
    return None if h == d else by_interval(Question(q.op, h), view)


def by_exact(q: Question, view: View) -> Truth | None:
    """UNKNOWN for a linear normal form over independent clean classes when both outcomes
    occur (run after :func:`by_interval` has failed to decide it)."""
    lin = linear_terms(q.lhs) if q.normal else None
    if lin is None or not lin[0]:
        return None
    coeffs, c = lin
    if not all(view.clean(r) for r in coeffs):
        return None
    if q.op == ">=":
        # the corners of the box are feasible (range ends are feasible values of a clean
        # class, and the classes are independent): d's extremes occur on both sides of 0
        return Truth.UNKNOWN
    if len(coeffs) == 1:
        (r, a), = coeffs.items()
        data = view.data_of(r)
        if (-c) % a or ((-c) // a) in data.excluded:
            return None  # intervals/congruences will say FALSE/TRUE
        v = (-c) // a
        lo, hi = data.range
        if lo <= v <= hi and (v - data.cong[1]) % data.cong[0] == 0 and lo != hi:
            return Truth.UNKNOWN
        return None
    if all(abs(a) == 1 and view.data_of(r).exact for r, a in coeffs.items()):
        # unit coefficients over gap-free ranges: d takes every integer in [lo, hi]
        lo, hi = bound(q.lhs, view.range_of)
        if lo <= 0 <= hi and lo < hi:
            return Truth.UNKNOWN
    return None


def by_congruence(q: Question, view: View) -> Truth | None:
    """Decide a linear normal form ``d == 0`` / ``d != 0`` from the roots' congruences.

    >>> from shapes import int_symbol
    >>> x = int_symbol("x")
    >>> by_congruence(Question("==", 2 * x - 1), View.of({}))
    <Truth.FALSE: 'false'>
    """
    if q.op not in ("==", "!=") or not q.normal:
        return None
    lin = linear_terms(q.lhs)
    if lin is None:
        return None
    coeffs, const = lin
    g, value = cg.residue_of([(a, view.data_of(r).cong) for r, a in coeffs.items()], const, 0)
    if g != 0 and value != 0:
        return Truth.FALSE if q.op == "==" else Truth.TRUE
    return None


