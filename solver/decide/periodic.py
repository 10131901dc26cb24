"""Congruences from periodic relations.

A relation over union-find roots built from linear terms, ``FloorDiv``/``Mod`` by integer
constants and ``Min``/``Max`` repeats in each root ``r`` with a period ``p`` (the lcm of the
divisors it meets, adjusted for coefficients and nesting): writing ``r = p*q + k`` folds every
``FloorDiv``/``Mod`` of ``r`` into a polynomial in ``q``. :func:`analyze` takes one case per
residue tuple ``k`` (one residue per root), evaluates the relation at the first point of the
ranges in that case (the candidate answer), then *proves* the answer for every ``q`` of the
ranges: the substituted relation must fold to a constant or be decided by interval bounds over
``q``. One unproven case and nothing is claimed.

When the residue tuples where the relation holds form a product of one congruence per root,
the relation is *equivalent*, under the ranges, to those congruences (``2*((c+1)//2) == c`` is
``c % 2 == 0``; ``h*w == 4*(h//2)*(w//2)`` with ``h, w >= 2`` is ``h % 2 == 0 and w % 2 == 0``),
and the union-find can keep it as class data. Otherwise the residue set is reported as is.

>>> from shapes import int_symbol
>>> c = int_symbol("c")
>>> found = analyze(sympy.Eq(2 * FloorDiv(c + 1, 2), c), lambda r: ((2, 64), (1, 0)))
>>> found.moduli, sorted(found.holds), found.congruences
((2,), [(0,)], ((c, (2, 0)),))
>>> L = int_symbol("L")
>>> unet = sympy.Eq(2 * FloorDiv(L - 1, 4) + 1, FloorDiv(L - 1, 2))
>>> found = analyze(unet, lambda r: ((8, 256), (1, 0)))
>>> sorted(found.holds), found.congruences        # L % 4 in {0, 3}: a residue set
([(0,), (3,)], None)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import FloorDiv, evaluate
from shapes.relation import BOOL_TYPES, RELATION_TYPES, as_difference
from solver.decide import stages
from solver.kernel import normal_form
from shapes.affine import linear_terms
from solver.kernel.congruence import TRIVIAL, Congruence
from solver.kernel.interval import Endpoint, Interval
from solver.truth import Truth
from solver.kernel.union_find import ClassData

__all__ = ["Periodicity", "ClassShape", "analyze", "class_shape", "period_of", "MAX_ROOTS", "MAX_PERIOD", "MAX_CASES",
           "MAX_EXCLUDED"]

MAX_ROOTS = 3
MAX_PERIOD = 64
MAX_CASES = 64

ClassLookup = Callable[[sympy.Symbol], tuple[Interval, Congruence]]
Case = tuple[int, ...]
_Shift = tuple[Fraction | None, int]  # (slope in r, or None when nonlinear; period in r)


@dataclass(frozen=True, slots=True)
class Periodicity:
    """What a periodic relation says about the residues of its roots.

    ``moduli[i]`` is the modulus of ``roots[i]``'s residues; ``cases`` the residue tuples that
    occur inside the ranges; ``holds`` those where the relation is true (proven for every value
    of the ranges in that case). ``congruences`` is one congruence per constrained root whose
    conjunction is equivalent to the relation under the ranges, or None when there is none.
    """

    roots: tuple[sympy.Symbol, ...]
    moduli: tuple[int, ...]
    cases: frozenset[Case]
    holds: frozenset[Case]
    congruences: tuple[tuple[sympy.Symbol, Congruence], ...] | None

    @property
    def always(self) -> bool:
        """The relation holds everywhere inside the ranges."""
        return self.holds == self.cases

    @property
    def never(self) -> bool:
        """The relation holds nowhere inside the ranges."""
        return not self.holds


# -- periods ---------------------------------------------------------------------------------

def period_of(e: sympy.Basic, r: sympy.Symbol) -> int | None:
    """A period of ``e`` in ``r``: ``r = p*q + k`` folds every ``FloorDiv``/``Mod`` of ``r``
    (their arguments must be linear in ``r`` with constant coefficients). None outside that
    language.

    >>> from shapes import int_symbol
    >>> r = int_symbol("r")
    >>> period_of(FloorDiv(r + 3, 4), r), period_of(FloorDiv(FloorDiv(r, 2) + 1, 3), r)
    (4, 6)
    >>> period_of(FloorDiv(3 * r, 6) - r, r), period_of(FloorDiv(r * r, 2), r) is None
    (2, True)
    """
    found = _shift(e, r)
    return None if found is None else found[1]


def _shift(e: sympy.Basic, r: sympy.Symbol) -> _Shift | None:
    """``(s, p)`` with ``e(r + t*p) == e(r) + s*t*p`` for every integer ``t`` (``s`` None:
    ``e`` is not linear in ``r``, only its divisions are periodic with period ``p``)."""
    if e.is_Rational or e in (sympy.true, sympy.false):
        return Fraction(0), 1
    if e.is_Symbol:
        return Fraction(int(e == r)), 1
    if isinstance(e, (FloorDiv, sympy.Mod)):
        return _shift_division(e, r)
    parts = [_shift(a, r) for a in e.args]
    if any(p is None for p in parts):
        return None
    period = math.lcm(*(p[1] for p in parts if p is not None))
    slopes = [p[0] for p in parts if p is not None]
    if isinstance(e, sympy.Add):
        known = [s for s in slopes if s is not None]
        return (sum(known, Fraction(0)) if len(known) == len(slopes) else None), period
    if isinstance(e, sympy.Mul):
        return _mul_slope(e, r), period
    if isinstance(e, (sympy.Min, sympy.Max)):
        return (slopes[0] if len(set(slopes)) == 1 else None), period
    if isinstance(e, sympy.Pow) or isinstance(e, RELATION_TYPES + BOOL_TYPES):
        return (Fraction(0) if r not in e.free_symbols else None), period
    return None


def _shift_division(e: sympy.Basic, r: sympy.Symbol) -> _Shift | None:
    a, k = e.args
    if not k.is_Integer or int(k) == 0:
        return None
    inner = _shift(a, r)
    if inner is None or inner[0] is None:
        return None
    s = inner[0] / int(k)
    return (s if isinstance(e, FloorDiv) else Fraction(0)), math.lcm(inner[1], s.denominator)


def _mul_slope(e: sympy.Mul, r: sympy.Symbol) -> Fraction | None:
    coeff, factors = e.as_coeff_mul()
    dependent = [f for f in factors if r in f.free_symbols]
    if not dependent:
        return Fraction(0)
    if len(dependent) != 1 or len(factors) != 1 or not coeff.is_Rational:
        return None
    inner = _shift(dependent[0], r)
    if inner is None or inner[0] is None:
        return None
    return Fraction(int(coeff.p), int(coeff.q)) * inner[0]


# -- the analysis ----------------------------------------------------------------------------

def analyze(rel: sympy.Basic, lookup: ClassLookup) -> Periodicity | None:
    """The residue tuples where ``rel`` holds, proven over the ranges, or None.

    ``lookup(root)`` gives the root's range and known congruence. None when ``rel`` has no
    ``FloorDiv``/``Mod``, too many roots, a non-periodic part, too many cases, or a case the
    proof cannot settle. The answer is exact: every value of the ranges (and known
    congruences) in a case of ``holds`` satisfies ``rel``, every other value does not.
    """
    if not rel.has(FloorDiv, sympy.Mod):
        return None
    roots = tuple(sorted(rel.free_symbols, key=lambda s: s.name))
    if not 1 <= len(roots) <= MAX_ROOTS or _drifts(rel, roots):
        return None
    layout = [_root_layout(rel, r, lookup(r)) for r in roots]
    if any(x is None for x in layout):
        return None
    moduli = tuple(x[0] for x in layout)  # type: ignore[index]
    occurring = [x[1] for x in layout]  # type: ignore[index]
    cases = list(itertools.product(*(sorted(o) for o in occurring)))
    if not cases or len(cases) > MAX_CASES:
        return None
    ranges = [lookup(r)[0] for r in roots]
    holds = []
    for case in cases:
        t = _case_truth(rel, roots, moduli, ranges, case)
        if t is None:
            return None
        if t:
            holds.append(case)
    held = frozenset(holds)
    congruences = _as_congruences(roots, moduli, occurring, held)
    return Periodicity(roots, moduli, frozenset(cases), held, congruences)


def _drifts(rel: sympy.Basic, roots: Sequence[sympy.Symbol]) -> bool:
    """A comparison in one root whose sides drift apart linearly (``(c + 1)//2 != 1``): not
    periodic, so no case analysis can settle it (the ranges decide it instead)."""
    if len(roots) != 1 or not isinstance(rel, RELATION_TYPES):
        return False
    found = _shift(rel.args[0] - rel.args[1], roots[0])
    return found is not None and found[0] is not None and found[0] != 0


def _root_layout(rel: sympy.Basic, r: sympy.Symbol, data: tuple[Interval, Congruence]) -> tuple[int, frozenset[int]] | None:
    """The modulus for ``r`` and the residues that occur in its range and known congruence."""
    p = period_of(rel, r)
    if p is None or p > MAX_PERIOD:
        return None
    (lo, hi), (m, c) = data
    if math.lcm(p, m) <= MAX_PERIOD:
        p = math.lcm(p, m)
    g = math.gcd(p, m)
    residues = frozenset(k for k in range(p) if (k - c) % g == 0 and _q_range(lo, hi, p, k)[0] <= _q_range(lo, hi, p, k)[1])
    return (p, residues) if residues else None


def _q_range(lo: object, hi: object, p: int, k: int) -> Interval:
    """``{q : lo <= p*q + k <= hi}`` as an interval (infinite ends kept)."""
    qlo = lo if isinstance(lo, float) else -((k - lo) // p)  # type: ignore[operator]
    qhi = hi if isinstance(hi, float) else (hi - k) // p  # type: ignore[operator]
    return qlo, qhi


def _case_truth(rel: sympy.Basic, roots: Sequence[sympy.Symbol], moduli: Sequence[int],
                ranges: Sequence[Interval], case: Case) -> bool | None:
    """The relation's value on one residue case: evaluated at the case's first point, then
    proven for every point of the case (None when the proof fails or disagrees)."""
    qs = [sympy.Dummy(f"q_{r.name}", integer=True) for r in roots]  # fresh: never a user symbol
    q_ranges = {q: _q_range(lo, hi, p, k) for q, (lo, hi), p, k in zip(qs, ranges, moduli, case)}
    start = {r: p * _first(q_ranges[q]) + k for r, q, p, k in zip(roots, qs, moduli, case)}
    try:
        candidate = bool(evaluate(rel, start))
    except (ZeroDivisionError, UnsupportedExpressionError):
        return None
    env = {r: p * q + k for r, q, p, k in zip(roots, qs, moduli, case)}
    try:
        proved = _truth(_substitute(rel, env), q_ranges.__getitem__)
    except (ZeroDivisionError, UnsupportedExpressionError, TypeError):
        return None
    if proved is None or proved is Truth.UNKNOWN or (proved is Truth.TRUE) != candidate:
        return None
    return candidate


def _first(rng: Interval) -> int:
    lo, hi = rng
    if not isinstance(lo, float):
        return int(lo)
    return 0 if isinstance(hi, float) else int(hi)


def _substitute(e: sympy.Basic, env: dict[sympy.Symbol, sympy.Expr]) -> sympy.Basic:
    """``e`` with ``env`` substituted bottom-up, divisions rebuilt on expanded arguments so
    that ``FloorDiv(p*q + c, k)`` folds when ``k`` divides ``p``."""
    if e.is_Symbol:
        return env.get(e, e)
    if not e.args:
        return e
    args = [_substitute(a, env) for a in e.args]
    if isinstance(e, (FloorDiv, sympy.Mod)):
        a, k = sympy.expand(args[0]), args[1]
        quotient = FloorDiv(a, k)
        return quotient if isinstance(e, FloorDiv) else sympy.expand(a - k * quotient)
    if isinstance(e, (sympy.Min, sympy.Max)):
        return _fold_minmax(e.func, args)
    if isinstance(e, RELATION_TYPES):
        return e.func(*args, evaluate=False)  # sympy's own evaluation asks costly assumptions
    return e.func(*args)


def _fold_minmax(func: type, args: list[sympy.Basic]) -> sympy.Basic:
    """``Min``/``Max`` without the arguments that differ from another by a constant in the
    losing direction (``Min(q + 1, q + 2)`` is ``q + 1``); unevaluated otherwise."""
    kept: list[sympy.Basic] = []
    sign = 1 if func is sympy.Min else -1
    for a in args:
        for i, b in enumerate(kept):
            diff = sympy.expand(a - b)
            if diff.is_Integer:
                if sign * int(diff) < 0:
                    kept[i] = a
                break
        else:
            kept.append(a)
    return kept[0] if len(kept) == 1 else func(*kept, evaluate=False)


def _truth(rel: sympy.Basic, lookup: Callable[[sympy.Symbol], Interval]) -> Truth | None:
    """Decide ``rel`` over the box ``lookup`` by constants and interval bounds only."""
    if rel is sympy.true or rel is sympy.false:
        return Truth.of(rel is sympy.true)
    if isinstance(rel, sympy.Not):
        t = _truth(rel.args[0], lookup)
        return None if t is None else t.negate()
    if isinstance(rel, (sympy.And, sympy.Or)):
        parts = [_truth(a, lookup) for a in rel.args]
        absorbing = Truth.FALSE if isinstance(rel, sympy.And) else Truth.TRUE
        if absorbing in parts:
            return absorbing
        return absorbing.negate() if all(p is absorbing.negate() for p in parts) else None
    if not isinstance(rel, RELATION_TYPES):
        return None
    op, d = as_difference(rel)
    view = normal_form.View(lookup, lambda r: ClassData(lookup(r), TRIVIAL), lambda r: False)  # ranges only
    for attempt in range(2):
        q = normal_form.Question(op, d)
        t = stages.by_constant(q, view)
        t = t if t is not None else stages.by_interval(q, view)
        if t is not None or attempt or d.has(sympy.Min, sympy.Max):
            return t
        op, d = normal_form.normalize(op, d, lookup)  # a product whose factors have known signs
    return None


# -- congruences -----------------------------------------------------------------------------

def _as_congruences(roots: Sequence[sympy.Symbol], moduli: Sequence[int], occurring: Sequence[frozenset[int]],
                    holds: frozenset[Case]) -> tuple[tuple[sympy.Symbol, Congruence], ...] | None:
    """One congruence per constrained root whose conjunction is ``holds``, or None."""
    if not holds:
        return None
    projections = [frozenset(case[i] for case in holds) for i in range(len(roots))]
    if len(holds) != math.prod(len(p) for p in projections):
        return None  # not a product of per-root sets
    out = []
    for r, p, occ, kept in zip(roots, moduli, occurring, projections):
        if kept == occ:
            continue
        c = _single_class(p, occ, kept)
        if c is None:
            return None
        out.append((r, c))
    return tuple(out)


def _single_class(p: int, occurring: frozenset[int], kept: frozenset[int]) -> Congruence | None:
    """The coarsest ``(g, k)`` with ``g | p`` that keeps exactly ``kept`` of ``occurring``.

    >>> _single_class(4, frozenset(range(4)), frozenset({0, 2}))
    (2, 0)
    >>> _single_class(4, frozenset(range(4)), frozenset({0, 3})) is None
    True
    """
    dropped = occurring - kept
    for g in (d for d in range(2, p + 1) if p % d == 0):
        k = min(kept) % g
        if all(v % g == k for v in kept) and all(v % g != k for v in dropped):
            return g, k
    return None


# -- one class with drift: ranges, congruence and holes ---------------------------------------

MAX_EXCLUDED = 16


@dataclass(frozen=True, slots=True)
class ClassShape:
    """A one-class relation as class data: ``root`` in ``range``, ``root = k (mod g)`` for
    ``cong == (g, k)``, and ``root`` not in ``excluded``; equivalent to the relation on the
    values the class admitted before."""

    root: sympy.Symbol
    range: Interval
    cong: Congruence
    excluded: frozenset[int]


def class_shape(rel: sympy.Basic, lookup: ClassLookup) -> ClassShape | None:
    """A comparison in one root that, on each residue case ``r = p*q + k``, is constant or
    linear in ``q`` (``(c + 1)//2 != 1`` is ``c not in {1, 2}``; ``n//4 >= 2`` is ``n >= 8``),
    as class data; None when it is not, or when it needs more than MAX_EXCLUDED holes.

    >>> from shapes import int_symbol
    >>> c = int_symbol("c")
    >>> class_shape(sympy.Ne(FloorDiv(c + 1, 2), 1), lambda r: ((2, 64), (1, 0)))
    ClassShape(root=c, range=(2, 64), cong=(1, 0), excluded=frozenset({2}))
    >>> class_shape(sympy.Eq(FloorDiv(c, 4), 3), lambda r: ((0, 64), (2, 0))).range
    (12, 14)
    """
    if not isinstance(rel, RELATION_TYPES) or len(rel.free_symbols) != 1 or not rel.has(FloorDiv, sympy.Mod):
        return None
    (r,) = rel.free_symbols
    layout = _root_layout(rel, r, lookup(r))
    if layout is None:
        return None
    p, occurring = layout
    (lo, hi), _ = lookup(r)
    pieces = {k: _piece(rel, r, p, k, _q_range(lo, hi, p, k)) for k in sorted(occurring)}
    if any(v is None for v in pieces.values()):
        return None
    kept = {k: v for k, v in pieces.items() if v is not None and v[0] <= v[1]}
    if not kept:
        return None
    cong = _single_class(p, occurring, frozenset(kept)) if len(kept) < len(occurring) else (1, 0)
    if cong is None:
        return None
    new_lo = min(a if isinstance(a, float) else p * int(a) + k for k, (a, _, _) in kept.items())
    new_hi = max(b if isinstance(b, float) else p * int(b) + k for k, (_, b, _) in kept.items())
    excluded = _holes(p, kept, new_lo, new_hi)
    if excluded is None:
        return None
    return ClassShape(r, (new_lo, new_hi), cong, excluded)


_Piece = tuple[Endpoint, Endpoint, int | None]  # q in [a, b] except the point (None: no hole); a > b: empty


def _piece(rel: sympy.Basic, r: sympy.Symbol, p: int, k: int, q_rng: Interval) -> _Piece | None:
    """The values of ``q`` (in ``q_rng``) where ``rel`` holds at ``r = p*q + k``, when the
    substituted relation is constant or linear in ``q``; checked by evaluation at its ends."""
    q = sympy.Dummy("q", integer=True)
    try:
        op, d = as_difference(_substitute(rel, {r: p * q + k}))
    except (ZeroDivisionError, UnsupportedExpressionError, TypeError):
        return None
    lin = linear_terms(d)
    if lin is None or set(lin[0]) - {q}:
        return None
    a, b = lin[0].get(q, 0), lin[1]
    qlo, qhi = q_rng
    piece: _Piece
    if a == 0:
        holds = b == 0 if op == "==" else b != 0 if op == "!=" else b >= 0
        piece = (qlo, qhi, None) if holds else (1, 0, None)
    elif op == ">=":  # a*q + b >= 0
        t = -(b // a) if a > 0 else b // (-a)  # q >= ceil(-b/a) for a > 0, q <= floor(-b/a) for a < 0
        piece = (max(qlo, t), qhi, None) if a > 0 else (qlo, min(qhi, t), None)
    elif b % a:
        piece = (1, 0, None) if op == "==" else (qlo, qhi, None)
    else:
        q0 = -b // a
        inside = qlo <= q0 <= qhi
        if op == "==":
            piece = (q0, q0, None) if inside else (1, 0, None)
        else:
            piece = (qlo, qhi, q0 if inside else None)
    return piece if _agrees(rel, r, p, k, q_rng, piece) else None


def _agrees(rel: sympy.Basic, r: sympy.Symbol, p: int, k: int, q_rng: Interval, piece: _Piece) -> bool:
    """The piece predicts ``rel`` at the case's ends, the piece's ends and its hole."""
    a, b, hole = piece
    points = {v for v in (q_rng[0], q_rng[1], a, b, hole) if isinstance(v, int)}
    points |= {v + 1 for v in points} | {v - 1 for v in points}
    for v in points:
        if not q_rng[0] <= v <= q_rng[1]:
            continue
        expected = a <= v <= b and v != hole
        try:
            if bool(evaluate(rel, {r: p * v + k})) != expected:
                return False
        except (ZeroDivisionError, UnsupportedExpressionError):
            return False
    return True


def _holes(p: int, kept: dict[int, _Piece], lo: Endpoint, hi: Endpoint) -> frozenset[int] | None:
    """The values of the kept cases inside ``[lo, hi]`` that their pieces leave out."""
    out: set[int] = set()
    for k, (a, b, hole) in kept.items():
        first, last = _q_range(lo, hi, p, k)
        gaps: list[tuple[Endpoint, Endpoint]] = []
        if a != first:
            gaps.append((first, a - 1))
        if b != last:
            gaps.append((b + 1, last))
        for x, y in gaps:
            if isinstance(x, float) or isinstance(y, float) or y - x + 1 + len(out) > MAX_EXCLUDED:
                return None
            out |= {p * v + k for v in range(int(x), int(y) + 1)}
        if hole is not None:
            out.add(p * hole + k)
    return frozenset(out) if len(out) <= MAX_EXCLUDED else None
