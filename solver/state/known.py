"""What a solver knows, and the cheap lookups every part of the engine reads.

One :class:`State` holds the declared symbols, the facts (with the residual ones, which the
union-find could not absorb, and which symbols they mention), the example point (hints), the
guard stream, the union-find with its class data, the incremental Z3 mirror of the facts and
the memo tables.

The example point (``hints``) has a value for every symbol: the user's example value where
one was given, else a value of the declared range. ``hints_ok`` says that every fact holds
there; :mod:`solver.state.point` moves the point (undoably, see :meth:`State.move`) when a new
fact fails at it, and drops ``hints_ok`` when it cannot. The engine's parts are functions of a ``State``: :mod:`solver.decide.pipeline`
decides, :mod:`solver.absorb` adds facts, :mod:`solver.queries` reads the final state,
:mod:`solver.state.scopes` undoes; :class:`solver.engine.Solver` is the facade over them.

>>> import sympy
>>> st = State()
>>> n = st.declare("n", 2, 64, hint=8, source="x.size(0)")
>>> st.range_lookup(n), st.value_at_hints(sympy.Ge(n, 4))
((2, 64), True)
>>> st.facts[0].reason.describe()
"spec 'x.size(0) in [2, 64]' (declared range)"
>>> m = st.declare("m", -5, None); st.hints[m], st.hints_ok   # no example value: 0 is in range
(0, True)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import canonical, canonical_name, check_supported, evaluate, int_symbol
from shapes.ranges import range_text
from shapes.relation import RELATION_TYPES, as_difference
from solver.kernel import enumeration
from solver.kernel import normal_form
from solver.errors import HintMismatchError, SolverError, UnknownSymbolError
from solver.kernel.interval import Interval
from solver.kernel.memo import Clock, Memo, Pure
from solver.records import GuardRecord, SymbolInfo
from solver.kernel.smt import DEFAULT_RLIMIT, Smt
from solver.kernel.normal_form import Question, View
from solver.truth import DECLARED, Fact, Reason
from solver.kernel.union_find import UnionFind

__all__ = ["State", "DEFAULT_ENUM_LIMIT"]

DEFAULT_ENUM_LIMIT = 20_000


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


def _interned(e: sympy.Basic, subs: dict[sympy.Symbol, sympy.Symbol]) -> sympy.Basic:
    """``e`` over the declared symbol objects (``subs`` maps equal copies to them): every
    later lookup is then an identity hit, not a structural comparison. A relation is rebuilt
    unevaluated (it was already evaluated when built; re-evaluating asks sympy's slow
    assumptions)."""
    if isinstance(e, RELATION_TYPES):
        return type(e)(e.lhs.xreplace(subs), e.rhs.xreplace(subs), evaluate=False)
    return e.xreplace(subs)


def _check_declaration(name: str, lo: int | None, hi: int | None, hint: int | None, source: str | None) -> None:
    for label, v in (("lo", lo), ("hi", hi), ("hint", hint)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise SolverError(f"symbol {name!r}: {label} must be an int or None, got {v!r}")
    if lo is not None and hi is not None and lo > hi:
        raise SolverError(f"symbol {name!r}: empty range, lo={lo} > hi={hi}")
    if hint is not None and not ((lo is None or lo <= hint) and (hi is None or hint <= hi)):
        raise HintMismatchError(
            f"symbol {source or name!r}: example value {hint} is outside its declared range "
            f"{range_text(lo, hi)}"
        )


def _in_range(lo: int | None, hi: int | None) -> int:
    """A value of ``[lo, hi]`` for a symbol without an example value: the one nearest 0.

    >>> _in_range(2, None), _in_range(None, None), _in_range(None, -3), _in_range(-5, 9)
    (2, 0, -3, 0)
    """
    if lo is not None and lo > 0:
        return lo
    return hi if hi is not None and hi < 0 else 0


class State:
    """The knowledge of one solver (see the module docstring). Mutated only by the engine."""

    __slots__ = ("uf", "smt", "enum_limit", "symbols", "by_name", "facts", "residual", "mentions", "guards",
                 "hints", "hints_ok", "moves", "class_terms", "forgets", "learns", "memo", "pure", "view", "stats")

    def __init__(self, rlimit: int = DEFAULT_RLIMIT, enum_limit: int = DEFAULT_ENUM_LIMIT) -> None:
        self.uf = UnionFind()
        self.smt = Smt(rlimit)
        self.enum_limit = enum_limit
        self.symbols: dict[sympy.Symbol, SymbolInfo] = {}
        self.by_name: dict[str, sympy.Symbol] = {}
        self.facts: list[Fact] = []
        self.residual: list[int] = []  # indices of the facts the union-find did not absorb
        self.mentions: dict[sympy.Symbol, list[int]] = {}  # symbol -> residual facts naming it
        self.guards: list[GuardRecord] = []
        self.hints: dict[sympy.Symbol, int] = {}  # the example point (see the module docstring)
        self.hints_ok = True  # every fact holds at the example point
        self.moves: list[tuple[sympy.Symbol, int]] = []  # the point's previous values, for undo
        self.class_terms: dict[tuple[sympy.Symbol, object], object] = {}  # (root, ClassData) -> Z3 term
        self.forgets = 0  # scopes ended (facts removed)
        self.learns = 0  # facts added
        self.memo = Memo(self.clock)
        self.pure = Pure()  # replicas get their solver's (see Solver.replica)
        self.view = View(self.uf.range_of, self.uf.data, self.clean)
        self.stats: Counter[str] = Counter()

    # -- declaration and recording ---------------------------------------------------------
    def declare(self, name: str, lo: int | None, hi: int | None, hint: int | None = None,
                source: str | None = None, adapts: bool = False) -> sympy.Symbol:
        """Declare an integer symbol with range ``[lo, hi]`` and record the range as a fact."""
        if not isinstance(name, str) or not name:
            raise SolverError(f"symbol name must be a non-empty string, got {name!r}")
        name, spelled = canonical_name(name), name  # NFKC, as the parser reads identifiers
        if name in self.by_name:
            raise SolverError(f"symbol {name!r} is already declared" + (f" ({spelled!r} is {name!r} in NFKC form)" if spelled != name else ""))
        _check_declaration(name, lo, hi, hint, source)
        sym = int_symbol(name)
        if not isinstance(adapts, bool):
            raise SolverError(f"symbol {name!r}: adapts must be a bool, got {adapts!r}")
        self.symbols[sym] = SymbolInfo(sym, lo, hi, hint, source, len(self.symbols), adapts)
        self.by_name[name] = sym
        self.uf.add(sym, (-math.inf if lo is None else lo, math.inf if hi is None else hi))
        # unevaluated: an integer symbol against an int never folds, and evaluating asks sympy's
        # (slow, uncached for a new symbol) assumption system
        parts = ([sympy.Ge(sym, lo, evaluate=False)] if lo is not None else []) + (
            [sympy.Le(sym, hi, evaluate=False)] if hi is not None else [])
        if parts:
            rel = _both(*parts) if len(parts) == 2 else parts[0]
            text = f"{source or name} in {range_text(lo, hi)}"
            self.facts.append(Fact(rel, Reason("spec", text, op=DECLARED), len(self.facts)))
            self.smt.add(rel)
        self.hints[sym] = hint if hint is not None else _in_range(lo, hi)
        return sym

    def record_fact(self, rel: sympy.Basic, reason: Reason, absorbed: bool, at_hint: bool | None = None) -> None:
        """Append a fact the union-find took (``absorbed``) or that stays residual;
        ``at_hint`` is its value at the example point when the caller already knows it."""
        self.facts.append(Fact(rel, reason, len(self.facts)))
        self.smt.add(rel)
        if not absorbed:
            self.residual.append(len(self.facts) - 1)
            for sym in rel.free_symbols:
                self.uf.touch(sym)
                self.mentions.setdefault(sym, []).append(len(self.facts) - 1)
        if self.hints_ok and at_hint is None:
            try:
                at_hint = bool(evaluate(rel, self.hints))
            except (ZeroDivisionError, UnsupportedExpressionError):
                at_hint = False
        self.hints_ok = self.hints_ok and bool(at_hint)
        self.learns += 1

    def move(self, change: dict[sympy.Symbol, int]) -> None:
        """Give the point new values (remembered on ``moves``, which scopes undo)."""
        hints, moves = self.hints, self.moves
        for sym, v in change.items():
            moves.append((sym, hints[sym]))
            hints[sym] = v

    def unmove(self, mark: int) -> None:
        """Give the point back the values it had when ``moves`` was ``mark`` long."""
        hints, moves = self.hints, self.moves
        while len(moves) > mark:
            sym, v = moves.pop()
            hints[sym] = v

    # -- reading ----------------------------------------------------------------------------
    def info(self, sym: sympy.Symbol) -> SymbolInfo:
        try:
            return self.symbols[sym]
        except KeyError:
            raise UnknownSymbolError(f"{sym} was never declared with Solver.symbol") from None

    def prepare(self, rel: object, what: str = "relation") -> sympy.Basic:
        """``rel`` in canonical form, checked to be supported and over declared symbols (the
        declared objects themselves: sympy's symbol cache is bounded, so a client's ``n`` may
        be an equal copy)."""
        if isinstance(rel, bool):
            return sympy.true if rel else sympy.false
        if not isinstance(rel, sympy.Basic):
            raise UnsupportedExpressionError(f"{what} must be a sympy expression, got {type(rel).__name__}: {rel!r}")
        prepared = canonical(rel)
        check_supported(prepared, what=what)
        subs = {}
        for s in prepared.free_symbols:
            declared = self.by_name.get(s.name)
            if declared is s:
                continue
            if declared is None or declared != s:
                raise UnknownSymbolError(f"{what} {prepared} mentions {s}, which was never declared with Solver.symbol")
            subs[s] = declared
        return _interned(prepared, subs) if subs else prepared

    def clock(self) -> Clock:
        """The state counters the memo reads (see :mod:`solver.kernel.memo`)."""
        return (self.forgets + self.uf.undos, self.learns, self.uf.links)

    def to_roots(self, e: sympy.Basic) -> sympy.Basic:
        """``e`` over the class leaders (each symbol replaced by ``a*root + b``), memoized."""
        table = self.memo.rooted
        hit = table.get(e)
        if hit is not None:
            return hit
        subs = {}
        for s in e.free_symbols:
            root, a, b = self.uf.find(s)
            if root is not s:
                subs[s] = a * root + b
        out = self.pure.substitute(e, subs) if subs else e
        table[e] = out
        return out

    def normal_form(self, rooted: sympy.Basic) -> Question:
        """The normal-form question of a rooted relation, memoized: facts only narrow
        ranges, so a form computed earlier stays equivalent."""
        table = self.memo.normal
        hit = table.get(rooted)
        if hit is None:
            hit = table[rooted] = Question(*normal_form.normalize(*as_difference(rooted), self.range_lookup))
        return hit

    def linear(self, rel: sympy.Basic) -> tuple[str, dict[sympy.Symbol, int], int] | bool | None:
        """A linear relation over the class leaders: ``(op, coeffs, const)`` meaning
        ``sum(coeffs[r] * r) + const op 0``, a bool when it is constant there, None when not
        linear. Read off the sympy tree and the union-find with no sympy arithmetic."""
        forms = self.pure.linear
        form = forms.get(rel, False)
        if form is False:
            form = forms[rel] = normal_form.linear_form(rel)
        if form is None:
            return None
        op, coeffs, const = form
        rooted: dict[sympy.Symbol, int] = {}
        for sym, a in coeffs.items():
            root, c, b = self.uf.find(sym)
            rooted[root] = rooted.get(root, 0) + a * c
            const += a * b
        return normal_form.linear_normal(op, rooted, const)

    def order(self, sym: sympy.Symbol) -> int:
        """Declaration order of a symbol (earlier symbols lead their classes)."""
        return self.symbols[sym].order

    def clean(self, root: sympy.Symbol) -> bool:
        """Whether no residual (not absorbed) fact mentions ``root``'s class."""
        return not self.uf.data(root).residual

    def value_at_hints(self, rel: sympy.Basic) -> bool | None:
        """``rel`` at the example point while it satisfies every fact, else None."""
        if not self.hints_ok:
            return None
        try:
            return bool(evaluate(rel, self.hints))
        except (ZeroDivisionError, UnsupportedExpressionError):
            return None

    def range_lookup(self, root: sympy.Symbol) -> Interval:
        return self.uf.data(root).range

    def cong_lookup(self, root: sympy.Symbol) -> tuple[int, int]:
        return self.uf.data(root).cong

    def class_of(self, root: sympy.Symbol) -> tuple[Interval, tuple[int, int]]:
        data = self.uf.data(root)
        return data.range, data.cong

    def residual_facts(self) -> Iterable[Fact]:
        return (self.facts[i] for i in self.residual)

    def class_facts(self, root: sympy.Symbol) -> tuple[int, ...]:
        """The residual facts (indices, each once) that mention ``root``'s class, member by
        member in class order, memoized (memo table ``class_facts``)."""
        table = self.memo.class_facts
        hit = table.get(root)
        if hit is None:
            hit = table[root] = tuple(dict.fromkeys(i for m in self.uf.members(root) for i in self.mentions.get(m, ())))
        return hit

    def class_members(self, leader: sympy.Symbol) -> tuple[tuple[sympy.Symbol, int, int], ...]:
        """``(member, coef, offset)`` with ``member == coef*leader + offset`` for every member
        of the class ``leader`` leads, in class order, memoized (memo table ``class_members``).

        >>> st = State(); a = st.declare("a", 0, 9); b = st.declare("b", 0, 99)
        >>> _ = st.uf.link(b, 2, a, 1); st.class_members(a)
        ((a, 1, 0), (b, 2, 1))
        """
        table = self.memo.class_members
        hit = table.get(leader)
        if hit is None:
            find = self.uf.find
            hit = table[leader] = tuple((m, *find(m)[1:]) for m in self.uf.members(leader))
        return hit

    def component(self, expr: sympy.Basic) -> tuple[list[sympy.Symbol], list[Fact]]:
        """The roots and residual facts connected to ``expr`` (see :mod:`solver.kernel.enumeration`)."""
        return enumeration.component(self.uf, self.residual_facts(), expr, self.order)
