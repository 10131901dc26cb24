"""What one torch.export trace left behind: a frozen :class:`Trace`.

The bridge (:class:`export.tracing.bridge.SolverBridge`) answers torch's questions while tracing;
when tracing ends it hands over one :class:`Trace` and is done. Everything after tracing
reads the Trace: diagnosis (:mod:`export.diagnose.violations`), the program's ranges
(:mod:`export.program.exported`), fixes (:mod:`export.fixes.apply`), the ``>= 2`` policy
(:mod:`export.program.floor_policy`).

Three kinds of symbols live in the trace's solver:

* **input dims** (``dim_syms``, one per dynamic input dim, ``x.size(0)`` -> ``x_size0``)
  and the spec's **root dims** (``root_syms``, ``batch``, ``_h``); ``auto_syms`` are the
  input dims the spec left to torch (``Dim.AUTO``, or made dynamic by torch itself);
* **internal** symbols (``internal_syms``): torch's own (strides, storage offsets);
* **unbacked** symbols (``unbacked_syms``): data-dependent values (``.item()``).

What torch assumed on its own is tagged on each fact's :class:`solver.Reason`
(:class:`export.tracing.assumptions.Assumption`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

import sympy

from export.tracing.assumptions import Assumption, is_assumption
from export.tracing.convert import default_symbol, to_shapes
from export.errors import UnsupportedGuardError
from export.spec.inputs import Inputs
from export.tracing.provenance import UserFrame
from export.tracing.layout_branch import copies
from export.tracing.sites import Site
from shapes.printing import to_python
from shapes.relation import is_relation
from shapes.spec import InputDim, Spec
from solver import Fact, Solver
from solver.service import to_json

__all__ = ["Trace", "TraceStats", "BranchNote", "frozen_map",
           "problem_json", "relation_text", "spec_or_positive", "trace_stats"]

K = TypeVar("K")
V = TypeVar("V")



def trace_stats(trace: Trace) -> dict[str, Any]:
    """What the trace asked and who answered, as the report's ``stats`` show it."""
    st = trace.stats
    return {"asked": st.asked, "routed": st.routed, "to_torch": st.to_torch, "solver_seconds": round(st.seconds, 6)}


def spec_or_positive(fact: Fact) -> bool:
    """The spec's facts and torch's sizes-are-positive assumption (no ``>= 2`` floor): what
    holds for every size a program of the spec runs, for a replica's ``keep``."""
    return fact.reason.kind == "spec" or is_assumption(fact, Assumption.POSITIVE)


def relation_text(rel: sympy.Basic, names: Mapping[sympy.Symbol, str]) -> str:
    """``rel`` as Python code over ``names`` (``x.size(0) >= 2``), or as sympy prints it when it
    has no code form: wording a message or a record never fails the export.

    >>> from shapes import int_symbol
    >>> n = int_symbol("x_size0")
    >>> relation_text(sympy.Ge(n, 2), {n: "x.size(0)"})
    'x.size(0) >= 2'
    """
    try:
        return to_python(rel, names)
    except Exception:  # noqa: BLE001
        return str(rel)


def problem_json(solver: Solver) -> str | None:
    """The solver's problem as JSON text (:func:`solver.service.to_json`), or None when it
    cannot be written: what an error or a program carries for ``symshape replay``."""
    try:
        return to_json(solver)
    except Exception:  # noqa: BLE001 - the error or program stays usable without it
        return None


def frozen_map(d: Mapping[K, V]) -> Mapping[K, V]:
    """A read-only copy of ``d``.

    >>> m = frozen_map({"a": 1})
    >>> m["a"], type(m).__name__
    (1, 'mappingproxy')
    """
    return MappingProxyType(dict(d))


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceStats:
    """What one export asked and who answered: ``asked`` decisions, ``routed`` to the
    solver, ``to_torch`` left to torch (not convertible), ``seconds`` in the solver, and
    the ``unsupported`` sub-expressions that kept a decision from the solver."""

    asked: int = 0
    routed: int = 0
    to_torch: int = 0
    seconds: float = 0.0
    unsupported: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class BranchNote:
    """A user branch comparing a dim with 0, 1 or 2 (``question``, a solver relation
    ``dim op constant``), answered ``answer`` at the user's line ``origin`` (``model.py:14``;
    ``""`` when none was found) reading ``code``: worded as a warning only when the dim
    keeps the ``>= 2`` floor (:func:`export.program.branches.branch_warnings`).

    >>> n = sympy.Symbol("n", integer=True)
    >>> BranchNote(question=sympy.Eq(n, 1), answer=False, origin="m.py:3", code="if n == 1:").origin
    'm.py:3'
    """

    question: sympy.Basic
    answer: bool
    origin: str
    code: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Trace:
    """The outcome of one trace (see the module docstring).

    ``solver`` holds every fact the trace made (spec, trace assumptions, guards); it is
    not to be told anything more (build a ``replica`` to experiment). ``sym_map`` maps
    torch's symbols to their solver expressions; ``names`` maps solver symbols to what the
    user reads (``x.size(0)``). ``hard`` are the questions (solver relations) asked by hard
    decisions (an ``if``, ``int()``, ``torch._check``; not torch's 0/1-safe queries), and
    ``answered_by_fact`` those among all questions whose answer was recorded as a new fact
    (so it needed no assumption). ``unbacked_origins`` maps torch's unbacked symbols to the
    user frame that made them (the ``.item()``); ``zero_one_notes`` are the warnings about
    0/1 sizes; ``torch_reports`` torch's own constraint-violation texts (never shown).
    ``sites`` maps each hard question to the places that asked it
    (:class:`export.tracing.sites.Site`), ``answers`` each hard question to its answer.
    ``branch_notes`` are the user branches comparing a dim with 0/1/2
    (:class:`BranchNote`): warnings when the dim keeps the ``>= 2`` floor. ``neutral`` maps
    each question that a derived or intermediate size is not 0/1, asked at value-neutral
    torch places, to those places: answered by the example with no fact and no guard
    (:meth:`export.tracing.questions.Questions.neutral`). ``layout_branches`` maps each
    question asked by an ``if`` whose arms only rebind tensors to their ``.contiguous()``
    to those ifs and the example's answer: no fact, whatever it compares
    (:mod:`export.tracing.layout_branch`). The solver's first ``spec_facts`` facts are the
    spec's (the bridge declared them before tracing; model code's ``torch._check`` facts of
    kind ``spec`` come later); ``open_questions`` are the questions left undecided (static
    queries neither the solver nor torch answered, data-dependent ones), and
    ``opaque_questions`` counts the static queries left undecided that the solver could not
    read: a narrower spec could answer them, so replay (:mod:`export.tracing.replay`) checks
    the first and refuses when there are any of the second. ``replacements`` are torch's own
    unifications of its symbols (``s43 -> s17`` after an equality guard), in torch's symbols:
    how torch's program holds dims the trace found equal. Built by keyword only.
    """

    spec: Spec
    inputs: Inputs
    solver: Solver
    dim_syms: Mapping[InputDim, sympy.Symbol]
    root_syms: Mapping[str, sympy.Symbol]
    auto_syms: frozenset[sympy.Symbol]
    internal_syms: frozenset[sympy.Symbol]
    unbacked_syms: frozenset[sympy.Symbol]
    names: Mapping[sympy.Symbol, str]
    sym_map: Mapping[sympy.Symbol, sympy.Expr]
    stats: TraceStats
    hard: frozenset[sympy.Basic]
    answered_by_fact: frozenset[sympy.Basic]
    zero_one_notes: tuple[str, ...]
    unbacked_origins: Mapping[sympy.Symbol, UserFrame]
    torch_reports: tuple[str, ...]
    sites: Mapping[sympy.Basic, frozenset[Site]] = field(default_factory=lambda: frozen_map({}))
    answers: Mapping[sympy.Basic, bool] = field(default_factory=lambda: frozen_map({}))
    branch_notes: tuple[BranchNote, ...] = ()
    neutral: Mapping[sympy.Basic, frozenset[Site]] = field(default_factory=lambda: frozen_map({}))
    layout_branches: Mapping[sympy.Basic, frozenset[tuple[Site, bool]]] = field(default_factory=lambda: frozen_map({}))
    spec_facts: int = 0
    open_questions: frozenset[sympy.Basic] = frozenset()
    opaque_questions: int = 0
    replacements: Mapping[sympy.Symbol, sympy.Expr] = field(default_factory=lambda: frozen_map({}))

    @property
    def layout_copies(self) -> bool:
        """Whether a layout-only branch was answered where the other answer copies a tensor
        (:func:`export.tracing.layout_branch.copies`): the program stands only if its graph
        mutates no tensor."""
        return any(copies(site.detail) for sites in self.layout_branches.values() for site, _ in sites)

    # -- symbols ------------------------------------------------------------------------------
    @property
    def user_syms(self) -> frozenset[sympy.Symbol]:
        """The symbols the user declared: dynamic input dims (not AUTO) and root dims."""
        dims = {s for s in self.dim_syms.values() if s not in self.auto_syms}
        return frozenset(dims | {r.symbol for r in self.spec.roots})

    @property
    def dynamic_syms(self) -> frozenset[sympy.Symbol]:
        """The input dims the spec declares ``dynamic`` (they must not specialize)."""
        return frozenset(self.dim_syms[d.dim] for d in self.spec.decls
                         if d.mode == "dynamic" and d.dim in self.dim_syms)

    def is_about_inputs(self, fact: Fact) -> bool:
        """Whether ``fact`` speaks of input and root dims only (no torch-internal or
        data-dependent symbol): what a spec or a fix can say."""
        return not fact.rel.free_symbols & (self.internal_syms | self.unbacked_syms)

    def symbol(self, sym: sympy.Symbol) -> sympy.Expr:
        """The solver expression of torch's symbol ``sym``; a symbol the trace never saw
        becomes an integer symbol of the same name (:func:`export.tracing.convert.default_symbol`)."""
        known = self.sym_map.get(sym)
        return known if known is not None else default_symbol(sym)

    # -- words and JSON -----------------------------------------------------------------------
    def text(self, rel: sympy.Basic) -> str:
        """``rel`` in the user's names (:func:`relation_text` over :attr:`names`)."""
        return relation_text(rel, self.names)

    def problem(self) -> str | None:
        """The trace's solver problem as JSON text, or None (:func:`problem_json`)."""
        return problem_json(self.solver)

    # -- torch expressions ------------------------------------------------------------------
    def expression(self, expr: sympy.Basic) -> sympy.Expr | None:
        """A torch size expression in solver symbols, or None (not convertible, or not
        an integer expression)."""
        out = self._to_shapes(expr)
        return out if isinstance(out, sympy.Expr) else None

    def convert(self, expr: sympy.Basic) -> sympy.Basic | None:
        """A torch guard as a solver relation, or None (not convertible, or not a relation)."""
        out = self._to_shapes(expr)
        return out if out is not None and is_relation(out) else None

    def _to_shapes(self, expr: sympy.Basic) -> sympy.Basic | None:
        try:
            return to_shapes(expr, self.symbol)
        except UnsupportedGuardError:
            return None
