"""An affine union-find over integer symbols, with per-class facts merged by meet.

Each symbol is ``coef * leader + offset`` of its class's *leader* (``coef`` a nonzero
int), the representative the caller chose when linking (the engine picks the earliest
declared). A plain equality ``x == y`` gives coef 1, offset 0; a derived dim
``c == 2*b + 1`` puts ``c`` below ``b`` with coef 2, offset 1. Each leader carries its
range (an interval), a congruence, a set of excluded values and whether a fact outside the
union-find mentions the class; linking intersects them (the meet) and an empty meet is
reported, never silently kept.

The forest under the leaders is kept shallow: union by size (the smaller tree goes below
the larger whenever the affine link can be inverted, i.e. has a unit coefficient) and path
compression on ``find``. Members form a circular list, merged and split in O(1). Every
change (data, links, compressed paths) is logged on a trail, so scopes undo in O(changes)
rather than copy.

>>> from shapes import int_symbol
>>> b, c = int_symbol("b"), int_symbol("c")
>>> uf = UnionFind()
>>> uf.add(b, (2, 64)); uf.add(c, (2, 200))
>>> uf.link(c, 2, b, 1)          # c == 2*b + 1
True
>>> uf.find(c)
(b, 2, 1)
>>> uf.range_of(c)
(5, 129)
>>> mark = uf.mark(); uf.restrict(b, (10, 20)); uf.range_of(c)
True
(21, 41)
>>> uf.undo(mark); uf.range_of(c)
(5, 129)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy

from solver.kernel import congruence as cg
from solver.kernel.interval import Interval, ceil, floor, intersect

__all__ = ["UnionFind", "ClassData"]


@dataclass(frozen=True, slots=True)
class ClassData:
    """What is known of a leader: range, congruence ``leader = r (mod m)``, excluded values,
    and whether a residual fact mentions the class (then the rest is an over-approximation)."""

    range: Interval
    cong: cg.Congruence = cg.TRIVIAL
    excluded: frozenset[int] = field(default_factory=frozenset)
    residual: bool = False  # a fact the union-find could not absorb mentions this class

    def normalized(self) -> ClassData | None:
        """Shrink the range to its first/last admissible values; None when nothing is left."""
        lo, hi = self.range
        excluded = self.excluded
        for _ in range(len(excluded) + 2):
            if lo != -math.inf:
                lo = cg.align_up(int(lo), self.cong)
            if hi != math.inf:
                hi = cg.align_down(int(hi), self.cong)
            if lo > hi:
                return None
            moved = False
            if lo in excluded:
                lo, moved = lo + 1, True
            if hi in excluded:
                hi, moved = hi - 1, True
            if not moved:
                break
        if lo > hi:
            return None
        kept = frozenset(v for v in excluded if lo < v < hi and (v - self.cong[1]) % self.cong[0] == 0)
        return ClassData((lo, hi), self.cong, kept, self.residual)

    @property
    def exact(self) -> bool:
        """True when the range alone describes the class (no holes from congruence or exclusions)."""
        return self.cong[0] == 1 and not self.excluded


def _preimage(rng: Interval, coef: int, offset: int) -> Interval:
    """``{y : coef*y + offset in rng}`` as an interval (integer-rounded)."""
    lo = (rng[0] - offset) if rng[0] != -math.inf else -math.inf
    hi = (rng[1] - offset) if rng[1] != math.inf else math.inf
    if coef > 0:
        return (ceil(_q(lo, coef)), floor(_q(hi, coef)))
    return (ceil(_q(hi, coef)), floor(_q(lo, coef)))


def _q(v: Any, k: int) -> Any:
    if isinstance(v, float):
        return v / k
    return Fraction(v, k)


Edge = tuple[sympy.Symbol, int, int]  # node == coef * parent + offset


@dataclass(frozen=True, slots=True)
class _Lead:
    """The leader of a tree: ``leader == sign * tree_root + offset`` (``sign`` is +1 or -1)."""

    leader: sympy.Symbol
    sign: int
    offset: int


@dataclass(frozen=True, slots=True)
class _Undo:
    """What a link changed, for the trail: leader ``child``'s class went into ``root``'s,
    tree ``top`` got the other tree below it."""

    top: sympy.Symbol
    child: sympy.Symbol
    root: sympy.Symbol
    tree_child: sympy.Symbol
    tree_root: sympy.Symbol
    lead_child: _Lead
    lead_root: _Lead
    data_child: ClassData


class UnionFind:
    """Affine union-find with class data and an undo trail (see the module docstring)."""

    def __init__(self) -> None:
        self._parent: dict[sympy.Symbol, Edge] = {}  # non-roots of the forest
        self._lead: dict[sympy.Symbol, _Lead] = {}  # tree root -> its class's leader
        self._tree: dict[sympy.Symbol, sympy.Symbol] = {}  # leader -> tree root
        self._size: dict[sympy.Symbol, int] = {}  # tree root -> members
        self._next: dict[sympy.Symbol, sympy.Symbol] = {}  # circular member lists
        self._data: dict[sympy.Symbol, ClassData] = {}  # leader -> class data
        self._trail: list[tuple[str, Any, Any]] = []
        self.links = 0  # bumped whenever the class structure changes (link or undo of one)
        self.undos = 0  # bumped whenever undo removes anything

    # -- structure -----------------------------------------------------------------
    def add(self, sym: sympy.Symbol, rng: Interval) -> None:
        """Register a new symbol as its own class with range ``rng``."""
        self._data[sym] = ClassData(rng)
        self._lead[sym] = _Lead(sym, 1, 0)
        self._tree[sym] = sym
        self._size[sym] = 1
        self._next[sym] = sym
        self._trail.append(("new", sym, None))

    def __contains__(self, sym: object) -> bool:
        return sym in self._next

    def _root(self, sym: sympy.Symbol) -> Edge:
        """``(tree_root, coef, offset)`` with ``sym == coef*tree_root + offset``; compresses
        the path (each rewritten edge goes on the trail)."""
        edge = self._parent.get(sym)
        if edge is None:
            return (sym, 1, 0)
        if edge[0] not in self._parent:
            return edge
        path = []
        node = sym
        while edge is not None:
            path.append((node, edge))
            node = edge[0]
            edge = self._parent.get(node)
        root, coef, offset = node, 1, 0
        for node, (_, a, b) in reversed(path):  # node == a*parent + b, parent == coef*root + offset
            coef, offset = a * coef, a * offset + b
            if self._parent[node][0] is not root:
                self._trail.append(("edge", node, self._parent[node]))
                self._parent[node] = (root, coef, offset)
        return (root, coef, offset)

    def find(self, sym: sympy.Symbol) -> tuple[sympy.Symbol, int, int]:
        """``(leader, coef, offset)`` with ``sym == coef*leader + offset``."""
        root, coef, offset = self._root(sym)
        lead = self._lead[root]
        if lead.sign == 1 and lead.offset == 0:
            return (lead.leader, coef, offset)
        # root == sign*(leader - off): sym == coef*sign*leader + offset - coef*sign*off
        a = coef * lead.sign
        return (lead.leader, a, offset - a * lead.offset)

    def roots(self) -> list[sympy.Symbol]:
        """The leaders, one per class."""
        return list(self._data)

    def members(self, root: sympy.Symbol) -> list[sympy.Symbol]:
        """The symbols of ``root``'s class (any member may be given)."""
        out = [root]
        node = self._next[root]
        while node is not root:
            out.append(node)
            node = self._next[node]
        return out

    def data(self, root: sympy.Symbol) -> ClassData:
        return self._data[root]

    def range_of(self, sym: sympy.Symbol) -> Interval:
        """The range of any symbol, mapped through its affine link to the leader."""
        root, coef, offset = self.find(sym)
        lo, hi = self._data[root].range
        if coef == 1 and offset == 0:
            return (lo, hi)
        a = lo * coef + offset if lo not in (math.inf, -math.inf) else lo * coef
        b = hi * coef + offset if hi not in (math.inf, -math.inf) else hi * coef
        return (a, b) if a <= b else (b, a)

    # -- updates (each returns False when the meet is empty, leaving state unchanged) ----
    def _set(self, root: sympy.Symbol, data: ClassData) -> None:
        self._trail.append(("data", root, self._data[root]))
        self._data[root] = data

    def restrict(self, sym: sympy.Symbol, rng: Interval) -> bool:
        """Intersect the range of ``sym`` (mapped to its leader) with ``rng``."""
        root, coef, offset = self.find(sym)
        old = self._data[root]
        new = ClassData(intersect(old.range, _preimage(rng, coef, offset)), old.cong, old.excluded, old.residual)
        return self._commit(root, old, new)

    def exclude(self, sym: sympy.Symbol, value: int) -> bool:
        """Record ``sym != value``."""
        root, coef, offset = self.find(sym)
        if (value - offset) % coef:
            return True
        old = self._data[root]
        new = ClassData(old.range, old.cong, old.excluded | {(value - offset) // coef}, old.residual)
        return self._commit(root, old, new)

    def congruent(self, sym: sympy.Symbol, c: cg.Congruence) -> bool:
        """Record ``sym = r (mod m)``."""
        root, coef, offset = self.find(sym)
        old = self._data[root]
        on_root = cg.solve_linear(coef, offset, c)
        merged = cg.combine(old.cong, on_root) if on_root is not None else None
        if merged is None:
            return False
        return self._commit(root, old, ClassData(old.range, merged, old.excluded, old.residual))

    def touch(self, sym: sympy.Symbol) -> None:
        """Mark ``sym``'s class as mentioned by a fact the union-find does not hold."""
        root = self.find(sym)[0]
        old = self._data[root]
        if not old.residual:
            self._set(root, ClassData(old.range, old.cong, old.excluded, True))

    def _commit(self, root: sympy.Symbol, old: ClassData, new: ClassData) -> bool:
        norm = new.normalized()
        if norm is None:
            return False
        if norm != old:
            self._set(root, norm)
        return True

    def link(self, x: sympy.Symbol, coef: int, y: sympy.Symbol, offset: int) -> bool:
        """Record ``x == coef*y + offset``. False if the classes' data cannot meet.

        x's leader goes below y's when it can be written as an integer affine function of
        it, else the other way round; with no unit coefficient on either side this raises
        ValueError, so callers check :meth:`can_link` first. Linking two members of one
        class changes nothing (the caller decides consistency via the engine).
        """
        rx, ax, bx = self.find(x)
        ry, ay, by = self.find(y)
        # ax*rx + bx == coef*(ay*ry + by) + offset  ->  rx == (coef*ay*ry + coef*by + offset - bx)/ax
        a, b = coef * ay, coef * by + offset - bx
        if rx == ry:
            return True
        if abs(ax) == 1:
            return self._attach(rx, a * ax, b * ax, ry)
        if abs(a) == 1:  # ry == (ax*rx - b)/a
            return self._attach(ry, ax * a, -b * a, rx)
        raise ValueError("link: no unit coefficient; check can_link first")

    def can_link(self, x: sympy.Symbol, coef: int, y: sympy.Symbol) -> bool:
        _, ax, _ = self.find(x)
        _, ay, _ = self.find(y)
        return abs(ax) == 1 or abs(coef * ay) == 1

    def _attach(self, child: sympy.Symbol, coef: int, offset: int, root: sympy.Symbol) -> bool:
        """Merge leader ``child``'s class into leader ``root``'s, child == coef*root + offset."""
        cdata, rdata = self._data[child], self._data[root]
        merged = _meet(cdata, rdata, coef, offset)
        if merged is None:
            return False
        tc, tr = self._tree[child], self._tree[root]
        lc, lr = self._lead[tc], self._lead[tr]
        # tree_c == sc*(child - oc) == sc*coef*root + sc*(offset - oc), root == sr*tree_r + or_
        a = lc.sign * coef
        b = lc.sign * (offset - lc.offset)
        if abs(a) == 1 and self._size[tc] > self._size[tr]:
            # root == a*(tree_c - b), so tree_r == sr*(root - or_) == sr*a*tree_c - sr*(a*b + or_)
            below, top, edge = tr, tc, (tc, lr.sign * a, -lr.sign * (a * b + lr.offset))
            new_lead = _Lead(root, a, -a * b)
        else:
            below, top, edge = tc, tr, (tr, a * lr.sign, a * lr.offset + b)
            new_lead = lr
        self._trail.append(("link", below, _Undo(top, child, root, tc, tr, lc, lr, cdata)))
        self._parent[below] = edge
        self._lead[top] = new_lead
        self._tree[root] = top
        del self._tree[child], self._data[child], self._lead[below]
        self._size[top] += self._size[below]
        self._next[below], self._next[top] = self._next[top], self._next[below]
        self.links += 1
        if merged != rdata:
            self._set(root, merged)
        return True

    # -- scopes --------------------------------------------------------------------------
    def mark(self) -> int:
        return len(self._trail)

    def undo(self, mark: int, *, forget: bool = True) -> None:
        """Undo every change made after ``mark``, in O(changes). ``forget=False`` leaves the
        ``undos`` counter alone, for a trial whose caller memoized nothing meanwhile."""
        trail = self._trail
        if len(trail) > mark and forget:
            self.undos += 1
        while len(trail) > mark:
            kind, sym, old = trail.pop()
            if kind == "data":
                self._data[sym] = old
            elif kind == "edge":
                self._parent[sym] = old
            elif kind == "new":
                for table in (self._data, self._lead, self._tree, self._size, self._next):
                    table.pop(sym, None)
            else:
                self._unlink(sym, old)

    def _unlink(self, below: sympy.Symbol, u: _Undo) -> None:
        del self._parent[below]
        self._lead[u.tree_child], self._lead[u.tree_root] = u.lead_child, u.lead_root
        self._tree[u.child], self._tree[u.root] = u.tree_child, u.tree_root
        self._data[u.child] = u.data_child
        self._size[u.top] -= self._size[below]
        self._next[below], self._next[u.top] = self._next[u.top], self._next[below]
        self.links += 1


def _meet(cdata: ClassData, rdata: ClassData, coef: int, offset: int) -> ClassData | None:
    """The data of a merged class (on the root), child == coef*root + offset; None if empty."""
    rng = intersect(rdata.range, _preimage(cdata.range, coef, offset))
    on_root = cg.solve_linear(coef, offset, cdata.cong)
    cong = cg.combine(rdata.cong, on_root) if on_root is not None else None
    if cong is None:
        return None
    excluded = set(rdata.excluded)
    for v in cdata.excluded:
        if (v - offset) % coef == 0:
            excluded.add((v - offset) // coef)
    return ClassData(rng, cong, frozenset(excluded), cdata.residual or rdata.residual).normalized()
