"""The memoized class members (``State.class_members``, memo table ``class_members``)
against a fresh walk of the union-find, after links, narrowing, scopes and their ends.

Each entry claims ``member == coef*leader + offset`` for every member of the class; it must
equal what :meth:`UnionFind.members` and :meth:`UnionFind.find` give at that moment, and
hold at every feasible point of a small box (brute force).
"""

from __future__ import annotations

import itertools
import random

import sympy

from oracle_support import COUNTS, Box
from shapes import int_symbol
from solver import ContradictionError, Solver

SYMS = [int_symbol(f"c{i}") for i in range(5)]
LO, HI = -2, 6
BOX = Box([dict(zip(SYMS, v)) for v in itertools.product(range(LO, HI + 1), repeat=len(SYMS))])
CASES = 120


def _fact(rng: random.Random) -> sympy.Basic:
    a, b, c = rng.sample(SYMS, 3)
    k = rng.randint(-2, 3)
    return rng.choice([sympy.Eq(a, b + k), sympy.Eq(a, 2 * b + rng.choice([0, 1])), sympy.Eq(a, -b + k),
                       sympy.Le(a, b + k), sympy.Ge(a, k), sympy.Le(a + b, c + k)])


def _check(s: Solver, facts: list[sympy.Basic]) -> None:
    st = s._state  # noqa: SLF001 - engine state under test
    feasible = BOX.feasible(facts)
    for leader in {st.uf.find(x)[0] for x in SYMS}:
        got = st.class_members(leader)
        assert got == tuple((m, *st.uf.find(m)[1:]) for m in st.uf.members(leader)), (facts, leader)
        for p in feasible[:50]:
            assert all(p[m] == a * p[leader] + b for m, a, b in got), (facts, leader, p)
        COUNTS["class members: classes checked"] += 1


def test_class_members_match_the_union_find_after_scopes() -> None:
    for seed in range(CASES):
        rng = random.Random(seed)
        s = Solver()
        for x in SYMS:
            s.symbol(x.name, LO, HI)
        facts: list[sympy.Basic] = []
        scopes: list[tuple[object, int]] = []
        for _ in range(rng.randint(2, 7)):
            f = _fact(rng)
            cm = s.assuming(f) if rng.random() < 0.4 else None
            try:
                cm.__enter__() if cm is not None else s.assume(f)  # type: ignore[attr-defined]
            except ContradictionError:
                continue
            if cm is not None:
                scopes.append((cm, len(facts)))
            facts.append(f)
            _check(s, facts)
        while scopes:
            cm, n = scopes.pop()
            cm.__exit__(None, None, None)  # type: ignore[attr-defined]
            del facts[n:]
            _check(s, facts)
            COUNTS["class members: scopes ended"] += 1
    assert COUNTS["class members: classes checked"] > 1000
    assert COUNTS["class members: scopes ended"] > 50
