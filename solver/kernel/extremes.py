"""A comparison with a ``Min``/``Max`` side, as the same condition on the arguments.

torch asks such comparisons on every slice and pad: ``x[:, 5:]`` has ``Max(0, n - 5)``
elements, and its 0/1 rule asks ``Eq(Max(1, n - 5), n - 5)``, which is just ``n - 5 >= 1``.
Left whole, such a relation is nonlinear to every cheap stage and goes to Z3 (a context costs
about 10 ms to build); split, each part is linear or smaller. The identities, for any
expressions (``>=`` stands for ``>`` too, ``<=`` alike):

* ``Min(a, b) >= c`` is ``a >= c & b >= c``; ``Max(a, b) >= c`` is ``a >= c | b >= c``;
* ``c >= Max(a, b)`` is ``c >= a & c >= b``; ``c >= Min(a, b)`` is ``c >= a | c >= b``;
* ``Eq(Max(a, b), b)`` is ``b >= a``; ``Eq(Min(a, b), b)`` is ``b <= a`` (an argument equals
  the extreme exactly when it is the extreme); ``Ne`` is the negation.

A fact is split only into a conjunction (each part a fact); a question into either.
The oracle: ``tests/solver/kernel/test_extremes.py`` (every rewrite against evaluation on a
box of integers) and ``tests/solver/decide/test_min_max_facts.py``.
"""

from __future__ import annotations

import sympy

__all__ = ["extreme_parts"]

_MINMAX = (sympy.Min, sympy.Max)


def extreme_parts(rel: sympy.Basic, disjunctions: bool = True) -> sympy.Basic | None:
    """An equivalent of ``rel`` over the arguments of a ``Min``/``Max`` side, or None when
    ``rel`` has none (or, without ``disjunctions``, when the equivalent is an ``Or``).

    >>> from shapes import int_symbol
    >>> h, w, n = int_symbol("h"), int_symbol("w"), int_symbol("n")
    >>> extreme_parts(sympy.Gt(sympy.Min(h, w), 4))
    (h > 4) & (w > 4)
    >>> extreme_parts(sympy.Ge(sympy.Max(h, w), 4))
    (h >= 4) | (w >= 4)
    >>> extreme_parts(sympy.Ge(sympy.Max(h, w), 4), disjunctions=False) is None
    True
    >>> extreme_parts(sympy.Eq(sympy.Max(1, n - 5), n - 5))
    n - 5 >= 1
    >>> extreme_parts(sympy.Ne(n, sympy.Min(n, w + 1)))
    n > w + 1
    """
    if isinstance(rel, (sympy.Eq, sympy.Ne)):
        return _member_parts(rel, disjunctions)
    if isinstance(rel, (sympy.Ge, sympy.Gt)):
        big, small = rel.lhs, rel.rhs
    elif isinstance(rel, (sympy.Le, sympy.Lt)):
        big, small = rel.rhs, rel.lhs
    else:
        return None
    strict = isinstance(rel, (sympy.Gt, sympy.Lt))
    above = sympy.Gt if strict else sympy.Ge  # above(p, q): p > q (or p >= q)
    if isinstance(big, _MINMAX):
        joined = sympy.And if isinstance(big, sympy.Min) else sympy.Or
        parts = [above(a, small) for a in big.args]
    elif isinstance(small, _MINMAX):
        joined = sympy.And if isinstance(small, sympy.Max) else sympy.Or
        parts = [above(big, a) for a in small.args]
    else:
        return None
    if joined is sympy.Or and not disjunctions:
        return None
    return joined(*parts)


def _member_parts(rel: sympy.Basic, disjunctions: bool) -> sympy.Basic | None:
    """``Eq(M, e)`` / ``Ne(M, e)`` where ``M`` is a Min/Max with ``e`` among its arguments."""
    for m, e in ((rel.lhs, rel.rhs), (rel.rhs, rel.lhs)):
        if isinstance(m, _MINMAX) and e in m.args:
            others = [a for a in m.args if a != e]
            if not others:
                continue
            at_least = isinstance(m, sympy.Max)  # e is the Max: e >= every other argument
            if isinstance(rel, sympy.Eq):
                return sympy.And(*(sympy.Ge(e, a) if at_least else sympy.Le(e, a) for a in others))
            if len(others) > 1 and not disjunctions:
                return None
            return sympy.Or(*(sympy.Lt(e, a) if at_least else sympy.Gt(e, a) for a in others))
    return None
