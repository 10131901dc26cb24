"""The stages that keep large problems fast, against brute force on small boxes.

* the repair walk (``witness.repaired_point``): every point it returns satisfies every fact
  (each one evaluated at the full point) and disagrees with the example point on the question;
* refutation by narrowing (``solver.decide.narrowing``) and the large-problem path (Z3 on the
  facts near a question, ``pipeline.FULL_SMT_FACTS``), forced on small problems with tiny
  budgets: ``decide`` never says TRUE/FALSE where brute force disagrees, and UNKNOWN only
  where brute force says UNKNOWN or a budget ran out (counted, an honest gap);
* the lazy reason text equals the eager one; ``large_problem`` holds at its example values.

Problems are difference and sum constraints (the shape of ``benchmarks.streams.large_problem``)
over 4 symbols in [0, 6], all true at an example point, with linear questions.
"""

from __future__ import annotations

import itertools
import random

import pytest
import sympy

from oracle_support import COUNTS, HINTED_KINDS, fact_at_hint, truth_of
from shapes import evaluate, int_symbol
from solver import Solver, Truth
from solver.decide import narrowing, pipeline
from solver.decide.pipeline import _klass
from solver.truth import Reason
from solver.decide.witness import repaired_point

SYMS = [int_symbol(f"v{i}") for i in range(4)]
BOX = range(0, 7)
CASES = 300


def _linear(rng: random.Random, hint: dict) -> sympy.Basic:
    a, b, c = rng.sample(SYMS, 3)
    return fact_at_hint(rng, hint, rng.choice(HINTED_KINDS), a, b, c)


def _question(rng: random.Random) -> sympy.Basic:
    a, b = rng.sample(SYMS, 2)
    k = rng.randint(0, 6)
    return rng.choice([sympy.Ge(a, k), sympy.Le(a, b), sympy.Eq(a, b), sympy.Ne(a, k), sympy.Ge(a + b, k)])


def _case(seed: int) -> tuple[Solver, list[sympy.Basic], list[sympy.Basic]]:
    rng = random.Random(seed)
    hint = {s: rng.choice(BOX) for s in SYMS}
    s = Solver()
    for x in SYMS:
        s.symbol(x.name, BOX.start, BOX.stop - 1, hint=hint[x])
    facts = [_linear(rng, hint) for _ in range(rng.randint(2, 6))]
    for f in facts:
        s.assume(f)
    return s, facts, [_question(rng) for _ in range(6)]


def _brute(facts: list[sympy.Basic], q: sympy.Basic) -> Truth:
    points = (dict(zip(SYMS, p)) for p in itertools.product(BOX, repeat=len(SYMS)))
    return truth_of([bool(evaluate(q, p)) for p in points if all(evaluate(f, p) for f in facts)])


def test_repaired_points_satisfy_every_fact():
    found = 0
    for seed in range(CASES):
        s, facts, questions = _case(seed)
        st = s._state  # noqa: SLF001 - the walk is checked on the engine's own view
        for q in questions:
            leaders = sorted({st.uf.find(x)[0] for x in q.free_symbols}, key=st.order)
            classes = [_klass(st, r) for r in leaders]
            change = repaired_point(q, st.hints, classes, lambda r: _klass(st, r),
                                    lambda r: [st.facts[i].rel for m in st.uf.members(r) for i in st.mentions.get(m, ())],
                                    st.linear)
            if change is None:
                continue
            found += 1
            point = {**st.hints, **change}
            assert all(lo <= point[x] <= hi for x, (lo, hi) in ((x, (BOX.start, BOX.stop - 1)) for x in SYMS))
            assert all(evaluate(f, point) for f in facts), (seed, q, point)
            assert bool(evaluate(q, point)) != bool(evaluate(q, st.hints)), (seed, q, point)
    COUNTS["scale: repaired witness points"] = found
    assert found > 50


@pytest.mark.parametrize("full, local, visits", [(0, 1, 1), (0, 3, 8), (10_000, 400, 4096)])
def test_large_problem_path_never_wrong(monkeypatch, full, local, visits):
    monkeypatch.setattr(pipeline, "FULL_SMT_FACTS", full)
    monkeypatch.setattr(pipeline, "LOCAL_FACTS", local)
    monkeypatch.setattr(narrowing, "REFUTE_VISITS", visits)
    gaps = asked = 0
    for seed in range(CASES // 3):
        s, facts, questions = _case(seed)
        for q in questions:
            got, want = s.decide(q), _brute(facts, q)
            asked += 1
            if got is Truth.UNKNOWN and want is not Truth.UNKNOWN:
                gaps += 1
                continue
            assert got is want, (seed, q, got, want, facts)
    COUNTS[f"scale: budget full={full} local={local} visits={visits}: questions"] = asked
    COUNTS[f"scale: budget full={full} local={local} visits={visits}: decided UNKNOWN (gap)"] = gaps


def test_refutation_alone_is_sound():
    decided = 0
    for seed in range(CASES):
        s, facts, questions = _case(seed)
        for q in questions:
            got = narrowing.decide(s._state, q)  # noqa: SLF001
            if got is not None:
                decided += 1
                assert got is _brute(facts, q), (seed, q, got, facts)
    COUNTS["scale: refutation decided"] = decided
    assert decided > 20


def test_lazy_reason_text_is_the_eager_text():
    x, y = SYMS[:2]
    for rel in (sympy.Le(x + 2 * y, 7), sympy.Eq(x, y), sympy.Ne(x * y, 3)):
        lazy, eager = Reason.spelled("guard", rel), Reason.guard(str(rel))
        assert lazy == eager and hash(lazy) == hash(eager) and repr(lazy) == repr(eager)
    s = Solver()
    n = s.symbol("n", 0, 9)
    s.assume(sympy.Ge(n, 2))
    assert s.facts[-1].reason.text == "n >= 2" and s.facts[-1].reason.describe() == "spec 'n >= 2'"
