"""The one exception hierarchy of :mod:`shapes`."""

from __future__ import annotations

__all__ = ["ShapesError", "UnsupportedExpressionError", "ParseError", "BudgetError", "SpecError"]


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
