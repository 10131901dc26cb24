"""Cases from PyTorch's own export tests where symshape did worse than torch (issue 21; found
by ``benchmarks/bench_ported.py``), each exported by symshape and run against eager:

* a question torch asks under ``suppress_guards`` (dynamo fakeifying a view of a small base,
  a slice's bookkeeping) gets the example's answer and no fact, as torch records no guard:
  it was a fact that specialized three dims (``test_export_max_onnx_reported``), or a fact the
  program did not check, so a strict program ran unequal dims as equal (silently wrong,
  ``test_export_defaults_ok`` with ``Dim.AUTO``);
* a data-dependent Python ``assert`` in non-strict mode is a runtime assertion, as torch makes
  it (``test_python_asserts_with_sym_int``), with a message too (torch: without one only).
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


class SliceToLast(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 0: x.size(2)]


def _views() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.arange(6).reshape(2, 3), torch.arange(6).reshape(3, 2) * 10  # views of 6-element bases


AUTO3 = ({0: Dim.AUTO, 1: Dim.AUTO, 2: Dim.AUTO},)

# (id, model, example, dynamic_shapes, strict, inputs: (args, True: runs like eager | False: refused))
CASES: list[tuple[str, Callable[[], torch.nn.Module], Callable[[], tuple[Any, ...]], Any, bool,
                  list[tuple[tuple[Any, ...], bool]]]] = [
    ("view_of_small_base_strict", MaxOnnx, _views, ({0: Dim.DYNAMIC, 1: Dim.DYNAMIC},) * 2, True,
     [((torch.arange(20).reshape(4, 5), torch.arange(6).reshape(3, 2)), True),
      ((torch.arange(6).reshape(2, 3), torch.arange(6).reshape(3, 2)), True)]),
    ("slice_to_last_dim_strict", SliceToLast, lambda: (torch.randn(5, 5, 5),), AUTO3, True,
     [((torch.randn(7, 6, 6),), True), ((torch.randn(7, 6, 4),), False)]),
    ("slice_to_last_dim_non_strict", SliceToLast, lambda: (torch.randn(5, 5, 5),), AUTO3, False,
     [((torch.randn(7, 6, 6),), True), ((torch.randn(7, 6, 4),), False)]),
    ("assert_on_item_non_strict", AssertMax, lambda: (torch.zeros(4, dtype=torch.int),), None, False,
     [((torch.ones(4, dtype=torch.int),), True), ((torch.full((4,), -5, dtype=torch.int),), False)]),
    ("assert_with_message_on_item_non_strict", AssertMaxWithMessage, lambda: (torch.zeros(4, dtype=torch.int),),
     None, False, [((torch.ones(4, dtype=torch.int),), True), ((torch.full((4,), -5, dtype=torch.int),), False)]),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CASES])
def test_exports_and_runs_like_eager_or_refuses(case: Any) -> None:
    _, model, example, shapes, strict, inputs = case
    ep = export.export(model(), example(), dynamic_shapes=shapes, strict=strict)
    for args, runs in inputs:
        if runs:
            torch.testing.assert_close(ep.module()(*args), model()(*args))
        else:
            with pytest.raises(RuntimeError):  # (RefusedInputError is a RuntimeError)
                ep.module()(*args)
