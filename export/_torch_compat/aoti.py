"""AOTInductor's entry points (``torch._inductor``: a private module path), for
:mod:`export.deploy.aoti`: compile a program into a package with metadata, load a package,
read its metadata.

AOTInductor (torch 2.13-2.15) keeps a graph's ``_assert_scalar`` nodes (as C++ checks worded
``Expected <torch's expression> to be True but received <n>``, the message dropped) and drops
the rest of what ``ep.module()`` checks: the forward pre-hook's ranges and equalities, and the
``_guards_fn`` of the export's guards. Its own input checks (``AOTI_RUNTIME_CHECK_INPUTS=1``)
cover ranges and sizes, not relations. See docs/deploying.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch
import torch._inductor

__all__ = ["compile_package", "load_package", "package_metadata", "METADATA_CONFIG"]

METADATA_CONFIG = "aot_inductor.metadata"
"""The inductor config whose string dict AOTInductor compiles into the package (and writes to
its ``*_metadata.json``): ``runner.get_metadata()`` returns it."""


def compile_package(program: torch.export.ExportedProgram, package_path: str | os.PathLike[str] | None,
                    metadata: Mapping[str, str], inductor_configs: Mapping[str, Any] | None = None) -> str:
    """``torch._inductor.aoti_compile_and_package`` with ``metadata`` added to the package's."""
    configs = dict(inductor_configs or {})
    configs[METADATA_CONFIG] = {**dict(configs.get(METADATA_CONFIG) or {}), **metadata}
    path = os.fspath(package_path) if package_path is not None else None
    return str(torch._inductor.aoti_compile_and_package(program, package_path=path, inductor_configs=configs))


def load_package(path: str | os.PathLike[str], **options: Any) -> Any:
    """``torch._inductor.aoti_load_package``: the compiled model (call it like the program)."""
    return torch._inductor.aoti_load_package(os.fspath(path), **options)


def package_metadata(model: Any) -> dict[str, str]:
    """The metadata a loaded package was compiled with (``get_metadata()``)."""
    return dict(model.get_metadata())
