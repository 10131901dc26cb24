"""Tests for shapes.ranges: a range as text, one definition for every message (issue 34)."""

from __future__ import annotations

import pytest

from shapes.ranges import CLASSIC_MAX, UNBOUNDED, open_max, range_text


@pytest.mark.parametrize(("lo", "hi", "text"), [
    (2, 64, "[2, 64]"), (2, None, "[2, inf]"), (2, 2**63 - 2, "[2, inf]"), (8, 2**63 - 8, "[8, inf]"),
    (None, 4, "[-inf, 4]"), (0, 2**40, f"[0, {2**40}]"), (None, None, "[-inf, inf]"), (-3, -1, "[-3, -1]"),
    (0, UNBOUNDED - 1, f"[0, {UNBOUNDED - 1}]"), (0, UNBOUNDED, "[0, inf]"),
])
def test_range_text(lo: int | None, hi: int | None, text: str) -> None:
    assert range_text(lo, hi) == text
    assert (open_max(hi) is None) == text.endswith("inf]")


def test_unbounded_is_the_classic_default_showing_through() -> None:
    assert UNBOUNDED == CLASSIC_MAX // 2 and open_max(CLASSIC_MAX) is None and open_max(UNBOUNDED - 1) == UNBOUNDED - 1
