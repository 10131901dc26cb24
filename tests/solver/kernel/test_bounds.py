"""Bounds in bounded work (solver/kernel/bounds.py, Solver.bounds): sound always, exact when the search
completes, never an unbounded optimizer.

* ``minimum`` against brute force: over random value sets, with probes that run out of budget at
  random points, the returned bound is <= the true minimum (sound), and equal to it when reported
  exact or when the probes never give up;
* ``Solver.bounds`` with starved budgets (tiny rlimit, enumeration off) on random nonlinear
  problems: the true min/max, found by brute force over the box, always lies inside;
* the product relation of ``x.reshape(-1) + y`` and a huge ``k*k`` answer quickly and soundly;
* an unsatisfiable nonlinear assume is rejected within the budget.
"""

from __future__ import annotations

import itertools
import math
import random
import time

import pytest
import sympy

from shapes.expr import evaluate
from solver import ContradictionError, Solver
from solver.kernel.bounds import minimum


def _probe_over(values: list[int], give_up_after: int | None, rng: random.Random):
    calls = [0]

    def probe(t):
        calls[0] += 1
        if give_up_after is not None and calls[0] > give_up_after:
            return ("unknown", None)
        hits = [v for v in values if t is None or v <= t]
        return ("sat", rng.choice(hits)) if hits else ("unsat", None)

    return probe


@pytest.mark.parametrize("seed", range(300))
def test_minimum_is_sound_and_exact_when_complete(seed: int) -> None:
    rng = random.Random(seed)
    values = [rng.randint(-10**rng.randint(0, 12), 10**rng.randint(0, 12)) for _ in range(rng.randint(1, 6))]
    true_min = min(values)
    lo = rng.choice([-math.inf, true_min - rng.randint(0, 10**6), true_min])
    give_up = rng.choice([None, 0, 1, 3, 10])
    got, exact = minimum(_probe_over(values, give_up, rng), lo)
    assert got <= true_min
    if exact or give_up is None:
        assert got == true_min
    if give_up is None:
        assert exact


def _random_problem(rng: random.Random):
    names = ["a", "b", "c"]
    s = Solver(rlimit=rng.choice([1, 50, 2_000, 2_000_000]), enum_limit=rng.choice([0, 20_000]))
    syms = [s.symbol(n, lo := rng.randint(0, 3), lo + rng.randint(0, 4)) for n in names]
    a, b, c = syms
    pool = [sympy.Eq(c, a * b), sympy.Le(a * b, c + 2), sympy.Ge(a + b, c), sympy.Ne(a * c, 2),
            sympy.Eq(sympy.Mod(a * b + c, 3), 0), sympy.Le(a, b)]
    facts = []
    for rel in rng.sample(pool, rng.randint(0, 3)):
        try:
            s.assume(rel)
            facts.append(rel)
        except ContradictionError:
            pass
    target = rng.choice([a * b - c, a * a + b, c - a * b * 2, a + b + c, b * c - a])
    return s, syms, facts, target


@pytest.mark.parametrize("seed", range(60))
def test_bounds_contain_the_true_range_under_any_budget(seed: int) -> None:
    rng = random.Random(seed)
    s, syms, facts, target = _random_problem(rng)
    boxes = [range(info.lo, info.hi + 1) for info in s.symbols]
    seen = [evaluate(target, dict(zip(syms, vs))) for vs in itertools.product(*boxes)
            if all(evaluate(f, dict(zip(syms, vs))) for f in facts)]
    if not seen:
        return
    lo, hi = s.bounds(target)
    assert lo is None or lo <= min(seen)
    assert hi is None or hi >= max(seen)


def test_bounds_are_exact_when_the_budget_suffices() -> None:
    s = Solver()
    x, y = s.symbol("x", 1, 9), s.symbol("y", 1, 9)
    s.assume(sympy.Eq(sympy.Mod(x * y, 4), 0))
    box = [x0 * y0 for x0 in range(1, 10) for y0 in range(1, 10) if (x0 * y0) % 4 == 0]
    assert s.bounds(x * y) == (min(box), max(box))


def test_product_relation_bounds_are_fast_and_sound() -> None:
    s = Solver()
    x0, x1, y = s.symbol("x0", 2, None, hint=3), s.symbol("x1", 2, None, hint=4), s.symbol("y", 2, None, hint=12)
    s.assume(sympy.Eq(y, x0 * x1))
    t0 = time.perf_counter()
    for e in (y, x0, x1, y - x0):
        lo, hi = s.bounds(e)
        assert lo is None or lo <= evaluate(e, {x0: 2, x1: 2, y: 4})
    assert s.bounds(y)[0] == 4
    assert time.perf_counter() - t0 < 60


def test_huge_square_bounds_do_not_stall() -> None:
    s = Solver()
    k = s.symbol("k", 1, 10**2000)
    t0 = time.perf_counter()
    lo, hi = s.bounds(k * k)
    assert lo == 1 and (hi is None or hi >= 10**4000)
    assert time.perf_counter() - t0 < 60


def test_unsatisfiable_nonlinear_assume_is_rejected_within_budget() -> None:
    s = Solver()
    x = s.symbol("x", 1, 2)
    y = s.symbol("y", 1, 2)
    t0 = time.perf_counter()
    with pytest.raises(ContradictionError):
        s.assume(sympy.Eq(x * x * y * y * y, 7 + x * y))
    assert time.perf_counter() - t0 < 60
