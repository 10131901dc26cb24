"""Facts on ``Min``/``Max`` (``min(h // 4, w // 4) > 4``) split into their parts on assume
(:func:`solver.kernel.extremes.extreme_parts`), against brute force on small boxes: after the facts,
every ``decide`` answer and every range the solver reports agrees with enumeration, and a
fact is refused exactly when it empties the box.
"""

from __future__ import annotations

import itertools
import random

import sympy

from oracle_support import COUNTS, Box
from shapes import FloorDiv, int_symbol
from solver import ContradictionError, Solver, Truth

SYMS = [int_symbol(f"m{i}") for i in range(3)]
LO, HI = 0, 12
BOX = Box([dict(zip(SYMS, p)) for p in itertools.product(range(LO, HI + 1), repeat=len(SYMS))])


def _term(rng: random.Random, x: sympy.Symbol) -> sympy.Expr:
    return rng.choice([x, FloorDiv(x, rng.choice([2, 3])), FloorDiv(FloorDiv(x, 2) + 1, 2), 2 * x - 3, x + 1])


def _fact(rng: random.Random) -> sympy.Basic:
    a, b, c = rng.sample(SYMS, 3)
    k = rng.randint(0, 8)
    mm = rng.choice([sympy.Min, sympy.Max])(_term(rng, a), _term(rng, b))
    other = rng.choice([sympy.Integer(k), c, c + rng.randint(-2, 2)])
    op = rng.choice([sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt])
    return op(mm, other) if rng.random() < 0.5 else op(other, mm)


def test_min_max_facts_against_brute_force() -> None:
    for seed in range(150):
        rng = random.Random(seed)
        s = Solver()
        for x in SYMS:
            s.symbol(x.name, LO, HI)
        facts: list[sympy.Basic] = []
        for _ in range(rng.randint(1, 3)):
            f = _fact(rng)
            try:
                s.assume(f)
            except ContradictionError:
                assert not BOX.feasible_ids(facts + [f]), (seed, facts, f)
                COUNTS["min/max facts: refused"] += 1
                continue
            facts.append(f)
        feasible = BOX.feasible(facts)
        if not feasible:
            continue
        for x in SYMS:
            lo, hi = s.bounds(x)
            values = [p[x] for p in feasible]
            assert (lo is None or lo <= min(values)) and (hi is None or hi >= max(values)), (seed, facts, x, lo, hi)
            COUNTS["min/max facts: exact ranges"] += (lo, hi) == (min(values), max(values))
        for _ in range(4):
            a = rng.choice(SYMS)
            q = rng.choice([sympy.Ge, sympy.Le, sympy.Eq])(a, rng.randint(LO, HI))
            got = s.decide(q)
            assert got is Truth.UNKNOWN or got is BOX.truth(facts, q), (seed, facts, q, got)
            COUNTS["min/max facts: questions"] += 1
    assert COUNTS["min/max facts: exact ranges"] > 100
