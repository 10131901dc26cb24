"""The solver against two independent oracles (STYLE.md item 11).

* Bounded boxes inside [-3, 8]: brute-force enumeration with ``shapes.evaluate``. Here the
  solver must be *exact*: ``decide`` equals the brute-force truth (an UNKNOWN where brute
  force says TRUE/FALSE is a failure), ``bounds`` equals the brute-force min/max, and an
  assume is rejected exactly when it empties the box.
* Large and unbounded ranges: an independent Z3 encoding (oracle_support.Z3Oracle). The
  solver's TRUE/FALSE must agree whenever the oracle decides; the share of oracle-decided
  questions the solver left UNKNOWN is counted (an honest gap, not a failure).

Figures go to ``oracle_support.COUNTS`` and are printed in the terminal summary.
"""

from __future__ import annotations

import itertools

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle_support import (
    COUNTS,
    REL_OPS,
    SYMS,
    Z3Oracle,
    bounded_ranges,
    box,
    expressions,
    facts,
    relations,
    truth_of,
    values,
)
from shapes import FloorDiv, evaluate, negate
from solver import ContradictionError, Reason, Solver, Truth
from solver.decide import stages
from solver.kernel import normal_form
SETTINGS = dict(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@st.composite
def bounded_cases(draw):
    n = draw(st.integers(2, 3))
    syms = SYMS[:n]
    ranges = draw(bounded_ranges(n))
    hints = None
    if draw(st.booleans()):
        hints = [draw(st.integers(lo, hi)) for lo, hi in ranges]
    # most facts are made to hold at a witness point of the box (negated when they do not),
    # so that cases keep their facts instead of mostly being contradictions
    witness = {s: draw(st.integers(lo, hi)) for s, (lo, hi) in zip(syms, ranges)}
    fs = []
    for f in draw(st.lists(facts(syms), max_size=3)):
        try:
            if draw(st.integers(0, 3)) and not evaluate(f, witness):
                f = negate(f) if isinstance(f, REL_OPS) else sympy.Not(f)
        except ZeroDivisionError:
            pass
        fs.append(f)
    rel = draw(relations(syms))
    expr = draw(expressions(syms))
    return ranges, hints, fs, rel, expr


def _declare(ranges, hints=None):
    s = Solver()
    for i, (lo, hi) in enumerate(ranges):
        s.symbol(SYMS[i].name, lo, hi, hint=None if hints is None else hints[i])
    return s


def _repro(ranges, hints, added, rel):
    return f"ranges={ranges} hints={hints} facts={added} rel={rel}"


@settings(max_examples=700, **SETTINGS)
@given(bounded_cases())
def test_bounded_decide_bounds_and_assume_are_exact(case):
    ranges, hints, fs, rel, expr = case
    points = box(ranges)
    fact_vals = [values(f, points) for f in fs]
    rel_vals, expr_vals = values(rel, points), values(expr, points)
    if rel_vals is None or expr_vals is None or any(v is None for v in fact_vals):
        COUNTS["bounded: skipped (division by zero in the box)"] += 1
        return
    s = _declare(ranges, hints)
    feasible = [True] * len(points)
    added = []
    for f, fv in zip(fs, fact_vals):
        after = [a and bool(b) for a, b in zip(feasible, fv)]
        if not any(after):
            new = Reason.spec("the new fact")
            with pytest.raises(ContradictionError) as info:
                s.assume(f, new)
            assert info.value.reasons[-1] == new
            COUNTS["bounded: contradictory assumes rejected"] += 1
            continue
        s.assume(f)
        added.append(f)
        feasible = after
    live = [i for i, ok in enumerate(feasible) if ok]
    expected = truth_of([bool(rel_vals[i]) for i in live])
    cheap = s.decide(rel, cheap=True)  # the stages before witnesses/Z3: right or UNKNOWN
    COUNTS["bounded: cheap decisions (stages before Z3)"] += 1
    COUNTS["bounded: cheap decisions answered"] += cheap is not Truth.UNKNOWN
    COUNTS["bounded: cheap decisions wrong"] += cheap not in (expected, Truth.UNKNOWN)
    assert cheap in (expected, Truth.UNKNOWN), "decide(cheap=True): " + _repro(ranges, hints, added, rel)
    got = s.decide(rel)
    COUNTS["bounded: decide cases"] += 1
    COUNTS["bounded: wrong or UNKNOWN-where-decided answers"] += got is not expected
    for stage, k in s.stats.items():
        COUNTS[f"bounded: stage {stage}"] += k
    assert got is expected, "decide: " + _repro(ranges, hints, added, rel)
    lo, hi = min(expr_vals[i] for i in live), max(expr_vals[i] for i in live)
    COUNTS["bounded: bounds cases"] += 1
    assert s.bounds(expr) == (lo, hi), f"bounds({expr}): " + _repro(ranges, hints, added, expr)


# -- exhaustive families ------------------------------------------------------------------
FAMILY_RANGES = [(-3, 8), (2, 6), (0, 0), (-3, -1)]


@pytest.mark.parametrize("rng", FAMILY_RANGES, ids=str)
def test_exhaustive_affine_family(rng):
    """Every ``a*x + b op c`` for a, b, c in [-3, 3]: exact, and never by Z3."""
    s = _declare([rng])
    x = SYMS[0]
    points = box([rng])
    n = 0
    for a, b, c, op in itertools.product(range(-3, 4), range(-3, 4), range(-3, 4), REL_OPS):
        rel = op(a * x + b, c)
        assert s.decide(rel) is truth_of(values(rel, points)), rel
        n += 1
    assert s.stats["z3"] == s.stats["enumeration"] == s.stats["undecided"] == 0, s.stats
    COUNTS["families: affine decides"] += n


@pytest.mark.parametrize("fact", [None, "mod3", "ne4", "link"], ids=str)
def test_exhaustive_affine_family_under_facts(fact):
    """``a*x + b op c`` with a congruence, an exclusion or a derived dim on x."""
    x, y = SYMS[:2]
    ranges = [(-3, 8), (-3, 8)]
    s = _declare(ranges)
    extra = {None: sympy.true, "mod3": sympy.Eq(sympy.Mod(x, 3), 1), "ne4": sympy.Ne(x, 4),
             "link": sympy.Eq(y, 2 * x + 1)}[fact]
    s.assume(extra)
    points = [p for p in box(ranges) if evaluate(extra, p)]
    n = 0
    for a, b, c, op in itertools.product(range(-3, 4), range(-2, 3), range(-3, 4), REL_OPS):
        for target in (x, y):
            rel = op(a * target + b, c)
            assert s.decide(rel) is truth_of(values(rel, points)), (extra, rel)
            n += 1
    COUNTS["families: affine decides under a fact"] += n


@pytest.mark.parametrize("k", [-3, -2, 2, 3, 4])
def test_exhaustive_mod_floordiv_family(k):
    """``Mod(a*x + b, k) op c`` and ``FloorDiv(a*x + b, k) op c``, negative divisors included."""
    rng = (-3, 8)
    s = _declare([rng])
    x = SYMS[0]
    points = box([rng])
    n = 0
    for a, b, c, op in itertools.product((-2, 1, 3), (-1, 2), range(-3, 4), REL_OPS):
        for e in (sympy.Mod(a * x + b, k), FloorDiv(a * x + b, k)):
            rel = op(e, c)
            assert s.decide(rel) is truth_of(values(rel, points)), rel
            n += 1
        e = sympy.Mod(a * x + b, k)
        vals = values(e, points)
        assert s.bounds(e) == (min(vals), max(vals)), e
    COUNTS["families: mod/floordiv decides"] += n


COMMON_FACTOR_RANGES = [((-3, 5), (1, 4), (1, 3)), ((-3, 5), (-3, -1), (1, 3)), ((-2, 4), (-2, 2), (-1, 2))]


@pytest.mark.parametrize("link", [False, True], ids=["plain", "linked"])
@pytest.mark.parametrize("ranges", COMMON_FACTOR_RANGES, ids=str)
def test_exhaustive_common_factor_family(ranges, link):
    """``FloorDiv(g*p, g*q) op c``, ``Mod(g*p, g*q) op c`` and the divisibility form
    ``g*p == g*q*FloorDiv(g*p, g*q)`` with a symbolic common factor ``g`` (the normal form
    cancels it when the ranges show ``g != 0``, :func:`solver.decide.normal_form.cancel_common_factors`),
    against brute force; ``linked`` writes one ``y`` as ``z`` under the fact ``z == y``, the
    shape GPT-2's reshape guard takes (``a0*a1 % i0 == 0`` with ``i0 == a0``). Divisibility
    with an exact quotient (``q == 1``) and ``g`` nonzero is decided without Z3."""
    x, y, z = SYMS
    if link:
        ranges = (ranges[0], ranges[1], ranges[1])
    s = _declare(list(ranges))
    points = box(list(ranges))
    if link:
        s.assume(sympy.Eq(z, y))
        points = [p for p in points if p[z] == p[y]]
    g_nonzero = ranges[1][0] > 0 or ranges[1][1] < 0
    n = cheap = 0
    for g, p, q in itertools.product((y, -y, 2 * y, x * y), (x, x + 1, 2 * x, x * z), (1, -1, 2, z)):
        g_other = g.xreplace({y: z}) if link else g  # the dividend's copy of g, rooted back by the solver
        num, den = g_other * p, g * q
        rels = [sympy.Eq(num, den * FloorDiv(num, den))]
        rels += [op(e, c) for e in (FloorDiv(num, den), sympy.Mod(num, den)) for op in REL_OPS for c in (-1, 0, 2)]
        for rel in rels:
            want = values(rel, points)
            if want is None:  # some feasible point divides by zero: no single truth to check
                continue
            before = s.stats["z3"] + s.stats["enumeration"] + s.stats["undecided"]
            assert s.decide(rel) is truth_of(want), (ranges, link, rel)
            n += 1
            if rel is rels[0] and q == 1 and g_nonzero and g != x * y:
                cheap += 1
                assert s.stats["z3"] + s.stats["enumeration"] + s.stats["undecided"] == before, rel
    COUNTS["families: common-factor decides"] += n
    COUNTS["families: common-factor divisibility decided cheaply"] += cheap


HORNER_BOXES = [[(2, 9)], [(-4, 5)], [(0, 6)], [(1, 5), (2, 6)], [(-2, 3), (0, 4)]]


@pytest.mark.parametrize("ranges", HORNER_BOXES, ids=str)
def test_exhaustive_horner_family(ranges):
    """:func:`solver.decide.stages.by_horner` on every polynomial normal form ``p op 0`` of a
    family (one symbol: degree <= 3, coefficients in [-2, 2]; two symbols: the six monomials
    of degree <= 2, coefficients in [-1, 1]) against brute force: whenever it answers, it
    is right; counted how often it decides what the plain interval stage does not (only on
    boxes away from 0 does it ever)."""
    syms = SYMS[: len(ranges)]
    points = box(ranges)
    view = normal_form.View.of(dict(zip(syms, ranges)))
    if len(syms) == 1:
        (x,) = syms
        monomials, coefs = (x**3, x**2, x, 1), range(-2, 3)
    else:
        x, y = syms
        monomials, coefs = (x * y, x**2, y**2, x, y, 1), range(-1, 2)
    n = answered = gained = 0
    for cs in itertools.product(coefs, repeat=len(monomials)):
        d = sum(c * m for c, m in zip(cs, monomials))
        vals = values(d, points)
        for op in ("==", "!=", ">="):
            q = normal_form.Question(op, d)
            got = stages.by_horner(q, view)
            n += 1
            if got is None:
                continue
            want = truth_of([{"==": v == 0, "!=": v != 0, ">=": v >= 0}[op] for v in vals])
            assert got is want, (ranges, op, d)
            answered += 1
            gained += stages.by_interval(q, view) is None
    if all(lo >= 1 for lo, _ in ranges):  # away from 0, Horner's form is what decides more
        assert gained > 0
    COUNTS["families: horner questions"] += n
    COUNTS["families: horner answers (all right)"] += answered
    COUNTS["families: horner answers the plain interval stage lacks"] += gained


# -- large and unbounded ranges, against the independent Z3 encoding -------------------------
BIG = 2**63 - 2
BIG_RANGES = [(2, BIG), (2, None), (None, None), (0, None), (1, 64), (-BIG, -2), (None, 10)]


def unbounded_expressions(syms, depth=2):
    """Expressions with constant divisors only (the Z3 oracle has no symbolic division)."""
    return expressions(syms, depth, kinds=("add", "sub", "mul", "scale", "mod", "floordiv", "min", "max", "affine"),
                       divisors=(-4, -2, 2, 3, 4, 8), scales=(-3, -2, 2, 4), leaf_max=8)


@st.composite
def unbounded_relations(draw, syms, bool_depth=1):
    if bool_depth and draw(st.integers(0, 5)) == 0:
        sub = unbounded_relations(syms, bool_depth - 1)
        kind = draw(st.sampled_from(["and", "or", "not"]))
        if kind == "not":
            return sympy.Not(draw(sub))
        return (sympy.And if kind == "and" else sympy.Or)(draw(sub), draw(sub))
    return draw(st.sampled_from(REL_OPS))(draw(unbounded_expressions(syms)), draw(unbounded_expressions(syms, 1)))


@st.composite
def unbounded_facts(draw, syms):
    kind = draw(st.sampled_from(["link", "mod", "bound", "any"]))
    x, y = draw(st.permutations(list(syms)))[:2]
    if kind == "link":
        return sympy.Eq(x, draw(st.sampled_from([1, 2, 3, -1])) * y + draw(st.integers(-2, 3)))
    if kind == "mod":
        k = draw(st.sampled_from([2, 4, 8]))
        return sympy.Eq(sympy.Mod(x, k), draw(st.integers(0, k - 1)))
    if kind == "bound":
        return draw(st.sampled_from(REL_OPS[2:]))(x, draw(st.sampled_from([0, 5, 64, 2**40])))
    return draw(unbounded_relations(syms, 0))


@st.composite
def unbounded_cases(draw):
    n = draw(st.integers(2, 3))
    syms = SYMS[:n]
    ranges = [draw(st.sampled_from(BIG_RANGES)) for _ in range(n)]
    return ranges, draw(st.lists(unbounded_facts(syms), max_size=3)), draw(unbounded_relations(syms)), \
        draw(unbounded_expressions(syms))


@settings(max_examples=200, **SETTINGS)
@given(unbounded_cases())
def test_unbounded_against_independent_z3(case):
    ranges, fs, rel, expr = case
    syms = SYMS[: len(ranges)]
    oracle = Z3Oracle(dict(zip(syms, ranges)))
    s = Solver()
    for sym, (lo, hi) in zip(syms, ranges):
        s.symbol(sym.name, lo, hi)
    for f in fs:
        verdict = oracle.decide(f)
        if verdict is None:
            COUNTS["unbounded: skipped (oracle unknown on a fact)"] += 1
            return
        if verdict is Truth.FALSE:
            with pytest.raises(ContradictionError):
                s.assume(f)
            continue
        try:
            s.assume(f)
        except ContradictionError:
            pytest.fail(f"assume({f}) rejected, oracle says satisfiable: ranges={ranges} facts={fs}")
        oracle.add(f)
    expected = oracle.decide(rel)
    cheap = s.decide(rel, cheap=True)
    got = s.decide(rel)
    assert cheap in (got, Truth.UNKNOWN), f"cheap {cheap} vs full {got}: ranges={ranges} facts={fs} rel={rel}"
    COUNTS["unbounded: decide cases"] += 1
    if expected is None:
        COUNTS["unbounded: oracle unknown (skipped)"] += 1
        return
    repro = f"ranges={ranges} facts={fs} rel={rel}"
    if expected is Truth.UNKNOWN:
        assert got is Truth.UNKNOWN, repro
        return
    COUNTS["unbounded: oracle-decided questions"] += 1
    COUNTS["unbounded: wrong answers"] += got not in (expected, Truth.UNKNOWN)
    COUNTS["unbounded: oracle-decided answered UNKNOWN"] += got is Truth.UNKNOWN
    assert got in (expected, Truth.UNKNOWN), repro
    _check_bounds_against_oracle(s, oracle, expr, repro)


def _check_bounds_against_oracle(s, oracle, expr, repro):
    """No feasible value outside ``bounds`` and, for finite ends, the end itself is feasible."""
    lo, hi = s.bounds(expr)
    t = oracle.term(expr)
    checks = []
    if lo is not None:
        checks += [("below lo", t < lo, "unsat"), ("at lo", t == lo, "sat")]
    if hi is not None:
        checks += [("above hi", t > hi, "unsat"), ("at hi", t == hi, "sat")]
    for label, cond, want in checks:
        got = oracle.sat([cond])
        if got == "unknown":
            continue
        COUNTS["unbounded: bounds end checks"] += 1
        assert got == want, f"bounds({expr}) = {(lo, hi)}: {label} is {got}; {repro}"
