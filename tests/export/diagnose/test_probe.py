"""``export.diagnose.probe``: a 0/1 specialization probed by re-exporting a larger example.

The sizes and the enlarged inputs are fast (no trace); :func:`probe_specializations` runs one
tiny re-export (a 2-line model) through a real :class:`export.exporter.Exporter`."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

from export.diagnose.probe import ProbeResult, candidate_sizes, enlarged_inputs, probe_specializations, tied_sizes
from export.exporter import Exporter
from export.spec.dynamic_shapes import from_dynamic_shapes
from export.spec.inputs import Inputs
from shapes.spec import InputDim, Spec
from trace_builder import TraceBuilder

X0, X1, Y0 = InputDim("x", 0), InputDim("x", 1), InputDim("y", 0)


def f(x: Any, y: Any, n: Any) -> Any:
    return x


def _bound(x: torch.Tensor, y: torch.Tensor, n: int = 3) -> Inputs:
    return Inputs.bind(f, (x, y, n), None)


@pytest.mark.parametrize("form, dims, value, sizes", [
    ({"x": {0: Dim("b")}, "y": {0: 2 * Dim("b") + 1}}, [X0], 5, {X0: 5, Y0: 11}),  # every dim of the root
    ({"x": {0: Dim.AUTO}}, [X0], 4, {X0: 4}),  # a hint dim: itself
    ({}, [X1], 7, {X1: 7}),  # undeclared
])
def test_tied_sizes(form: Any, dims: list[InputDim], value: int, sizes: dict[InputDim, int]) -> None:
    inputs = _bound(torch.randn(1, 3), torch.randn(3, 2))
    assert tied_sizes(from_dynamic_shapes(inputs, form), dims, value) == sizes


def test_candidate_sizes_root_at_two_then_example_sizes() -> None:
    inputs = _bound(torch.randn(1, 5), torch.randn(4, 2))
    spec = from_dynamic_shapes(inputs, {"x": {0: Dim.AUTO}, "y": {0: Dim("s")}})
    assert [{str(d): n for d, n in s.items()} for s in candidate_sizes(spec, inputs, [X0])] == [
        {"x.size(0)": 2}, {"x.size(0)": 4},  # y.size(0), a declared dim's example size
        {"x.size(0)": 5}]  # then the static dims' (x.size(1); y.size(1) = 2 already tried)


def test_candidate_sizes_are_at_most_six() -> None:
    x = torch.randn(1, 3, 4, 5, 6, 7, 8)
    inputs = Inputs.bind(lambda x: x, (x,), None)
    spec = Spec("none", (), ())
    assert [s[X0] for s in candidate_sizes(spec, inputs, [X0])] == [2, 3, 4, 5, 6, 7]


def test_enlarged_inputs_repeat_the_data() -> None:
    x, y = torch.arange(6.0).reshape(1, 6), torch.zeros(0, 2)
    inputs = _bound(x, y, 3)
    args, kwargs = enlarged_inputs(inputs, (x, y, 3), None, {X0: 3, Y0: 2, InputDim("n", None): 9})
    assert kwargs is None
    assert torch.equal(args[0], x.repeat(3, 1)) and args[0].is_contiguous()
    assert torch.equal(args[1], torch.zeros(2, 2))  # size 0: zeros of the new size
    assert args[2] == 9  # an int input set to its value
    assert args[0] is not x and x.shape == (1, 6)  # the example is untouched


def test_enlarged_inputs_narrow_a_repeat() -> None:
    x = torch.tensor([[1.0, 2.0, 3.0]])
    inputs = Inputs.bind(lambda x: x, (x,), None)
    (out,), _ = enlarged_inputs(inputs, (x,), None, {X1: 5})
    assert out.tolist() == [[1.0, 2.0, 3.0, 1.0, 2.0]]


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


@pytest.fixture(scope="module")
def probed() -> dict[str, Any]:
    args = (torch.randn(1, 4), torch.randn(3, 4))
    exporter = Exporter.of(Model(), args)
    out: dict[str, Any] = {}
    for name, spec in (("alone", {"x": {0: Dim("b")}, "y": None}), ("tied", {"x": {0: Dim("b")}, "y": {0: Dim("c")}})):
        trace = TraceBuilder(Model().forward, args, spec).trace()
        out[name] = probe_specializations(trace, [X0], exporter)
    return out


def test_a_probe_that_broadcasts_against_a_static_dim(probed: dict[str, Any]) -> None:
    result = probed["alone"]
    assert isinstance(result, ProbeResult) and result.ok is False and result.program is None
    assert result.sizes == {X0: 3}  # 2 does not broadcast against 3 (the model cannot run it): y's size next
    assert {str(d): p[0] for d, p in result.partners.items()} == {"x.size(0)": "a static dim of size 3"}


def test_a_probe_that_finds_the_partner_dim(probed: dict[str, Any]) -> None:
    result = probed["tied"]
    assert isinstance(result, ProbeResult) and result.ok is False
    assert {str(d): p[0] for d, p in result.partners.items()} == {"x.size(0)": "y.size(0)"}
