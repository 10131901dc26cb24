"""Exhaustive enumeration of a small bounded component: the exact last resort.

When Z3 gives up (nonlinear facts), the symbols a question touches, closed under the facts
the union-find could not absorb, are enumerated if their domains are finite and small.
Absorbed facts are already in the class data (range, congruence, holes, affine members),
so checking the residual facts on each assignment checks every fact of the component.

>>> import sympy
>>> from shapes import int_symbol
>>> from solver.kernel.union_find import UnionFind
>>> x = int_symbol("x"); uf = UnionFind(); uf.add(x, (0, 3))
>>> [env[x] for env in component_values(uf, [x], 100)]
[0, 1, 2, 3]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator

import sympy

from shapes.expr import evaluate
from solver.truth import Fact, Truth
from solver.kernel.union_find import UnionFind

__all__ = ["component", "component_values", "decide_by_enumeration", "bounds_by_enumeration"]


def component(uf: UnionFind, residual: Iterable[Fact], expr: sympy.Basic,
              order: Callable[[sympy.Symbol], int]) -> tuple[list[sympy.Symbol], list[Fact]]:
    """The roots ``expr`` depends on, closed under the residual facts, and those facts
    (in their order); linear in the size of the residual facts."""
    facts = list(residual)
    by_root: dict[sympy.Symbol, list[int]] = {}
    fact_roots = []
    for i, f in enumerate(facts):
        rs = {uf.find(s)[0] for s in f.rel.free_symbols}
        fact_roots.append(rs)
        for r in rs:
            by_root.setdefault(r, []).append(i)
    roots = {uf.find(s)[0] for s in expr.free_symbols}
    todo = list(roots)
    taken: set[int] = set()
    while todo:
        for i in by_root.get(todo.pop(), ()):
            if i not in taken:
                taken.add(i)
                new = fact_roots[i] - roots
                roots |= new
                todo.extend(new)
    return sorted(roots, key=order), [facts[i] for i in sorted(taken)]


def component_values(uf: UnionFind, roots: list[sympy.Symbol], limit: int) -> Iterator[dict[sympy.Symbol, int]] | None:
    """Every assignment of the roots' classes (members included), or None past ``limit``."""
    domains = []
    size = 1
    for r in roots:
        data = uf.data(r)
        lo, hi = data.range
        if isinstance(lo, float) or isinstance(hi, float):  # +-inf (a huge int is not)
            return None
        m, _ = data.cong
        if (int(hi) - int(lo)) // m + 1 > limit:  # never materialize a huge range
            return None
        dom = [v for v in range(int(lo), int(hi) + 1, m) if v not in data.excluded]
        size *= max(len(dom), 1)
        if size > limit:
            return None
        domains.append(dom)
    members = {r: [(s, *uf.find(s)[1:]) for s in uf.members(r)] for r in roots}

    def gen() -> Iterator[dict[sympy.Symbol, int]]:
        for combo in itertools.product(*domains):
            env: dict[sympy.Symbol, int] = {}
            for r, v in zip(roots, combo):
                for s, a, b in members[r]:
                    env[s] = a * v + b
            yield env

    return gen()


def decide_by_enumeration(rel: sympy.Basic, facts: list[Fact],
                          values: Iterator[dict[sympy.Symbol, int]]) -> Truth:
    """The exact answer over the enumerated assignments that satisfy ``facts``."""
    seen: set[bool] = set()
    for env in values:
        if all(evaluate(f.rel, env) for f in facts):
            seen.add(bool(evaluate(rel, env)))
            if len(seen) == 2:
                return Truth.UNKNOWN
    return Truth.FALSE if seen == {False} else Truth.TRUE  # empty: facts contradict, vacuous


def bounds_by_enumeration(expr: sympy.Basic, facts: list[sympy.Basic],
                          values: Iterator[dict[sympy.Symbol, int]]) -> tuple[int, int] | None:
    """Exact min and max of ``expr`` over the assignments that satisfy ``facts`` (relations)."""
    seen = [int(evaluate(expr, env)) for env in values if all(evaluate(f, env) for f in facts)]
    return (min(seen), max(seen)) if seen else None
