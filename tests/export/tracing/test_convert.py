"""torch sympy -> shapes conversion: equivalence on concrete integers, clean errors."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
import sympy

import shapes
from export import _torch_compat as tc
from export.tracing.convert import default_symbol, to_shapes
from export.errors import ExportError, UnsupportedGuardError

s0 = sympy.Symbol("s0", integer=True, positive=True)
s1 = sympy.Symbol("s1", integer=True, positive=True)
u0 = sympy.Symbol("u0", integer=True)

POS = range(1, 13)
ANY = range(-9, 10)

# (id, torch expression, domains of (s0, s1, u0))
CASES: list[tuple[str, Callable[[], sympy.Basic], tuple[range, range, range]]] = [
    ("floordiv", lambda: tc.FloorDiv(3 * s0 + 1, 2), (POS, POS, ANY)),
    ("floordiv-neg", lambda: tc.FloorDiv(u0 - 3, 4), (POS, POS, ANY)),
    ("floordiv-sym-divisor", lambda: tc.FloorDiv(6 * s0, tc.FloorDiv(3 * s0, 2)), (POS, POS, ANY)),
    ("cleandiv", lambda: tc.CleanDiv(4 * s0, 2), (POS, POS, ANY)),
    ("modular-indexing", lambda: tc.ModularIndexing(s0 * s1, 2, 3), (POS, POS, ANY)),
    ("python-mod", lambda: tc.PythonMod(u0, 4), (POS, POS, ANY)),
    ("python-mod-neg-divisor", lambda: tc.PythonMod(s0, -3), (POS, POS, ANY)),
    ("torch-mod", lambda: sympy.Eq(tc.Mod(6 * s0, 4), 0), (POS, POS, ANY)),
    ("sympy-mod", lambda: sympy.Ne(sympy.Mod(s0 + u0, 5), 0), (POS, POS, ANY)),
    ("floor-truediv", lambda: tc.FloorToInt(tc.IntTrueDiv(u0, 3)), (POS, POS, ANY)),
    ("ceil-truediv", lambda: tc.CeilToInt(tc.IntTrueDiv(u0, 3)), (POS, POS, ANY)),
    ("trunc-int", lambda: tc.TruncToInt(s0 * s1), (POS, POS, ANY)),
    ("max-min", lambda: tc.Max(s0, tc.Min(s1, u0 + 2)), (POS, POS, ANY)),
    ("sympy-max", lambda: sympy.Max(s0 - s1, 1), (POS, POS, ANY)),
    ("pow", lambda: s0**2 - u0**3, (POS, POS, ANY)),
    ("pow-by-natural", lambda: tc.PowByNatural(s1, 3), (POS, POS, ANY)),
    ("shifts", lambda: tc.LShift(s0, 2) + tc.RShift(u0, 1), (POS, POS, ANY)),
    ("abs", lambda: sympy.Abs(u0 - 2), (POS, POS, ANY)),
    ("identity", lambda: tc.Identity(s0 + 1), (POS, POS, ANY)),
    ("floor", lambda: sympy.floor(s0 / 3), (POS, POS, ANY)),
    ("ceiling", lambda: sympy.ceiling((u0 + 1) / 4), (POS, POS, ANY)),
    ("eq", lambda: sympy.Eq(6 * s0, 4 * tc.FloorDiv(3 * s0, 2)), (POS, POS, ANY)),
    ("ne", lambda: sympy.Ne(tc.PythonMod(s0, tc.FloorDiv(3 * s0, 2)), 0), (POS, POS, ANY)),
    ("lt-le-gt-ge", lambda: sympy.And(s0 < s1, u0 <= 3, s0 * s1 > 4, u0 >= -2), (POS, POS, ANY)),
    ("or-not", lambda: sympy.Or(sympy.Not(sympy.Eq(s0, 2)), sympy.Eq(u0, 1)), (POS, POS, ANY)),
    ("mixed", lambda: sympy.Gt(tc.FloorDiv(s0 * s1, 4) + tc.ModularIndexing(s0, 1, 4), u0), (POS, POS, ANY)),
]


def _torch_value(expr: sympy.Basic, env: dict[sympy.Symbol, int]) -> int | bool:
    v = expr.xreplace({k: sympy.Integer(x) for k, x in env.items()})
    if v in (sympy.true, sympy.false):
        return bool(v)
    v = v.replace(lambda e: isinstance(e, tc.Identity), lambda e: e.args[0])
    assert v.is_Integer, f"torch expression {expr} did not evaluate at {env}: {v}"
    return int(v)


@pytest.mark.parametrize("make,domains", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_conversion_is_equivalent(make: Callable[[], sympy.Basic],
                                  domains: tuple[range, range, range]) -> None:
    expr = make()
    conv = to_shapes(expr)
    shapes.check_supported(conv)
    names = {s.name: s for s in shapes.symbols_of(conv)}
    for vals in itertools.product(*domains):
        env = dict(zip((s0, s1, u0), vals))
        if not expr.free_symbols <= env.keys():
            continue
        senv = {names[k.name]: v for k, v in env.items() if k.name in names}
        try:
            want = _torch_value(expr, env)
        except ZeroDivisionError:
            continue
        assert shapes.evaluate(conv, senv) == want, (expr, conv, env)


def test_constants_and_booleans() -> None:
    assert to_shapes(sympy.true) is sympy.true
    assert to_shapes(sympy.false) is sympy.false
    assert to_shapes(sympy.Integer(7)) == 7
    assert to_shapes(sympy.Rational(1, 2) * s0) == sympy.Rational(1, 2) * default_symbol(s0)


def test_symbols_via_mapping_and_creator() -> None:
    a, b = shapes.int_symbol("a"), shapes.int_symbol("b")
    assert to_shapes(tc.FloorDiv(s0, 2) + s1, {s0: a, s1: b}) == shapes.FloorDiv(a, 2) + b
    calls: list[sympy.Symbol] = []

    def create(sym: sympy.Symbol) -> sympy.Symbol:
        calls.append(sym)
        return shapes.int_symbol("x_" + sym.name)

    out = to_shapes(sympy.Eq(s0 * s0 + s0, s1), create)
    assert {str(s) for s in out.free_symbols} == {"x_s0", "x_s1"}
    assert sorted(calls, key=str) == [s0, s1], "a creator is called once per symbol"
    # symbols map to expressions too (e.g. a derived dim)
    assert to_shapes(s1 - 1, {s1: 2 * a + 1}) == 2 * a


def test_missing_symbol_in_mapping() -> None:
    with pytest.raises(UnsupportedGuardError, match="s1"):
        to_shapes(s0 + s1, {s0: shapes.int_symbol("a")})


def test_float_symbol_is_unsupported() -> None:
    with pytest.raises(UnsupportedGuardError, match="zf0"):
        to_shapes(sympy.Symbol("zf0", real=True) > 1)


UNSUPPORTED = [
    ("where", lambda: sympy.Eq(tc.Where(s0 > 2, s0, 1), 3), "Where"),
    ("piecewise", lambda: sympy.Eq(sympy.Piecewise((s0, s0 > 2), (1, True)), 3), "Piecewise"),
    ("int-truediv", lambda: tc.IntTrueDiv(s0, 2) > 1, "IntTrueDiv"),
    ("trunc-truediv", lambda: sympy.Eq(tc.TruncToInt(tc.IntTrueDiv(u0, 2)), 1), "TruncToInt"),
    ("float", lambda: 1.5 * s0 > 2, "1.5"),
    ("int-oo", lambda: sympy.Lt(s0 + u0, tc.int_oo, evaluate=False), "int_oo"),
    ("symbolic-exponent", lambda: tc.PowByNatural(s0, s1) > 3, "PowByNatural"),
    ("non-overlapping", lambda: sympy.Eq(tc.IsNonOverlappingAndDenseIndicator(s0, 1, 1, s0), 1),
     "IsNonOverlappingAndDenseIndicator"),
    ("sin", lambda: sympy.sin(s0) > 0, "sin"),
]


@pytest.mark.parametrize("make,name", [c[1:] for c in UNSUPPORTED], ids=[c[0] for c in UNSUPPORTED])
def test_unsupported_names_the_expression(make: Callable[[], sympy.Basic], name: str) -> None:
    expr = make()
    with pytest.raises(UnsupportedGuardError) as info:
        to_shapes(expr)
    err = info.value
    assert isinstance(err, ExportError)
    assert name in str(err)
    assert err.expr is not None
    assert err.__cause__ is None, "no chained deep traceback"
