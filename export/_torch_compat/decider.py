"""What the routing ShapeEnv asks: the :class:`Decider` protocol and a do-nothing base.

Every hook the routing calls is a method of the protocol (mypy checks them all); a
:class:`BaseDecider` answers nothing and lets torch decide, so a subclass overrides only
what it needs.

>>> d = BaseDecider()
>>> d.attach(None), d.on_question(sympy.Symbol("s0") > 1, True, Api.GUARD_BOOL), d.on_constraint_violation("x")
(True, None, False)
>>> d.judges_constraints()
False
"""

from __future__ import annotations

import enum
from typing import Any, Protocol

import sympy

__all__ = ["Api", "Decider", "BaseDecider", "Neutral", "NEUTRAL", "Answer"]


class Api(str, enum.Enum):
    """How torch asked a question (:meth:`Decider.on_question`'s ``api``): a closed set, so
    behaviour never hangs on a spelling. A ``str`` enum: ``Api.GUARD_BOOL == "guard_bool"``.

    >>> Api("guard_or_false") is Api.GUARD_OR_FALSE, Api.GUARD_OR_FALSE.soft, Api.GUARD_BOOL.soft
    (True, True, False)
    """

    GUARD_BOOL = "guard_bool"
    """``bool(sym_bool)``: an ``if`` on sizes, a hard decision."""
    GUARD_INT = "guard_int"
    """``int(sym_int)``: a value made concrete (asked as ``expr == value``)."""
    GUARD_OR_FALSE = "guard_or_false"
    """torch's 0/1-safe query: False when it cannot decide."""
    GUARD_OR_TRUE = "guard_or_true"
    """torch's 0/1-safe query: True when it cannot decide."""
    GUARD_SIZE_OBLIVIOUS = "guard_size_oblivious"
    """A size-oblivious guard: sizes read as if they were >= 2."""
    RUNTIME_ASSERT = "runtime_assert"
    """``torch._check``: an assertion, kept as a runtime check when it cannot be decided."""

    @property
    def soft(self) -> bool:
        """A 0/1-safe query: the branch it takes is valid whether or not a size is 0 or 1."""
        return self in (Api.GUARD_OR_FALSE, Api.GUARD_OR_TRUE, Api.GUARD_SIZE_OBLIVIOUS)

    @property
    def general_answer(self) -> bool | None:
        """The answer ``guard_or_false`` / ``guard_or_true`` gives when it cannot decide (None: no such)."""
        return _GENERAL_ANSWERS.get(self)

    def __str__(self) -> str:
        return self.value


_GENERAL_ANSWERS = {Api.GUARD_OR_FALSE: False, Api.GUARD_OR_TRUE: True}


class Neutral(enum.Enum):
    """The type of :data:`NEUTRAL` (a one-member enum, so that mypy narrows ``is NEUTRAL``)."""

    NEUTRAL = "neutral"

    def __repr__(self) -> str:
        return "NEUTRAL"


NEUTRAL = Neutral.NEUTRAL
"""An answer of :meth:`Decider.on_question`: the example value ``hint`` answers the
question and torch records no guard for it, because either answer yields a right program.
Only for a boolean question that has a hint; an int evaluation (``expr == value``) or a
runtime assertion answered NEUTRAL is an :class:`export.errors.InconsistentDecisionError`."""

Answer = bool | Neutral | None
"""What :meth:`Decider.on_question` returns: True/False, :data:`NEUTRAL`, or None (torch decides)."""


class Decider(Protocol):
    """What :class:`RoutingShapeEnv` asks. ``None`` answers mean "let torch decide"."""

    def attach(self, env: Any) -> bool:
        """The ShapeEnv ``env`` was built and routes to this decider; False declines it
        (that env then decides on its own)."""

    def on_question(self, expr: sympy.Basic, hint: bool | None, api: Api) -> Answer:
        """Decide one question of torch: a guard (a torch sympy boolean; for an int
        evaluation, ``Eq(expr, value)`` with hint True), asked through ``api``
        (``guard_bool``, ``guard_int``, ``guard_or_false``, ``runtime_assert`` ...); ``hint``
        is its value on the example. :data:`NEUTRAL`: the example value, no guard."""

    def on_static(self, expr: sympy.Basic, known: bool | None = None) -> bool | Neutral | None:
        """Answer a guard-free "is this statically known?" query, or None if unknown;
        ``known``: torch's own static answer (None: torch does not know either).
        :data:`NEUTRAL`: not statically known, whatever torch's ranges say (the caller takes
        its general path, right for every size)."""

    def on_symbol(self, expr: sympy.Expr, source_name: str, value: Any) -> None:
        """An input size/stride (``source_name``) became the symbolic ``expr``, with example ``value``."""

    def on_specialize(self, source_name: str, value: int) -> None:
        """An input size/stride/offset (``source_name``) became the constant ``value``."""

    def on_range_update(self, symbol: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        """torch's range for ``symbol`` is now ``[lo, hi]`` (None = unbounded)."""

    def on_replacement(self, symbol: sympy.Symbol, expr: sympy.Expr, reason: str) -> None:
        """torch unified ``symbol`` with ``expr``."""

    def on_constraint_violation(self, message: str) -> bool:
        """torch's own "Constraints violated" / forced-specialization error: True
        suppresses it (the decider must report), False lets torch raise it."""

    def judges_constraints(self) -> bool:
        """True: the decider judges every constraint of the spec itself and would suppress
        every torch violation unread, so a routed non-strict export skips torch's guard
        production and constraint solving (its ShapeEnv is only frozen); False: torch runs
        them and reports to :meth:`on_constraint_violation`."""

    def on_traced(self) -> None:
        """The graph is traced and every guard asked (non-strict, a judging decider: where
        torch would produce guards). An exception raised here ends the export: torch builds
        no program (the caller catches it)."""


class BaseDecider:
    """A decider that decides nothing: subclass and override what you need."""

    def attach(self, env: Any) -> bool:
        return True

    def on_question(self, expr: sympy.Basic, hint: bool | None, api: Api) -> Answer:
        return None

    def on_static(self, expr: sympy.Basic, known: bool | None = None) -> bool | Neutral | None:
        return None

    def on_symbol(self, expr: sympy.Expr, source_name: str, value: Any) -> None:
        return None

    def on_specialize(self, source_name: str, value: int) -> None:
        return None

    def on_range_update(self, symbol: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        return None

    def on_replacement(self, symbol: sympy.Symbol, expr: sympy.Expr, reason: str) -> None:
        return None

    def on_constraint_violation(self, message: str) -> bool:
        return False

    def judges_constraints(self) -> bool:
        return False

    def on_traced(self) -> None:
        return None
