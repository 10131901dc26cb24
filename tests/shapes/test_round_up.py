"""``round_up_sums``: padding sums ``e + Mod(-e, m)`` read as multiples of ``m`` (a table, and a
brute-force oracle: the rewritten expression has the same value as the original everywhere on
a grid of integers, negatives included)."""

from __future__ import annotations

import itertools

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from shapes.expr import FloorDiv, canonical, evaluate, int_symbol, round_up_sums

a, b = int_symbol("a"), int_symbol("b")
q = FloorDiv(a, 4)

CASES = [
    # (expression, its rewrite)
    (a + sympy.Mod(-a, 7), 7 * FloorDiv(a + 6, 7)),
    (q + sympy.Mod(6 * q, 7), 7 * FloorDiv(q + 6, 7)),
    (FloorDiv(q + sympy.Mod(6 * q, 7), 7), FloorDiv(q + 6, 7)),
    (sympy.Mod(q + sympy.Mod(6 * q, 7), 7), sympy.Integer(0)),
    (3 * a + 3 * sympy.Mod(-a, 2) + b, 6 * FloorDiv(a + 1, 2) + b),
    (a + b + sympy.Mod(-a - b, 5), 5 * FloorDiv(a + b + 4, 5)),
    # the window view's element count: (pad_h * pad_w) == 49 * (pad_h // 7) * (pad_w // 7)
    ((a + sympy.Mod(6 * a, 7)) * (b + sympy.Mod(6 * b, 7))
     - 49 * FloorDiv(a + sympy.Mod(6 * a, 7), 7) * FloorDiv(b + sympy.Mod(6 * b, 7), 7), sympy.Integer(0)),
]

UNCHANGED = [
    a + sympy.Mod(a, 7),            # a remainder added, not a padding
    2 * a + sympy.Mod(-a, 7),       # the padding of a, added to 2a
    a + sympy.Mod(-b, 7),           # another dim's padding
    sympy.Mod(-a, 7),
    a + sympy.Mod(-a, b),           # a symbolic modulus
]


@pytest.mark.parametrize(("expr", "out"), CASES, ids=[str(e) for e, _ in CASES])
def test_padding_sums_read_as_multiples(expr: sympy.Expr, out: sympy.Expr) -> None:
    assert sympy.expand(round_up_sums(expr) - out) == 0


@pytest.mark.parametrize("expr", UNCHANGED, ids=[str(e) for e in UNCHANGED])
def test_other_sums_are_left_as_they_are(expr: sympy.Expr) -> None:
    assert round_up_sums(expr) == expr


def test_canonical_reads_padding_sums_in_relations() -> None:
    rel = sympy.Eq(16 * (a + sympy.Mod(6 * a, 7)), 112 * FloorDiv(a + sympy.Mod(6 * a, 7), 7))
    assert canonical(rel) is sympy.true


GRID = range(-15, 16)


def _same_everywhere(before: sympy.Expr, after: sympy.Expr) -> None:
    for x, y in itertools.product(GRID, range(-5, 6)):
        env = {a: x, b: y}
        assert evaluate(after, env) == evaluate(before, env), (before, after, env)


_GENS = st.sampled_from([a, b, FloorDiv(a, 4), FloorDiv(a + b, 3), sympy.Mod(b, 3), a * b])
_COEF = st.integers(-3, 3).filter(bool)


@st.composite
def _padding_sums(draw: st.DrawFn) -> sympy.Expr:
    """``k*e + k*Mod(c*e + c0, m) + rest``: a padding sum when ``c = -1`` mod ``m``, sometimes
    not (``c`` drawn freely), with other terms beside it."""
    m = draw(st.integers(1, 9))
    k = draw(_COEF)
    gens = draw(st.lists(_GENS, min_size=1, max_size=2, unique=True))
    ds = [draw(_COEF) for _ in gens]
    pad = draw(st.booleans())
    cs = [(-d if pad else draw(st.integers(-9, 9))) + m * draw(st.integers(-1, 1)) for d in ds]
    c0 = draw(st.integers(-9, 9))
    e = sum((d * g for d, g in zip(ds, gens)), sympy.Integer(0))
    u = sum((c * g for c, g in zip(cs, gens)), sympy.Integer(c0))
    rest = draw(st.sampled_from([sympy.Integer(0), sympy.Integer(5), b, -2 * FloorDiv(a, 4)]))
    total = k * e + k * sympy.Mod(u, m) + rest
    return draw(st.sampled_from([total, FloorDiv(total, m), sympy.Mod(total, m), total * (b + 1)]))


@settings(max_examples=300, deadline=None)
@given(_padding_sums())
def test_round_up_keeps_every_value(expr: sympy.Expr) -> None:
    _same_everywhere(expr, round_up_sums(expr))
