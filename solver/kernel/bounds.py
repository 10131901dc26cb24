"""Bounds of an expression in bounded work: intervals first, then bisection with ``check``.

No unbounded optimizer runs here. :func:`minimum` narrows a *proved* lower bound (from
intervals, or from an unsatisfiable probe) towards a *witnessed* value (from a model) by
bisection; every probe asks "is there a model with ``expr <= t``?" and may answer
``unknown`` when its budget ends. The proved bound is returned then: sound, possibly loose.
When the search completes the two meet and the bound is exact.

>>> values = [7, 9, 12, 40]                 # the values expr takes under the facts
>>> def probe(t):
...     hits = [v for v in values if t is None or v <= t]
...     return ("sat", min(hits)) if hits else ("unsat", None)
>>> minimum(probe, 0)                      # (bound, exact)
(7, True)
>>> minimum(probe, -math.inf)
(7, True)
>>> minimum(lambda t: ("sat", -2**70 if t is not None else 5), -math.inf)  # no bound below
(-inf, False)
>>> minimum(probe, 7, first_at_bound=True)  # one probe at the proved bound closes it
(7, True)
>>> def tired(t):                           # a probe out of budget after the first model
...     return probe(t) if t is None else ("unknown", None)
>>> minimum(tired, 0)
(0, False)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from solver.kernel.interval import Endpoint

__all__ = ["Probe", "minimum", "MAX_PROBES"]

Probe = Callable[[int | None], tuple[str, int | None]]
"""``probe(t)``: ``('sat', v)`` with ``v <= t`` the value of a model, ``('unsat', None)`` when
no model has ``expr <= t``, ``('unknown', None)`` out of budget; ``t = None`` asks for any model."""

MAX_PROBES = 256  # more than enough to close a 64-bit gap twice over
_FAR = 2**66
_UNBOUNDED = 2**62
"""An ``-inf`` side first asks for a model this far below the witness: one 'sat' leaves the
side unbounded (no size gets near it), where galloping there took ~64 probes."""


def minimum(probe: Probe, lo: Endpoint, max_probes: int = MAX_PROBES, *,
            first_at_bound: bool = False, candidates: Iterable[int] = ()) -> tuple[Endpoint, bool]:
    """A sound lower bound of the minimum and whether it is exact: ``lo`` (a proved lower
    bound, maybe ``-inf``) raised as far as the probes prove; the minimum itself (and True)
    when the search completes. ``first_at_bound``: probe ``lo`` itself first (when the
    proved bound is likely the minimum), then bisect. ``candidates``: values the minimum is
    likely to be (the constants of the facts, one either side), bisected first: a bound
    such as ``-8001`` next to a ``<= 8000`` fact is found in a few probes, not ~25.

    >>> values = [-8001, -3, 5]
    >>> calls = []
    >>> def counted(t):
    ...     calls.append(t)
    ...     hits = [v for v in values if t is None or v <= t]
    ...     return ("sat", max(hits)) if hits else ("unsat", None)
    >>> minimum(counted, -math.inf, candidates=[-8002, -8001, -8000]), len(calls)
    ((-8001, True), 3)
    """
    status, best = probe(None)
    if status != "sat" or best is None:
        return lo, False  # no model (contradictory facts) or out of budget: the proved bound stands
    spent = 1
    ordered = sorted(c for c in set(candidates) if c < best and (isinstance(lo, float) or c >= lo))
    while ordered and spent < max_probes:
        t = ordered[len(ordered) // 2]
        status, value = probe(t)
        spent += 1
        if status == "unsat":
            lo = t + 1
            ordered = [c for c in ordered if c > t]
        elif status == "sat" and value is not None and value <= t:
            best = value
            ordered = [c for c in ordered if c < value]
        else:
            return lo, False
    if not isinstance(lo, float) and lo >= best:
        return best, True
    if first_at_bound and not isinstance(lo, float) and lo < best:
        status, value = probe(int(lo))
        if status == "sat" and value is not None and value <= lo:
            return value, True
        if status == "unsat":
            lo = int(lo) + 1
        elif status != "sat":
            return lo, False
    step = 1
    if isinstance(lo, float):  # -inf: is there a model far below the witness? then no bound
        status, value = probe(best - _UNBOUNDED)
        if status == "sat" and value is not None:
            return lo, False
        if status != "unsat":
            return lo, False
        # else: bounded below, somewhere within _UNBOUNDED of the witness: gallop there
    for _ in range(max_probes):
        if lo >= best:
            return best, True
        if isinstance(lo, float):  # -inf: gallop downwards from the witness
            if step > _FAR:
                return lo, False  # far beyond any size: leave the side unbounded
            t = best - step
            step *= 2
        else:
            t = int(lo) + (best - int(lo)) // 2  # lo <= t < best
        status, value = probe(t)
        if status == "unsat":
            lo = t + 1
        elif status == "sat" and value is not None and value <= t:
            best = value
        else:
            return lo, False
    return lo, False
