"""Which dims keep torch's ``>= 2`` trace assumption: a function of a :class:`Trace`.

torch assumes every dynamic size is ``>= 2`` while tracing (sizes 0 and 1 are
specialized), and the bridge records that as a ``trace_assumption`` fact
(:attr:`export.tracing.assumptions.Assumption.FLOOR`). The program must keep the assumption (in its ranges and
a runtime check) only for dims whose value a **hard decision** relied on: an ``if``, an
``int()``, a ``torch._check`` whose answer holds with the floor but not without it (for
such a dim, a size 0/1 would run a different program). torch's 0/1-safe queries
(``guard_or_false``, size-oblivious checks) never count, nor do decisions whose answer
was recorded as a new fact (the fact, not the assumption, gives the answer).

:func:`floor_policy` answers "given a Trace, which dims need the ``>= 2`` floor, and
why": a :class:`FloorPolicy` with, per root dim, the hard decisions that needed it, and
the solver of the final ranges (every fact :meth:`FloorPolicy.keeps` accepts).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import sympy

from export.tracing.assumptions import Assumption, assumption, is_assumption
from export.tracing.trace import Trace, frozen_map
from solver import Fact, Solver, Truth

__all__ = ["FloorPolicy", "floor_policy", "is_floor", "needed_floor", "relaxed_solver"]

_KINDS = ("spec", "guard", "trace_assumption")


def is_floor(fact: Fact) -> bool:
    """Whether ``fact`` is torch's ``>= 2`` assumption on a size."""
    return is_assumption(fact, Assumption.FLOOR)


def relaxed_solver(trace: Trace) -> Solver | None:
    """The trace's facts without the ``>= 2`` assumptions, or None when there is nothing
    to compare (no hard decision, or no ``>= 2`` assumption)."""
    questions = trace.hard - trace.answered_by_fact
    if not questions or not any(is_floor(f) for f in trace.solver.facts):
        return None
    return trace.solver.replica(kinds=_KINDS, keep=lambda f: not is_floor(f))


def needed_floor(trace: Trace, relaxed: Solver | None) -> Mapping[sympy.Symbol, tuple[sympy.Basic, ...]]:
    """Root dim -> the hard decisions (solver relations, sorted by text) whose answer the
    trace's solver settles but ``relaxed`` (:func:`relaxed_solver`) does not settle the
    same way: those dims need the ``>= 2`` floor. Empty when ``relaxed`` is None."""
    if relaxed is None:
        return frozen_map({})
    because: dict[sympy.Symbol, list[sympy.Basic]] = {}
    settled = {rel: trace.solver.decide(rel) for rel in trace.hard - trace.answered_by_fact}
    relied = [rel for rel, t in settled.items() if t is not Truth.UNKNOWN and relaxed.decide(rel) is not t]
    for rel in sorted(relied, key=str):  # (printing is slow: only the few that relied on the floor)
        for x in sorted(rel.free_symbols, key=str):
            because.setdefault(trace.solver.root_of(x), []).append(rel)
    return frozen_map({root: tuple(dict.fromkeys(rels)) for root, rels in because.items()})


@dataclass(frozen=True, slots=True)
class FloorPolicy:
    """The ``>= 2`` policy of one trace (see the module docstring).

    ``needed`` maps each root dim that keeps the floor to the hard decisions that relied
    on it; ``final`` is the solver of the final ranges: the trace's facts that
    :meth:`keeps` accepts.
    """

    trace: Trace
    needed: Mapping[sympy.Symbol, tuple[sympy.Basic, ...]]
    final: Solver

    def needs_floor(self, sym: sympy.Symbol) -> bool:
        """Whether the dim ``sym`` (any member of its class) keeps the ``>= 2`` floor."""
        return self.trace.solver.root_of(sym) in self.needed

    def keeps(self, fact: Fact) -> bool:
        """Whether a fact belongs to the final spec: every fact but the ``>= 2``
        assumptions no hard decision needed (and torch's 0/1 specializations, reported
        separately)."""
        return _keeps(self.trace, self.needed, fact)

    def about_inputs(self, fact: Fact) -> bool:
        """A kept fact that speaks of input dims only (what a spec or a fix can say)."""
        return self.keeps(fact) and self.trace.is_about_inputs(fact)


def _keeps(trace: Trace, needed: Mapping[sympy.Symbol, object], fact: Fact) -> bool:
    tag = assumption(fact.reason)
    if tag is Assumption.SPECIALIZED:
        return False
    return tag is not Assumption.FLOOR or any(trace.solver.root_of(x) in needed for x in fact.rel.free_symbols)


def floor_policy(trace: Trace, covered: AbstractSet[sympy.Basic] = frozenset(),
                 relieved: AbstractSet[sympy.Symbol] = frozenset(),
                 kept: AbstractSet[sympy.Symbol] = frozenset(), *,
                 needed: Mapping[sympy.Symbol, tuple[sympy.Basic, ...]] | None = None) -> FloorPolicy:
    """The ``>= 2`` policy of ``trace``: which dims need the floor, why, and the final
    solver (the relaxed solver plus the needed floors, when one was built).

    ``covered`` decisions and ``relieved`` root dims have evidence that the program is
    right at size 1 (:func:`export.program.zero_one.zero_one`): they need no floor, except for
    the ``kept`` root dims. ``needed`` is :func:`needed_floor` of the trace when the
    caller has it already (it decides every hard question twice: the costly part).

    >>> import torch
    >>> from torch.export import Dim
    >>> from export.api import traced
    >>> def f(x):
    ...     return x * 2 if x.shape[0] == 1 else x + 1
    >>> _, trace = traced(f, (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b")}})
    >>> policy = floor_policy(trace)
    >>> {str(root): [str(rel) for rel in why] for root, why in policy.needed.items()}
    {'b': ['Eq(x_size0, 1)']}
    >>> x = next(iter(trace.dim_syms.values()))
    >>> policy.final.bounds(x), policy.needs_floor(x)
    ((2, None), True)
    """
    relaxed = relaxed_solver(trace)
    if needed is None:
        needed = needed_floor(trace, relaxed)
    if covered or relieved:
        left = {root: tuple(r for r in rels if r not in covered or root in kept)
                for root, rels in needed.items() if root not in relieved or root in kept}
        needed = frozen_map({root: rels for root, rels in left.items() if rels})
    return FloorPolicy(trace, needed, _final_solver(trace, needed, relaxed))


def _final_solver(trace: Trace, needed: Mapping[sympy.Symbol, object], relaxed: Solver | None) -> Solver:
    floors = [f for f in trace.solver.facts if is_floor(f)]
    if all(_keeps(trace, needed, f) for f in floors):
        return trace.solver
    if relaxed is None:
        return trace.solver.replica(kinds=_KINDS, keep=lambda f: _keeps(trace, needed, f))
    for f in floors:
        if _keeps(trace, needed, f):
            relaxed.assume(f.rel, f.reason)
    return relaxed
