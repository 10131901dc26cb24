"""The feasible point: one value per symbol satisfying every fact, kept by local repair.

:class:`solver.state.known.State` keeps a point (``State.hints``): the user's example values where
given, a value of the declared range elsewhere. While ``State.hints_ok`` holds, every fact
holds there, so a new fact that holds at the point is consistent without any search, and the
point is a witness for the decision stages. When a new fact fails at the point,
:func:`repair` looks for a nearby point that satisfies it and every other fact: it moves one
class at a time (its leader and every member through their affine links, to a value that
fits the class data: range, congruence, holes) to the nearest value that makes a broken fact
hold, then re-checks every fact that mentions the moved class. Facts that mention no moved
class keep holding, so when no checked fact is broken the new point satisfies every fact.
The walk is bounded (:data:`MAX_MOVES`); when it fails the caller drops the point
(``hints_ok`` False), which is sound: the point is a shortcut, never an answer by itself.
:func:`recover` takes a dropped point back from a Z3 model of every fact, once checked.

>>> import sympy
>>> from solver.state.known import State
>>> st = State(); x = st.declare("x", 0, 100); y = st.declare("y", 0, 100)
>>> st.hints                       # no example values: each symbol starts at its range's low end
{x: 0, y: 0}
>>> st.record_fact(sympy.Le(x + 3, y), Reason("spec", "x + 3 <= y"), False, False)
>>> sorted(repair(st, sympy.Ge(x, 10)).items(), key=str)   # x to 10, then y follows
[(x, 10), (y, 13)]
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterator, Mapping

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import evaluate
from solver.kernel import congruence as cg
from solver.state.known import State
from solver.truth import Reason  # noqa: F401 - used by the doctest
from solver.kernel.union_find import ClassData

__all__ = ["repair", "recover", "MAX_MOVES", "MAX_TURNS", "MAX_RECOVER_FACTS"]

MAX_MOVES = 256  # class moves per repair
MAX_TURNS = 4  # moves of one class per repair (a walk that keeps moving a class is cycling)
MAX_RECOVER_FACTS = 4_000  # facts checked at most when a point is taken from a Z3 model
_NEAR = (1, -1, 2, -2, 4, -4, 16, -16, 256, -256)  # offsets tried for a nonlinear broken fact

Env = Mapping[sympy.Symbol, int]
_REL = -1  # the new relation's place in a repair's queue


def repair(st: State, rel: sympy.Basic, moves: int = MAX_MOVES) -> dict[sympy.Symbol, int] | None:
    """The changed values of a point (from ``st.hints``, which must satisfy every fact)
    where ``rel`` and every fact hold, or None when the walk fails (or needs more than
    ``moves`` class moves). Nothing is mutated."""
    change: dict[sympy.Symbol, int] = {}
    env: Env = ChainMap(change, st.hints)
    turns: dict[sympy.Symbol, int] = {}
    todo: list[int] = [_REL]  # fact indices to check (_REL: ``rel`` itself)
    queued: set[int] = {_REL}
    rel_leaders = {st.uf.find(x)[0] for x in rel.free_symbols}
    try:
        for _ in range(moves + 1):
            broken = _next_broken(st, rel, todo, queued, env)
            if broken is None:
                return change
            move = _fix(st, broken, env, turns)
            if move is None:
                return None
            leader, v = move
            turns[leader] = turns.get(leader, 0) + 1
            _queue(todo, queued, _REL) if leader in rel_leaders else None
            for m, a, b in st.class_members(leader):
                change[m] = a * v + b
                for i in st.mentions.get(m, ()):
                    _queue(todo, queued, i)
    except (UnsupportedExpressionError, ZeroDivisionError, TypeError):
        return None
    return None


def _queue(todo: list[int], queued: set[int], i: int) -> None:
    if i not in queued:
        queued.add(i)
        todo.append(i)


def _next_broken(st: State, rel: sympy.Basic, todo: list[int], queued: set[int], env: Env) -> sympy.Basic | None:
    """Pop facts off ``todo`` until one fails at ``env`` (its broken part is returned; the
    fact stays queued, to be checked again once fixed), or None when all hold."""
    while todo:
        i = todo[-1]
        f = rel if i == _REL else st.facts[i].rel
        if not _holds(f, env):
            return _part(f, env)
        todo.pop()
        queued.discard(i)
    return None


def _holds(f: sympy.Basic, env: Env) -> bool:
    return bool(evaluate(f, env))


def _part(f: sympy.Basic, env: Env) -> sympy.Basic:
    """A broken conjunct of a broken ``And`` (the fact itself otherwise)."""
    if isinstance(f, sympy.And):
        return next(_part(a, env) for a in f.args if not _holds(a, env))
    return f


def _fix(st: State, broken: sympy.Basic, env: Env, turns: dict[sympy.Symbol, int]) -> tuple[sympy.Symbol, int] | None:
    """A class leader of ``broken`` and a value for it that makes ``broken`` hold (the rest
    staying put) and fits the class data: classes moved less first, then moves that fix the
    fact before moves that only bring it closer (:func:`_toward`), then the smallest move."""
    best: tuple[int, bool, int, sympy.Symbol, int] | None = None
    for leader, v, fixes in _options(st, broken, env):
        t = turns.get(leader, 0)
        if t >= MAX_TURNS:
            continue
        key = (t, not fixes, abs(v - env[leader]))
        if best is None or key < best[:3]:
            best = (*key, leader, v)
    return None if best is None else (best[3], best[4])


def _options(st: State, broken: sympy.Basic, env: Env) -> Iterator[tuple[sympy.Symbol, int, bool]]:
    """Moves ``(leader, value, fixes)`` for a broken fact; ``fixes``: the fact holds after it."""
    lin = st.linear(broken)
    if isinstance(lin, tuple):
        yield from _linear_options(st, lin, env)
        return
    if lin is not None:  # a constant relation: False here (it is broken), no move helps
        return
    leaders = sorted({st.uf.find(x)[0] for x in broken.free_symbols}, key=st.order)
    for leader in leaders:
        data = st.uf.data(leader)
        members = st.class_members(leader)
        for v in _near_values(data, env[leader]):
            moved = ChainMap({m: a * v + b for m, a, b in members}, env)  # type: ignore[arg-type]
            if _holds(broken, moved):
                yield leader, v, True
                break


def _linear_options(st: State, lin: tuple[str, dict[sympy.Symbol, int], int],
                    env: Env) -> Iterator[tuple[sympy.Symbol, int, bool]]:
    """For ``sum(a_r * r) + const op 0``: each leader's nearest fitting value that makes it
    hold, or when that value does not fit the class data, the fitting value nearest to it
    on the way there (the fact then needs another class to move too: ``x == y + 3`` with
    ``x`` in [57, 79] at 61 and ``y`` in [72, 101] at 78 moves ``y`` to 72, the nearer
    of the two partial moves, then ``x`` to 75)."""
    op, coeffs, const = lin
    total = const + sum(a * env[r] for r, a in coeffs.items())
    for r, a in coeffs.items():
        data = st.uf.data(r)
        rest = total - a * env[r]  # a*r + rest op 0
        if op == "!=":
            for v in _near_values(data, env[r]):
                if a * v + rest != 0:
                    yield r, v, True
                    break
            continue
        if op == "==":
            if rest % a:
                continue
            v = -rest // a
            if cg.align_up(v, data.cong) != v:
                continue
        elif a > 0:
            v = cg.align_up(-(rest // a), data.cong)  # r >= ceil(-rest/a)
        else:
            v = cg.align_down(rest // -a, data.cong)  # r <= floor(rest/-a)
        if _fits(data, v):
            yield r, v, True
            continue
        w = _toward(data, env[r], v)
        if w is not None:
            yield r, w, False


def _toward(data: ClassData, h: int, v: int) -> int | None:
    """The value fitting the class data nearest ``v`` strictly between ``h`` and ``v`` (``v``
    itself does not fit), when the range end or congruence is what stops it; else None.

    >>> _toward(ClassData((57, 79)), 61, 81), _toward(ClassData((57, 79)), 79, 81)
    (79, None)
    """
    lo, hi = data.range
    w = cg.align_down(int(min(v, hi)), data.cong) if v > h else cg.align_up(int(max(v, lo)), data.cong)
    return w if min(h, v) < w < max(h, v) and _fits(data, w) else None


def _fits(data: ClassData, v: int) -> bool:
    lo, hi = data.range
    return lo <= v <= hi and v not in data.excluded and (v - data.cong[1]) % data.cong[0] == 0


def _near_values(data: ClassData, h: int) -> Iterator[int]:
    """Fitting values near ``h``, then the range ends."""
    lo, hi = data.range
    raw = [h + d for d in _NEAR] + [v for v in (lo, hi) if not isinstance(v, float)]
    for v in raw:
        for w in (cg.align_up(int(v), data.cong), cg.align_down(int(v), data.cong)):
            if w != h and _fits(data, w):
                yield w


def recover(st: State) -> bool:
    """Take the point from the newest Z3 witness (a model of every fact, kept by
    :class:`solver.kernel.smt.Smt`) once every fact is checked to hold there; whether the point
    holds now. Nothing is asked of Z3: a problem without a witness keeps its dropped point."""
    if st.hints_ok:
        return True
    if len(st.facts) > MAX_RECOVER_FACTS:
        return False
    values = st.smt.witness_values(st.symbols)
    try:
        if values is None or not all(_holds(f.rel, values) for f in st.facts):
            return False
    except (UnsupportedExpressionError, ZeroDivisionError, TypeError):
        return False
    st.move({sym: v for sym, v in values.items() if st.hints[sym] != v})
    st.hints_ok = True
    return True
