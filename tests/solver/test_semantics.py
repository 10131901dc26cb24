"""guard / violations / assuming / contradictions / explain (DESIGN.md section 2)."""

from __future__ import annotations

import itertools

import pytest
import sympy
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle_support import COUNTS, SYMS, Z3Oracle, bounded_ranges, box, facts, truth_of, values
from shapes import FloorDiv, evaluate
from solver import UnknownSymbolError, ContradictionError, HintMismatchError, Reason, Solver, SolverError, Truth
from solver.errors import UndecidedGuardError

DECLARED = "declared range"


def _solver():
    s = Solver()
    return s, s.symbol("b", 2, 64, hint=8), s.symbol("c", 2, None, hint=16)


# -- guard -----------------------------------------------------------------------------------
@pytest.mark.parametrize("rel, hint, result, becomes_fact", [
    (lambda b, c: sympy.Ge(b, 2), True, True, False),          # settled TRUE, agreeing hint
    (lambda b, c: sympy.Ge(b, 2), None, True, False),          # settled: no hint needed
    (lambda b, c: sympy.Eq(b, 1), False, False, False),        # settled FALSE
    (lambda b, c: sympy.Le(b, 32), True, True, True),          # UNKNOWN: the hint decides
    (lambda b, c: sympy.Eq(c, 2 * b), True, True, True),
    (lambda b, c: sympy.Eq(sympy.Mod(c, 3), 0), False, False, True),   # recorded as the negation
])
def test_guard_table(rel, hint, result, becomes_fact):
    s, b, c = _solver()
    r = rel(b, c)
    before = len(s.facts)
    reason = Reason.guard("user text", origin="model.py:3", op="view")
    assert s.guard(r, hint, reason) is result
    assert s.guards[-1].result is result and s.guards[-1].reason == reason
    if becomes_fact:
        fact = s.facts[-1]
        assert len(s.facts) == before + 1 and fact.reason == reason and fact.reason.kind == "guard"
        assert s.decide(r) is Truth.of(result)               # now settled the hint's way
    else:
        assert len(s.facts) == before


@pytest.mark.parametrize("rel, hint", [
    (lambda b, c: sympy.Ge(b, 2), False),
    (lambda b, c: sympy.Eq(b, 1), True),
])
def test_guard_settled_with_contradicting_hint_raises(rel, hint):
    s, b, c = _solver()
    with pytest.raises(HintMismatchError) as info:
        s.guard(rel(b, c), hint, Reason.guard("g", origin="m.py:1"))
    assert info.value.reasons and info.value.reasons[-1].origin == "m.py:1"


def test_guard_unknown_without_hint_raises():
    s, b, c = _solver()
    with pytest.raises(UndecidedGuardError):
        s.guard(sympy.Le(b, 10))


def test_violations_list_guard_facts_not_implied_by_spec():
    s, b, c = _solver()
    s.assume(sympy.Le(c, 100), Reason.spec("c <= 100"))
    s.guard(sympy.Le(b, 32), True)                 # restricts the spec: a violation
    s.guard(sympy.Le(c, 200), True)                # implied (decided): no fact, no violation
    s.guard(sympy.Ne(c, 3), True)                  # restricts: violation
    with s.assuming(sympy.Ge(b, 2)):
        pass
    vs = s.violations()
    assert [str(v.fact.rel) for v in vs] == ["b <= 32", "Ne(c, 3)"]
    assert all(v.fact.reason.kind == "guard" and v.truth_under_spec is Truth.UNKNOWN for v in vs)


def test_violations_empty_when_spec_implies_guards():
    s, b, c = _solver()
    s.assume(sympy.Eq(c, 2 * b))
    assert s.guard(sympy.Ge(c, 4), True) is True
    s2 = Solver()
    b2 = s2.symbol("b", 2, 64)
    s2.guard(sympy.Le(b2, 32), True)
    s2.assume(sympy.Le(b2, 16), Reason.spec("b <= 16"))   # a later spec fact covers the guard
    assert s.violations() == () and s2.violations() == ()


# -- assuming ------------------------------------------------------------------------------------
def _questions(b, c):
    return [sympy.Ge(b, 10), sympy.Eq(c, 2 * b), sympy.Eq(sympy.Mod(c, 4), 0), sympy.Le(c, 100),
            sympy.Ge(b * c, 50), sympy.Ne(b, c), sympy.Eq(FloorDiv(c, 2), b)]


@pytest.mark.parametrize("scoped", [
    lambda b, c: sympy.Eq(c, 2 * b),
    lambda b, c: sympy.Eq(sympy.Mod(b, 4), 1),
    lambda b, c: sympy.Ge(b * c, 100),
    lambda b, c: sympy.Ne(b, 10),
    lambda b, c: sympy.Le(c, 50),
])
def test_assuming_restores_state_exactly(scoped):
    s, b, c = _solver()
    s.assume(sympy.Le(c, 300))
    qs = _questions(b, c)

    def snapshot():
        return ([s.decide(q) for q in qs], [s.bounds(e) for e in (b, c, c - b)], s.classes(),
                s.relations(), s.facts, s.guards)

    before = snapshot()
    with s.assuming(scoped(b, c)):
        s.guard(sympy.Le(b, 20), True)
        inside = snapshot()
        with s.assuming(sympy.Ge(c, 40)):
            pass
        assert snapshot() == inside
    assert snapshot() == before


def test_assuming_a_contradiction_raises_and_leaves_state():
    s, b, c = _solver()
    before = (s.facts, [s.decide(q) for q in _questions(b, c)])
    with pytest.raises(ContradictionError):
        with s.assuming(sympy.Eq(b, 100)):
            pass
    assert (s.facts, [s.decide(q) for q in _questions(b, c)]) == before


def test_symbol_declared_inside_assuming_is_undone_with_the_scope():
    s, b, c = _solver()
    with s.assuming(sympy.Ge(b, 4)):
        w = s.symbol("w", 0, 3)
        assert s.decide(sympy.Ge(w, 0)) is Truth.TRUE
    with pytest.raises(UnknownSymbolError, match="never declared"):
        s.decide(sympy.Ge(w, 0))
    assert s.symbol("w", 5, 6) == w  # the name is free again


# -- contradictions -----------------------------------------------------------------------------
@pytest.mark.parametrize("first, second", [
    (lambda b, c: sympy.Le(b, 10), lambda b, c: sympy.Ge(b, 11)),
    (lambda b, c: sympy.Eq(c, 2 * b), lambda b, c: sympy.Eq(c, 7)),
    (lambda b, c: sympy.Eq(sympy.Mod(b, 4), 1), lambda b, c: sympy.Eq(sympy.Mod(b, 2), 0)),
    (lambda b, c: sympy.Ge(b * c, 1000), lambda b, c: sympy.Le(c, 10)),
    (lambda b, c: sympy.Eq(c, b + 1), lambda b, c: sympy.Eq(c, b + 2)),
    (lambda b, c: sympy.Ne(b, 5), lambda b, c: sympy.And(sympy.Ge(b, 5), sympy.Le(b, 5))),
])
def test_contradiction_names_both_reasons(first, second):
    s, b, c = _solver()
    r1, r2 = Reason.spec("first", origin="spec.py:1"), Reason("trace_assumption", "second", origin="m.py:2")
    s.assume(first(b, c), r1)
    n = len(s.facts)
    with pytest.raises(ContradictionError) as info:
        s.assume(second(b, c), r2)
    assert info.value.reasons[-1] == r2 and r1 in info.value.reasons
    assert "first" in str(info.value) and "second" in str(info.value)
    assert len(s.facts) == n


def test_contradiction_with_a_declared_range_names_it():
    s, b, c = _solver()
    with pytest.raises(ContradictionError) as info:
        s.assume(sympy.Ge(b, 65), Reason.spec("b >= 65"))
    kinds = [r.op for r in info.value.reasons]
    assert DECLARED in kinds and info.value.reasons[-1].text == "b >= 65"


# -- classes -----------------------------------------------------------------------------------
def test_classes_from_union_find_and_residual_facts():
    s = Solver()
    p, q, r, t = (s.symbol(n, 0, 20) for n in "pqrt")
    s.assume(sympy.Eq(q, p))
    s.assume(sympy.Le(r, t))
    s.assume(sympy.Le(t, r))             # r == t only through the later stages
    assert s.classes() == ((p, q), (r, t))


def test_classes_are_the_implied_equality_partition():
    s = Solver()
    p, q = s.symbol("p", 3, 3), s.symbol("q", 0, 10)
    s.assume(sympy.Eq(q, 3))
    assert s.decide(sympy.Eq(p, q)) is Truth.TRUE
    assert s.classes() == ((p, q),)


# -- explain ----------------------------------------------------------------------------------------
@st.composite
def explain_cases(draw):
    n = draw(st.integers(2, 3))
    syms = SYMS[:n]
    return draw(bounded_ranges(n)), draw(st.lists(facts(syms), min_size=1, max_size=4)), \
        draw(facts(syms))


def _implies_unbounded(rels, goal):
    """Independent Z3: do ``rels`` imply ``goal`` over all integers? None when Z3 gives up."""
    o = Z3Oracle({s: (None, None) for s in SYMS})
    for r in rels:
        o.add(r)
    t = o.term(goal)
    verdict = o.sat([z3.Not(t)])
    return None if verdict == "unknown" else verdict == "unsat"


@settings(max_examples=120, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(explain_cases())
def test_explain_is_sufficient_and_minimal(case):
    ranges, fs, goal = case
    pts = box(ranges)
    s = Solver()
    for i, (lo, hi) in enumerate(ranges):
        s.symbol(SYMS[i].name, lo, hi)
    for f in fs:
        try:
            s.assume(f)
        except ContradictionError:
            pass
    if any(values(f.rel, pts) is None for f in s.facts) or values(goal, pts) is None:
        return
    live = [p for p in pts if all(evaluate(f.rel, p) for f in s.facts)]
    if truth_of(values(goal, live)) is not Truth.TRUE or s.decide(goal) is not Truth.TRUE:
        return
    core = s.explain(goal)
    COUNTS["explain: cases"] += 1
    COUNTS["explain: facts returned"] += len(core)
    assert set(core) <= set(s.facts)
    # sufficient: a fresh solver with the declared ranges and only these facts decides TRUE
    fresh = Solver()
    for i, (lo, hi) in enumerate(ranges):
        fresh.symbol(SYMS[i].name, lo, hi)
    for f in core:
        if f.reason.op != DECLARED:
            fresh.assume(f.rel)
    assert fresh.decide(goal) is Truth.TRUE, (core, goal)
    # ... and on their own, over all integers (declared ranges count only if returned)
    assert _implies_unbounded([f.rel for f in core], goal) in (True, None)
    # minimal: dropping any one fact breaks the implication
    for i in range(len(core)):
        rest = [f.rel for j, f in enumerate(core) if j != i]
        verdict = _implies_unbounded(rest, goal)
        if verdict is None:
            COUNTS["explain: minimality checks skipped (z3 unknown)"] += 1
            continue
        COUNTS["explain: minimality checks"] += 1
        assert verdict is False, f"not minimal: {core[i]} is redundant in {core} for {goal}"


@pytest.mark.parametrize("facts_, goal, want_texts", [
    ([("c == 2b", lambda b, c: sympy.Eq(c, 2 * b)), ("noise", lambda b, c: sympy.Le(c, 500))],
     lambda b, c: sympy.Ge(c, 4), {"c == 2b", "b in [2, 64]"}),
    ([("b <= 10", lambda b, c: sympy.Le(b, 10)), ("c == b+1", lambda b, c: sympy.Eq(c, b + 1))],
     lambda b, c: sympy.Le(c, 11), {"b <= 10", "c == b+1"}),
    ([("mod", lambda b, c: sympy.Eq(sympy.Mod(b, 4), 1))], lambda b, c: sympy.Ne(b, 8), {"mod"}),
])
def test_explain_table(facts_, goal, want_texts):
    s, b, c = _solver()
    for text, f in facts_:
        s.assume(f(b, c), Reason.spec(text))
    core = s.explain(goal(b, c))
    assert {f.reason.text for f in core} == want_texts


def test_explain_refuses_what_is_not_implied():
    s, b, c = _solver()
    with pytest.raises(SolverError):
        s.explain(sympy.Le(b, 10))
