"""A program's refusal of a call reads like the export's causes (issue 21, item 4): the words,
the call's sizes, the source line; torch's ``Guard failed: ...`` is only the ``__cause__``.

Table: model, spec, a refused call, the words its refusal must contain. Oracle: on a grid of
sizes, the program refuses exactly the calls :func:`refusal_text` finds a reason for (it never
invents a reason for a call the program runs, and never leaves torch's words alone).
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch.export import Dim

import export
from export import RefusedInputError
from export.program.refusals import input_sizes, refusal_text
from assert_models import AssertPositive  # noqa: E402 - tests/support (see its docstring)


class Groups(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], -1, 4).sum(-1)


class AddRows(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


def _derived() -> dict[str, Any]:
    return {"x": {0: Dim("b", max=64), 1: 4 * Dim("_s", min=1)}}


CASES: list[tuple[str, Callable[[], torch.nn.Module], tuple[torch.Tensor, ...], Callable[[], Any],
                  tuple[torch.Tensor, ...], tuple[str, ...]]] = [
    ("divisible", Groups, (torch.randn(2, 12),), _derived, (torch.randn(2, 6),),
     ("x.size(1) must be divisible by 4", "got x.size(1) = 6")),
    ("above a Dim's max", Groups, (torch.randn(2, 12),), _derived, (torch.randn(65, 12),),
     ("x.size(0) must be <= 64", "got x.size(0) = 65")),
    ("unequal dims", AddRows, (torch.randn(3, 4), torch.randn(3, 4)),
     lambda: {"x": {0: Dim("b")}, "y": {0: Dim("b")}}, (torch.randn(3, 4), torch.randn(2, 4)),
     ("y.size(0) must equal x.size(0)", "got y.size(0) = 2, x.size(0) = 3")),
    ("a guard on a Dim.AUTO", Groups, (torch.randn(2, 16),), lambda: {"x": {1: Dim.AUTO}},
     (torch.randn(2, 10),), ("x.size(1) must be divisible by 4", "got x.size(1) = 10", "needed at ")),
]


@pytest.mark.parametrize(("model", "args", "spec", "call", "words"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_a_refusal_says_why_in_the_causes_words(model: Callable[[], torch.nn.Module], args: tuple[torch.Tensor, ...],
                                                spec: Callable[[], Any], call: tuple[torch.Tensor, ...],
                                                words: tuple[str, ...]) -> None:
    ep = export.export(model(), args, dynamic_shapes=spec())
    with pytest.raises(RefusedInputError) as caught:
        ep.module()(*call)
    text = str(caught.value)
    assert text.startswith("the exported program refuses these inputs:"), text
    for w in words:
        assert w in text, text
    assert "Guard failed" not in text and "s77" not in text
    assert isinstance(caught.value, RuntimeError) and isinstance(caught.value, AssertionError)  # as torch's were
    assert caught.value.__cause__ is not None  # torch's own refusal, kept
    ep.module()(*args)  # the example still runs

    buffer = io.BytesIO()  # a loaded program says the same, from the solver problem it carries
    export.save(ep, buffer)
    buffer.seek(0)
    loaded = export.load(buffer)
    with pytest.raises(RefusedInputError) as again:
        loaded.module()(*call)
    assert str(again.value) == text


def test_refusal_text_names_a_reason_exactly_for_the_refused_calls() -> None:
    ep = export.export(Groups(), (torch.randn(2, 12),), dynamic_shapes=_derived())
    module, solver = ep.module(), ep.symshape_solver
    assert solver is not None
    for b, s in itertools.product((1, 2, 3, 64, 65), (4, 6, 8, 13, 16)):
        x = torch.randn(b, s)
        reason = refusal_text(solver, input_sizes(ep.symshape.inputs, (x,)))
        try:
            module(x)
        except RefusedInputError:
            assert reason is not None, (b, s)
        else:
            assert reason is None, (b, s, reason)


def test_input_sizes_names_each_dim_of_each_tensor() -> None:
    assert input_sizes(("x", None, "d['a']"), (torch.ones(2, 3), 5, torch.ones(4))) == \
        {"x.size(0)": 2, "x.size(1)": 3, "d['a'].size(0)": 4}


class Checked(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        torch._check(x.shape[0] * 2 >= y.shape[0])
        return x.sum() + y.sum()


def test_a_deferred_runtime_assert_speaks_the_causes_words_too() -> None:
    """``prefer_deferred_runtime_asserts_over_guards=True``: torch checks the relation in the graph
    (``Runtime assertion failed for expression s17 <= 2*s77``); symshape's graph says it in words,
    also after save/load."""
    ep = export.export(Checked(), (torch.randn(4, 3), torch.randn(6, 3)),
                       dynamic_shapes={"x": {0: Dim("a")}, "y": {0: Dim("b")}},
                       prefer_deferred_runtime_asserts_over_guards=True)
    buffer = io.BytesIO()
    export.save(ep, buffer)
    buffer.seek(0)
    for program in (ep, export.load(buffer)):
        with pytest.raises(RuntimeError) as caught:
            program.module()(torch.randn(2, 3), torch.randn(7, 3))
        text = str(caught.value)
        assert "the model requires 2 * x.size(0) >= y.size(0)" in text, text
        assert "s17" not in text and "Runtime assertion failed for expression" not in text


def test_a_static_dim_of_another_size_is_named() -> None:
    ep = export.export(Groups(), (torch.randn(2, 12),), dynamic_shapes={"x": {0: Dim("b")}})
    with pytest.raises(RefusedInputError, match=r"x.size\(1\) must be 12 \(static in the program; got x.size\(1\) = 8\)"):
        ep.module()(torch.randn(3, 8))


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non-strict"])
def test_a_data_dependent_assert_is_a_runtime_check_named_as_the_user_names_the_value(strict: bool) -> None:
    """issue 21, item 3: a Python ``assert`` on a data-dependent value is a runtime assertion, as
    torch makes it (strict: dynamo; non-strict: torch's ShapeEnv, whose test of the asking
    bytecode symshape's routing does from the user's frame, past its own); it refuses in
    words that name the value ``n`` and its line, not torch's ``u0``; the program runs where
    the assert holds, like eager."""
    x, y = torch.randn(4, 3), torch.tensor([2])
    ep = export.export(AssertPositive(), (x, y), dynamic_shapes={"x": {0: Dim("b")}, "y": None}, strict=strict)
    torch.testing.assert_close(ep.module()(torch.randn(6, 3), torch.tensor([3])),
                               AssertPositive()(torch.randn(6, 3), torch.tensor([3])), rtol=0, atol=1e30)
    with pytest.raises(RuntimeError) as caught:
        ep.module()(x, torch.tensor([-1]))
    text = str(caught.value)
    assert "n must be >= 1 (n comes from n = y.sum().item() at " in text, text
    assert "assert_models.py:12)" in text
    assert "u0" not in text
