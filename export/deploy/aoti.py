"""AOTInductor with the program's contract: a package that refuses what ``ep.module()`` refuses.

:func:`aoti_compile_and_package` compiles a symshape program as torch's does and puts its
contract (:class:`shapes.contract.Contract`, JSON) in the package's metadata;
:func:`aoti_load_package` loads such a package behind that contract
(:class:`export.deploy.checked.CheckedProgram`): a call it refuses raises
:class:`export.errors.RefusedInputError` in the causes' words before the compiled code runs.

torch's own loader (``torch._inductor.aoti_load_package``) runs the same package with only the
graph's asserts: every range and every relation between dims torch keeps as separate symbols
is refused there too, in torch's symbols (``Expected Eq(s27*s77, s17*s94) to be True but
received 3``), but dims torch holds as one symbol (a shared ``Dim``, a derived ``4 * _seq``,
``mask.size(1) == past + seq``) are read from the first input that has them and never
compared: use this loader, or check ``read_contract(path)`` yourself (docs/deploying.md).
"""

from __future__ import annotations

import os
from typing import Any

from export._torch_compat import aoti
from export.deploy.checked import CheckedProgram, program_contract
from export.errors import InputError
from export.program.exported import SymshapeProgram
from shapes.contract import Contract
from shapes.contract_files import METADATA_KEY
from shapes.errors import ContractError

__all__ = ["aoti_compile_and_package", "aoti_load_package"]


def aoti_compile_and_package(program: SymshapeProgram, package_path: str | os.PathLike[str] | None = None, *,
                             inductor_configs: dict[str, Any] | None = None) -> str:
    """``torch._inductor.aoti_compile_and_package(program, package_path=...)`` with the
    program's contract in the package (metadata key ``symshape.contract``); returns the
    package's path. Load it with :func:`aoti_load_package`."""
    contract = program_contract(program, "aoti_compile_and_package")
    return aoti.compile_package(program, package_path, {METADATA_KEY: contract.to_json()}, inductor_configs)


def aoti_load_package(path: str | os.PathLike[str], *, contract: Contract | None = None,
                      **torch_options: Any) -> CheckedProgram:
    """The package at ``path`` behind its contract (from its metadata, or ``contract``):
    call it as you would call the program. ``torch_options`` go to torch's loader
    (``num_runners=``...). A package without a contract is an InputError."""
    model = aoti.load_package(path, **torch_options)
    if contract is None:
        text = aoti.package_metadata(model).get(METADATA_KEY)
        if text is None:
            raise InputError(f"{os.fspath(path)}: the package carries no symshape contract: compile it with "
                             "export.deploy.aoti_compile_and_package, or pass contract=ep.symshape.contract")
        try:
            contract = Contract.from_json(text)
        except ContractError as e:
            raise InputError(f"{os.fspath(path)}: the package's contract is damaged: {e}") from None
    return CheckedProgram(contract, model, "AOTInductor")



