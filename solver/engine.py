"""The solver facade: symbols, facts, decisions, final state.

:class:`Solver` holds one :class:`solver.state.known.State` and routes each call to the part that
owns it: declaring and reading (:mod:`solver.state.known`), deciding (:mod:`solver.decide.pipeline`),
adding facts (:mod:`solver.absorb`), the final state (:mod:`solver.queries`) and scopes
(:mod:`solver.state.scopes`). It adds the tracer's question (:meth:`Solver.guard`) and the
spec-only replicas behind :meth:`Solver.violations`.

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

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import sympy

from shapes.relation import negate
from solver import absorb, queries
from solver.decide import pipeline
from solver.state import scopes
from solver.errors import HintMismatchError, SolverError, UndecidedGuardError
from solver.records import GuardRecord, SymbolInfo, Violation
from solver.kernel.smt import DEFAULT_RLIMIT, Deadline, Smt
from solver.state.known import DEFAULT_ENUM_LIMIT, State
from solver.truth import DECLARED, Fact, Reason, Truth

__all__ = ["Solver", "SymbolInfo", "GuardRecord", "Violation", "DEFAULT_ENUM_LIMIT", "DECLARED"]

_SETTLED = Reason("guard", None, None, "settled by the facts")


class Solver:
    """The constraint engine (see the module docstring and DESIGN.md section 2)."""

    def __init__(self, *, rlimit: int = DEFAULT_RLIMIT, enum_limit: int = DEFAULT_ENUM_LIMIT,
                 deadline: Deadline | None = None) -> None:
        """``deadline``: a wall-clock end for the Z3 queries, shared with the replicas
        (:class:`solver.kernel.smt.Deadline`; a service moves it per request)."""
        self._state = State(rlimit, enum_limit)
        if deadline is not None:
            self._state.smt.deadline = deadline
        self.stats: Counter[str] = self._state.stats

    @property
    def _smt(self) -> Smt:
        """The incremental Z3 mirror (read by the benchmarks' introspection)."""
        return self._state.smt

    # -- declaration ---------------------------------------------------------------
    def symbol(
        self,
        name: str,
        lo: int | None = 0,
        hi: int | None = None,
        *,
        hint: int | None = None,
        source: str | None = None,
        adapts: bool = False,
    ) -> sympy.Symbol:
        """Declare an integer symbol with range ``[lo, hi]`` (None: unbounded) and return it;
        ``adapts``: its range adapts to what the guards need (:class:`SymbolInfo`)."""
        return self._state.declare(name, lo, hi, hint, source, adapts)

    @property
    def symbols(self) -> tuple[SymbolInfo, ...]:
        return tuple(self._state.symbols.values())

    def info(self, sym: sympy.Symbol) -> SymbolInfo:
        return self._state.info(sym)

    @property
    def facts(self) -> tuple[Fact, ...]:
        return tuple(self._state.facts)

    @property
    def guards(self) -> tuple[GuardRecord, ...]:
        return tuple(self._state.guards)

    # -- facts and decisions -------------------------------------------------------------
    def assume(self, rel: sympy.Basic, reason: Reason | None = None) -> None:
        """Add a fact. A fact that contradicts the known facts raises ContradictionError.

        ``reason.op`` may not be ``"declared range"`` (reserved for :meth:`symbol`'s facts,
        which ``to_json`` leaves out): SolverError.
        """
        absorb.assume(self._state, rel, _unreserved(reason))

    def decide(self, rel: sympy.Basic, *, cheap: bool = False) -> Truth:
        """TRUE if ``rel`` holds for every assignment satisfying the facts, FALSE if for none,
        else UNKNOWN (also when the budget runs out: never a guess). ``cheap``: only the
        stages before witnesses and Z3 (for a caller that has its own fallback, such as
        torch's static evaluation)."""
        return pipeline.decide(self._state, rel, cheap=cheap)

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
        return self.guard_record(rel, hint, reason).result

    def guard_record(
        self,
        rel: sympy.Basic,
        hint: bool | None = None,
        reason: Reason | Callable[[], Reason] | None = None,
    ) -> GuardRecord:
        """:meth:`guard`, handing back the :class:`GuardRecord` it appends to :attr:`guards`:
        its ``decided`` tells whether the facts settled the answer or a new fact was made
        (``Truth.UNKNOWN``), with no second decision of ``rel``.

        >>> s = Solver(); n = s.symbol("n", 2, 10)
        >>> s.guard_record(sympy.Ge(n, 1), True).decided, s.guard_record(sympy.Ge(n, 5), True).decided
        (<Truth.TRUE: 'true'>, <Truth.UNKNOWN: 'unknown'>)
        >>> s.guard_record(sympy.Ge(n, 5), True).decided, len(s.guards)
        (<Truth.TRUE: 'true'>, 3)
        """
        st = self._state
        if isinstance(reason, Reason):
            _unreserved(reason)
        truth = pipeline.decide(st, rel)
        if truth is not Truth.UNKNOWN:
            result = truth is Truth.TRUE
            if hint is not None and bool(hint) != result:
                why = _reason_of(reason, rel)
                raise HintMismatchError(
                    f"the example inputs make {rel} {bool(hint)}, but the facts imply it is "
                    f"{result}: the example inputs lie outside the declared spec ({why.describe()})",
                    (why,),
                )
            settled = reason if isinstance(reason, Reason) else _SETTLED
            record = GuardRecord(rel, hint, result, truth, settled)
            st.guards.append(record)
            return record
        prepared = st.prepare(rel)
        if hint is None:
            raise UndecidedGuardError(f"{prepared} depends on the input sizes and no hint was given")
        why = _reason_of(reason, prepared)
        _unreserved(why)
        result = bool(hint)
        absorb.add_fact(st, prepared if result else negate(prepared), why)
        record = GuardRecord(prepared, hint, result, truth, why)
        st.guards.append(record)
        return record

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
        mark = scopes.enter(self._state)
        try:
            absorb.assume(self._state, rel, _unreserved(reason))
            yield
        finally:
            scopes.undo(self._state, mark)

    # -- final state -------------------------------------------------------------------------
    def bounds(self, expr: sympy.Basic) -> tuple[int | None, int | None]:
        """Sound ``(lo, hi)`` of ``expr`` over the facts; None for an unbounded side
        (see :func:`solver.queries.bounds`)."""
        return queries.bounds(self._state, expr)

    def classes(self) -> tuple[tuple[sympy.Symbol, ...], ...]:
        """Equality classes of the declared symbols (singletons included), in declaration order."""
        return queries.classes(self._state)

    def relations(self) -> tuple[sympy.Basic, ...]:
        """Linear relations between classes: ``Eq(c, 2*b + 1)`` for derived dims, and residual
        linear equalities over several classes (in root form)."""
        return queries.relations(self._state)

    def root_of(self, sym: sympy.Symbol) -> sympy.Symbol:
        """The representative of ``sym``'s class (``sym == a*root + b`` for an affine link)."""
        self._state.info(sym)
        return self._state.uf.find(sym)[0]

    def congruences(self) -> tuple[tuple[sympy.Symbol, int, int], ...]:
        """``(root, m, r)`` for each class known to satisfy ``root = r (mod m)`` with m > 1."""
        return queries.congruences(self._state)

    def simplify(self, rel: sympy.Basic, *, minmax: bool = False) -> sympy.Basic:
        """An equivalent relation in normal form ``d op 0`` (``op`` one of ``== != >=``),
        with factors of known sign divided out and ``t - k*(t//k)`` written ``Mod(t, k)``;
        with ``minmax``, also without the ``Min``/``Max`` arguments the ranges never choose
        (equivalent under the facts, not at sizes they exclude).

        >>> from shapes import FloorDiv
        >>> s = Solver(); b = s.symbol("b", 1, None); t = s.symbol("t", 0, None)
        >>> s.simplify(sympy.Eq(16 * b * t, 64 * b * FloorDiv(t, 4)))
        Eq(Mod(t, 4), 0)
        >>> s.simplify(sympy.Eq(sympy.Max(1, b + t), 2 * b), minmax=True)
        Eq(-b + t, 0)
        """
        return queries.simplify(self._state, rel, minmax)

    def explain(self, rel: sympy.Basic) -> tuple[Fact, ...]:
        """A minimal set of facts implying ``rel`` (Z3 unsat core, then a deletion pass).

        Raises SolverError when ``rel`` is not implied. Dropping any returned fact makes the
        rest insufficient.
        """
        return queries.explain(self._state, rel)

    def violations(self, only: Callable[[Fact], bool] | None = None) -> tuple[Violation, ...]:
        """Guard facts (and trace assumptions) that the ``spec`` facts alone do not imply.

        ``only`` restricts which non-spec facts are checked (the others are skipped); with
        nothing to check, no spec-only solver is built.
        """
        todo = [f for f in self._state.facts if f.reason.kind != "spec" and (only is None or only(f))]
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
        st = self._state
        other = Solver(rlimit=st.smt.rlimit, enum_limit=st.enum_limit, deadline=st.smt.deadline)
        other._state.smt.home = st.smt.home  # one Z3 context for a solver and its replicas
        other._state.pure = st.pure  # and one set of pure memo tables
        for info in st.symbols.values():
            other.symbol(info.symbol.name, info.lo, info.hi, hint=info.hint, source=info.source, adapts=info.adapts)
        for f in st.facts:
            if f.reason.kind in kinds and f.reason.op != DECLARED and (keep is None or keep(f)):
                other.assume(f.rel, f.reason)
        for rel, reason in extra:
            other.assume(rel, reason)
        return other


def _unreserved(reason: Reason | None) -> Reason | None:
    """Refuse the reserved ``op`` of declared ranges in a reason from a caller.

    >>> _unreserved(Reason("spec", "n >= 3", op="declared range"))
    Traceback (most recent call last):
    ...
    solver.errors.SolverError: reason.op "declared range" is reserved for the ranges that Solver.symbol records (they are saved as the symbols' lo/hi, not as facts); declare the range with Solver.symbol, or use another op
    """
    if reason is not None and reason.op == DECLARED:
        raise SolverError(f'reason.op "{DECLARED}" is reserved for the ranges that Solver.symbol '
                          "records (they are saved as the symbols' lo/hi, not as facts); declare "
                          "the range with Solver.symbol, or use another op")
    return reason


def _reason_of(reason: Reason | Callable[[], Reason] | None, rel: sympy.Basic) -> Reason:
    if reason is None:
        return Reason.spelled("guard", rel)
    return reason if isinstance(reason, Reason) else reason()
