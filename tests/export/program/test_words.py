"""Guards in words (``export.program.words.guard_words``): a table of the window arithmetic a
shifted-window model asks (torchvision ``swin_t``), read as the range or divisibility it is."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sympy

from export.program.words import guard_words
from shapes.expr import FloorDiv
from solver import Reason, Solver


def _solver() -> tuple[Solver, sympy.Symbol]:
    s = Solver()
    return s, s.symbol("w", 32, 512)


def _quarter(w: sympy.Expr) -> sympy.Expr:
    return FloorDiv(w, 4)


CASES = [
    # a stage's window branch: one dim through its floor divisions, said as the range it is
    ("stage range", lambda w: sympy.Ge(FloorDiv(FloorDiv(_quarter(w) + 1, 2) + 6, 7), 2), "x.size(3) must be >= 60"),
    # the example needs no padding (the unpadding slice is whole): a divisibility
    ("no padding", lambda w: sympy.Eq(7 * sympy.Max(1, FloorDiv(_quarter(w) + 6, 7)), _quarter(w)),
     "x.size(3) // 4 must be divisible by 7"),
    ("padding needed", lambda w: sympy.Ne(7 * FloorDiv(_quarter(w) + 6, 7), _quarter(w)),
     "x.size(3) // 4 must not be divisible by 7"),
    ("rounded down", lambda w: sympy.Eq(5 * FloorDiv(w, 5), w), "x.size(3) must be divisible by 5"),
]


@pytest.mark.parametrize(("make", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_window_guards_read_as_ranges_and_divisibility(make: Callable[[sympy.Expr], sympy.Basic], words: str) -> None:
    s, w = _solver()
    assert guard_words(s, make(w), {w: "x.size(3)"}) == words


def test_a_rounding_that_is_not_to_itself_stays_code() -> None:
    s, w = _solver()
    text = guard_words(s, sympy.Eq(7 * FloorDiv(_quarter(w) + 6, 7), _quarter(w) + 1), {w: "x.size(3)"})
    assert "divisible" not in text


def test_a_guard_the_solver_holds_is_still_said_as_its_range() -> None:
    # The trace's solver holds every guard it asked as a fact, so the guard simplifies to True
    # there; torch's 0/1 rule on ``x[:, 5:]`` must still read as the range it is (a9451b7 printed
    # it as code once Min/Max comparisons split into their arguments).
    s = Solver()
    n = s.symbol("n", 1, None)
    rel = sympy.Eq(sympy.Max(1, n - 5), n - 5)
    s.assume(rel, Reason("guard", "x[:, 5:]", None, None))
    assert guard_words(s, rel, {n: "x.size(1)"}) == "x.size(1) must be >= 6"
