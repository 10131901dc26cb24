"""Z3 translation and queries: the last stage, deterministic and budgeted.

Every query runs with a fixed seed and a resource limit (``rlimit``), so the same problem
gives the same answer on any machine; running out of budget answers ``unknown``, never raises.
Searches made of many queries (unsat cores, bounds by bisection) share one :class:`Budget`
of one ``rlimit`` for the whole search; no unbounded optimizer is ever run.

Z3 does not count every native step against the ``rlimit`` (nonlinear arithmetic over huge
constants can run for minutes on a small count), so a service also gives each solver a
:class:`Deadline`: past it, every query stops (Z3's ``timeout``, then no query at all) and
answers ``unknown``, which every caller reads soundly (never TRUE/FALSE).

>>> import sympy
>>> from shapes import int_symbol, FloorDiv
>>> n = int_symbol("n")
>>> z = Smt()
>>> z.add(sympy.Ge(n, 3))
>>> z.check([z.translate(sympy.Eq(FloorDiv(n, 2), 1))])
'sat'
>>> z.check([z.translate(sympy.Lt(n, 3))])
'unsat'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

import sympy
import z3

from shapes.errors import UnsupportedExpressionError
from shapes.expr import FloorDiv

__all__ = ["Smt", "Z3Home", "Budget", "Deadline", "DEFAULT_RLIMIT", "SEED"]

DEFAULT_RLIMIT = 2_000_000
SEED = 0
WITNESSES = 8  # models kept as witnesses (each satisfies every fact added since it was found)
NO_TIMEOUT = 4_294_967_295  # Z3's default ``timeout`` (ms): none
_T = TypeVar("_T")


class Deadline:
    """The wall-clock limits of Z3 queries, shared by the solvers of one session or one
    export (mutable by design: the session moves it per request; its solvers and their
    replicas read it and charge it).

    ``until`` is a ``time.monotonic()`` instant, or None for no deadline. ``query_seconds``
    bounds each query and ``z3_seconds`` the Z3 time of all queries charged here (None: no
    bound): an export gives its solvers both, so that a few nonlinear questions Z3 cannot
    settle (Swin's window padding asks dozens, each of which Z3 can chase for minutes)
    answer ``unknown`` (sound: the example decides and records a guard, as torch does)
    instead of holding the export. Ordinary questions take milliseconds, far inside both.

    >>> d = Deadline()
    >>> d.timeout_ms() is None
    True
    >>> with d.within(10.0):
    ...     0 < d.timeout_ms() <= 10_000
    True
    >>> with d.within(0.0):
    ...     d.timeout_ms()
    0
    >>> d.until is None
    True
    >>> d = Deadline(query_seconds=2.0, z3_seconds=3.0)
    >>> d.timeout_ms()
    2000
    >>> d.charge(2.5); d.timeout_ms()
    500
    >>> d.charge(1.0); d.timeout_ms()
    0
    """

    __slots__ = ("until", "query_seconds", "z3_seconds", "used")

    def __init__(self, *, query_seconds: float | None = None, z3_seconds: float | None = None) -> None:
        self.until: float | None = None
        self.query_seconds = query_seconds
        self.z3_seconds = z3_seconds
        self.used = 0.0

    def timeout_ms(self) -> int | None:
        """Milliseconds the next query may run (0 when none is left), or None without a
        limit."""
        left = [x for x in (None if self.until is None else self.until - time.monotonic(), self.query_seconds,
                            None if self.z3_seconds is None else self.z3_seconds - self.used) if x is not None]
        if not left:
            return None
        return max(0, int(min(left) * 1000))

    def charge(self, seconds: float) -> None:
        """Count ``seconds`` of Z3 time against ``z3_seconds``."""
        self.used += seconds

    @contextmanager
    def within(self, seconds: float | None) -> Iterator[None]:
        """Inside the block, queries stop ``seconds`` from now (None: no deadline); an
        earlier deadline already set stays in force. Restored on exit."""
        saved = self.until
        if seconds is not None:
            end = time.monotonic() + seconds
            self.until = end if saved is None else min(saved, end)
        try:
            yield
        finally:
            self.until = saved


class Z3Home:
    """The Z3 context of a solver and its replicas, built on the first query (most solvers
    never need Z3). Building one costs about 7 ms and dropping one 3 ms, so a solver and the
    replicas it makes (a failing export makes about ten) share one; they are used on one
    thread, as a Z3 context requires. Budgets stay per query (``rlimit`` counts from where
    the context is). The Z3 terms of sympy expressions (``terms``) are a function of the
    expression in this context, so they are shared too: a replica asks its solver's relations
    again.

    >>> home = Z3Home()
    >>> home.ctx is home.ctx
    True
    """

    __slots__ = ("_ctx", "terms")

    def __init__(self) -> None:
        self._ctx: z3.Context | None = None
        self.terms: dict[sympy.Basic, z3.ExprRef] = {}

    @property
    def ctx(self) -> z3.Context:
        if self._ctx is None:
            self._ctx = z3.Context()
        return self._ctx


class Smt:
    """One incremental Z3 solver holding the facts, with push/pop scopes."""

    def __init__(self, rlimit: int = DEFAULT_RLIMIT, deadline: Deadline | None = None) -> None:
        self.rlimit = rlimit
        self.deadline = deadline or Deadline()
        self.home = Z3Home()  # replicas get their solver's (see Solver.replica)
        self._live_timed = False  # the incremental solver carries a timeout from a deadline
        self._live: z3.Solver | None = None
        self._pending: list[list[sympy.Basic]] = [[]]  # facts per scope level, until Z3 is built
        self._vars: dict[sympy.Symbol, z3.ArithRef] = {}
        self._classes: dict[tuple[object, ...], z3.ExprRef] = {}  # class_term by its arguments
        self._witnesses: list[z3.ModelRef] = []
        self.queries = 0

    @property
    def ctx(self) -> z3.Context:
        return self.home.ctx

    @property
    def _solver(self) -> z3.Solver:
        """The incremental solver, built on first use with the facts and scopes so far."""
        if self._live is None:
            live = self._new_solver()
            for level, facts in enumerate(self._pending):
                if level:
                    live.push()
                for f in facts:
                    live.add(self.translate(f))
            self._live = live
            self._pending = []
        return self._live

    def _new_solver(self) -> z3.Solver:
        s = z3.Solver(ctx=self.ctx)
        s.set("random_seed", SEED)
        s.set("rlimit", self.rlimit)
        return s

    # -- translation ---------------------------------------------------------------
    def var(self, sym: sympy.Symbol) -> z3.ArithRef:
        v = self._vars.get(sym)
        if v is None:
            v = z3.Int(sym.name, self.ctx)
            self._vars[sym] = v
        return v

    def translate(self, e: sympy.Basic) -> z3.ExprRef:
        """A Z3 term for a symbolic-dim expression or relation (cached)."""
        terms = self.home.terms
        hit = terms.get(e)
        if hit is None:
            hit = self._translate(e)
            terms[e] = hit
        return hit

    def _translate(self, e: sympy.Basic) -> z3.ExprRef:  # noqa: C901 - dispatch table
        ctx = self.ctx
        if e is sympy.true:
            return z3.BoolVal(True, ctx)
        if e is sympy.false:
            return z3.BoolVal(False, ctx)
        if e.is_Integer:
            return z3.IntVal(int(e), ctx)
        if e.is_Rational:
            return z3.RealVal(f"{e.p}/{e.q}", ctx)
        if e.is_Symbol:
            return self.var(e)
        a = [self.translate(x) for x in e.args]
        if isinstance(e, sympy.Add):
            return z3.Sum(a)
        if isinstance(e, sympy.Mul):
            return z3.Product(a)
        if isinstance(e, sympy.Pow) and e.args[1].is_Integer and int(e.args[1]) >= 0:
            n = int(e.args[1])
            return z3.Product([a[0]] * n) if n else z3.IntVal(1, ctx)
        if isinstance(e, (FloorDiv, sympy.floor)):
            if isinstance(e, sympy.floor):
                return z3.ToInt(a[0]) if z3.is_real(a[0]) else a[0]
            return _floordiv(a[0], a[1], e.args[1])
        if isinstance(e, sympy.Mod):
            return a[0] - a[1] * _floordiv(a[0], a[1], e.args[1])
        if isinstance(e, sympy.Min):
            return _fold(a, lambda x, y: z3.If(x <= y, x, y))
        if isinstance(e, sympy.Max):
            return _fold(a, lambda x, y: z3.If(x >= y, x, y))
        if isinstance(e, sympy.Eq):
            return a[0] == a[1]
        if isinstance(e, sympy.Ne):
            return a[0] != a[1]
        if isinstance(e, sympy.Lt):
            return a[0] < a[1]
        if isinstance(e, sympy.Le):
            return a[0] <= a[1]
        if isinstance(e, sympy.Gt):
            return a[0] > a[1]
        if isinstance(e, sympy.Ge):
            return a[0] >= a[1]
        if isinstance(e, sympy.And):
            return z3.And(a)
        if isinstance(e, sympy.Or):
            return z3.Or(a)
        if isinstance(e, sympy.Not):
            return z3.Not(a[0])
        raise UnsupportedExpressionError(f"no Z3 translation for {e}")

    def class_term(self, sym: sympy.Symbol, lo: object, hi: object, cong: tuple[int, int],
                   excluded: Iterable[int]) -> z3.ExprRef:
        """What the union-find knows of ``sym`` (range, ``sym = r (mod m)``, holes) as one
        term, cached by those values (the term is a function of them alone)."""
        key = (sym, lo, hi, cong, tuple(excluded))
        hit = self._classes.get(key)
        if hit is None:
            hit = self._classes[key] = self._class_term(sym, lo, hi, cong, key[4])
        return hit

    def _class_term(self, sym: sympy.Symbol, lo: object, hi: object, cong: tuple[int, int],
                    excluded: Iterable[int]) -> z3.ExprRef:
        v = self.var(sym)
        parts = [v != int(x) for x in excluded]
        parts += [] if isinstance(lo, float) else [v >= int(lo)]  # type: ignore[call-overload]
        parts += [] if isinstance(hi, float) else [v <= int(hi)]  # type: ignore[call-overload]
        m, r = cong
        parts += [] if m == 1 else [(v - r) % m == 0]
        return z3.And(parts) if parts else z3.BoolVal(True, self.ctx)

    def negation(self, term: z3.ExprRef) -> z3.ExprRef:
        return z3.Not(term)

    # -- facts and queries -------------------------------------------------------------
    def add(self, rel: sympy.Basic) -> None:
        if self._live is None:
            self._pending[-1].append(rel)
        else:
            term = self.translate(rel)
            self._live.add(term)
            self._witnesses = [m for m in self._witnesses if z3.is_true(m.eval(term, model_completion=True))]

    def witnessed(self, rel: sympy.Basic) -> set[bool]:
        """The values ``rel`` takes at the kept witnesses: models of every fact so far (found
        by earlier satisfiable checks, dropped as soon as a new fact fails at them)."""
        if not self._witnesses:
            return set()
        term = self.translate(rel)
        out = set()
        for m in self._witnesses:
            v = m.eval(term, model_completion=True)
            if z3.is_true(v) or z3.is_false(v):
                out.add(z3.is_true(v))
        return out

    def witness_values(self, syms: Iterable[sympy.Symbol]) -> dict[sympy.Symbol, int] | None:
        """The values of ``syms`` in the newest kept witness (a model of every fact), or None."""
        if not self._witnesses:
            return None
        model, out = self._witnesses[0], {}
        for sym in syms:
            v = model.eval(self.var(sym), model_completion=True)
            if not z3.is_int_value(v):
                return None
            out[sym] = v.as_long()
        return out

    def push(self) -> None:
        if self._live is None:
            self._pending.append([])
        else:
            self._live.push()

    def pop(self) -> None:
        if self._live is None:
            self._pending.pop()
        else:
            self._live.pop()

    def check(self, extra: Sequence[z3.ExprRef] = ()) -> str:
        """``'sat'``, ``'unsat'`` or ``'unknown'`` for the facts plus ``extra``."""
        self.queries += 1
        s = self._solver
        if not self._arm_live(s):
            return "unknown"
        s.push()
        try:
            for x in extra:
                s.add(x)
            s.set("rlimit", self.rlimit)
            r = self._timed(s.check)
            if r == z3.sat:
                self._witnesses = [s.model()] + self._witnesses[: WITNESSES - 1]
        except z3.Z3Exception:
            return "unknown"
        finally:
            s.pop()
        return "sat" if r == z3.sat else "unsat" if r == z3.unsat else "unknown"

    def check_local(self, facts: Sequence[z3.ExprRef], extra: z3.ExprRef, text: str = "") -> str:
        """``'sat'``, ``'unsat'`` or ``'unknown'`` for ``facts``, ``extra`` and the SMT-LIB
        commands ``text`` (declarations and assertions; its integer constants are the
        variables of the symbols of the same names) alone, on a fresh solver with the same
        budget and deadline (the incremental one is not touched).

        The terms go to a plain SMT core (no preprocessing tactics: a local question is
        small and asked once) through Z3's C assertion call, skipping the Python API's
        per-term coercion (``facts`` are Boolean terms of this context already); many
        simple facts are cheaper to state as text, which Z3 parses in one call."""
        self.queries += 1
        s = z3.SimpleSolver(ctx=self.ctx)
        s.set("random_seed", SEED)
        s.set("rlimit", self.rlimit)
        if not self._arm(s):
            return "unknown"
        ref, handle = self.ctx.ref(), s.solver
        try:
            if text:
                s.from_string(text)
            for t in facts:
                z3.Z3_solver_assert(ref, handle, t.as_ast())
            s.add(extra)
            r = self._timed(s.check)
        except z3.Z3Exception:
            return "unknown"
        return "sat" if r == z3.sat else "unsat" if r == z3.unsat else "unknown"

    def core(self, facts: Sequence[sympy.Basic], goal: sympy.Basic | None) -> list[int] | None:
        """Indices of a subset of ``facts`` that, with ``goal``, is unsat: minimal when the
        budget (one ``rlimit`` for the whole search) allows, else a larger but valid core.

        ``goal`` is asserted unconditionally (``None`` for none). Returns None when the whole
        set is not proved unsat within budget.
        """
        s = self._new_solver()
        budget = Budget(self.rlimit)
        lits = [z3.Bool(f"__fact{i}", self.ctx) for i in range(len(facts))]
        for lit, f in zip(lits, facts):
            s.add(z3.Implies(lit, self.translate(f)))
        if goal is not None:
            s.add(self.translate(goal))
        if not self._arm(s) or self._timed(lambda: budget.check(s, lits)) != z3.unsat:
            return None
        core = {str(c) for c in s.unsat_core()}
        chosen = [i for i in range(len(facts)) if f"__fact{i}" in core]
        for i in list(chosen):  # deletion pass: make the core minimal while the budget lasts
            if not self._arm(s):
                break
            trial = [j for j in chosen if j != i]
            r = self._timed(lambda: budget.check(s, [lits[j] for j in trial]))
            if r == z3.unsat:
                chosen = trial
            elif budget.left <= 0:
                break
        return chosen

    def prober(self, facts: Iterable[sympy.Basic | z3.ExprRef] | None, expr: sympy.Basic, budget: Budget) -> Callable[
            [int | None], tuple[str, int | None]]:
        """A :data:`solver.kernel.bounds.Probe` for ``expr`` under ``facts`` (relations or Z3 terms;
        None: every fact, on the incremental solver): is there a model with ``expr <= t``, and
        the value of ``expr`` in it. Every probe spends from ``budget``."""
        if facts is None:
            s = self._solver
            arm = self._arm_live
        else:
            arm = self._arm
            s = self._new_solver()
            for f in facts:
                s.add(f if isinstance(f, z3.ExprRef) else self.translate(f))
        term = self.translate(expr)

        def probe(t: int | None) -> tuple[str, int | None]:
            self.queries += 1
            if not arm(s):
                return ("unknown", None)
            s.push()
            try:
                if t is not None:
                    s.add(term <= t)
                r = self._timed(lambda: budget.check(s, []))
                if r == z3.unsat:
                    return ("unsat", None)
                value = s.model().eval(term, model_completion=True) if r == z3.sat else None
                return ("sat", value.as_long()) if value is not None and z3.is_int_value(value) else ("unknown", None)
            finally:
                s.pop()

        return probe

    # -- the deadline ------------------------------------------------------------------------
    def _timed(self, query: Callable[[], _T]) -> _T:
        """Run one Z3 query, charging its wall time to the deadline's Z3 allowance."""
        start = time.perf_counter()
        try:
            return query()
        finally:
            self.deadline.charge(time.perf_counter() - start)

    def _arm(self, s: z3.Solver) -> bool:
        """Give a query solver the time left (deadline, per-query and total Z3 allowance);
        False when none is left."""
        ms = self.deadline.timeout_ms()
        if ms is None:
            return True
        s.set("timeout", max(ms, 1))
        return ms > 0

    def _arm_live(self, s: z3.Solver) -> bool:
        """:meth:`_arm` for the incremental solver, which outlives deadlines: its timeout is
        lifted again once no limit is set."""
        if self.deadline.timeout_ms() is None:
            if self._live_timed:
                s.set("timeout", NO_TIMEOUT)
                self._live_timed = False
            return True
        self._live_timed = True
        return self._arm(s)


class Budget:
    """The Z3 resource allowance of one decision, shared by its queries.

    Each query runs with an ``rlimit`` of what is left and is charged what it used; once
    the allowance is spent, queries answer unknown without running.
    """

    __slots__ = ("left",)

    def __init__(self, total: int) -> None:
        self.left = total

    def check(self, s: z3.Solver, assumptions: Sequence[z3.ExprRef]) -> z3.CheckSatResult | None:
        """``s.check(*assumptions)`` within what is left: sat/unsat, or None for unknown."""
        if self.left <= 0:
            return None
        s.set("rlimit", self.left)
        before = _spent(s)
        try:
            r = s.check(*assumptions)
        except z3.Z3Exception:
            r = None
        self.left -= max(_spent(s) - before, 1)
        return r if r in (z3.sat, z3.unsat) else None


def _spent(s: z3.Solver) -> int:
    """The solver's resource counter so far (Z3 keeps it across checks)."""
    stats = s.statistics()
    return int(stats.get_key_value("rlimit count")) if "rlimit count" in stats.keys() else 0


def _fold(xs: list[z3.ExprRef], f: object) -> z3.ExprRef:
    acc = xs[0]
    for x in xs[1:]:
        acc = f(acc, x)  # type: ignore[operator]
    return acc


def _floordiv(a: z3.ArithRef, b: z3.ArithRef, b_sym: sympy.Basic) -> z3.ArithRef:
    """Python's ``a // b`` (floor) from Z3's Euclidean ``/``, which agrees for ``b > 0``."""
    if b_sym.is_Integer:
        k = int(b_sym)
        return a / b if k > 0 else (-a) / (-b)
    return z3.If(b > 0, a / b, (-a) / (-b))
