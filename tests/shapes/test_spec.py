"""Tests for shapes.spec (the normalized spec) and shapes.classic (the classic normaliser and the
classic records)."""

from __future__ import annotations

import itertools

import pytest
import sympy

from shapes import SpecError, int_symbol
from shapes.classic import ClassicConstraint, ClassicDim, ClassicEquality, dynamic_dim, from_classic
from shapes.ranges import CLASSIC_MAX, CLASSIC_MIN
from shapes.spec import DimDecl, InputDim, RootDim, Spec, classic_name

x0, x1, y0, z0 = InputDim("x", 0), InputDim("x", 1), InputDim("y", 0), InputDim("z", 0)


# -- InputDim ------------------------------------------------------------------------------

def test_input_dim() -> None:
    assert str(x0) == "x.size(0)" and hash(x0) == hash(InputDim("x", 0))
    assert InputDim("args[0]", 2).symbol == int_symbol("args_0__2")
    for bad in [("", 0), ("x", -1), ("x", True), (3, 0)]:
        with pytest.raises(SpecError):
            InputDim(*bad)  # type: ignore[arg-type]


# -- the normalized spec --------------------------------------------------------------------

def _modern() -> Spec:
    b, w = int_symbol("b"), int_symbol("w")
    return Spec("modern", (RootDim("b", 2, 64, "Dim('b', min=2, max=64)"), RootDim("w", 0, None, "Dim('w')")),
                (DimDecl(x0, "dynamic", b, "b"), DimDecl(y0, "dynamic", 2 * b + 1, "2*b + 1"),
                 DimDecl(z0, "dynamic", w, "w"), DimDecl(x1, "auto", None, "Dim.AUTO")))


def test_spec_lookups_and_groups() -> None:
    spec = _modern()
    assert spec.root("w").hi is None and spec.decl(y0).text == "2*b + 1" and spec.decl(InputDim("q", 0)) is None
    groups = spec.groups()
    assert [(r.name, p.dim if p else None, [d.dim for d in rest]) for r, p, rest in groups] == [
        ("b", x0, [y0]), ("w", z0, [])]


def test_spec_root_values() -> None:
    sizes = {x0: 5, y0: 11, z0: 7, x1: 3}
    assert _modern().root_values(sizes.__getitem__) == {"b": 5, "w": 7}
    assert _modern().root_values({**sizes, x0: 4, y0: 8}.__getitem__) == {"b": 4, "w": 7}  # 8 != 2*b+1


@pytest.mark.parametrize(("sizes", "message"), [
    ({x0: 5, y0: 11, z0: 0, x1: 1}, None),
    ({x0: 5, y0: 10, z0: 0, x1: 1}, r"y.size\(0\) = 10 cannot be 2\*b \+ 1: no integer b gives 10"),
    ({x0: 1, y0: 3, z0: 0, x1: 1}, r"x.size\(0\) = 1 is outside the declared range of Dim\('b', min=2, max=64\): "
                                   r"b = 1 is not in \[2, 64\]"),
    ({x0: 5, y0: 131, z0: 0, x1: 1}, r"b = 65 \(2\*b \+ 1 = 131\) is not in \[2, 64\]"),
    ({x0: 5, y0: 13, z0: 0, x1: 1}, r"y.size\(0\) = 13 and x.size\(0\) = 5 are declared as 2\*b \+ 1 and b, "
                                    r"which disagree on b \(6 vs 5\)"),
])
def test_spec_validate(sizes, message) -> None:  # type: ignore[no-untyped-def]
    if message is None:
        _modern().validate(sizes.__getitem__)
        return
    with pytest.raises(SpecError, match=message):
        _modern().validate(sizes.__getitem__)


def test_spec_validate_reads_the_classic_default_maximum_as_inf() -> None:
    """The range in the message is the one every message shows (shapes.ranges.range_text): the
    classic default maximum is ``inf``, not ``9223372036854775806`` (issue 34: the copy here
    printed it)."""
    spec = from_classic([dynamic_dim("x", 0) >= 2])
    with pytest.raises(SpecError, match=r"x_0 = 1 is not in \[2, inf\]; use an example") as info:
        spec.validate({x0: 1}.__getitem__)
    assert str(CLASSIC_MAX) not in str(info.value)


# -- the classic normaliser -----------------------------------------------------------------

def test_from_classic() -> None:
    x, y, z = dynamic_dim("x", 0), dynamic_dim("y", 0), dynamic_dim("z", 0)
    spec = from_classic([x >= 4, x <= 100, x == y, z == 2 * x + 1])
    assert spec.api == "classic"
    assert [(r.name, r.lo, r.hi, r.text) for r in spec.roots] == [
        ("y_0", 4, 100, "dynamic_dim(x, 0) >= 4, dynamic_dim(x, 0) <= 100")]
    y_0 = int_symbol("y_0")
    assert [(d.dim, d.mode, d.expr, d.text) for d in spec.decls] == [
        (x0, "dynamic", y_0, "dynamic_dim(x, 0)"), (y0, "dynamic", y_0, "dynamic_dim(y, 0)"),
        (z0, "dynamic", 2 * y_0 + 1, "dynamic_dim(z, 0)")]
    spec.validate({x0: 5, y0: 5, z0: 11}.__getitem__)
    with pytest.raises(SpecError, match=r"z.size\(0\) = 12 cannot be dynamic_dim\(z, 0\)"):
        spec.validate({x0: 5, y0: 5, z0: 12}.__getitem__)
    with pytest.raises(SpecError, match=r"x.size\(0\) = 1 is outside the declared range"):
        spec.validate({x0: 1, y0: 1, z0: 3}.__getitem__)


def test_from_classic_default_range_and_bounds_through_links() -> None:
    x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
    assert [(r.lo, r.hi) for r in from_classic([x >= CLASSIC_MIN]).roots] == [(CLASSIC_MIN, CLASSIC_MAX)]
    spec = from_classic([y == 4 * x + 1, y <= 41, y >= 6])  # bounds on y narrow x: 4x+1 in [6, 41]
    assert [(r.name, r.lo, r.hi) for r in spec.roots] == [("x_0", 2, 10)]


def test_from_classic_contradictions_quote_the_user() -> None:
    x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
    with pytest.raises(SpecError, match=r"x.size\(0\): dynamic_dim\(x, 0\) >= 10, "
                                        r"dynamic_dim\(x, 0\) < 5 leave no size"):
        from_classic([x >= 10, x < 5])
    with pytest.raises(SpecError, match=r"dynamic_dim\(x, 0\) <= 1"):
        from_classic([x <= 1])  # below the classic default min of 2
    with pytest.raises(SpecError, match=r"dynamic_dim\(x, 0\) >= 10, dynamic_dim\(y, 0\) <= 5 leave no size"):
        from_classic([x >= 10, y <= 5, x == y])
    with pytest.raises(SpecError, match="conflicts with earlier equalities"):
        from_classic([x == y, x == y + 1])
    with pytest.raises(SpecError, match="relations must define each dim from one other dim"):
        from_classic([x == 2 * y, x == dynamic_dim("z", 0)])
    with pytest.raises(SpecError, match="not a classic constraint record"):
        from_classic(["x >= 2"])  # type: ignore[list-item]


def _admits(records: list, sizes: dict[InputDim, int]) -> bool:  # type: ignore[type-arg]
    """The classic records read literally (the oracle)."""
    for r in records:
        if isinstance(r, ClassicConstraint):
            v = sizes[r.input]
            if (r.lo is not None and v < r.lo) or (r.hi is not None and v > r.hi):
                return False
        elif sizes[r.lhs] != r.coeff * sizes[r.rhs] + r.offset:
            return False
    return all(CLASSIC_MIN <= v for v in sizes.values())


def _spec_admits(spec: Spec, sizes: dict[InputDim, int]) -> bool:
    try:
        spec.validate(sizes.__getitem__)
    except SpecError:
        return False
    return True


@pytest.mark.parametrize("seed", range(6))
def test_from_classic_against_brute_force(seed: int) -> None:
    """The normalized spec admits exactly the sizes the records admit (small domain). The
    classic default range applies to a class's root, here x (derived dims are >= it)."""
    import random

    rng = random.Random(seed)
    dx, dy, dz = dynamic_dim("x", 0), dynamic_dim("y", 0), dynamic_dim("z", 0)
    for _ in range(25):
        records: list = [dy == rng.randint(1, 3) * dx + rng.randint(0, 2)]  # type: ignore[type-arg]
        if rng.random() < 0.5:
            records.append(dz == dy + rng.randint(0, 2))
        else:
            records.append(dz == rng.randint(1, 2) * dx)
        for d in (dx, dy, dz):
            if rng.random() < 0.6:
                records.append(d >= rng.randint(0, 8))
            if rng.random() < 0.6:
                records.append(d <= rng.randint(2, 14))
        try:
            spec = from_classic(records)
        except SpecError:
            spec = None
        for vx, vy, vz in itertools.product(range(16), repeat=3):
            sizes = {x0: vx, y0: vy, z0: vz}
            want = _admits(records, sizes)
            got = spec is not None and _spec_admits(spec, sizes)
            assert got == want, (records, sizes, spec)


def test_classic_name() -> None:
    assert classic_name(x0) == "x_0" and classic_name(InputDim("d['a']", 1)) == "d_a__1"


# -- classic records -----------------------------------------------------------------------

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


def test_shapes_has_no_torch_import() -> None:
    import subprocess
    import sys

    code = "import shapes, sys; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
