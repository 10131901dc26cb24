"""Witnesses without Z3: feasible points next to the example point.

When every fact holds at the example point (the hints), that point is one witness. Moving
one class (its leader, and every member with it through their affine links) to another
value keeps every fact that does not mention the class true; if the new value fits the class
data (range, congruence, holes) and the facts that mention the class still hold, the moved
point is feasible too. Two feasible points on which a relation differs prove it UNKNOWN:
sound, never a guess. Finding none proves nothing (the caller asks Z3).

>>> import sympy
>>> from shapes import int_symbol
>>> from solver.kernel.union_find import ClassData
>>> x, y = int_symbol("x"), int_symbol("y")
>>> facts = {x: [sympy.Le(x, y)], y: [sympy.Le(x, y)]}
>>> cls = {x: Klass(x, ((x, 1, 0),), ClassData((1, 100))), y: Klass(y, ((y, 1, 0),), ClassData((1, 100)))}
>>> other_point(sympy.Ge(x, 5), {x: 7, y: 9}, [cls[x]], lambda r: facts[r])
{x: 1}
>>> other_point(sympy.Ge(y, x), {x: 7, y: 9}, [cls[x], cls[y]], lambda r: facts[r]) is None
True
"""

from __future__ import annotations

from collections import ChainMap, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import evaluate
from solver.kernel import congruence as cg
from solver.kernel.interval import Endpoint
from solver.kernel.union_find import ClassData

__all__ = ["Klass", "other_point", "repaired_point", "MAX_MOVES", "MAX_REPAIRS"]

MAX_MOVES = 12  # candidate values tried per class
MAX_REPAIRS = 48  # classes a repair walk may move after the first
MAX_STARTS = 4  # first moves a repair walk starts from, per class of the relation

Linear = tuple[str, dict[sympy.Symbol, int], int]  # sum(coeffs[leader] * leader) + const op 0


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


def repaired_point(rel: sympy.Basic, point: Mapping[sympy.Symbol, int], classes: Sequence[Klass],
                   klass_of: Callable[[sympy.Symbol], Klass],
                   facts_of: Callable[[sympy.Symbol], Iterable[sympy.Basic]],
                   linear_of: Callable[[sympy.Basic], Linear | bool | None]) -> dict[sympy.Symbol, int] | None:
    """Like :func:`other_point`, but the first move may break facts: each broken linear fact
    is then repaired by moving one more class (never one of ``rel``'s, never one moved
    before) to the nearest value that satisfies it and fits its class data. Returns the moved
    values of a point where every fact that mentions a moved class holds and ``rel``
    differs from ``point``, or None. ``classes`` are ``rel``'s classes; ``klass_of(leader)``
    describes any class; ``linear_of(fact)`` is a fact's linear form over class leaders.

    >>> from solver.kernel.union_find import ClassData
    >>> x, y = sympy.Symbol("x", integer=True), sympy.Symbol("y", integer=True)
    >>> facts = [sympy.Le(x, y)]
    >>> k = {v: Klass(v, ((v, 1, 0),), ClassData((1, 100))) for v in (x, y)}
    >>> lin = {facts[0]: (">=", {y: 1, x: -1}, 0)}
    >>> repaired_point(sympy.Ge(x, 20), {x: 7, y: 9}, [k[x]], k.__getitem__, lambda r: facts, lin.get)
    {x: 20, y: 20}
    """
    try:
        here = bool(evaluate(rel, point))
        pinned = frozenset(k.leader for k in classes)
        for k in classes:
            starts = 0
            h = point[k.leader]
            for v in sorted(_candidates(k, point, rel), key=lambda w: abs(w - h)):  # small moves first
                change = {m: a * v + b for m, a, b in k.members}
                if bool(evaluate(rel, ChainMap(change, point))) == here:  # type: ignore[arg-type]
                    continue
                found = _repair({k.leader: k}, change, pinned, point, klass_of, facts_of, linear_of)
                if found is not None and bool(evaluate(rel, ChainMap(found, point))) != here:  # type: ignore[arg-type]
                    return found
                starts += 1
                if starts >= MAX_STARTS:
                    break
    except (UnsupportedExpressionError, ZeroDivisionError, TypeError):
        return None
    return None


def _repair(moved: dict[sympy.Symbol, Klass], change: dict[sympy.Symbol, int], pinned: frozenset[sympy.Symbol],
            point: Mapping[sympy.Symbol, int], klass_of: Callable[[sympy.Symbol], Klass],
            facts_of: Callable[[sympy.Symbol], Iterable[sympy.Basic]],
            linear_of: Callable[[sympy.Basic], Linear | bool | None]) -> dict[sympy.Symbol, int] | None:
    """Move classes until no fact of a moved class is broken (see :func:`repaired_point`).

    Each class moves once, and every fact is checked after the last move of a class it
    mentions: the facts of each moved class are queued when it moves, and a fact that holds
    is dropped from the queue (a later move that touches it queues it again)."""
    env = ChainMap(change, point)  # type: ignore[arg-type]
    queue = deque(f for leader in moved for f in facts_of(leader))
    for _ in range(MAX_REPAIRS + 1):
        broken = None
        while queue:
            f = queue.popleft()
            if not evaluate(f, env):
                broken = f
                break
        if broken is None:
            return change
        lin = linear_of(broken)
        if not isinstance(lin, tuple) or lin[0] == "!=":
            return None
        fixed = _fix(lin, env, set(moved) | pinned, klass_of)
        if fixed is None:
            return None
        k, v = fixed
        moved[k.leader] = k
        change.update({m: a * v + b for m, a, b in k.members})
        queue.extend(facts_of(k.leader))
    return None


def _fix(lin: Linear, env: Mapping[sympy.Symbol, int], frozen: set[sympy.Symbol],
         klass_of: Callable[[sympy.Symbol], Klass]) -> tuple[Klass, int] | None:
    """A class of the broken fact ``lin`` not in ``frozen`` and a value of its leader that
    satisfies the fact (the others staying put) and fits the class data; the smallest move."""
    op, coeffs, const = lin
    total = const + sum(a * env[r] for r, a in coeffs.items())
    best: tuple[int, Klass, int] | None = None
    for r, a in coeffs.items():
        if r in frozen:
            continue
        k = klass_of(r)
        rest = total - a * env[r]  # a*r + rest op 0
        if op == "==":
            if rest % a:
                continue
            v = -rest // a
            ok = cg.align_up(v, k.data.cong) == v
        elif a > 0:
            v, ok = cg.align_up(-(rest // a), k.data.cong), True  # r >= ceil(-rest/a)
        else:
            v, ok = cg.align_down(rest // -a, k.data.cong), True  # r <= floor(rest/-a)
        lo, hi = k.data.range
        if ok and lo <= v <= hi and v not in k.data.excluded and (best is None or abs(v - env[r]) < best[0]):
            best = (abs(v - env[r]), k, v)
    return None if best is None else (best[1], best[2])


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
