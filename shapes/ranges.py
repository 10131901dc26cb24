"""A dim's range as users read it: the classic default bounds, an upper bound that is no real
limit (the classic default maximum showing through), and a range as text.

>>> range_text(2, CLASSIC_MAX), range_text(None, 4), range_text(0, None)
('[2, inf]', '[-inf, 4]', '[0, inf]')
"""

from __future__ import annotations

__all__ = ["CLASSIC_MIN", "CLASSIC_MAX", "UNBOUNDED", "open_max", "range_text"]

CLASSIC_MIN = 2
"""Default lower bound of a classic ``dynamic_dim``."""
CLASSIC_MAX = 2**63 - 2
"""Default upper bound of a classic ``dynamic_dim`` (the classic torch.export default)."""
UNBOUNDED = CLASSIC_MAX // 2
"""An upper bound this large is no real limit: it is :data:`CLASSIC_MAX` showing through
(directly, rounded down to a multiple, or what it leaves a derived dim's root)."""


def open_max(hi: int | None) -> int | None:
    """``hi`` as users see it: None (unbounded, ``inf``) for the classic default maximum.

    >>> open_max(64), open_max(2**63 - 2), open_max(2**63 - 8), open_max(None)
    (64, None, None, None)
    """
    return None if hi is None or hi >= UNBOUNDED else hi


def range_text(lo: int | None, hi: int | None) -> str:
    """``[lo, hi]`` with ``-inf``/``inf`` for open sides (None), and ``inf`` for an upper bound
    that is no real limit (:func:`open_max`).

    >>> range_text(2, 9223372036854775806), range_text(None, 4), range_text(-3, 2**62)
    ('[2, inf]', '[-inf, 4]', '[-3, inf]')
    """
    shown = open_max(hi)
    return f"[{'-inf' if lo is None else lo}, {'inf' if shown is None else shown}]"
