"""Bounds in a large component (``queries._narrowed_near``), forced on small problems.

With the component threshold at 0 every ``Solver.bounds`` call that the class data does not
settle takes the large-component path: values witnessed by repaired points
(``solver.state.point.repair``), bounds proved by Z3 on the facts nearby (``pipeline.LOCAL_FACTS``,
here also shrunk). Against brute force over the box, on random problems (example values for
some symbols, most without; some facts inside a scope): the true ``(min, max)`` always lies
inside the answer (sound), also with tiny local budgets; how often it is exact is counted.
Also ``minimum(first_at_bound=True)`` against brute force.
"""

from __future__ import annotations

import itertools
import random

import pytest
import sympy

from oracle_support import COUNTS
from shapes import evaluate, int_symbol
from solver import ContradictionError, Solver, queries
from solver.decide import pipeline
from solver.kernel.bounds import minimum

SYMS = [int_symbol(f"b{i}") for i in range(4)]
LO, HI = 0, 7
BOX = [dict(zip(SYMS, p)) for p in itertools.product(range(LO, HI + 1), repeat=len(SYMS))]
CASES = 120


def _fact(rng: random.Random) -> sympy.Basic:
    a, b, c = rng.sample(SYMS, 3)
    k = rng.randint(0, 7)
    return rng.choice([sympy.Le(a, b + rng.randint(-2, 3)), sympy.Le(a + b, c + k), sympy.Ge(a, k),
                       sympy.Eq(a, 2 * b + rng.choice([0, 1])), sympy.Ne(a, k), sympy.Ge(a * b, k),
                       sympy.Eq(sympy.Mod(a, 2), 0), sympy.Eq(a, b)])


def _expr(rng: random.Random) -> sympy.Expr:
    a, b = rng.sample(SYMS, 2)
    return rng.choice([a, a + b, a - b, 2 * a + 1, a * b])


@pytest.mark.parametrize("local", [1, 3, 200])
def test_near_bounds_contain_the_true_range(monkeypatch, local: int) -> None:
    monkeypatch.setattr(queries, "_SMALL_COMPONENT", 0)
    monkeypatch.setattr(pipeline, "LOCAL_FACTS", local)
    exact = asked = 0
    for seed in range(CASES):
        rng = random.Random(seed)
        s = Solver()
        for x in SYMS:
            s.symbol(x.name, LO, HI, hint=rng.randint(LO, HI) if rng.random() < 0.2 else None)
        facts = []
        for _ in range(rng.randint(2, 6)):
            f = _fact(rng)
            try:
                s.assume(f)
            except ContradictionError:
                continue
            facts.append(f)
        feasible = [p for p in BOX if all(evaluate(f, p) for f in facts)]
        scoped = _fact(rng)
        for inside in (False, True):
            if inside:
                if not any(evaluate(scoped, p) for p in feasible):
                    break
                cm = s.assuming(scoped)
                cm.__enter__()
                feasible = [p for p in feasible if evaluate(scoped, p)]
            for e in [_expr(rng) for _ in range(3)]:
                got = s.bounds(e)
                vals = [int(evaluate(e, p)) for p in feasible]
                lo, hi = min(vals), max(vals)
                assert (got[0] is None or got[0] <= lo) and (got[1] is None or hi <= got[1]), (seed, facts, e, got, lo, hi)
                asked += 1
                exact += got == (lo, hi)
            if inside:
                cm.__exit__(None, None, None)
    COUNTS[f"bounds near (local={local}): asked"] = asked
    COUNTS[f"bounds near (local={local}): exact"] = exact
    assert exact > asked // 2


@pytest.mark.parametrize("seed", range(40))
def test_minimum_first_at_bound_is_sound(seed: int) -> None:
    rng = random.Random(seed)
    values = rng.sample(range(-30, 30), rng.randint(1, 8))
    proved = min(values) - rng.randint(0, 5)
    give_up = rng.choice([None, 1, 2, 4])
    calls = [0]

    def probe(t):
        calls[0] += 1
        if give_up is not None and calls[0] > give_up:
            return ("unknown", None)
        hits = [v for v in values if t is None or v <= t]
        return ("sat", rng.choice(hits)) if hits else ("unsat", None)

    got, done = minimum(probe, proved, first_at_bound=True)
    assert got <= min(values)
    assert not done or got == min(values)
    assert give_up is not None or done
