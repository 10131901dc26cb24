"""The Min/Max splits (:mod:`solver.kernel.extremes`) against evaluation: each rewrite holds
at every point of a box of integers, and the solver's answers to such questions (now split
before any other stage) agree with brute force.
"""

from __future__ import annotations

import itertools
import random

import pytest
import sympy

from oracle_support import COUNTS, Box
from shapes import FloorDiv, int_symbol
from solver import Solver, Truth
from solver.kernel.extremes import extreme_parts

SYMS = [int_symbol(f"e{i}") for i in range(3)]
LO, HI = -4, 9
POINTS = [dict(zip(SYMS, p)) for p in itertools.product(range(LO, HI + 1), repeat=len(SYMS))]
BOX = Box(POINTS)
n, w = SYMS[0], SYMS[1]

# (relation, disjunctions, the expected split; None: no split)
TABLE = [
    (sympy.Eq(sympy.Max(1, n - 5), n - 5), True, sympy.Ge(n - 5, 1)),
    (sympy.Eq(n - 5, sympy.Max(1, n - 5)), True, sympy.Ge(n - 5, 1)),
    (sympy.Ne(sympy.Max(1, n - 5), n - 5), False, sympy.Lt(n - 5, 1)),
    (sympy.Eq(sympy.Min(n, w, 3), n), True, sympy.And(sympy.Le(n, w), sympy.Le(n, 3))),
    (sympy.Ne(sympy.Min(n, w, 3), n), False, None),  # an Or of two: not a fact
    (sympy.Ne(sympy.Min(n, w, 3), n), True, sympy.Or(sympy.Gt(n, w), sympy.Gt(n, 3))),
    (sympy.Eq(sympy.Max(n, w), 3), True, None),  # 3 is no argument
    (sympy.Gt(sympy.Min(n, w), 4), False, sympy.And(sympy.Gt(n, 4), sympy.Gt(w, 4))),
    (sympy.Le(sympy.Max(n, w), 4), False, sympy.And(sympy.Le(n, 4), sympy.Le(w, 4))),
    (sympy.Ge(sympy.Max(n, w), 4), False, None),
    (sympy.Ge(sympy.Max(n, w), 4), True, sympy.Or(sympy.Ge(n, 4), sympy.Ge(w, 4))),
    (sympy.Lt(4, sympy.Min(n, w)), False, sympy.And(sympy.Gt(n, 4), sympy.Gt(w, 4))),
    (sympy.Ge(n + w, 4), True, None),
]


@pytest.mark.parametrize("rel, disjunctions, split", TABLE, ids=[str(t[0]) + ("|or" if t[1] else "") for t in TABLE])
def test_split_table(rel: sympy.Basic, disjunctions: bool, split: sympy.Basic | None) -> None:
    got = extreme_parts(rel, disjunctions)
    assert (got is None) == (split is None), got
    if got is not None:  # the expected parts (up to sympy's spelling), and right everywhere
        assert type(got) is type(split) and sympy.simplify_logic(sympy.Equivalent(got, split)) is sympy.true, got
        assert BOX.holds(rel) == BOX.holds(got)


def _term(rng: random.Random, x: sympy.Symbol) -> sympy.Expr:
    return rng.choice([x, FloorDiv(x, 2), 2 * x - 3, x + 1, sympy.Integer(rng.randint(-2, 5))])


def _relation(rng: random.Random) -> sympy.Basic:
    a, b, c = rng.sample(SYMS, 3)
    args = [_term(rng, a), _term(rng, b)] + ([_term(rng, c)] if rng.random() < 0.3 else [])
    mm = rng.choice([sympy.Min, sympy.Max])(*args)
    if not isinstance(mm, (sympy.Min, sympy.Max)):
        return sympy.Ge(mm, 0)
    if rng.random() < 0.4:
        member = rng.choice(mm.args)
        return rng.choice([sympy.Eq, sympy.Ne])(*((mm, member) if rng.random() < 0.5 else (member, mm)))
    other = rng.choice([sympy.Integer(rng.randint(-2, 6)), c, c + rng.randint(-2, 2)])
    op = rng.choice([sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt])
    return op(mm, other) if rng.random() < 0.5 else op(other, mm)


def test_splits_hold_everywhere() -> None:
    for seed in range(300):
        rng = random.Random(seed)
        rel = _relation(rng)
        for disjunctions in (False, True):
            got = extreme_parts(rel, disjunctions)
            if got is None:
                continue
            COUNTS[f"extremes: splits checked (disjunctions={disjunctions})"] += 1
            assert BOX.holds(rel) == BOX.holds(got), (seed, rel, got)


def test_split_questions_against_brute_force() -> None:
    box = Box([p for p in POINTS if all(v >= 0 for v in p.values())])
    for seed in range(120):
        rng = random.Random(seed)
        s = Solver()
        for x in SYMS:
            s.symbol(x.name, 0, HI)
        facts = [sympy.Ge(rng.choice(SYMS), rng.randint(0, 4))]
        for f in facts:
            s.assume(f)
        q = _relation(rng)
        t = s.decide(q)
        if t is not Truth.UNKNOWN:  # (the solver may not know what brute force does: never the reverse)
            assert t is box.truth(facts, q), (seed, facts, q, t)
        COUNTS[f"extremes: questions {t.name}"] += 1
