"""Property (issue 11): a problem built through the Python API survives ``to_json`` /
``from_json``: the replayed solver answers every question as the live one does.

Reserved reasons (``op="declared range"``, what ``Solver.symbol`` records and ``to_json``
leaves out) are refused from callers with a SolverError naming the op, and the refused call
changes nothing; every fact that takes effect is saved.
"""

from __future__ import annotations

from typing import Any

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from expressions import expressions, relations  # noqa: E402 (tests/solver_protocol/expressions.py)
from shapes.expr import evaluate
from shapes.parse import parse_expr
from solver import Solver
from solver.service import from_json, to_json
from solver.errors import ContradictionError, HintMismatchError, SolverError
from solver.service.protocol import answers_from_solver
from solver.truth import DECLARED, Reason

DECLS = [("a", 0, 6, 3), ("ｂ", 1, 8, 4), ("c", 0, None, 6), ("d", -3, 3, 0)]  # "ｂ" is "b" (NFKC)
EXAMPLE = {"a": 3, "b": 4, "c": 6, "d": 0}

EXPR = expressions(["a", "b", "c", "d", "0", "1", "2", "3", "7"])
REL = relations(EXPR)
COND = st.one_of(REL, st.tuples(REL, st.sampled_from(["and", "or"]), REL).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})"))
REASON = st.one_of(st.none(), st.builds(
    Reason, st.sampled_from(["spec", "guard", "trace_assumption"]), st.sampled_from([None, "why", "n >= 3"]),
    st.sampled_from([None, "m.py:3"]), st.sampled_from([None, "view", DECLARED, "settled by the facts"])))
STEP = st.tuples(st.sampled_from(["assume", "guard", "guard", "guard_lazy", "decide", "scoped"]), COND, REASON,
                 st.booleans())


def _build(s: Solver) -> dict[str, sympy.Symbol]:
    return {sym.name: sym for sym in (s.symbol(n, lo, hi, hint=h, source=f"x.size({i})")
                                      for i, (n, lo, hi, h) in enumerate(DECLS))}


def _step(s: Solver, table: dict[str, sympy.Symbol], op: str, text: str, reason: Reason | None,
          honest: bool) -> None:
    rel = parse_expr(text, table)
    at_example = bool(evaluate(rel, {table[k]: v for k, v in EXAMPLE.items()}))
    if op == "assume":
        s.assume(rel if at_example else sympy.Not(rel), reason)
    elif op in ("guard", "guard_lazy"):
        lazy: Any = (lambda: reason) if op == "guard_lazy" and reason is not None else reason
        s.guard(rel, at_example if honest else not at_example, lazy)
    elif op == "scoped":
        with s.assuming(rel if at_example else sympy.Not(rel), reason):
            s.decide(rel)
    else:
        s.decide(rel)


def _record(s: Solver) -> tuple[Any, ...]:
    return (s.facts, s.guards, [(i.symbol, i.lo, i.hi, i.hint, i.source) for i in s.symbols])


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, min_size=1, max_size=7), st.lists(COND, min_size=1, max_size=4),
       st.lists(EXPR, min_size=1, max_size=3))
def test_replayed_solver_answers_as_the_live_one(steps: list[tuple[str, str, Reason | None, bool]],
                                                 questions: list[str], exprs: list[str]) -> None:
    live = Solver()
    table = _build(live)
    for op, text, reason, honest in steps:
        before = _record(live)
        try:
            _step(live, table, op, text, reason, honest)
        except (ContradictionError, HintMismatchError):
            pass
        except SolverError as exc:  # only the reserved op is refused
            assert reason is not None and reason.op == DECLARED and DECLARED in str(exc), exc
            assert _record(live) == before  # a refused call records nothing
        else:
            if op in ("assume", "scoped") or (op == "guard" and reason is not None):
                assert reason is None or reason.op != DECLARED
    replayed = from_json(to_json(live))
    assert answers_from_solver(replayed) == answers_from_solver(live)
    for q in questions:
        rel = parse_expr(q, table)
        assert replayed.decide(rel) == live.decide(rel), q
    for e in exprs:
        expr = parse_expr(e, table)
        assert replayed.bounds(expr) == live.bounds(expr), e


@pytest.mark.parametrize("call", ["assume", "guard", "guard_lazy", "assuming"])
def test_reserved_op_is_refused_from_the_python_api(call: str) -> None:
    s = Solver()
    n = s.symbol("n", 0, 8, hint=4)
    reason = Reason("spec", "n >= 3", op=DECLARED)
    with pytest.raises(SolverError, match='reason.op "declared range" is reserved'):
        if call == "assume":
            s.assume(sympy.Ge(n, 3), reason)
        elif call == "guard":
            s.guard(sympy.Ge(n, 3), True, reason)
        elif call == "guard_lazy":
            s.guard(sympy.Ge(n, 3), True, lambda: reason)
        else:
            with s.assuming(sympy.Ge(n, 3), reason):
                pass
    assert len(s.facts) == 1 and not s.guards  # only the declared range
    assert from_json(to_json(s)).bounds(n) == s.bounds(n) == (0, 8)
