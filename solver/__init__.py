"""solver: the symbolic-shape constraint engine (no torch).

Equality classes by an affine union-find, interval ranges, congruences and Z3 last;
three-valued answers; every fact with its reason; fixes as verified data; JSON problems.
Re-exports only.
"""

from solver.codec import FactSpec, GuardSpec, Problem, SymbolSpec
from solver.engine import GuardRecord, Solver, SymbolInfo, Violation
from solver.errors import (
    ContradictionError,
    HintMismatchError,
    ProtocolError,
    SolverError,
    UndecidedGuardError,
    UnknownSymbolError,
)
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
    "problem_from_solver",
    "replay",
    "serve",
    "solver_from_problem",
]
