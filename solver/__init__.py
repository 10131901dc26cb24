"""solver: the symbolic-shape constraint engine (no torch).

Equality classes by an affine union-find, interval ranges, congruences and Z3 last;
three-valued answers; every fact with its reason; fixes as verified data
(``suggest(s)``); JSON problems (``to_json(s)``, ``from_json(text)``). Re-exports only.

The names in ``__all__`` are the solver's public API: ``export/`` imports from ``solver``
and nothing else (``tests/test_layering.py`` checks it); the submodules are internal.
"""

from solver.service.codec import from_json, to_json
from solver.kernel.congruence import Congruence, solve_linear
from solver.engine import Solver
from solver.errors import (
    ContradictionError,
    HintMismatchError,
    LimitError,
    ProtocolError,
    SolverError,
    TimeLimitError,
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
from solver.service.limits import Limits
from solver.service.problem import FactSpec, GuardSpec, Problem, SymbolSpec
from solver.service.protocol import (
    Session,
    answers_from_solver,
    problem_from_solver,
    replay,
    serve,
    solver_from_problem,
)
from solver.records import GuardRecord, SymbolInfo, Violation
from solver.kernel.smt import Deadline
from solver.truth import Fact, Reason, Truth

__all__ = [
    "CheckFix",
    "Congruence",
    "ContradictionError",
    "Deadline",
    "DivisibleFix",
    "EqualFix",
    "Fact",
    "FactSpec",
    "Fix",
    "Fixes",
    "GuardRecord",
    "GuardSpec",
    "HintMismatchError",
    "LimitError",
    "Limits",
    "Problem",
    "ProtocolError",
    "RangeFix",
    "Reason",
    "RelationFix",
    "Session",
    "Solver",
    "SolverError",
    "SpecializeFix",
    "SymbolInfo",
    "SymbolSpec",
    "TimeLimitError",
    "Truth",
    "UndecidedGuardError",
    "UnknownSymbolError",
    "Violation",
    "answers_from_solver",
    "from_json",
    "problem_from_solver",
    "replay",
    "serve",
    "solver_from_problem",
    "solve_linear",
    "suggest",
    "to_json",
]
