"""The reparametrization stage (:mod:`solver.decide.reparam`) against brute force.

A root held to a residue class (``x = c (mod m)``) is substituted by ``m*t + c``; the stage may
only answer TRUE or FALSE where every admissible point of a small box agrees. Two families:

* the stage alone, on random nested ``Mod``/``FloorDiv``/``Min``/``Max`` questions (constant and
  symbolic divisors) over a view of ranges and congruences;
* the whole solver after ``assume(Mod(x, m) == c)``, where the stage runs after the others:
  every TRUE/FALSE equals brute force.

Plus the shapes that motivated it: Swin's window padding, decided under ``h = 0 (mod 32)``, and
left open under ``h = 0 (mod 16)``, where it does not hold for every size.
"""

from __future__ import annotations

import random

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle_support import COUNTS, REL_OPS, SYMS, expressions, truth_of, values
from shapes import FloorDiv, evaluate
from solver import Solver, Truth
from solver.decide.reparam import by_reparametrized
from solver.kernel.normal_form import Question, View

X, Y = SYMS[0], SYMS[1]
KINDS = ("add", "mul", "scale", "mod", "floordiv", "min", "max", "symdiv", "symmod", "affine")


def _points(x_range: tuple[int, int], m: int, c: int, y_range: tuple[int, int]) -> list[dict]:
    return [{X: a, Y: b} for a in range(x_range[0], x_range[1] + 1) if (a - c) % m == 0
            for b in range(y_range[0], y_range[1] + 1)]


@st.composite
def _cases(draw):
    m = draw(st.sampled_from([2, 3, 4, 6, 8, 16]))
    c = draw(st.integers(0, m - 1))
    lo = draw(st.integers(-4, 6))
    x_range = (lo, lo + draw(st.integers(m, 4 * m + 8)))
    ylo = draw(st.integers(-2, 3))
    y_range = (ylo, ylo + draw(st.integers(0, 4)))
    lhs = draw(expressions([X, Y], depth=3, kinds=KINDS, divisors=(2, 3, 4, -2, 8)))
    rhs = draw(st.integers(-3, 6))
    return m, c, x_range, y_range, draw(st.sampled_from(REL_OPS))(lhs, rhs)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(_cases())
def test_the_stage_alone_is_never_wrong(case):
    m, c, x_range, y_range, rel = case
    if isinstance(rel, sympy.logic.boolalg.BooleanAtom):
        return
    points = _points(x_range, m, c, y_range)
    truths = values(rel, points)
    if truths is None or not points:
        return  # divides by zero somewhere in the box / no admissible point
    view = View.of({X: x_range, Y: y_range}, {X: (m, c)})
    got = by_reparametrized(Question.of(rel), view)
    COUNTS["reparam: questions"] += 1
    if got is None:
        return
    assert got is truth_of(truths), (m, c, x_range, y_range, rel, got)
    COUNTS["reparam: answered alone"] += 1


def test_whole_solver_after_a_congruence_is_never_wrong():
    rng = random.Random(7)
    answered = 0
    for i in range(300):
        m, c = rng.choice([2, 4, 8, 16]), 0
        c = rng.randrange(m) if i % 3 else 0
        x_range = (rng.randint(0, 8), rng.randint(40, 90))
        s = Solver()
        x = s.symbol(X.name, *x_range)
        s.assume(sympy.Eq(sympy.Mod(x, m), c))
        points = _points(x_range, m, c, (0, 0))
        k = rng.choice([2, 4])
        inner = FloorDiv(x, k)
        padded = inner + sympy.Mod(-inner, k)  # inner rounded up to a multiple of k
        shapes = [sympy.Eq(sympy.Mod(padded, FloorDiv(padded, k)), 0), sympy.Eq(sympy.Mod(padded, k), 0),
                  sympy.Eq(k * FloorDiv(padded, k), padded), sympy.Ge(FloorDiv(padded, k), rng.randint(0, 12)),
                  sympy.Eq(sympy.Mod(3 * inner, 4), 0), sympy.Eq(FloorDiv(inner + 1, 2) * 2, inner),
                  sympy.Ne(sympy.Mod(FloorDiv(inner + 1, 2), 4), rng.randint(0, 3))]
        for rel in shapes:
            truths = values(rel, points)
            if truths is None:
                continue
            before = s.stats["congruence"]
            got = s.decide(rel)
            want = truth_of(truths)
            assert got is Truth.UNKNOWN or got is want, (m, c, x_range, rel, got, want)
            answered += got is not Truth.UNKNOWN and s.stats["congruence"] > before
            COUNTS["reparam: solver questions"] += 1
    COUNTS["reparam: solver answers by congruence"] = answered
    assert answered > 100


def _swin_padding(h: sympy.Symbol) -> list[sympy.Basic]:
    """The window guards of a 2-stage Swin (patch 4, window 4) on the height ``h``."""
    out = []
    for size in (FloorDiv(h, 4), FloorDiv(FloorDiv(h, 4) + 1, 2)):  # stage 1, and after patch merging
        padded = size + sympy.Mod(3 * size, 4)  # size + (4 - size % 4) % 4
        out += [sympy.Eq(sympy.Mod(padded, FloorDiv(padded, 4)), 0), sympy.Eq(FloorDiv(padded, FloorDiv(padded, 4)), 4),
                sympy.Le(sympy.Mod(3 * size, 4), 0)]
    return out


@pytest.mark.parametrize("m, want", [(32, Truth.TRUE), (16, None)])
def test_swin_window_guards(m, want):
    s = Solver()
    h = s.symbol("h", 36, None, hint=64)
    s.assume(sympy.Eq(sympy.Mod(h, m), 0))
    got = [s.decide(r) for r in _swin_padding(h)]
    if want is Truth.TRUE:
        assert got == [Truth.TRUE] * 6
        assert s.stats["z3"] == 0
    else:  # h = 16 (mod 32): the merged stage has 2*odd rows, padded; every answer stays honest
        assert got[:3] == [Truth.TRUE] * 3 and got[5] is not Truth.TRUE
        assert all(evaluate(r, {h: 48}) or g is not Truth.TRUE for r, g in zip(_swin_padding(h), got))


def test_a_divisor_the_class_makes_zero_is_no_crash():
    """``x // (h % 32)`` under ``h = 0 (mod 32)`` divides by zero wherever it is asked: the
    folds and the substitution give no answer (before, ``fold_modular`` raised out of decide)."""
    s = Solver()
    h, x = s.symbol("h", 32, 1000), s.symbol("x", 0, 10)
    s.assume(sympy.Eq(sympy.Mod(h, 32), 0))
    for e in (FloorDiv(x, sympy.Mod(h, 32)), sympy.Mod(x, sympy.Mod(h, 32))):
        assert s.decide(sympy.Eq(e, 0)) is Truth.UNKNOWN
