"""Causes in words: floor-division and remainder facts said as the congruences they amount to.

torch states a divisibility as the guard its op asked (``2 * ((c + 1) // 2) == c``,
``(L + 3) % 4 == 3``, ``h * w == 4 * (h // 2) * (w // 2)``); when the solver proves such facts
equivalent to congruences of input dims under the spec, a cause reads
``x.size(1) must be divisible by 2`` (or ``x.size(2) % 4 must be 3``).
"""

from __future__ import annotations

import sympy

from export.trace import Trace, spec_or_positive
from solver import Fact, Reason, Solver, SolverError, Truth

__all__ = ["congruence_words"]


def congruence_words(trace: Trace, facts: list[Fact]) -> list[str] | None:
    """``facts`` said as congruences of input dims, or None: the congruences the solver
    derives from the spec (with sizes >= 1) plus ``facts`` (beyond the spec's own), provided
    they imply every fact back (an equivalence, not a consequence) and each is about a class
    with an input dim equal to its root (``x.size(1) % 4 must be 3``).

    >>> import torch
    >>> from torch.export import Dim
    >>> from export.api import traced
    >>> def glu(x):
    ...     a, b = x.chunk(2, dim=-1)
    ...     return a * b
    >>> _, trace = traced(glu, (torch.randn(3, 8),), dynamic_shapes={"x": {1: Dim("c")}})
    >>> guards = [f for f in trace.solver.facts if f.reason.kind == "guard"]
    >>> [str(f.rel) for f in guards]
    ['Eq(FloorDiv(x_size1 + 1, 2), x_size1 - FloorDiv(x_size1 + 1, 2))']
    >>> congruence_words(trace, guards)
    ['x.size(1) must be divisible by 2']
    """
    kinds = ("spec", "trace_assumption")
    try:
        spec = trace.solver.replica(kinds=kinds, keep=spec_or_positive)
        before = set(spec.congruences())
        found = trace.solver.replica(kinds=kinds, keep=spec_or_positive, extra=tuple((f.rel, f.reason) for f in facts))
        new = [c for c in found.congruences() if c not in before]
        if not new:
            return None
        back = trace.solver.replica(kinds=kinds, keep=spec_or_positive, extra=tuple(
            (sympy.Eq(sympy.Mod(root, m), r), Reason("guard", f"{root} % {m} == {r}", None, None))
            for root, m, r in new))
        if any(back.decide(f.rel) is not Truth.TRUE for f in facts):
            return None
        words = []
        for root, m, r in new:
            shown = _input_dim_named(trace, spec, root)
            if shown is None:
                return None
            words.append(f"{shown} must be divisible by {m}" if r == 0 else f"{shown} % {m} must be {r}")
        return words
    except SolverError:
        return None


def _input_dim_named(trace: Trace, spec: Solver, root: sympy.Symbol) -> str | None:
    """The name of an input dim equal to ``root`` under the spec (``x.size(1)``), or None."""
    for d, sym in sorted(trace.dim_syms.items(), key=lambda kv: str(kv[0])):
        if spec.root_of(sym) == spec.root_of(root) and spec.decide(sympy.Eq(sym, root)) is Truth.TRUE:
            return trace.names.get(sym, str(d))
    return None
