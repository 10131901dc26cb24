"""Affine forms: linear integer combinations, and a dim that is ``a * root + b`` in one root.

The one home of "affine in one root": the spec (a derived dim ``2 * b + 1``, a classic
``dynamic_dim(y, 0) == 2 * dynamic_dim(x, 0) + 1``), the CLI's ``--dynamic y:0:2*b+1`` and
the fix synthesis all read, solve, compose and invert such forms with :class:`Affine`;
:func:`dim_expressible` says which relations a Dim spec can say at all.

>>> b = int_symbol("b")
>>> f = Affine.of(2 * b + 1)
>>> f
Affine(root=b, a=2, b=1)
>>> f.solve(9), f.solve(8)
(4, None)
>>> f.root_range(3, 129)
(1, 64)
>>> linear_terms(3 * b - int_symbol("c") + 2) == ({b: 3, int_symbol("c"): -1}, 2)
True
>>> parse_affine("4*seq+1")
Affine(root=seq, a=4, b=1)
"""

from __future__ import annotations

import ast
import keyword
from dataclasses import dataclass

import sympy

from shapes.errors import ShapesError
from shapes.expr import int_symbol
from shapes.relation import as_difference

__all__ = ["Affine", "dim_expressible", "linear_terms", "parse_affine"]


def linear_terms(d: sympy.Expr) -> tuple[dict[sympy.Symbol, int], int] | None:
    """``({symbol: coef}, const)`` when ``d`` (expanded) is linear with integer coefficients.

    >>> x, y = int_symbol("x"), int_symbol("y")
    >>> linear_terms(2 * x + y - 5) == ({x: 2, y: 1}, -5), linear_terms(sympy.Integer(7))
    (True, ({}, 7))
    >>> linear_terms(x * y) is None, linear_terms(x / 2) is None
    (True, True)
    """
    coeffs: dict[sympy.Symbol, int] = {}
    const = 0
    for term in sympy.Add.make_args(d):
        if term.is_Integer:
            const += int(term)
            continue
        c, rest = term.as_coeff_Mul()
        if not rest.is_Symbol or not c.is_Integer:
            return None
        coeffs[rest] = coeffs.get(rest, 0) + int(c)
    return coeffs, const


@dataclass(frozen=True, slots=True)
class Affine:
    """``a * root + b`` with integers ``a != 0`` and ``b``: a dim defined from one root dim."""

    root: sympy.Symbol
    a: int
    b: int

    @staticmethod
    def of(expr: sympy.Expr) -> Affine | None:
        """The affine form of ``expr`` in its one free symbol, or None (a constant, two
        symbols, a non-integer coefficient, a product, ``//`` or ``%``).

        >>> x = int_symbol("x")
        >>> Affine.of(x), Affine.of(3 - x), Affine.of(sympy.Integer(4))
        (Affine(root=x, a=1, b=0), Affine(root=x, a=-1, b=3), None)
        >>> Affine.of(x * x) is None
        True
        """
        lin = linear_terms(sympy.expand(expr))
        if lin is None:
            return None
        terms = {s: a for s, a in lin[0].items() if a}
        if len(terms) != 1:
            return None
        (root, a), = terms.items()
        return Affine(root, a, lin[1])

    @property
    def expr(self) -> sympy.Expr:
        """The form as a sympy expression."""
        return self.a * self.root + self.b

    def at(self, root_value: int) -> int:
        """The value for ``root = root_value``."""
        return self.a * root_value + self.b

    def solve(self, value: int) -> int | None:
        """The root value giving ``value``, or None when no integer does.

        >>> Affine(int_symbol("s"), 4, 0).solve(10) is None
        True
        """
        q, r = divmod(value - self.b, self.a)
        return None if r else q

    def root_range(self, lo: int | None, hi: int | None) -> tuple[int | None, int | None]:
        """The root values whose image lies in ``[lo, hi]`` (None: unbounded on that side).

        >>> Affine(int_symbol("s"), 4, 1).root_range(2, 20)
        (1, 4)
        >>> Affine(int_symbol("s"), -1, 10).root_range(2, None)
        (None, 8)
        """
        if self.a > 0:
            r_lo = None if lo is None else -((self.b - lo) // self.a)
            r_hi = None if hi is None else (hi - self.b) // self.a
        else:  # a < 0 flips the bounds
            r_lo = None if hi is None else -((self.b - hi) // self.a)
            r_hi = None if lo is None else (lo - self.b) // self.a
        return r_lo, r_hi

    def compose(self, inner: Affine) -> Affine:
        """This form with its root replaced by ``inner`` (``self(inner(r))``).

        >>> s, t = int_symbol("s"), int_symbol("t")
        >>> Affine(s, 2, 1).compose(Affine(t, 3, -1))
        Affine(root=t, a=6, b=-1)
        """
        return Affine(inner.root, self.a * inner.a, self.a * inner.b + self.b)

    def inverse(self, new_root: sympy.Symbol) -> Affine | None:
        """The root as an affine form of ``new_root`` (this dim's value), when ``|a| == 1``.

        >>> s, y = int_symbol("s"), int_symbol("y")
        >>> Affine(s, 1, 3).inverse(y), Affine(s, 2, 0).inverse(y)
        (Affine(root=y, a=1, b=-3), None)
        """
        if abs(self.a) != 1:
            return None
        return Affine(new_root, self.a, -self.a * self.b)


def parse_affine(text: str) -> Affine | None:
    """``4*seq+1`` -> ``4 * seq + 1``: an affine expression of one name with int coefficients
    (``+ - *`` and parentheses), or None.

    >>> parse_affine("2*(b-1)"), parse_affine("b+c"), parse_affine("7")
    (Affine(root=b, a=2, b=-2), None, None)
    """
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    out = _walk(node)
    if out is None or out[0] is None or out[1] == 0:
        return None
    return Affine(int_symbol(out[0]), out[1], out[2])


_Lin = tuple[str | None, int, int]  # (root name or None for a constant, a, b): a*root + b


def _walk(n: ast.AST) -> _Lin | None:
    if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
        return None, 0, n.value
    if isinstance(n, ast.Name) and not keyword.iskeyword(n.id):
        return n.id, 1, 0
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        v = _walk(n.operand)
        return None if v is None else (v[0], -v[1], -v[2])
    if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult)):
        x, y = _walk(n.left), _walk(n.right)
        if x is None or y is None or (x[0] and y[0] and x[0] != y[0]):
            return None
        if isinstance(n.op, ast.Mult):
            if x[0] and y[0]:
                return None
            k, v = (y[2], x) if y[0] is None else (x[2], y)
            return v[0], v[1] * k, v[2] * k
        sign = 1 if isinstance(n.op, ast.Add) else -1
        return x[0] or y[0], x[1] + sign * y[1], x[2] + sign * y[2]
    return None


def dim_expressible(rel: sympy.Basic) -> bool:
    """Whether a Dim spec can say ``rel``: a range of one dim, its divisibility, or one dim as
    an increasing affine function of another (the one definition: the bridge's user checks, the
    relations kept as runtime checks). Any comparison is read in its normal form ``d op 0``
    (:func:`shapes.relation.as_difference`).

    >>> h, w = int_symbol("h"), int_symbol("w")
    >>> dim_expressible(sympy.Eq(h - 2 * w - 1, 0)), dim_expressible(sympy.Eq(h * w - 64, 0))
    (True, False)
    >>> dim_expressible(sympy.Eq(h + w - 10, 0))   # w = 10 - h: a Dim cannot be negated
    False
    >>> [dim_expressible(r) for r in (h >= 4, sympy.Eq(h, 2 * w + 1), sympy.Eq(sympy.Mod(h, 4), 0), h < w)]
    [True, True, True, False]
    """
    try:
        op, d = as_difference(rel)
    except ShapesError:
        return False
    if op == "!=":
        return False
    const, rest = d.as_coeff_Add()
    if isinstance(rest, sympy.Mod):
        lin = linear_terms(sympy.expand(rest.args[0]))
        return op == "==" and rest.args[1].is_Integer and lin is not None and len(lin[0]) == 1
    lin = linear_terms(d)
    if lin is None:
        return False
    coeffs = [a for a in lin[0].values() if a]
    if len(coeffs) == 1:
        return True
    if len(coeffs) == 2 and op == "==":
        a1, a2 = coeffs
        return (abs(a1) == 1 or abs(a2) == 1) and (a1 > 0) != (a2 > 0)
    return False
