"""solver: the symbolic-shape constraint engine (no torch).

Equality classes by an affine union-find, interval ranges, congruences and Z3 last;
three-valued answers; every fact with its reason; fixes as verified data (``suggest(s)``).
Re-exports only: the names in ``__all__`` are the engine's public API, and the service (JSON
problems, the replay and the JSON-lines server) is :mod:`solver.service`'s. ``export/``
imports from these two and nothing else (``tests/test_layering.py`` checks it); every other
module is internal.

The engine's layers, bottom up: :mod:`solver.kernel` (intervals, congruences, union-find,
Z3, normal form), :mod:`solver.state` (what is known), :mod:`solver.decide` (the stages,
cheapest first), then :mod:`solver.engine` (the :class:`Solver` facade) with
:mod:`solver.absorb` (taking a fact in), :mod:`solver.queries` (bounds, explanations) and
:mod:`solver.fixes` (what the user should change).
"""

__version__ = "0.1.0"
"""symshape's version (the same in ``shapes``, ``solver``, ``export`` and pyproject.toml)."""

from solver.engine import Solver
from solver.errors import (
    ContradictionError,
    HintMismatchError,
    SolverError,
    UndecidedGuardError,
    UnknownSymbolError,
)
from solver.fixes import (
    CheckFix,
    DivisibleFix,
    EqualFix,
    Fix,
    Fixes,
    RangeFix,
    RelationFix,
    SpecializeFix,
    suggest,
)
from solver.kernel.congruence import Congruence, solve_linear
from solver.kernel.smt import Deadline
from solver.records import GuardRecord, SymbolInfo, Violation
from solver.truth import DECLARED, Fact, Reason, Truth

__all__ = [
    "DECLARED",
    "CheckFix",
    "Congruence",
    "ContradictionError",
    "Deadline",
    "DivisibleFix",
    "EqualFix",
    "Fact",
    "Fix",
    "Fixes",
    "GuardRecord",
    "HintMismatchError",
    "RangeFix",
    "Reason",
    "RelationFix",
    "Solver",
    "SolverError",
    "SpecializeFix",
    "SymbolInfo",
    "Truth",
    "UndecidedGuardError",
    "UnknownSymbolError",
    "Violation",
    "solve_linear",
    "suggest",
]
