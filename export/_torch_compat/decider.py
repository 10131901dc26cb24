"""What the routing ShapeEnv asks: the :class:`Decider` protocol and a do-nothing base."""

from __future__ import annotations

from typing import Protocol

import sympy

__all__ = ["Decider", "BaseDecider"]


class Decider(Protocol):
    """What :class:`RoutingShapeEnv` asks. ``None`` answers mean "let torch decide".

    Optional extra hooks, called only if the object has them:
    ``attach(shape_env) -> bool | None`` (the env was built and routes to this decider;
    returning False declines it, and that env decides on its own),
    ``on_symbol(expr, source_name, value) -> None`` (an input size/stride became the
    symbolic ``expr``, with example ``value``),
    ``on_replacement(symbol, expr, reason) -> None`` (torch unified a symbol) and
    ``on_constraint_violation(message) -> bool`` (True suppresses torch's own
    "Constraints violated" / forced-specialization error; the bridge must report) and
    ``on_neutral(expr, hint, api) -> bool`` (True: answer the example value ``hint``
    with no guard recorded, because either answer yields a right program).
    """

    def on_guard(self, expr: sympy.Basic, hint: bool | None, api: str) -> bool | None:
        """Decide a guard (a torch sympy boolean); ``hint`` is its value on the example."""

    def on_static(self, expr: sympy.Basic) -> bool | None:
        """Answer a guard-free "is this statically known?" query, or None if unknown."""

    def on_specialize(self, source_name: str, value: int) -> None:
        """An input size/stride/offset (``source_name``) became the constant ``value``."""

    def on_range_update(self, symbol: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        """torch's range for ``symbol`` is now ``[lo, hi]`` (None = unbounded)."""


class BaseDecider:
    """A decider that decides nothing: subclass and override what you need."""

    def on_guard(self, expr: sympy.Basic, hint: bool | None, api: str) -> bool | None:
        return None

    def on_static(self, expr: sympy.Basic) -> bool | None:
        return None

    def on_specialize(self, source_name: str, value: int) -> None:
        return None

    def on_range_update(self, symbol: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        return None
