"""The repair walk as a witness stage, against brute force on small boxes.

:func:`solver.state.point.repair` (with its partial moves: a class moved part of the way when the
value that fixes a linear fact lies outside its range) must only ever return points where
every fact and the target hold, whatever its move budget, and must leave the state alone.
On the large-problem path of :mod:`solver.decide.pipeline` (forced here on small problems by
lowering ``FULL_SMT_FACTS``), an UNKNOWN credited to ``witness`` must be a true UNKNOWN
(brute force finds both outcomes among the feasible points), and TRUE/FALSE must agree with
brute force; checked after assumes, inside scopes and after the scopes end.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
import sympy

from oracle_support import COUNTS, Box
from shapes import evaluate, int_symbol
from shapes.relation import negate
from solver import ContradictionError, Solver, Truth
from solver.decide import pipeline
from solver.state import point
SYMS = [int_symbol(f"w{i}") for i in range(4)]
LO, HI = -3, 6
BOX = Box([dict(zip(SYMS, p)) for p in itertools.product(range(LO, HI + 1), repeat=len(SYMS))])
CASES = 160


def _fact(rng: random.Random) -> sympy.Basic:
    a, b, c = rng.sample(SYMS, 3)
    k = rng.randint(-3, 5)
    return rng.choice([
        sympy.Eq(a, b + k), sympy.Eq(a, 2 * b + rng.choice([0, 1, -1])), sympy.Ge(a, k), sympy.Le(a, k),
        sympy.Ne(a, k), sympy.Le(a, b + rng.randint(-3, 3)), sympy.Le(a + b, c + k), sympy.Ge(a + 2 * b, c + k),
        sympy.Le(2 * a - b, c + k), sympy.Eq(a + b, c + k), sympy.Eq(sympy.Mod(a, rng.choice([2, 3])), 0),
        sympy.Ge(a * b, c), sympy.Ne(a, b), sympy.Or(sympy.Ge(a, k), sympy.Le(b, c)),
    ])


def _target(rng: random.Random) -> sympy.Basic:
    a, b, c = rng.sample(SYMS, 3)
    k = rng.randint(LO, HI)
    return rng.choice([sympy.Ge(a, k), sympy.Le(a, k), sympy.Eq(a, b + rng.randint(-4, 4)), sympy.Le(a, b),
                       sympy.Eq(a + b, c + rng.randint(-2, 2)), sympy.Ge(a - b, k), sympy.Ne(a, b)])


def _check_walks(s: Solver, facts: list[sympy.Basic], rng: random.Random) -> None:
    """Every point a walk returns satisfies every fact, the target and the declared ranges."""
    st = s._state  # noqa: SLF001 - the point is engine state
    if not st.hints_ok:
        return
    before = dict(st.hints)
    for _ in range(3):
        target = _target(rng)
        for moves in (2, 8, 64):
            change = point.repair(st, target, moves)
            assert st.hints == before
            if change is None:
                COUNTS["walk: failed"] += 1
                continue
            moved = {**st.hints, **change}
            assert all(LO <= moved[x] <= HI for x in SYMS), (facts, target, moved)
            assert evaluate(target, moved), (facts, target, moved)
            assert all(evaluate(f, moved) for f in facts), (facts, target, moved)
            COUNTS["walk: points checked"] += 1


def _check_answers(s: Solver, facts: list[sympy.Basic], rng: random.Random) -> None:
    for _ in range(3):
        q = _target(rng)
        before = Counter(s.stats)
        got = s.decide(q)
        stage = next(iter(Counter(s.stats) - before), "?")
        want = BOX.truth(facts, q)
        assert got is Truth.UNKNOWN or got is want, (facts, q, got, want)
        if stage == "witness":
            assert want is Truth.UNKNOWN, (facts, q, want)
            COUNTS["walk: witnessed UNKNOWNs"] += 1


def _run(seed: int) -> None:
    rng = random.Random(seed)
    s = Solver()
    for x in SYMS:
        s.symbol(x.name, LO, HI, hint=rng.randint(LO, HI) if rng.random() < 0.3 else None)
    facts: list[sympy.Basic] = []
    scopes: list[tuple[object, int]] = []
    for _ in range(rng.randint(3, 8)):
        f = _fact(rng)
        cm = s.assuming(f) if rng.random() < 0.3 else None
        try:
            cm.__enter__() if cm is not None else s.assume(f)  # type: ignore[attr-defined]
        except ContradictionError:
            assert not BOX.feasible_ids(facts + [f]), (seed, facts, f)
            continue
        if cm is not None:
            scopes.append((cm, len(facts)))
        facts.append(f)
        _check_walks(s, facts, rng)
        _check_answers(s, facts, rng)
    while scopes:
        cm, n = scopes.pop()
        cm.__exit__(None, None, None)  # type: ignore[attr-defined]
        del facts[n:]
        _check_walks(s, facts, rng)
        _check_answers(s, facts, rng)
        COUNTS["walk: scopes ended"] += 1


def test_walk_points_and_witnessed_answers_are_never_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "FULL_SMT_FACTS", -1)  # every problem takes the large-problem path
    for seed in range(CASES):
        _run(seed)
    assert COUNTS["walk: points checked"] > 500
    assert COUNTS["walk: witnessed UNKNOWNs"] > 30
    assert COUNTS["walk: scopes ended"] > 20


def test_partial_moves_reach_a_two_class_equality() -> None:
    s = Solver()
    x, y = s.symbol("x", 57, 79, hint=61), s.symbol("y", 72, 101, hint=78)
    z = s.symbol("z", 0, 200, hint=150)
    s.assume(sympy.Le(x + y, z))  # residual: x and y stay classes of their own
    st = s._state  # noqa: SLF001
    assert point.repair(st, sympy.Eq(x, y + 3)) == {y: 72, x: 75}
    assert point.repair(st, sympy.Eq(x, y + 30)) is None  # x - y <= 7 on these ranges


def test_walk_witness_on_a_large_path_skips_z3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "FULL_SMT_FACTS", -1)
    s = Solver()
    x, y = s.symbol("x", 57, 79), s.symbol("y", 72, 101)
    z = s.symbol("z", 0, 200)
    s.assume(sympy.Le(x + y, z))
    assert s.decide(sympy.Eq(x, y + 3)) is Truth.UNKNOWN
    assert s.decide(negate(sympy.Eq(x, y + 3))) is Truth.UNKNOWN
    assert s.stats["z3"] == 0 and s.stats["undecided"] == 0
