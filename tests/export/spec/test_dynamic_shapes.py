"""``export.spec.dynamic_shapes``: torch's ``dynamic_shapes`` read into a Spec, checked against
the examples, and rebuilt as torch ``Dim`` objects. The oracle of the way back: a spec's
torch form read again is the same spec. Every refusal is an :class:`export.errors.InputError`
with the message users read."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

from export import _torch_compat as tc
from export.errors import InputError
from export.spec.dynamic_shapes import (dynamic_shapes_tree, from_dynamic_shapes, is_int_input,
                                        resolve_dynamic_shapes, torch_derived, torch_dynamic_shapes, validate)
from export.spec.inputs import Inputs
from shapes.affine import Affine
from shapes.expr import int_symbol
from shapes.spec import DimDecl, InputDim, RootDim, Spec


def f(x: Any, y: Any, n: Any) -> Any:
    return x


X = torch.randn(4, 8)
INPUTS = Inputs.bind(f, (X, torch.randn(4, 16), 3), None)
B, S = Dim("b", min=2, max=64), Dim("s")

FORMS = [
    {"x": {0: B, 1: 4 * S}, "y": {0: B, 1: 8 * S + 1}},
    {"x": {0: Dim.AUTO(min=1, max=9)}, "n": Dim.DYNAMIC},
    ((Dim.AUTO, None), None, None),  # by position, a tensor's dims as a tuple
    {"x": {-1: Dim("k", max=16)}},  # a negative dim index
    {},
]


@pytest.mark.parametrize("form", FORMS, ids=[str(i) for i in range(len(FORMS))])
def test_the_torch_form_reads_back_as_the_same_spec(form: Any) -> None:
    spec = from_dynamic_shapes(INPUTS, form)
    back = torch_dynamic_shapes(spec, INPUTS)
    assert set(back) == {"x", "y", "n"}  # every argument, None where static
    assert from_dynamic_shapes(INPUTS, back) == spec


def test_what_the_spec_reads() -> None:
    spec = from_dynamic_shapes(INPUTS, FORMS[0])
    assert [(r.name, r.lo, r.hi, r.text) for r in spec.roots] == [("b", 2, 64, "Dim('b', min=2, max=64)"),
                                                                   ("s", 0, None, "Dim('s')")]
    assert {str(d.dim): (d.mode, str(d.expr)) for d in spec.decls} == {
        "x.size(0)": ("dynamic", "b"), "x.size(1)": ("dynamic", "4*s"), "y.size(0)": ("dynamic", "b"),
        "y.size(1)": ("dynamic", "8*s + 1")}
    hints = from_dynamic_shapes(INPUTS, FORMS[1])
    assert [(str(d.dim), d.mode, d.expr, d.text, d.lo, d.hi) for d in hints.decls] == [
        ("x.size(0)", "auto", None, "Dim.AUTO(min=1, max=9)", 1, 9),
        ("n", "dynamic", None, "Dim.DYNAMIC", None, None)]  # an int: no lower bound


def test_tracing_traces_dynamic_as_auto() -> None:
    spec = from_dynamic_shapes(INPUTS, FORMS[1])
    assert tc.is_dim_hint(torch_dynamic_shapes(spec, INPUTS)["n"])
    assert str(torch_dynamic_shapes(spec, INPUTS)["n"]) == str(Dim.DYNAMIC)
    assert str(torch_dynamic_shapes(spec, INPUTS, tracing=True)["n"]) == str(Dim.AUTO)


def test_an_int_inputs_dim_goes_to_torch_as_a_hint_with_its_range() -> None:
    spec = from_dynamic_shapes(INPUTS, {"n": Dim("v", min=0, max=9)})
    assert [(r.name, r.lo, r.hi) for r in spec.roots] == [("v", 0, 9)]
    hint = torch_dynamic_shapes(spec, INPUTS)["n"]  # torch takes only hints on an int: symshape checks the range
    assert tc.is_dim_hint(hint) and str(hint) == str(Dim.DYNAMIC(min=0, max=9))


def test_torch_derived() -> None:
    s = int_symbol("s")
    root = Dim("s")
    assert torch_derived(root, Affine(s, 1, 0)) is root
    derived = torch_derived(root, Affine(s, 4, 1))
    assert tc.is_derived_dim(derived) and str(derived.fn(s)) == "4*s + 1"


def test_dynamic_shapes_tree_mirrors_the_arguments() -> None:
    def g(d: Any, t: Any, n: Any) -> Any:
        return t

    inputs = Inputs.bind(g, ({"a": torch.randn(3), "b": torch.randn(2)}, (torch.randn(5), 7), 2), None)
    tree = dynamic_shapes_tree(inputs, {"d['a']": {0: "A"}, "t[1]": {None: "N"}})
    assert tree == {"d": {"a": {0: "A"}, "b": None}, "t": (None, "N"), "n": None}


@pytest.mark.parametrize("form, message", [
    ({"z": None}, "dynamic_shapes names 'z', which is not an argument; the arguments are ['x', 'y', 'n']"),
    ((None,) * 4, "dynamic_shapes has 4 entries but there are only 3 arguments ['x', 'y', 'n']"),
    (3, "dynamic_shapes must be a dict, a tuple/list, a torch.export.ShapesCollection or a "
        "torch.export.AdditionalInputs, got int"),
    ({"x": {2: B}}, "dynamic_shapes for x names dim 2, but x has 2 dims (shape (4, 8))"),
    ({"x": (B,)}, "dynamic_shapes for x has 1 entries but x has 2 dims (shape (4, 8))"),
    ({"x": {0: 3}}, "x.size(0) is declared static 3 but the example has size 4"),
    ({"x": "b"}, "dynamic_shapes for tensor x must be a dict {dim: Dim} or a tuple, got str"),
    ({"x": {0: Dim("b", max=8)}, "y": {0: Dim("b", max=9)}},
     "two different Dims are named 'b' (Dim('b', max=8) and Dim('b', max=9)); use one Dim object or distinct names"),
    ({"x": {0: Dim("q", min=2.5)}}, "Dim('q') for x.size(0): min=2.5 must be an int (got float)"),
    ({"x": {0: Dim.STATIC(min=5)}}, "Dim.STATIC(min=5) for x.size(0): the example size 4 is outside [5, inf], and a "
                                    "static dim keeps its example size: give an example in that range, or other bounds"),
    ({"n": 2}, "n is declared static 2 but the example is 3"),
    ({"x": {0: "b"}}, "dynamic_shapes for x.size(0) is 'b': use a Dim, Dim.AUTO/STATIC/DYNAMIC or None"),
])
def test_refusals(form: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        from_dynamic_shapes(INPUTS, form)
    assert str(info.value) == message


@pytest.mark.parametrize("form, start", [
    ({"n": Dim("v"), "x": {0: Dim("v")}}, "dynamic_shapes for x.size(0) is v, the Dim of an int input"),
    ({"x": {0: 2 * Dim("r")}, "n": Dim("r")}, "dynamic_shapes for the int input n is Dim('r'), which names another "
                                              "input too"),
    ({"n": 2 * Dim("r")}, "dynamic_shapes for the int input n is the derived Dim"),
])
def test_an_int_takes_a_dim_of_its_own(form: Any, start: str) -> None:
    with pytest.raises(InputError, match="^" + start.replace("(", r"\(").replace(")", r"\)")):
        from_dynamic_shapes(INPUTS, form)


@pytest.mark.parametrize("form, message", [
    ({"x": {0: Dim("b", max=3)}}, "x.size(0) = 4 is outside the declared range of Dim('b', max=3): b = 4 is not in "
                                  "[0, 3]; use an example inside the range or widen it"),
    ({"x": {1: Dim("b")}, "y": {1: Dim("b")}}, "y.size(1) = 16 and x.size(1) = 8 are declared as b and b, which "
                                              "disagree on b (16 vs 8); make the example inputs consistent"),
    (FORMS[0], "y.size(1) = 16 cannot be 8*s + 1: no integer s gives 16; change the example input or the spec"),
])
def test_validate(form: Any, message: str) -> None:
    spec = from_dynamic_shapes(INPUTS, form)
    with pytest.raises(InputError) as info:
        validate(spec, INPUTS)
    assert str(info.value) == message


def test_a_consistent_example_validates() -> None:
    validate(from_dynamic_shapes(INPUTS, {"x": {0: B, 1: 4 * S}, "y": {0: B, 1: 8 * S}}), INPUTS)


def test_resolve_collections_and_plain_forms() -> None:
    def g(x: Any) -> Any:
        return x

    sc = torch.export.ShapesCollection()
    sc[X] = {0: Dim("b")}
    assert {k: {i: str(d) for i, d in v.items()} for k, v in resolve_dynamic_shapes(g, (X,), None, sc).items()} == \
        {"x": {0: str(Dim("b", min=0))}}
    ai = torch.export.AdditionalInputs()
    ai.add((torch.randn(5, 8),))
    resolved = resolve_dynamic_shapes(g, (X,), None, ai)
    assert list(resolved) == ["x"] and resolved["x"][1] is None and tc.is_dim_hint(resolved["x"][0])
    assert resolve_dynamic_shapes(g, (X,), None, {"x": None}) == {"x": None}


@pytest.mark.parametrize("value, expected", [(3, True), (-1, True), (True, False), (3.0, False),
                                             (torch.tensor(3), False)])
def test_is_int_input(value: Any, expected: bool) -> None:
    assert is_int_input(value) is expected


def test_an_int_inputs_negative_minimum_is_not_a_bare_assertion() -> None:
    spec = from_dynamic_shapes(INPUTS, {"n": Dim("v", min=-3, max=9)})
    assert [(r.name, r.lo, r.hi, r.text) for r in spec.roots] == [("v", -3, 9, "Dim('v', min=-3, max=9)")]
    assert [(str(d.dim), str(d.expr), d.lo, d.hi) for d in spec.decls] == [("n", "v", None, None)]  # its Dim's range
    # torch's hints take no negative bound: torch traces over a wider range, symshape's solver holds [-3, 9]
    traced = torch_dynamic_shapes(spec, INPUTS, tracing=True)["n"]
    assert tc.is_dim_hint(traced) and str(traced) == str(Dim.AUTO(max=9))
    back = torch_dynamic_shapes(spec, INPUTS)["n"]  # what a fix hands back: the int's own Dim, read back as it is
    assert isinstance(back, Dim) and (back.__name__, back.min, back.max) == ("v", -3, 9)
    assert from_dynamic_shapes(INPUTS, torch_dynamic_shapes(spec, INPUTS)) == spec


def test_an_int_inputs_negative_maximum_goes_to_torch_as_a_bare_hint() -> None:
    inputs = Inputs.bind(f, (X, torch.randn(4, 16), -4), None)
    spec = from_dynamic_shapes(inputs, {"n": Dim("v", min=-9, max=-1)})
    validate(spec, inputs)
    traced = torch_dynamic_shapes(spec, inputs, tracing=True)["n"]
    assert tc.is_dim_hint(traced) and str(traced) == str(Dim.AUTO)
    back = torch_dynamic_shapes(spec, inputs)["n"]
    assert isinstance(back, Dim) and (back.__name__, back.min, back.max) == ("v", -9, -1)
    assert from_dynamic_shapes(inputs, torch_dynamic_shapes(spec, inputs)) == spec


def test_an_int_range_open_below_with_a_negative_maximum_reads_back() -> None:
    # e.g. a fix "n <= -1" for an int given Dim.DYNAMIC: its own root, no lower bound
    inputs = Inputs.bind(f, (X, torch.randn(4, 16), -4), None)
    spec = Spec("modern", (RootDim("n", None, -1, "n"),),
                (DimDecl(InputDim("n", None), "dynamic", int_symbol("n"), "n", lo=None),))
    assert str(torch_dynamic_shapes(spec, inputs, tracing=True)["n"]) == str(Dim.AUTO)
    back = torch_dynamic_shapes(spec, inputs)["n"]
    assert isinstance(back, Dim) and (back.__name__, back.min, back.max) == ("n", -tc.int_oo, -1)
    again = from_dynamic_shapes(inputs, torch_dynamic_shapes(spec, inputs))
    assert [(r.name, r.lo, r.hi, r.text) for r in again.roots] == [("n", None, -1, "Dim('n', min=-int_oo, max=-1)")]
    assert again.decls == spec.decls
    validate(again, inputs)


def test_an_int_hint_with_a_negative_bound_and_no_root() -> None:
    spec = Spec("modern", (), (DimDecl(InputDim("n", None), "dynamic", None, "n", lo=-3, hi=9),))
    traced = torch_dynamic_shapes(spec, INPUTS, tracing=True)["n"]
    assert tc.is_dim_hint(traced) and str(traced) == str(Dim.AUTO(max=9))
    back = torch_dynamic_shapes(spec, INPUTS)["n"]
    assert isinstance(back, Dim) and (back.__name__, back.min, back.max) == ("n", -3, 9)
