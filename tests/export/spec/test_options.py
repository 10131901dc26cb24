"""``export.spec.options``: the torch.export keywords symshape passes through, validated."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch

from export.errors import InputError
from export.spec.options import TorchOptions

OWN = ("mod", "args", "kwargs", "dynamic_shapes", "strict", "preserve_module_call_signature",
       "prefer_deferred_runtime_asserts_over_guards")


def test_defaults_as_kwargs() -> None:
    assert TorchOptions().as_kwargs() == {"strict": False, "preserve_module_call_signature": (),
                                          "prefer_deferred_runtime_asserts_over_guards": False}


def test_of_keeps_what_is_given() -> None:
    opts = TorchOptions.of(True, ["sub", "enc"], True, {})
    assert opts == TorchOptions(True, ("sub", "enc"), True, ())
    assert opts.as_kwargs() == {"strict": True, "preserve_module_call_signature": ("sub", "enc"),
                                "prefer_deferred_runtime_asserts_over_guards": True}


@pytest.mark.parametrize("name", ["strict", "dynamic_shapes", "args"])
def test_symshapes_own_keywords_are_no_extras(name: str) -> None:
    with pytest.raises(InputError, match=f"^export\\(\\) got an unexpected keyword '{name}': "):
        TorchOptions.of(False, (), False, {name: None})


@pytest.mark.parametrize("strict, preserve, prefer, message", [
    ("yes", (), False, "strict must be a bool, got 'yes'"),
    (1, (), False, "strict must be a bool, got 1"),
    (False, (), None, "prefer_deferred_runtime_asserts_over_guards must be a bool, got None"),
    (False, "sub", False, "preserve_module_call_signature must be a tuple of submodule names, got 'sub'"),
    (False, ("sub", 3), False, "preserve_module_call_signature must be a tuple of submodule names, got ('sub', 3)"),
    (False, None, False, "preserve_module_call_signature must be a tuple of submodule names, got None"),
])
def test_wrong_types_are_input_errors(strict: Any, preserve: Any, prefer: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        TorchOptions.of(strict, preserve, prefer, {})
    assert str(info.value) == message


def test_an_unknown_keyword_names_what_torch_takes() -> None:
    known = sorted(set(inspect.signature(torch.export.export).parameters) | set(OWN))
    with pytest.raises(InputError) as info:
        TorchOptions.of(False, (), False, {"zeta": 1, "fast": 2})
    assert str(info.value) == f"export() got an unexpected keyword 'fast': torch.export.export takes {', '.join(known)}"


def test_options_are_frozen() -> None:
    opts = TorchOptions.of(False, (), False, {})
    with pytest.raises(AttributeError):
        opts.strict = True  # type: ignore[misc]
