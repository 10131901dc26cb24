"""The keywords of ``torch.export.export`` that symshape passes through to torch."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from export.errors import InputError

__all__ = ["TorchOptions", "one_of"]


def one_of(option: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices`` (what ``export``'s keyword ``option`` takes),
    else InputError naming the option and its choices.

    >>> one_of("mode", "b", ("a", "b"))
    'b'
    >>> one_of("mode", "c", ("a", "b"))
    Traceback (most recent call last):
    ...
    export.errors.InputError: mode must be 'a' or 'b', got 'c'
    """
    if value not in choices:
        raise InputError(f"{option} must be {' or '.join(repr(c) for c in choices)}, got {value!r}")
    return str(value)


@dataclass(frozen=True, slots=True)
class TorchOptions:
    """The keywords of ``torch.export.export`` symshape passes through to torch as given:
    ``strict``, ``preserve_module_call_signature``,
    ``prefer_deferred_runtime_asserts_over_guards`` and any other keyword the installed
    torch's ``export`` takes (``extra``)."""

    strict: bool = False
    preserve_module_call_signature: tuple[str, ...] = ()
    prefer_deferred_runtime_asserts_over_guards: bool = False
    extra: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def of(strict: Any, preserve: Any, prefer_deferred: Any, extra: Mapping[str, Any]) -> TorchOptions:
        """Validated options (InputError for a wrong type or a keyword torch does not take).

        >>> TorchOptions.of(True, ("sub",), False, {}).as_kwargs()["preserve_module_call_signature"]
        ('sub',)
        >>> TorchOptions.of(False, (), False, {"fast": 1})
        Traceback (most recent call last):
        ...
        export.errors.InputError: export() got an unexpected keyword 'fast': torch.export.export takes ...
        """
        for name, v in (("strict", strict), ("prefer_deferred_runtime_asserts_over_guards", prefer_deferred)):
            if not isinstance(v, bool):
                raise InputError(f"{name} must be a bool, got {v!r}")
        if isinstance(preserve, str) or not isinstance(preserve, (tuple, list)) or \
                not all(isinstance(p, str) for p in preserve):
            raise InputError(f"preserve_module_call_signature must be a tuple of submodule names, got {preserve!r}")
        known = set(inspect.signature(torch.export.export).parameters) - set(_OWN_KEYWORDS)
        unknown = sorted(set(extra) - known)
        if unknown:
            raise InputError(f"export() got an unexpected keyword {unknown[0]!r}: torch.export.export takes "
                             f"{', '.join(sorted(known | set(_OWN_KEYWORDS)))}")
        return TorchOptions(strict, tuple(preserve), prefer_deferred, tuple(sorted(extra.items())))

    def as_kwargs(self) -> dict[str, Any]:
        return {"strict": self.strict, "preserve_module_call_signature": self.preserve_module_call_signature,
                "prefer_deferred_runtime_asserts_over_guards": self.prefer_deferred_runtime_asserts_over_guards,
                **dict(self.extra)}


_OWN_KEYWORDS = ("mod", "args", "kwargs", "dynamic_shapes", "strict", "preserve_module_call_signature",
                 "prefer_deferred_runtime_asserts_over_guards")
