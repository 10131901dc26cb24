"""What a trace assumed on its own, as a closed set: :class:`Assumption`, the ``tag`` of a
fact's :class:`solver.Reason`.

The bridge (:mod:`export.tracing.bridge`) tags every fact it records for torch's own
assumptions (sizes >= 2 under 0/1 specialization, positive size symbols, a dim specialized
to its example size, a range torch learnt, two dims given one symbol) and for the runtime
checks it records; the user's words stay in ``Reason.op`` (the code line, or what was
assumed, in plain words). Code that tells reasons apart reads the tag with
:func:`assumption`, never the words, so rewording a message cannot change behaviour.

>>> from solver import Reason
>>> assumption(Reason("trace_assumption", "x.size(0) >= 2", None, FLOOR_OP, Assumption.FLOOR))
<Assumption.FLOOR: 'floor'>
>>> assumption(Reason("guard", "x.size(0) <= 6", "m.py:3", "if x.shape[0] <= 6:")) is None
True
"""

from __future__ import annotations

import enum

from solver import Fact, Reason

__all__ = ["Assumption", "assumption", "is_assumption", "FLOOR_OP", "POSITIVE_OP", "SPECIALIZED_OP"]


class Assumption(str, enum.Enum):
    """The tag of a fact the trace recorded without a user's guard (a ``str`` enum: it is the
    tag's JSON spelling)."""

    FLOOR = "floor"
    """torch's ``>= 2`` on a dynamic size (0/1 specialization; :mod:`export.program.floor_policy`)."""
    POSITIVE = "positive"
    """The ``>= 1`` every size symbol of torch carries."""
    SPECIALIZED = "specialized"
    """torch specialized a dim to its example size (0/1, or static)."""
    RANGE = "range"
    """A range torch learnt for a symbol (other than the floor)."""
    SAME_SYMBOL = "same_symbol"
    """torch gave two dims one symbol (equal example sizes)."""
    RUNTIME_CHECK = "runtime_check"
    """A ``torch._check`` that could not be decided: kept as a runtime check."""
    SUGGESTED_CHECK = "suggested_check"
    """A ``torch._check`` relation of a suggested fix, assumed by the spec that verifies it."""
    BOUNDARY = "boundary_point"
    """A point of a 0/1 boundary region (:mod:`export.program.zero_one`)."""

    def __str__(self) -> str:
        return self.value


FLOOR_OP = "torch assumes sizes >= 2 (0/1 specialization)"
"""The words (``Reason.op``) of a :attr:`Assumption.FLOOR` fact."""
POSITIVE_OP = "torch's size symbols are positive: sympy folds s == 0 to False unseen"
"""The words of a :attr:`Assumption.POSITIVE` fact."""
SPECIALIZED_OP = "torch specialized"
"""The start of the words of a :attr:`Assumption.SPECIALIZED` fact."""


def assumption(reason: Reason) -> Assumption | None:
    """The assumption a reason is tagged with (None: a user's guard, the spec, an unknown tag).
    A problem of version 1 carries no tags: there, a ``trace_assumption``'s words (the fixed
    strings above, written only by the bridge) say it."""
    if reason.tag is not None:
        try:
            return Assumption(reason.tag)
        except ValueError:
            return None
    if reason.kind != "trace_assumption":
        return None
    op = reason.op or ""
    if op == FLOOR_OP:
        return Assumption.FLOOR
    if op == POSITIVE_OP:
        return Assumption.POSITIVE
    if op.startswith(SPECIALIZED_OP):
        return Assumption.SPECIALIZED
    return None


def is_assumption(fact: Fact, *kinds: Assumption) -> bool:
    """Whether ``fact`` is tagged with one of ``kinds``."""
    return assumption(fact.reason) in kinds
