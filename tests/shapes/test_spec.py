"""Tests for shapes.spec: dim specs, bindings, shape specs and classic constraints."""

from __future__ import annotations

import dataclasses

import pytest
import sympy

from shapes import FloorDiv, SpecError, int_symbol
from shapes.spec import (
    CLASSIC_MAX,
    CLASSIC_MIN,
    ClassicConstraint,
    ClassicDim,
    ClassicEquality,
    DimBinding,
    DimSpec,
    InputDim,
    ShapeSpec,
    dynamic_dim,
)

x0, x1, y0, z0 = InputDim("x", 0), InputDim("x", 1), InputDim("y", 0), InputDim("z", 0)


# -- DimSpec -------------------------------------------------------------------------------

def test_dimspec_defaults_and_symbol() -> None:
    b = DimSpec("b")
    assert (b.min, b.max, b.derived, b.root) == (0, None, None, None)
    assert b.symbol == int_symbol("b") and b.expr == b.symbol


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"name": "b", "min": 8, "max": 4}, "dim 'b': min 8 > max 4"),
    ({"name": "2b"}, "'2b' is not a Python identifier"),
    ({"name": "lambda"}, "not a Python identifier"),
    ({"name": "b", "min": 1.5}, "must be ints"),
    ({"name": "b", "max": True}, "must be ints"),
    ({"name": "b", "derived": int_symbol("b") + 1}, "'derived' and 'root' go together"),
])
def test_dimspec_validation(kwargs: dict, fragment: str) -> None:
    with pytest.raises(SpecError) as info:
        DimSpec(**kwargs)
    assert fragment in str(info.value)


def test_dimspec_is_frozen_and_hashable() -> None:
    b = DimSpec("b", 1, 8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.min = 3  # type: ignore[misc]
    assert {b, DimSpec("b", 1, 8)} == {b}


def test_derived_dims_by_arithmetic() -> None:
    b = DimSpec("b", min=1, max=64)
    d = 2 * b + 1
    assert (d.name, d.min, d.max, d.root) == ("2 * b + 1", 3, 129, b)
    assert d.derived == 2 * b.symbol + 1 and d.symbol == b.symbol
    e = d - 3  # composes on the root
    assert (e.name, e.min, e.max, e.root) == ("2 * b - 2", 0, 126, b)
    h = b // 4
    assert (h.name, h.min, h.max) == ("b // 4", 0, 16)
    assert (b * 3).name == "3 * b" and (b + 2).max == 66


def test_derive_with_expression_or_callable() -> None:
    b = DimSpec("b", min=2)
    d = b.derive(2 * b.symbol + 1, source="2*b + 1")
    assert (d.min, d.max, d.source) == (5, None, "2*b + 1")
    assert b.derive(lambda s: FloorDiv(s + 1, 2)).min == 1


@pytest.mark.parametrize(("fn", "fragment"), [
    (lambda s: -s + 10, "must be nondecreasing"),
    (lambda s: s * s, "must be nondecreasing"),
    (lambda s: sympy.Mod(s, 2), "must be nondecreasing"),
    (lambda s: s - 5, "can be negative (-3)"),
    (lambda s: s * 0 + 3, "does not depend on 'b'"),
])
def test_derive_rejects(fn, fragment: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError) as info:
        DimSpec("b", min=2, max=10).derive(fn)
    assert fragment in str(info.value)


def test_dimspec_arithmetic_with_non_ints_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        DimSpec("b") * 1.5  # type: ignore[operator]


# -- InputDim / DimBinding -----------------------------------------------------------------

def test_input_dim() -> None:
    assert str(x0) == "x.size(0)" and hash(x0) == hash(InputDim("x", 0))
    assert InputDim("args[0]", 2).symbol == int_symbol("args_0__2")
    for bad in [("", 0), ("x", -1), ("x", True), (3, 0)]:
        with pytest.raises(SpecError):
            InputDim(*bad)  # type: ignore[arg-type]


def test_dim_binding() -> None:
    assert DimBinding(x0, DimSpec("b", 2, 9)).range == (2, 9)
    assert DimBinding(x0, 3).range == (3, 3)
    with pytest.raises(SpecError, match="x.size\\(0\\): expected a DimSpec or a static size"):
        DimBinding(x0, -1)
    with pytest.raises(SpecError, match="must be an InputDim"):
        DimBinding("x", 3)  # type: ignore[arg-type]


# -- ShapeSpec -----------------------------------------------------------------------------

def _spec() -> ShapeSpec:
    b = DimSpec("b", 2, 64)
    return ShapeSpec(bindings=(DimBinding(x0, b), DimBinding(y0, 2 * b + 1), DimBinding(x1, 3)),
                     equalities=((x0, z0),),
                     relations=(sympy.Ne(sympy.Mod(b.symbol, 4), 0),))


def test_range_facts_and_ranges() -> None:
    spec = _spec()
    b = int_symbol("b")
    assert spec.range_facts() == (sympy.Ge(b, 2), sympy.Le(b, 64))
    assert spec.dims() == (DimSpec("b", 2, 64),)
    assert spec.ranges() == {x0: (2, 64), z0: (2, 64), y0: (5, 129), x1: (3, 3)}
    assert spec.expr_of(y0) == 2 * b + 1 and spec.expr_of(x1) == 3
    assert spec.expr_of(z0) == z0.symbol
    assert sympy.Eq(b, z0.symbol) in spec.facts()


def test_validate_accepts_good_examples() -> None:
    _spec().validate({x0: 5, y0: 11, x1: 3, z0: 5})
    _spec().validate({x0: 5})  # missing sizes are not checked


@pytest.mark.parametrize(("sizes", "fragment"), [
    ({x0: 1}, "x.size(0) = 1 is outside the range [2, 64] of dim 'b'"),
    ({x0: 65}, "x.size(0) = 65 is outside the range [2, 64] of dim 'b'"),
    ({y0: 4}, "y.size(0) = 4 is outside the range [5, 129] of dim '2 * b + 1'"),
    ({x0: 5, y0: 12}, "y.size(0) = 12 but dim '2 * b + 1' requires 2 * b + 1 = 11 given "
                      "x.size(0) = 5"),
    ({x1: 4}, "x.size(1) = 4 but it is declared static with size 3"),
    ({x0: 5, z0: 6}, "x.size(0) and z.size(0) are declared equal but the example sizes are "
                     "5 and 6"),
    ({x0: 8}, "relation x.size(0) % 4 != 0 is violated by the example sizes (x.size(0) = 8)"),
    ({x0: -1}, "x.size(0): example size must be an int >= 0"),
])
def test_validate_errors_name_the_input(sizes: dict, fragment: str) -> None:
    with pytest.raises(SpecError) as info:
        _spec().validate(sizes)
    assert fragment in str(info.value)


def test_contradictory_equalities() -> None:
    spec = ShapeSpec(bindings=(DimBinding(x0, DimSpec("a", 10, 20)),
                               DimBinding(y0, DimSpec("b", 1, 5))),
                     equalities=((x0, y0),))
    with pytest.raises(SpecError, match=r"contradictory constraints: x.size\(0\) in \[10, 20\]; "
                                        r"y.size\(0\) in \[1, 5\]"):
        spec.validate({})
    with pytest.raises(SpecError, match="min 10 > max 5"):
        spec.ranges()


def test_shapespec_construction_errors() -> None:
    with pytest.raises(SpecError, match="x.size\\(0\\) is bound twice"):
        ShapeSpec(bindings=(DimBinding(x0, 2), DimBinding(x0, 3)))
    with pytest.raises(SpecError, match="dim 'b' declared twice"):
        ShapeSpec(bindings=(DimBinding(x0, DimSpec("b", 1, 4)), DimBinding(y0, DimSpec("b", 1, 5))))
    with pytest.raises(SpecError, match="not a relation"):
        ShapeSpec(relations=(int_symbol("b") + 1,))
    with pytest.raises(SpecError, match="pair of InputDims"):
        ShapeSpec(equalities=((x0, "y"),))  # type: ignore[arg-type]
    assert ShapeSpec(bindings=[DimBinding(x0, 2)]).bindings == (DimBinding(x0, 2),)  # type: ignore[arg-type]


def test_shared_dim_must_agree_across_inputs() -> None:
    b = DimSpec("b", 1, 10)
    spec = ShapeSpec(bindings=(DimBinding(x0, b), DimBinding(y0, b)))
    with pytest.raises(SpecError, match="y.size\\(0\\) = 4 but dim 'b' requires b = 3 given "
                                        "x.size\\(0\\) = 3"):
        spec.validate({x0: 3, y0: 4})
    assert spec.source_names() == {b.symbol: "x.size(0)"}


# -- classic constraints -------------------------------------------------------------------

@pytest.mark.parametrize(("make", "lo", "hi", "text"), [
    (lambda d: d >= 3, 3, None, "dynamic_dim(x, 0) >= 3"),
    (lambda d: d > 3, 4, None, "dynamic_dim(x, 0) > 3"),
    (lambda d: d <= 5, None, 5, "dynamic_dim(x, 0) <= 5"),
    (lambda d: d < 5, None, 4, "dynamic_dim(x, 0) < 5"),
    (lambda d: 5 >= d, None, 5, "dynamic_dim(x, 0) <= 5"),  # Python reflects the comparison
    (lambda d: d == 7, 7, 7, "dynamic_dim(x, 0) == 7"),
])
def test_classic_bounds(make, lo, hi, text) -> None:  # type: ignore[no-untyped-def]
    c = make(dynamic_dim("x", 0))
    assert isinstance(c, ClassicConstraint)
    assert (c.input, c.lo, c.hi, c.text) == (x0, lo, hi, text)


def test_classic_equalities_keep_spelling() -> None:
    x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
    e = x == y
    assert isinstance(e, ClassicEquality)
    assert (e.lhs, e.rhs, e.coeff, e.offset, e.text) == (x0, y0, 1, 0, "dynamic_dim(x, 0) == dynamic_dim(y, 0)")
    e = x == 2 * y + 1
    assert (e.coeff, e.offset, e.text) == (2, 1, "dynamic_dim(x, 0) == 2 * dynamic_dim(y, 0) + 1")
    assert e.relation == sympy.Eq(x0.symbol, 2 * y0.symbol + 1)
    e = (y - 1) * 3 == x
    assert (e.lhs, e.rhs, e.coeff, e.offset) == (x0, y0, 3, -3)
    assert e.text == "3 * (dynamic_dim(y, 0) - 1) == dynamic_dim(x, 0)"
    assert ClassicDim(x0).text == "dynamic_dim(x, 0)"


def test_classic_records_are_not_booleans() -> None:
    x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
    for record in (x >= 2, x < 3, x == 4, x == y, x == 2 * y):
        with pytest.raises(TypeError, match="is a constraint record, not a bool"):
            bool(record)
    with pytest.raises(TypeError, match="chained comparisons"):
        2 <= x <= 8  # noqa: B015


def test_classic_misuse() -> None:
    x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
    with pytest.raises(TypeError, match="classic bounds must be ints"):
        x >= 2.5  # noqa: B015
    with pytest.raises(TypeError, match="'!=' is not a supported"):
        x != 3  # noqa: B015
    with pytest.raises(TypeError, match="only dynamic_dim"):
        2 * x == 2 * y  # noqa: B015
    with pytest.raises(TypeError, match="compare with an int"):
        x == "y"  # noqa: B015
    with pytest.raises(SpecError, match="related to itself"):
        x == x + 1  # noqa: B015
    with pytest.raises(SpecError, match="coefficient of a classic dim must be positive"):
        x * -1
    with pytest.raises(TypeError):
        hash(x)
    with pytest.raises(TypeError):
        x * 1.5  # type: ignore[operator]


def test_from_classic() -> None:
    x, y, z = dynamic_dim("x", 0), dynamic_dim("y", 0), dynamic_dim("z", 0)
    spec = ShapeSpec.from_classic([x >= 4, x <= 100, x == y, z == 2 * x + 1])
    assert spec.ranges()[x0] == (4, 100) and spec.ranges()[y0] == (4, 100)
    assert spec.ranges()[z0] == (CLASSIC_MIN, CLASSIC_MAX)
    assert spec.equalities == ((x0, y0),)
    assert spec.relations == (sympy.Eq(z0.symbol, 2 * x0.symbol + 1),)
    assert spec.binding(x0).dim.source == "dynamic_dim(x, 0) >= 4, dynamic_dim(x, 0) <= 100"
    spec.validate({x0: 5, y0: 5, z0: 11})
    with pytest.raises(SpecError, match="relation z.size\\(0\\) == 2 \\* x.size\\(0\\) \\+ 1"):
        spec.validate({x0: 5, y0: 5, z0: 12})
    with pytest.raises(SpecError, match="x.size\\(0\\) = 1 is outside the range \\[4, 100\\]"):
        spec.validate({x0: 1})


def test_from_classic_contradictions_quote_the_user() -> None:
    x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
    with pytest.raises(SpecError, match=r"x.size\(0\): dynamic_dim\(x, 0\) >= 10, "
                                        r"dynamic_dim\(x, 0\) < 5"):
        ShapeSpec.from_classic([x >= 10, x < 5])
    with pytest.raises(SpecError, match=r"dynamic_dim\(x, 0\) <= 1"):
        ShapeSpec.from_classic([x <= 1])  # below the classic default min of 2
    with pytest.raises(SpecError, match=r"\(dynamic_dim\(x, 0\) >= 10\).*\(dynamic_dim\(y, 0\) <= 5\)"):
        ShapeSpec.from_classic([x >= 10, y <= 5, x == y])
    with pytest.raises(SpecError, match="not a classic constraint record"):
        ShapeSpec.from_classic(["x >= 2"])  # type: ignore[list-item]


def test_shapes_has_no_torch_import() -> None:
    import subprocess
    import sys

    code = "import shapes, sys; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
