"""A shape contract in an ONNX model, read and checked without torch.

``export.deploy.onnx_export`` writes two entries in the model's ``metadata_props``:

* ``symshape.contract`` (:data:`METADATA_KEY`): the contract's JSON (:class:`shapes.contract.Contract`);
* ``symshape.onnx_inputs`` (:data:`INPUTS_KEY`): which contract input each ONNX graph input is, a
  JSON list in the graph's input order: ``[{"onnx": "past_keys_0", "input": "past_keys[0]"}, ...]``
  (torch names a graph input after the program's placeholder, not after the call's path).

ONNX keeps none of the program's checks, and onnxruntime checks only ranks and static sizes:
:class:`OnnxContract` checks onnxruntime's feeds (ONNX input name -> array) against the
contract first, in the causes' words. Read it from the file (:func:`read_onnx`, with the
``onnx`` package, imported when a model is read so that :mod:`shapes` imports without it) or
from a loaded session, with no ``onnx`` package:
``OnnxContract.from_metadata(session.get_modelmeta().custom_metadata_map, path)``.

>>> from types import SimpleNamespace as Array
>>> doc = {"format": "symshape.contract", "version": 1, "params": ["x"],
...        "inputs": [{"name": "x", "path": ["x"], "kind": "tensor", "shape": ["x_size0", 4]}],
...        "dims": [{"symbol": "x_size0", "name": "x.size(0)", "dim": "b", "min": 2, "max": None}],
...        "conditions": [{"kind": "range", "relation": "x_size0 >= 2", "words": "x.size(0) must be >= 2"}]}
>>> meta = {METADATA_KEY: json.dumps(doc), INPUTS_KEY: json.dumps([{"onnx": "x", "input": "x"}])}
>>> checked = OnnxContract.from_metadata(meta, "m.onnx")
>>> checked.feed_shapes({"x": Array(shape=(3, 4))})
{'x': (3, 4)}
>>> checked.check({"x": Array(shape=(1, 4))})
Traceback (most recent call last):
...
shapes.errors.RefusedInputError: the exported program refuses these inputs:
  x.size(0) must be >= 2 (got x.size(0) = 1)
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shapes.contract import METADATA_KEY, Contract, refusal_message
from shapes.errors import ContractError, RefusedInputError

__all__ = ["INPUTS_KEY", "OnnxContract", "onnx_contract", "onnx_metadata", "read_onnx"]

INPUTS_KEY = "symshape.onnx_inputs"
"""The ``metadata_props`` key of the ONNX graph inputs' contract names (a JSON list, graph order)."""

_EXPORTER = "export.deploy.onnx_export"


@dataclass(frozen=True)
class OnnxContract:
    """A contract and the ONNX graph inputs it reads: ``inputs`` pairs each ONNX input name
    with its contract input's name, in the graph's input order. Contract inputs no ONNX input
    carries (a static int, a value that is no tensor) are not fed, and not checked."""

    contract: Contract
    inputs: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        names = {i.name for i in self.contract.inputs}
        onnx_names = [o for o, _ in self.inputs]
        unknown = [c for _, c in self.inputs if c not in names]
        if unknown:
            raise ContractError(f"no input named {', '.join(unknown)} in the contract "
                                f"(its inputs: {', '.join(sorted(names))})")
        if len(set(onnx_names)) != len(onnx_names):
            raise ContractError(f"an ONNX input is bound twice: {onnx_names}")

    # -- reading --------------------------------------------------------------------------------
    @staticmethod
    def from_metadata(metadata: Mapping[str, str], shown: str) -> OnnxContract:
        """The contract and input names in an ONNX model's metadata (``metadata_props`` as a
        dict, or onnxruntime's ``custom_metadata_map``); :class:`shapes.errors.ContractError`
        naming ``shown`` when it carries none or a damaged one."""
        contract = _contract_of(metadata, shown)
        text = metadata.get(INPUTS_KEY)
        if text is None:
            raise ContractError(f"{shown}: its contract says no ONNX input names ({INPUTS_KEY!r} is missing: "
                                f"export it again with {_EXPORTER})")
        try:
            doc = json.loads(text)
        except (ValueError, TypeError) as e:
            raise ContractError(f"{shown}: {INPUTS_KEY}: not JSON ({e})") from None
        if not isinstance(doc, list) or not all(
                isinstance(d, dict) and isinstance(d.get("onnx"), str) and isinstance(d.get("input"), str) for d in doc):
            raise ContractError(f"{shown}: {INPUTS_KEY}: expected a list of {{\"onnx\": name, \"input\": name}} objects")
        try:
            return OnnxContract(contract, tuple((d["onnx"], d["input"]) for d in doc))
        except ContractError as e:
            raise ContractError(f"{shown}: {INPUTS_KEY}: {e}") from None

    def metadata(self) -> dict[str, str]:
        """The two ``metadata_props`` entries that say this (what :meth:`from_metadata` reads)."""
        return {METADATA_KEY: self.contract.to_json(),
                INPUTS_KEY: json.dumps([{"onnx": o, "input": c} for o, c in self.inputs])}

    # -- checking -------------------------------------------------------------------------------
    def feed_shapes(self, feeds: Mapping[str, Any]) -> dict[str, tuple[int, ...] | int]:
        """The sizes of onnxruntime ``feeds`` by contract input name, what
        :meth:`shapes.contract.Contract.check_shapes` takes: an array's shape (a numpy array,
        an ``OrtValue``, anything with a ``shape``), an int input's value. A feed of no ONNX
        input of the contract is a :class:`shapes.errors.ContractError`."""
        by_onnx = dict(self.inputs)
        unknown = sorted(set(feeds) - set(by_onnx))
        if unknown:
            raise ContractError(f"no ONNX input named {', '.join(unknown)} "
                                f"(the model's inputs: {', '.join(o for o, _ in self.inputs)})")
        kinds = {i.name: i.kind for i in self.contract.inputs}
        out: dict[str, tuple[int, ...] | int] = {}
        for onnx_name, value in feeds.items():
            name = by_onnx[onnx_name]
            sizes = _sizes(value, kinds[name] == "int")
            if sizes is not None:
                out[name] = sizes
        return out

    def failures_of(self, feeds: Mapping[str, Any]) -> list[str]:
        """Every reason ``feeds`` break the contract, in words (empty: they meet it)."""
        self.feed_shapes(feeds)  # a feed of no ONNX input: ContractError
        fed = {c: o for o, c in self.inputs}
        values: list[Any] = []
        for entry in self.contract.inputs:
            onnx_name = fed.get(entry.name)
            if onnx_name is not None:  # not fed: None, "x is missing"
                value = feeds.get(onnx_name)
                sizes = _sizes(value, entry.kind == "int") if value is not None else None
                if entry.kind == "int":
                    values.append(sizes if isinstance(sizes, int) else value)
                else:
                    values.append(_Shape(sizes) if isinstance(sizes, tuple) else value)
            elif entry.kind == "int" and entry.shape and isinstance(entry.shape[0], int):
                values.append(entry.shape[0])  # a static int: a constant of the ONNX model
            else:
                values.append(None)
        return self.contract.failures_of(values)

    def check(self, feeds: Mapping[str, Any]) -> None:
        """Raise :class:`shapes.errors.RefusedInputError` (in the causes' words, with the
        feeds' sizes) unless ``feeds`` meet the contract."""
        reasons = self.failures_of(feeds)
        if reasons:
            raise RefusedInputError(refusal_message(reasons))


class _Shape:
    """A feed's shape as :meth:`Contract.failures_of` reads a tensor (its ``shape``)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape


def _sizes(value: Any, is_int: bool) -> tuple[int, ...] | int | None:
    """A feed's shape, or for an int input its value (a 0-d or one-element array, an int);
    None when it has neither (the contract then says what it must be)."""
    if is_int:
        candidates: tuple[Any, ...] = (value, getattr(value, "tolist", lambda: None)())
        for candidate in candidates:
            if isinstance(candidate, list) and len(candidate) == 1:
                candidate = candidate[0]
            if isinstance(candidate, bool):
                continue
            try:
                return operator.index(candidate)
            except TypeError:
                continue
    shape = getattr(value, "shape", None)
    if callable(shape):  # onnxruntime's OrtValue.shape()
        shape = shape()
    try:
        return tuple(int(n) for n in shape) if shape is not None else None
    except (TypeError, ValueError):
        return None


# -- reading a model -------------------------------------------------------------------------------

def onnx_metadata(data: bytes, shown: str) -> dict[str, str]:
    """The ``metadata_props`` of the ONNX model ``data`` (the ``.onnx`` file's bytes; its
    external data is not read); needs the ``onnx`` package."""
    try:
        import onnx  # an optional dependency: imported when a model is read (the module docstring)
    except ImportError:
        raise ContractError(f"{shown}: reading an ONNX model needs the onnx package (pip install onnx)") from None
    try:
        model = onnx.load_model_from_string(data)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends: a damaged file
        raise ContractError(f"{shown}: not an ONNX model ({type(e).__name__}: {e})") from None
    return {p.key: p.value for p in model.metadata_props}


def read_onnx(data: bytes, shown: str) -> OnnxContract:
    """The contract and input names in the ONNX model ``data`` (:meth:`OnnxContract.from_metadata`)."""
    return OnnxContract.from_metadata(onnx_metadata(data, shown), shown)


def onnx_contract(data: bytes, shown: str) -> Contract:
    """The contract in the ONNX model ``data`` (the file's bytes; ``shown`` names it):
    :class:`shapes.errors.ContractError` naming it when it carries none, or a damaged one."""
    return _contract_of(onnx_metadata(data, shown), shown)


def _contract_of(metadata: Mapping[str, str], shown: str) -> Contract:
    text = metadata.get(METADATA_KEY)
    if text is None:
        raise ContractError(f"{shown}: carries no symshape contract (no {METADATA_KEY!r} in its metadata_props: "
                            f"export it with {_EXPORTER})")
    try:
        return Contract.from_json(text)
    except ContractError as e:
        raise ContractError(f"{shown}: {METADATA_KEY}: {e}") from None

