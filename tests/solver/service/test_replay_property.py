"""Property (issue 11): every fact that takes effect in a ``serve`` session survives save and
replay: the answers of the replayed ``problem`` equal the live answers, and so do decisions."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from expressions import expressions, relations  # noqa: E402 (tests/solver_protocol/expressions.py)
from shapes.expr import evaluate, int_symbol
from shapes.parse import parse_expr
from solver.service.limits import Limits
from solver.service.protocol import Session, replay

EXAMPLE = {"a": 3, "b": 4, "c": 6}
SYMBOLS = [{"op": "symbol", "name": "a", "lo": 0, "hi": 6, "hint": 3},
           {"op": "symbol", "name": "ｂ", "lo": 1, "hi": 8, "hint": 4},  # NFKC: the name is "b"
           {"op": "symbol", "name": "c", "lo": 0, "hi": None, "hint": 6}]
TABLE = {name: int_symbol(name) for name in EXAMPLE}

EXPR = expressions(["a", "b", "c", "ｃ", "0", "1", "2", "3", "5"])
REL = relations(EXPR)
COND = st.one_of(REL, st.tuples(REL, REL).map(lambda t: f"Eq({t[0]}, {t[1]})"),
                 st.tuples(REL, st.sampled_from(["and", "or"]), REL).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})"))
REASON = st.one_of(st.none(), st.builds(
    lambda kind, op, origin: {"kind": kind, "text": None, "op": op, "origin": origin},
    st.sampled_from(["spec", "guard", "trace_assumption"]), st.sampled_from([None, "view", "settled by the facts"]),
    st.sampled_from([None, "m.py:3"])))
STEP = st.tuples(st.sampled_from(["assume", "guard", "guard", "decide"]), COND, REASON, st.booleans())


def _at_example(rel: str) -> bool:
    return bool(evaluate(parse_expr(rel, TABLE), {TABLE[k]: v for k, v in EXAMPLE.items()}))


def _request(op: str, rel: str, reason: dict[str, Any] | None, honest: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"op": op, "rel": rel}
    if op == "guard":
        out["hint"] = _at_example(rel) if honest else not _at_example(rel)
    if reason is not None and op != "decide":
        out["reason"] = reason
    return out


@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, min_size=1, max_size=6), st.lists(COND, min_size=1, max_size=3))
def test_replay_answers_equal_live_answers(steps: list[tuple[str, str, Any, bool]], probes: list[str]) -> None:
    live = Session(limits=Limits(time_limit=None))
    for s in SYMBOLS:
        assert "error" not in live.handle(s)
    for op, rel, reason, honest in steps:
        if op == "assume" and not _at_example(rel):
            rel = f"not ({rel})"  # facts stay consistent with the example inputs
        response = live.handle(_request(op, rel, reason, honest))
        if "error" in response:
            assert response["error"]["type"] in ("HintMismatchError", "ContradictionError"), response
    problem = json.loads(json.dumps(live.handle({"op": "problem"})["problem"]))
    answers = live.handle({"op": "answers"})["answers"]
    assert replay(problem) == answers
    loaded = Session(limits=Limits(time_limit=None))
    assert "error" not in loaded.handle({"op": "load", "problem": problem})
    for rel in probes:
        assert loaded.handle({"op": "decide", "rel": rel}) == live.handle({"op": "decide", "rel": rel}), rel
