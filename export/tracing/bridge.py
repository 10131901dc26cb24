"""The bridge: every symbolic decision of a torch.export trace is asked of the solver.

:class:`SolverBridge` is the decider of :class:`export._torch_compat.RoutingShapeEnv`.
It declares one solver symbol per root dim of the spec and per dynamic input dim (with
the example size as hint and the spec as facts), maps torch's symbols onto them as torch
creates them, and answers torch's questions (:meth:`SolverBridge.on_question`, one call
per question) with :meth:`solver.Solver.guard_record`. What torch assumes on its own (sizes
>= 2, 0/1 specialization, duck-sized dims) becomes ``trace_assumption`` facts, so nothing
the trace relied on is left out of the solver's view. Which question was asked where, and
the 0/1 evidence it leaves, is kept by a :class:`export.tracing.questions.Questions`.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import sympy

from export import _torch_compat as tc
from export.tracing.convert import to_shapes
from export.errors import UnsupportedGuardError
from export.spec.inputs import Inputs
from export.tracing.provenance import UserFrame, is_user_file, user_frame
from export.tracing.questions import Asking, Questions
from export.tracing.assumptions import FLOOR_OP, POSITIVE_OP, SPECIALIZED_OP, Assumption
from export.tracing.trace import Trace, TraceStats, frozen_map, relation_text
from shapes.relation import is_relation
from shapes.spec import InputDim, Spec
from solver import Deadline, Reason, Solver, Truth
from shapes.affine import dim_expressible

__all__ = ["SolverBridge", "dim_symbol_name"]



_CHECK_LINE = re.compile(r"^\s*torch\._check(_with)?\(")
"""A line that is a ``torch._check`` call: the questions Python asks while evaluating its
argument (``max(a, b)`` compares) belong to the user's assertion too. The check itself is
recognised from torch's check path (:func:`export.tracing.sites.asking_site`), whatever its spelling."""


_INT64_LIMIT = 2**63 - 2
"""Constants at least this large (the classic default max 2**63 - 2, ``sys.maxsize``) are
int64 sentinels, not shape constraints."""


def _at_int64_limit(rel: sympy.Basic) -> bool:
    """Whether ``rel`` compares with a constant at the int64 limit.

    >>> n = sympy.Symbol("n", integer=True)
    >>> _at_int64_limit(sympy.Le(n, 9223372036854775807)), _at_int64_limit(sympy.Le(n, 64))
    (True, False)
    """
    return any(abs(int(c)) >= _INT64_LIMIT for c in rel.atoms(sympy.Integer))


def dim_symbol_name(d: InputDim) -> str:
    """The solver symbol of an input dim: ``x.size(0)`` -> ``x_size0``; of an int input's
    value: ``n`` -> ``n_value``."""
    base = "".join(c if c.isalnum() else "_" for c in d.input_name).strip("_")
    while "__" in base:
        base = base.replace("__", "_")
    return f"{base}_value" if d.dim is None else f"{base}_size{d.dim}"


Z3_QUERY_SECONDS = 1.0
"""Each Z3 query of an export stops after this long (answers UNKNOWN: sound)."""
Z3_EXPORT_SECONDS = 10.0
"""The Z3 time one trace (its solver and replicas) may spend in all; past it, what the
cheaper stages leave open is UNKNOWN: the example decides and a guard is recorded, as
torch does. The zoo's exports spend well under a second; Swin with a dynamic image size
asks dozens of nonlinear floor/mod questions that Z3 can chase for minutes each."""


def export_deadline() -> Deadline:
    """The Z3 limits of one trace (:data:`Z3_QUERY_SECONDS`, :data:`Z3_EXPORT_SECONDS`)."""
    return Deadline(query_seconds=Z3_QUERY_SECONDS, z3_seconds=Z3_EXPORT_SECONDS)


@dataclass
class _Counts:
    """The running counts of :class:`export.tracing.trace.TraceStats`."""

    asked: int = 0
    routed: int = 0
    to_torch: int = 0
    seconds: float = 0.0
    unsupported: list[str] = field(default_factory=list)


class SolverBridge(tc.BaseDecider):
    """Routes a trace's decisions to ``solver`` (see the module docstring); :meth:`trace`
    hands over what the trace left behind, once tracing has ended."""

    def __init__(self, spec: Spec, inputs: Inputs, solver: Solver | None = None,
                 layout_branches: bool = True) -> None:
        """``layout_branches``: an ``if`` that only chooses ``.contiguous()`` is answered with
        no fact (:meth:`export.tracing.questions.Questions.layout_branch`)."""
        self._spec = spec
        self._inputs = inputs
        self._solver = solver if solver is not None else Solver(deadline=export_deadline())
        self._counts = _Counts()
        self._env: Any = None
        self._sym_map: dict[sympy.Symbol, sympy.Expr] = {}  # torch symbol -> solver expression
        self._dim_syms: dict[InputDim, sympy.Symbol] = {}
        self._root_syms: dict[str, sympy.Symbol] = {}
        self._auto_syms: set[sympy.Symbol] = set()
        self._internal_syms: set[sympy.Symbol] = set()  # torch's own (strides, storage): not user dims
        self._unbacked_syms: set[sympy.Symbol] = set()  # data-dependent values (.item())
        self._names: dict[sympy.Symbol, str] = {}
        self._inline_kind: str | None = None
        self._torch_reports: list[str] = []
        self._unbacked_origins: dict[sympy.Symbol, UserFrame] = {}  # torch symbol -> frame of its .item()
        self._settled: dict[sympy.Basic, bool] = {}  # torch expr -> its answer, once settled
        self._became_fact: set[sympy.Basic] = set()  # questions whose answer was recorded as a fact
        self._converted: dict[sympy.Basic, sympy.Basic | None] = {}
        self._questions = Questions(self._solver, spec, self._dim_syms, self._names, self._convert,
                                    layout_branches)
        self._open: set[sympy.Basic] = set()  # questions left open: a narrower spec may answer them
        self._opaque = 0  # static questions neither the solver nor torch could answer, not convertible
        self._replacements: dict[sympy.Symbol, sympy.Expr] = {}  # torch's: symbol -> what it became
        self._declare_spec()
        self._spec_facts = len(self._solver.facts)

    # -- the end of tracing ---------------------------------------------------------------------
    def trace(self, symbols: Iterable[sympy.Symbol] = ()) -> Trace:
        """What the trace left behind, frozen. ``symbols`` are torch symbols the caller
        will read (e.g. the program's ``range_constraints``): those the trace never saw
        are declared first, with torch's range, as internal symbols."""
        for sym in symbols:
            if sym not in self._sym_map:
                try:
                    to_shapes(sym, self._symbol_for)
                except UnsupportedGuardError:
                    pass
        c, q = self._counts, self._questions
        return Trace(
            spec=self._spec, inputs=self._inputs, solver=self._solver, dim_syms=frozen_map(self._dim_syms),
            root_syms=frozen_map(self._root_syms), auto_syms=frozenset(self._auto_syms),
            internal_syms=frozenset(self._internal_syms), unbacked_syms=frozenset(self._unbacked_syms),
            names=frozen_map(self._names), sym_map=frozen_map(self._sym_map),
            stats=TraceStats(asked=c.asked, routed=c.routed, to_torch=c.to_torch, seconds=c.seconds,
                             unsupported=tuple(c.unsupported)),
            hard=q.hard, answered_by_fact=frozenset(self._became_fact), zero_one_notes=q.zero_one_notes,
            unbacked_origins=frozen_map({**self._origins_from_torch(), **self._unbacked_origins}),
            torch_reports=tuple(self._torch_reports), sites=q.sites, answers=q.answers,
            branch_notes=q.branch_notes, neutral=q.neutral_sites, layout_branches=q.layout_branches,
            spec_facts=self._spec_facts, open_questions=frozenset(self._open), opaque_questions=self._opaque,
            replacements=frozen_map(self._replacements))

    def _origins_from_torch(self) -> dict[sympy.Symbol, UserFrame]:
        """Where torch recorded the unbacked symbols the bridge saw no user frame for."""
        out = {}
        for sym in tc.unbacked_symbols_with_stacks(self._env):
            if sym in self._unbacked_origins:
                continue
            for filename, lineno, function, code in reversed(tc.symbol_origin_frames(self._env, sym)):
                if is_user_file(filename):
                    out[sym] = UserFrame(filename=filename, lineno=lineno, function=function, code=code)
                    break
        return out

    @contextlib.contextmanager
    def declaring(self) -> Iterator[None]:
        """Within the block, what torch learns is the user's declaration (``kind="spec"``):
        :func:`export.constrain_as_size` and ``constrain_as_value``."""
        previous, self._inline_kind = self._inline_kind, "spec"
        try:
            yield
        finally:
            self._inline_kind = previous

    # -- the spec as facts ------------------------------------------------------------------
    def _declare_spec(self) -> None:
        s = self._solver
        hints = self._root_hints()
        for root in self._spec.roots:
            self._root_syms[root.name] = s.symbol(root.name, root.lo, root.hi, hint=hints.get(root.name),
                                                 source=root.text)
        for decl in self._spec.decls:
            size = self._inputs.size(decl.dim)
            sym = s.symbol(dim_symbol_name(decl.dim), decl.lo, decl.hi, hint=size, source=str(decl.dim),
                           adapts=decl.expr is None)  # Dim.AUTO/DYNAMIC: the trace infers its guards
            self._dim_syms[decl.dim] = sym
            self._names[sym] = str(decl.dim)
            if decl.expr is None:
                self._auto_syms.add(sym)
            else:
                s.assume(sympy.Eq(sym, decl.expr), Reason.spec(f"{decl.dim} is {decl.text}"))
        for rel in self._spec.checks:
            s.assume(rel, Reason("spec", relation_text(rel, self._names), None, "torch._check (suggested fix)",
                                 Assumption.SUGGESTED_CHECK))

    def _root_hints(self) -> dict[str, int]:
        return self._spec.root_values(self._inputs.size)

    # -- torch's hooks ------------------------------------------------------------------------
    def attach(self, env: Any) -> bool:
        """Route the export's own ShapeEnv (the first one built). Later ones belong to nested
        dynamo traces (``torch.cond`` branches in non-strict mode) over their own fresh
        symbols; their decisions are re-made on the export's env when the branches are
        traced for the graph, so they are left to torch."""
        if self._env is None:
            self._env = env
            return True
        return False

    def on_symbol(self, expr: sympy.Expr, source_name: str, value: Any) -> None:
        if not isinstance(expr, sympy.Symbol):
            return
        d = self._inputs.dim_of_source(source_name)
        target = self._dim_syms.get(d) if d is not None else None
        if target is None:
            if d is not None:  # torch made a dim dynamic that the spec did not declare
                target = self._declare_input_dim(d, int(value))
            elif source_name in self._root_syms:  # the phantom root of derived dims (16 * _h)
                target = self._root_syms[source_name]
            else:
                return
        known = self._sym_map.get(expr)
        if known is None:
            self._sym_map[expr] = target
            if expr.is_positive and self._solver.decide(sympy.Ge(target, 1)) is not Truth.TRUE:
                self._solver.assume(sympy.Ge(target, 1), Reason("trace_assumption", f"{d} >= 1", None, POSITIVE_OP, Assumption.POSITIVE))
        elif known != target:
            self._solver.assume(sympy.Eq(target, known), Reason(
                "trace_assumption", f"{d} == {self._names.get(known, known)}", None,
                "torch gave both dims one symbol (equal example sizes)", Assumption.SAME_SYMBOL))

    def _declare_input_dim(self, d: InputDim, value: int) -> sympy.Symbol:
        sym = self._solver.symbol(dim_symbol_name(d), 0, None, hint=value, source=str(d), adapts=True)
        self._dim_syms[d] = sym
        self._names[sym] = str(d)
        self._auto_syms.add(sym)
        return sym

    def on_replacement(self, symbol: sympy.Symbol, expr: sympy.Expr, reason: str) -> None:
        """torch unified its ``symbol`` with ``expr`` (an equality guard): kept, so that replay
        can tell which dims torch's program holds as one (:mod:`export.tracing.replay`)."""
        self._replacements[symbol] = expr

    def on_specialize(self, source_name: str, value: int) -> None:
        d = self._inputs.dim_of_source(source_name)
        if d is None or d not in self._dim_syms:
            return
        self._questions.specialized(d, value)
        self._solver.assume(sympy.Eq(self._dim_syms[d], int(value)), Reason(
            "trace_assumption", f"{d} == {value}", None,
            f"{SPECIALIZED_OP} {d} to the example size {value} (sizes 0 and 1 are never dynamic)",
            Assumption.SPECIALIZED))

    def on_range_update(self, symbol: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        expr = self._sym_map.get(symbol)
        if expr is None:
            if self._env is None or tc.symbol_kind(symbol) not in ("unbacked", "float"):
                return
            expr = self._declare_unbacked(symbol)
        if tc.symbol_kind(symbol) == "float":
            return  # float values are outside the integer solver; torch keeps their ranges
        kind = self._inline_kind or "trace_assumption"
        for rel, text in ((None if lo is None else sympy.Ge(expr, lo), f">= {lo}"),
                          (None if hi is None else sympy.Le(expr, hi), f"<= {hi}")):
            if rel is None or self._solver.decide(rel) is Truth.TRUE:
                continue
            name = self._names.get(expr, str(expr))
            floor = lo == 2 and text == ">= 2"
            origin = self._origin() if tc.symbol_kind(symbol) == "unbacked" else None  # inputs: no user line
            self._solver.assume(rel, Reason(kind, f"{name} {text}", origin, FLOOR_OP if floor else "range",
                                            Assumption.FLOOR if floor else Assumption.RANGE))

    def on_constraint_violation(self, message: str) -> bool:
        """torch's own "Constraints violated" report: kept for reference, never shown; the
        solver judges (see :func:`export.diagnose.violations.blocking_violations`)."""
        self._torch_reports.append(message)
        return True

    def judges_constraints(self) -> bool:
        """The solver judges every constraint (:mod:`export.diagnose.violations`): torch's
        own guard production and constraint solving are skipped (non-strict)."""
        return True

    # -- questions ------------------------------------------------------------------------------
    def on_question(self, expr: sympy.Basic, hint: bool | None, api: tc.Api) -> tc.Answer:
        """The answer to torch's question ``expr`` (None: torch decides): :data:`NEUTRAL`
        when :meth:`export.tracing.questions.Questions.layout_branch` or ``neutral`` lets
        the example value answer it with no fact and no guard; else recorded as a fact or
        settled by the facts, hard guards noting the site that asked. The site is walked at most once,
        from the caller's frame (the routed ``evaluate_expr``'s), and dropped with the
        question."""
        asking = self._questions.asking(sys._getframe(1))
        q = self._questions
        if hint is not None and (q.layout_branch(expr, hint, api, asking) or q.neutral(expr, hint, api, asking)
                                 or self._general(expr, hint, api)):
            self._counts.asked += 1
            self._counts.routed += 1
            return tc.NEUTRAL
        return self._guard(expr, hint, api, asking)

    def _general(self, expr: sympy.Basic, hint: bool, api: tc.Api) -> bool:
        """Whether ``guard_or_false`` / ``guard_or_true`` gets its general answer (the example's)
        as :data:`NEUTRAL`: no fact and no torch guard, when the facts do not settle it. By
        their contract the code after that answer is right whatever the truth (it is the path
        torch takes for data-dependent values), so the program keeps the values the other
        answer would exclude (``x[:n]`` asks ``n == 0``: the program runs ``n = 0``)."""
        if api.general_answer is not hint or self._settled.get(expr) is not None:
            return False
        rel = self._convert(expr)
        return rel is not None and self._solver.decide(rel) is Truth.UNKNOWN

    def _guard(self, expr: sympy.Basic, hint: bool | None, api: tc.Api, asking: Asking) -> bool | None:
        self._counts.asked += 1
        settled = self._settled.get(expr)
        if settled is not None and (hint is None or hint == settled):
            self._counts.routed += 1  # asked and answered before: facts only grow, so still settled
            if not api.soft:
                rel = self._converted[expr]
                raw = self._questions.hard_question(rel, settled, asking)
                if api == tc.Api.GUARD_BOOL:
                    self._questions.branch(rel, settled, raw)
            return settled
        start = time.perf_counter()
        try:
            rel = self._convert(expr)
            if rel is None:
                self._counts.to_torch += 1
                return None
            self._counts.routed += 1
            if hint is None:
                return self._unhinted(rel, api)
            raw = None
            if not api.soft:
                raw = self._questions.hard_question(rel, hint, asking)
            record = self._solver.guard_record(rel, hint, lambda: self._reason(rel, api))
            if record.decided is Truth.UNKNOWN:
                self._became_fact.add(rel)  # recorded as a fact: its answer needs no assumption
            answer = record.result
            if api == tc.Api.GUARD_BOOL:
                self._questions.branch(rel, answer, raw)
            self._settled[expr] = answer  # settled now: a fact, or implied by the facts
            return answer
        finally:
            self._counts.seconds += time.perf_counter() - start

    def on_static(self, expr: sympy.Basic, known: bool | None = None) -> bool | tc.Neutral | None:
        """The solver's cheap answer to a static query (None: torch's own, ``known``, stands).
        A query neither answers is an open question of the trace (a narrower spec might
        answer it, and torch would take another path: :mod:`export.tracing.replay`). A
        comparison with the int64 limit (``x.size(1) <= 9223372036854775807``: is a slice's
        end ``sys.maxsize`` past the size?) is never statically known (:data:`tc.NEUTRAL`):
        torch knows it only when the dim has an upper bound, and would build another graph
        for a bounded spec than for an unbounded one (a no-op slice kept or elided), so a
        fix adding a bound could not be verified by replay; the general path is right for
        every size."""
        rel = self._convert(expr)
        if rel is not None and _at_int64_limit(rel):
            return tc.NEUTRAL
        if rel is None:
            self._opaque += known is None
            return None
        t = self._solver.decide(rel, cheap=True)  # torch's own static answer is the fallback
        if t is Truth.UNKNOWN:
            if known is None:
                self._open.add(rel)
            return None
        return t is Truth.TRUE

    def _unhinted(self, rel: sympy.Basic, api: tc.Api) -> bool | None:
        t = self._solver.decide(rel)
        if t is not Truth.UNKNOWN:
            return t is Truth.TRUE
        if api != tc.Api.RUNTIME_ASSERT:
            self._open.add(rel)
            return None  # data-dependent: torch raises, export explains
        kind = self._inline_kind or "guard"
        self._solver.assume(rel, Reason(kind, relation_text(rel, self._names), self._origin(), "runtime check (torch._check)",
                                        Assumption.RUNTIME_CHECK))
        return True

    def _convert(self, expr: sympy.Basic) -> sympy.Basic | None:
        """The guard in the shapes language; None (torch decides) for what the solver cannot
        take: unsupported functions, and values that are not relations."""
        if expr in self._converted:
            return self._converted[expr]
        try:
            out = to_shapes(expr, self._symbol_for)
        except UnsupportedGuardError as e:
            self._counts.unsupported.append(str(e))
            out = None
        if out is not None and not is_relation(out):
            out = None
        self._converted[expr] = out
        return out

    def _symbol_for(self, sym: sympy.Symbol) -> sympy.Expr:
        known = self._sym_map.get(sym)
        if known is not None:
            return known
        if tc.symbol_kind(sym) == "unbacked":
            return self._declare_unbacked(sym)
        # a symbol torch made without telling us (e.g. a stride): let the solver know its range
        lo, hi = tc.symbol_range(self._env, sym) if self._env is not None else (None, None)
        hint = tc.symbol_hint(self._env, sym) if self._env is not None else None
        out = self._solver.symbol(f"t_{sym.name}", lo, hi, hint=None if hint is None else int(hint), source=str(sym))
        self._sym_map[sym] = out
        self._internal_syms.add(out)
        return out

    def _declare_unbacked(self, sym: sympy.Symbol) -> sympy.Symbol:
        out = self._solver.symbol(sym.name, None, None, source=f"{sym.name} (a data-dependent value)")
        self._sym_map[sym] = out
        self._unbacked_syms.add(out)
        self._names[out] = sym.name
        frame = user_frame()  # torch announces an unbacked symbol as it is made: at the .item()
        if frame is not None:
            self._unbacked_origins[sym] = frame
        return out

    def _reason(self, rel: sympy.Basic, api: tc.Api) -> Reason:
        """Where a new guard fact comes from. A user's own ``torch._check`` of a relation no
        Dim can say (``h * w == 64``) is the user's assertion, part of the spec: that is how
        such a fix is applied (torch keeps it as a runtime check in the program)."""
        frame = user_frame()
        kind = "guard"
        user_check = self._questions.is_user_check(rel) or (
            frame is not None and _CHECK_LINE.match(frame.code) is not None)
        if user_check and not dim_expressible(self._solver.simplify(rel)):
            kind = "spec"
        return Reason(kind, relation_text(rel, self._names), frame.origin if frame else None, frame.code if frame else str(api))

    def _origin(self) -> str | None:
        frame = user_frame()
        return frame.origin if frame else None

