"""An affine union-find over integer symbols, with per-class facts merged by meet.

Each symbol is ``coef * root + offset`` of its class's root (``coef`` a nonzero int). A
plain equality ``x == y`` gives coef 1, offset 0; a derived dim ``c == 2*b + 1`` links
``c`` below ``b`` with coef 2, offset 1. Each root carries its range (an interval), a
congruence and a set of excluded values; linking intersects them (the meet) and an empty
meet is reported, never silently kept. Every change is logged on a trail so scopes undo
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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy

from solver import congruence as cg
from solver.interval import Interval, ceil, floor, intersect

__all__ = ["UnionFind", "ClassData"]


@dataclass(frozen=True, slots=True)
class ClassData:
    """What is known of a root: range, congruence ``root = r (mod m)``, excluded values."""

    range: Interval
    cong: cg.Congruence = cg.TRIVIAL
    excluded: frozenset[int] = field(default_factory=frozenset)

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
        return ClassData((lo, hi), self.cong, kept)

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


class UnionFind:
    """Affine union-find with class data and an undo trail (see the module docstring)."""

    def __init__(self) -> None:
        self._parent: dict[sympy.Symbol, tuple[sympy.Symbol, int, int]] = {}
        self._data: dict[sympy.Symbol, ClassData] = {}
        self._members: dict[sympy.Symbol, list[sympy.Symbol]] = {}
        self._trail: list[tuple[str, Any, Any]] = []
        self._find_cache: dict[sympy.Symbol, tuple[sympy.Symbol, int, int]] = {}
        self.links = 0  # bumped whenever the class structure changes (link or undo of one)

    # -- structure -----------------------------------------------------------------
    def add(self, sym: sympy.Symbol, rng: Interval) -> None:
        """Register a new symbol as its own class with range ``rng``."""
        self._data[sym] = ClassData(rng)
        self._members[sym] = [sym]
        self._trail.append(("new", sym, None))

    def __contains__(self, sym: object) -> bool:
        return sym in self._parent or sym in self._data

    def find(self, sym: sympy.Symbol) -> tuple[sympy.Symbol, int, int]:
        """``(root, coef, offset)`` with ``sym == coef*root + offset``."""
        hit = self._find_cache.get(sym)
        if hit is not None:
            return hit
        root, coef, offset = sym, 1, 0
        while root in self._parent:
            parent, a, b = self._parent[root]
            # root == a*parent + b, sym == coef*root + offset
            root, coef, offset = parent, coef * a, coef * b + offset
        result = (root, coef, offset)
        self._find_cache[sym] = result
        return result

    def roots(self) -> list[sympy.Symbol]:
        return list(self._data)

    def members(self, root: sympy.Symbol) -> list[sympy.Symbol]:
        return list(self._members[root])

    def data(self, root: sympy.Symbol) -> ClassData:
        return self._data[root]

    def range_of(self, sym: sympy.Symbol) -> Interval:
        """The range of any symbol, mapped through its affine link to the root."""
        root, coef, offset = self.find(sym)
        lo, hi = self._data[root].range
        a = lo * coef + offset if lo not in (math.inf, -math.inf) else lo * coef
        b = hi * coef + offset if hi not in (math.inf, -math.inf) else hi * coef
        return (a, b) if a <= b else (b, a)

    # -- updates (each returns False when the meet is empty, leaving state unchanged) ----
    def _set(self, root: sympy.Symbol, data: ClassData) -> None:
        self._trail.append(("data", root, self._data[root]))
        self._data[root] = data

    def restrict(self, sym: sympy.Symbol, rng: Interval) -> bool:
        """Intersect the range of ``sym`` (mapped to its root) with ``rng``."""
        root, coef, offset = self.find(sym)
        old = self._data[root]
        new = ClassData(intersect(old.range, _preimage(rng, coef, offset)), old.cong, old.excluded)
        return self._commit(root, old, new)

    def exclude(self, sym: sympy.Symbol, value: int) -> bool:
        """Record ``sym != value``."""
        root, coef, offset = self.find(sym)
        if (value - offset) % coef:
            return True
        old = self._data[root]
        new = ClassData(old.range, old.cong, old.excluded | {(value - offset) // coef})
        return self._commit(root, old, new)

    def congruent(self, sym: sympy.Symbol, c: cg.Congruence) -> bool:
        """Record ``sym = r (mod m)``."""
        root, coef, offset = self.find(sym)
        old = self._data[root]
        on_root = cg.solve_linear(coef, offset, c)
        merged = cg.combine(old.cong, on_root) if on_root is not None else None
        if merged is None:
            return False
        return self._commit(root, old, ClassData(old.range, merged, old.excluded))

    def _commit(self, root: sympy.Symbol, old: ClassData, new: ClassData) -> bool:
        norm = new.normalized()
        if norm is None:
            return False
        if norm != old:
            self._set(root, norm)
        return True

    def link(self, x: sympy.Symbol, coef: int, y: sympy.Symbol, offset: int) -> bool:
        """Record ``x == coef*y + offset``. False if the classes' data cannot meet.

        When x's root cannot be expressed as an integer affine function of y's root (or vice
        versa) the caller keeps the fact for the later stages; here that returns True with no
        change only after a successful link, so callers check :meth:`can_link` first.
        """
        rx, ax, bx = self.find(x)
        ry, ay, by = self.find(y)
        # ax*rx + bx == coef*(ay*ry + by) + offset  ->  rx == (coef*ay*ry + coef*by + offset - bx)/ax
        a, b = coef * ay, coef * by + offset - bx
        if rx == ry:
            return True  # same class: the caller decides consistency via decide()
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
        """Make root ``child`` a member of ``root``'s class with child == coef*root + offset."""
        cdata, rdata = self._data[child], self._data[root]
        rng = intersect(rdata.range, _preimage(cdata.range, coef, offset))
        on_root = cg.solve_linear(coef, offset, cdata.cong)
        cong = cg.combine(rdata.cong, on_root) if on_root is not None else None
        if cong is None:
            return False
        excluded = set(rdata.excluded)
        for v in cdata.excluded:
            if (v - offset) % coef == 0:
                excluded.add((v - offset) // coef)
        merged = ClassData(rng, cong, frozenset(excluded)).normalized()
        if merged is None:
            return False
        self._trail.append(("link", child, (cdata, list(self._members[root]))))
        self._parent[child] = (root, coef, offset)
        del self._data[child]
        self._members[root] = self._members[root] + self._members.pop(child)
        self._find_cache.clear()
        self.links += 1
        if merged != rdata:
            self._set(root, merged)
        return True

    # -- scopes --------------------------------------------------------------------------
    def mark(self) -> int:
        return len(self._trail)

    def undo(self, mark: int) -> None:
        """Undo every change made after ``mark``."""
        while len(self._trail) > mark:
            kind, sym, old = self._trail.pop()
            if kind == "data":
                self._data[sym] = old
            elif kind == "new":
                self._data.pop(sym, None)
                self._members.pop(sym, None)
            else:  # link
                cdata, root_members = old
                root = self._parent.pop(sym)[0]
                self._data[sym] = cdata
                self._members[sym] = [m for m in self._members[root] if m not in set(root_members)]
                self._members[root] = root_members
                self.links += 1
        self._find_cache.clear()
