"""Three-valued answers and the reasons facts carry.

>>> Truth.TRUE.negate() is Truth.FALSE
True
>>> bool(Truth.UNKNOWN)
Traceback (most recent call last):
...
TypeError: a Truth is three-valued; compare it with Truth.TRUE / FALSE / UNKNOWN
>>> Reason.spec("x.size(0) <= 64")
Reason(kind='spec', text='x.size(0) <= 64', origin=None, op=None, tag=None)

A reason may spell its relation lazily (:meth:`Reason.spelled`): printing a sympy relation
costs more than deciding most of them, and most facts' reasons are never shown. The text is
filled in on first read and is then the same as an eager ``str(rel)``:

>>> import sympy
>>> n = sympy.Symbol("n", integer=True)
>>> lazy = Reason.spelled("spec", sympy.Ge(n, 2))
>>> lazy == Reason.spec("n >= 2"), lazy.text
(True, 'n >= 2')
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import sympy

__all__ = ["Truth", "Reason", "Fact", "REASON_KINDS", "DECLARED"]

REASON_KINDS = ("spec", "trace_assumption", "guard")
DECLARED = "declared range"
"""``Reason.op`` of the facts ``Solver.symbol`` records for a declared range (reserved in problems)."""


class Truth(enum.Enum):
    """The answer of :meth:`solver.Solver.decide`: never a bare bool, never a guess."""

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"

    def __bool__(self) -> bool:
        raise TypeError("a Truth is three-valued; compare it with Truth.TRUE / FALSE / UNKNOWN")

    def negate(self) -> Truth:
        """TRUE <-> FALSE; UNKNOWN stays."""
        if self is Truth.TRUE:
            return Truth.FALSE
        if self is Truth.FALSE:
            return Truth.TRUE
        return Truth.UNKNOWN

    @staticmethod
    def of(value: bool) -> Truth:
        """The Truth of a definite bool."""
        return Truth.TRUE if value else Truth.FALSE


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a fact holds.

    ``kind`` is ``spec`` (the user declared it), ``trace_assumption`` (the tracer assumed it,
    e.g. sizes >= 2 under 0/1 specialization) or ``guard`` (the traced code branched on it);
    ``text`` is the user's own spelling, ``origin`` the user's ``file:line`` and ``op`` the op
    (words: the user's code line, or what the tracer assumed). ``tag`` is a machine tag from
    a closed set of the caller's (the export's :class:`export.tracing.trace.Assumption`), never
    shown and never reworded: code that must tell reasons apart reads the tag, not the words.
    The solver itself never reads it; problems carry it.

    >>> Reason("trace_assumption", "n >= 2", None, "torch assumes sizes >= 2", "floor").tag
    'floor'
    """

    kind: str
    text: str | None = None
    origin: str | None = None
    op: str | None = None
    tag: str | None = None
    rel: sympy.Basic | None = field(default=None, compare=False, repr=False)  # spelled lazily

    def __post_init__(self) -> None:
        if self.kind not in REASON_KINDS:
            raise ValueError(f"Reason.kind must be one of {REASON_KINDS}, got {self.kind!r}")

    def __getattr__(self, name: str) -> str | None:
        """Only reached for an unset slot: the text of a :meth:`spelled` reason, printed
        (and kept) on first read."""
        if name != "text":
            raise AttributeError(name)
        text = str(object.__getattribute__(self, "rel"))
        object.__setattr__(self, "text", text)
        return text

    @staticmethod
    def spelled(kind: str, rel: sympy.Basic) -> Reason:
        """A reason whose text is ``str(rel)``, printed only when read (see the module doc)."""
        if kind not in REASON_KINDS:
            raise ValueError(f"Reason.kind must be one of {REASON_KINDS}, got {kind!r}")
        reason = object.__new__(Reason)
        for name, value in (("kind", kind), ("origin", None), ("op", None), ("tag", None), ("rel", rel)):
            object.__setattr__(reason, name, value)
        return reason

    @staticmethod
    def spec(text: str | None = None, origin: str | None = None) -> Reason:
        return Reason("spec", text, origin)

    @staticmethod
    def guard(text: str | None = None, origin: str | None = None, op: str | None = None) -> Reason:
        return Reason("guard", text, origin, op)

    def describe(self) -> str:
        """One line for messages: ``guard 'x.size(0) == 1' at model.py:9 (view)``."""
        parts = [self.kind]
        if self.text:
            parts.append(repr(self.text))
        if self.origin:
            parts.append(f"at {self.origin}")
        if self.op:
            parts.append(f"({self.op})")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Fact:
    """A relation assumed true, with its reason. ``index`` orders facts by arrival."""

    rel: sympy.Basic
    reason: Reason
    index: int

    def __str__(self) -> str:
        return f"{self.rel}  [{self.reason.describe()}]"
