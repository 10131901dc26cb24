"""Witnesses without Z3: feasible points next to the example point.

When every fact holds at the example point (the hints), that point is one witness. Moving
one class (its leader, and every member with it through their affine links) to another
value keeps every fact that does not mention the class true; if the new value fits the class
data (range, congruence, holes) and the facts that mention the class still hold, the moved
point is feasible too. Two feasible points on which a relation differs prove it UNKNOWN:
sound, never a guess. Finding none proves nothing (the caller asks Z3).

>>> import sympy
>>> from shapes import int_symbol
>>> from solver.union_find import ClassData
>>> x, y = int_symbol("x"), int_symbol("y")
>>> facts = {x: [sympy.Le(x, y)], y: [sympy.Le(x, y)]}
>>> cls = {x: Klass(x, ((x, 1, 0),), ClassData((1, 100))), y: Klass(y, ((y, 1, 0),), ClassData((1, 100)))}
>>> other_point(sympy.Ge(x, 5), {x: 7, y: 9}, [cls[x]], lambda r: facts[r])
{x: 1}
>>> other_point(sympy.Ge(y, x), {x: 7, y: 9}, [cls[x], cls[y]], lambda r: facts[r]) is None
True
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import evaluate
from solver import congruence as cg
from solver.interval import Endpoint
from solver.union_find import ClassData

__all__ = ["Klass", "other_point", "MAX_MOVES"]

MAX_MOVES = 12  # candidate values tried per class


@dataclass(frozen=True, slots=True)
class Klass:
    """A class to move: its leader, ``(member, coef, offset)`` with member == coef*leader + offset."""

    leader: sympy.Symbol
    members: tuple[tuple[sympy.Symbol, int, int], ...]
    data: ClassData


def other_point(rel: sympy.Basic, point: Mapping[sympy.Symbol, int], classes: Sequence[Klass],
                facts_of: Callable[[sympy.Symbol], Iterable[sympy.Basic]]) -> dict[sympy.Symbol, int] | None:
    """A feasible point (``point`` with one class moved: the moved values are returned) where
    ``rel`` differs from its value at ``point``, or None. ``point`` must satisfy every fact; ``facts_of(leader)`` yields the
    facts (outside the class data) that mention the class."""
    try:
        here = bool(evaluate(rel, point))
        for k in classes:
            for v in _candidates(k, point, rel):
                change = {m: a * v + b for m, a, b in k.members}
                moved = ChainMap(change, point)  # type: ignore[arg-type]
                if bool(evaluate(rel, moved)) != here and all(evaluate(f, moved) for f in facts_of(k.leader)):
                    return change
    except (UnsupportedExpressionError, ZeroDivisionError, TypeError):
        return None
    return None


def _candidates(k: Klass, point: Mapping[sympy.Symbol, int], rel: sympy.Basic) -> Iterator[int]:
    """Values of the leader worth trying: range ends, near the example, near where ``rel``
    flips; each aligned to the class data, the example's own value excluded."""
    lo, hi = k.data.range
    h = point[k.leader]
    raw: list[Endpoint] = [lo, hi, h - 1, h + 1, h - 2, h + 2]
    raw += list(_flips(rel, k, point))
    seen = {h}
    for v in raw[: 3 * MAX_MOVES]:
        if isinstance(v, float):
            continue
        for w in (cg.align_up(int(v), k.data.cong), cg.align_down(int(v), k.data.cong)):
            if w not in seen and lo <= w <= hi and w not in k.data.excluded:
                seen.add(w)
                yield w
        if len(seen) > MAX_MOVES:
            return


def _flips(rel: sympy.Basic, k: Klass, point: Mapping[sympy.Symbol, int]) -> Iterator[int]:
    """Leader values around where a linear side difference of ``rel`` crosses zero."""
    if not isinstance(rel, (sympy.Eq, sympy.Ne, sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt)):
        return
    d = rel.lhs - rel.rhs
    h = point[k.leader]
    try:
        base = evaluate(d, point)
        slope = evaluate(d, ChainMap({m: a * (h + 1) + b for m, a, b in k.members}, point)) - base  # type: ignore[arg-type]
    except (UnsupportedExpressionError, ZeroDivisionError, TypeError):
        return
    if slope:
        cross = h - base // slope  # d(h + t) ~ base + slope*t is zero near t = -base/slope
        yield from (cross - 1, cross, cross + 1)
