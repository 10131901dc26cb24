"""A deployed program behind its shape contract: what :mod:`export.deploy` hands back.

A compiled or lowered program no longer checks its inputs the way ``ep.module()`` does
(AOTInductor keeps only the graph's asserts, ONNX and ExecuTorch keep none), so the program
symshape loads for you checks its contract first: a call the contract refuses raises
:class:`export.errors.RefusedInputError` in the causes' words before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import shapes.errors
from export.errors import InputError, RefusedInputError
from export.program.exported import SymshapeProgram, report_of
from shapes.contract import Contract

__all__ = ["CheckedProgram", "checked", "program_contract"]


def program_contract(program: Any, step: str) -> Contract:
    """The contract of a symshape program (``export.export``, ``export.load``); an InputError
    naming ``step`` (``aoti_compile_and_package``) for any other program."""
    contract = report_of(program).contract if isinstance(program, SymshapeProgram) else None
    if contract is None:
        raise InputError(f"{step} needs a program exported by symshape (export.export or export.load): its "
                         "contract is what the deployed program refuses inputs by")
    return contract


def checked(contract: Contract, check: Callable[[], None]) -> None:
    """Run ``check`` (a contract check), its refusal raised as :class:`export.errors.RefusedInputError`."""
    try:
        check()
    except RefusedInputError:
        raise
    except shapes.errors.RefusedInputError as e:
        raise RefusedInputError(str(e)) from None


@dataclass(frozen=True)
class CheckedProgram:
    """``run`` (a compiled program, called like the exported one) behind ``contract``;
    ``consumer`` names what runs it (``AOTInductor``)."""

    contract: Contract
    run: Callable[..., Any]
    consumer: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        checked(self.contract, lambda: self.contract.check(*args, **kwargs))
        return self.run(*args, **kwargs)
