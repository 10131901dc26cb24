"""Relations between symbolic dims: construction, negation, normal form.

>>> from shapes.expr import int_symbol
>>> n = int_symbol("n")
>>> negate(sympy.Ge(n, 2))
n < 2
>>> as_difference(sympy.Gt(n, 2))
('>=', n - 3)
>>> as_difference(sympy.Eq(2 * n, 6))
('==', n - 3)
>>> as_difference(sympy.Eq(n >= 1, n >= 2))
Traceback (most recent call last):
...
shapes.errors.UnsupportedExpressionError: Eq(n >= 1, n >= 2) compares conditions, ...
"""

from __future__ import annotations

import math
from typing import Any

import sympy

from shapes.errors import UnsupportedExpressionError

__all__ = ["RELATION_TYPES", "BOOL_TYPES", "is_relation", "relation_of", "negate", "as_difference", "integer_content"]

RELATION_TYPES: tuple[type[sympy.Basic], ...] = (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt,
                                                  sympy.Ge)
BOOL_TYPES: tuple[type[sympy.Basic], ...] = (sympy.And, sympy.Or, sympy.Not)


def relation_of(kind: Any, lhs: sympy.Basic, rhs: sympy.Basic) -> sympy.Basic:
    """``kind(lhs, rhs)``, folded to ``true``/``false`` when the sides differ by a
    constant, else left unevaluated: sympy's own evaluation asks its assumption system
    about the difference (milliseconds per guard on a KV-cache model), and the solver
    decides what it would have found, with the ranges it knows.

    >>> n = sympy.Symbol("n", integer=True)
    >>> relation_of(sympy.Ge, n + 2, n), relation_of(sympy.Eq, n, n + 1), relation_of(sympy.Lt, n, 4)
    (True, False, n < 4)
    """
    if not (isinstance(lhs, sympy.Expr) and isinstance(rhs, sympy.Expr)):
        return kind(lhs, rhs)  # (an equality of booleans: sympy's own)
    diff = lhs - rhs
    if diff.is_Number:
        return sympy.true if kind(diff, 0) else sympy.false
    return kind(lhs, rhs, evaluate=False)

_NEGATION = {sympy.Eq: sympy.Ne, sympy.Ne: sympy.Eq, sympy.Lt: sympy.Ge, sympy.Ge: sympy.Lt,
             sympy.Le: sympy.Gt, sympy.Gt: sympy.Le}


def is_relation(obj: object) -> bool:
    """True for sympy relations, their boolean combinations and ``sympy.true/false``."""
    return isinstance(obj, RELATION_TYPES + BOOL_TYPES) or obj in (sympy.true, sympy.false)


def negate(rel: sympy.Basic) -> sympy.Basic:
    """The logical negation, spelled as a relation where possible (``Not(a >= b)`` is ``a < b``)."""
    if rel is sympy.true:
        return sympy.false
    if rel is sympy.false:
        return sympy.true
    op = _NEGATION.get(type(rel))
    if op is not None:
        return op(rel.lhs, rel.rhs, evaluate=False)
    if isinstance(rel, sympy.Not):
        return rel.args[0]
    if isinstance(rel, sympy.And):
        return sympy.Or(*(negate(a) for a in rel.args))
    if isinstance(rel, sympy.Or):
        return sympy.And(*(negate(a) for a in rel.args))
    raise UnsupportedExpressionError(f"cannot negate {rel!r}: not a relation")


def integer_content(expr: sympy.Expr) -> tuple[int, sympy.Expr]:
    """Scale ``expr`` to integer coefficients: ``(k, k*expr)`` with ``k > 0`` the lcm of denominators."""
    dens = [int(a.q) for a in expr.atoms(sympy.Rational) if not a.is_Integer]
    if not dens:
        return 1, expr
    k = math.lcm(*dens)
    return k, sympy.expand(expr * k)


def as_difference(rel: sympy.Basic) -> tuple[str, sympy.Expr]:
    """Normal form ``(op, d)`` meaning ``d op 0`` with ``op`` in ``'==', '!=', '>='``.

    Strict inequalities become ``>=`` (integers); the gcd of a linear ``d``'s coefficients
    is divided out, rounding the constant in the sound direction.
    """
    if not isinstance(rel, RELATION_TYPES):
        raise UnsupportedExpressionError(f"{rel!r} is not a comparison")
    lhs, rhs = rel.args
    if not (isinstance(lhs, sympy.Expr) and isinstance(rhs, sympy.Expr)):
        raise UnsupportedExpressionError(f"{rel!r} compares conditions, not integers "
                                         "(shapes.canonical spells Eq/Ne of conditions with And/Or)")
    if isinstance(rel, (sympy.Lt, sympy.Le)):
        lhs, rhs = rhs, lhs
    d = sympy.expand(lhs - rhs) if not (lhs - rhs).is_Atom else lhs - rhs
    _, d = integer_content(d)
    if isinstance(rel, (sympy.Gt, sympy.Lt)):
        d = d - 1
    op = {sympy.Eq: "==", sympy.Ne: "!="}.get(type(rel), ">=")
    return op, _divide_gcd(op, d)


def _divide_gcd(op: str, d: sympy.Expr) -> sympy.Expr:
    const, rest = d.as_coeff_Add()
    if rest == 0:
        return d
    terms = sympy.Add.make_args(rest)
    coeffs = []
    for t in terms:
        c, _ = t.as_coeff_Mul()
        if not c.is_Integer:
            return d
        coeffs.append(abs(int(c)))
    g = math.gcd(*coeffs)
    if g <= 1:
        return d
    c = int(const)
    if op == ">=":
        return sympy.expand(rest / g) + sympy.Integer(c // g)  # floor keeps the solution set
    if c % g:
        return d  # Eq is then unsatisfiable, Ne always true: let the stages see it
    return sympy.expand(rest / g) + sympy.Integer(c // g)
