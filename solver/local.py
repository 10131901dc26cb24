"""Z3 on the facts near a question: the large-problem path of :mod:`solver.pipeline`.

On a large problem Z3 sees only the residual facts reached breadth-first from the question's
classes (:func:`near`, at most ``limit``, nearest first) and the class data of every class
they mention. Fewer facts are weaker premises, so only an unsat answer is conclusive
(:func:`decide`); anything else is UNKNOWN.

The encoding is rebuilt for every question from cached pieces: each fact's Z3 term over the
class leaders is kept by fact index (memo table ``encoded``, emptied when the class
structure changes or a scope ends), each class term by the class data it states (see
:meth:`solver.smt.Smt.class_term`), so a question costs about its Z3 check.

>>> import sympy
>>> from solver.absorb import assume
>>> from solver.state import State
>>> st = State(); x, y, z = (st.declare(n, 0, 100) for n in "xyz")
>>> assume(st, sympy.Le(x + y, z)); assume(st, sympy.Ge(x, 40))
>>> near(st, sympy.Ge(x, 1), 10)
([x, y, z], [3])
>>> decide(st, sympy.Ge(z, 40), 10, None), decide(st, sympy.Ge(z, 41), 10, None)
(<Truth.TRUE: 'true'>, None)
"""

from __future__ import annotations

import sympy
import z3

from solver.state import State
from solver.truth import Truth

__all__ = ["near", "encoding", "decide"]


def near(st: State, rel: sympy.Basic, limit: int) -> tuple[list[sympy.Symbol], list[int]]:
    """The residual facts (indices) reached breadth-first from ``rel``'s classes, at most
    ``limit`` and nearest first, and the class leaders they and ``rel`` mention."""
    find = st.uf.find
    leaders = list(dict.fromkeys(find(x)[0] for x in sorted(rel.free_symbols, key=st.order)))
    known, taken = set(leaders), set()
    ids: list[int] = []
    for leader in leaders:  # grows while it is walked
        for m in st.uf.members(leader):
            for i in st.mentions.get(m, ()):
                if i in taken or len(ids) >= limit:
                    continue
                taken.add(i)
                ids.append(i)
                for x in sorted(st.facts[i].rel.free_symbols, key=st.order):
                    r = find(x)[0]
                    if r not in known:
                        known.add(r)
                        leaders.append(r)
        if len(ids) >= limit:
            break
    return leaders, ids


def encoding(st: State, leaders: list[sympy.Symbol], ids: list[int]) -> list[z3.ExprRef]:
    """The Z3 terms of the facts ``ids`` over the class leaders and of the class data of
    ``leaders``, from the caches (see the module docstring)."""
    z, table = st.smt, st.memo.encoded
    out = []
    for i in ids:
        term = table.get(i)
        if term is None:
            term = table[i] = z.translate(st.to_roots(st.facts[i].rel))
        out.append(term)
    for r in leaders:
        data = st.uf.data(r)
        out.append(z.class_term(r, *data.range, data.cong, sorted(data.excluded)))
    return out


def decide(st: State, rel: sympy.Basic, limit: int, at_hint: bool | None) -> Truth | None:
    """TRUE when the facts near ``rel`` refute its negation, FALSE when they refute ``rel``,
    else None. ``at_hint`` is ``rel`` at a point satisfying every fact (None: none known):
    the opposite answer is then impossible and its check is skipped."""
    z = st.smt
    leaders, ids = near(st, rel, limit)
    facts = encoding(st, leaders, ids)
    term = z.translate(st.to_roots(rel))
    if at_hint is not False and z.check_local(facts, z.negation(term)) == "unsat":
        return Truth.TRUE
    if at_hint is not True and z.check_local(facts, term) == "unsat":
        return Truth.FALSE
    return None
