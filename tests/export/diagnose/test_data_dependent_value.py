"""A data-dependent message names the value compared, not the tensor it is a size of (issue 9,
item 4): ``y = x.nonzero(); z = y.shape[0]; if z > 3`` is about ``z`` (computed at its line),
and ``if y.shape[0] > 2`` about ``y.shape[0]``; ``y`` is named only as where the value comes from.
Every suggested line must be code over the value (``torch._check(z > 3)``), never over the tensor."""
from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch

import export
from export.tracing.provenance import UserFrame

HERE = UserFrame(__file__, 0, "forward", "").origin.rsplit(":", 1)[0]  # as messages print it


class NamedSize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.nonzero()
        z = y.shape[0]
        if z > 3:
            return x.cos()
        return x.sin()


class SizeCall(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.nonzero()
        n = y.size(0)
        if n >= 2:
            return x.cos()
        return x.sin()


class SizeIndex(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.nonzero()
        k = y.size()[0]
        if k > 1:
            return x.cos()
        return x.sin()


class InlineSize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.nonzero()
        if y.shape[0] > 2:
            return x.cos()
        return x.sin()


class ItemValue(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        v = x.argmax().item()
        if v > 0:
            return x.cos()
        return x.sin()


def _line(cls: type, code: str) -> int:
    lines, start = inspect.getsourcelines(cls.forward)
    return start + next(i for i, text in enumerate(lines) if text.strip() == code)


# (model, value shown, the line computing it, the tensor line or None, condition text)
CASES = [
    (NamedSize, "z", "z = y.shape[0]", "y = x.nonzero()", "z > 3"),
    (SizeCall, "n", "n = y.size(0)", "y = x.nonzero()", "n >= 2"),
    (SizeIndex, "k", "k = y.size()[0]", "y = x.nonzero()", "k > 1"),
    (InlineSize, "y.shape[0]", "y = x.nonzero()", "y = x.nonzero()", "y.shape[0] > 2"),
    (ItemValue, "v", "v = x.argmax().item()", None, "v > 0"),
]


def _message(cls: type) -> str:
    with pytest.raises(export.DataDependentError) as info:
        export.export(cls(), (torch.tensor([2.0, 0.0, 5.0, 1.0]),))
    return str(info.value)


@pytest.mark.parametrize("cls,value,computed,tensor,cond", CASES, ids=[c[0].__name__ for c in CASES])
def test_message_names_the_value(cls: type, value: str, computed: str, tensor: Any, cond: str) -> None:
    text = _message(cls)
    at = f"{HERE}:{_line(cls, computed)}"
    assert f"Could not decide {cond}:" in text, text
    assert f"export.constrain_as_value({value}, min=..., max=...)  # after {at}\n" in text, text
    assert f"torch._check({cond})" in text, text
    if tensor is not None:
        assert f"{tensor} at {HERE}:{_line(cls, tensor)}" in text, text
    if computed != tensor and tensor is not None:
        assert f"{value} comes from {computed} at {at}, a size of y" in text, text
    assert "torch._check(y " not in text and "constrain_as_value(y," not in text, text


class TwoReads(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.nonzero()
        if y.shape[0] > 2 and y.shape[0] < 9:
            return x.cos()
        return x.sin()


class NumelRead(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.nonzero()
        if y.numel() > 2:  # y.numel() is y.shape[0] * y.shape[1]: not the size itself
            return x.cos()
        return x.sin()


@pytest.mark.parametrize("cls", [NumelRead])
def test_no_read_of_one_size_keeps_the_tensor_name(cls: type) -> None:
    text = _message(cls)
    assert "y comes from y = x.nonzero()" in text, text
    assert "numel()" not in text.split("\n")[0], text


def test_same_read_twice_is_one_value() -> None:
    text = _message(TwoReads)
    assert "Could not decide y.shape[0] > 2:" in text, text
