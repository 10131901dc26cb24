"""Deploying a symshape program where ``ep.module()`` does not run: AOTInductor, ONNX,
ExecuTorch, each with the program's shape contract (:class:`shapes.contract.Contract`) so that
what runs it refuses what ``ep.module()`` refuses, in the causes' words (docs/deploying.md).

* :mod:`export.deploy.aoti` -- :func:`aoti_compile_and_package` (the contract in the package's
  metadata) and :func:`aoti_load_package` (the package behind its contract);
* :mod:`export.deploy.onnx` -- :func:`onnx_export` (``torch.onnx.export(ep, dynamo=True)`` with the
  contract in the model's ``metadata_props`` and the dims named after your Dims) and
  :func:`onnx_session` (an onnxruntime session behind the contract, a :class:`CheckedSession`);
* :mod:`export.deploy.executorch` -- :func:`executorch_lower` (a ``.pte`` planned for the contract's
  ranges, the contract beside it; a dim with no finite max named, with the ``Dim`` to give a
  max) and :func:`executorch_load` (the ``.pte`` behind its contract); ExecuTorch installs beside
  torch 2.14.1 only;
* :mod:`export.deploy.checked` -- :class:`CheckedProgram`, what a loader hands back.

The names are re-exported here, each imported when first used (``torch._inductor`` alone
takes seconds to import; an ONNX user need not pay for it).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["aoti_compile_and_package", "aoti_load_package", "onnx_export", "onnx_session", "CheckedSession",
           "executorch_lower", "executorch_load", "Unbounded", "CheckedProgram"]

_HOMES = {"aoti_compile_and_package": "export.deploy.aoti", "aoti_load_package": "export.deploy.aoti",
          "onnx_export": "export.deploy.onnx", "onnx_session": "export.deploy.onnx",
          "CheckedSession": "export.deploy.onnx", "executorch_lower": "export.deploy.executorch",
          "executorch_load": "export.deploy.executorch", "Unbounded": "export.deploy.executorch",
          "CheckedProgram": "export.deploy.checked"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'export.deploy' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
