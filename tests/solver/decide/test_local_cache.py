"""The large-problem path with its caches, against brute force, across scopes.

``solver.decide.local`` rebuilds a question's Z3 encoding from cached pieces (fact terms over the
class leaders by fact index, class terms by class data), and the pipeline skips the check
(and the refutation) that the example point already rules out. A stale piece would state a
fact or a range that no longer holds, so the oracle runs questions before, inside and after
scopes whose assumption links classes, narrows ranges, or breaks the example point, on one
warm solver, and checks every TRUE/FALSE against brute force over the box and against a
fresh solver given the same facts. UNKNOWN where brute force decides is a counted gap.

Problems: 4 symbols in [0, 6], difference / sum / bound / affine-equality facts true at an
example point (the shape of ``benchmarks.streams.large_problem``), linear questions.
"""

from __future__ import annotations

import itertools
import random

import pytest
import sympy
import z3

from oracle_support import COUNTS, HINTED_KINDS, Box, fact_at_hint, truth_of
from shapes import evaluate, int_symbol
from solver import ContradictionError, Solver, Truth
from solver.decide import local, narrowing, pipeline
SYMS = [int_symbol(f"w{i}") for i in range(4)]
BOX = range(0, 7)
CASES = 120
POINTS = Box([dict(zip(SYMS, p)) for p in itertools.product(BOX, repeat=len(SYMS))])


def _fact(rng: random.Random, hint: dict[sympy.Symbol, int], kind: str) -> sympy.Basic:
    return fact_at_hint(rng, hint, kind, *rng.sample(SYMS, 3))


def _scope_fact(rng: random.Random, hint: dict[sympy.Symbol, int]) -> sympy.Basic:
    """An assumption for a scope: a link, a narrowing, or one false at the example point."""
    a, b = rng.sample(SYMS, 2)
    kind = rng.choice(["link", "narrow", "off"])
    if kind == "link":
        return sympy.Eq(a, b + hint[a] - hint[b])
    if kind == "narrow":
        return sympy.Ge(a, hint[a] - rng.randint(0, 1))
    return sympy.Ge(a, hint[a] + 1)


def _question(rng: random.Random) -> sympy.Basic:
    a, b = rng.sample(SYMS, 2)
    k = rng.randint(0, 6)
    return rng.choice([sympy.Ge(a, k), sympy.Le(a, b), sympy.Eq(a, b), sympy.Ne(a, k), sympy.Ge(a + b, k),
                       sympy.Le(a + b, 2 * k)])


def _case(seed: int) -> tuple[dict[sympy.Symbol, int], list[sympy.Basic], list[sympy.Basic], sympy.Basic]:
    rng = random.Random(seed)
    hint = {s: rng.choice(BOX) for s in SYMS}
    facts = [_fact(rng, hint, rng.choice(HINTED_KINDS)) for _ in range(rng.randint(2, 6))]
    return hint, facts, [_question(rng) for _ in range(5)], _scope_fact(rng, hint)


def _solver(hint: dict[sympy.Symbol, int], facts: list[sympy.Basic]) -> Solver:
    s = Solver()
    for x in SYMS:
        s.symbol(x.name, BOX.start, BOX.stop - 1, hint=hint[x])
    for f in facts:
        s.assume(f)
    return s


def _brute(facts: list[sympy.Basic], q: sympy.Basic) -> Truth:
    return POINTS.truth(facts, q)


def _check(s: Solver, hint: dict[sympy.Symbol, int], facts: list[sympy.Basic], questions: list[sympy.Basic],
           tally: dict[str, int]) -> None:
    """Every answer of the warm solver ``s`` against brute force and a fresh solver; the
    memoized residual facts of every class against a walk of its members."""
    st = s._state  # noqa: SLF001
    for x in SYMS:
        root = st.uf.find(x)[0]
        walked = {i for m in st.uf.members(root) for i in st.mentions.get(m, ())}
        assert set(st.class_facts(root)) == walked and len(st.class_facts(root)) == len(walked)
    fresh = _solver(hint, facts)
    for q in questions:
        got, want, again = s.decide(q), _brute(facts, q), fresh.decide(q)
        tally["asked"] += 1
        if got is Truth.UNKNOWN:
            tally["gaps"] += want is not Truth.UNKNOWN
            continue
        assert got is want, (q, got, want, facts)
        assert again in (got, Truth.UNKNOWN), (q, got, again, facts)


@pytest.mark.parametrize("limit", [1, 3, 50])
def test_local_path_with_caches_across_scopes(monkeypatch, limit):
    monkeypatch.setattr(pipeline, "FULL_SMT_FACTS", 0)  # every Z3 question goes the local way
    monkeypatch.setattr(pipeline, "LOCAL_FACTS", limit)
    tally = {"asked": 0, "gaps": 0, "scopes": 0}
    for seed in range(CASES):
        hint, facts, questions, extra = _case(seed)
        s = _solver(hint, facts)
        _check(s, hint, facts, questions, tally)  # fills the caches
        try:
            with s.assuming(extra):
                tally["scopes"] += 1
                _check(s, hint, facts + [extra], questions, tally)
        except ContradictionError:
            assert _brute(facts, extra) is Truth.FALSE
        _check(s, hint, facts, questions, tally)  # after the undo: no stale piece may answer
    COUNTS[f"local cache limit={limit}: questions"] = tally["asked"]
    COUNTS[f"local cache limit={limit}: decided UNKNOWN (gap)"] = tally["gaps"]
    assert tally["scopes"] > CASES // 2


def test_one_sided_stages_never_contradict_the_example_point():
    """With the example point's value given, local Z3 and refutation only try the answer
    that point allows; every answer they give is brute force's."""
    decided = 0
    for seed in range(CASES):
        hint, facts, questions, _ = _case(seed)
        s = _solver(hint, facts)
        st = s._state  # noqa: SLF001 - the stages are checked on the engine's own state
        for q in questions:
            want = _brute(facts, q)
            at_hint = bool(evaluate(q, hint))
            for limit in (1, 50):
                got = local.decide(st, q, limit, at_hint)
                assert got in (None, want), (q, got, want, facts)
                decided += got is not None
            assert local.decide(st, q, 50, None) in (None, want)
            assert narrowing.decide(st, q, at_hint) in (None, want)
    COUNTS["local: one-sided answers"] = decided
    assert decided > 50


def test_encoded_terms_follow_links_and_scopes():
    """The fact-term table is emptied when classes link or a scope ends; class terms are
    keyed by the class data they state."""
    s = Solver()
    x, y, z = (s.symbol(n, 0, 9, hint=3) for n in "xyz")
    s.assume(sympy.Le(x + y, z + 3))
    st = s._state  # noqa: SLF001
    leaders, ids = local.near(st, sympy.Ge(x, 1), 10)
    local.encoding(st, leaders, ids)
    assert set(st.memo.encoded) == set(ids)
    with s.assuming(sympy.Eq(x, y)):
        assert st.memo.encoded == {}
        leaders, ids = local.near(st, sympy.Ge(x, 1), 10)
        assert y not in leaders and local.encoding(st, leaders, ids)
    assert st.memo.encoded == {}
    data = st.uf.data(x)
    term = st.smt.class_term(x, *data.range, data.cong, ())
    assert st.smt.class_term(x, *data.range, data.cong, ()) is term
    assert st.smt.class_term(x, 1, 9, data.cong, ()) is not term


def _text_equals_terms(s: Solver, rel: sympy.Basic) -> int:
    """Every text piece of ``rel``'s neighbourhood states what the Z3 translation of the
    same fact / class data states (Z3 proves the two equivalent); the number checked."""
    st = s._state  # noqa: SLF001
    z = st.smt
    leaders, ids = local.near(st, rel, 50)
    decls = {r.name: z.var(r) for r in leaders}
    checked = 0
    pieces = [(local._fact_text(st, i), z.translate(st.to_roots(st.facts[i].rel))) for i in ids]  # noqa: SLF001
    for r in leaders:
        data = st.uf.data(r)
        pieces.append((local._class_text(r, data), z.class_term(r, *data.range, data.cong, sorted(data.excluded))))  # noqa: SLF001
    for text, term in pieces:
        if not text:
            continue
        parsed = z3.parse_smt2_string(text, decls=decls, ctx=z.ctx)
        solver = z3.Solver(ctx=z.ctx)
        solver.add(z3.Not(z3.And(*parsed) == term))
        assert solver.check() == z3.unsat, (text, term)
        checked += 1
    return checked


def test_text_encoding_states_what_the_terms_state():
    """Linear facts with negative coefficients and constants, congruences, holes, unbounded
    ends and a quoted name, as text, against the Z3 translation."""
    rng = random.Random(7)
    checked = 0
    for seed in range(40):
        s = Solver()
        xs = [s.symbol(n, rng.choice([None, -5, 0]), rng.choice([None, 9, 40])) for n in ("a", "b", "ｃ", "d e", "f")]
        for _ in range(6):
            a, b, c = rng.sample(xs, 3)
            k = rng.randint(-9, 9)
            rel = rng.choice([sympy.Le(2 * a - 3 * b, c + k), sympy.Ne(a, -3 * b + k), sympy.Ge(a + b + c, k),
                              sympy.Eq(sympy.Mod(a, 3), 1), sympy.Ne(a, k), sympy.Eq(a, 2 * b + 1),
                              sympy.Le(a * b, k + 20)])
            try:
                s.assume(rel)
            except ContradictionError:
                continue
        checked += _text_equals_terms(s, sympy.Ge(xs[seed % 5], 0))
    COUNTS["local: text pieces checked against Z3 terms"] = checked
    assert checked > 200


def test_names_that_cannot_be_quoted_go_as_terms(monkeypatch):
    """A name with ``|`` or a backslash is no SMT-LIB quoted symbol: its facts and class
    data go to Z3 as terms, with the same answers."""
    monkeypatch.setattr(pipeline, "FULL_SMT_FACTS", 0)
    s = Solver()
    p, q, r = s.symbol("p|q", 0, 9, hint=4), s.symbol("r\\s", 0, 9, hint=5), s.symbol("t", 0, 9, hint=6)
    for f in (sympy.Le(p + q, r + 3), sympy.Ge(r, 6), sympy.Le(q, p + 1)):
        s.assume(f)
    st = s._state  # noqa: SLF001
    terms, text = local.encoding(st, *local.near(st, sympy.Ge(p, 0), 10))
    assert "p|q" not in text and "r\\s" not in text and len(terms) >= 4
    facts = [f.rel for f in s.facts]
    points = [dict(zip((p, q, r), v)) for v in itertools.product(range(10), repeat=3)]
    for question in (sympy.Le(p + q, 12), sympy.Le(q, 7), sympy.Ge(q, 9), sympy.Ge(p, 3), sympy.Ne(r, 5)):
        want = truth_of([bool(evaluate(question, x)) for x in points if all(evaluate(f, x) for f in facts)])
        assert s.decide(question) is want, question
