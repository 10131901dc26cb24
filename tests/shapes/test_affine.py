"""Tests for shapes.affine: affine forms in one root, checked against brute force."""

from __future__ import annotations

import itertools

import pytest
import sympy

from shapes import FloorDiv, int_symbol
from shapes.affine import Affine, linear_terms, parse_affine

r, s = int_symbol("r"), int_symbol("s")
COEFFS = [a for a in range(-4, 5) if a]


@pytest.mark.parametrize(("expr", "want"), [
    (r, Affine(r, 1, 0)),
    (4 * r, Affine(r, 4, 0)),
    (2 * (r + 3), Affine(r, 2, 6)),
    (10 - r, Affine(r, -1, 10)),
    (r + s, None),
    (r * r, None),
    (r / 2, None),
    (FloorDiv(r, 2), None),
    (sympy.Mod(r, 2), None),
    (sympy.Integer(3), None),
    (r - r + 1, None),
])
def test_of(expr, want) -> None:  # type: ignore[no-untyped-def]
    assert Affine.of(expr) == want


@pytest.mark.parametrize(("a", "b"), list(itertools.product(COEFFS, range(-3, 4))))
def test_solve_root_range_and_compose_against_brute_force(a: int, b: int) -> None:
    f = Affine(r, a, b)
    roots = range(-30, 31)
    for value in range(-20, 21):
        want = [x for x in roots if f.at(x) == value]
        assert f.solve(value) == (want[0] if want else None)
    for lo, hi in [(-5, 7), (0, 0), (3, 2), (None, 4), (-6, None), (None, None)]:
        r_lo, r_hi = f.root_range(lo, hi)
        inside = [x for x in roots if (lo is None or f.at(x) >= lo) and (hi is None or f.at(x) <= hi)]
        got = [x for x in roots if (r_lo is None or x >= r_lo) and (r_hi is None or x <= r_hi)]
        assert got == inside, (lo, hi, r_lo, r_hi)
    g = Affine(s, 3, -1)
    assert all(f.compose(g).at(x) == f.at(g.at(x)) for x in roots)
    assert f.expr.subs(r, 5) == f.at(5)
    inv = f.inverse(s)
    assert (inv is not None) == (abs(a) == 1)
    if inv is not None:
        assert all(inv.at(f.at(x)) == x for x in roots)


def test_linear_terms() -> None:
    assert linear_terms(2 * r - 3 * s + 4) == ({r: 2, s: -3}, 4)
    assert linear_terms(r * s) is None and linear_terms(FloorDiv(r, 2) + 1) is None


@pytest.mark.parametrize(("text", "want"), [
    ("seq", Affine(int_symbol("seq"), 1, 0)),
    ("4*seq", Affine(int_symbol("seq"), 4, 0)),
    ("2*b+1", Affine(int_symbol("b"), 2, 1)),
    ("3*(b-1)*2", Affine(int_symbol("b"), 6, -6)),
    ("-b+10", Affine(int_symbol("b"), -1, 10)),
    ("b+c", None), ("b*b", None), ("7", None), ("b-b", None), ("b//2", None), ("2*", None), ("lambda", None),
])
def test_parse_affine(text: str, want: Affine | None) -> None:
    got = parse_affine(text)
    assert got == want
    if got is not None:  # agrees with Python's own arithmetic
        for v in range(-3, 4):
            assert got.at(v) == eval(text, {got.root.name: v})  # noqa: S307 - test input
