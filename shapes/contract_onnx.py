"""A shape contract in an ONNX model, without torch (``metadata_props``, key ``symshape.contract``).

Stub: the ONNX path of issue 33 fills this in (reading needs the ``onnx`` package, imported
when a model is read, so that ``shapes`` imports without it).
"""

from __future__ import annotations

from shapes.contract import Contract
from shapes.errors import ContractError

__all__ = ["onnx_contract"]


def onnx_contract(data: bytes, shown: str) -> Contract:
    """The contract in the ONNX model ``data`` (the file's bytes; ``shown`` names it)."""
    raise ContractError(f"{shown}: reading a contract from an ONNX model is not implemented yet")
