"""Shared oracles and Hypothesis strategies for the solver tests.

Two independent oracles:

* :func:`brute` enumerates every point of a small box and evaluates facts and questions
  with :func:`shapes.evaluate` (exact Python ints, independent of sympy simplification).
* :class:`Z3Oracle` encodes the facts directly in Z3, written here independently of
  ``solver.kernel.smt``: floor division and modulo by a constant are encoded with a fresh integer
  quotient and the defining inequalities, never with Z3's own ``div``/``mod``.

``COUNTS`` collects figures that ``conftest.pytest_terminal_summary`` prints at the end.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import sympy
import z3

try:
    import numpy as np
except ImportError:  # (the oracle then evaluates point by point)
    np = None  # type: ignore[assignment]
from hypothesis import strategies as st

from shapes import FloorDiv, evaluate, int_symbol
from solver import Truth

COUNTS: Counter[str] = Counter()

REL_OPS = (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)
NONZERO_DIVISORS = (-4, -3, -2, -1, 1, 2, 3, 4, 5)
SYMS = tuple(int_symbol(n) for n in ("x", "y", "z"))


# -- facts that hold at an example point ---------------------------------------------
HINTED_KINDS = ("le", "le", "sum", "lower", "upper", "eq")
"""The kinds of :func:`fact_at_hint`, weighted (a random choice picks ``le`` twice as often)."""


def fact_at_hint(rng, hint: dict, kind: str, a: sympy.Symbol, b: sympy.Symbol, c: sympy.Symbol) -> sympy.Basic:
    """A linear fact of ``kind`` on the symbols ``a, b, c`` (already sampled by the caller,
    so each test keeps its own random stream) that holds at the point ``hint``: ``a <= b +
    k``, ``a + b <= c + k``, a lower or upper bound of ``a`` near its value, or a link
    ``a == b + k`` (classes merge)."""
    if kind == "le":
        return sympy.Le(a, b + max(0, hint[a] - hint[b]) + rng.randint(0, 1))
    if kind == "sum":
        return sympy.Le(a + b, c + max(0, hint[a] + hint[b] - hint[c]) + rng.randint(0, 1))
    if kind == "lower":
        return sympy.Ge(a, hint[a] - rng.randint(0, 2))
    if kind == "upper":
        return sympy.Le(a, hint[a] + rng.randint(0, 2))
    return sympy.Eq(a, b + hint[a] - hint[b])


# -- brute force ---------------------------------------------------------------------
def box(ranges: Sequence[tuple[int, int]]) -> list[dict[sympy.Symbol, int]]:
    """Every point of the box ``ranges`` (one ``(lo, hi)`` per symbol of SYMS, in order)."""
    syms = SYMS[: len(ranges)]
    return [dict(zip(syms, p)) for p in itertools.product(*(range(lo, hi + 1) for lo, hi in ranges))]


def values(expr: sympy.Basic, points: list[dict[sympy.Symbol, int]]) -> list[object] | None:
    """``expr`` at every point, or None when some point divides by zero."""
    try:
        return [evaluate(expr, p) for p in points]
    except ZeroDivisionError:
        return None


class Box:
    """Brute force over fixed points, remembering where each relation holds.

    The oracle tests grow their problems one fact at a time and check after every step, so
    the same facts are evaluated again and again; here each distinct relation is evaluated
    once per point (with :func:`shapes.evaluate`, as before) and the feasible points of a
    fact list are the intersection of its facts' sets.

    >>> x = SYMS[0]
    >>> b = Box(box([(0, 5)]))
    >>> [p[x] for p in b.feasible([sympy.Ge(x, 2), sympy.Ne(x, 4)])]
    [2, 3, 5]
    >>> b.truth([sympy.Ge(x, 2)], sympy.Ge(x, 1)), b.truth([sympy.Ge(x, 2)], sympy.Eq(x, 3))
    (<Truth.TRUE: 'true'>, <Truth.UNKNOWN: 'unknown'>)
    """

    def __init__(self, points: Sequence[dict[sympy.Symbol, int]]) -> None:
        self.points = list(points)
        self._all = frozenset(range(len(self.points)))
        self._holds: dict[sympy.Basic, frozenset[int]] = {}

    def holds(self, rel: sympy.Basic) -> frozenset[int]:
        """The indices of the points where ``rel`` holds."""
        got = self._holds.get(rel)
        if got is None:
            got = self._vectorized(rel)
            if got is None:
                got = frozenset(i for i, p in enumerate(self.points) if evaluate(rel, p))
            self._holds[rel] = got
        return got

    def _vectorized(self, rel: sympy.Basic) -> frozenset[int] | None:
        """``holds`` over all points at once (numpy, int64) for a relation of plain integer
        arithmetic (no floor division), cross-checked against :func:`shapes.evaluate` on a
        sample of the points of each answer; None (then :func:`shapes.evaluate` decides every
        point, as before) when numpy cannot take it or a checked point disagrees."""
        if np is None or not self.points or not rel.free_symbols <= set(self.points[0]) or rel.has(FloorDiv):
            return None
        syms = sorted(rel.free_symbols, key=str)
        cols = self.__dict__.setdefault("_cols", {})
        for x in syms:
            if x not in cols:
                cols[x] = np.fromiter((p[x] for p in self.points), dtype=np.int64, count=len(self.points))
        try:
            with np.errstate(all="raise"):
                out = np.broadcast_to(np.asarray(sympy.lambdify(syms, rel, modules="numpy")(*(cols[x] for x in syms))),
                                      (len(self.points),))
        except Exception:  # noqa: BLE001 - what numpy cannot compute, evaluate does point by point
            return None
        if out.dtype != np.bool_:
            return None
        true, false = np.nonzero(out)[0], np.nonzero(~out)[0]
        sample = [*true[::97][:64], *false[::97][:64], *true[-3:], *false[-3:]]
        if any(bool(out[i]) != bool(evaluate(rel, self.points[i])) for i in sample):
            return None
        return frozenset(true.tolist())

    def feasible_ids(self, facts: Sequence[sympy.Basic]) -> frozenset[int]:
        ids = self._all
        for f in facts:
            ids = ids & self.holds(f)
        return ids

    def feasible(self, facts: Sequence[sympy.Basic]) -> list[dict[sympy.Symbol, int]]:
        """The points where every fact holds, in the box's order."""
        return [self.points[i] for i in sorted(self.feasible_ids(facts))]

    def truth(self, facts: Sequence[sympy.Basic], q: sympy.Basic) -> Truth:
        """``q`` over the feasible points of ``facts``, as :func:`truth_of` tells it."""
        ids = self.feasible_ids(facts)
        yes = ids & self.holds(q)
        return truth_of([True] * bool(yes) + [False] * bool(ids - yes))


def truth_of(bools: Sequence[bool]) -> Truth:
    """TRUE / FALSE when every feasible point agrees, else UNKNOWN (vacuous -> TRUE)."""
    seen = set(bools)
    if seen == {False}:
        return Truth.FALSE
    if seen <= {True}:
        return Truth.TRUE
    return Truth.UNKNOWN


# -- strategies ------------------------------------------------------------------------
def _safe(build, fallback):
    try:
        return build()
    except ZeroDivisionError:
        return fallback


ALL_KINDS = ("add", "sub", "mul", "scale", "mod", "floordiv", "floor", "min", "max", "symdiv", "symmod",
             "affine")


@st.composite
def expressions(draw, syms: Sequence[sympy.Symbol], depth: int = 3, *, kinds: Sequence[str] = ALL_KINDS,
                divisors: Sequence[int] = NONZERO_DIVISORS, scales: Sequence[int] = (-3, -2, 2, 3),
                leaf_max: int = 6) -> sympy.Expr:
    """A random expression over ``syms`` from the operators in ``kinds`` (default: every
    supported one).

    Constant divisors include negative ones; a symbolic divisor appears now and then
    (cases that divide by zero somewhere are skipped by the tests).
    """
    leaf = st.one_of(st.sampled_from(list(syms)), st.integers(-4, leaf_max).map(sympy.Integer))
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(leaf)
    kind = draw(st.sampled_from(list(kinds)))
    sub = expressions(syms, depth - 1, kinds=kinds, divisors=divisors, scales=scales, leaf_max=leaf_max)
    a = draw(sub)
    if kind == "add":
        return a + draw(sub)
    if kind == "sub":
        return a - draw(sub)
    if kind == "mul":
        return a * draw(sub)
    if kind == "scale":
        return draw(st.sampled_from(list(scales))) * a
    if kind == "affine":
        return draw(st.integers(-3, 3)) * draw(st.sampled_from(list(syms))) + draw(st.integers(-4, 4))
    if kind in ("mod", "floordiv"):
        k = sympy.Integer(draw(st.sampled_from(list(divisors))))
        return sympy.Mod(a, k) if kind == "mod" else FloorDiv(a, k)
    if kind == "floor":
        k = draw(st.sampled_from([2, 3, -2, 4]))
        return sympy.floor(a / k)
    if kind in ("min", "max"):
        rest = draw(st.lists(sub, min_size=1, max_size=2))
        return (sympy.Min if kind == "min" else sympy.Max)(a, *rest)
    b = draw(sub)
    if kind == "symdiv":
        return _safe(lambda: FloorDiv(a, b), a)
    return _safe(lambda: sympy.Mod(a, b), a)


@st.composite
def relations(draw, syms: Sequence[sympy.Symbol], depth: int = 2, bool_depth: int = 1) -> sympy.Basic:
    """A comparison of two random expressions, sometimes under And / Or / Not."""
    if bool_depth > 0 and draw(st.integers(0, 4)) == 0:
        kind = draw(st.sampled_from(["and", "or", "not"]))
        sub = relations(syms, depth, bool_depth - 1)
        if kind == "not":
            return sympy.Not(draw(sub))
        parts = draw(st.lists(sub, min_size=2, max_size=3))
        return (sympy.And if kind == "and" else sympy.Or)(*parts)
    op = draw(st.sampled_from(REL_OPS))
    return op(draw(expressions(syms, depth)), draw(expressions(syms, depth - 1)))


@st.composite
def facts(draw, syms: Sequence[sympy.Symbol]) -> sympy.Basic:
    """A fact: mostly the shapes that the union-find absorbs, sometimes anything."""
    kind = draw(st.sampled_from(["link", "bound", "ne", "mod", "linear2", "any"]))
    x, y = draw(st.permutations(list(syms)))[:2]
    c = draw(st.integers(-3, 4))
    if kind == "link":
        return sympy.Eq(x, draw(st.sampled_from([1, 2, -1, 3])) * y + c)
    if kind == "bound":
        return draw(st.sampled_from(REL_OPS[2:]))(draw(st.sampled_from([1, 2, -1, -2])) * x, c)
    if kind == "ne":
        return sympy.Ne(x, c)
    if kind == "mod":
        k = draw(st.sampled_from([2, 3, 4]))
        return sympy.Eq(sympy.Mod(draw(st.sampled_from([1, 2, 3, -1])) * x + c, k), draw(st.integers(0, k - 1)))
    if kind == "linear2":
        op = draw(st.sampled_from(REL_OPS))
        return op(draw(st.integers(-3, 3)) * x + draw(st.integers(-3, 3)) * y, c)
    return draw(relations(syms, depth=2, bool_depth=1))


@st.composite
def bounded_ranges(draw, n: int) -> list[tuple[int, int]]:
    out = []
    for _ in range(n):
        lo = draw(st.integers(-3, 8))
        out.append((lo, draw(st.integers(lo, min(8, lo + 9)))))
    return out


# -- the independent Z3 oracle ----------------------------------------------------------
class Z3Oracle:
    """Facts encoded directly in Z3; ``decide`` by two satisfiability checks.

    Quotients are fresh integers ``q`` with ``k*q <= a <= k*q + k - 1`` (``k > 0``) or
    ``k*q + k + 1 <= a <= k*q`` (``k < 0``): Python's floor division, by definition.
    """

    def __init__(self, ranges: dict[sympy.Symbol, tuple[int | None, int | None]], timeout_ms: int = 2000):
        self.s = z3.Solver()
        self.s.set("timeout", timeout_ms)
        self.vars = {sym: z3.Int("o_" + sym.name) for sym in ranges}
        self._fresh = 0
        for sym, (lo, hi) in ranges.items():
            if lo is not None:
                self.s.add(self.vars[sym] >= lo)
            if hi is not None:
                self.s.add(self.vars[sym] <= hi)

    def _quotient(self, a: z3.ArithRef, k: int) -> z3.ArithRef:
        self._fresh += 1
        q = z3.Int(f"o_q{self._fresh}")
        if k > 0:
            self.s.add(k * q <= a, a <= k * q + k - 1)
        else:
            self.s.add(k * q + k + 1 <= a, a <= k * q)
        return q

    def term(self, e: sympy.Basic) -> z3.ExprRef:  # noqa: C901 - one dispatch
        if e is sympy.true or e is sympy.false:
            return z3.BoolVal(e is sympy.true)
        if e.is_Integer:
            return z3.IntVal(int(e))
        if e.is_Symbol:
            return self.vars[e]
        if isinstance(e, sympy.floor):
            num, den = sympy.fraction(sympy.together(e.args[0]))
            return self._quotient(self.term(sympy.expand(num)), int(den))
        t = [self.term(a) for a in e.args]
        if isinstance(e, sympy.Add):
            return z3.Sum(t)
        if isinstance(e, sympy.Mul):
            return z3.Product(t)
        if isinstance(e, sympy.Pow):
            return z3.Product([t[0]] * int(e.args[1]))
        if isinstance(e, (FloorDiv, sympy.Mod)):
            if not e.args[1].is_Integer:
                raise NotImplementedError("symbolic divisor")
            k = int(e.args[1])
            q = self._quotient(t[0], k)
            return q if isinstance(e, FloorDiv) else t[0] - k * q
        if isinstance(e, (sympy.Min, sympy.Max)):
            acc = t[0]
            for u in t[1:]:
                acc = z3.If(u < acc, u, acc) if isinstance(e, sympy.Min) else z3.If(u > acc, u, acc)
            return acc
        ops = {sympy.Eq: lambda a, b: a == b, sympy.Ne: lambda a, b: a != b, sympy.Lt: lambda a, b: a < b,
               sympy.Le: lambda a, b: a <= b, sympy.Gt: lambda a, b: a > b, sympy.Ge: lambda a, b: a >= b}
        if type(e) in ops:
            return ops[type(e)](*t)
        if isinstance(e, sympy.And):
            return z3.And(t)
        if isinstance(e, sympy.Or):
            return z3.Or(t)
        if isinstance(e, sympy.Not):
            return z3.Not(t[0])
        raise NotImplementedError(str(e))

    def add(self, rel: sympy.Basic) -> None:
        self.s.add(self.term(rel))

    def sat(self, extra: Sequence[z3.ExprRef] = ()) -> str:
        r = self.s.check(*extra)
        return "sat" if r == z3.sat else "unsat" if r == z3.unsat else "unknown"

    def decide(self, rel: sympy.Basic) -> Truth | None:
        """The exact answer, or None when Z3 gives up."""
        t = self.term(rel)
        pos, neg = self.sat([t]), self.sat([z3.Not(t)])
        if "unknown" in (pos, neg):
            return None
        if pos == "unsat" and neg == "unsat":
            return Truth.TRUE  # facts contradict: vacuous
        if neg == "unsat":
            return Truth.TRUE
        if pos == "unsat":
            return Truth.FALSE
        return Truth.UNKNOWN
