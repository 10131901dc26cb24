"""The solver facade: symbols, facts, decisions, final state.

>>> import sympy
>>> s = Solver()
>>> b = s.symbol("b", lo=2, hi=64)
>>> c = s.symbol("c", lo=2, hi=None)
>>> s.assume(sympy.Eq(c, 2 * b))
>>> s.decide(sympy.Ge(c, 4))
<Truth.TRUE: 'true'>
>>> s.decide(sympy.Eq(sympy.Mod(c, 4), 0))
<Truth.UNKNOWN: 'unknown'>
>>> s.bounds(c)
(4, 128)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import FloorDiv, canonical, canonical_name, check_supported, evaluate, int_symbol
from shapes.relation import BOOL_TYPES, RELATION_TYPES, as_difference, is_relation, negate
from solver import codec, enumeration, periodic, stages
from solver.fixes import Fixes, synthesize
from solver.congruence import solve_linear
from solver.errors import (
    ContradictionError,
    HintMismatchError,
    SolverError,
    UndecidedGuardError,
    UnknownSymbolError,
)
from solver.interval import Endpoint, Interval, bound
from solver.smt import DEFAULT_RLIMIT, Smt
from solver.truth import Fact, Reason, Truth
from solver.union_find import UnionFind

__all__ = ["Solver", "SymbolInfo", "GuardRecord", "Violation", "DEFAULT_ENUM_LIMIT"]

DEFAULT_ENUM_LIMIT = 20_000
_SETTLED = Reason("guard", None, None, "settled by the facts")
DECLARED = "declared range"  # Reason.op of the facts that Solver.symbol records
_RELATION_OF = {"==": sympy.Eq, "!=": sympy.Ne, ">=": sympy.Ge}
_FAST_OPS = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Ge: ">=", sympy.Gt: ">", sympy.Le: "<=", sympy.Lt: "<"}


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    """A declared symbol: range ``[lo, hi]`` (None = unbounded), example value, source."""

    symbol: sympy.Symbol
    lo: int | None
    hi: int | None
    hint: int | None = None
    source: str | None = None
    order: int = 0


@dataclass(frozen=True, slots=True)
class GuardRecord:
    """One question of the guard stream: the relation, the hint, the answer and how it came."""

    rel: sympy.Basic
    hint: bool | None
    result: bool
    decided: Truth
    reason: Reason


@dataclass(frozen=True, slots=True)
class Violation:
    """A recorded guard (or trace assumption) that the spec facts do not imply."""

    fact: Fact
    truth_under_spec: Truth


class Solver:
    """The constraint engine (see the module docstring and DESIGN.md section 2)."""

    def __init__(self, *, rlimit: int = DEFAULT_RLIMIT, enum_limit: int = DEFAULT_ENUM_LIMIT) -> None:
        self._uf = UnionFind()
        self._smt = Smt(rlimit)
        self._enum_limit = enum_limit
        self._symbols: dict[sympy.Symbol, SymbolInfo] = {}
        self._by_name: dict[str, sympy.Symbol] = {}
        self._facts: list[Fact] = []
        self._residual: list[int] = []
        self._guards: list[GuardRecord] = []
        self._cache: dict[sympy.Basic, Truth] = {}  # TRUE/FALSE answers: more facts never change them
        self._open: dict[sympy.Basic, Truth] = {}  # UNKNOWN answers: void after each new fact
        self._links_seen = 0
        self._norm: dict[sympy.Basic, tuple[str, sympy.Expr]] = {}  # rooted relation -> normal form
        self._minmax: dict[sympy.Basic, sympy.Basic] = {}  # relation -> Min/Max pruned
        self._hints: dict[sympy.Symbol, int] = {}
        self._root_form: dict[sympy.Basic, sympy.Basic] = {}
        self._dirty: set[sympy.Symbol] | None = None
        self._hints_ok = True
        self._scopes: list[tuple[int, int, int, int, bool]] = []
        self.stats: Counter[str] = Counter()

    # -- declaration ---------------------------------------------------------------
    def symbol(
        self,
        name: str,
        lo: int | None = 0,
        hi: int | None = None,
        *,
        hint: int | None = None,
        source: str | None = None,
    ) -> sympy.Symbol:
        """Declare an integer symbol with range ``[lo, hi]`` (None: unbounded) and return it."""
        if not isinstance(name, str) or not name:
            raise SolverError(f"symbol name must be a non-empty string, got {name!r}")
        name, spelled = canonical_name(name), name  # NFKC, as the parser reads identifiers
        if name in self._by_name:
            raise SolverError(f"symbol {name!r} is already declared" + (f" ({spelled!r} is {name!r} in NFKC form)" if spelled != name else ""))
        for label, v in (("lo", lo), ("hi", hi), ("hint", hint)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise SolverError(f"symbol {name!r}: {label} must be an int or None, got {v!r}")
        if lo is not None and hi is not None and lo > hi:
            raise SolverError(f"symbol {name!r}: empty range, lo={lo} > hi={hi}")
        if hint is not None and not ((lo is None or lo <= hint) and (hi is None or hint <= hi)):
            raise HintMismatchError(
                f"symbol {source or name!r}: example value {hint} is outside its declared range "
                f"[{lo}, {'inf' if hi is None else hi}]"
            )
        sym = int_symbol(name)
        info = SymbolInfo(sym, lo, hi, hint, source, len(self._symbols))
        self._symbols[sym] = info
        self._by_name[name] = sym
        self._uf.add(sym, (-math.inf if lo is None else lo, math.inf if hi is None else hi))
        parts = ([sympy.Ge(sym, lo)] if lo is not None else []) + ([sympy.Le(sym, hi)] if hi is not None else [])
        if parts:
            rel = sympy.And(*parts)
            text = f"{source or name} in [{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
            self._facts.append(Fact(rel, Reason("spec", text, op=DECLARED), len(self._facts)))
            self._smt.add(rel)
        if hint is None:
            self._hints_ok = False
        else:
            self._hints[sym] = hint
        return sym

    @property
    def symbols(self) -> tuple[SymbolInfo, ...]:
        return tuple(self._symbols.values())

    def info(self, sym: sympy.Symbol) -> SymbolInfo:
        try:
            return self._symbols[sym]
        except KeyError:
            raise UnknownSymbolError(f"{sym} was never declared with Solver.symbol") from None

    @property
    def facts(self) -> tuple[Fact, ...]:
        return tuple(self._facts)

    @property
    def guards(self) -> tuple[GuardRecord, ...]:
        return tuple(self._guards)

    # -- input preparation -----------------------------------------------------------
    def _prepare(self, rel: object, what: str = "relation") -> sympy.Basic:
        if isinstance(rel, bool):
            return sympy.true if rel else sympy.false
        if not isinstance(rel, sympy.Basic):
            raise UnsupportedExpressionError(f"{what} must be a sympy expression, got {type(rel).__name__}: {rel!r}")
        prepared = canonical(rel)
        check_supported(prepared, what=what)
        for s in prepared.free_symbols:
            if s not in self._symbols:
                raise UnknownSymbolError(f"{what} {prepared} mentions {s}, which was never declared with Solver.symbol")
        return prepared

    def _to_roots(self, e: sympy.Basic) -> sympy.Basic:
        hit = self._root_form.get(e)
        if hit is not None:
            return hit
        subs = {}
        for s in e.free_symbols:
            root, a, b = self._uf.find(s)
            if root is not s:
                subs[s] = a * root + b
        out = e.xreplace(subs) if subs else e
        self._root_form[e] = out
        return out

    def _invalidate(self) -> None:
        """Forget every derived answer (facts were removed: a scope ended)."""
        self._norm.clear()
        self._minmax.clear()
        self._cache.clear()
        self._open.clear()
        self._root_form.clear()
        self._dirty = None

    def _learned(self, residual: int | None) -> None:
        """A fact was added: settled answers stay valid, open ones may not."""
        self._open.clear()
        find = self._uf.find
        if self._uf.links != self._links_seen:
            self._links_seen = self._uf.links
            self._root_form.clear()
            if self._dirty is not None:  # links only merge classes: a dirty class stays dirty
                self._dirty = {find(r)[0] for r in self._dirty}
        if residual is not None and self._dirty is not None:
            self._dirty |= {find(s)[0] for s in self._facts[residual].rel.free_symbols}

    # -- facts -------------------------------------------------------------------------
    def assume(self, rel: sympy.Basic, reason: Reason | None = None) -> None:
        """Add a fact. A fact that contradicts the known facts raises ContradictionError."""
        rel = self._prepare(rel, "fact")
        reason = reason or Reason.spec(str(rel))
        if not self._absorbs_cleanly(rel) and self.decide(rel) is Truth.FALSE:
            raise self._contradiction(rel, reason)
        self._add_fact(rel, reason)

    def _absorbs_cleanly(self, rel: sympy.Basic) -> bool:
        """Whether the union-find alone can take ``rel`` and judge its consistency: it folds
        into classes no residual fact touches, whose data (range, congruence, holes) then
        describes them exactly, so an empty meet is the only possible contradiction."""
        if not rel.free_symbols or {self._uf.find(x)[0] for x in rel.free_symbols} & self._dirty_roots():
            return False
        mark = self._uf.mark()
        try:
            return self._absorb(rel) is True
        finally:
            self._uf.undo(mark)
            self._root_form.clear()

    def _contradiction(self, rel: sympy.Basic, reason: Reason) -> ContradictionError:
        core = self._smt.core([f.rel for f in self._facts], rel)
        culprits = tuple(self._facts[i].reason for i in core) if core is not None else ()
        lines = "\n".join(f"  - {r.describe()}" for r in culprits + (reason,))
        return ContradictionError(f"{rel} contradicts what is already known:\n{lines}", culprits + (reason,))

    def _add_fact(self, rel: sympy.Basic, reason: Reason) -> None:
        mark = self._uf.mark()
        absorbed = self._absorb(rel)
        if absorbed is None:
            self._uf.undo(mark)
            raise self._contradiction(rel, reason)
        self._facts.append(Fact(rel, reason, len(self._facts)))
        self._smt.add(rel)
        residual = None
        if not absorbed:
            residual = len(self._facts) - 1
            self._residual.append(residual)
        if self._hints_ok:
            self._hints_ok = bool(evaluate(rel, self._hints))
        self._learned(residual)

    def _absorb(self, rel: sympy.Basic) -> bool | None:
        """Fold a fact into the union-find: True absorbed, False kept for later stages, None conflict."""
        if rel is sympy.true:
            return True
        if rel is sympy.false:
            return None
        if isinstance(rel, sympy.And):
            results = [self._absorb(a) for a in rel.args]
            return None if None in results else all(results)
        if not isinstance(rel, RELATION_TYPES):
            return False
        self._root_form.clear()
        rooted = self._to_roots(rel)
        if rooted is sympy.true or rooted is sympy.false:
            return True if rooted is sympy.true else None
        op, d = self._normal_form(rooted)
        if d.is_Integer:
            return True if stages.by_constant(op, d) is Truth.TRUE else None
        lin = stages.linear_terms(d)
        if lin is not None:
            return self._absorb_linear(op, *lin)
        absorbed = self._absorb_mod(d) if op == "==" else False
        return self._absorb_periodic(op, d) if absorbed is False else absorbed

    def _absorb_linear(self, op: str, coeffs: dict[sympy.Symbol, int], const: int) -> bool | None:
        uf = self._uf
        items = [(r, a) for r, a in coeffs.items() if a]
        if len(items) == 1:
            (r, a), = items
            if op == "==":
                if const % a:
                    return None
                return True if uf.restrict(r, (-const // a, -const // a)) else None
            if op == "!=":
                return True if const % a or uf.exclude(r, -const // a) else None
            # a*r + const >= 0
            rng: Interval = (math.ceil(sympy.Rational(-const, a)), math.inf) if a > 0 else (
                -math.inf, math.floor(sympy.Rational(-const, a)))
            return True if uf.restrict(r, rng) else None
        if len(items) == 2 and op == "==":
            (r1, a1), (r2, a2) = sorted(items, key=lambda t: self._order(t[0]), reverse=True)
            # a1*r1 + a2*r2 + const == 0; attach the later-declared root below the earlier
            if abs(a1) == 1:
                return True if uf.link(r1, -a2 * a1, r2, -const * a1) else None
            if abs(a2) == 1:
                return True if uf.link(r2, -a1 * a2, r1, -const * a2) else None
        return False

    def _absorb_mod(self, d: sympy.Expr) -> bool | None:
        const, rest = d.as_coeff_Add()
        if not isinstance(rest, sympy.Mod) or not rest.args[1].is_Integer or int(rest.args[1]) <= 0:
            return False
        k = int(rest.args[1])
        target = -int(const)
        if not 0 <= target < k:
            return None
        lin = stages.linear_terms(sympy.expand(rest.args[0]))
        if lin is None or len(lin[0]) != 1:
            return False
        (r, a), = lin[0].items()
        c = solve_linear(a, lin[1], (k, target))
        if c is None:
            return None
        return True if self._uf.congruent(r, c) else None

    def _absorb_periodic(self, op: str, d: sympy.Expr) -> bool | None:
        """A periodic relation (see :mod:`solver.periodic`) that is equivalent, under the
        class data, to congruences of its classes is absorbed as those congruences."""
        rel = _RELATION_OF[op](d, 0, evaluate=False)
        found = periodic.analyze(rel, self._class_of)
        if found is None or (found.congruences is None and not found.never):
            return self._absorb_shape(periodic.class_shape(rel, self._class_of))
        if found.congruences is None:
            return None  # false on every value the classes admit
        return True if all(self._uf.congruent(r, c) for r, c in found.congruences) else None

    def _absorb_shape(self, shape: periodic.ClassShape | None) -> bool | None:
        """A one-class relation equivalent to a range, a congruence and holes (see
        :func:`solver.periodic.class_shape`) is absorbed as those."""
        if shape is None:
            return False
        uf, r = self._uf, shape.root
        ok = uf.restrict(r, shape.range) and uf.congruent(r, shape.cong)
        return True if ok and all(uf.exclude(r, v) for v in sorted(shape.excluded)) else None

    def _class_of(self, root: sympy.Symbol) -> tuple[Interval, tuple[int, int]]:
        data = self._uf.data(root)
        return data.range, data.cong

    def _order(self, sym: sympy.Symbol) -> int:
        return self._symbols[sym].order

    # -- deciding ------------------------------------------------------------------------
    def decide(self, rel: sympy.Basic) -> Truth:
        """TRUE if ``rel`` holds for every assignment satisfying the facts, FALSE if for none,
        else UNKNOWN (also when the budget runs out: never a guess)."""
        if isinstance(rel, sympy.Basic):
            hit = self._cache.get(rel)
            if hit is None:
                hit = self._open.get(rel)
            if hit is not None:
                self.stats["cache"] += 1
                return hit
        truth = self._decide_fast(rel)
        if truth is None:
            prepared = self._prepare(rel)
            if not is_relation(prepared):
                raise UnsupportedExpressionError(
                    f"decide expects a relation (Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not), got the expression {prepared}")
            truth, stage = self._decide(prepared)
            self.stats[stage] += 1
        (self._open if truth is Truth.UNKNOWN else self._cache)[rel] = truth
        return truth

    def _decide_fast(self, rel: object) -> Truth | None:
        """``symbol op integer`` on a class no other fact touches: exact from the class data."""
        op = _FAST_OPS.get(type(rel))
        if op is None:
            return None
        lhs, rhs = rel.args  # type: ignore[attr-defined]
        if not (lhs.is_Symbol and rhs.is_Integer) or lhs not in self._symbols:
            return None
        root, a, b = self._uf.find(lhs)
        data = self._uf.data(root)
        lo, hi = data.range
        v = int(rhs)
        # a*r + b op v  ->  compare r against (v - b)/a on the root's range
        lo_v, hi_v = (a * lo + b, a * hi + b) if a > 0 else (a * hi + b, a * lo + b)
        t: Truth | None
        if op in ("==", "!="):
            if (v - b) % a == 0 and (v - b) // a in data.excluded:
                t = Truth.FALSE
            elif (v - b) % a or not (lo_v <= v <= hi_v) or (((v - b) // a - data.cong[1]) % data.cong[0]):
                t = Truth.FALSE
            elif lo_v == hi_v == v:
                t = Truth.TRUE
            else:
                t = self._exact_or_none(root, Truth.UNKNOWN)
            if t is not None and op == "!=":
                t = t.negate()
        else:
            d_lo, d_hi = {">=": (lo_v - v, hi_v - v), ">": (lo_v - v - 1, hi_v - v - 1),
                          "<=": (v - hi_v, v - lo_v), "<": (v - hi_v - 1, v - lo_v - 1)}[op]
            t = stages.decide_on_values(">=", d_lo, d_hi)
            if t is None:  # range endpoints are feasible for a clean class: both outcomes occur
                t = self._exact_or_none(root, Truth.UNKNOWN)
        if t is not None:
            self.stats["union_find"] += 1
        return t

    def _exact_or_none(self, root: sympy.Symbol, t: Truth) -> Truth | None:
        return t if root not in self._dirty_roots() else None

    def _dirty_roots(self) -> set[sympy.Symbol]:
        """Roots of the symbols that residual (not absorbed) facts mention."""
        if self._dirty is None:
            self._dirty = {self._uf.find(s)[0] for i in self._residual for s in self._facts[i].rel.free_symbols}
        return self._dirty

    def _decide(self, rel: sympy.Basic) -> tuple[Truth, str]:
        if rel is sympy.true or rel is sympy.false:
            return Truth.of(rel is sympy.true), "constant"
        if isinstance(rel, BOOL_TYPES):
            t = self._decide_bool(rel)
            if t is not None:
                return t, "boolean"
            return self._decide_smt(rel)
        t = stages.by_sides(rel, self._uf.range_of)
        if t is not None:
            return t, "interval"
        if rel.has(sympy.Min, sympy.Max):
            simpler = self._minmax.get(rel)
            if simpler is None:  # ranges only narrow: a simplification stays valid (scopes clear it)
                simpler = self._minmax[rel] = stages.simplify_minmax(rel, self._uf.range_of)
            if simpler is not rel and simpler != rel:
                if simpler is sympy.true or simpler is sympy.false:
                    return Truth.of(simpler is sympy.true), "interval"
                return self._decide(simpler)
        rooted = self._to_roots(rel)
        if rooted is sympy.true or rooted is sympy.false:
            return Truth.of(rooted is sympy.true), "union_find"
        op, d = self._normal_form(rooted)
        t = stages.by_constant(op, d)
        if t is not None:
            return t, "union_find"
        lookup = self._range_lookup
        t = stages.by_interval(op, d, lookup)
        if t is not None:
            return t, "interval"
        t = self._exact_single(op, d)
        if t is not None:
            return t, "interval"
        t = stages.by_congruence(op, d, self._cong_lookup)
        if t is not None:
            return t, "congruence"
        folded = stages.fold_modular(d, self._cong_lookup)
        if folded is not d:
            for stage in (stages.by_constant, stages.by_interval, stages.by_congruence):
                args = (op, folded) if stage is stages.by_constant else (
                    op, folded, lookup if stage is stages.by_interval else self._cong_lookup)
                t = stage(*args)  # type: ignore[operator]
                if t is not None:
                    return t, "congruence"
        return self._decide_smt(rel)

    def _normal_form(self, rooted: sympy.Basic) -> tuple[str, sympy.Expr]:
        """``(op, d)`` for a rooted relation, memoized: facts only narrow ranges, so a form
        computed earlier stays equivalent (scopes clear the memo when they end)."""
        hit = self._norm.get(rooted)
        if hit is None:
            hit = stages.normalize(*as_difference(rooted), self._range_lookup)
            self._norm[rooted] = hit
        return hit

    def _range_lookup(self, root: sympy.Symbol) -> Interval:
        return self._uf.data(root).range

    def _cong_lookup(self, root: sympy.Symbol) -> tuple[int, int]:
        return self._uf.data(root).cong

    def _exact_single(self, op: str, d: sympy.Expr) -> Truth | None:
        """UNKNOWN for linear ``d op 0`` over independent clean classes when both outcomes
        occur (intervals having failed to decide it)."""
        lin = stages.linear_terms(d)
        if lin is None or not lin[0]:
            return None
        coeffs, c = lin
        dirty = self._dirty_roots()
        if any(r in dirty for r in coeffs):
            return None
        if op == ">=":
            # the corners of the box are feasible (range ends are feasible values of a clean
            # class, and the classes are independent): d's extremes occur on both sides of 0
            return Truth.UNKNOWN
        if len(coeffs) == 1:
            (r, a), = coeffs.items()
            data = self._uf.data(r)
            if (-c) % a or ((-c) // a) in data.excluded:
                return None  # intervals/congruences will say FALSE/TRUE
            v = (-c) // a
            lo, hi = data.range
            if lo <= v <= hi and (v - data.cong[1]) % data.cong[0] == 0 and lo != hi:
                return Truth.UNKNOWN
            return None
        if all(abs(a) == 1 and self._uf.data(r).exact for r, a in coeffs.items()):
            # unit coefficients over gap-free ranges: d takes every integer in [lo, hi]
            lo, hi = bound(d, self._range_lookup)
            if lo <= 0 <= hi and lo < hi:
                return Truth.UNKNOWN
        return None

    def _decide_bool(self, rel: sympy.Basic) -> Truth | None:
        if isinstance(rel, sympy.Not):
            t, _ = self._decide(rel.args[0])
            return t.negate()
        parts = [self._decide(a)[0] for a in rel.args]
        if isinstance(rel, sympy.And):
            if Truth.FALSE in parts:
                return Truth.FALSE
            return Truth.TRUE if all(p is Truth.TRUE for p in parts) else None
        if Truth.TRUE in parts:
            return Truth.TRUE
        return Truth.FALSE if all(p is Truth.FALSE for p in parts) else None

    def _decide_smt(self, rel: sympy.Basic) -> tuple[Truth, str]:
        z = self._smt
        term = z.translate(rel)
        at_hint = self._value_at_hints(rel)
        neg_first = at_hint is not False  # the hint point is a witness for rel when True
        first = z.check([z.negation(term)] if neg_first else [term])
        if first == "unsat":
            return (Truth.TRUE if neg_first else Truth.FALSE), "z3"
        if first == "sat" and at_hint is not None:
            return Truth.UNKNOWN, "z3"
        second = "unknown"
        if first == "sat":
            second = z.check([term])
            if second == "unsat":
                return Truth.FALSE, "z3"
            if second == "sat":
                return Truth.UNKNOWN, "z3"
        enumerated = self._enumerate(rel)
        if enumerated is not None:
            return enumerated, "enumeration"
        return Truth.UNKNOWN, "undecided"

    def _value_at_hints(self, rel: sympy.Basic) -> bool | None:
        if not self._hints_ok:
            return None
        try:
            return bool(evaluate(rel, self._hints))
        except (ZeroDivisionError, UnsupportedExpressionError):
            return None

    # -- exhaustive enumeration on small bounded components (see solver.enumeration) ------------
    def _component(self, expr: sympy.Basic) -> tuple[list[sympy.Symbol], list[Fact]]:
        return enumeration.component(self._uf, (self._facts[i] for i in self._residual), expr, self._order)

    def _enumerate(self, rel: sympy.Basic) -> Truth | None:
        """Exact answer by enumerating a small bounded component, or None when too large."""
        roots, facts = self._component(rel)
        values = enumeration.component_values(self._uf, roots, self._enum_limit)
        return None if values is None else enumeration.decide_by_enumeration(rel, facts, values)

    # -- the tracer's question ---------------------------------------------------------------
    def guard(
        self,
        rel: sympy.Basic,
        hint: bool | None = None,
        reason: Reason | Callable[[], Reason] | None = None,
    ) -> bool:
        """Answer a branch of the traced code.

        Settled by the facts: return that (a hint that disagrees means the example inputs lie
        outside the spec: HintMismatchError). Otherwise the hint decides and the relation (or
        its negation) becomes a ``guard`` fact. ``reason`` may be a zero-argument callable:
        it is only called when the reason is needed (a new fact or an error), so a costly
        provenance lookup is skipped for the settled majority.
        """
        truth = self.decide(rel)
        if truth is not Truth.UNKNOWN:
            result = truth is Truth.TRUE
            if hint is not None and bool(hint) != result:
                why = self._reason_of(reason, rel)
                raise HintMismatchError(
                    f"the example inputs make {rel} {bool(hint)}, but the facts imply it is "
                    f"{result}: the example inputs lie outside the declared spec ({why.describe()})",
                    (why,),
                )
            settled = reason if isinstance(reason, Reason) else _SETTLED
            self._guards.append(GuardRecord(rel, hint, result, truth, settled))
            return result
        prepared = self._prepare(rel)
        if hint is None:
            raise UndecidedGuardError(f"{prepared} depends on the input sizes and no hint was given")
        why = self._reason_of(reason, prepared)
        result = bool(hint)
        self._add_fact(prepared if result else negate(prepared), why)
        self._guards.append(GuardRecord(prepared, hint, result, truth, why))
        return result

    @staticmethod
    def _reason_of(reason: Reason | Callable[[], Reason] | None, rel: sympy.Basic) -> Reason:
        if reason is None:
            return Reason.guard(str(rel))
        return reason if isinstance(reason, Reason) else reason()

    # -- serialization -----------------------------------------------------------------------
    def to_json(self, indent: int | None = None) -> str:
        """The problem this solver was told (symbols, facts, guard stream) as versioned JSON.

        >>> s = Solver(); n = s.symbol("n", 1, 8, hint=4)
        >>> s.guard(sympy.Ge(n, 2), True)
        True
        >>> t = Solver.from_json(s.to_json())
        >>> t.bounds(n), [g.decided for g in t.guards]
        ((2, 8), [<Truth.UNKNOWN: 'unknown'>])
        """
        return codec.dumps(codec.capture(self), indent)

    @classmethod
    def from_json(cls, text: str | bytes, *, rlimit: int = DEFAULT_RLIMIT,
                  enum_limit: int = DEFAULT_ENUM_LIMIT) -> Solver:
        """Replay a JSON problem (see :mod:`solver.codec`) into a new solver.

        Never evaluates code; malformed input raises ProtocolError naming the field.
        """
        return codec.restore(codec.loads(text), cls(rlimit=rlimit, enum_limit=enum_limit))

    # -- scopes ------------------------------------------------------------------------------
    @contextmanager
    def assuming(self, rel: sympy.Basic, reason: Reason | None = None) -> Iterator[None]:
        """Assume ``rel`` inside the ``with`` block; every change is undone on exit.

        >>> s = Solver(); n = s.symbol("n", 0, 10)
        >>> with s.assuming(sympy.Ge(n, 5)):
        ...     s.decide(sympy.Ge(n, 3))
        <Truth.TRUE: 'true'>
        >>> s.decide(sympy.Ge(n, 3))
        <Truth.UNKNOWN: 'unknown'>
        """
        state = (self._uf.mark(), len(self._facts), len(self._residual), len(self._guards), self._hints_ok,
                 len(self._symbols))
        self._smt.push()
        try:
            self.assume(rel, reason)
            yield
        finally:
            uf_mark, n_facts, n_res, n_guards, hints_ok, n_symbols = state
            self._uf.undo(uf_mark)
            del self._facts[n_facts:], self._residual[n_res:], self._guards[n_guards:]
            for sym in list(self._symbols)[n_symbols:]:  # symbols declared inside the scope
                del self._by_name[sym.name], self._symbols[sym]
                self._hints.pop(sym, None)
            self._hints_ok = hints_ok
            self._smt.pop()
            self._invalidate()

    # -- final state -------------------------------------------------------------------------
    def bounds(self, expr: sympy.Basic) -> tuple[int | None, int | None]:
        """Tight ``(lo, hi)`` of ``expr`` over the facts; None for an unbounded side.

        Exact when the class data describes the expression (one clean class), else by Z3
        optimization or enumeration; if both give up, the sound interval is returned.
        """
        expr = self._prepare(expr, "expression")
        d = self._to_roots(expr)
        lo, hi = bound(d, self._range_lookup)
        lin = stages.linear_terms(sympy.expand(d)) if not d.is_Integer else ({}, int(d))
        exact = lin is not None and all(r not in self._dirty_roots() for r in lin[0]) and len(lin[0]) <= 1
        if not exact:
            lo, hi = self._optimized(expr, lo, hi)
        return (None if isinstance(lo, float) else int(lo), None if isinstance(hi, float) else int(hi))

    def _optimized(self, expr: sympy.Basic, lo: Endpoint, hi: Endpoint) -> tuple[Endpoint, Endpoint]:
        facts = [f.rel for f in self._facts]
        found: list[Endpoint | None] = []
        for minimize in (True, False):
            v = self._smt.optimize(facts, expr, minimize)
            found.append((-math.inf if minimize else math.inf) if v == "unbounded" else v if isinstance(v, int) else None)
        if None in found:
            enumerated = self._enumerated_bounds(expr)
            if enumerated is not None:
                return enumerated
        return (lo if found[0] is None else found[0], hi if found[1] is None else found[1])

    def _enumerated_bounds(self, expr: sympy.Basic) -> tuple[int, int] | None:
        roots, facts = self._component(expr)
        values = enumeration.component_values(self._uf, roots, self._enum_limit)
        return None if values is None else enumeration.bounds_by_enumeration(expr, facts, values)

    def classes(self) -> tuple[tuple[sympy.Symbol, ...], ...]:
        """Equality classes of the declared symbols (singletons included), in declaration order."""
        groups: dict[tuple[sympy.Symbol, int, int], list[sympy.Symbol]] = {}
        for sym in self._symbols:
            groups.setdefault(self._uf.find(sym), []).append(sym)
        merged = self._merge_implied_equalities(list(groups.values()))
        return tuple(tuple(sorted(g, key=self._order)) for g in sorted(merged, key=lambda g: min(map(self._order, g))))

    def _merge_implied_equalities(self, groups: list[list[sympy.Symbol]]) -> list[list[sympy.Symbol]]:
        """Join groups whose equality only the later stages see (e.g. from ``x <= y, y <= x``)."""
        dirty = self._dirty_roots()

        def open_question(g: list[sympy.Symbol]) -> bool:
            lo, hi = self._uf.range_of(g[0])
            return self._uf.find(g[0])[0] in dirty or lo == hi

        candidates = [g for g in groups if open_question(g)]
        result = [g for g in groups if not open_question(g)]
        while candidates:
            head = candidates.pop(0)
            rest = []
            for g in candidates:
                if self._may_be_equal(head[0], g[0]) and self.decide(sympy.Eq(head[0], g[0])) is Truth.TRUE:
                    head = head + g
                else:
                    rest.append(g)
            result.append(head)
            candidates = rest
        return result

    def _may_be_equal(self, a: sympy.Symbol, b: sympy.Symbol) -> bool:
        ha, hb = self._symbols[a].hint, self._symbols[b].hint
        if self._hints_ok and ha != hb:
            return False
        ra, rb = self._uf.range_of(a), self._uf.range_of(b)
        return max(ra[0], rb[0]) <= min(ra[1], rb[1])

    def relations(self) -> tuple[sympy.Basic, ...]:
        """Linear relations between classes: ``Eq(c, 2*b + 1)`` for derived dims, and residual
        linear equalities over several classes (in root form)."""
        out: list[sympy.Basic] = []
        for sym in self._symbols:
            root, a, b = self._uf.find(sym)
            if (a, b) != (1, 0) and all(self._uf.find(t)[1:] != (a, b) or t == sym for t in self._earlier(sym, root)):
                out.append(sympy.Eq(sym, a * root + b))
        for i in self._residual:
            rel = self._facts[i].rel
            if isinstance(rel, sympy.Eq):
                lin = stages.linear_terms(sympy.expand(self._to_roots(rel.lhs - rel.rhs)))
                if lin is not None and len(lin[0]) >= 2:
                    out.append(self._to_roots(rel))
        return tuple(out)

    def _earlier(self, sym: sympy.Symbol, root: sympy.Symbol) -> list[sympy.Symbol]:
        return [t for t in self._uf.members(root) if self._order(t) < self._order(sym)]

    def root_of(self, sym: sympy.Symbol) -> sympy.Symbol:
        """The representative of ``sym``'s class (``sym == a*root + b`` for an affine link)."""
        self.info(sym)
        return self._uf.find(sym)[0]

    def congruences(self) -> tuple[tuple[sympy.Symbol, int, int], ...]:
        """``(root, m, r)`` for each class known to satisfy ``root = r (mod m)`` with m > 1."""
        out = []
        for root in sorted(self._uf.roots(), key=self._order):
            m, r = self._uf.data(root).cong
            if m > 1:
                out.append((root, m, r))
        return tuple(out)

    def violations(self, only: Callable[[Fact], bool] | None = None) -> tuple[Violation, ...]:
        """Guard facts (and trace assumptions) that the ``spec`` facts alone do not imply.

        ``only`` restricts which non-spec facts are checked (the others are skipped); with
        nothing to check, no spec-only solver is built.
        """
        todo = [f for f in self._facts if f.reason.kind != "spec" and (only is None or only(f))]
        if not todo:
            return ()
        spec = self.replica(kinds=("spec",))
        out = []
        for f in todo:
            t = spec.decide(f.rel)
            if t is not Truth.TRUE:
                out.append(Violation(f, t))
        return tuple(out)

    def replica(
        self,
        kinds: tuple[str, ...] = ("spec",),
        extra: tuple[tuple[sympy.Basic, Reason], ...] = (),
        keep: Callable[[Fact], bool] | None = None,
    ) -> Solver:
        """A fresh solver with the same symbols and only the facts of the given kinds that
        ``keep`` accepts (default: all of them), plus ``extra``."""
        other = Solver(rlimit=self._smt.rlimit, enum_limit=self._enum_limit)
        for info in self._symbols.values():
            other.symbol(info.symbol.name, info.lo, info.hi, hint=info.hint, source=info.source)
        for f in self._facts:
            if f.reason.kind in kinds and f.reason.op != DECLARED and (keep is None or keep(f)):
                other.assume(f.rel, f.reason)
        for rel, reason in extra:
            other.assume(rel, reason)
        return other

    def simplify(self, rel: sympy.Basic) -> sympy.Basic:
        """An equivalent relation in normal form ``d op 0`` (``op`` one of ``== != >=``),
        with factors of known sign divided out and ``t - k*(t//k)`` written ``Mod(t, k)``.

        >>> s = Solver(); b = s.symbol("b", 1, None); t = s.symbol("t", 0, None)
        >>> s.simplify(sympy.Eq(16 * b * t, 64 * b * FloorDiv(t, 4)))
        Eq(Mod(t, 4), 0)
        """
        rel = self._prepare(rel)
        if not isinstance(rel, RELATION_TYPES):
            return rel
        op, d = stages.normalize(*as_difference(rel), self._uf.range_of)
        return {"==": sympy.Eq, "!=": sympy.Ne, ">=": sympy.Ge}[op](d, 0)

    def explain(self, rel: sympy.Basic) -> tuple[Fact, ...]:
        """A minimal set of facts implying ``rel`` (Z3 unsat core, then a deletion pass).

        Raises SolverError when ``rel`` is not implied. Dropping any returned fact makes the
        rest insufficient.
        """
        prepared = self._prepare(rel)
        if self.decide(prepared) is not Truth.TRUE:
            raise SolverError(f"{prepared} is not implied by the facts; nothing to explain")
        core = self._smt.core([f.rel for f in self._facts], negate(prepared))
        if core is None:
            return tuple(self._facts)
        return tuple(self._facts[i] for i in core)

    def suggest(self, kinds: tuple[str, ...] = ("guard", "trace_assumption")) -> Fixes:
        """The weakest verified change to the spec under which every guard is implied.

        Empty when the spec already implies every guard. See :mod:`solver.fixes`.
        """
        return synthesize(self, kinds)
