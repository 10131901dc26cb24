"""The solver's messages show a range as every message does (``shapes.ranges.range_text``, issue
34): an open side is ``-inf``/``inf`` and the classic default maximum is ``inf``. Two copies of
the helper here printed otherwise: a hint outside a range with no lower bound said ``[None, 5]``,
and the classic default maximum showed as ``9223372036854775806``."""

from __future__ import annotations

import pytest

from shapes import int_symbol
from shapes.ranges import CLASSIC_MAX
from solver import DECLARED, HintMismatchError, RangeFix, Solver


def test_a_hint_outside_a_range_open_below_says_minus_inf() -> None:
    with pytest.raises(HintMismatchError, match=r"example value 9 is outside its declared range \[-inf, 5\]$"):
        Solver().symbol("n", None, 5, hint=9)


def test_a_hint_below_the_classic_default_range_says_inf() -> None:
    with pytest.raises(HintMismatchError, match=r"outside its declared range \[2, inf\]$"):
        Solver().symbol("x_0", 2, CLASSIC_MAX, hint=1)


@pytest.mark.parametrize(("lo", "hi", "text"), [
    (2, CLASSIC_MAX, "x.size(0) in [2, inf]"), (None, 7, "x.size(0) in [-inf, 7]"), (0, 64, "x.size(0) in [0, 64]"),
])
def test_a_declared_range_reads_as_range_text(lo: int | None, hi: int | None, text: str) -> None:
    s = Solver()
    s.symbol("x_0", lo, hi, hint=4, source="x.size(0)")
    assert [f.reason.text for f in s.facts if f.reason.op == DECLARED] == [text]


def test_a_range_fix_reads_as_range_text() -> None:
    x = int_symbol("x_1")
    assert RangeFix(x, 6, CLASSIC_MAX).describe() == "x_1 in [6, inf]"
    assert RangeFix(x, None, 9).describe() == "x_1 in [-inf, 9]"
    assert RangeFix(x, 6, None).describe() == "x_1 in [6, inf]"
