"""Scopes undo rather than copy: a :class:`Mark` of a solver's state, and :func:`undo` back
to it (the union-find's trail, the facts, residual mentions, guards and symbols added since,
and the Z3 mirror's frame). The memo sees the undo through the ``forgets`` counter.

>>> import sympy
>>> from solver.absorb import assume
>>> from solver.state.known import State
>>> st = State(); n = st.declare("n", 0, 10)
>>> mark = enter(st)
>>> assume(st, sympy.Ge(n, 5)); st.declare("m", 0, 3)
m
>>> undo(st, mark)
>>> len(st.facts), list(st.by_name), st.range_lookup(n)
(1, ['n'], (0, 10))
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.state.known import State

__all__ = ["Mark", "enter", "undo"]


@dataclass(frozen=True, slots=True)
class Mark:
    """The sizes of a state's append-only parts when a scope began."""

    uf: int
    facts: int
    residual: int
    guards: int
    hints_ok: bool
    symbols: int
    moves: int


def enter(st: State) -> Mark:
    """Begin a scope: mark the state and push a Z3 frame."""
    mark = Mark(st.uf.mark(), len(st.facts), len(st.residual), len(st.guards), st.hints_ok, len(st.symbols),
                len(st.moves))
    st.smt.push()
    return mark


def undo(st: State, mark: Mark) -> None:
    """End the scope begun by ``mark``: every change since is undone."""
    st.uf.undo(mark.uf)
    for i in st.residual[mark.residual:]:
        for sym in st.facts[i].rel.free_symbols:
            st.mentions[sym].pop()
    del st.facts[mark.facts:], st.residual[mark.residual:], st.guards[mark.guards:]
    st.unmove(mark.moves)  # the point as it was: it satisfied the facts kept (if hints_ok)
    for sym in list(st.symbols)[mark.symbols:]:  # symbols declared inside the scope
        del st.by_name[sym.name], st.symbols[sym]
        st.hints.pop(sym, None)
    st.hints_ok = mark.hints_ok
    st.smt.pop()
    st.forgets += 1
