"""The one exception hierarchy of :mod:`solver`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from solver.truth import Reason

__all__ = ["SolverError", "ContradictionError", "HintMismatchError", "UnknownSymbolError",
           "ProtocolError", "LimitError", "TimeLimitError", "UndecidedGuardError"]


class SolverError(Exception):
    """Root of every error raised by :mod:`solver`."""


class ContradictionError(SolverError):
    """A fact contradicts the facts already known.

    ``reasons`` holds the reasons of the conflicting facts (the new one last).
    """

    def __init__(self, message: str, reasons: tuple[Reason, ...] = ()) -> None:
        super().__init__(message)
        self.reasons = reasons


class HintMismatchError(SolverError):
    """A guard's hint (the example inputs) disagrees with what the facts imply.

    The example inputs lie outside the declared spec.
    """

    def __init__(self, message: str, reasons: tuple[Reason, ...] = ()) -> None:
        super().__init__(message)
        self.reasons = reasons


class UndecidedGuardError(SolverError):
    """A guard the facts do not settle was asked without a hint to decide it."""


class UnknownSymbolError(SolverError, KeyError):
    """An expression mentions a symbol that was never declared with ``Solver.symbol``."""

    def __str__(self) -> str:  # KeyError quotes its message; we want plain text
        return str(self.args[0])


class ProtocolError(SolverError, ValueError):
    """A JSON problem or request is malformed; the message names the field."""


class LimitError(ProtocolError):
    """A request or problem exceeds a documented budget (symbols, facts, guards, integer
    magnitude, expression degree or size, request length); see ``docs/protocol.md``."""


class TimeLimitError(SolverError):
    """A request (or a replay) ran past its time limit and was interrupted."""
