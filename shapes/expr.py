"""Symbolic-dim expressions: integer symbols, floor division, canonical forms, evaluation.

The language is sympy expressions built from integer symbols and constants with
``+ - *``, ``sympy.Mod``, :class:`FloorDiv` (also written ``sympy.floor(a / k)``),
``sympy.Min`` and ``sympy.Max``.

>>> b = int_symbol("b")
>>> FloorDiv(2 * b + 1, 3)
FloorDiv(2*b + 1, 3)
>>> FloorDiv(2 * b + 1, 2)
b
>>> FloorDiv(-7, 2)
-4
>>> evaluate(FloorDiv(2 * b + 1, 2) + sympy.Mod(b, 3), {b: 5})
7
>>> canonical(sympy.floor(b / 4))
FloorDiv(b, 4)
"""

from __future__ import annotations

import math
import unicodedata
from fractions import Fraction
from collections.abc import Mapping
from typing import Any

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.relation import relation_of

__all__ = [
    "FloorDiv",
    "canonical_name",
    "int_symbol",
    "canonical",
    "round_up_sums",
    "evaluate",
    "check_supported",
    "symbols_of",
]


_RELATIONS = (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)
_BOOL_OPS = (sympy.And, sympy.Or, sympy.Not)


class FloorDiv(sympy.Function):
    """Integer floor division ``a // b`` with Python semantics (rounds toward -inf).

    Constants fold when built; ``FloorDiv(a, 1)`` is ``a``.

    >>> FloorDiv(7, 2), FloorDiv(-7, 2), FloorDiv(int_symbol("n"), 1)
    (3, -4, n)
    """

    is_integer = True
    nargs = 2

    @classmethod
    def eval(cls, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
        if b == 0:
            raise ZeroDivisionError("FloorDiv by zero")
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) // int(b))
        if b == 1:
            return a
        if a == 0:
            return sympy.Integer(0)
        if b.is_Integer and int(b) > 0:
            return _split_multiple(a, int(b))
        return None

    def _sympystr(self, printer: sympy.printing.str.StrPrinter) -> str:
        a, b = self.args
        return f"FloorDiv({printer.doprint(a)}, {printer.doprint(b)})"


def _split_multiple(a: sympy.Expr, k: int) -> sympy.Expr | None:
    """``FloorDiv(k*y + c, k) == y + c // k`` when every non-constant term is a multiple of k."""
    const, rest = a.as_coeff_Add()
    if rest == 0 or not const.is_Integer:
        return None
    for term in sympy.Add.make_args(rest):
        coeff = term.as_coeff_Mul()[0]
        if not coeff.is_Integer or int(coeff) % k:
            return None
    return sympy.expand(rest / k) + sympy.Integer(int(const) // k)


def canonical_name(name: str) -> str:
    """The canonical spelling of a symbol name: its NFKC normal form.

    Python reads identifiers in NFKC form (PEP 3131), so the parser sees ``ｎ`` (fullwidth)
    as ``n``; declaring, parsing and JSON use this one form too, so two spellings of one
    identifier are one name.

    >>> canonical_name("ｎ"), canonical_name("ﬁx"), canonical_name("s0")
    ('n', 'fix', 's0')
    """
    return unicodedata.normalize("NFKC", name)


def int_symbol(name: str) -> sympy.Symbol:
    """An integer-valued sympy symbol, the only kind of symbol the engine accepts.

    The name is taken in its canonical form (:func:`canonical_name`).

    >>> int_symbol("s0").is_integer
    True
    >>> int_symbol("ｎ") == int_symbol("n")
    True
    """
    return sympy.Symbol(canonical_name(name), integer=True)


def _floor_to_floordiv(arg: sympy.Expr) -> sympy.Expr:
    num, den = sympy.fraction(sympy.together(arg))
    if den == 1:
        return num
    if not den.is_Integer:
        raise UnsupportedExpressionError(
            f"floor({arg}): only division by an integer constant is supported; "
            "write FloorDiv(a, b) for a symbolic divisor"
        )
    return FloorDiv(sympy.expand(num), den)


def canonical(expr: sympy.Basic) -> sympy.Basic:
    """Rewrite an expression or relation into the engine's canonical spelling.

    ``floor(a / k)`` becomes ``FloorDiv(a, k)``; ``Eq``/``Ne`` between two conditions
    (logical equivalence and exclusive or) become ``And``/``Or``; everything else is left to
    sympy's own normal form (sorted sums and products, folded constants).

    >>> n = int_symbol("n")
    >>> canonical(sympy.Eq(sympy.floor((n + 1) / 2), 3))
    Eq(FloorDiv(n + 1, 2), 3)
    >>> canonical(sympy.Eq(n >= 1, n >= 2))
    ((n >= 1) & (n >= 2)) | ((n < 1) & (n < 2))
    """
    if _has_condition_equality(expr):
        expr = _condition_equalities_as_logic(expr)
    if expr.has(sympy.floor):
        expr = expr.replace(lambda e: isinstance(e, sympy.floor), lambda e: _floor_to_floordiv(e.args[0]))
    if expr.has(sympy.Mod):
        expr = round_up_sums(expr)
    return expr


def round_up_sums(expr: sympy.Basic) -> sympy.Basic:
    """Spell every padding sum ``e + Mod(-e, m)`` (``e`` rounded up to a multiple of ``m``, as
    a model pads to a window or patch size) as the multiple ``m*FloorDiv(e + m - 1, m)``.

    An identity for every integer ``e`` and ``m >= 1``: ``Mod(-e, m)`` is the least ``r >= 0``
    with ``e + r`` divisible by ``m``. sympy spells ``Mod(-e, 7)`` as ``Mod(6*e, 7)``; the sum
    may carry a factor and other terms (``k*e + k*Mod(c*e, m) + rest`` with ``c = -1`` mod
    ``m``). Read as a multiple, what follows from it is plain: ``(e + Mod(-e, 7)) // 7`` is
    ``(e + 6) // 7`` and a view of the padded size into windows divides exactly, where the sum
    read literally leaves a nonlinear remainder no stage decides.

    >>> a = int_symbol("a")
    >>> round_up_sums(a + sympy.Mod(-a, 7))
    7*FloorDiv(a + 6, 7)
    >>> round_up_sums(FloorDiv(a + sympy.Mod(6*a, 7), 7))
    FloorDiv(a + 6, 7)
    >>> round_up_sums(2*a + 2*sympy.Mod(-a - 1, 4) + 5)
    8*FloorDiv(a + 4, 4) + 3
    >>> round_up_sums(a + sympy.Mod(a, 7))  # not a padding sum
    a + Mod(a, 7)
    """
    if not expr.args or not expr.has(sympy.Mod):
        return expr
    return _rounded(expr, {})


def _rounded(expr: sympy.Basic, memo: dict[sympy.Basic, sympy.Basic]) -> sympy.Basic:
    hit = memo.get(expr)
    if hit is not None:
        return hit
    out = expr
    args = tuple(_rounded(a, memo) if a.args else a for a in expr.args)
    if args != expr.args:
        out = relation_of(expr.func, *args) if isinstance(expr, _RELATIONS) else expr.func(*args)
    if isinstance(out, sympy.Add) and any(isinstance(t, sympy.Mod) or (t.is_Mul and any(
            isinstance(f, sympy.Mod) for f in t.args)) for t in out.args):
        for term in out.args:
            multiple = _as_multiple(out, term)
            if multiple is not None:
                out = _rounded(multiple, memo)
                break
    memo[expr] = out
    return out


def _as_multiple(total: sympy.Add, term: sympy.Expr) -> sympy.Expr | None:
    """``total`` with ``term`` (``k*Mod(u, m)``) and the terms it pads read as a multiple of
    ``m`` (see :func:`round_up_sums`); None when ``total`` has no ``k*e`` with ``u = -e`` mod m."""
    k, mod = term.as_coeff_Mul()
    if not isinstance(mod, sympy.Mod) or not k.is_Integer:
        return None
    u, m = mod.args
    if not m.is_Integer or int(m) < 1:
        return None
    n, c0 = int(m), 0
    others: dict[sympy.Expr, sympy.Expr] = {}
    for t in sympy.Add.make_args(total):
        if t is not term:
            coeff, gen = t.as_coeff_Mul()
            others[gen] = others.get(gen, sympy.Integer(0)) + coeff
    e = sympy.Integer(0)
    for t in sympy.Add.make_args(sympy.expand(u)):
        c, gen = t.as_coeff_Mul()
        if not c.is_Integer:
            return None
        if gen == 1:
            c0 += int(c)
            continue
        have = others.get(gen)
        if have is None or not (have / k).is_Integer or (int(have / k) + int(c)) % n:
            return None
        e += (have / k) * gen
    d0 = -c0 % n
    return total - term - k * e + k * n * FloorDiv(e + d0 + n - 1, n) - k * d0


def _is_condition_equality(e: sympy.Basic) -> bool:
    return isinstance(e, (sympy.Eq, sympy.Ne)) and not (
        isinstance(e.args[0], sympy.Expr) and isinstance(e.args[1], sympy.Expr))


def _has_condition_equality(e: sympy.Basic) -> bool:
    """Whether an ``Eq``/``Ne`` between conditions occurs (only in the boolean skeleton)."""
    if isinstance(e, (sympy.Eq, sympy.Ne)):
        return _is_condition_equality(e)
    if isinstance(e, _BOOL_OPS):
        return any(_has_condition_equality(a) for a in e.args)
    return False


def _condition_equalities_as_logic(e: sympy.Basic) -> sympy.Basic:
    if _is_condition_equality(e):
        a, b = (_condition_equalities_as_logic(x) for x in e.args)
        if isinstance(e, sympy.Eq):
            return sympy.Or(sympy.And(a, b), sympy.And(sympy.Not(a), sympy.Not(b)))
        return sympy.Or(sympy.And(a, sympy.Not(b)), sympy.And(sympy.Not(a), b))
    if isinstance(e, _BOOL_OPS):
        return type(e)(*(_condition_equalities_as_logic(a) for a in e.args))
    return e



def check_supported(expr: sympy.Basic, *, what: str = "expression") -> None:
    """Raise :class:`UnsupportedExpressionError` naming the first unsupported node.

    >>> check_supported(sympy.Eq(int_symbol("n") % 2, 0))
    >>> check_supported(sympy.sin(int_symbol("n")))
    Traceback (most recent call last):
    ...
    shapes.errors.UnsupportedExpressionError: sin(n) in expression sin(n): ...
    """
    for node in sympy.preorder_traversal(expr):
        if _node_supported(node):
            continue
        raise UnsupportedExpressionError(
            f"{node} in {what} {expr}: the symbolic-dim language has integer symbols and "
            "constants, + - *, Mod, FloorDiv, Min, Max, Eq/Ne/Lt/Le/Gt/Ge and And/Or/Not"
        )


def _node_supported(node: sympy.Basic) -> bool:
    if isinstance(node, sympy.Symbol):
        return bool(node.is_integer)
    if isinstance(node, sympy.Rational):
        return True
    if isinstance(node, (sympy.Add, sympy.Mul, sympy.Mod, FloorDiv, sympy.Min, sympy.Max)):
        return True
    if isinstance(node, sympy.Pow):
        exp = node.exp
        return bool(exp.is_Integer and int(exp) >= 0)
    if isinstance(node, _RELATIONS):  # integer operands (canonical() rewrites Eq of conditions)
        return all(isinstance(a, sympy.Expr) for a in node.args)
    if isinstance(node, _BOOL_OPS):
        return True
    return node in (sympy.true, sympy.false)


def symbols_of(expr: sympy.Basic) -> frozenset[sympy.Symbol]:
    """The free symbols of an expression, as a frozenset."""
    return frozenset(expr.free_symbols)


def evaluate(expr: sympy.Basic, env: Mapping[sympy.Symbol, int]) -> int | bool:
    """Evaluate an expression (to an int) or relation (to a bool) exactly, in Python ints.

    The evaluator is independent of sympy's own simplification, so tests can use it as an
    oracle. A rational intermediate (``n/2`` outside a floor) is evaluated exactly and
    must come out integral for expressions.

    >>> n = int_symbol("n")
    >>> evaluate(sympy.And(sympy.Ge(n, 2), sympy.Ne(sympy.Mod(n, 2), 1)), {n: 4})
    True
    """
    value = _eval(expr, env)
    if isinstance(value, Fraction):
        if value.denominator != 1:
            raise UnsupportedExpressionError(f"{expr} is not integer-valued at {dict(env)}")
        return int(value)
    return value


def _eval(e: sympy.Basic, env: Mapping[sympy.Symbol, int]) -> Any:  # noqa: C901 - one dispatch
    if e.is_Integer:
        return int(e)
    if e.is_Rational:
        return Fraction(int(e.p), int(e.q))
    if e.is_Symbol:
        try:
            return env[e]
        except KeyError:
            raise UnsupportedExpressionError(f"no value given for symbol {e}") from None
    if e is sympy.true:
        return True
    if e is sympy.false:
        return False
    args = e.args
    if isinstance(e, sympy.Add):
        return sum(_eval(a, env) for a in args)
    if isinstance(e, sympy.Mul):
        return math.prod(_eval(a, env) for a in args)
    if isinstance(e, sympy.Pow):
        return _eval(args[0], env) ** int(args[1])
    if isinstance(e, FloorDiv):
        a, b = _eval(args[0], env), _eval(args[1], env)
        return _floor_of(a, b)
    if isinstance(e, sympy.Mod):
        a, b = _eval(args[0], env), _eval(args[1], env)
        return a - b * _floor_of(a, b)
    if isinstance(e, sympy.floor):
        v = _eval(args[0], env)
        return math.floor(v)
    if isinstance(e, sympy.Min):
        return min(_eval(a, env) for a in args)
    if isinstance(e, sympy.Max):
        return max(_eval(a, env) for a in args)
    if isinstance(e, sympy.Eq):
        return _eval(args[0], env) == _eval(args[1], env)
    if isinstance(e, sympy.Ne):
        return _eval(args[0], env) != _eval(args[1], env)
    if isinstance(e, sympy.Lt):
        return _eval(args[0], env) < _eval(args[1], env)
    if isinstance(e, sympy.Le):
        return _eval(args[0], env) <= _eval(args[1], env)
    if isinstance(e, sympy.Gt):
        return _eval(args[0], env) > _eval(args[1], env)
    if isinstance(e, sympy.Ge):
        return _eval(args[0], env) >= _eval(args[1], env)
    if isinstance(e, sympy.And):
        return all(_eval(a, env) for a in args)
    if isinstance(e, sympy.Or):
        return any(_eval(a, env) for a in args)
    if isinstance(e, sympy.Not):
        return not _eval(args[0], env)
    raise UnsupportedExpressionError(f"cannot evaluate {e} (in the symbolic-dim language?)")


def _floor_of(a: Any, b: Any) -> int:
    if b == 0:
        raise ZeroDivisionError(f"division by zero evaluating {a} // {b}")
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    return math.floor(Fraction(a) / Fraction(b))
