"""Layout-only branches (``if n >= 64: h = h.contiguous()``): no constraint, never a wrong program.

A table of ``if`` statements read by the source rule (which are layout-only, which not), and
exports of small models next to eager on both sides of the branch: the contiguous case (the
same graph either way), the channels-last case (the other answer copies: kept only when the
graph mutates no tensor), and every way the rule must not fire (an extra statement, a test
that calls user code, a rebound builtin, a tensor mutated in place after the copy). Each
exported program is run against eager below and above the branch's threshold.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import export
from export.errors import ConstraintViolationError
from export.tracing.layout_branch import layout_branches

# (the `if` statement inside `def f(h, n):`, the rebound names or None when not layout-only)
SOURCES = [
    ("if h.shape[0] >= 64:\n        h = h.contiguous()", ("h",)),
    ("if h.size(0) > 4 and n.dim() == 4:\n        h = h.contiguous()\n        n = n.contiguous()", ("h", "n")),
    ("if h.shape[0] >= 64:\n        pass\n    else:\n        h = h.contiguous()", ("h",)),
    ("if h.numel() * 2 > pow(2, 31):\n        h = h.contiguous()", ("h",)),
    ("if (h.shape[0]\n            >= 64):\n        h = h.contiguous()", ("h",)),
    ("if not h.shape[-1] % 8:\n        h = h.contiguous()", ("h",)),
    ("if h.stride(-1) != 1:\n        h = h.contiguous()", ("h",)),  # diffusers' sana
    # not layout-only
    ("if h.shape[0] >= 64:\n        h = h.contiguous()\n        h = h * 2", None),
    ("if h.shape[0] >= 64:\n        y = h.contiguous()", None),  # binds a new name
    ("if h.shape[0] >= 64:\n        h = n.contiguous()", None),  # another tensor's values
    ("if h.shape[0] >= 64:\n        h = h.contiguous(memory_format=torch.channels_last)", None),
    ("if h.shape[0] >= 64:\n        h = h.contiguous()\n    elif n.shape[0] > 2:\n        n = n * 2", None),
    ("if h.shape[0] >= 64 and self.update(h):\n        h = h.contiguous()", None),  # calls user code
    ("if h.shape[0] >= 64:\n        h.contiguous()", None),
    ("if h.shape[0] >= 64:\n        pass", None),  # nothing rebound
    ("if h.sum() > 0:\n        h = h.contiguous()", None),  # a data-dependent test calls a tensor op
]


@pytest.mark.parametrize(("stmt", "names"), SOURCES, ids=[str(i) for i in range(len(SOURCES))])
def test_source_rule(stmt: str, names: tuple[str, ...] | None) -> None:
    source = f"def f(h, n):\n    {stmt}\n    return h\n"
    found = layout_branches(source)
    if names is None:
        assert not found, source
    else:
        assert {b.names for b in found.values()} == {names}, source
        assert 2 in found  # the test's first line (where Python reports the question)


class Contiguous(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        if h.shape[0] >= 64:
            h = h.contiguous()
        return torch.nn.functional.interpolate(h, scale_factor=2.0, mode="nearest") + 1


class ChannelsLast(torch.nn.Module):
    """As diffusers' Upsample2D on CPU: the feature map is channels-last at the branch."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(x.to(memory_format=torch.channels_last))
        if h.shape[0] >= 64:
            h = h.contiguous()
        if h.numel() * 2 > pow(2, 31):
            h = h.contiguous()
        return torch.nn.functional.interpolate(h, scale_factor=2.0, mode="nearest")


class MutatedAfterCopy(torch.nn.Module):
    """The copy matters: eager at >= 64 mutates the copy, the traced path the original (read after)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = (x * 2).transpose(1, 2)
        h = a
        if h.shape[0] >= 64:
            h = h.contiguous()
        h.add_(1)
        return h * 1, a * 1


class ExtraStatement(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        if h.shape[0] >= 64:
            h = h.contiguous()
            h = h + 1
        return h


def _shadowed_max(a: int, b: int) -> int:
    return a + b  # asks nothing: the question is the test's own, at the `if` line


class ShadowedBuiltin(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        max = _shadowed_max  # noqa: A001 - the rule must see that the test's builtin is rebound
        h = x * 2
        if max(h.shape[0], 3) >= 64:
            h = h.contiguous()
        return h


def _export(model: torch.nn.Module) -> export.SymshapeProgram:  # type: ignore[name-defined]
    return export.export(model, (torch.randn(2, 3, 4, 4),), dynamic_shapes={"x": {0: Dim("b")}})


def _same_as_eager(ep: object, model: torch.nn.Module, sizes: tuple[int, ...]) -> None:
    for n in sizes:
        x = torch.randn(n, 3, 4, 4)
        got, want = ep.module()(x), model(x)  # type: ignore[attr-defined]
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            torch.testing.assert_close(g, w, msg=f"size {n}")


@pytest.mark.parametrize("model", [Contiguous(), ChannelsLast()], ids=["contiguous", "channels_last"])
def test_no_constraint_and_right_on_both_sides(model: torch.nn.Module) -> None:
    ep = _export(model.eval())
    assert ep.symshape.ranges == {"x.size(0)": (1, None)}
    assert ep.symshape.stats["traces"] == 1
    notes = [a for a in ep.symshape.assumptions if "every size runs that branch" in a]
    assert notes and all("only rebinds h to its .contiguous()" in a for a in notes)
    with torch.no_grad():
        _same_as_eager(ep, model, (1, 2, 63, 64, 65))


def test_mutation_after_copy_traces_again_without_the_rule() -> None:
    model = MutatedAfterCopy()
    with pytest.raises(ConstraintViolationError) as info:
        _export(model)
    err = info.value
    assert "must be <= 63" in str(err)
    assert "again without layout-only branches (the program mutates a tensor)" in err.stats["trace_reasons"]
    fixed = err.fixes.program
    assert fixed is not None and fixed.symshape.ranges["x.size(0)"] == (1, 63)
    _same_as_eager(fixed, model, (1, 2, 63))


@pytest.mark.parametrize(("model", "bound"), [(ExtraStatement(), 63), (ShadowedBuiltin(), 60)],
                         ids=["extra_statement", "shadowed_builtin"])
def test_not_layout_only_stays_a_constraint(model: torch.nn.Module, bound: int) -> None:
    with pytest.raises(ConstraintViolationError) as info:
        _export(model)
    assert f"must be <= {bound}" in str(info.value)
    program = info.value.fixes.program
    assert program is not None
    _same_as_eager(program, model, (1, 2, bound))
