"""Fuzzing the service surface (issue 11): ``serve`` lines, the parser, problem JSON.

Derandomized and time-bounded (a few seconds each). Every input answers or is refused with a
named error: 0 requests over 10 s, 0 InternalErrors, 0 tracebacks, and parsing never calls
``eval``/``exec``/``sympify``.
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapes.errors import ShapesError
from shapes.parse import parse_expr
from solver.errors import SolverError
from solver.service.limits import Limits
from solver.service.protocol import SERVE_OPS, Session, replay

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LIMITS = Limits(time_limit=8.0)
NAMED = {"ProtocolError", "LimitError", "TimeLimitError", "ContradictionError",
         "HintMismatchError", "UndecidedGuardError", "SolverError", "UnknownSymbolError"}

# -- text of the symbolic-dim language, with hostile pieces mixed in -------------------------
NAMES = ["n", "m", "k", "ｎ", "ｍ", "x", "__import__", "os", "min", "Eq", "\ud800", "n\u0301"]
INTS = ["0", "1", "2", "7", "64", str(2**63), str(2**64), str(2**64 + 1), "10**30", "-3"]
ATOMS = st.sampled_from(NAMES + INTS)
BINOPS = [" + ", " - ", " * ", " // ", " % ", " ** ", " / ", " & ", " | ", " ^ ", " << ", "."]
RELOPS = [" == ", " != ", " < ", " <= ", " > ", " >= ", " and ", " or ", " in "]
CALLS = ["Eq", "Ne", "Mod", "FloorDiv", "max", "min", "Max", "floor", "Not", "And", "Or",
         "sympify", "open", "getattr", "(lambda: 1)"]


def _compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, st.sampled_from(BINOPS + RELOPS), inner).map("".join),
        inner.map(lambda t: f"({t})"),
        inner.map(lambda t: f"not {t}"),
        inner.map(lambda t: f"-{t}"),
        st.tuples(st.sampled_from(CALLS), st.lists(inner, max_size=3)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.tuples(inner, st.sampled_from([" ** 64", " ** 8", "[0]", ".real", " if n else m"])).map("".join),
    )


EXPR_TEXT = st.one_of(st.recursive(ATOMS, _compound, max_leaves=12), st.text(max_size=40))


@contextmanager
def _no_eval() -> Iterator[list[str]]:
    """Count calls of eval/exec/sympify while the block runs (the parser must make none)."""
    calls: list[str] = []
    saved = builtins.eval, builtins.exec, sympy.sympify

    def canary(name: str, real: Any) -> Any:
        def called(source: object, *args: object, **kwargs: object) -> Any:
            if name == "exec" and not isinstance(source, (str, bytes)):
                return real(source, *args, **kwargs)  # importlib runs module code objects
            calls.append(name)
            raise AssertionError(f"{name} called")
        return called

    builtins.eval, builtins.exec = canary("eval", saved[0]), canary("exec", saved[1])  # type: ignore[assignment]
    sympy.sympify = canary("sympify", saved[2])
    try:
        yield calls
    finally:
        builtins.eval, builtins.exec, sympy.sympify = saved


@FUZZ
@given(EXPR_TEXT)
def test_parser_answers_or_raises_a_shapes_error(text: str) -> None:
    with _no_eval() as calls:
        start = time.monotonic()
        try:
            parse_expr(text, allow_new_symbols=True)
        except ShapesError:
            pass
        assert time.monotonic() - start < 10.0
    assert calls == []


# -- serve lines --------------------------------------------------------------------------
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 70), st.sampled_from([2**64, 2**65, -2**70]),
                   st.floats(allow_nan=False, allow_infinity=False), EXPR_TEXT,
                   st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
REASONS = st.fixed_dictionaries({"kind": st.sampled_from(["spec", "guard", "trace_assumption", "hunch"])},
                                optional={"text": st.one_of(st.none(), st.text(max_size=5)),
                                          "op": st.sampled_from([None, "view", "declared range"])})
FIELDS = {"rel": EXPR_TEXT, "expr": EXPR_TEXT, "name": st.one_of(st.sampled_from(NAMES), st.text(max_size=4)),
          "lo": VALUES, "hi": VALUES, "hint": VALUES, "reason": st.one_of(REASONS, VALUES),
          "rlimit": VALUES, "enum_limit": VALUES, "junk": VALUES}


def _request() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda op, rid, fields: {"id": rid, "op": op, **fields},
                     st.sampled_from([*SERVE_OPS, "frob"]), st.one_of(st.integers(), st.text(max_size=3)),
                     st.fixed_dictionaries({}, optional=FIELDS))


def _wellformed() -> st.SearchStrategy[dict[str, Any]]:
    """Requests with the right fields for their op (the values are still hostile)."""
    rel = st.tuples(st.sampled_from(["decide", "explain", "assume", "guard"]), EXPR_TEXT, st.one_of(
        st.none(), st.booleans()), st.one_of(st.just({}), REASONS.map(lambda r: {"reason": r}))).map(
        lambda t: {"op": t[0], "rel": t[1], **({"hint": t[2]} if t[0] == "guard" else {}),
                   **(t[3] if t[0] in ("assume", "guard") else {})})
    bounds = EXPR_TEXT.map(lambda e: {"op": "bounds", "expr": e})
    symbol = st.builds(lambda name, lo, hi: {"op": "symbol", "name": name, "lo": lo, "hi": hi},
                       st.one_of(st.sampled_from(NAMES), st.text(max_size=3)), VALUES, VALUES)
    return st.one_of(rel, bounds, symbol)


LINES = st.one_of(_request().map(json.dumps), _wellformed().map(json.dumps), st.text(max_size=30),
                  st.sampled_from(["[]", "null", "{}", '{"op": "decide"}', "[" * 5000]))
SETUP = ['{"op": "symbol", "name": "n", "lo": 0, "hi": 64, "hint": 8}',
         '{"op": "symbol", "name": "m", "lo": 1, "hi": 18446744073709551616}',
         '{"op": "symbol", "name": "k", "lo": null, "hi": null}',
         '{"op": "assume", "rel": "m == 2 * n + 1"}']


@FUZZ
@given(st.lists(LINES, min_size=1, max_size=6))
def test_serve_lines_answer_or_name_the_error(lines: list[str]) -> None:
    session = Session(limits=LIMITS)
    for line in SETUP:
        assert "error" not in session.handle_line(line)
    for line in lines:
        start = time.monotonic()
        response = session.handle_line(line)
        assert time.monotonic() - start < 10.0, line
        json.dumps(response, ensure_ascii=True)
        assert "id" in response
        if "error" in response:
            assert response["error"]["type"] in NAMED, (line, response)
            assert "Traceback" not in response["error"]["message"]
    answers = session.handle_line('{"op": "answers"}')  # the session stays usable
    assert "answers" in answers, answers


# -- problem JSON -------------------------------------------------------------------------
BASE = {"format": "symshape.problem", "version": 1,
        "symbols": [{"name": "n", "lo": 0, "hi": 16, "hint": 4}, {"name": "m", "lo": 0, "hi": None, "hint": 8}],
        "facts": [{"rel": "m == 2 * n"}],
        "guards": [{"rel": "n >= 2", "hint": True}]}


@st.composite
def _problems(draw: st.DrawFn) -> object:
    obj: dict[str, Any] = json.loads(json.dumps(BASE))
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.sampled_from(["top", "symbols", "facts", "guards"]))
        key = draw(st.sampled_from(["format", "version", "symbols", "facts", "guards", "name", "lo",
                                    "hi", "hint", "rel", "reason", "after_guards", "source", "junk"]))
        value = draw(st.one_of(VALUES, REASONS))
        if where == "top":
            obj[key] = value
        elif isinstance(obj.get(where), list):
            entries = obj[where]
            if entries and draw(st.booleans()) and isinstance(entries[0], dict):
                entries[0][key] = value
            else:
                entries.append(draw(st.one_of(VALUES, st.just({key: value}))))
    return draw(st.one_of(st.just(obj), VALUES))


@FUZZ
@given(_problems())
def test_problem_json_replays_or_names_the_error(obj: object) -> None:
    start = time.monotonic()
    try:
        answers = replay(obj, limits=LIMITS)
    except (SolverError, ShapesError):
        pass
    else:
        json.dumps(answers)
    assert time.monotonic() - start < 10.0


@FUZZ
@given(_problems())
def test_problem_json_through_load(obj: object) -> None:
    session = Session(limits=LIMITS)
    response = session.handle({"id": 1, "op": "load", "problem": obj})
    if "error" in response:
        assert response["error"]["type"] in NAMED, response


@pytest.mark.parametrize("text", ["(n ** 64) ** 64 >= 1", "((n ** 64) ** 64) ** 64 >= 1",
                                  "k * k >= " + str(10**2000)])
def test_known_stalls_are_refused_fast(text: str) -> None:
    start = time.monotonic()
    with pytest.raises(ShapesError):
        parse_expr(text, allow_new_symbols=True)
    assert time.monotonic() - start < 1.0
