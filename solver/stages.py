"""The cheap decision stages: canonical form, intervals, congruences.

Each stage takes a relation in *root form* (every symbol a union-find root) as
``(op, d)`` meaning ``d op 0`` with ``op`` in ``'==', '!=', '>='`` and answers a
:class:`~solver.truth.Truth` or ``None`` (this stage cannot tell). A stage only answers
TRUE or FALSE when it is sound over the over-approximation it sees; UNKNOWN only when
its view of the symbols involved is exact.

>>> import sympy
>>> from shapes import int_symbol
>>> r = int_symbol("r")
>>> by_interval(">=", r - 2, {r: (2, 10)}.__getitem__)
<Truth.TRUE: 'true'>
"""

from __future__ import annotations

from collections.abc import Callable

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import FloorDiv
from solver import congruence as cg
from solver.interval import Interval, bound
from solver.truth import Truth

__all__ = ["by_constant", "by_sides", "by_interval", "linear_terms", "by_congruence", "fold_modular", "decide_on_values",
           "normalize", "simplify_minmax"]


def by_constant(op: str, d: sympy.Expr) -> Truth | None:
    """Decide ``d op 0`` when ``d`` is a constant."""
    if not d.is_Integer:
        return None
    v = int(d)
    return Truth.of(v == 0 if op == "==" else v != 0 if op == "!=" else v >= 0)


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


def by_sides(rel: sympy.Basic, lookup: Callable[[sympy.Symbol], Interval]) -> Truth | None:
    """Compare interval bounds of the two sides as written (no rewriting): settles most size
    checks (``Ne(Min(32, 32*s), 32)``) before any sympy algebra.

    >>> from shapes import int_symbol
    >>> s = int_symbol("s")
    >>> by_sides(sympy.Ne(sympy.Min(32, 32 * s), 32), {s: (2, 64)}.__getitem__)
    <Truth.FALSE: 'false'>
    """
    try:
        lo1, hi1 = bound(rel.lhs, lookup)
        lo2, hi2 = bound(rel.rhs, lookup)
    except (UnsupportedExpressionError, ZeroDivisionError, TypeError):
        return None
    if isinstance(rel, (sympy.Eq, sympy.Ne)):
        if hi1 < lo2 or hi2 < lo1:
            t = Truth.FALSE
        elif lo1 == hi1 == lo2 == hi2:
            t = Truth.TRUE
        else:
            return None
        return t if isinstance(rel, sympy.Eq) else t.negate()
    if isinstance(rel, (sympy.Lt, sympy.Gt)):
        small, big = ((lo1, hi1), (lo2, hi2)) if isinstance(rel, sympy.Lt) else ((lo2, hi2), (lo1, hi1))
        if small[1] < big[0]:
            return Truth.TRUE
        return Truth.FALSE if small[0] >= big[1] else None
    small, big = ((lo1, hi1), (lo2, hi2)) if isinstance(rel, sympy.Le) else ((lo2, hi2), (lo1, hi1))
    if small[1] <= big[0]:
        return Truth.TRUE
    return Truth.FALSE if small[0] > big[1] else None


def by_interval(op: str, d: sympy.Expr, lookup: Callable[[sympy.Symbol], Interval]) -> Truth | None:
    """Decide ``d op 0`` from interval bounds of the roots."""
    lo, hi = bound(d, lookup)
    return decide_on_values(op, lo, hi)


def linear_terms(d: sympy.Expr) -> tuple[dict[sympy.Symbol, int], int] | None:
    """``({root: coef}, const)`` when ``d`` is linear with integer coefficients, else None."""
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


def by_congruence(
    op: str, d: sympy.Expr, cong_of: Callable[[sympy.Symbol], cg.Congruence]
) -> Truth | None:
    """Decide ``d == 0`` / ``d != 0`` for linear ``d`` from the roots' congruences."""
    if op == ">=":
        return None
    lin = linear_terms(d)
    if lin is None:
        return None
    coeffs, const = lin
    g, value = cg.residue_of([(a, cong_of(r)) for r, a in coeffs.items()], const, 0)
    if g != 0 and value != 0:
        return Truth.FALSE if op == "==" else Truth.TRUE
    return None


def fold_modular(d: sympy.Expr, cong_of: Callable[[sympy.Symbol], cg.Congruence]) -> sympy.Expr:
    """Replace ``Mod(e, k)`` / ``FloorDiv(e, k)`` whose value mod k the congruences determine.

    ``Mod(e, k)`` becomes the constant residue and ``FloorDiv(e, k)`` the exact
    ``(e - residue) / k``. Returns ``d`` unchanged when nothing folds.
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

    return sympy.expand(fold(d))


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
    ``b >= 1`` is ``t - 4*(t//4) == 0``), and ``t - k*(t//k)`` becomes ``Mod(t, k)``. Only
    for nonlinear ``d``; linear ones are already in normal form.
    """
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
        if not x.args:
            return x
        x = x.func(*(visit(a) for a in x.args))
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
