"""solver: the symbolic-shape constraint engine (no torch).

Equality classes by an affine union-find, interval ranges, congruences and Z3 last;
three-valued answers; every fact with its reason; fixes as verified data; JSON problems.
Re-exports only.
"""

from solver.engine import GuardRecord, Solver, SymbolInfo, Violation
from solver.errors import (
    ContradictionError,
    HintMismatchError,
    ProtocolError,
    SolverError,
    UndecidedGuardError,
    UnknownSymbolError,
)
from solver.truth import Fact, Reason, Truth

__all__ = [
    "ContradictionError",
    "Fact",
    "GuardRecord",
    "HintMismatchError",
    "ProtocolError",
    "Reason",
    "Solver",
    "SolverError",
    "SymbolInfo",
    "Truth",
    "UndecidedGuardError",
    "UnknownSymbolError",
    "Violation",
]
