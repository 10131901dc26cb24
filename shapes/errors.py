"""The one exception hierarchy of :mod:`shapes`."""

from __future__ import annotations

__all__ = ["ShapesError", "UnsupportedExpressionError", "ParseError", "BudgetError", "SpecError", "ContractError",
           "RefusedInputError"]


class ShapesError(Exception):
    """Root of every error raised by :mod:`shapes`."""


class UnsupportedExpressionError(ShapesError, TypeError):
    """An expression uses a construct outside the symbolic-dim language."""


class ParseError(ShapesError, ValueError):
    """A textual expression could not be parsed safely.

    The message shows what parsed and what remains, so the user can find the typo.
    """


class BudgetError(ParseError):
    """An expression exceeds a documented work budget (total degree, expanded size, integer
    magnitude): refused before any work is spent on it."""


class SpecError(ShapesError, ValueError):
    """A user's dim spec is malformed (min > max, a bad name, ...)."""


class ContractError(ShapesError, ValueError):
    """A shape contract (:mod:`shapes.contract`) is malformed, or a call cannot be read
    against it (an unknown parameter or input name)."""


class RefusedInputError(ShapesError, RuntimeError, AssertionError):
    """A call breaks a program's shape contract: the message says why in the words of the
    export's causes, with the call's sizes. A RuntimeError and an AssertionError, as torch's
    input checks raise (``export.RefusedInputError``, what ``ep.module()`` raises, is one too)."""
