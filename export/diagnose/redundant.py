"""Causes the others already say: a violated guard that the spec and the other violations imply.

A failing export often violates one relation in two spellings: ``attention_mask.view(batch, -1)``
asks ``attention_mask.size(0) * attention_mask.size(1) % input_ids.size(0) == 0`` and a later
op asks ``input_ids.size(0) == attention_mask.size(0)``. Once the equality holds the remainder
is 0, so listing both makes the user read (and a fix carry) a condition that costs nothing.
:func:`irredundant` drops such facts; it asks the solver, so it drops only what is implied
for every size the spec admits (a fact it cannot prove redundant stays).
"""

from __future__ import annotations

from contextlib import ExitStack

import sympy

from export.tracing.assumptions import Assumption, is_assumption
from export.tracing.trace import Trace, spec_or_positive
from shapes.expr import FloorDiv
from solver import Fact, Solver, SolverError, Truth

__all__ = ["irredundant", "MAX_FACTS"]

MAX_FACTS = 12
"""Above this many violated facts, the quadratic pass (each check assumes all the others)
gives way to :func:`_simplest_first`."""


def irredundant(facts: list[Fact], trace: Trace) -> list[Fact]:
    """``facts`` (violated guards) without those the spec and the other kept ones imply, in
    their order; the most complex (floor-division/remainder, more dims) are tried first.

    >>> import torch
    >>> from torch.export import Dim
    >>> from export.api import traced
    >>> from export.diagnose.violations import blocking_violations
    >>> def f(x, y):
    ...     return x.view(y.shape[0], -1) + y[:, :1]
    >>> _, trace = traced(f, (torch.randn(4, 3), torch.randn(4, 2)),
    ...                   dynamic_shapes={"x": {0: Dim("a")}, "y": {0: Dim("b")}})
    >>> blocking = blocking_violations(trace)
    >>> len(blocking) > len(irredundant(blocking, trace)) == 1
    True
    """
    candidates = [f for f in facts if not is_assumption(f, Assumption.SPECIALIZED)]
    if len(candidates) < 2:
        return facts
    if len(facts) > MAX_FACTS:  # with torch's sizes >= 1 (what every program enforces)
        positive = trace.solver.replica(kinds=("spec", "trace_assumption"), keep=spec_or_positive)
        return _simplest_first(facts, candidates, positive)
    spec = trace.solver.replica(kinds=("spec",))
    kept = list(facts)
    for f in sorted(candidates, key=_weight, reverse=True):
        others = [g for g in kept if g is not f]
        try:
            with ExitStack() as stack:
                for g in others:
                    stack.enter_context(spec.assuming(g.rel, g.reason))
                implied = spec.decide(f.rel) is Truth.TRUE
        except SolverError:
            implied = False  # the others contradict each other: keep every cause
        if implied:
            kept.remove(f)
    return kept


def _simplest_first(facts: list[Fact], candidates: list[Fact], spec: Solver) -> list[Fact]:
    """Past :data:`MAX_FACTS`: the candidates from the shortest up, each dropped when the spec
    and the shorter ones kept so far imply it (one question per fact, each kept one assumed
    once). A windowed model's long derived guards (Swin's window views) follow from its short
    ones (``h % 4 == 0``, ``h // 4 % 2 != 1``, ...), which are the causes worth reading."""
    dropped: set[int] = set()
    with ExitStack() as stack:
        for f in sorted(candidates, key=lambda f: (len(str(f.rel)), str(f.rel))):
            try:
                if spec.decide(f.rel) is Truth.TRUE:
                    dropped.add(id(f))
                    continue
                stack.enter_context(spec.assuming(f.rel, f.reason))
            except SolverError:
                return facts  # the violations contradict each other: keep every cause
    return [f for f in facts if id(f) not in dropped]


def _weight(f: Fact) -> tuple[int, int, str]:
    periodic = int(f.rel.has(FloorDiv, sympy.Mod))
    return periodic, len(f.rel.free_symbols), str(f.rel)
