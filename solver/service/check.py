"""Checking sizes against a program's shape contract, without torch: the one home of ``check``.

A :class:`shapes.contract.Contract` says what inputs an exported program admits. This module
answers, for sizes given by input name, whether it admits them and, if not, why, in the
contract's words (:class:`Verdict`); the ``check`` request of ``python -m solver serve``
(:func:`check_request`) and the ``check`` command of ``python -m solver`` and ``symshape``
(:mod:`solver.service.check_command`) both use it.

An input is named as the contract names it (``x``, ``d['a']``), or by the same path written
another way: ``d[a]`` (shell-friendly), ``d["a"]``, ``n.b[0]``. A tensor's sizes are a list of
ints (``[2, 8]``; ``[]`` for a 0-dim tensor), an int input's value an int (or a list of one).

>>> from shapes.contract import Contract
>>> contract = Contract.from_dict({"format": "symshape.contract", "version": 1, "params": ["x"],
...     "inputs": [{"name": "x", "path": ["x"], "kind": "tensor", "shape": ["x_size0", 16]}],
...     "dims": [{"symbol": "x_size0", "name": "x.size(0)", "dim": "batch", "min": 1, "max": 64}],
...     "conditions": [{"kind": "range", "relation": "x_size0 <= 64", "words": "x.size(0) must be <= 64"}]})
>>> verdict_of(contract, {"x": [2, 16]}).admitted
True
>>> print(verdict_of(contract, {"x": [65, 16]}).message)
the exported program refuses these inputs:
  x.size(0) must be <= 64 (got x.size(0) = 65)
>>> parse_shape_arg("d['a=b']=2, 8")
("d['a=b']", (2, 8))
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shapes.contract import Contract, ContractInput, refusal_message
from shapes.errors import ContractError
from solver.errors import ProtocolError
from solver.service.limits import DEFAULT_LIMITS, Limits, check_count, check_int
from solver.service.problem import describe_json

__all__ = ["Verdict", "Sizes", "verdict_of", "verdict_of_items", "check_request", "check_contract_data",
           "contract_from_data", "find_input", "input_path", "parse_shape_arg", "parse_sizes", "MAX_NAME_CHARS"]

MAX_NAME_CHARS = 1_000
"""An input name longer than this is no input of a contract (it is not parsed)."""

Sizes = tuple[int, ...] | int
"""A tensor's sizes, or an int input's value."""

_SIZE = re.compile(r"\s*[0-9]+\s*")


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a contract says of one call: the sizes it read (by the contract's input names, in
    call order) and every reason it refuses them (empty: admitted), in the contract's words."""

    shapes: tuple[tuple[str, Sizes], ...]
    reasons: tuple[str, ...]

    @property
    def admitted(self) -> bool:
        return not self.reasons

    @property
    def message(self) -> str | None:
        """The refusal as :class:`shapes.errors.RefusedInputError` says it (None: admitted)."""
        return refusal_message(self.reasons) if self.reasons else None

    def to_dict(self) -> dict[str, Any]:
        """``{"admitted", "reasons", "message"}``: the answer of the ``check`` request."""
        return {"admitted": self.admitted, "reasons": list(self.reasons), "message": self.message}


def verdict_of(contract: Contract, shapes: Mapping[str, object], *, limits: Limits = DEFAULT_LIMITS,
               where: str = "shapes") -> Verdict:
    """The verdict of ``contract`` on sizes given by input name (JSON data: a list of ints, or
    an int for an int input). A name no input has, or a value that is no size, is a
    :class:`~shapes.errors.ContractError` or :class:`~solver.errors.ProtocolError` whose message
    starts with ``where[name]``; an input not given is refused (``x is missing``), as
    :meth:`Contract.check_shapes` does."""
    if not isinstance(shapes, Mapping):
        raise ProtocolError(f"{where}: expected an object (sizes by input name), got {describe_json(shapes)}")
    items = ((name, value, f"{where}[{json.dumps(name)}]") for name, value in shapes.items())
    return verdict_of_items(contract, items, limits)


def verdict_of_items(contract: Contract, given: Iterable[tuple[str, object, str]],
                     limits: Limits = DEFAULT_LIMITS, *, indexed: bool = True) -> Verdict:
    """:func:`verdict_of` for ``(name, value, where)`` triples: ``where`` labels errors (with
    ``[i]`` for the ``i``-th size of a list when ``indexed``)."""
    bound: dict[str, Sizes] = {}
    for name, value, where in given:
        entry = find_input(contract, name, where)
        if entry.name in bound:
            raise ProtocolError(f"{where}: input {entry.name} is given twice")
        bound[entry.name] = _value_of(entry, value, where, limits, indexed)
    reasons = contract.refusals(bound)
    shown = tuple((i.name, bound[i.name]) for i in contract.inputs if i.name in bound)
    return Verdict(shown, tuple(reasons))


def _value_of(entry: ContractInput, value: object, where: str, limits: Limits, indexed: bool) -> Sizes:
    """A tensor's sizes (a tuple) or an int input's value (an int), checked."""
    if entry.kind == "other":
        raise ProtocolError(f"{where}: input {entry.name} is neither a tensor nor an int: the contract "
                            "does not check it (leave it out)")
    listed = isinstance(value, (list, tuple))
    if isinstance(value, (list, tuple)):
        check_count(len(value), limits.max_symbols, where, "sizes")
    items: list[int] = []
    for i, v in enumerate(value if isinstance(value, (list, tuple)) else [value]):
        at = f"{where}[{i}]" if listed and indexed else where
        if isinstance(v, bool) or not isinstance(v, int):
            raise ProtocolError(f"{at}: expected a size (an int >= 0), got {describe_json(v)}")
        check_int(v, at, limits)
        if v < 0 and entry.kind == "tensor":
            raise ProtocolError(f"{at}: a size is >= 0, got {v}")
        items.append(int(v))
    if entry.kind == "int":
        if len(items) != 1:
            raise ProtocolError(f"{where}: input {entry.name} is an int: expected one value, got {len(items)}")
        return items[0]
    if not listed:
        raise ProtocolError(f"{where}: input {entry.name} is a tensor: expected a list of its sizes, "
                            f"got {describe_json(value)}")
    return tuple(items)


# -- names ------------------------------------------------------------------------------------------

def find_input(contract: Contract, name: str, where: str = "input") -> ContractInput:
    """The input ``name`` names: by the contract's own name, else by its path written another
    way (``d[a]``, ``d["a"]``, ``d.a``).

    >>> from shapes.contract import ContractInput
    >>> c = Contract(("d",), (ContractInput("d['a']", ("d", "a"), "tensor", (2,)),), (), ())
    >>> find_input(c, "d[a]").name
    "d['a']"
    >>> find_input(c, "e")
    Traceback (most recent call last):
    ...
    shapes.errors.ContractError: input: no input named 'e' in the contract (its inputs: d['a'])
    """
    if not isinstance(name, str):
        raise ProtocolError(f"{where}: an input name is a string, got {describe_json(name)}")
    for entry in contract.inputs:
        if entry.name == name:
            return entry
    path = input_path(name)
    matches = [e for e in contract.inputs if path is not None and _same_path(e.path, path)]
    if len(matches) == 1:
        return matches[0]
    names = ", ".join(e.name for e in contract.inputs) or "none"
    if matches:
        raise ContractError(f"{where}: {name!r} names {len(matches)} inputs ({', '.join(e.name for e in matches)}): "
                            "give the contract's own name")
    shown = name if len(name) <= 60 else name[:57] + "..."
    raise ContractError(f"{where}: no input named {shown!r} in the contract (its inputs: {names})")


def _same_path(a: Sequence[str | int], b: Sequence[str | int]) -> bool:
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b))


def input_path(text: str) -> tuple[str | int, ...] | None:
    """``d['a'][0].w`` -> ``('d', 'a', 0, 'w')`` (``d[a]`` is ``d['a']``); None when ``text`` is
    no such path. Parsed with :mod:`ast`, never evaluated.

    >>> input_path("d.b[0]"), input_path("d[a]"), input_path("f(x)")
    (('d', 'b', 0), ('d', 'a'), None)
    """
    if len(text) > MAX_NAME_CHARS:
        return None
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    steps: list[str | int] = []
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, (int, str)) and not isinstance(node.slice.value, bool):
            steps.append(node.slice.value)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name):  # d[a]: d['a']
            steps.append(node.slice.id)
        elif isinstance(node, ast.Attribute):
            steps.append(node.attr)
        else:
            return None
        node = node.value  # a Subscript or an Attribute
    return (node.id, *reversed(steps))


# -- the command line's --shape NAME=SIZES ------------------------------------------------------------

def parse_shape_arg(text: str) -> tuple[str, tuple[int, ...]]:
    """``x=2,8`` -> ``('x', (2, 8))``; ``n=3`` (an int input); ``x=`` or ``x=()`` (a 0-dim
    tensor); the name is everything before the last ``=`` (``d['a']=2,8``). A
    :class:`~solver.errors.ProtocolError` says what is wrong."""
    name, eq, sizes = text.rpartition("=")
    if not eq or not name.strip():
        raise ProtocolError("expected NAME=SIZES, e.g. x=2,8 (a tensor's sizes) or n=3 (an int input)")
    return name.strip(), parse_sizes(sizes)


def parse_sizes(text: str) -> tuple[int, ...]:
    """``2,8``, ``[2, 8]``, ``(2, 8)``, ``5,`` -> a tuple of ints; ``''``, ``()``, ``[]`` -> ``()``.

    >>> parse_sizes("[2, 8]"), parse_sizes("3"), parse_sizes("")
    ((2, 8), (3,), ())
    """
    body = text.strip()
    if len(body) >= 2 and body[0] + body[-1] in ("()", "[]"):
        body = body[1:-1]
    parts = body.split(",")
    if parts and not parts[-1].strip():
        parts.pop()  # a trailing comma, or nothing at all
    sizes = []
    for p in parts:
        if not _SIZE.fullmatch(p):
            raise ProtocolError(f"{p.strip()!r} is not a size (sizes are ints >= 0, separated by commas: 2,8)")
        try:
            sizes.append(int(p))
        except ValueError:  # past Python's limit of 4,300 digits
            raise ProtocolError(f"a size of {len(p.strip())} digits is beyond any tensor size") from None
    return tuple(sizes)


# -- the serve request -------------------------------------------------------------------------------

def check_contract_data(obj: object, limits: Limits) -> None:
    """Refuse a contract's raw JSON data beyond ``limits`` (inputs and dims as symbols,
    conditions as facts, ints in magnitude) before any of it is decoded; malformed parts are
    left to the decoder."""
    if not isinstance(obj, dict):
        return
    for key, limit, what in (("inputs", limits.max_symbols, "inputs"), ("dims", limits.max_symbols, "dims"),
                             ("conditions", limits.max_facts, "conditions")):
        entries = obj.get(key)
        if isinstance(entries, list):
            check_count(len(entries), limit, f"contract.{key}", what)
    dims, inputs = obj.get("dims"), obj.get("inputs")
    for i, d in enumerate(dims if isinstance(dims, list) else ()):
        for field in ("min", "max"):
            check_int(d.get(field) if isinstance(d, dict) else None, f"contract.dims[{i}].{field}", limits)
    for i, entry in enumerate(inputs if isinstance(inputs, list) else ()):
        shape = entry.get("shape") if isinstance(entry, dict) else None
        if isinstance(shape, list):
            check_count(len(shape), limits.max_symbols, f"contract.inputs[{i}].shape", "sizes")
            for j, s in enumerate(shape):
                check_int(s, f"contract.inputs[{i}].shape[{j}]", limits)


def contract_from_data(obj: object, limits: Limits = DEFAULT_LIMITS) -> Contract:
    """The contract of a ``check`` request's ``contract`` field, within ``limits``; a
    :class:`~shapes.errors.ContractError` whose message starts with ``contract``."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"contract: expected an object (a symshape.contract document), got {describe_json(obj)}")
    check_contract_data(obj, limits)
    try:
        return Contract.from_dict(obj)
    except ContractError as e:
        text = str(e)
        raise ContractError(text if text.startswith("contract") else f"contract: {text}") from None


def check_request(request: Mapping[str, Any], limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The answer of ``{"op": "check", "contract": {...}, "shapes": {"x": [2, 8], "n": 3}}``:
    ``{"admitted", "reasons", "message"}`` (see ``docs/protocol.md``)."""
    for field in ("contract", "shapes"):
        if field not in request:
            raise ProtocolError(f"{field}: missing")
    return verdict_of(contract_from_data(request["contract"], limits), request["shapes"], limits=limits).to_dict()
