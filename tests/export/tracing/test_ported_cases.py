"""Cases from PyTorch's own export tests where symshape did worse than torch (issue 21; found
by ``benchmarks/bench_ported.py``), each exported by symshape and run against eager:

* a question torch asks under ``suppress_guards`` (dynamo fakeifying a view of a small base,
  a slice's bookkeeping) gets the example's answer and no fact, as torch records no guard:
  it was a fact that specialized three dims (``test_export_max_onnx_reported``), or a fact the
  program did not check, so a strict program ran unequal dims as equal (silently wrong,
  ``test_export_defaults_ok`` with ``Dim.AUTO``);
* a data-dependent Python ``assert`` in non-strict mode is a runtime assertion, as torch makes
  it (``test_python_asserts_with_sym_int``), with a message too (torch: without one only);
* ``prefer_deferred_runtime_asserts_over_guards=True``: guards no Dim can say are runtime checks
  (``test_disable_forced_specializations_ok``), while a range, an equality or a static dim
  still raise, as torch does.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import torch
from torch.export import Dim

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))

import export  # noqa: E402
from assert_models import AssertMax, AssertMaxWithMessage  # noqa: E402 - plain asserts (see there)


class MaxOnnx(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.zeros((max(x.shape[0], y.shape[0]), max(x.shape[1], y.shape[1])), dtype=x.dtype)
        z[: x.shape[0], : x.shape[1]] = x
        z[: y.shape[0], : y.shape[1]] += y
        return z


class ReshapeMinusOne(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0] - 1, 4, -1)


class BranchAt4(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sin() if x.shape[0] > 4 else x.cos()


class SliceToLast(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 0: x.size(2)]


def _views() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.arange(6).reshape(2, 3), torch.arange(6).reshape(3, 2) * 10  # views of 6-element bases


AUTO3 = ({0: Dim.AUTO, 1: Dim.AUTO, 2: Dim.AUTO},)
STRICT, NON_STRICT = {"strict": True}, {"strict": False}
DEFERRED = {"prefer_deferred_runtime_asserts_over_guards": True}

# (id, model, example, dynamic_shapes, export keywords, inputs: (args, True: runs like eager | False: refused))
CASES: list[tuple[str, Callable[[], torch.nn.Module], Callable[[], tuple[Any, ...]], Any, dict[str, Any],
                  list[tuple[tuple[Any, ...], bool]]]] = [
    ("view_of_small_base_strict", MaxOnnx, _views, ({0: Dim.DYNAMIC, 1: Dim.DYNAMIC},) * 2, STRICT,
     [((torch.arange(20).reshape(4, 5), torch.arange(6).reshape(3, 2)), True),
      ((torch.arange(6).reshape(2, 3), torch.arange(6).reshape(3, 2)), True)]),
    ("slice_to_last_dim_strict", SliceToLast, lambda: (torch.randn(5, 5, 5),), AUTO3, STRICT,
     [((torch.randn(7, 6, 6),), True), ((torch.randn(7, 6, 4),), False)]),
    ("slice_to_last_dim_non_strict", SliceToLast, lambda: (torch.randn(5, 5, 5),), AUTO3, NON_STRICT,
     [((torch.randn(7, 6, 6),), True), ((torch.randn(7, 6, 4),), False)]),
    ("assert_on_item_non_strict", AssertMax, lambda: (torch.zeros(4, dtype=torch.int),), None, NON_STRICT,
     [((torch.ones(4, dtype=torch.int),), True), ((torch.full((4,), -5, dtype=torch.int),), False)]),
    ("assert_with_message_on_item_non_strict", AssertMaxWithMessage, lambda: (torch.zeros(4, dtype=torch.int),),
     None, NON_STRICT, [((torch.ones(4, dtype=torch.int),), True), ((torch.full((4,), -5, dtype=torch.int),), False)]),
    ("deferred_reshape_relations", ReshapeMinusOne, lambda: (torch.randn(10, 72),),
     {"x": (Dim("dx"), Dim("dy"))}, DEFERRED,
     [((torch.randn(8, 7),), True), ((torch.randn(12, 11),), True), ((torch.randn(8, 8),), False)]),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CASES])
def test_exports_and_runs_like_eager_or_refuses(case: Any) -> None:
    _, model, example, shapes, kwargs, inputs = case
    ep = export.export(model(), example(), dynamic_shapes=shapes, **kwargs)
    for args, runs in inputs:
        if runs:
            torch.testing.assert_close(ep.module()(*args), model()(*args))
        else:
            with pytest.raises(RuntimeError):  # (RefusedInputError is a RuntimeError)
                ep.module()(*args)


def test_deferred_keeps_the_reshape_relations_as_listed_checks() -> None:
    ep = export.export(ReshapeMinusOne(), (torch.randn(10, 72),), dynamic_shapes={"x": (Dim("dx"), Dim("dy"))},
                       **DEFERRED)
    assert ep.symshape.checks and all("x.size(0) * x.size(1)" in c.relation for c in ep.symshape.checks)


@pytest.mark.parametrize("kwargs", [{}, DEFERRED], ids=["default", "deferred"])
def test_a_range_a_dim_can_say_still_raises_with_deferred_asserts(kwargs: dict[str, Any]) -> None:
    """torch too: prefer_deferred_runtime_asserts_over_guards defers only what it cannot make a
    range, an equality or a static dim."""
    with pytest.raises(export.ConstraintViolationError, match="x.size"):
        export.export(BranchAt4(), (torch.randn(6, 3),), dynamic_shapes={"x": {0: Dim("b")}}, **kwargs)
