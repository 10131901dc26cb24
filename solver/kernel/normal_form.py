"""Questions and their normal form: what every decision stage reads.

A :class:`Question` is ``lhs op rhs`` over the integers; its *normal form* has ``rhs == 0``,
``op`` in ``'==', '!=', '>='`` and every symbol a union-find root (:func:`normalize`, with
floor-div / mod folded by the congruences, :func:`fold_modular`, and symbolic factors a
floor-div shares with its divisor cancelled, :func:`cancel_common_factors`). A :class:`View`
is what the stages (:mod:`solver.decide.stages`) may read of the union-find. The state
(:mod:`solver.state.known`) normalizes facts with it too, so it sits in the kernel, below both.

>>> import sympy
>>> from shapes import int_symbol
>>> n = int_symbol("n")
>>> Question.of(sympy.Lt(n, 4))
Question(op='<', lhs=n, rhs=4)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import sympy

from shapes.affine import linear_terms
from shapes.expr import FloorDiv
from solver.kernel import congruence as cg
from solver.kernel.interval import TOP, Interval, bound
from solver.kernel.union_find import ClassData
__all__ = ["NORMAL_OPS", "ZERO", "Question", "View", "cancel_common_factors", "fold_modular", "linear_form", "linear_normal",
           "normalize", "simplify_minmax"]

NORMAL_OPS = ("==", "!=", ">=")
_OPS: dict[type, str] = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Ge: ">=", sympy.Gt: ">", sympy.Le: "<=", sympy.Lt: "<"}
ZERO = sympy.Integer(0)


@dataclass(frozen=True, slots=True)
class Question:
    """``lhs op rhs`` over the integers, ``op`` one of ``== != >= > <= <``.

    >>> from shapes import int_symbol
    >>> n = int_symbol("n")
    >>> Question.of(sympy.Lt(n, 4))
    Question(op='<', lhs=n, rhs=4)
    """

    op: str
    lhs: sympy.Expr
    rhs: sympy.Expr = ZERO

    @classmethod
    def of(cls, rel: sympy.Basic) -> Question:
        """The question a sympy relation (Eq, Ne, Ge, Gt, Le, Lt) asks, sides as written."""
        return cls(_OPS[type(rel)], *rel.args)

    @property
    def normal(self) -> bool:
        """Whether this is a normal form ``d op 0`` (``op`` in ``== != >=``)."""
        return self.rhs is ZERO and self.op in NORMAL_OPS


@dataclass(frozen=True, slots=True)
class View:
    """What the stages may read: the range of any symbol, the class data of a root, and
    whether a root's class is *clean* (no residual fact touches it, so its data is exact)."""

    range_of: Callable[[sympy.Symbol], Interval]
    data_of: Callable[[sympy.Symbol], ClassData]
    clean: Callable[[sympy.Symbol], bool]

    @classmethod
    def of(cls, ranges: Mapping[sympy.Symbol, Interval],
           congs: Mapping[sympy.Symbol, cg.Congruence] | None = None) -> View:
        """A view from plain tables (roots only; no class is taken as clean).

        >>> from shapes import int_symbol
        >>> r = int_symbol("r")
        >>> View.of({r: (0, 9)}, {r: (2, 1)}).data_of(r).cong
        (2, 1)
        """
        congs = congs or {}

        def data_of(r: sympy.Symbol) -> ClassData:
            return ClassData(ranges.get(r, TOP), congs.get(r, cg.TRIVIAL))

        return cls(lambda r: ranges.get(r, TOP), data_of, lambda r: False)


def linear_form(rel: sympy.Basic) -> tuple[str, dict[sympy.Symbol, int], int] | None:
    """``(op, coeffs, const)`` meaning ``sum(coeffs[s] * s) + const op 0`` (``op`` in
    ``== != >=``) when both sides of ``rel`` are linear, read off the sympy tree without any
    sympy arithmetic; None otherwise. See :func:`linear_normal` for the gcd.

    >>> from shapes import int_symbol
    >>> x, y = int_symbol("x"), int_symbol("y")
    >>> linear_form(sympy.Lt(2 * x, y + 3))
    ('>=', {x: -2, y: 1}, 2)
    """
    op = _OPS.get(type(rel))
    if op is None:
        return None
    left, right = linear_terms(rel.lhs), linear_terms(rel.rhs)
    if left is None or right is None:
        return None
    coeffs = dict(left[0])
    for s, a in right[0].items():
        coeffs[s] = coeffs.get(s, 0) - a
    const = left[1] - right[1]
    if op in ("<", "<="):
        coeffs, const = {s: -a for s, a in coeffs.items()}, -const
    if op in ("<", ">"):
        const -= 1
    return {"<": ">=", "<=": ">=", ">": ">="}.get(op, op), coeffs, const


def linear_normal(op: str, coeffs: dict[sympy.Symbol, int], const: int) -> tuple[str, dict[sympy.Symbol, int], int] | bool:
    """Drop zero coefficients and divide out their gcd (rounding the constant the sound way
    for ``>=``); a relation that becomes constant is returned as its bool.

    >>> from shapes import int_symbol
    >>> x, y = int_symbol("x"), int_symbol("y")
    >>> linear_normal(">=", {x: 2, y: 4}, 3), linear_normal("==", {x: 2, y: 0}, 3)
    (('>=', {x: 1, y: 2}, 1), False)
    """
    coeffs = {s: a for s, a in coeffs.items() if a}
    if not coeffs:
        return const == 0 if op == "==" else const != 0 if op == "!=" else const >= 0
    g = math.gcd(*coeffs.values())
    if g > 1:
        if op != ">=" and const % g:
            return op == "!="
        coeffs = {s: a // g for s, a in coeffs.items()}
        const = const // g
    return op, coeffs, const


def fold_modular(d: sympy.Expr, cong_of: Callable[[sympy.Symbol], cg.Congruence]) -> sympy.Expr:
    """Replace ``Mod(e, k)`` / ``FloorDiv(e, k)`` whose value mod k the congruences determine.

    ``Mod(e, k)`` becomes the constant residue and ``FloorDiv(e, k)`` the exact
    ``(e - residue) / k``. Returns ``d`` unchanged when nothing folds, or when a fold would
    divide by zero.
    """
    if not d.has(sympy.Mod, FloorDiv):
        return d

    def residue(e: sympy.Expr, k: sympy.Expr) -> int | None:
        if not k.is_Integer or int(k) <= 0:
            return None
        lin = linear_terms(sympy.expand(e))
        if lin is None:
            return None
        coeffs, const = lin
        g, value = cg.residue_of([(a, cong_of(r)) for r, a in coeffs.items()], const, int(k))
        return value if g == int(k) else None

    def fold(e: sympy.Basic) -> sympy.Basic:
        if not e.args:
            return e
        e = e.func(*(fold(a) for a in e.args))
        if isinstance(e, sympy.Mod):
            r = residue(*e.args)
            if r is not None:
                return sympy.Integer(r)
        if isinstance(e, FloorDiv):
            r = residue(*e.args)
            if r is not None:
                return sympy.expand((e.args[0] - r) / e.args[1])
        return e

    try:
        return sympy.expand(fold(d))
    except ArithmeticError:  # a divisor the congruences make 0 (x // (h % 32) with h = 0 mod 32)
        return d


def cancel_common_factors(d: sympy.Expr, lookup: Callable[[sympy.Symbol], Interval]) -> sympy.Expr:
    """Cancel a symbolic factor ``g`` common to a ``FloorDiv``'s dividend and divisor when the
    ranges show ``g != 0``: ``FloorDiv(g*p, g*q)`` is ``FloorDiv(p, q)`` (``(g*p)/(g*q) == p/q``
    exactly; sympy's ``Mod`` already cancels so when built). This is the shape a reshape's
    divisibility guard takes once the union-find merges equal dims: ``b*s == b*FloorDiv(b*s,
    b)``. Returns ``d`` unchanged when nothing cancels.

    >>> from shapes import int_symbol
    >>> b, s = int_symbol("b"), int_symbol("s")
    >>> cancel_common_factors(b*s - b*FloorDiv(b*s, b), {b: (1, 8), s: (0, 9)}.__getitem__)
    0
    >>> cancel_common_factors(FloorDiv(2*b*s, -4*b), {b: (-8, -1), s: (0, 9)}.__getitem__)
    FloorDiv(s, -2)
    >>> cancel_common_factors(FloorDiv(b*s, b), {b: (0, 8), s: (0, 9)}.__getitem__)  # b may be 0
    FloorDiv(b*s, b)
    """
    if not d.has(FloorDiv):
        return d

    def nonzero(g: sympy.Expr) -> bool:
        lo, hi = bound(g, lookup)
        return lo > 0 or hi < 0

    def fold(e: sympy.Basic) -> sympy.Basic:
        if not e.args or not e.has(FloorDiv):
            return e
        args = tuple(fold(a) for a in e.args)
        if args != e.args:
            e = e.func(*args)
        if isinstance(e, FloorDiv):
            a, k = e.args
            if not k.is_Integer and not a.is_Integer:
                g = sympy.gcd(a, k)
                if g.free_symbols and nonzero(g):
                    p, q = sympy.cancel(a / g), sympy.cancel(k / g)
                    return -p if q == -1 else FloorDiv(p, q)
        return e

    out = fold(d)
    return d if out is d else sympy.expand(out)


def _mod_rewrite(d: sympy.Expr) -> sympy.Expr:
    """Rewrite ``b*FloorDiv(e, k)`` as ``(b/k)*(e - Mod(e, k))`` when k divides b and the sum
    gets shorter (``t - 4*FloorDiv(t, 4)`` is ``Mod(t, 4)``). An identity for k != 0."""
    for atom in d.atoms(FloorDiv):
        e, k = atom.args
        if not k.is_Integer or int(k) == 0:
            continue
        b = d.coeff(atom)
        if not b.is_Integer or int(b) % int(k):
            continue
        q = int(b) // int(k)
        candidate = sympy.expand(d - b * atom + q * e) - q * sympy.Mod(e, k)
        if len(sympy.Add.make_args(candidate)) < len(sympy.Add.make_args(d)):
            d = candidate
    return d


def normalize(op: str, d: sympy.Expr, lookup: Callable[[sympy.Symbol], Interval]) -> tuple[str, sympy.Expr]:
    """An equivalent, simpler ``d op 0`` under the known ranges.

    Factors whose sign the ranges fix are divided out (``16*b*(t - 4*(t//4)) == 0`` with
    ``b >= 1`` is ``t - 4*(t//4) == 0``), and ``t - k*(t//k)`` becomes ``Mod(t, k)``, after
    cancelling the symbolic factors a division shares with its divisor
    (:func:`cancel_common_factors`). Only
    for nonlinear ``d``; linear ones are already in normal form.
    """
    if d.is_Integer or linear_terms(d) is not None:
        return op, d
    d = cancel_common_factors(d, lookup)
    if d.is_Integer or linear_terms(d) is not None:
        return op, d
    factored = sympy.factor_terms(d)
    if not isinstance(factored, sympy.Mul) and len(sympy.Add.make_args(d)) <= 10 and d.is_polynomial():
        factored = sympy.factor(d)  # a + b - b*(a + b) is (a + b)*(1 - b)
    if isinstance(factored, sympy.Mul):
        kept = []
        sign = 1
        for f in factored.args:
            lo, hi = bound(f, lookup)
            if lo > 0:
                continue
            if hi < 0:
                sign = -sign
                continue
            kept.append(f)
        d = sympy.Mul(*kept) * sign if kept else sympy.Integer(sign)
        d = sympy.expand(d) if not isinstance(d, (sympy.Mul, sympy.Add)) or d.has(FloorDiv, sympy.Mod) else d
    if d.has(FloorDiv):
        d = _mod_rewrite(sympy.expand(d))
    return op, d


def simplify_minmax(e: sympy.Basic, lookup: Callable[[sympy.Symbol], Interval]) -> sympy.Basic:
    """Drop the arguments of ``Min``/``Max`` that the ranges show can never be chosen:
    ``Max(1, t // 2)`` is ``t // 2`` when ``t >= 2``. Equivalent under the ranges.

    >>> from shapes import int_symbol
    >>> t = int_symbol("t")
    >>> simplify_minmax(sympy.Max(1, FloorDiv(t, 2)), {t: (2, 100)}.__getitem__)
    FloorDiv(t, 2)
    """
    if not e.has(sympy.Min, sympy.Max):
        return e

    def dominated(a: sympy.Expr, b: sympy.Expr, is_max: bool) -> bool:
        """Whether ``b`` is always >= ``a`` (Max) or <= ``a`` (Min): ``a`` can be dropped."""
        (lo_a, hi_a), (lo_b, hi_b) = bound(a, lookup), bound(b, lookup)
        if (lo_b >= hi_a) if is_max else (hi_b <= lo_a):
            return True
        diff = sympy.expand(b - a if is_max else a - b)
        return bool(diff.free_symbols) and bound(diff, lookup)[0] >= 0

    def visit(x: sympy.Basic) -> sympy.Basic:
        if not x.args or not x.has(sympy.Min, sympy.Max):
            return x
        args = tuple(visit(a) for a in x.args)
        if args != x.args:  # (rebuilding an unchanged Min/Max costs sympy's pairwise comparisons again)
            x = x.func(*args)
        if isinstance(x, (sympy.Min, sympy.Max)):
            kept = list(x.args)
            for a in list(kept):
                if len(kept) > 1 and any(b is not a and dominated(a, b, isinstance(x, sympy.Max)) for b in kept):
                    kept.remove(a)
            if len(kept) < len(x.args):
                return x.func(*kept) if len(kept) > 1 else kept[0]
        return x

    try:
        return visit(e)
    except Exception:  # noqa: BLE001 - a simplification is optional
        return e
