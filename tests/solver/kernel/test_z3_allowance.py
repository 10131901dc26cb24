"""The Z3 allowance of one export (``Deadline.query_seconds`` / ``z3_seconds``) and cheap
decisions: what the limits cut off is UNKNOWN, never a guess, and a cheap UNKNOWN is not
remembered (a full decision later still settles it)."""

from __future__ import annotations

import pytest
import sympy

from shapes import int_symbol
from solver import Deadline, Solver, Truth

X, Y = int_symbol("x"), int_symbol("y")
ONLY_Z3 = sympy.Ne(X * Y, 7)  # x, y >= 2: x*y is never the prime 7; no interval says so


def _solver(deadline: Deadline | None = None) -> Solver:
    s = Solver(deadline=deadline)
    s.symbol("x", 2, None, hint=4)
    s.symbol("y", 2, None, hint=4)
    return s


def test_cheap_leaves_a_z3_question_open_and_remembers_nothing() -> None:
    s = _solver()
    assert s.decide(ONLY_Z3, cheap=True) is Truth.UNKNOWN
    assert s.decide(ONLY_Z3) is Truth.TRUE
    assert s.decide(ONLY_Z3, cheap=True) is Truth.TRUE  # a settled answer is remembered
    assert s.stats["skipped"] == 1 and s.stats["z3"] == 1


@pytest.mark.parametrize("deadline", [
    Deadline(z3_seconds=0.0),
    Deadline(query_seconds=0.0),
], ids=["total spent", "no time per query"])
def test_no_z3_time_left_answers_unknown(deadline: Deadline) -> None:
    s = _solver(deadline)
    assert s.decide(ONLY_Z3) is Truth.UNKNOWN
    assert s.decide(sympy.Ge(X * Y, 4)) is Truth.TRUE  # the cheaper stages still answer


def test_replicas_charge_the_same_allowance() -> None:
    d = Deadline(query_seconds=5.0, z3_seconds=60.0)
    s = _solver(d)
    assert s.decide(ONLY_Z3) is Truth.TRUE
    spent = d.used
    assert spent > 0
    r = s.replica(kinds=("spec",))
    assert r.decide(sympy.Ne(X * Y, 11)) is Truth.TRUE
    assert d.used > spent

