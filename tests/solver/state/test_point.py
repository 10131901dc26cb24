"""The feasible point (``State.hints`` with ``hints_ok``) against brute force on small boxes.

Random problems over 4 symbols in [-2, 5] (some with example values, most without), facts of
every shape the engine absorbs or keeps (links, derived dims, ranges, congruences, holes,
difference and sum inequalities, products, Mod/FloorDiv, disjunctions), not necessarily
consistent, assumed one by one, some inside scopes that end again. After every step:

* while ``hints_ok``, every fact holds at the point and every value is in its declared range;
* a fact that ``assume`` accepted while the point held leaves the facts satisfiable (brute
  force finds the point's own assignment); a refused fact is refused by brute force too;
* ``decide`` never answers TRUE/FALSE where brute force disagrees;
* ending a scope gives back exactly the point (and ``hints_ok``) the scope began with.
"""

from __future__ import annotations

import itertools
import random

import sympy

from oracle_support import COUNTS, Box
from shapes import FloorDiv, evaluate, int_symbol
from solver import ContradictionError, Solver, Truth

SYMS = [int_symbol(f"p{i}") for i in range(4)]
LO, HI = -2, 5
BOX = Box([dict(zip(SYMS, p)) for p in itertools.product(range(LO, HI + 1), repeat=len(SYMS))])
CASES = 250


def _fact(rng: random.Random) -> sympy.Basic:
    a, b, c = rng.sample(SYMS, 3)
    k = rng.randint(-3, 6)
    return rng.choice([
        sympy.Eq(a, b), sympy.Eq(a, 2 * b + rng.choice([0, 1, -1])), sympy.Eq(a, b + k),
        sympy.Ge(a, k), sympy.Le(a, k), sympy.Ne(a, k), sympy.Le(a, b + rng.randint(-2, 2)),
        sympy.Le(a + b, c + k), sympy.Ge(a + 2 * b, c + k), sympy.Eq(sympy.Mod(a, rng.choice([2, 3])), 0),
        sympy.Eq(a * b, k + 3), sympy.Ge(a * b, c), sympy.Eq(FloorDiv(a, 2), b), sympy.Ne(a, b),
        sympy.Or(sympy.Ge(a, k), sympy.Le(b, c)), sympy.And(sympy.Ge(a, b), sympy.Ne(c, k)),
    ])


def _question(rng: random.Random) -> sympy.Basic:
    a, b = rng.sample(SYMS, 2)
    k = rng.randint(LO, HI)
    return rng.choice([sympy.Ge(a, k), sympy.Le(a, b), sympy.Eq(a, b), sympy.Ne(a, k), sympy.Ge(a + b, k),
                       sympy.Eq(a * b, k)])


def _check_point(s: Solver, facts: list[sympy.Basic]) -> bool:
    st = s._state  # noqa: SLF001 - the point is engine state
    if not st.hints_ok:
        return False
    point = st.hints
    assert all(LO <= point[x] <= HI for x in SYMS), point
    assert all(evaluate(f, point) for f in facts), (point, facts)
    return True


def _run(seed: int) -> None:
    rng = random.Random(seed)
    s = Solver()
    for x in SYMS:
        s.symbol(x.name, LO, HI, hint=rng.randint(LO, HI) if rng.random() < 0.2 else None)
    st = s._state  # noqa: SLF001 - the point is engine state
    facts: list[sympy.Basic] = []
    scopes: list[tuple[object, int, dict, bool]] = []  # (context, facts before, point, hints_ok)
    for _ in range(rng.randint(3, 9)):
        f = _fact(rng)
        held = st.hints_ok
        saved = (len(facts), dict(st.hints), st.hints_ok)
        cm = s.assuming(f) if rng.random() < 0.25 else None
        try:
            cm.__enter__() if cm is not None else s.assume(f)
        except ContradictionError:
            assert not BOX.feasible_ids(facts + [f]), (seed, facts, f)
            assert (st.hints, st.hints_ok) == saved[1:], seed
            COUNTS["point: refused facts"] += 1
            continue
        if cm is not None:
            scopes.append((cm, *saved))
        facts.append(f)
        if _check_point(s, facts):
            COUNTS["point: steps with a point"] += 1
        elif held:
            COUNTS["point: points dropped"] += 1
        for q in [_question(rng) for _ in range(2)]:
            want = BOX.truth(facts, q)
            got = s.decide(q)
            assert got is Truth.UNKNOWN or got is want, (seed, facts, q, got, want)
            COUNTS["point: questions"] += 1
    while scopes:  # end the scopes innermost first: each gives back its point
        cm, n, hints, ok = scopes.pop()
        cm.__exit__(None, None, None)  # type: ignore[attr-defined]
        assert (st.hints, st.hints_ok) == (hints, ok), seed
        del facts[n:]
        _check_point(s, facts)
        COUNTS["point: scopes checked"] += 1


def test_point_satisfies_every_fact_and_answers_are_never_wrong():
    for seed in range(CASES):
        _run(seed)
    assert COUNTS["point: steps with a point"] > 300
    assert COUNTS["point: scopes checked"] > 20


def test_scope_restores_the_point_after_repairs():
    s = Solver()
    x, y, z = (s.symbol(n, 0, 100) for n in "xyz")
    s.assume(sympy.Le(x + 3, y))
    s.assume(sympy.Le(y, z))
    before = dict(s._state.hints)  # noqa: SLF001
    with s.assuming(sympy.Ge(x, 50)):
        st = s._state  # noqa: SLF001
        assert st.hints_ok and st.hints[x] >= 50 and st.hints[y] >= 53 and st.hints[z] >= 53
        assert s.decide(sympy.Ge(z, 53)) is Truth.TRUE
    assert s._state.hints == before and s._state.hints_ok  # noqa: SLF001


def test_no_example_values_still_give_witnesses():
    s = Solver()
    a, b = s.symbol("a", 1, 10**6), s.symbol("b", 1, 10**6)
    s.assume(sympy.Le(a, b + 4))
    s.assume(sympy.Ge(a, 20))
    assert s._state.hints_ok  # noqa: SLF001
    assert s.decide(sympy.Ge(b, 100)) is Truth.UNKNOWN
    assert s.stats["z3"] == 0
