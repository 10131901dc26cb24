"""``export.spec.render``: a spec as the code a user pastes (Dim form, classic form, checks)
and as ``symshape export --dynamic`` flags. Golden texts; the Dim form is also run back
through ``from_dynamic_shapes`` (it must declare the same spec)."""

from __future__ import annotations

from typing import Any

import pytest
import sympy
import torch
from torch.export import Dim

from export.spec.dynamic_shapes import from_dynamic_shapes
from export.spec.inputs import Inputs
from export.spec.render import (dim_call, dim_text, render_checks, render_classic, render_flags, render_modern,
                                shown_max)
from shapes.expr import int_symbol
from shapes.spec import DimDecl, InputDim, RootDim, Spec


def f(x: Any, y: Any, n: Any) -> Any:
    return x


INPUTS = Inputs.bind(f, (torch.randn(4, 8), torch.randn(4, 16), 3), None)


def _spec(dynamic_shapes: Any, inputs: Inputs = INPUTS) -> Spec:
    return from_dynamic_shapes(inputs, dynamic_shapes)


DERIVED = {"x": {0: Dim("b", min=2, max=64), 1: 4 * Dim("s")}, "y": {0: Dim("b", min=2, max=64), 1: 8 * Dim("s")},
           "n": None}
HINTS = {"x": {0: Dim.AUTO, 1: Dim("k", max=2**63 - 2)}, "y": None, "n": Dim.DYNAMIC}


@pytest.mark.parametrize("d, text", [(InputDim("x", 0), "x.shape[0]"), (InputDim("d['a']", 2), "d['a'].shape[2]"),
                                     (InputDim("n", None), "n")])
def test_dim_text(d: InputDim, text: str) -> None:
    assert dim_text(d) == text


@pytest.mark.parametrize("lo, hi, text", [
    (0, None, "Dim('b')"), (2, 64, "Dim('b', min=2, max=64)"), (0, 8, "Dim('b', max=8)"), (3, None, "Dim('b', min=3)"),
    (None, None, "Dim.DYNAMIC"), (None, 8, "Dim.DYNAMIC(max=8)"),  # no lower bound: an int input's
])
def test_dim_call(lo: int | None, hi: int | None, text: str) -> None:
    assert dim_call("b", lo, hi) == text


@pytest.mark.parametrize("hi, coeff, shown", [
    (64, 4, 64), (None, 4, None), (2**63 - 2, 1, None),  # the classic default maximum: unbounded
    (2**61, 1, 2**61),  # a real (large) maximum
    (2**61, 4, None),  # 4 * 2**61 repeats the default for the derived dim
])
def test_shown_max(hi: int | None, coeff: int, shown: int | None) -> None:
    s = int_symbol("s")
    root = RootDim("s", 0, hi, "s")
    spec = Spec("modern", (root,), (DimDecl(InputDim("x", 0), "dynamic", coeff * s, "s"),))
    assert shown_max(root, spec) == shown


def test_render_modern_golden_and_round_trip() -> None:
    spec = _spec(DERIVED)
    text = render_modern(spec, INPUTS)
    assert text == ("from torch.export import Dim\n\n"
                    "b = Dim('b', min=2, max=64)\n"
                    "s = Dim('s')\n"
                    "dynamic_shapes = {'x': {0: b, 1: 4 * s}, 'y': {0: b, 1: 8 * s}, 'n': None}")
    scope: dict[str, Any] = {}
    exec(text, scope)  # noqa: S102 - the code a user pastes
    assert _spec(scope["dynamic_shapes"]) == spec


def test_render_modern_of_hints_leaves_out_the_default_max() -> None:
    text = render_modern(_spec(HINTS), INPUTS)
    assert text == ("from torch.export import Dim\n\nk = Dim('k')\n"
                    "dynamic_shapes = {'x': {0: Dim.AUTO, 1: k}, 'y': None, 'n': Dim.DYNAMIC}")


def test_render_modern_of_nested_inputs() -> None:
    def g(d: Any, t: Any) -> Any:
        return t

    inputs = Inputs.bind(g, ({"a": torch.randn(3), "b": torch.randn(2)}, (torch.randn(5),)), None)
    spec = _spec({"d": {"a": {0: Dim("m")}, "b": None}, "t": ({0: Dim("m")},)}, inputs)
    assert render_modern(spec, inputs).splitlines()[-1] == "dynamic_shapes = {'d': {'a': {0: m}, 'b': None}, 't': ({0: m},)}"
    assert render_classic(spec, inputs) == ("def specify_constraints(d, t):\n    return [\n"
                                            "        dynamic_dim(t[0], 0) == dynamic_dim(d['a'], 0),\n    ]")


@pytest.mark.parametrize("dynamic_shapes, text", [
    (DERIVED, "def specify_constraints(x, y):\n    return [\n"
              "        dynamic_dim(x, 0) <= 64,\n"  # min=2 is the classic default: not repeated
              "        dynamic_dim(y, 0) == dynamic_dim(x, 0),\n"
              "        # x.size(1) = 4 * s: dynamic_dim cannot say this (use the Dim form)\n"
              "        # y.size(1) = 8 * s: dynamic_dim cannot say this (use the Dim form)\n"
              "    ]"),
    ({"x": {1: Dim("k", min=3)}}, "def specify_constraints(x):\n    return [\n        dynamic_dim(x, 1) >= 3,\n    ]"),
    ({"x": {1: Dim("k")}}, "def specify_constraints(x):\n    return [\n        dynamic_dim(x, 1),\n    ]"),
    ({"n": Dim("v", max=9)}, "def specify_constraints(n):\n    return [\n"
                             "        # n: dynamic_dim cannot make an int input dynamic (use the Dim form)\n    ]"),
    ({}, "def specify_constraints(x, y, n):\n    return []  # every input dim is static: no dynamic_dim to declare"),
])
def test_render_classic(dynamic_shapes: Any, text: str) -> None:
    assert render_classic(_spec(dynamic_shapes), INPUTS) == text


def test_render_checks() -> None:
    a, b = sympy.symbols("a b", integer=True)
    names = {a: "x.shape[0]", b: "y.shape[1]"}
    assert render_checks((sympy.Eq(a * b, 64), sympy.Ne(a, 3)), names) == [
        "torch._check(x.shape[0] * y.shape[1] == 64)", "torch._check(x.shape[0] != 3)"]
    assert render_checks((), names) == []


@pytest.mark.parametrize("dynamic_shapes, flags", [
    (DERIVED, ["--dynamic x:0:b:2:64", "--dynamic 'x:1:4*s'", "--dynamic y:0:b", "--dynamic 'y:1:8*s'"]),
    ({"x": {0: Dim.AUTO, 1: Dim("k", min=3)}}, ["--dynamic x:0:auto", "--dynamic x:1:k:3"]),
    ({}, []),
    (HINTS, None),  # an int input: --dynamic names tensor dims only
])
def test_render_flags(dynamic_shapes: Any, flags: list[str] | None) -> None:
    assert render_flags(_spec(dynamic_shapes)) == flags


def test_render_flags_of_a_dim_of_two_roots_is_none() -> None:
    a, b = int_symbol("a"), int_symbol("b")
    spec = Spec("modern", (RootDim("a", 0, None, "a"), RootDim("b", 0, None, "b")),
                (DimDecl(InputDim("x", 0), "dynamic", a + b, "a+b"),))
    assert render_flags(spec) is None
