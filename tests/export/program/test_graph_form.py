"""``export.program.graph_form``: an exported graph as comparable data, read at a point.

One tiny torch.export (module-scoped): a full slice and ``contiguous`` folded into their input,
size arithmetic folded into expressions in the trace's dims (one name per class), read at the
point's values, and an in-place op's result read as the argument it mutates."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

from export.api import traced
from export.program.graph_form import graph_form


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> Any:
        z = x[:, :4].contiguous()
        return z.reshape(x.shape[0] * 4, 1) + y.sum(), y.add_(1)


@pytest.fixture(scope="module")
def exported() -> Any:
    return traced(Model(), (torch.randn(3, 8), torch.randn(3)), dynamic_shapes={"x": {0: Dim("b")}, "y": {0: Dim("b")}})


def _form(size: str) -> tuple[Any, ...]:
    return (
        ("call_function", "aten.slice.Tensor", (("input", "x"), ("size", "1"), ("size", "0"), ("size", "4")), ()),
        ("call_function", "aten.reshape.default", (("node", 0), (("size", size), ("size", "1"))), ()),
        ("call_function", "aten.sum.default", (("input", "y"),), ()),
        ("call_function", "aten.add.Tensor", (("node", 1), ("node", 2)), ()),
        ("call_function", "aten.add_.Tensor", (("input", "y"), ("size", "1")), ()),
        ("output", "output", ((("node", 3), ("input", "y")),), ()),  # add_'s result is y itself
    )


@pytest.mark.parametrize("values, size", [
    ({}, "4*b"),  # x.size(0) and y.size(0) are one class: named by its first name, b
    ({"b": 5}, "20"),
    ({"other": 7}, "4*b"),
])
def test_graph_form_golden(exported: Any, values: dict[str, int], size: str) -> None:
    ep, trace = exported
    assert graph_form(ep, trace, values) == _form(size)


def test_the_graph_holds_what_the_form_folds(exported: Any) -> None:
    ep, _ = exported
    targets = [str(n.target) for n in ep.graph_module.graph.nodes if n.op == "call_function"]
    assert "aten.contiguous.default" in targets and "aten.sym_size.int" in targets
    assert targets.count("aten.slice.Tensor") == 2  # the full one, x[:, ...], and x[:, :4]


def test_two_points_compare_alike_only_where_sizes_agree(exported: Any) -> None:
    ep, trace = exported
    assert graph_form(ep, trace, {"b": 3}) == graph_form(ep, trace, {"b": 3, "other": 1})
    assert graph_form(ep, trace, {"b": 3}) != graph_form(ep, trace, {"b": 4})


def test_the_form_is_hashable_data(exported: Any) -> None:
    ep, trace = exported
    assert len({graph_form(ep, trace, {}), graph_form(ep, trace, {})}) == 1
