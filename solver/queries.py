"""The final state: bounds, equality classes, relations between classes, congruences,
normal forms and explanations, read off what a solver knows.

>>> import sympy
>>> from solver.absorb import assume
>>> from solver.state.known import State
>>> st = State(); b = st.declare("b", 2, 64); c = st.declare("c", 2, None); d = st.declare("d", 0, None)
>>> assume(st, sympy.Eq(c, 2 * b)); assume(st, sympy.Eq(d, b))
>>> bounds(st, c), classes(st), relations(st), congruences(st)
((4, 128), ((b, d), (c,)), (Eq(c, 2*b),), ())
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable

import sympy

from shapes.expr import evaluate
from shapes.relation import RELATION_TYPES, as_difference, negate
from solver.kernel import enumeration
from solver.decide import local, pipeline
from solver.kernel import normal_form
from shapes.affine import linear_terms
from solver.state import point
from solver.kernel.bounds import Probe, minimum
from solver.errors import SolverError
from solver.kernel.interval import Endpoint, bound, ceil, floor
from solver.kernel.smt import Budget
from solver.state.known import State
from solver.truth import Fact, Truth

__all__ = ["bounds", "classes", "relations", "congruences", "simplify", "explain"]

_SMALL_COMPONENT = 400  # facts below which bounds get a Z3 solver of the whole component
_RELATION_OF = {"==": sympy.Eq, "!=": sympy.Ne, ">=": sympy.Ge}


def bounds(st: State, expr: sympy.Basic) -> tuple[int | None, int | None]:
    """Sound ``(lo, hi)`` of ``expr`` over the facts; None for an unbounded side.

    Exact when the class data describes the expression (one clean class); else the
    interval is narrowed by bisection with Z3 checks within one budget (see
    :mod:`solver.kernel.bounds`), then by enumeration of a small component; in a large component,
    by points repaired from the example point and Z3 on the facts nearby. Exact whenever a
    search completes; loose but sound when the budget ends.
    """
    expr = st.prepare(expr, "expression")
    table = st.memo.bounds
    known = table.get(expr)
    if known is None:
        known = table[expr] = _bounds(st, expr)
    return known


def _bounds(st: State, expr: sympy.Expr) -> tuple[int | None, int | None]:
    d = st.to_roots(expr)
    lo, hi = bound(d, st.range_lookup)
    lo, hi = ceil(lo), floor(hi)
    lin = linear_terms(sympy.expand(d)) if not d.is_Integer else ({}, int(d))
    exact = lin is not None and all(st.clean(r) for r in lin[0]) and len(lin[0]) <= 1
    if not exact and lo != hi:
        lo, hi = _narrowed(st, d, lo, hi)
    return (None if isinstance(lo, float) else int(lo), None if isinstance(hi, float) else int(hi))


def _narrowed(st: State, d: sympy.Expr, lo: Endpoint, hi: Endpoint) -> tuple[Endpoint, Endpoint]:
    """Bisection over the component of ``d`` (in root form), then enumeration. A component
    too large for a Z3 solver of its own is searched near the example point instead."""
    roots, ids = local.near(st, d, max(_SMALL_COMPONENT, pipeline.LOCAL_FACTS))
    facts = [st.facts[i].rel for i in ids]
    if len(facts) >= _SMALL_COMPONENT:  # the walk stopped early: the component is larger
        return _narrowed_near(st, d, lo, hi, facts[:pipeline.LOCAL_FACTS])
    encoding = _encoding(st, d, facts)
    budget = Budget(st.smt.rlimit)
    near = _constants(st, facts, d)
    new_lo, lo_done = minimum(st.smt.prober(encoding, d, budget), lo, candidates=near)
    neg_hi, hi_done = minimum(st.smt.prober(encoding, -d, budget), -hi, candidates=[-c for c in near])
    new_hi = -neg_hi
    if not (lo_done and hi_done):  # a side the search did not close: try enumeration
        values = enumeration.component_values(st.uf, roots, st.enum_limit)
        found = None if values is None else enumeration.bounds_by_enumeration(d, facts, values)
        if found is not None:
            return found
    return (max(lo, new_lo), min(hi, new_hi))


def _constants(st: State, facts: list[sympy.Basic], d: sympy.Expr, limit: int = 16) -> list[int]:
    """Values a bound of ``d`` is likely to take: the integers of ``facts`` and ``d`` and the
    finite range ends of their symbols, each with its neighbours and negation (the smallest
    ``limit`` magnitudes)."""
    exprs = (*facts, d)
    found = {abs(int(a)) for e in exprs for a in e.atoms(sympy.Integer)}
    for sym in set().union(*(e.free_symbols for e in exprs)):
        found |= {abs(int(b)) for b in st.uf.range_of(sym) if not isinstance(b, float)}
    base = sorted(found)[:limit]
    return sorted({s * c + k for c in base for s in (1, -1) for k in (-1, 0, 1)})


def _encoding(st: State, d: sympy.Expr, facts: list[sympy.Basic]) -> list[object]:
    """``facts`` over the class leaders, and the class data of every leader they or ``d`` name."""
    rooted = [st.to_roots(f) for f in facts]
    leaders = {st.uf.find(x)[0] for x in d.free_symbols}.union(*(f.free_symbols for f in rooted))
    return rooted + [_class_term(st, r) for r in sorted(leaders, key=st.order)]


def _narrowed_near(st: State, d: sympy.Expr, lo: Endpoint, hi: Endpoint,
                   near: list[sympy.Basic]) -> tuple[Endpoint, Endpoint]:
    """Bounds in a large component: values are witnessed by points repaired from the
    example point (:func:`solver.state.point.repair`: every fact holds there), and bounds proved
    by Z3 on the facts ``near`` ``d`` (fewer facts admit more values: an unsat probe there
    is unsat on every fact). Tight where the two meet; where they do not, the proved bound."""
    if not st.hints_ok:
        return lo, hi
    budget = Budget(st.smt.rlimit)
    encoding: list[list[object]] = []  # built on the first probe that needs Z3

    def encoded() -> list[object]:
        if not encoding:
            encoding.append(_encoding(st, d, near))
        return encoding[0]

    consts = _constants(st, near, d)
    new_lo, _ = minimum(_near_probe(st, d, encoded, budget), lo, first_at_bound=True, candidates=consts)
    neg_hi, _ = minimum(_near_probe(st, -d, encoded, budget), -hi, first_at_bound=True,
                        candidates=[-c for c in consts])
    return max(lo, new_lo), min(hi, -neg_hi)


def _near_probe(st: State, d: sympy.Expr, encoded: Callable[[], list[object]], budget: Budget) -> Probe:
    """A :data:`solver.kernel.bounds.Probe` for ``d``: 'sat' from a repaired point (a model of
    every fact), 'unsat' from Z3 on ``encoded()`` (some of the facts), else 'unknown'."""
    local: list[Probe] = []

    def probe(t: int | None) -> tuple[str, int | None]:
        if t is None:
            return "sat", int(evaluate(d, st.hints))
        change = point.repair(st, sympy.Le(d, t))
        if change is not None:
            return "sat", int(evaluate(d, ChainMap(change, st.hints)))
        if not local:
            local.append(st.smt.prober(encoded(), d, budget))
        status, _ = local[0](t)
        return (status, None) if status == "unsat" else ("unknown", None)

    return probe


def _class_term(st: State, root: sympy.Symbol) -> object:
    """What the union-find knows of ``root`` (range, congruence, holes) as a Z3 term
    (cached by the class data it states)."""
    data = st.uf.data(root)
    key = (root, data)
    term = st.class_terms.get(key)
    if term is None:
        term = st.class_terms[key] = st.smt.class_term(root, *data.range, data.cong, sorted(data.excluded))
    return term


def classes(st: State) -> tuple[tuple[sympy.Symbol, ...], ...]:
    """Equality classes of the declared symbols (singletons included), in declaration order."""
    groups: dict[tuple[sympy.Symbol, int, int], list[sympy.Symbol]] = {}
    for sym in st.symbols:
        groups.setdefault(st.uf.find(sym), []).append(sym)
    merged = _merge_implied_equalities(st, list(groups.values()))
    return tuple(tuple(sorted(g, key=st.order)) for g in sorted(merged, key=lambda g: min(map(st.order, g))))


def _merge_implied_equalities(st: State, groups: list[list[sympy.Symbol]]) -> list[list[sympy.Symbol]]:
    """Join groups whose equality only the later stages see (e.g. from ``x <= y, y <= x``)."""
    def open_question(g: list[sympy.Symbol]) -> bool:
        lo, hi = st.uf.range_of(g[0])
        return not st.clean(st.uf.find(g[0])[0]) or lo == hi

    candidates = [g for g in groups if open_question(g)]
    result = [g for g in groups if not open_question(g)]
    while candidates:
        head = candidates.pop(0)
        rest = []
        for g in candidates:
            if _may_be_equal(st, head[0], g[0]) and pipeline.decide(st, sympy.Eq(head[0], g[0])) is Truth.TRUE:
                head = head + g
            else:
                rest.append(g)
        result.append(head)
        candidates = rest
    return result


def _may_be_equal(st: State, a: sympy.Symbol, b: sympy.Symbol) -> bool:
    if st.hints_ok and st.hints[a] != st.hints[b]:  # a point satisfying every fact tells them apart
        return False
    ra, rb = st.uf.range_of(a), st.uf.range_of(b)
    return max(ra[0], rb[0]) <= min(ra[1], rb[1])


def relations(st: State) -> tuple[sympy.Basic, ...]:
    """Linear relations between classes: ``Eq(c, 2*b + 1)`` for derived dims, and residual
    linear equalities over several classes (in root form)."""
    out: list[sympy.Basic] = []
    for sym in st.symbols:
        root, a, b = st.uf.find(sym)
        if (a, b) != (1, 0) and all(st.uf.find(t)[1:] != (a, b) or t == sym for t in _earlier(st, sym, root)):
            out.append(sympy.Eq(sym, a * root + b))
    for fact in st.residual_facts():
        rel = fact.rel
        if isinstance(rel, sympy.Eq):
            lin = linear_terms(sympy.expand(st.to_roots(rel.lhs - rel.rhs)))
            if lin is not None and len(lin[0]) >= 2:
                out.append(st.to_roots(rel))
    return tuple(out)


def _earlier(st: State, sym: sympy.Symbol, root: sympy.Symbol) -> list[sympy.Symbol]:
    return [t for t in st.uf.members(root) if st.order(t) < st.order(sym)]


def congruences(st: State) -> tuple[tuple[sympy.Symbol, int, int], ...]:
    """``(root, m, r)`` for each class known to satisfy ``root = r (mod m)`` with m > 1."""
    out = []
    for root in sorted(st.uf.roots(), key=st.order):
        m, r = st.uf.data(root).cong
        if m > 1:
            out.append((root, m, r))
    return tuple(out)


def simplify(st: State, rel: sympy.Basic, minmax: bool = False) -> sympy.Basic:
    """An equivalent relation in normal form ``d op 0`` (``op`` one of ``== != >=``),
    with factors of known sign divided out and ``t - k*(t//k)`` written ``Mod(t, k)``;
    ``minmax``: also without the ``Min``/``Max`` arguments the ranges never choose."""
    rel = st.prepare(rel)
    if minmax:
        rel = normal_form.simplify_minmax(rel, st.uf.range_of)
    if not isinstance(rel, RELATION_TYPES):
        return rel
    op, d = normal_form.normalize(*as_difference(rel), st.uf.range_of)
    return _RELATION_OF[op](d, 0)


def explain(st: State, rel: sympy.Basic) -> tuple[Fact, ...]:
    """A minimal set of facts implying ``rel`` (Z3 unsat core, then a deletion pass).

    Raises SolverError when ``rel`` is not implied. Dropping any returned fact makes the
    rest insufficient.
    """
    prepared = st.prepare(rel)
    if pipeline.decide(st, prepared) is not Truth.TRUE:
        raise SolverError(f"{prepared} is not implied by the facts; nothing to explain")
    core = st.smt.core([f.rel for f in st.facts], negate(prepared))
    if core is None:
        return tuple(st.facts)
    return tuple(st.facts[i] for i in core)
