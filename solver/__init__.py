"""solver: the symbolic-shape constraint engine (no torch).

Equality classes by an affine union-find, interval ranges, congruences and Z3 last;
three-valued answers; every fact with its reason; fixes as verified data
(``suggest(s)``); JSON problems (``to_json(s)``, ``from_json(text)``). Re-exports only.
"""

from solver.codec import FactSpec, GuardSpec, Problem, SymbolSpec, from_json, to_json
from solver.engine import GuardRecord, Solver, SymbolInfo, Violation
from solver.errors import (
    ContradictionError,
    HintMismatchError,
    ProtocolError,
    SolverError,
    UndecidedGuardError,
    UnknownSymbolError,
)
from solver.fixes import Fixes, suggest
from solver.protocol import (
    Session,
    answers_from_solver,
    problem_from_solver,
    replay,
    serve,
    solver_from_problem,
)
from solver.truth import Fact, Reason, Truth

__all__ = [
    "ContradictionError",
    "Fact",
    "FactSpec",
    "Fixes",
    "GuardRecord",
    "GuardSpec",
    "HintMismatchError",
    "Problem",
    "ProtocolError",
    "Reason",
    "Session",
    "Solver",
    "SolverError",
    "SymbolInfo",
    "SymbolSpec",
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
    "suggest",
    "to_json",
]
