"""The classic API's torch side: ``dynamic_dim(t, i)`` on example tensors, and the
normalisation of classic constraints into a :class:`shapes.spec.Spec` by input name.

The records themselves (``ClassicDim``, ``ClassicConstraint``, ...) and their normaliser are
the torch-free core (:mod:`shapes.spec`). Here a tensor is named by a token until the
constraints meet the example inputs (:func:`from_constraints`), and the user holds
:class:`ClassicTerm` objects, whose misuse is an :class:`export.errors.ClassicOperatorError`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import Any

import torch

from export.errors import ClassicOperatorError, InputError
from export.spec.inputs import Inputs, Leaf
from shapes.errors import SpecError
from shapes.classic import ClassicConstraint, ClassicDim, ClassicEquality, ClassicExpr, from_classic
from shapes.ranges import CLASSIC_MIN
from shapes.spec import InputDim, Spec

__all__ = ["dynamic_dim", "ClassicTerm", "from_constraints", "TOKEN"]

TOKEN = re.compile(r"^#tensor(\d+)$")


def dynamic_dim(t: Any, index: int) -> ClassicTerm:
    """The classic ``dynamic_dim(t, i)``: dim ``i`` of the example tensor ``t`` is dynamic.

    Compare it with ints (``>= > <= <``) for its range, with another dim (``==``, also
    ``2 * dynamic_dim(x, 0) + 1``) for relations; alone it means ``[2, 2**63 - 2]``.
    """
    if not isinstance(t, torch.Tensor):
        raise InputError(f"dynamic_dim expects an example input tensor, got {type(t).__name__}: {t!r:.60}")
    if isinstance(index, bool) or not isinstance(index, int):
        raise InputError(f"dynamic_dim(t, {index!r}): the dim index must be an int")
    if not -t.dim() <= index < t.dim():
        raise InputError(
            f"dynamic_dim(t, {index}): the tensor has {t.dim()} dims (shape {tuple(t.shape)}); "
            f"use an index in [0, {t.dim() - 1}]"
        )
    return ClassicTerm(ClassicDim(InputDim(f"#tensor{id(t)}", index % t.dim())))


def _operator(op: str, shown: str) -> Callable[[ClassicTerm, Any], Any]:
    """The :class:`ClassicTerm` operator ``op`` (spelled ``shown`` in messages): the core
    record's own, its refusals as ClassicOperatorError."""

    def method(self: ClassicTerm, other: Any) -> Any:
        return self._apply(op, other, shown)

    method.__name__, method.__qualname__ = op, f"ClassicTerm.{op}"
    return method


class ClassicTerm:
    """A classic ``dynamic_dim(t, i)`` (or ``a * dynamic_dim(t, i) + b``, or a constraint
    built from them) as the user holds it: the core's record (:class:`shapes.classic.ClassicDim`,
    ``ClassicExpr``, ``ClassicConstraint``, ``ClassicEquality``) behind the same operators
    and attributes, whose refusals (``d >= 2.5``, ``d * -1``, ``d == d``, ``d + 1.5``) are
    :class:`export.errors.ClassicOperatorError` (an InputError and a TypeError).

    >>> d = dynamic_dim(torch.zeros(4), 0)
    >>> (d <= 8).hi, (2 * d + 1).offset
    (8, 1)
    >>> d >= 2.5
    Traceback (most recent call last):
    ...
    export.errors.ClassicOperatorError: dynamic_dim(t, 0) >= 2.5: classic bounds must be ints
    """

    __slots__ = ("record",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, record: Any) -> None:
        self.record = record

    def __getattr__(self, name: str) -> Any:
        return getattr(self.record, name)

    def __repr__(self) -> str:
        return f"ClassicTerm({self.record.text})"

    def _apply(self, op: str, other: Any, shown: str) -> Any:
        other = other.record if isinstance(other, ClassicTerm) else other
        try:
            out = getattr(self.record, op)(other)
        except (SpecError, TypeError) as e:
            raise ClassicOperatorError(_untokened(str(e))) from None
        if out is NotImplemented:
            raise ClassicOperatorError(_untokened(f"{self.record.text} {shown} {_spelled(other)}: a classic dim "
                                                  "combines with ints (+, -, * by a positive int) and other "
                                                  "dynamic_dim(...)s only"))
        return ClassicTerm(out)

    def __bool__(self) -> bool:
        raise ClassicOperatorError(_untokened(f"{self.record.text!r} is a constraint, not a bool (chained comparisons "
                                              "like 2 <= d <= 8 are not supported; write two constraints)"))

    __ge__ = _operator("__ge__", ">=")
    __gt__ = _operator("__gt__", ">")
    __le__ = _operator("__le__", "<=")
    __lt__ = _operator("__lt__", "<")
    __eq__ = _operator("__eq__", "==")
    __ne__ = _operator("__ne__", "!=")
    __add__ = _operator("__add__", "+")
    __sub__ = _operator("__sub__", "-")
    __mul__ = _operator("__mul__", "*")
    __radd__, __rmul__ = __add__, __mul__


def _untokened(text: str) -> str:
    """A message about classic records with their tensor tokens spelled ``t``."""
    return re.sub(r"#tensor\d+", "t", text)


def _spelled(other: Any) -> str:
    """An operand as the user wrote it: a ``dynamic_dim(t, 0)`` by its text, an expression or
    a constraint by its text in parentheses, anything else by its repr."""
    if isinstance(other, ClassicDim):
        return str(other.text)
    if isinstance(other, (ClassicExpr, ClassicConstraint, ClassicEquality)):
        return f"({other.text})"
    return repr(other)


def _named(inputs: Inputs, text: str) -> str:
    """A classic record's text with each tensor token spelled by its input's name (``t``
    for a tensor that is not one of the inputs)."""
    def name(m: re.Match[str]) -> str:
        leaf = next((x for x in inputs.tensors if id(x.value) == int(m[1])), None)
        return leaf.name if leaf is not None else "t"

    return re.sub(r"#tensor(\d+)", name, text)


def from_constraints(inputs: Inputs, constraints: Iterable[Any]) -> Spec:
    """Normalize classic constraints (see :func:`shapes.classic.from_classic`) after naming
    the tensors they refer to by their input names."""
    records = [_resolve(inputs, c, i) for i, c in enumerate(constraints)]
    records += _copies_equal(inputs, records)
    try:
        return from_classic(records)
    except SpecError as e:
        raise InputError(str(e)) from None


def _copies_equal(inputs: Inputs, records: list[Any]) -> list[ClassicEquality]:
    """A tensor passed twice is one tensor to ``dynamic_dim``: each copy symshape traces in
    its place (:meth:`Inputs.example`) is tied to its original on every dim named."""
    named = {d for r in records for d in ((r.input,) if isinstance(r, ClassicConstraint) else (r.lhs, r.rhs))}
    return [ClassicEquality(InputDim(copy, dim), InputDim(original, dim), 1, 0,
                            f"dynamic_dim({copy}, {dim}) == dynamic_dim({original}, {dim})")
            for copy, original in inputs.copies
            for dim in sorted(d.dim for d in named if d.input_name == original and d.dim is not None)]


def _resolve(inputs: Inputs, c: Any, i: int) -> Any:
    """Replace the tensor tokens of a classic record by the example input's name."""
    if isinstance(c, ClassicTerm):
        c = c.record
    if isinstance(c, ClassicExpr):
        raise InputError(f"constraints[{i}] is {_named(inputs, c.text)}, an expression: "
                         "compare it with a dynamic_dim(...)")
    if isinstance(c, ClassicDim):
        c = c >= CLASSIC_MIN
    if isinstance(c, bool):
        raise InputError(
            f"constraints[{i}] is a bool: compare dynamic_dim(...) with ints or dims "
            "(chained comparisons like 2 <= d <= 8 are not supported: write two constraints)"
        )
    if not isinstance(c, (ClassicConstraint, ClassicEquality)):
        raise InputError(f"constraints[{i}] is {c!r:.60}, not a dynamic_dim(...) constraint")
    fields = ("input",) if isinstance(c, ClassicConstraint) else ("lhs", "rhs")
    changes: dict[str, Any] = {}
    text = c.text
    for f in fields:
        d = getattr(c, f)
        leaf = _leaf_of_token(inputs, d.input_name, i)
        changes[f] = InputDim(leaf.name, d.dim)
        text = text.replace(d.input_name, leaf.name)
    record: Any = c  # either record type: both have ``text``
    return dataclasses.replace(record, text=text, **changes)


def _leaf_of_token(inputs: Inputs, token: str, i: int) -> Leaf:
    m = TOKEN.match(token)
    if m is None:
        leaf = inputs.leaf_named(token)
    else:
        leaf = next((x for x in inputs.tensors if id(x.value) == int(m[1])), None)
    if leaf is None or not leaf.is_tensor:
        raise InputError(
            f"constraints[{i}] refers to a tensor that is not one of the example inputs; "
            "call dynamic_dim on the very tensors passed in args/kwargs"
        )
    return leaf
