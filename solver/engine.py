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
from solver import enumeration, periodic, propagate, stages
from solver.congruence import solve_linear
from solver.errors import (
    ContradictionError,
    HintMismatchError,
    SolverError,
    UndecidedGuardError,
    UnknownSymbolError,
)
from solver.bounds import minimum
from solver.interval import Endpoint, Interval, bound, ceil, floor
from solver.memo import Clock, Memo
from solver.smt import DEFAULT_RLIMIT, Budget, Smt
from solver.stages import Question, Stage, View
from solver.truth import Fact, Reason, Truth
from solver.union_find import UnionFind
from solver.witness import Klass, other_point

__all__ = ["Solver", "SymbolInfo", "GuardRecord", "Violation", "DEFAULT_ENUM_LIMIT"]

DEFAULT_ENUM_LIMIT = 20_000
_SMALL_COMPONENT = 400  # facts + classes below which bounds get a Z3 solver of their own
_SETTLED = Reason("guard", None, None, "settled by the facts")
DECLARED = "declared range"  # Reason.op of the facts that Solver.symbol records
_RELATION_OF = {"==": sympy.Eq, "!=": sympy.Ne, ">=": sympy.Ge}
_FAST_OPS = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Ge: ">=", sympy.Gt: ">", sympy.Le: "<=", sympy.Lt: "<"}
# the stages a rooted normal form runs through, cheapest first, with the label stats credit
_PIPELINE: tuple[tuple[str, Stage], ...] = (
    ("union_find", stages.by_constant), ("interval", stages.by_interval), ("interval", stages.by_exact),
    ("congruence", stages.by_congruence))
# after the congruences folded Mod/FloorDiv away
_FOLDED: tuple[tuple[str, Stage], ...] = (
    ("congruence", stages.by_constant), ("congruence", stages.by_interval), ("congruence", stages.by_congruence))


def _both(ge: sympy.Basic, le: sympy.Basic) -> sympy.Basic:
    """``And(sym >= lo, sym <= hi)``, equal to sympy's, built the way ``LatticeOp`` builds it
    but without re-sorting the arguments and asking sympy's assumptions about them (``>=``
    before ``<=`` is the canonical order), which cost more than the rest of a declaration.

    >>> from shapes import int_symbol
    >>> n = int_symbol("n")
    >>> _both(sympy.Ge(n, -2), sympy.Le(n, 9)) == sympy.And(sympy.Ge(n, -2), sympy.Le(n, 9))
    True
    """
    rel = sympy.Basic.__new__(sympy.And, ge, le)
    rel._argset = frozenset((ge, le))
    return rel


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
        self._mentions: dict[sympy.Symbol, list[int]] = {}  # symbol -> residual facts naming it
        self._guards: list[GuardRecord] = []
        self._hints: dict[sympy.Symbol, int] = {}
        self._hints_ok = True
        self._forgets = 0  # scopes ended (facts removed)
        self._learns = 0  # facts added
        self._memo = Memo(self._clock)
        self._view = View(self._uf.range_of, self._uf.data, self._clean)
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
        # unevaluated: an integer symbol against an int never folds, and evaluating asks sympy's
        # (slow, uncached for a new symbol) assumption system
        parts = ([sympy.Ge(sym, lo, evaluate=False)] if lo is not None else []) + (
            [sympy.Le(sym, hi, evaluate=False)] if hi is not None else [])
        if parts:
            rel = _both(*parts) if len(parts) == 2 else parts[0]
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

    def _clock(self) -> Clock:
        """The state counters the memo reads (see :mod:`solver.memo`)."""
        return (self._forgets + self._uf.undos, self._learns, self._uf.links)

    def _to_roots(self, e: sympy.Basic) -> sympy.Basic:
        table = self._memo.rooted
        hit = table.get(e)
        if hit is not None:
            return hit
        subs = {}
        for s in e.free_symbols:
            root, a, b = self._uf.find(s)
            if root is not s:
                subs[s] = a * root + b
        if not subs:
            out = e
        elif isinstance(e, RELATION_TYPES):  # rebuilt unevaluated: sympy's relational evaluation is slow
            out = type(e)(e.lhs.xreplace(subs), e.rhs.xreplace(subs), evaluate=False)
        else:
            out = e.xreplace(subs)
        table[e] = out
        return out

    # -- facts -------------------------------------------------------------------------
    def assume(self, rel: sympy.Basic, reason: Reason | None = None) -> None:
        """Add a fact. A fact that contradicts the known facts raises ContradictionError."""
        rel = self._prepare(rel, "fact")
        reason = reason or Reason.spec(str(rel))
        # consistent when it holds at the example point (which satisfies every fact so far), or
        # when the union-find alone takes it; else ask
        if self._value_at_hints(rel) is not True and not self._absorbs_cleanly(rel) and self.decide(rel) is Truth.FALSE:
            raise self._contradiction(rel, reason)
        self._add_fact(rel, reason)

    def _absorbs_cleanly(self, rel: sympy.Basic) -> bool:
        """Whether the union-find alone can take ``rel`` and judge its consistency: it folds
        into classes no residual fact touches, whose data (range, congruence, holes) then
        describes them exactly, so an empty meet is the only possible contradiction."""
        if not rel.free_symbols or not all(self._clean(self._uf.find(x)[0]) for x in rel.free_symbols):
            return False
        mark = self._uf.mark()
        try:
            return self._absorb(rel) is True
        finally:
            self._uf.undo(mark)

    def _contradiction(self, rel: sympy.Basic, reason: Reason) -> ContradictionError:
        core = self._smt.core([f.rel for f in self._facts], rel)
        culprits = tuple(self._facts[i].reason for i in core) if core is not None else ()
        lines = "\n".join(f"  - {r.describe()}" for r in culprits + (reason,))
        return ContradictionError(f"{rel} contradicts what is already known:\n{lines}", culprits + (reason,))

    def _add_fact(self, rel: sympy.Basic, reason: Reason) -> None:
        mark = self._uf.mark()
        absorbed = self._absorb(rel)
        if absorbed is None or (absorbed is False and not self._propagate(rel)):
            self._uf.undo(mark)
            raise self._contradiction(rel, reason)
        self._facts.append(Fact(rel, reason, len(self._facts)))
        self._smt.add(rel)
        if not absorbed:
            self._residual.append(len(self._facts) - 1)
            for sym in rel.free_symbols:
                self._uf.touch(sym)
                self._mentions.setdefault(sym, []).append(len(self._facts) - 1)
        if self._hints_ok:
            self._hints_ok = bool(evaluate(rel, self._hints))
        self._learns += 1

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
        flat = self._linear(rel)
        if flat is not None:
            if isinstance(flat, bool):
                return True if flat else None
            return self._absorb_linear(*flat)
        rooted = self._to_roots(rel)
        if rooted is sympy.true or rooted is sympy.false:
            return True if rooted is sympy.true else None
        q = self._normal_form(rooted)
        if q.lhs.is_Integer:
            return True if stages.by_constant(q, self._view) is Truth.TRUE else None
        lin = stages.linear_terms(q.lhs)
        if lin is not None:
            return self._absorb_linear(q.op, *lin)
        absorbed = self._absorb_mod(q.lhs) if q.op == "==" else False
        return self._absorb_periodic(q.op, q.lhs) if absorbed is False else absorbed

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
            # a*r + const >= 0: r >= ceil(-const/a) for a > 0, r <= floor(-const/a) for a < 0
            rng: Interval = (-(const // a), math.inf) if a > 0 else (-math.inf, (-const) // a)
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

    def _linear(self, rel: sympy.Basic) -> tuple[str, dict[sympy.Symbol, int], int] | bool | None:
        """A linear relation over the class leaders: ``(op, coeffs, const)`` meaning
        ``sum(coeffs[r] * r) + const op 0``, a bool when it is constant there, None when not
        linear. Read off the sympy tree and the union-find with no sympy arithmetic."""
        form = stages.linear_form(rel)
        if form is None:
            return None
        op, coeffs, const = form
        rooted: dict[sympy.Symbol, int] = {}
        for sym, a in coeffs.items():
            root, c, b = self._uf.find(sym)
            rooted[root] = rooted.get(root, 0) + a * c
            const += a * b
        return stages.linear_normal(op, rooted, const)

    def _propagate(self, rel: sympy.Basic) -> bool:
        """Narrow class ranges through ``rel`` and the residual facts it reaches (see
        :mod:`solver.propagate`); False when a range comes out empty (a contradiction)."""
        todo, visits = [rel], 0
        while todo and visits < propagate.MAX_VISITS:
            lin = self._linear(todo.pop())
            visits += 1
            if lin is None or isinstance(lin, bool) or lin[0] == "!=":
                continue
            for root, rng in propagate.implied(lin[0], lin[1], lin[2], self._uf.range_of).items():
                before = self._uf.range_of(root)
                if not self._uf.restrict(root, rng):
                    return False
                if self._uf.range_of(root) != before:
                    todo += [self._facts[i].rel for m in self._uf.members(root) for i in self._mentions.get(m, ())]
        return True

    def _order(self, sym: sympy.Symbol) -> int:
        return self._symbols[sym].order

    # -- deciding ------------------------------------------------------------------------
    def decide(self, rel: sympy.Basic) -> Truth:
        """TRUE if ``rel`` holds for every assignment satisfying the facts, FALSE if for none,
        else UNKNOWN (also when the budget runs out: never a guess)."""
        if isinstance(rel, sympy.Basic):
            hit = self._memo.answers.get(rel)
            if hit is None:
                hit = self._memo.open.get(rel)
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
        (self._memo.open if truth is Truth.UNKNOWN else self._memo.answers)[rel] = truth
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
        return t if self._clean(root) else None

    def _clean(self, root: sympy.Symbol) -> bool:
        """Whether no residual (not absorbed) fact mentions ``root``'s class."""
        return not self._uf.data(root).residual

    def _decide(self, rel: sympy.Basic) -> tuple[Truth, str]:
        if rel is sympy.true or rel is sympy.false:
            return Truth.of(rel is sympy.true), "constant"
        if isinstance(rel, BOOL_TYPES):
            t = self._decide_bool(rel)
            if t is not None:
                return t, "boolean"
            return self._decide_smt(rel)
        t = stages.by_interval(Question.of(rel), self._view)
        if t is not None:
            return t, "interval"
        if rel.has(sympy.Min, sympy.Max):
            table = self._memo.minmax
            simpler = table.get(rel)
            if simpler is None:  # ranges only narrow: a simplification stays valid
                simpler = table[rel] = stages.simplify_minmax(rel, self._uf.range_of)
            if simpler is not rel and simpler != rel:
                if simpler is sympy.true or simpler is sympy.false:
                    return Truth.of(simpler is sympy.true), "interval"
                return self._decide(simpler)
        rooted = self._to_roots(rel)
        if rooted is sympy.true or rooted is sympy.false:
            return Truth.of(rooted is sympy.true), "union_find"
        q = self._normal_form(rooted)
        found = self._run(_PIPELINE, q)
        if found is None:
            folded = stages.fold_modular(q.lhs, self._cong_lookup)
            if folded is not q.lhs:
                found = self._run(_FOLDED, Question(q.op, folded))
        return found if found is not None else self._decide_smt(rel)

    def _run(self, pipeline: tuple[tuple[str, Stage], ...], q: Question) -> tuple[Truth, str] | None:
        """The first answer of the stages in order, with its label."""
        for label, stage in pipeline:
            t = stage(q, self._view)
            if t is not None:
                return t, label
        return None

    def _normal_form(self, rooted: sympy.Basic) -> Question:
        """The normal-form question of a rooted relation, memoized: facts only narrow
        ranges, so a form computed earlier stays equivalent."""
        table = self._memo.normal
        hit = table.get(rooted)
        if hit is None:
            hit = table[rooted] = Question(*stages.normalize(*as_difference(rooted), self._range_lookup))
        return hit

    def _range_lookup(self, root: sympy.Symbol) -> Interval:
        return self._uf.data(root).range

    def _cong_lookup(self, root: sympy.Symbol) -> tuple[int, int]:
        return self._uf.data(root).cong

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
        seen = z.witnessed(rel) | ({at_hint} if at_hint is not None else set())
        if len(seen) == 2 or (at_hint is not None and self._moved_witness(rel)):
            return Truth.UNKNOWN, "witness"  # two points satisfying every fact disagree on rel
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

    def _moved_witness(self, rel: sympy.Basic) -> bool:
        """Whether moving one class of ``rel`` off the example point (see :mod:`solver.witness`)
        gives a feasible point where ``rel`` differs. Only valid while the hints hold."""
        leaders = sorted({self._uf.find(x)[0] for x in rel.free_symbols}, key=self._order)
        classes = [Klass(r, tuple((m, *self._uf.find(m)[1:]) for m in self._uf.members(r)), self._uf.data(r))
                   for r in leaders[:3]]

        def facts_of(leader: sympy.Symbol) -> Iterator[sympy.Basic]:
            seen: set[int] = set()
            for m in self._uf.members(leader):
                for i in self._mentions.get(m, ()):
                    if i not in seen:
                        seen.add(i)
                        yield self._facts[i].rel

        return other_point(rel, self._hints, classes, facts_of) is not None

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
            for i in self._residual[n_res:]:
                for sym in self._facts[i].rel.free_symbols:
                    self._mentions[sym].pop()
            del self._facts[n_facts:], self._residual[n_res:], self._guards[n_guards:]
            for sym in list(self._symbols)[n_symbols:]:  # symbols declared inside the scope
                del self._by_name[sym.name], self._symbols[sym]
                self._hints.pop(sym, None)
            self._hints_ok = hints_ok
            self._smt.pop()
            self._forgets += 1

    # -- final state -------------------------------------------------------------------------
    def bounds(self, expr: sympy.Basic) -> tuple[int | None, int | None]:
        """Sound ``(lo, hi)`` of ``expr`` over the facts; None for an unbounded side.

        Exact when the class data describes the expression (one clean class); else the
        interval is narrowed by bisection with Z3 checks within one budget (see
        :mod:`solver.bounds`), then by enumeration of a small component. Exact whenever a
        search completes; loose but sound when the budget ends.
        """
        expr = self._prepare(expr, "expression")
        d = self._to_roots(expr)
        lo, hi = bound(d, self._range_lookup)
        lo, hi = ceil(lo), floor(hi)
        lin = stages.linear_terms(sympy.expand(d)) if not d.is_Integer else ({}, int(d))
        exact = lin is not None and all(self._clean(r) for r in lin[0]) and len(lin[0]) <= 1
        if not exact and lo != hi:
            lo, hi = self._narrowed(d, lo, hi)
        return (None if isinstance(lo, float) else int(lo), None if isinstance(hi, float) else int(hi))

    def _narrowed(self, d: sympy.Expr, lo: Endpoint, hi: Endpoint) -> tuple[Endpoint, Endpoint]:
        """Bisection over the component of ``d`` (in root form), then enumeration."""
        roots, facts = self._component(d)
        encoding = None  # a large component: the incremental solver already holds every fact
        if len(facts) + len(roots) <= _SMALL_COMPONENT:
            encoding = [self._to_roots(f.rel) for f in facts] + [self._class_term(r) for r in roots]
        budget = Budget(self._smt.rlimit)
        new_lo, lo_done = minimum(self._smt.prober(encoding, d, budget), lo)
        neg_hi, hi_done = minimum(self._smt.prober(encoding, -d, budget), -hi)
        new_hi = -neg_hi
        if not (lo_done and hi_done):  # a side the search did not close: try enumeration
            values = enumeration.component_values(self._uf, roots, self._enum_limit)
            found = None if values is None else enumeration.bounds_by_enumeration(d, facts, values)
            if found is not None:
                return found
        return (max(lo, new_lo), min(hi, new_hi))

    def _class_term(self, root: sympy.Symbol) -> object:
        """What the union-find knows of ``root`` (range, congruence, holes) as a Z3 term."""
        data = self._uf.data(root)
        return self._smt.class_term(root, *data.range, data.cong, sorted(data.excluded))

    def classes(self) -> tuple[tuple[sympy.Symbol, ...], ...]:
        """Equality classes of the declared symbols (singletons included), in declaration order."""
        groups: dict[tuple[sympy.Symbol, int, int], list[sympy.Symbol]] = {}
        for sym in self._symbols:
            groups.setdefault(self._uf.find(sym), []).append(sym)
        merged = self._merge_implied_equalities(list(groups.values()))
        return tuple(tuple(sorted(g, key=self._order)) for g in sorted(merged, key=lambda g: min(map(self._order, g))))

    def _merge_implied_equalities(self, groups: list[list[sympy.Symbol]]) -> list[list[sympy.Symbol]]:
        """Join groups whose equality only the later stages see (e.g. from ``x <= y, y <= x``)."""
        def open_question(g: list[sympy.Symbol]) -> bool:
            lo, hi = self._uf.range_of(g[0])
            return not self._clean(self._uf.find(g[0])[0]) or lo == hi

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
