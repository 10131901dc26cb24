"""shapes.compiled: relations as closures compute what shapes.evaluate computes (an oracle over
random relations of the expression language, and a table of its corners)."""

from __future__ import annotations

import itertools

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from expressions import expressions, relations
from shapes import FloorDiv, int_symbol, parse_expr
from shapes.compiled import compile_relation
from shapes.expr import evaluate

a, b = int_symbol("a"), int_symbol("b")
POINTS = list(itertools.product([-5, -1, 0, 1, 2, 3, 7, 64], repeat=2))


def _agrees(rel: sympy.Basic) -> None:
    test = compile_relation(rel)
    for x, y in POINTS:
        try:
            want: object = evaluate(rel, {a: x, b: y})
        except ZeroDivisionError:
            want = ZeroDivisionError
        try:
            got: object = test({"a": x, "b": y})
        except ZeroDivisionError:
            got = ZeroDivisionError
        assert got == want, (rel, x, y)


@pytest.mark.parametrize("rel", [
    sympy.Eq(sympy.Mod(a, 4), 0), sympy.Ge(FloorDiv(a - 1, 3), b), sympy.Eq(sympy.Mod(-a, 4), 3),
    sympy.Eq(FloorDiv(a, b), 2), sympy.Lt(sympy.Max(a, b, 3) - sympy.Min(a, 2), a * b),
    sympy.And(sympy.Ge(a, 2), sympy.Not(sympy.Eq(b, 3))), sympy.Or(sympy.Lt(a, 0), sympy.Gt(a ** 2, 9)),
    sympy.Eq(a / 2 + b / 2, 3),  # rational coefficients: the evaluator's turn
    sympy.true,
], ids=str)
def test_corners(rel: sympy.Basic) -> None:
    _agrees(rel)


@settings(max_examples=300, deadline=None)
@given(relations(expressions(["a", "b", "3"])))
def test_random_relations_agree_with_the_evaluator(text: str) -> None:
    rel = parse_expr(text, {"a": a, "b": b})
    if isinstance(rel, sympy.logic.boolalg.BooleanAtom) or rel.free_symbols <= {a, b}:
        _agrees(rel)


@settings(max_examples=100, deadline=None)
@given(st.lists(relations(expressions(["a", "b"])), min_size=2, max_size=3))
def test_conjunctions_agree_with_the_evaluator(texts: list[str]) -> None:
    _agrees(sympy.And(*(parse_expr(t, {"a": a, "b": b}) for t in texts)))
