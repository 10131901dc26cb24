"""The one exception hierarchy of :mod:`export`.

Every error the export bridge raises on purpose derives from :class:`ExportError`, so
callers can catch the whole family with one ``except``. Add new classes here (small,
one concern each); keep messages self-contained, they are shown to users verbatim.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Optional, Union

import shapes.errors

__all__ = [
    "ExportError",
    "UnsupportedTorchVersionError",
    "UnsupportedGuardError",
    "InconsistentDecisionError",
    "InputError",
    "RefusedInputError",
    "ClassicOperatorError",
    "ConstraintViolationError",
    "DataDependentError",
    "ModelError",
    "ArchiveError",
    "SymshapeWarning",
]


class ExportError(Exception):
    """Root of every error raised by :mod:`export`."""


class UnsupportedTorchVersionError(ExportError, ImportError):
    """The installed torch is outside the version range whose internals we patch."""


class UnsupportedGuardError(ExportError, TypeError):
    """A torch symbolic expression uses a construct the shapes language cannot express.

    ``node`` is the first offending sub-expression, ``expr`` the whole expression
    (both torch sympy objects, kept for callers that want to fall back to torch).
    """

    def __init__(self, message: str, node: object = None, expr: object = None) -> None:
        super().__init__(message)
        self.node = node
        self.expr = expr


class InconsistentDecisionError(ExportError, RuntimeError):
    """A decider's answer contradicts the example inputs or torch's own static knowledge.

    torch traces one branch with real example sizes, so a decision that disagrees with
    the hint (or with what torch already proved) cannot be honoured.
    """


class InputError(ExportError, ValueError):
    """The example inputs or the dynamic-shape spec are malformed; the message names the
    input and dim and says what to do. Raised before tracing starts."""


class RefusedInputError(ExportError, shapes.errors.RefusedInputError):
    """An exported program's module (``ep.module()``) refuses a call: the message says why in
    the words of the export's causes, with the call's sizes (``x.size(1) must be divisible by 4
    (got x.size(1) = 6)``), and torch's own failure is its ``__cause__``. A RuntimeError and
    an AssertionError, as torch's input checks raise; and a
    :class:`shapes.errors.RefusedInputError`, what the torch-free contract check raises
    (``ep.symshape.contract.check(...)``), so one ``except`` takes both."""


class ClassicOperatorError(InputError, TypeError):
    """A classic ``dynamic_dim(...)`` used with an operand it does not take (``d >= 2.5``,
    ``d * -1``, ``d == d``): an InputError, and a TypeError as Python operators raise."""


class _WithProblem(ExportError):
    """An error that carries its trace's solver problem, rendered on first access."""

    _problem: Problem = None

    @property
    def problem(self) -> str | None:
        """The solver problem as JSON text (None: it could not be written), rendered on first
        access."""
        self._problem = _rendered(self._problem)
        return self._problem


class ConstraintViolationError(_WithProblem):
    """The traced model needs more than the declared spec guarantees.

    ``causes`` lists each root cause once (a :class:`export.diagnose.violations.Cause`); ``fixes``
    holds the suggested fixes as data (``fixes.apply(spec)`` returns a corrected spec);
    ``guards`` the raw guard facts behind them; ``problem`` the solver problem as JSON.
    """

    def __init__(self, message: str, *, causes: tuple = (), fixes: object = None,
                 guards: tuple = (), problem: Problem = None, stats: Mapping[str, Any] | None = None,
                 document: Callable[[Any], dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self._document = document
        self.causes = causes
        self.fixes = fixes
        self.guards = guards
        self._problem = problem
        self.stats = dict(stats or {})

    def to_dict(self) -> dict[str, Any]:
        """The report's JSON document (``"schema": "symshape.report/2"``, status ``violations``;
        the same keys as ``ep.symshape.to_dict()``, see docs/cli.md)."""
        return _to_dict(self, self._document)


class DataDependentError(_WithProblem):
    """The model branches on a value computed from tensor data (``.item()``, ``nonzero``)
    that the tracer cannot know; the message says which value, where (``origin``, ``file:line``,
    and ``code``, the line's text), and the line to add. ``problem`` is the solver problem (JSON)
    of the trace up to the branch."""

    def __init__(self, message: str, *, origin: str | None = None, code: str | None = None,
                 problem: Problem = None, stats: Mapping[str, Any] | None = None,
                 document: Callable[[Any], dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self._document = document
        self.origin = origin
        self.code = code
        self._problem = problem
        self.stats = dict(stats or {})

    def to_dict(self) -> dict[str, Any]:
        """The report's JSON document (status ``data_dependent``; see ``ConstraintViolationError.to_dict``)."""
        return _to_dict(self, self._document)


Problem = Union[str, Callable[[], Optional[str]], None]
"""An error's solver problem: JSON text, or what renders it on first access (writing every
guard of a large trace costs seconds that a caught error never needs)."""


def _rendered(problem: Problem) -> str | None:
    return problem() if callable(problem) else problem


def _to_dict(error: ExportError, document: Callable[[Any], dict[str, Any]] | None) -> dict[str, Any]:
    """The error's document, by the builder export's diagnosis gave it
    (:func:`export.program.document.error_document`; this module sits below every other, so it
    is handed the builder rather than importing it)."""
    if document is None:
        raise ExportError(f"{type(error).__name__} built outside symshape's export has no report document")
    return document(error)


class ModelError(ExportError, RuntimeError):
    """The model's own code, or torch running it, raised while export traced it with the
    example inputs (not a dynamic-shape constraint): the message gives the error (its type and
    first line), the model's line that raised it when known (``origin``, ``file:line``, and
    ``code``, the line's text; None when unknown), and what to do; torch's exception is the
    ``__cause__``. A RuntimeError, as most of torch's tracing errors are."""

    def __init__(self, message: str, *, origin: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.origin = origin
        self.code = code


class ArchiveError(ExportError, ValueError):
    """A saved program (``.pt2``) cannot be loaded safely: not a pt2 archive, damaged (its
    ``extra/symshape.json`` or torch's own members), of an unsupported version, or carrying
    content whose loading would run code (pickled Python objects, expressions that are not
    plain sympy). The message names the archive, the member or field, and what is wrong."""


class SymshapeWarning(UserWarning):
    """An export succeeded, but something about it deserves a look: a dim that became static
    because of its 0/1 example, or a branch decided only by torch's sizes-are->=2 assumption.
    The same text is in ``ep.symshape.warnings``."""
