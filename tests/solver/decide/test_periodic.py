"""Periodic relations (solver.decide.periodic) against brute force, alone and inside the engine.

Families (Hypothesis, derandomized):

* one class: linear terms, ``FloorDiv``/``Mod`` by 2..6 (nested too) and ``Min``/``Max`` over a
  small range, with or without a known congruence: the residue set :func:`analyze` reports is
  exactly the brute-force one, and its congruences (when given) are equivalent to the relation;
* products over two classes (``x*y == k1*k2*(x//k1)*(y//k2)`` and variations): the same;
* the engine after such a relation becomes a fact (``guard`` or ``assume``): ``decide`` is never
  unsound (TRUE/FALSE agree with every feasible point), ``bounds`` and ``congruences`` hold on
  every feasible point.

Figures go to ``oracle_support.COUNTS`` (printed in the terminal summary).
"""

from __future__ import annotations

import itertools

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle_support import COUNTS
from shapes import FloorDiv, evaluate, int_symbol, negate
from solver import ContradictionError, HintMismatchError, Reason, Solver, Truth, suggest
from solver.decide.periodic import analyze, class_shape, period_of

SETTINGS = dict(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
R, X, Y = int_symbol("r"), int_symbol("x"), int_symbol("y")
OPS = (sympy.Eq, sympy.Ne, sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt)
DIVISORS = (2, 3, 4, 5, 6)


# -- strategies ---------------------------------------------------------------------------------

@st.composite
def periodic_terms(draw, r: sympy.Symbol, depth: int = 2) -> sympy.Expr:
    """A linear term, a division of a linear form by 2..6 (maybe nested), or Min/Max of two."""
    kind = draw(st.sampled_from(["linear", "floordiv", "mod", "floordiv", "mod", "minmax", "nested"]))
    inner = draw(st.integers(-3, 3)) * r + draw(st.integers(-4, 4))
    if kind == "linear" or depth <= 0:
        return inner
    k = draw(st.sampled_from(DIVISORS))
    if kind == "floordiv":
        return FloorDiv(inner, k)
    if kind == "mod":
        return sympy.Mod(inner, k)
    if kind == "nested":
        return FloorDiv(draw(periodic_terms(r, depth - 1)) + draw(st.integers(-2, 2)), k)
    return draw(st.sampled_from([sympy.Min, sympy.Max]))(draw(periodic_terms(r, depth - 1)),
                                                        draw(periodic_terms(r, depth - 1)))


@st.composite
def periodic_relations(draw, r: sympy.Symbol) -> sympy.Basic:
    """Mostly drift-free (``2*((r + 1)//2) - r``: truly periodic), sometimes anything."""
    terms = draw(st.lists(periodic_terms(r), min_size=1, max_size=3))
    lhs = sum((draw(st.sampled_from([1, 1, 2, -1, -2])) * t for t in terms), sympy.Integer(0))
    rhs = draw(st.one_of(st.integers(-3, 6).map(sympy.Integer), periodic_terms(r)))
    if draw(st.integers(0, 3)):
        lhs, rhs = _without_drift(lhs - rhs, r), draw(st.integers(-2, 3))
    return draw(st.sampled_from(OPS))(lhs, rhs)


def _without_drift(e: sympy.Expr, r: sympy.Symbol) -> sympy.Expr:
    """``den*e - num*r`` for ``e``'s linear drift ``num/den`` (measured over one period)."""
    p = period_of(e, r)
    if p is None:
        return e
    drift = sympy.Rational(evaluate(e, {r: p}) - evaluate(e, {r: 0}), p)
    return drift.q * e - drift.p * r


@st.composite
def one_class_cases(draw):
    lo = draw(st.integers(-6, 12))
    hi = draw(st.integers(lo, lo + 40))
    m = draw(st.sampled_from([1, 1, 1, 2, 3, 4]))
    cong = (m, draw(st.integers(0, m - 1)))
    return draw(periodic_relations(R)), (lo, hi), cong


@st.composite
def product_cases(draw):
    k1, k2 = draw(st.sampled_from(DIVISORS)), draw(st.sampled_from(DIVISORS))
    fx, fy = FloorDiv(X + draw(st.integers(0, 2)), k1), FloorDiv(Y + draw(st.integers(0, 2)), k2)
    kind = draw(st.sampled_from(["both", "one", "mod", "sum"]))
    if kind == "both":
        rel = sympy.Eq(X * Y, k1 * k2 * fx * fy)
    elif kind == "one":
        rel = sympy.Eq(X * Y, k1 * fx * Y)
    elif kind == "mod":
        rel = sympy.Eq(sympy.Mod(X, k1) * Y + sympy.Mod(Y, k2) * X, 0)
    else:
        rel = sympy.Eq(X * Y - k1 * fx * Y, draw(st.integers(0, 2)) * X)
    if draw(st.booleans()):
        rel = negate(rel)
    ranges = []
    for _ in range(2):
        lo = draw(st.integers(-2, 6))
        ranges.append((lo, draw(st.integers(lo, lo + 14))))
    return rel, ranges


# -- brute force -------------------------------------------------------------------------------

def _points(syms, ranges, congs):
    axes = [[v for v in range(lo, hi + 1) if (v - c) % m == 0] for (lo, hi), (m, c) in zip(ranges, congs)]
    return [dict(zip(syms, p)) for p in itertools.product(*axes)]


def _check_analysis(rel, syms, ranges, congs) -> None:
    data = dict(zip(syms, zip(ranges, congs)))
    found = analyze(rel, data.__getitem__)
    COUNTS["periodic: cases"] += 1
    if found is None:
        COUNTS["periodic: not analyzed"] += 1
        return
    COUNTS["periodic: analyzed"] += 1
    assert set(found.roots) <= set(syms)
    pos = [syms.index(r) for r in found.roots]
    for p in _points(syms, ranges, congs):
        case = tuple(p[syms[i]] % m for i, m in zip(pos, found.moduli))
        truth = bool(evaluate(rel, p))
        assert case in found.cases, f"{rel} at {p}: case {case} missing from {sorted(found.cases)}"
        assert truth == (case in found.holds), f"{rel} at {p}: residue set {sorted(found.holds)} is wrong"
        if found.congruences is not None:
            by_cong = all((p[r] - k) % g == 0 for r, (g, k) in found.congruences)
            assert truth == by_cong, f"{rel} at {p}: congruences {found.congruences} not equivalent"
    if found.congruences is not None:
        COUNTS["periodic: equivalent to congruences"] += 1


# -- analysis families ------------------------------------------------------------------------

@settings(max_examples=200, **SETTINGS)
@given(one_class_cases())
def test_one_class_residue_set_is_exact(case):
    rel, rng, cong = case
    if not isinstance(rel, OPS):  # folded to true/false when built
        return
    _check_analysis(rel, [R], [rng], [cong])


@settings(max_examples=80, **SETTINGS)
@given(product_cases())
def test_product_residue_set_is_exact(case):
    rel, ranges = case
    if not isinstance(rel, OPS):
        return
    COUNTS["periodic products: cases"] += 1
    _check_analysis(rel, [X, Y], ranges, [(1, 0), (1, 0)])


@settings(max_examples=200, **SETTINGS)
@given(one_class_cases())
def test_one_class_shape_is_exact(case):
    """Drifting relations too (``(c + 1)//2 != 1``): range, congruence and holes."""
    rel, rng, cong = case
    if not isinstance(rel, OPS):
        return
    shape = class_shape(rel, lambda r: (rng, cong))
    COUNTS["class shape: cases"] += 1
    if shape is None:
        return
    COUNTS["class shape: as class data"] += 1
    (lo, hi), (g, k) = shape.range, shape.cong
    for p in _points([R], [rng], [cong]):
        v = p[R]
        expected = lo <= v <= hi and (v - k) % g == 0 and v not in shape.excluded
        assert bool(evaluate(rel, p)) == expected, f"{rel} in {rng} (cong {cong}) at {v}: {shape} is wrong"


# -- the engine with periodic facts ------------------------------------------------------------

QUESTIONS = [sympy.Eq(sympy.Mod(R, k), j) for k in (2, 3, 4, 6) for j in range(k)]


def _engine_check(s: Solver, syms, feasible, questions) -> None:
    for q in questions:
        t = s.decide(q)
        values = {bool(evaluate(q, p)) for p in feasible}
        COUNTS["periodic engine: questions"] += 1
        if t is Truth.TRUE:
            assert values <= {True}, f"{q} answered TRUE, false at some feasible point"
        elif t is Truth.FALSE:
            assert values <= {False}, f"{q} answered FALSE, true at some feasible point"
        elif len(values) == 1:
            COUNTS["periodic engine: UNKNOWN where brute force decides"] += 1
    for sym in syms:
        lo, hi = s.bounds(sym)
        vals = [p[sym] for p in feasible]
        assert (lo is None or lo <= min(vals)) and (hi is None or max(vals) <= hi), f"bounds({sym}) unsound"
    for root, m, r in s.congruences():
        assert all((p[root] - r) % m == 0 for p in feasible), f"congruence {root} = {r} mod {m} unsound"


@settings(max_examples=100, **SETTINGS)
@given(one_class_cases(), st.booleans(), st.data())
def test_engine_after_a_periodic_fact_is_sound(case, as_guard, data):
    rel, (lo, hi), (m, c) = case
    if not isinstance(rel, OPS):
        return
    s = Solver()
    s.symbol("r", lo, hi)
    reason = Reason.guard(str(rel))
    try:
        if m > 1:
            s.assume(sympy.Eq(sympy.Mod(R, m), c))
        if as_guard:
            s.guard(rel, True, reason)
        else:
            s.assume(rel, reason)
    except (ContradictionError, HintMismatchError):
        feasible = [p for p in _points([R], [(lo, hi)], [(m, c)]) if evaluate(rel, p)]
        assert not feasible, f"{rel} in [{lo}, {hi}] (r = {c} mod {m}) rejected, but {feasible[0]} satisfies it"
        return
    feasible = [p for p in _points([R], [(lo, hi)], [(m, c)]) if evaluate(rel, p)]
    assert feasible or as_guard, f"{rel} in [{lo}, {hi}] accepted though no point satisfies it"
    if not feasible:
        return
    extra = [sympy.Ge(R, data.draw(st.integers(lo - 1, hi + 1))), sympy.Eq(R, data.draw(st.integers(lo, hi)))]
    _engine_check(s, [R], feasible, QUESTIONS + extra + [rel, negate(rel)])


@settings(max_examples=30, **SETTINGS)
@given(product_cases())
def test_engine_after_a_product_fact_is_sound(case):
    rel, ranges = case
    if not isinstance(rel, OPS):
        return
    s = Solver()
    for sym, (lo, hi) in zip((X, Y), ranges):
        s.symbol(sym.name, lo, hi)
    feasible = [p for p in _points([X, Y], ranges, [(1, 0), (1, 0)]) if evaluate(rel, p)]
    try:
        s.assume(rel, Reason.guard(str(rel)))
    except ContradictionError:
        assert not feasible, f"{rel} in {ranges} rejected, but {feasible[0]} satisfies it"
        return
    assert feasible, f"{rel} in {ranges} accepted though no point satisfies it"
    questions = [sympy.Eq(sympy.Mod(v, k), j) for v in (X, Y) for k in (2, 3) for j in range(k)]
    _engine_check(s, [X, Y], feasible, questions + [rel, negate(rel)])


# -- tables ------------------------------------------------------------------------------------

C, H, W, L = (int_symbol(n) for n in "chwL")
TABLE = [
    # relation, ranges, expected congruences (None: a residue set, or not periodic)
    (sympy.Eq(2 * FloorDiv(C + 1, 2), C), {C: (2, 64)}, ((C, (2, 0)),)),                    # chunk(2)
    (sympy.Eq(sympy.Mod(L + 3, 4), 3), {L: (4, 256)}, ((L, (4, 0)),)),                      # two stride-2 levels
    (sympy.Eq(4 * FloorDiv(L - 1, 4) + 4, L), {L: (4, 256)}, ((L, (4, 0)),)),
    (sympy.Eq(H * W, 4 * FloorDiv(H, 2) * FloorDiv(W, 2)), {H: (2, 64), W: (2, 64)},         # patchify
     ((H, (2, 0)), (W, (2, 0)))),
    (sympy.Eq(6 * H * W, 24 * FloorDiv(H, 2) * FloorDiv(W, 2)), {H: (2, None), W: (2, None)},
     ((H, (2, 0)), (W, (2, 0)))),
    (sympy.Ne(sympy.Mod(C, 2), 0), {C: (0, None)}, ((C, (2, 1)),)),
    (sympy.Eq(3 * FloorDiv(C, 3), C), {C: (None, None)}, ((C, (3, 0)),)),
    (sympy.Ge(sympy.Mod(C, 6), 4), {C: (0, 100)}, None),                                     # {4, 5} mod 6
    (sympy.Eq(2 * FloorDiv(L - 1, 4) + 1, FloorDiv(L - 1, 2)), {L: (8, 256)}, None),          # {0, 3} mod 4
    (sympy.Eq(sympy.Mod(H + W, 2), 0), {H: (2, 64), W: (2, 64)}, None),                       # not per class
]


@pytest.mark.parametrize("rel,ranges,expected", TABLE, ids=[str(t[0]) for t in TABLE])
def test_table(rel, ranges, expected):
    def lookup(r):
        lo, hi = ranges[r]
        return (float("-inf") if lo is None else lo, float("inf") if hi is None else hi), (1, 0)

    found = analyze(rel, lookup)
    assert found is not None
    assert found.congruences == expected


def test_not_periodic():
    assert analyze(sympy.Eq(FloorDiv(C * C, 2), 8), lambda r: ((0, 10), (1, 0))) is None
    assert analyze(sympy.Ne(FloorDiv(C + 1, 2), 1), lambda r: ((2, 64), (1, 0))) is None  # drifts: a range
    assert period_of(FloorDiv(FloorDiv(C, 2) + 1, 3), C) == 6
    assert period_of(sympy.Max(FloorDiv(C, 4), FloorDiv(C + 1, 2)), C) == 4


SHAPES = [
    # relation, range, expected (range, congruence, holes)
    (sympy.Ne(FloorDiv(C + 1, 2), 1), (2, 64), ((2, 64), (1, 0), {2})),           # chunk: (c + 1)//2 != 1
    (sympy.Ne(FloorDiv(C, 4), 1), (2, 64), ((2, 64), (1, 0), {4, 5, 6, 7})),      # view(b, -1, 4)
    (sympy.Ne(C, FloorDiv(C + 1, 2) + 1), (2, 64), ((2, 64), (1, 0), {2, 3})),       # chunk: the other half
    (sympy.Ge(FloorDiv(C - 1, 4), 1), (2, None), ((5, float("inf")), (1, 0), set())),
    (sympy.Eq(FloorDiv(C, 4), 3), (0, 64), ((12, 15), (1, 0), set())),
    (sympy.Ge(3 - FloorDiv(C, 2), 0), (0, 64), ((0, 7), (1, 0), set())),
    (sympy.Eq(FloorDiv(C, 4) + sympy.Mod(C, 2), 3), (0, 64), ((9, 14), (1, 0), {10, 13})),
]


@pytest.mark.parametrize("rel,rng,expected", SHAPES, ids=[str(t[0]) for t in SHAPES])
def test_shape_table(rel, rng, expected):
    lo, hi = rng
    shape = class_shape(rel, lambda r: ((lo, float("inf") if hi is None else hi), (1, 0)))
    assert shape is not None
    assert (shape.range, shape.cong, set(shape.excluded)) == expected


def test_known_congruence_narrows_the_residue_set():
    # L % 4 in {0, 3} alone; with L even known, it is L % 4 == 0
    rel = sympy.Eq(2 * FloorDiv(L - 1, 4) + 1, FloorDiv(L - 1, 2))
    found = analyze(rel, lambda r: ((8, 256), (2, 0)))
    assert found is not None and found.congruences == ((L, (4, 0)),)


def test_engine_turns_the_guards_into_divisible_fixes():
    s = Solver()
    c = s.symbol("c", 2, 64, hint=8)
    h, w = s.symbol("h", 2, 64, hint=8), s.symbol("w", 2, 64, hint=12)
    s.guard(sympy.Eq(2 * FloorDiv(c + 1, 2), c), True, Reason.guard("chunk", "m.py:1"))
    s.guard(sympy.Eq(h * w, 4 * FloorDiv(h, 2) * FloorDiv(w, 2)), True, Reason.guard("view", "m.py:2"))
    assert s.congruences() == ((c, 2, 0), (h, 2, 0), (w, 2, 0))
    fixes = suggest(s)
    assert [f.describe() for f in fixes] == ["c = 2*_c + 0 (c divisible by 2)", "h = 2*_h + 0 (h divisible by 2)",
                                             "w = 2*_w + 0 (w divisible by 2)"]
    assert fixes.verified
