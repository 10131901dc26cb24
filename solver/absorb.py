"""Adding facts: folded into the union-find where it can take them, residual otherwise.

A fact the union-find *absorbs* becomes class data: a link between two classes, a narrowed
range, a congruence or an excluded value (periodic relations equivalent to those included,
see :mod:`solver.decide.periodic`). A fact it cannot absorb stays *residual*: recorded for the later
stages, its classes marked as no longer described exactly by their data, and its linear
bounds propagated into the class ranges (see :mod:`solver.kernel.propagate`). An empty meet is a
contradiction, reported with the Z3 unsat core of the facts that cause it.

>>> import sympy
>>> from solver.state.known import State
>>> st = State(); a = st.declare("a", 0, 100); b = st.declare("b", 0, 100); c = st.declare("c", 1, 9)
>>> assume(st, sympy.Eq(b, 2 * a + 1))      # a link: b = 2*a + 1
>>> st.uf.find(b), st.range_lookup(a)
((a, 2, 1), (0, 49))
>>> assume(st, sympy.Ge(a * c, 10)); st.residual   # over two classes, not linear: residual
[4]
"""

from __future__ import annotations

import math

import sympy

from shapes.relation import RELATION_TYPES
from solver.decide import narrowing, periodic, pipeline, stages
from shapes.affine import linear_terms
from solver.state import point
from solver.kernel import propagate
from solver.kernel.extremes import extreme_parts
from solver.kernel.congruence import solve_linear
from solver.errors import ContradictionError
from solver.kernel.interval import Interval
from solver.state.known import State
from solver.truth import Reason, Truth

__all__ = ["assume", "add_fact", "contradiction"]

_RELATION_OF = {"==": sympy.Eq, "!=": sympy.Ne, ">=": sympy.Ge}


def assume(st: State, rel: sympy.Basic, reason: Reason | None = None) -> None:
    """Add a fact. A fact that contradicts the known facts raises ContradictionError."""
    rel = st.prepare(rel, "fact")
    reason = reason or Reason.spelled("spec", rel)
    # consistent when it holds at the example point (which satisfies every fact so far)
    # (a repaired one: see solver.state.point), or when the union-find alone takes it; else ask
    change = _repaired(st, rel)
    if change is None and not _absorbs_cleanly(st, rel) and pipeline.decide(st, rel) is Truth.FALSE:
        raise contradiction(st, rel, reason)
    _add(st, rel, reason, change)


def add_fact(st: State, rel: sympy.Basic, reason: Reason) -> None:
    """Record a prepared fact known not to be FALSE (a conflict found here still raises)."""
    _add(st, rel, reason, _repaired(st, rel))


def _repaired(st: State, rel: sympy.Basic) -> dict[sympy.Symbol, int] | None:
    """The moves after which the example point satisfies ``rel`` and every fact (none when
    it already does), or None when there is no such point at hand."""
    at_hint = st.value_at_hints(rel)
    if at_hint is None:
        return None
    return {} if at_hint else point.repair(st, rel)


def _add(st: State, rel: sympy.Basic, reason: Reason, change: dict[sympy.Symbol, int] | None) -> None:
    """Absorb or keep ``rel``; ``change``: the point's moves that make it hold (None: none known)."""
    mark = st.uf.mark()
    absorbed = _absorb(st, rel)
    if absorbed is None or (absorbed is False and not _propagate(st, rel)):
        st.uf.undo(mark)
        raise contradiction(st, rel, reason)
    if change:
        st.move(change)
    st.record_fact(rel, reason, absorbed, change is not None)
    if change is None:
        point.recover(st)


def contradiction(st: State, rel: sympy.Basic, reason: Reason) -> ContradictionError:
    """The error for ``rel`` contradicting the facts, naming the ones that cause it."""
    core = st.smt.core([f.rel for f in st.facts], rel)
    culprits = tuple(st.facts[i].reason for i in core) if core is not None else ()
    lines = "\n".join(f"  - {r.describe()}" for r in culprits + (reason,))
    return ContradictionError(f"{rel} contradicts what is already known:\n{lines}", culprits + (reason,))


def _absorbs_cleanly(st: State, rel: sympy.Basic) -> bool:
    """Whether the union-find alone can take ``rel`` and judge its consistency: it folds
    into classes no residual fact touches, whose data (range, congruence, holes) then
    describes them exactly, so an empty meet is the only possible contradiction."""
    if not rel.free_symbols or not all(st.clean(st.uf.find(x)[0]) for x in rel.free_symbols):
        return False
    mark = st.uf.mark()
    try:
        return _absorb(st, rel) is True
    finally:
        st.uf.undo(mark)


def _absorb(st: State, rel: sympy.Basic) -> bool | None:
    """Fold a fact into the union-find: True absorbed, False kept for later stages, None conflict."""
    if rel is sympy.true:
        return True
    if rel is sympy.false:
        return None
    if isinstance(rel, sympy.And):
        results = [_absorb(st, a) for a in rel.args]
        return None if None in results else all(results)
    parts = extreme_parts(rel, disjunctions=False)
    if parts is not None:
        return _absorb(st, parts)
    if not isinstance(rel, RELATION_TYPES):
        return False
    flat = st.linear(rel)
    if flat is not None:
        if isinstance(flat, bool):
            return True if flat else None
        return _absorb_linear(st, *flat)
    rooted = st.to_roots(rel)
    if rooted is sympy.true or rooted is sympy.false:
        return True if rooted is sympy.true else None
    q = st.normal_form(rooted)
    if q.lhs.is_Integer:
        return True if stages.by_constant(q, st.view) is Truth.TRUE else None
    lin = linear_terms(q.lhs)
    if lin is not None:
        return _absorb_linear(st, q.op, *lin)
    absorbed = _absorb_mod(st, q.lhs) if q.op == "==" else False
    return _absorb_periodic(st, q.op, q.lhs) if absorbed is False else absorbed


def _absorb_linear(st: State, op: str, coeffs: dict[sympy.Symbol, int], const: int) -> bool | None:
    uf = st.uf
    items = [(r, a) for r, a in coeffs.items() if a]
    if len(items) == 1:
        (r, a), = items
        if op == "==":
            if const % a:
                return None
            return True if uf.restrict(r, (-const // a, -const // a)) else None
        if op == "!=":
            return True if const % a or uf.exclude(r, -const // a) else None
        # a*r + const >= 0: r >= ceil(-const/a) for a > 0, r <= floor(-const/a) for a < 0
        rng: Interval = (-(const // a), math.inf) if a > 0 else (-math.inf, (-const) // a)
        return True if uf.restrict(r, rng) else None
    if len(items) == 2 and op == "==":
        (r1, a1), (r2, a2) = sorted(items, key=lambda t: st.order(t[0]), reverse=True)
        # a1*r1 + a2*r2 + const == 0; attach the later-declared root below the earlier
        if abs(a1) == 1:
            return True if uf.link(r1, -a2 * a1, r2, -const * a1) else None
        if abs(a2) == 1:
            return True if uf.link(r2, -a1 * a2, r1, -const * a2) else None
    return False


def _absorb_mod(st: State, d: sympy.Expr) -> bool | None:
    const, rest = d.as_coeff_Add()
    if not isinstance(rest, sympy.Mod) or not rest.args[1].is_Integer or int(rest.args[1]) <= 0:
        return False
    k = int(rest.args[1])
    target = -int(const)
    if not 0 <= target < k:
        return None
    lin = linear_terms(sympy.expand(rest.args[0]))
    if lin is None or len(lin[0]) != 1:
        return False
    (r, a), = lin[0].items()
    c = solve_linear(a, lin[1], (k, target))
    if c is None:
        return None
    return True if st.uf.congruent(r, c) else None


def _absorb_periodic(st: State, op: str, d: sympy.Expr) -> bool | None:
    """A periodic relation (see :mod:`solver.decide.periodic`) that is equivalent, under the
    class data, to congruences of its classes is absorbed as those congruences."""
    rel = _RELATION_OF[op](d, 0, evaluate=False)
    found = periodic.analyze(rel, st.class_of)
    if found is None or (found.congruences is None and not found.never):
        return _absorb_shape(st, periodic.class_shape(rel, st.class_of))
    if found.congruences is None:
        return None  # false on every value the classes admit
    return True if all(st.uf.congruent(r, c) for r, c in found.congruences) else None


def _absorb_shape(st: State, shape: periodic.ClassShape | None) -> bool | None:
    """A one-class relation equivalent to a range, a congruence and holes (see
    :func:`solver.decide.periodic.class_shape`) is absorbed as those."""
    if shape is None:
        return False
    uf, r = st.uf, shape.root
    ok = uf.restrict(r, shape.range) and uf.congruent(r, shape.cong)
    return True if ok and all(uf.exclude(r, v) for v in sorted(shape.excluded)) else None


def _propagate(st: State, rel: sympy.Basic) -> bool:
    """Narrow class ranges through ``rel`` and the residual facts it reaches (see
    :mod:`solver.decide.narrowing`); False when a range comes out empty (a contradiction)."""
    return narrowing.narrow(st, st.linear(rel), rel, propagate.MAX_VISITS)
