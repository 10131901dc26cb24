"""A root held to one residue class, written as a multiple of a fresh integer: a stage for
the nested floor-divisions of strided models.

A root ``h`` the facts keep in one class, ``h = c (mod m)``, is exactly ``m*t + c`` for an
integer ``t`` in the range read off ``h``'s (each admissible ``h`` has one ``t``). Substituted,
the towers a windowed or strided model builds (Swin pads ``h // 4`` to a multiple of its window:
``(h//4 + 3*(h//4 % 4)) // 4``) come apart: ``FloorDiv(32*t, 4)`` is ``8*t``, ``Mod(8*t, 4)``
is 0, and a division by a factor it shares with its dividend cancels (``FloorDiv(4*t, t)`` is 4
when ``t >= 1``). What is left is often a plain polynomial in ``t`` that the interval stages
decide. :func:`solver.decide.normal_form.fold_modular` folds one ``Mod``/``FloorDiv`` of a linear argument
at a time and stops at the rational ``h/4`` the first fold leaves; this stage does not.

Sound by construction: the substitution is exact on the congruence class, the fresh ranges
contain every ``t`` a feasible ``h`` gives, and only TRUE and FALSE are taken from the stages
that run on the result (their view of ``t`` over-approximates, so an UNKNOWN says nothing).

>>> import sympy
>>> from shapes import FloorDiv, int_symbol
>>> from solver.kernel.normal_form import Question, View
>>> h = int_symbol("h")
>>> p = FloorDiv(h, 4) + sympy.Mod(3 * FloorDiv(h, 4), 4)   # h//4 padded to a multiple of 4
>>> q = Question("==", sympy.Mod(p, FloorDiv(p, 4)))          # the window view's divisibility
>>> by_reparametrized(q, View.of({h: (32, 10**6)}, {h: (32, 0)}))
<Truth.TRUE: 'true'>
>>> by_reparametrized(q, View.of({h: (32, 10**6)})) is None      # no class: nothing to substitute
True
>>> by_reparametrized(Question("==", FloorDiv(p, sympy.Mod(h, 32))), View.of({h: (32, 10**6)}, {h: (32, 0)})) is None
True
"""

from __future__ import annotations

from fractions import Fraction

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import FloorDiv
from solver.decide import stages
from solver.kernel import normal_form
from solver.kernel.interval import Interval, ceil, floor
from solver.kernel.normal_form import Question, View
from solver.truth import Truth

__all__ = ["by_reparametrized", "reparametrize", "ROUNDS"]

ROUNDS = 6
"""Rounds of cancelling (each may expose the next division: ``FloorDiv(b*FloorDiv(16, 4), 4)``)."""

_STAGES = (stages.by_constant, stages.by_interval, stages.by_horner, stages.by_congruence)


def _fresh_range(r: Interval, m: int, c: int) -> Interval:
    """The ``t`` with ``m*t + c`` in ``r``."""
    lo, hi = r
    return ceil(Fraction(lo - c, m) if isinstance(lo, int) else lo), floor(Fraction(hi - c, m) if isinstance(hi, int) else hi)


def reparametrize(q: Question, view: View) -> tuple[Question, View] | None:
    """``q`` with every root in a nontrivial class replaced by ``m*t + c`` and simplified,
    and the view of its symbols (fresh ranges, the other roots as before); None when ``q``
    has no ``Mod``/``FloorDiv``, no root of it is in a class, or a divisor becomes 0."""
    d = q.lhs - q.rhs
    if not d.has(FloorDiv, sympy.Mod):
        return None
    subs: dict[sympy.Symbol, sympy.Expr] = {}
    ranges: dict[sympy.Symbol, Interval] = {}
    congs = {}
    for r in d.free_symbols:
        data = view.data_of(r)
        m, c = data.cong
        if m > 1:
            t = sympy.Dummy(f"{r}_t", integer=True)
            subs[r] = m * t + c
            ranges[t] = _fresh_range(view.range_of(r), m, c)
        else:
            ranges[r] = view.range_of(r)
            congs[r] = data.cong
    if not subs:
        return None
    lookup = ranges.__getitem__
    try:
        e = sympy.expand(d.xreplace(subs))
        for _ in range(ROUNDS):
            new = normal_form.simplify_minmax(normal_form.cancel_common_factors(e, lookup), lookup)
            if new == e:
                break
            e = sympy.expand(new)
        op, e = normal_form.normalize(q.op, e, lookup)
    except (ArithmeticError, UnsupportedExpressionError):  # a divisor the class makes 0: no answer here
        return None
    if e.has(sympy.nan, sympy.zoo):
        return None
    return Question(op, e), View.of(ranges, congs)


def by_reparametrized(q: Question, view: View) -> Truth | None:
    """Decide ``q`` by :func:`reparametrize` and the interval and congruence stages: TRUE or
    FALSE, else None."""
    found = reparametrize(q, view)
    if found is None:
        return None
    q2, view2 = found
    for stage in _STAGES:
        t = stage(q2, view2)
        if t is not None:
            return t if t is not Truth.UNKNOWN else None
    return None
