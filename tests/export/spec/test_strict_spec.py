"""Specs are validated strictly (issue 11 item 3): a bound torch would bend or choke on
(``min=2.5``, ``min="2"``, a bool) is an InputError naming the input and dim; every
user-facing error is an ``export.ExportError``; a callable without a Python signature
gets a clear InputError. And ``export`` takes torch.export.export's keywords."""

from __future__ import annotations

import re
from typing import Any, Callable

import pytest
import torch
from torch.export import Dim

import export
from export import ExportError, InputError, RefusedInputError
from export.api import TorchOptions, traced


class Double(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


X = torch.randn(6, 3)


def _spec(shapes: Callable[[], Any]) -> Callable[[], Any]:
    return lambda: export.export(Double(), (X,), dynamic_shapes=shapes())


def _hint(kind: str, **bounds: Any) -> Any:
    """A bounded hint built as torch's factory would, without its own checks."""
    return torch.export.dynamic_shapes._DimHint(getattr(torch.export.dynamic_shapes._DimHintType, kind),
                                                _factory=False, **bounds)


CASES: list[tuple[str, Callable[[], Any], str]] = [
    ("float min", _spec(lambda: {"x": {0: Dim("b", min=2.5)}}),
     r"Dim\('b'\) for x.size\(0\): min=2.5 must be an int \(got float\)"),
    ("str min", _spec(lambda: {"x": {0: Dim("b", min="2")}}), r"x.size\(0\): min='2' must be an int \(got str\)"),
    ("float max", _spec(lambda: {"x": {0: Dim("b", max=8.0)}}), r"x.size\(0\): max=8.0 must be an int"),
    ("bool max", _spec(lambda: {"x": {0: Dim("b", max=True)}}), r"x.size\(0\): max=True must be an int \(got bool\)"),
    ("float min, derived", _spec(lambda: {"x": {0: 2 * Dim("b", min=1.5)}}), r"x.size\(0\): min=1.5 must be an int"),
    ("auto float min", _spec(lambda: {"x": {0: Dim.AUTO(min=2.5)}}),
     r"Dim.AUTO for x.size\(0\): min=2.5 must be an int \(got float\)"),
    ("dynamic str max", _spec(lambda: {"x": {1: _hint("DYNAMIC", max="9")}}),
     r"Dim.DYNAMIC for x.size\(1\): max='9' must be an int"),
    ("hint bool min", _spec(lambda: {"x": {0: _hint("AUTO", min=True)}}), r"x.size\(0\): min=True must be an int"),
    ("hint min > max", _spec(lambda: {"x": {0: _hint("DYNAMIC", min=9, max=3)}}),
     r"Dim.DYNAMIC for x.size\(0\) has min=9 > max=3"),
    ("auto example outside bounds", _spec(lambda: {"x": {0: Dim.AUTO(min=8)}}),
     r"x.size\(0\) = 6 is outside the declared range of Dim.AUTO\(min=8\)"),
    ("dynamic example outside bounds", _spec(lambda: {"x": {0: Dim.DYNAMIC(max=4)}}),
     r"x.size\(0\) = 6 is outside the declared range of Dim.DYNAMIC\(max=4\)"),
    ("static example outside bounds", _spec(lambda: {"x": {0: Dim.STATIC(min=8, max=10)}}),
     r"Dim.STATIC\(min=8, max=10\) for x.size\(0\): the example size 6 is outside \[8, 10\]"),
    ("not a spec form", _spec(lambda: {1, 2}), "dynamic_shapes must be a dict, a tuple/list, a torch.export.ShapesCollection"),
    ("a dim spec that is a string", _spec(lambda: {"x": {0: "batch"}}), r"dynamic_shapes for x.size\(0\) is 'batch'"),
    ("builtin as the model", lambda: export.export(torch.relu, (X,)),
     r"torch.relu is a builtin without a Python signature: wrap it, e.g. def f\(x\): return torch.relu\(x\)"),
    ("not callable", lambda: export.export(3, (X,)), "export needs an nn.Module, a function or a method, got int"),
    ("strict not a bool", lambda: export.export(Double(), (X,), strict="yes"), "strict must be a bool"),
    ("preserve not a tuple", lambda: export.export(Double(), (X,), preserve_module_call_signature="sub"),
     "preserve_module_call_signature must be a tuple of submodule names"),
    ("unknown keyword", lambda: export.export(Double(), (X,), fast=True),
     "export\\(\\) got an unexpected keyword 'fast': torch.export.export takes .*prefer_deferred"),
    ("dynamic int input sharing a Dim", lambda: export.export(lambda x, n: x * n, (X, 3),
                                                              dynamic_shapes={"x": {0: Dim("b")}, "n": Dim("b")}),
     "an int takes a Dim of its own"),
]


@pytest.mark.parametrize("name,call,message", CASES, ids=[c[0] for c in CASES])
def test_malformed_spec_is_an_input_error(name: str, call: Callable[[], Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        call()
    assert info.value.__cause__ is None
    assert re.search(message, str(info.value)), str(info.value)


D = export.dynamic_dim(X, 0)

CLASSIC_OPERATOR_CASES: list[tuple[str, Callable[[], Any], str]] = [
    ("float bound", lambda: D >= 2.5, r"dynamic_dim\(t, 0\) >= 2.5: classic bounds must be ints"),
    ("negative coefficient", lambda: D * -1, "the coefficient of a classic dim must be positive"),
    ("dim related to itself", lambda: D == D, "a dim related to itself"),
    ("float offset", lambda: D + 1.5, r"dynamic_dim\(t, 0\) \+ 1.5: a classic dim combines with ints"),
    ("not-equal", lambda: D != 3, "'!=' is not a supported classic constraint"),
    ("chained comparison", lambda: 2 <= D <= 8, "chained comparisons like 2 <= d <= 8 are not supported"),
]


@pytest.mark.parametrize("name,call,message", CLASSIC_OPERATOR_CASES, ids=[c[0] for c in CLASSIC_OPERATOR_CASES])
def test_classic_operator_misuse_is_an_input_error(name: str, call: Callable[[], Any], message: str) -> None:
    """The core refuses; the user sees an export.InputError (still a TypeError, as operators raise)."""
    with pytest.raises(export.errors.ClassicOperatorError) as info:
        call()
    assert isinstance(info.value, InputError) and isinstance(info.value, TypeError)
    assert re.search(message, str(info.value)), str(info.value)


def test_classic_terms_still_export() -> None:
    y = torch.randn(13, 3)
    ep = export.export(lambda x, y: torch.cat([x, x, y[:1]]), (X, y),
                       constraints=[D <= 64, export.dynamic_dim(y, 0) == 2 * D + 1])
    assert ep.symshape.ranges == {"x.size(0)": (2, 64), "y.size(0)": (5, 129)}


def test_core_spec_errors_reach_the_user_as_export_errors() -> None:
    """The core's SpecError (contradictory classic constraints) is an InputError."""
    d = export.dynamic_dim(X, 0)
    with pytest.raises(ExportError, match="contradictory constraints"):
        export.export(Double(), (X,), constraints=[d >= 10, d < 5])


class Outer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sub = torch.nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sub(x) + 1 if x.size(0) <= 10 else self.sub(x) - 1


@pytest.mark.parametrize("strict", [False, True])
def test_keywords_pass_through_to_torch(strict: bool) -> None:
    """preserve_module_call_signature and prefer_deferred_runtime_asserts_over_guards reach
    torch: the call signature of ``sub`` is kept, and the program is what torch makes."""
    spec = {"x": {0: Dim.DYNAMIC}}
    model = Outer()
    ep = export.export(model, (X,), dynamic_shapes=spec, strict=strict, preserve_module_call_signature=("sub",),
                       prefer_deferred_runtime_asserts_over_guards=True)
    vanilla = torch.export.export(model, (X,), dynamic_shapes=spec, strict=strict,
                                  preserve_module_call_signature=("sub",),
                                  prefer_deferred_runtime_asserts_over_guards=True)
    fqns = {e.fqn for e in ep.module_call_graph if e.signature is not None}
    assert "sub" in fqns and fqns == {e.fqn for e in vanilla.module_call_graph if e.signature is not None}
    assert ep.symshape.ranges["x.size(0)"][1] == 10
    for n in (2, 10):
        torch.testing.assert_close(ep.module()(torch.randn(n, 3).fill_(1.0)), model(torch.randn(n, 3).fill_(1.0)))
    with pytest.raises(RefusedInputError, match=r"x.size\(0\) must be <= 10 \(got x.size\(0\) = 11\)"):
        ep.module()(torch.randn(11, 3))


def test_traced_takes_the_keywords_too() -> None:
    ep, trace = traced(Double(), (X,), dynamic_shapes={"x": {0: Dim.DYNAMIC}}, preserve_module_call_signature=())
    assert trace.spec.decls[0].text == "Dim.DYNAMIC" and ep.range_constraints


def test_torch_options_cover_torch_export_s_signature() -> None:
    import inspect

    params = set(inspect.signature(torch.export.export).parameters) - {"mod", "args", "kwargs", "dynamic_shapes"}
    kwargs = TorchOptions.of(False, (), False, {}).as_kwargs()
    assert params <= set(kwargs) | set(inspect.signature(export.export).parameters)


def test_static_bounds_that_hold_the_example_export_static() -> None:
    ep = export.export(Double(), (X,), dynamic_shapes={"x": {0: Dim.STATIC(min=2, max=8)}})
    assert ep.symshape.ranges == {}
    with pytest.raises(RefusedInputError, match=r"x.size\(0\) must be 6 \(static in the program"):
        ep.module()(torch.randn(5, 3))
