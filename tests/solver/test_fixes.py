"""Fix synthesis: table cases plus a brute-force oracle for "verified and weakest".

The oracle: on small bounded domains, the sizes admitted by (declared ranges + fixes) must be
exactly the sizes admitted by (declared ranges + spec + guards): a superset would leave a guard
unimplied (not verified), a subset would over-restrict (not weakest).
"""

from __future__ import annotations

import itertools

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapes import FloorDiv, evaluate
from solver import Reason, Solver, suggest
from solver.fixes import CheckFix, DivisibleFix, EqualFix, RangeFix, RelationFix, SpecializeFix


def _solver_with(ranges: dict[str, tuple[int, int | None]], hints: dict[str, int]):
    s = Solver()
    syms = {n: s.symbol(n, lo, hi, hint=hints.get(n)) for n, (lo, hi) in ranges.items()}
    return s, syms


CASES = [
    # (name, ranges, hints, guards builder, expected fix kinds)
    ("upper bound", {"x": (2, None)}, {"x": 4}, lambda x: [(sympy.Le(x, 5), True)], [RangeFix]),
    ("divisible", {"x": (2, 100)}, {"x": 8}, lambda x: [(sympy.Eq(sympy.Mod(x, 4), 0), True)],
     [RangeFix, DivisibleFix]),
    ("static", {"x": (2, 100)}, {"x": 8}, lambda x: [(sympy.Eq(x, 8), True)], [SpecializeFix]),
    ("hole", {"x": (2, 100)}, {"x": 8}, lambda x: [(sympy.Ne(x, 50), True)], [CheckFix]),
]


@pytest.mark.parametrize("name,ranges,hints,build,kinds", CASES, ids=[c[0] for c in CASES])
def test_single_dim_fix_kinds(name, ranges, hints, build, kinds):
    s, syms = _solver_with(ranges, hints)
    for rel, hint in build(*syms.values()):
        s.guard(rel, hint, Reason.guard(str(rel), "model.py:1"))
    fixes = suggest(s)
    assert fixes.verified
    assert [type(f) for f in fixes] == kinds
    assert all(f.reasons for f in fixes), "every fix names the guard that forced it"


def test_equality_and_relation_between_dims():
    s, syms = _solver_with({"x": (2, 64), "y": (2, None), "z": (2, None)}, {"x": 4, "y": 4, "z": 9})
    x, y, z = syms.values()
    s.guard(sympy.Eq(x, y), True)
    s.guard(sympy.Eq(z, 2 * x + 1), True)
    fixes = suggest(s)
    assert fixes.verified
    kinds = {type(f) for f in fixes}
    assert EqualFix in kinds and RelationFix in kinds
    eq = next(f for f in fixes if isinstance(f, EqualFix))
    assert {eq.symbol, eq.other} == {x, y}


def test_no_violation_means_no_fix():
    s, syms = _solver_with({"x": (2, 10)}, {"x": 4})
    s.guard(sympy.Ge(syms["x"], 1), True)
    assert len(suggest(s)) == 0 and suggest(s).verified


def test_fix_is_never_the_failing_spec():
    s, syms = _solver_with({"x": (2, 10)}, {"x": 4})
    s.guard(sympy.Le(syms["x"], 5), True)
    fixes = suggest(s)
    assert fixes.items == (RangeFix(syms["x"], 2, 5, fixes.items[0].reasons),)


# -- oracle -----------------------------------------------------------------------------

def _expr(draw, syms):
    kind = draw(st.sampled_from(["sym", "lin", "mod", "div", "prod", "sum"]))
    a = draw(st.sampled_from(syms))
    b = draw(st.sampled_from(syms))
    k = draw(st.integers(2, 4))
    return {"sym": a, "lin": k * a + draw(st.integers(-2, 2)), "mod": sympy.Mod(a, k),
            "div": FloorDiv(a, k), "prod": a * b, "sum": a + b}[kind]


@st.composite
def problems(draw):
    n = draw(st.integers(1, 3))
    ranges = []
    for _ in range(n):
        lo = draw(st.integers(0, 4))
        ranges.append((lo, lo + draw(st.integers(0, 7))))
    point = [draw(st.integers(lo, hi)) for lo, hi in ranges]
    names = [f"d{i}" for i in range(n)]
    syms = [sympy.Symbol(nm, integer=True) for nm in names]
    guards = []
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from([sympy.Eq, sympy.Ne, sympy.Le, sympy.Ge, sympy.Lt]))
        rel = op(_expr(draw, syms), _expr(draw, syms) if draw(st.booleans()) else draw(st.integers(0, 9)))
        if isinstance(rel, sympy.Basic) and rel not in (sympy.true, sympy.false):
            guards.append(rel)
    return names, ranges, point, guards


def _feasible(ranges, syms, rels):
    out = set()
    for p in itertools.product(*[range(lo, hi + 1) for lo, hi in ranges]):
        env = dict(zip(syms, p))
        try:
            if all(evaluate(r, env) for r in rels):
                out.add(p)
        except ZeroDivisionError:
            pass
    return out


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(problems())
def test_fixes_admit_exactly_the_feasible_sizes(problem):
    names, ranges, point, guards = problem
    s = Solver()
    syms = [s.symbol(n, lo, hi, hint=v) for n, (lo, hi), v in zip(names, ranges, point)]
    env = dict(zip(syms, point))
    taken = []
    for g in guards:
        hint = bool(evaluate(g, env))
        s.guard(g, hint)
        taken.append(g if hint else sympy.Not(g))
    fixes = suggest(s)
    assert fixes.verified
    want = _feasible(ranges, syms, taken)
    got = _feasible(ranges, syms, fixes.relations())
    assert got == want, f"fixes {[f.describe() for f in fixes]} admit {sorted(got)} not {sorted(want)}"
