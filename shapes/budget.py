"""How much work an expression can cause: total degree and expanded size.

The engine expands relations (``sympy.expand``), factors and translates them to Z3; the cost
of those grows with the polynomial degree and with the number of monomials after expansion,
not with the length of the text (``(n ** 64) ** 64`` is short). :func:`measure` bounds both
from the expression tree without expanding anything, so a parser can refuse an expression
before any work is spent on it.

>>> from shapes.expr import int_symbol
>>> a, b = int_symbol("a"), int_symbol("b")
>>> measure((a + b + 1) ** 3 * a)
Size(degree=4, terms=10)
>>> measure(sympy.Eq(sympy.Mod(a ** 2, 4), b))
Size(degree=2, terms=3)
>>> check(a ** 40, Budget(max_degree=16))
Traceback (most recent call last):
...
shapes.errors.BudgetError: total degree 40 exceeds the limit of 16 (a ** 40)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy
from sympy.core.relational import Relational

from shapes.errors import BudgetError

__all__ = ["Size", "Budget", "DEFAULT_BUDGET", "measure", "check"]

_CAP = 10**12  # sizes saturate here: a bound far above any budget, computed in small ints


@dataclass(frozen=True, slots=True)
class Size:
    """Upper bounds for an expression: the largest total degree of any (sub)expression and
    the number of monomials after full expansion (each relation's two sides together)."""

    degree: int
    terms: int


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits on :class:`Size`; see ``docs/protocol.md`` (*Budgets*)."""

    max_degree: int = 8
    max_terms: int = 2_000


DEFAULT_BUDGET = Budget()


def measure(expr: sympy.Basic) -> Size:
    """Degree and expanded-term bounds of ``expr``, without expanding it."""
    memo: dict[sympy.Basic, tuple[int, int, int]] = {}
    degree, terms, worst = _measure(expr, memo)
    return Size(max(degree, worst), terms)


def check(expr: sympy.Basic, budget: Budget = DEFAULT_BUDGET) -> Size:
    """:func:`measure` ``expr`` and raise :class:`BudgetError` past ``budget``."""
    size = measure(expr)
    shown = _short(expr)
    if size.degree > budget.max_degree:
        raise BudgetError(f"total degree {size.degree if size.degree < _CAP else 'beyond 10**12'} "
                          f"exceeds the limit of {budget.max_degree} ({shown})")
    if size.terms > budget.max_terms:
        raise BudgetError(f"expands to {size.terms if size.terms < _CAP else 'more than 10**12'} "
                          f"terms, more than the limit of {budget.max_terms} ({shown})")
    return size


def _short(expr: sympy.Basic) -> str:
    text = str(expr).replace("**", " ** ")
    return text if len(text) <= 80 else text[:77] + "..."


def _measure(e: sympy.Basic, memo: dict[sympy.Basic, tuple[int, int, int]]) -> tuple[int, int, int]:
    """``(degree, terms, worst degree inside atoms)`` of ``e``, saturating at ``_CAP``."""
    hit = memo.get(e)
    if hit is None:
        hit = _measure_node(e, memo)
        memo[e] = hit
    return hit


def _measure_node(e: sympy.Basic, memo: dict[sympy.Basic, tuple[int, int, int]]) -> tuple[int, int, int]:  # noqa: C901
    if e.is_Number or e in (sympy.true, sympy.false):
        return 0, 1, 0
    if e.is_Symbol:
        return 1, 1, 0
    parts = [_measure(a, memo) for a in e.args]
    worst = max((p[2] for p in parts), default=0)
    if isinstance(e, sympy.Pow):
        (d, t, _), k = parts[0], e.exp
        n = int(k) if k.is_Integer and int(k) >= 0 else _CAP
        return _cap(d * n), _monomials(t, n), worst
    if isinstance(e, sympy.Mul):
        return _cap(sum(p[0] for p in parts)), _cap(math.prod(min(p[1], _CAP) for p in parts)), worst
    if isinstance(e, (sympy.Add, Relational)):
        return max(p[0] for p in parts), _cap(sum(p[1] for p in parts)), worst
    if isinstance(e, (sympy.And, sympy.Or, sympy.Not)):
        return 0, _cap(sum(p[1] for p in parts)), max(worst, max(p[0] for p in parts))
    # FloorDiv, Mod, Min, Max (and anything else): an atom of degree 1 outside; inside, its
    # arguments count towards the worst degree and the terms
    return 1, _cap(sum(p[1] for p in parts)), max(worst, max((p[0] for p in parts), default=0))


def _monomials(terms: int, power: int) -> int:
    """Monomials of ``(t1 + ... + t_terms) ** power``: ``C(terms + power - 1, power)``."""
    if power == 0:
        return 1
    if terms <= 1:
        return 1
    if power >= _CAP or terms >= _CAP:
        return _CAP
    count = 1
    for i in range(1, min(power, terms - 1) + 1):  # C(n, k) with k = min(power, terms - 1)
        count = count * (terms + power - i) // i
        if count >= _CAP:
            return _CAP
    return count


def _cap(v: int) -> int:
    return min(v, _CAP)
