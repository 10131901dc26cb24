"""``export.tracing.neutral``: which relations, answered how, say that a size is not 0 or 1.

Pure sympy. :func:`zero_one_question` on a relation between a size ``e`` and a constant is
checked against brute force: the integers the answered relation admits must be exactly the
integers but 0, but 1, or those >= 2 (``e != 0``, ``e != 1``, ``e > 1`` / ``e >= 2``).
"""

from __future__ import annotations

import itertools

import pytest
import sympy

from export.tracing.neutral import NEUTRAL_APIS, QUESTION_TYPES, unnormalized, zero_one_question

n = sympy.Symbol("n", integer=True)
b = sympy.Symbol("b", integer=True)
e = sympy.floor(n / 4)  # a derived size, as torch asks about it
OPS = (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)
WINDOW = range(-4, 9)
NOT_ZERO_ONE = (frozenset(v for v in WINDOW if v != 0), frozenset(v for v in WINDOW if v != 1),
                frozenset(v for v in WINDOW if v >= 2))
"""What ``e != 0``, ``e != 1`` and ``e >= 2`` admit in the window: the sets a 0/1 question says."""


def _admitted(op: type, c: int, flip: bool, answer: bool) -> frozenset[int]:
    rel = (lambda v: op(sympy.Integer(c), v)) if flip else (lambda v: op(v, sympy.Integer(c)))
    return frozenset(v for v in WINDOW if bool(rel(sympy.Integer(v))) is answer)


@pytest.mark.parametrize("op, c, flip, answer",
                         list(itertools.product(OPS, range(-1, 4), (False, True), (False, True))))
def test_a_comparison_with_a_constant_against_brute_force(op: type, c: int, flip: bool, answer: bool) -> None:
    rel = op(sympy.Integer(c), n, evaluate=False) if flip else op(n, sympy.Integer(c), evaluate=False)
    assert zero_one_question(rel, answer) is (_admitted(op, c, flip, answer) in NOT_ZERO_ONE)


@pytest.mark.parametrize("rel, answer, expected", [
    (sympy.Eq(e, 1), False, True),  # e != 1
    (sympy.Eq(e, 0), False, True),  # e != 0
    (sympy.Eq(e, 2), False, False),  # e != 2: not about 0/1
    (sympy.Ne(e, 1), False, False),  # e == 1: a size *is* 1
    (sympy.Lt(1, e), True, True),
    (sympy.Lt(e, 2), False, True),  # e >= 2
    (sympy.Lt(e, 3), False, False),
    (sympy.Ge(e, 2), True, True),
    (sympy.Eq(sympy.Integer(1), sympy.Integer(1)), True, False),  # no size in it
    (sympy.And(sympy.Eq(e, 1), sympy.Eq(e + 1, 1)), False, True),  # torch's sym_and of two such questions
    (sympy.Or(sympy.Eq(e, 1), sympy.Eq(e, 5)), False, False),  # one part is not
    (sympy.Eq(b * e, b), False, True),  # a common size factor cancels: e == 1
    (sympy.Eq(b * e, b + 1), False, False),
    (sympy.Eq(b, b * e), False, True),  # either side
    (n, True, False),  # not a relation
])
def test_table(rel: sympy.Basic, answer: bool, expected: bool) -> None:
    assert zero_one_question(rel, answer) is expected


@pytest.mark.parametrize("rel, expected", [
    (sympy.Ne(b - 1, 0), sympy.Ne(b, 1, evaluate=False)),
    (sympy.Ge(b - 2, 0), sympy.Ge(b, 2, evaluate=False)),
    (sympy.Eq(b + 3, 0), sympy.Eq(b, -3, evaluate=False)),
    (sympy.Lt(b - 2, 0), sympy.Lt(b - 2, 0)),  # only Eq, Ne, Ge are the solver's normal form
    (sympy.Ge(b, 3), sympy.Ge(b, 3)),  # rhs not 0: left alone
])
def test_unnormalized(rel: sympy.Basic, expected: sympy.Basic) -> None:
    out = unnormalized(rel)
    assert out == expected and str(out) == str(expected)


def test_unnormalized_makes_the_solver_form_a_zero_one_question() -> None:
    assert not zero_one_question(sympy.Ge(b - 2, 0), True)  # reads (b - 2) >= 0
    assert zero_one_question(unnormalized(sympy.Ge(b - 2, 0)), True)  # b >= 2


def test_the_neutral_apis_and_their_fallbacks() -> None:
    assert NEUTRAL_APIS == {"guard_bool": None, "guard_or_false": False, "guard_or_true": True}
    assert set(QUESTION_TYPES) == {*OPS, sympy.And, sympy.Or}
