"""Narrowing class ranges through linear facts, and refuting a relation that way.

:func:`narrow` runs :func:`solver.kernel.propagate.implied` from one linear relation through the
residual facts that mention each class it narrows, within a budget of fact visits (stopping
early only leaves ranges wider, never wrong). Every range it narrows to is implied by the
facts and the relation, so an empty one proves them inconsistent. :func:`decide` uses that
as a stage: assume the negation of a linear question (or the question) on a trial mark of
the union-find, narrow, undo; an empty range proves the question TRUE (or FALSE). Sound by
construction; incomplete (cycles of facts may need more than bounds), so a failure proves
nothing and the caller goes on to Z3.

>>> import sympy
>>> from solver.absorb import assume
>>> from solver.state.known import State
>>> st = State(); x, y, z = (st.declare(n, 0, 100) for n in "xyz")
>>> assume(st, sympy.Le(x + y, z)); assume(st, sympy.Ge(x, 40)); assume(st, sympy.Ge(y, 50))
>>> decide(st, sympy.Ge(z, 90)), decide(st, sympy.Ge(z, 95)), st.range_lookup(z)  # ranges as loaded
(<Truth.TRUE: 'true'>, None, (0, 100))
"""

from __future__ import annotations

import sympy

from solver.kernel import propagate
from solver.kernel.interval import Interval
from solver.state.known import State
from solver.truth import Truth

__all__ = ["narrow", "decide", "Linear", "REFUTE_VISITS"]

REFUTE_VISITS = 1024  # fact visits per refutation attempt

Linear = tuple[str, dict[sympy.Symbol, int], int]  # sum(coeffs[leader] * leader) + const op 0


def narrow(st: State, lin: Linear | bool | None, source: sympy.Basic | None, visits: int) -> bool:
    """Narrow ranges through ``lin`` (the linear form of ``source``, a fact or None) and the
    residual facts it reaches, visiting at most ``visits`` relations (``lin`` included).
    False when a range comes out empty. A fact is queued once at a time; a range that does
    not narrow queues nothing. Facts are queued by index, and their linear forms over the
    class leaders are memoized by index (narrowing changes ranges, never links)."""
    uf, forms, data = st.uf, st.memo.leader_linear, st.uf.data
    queued: set[int] = set()
    todo: list[int] = []
    ranges: dict[sympy.Symbol, Interval] = {}  # the leaders' ranges read so far (only restrict changes them)

    def range_of(root: sympy.Symbol) -> Interval:
        r = ranges.get(root)
        if r is None:
            r = ranges[root] = data(root).range
        return r

    for _ in range(visits):
        if isinstance(lin, tuple) and lin[0] != "!=":
            for root, rng in propagate.implied(lin[0], lin[1], lin[2], range_of).items():
                old = range_of(root)
                if rng[0] <= old[0] and old[1] <= rng[1]:
                    continue
                if not uf.restrict(root, rng):
                    return False
                new = ranges[root] = data(root).range
                if new == old:
                    continue
                for i in st.class_facts(root):
                    if i not in queued and (source is None or st.facts[i].rel != source):
                        queued.add(i)
                        todo.append(i)
        if not todo:
            break
        i = todo.pop()
        queued.discard(i)
        lin = forms.get(i, False)
        if lin is False:
            lin = forms[i] = st.linear(st.facts[i].rel)
    return True


def _refuted(st: State, lin: Linear) -> bool:
    """Whether the facts and ``lin`` have no common solution, shown by narrowing on a trial
    that is undone. The undo does not count as forgetting (the memo is kept): the trial
    computes no memoized answer, normal or root form, only linear forms, which depend on
    the class structure alone (a trial narrows ranges and links nothing)."""
    mark = st.uf.mark()
    try:
        return not narrow(st, lin, None, REFUTE_VISITS)
    finally:
        st.uf.undo(mark, forget=False)


def decide(st: State, rel: sympy.Basic, at_hint: bool | None = None) -> Truth | None:
    """TRUE when the facts refute the negation of the linear relation ``rel``, FALSE when
    they refute ``rel``; None when neither is shown (or ``rel`` is not linear).

    ``at_hint`` is ``rel`` at a point known to satisfy every fact (None: no such point):
    ``rel`` cannot then be the opposite answer, so only the refutation that can succeed
    is tried.
    """
    lin = st.linear(rel)
    if not isinstance(lin, tuple):
        return None
    op, coeffs, const = lin
    try_true, try_false = at_hint is not False, at_hint is not True
    if op == ">=":
        if try_true and _refuted(st, (">=", {r: -a for r, a in coeffs.items()}, -const - 1)):
            return Truth.TRUE
        return Truth.FALSE if try_false and _refuted(st, lin) else None
    if op == "==":
        return Truth.FALSE if try_false and _refuted(st, lin) else None
    return Truth.TRUE if try_true and _refuted(st, ("==", coeffs, const)) else None
