"""A program's shape contract: what its inputs must satisfy, as data, checked without torch.

An exported program runs only the inputs its trace was right for. ``ep.module()`` refuses the
others through torch's guard function, but the places programs are deployed to drop it:
AOTInductor keeps only the asserts in the graph, ONNX and ExecuTorch keep none. The contract is
the same knowledge as a value that travels with the program (in its archive, in an AOTI
package's metadata, in an ONNX model's ``metadata_props``, beside a ``.pte``) and that a serving
stack checks before running it, with no torch: the inputs in call order, their dims in the
user's names with their ranges, and every condition the program relies on, each over input
sizes only (a ``Dim``'s root written as the input dim it is read from), in the causes' words
and with the source line that needs it.

>>> x0, x1 = int_symbol("x_size0"), int_symbol("x_size1")
>>> contract = Contract(
...     params=("x",),
...     inputs=(ContractInput("x", ("x",), "tensor", ("x_size0", "x_size1", 16)),),
...     dims=(ContractDim("x_size0", "x.size(0)", "batch", 1, 64), ContractDim("x_size1", "x.size(1)", "4*_s", 4, None)),
...     conditions=(Condition(sympy.Le(x0, 64), "x.size(0) must be <= 64", "range"),
...                 Condition(sympy.Eq(sympy.Mod(x1, 4), 0), "x.size(1) must be divisible by 4", "derived",
...                           note="x.size(1) = 4 * _s", origin="m.py:3", code="x.view(b, -1, 4)")))
>>> contract.check_shapes({"x": (2, 8, 16)})
>>> contract.check_shapes({"x": (65, 6, 16)})
Traceback (most recent call last):
...
shapes.errors.RefusedInputError: the exported program refuses these inputs:
  x.size(0) must be <= 64 (got x.size(0) = 65)
  x.size(1) must be divisible by 4 (x.size(1) = 4 * _s; got x.size(1) = 6), needed at m.py:3: x.view(b, -1, 4)
>>> Contract.from_json(contract.to_json()) == contract
True
"""

from __future__ import annotations

import functools
import json
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import sympy

from shapes.errors import ContractError, RefusedInputError, ShapesError
from shapes.compiled import compile_relation
from shapes.expr import int_symbol
from shapes.parse import parse_expr
from shapes.printing import to_text

__all__ = ["Contract", "ContractInput", "ContractDim", "Condition", "ConditionKind", "Refusal",
           "CONTRACT_FORMAT", "CONTRACT_VERSION", "METADATA_KEY", "INPUT_KINDS", "refusal_message"]

CONTRACT_FORMAT = "symshape.contract"
"""The ``format`` field of a contract's JSON document (docs/contract.schema.json)."""
CONTRACT_VERSION = 1
"""The version of that document; a reader refuses other versions."""

INPUT_KINDS = ("tensor", "int", "other")
"""What a contract input is: a tensor (its ``shape``), an int (its value, ``shape`` of one
entry) or anything else (not checked)."""

METADATA_KEY = "symshape.contract"
"""The key of a contract's JSON text where a consumer's file keeps metadata: an AOTI
package's metadata, an ONNX model's ``metadata_props`` (:mod:`shapes.contract_files`)."""

_HEADER = "the exported program refuses these inputs:"


class ConditionKind(Enum):
    """Why a condition is in the contract (a closed set; the words are separate data)."""

    RANGE = "range"
    """A bound of one dim: its ``Dim``'s ``min``/``max``, a guard, or an assumption of the trace."""
    EQUAL = "equal"
    """Two input dims the program holds equal (a shared ``Dim``, or a guard)."""
    DERIVED = "derived"
    """A derived ``Dim`` (``4 * _s``, ``2 * b + 1``): a divisibility, or a dim read from another."""
    RELATION = "relation"
    """Any other relation between input dims (a divisibility, a sum, a product, ``M >= N``)."""


@dataclass(frozen=True, slots=True)
class ContractDim:
    """One dynamic dim of an input: ``symbol`` (how conditions name it, an identifier),
    ``name`` (how the user reads it: ``x.size(0)``, ``n`` for an int input), ``dim`` (the
    user's ``Dim`` for it: ``batch``, ``4*_seq``; None for ``Dim.AUTO``/``Dim.DYNAMIC``/classic)
    and the range the program admits (None: unbounded)."""

    symbol: str
    name: str
    dim: str | None
    lo: int | None
    hi: int | None


@dataclass(frozen=True, slots=True)
class ContractInput:
    """One flat input of the program, in call order: its user-facing ``name`` (``x``,
    ``d['a']``), its ``path`` from the call (the parameter's name, then dict keys (str) and
    sequence indices (int)), its ``kind`` (:data:`INPUT_KINDS`) and, per dim, a static size
    (int) or the :class:`ContractDim` symbol that names it; an int input has one entry (its
    value, or its symbol); ``dtype`` as torch prints it without ``torch.`` (``float32``)."""

    name: str
    path: tuple[str | int, ...]
    kind: str
    shape: tuple[int | str, ...] = ()
    dtype: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in INPUT_KINDS:
            raise ContractError(f"input {self.name}: kind must be one of {INPUT_KINDS}, got {self.kind!r}")


@dataclass(frozen=True, slots=True)
class Condition:
    """A condition the program relies on: ``relation`` (a sympy relation over the dims'
    symbols) in ``words`` (``x.size(1) must be divisible by 4``), with an optional ``note``
    (``x.size(1) = 4 * _s``), the ``origin`` (``model.py:26``) and ``code`` of the line that
    needs it."""

    relation: sympy.Basic
    words: str
    kind: str
    note: str | None = None
    origin: str | None = None
    code: str | None = None

    def __post_init__(self) -> None:
        ConditionKind(self.kind)  # a closed set: ValueError otherwise

    def symbols(self) -> tuple[str, ...]:
        """The names of the dims this condition reads, sorted."""
        return tuple(sorted(s.name for s in self.relation.free_symbols))


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why one call breaks one condition: the condition and the sizes it read."""

    condition: Condition
    got: tuple[tuple[str, int], ...]

    def text(self) -> str:
        """``x.size(1) must be divisible by 4 (x.size(1) = 4 * _s; got x.size(1) = 6), needed at m.py:3: ...``"""
        c = self.condition
        got = "got " + ", ".join(f"{name} = {v}" for name, v in self.got) if self.got else None
        notes = "; ".join(n for n in (c.note, got) if n)
        text = f"{c.words} ({notes})" if notes else c.words
        if c.origin:
            text += f", needed at {c.origin}" + (f": {c.code}" if c.code else "")
        return text


def refusal_message(reasons: Sequence[str]) -> str:
    """The text of a refusal: a header, then one reason per line."""
    return _HEADER + "\n" + "\n".join(f"  {r}" for r in reasons)


@dataclass(frozen=True)
class Contract:
    """The shape contract of one exported program (see the module docstring).

    ``params`` are the call's parameter names in order (how :meth:`check` binds positional
    arguments), ``inputs`` the flat inputs in call order, ``dims`` every dynamic input dim,
    ``conditions`` every condition on input sizes the program relies on, and ``runtime`` the
    checks only the program itself can make (on data-dependent values), in words.
    """

    params: tuple[str, ...]
    inputs: tuple[ContractInput, ...]
    dims: tuple[ContractDim, ...]
    conditions: tuple[Condition, ...]
    runtime: tuple[str, ...] = ()

    # -- checking -------------------------------------------------------------------------------
    def check(self, *args: Any, **kwargs: Any) -> None:
        """Raise :class:`shapes.errors.RefusedInputError` (in the causes' words, with the call's
        sizes) unless a call ``program(*args, **kwargs)`` meets the contract. An input is read
        by its ``shape`` (a torch tensor, a numpy array, anything with one) or as an int."""
        values = self._bind(args, kwargs)
        self._raise(self.failures_of(values))

    def check_flat(self, values: Sequence[Any]) -> None:
        """:meth:`check` for the call's flat inputs, in :attr:`inputs` order."""
        self._raise(self.failures_of(list(values)))

    def check_shapes(self, shapes: Mapping[str, Sequence[int] | int]) -> None:
        """:meth:`check` for sizes given by input name: ``{"x": (2, 8), "n": 3}``."""
        self._raise(self.refusals(shapes))

    def refusals(self, shapes: Mapping[str, Sequence[int] | int]) -> list[str]:
        """Every reason sizes given by input name break the contract (:meth:`check_shapes`
        without raising; empty: admitted). An input not given is the only reason when there
        is one (``x is missing``); a name the contract has no input for is a ContractError."""
        unknown = sorted(set(shapes) - {i.name for i in self.inputs})
        if unknown:
            raise ContractError(f"no input named {', '.join(unknown)} in the contract "
                                f"(its inputs: {', '.join(i.name for i in self.inputs)})")
        missing = [i.name for i in self.inputs if i.kind != "other" and i.name not in shapes]
        if missing:
            return [f"{name} is missing" for name in missing]
        return self.failures_of([_Shaped(shapes[i.name]) if i.name in shapes else None for i in self.inputs])

    def failures_of(self, values: Sequence[Any]) -> list[str]:
        """Every reason the flat inputs ``values`` break the contract, in words (empty: they
        meet it). Ranks and static sizes first, then each condition in order."""
        if len(values) != len(self.inputs):
            return [f"the program takes {len(self.inputs)} inputs, got {len(values)}"]
        reasons: list[str] = []
        env: dict[str, int] = {}
        for entry, value in zip(self.inputs, values):
            if entry.kind == "tensor" and not isinstance(value, _Shaped):
                shape = getattr(value, "shape", None)
                if isinstance(shape, tuple) and len(shape) == len(entry.shape) and _sizes_into(entry, shape, env):
                    continue  # the common case, read with no reason: a tensor of the right rank and static sizes
            reasons += _read(entry, value, env)
        complete = not reasons
        for cond, names, holds in self._compiled:
            if not complete and any(n not in env for n in names):
                continue  # a dim of an input that is missing or of the wrong rank: said above
            try:
                ok = holds(env)
            except ZeroDivisionError:  # no size the program computes with: the condition fails
                ok = False
            if not ok:
                by_symbol = {d.symbol: d for d in self.dims}
                got = tuple((by_symbol[n].name if n in by_symbol else n, env[n]) for n in _shown_order(self, names, cond))
                text = Refusal(cond, got).text()
                if text not in reasons:
                    reasons.append(text)
        return reasons

    @functools.cached_property
    def _compiled(self) -> tuple[tuple[Condition, tuple[str, ...], Callable[[Mapping[str, int]], bool]], ...]:
        """Each condition with the dims it reads and its compiled test (:mod:`shapes.compiled`)."""
        return tuple((c, c.symbols(), compile_relation(c.relation)) for c in self.conditions)

    def admits(self, shapes: Mapping[str, Sequence[int] | int]) -> bool:
        """Whether sizes given by input name meet the contract (:meth:`check_shapes` without raising)."""
        return not self.refusals(shapes)

    @staticmethod
    def _raise(reasons: Sequence[str]) -> None:
        if reasons:
            raise RefusedInputError(refusal_message(reasons))

    def _bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> list[Any]:
        if len(args) > len(self.params):
            raise ContractError(f"the program takes {len(self.params)} parameters ({', '.join(self.params)}), "
                                f"got {len(args)} positional arguments")
        bound = dict(zip(self.params, args))
        for k, v in kwargs.items():
            if k not in self.params:
                raise ContractError(f"the program has no parameter {k!r} (its parameters: {', '.join(self.params)})")
            if k in bound:
                raise ContractError(f"parameter {k!r} given twice")
            bound[k] = v
        return [_walk(bound, entry.path) for entry in self.inputs]

    # -- the dims users bound -----------------------------------------------------------------
    def unbounded(self) -> tuple[ContractDim, ...]:
        """The dims with no finite upper bound (ExecuTorch plans memory for the largest size)."""
        return tuple(d for d in self.dims if d.hi is None)

    # -- JSON -----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The contract's JSON document (``"format": "symshape.contract"``, docs/contract.schema.json)."""
        return {
            "format": CONTRACT_FORMAT, "version": CONTRACT_VERSION, "params": list(self.params),
            "inputs": [{"name": i.name, "path": list(i.path), "kind": i.kind, "shape": list(i.shape), "dtype": i.dtype}
                       for i in self.inputs],
            "dims": [{"symbol": d.symbol, "name": d.name, "dim": d.dim, "min": d.lo, "max": d.hi} for d in self.dims],
            "conditions": [{"kind": c.kind, "relation": to_text(c.relation), "words": c.words, "note": c.note,
                            "origin": c.origin, "code": c.code} for c in self.conditions],
            "runtime": list(self.runtime),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=False)

    @staticmethod
    def from_dict(doc: Any) -> Contract:
        """The contract of a JSON document; :class:`shapes.errors.ContractError` naming the
        field when it is not one (never evaluates code: relations go through :func:`parse_expr`)."""
        return _decode(doc)

    @staticmethod
    def from_json(text: str | bytes) -> Contract:
        try:
            doc = json.loads(text)
        except (ValueError, UnicodeDecodeError) as e:
            raise ContractError(f"a contract is JSON: {e}") from None
        return _decode(doc)


# -- reading a call's inputs ---------------------------------------------------------------------

class _Shaped:
    """A size given by hand (:meth:`Contract.check_shapes`): a shape tuple, or an int's value."""

    def __init__(self, value: Sequence[int] | int) -> None:
        self.value = value


_MISSING = object()


def _walk(bound: Mapping[str, Any], path: tuple[str | int, ...]) -> Any:
    value: Any = bound.get(str(path[0]), _MISSING) if path else _MISSING
    for key in path[1:]:
        if value is _MISSING:
            break
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            value = getattr(value, key, _MISSING) if isinstance(key, str) else _MISSING
    return None if value is _MISSING else value


def _as_int(v: Any) -> int | None:
    """An int input's value (a Python or numpy int; a bool is none), else None."""
    if isinstance(v, bool):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def _sizes_into(entry: ContractInput, shape: Sequence[Any], env: dict[str, int]) -> bool:
    """Read a tensor's sizes into ``env`` when each is an int and its static sizes are right
    (else False, and :func:`_read` says what is wrong)."""
    for want, got in zip(entry.shape, shape):
        if type(got) is not int:
            return False
        if type(want) is str:
            env[want] = got
        elif got != want:
            return False
    return True


def _read(entry: ContractInput, value: Any, env: dict[str, int]) -> list[str]:
    """The sizes of one input into ``env`` (by dim symbol); the reasons it fails its rank or static sizes."""
    if entry.kind == "other":
        return []
    raw = value.value if isinstance(value, _Shaped) else value
    if raw is None:
        return [f"{entry.name} is missing"]
    if entry.kind == "int":
        if isinstance(raw, (list, tuple)) and len(raw) == 1:
            raw = raw[0]
        got = _as_int(raw)
        if got is None:
            return [f"{entry.name} must be an int (got {type(raw).__name__})"]
        want = entry.shape[0] if entry.shape else None
        if isinstance(want, int) and got != want:
            return [f"{entry.name} must be {want} (static in the program; got {entry.name} = {got})"]
        if isinstance(want, str):
            env[want] = got
        return []
    shape: Any = raw if isinstance(value, _Shaped) else getattr(raw, "shape", None)
    try:
        sizes = [int(n) for n in shape] if shape is not None else None
    except (TypeError, ValueError):
        sizes = None
    if sizes is None:
        return [f"{entry.name} must be a tensor (got {type(raw).__name__})"]
    if len(sizes) != len(entry.shape):
        return [f"{entry.name} must have {len(entry.shape)} dims (got {len(sizes)}: {tuple(sizes)})"]
    reasons = []
    for d, (want, got) in enumerate(zip(entry.shape, sizes)):
        if isinstance(want, int):
            if got != want:
                name = f"{entry.name}.size({d})"
                reasons.append(f"{name} must be {want} (static in the program; got {name} = {got})")
        else:
            env[want] = got
    return reasons


def _shown_order(contract: Contract, names: Sequence[str], cond: Condition) -> list[str]:
    """``names`` in the order the condition's words name them, then as the dims are declared."""
    order = {d.symbol: i for i, d in enumerate(contract.dims)}
    shown = {d.symbol: d.name for d in contract.dims}

    def key(n: str) -> tuple[float, float, str]:
        at = cond.words.find(shown.get(n, n))
        return (at if at >= 0 else math.inf, order.get(n, math.inf), n)

    return sorted(names, key=key)


# -- decoding --------------------------------------------------------------------------------------

def _field(doc: Mapping[str, Any], key: str, types: type | tuple[type, ...], where: str) -> Any:
    if key not in doc:
        raise ContractError(f"{where}: missing field {key!r}")
    value = doc[key]
    if not isinstance(value, types) or (isinstance(value, bool) and types is not bool):
        raise ContractError(f"{where}.{key}: expected {_type_name(types)}, got {type(value).__name__}")
    return value


def _type_name(types: type | tuple[type, ...]) -> str:
    return " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))


def _opt_int(doc: Mapping[str, Any], key: str, where: str) -> int | None:
    value = doc.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise ContractError(f"{where}.{key}: expected an int or null, got {type(value).__name__}")
    return value


def _opt_str(doc: Mapping[str, Any], key: str, where: str) -> str | None:
    value = doc.get(key)
    if value is not None and not isinstance(value, str):
        raise ContractError(f"{where}.{key}: expected a string or null, got {type(value).__name__}")
    return value


def _decode(doc: Any) -> Contract:
    if not isinstance(doc, dict):
        raise ContractError(f"a contract is a JSON object, got {type(doc).__name__}")
    if doc.get("format") != CONTRACT_FORMAT:
        raise ContractError(f"not a shape contract: format is {doc.get('format')!r}, expected {CONTRACT_FORMAT!r}")
    if doc.get("version") != CONTRACT_VERSION:
        raise ContractError(f"contract version {doc.get('version')!r} is not supported (this reader: {CONTRACT_VERSION})")
    try:
        params = tuple(_strings(_field(doc, "params", list, "contract"), "contract.params"))
        dims = tuple(_dim(d, f"contract.dims[{i}]") for i, d in enumerate(_field(doc, "dims", list, "contract")))
        symbols = {d.symbol: int_symbol(d.symbol) for d in dims}
        inputs = tuple(_input(d, f"contract.inputs[{i}]", symbols)
                       for i, d in enumerate(_field(doc, "inputs", list, "contract")))
        conditions = tuple(_condition(c, f"contract.conditions[{i}]", symbols)
                           for i, c in enumerate(_field(doc, "conditions", list, "contract")))
        runtime = tuple(_strings(doc.get("runtime", []), "contract.runtime"))
    except ShapesError as e:
        if isinstance(e, ContractError):
            raise
        raise ContractError(str(e)) from None
    return Contract(params, inputs, dims, conditions, runtime)


def _strings(values: Any, where: str) -> list[str]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ContractError(f"{where}: expected a list of strings")
    return values


def _dim(d: Any, where: str) -> ContractDim:
    if not isinstance(d, dict):
        raise ContractError(f"{where}: expected an object")
    symbol = _field(d, "symbol", str, where)
    if not symbol.isidentifier():
        raise ContractError(f"{where}.symbol: {symbol!r} is not an identifier")
    return ContractDim(symbol, _field(d, "name", str, where), _opt_str(d, "dim", where),
                       _opt_int(d, "min", where), _opt_int(d, "max", where))


def _input(d: Any, where: str, symbols: Mapping[str, sympy.Symbol]) -> ContractInput:
    if not isinstance(d, dict):
        raise ContractError(f"{where}: expected an object")
    path = _field(d, "path", list, where)
    if not path or not all(isinstance(p, (str, int)) and not isinstance(p, bool) for p in path):
        raise ContractError(f"{where}.path: expected a non-empty list of strings and ints")
    shape = _field(d, "shape", list, where)
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, str)) or (isinstance(s, str) and s not in symbols):
            raise ContractError(f"{where}.shape: {s!r} is neither a size nor a dim of the contract")
    kind = _field(d, "kind", str, where)
    if kind not in INPUT_KINDS:
        raise ContractError(f"{where}.kind: expected one of {INPUT_KINDS}, got {kind!r}")
    return ContractInput(_field(d, "name", str, where), tuple(path), kind, tuple(shape), _opt_str(d, "dtype", where))


def _condition(c: Any, where: str, symbols: Mapping[str, sympy.Symbol]) -> Condition:
    if not isinstance(c, dict):
        raise ContractError(f"{where}: expected an object")
    kind = _field(c, "kind", str, where)
    if kind not in {k.value for k in ConditionKind}:
        raise ContractError(f"{where}.kind: expected one of {[k.value for k in ConditionKind]}, got {kind!r}")
    try:
        rel = parse_expr(_field(c, "relation", str, where), symbols)
    except ShapesError as e:
        raise ContractError(f"{where}.relation: {e}") from None
    if not isinstance(rel, (sympy.core.relational.Relational, sympy.logic.boolalg.BooleanFunction,
                            sympy.logic.boolalg.BooleanAtom)):
        raise ContractError(f"{where}.relation: {c['relation']!r} is no relation")
    return Condition(rel, _field(c, "words", str, where), kind, _opt_str(c, "note", where),
                     _opt_str(c, "origin", where), _opt_str(c, "code", where))
