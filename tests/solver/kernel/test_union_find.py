"""Oracle tests of the affine union-find: random links, restrictions and scopes checked against
brute force and against a replay from scratch.

* every recorded link holds under ``find``'s affine maps (for several leader values);
* the classes are exactly the connected components of the links made;
* ``undo(mark)`` restores the observable state (find, ranges, class data, members) exactly;
* ranges are sound: every assignment of a small box that satisfies the links and restrictions
  lies inside ``range_of`` and the class congruence;
* the forest stays shallow (union by size + path compression) on long chains and stars.
"""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from shapes import int_symbol
from solver.kernel.union_find import UnionFind

BOX = range(-6, 7)


def _snapshot(uf: UnionFind, syms: list) -> dict:
    return {s: (uf.find(s), uf.range_of(s), uf.data(uf.find(s)[0]), frozenset(uf.members(uf.find(s)[0])))
            for s in syms}


def _random_program(rng: random.Random, n: int, steps: int):
    """A list of operations: ('link', x, coef, y, off), ('restrict', x, lo, hi), ('mark',), ('undo',)."""
    ops = []
    for _ in range(steps):
        r = rng.random()
        if r < 0.12:
            ops.append(("mark",))
        elif r < 0.24:
            ops.append(("undo",))
        elif r < 0.4:
            lo = rng.randint(-8, 4)
            ops.append(("restrict", rng.randrange(n), lo, lo + rng.randint(0, 10)))
        else:
            x, y = rng.sample(range(n), 2)
            ops.append(("link", x, rng.choice([1, 1, 1, -1, 2, 3]), y, rng.randint(-3, 3)))
    return ops


def _run(ops, n: int):
    """Run the program; yield (uf, syms, active constraints) after every step and check undo."""
    syms = [int_symbol(f"u{i}") for i in range(n)]
    uf = UnionFind()
    for s in syms:
        uf.add(s, (-6, 6))
    active: list[tuple] = []
    scopes: list[tuple[int, int, dict]] = []
    for op in ops:
        if op[0] == "mark":
            scopes.append((uf.mark(), len(active), _snapshot(uf, syms)))
        elif op[0] == "undo" and scopes:
            mark, n_active, snap = scopes.pop()
            uf.undo(mark)
            del active[n_active:]
            assert _snapshot(uf, syms) == snap
        elif op[0] == "restrict":
            _, i, lo, hi = op
            m = uf.mark()
            if uf.restrict(syms[i], (lo, hi)):
                active.append(("in", syms[i], lo, hi))
            else:
                uf.undo(m)
        elif op[0] == "link":
            _, i, coef, j, off = op
            x, y = syms[i], syms[j]
            if uf.find(x)[0] == uf.find(y)[0] or not uf.can_link(x, coef, y):
                continue
            m = uf.mark()
            if uf.link(x, coef, y, off):
                active.append(("eq", x, coef, y, off))
            else:
                uf.undo(m)
        yield uf, syms, active


@pytest.mark.parametrize("seed", range(40))
def test_links_hold_classes_are_components_and_undo_restores(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 9)
    for uf, syms, active in _run(_random_program(rng, n, 40), n):
        for c in active:
            if c[0] != "eq":
                continue
            _, x, coef, y, off = c
            (lx, ax, bx), (ly, ay, by) = uf.find(x), uf.find(y)
            assert lx == ly
            assert all(ax * v + bx == coef * (ay * v + by) + off for v in range(-3, 4))
        g = nx.Graph()
        g.add_nodes_from(syms)
        g.add_edges_from((c[1], c[3]) for c in active if c[0] == "eq")
        classes = {frozenset(uf.members(r)) for r in uf.roots()}
        assert classes == {frozenset(c) for c in nx.connected_components(g)}


@pytest.mark.parametrize("seed", range(12))
def test_ranges_and_congruences_are_sound_against_brute_force(seed: int) -> None:
    rng = random.Random(1000 + seed)
    n = rng.randint(2, 4)
    *_, (uf, syms, active) = _run(_random_program(rng, n, 14), n)
    for values in itertools.product(BOX, repeat=n):
        env = dict(zip(syms, values))
        if not all(_holds(c, env) for c in active):
            continue
        for s in syms:
            lo, hi = uf.range_of(s)
            assert lo <= env[s] <= hi
            root, a, b = uf.find(s)
            m, r = uf.data(root).cong
            assert (env[s] - b) % a == 0 and ((env[s] - b) // a - r) % m == 0
            assert (env[s] - b) // a not in uf.data(root).excluded


def _holds(c: tuple, env: dict) -> bool:
    if c[0] == "in":
        return c[2] <= env[c[1]] <= c[3]
    _, x, coef, y, off = c
    return env[x] == coef * env[y] + off


def _depth(uf: UnionFind, s) -> int:
    d = 0
    while s in uf._parent:  # noqa: SLF001 - structure test
        s = uf._parent[s][0]  # noqa: SLF001
        d += 1
    return d


@pytest.mark.parametrize("shape", ["chain", "reverse_chain", "star", "pairs"])
def test_the_forest_stays_shallow(shape: str) -> None:
    n = 2048
    syms = [int_symbol(f"v{i}") for i in range(n)]
    uf = UnionFind()
    for s in syms:
        uf.add(s, (0, 10**6))
    if shape == "chain":
        pairs = [(syms[i + 1], syms[i]) for i in range(n - 1)]
    elif shape == "reverse_chain":
        pairs = [(syms[i + 1], syms[i]) for i in reversed(range(n - 1))]
    elif shape == "star":
        pairs = [(s, syms[0]) for s in syms[1:]]
    else:  # merge pairs, then pairs of pairs, ...
        pairs, step = [], 1
        while step < n:
            pairs += [(syms[i + step], syms[i]) for i in range(0, n, 2 * step)]
            step *= 2
    for x, y in pairs:
        assert uf.link(x, 1, y, 0)
    assert uf.roots() == [syms[0]]  # the leader is the callers choice: the first symbol
    assert max(_depth(uf, s) for s in syms) <= 12  # log2(2048) + 1: union by size
    for s in syms:
        uf.find(s)
    assert max(_depth(uf, s) for s in syms) <= 1  # path compression


def test_leaders_follow_the_callers_choice_not_the_tree() -> None:
    a, b, c = int_symbol("a"), int_symbol("b"), int_symbol("c")
    uf = UnionFind()
    for s in (a, b, c):
        uf.add(s, (0, 100))
    uf.link(c, 1, b, 0)  # {b, c}, leader b: the bigger tree
    uf.link(b, 1, a, 5)  # b == a + 5: leader a although a's tree is smaller
    assert uf.find(c) == (a, 1, 5) and uf.find(b) == (a, 1, 5)
    assert uf.roots() == [a] and uf.range_of(a) == (0, 95)
