"""A program's shape contract read from the files it is deployed as, without torch.

* a symshape program archive (``export.save``: ``<name>/extra/symshape.json``, the report's
  ``contract``);
* an AOTInductor package (``export.deploy.aoti_compile_and_package``: the package's model
  metadata, ``data/aotinductor/<model>/*_metadata.json``, key :data:`METADATA_KEY`);
* an ONNX model (``export.deploy.onnx_export``: its ``metadata_props``, key
  :data:`METADATA_KEY`; read with the ``onnx`` package, :mod:`shapes.contract_onnx`);
* a contract's own JSON file (``<program>.symshape.json`` beside an ExecuTorch ``.pte``,
  :func:`sidecar_path`).

>>> import io, zipfile
>>> from shapes.contract import METADATA_KEY, Contract
>>> buffer = io.BytesIO()
>>> with zipfile.ZipFile(buffer, "w") as z:
...     z.writestr("m/data/aotinductor/model/abc_metadata.json", json.dumps({METADATA_KEY: json.dumps(
...         {"format": "symshape.contract", "version": 1, "params": [], "inputs": [], "dims": [],
...          "conditions": [], "runtime": []})}))
>>> read_contract(buffer.getvalue(), "m.pt2").params
()
"""

from __future__ import annotations

import io
import json
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any

from shapes.contract import METADATA_KEY, Contract
from shapes.contract_onnx import onnx_contract
from shapes.errors import ContractError

__all__ = ["METADATA_KEY", "SIDECAR_SUFFIX", "read_contract", "sidecar_path", "write_sidecar"]

SIDECAR_SUFFIX = ".symshape.json"
"""What a contract's own file is named after the program file it stands beside."""

_PROGRAM_EXTRA = "extra/symshape.json"
_MAX_BYTES = 64 * 1024 * 1024


def sidecar_path(program: str | os.PathLike[str]) -> Path:
    """The contract file beside ``program`` (``model.pte`` -> ``model.pte.symshape.json``)."""
    p = Path(program)
    return p.with_name(p.name + SIDECAR_SUFFIX)


def write_sidecar(contract: Contract, program: str | os.PathLike[str]) -> Path:
    """Write ``contract`` beside ``program`` (:func:`sidecar_path`); returns its path."""
    path = sidecar_path(program)
    path.write_text(json.dumps(contract.to_dict(), indent=1) + "\n")
    return path


def read_contract(source: str | os.PathLike[str] | bytes, name: str | None = None) -> Contract:
    """The contract a program file carries (see the module docstring): a path, or the file's
    bytes (``name`` then says what it is, by its suffix). A contract's own JSON is read as is;
    for a program file without its own contract, its sidecar is read when there is one.
    :class:`shapes.errors.ContractError` says which file carries none, or is damaged."""
    if isinstance(source, bytes):
        data, shown = source, name or "<bytes>"
    else:
        path = Path(source)
        shown = name or str(path)
        if not path.is_file():
            raise ContractError(f"{shown}: no such file")
        if path.stat().st_size > _MAX_BYTES and path.suffix != ".onnx" and not zipfile.is_zipfile(path):
            raise ContractError(f"{shown}: larger than {_MAX_BYTES} bytes: not a contract")
        data = path.read_bytes()
    try:
        try:
            return _contract_in(data, shown)
        except ContractError:
            raise
        except (RecursionError, MemoryError, ValueError, EOFError, OSError, KeyError, zlib.error,
                NotImplementedError) as e:  # a damaged file, whatever its reader raised
            raise ContractError(f"{shown}: a damaged file ({type(e).__name__}: {str(e)[:200]})") from None
    except ContractError:
        if isinstance(source, bytes) or Path(source).name.endswith(SIDECAR_SUFFIX) or \
                not sidecar_path(source).is_file():
            raise
        return read_contract(sidecar_path(source))


def _contract_in(data: bytes, shown: str) -> Contract:
    if zipfile.is_zipfile(io.BytesIO(data)):
        return _from_zip(data, shown)
    if shown.endswith(".onnx") or data[:1] not in (b"{", b" ", b"\n", b"\t", b"\r"):
        return onnx_contract(data, shown)
    try:
        return Contract.from_json(data)
    except ContractError as e:
        raise ContractError(f"{shown}: {e}") from None


def _from_zip(data: bytes, shown: str) -> Contract:
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        names = z.namelist()
        program = [n for n in names if n.endswith(_PROGRAM_EXTRA)]
        if program:
            doc = _json(z.read(program[0]), f"{shown}: {program[0]}")
            contract = (doc.get("report") or {}).get("contract") if isinstance(doc, dict) else None
            if contract is None:
                raise ContractError(f"{shown}: a symshape program saved without a contract (export it again)")
            return _decoded(contract, f"{shown}: {program[0]}")
        for n in sorted(names):
            if "/aotinductor/" in n and n.endswith("_metadata.json"):
                doc = _json(z.read(n), f"{shown}: {n}")
                if isinstance(doc, dict) and METADATA_KEY in doc:
                    return _decoded(_json(doc[METADATA_KEY], f"{shown}: {n}: {METADATA_KEY}"), f"{shown}: {n}")
    except zipfile.BadZipFile as e:
        raise ContractError(f"{shown}: a damaged archive ({e})") from None
    raise ContractError(f"{shown}: carries no symshape contract (compile it with export.deploy.aoti_compile_and_package, "
                        "or save it with export.save)")


def _json(raw: Any, shown: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, TypeError, UnicodeDecodeError) as e:
        raise ContractError(f"{shown}: not JSON ({e})") from None


def _decoded(doc: Any, shown: str) -> Contract:
    try:
        return Contract.from_dict(doc)
    except ContractError as e:
        raise ContractError(f"{shown}: {e}") from None
