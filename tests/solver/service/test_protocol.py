"""JSON problems and answers: round trips, replay, golden answers, validation, the CLI.

Set ``SYMSHAPE_UPDATE_GOLDEN=1`` to rewrite the golden answer file after an intended change.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapes.expr import FloorDiv, evaluate
from solver import Reason, Solver, Truth
from solver.service import ProtocolError, from_json, to_json
from solver import engine
from solver.service import codec
from solver.service.problem import PROBLEM_VERSION
from solver.service.protocol import (
    Session,
    answers_from_solver,
    problem_from_solver,
    replay,
    solver_from_problem,
)

from json_edit import DELETE, set_at  # noqa: E402

GOLDEN = Path(__file__).parent / "golden"
ROOT = Path(__file__).resolve().parents[3]
PYTHON = sys.executable


# -- sample problems ---------------------------------------------------------------------------
def sample_solver() -> Solver:
    """Spec facts, a trace assumption and guards, interleaved (facts after guards too)."""
    s = Solver()
    b = s.symbol("b", 2, 64, hint=8, source="x.size(0)")
    c = s.symbol("c", 2, None, hint=16, source="y.size(0)")
    n = s.symbol("n", 1, 32, hint=6, source="z.size(1)")
    s.assume(sympy.Eq(c, 2 * b), Reason.spec("y.size(0) == 2 * x.size(0)", "spec.py:3"))
    s.guard(sympy.Le(b, 32), True, Reason.guard("x.size(0) <= 32", "model.py:12", "view"))
    s.assume(sympy.Ge(n, 2), Reason("trace_assumption", "z.size(1) >= 2", op="0/1 specialization"))
    s.guard(sympy.Ge(c, 4), True, Reason.guard("y.size(0) >= 4", "model.py:13", "cat"))
    s.guard(sympy.Eq(sympy.Mod(n, 2), 0), True, Reason.guard("z.size(1) % 2 == 0", "model.py:20"))
    s.guard(sympy.Gt(n, 7), False, Reason.guard("z.size(1) > 7", "model.py:21", "split"))
    s.assume(sympy.Le(b, 16), Reason.spec("x.size(0) <= 16", "spec.py:4"))
    s.guard(sympy.Ge(FloorDiv(c, 4) + n, 3), True, Reason.guard(None, "model.py:30"))
    return s


def queries(s: Solver) -> list[sympy.Basic]:
    b, c, n = (i.symbol for i in s.symbols)
    return [sympy.Ge(b, 3), sympy.Le(c, 32), sympy.Eq(c, 2 * b), sympy.Eq(sympy.Mod(n, 2), 0),
            sympy.Ge(n, 8), sympy.Ne(n, 4), sympy.Eq(sympy.Mod(c, 4), 0), sympy.Gt(c, b + n),
            sympy.And(sympy.Ge(b, 2), sympy.Le(n, 6)), sympy.Or(sympy.Eq(n, 2), sympy.Eq(n, 4))]


def exprs(s: Solver) -> list[sympy.Expr]:
    b, c, n = (i.symbol for i in s.symbols)
    return [b, c, n, c - b, b + n, FloorDiv(c, 3), sympy.Max(b, n)]


def observe(s: Solver) -> dict[str, Any]:
    """Everything a user can ask, as comparable data."""
    return {
        "decide": [s.decide(q) for q in queries(s)],
        "bounds": [s.bounds(e) for e in exprs(s)],
        "classes": s.classes(),
        "relations": s.relations(),
        "congruences": s.congruences(),
        "violations": [(v.fact.rel, v.fact.reason, v.truth_under_spec) for v in s.violations()],
        "guards": s.guards,
    }


def json_round_trip(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


# -- problems ------------------------------------------------------------------------------------
def test_problem_lists_symbols_facts_and_guard_stream() -> None:
    p = problem_from_solver(sample_solver())
    assert (p["format"], p["version"]) == ("symshape.problem", PROBLEM_VERSION)
    assert p["symbols"][1] == {"name": "c", "lo": 2, "hi": None, "hint": 16, "source": "y.size(0)"}
    # declared ranges are in symbols[], guard-made facts only in the guard stream
    assert [f["rel"] for f in p["facts"]] == ["c == 2 * b", "n >= 2", "b <= 16"]
    assert [f.get("after_guards", 0) for f in p["facts"]] == [0, 1, 4]
    assert p["facts"][1]["reason"] == {"kind": "trace_assumption", "text": "z.size(1) >= 2",
                                       "origin": None, "op": "0/1 specialization"}
    assert [g["hint"] for g in p["guards"]] == [True, True, True, False, True]
    assert p["guards"][3] == {"rel": "n > 7", "hint": False, "reason": {
        "kind": "guard", "text": "z.size(1) > 7", "origin": "model.py:21", "op": "split"}}


def test_round_trip_gives_identical_answers() -> None:
    s = sample_solver()
    t = solver_from_problem(json_round_trip(problem_from_solver(s)))
    assert observe(t) == observe(s)


def test_solver_to_json_from_json() -> None:
    s = sample_solver()
    text = to_json(s, indent=2)
    assert json.loads(text) == problem_from_solver(s)
    t = from_json(text)
    assert observe(t) == observe(s)
    assert to_json(t) == to_json(s)


def test_problem_is_a_fixpoint_of_replay() -> None:
    p = problem_from_solver(sample_solver())
    assert problem_from_solver(solver_from_problem(p)) == p


def test_replay_reproduces_recorded_answers() -> None:
    s = sample_solver()
    recorded = json_round_trip(answers_from_solver(s))
    assert replay(json_round_trip(problem_from_solver(s))) == recorded
    assert [g["decided"] for g in recorded["guards"]] == ["unknown", "true", "unknown", "unknown", "true"]


def test_fact_after_a_guard_keeps_the_guard_undecided_on_replay() -> None:
    s = Solver()
    n = s.symbol("n", 1, 32, hint=9)
    s.guard(sympy.Ge(n, 4), True)  # undecided: becomes a guard fact (a violation)
    s.assume(sympy.Ge(n, 8))  # a later spec fact that would have settled it
    p = problem_from_solver(s)
    assert p["facts"] == [{"rel": "n >= 8", "reason": {"kind": "spec", "text": "n >= 8",
                                                       "origin": None, "op": None},
                           "after_guards": 1}]
    answers = replay(p)
    assert answers["guards"][0]["decided"] == "unknown"
    assert answers == answers_from_solver(s)


def test_guard_kind_fact_assumed_directly_is_kept_as_a_fact() -> None:
    s = Solver()
    n = s.symbol("n", 0, 10, hint=3)
    s.assume(sympy.Le(n, 5), Reason.guard("n <= 5", "m.py:1"))
    s.guard(sympy.Le(n, 5), True)  # now decided by the fact: adds nothing
    p = problem_from_solver(s)
    assert [f["reason"]["kind"] for f in p["facts"]] == ["guard"]
    t = solver_from_problem(p)
    assert (t.facts, t.guards) == (s.facts, s.guards)
    assert answers_from_solver(t) == answers_from_solver(s)


def test_duplicate_guards_and_negative_answers_align() -> None:
    s = Solver()
    a = s.symbol("a", 0, 100, hint=10)
    reason = Reason.guard("a > 50", "m.py:2")
    assert s.guard(sympy.Gt(a, 50), False, reason) is False
    s.assume(sympy.Le(a, 50), reason)  # the same relation and reason as the guard fact, again
    assert s.guard(sympy.Gt(a, 50), False, reason) is False
    p = problem_from_solver(s)
    assert [f["rel"] for f in p["facts"]] == ["a <= 50"]
    assert replay(p) == answers_from_solver(s)


def test_symbol_names_must_be_identifiers_to_serialize() -> None:
    s = Solver()
    s.symbol("x.size(0)", 0, 4)
    with pytest.raises(ProtocolError, match=r'symbols\[0\].name: symbol name "x.size\(0\)" is not a Python identifier'):
        to_json(s)


def test_declared_marker_matches_engine() -> None:
    assert codec.DECLARED == engine.DECLARED


def test_empty_problem() -> None:
    answers = replay({"format": "symshape.problem", "version": 1})
    assert answers["guards"] == [] and answers["bounds"] == {} and answers["classes"] == []


def test_defaults_for_hand_written_problems() -> None:
    p = {"format": "symshape.problem", "version": 1,
         "symbols": [{"name": "a", "hi": 9}, {"name": "b", "lo": 1, "hi": 9, "hint": 4}],
         "facts": [{"rel": "b == 2 * a"}], "guards": [{"rel": "a >= 1"}]}
    s = solver_from_problem(p)
    assert s.facts[-1].reason == Reason.spec("b == 2 * a")
    assert s.guards[0].reason == Reason.guard("a >= 1") and s.guards[0].decided is Truth.TRUE


# -- golden ----------------------------------------------------------------------------------------
def test_golden_answers() -> None:
    problem = json.loads((GOLDEN / "small_problem.json").read_text())
    answers = replay(problem)
    path = GOLDEN / "small_answers.json"
    if os.environ.get("SYMSHAPE_UPDATE_GOLDEN"):
        path.write_text(json.dumps(answers, indent=2) + "\n")
    assert answers == json.loads(path.read_text())


def test_golden_problem_is_what_the_sample_solver_records() -> None:
    assert json.loads((GOLDEN / "small_problem.json").read_text()) == problem_from_solver(sample_solver())


def test_docs_example_problem_gives_the_documented_answers() -> None:
    blocks = re.findall(r"```json\n(.*?)```", (ROOT / "docs" / "protocol.md").read_text(), re.S)
    problem, answers = json.loads(blocks[0]), json.loads(blocks[1])
    assert replay(problem) == answers


# -- malformed problems -------------------------------------------------------------------------------
def base_problem() -> dict[str, Any]:
    return {
        "format": "symshape.problem",
        "version": 1,
        "symbols": [{"name": "a", "lo": 0, "hi": 10, "hint": 5, "source": "x.size(0)"},
                    {"name": "b", "lo": 1, "hi": None, "hint": 3, "source": None},
                    {"name": "c", "lo": 0, "hi": 100, "hint": 7, "source": None}],
        "facts": [{"rel": "b <= a", "reason": {"kind": "spec", "text": None, "origin": None, "op": None}}],
        "guards": [{"rel": "a >= 2", "hint": True,
                    "reason": {"kind": "guard", "text": None, "origin": None, "op": None}}],
    }


def mutated(changes: dict[tuple[Any, ...], Any]) -> Any:
    p: Any = base_problem()
    for path, value in changes.items():
        if path == ():
            return value
        set_at(p, path, value)
    return p


MALFORMED = [
    ({(): []}, "problem: expected an object, got a list"),
    ({("format",): "nope"}, 'format: expected "symshape.problem", got "nope"'),
    ({("format",): DELETE}, 'format: expected "symshape.problem", missing'),
    ({("version",): 3}, "version: unsupported version 3 (this reader supports versions 1, 2)"),
    ({("version",): "1"}, 'version: unsupported version "1"'),
    ({("version",): True}, "version: unsupported version true"),
    ({("extra",): 1}, 'problem: unknown field "extra"'),
    ({("symbols",): {}}, "symbols: expected a list, got an object"),
    ({("symbols", 0): 3}, "symbols[0]: expected an object, got 3"),
    ({("symbols", 2, "lo"): "x"}, 'symbols[2].lo: expected an int or null, got "x"'),
    ({("symbols", 0, "hi"): True}, "symbols[0].hi: expected an int or null, got true"),
    ({("symbols", 0, "hi"): 2.5}, "symbols[0].hi: expected an int or null, got 2.5"),
    ({("symbols", 1, "hint"): [1]}, "symbols[1].hint: expected an int or null, got a list"),
    ({("symbols", 0, "name"): DELETE}, "symbols[0].name: missing"),
    ({("symbols", 0, "name"): ""}, 'symbols[0].name: expected a non-empty string, got ""'),
    ({("symbols", 0, "name"): "x.size(0)"}, 'symbols[0].name: symbol name "x.size(0)" is not a Python identifier'),
    ({("symbols", 0, "name"): "lambda"}, 'symbols[0].name: symbol name "lambda" is not a Python identifier'),
    ({("symbols", 1, "name"): "a"}, 'symbols[1].name: duplicate symbol name "a" (first declared at symbols[0])'),
    ({("symbols", 0, "lo"): 9, ("symbols", 0, "hi"): 3}, "symbols[0]: empty range: lo=9 > hi=3"),
    ({("symbols", 0, "hint"): 100}, "symbols[0]: symbol 'x.size(0)': example value 100 is outside"),
    ({("symbols", 0, "source"): 3}, "symbols[0].source: expected a string or null, got 3"),
    ({("symbols", 0, "min"): 3}, 'symbols[0]: unknown field "min"'),
    ({("facts",): "b <= a"}, 'facts: expected a list, got "b <= a"'),
    ({("facts", 0): "b <= a"}, 'facts[0]: expected an object, got "b <= a"'),
    ({("facts", 0, "rel"): DELETE}, "facts[0].rel: missing"),
    ({("facts", 0, "rel"): 5}, "facts[0].rel: expected a string, got 5"),
    ({("facts", 0, "rel"): "1 + a.b >= 0"}, "facts[0].rel: unsupported syntax 'a.b' at column 5"),
    ({("facts", 0, "rel"): "zz >= 1"}, "facts[0].rel: unknown name 'zz' at column 1"),
    ({("facts", 0, "rel"): "a >= 1.5"}, "facts[0].rel: float literal '1.5' not supported"),
    ({("facts", 0, "rel"): "__import__('os').system('true') == 0"}, "facts[0].rel: unsupported"),
    ({("facts", 0, "rel"): "a >="}, "facts[0].rel: invalid syntax"),
    ({("facts", 0, "rel"): "a + b"}, 'facts[0].rel: expected a relation, got the integer expression "a + b"'),
    ({("facts", 0, "rel"): "a >= 20"}, "facts[0]: a >= 20 contradicts what is already known"),
    ({("facts", 0, "reason"): "spec"}, 'facts[0].reason: expected an object, got "spec"'),
    ({("facts", 0, "reason", "kind"): "hunch"}, 'facts[0].reason.kind: unknown reason kind "hunch" (expected spec, trace_assumption, guard)'),
    ({("facts", 0, "reason", "kind"): DELETE}, "facts[0].reason.kind: missing"),
    ({("facts", 0, "reason", "text"): 1}, "facts[0].reason.text: expected a string or null, got 1"),
    ({("facts", 0, "reason", "line"): 1}, 'facts[0].reason: unknown field "line"'),
    ({("facts", 0, "reason", "op"): "declared range"}, 'facts[0].reason.op: "declared range" is reserved'),
    ({("facts", 0, "after_guards"): 2}, "facts[0].after_guards: expected an int in [0, 1]"),
    ({("facts", 0, "after_guards"): -1}, "facts[0].after_guards: expected an int in [0, 1]"),
    ({("facts", 0, "after_guards"): True}, "facts[0].after_guards: expected an int in [0, 1]"),
    ({("facts",): [{"rel": "a >= 1", "after_guards": 1}, {"rel": "a >= 2"}]},
     "facts[1].after_guards: facts must be listed in replay order"),
    ({("guards", 0, "hint"): "yes"}, 'guards[0].hint: expected true, false or null, got "yes"'),
    ({("guards", 0, "hint"): 1}, "guards[0].hint: expected true, false or null, got 1"),
    ({("guards", 0, "rel"): "a"}, 'guards[0].rel: expected a relation, got the integer expression "a"'),
    ({("guards", 0, "rel"): "a >= b and c"}, "guards[0].rel: operand of 'and' 'c' is an integer expression"),
    ({("guards", 0, "when"): 1}, 'guards[0]: unknown field "when"'),
    ({("guards", 0, "rel"): "a >= 0", ("guards", 0, "hint"): False},
     "guards[0]: the example inputs make a >= 0 False, but the facts imply it is True"),
    ({("guards", 0, "hint"): None}, "guards[0]: a >= 2 depends on the input sizes and no hint was given"),
]


@pytest.mark.parametrize(("changes", "fragment"), MALFORMED, ids=[m[1][:40] for m in MALFORMED])
def test_malformed_problem_names_the_field(changes: dict[tuple[Any, ...], Any], fragment: str) -> None:
    with pytest.raises(ProtocolError) as info:
        solver_from_problem(mutated(changes))
    assert fragment in str(info.value)


def test_base_problem_is_valid() -> None:
    assert replay(base_problem())["bounds"] == {"a": [2, 10], "b": [1, 10], "c": [0, 100]}


def test_hint_mismatch_keeps_the_solver_error_as_cause() -> None:
    with pytest.raises(ProtocolError) as info:
        solver_from_problem(mutated({("guards", 0, "hint"): False, ("guards", 0, "rel"): "a >= 0"}))
    assert type(info.value.__cause__).__name__ == "HintMismatchError"


@pytest.mark.parametrize(("text", "fragment"), [
    ("{", "problem: invalid JSON: Expecting property name"),
    ('{"format": NaN}', "problem: invalid JSON: NaN is not allowed"),
    ("[" * 100_000 + "]" * 100_000, "problem: invalid JSON"),
    ("", "problem: invalid JSON"),
])
def test_invalid_json_text(text: str, fragment: str) -> None:
    with pytest.raises(ProtocolError, match="^" + fragment.replace("[", r"\[")):
        from_json(text)


# -- Hypothesis: generated problems round-trip -----------------------------------------------------------
OPS = (sympy.Eq, sympy.Ne, sympy.Le, sympy.Lt, sympy.Ge, sympy.Gt)


@st.composite
def generated_solvers(draw: st.DrawFn) -> Solver:
    s = Solver(rlimit=2_000_000)
    syms = []
    for i in range(draw(st.integers(1, 3))):
        lo = draw(st.integers(0, 4))
        hi = draw(st.one_of(st.none(), st.integers(lo + 1, lo + 12)))
        hint = draw(st.integers(lo, lo + 12 if hi is None else hi))
        syms.append(s.symbol(f"s{i}", lo, hi, hint=hint, source=f"x.size({i})"))
    env = {i.symbol: i.hint for i in s.symbols}
    for step in range(draw(st.integers(0, 6))):
        rel = draw(relations(syms))
        holds = bool(evaluate(rel, env))
        if draw(st.booleans()):
            s.guard(rel, holds, Reason.guard(f"step {step}", f"gen.py:{step}"))
        else:
            kind = draw(st.sampled_from(("spec", "trace_assumption")))
            s.assume(rel if holds else sympy.Not(rel), Reason(kind, f"step {step}"))
    return s


@st.composite
def relations(draw: st.DrawFn, syms: list[sympy.Symbol]) -> sympy.Basic:
    a = draw(st.sampled_from(syms))
    k = draw(st.integers(-2, 3))
    other = draw(st.sampled_from([*syms, sympy.Integer(0)]))
    lhs = draw(st.sampled_from([a, a * k, sympy.Mod(a, 2) if k == 0 else a + k, FloorDiv(a, 2)]))
    return draw(st.sampled_from(OPS))(lhs, other + draw(st.integers(-3, 6)))


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_solvers())
def test_generated_problems_round_trip(s: Solver) -> None:
    p = json_round_trip(problem_from_solver(s))
    t = solver_from_problem(p)
    syms = [i.symbol for i in s.symbols]
    probes = [sympy.Ge(x, v) for x in syms for v in (1, 3, 6)] + [sympy.Eq(sympy.Mod(x, 2), 0) for x in syms]
    probes += [sympy.Le(x, y) for x in syms for y in syms if x != y]
    assert [t.decide(q) for q in probes] == [s.decide(q) for q in probes]
    assert [t.bounds(x) for x in syms] == [s.bounds(x) for x in syms]
    assert t.classes() == s.classes() and t.guards == s.guards
    assert problem_from_solver(t) == p
    assert answers_from_solver(t) == answers_from_solver(s)


# -- the serve session, in process -----------------------------------------------------------------------
def test_session_ops() -> None:
    session = Session()
    r = session.handle
    assert r({"id": 1, "op": "symbol", "name": "b", "lo": 2, "hi": 64, "hint": 8}) == {"id": 1, "symbol": "b"}
    assert r({"id": 2, "op": "symbol", "name": "c", "lo": 2, "hint": 16, "source": "y.size(0)"})["symbol"] == "c"
    assert r({"id": 3, "op": "assume", "rel": "c == 2 * b",
              "reason": {"kind": "spec", "text": "y == 2x", "origin": "s.py:1", "op": None}}) == {"id": 3, "ok": True}
    assert r({"id": 4, "op": "guard", "rel": "b <= 32", "hint": True}) == {"id": 4, "result": True, "decided": "unknown"}
    assert r({"id": 5, "op": "guard", "rel": "c >= 4", "hint": True}) == {"id": 5, "result": True, "decided": "true"}
    assert r({"id": 6, "op": "decide", "rel": "c <= 64"}) == {"id": 6, "truth": "true"}
    assert r({"id": 7, "op": "bounds", "expr": "c + b"}) == {"id": 7, "lo": 6, "hi": 96}
    explained = r({"id": 8, "op": "explain", "rel": "c <= 64"})["facts"]
    assert {f["reason"]["text"] for f in explained} >= {"y == 2x"}
    assert r({"id": 9, "op": "classes"}) == {"id": 9, "classes": [["b"], ["c"]]}
    assert r({"id": 10, "op": "relations"}) == {"id": 10, "relations": ["c == 2 * b"]}
    assert r({"id": 11, "op": "congruences"}) == {"id": 11, "congruences": []}  # c = 2*b: a relation
    violations = r({"id": 12, "op": "violations"})["violations"]
    assert [v["rel"] for v in violations] == ["b <= 32"]
    problem = r({"id": 13, "op": "problem"})["problem"]
    answers = r({"id": 14, "op": "answers"})["answers"]
    assert answers == replay(problem)
    assert r({"id": 15, "op": "new"}) == {"id": 15, "ok": True}
    assert r({"id": 16, "op": "classes"})["classes"] == []
    assert r({"id": 17, "op": "load", "problem": problem}) == {"id": 17, "ok": True, "symbols": 2, "facts": 1, "guards": 2}
    assert r({"id": 18, "op": "answers"})["answers"] == answers


@pytest.mark.parametrize(("request_", "fragment"), [
    ([1, 2], "request: expected an object, got a list"),
    ({"id": 1}, "op: missing"),
    ({"id": 1, "op": "frob"}, 'op: unknown op "frob"'),
    ({"id": 1.5, "op": "classes"}, "id: expected an int, a string or null"),
    ({"id": 1, "op": "decide"}, "rel: missing"),
    ({"id": 1, "op": "decide", "rel": "q >= 1"}, "rel: unknown name 'q'"),
    ({"id": 1, "op": "decide", "rel": "n >= 1", "hint": True}, 'hint: unknown field for op "decide"'),
    ({"id": 1, "op": "bounds", "expr": "n >= 1"}, "expr: expected an integer expression"),
    ({"id": 1, "op": "symbol", "name": "m", "lo": "x"}, 'lo: expected an int or null, got "x"'),
    ({"id": 1, "op": "symbol", "name": "n"}, "symbol 'n' is already declared"),
    ({"id": 1, "op": "guard", "rel": "n >= 3"}, "depends on the input sizes and no hint was given"),
    ({"id": 1, "op": "guard", "rel": "n >= 3", "hint": "yes"}, "hint: expected true, false or null"),
    ({"id": 1, "op": "assume", "rel": "n >= 3", "reason": {"kind": "x"}}, 'reason.kind: unknown reason kind "x"'),
    ({"id": 1, "op": "assume", "rel": "n >= 30"}, "contradicts what is already known"),
    ({"id": 1, "op": "explain", "rel": "n >= 3"}, "is not implied by the facts"),
    ({"id": 1, "op": "load", "problem": {"format": "x"}}, "format: expected"),
    ({"id": 1, "op": "new", "rlimit": 0}, "rlimit: expected a positive int"),
])
def test_session_errors_are_responses(request_: Any, fragment: str) -> None:
    session = Session()
    session.handle({"op": "symbol", "name": "n", "lo": 2, "hi": 8})
    response = session.handle(request_)
    assert set(response) == {"id", "error"}
    assert fragment in response["error"]["message"]
    assert session.handle({"id": 2, "op": "decide", "rel": "n >= 2"}) == {"id": 2, "truth": "true"}


def test_session_error_types() -> None:
    session = Session()
    assert session.handle_line("{bad")["error"]["type"] == "ProtocolError"
    session.handle({"op": "symbol", "name": "n", "lo": 2, "hi": 8})
    assert session.handle({"id": 3, "op": "assume", "rel": "n >= 30"})["error"]["type"] == "ContradictionError"
    assert session.handle({"id": 4, "op": "guard", "rel": "n >= 3"})["error"]["type"] == "UndecidedGuardError"


# -- the command line ------------------------------------------------------------------------------------
def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "solver", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_cli_replay_prints_answers() -> None:
    done = run_cli("replay", str(GOLDEN / "small_problem.json"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads((GOLDEN / "small_answers.json").read_text())
    assert done.stdout.startswith('{\n  "format": "symshape.answers"')


def test_cli_replay_stdin() -> None:
    done = run_cli("replay", "-", stdin=json.dumps(base_problem()))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["bounds"]["a"] == [2, 10]


@pytest.mark.parametrize(("content", "fragment"), [
    (None, "cannot read: No such file or directory"),
    ("{not json", "invalid JSON"),
    (json.dumps(mutated({("symbols", 2, "lo"): "x"})), 'symbols[2].lo: expected an int or null, got "x"'),
    (json.dumps(mutated({("facts", 0, "rel"): "1 + a.b >= 0"})), "facts[0].rel: unsupported syntax 'a.b' at column 5"),
])
def test_cli_replay_bad_file_exits_2(tmp_path: Path, content: str | None, fragment: str) -> None:
    path = tmp_path / "problem.json"
    if content is not None:
        path.write_text(content)
    done = run_cli("replay", str(path))
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0]


def test_cli_help() -> None:
    done = run_cli("--help")
    assert done.returncode == 0 and "replay" in done.stdout and "serve" in done.stdout
    assert run_cli("replay", "--help").returncode == 0
    assert run_cli().returncode == 2


def test_cli_serve_session() -> None:
    requests = [
        '{"id": 1, "op": "symbol", "name": "n", "lo": 2, "hi": 8, "hint": 4}',
        "this is not json",
        "",
        '{"id": 2, "op": "guard", "rel": "n >= 3", "hint": true}',
        '{"id": 3, "op": "bounds", "expr": "2 * n"}',
        '{"id": 4, "op": "decide", "rel": "n >"}',
        '[1, 2]',
        '{"id": "five", "op": "violations"}',
        '{"id": 6, "op": "frob"}',
        '{"id": 7, "op": "problem"}',
    ]
    done = run_cli("serve", stdin="\n".join(requests) + "\n")
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == 9
    assert out[0] == {"id": 1, "symbol": "n"}
    assert out[1]["id"] is None and "invalid JSON" in out[1]["error"]["message"]
    assert out[2] == {"id": 2, "result": True, "decided": "unknown"}
    assert out[3] == {"id": 3, "lo": 6, "hi": 16}
    assert out[4]["error"]["type"] == "ProtocolError" and out[4]["error"]["message"].startswith("rel: ")
    assert out[5]["error"]["message"].startswith("request: expected an object")
    assert out[6]["id"] == "five" and [v["rel"] for v in out[6]["violations"]] == ["n >= 3"]
    assert out[7]["error"]["message"].startswith('op: unknown op "frob"')
    assert replay(out[8]["problem"])["bounds"] == {"n": [3, 8]}


def test_cli_serve_answers_each_line_before_the_next_arrives() -> None:
    proc = subprocess.Popen([PYTHON, "-m", "solver", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for i, line in enumerate(['{"id": 1, "op": "symbol", "name": "n", "hi": 3}',
                                  '{"id": 2, "op": "decide", "rel": "n <= 3"}']):
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["id"] == i + 1
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
