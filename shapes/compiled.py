"""Relations compiled to Python closures, for checking many calls fast (a contract's check).

:func:`compile_relation` walks a relation of the symbolic-dim language once and returns a
function of ``{symbol name: int}`` that computes what :func:`shapes.expr.evaluate` computes,
in Python ints, without walking sympy's tree again (a contract check runs on every call of a
deployed program: about 2 us per condition instead of 20). Anything outside the integer
language (a rational coefficient) falls back to :func:`shapes.expr.evaluate`.

>>> from shapes.expr import int_symbol
>>> n = int_symbol("n")
>>> check = compile_relation(sympy.Eq(sympy.Mod(n, 4), 0) & (FloorDiv(n, 4) <= 8))
>>> check({"n": 8}), check({"n": 6}), check({"n": 36})
(True, False, False)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from functools import reduce
from typing import Any

import sympy

from shapes.expr import FloorDiv, evaluate, int_symbol

__all__ = ["compile_relation", "compile_expr"]

Env = Mapping[str, int]
Fn = Callable[[Env], Any]

_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    sympy.Eq: operator.eq, sympy.Ne: operator.ne, sympy.Lt: operator.lt, sympy.Le: operator.le,
    sympy.Gt: operator.gt, sympy.Ge: operator.ge,
}


def compile_relation(rel: sympy.Basic) -> Callable[[Env], bool]:
    """``rel`` as a function of the symbols' values by name (see the module docstring)."""
    try:
        fn = compile_expr(rel)
    except _Fallback:
        return lambda env: bool(evaluate(rel, {int_symbol(k): v for k, v in env.items()}))
    return fn if isinstance(rel, sympy.logic.boolalg.Boolean) else (lambda env: bool(fn(env)))


class _Fallback(Exception):
    """A construct the closures do not compile: the evaluator's turn."""


def _fold(op: Callable[[Any, Any], Any], parts: list[Fn]) -> Fn:
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        a, b = parts
        return lambda env: op(a(env), b(env))
    return lambda env: reduce(op, (p(env) for p in parts))


def _compare(e: sympy.Basic, parts: list[Fn]) -> Fn:
    """A comparison; a dim against a constant or another dim (most of a contract's conditions:
    its ranges and equalities) reads the values directly, with no closure per side."""
    op = _COMPARE[type(e)]
    lhs, rhs = e.args
    if lhs.is_Symbol and rhs.is_Integer:
        name, k = lhs.name, int(rhs)
        return lambda env: op(env[name], k)
    if lhs.is_Integer and rhs.is_Symbol:
        k, name = int(lhs), rhs.name
        return lambda env: op(k, env[name])
    if lhs.is_Symbol and rhs.is_Symbol:
        left, right = lhs.name, rhs.name
        return lambda env: op(env[left], env[right])
    a, b = parts
    return lambda env: op(a(env), b(env))


def compile_expr(e: sympy.Basic) -> Fn:  # noqa: C901 - one dispatch
    """An expression or relation as a closure over ``{symbol name: int}``; raises
    :class:`_Fallback` (internal) for what it does not compile."""
    if e.is_Integer:
        value = int(e)
        return lambda env: value
    if e is sympy.true or e is sympy.false:
        truth = bool(e)
        return lambda env: truth
    if e.is_Symbol:
        name = e.name
        return lambda env: env[name]
    if e.is_Rational:
        raise _Fallback(e)
    parts = [compile_expr(a) for a in e.args]
    if isinstance(e, sympy.Add):
        return _fold(operator.add, parts)
    if isinstance(e, sympy.Mul):
        return _fold(operator.mul, parts)
    if isinstance(e, sympy.Pow) and e.args[1].is_Integer and int(e.args[1]) >= 0:
        base, k = parts[0], int(e.args[1])
        return lambda env: base(env) ** k
    if isinstance(e, FloorDiv):
        a, b = parts
        return lambda env: a(env) // b(env)
    if isinstance(e, sympy.Mod):
        a, b = parts
        return lambda env: a(env) % b(env)
    if isinstance(e, sympy.Min):
        return lambda env: min(p(env) for p in parts)
    if isinstance(e, sympy.Max):
        return lambda env: max(p(env) for p in parts)
    if isinstance(e, sympy.floor):
        raise _Fallback(e)
    if type(e) in _COMPARE:
        return _compare(e, parts)
    if isinstance(e, sympy.And):
        return lambda env: all(p(env) for p in parts)
    if isinstance(e, sympy.Or):
        return lambda env: any(p(env) for p in parts)
    if isinstance(e, sympy.Not):
        (a,) = parts
        return lambda env: not a(env)
    raise _Fallback(e)


