"""Tests for shapes.parse: the restricted parser."""

from __future__ import annotations

import pytest
import sympy

from shapes import FloorDiv, ParseError, int_symbol
from shapes.errors import BudgetError
from shapes.parse import MAX_TEXT_LENGTH, parse_expr

a, b, c = int_symbol("a"), int_symbol("b"), int_symbol("c")
s0, s1, s77 = int_symbol("s0"), int_symbol("s1"), int_symbol("s77")
SYMS = {"a": a, "b": b, "c": c, "s0": s0, "s1": s1, "s77": s77}

GOOD = [
    ("a", a),
    ("42", sympy.Integer(42)),
    ("-a", -a),
    ("+a", a),
    ("2*b + 1", 2 * b + 1),
    ("2 * b + 1", 2 * b + 1),
    ("b - 1", b - 1),
    ("a - b - c", a - b - c),
    ("a ** 2", a**2),
    ("2 ** 10", sympy.Integer(1024)),
    ("a // 2", FloorDiv(a, 2)),
    ("(s0 // 2)", FloorDiv(s0, 2)),
    ("a // b", FloorDiv(a, b)),
    ("a % 4", sympy.Mod(a, 4)),
    ("a / 2", a / 2),
    ("1_000 + 0x10", sympy.Integer(1016)),
    ("min(a, b)", sympy.Min(a, b)),
    ("max(a, b, 3)", sympy.Max(a, b, 3)),
    ("Min(a, b)", sympy.Min(a, b)),
    ("Max(a, 2)", sympy.Max(a, 2)),
    ("Mod(s0, 4)", sympy.Mod(s0, 4)),
    ("FloorDiv(s0, 2)", FloorDiv(s0, 2)),
    ("floor(a / 4)", FloorDiv(a, 4)),
    ("floor(a / b)", FloorDiv(a, b)),
    ("floor((a + 1) / 2)", FloorDiv(a + 1, 2)),
    ("floor(a)", a),
    ("Eq(s0, 2*s1 + 1)", sympy.Eq(s0, 2 * s1 + 1)),
    ("Eq(s77, 1)", sympy.Eq(s77, 1)),
    ("Ne(Mod(s0, 4), 0)", sympy.Ne(sympy.Mod(s0, 4), 0)),
    ("Lt(a, b)", sympy.Lt(a, b)),
    ("Le(a, b)", sympy.Le(a, b)),
    ("Gt(a, b)", sympy.Gt(a, b)),
    ("Ge(a, b)", sympy.Ge(a, b)),
    ("s0 >= 2", sympy.Ge(s0, 2)),
    ("a == b", sympy.Eq(a, b)),
    ("a != b", sympy.Ne(a, b)),
    ("a < b", sympy.Lt(a, b)),
    ("a <= b", sympy.Le(a, b)),
    ("a > b", sympy.Gt(a, b)),
    ("2 <= a <= 8", sympy.And(sympy.Le(2, a), sympy.Le(a, 8))),
    ("a < b < c", sympy.And(a < b, b < c)),
    ("a >= 2 and b < 3", sympy.And(a >= 2, b < 3)),
    ("a >= 2 or not b < 3", sympy.Or(a >= 2, b >= 3)),
    ("(a >= 2) & (b < 3)", sympy.And(a >= 2, b < 3)),
    ("(a >= 2) | (b < 3)", sympy.Or(a >= 2, b < 3)),
    ("~((a >= 2) & (b < 3))", sympy.Not(sympy.And(a >= 2, b < 3))),
    ("And(a > 1, Or(b > 1, Not(c > 1)))", sympy.And(a > 1, sympy.Or(b > 1, c <= 1))),
    ("True", sympy.true),
    ("False", sympy.false),
    ("a == a", sympy.true),
    ("Eq(a > 1, True)", sympy.Eq(a > 1, sympy.true)),
    ("2*(Mod(a, 2))", 2 * sympy.Mod(a, 2)),
    ("-FloorDiv(a, 2)", -FloorDiv(a, 2)),
    ("  a + 1  ", a + 1),
    ("(a +\n 1)", a + 1),
    (" + ".join(["a"] * 1000), 1000 * a),
]


@pytest.mark.parametrize(("text", "expected"), GOOD, ids=[t[:40] for t, _ in GOOD])
def test_good_inputs(text: str, expected: sympy.Basic) -> None:
    assert parse_expr(text, SYMS) == expected


BAD = [
    ("__import__('os')", "unsupported call '__import__'"),
    ("__import__('os').system('ls')", "unsupported call \"__import__('os').system\""),
    ("2*a + a.foo", "unsupported syntax 'a.foo' at column 7 in \"2*a + a.foo\""),
    ("a.size(0)", "unsupported call 'a.size'"),
    ("lambda: 1", "unsupported syntax 'lambda: 1'"),
    ("'a'", "string literal"),
    ("b'a'", "bytes literal"),
    ("1.5", "float literal '1.5'"),
    ("1j", "complex literal"),
    ("None", "literal"),
    ("2 ** 10 ** 10", "exponent '10 ** 10' must be an integer constant in [0, 64]"),
    ("a ** 100", "exponent '100' must be an integer constant in [0, 64]"),
    ("4 ** 33", "exceeds 2**64"),
    ("2 ** 65", "must be an integer constant in [0, 64]"),
    ("a ** -1", "exponent '-1' must be an integer constant"),
    ("a ** b", "exponent 'b' must be an integer constant"),
    ("2 ** 64 * 2 ** 64 * 2 ** 64 * 2 ** 64", "exceeds 2**64"),
    ("3 ** 40 * 3 ** 40", "exceeds 2**64"),
    ("1" + "0" * 70, "integer literal larger than 2**64"),
    ("9" * 5000, "Exceeds the limit"),
    ("foo + 1", "unknown name 'foo' at column 1"),
    ("", "empty expression"),
    ("   ", "empty expression"),
    ("a +", "unexpected end of text"),
    ("a + )", "parsed 'a + ', remains ')'"),
    ("a b", "at column"),
    ("x if a else b", "unsupported syntax"),
    ("[a]", "unsupported syntax '[a]'"),
    ("a[0]", "unsupported syntax 'a[0]'"),
    ("{a}", "unsupported syntax"),
    ("f'{a}'", "unsupported syntax"),
    ("(a := 1)", "unsupported syntax"),
    ("a, b", "unsupported syntax 'a, b'"),
    ("a in b", "unsupported comparison"),
    ("a is b", "unsupported comparison"),
    ("a ^ b", "unsupported operator"),
    ("a << 1", "unsupported operator"),
    ("a & 1", "bitwise '&' on integers"),
    ("a | b", "bitwise '|' on integers"),
    ("~a", "operand of '~' 'a' is an integer expression"),
    ("not a", "operand of 'not' 'a' is an integer expression"),
    ("a and b", "operand of 'and' 'a' is an integer expression"),
    ("(a > 1) + 1", "is a condition, expected an integer expression"),
    ("(a > 1) < 2", "cannot compare condition 'a > 1'"),
    ("Lt(a > 1, True)", "cannot compare condition"),
    ("a / b", "true division by a non-constant"),
    ("a // 0", "division by zero"),
    ("a % 0", "division by zero"),
    ("a / 0", "division by zero"),
    ("Mod(a, 0)", "division by zero"),
    ("Mod(a)", "Mod() takes 2 arguments, got 1"),
    ("Not(a > 1, b > 1)", "Not() takes 1 argument, got 2"),
    ("min()", "min() needs at least one argument"),
    ("Eq(a, b, evaluate=False)", "plain positional arguments"),
    ("max(*a)", "plain positional arguments"),
    ("Min", "'Min' is a function"),
    ("sympify('a')", "unsupported call 'sympify'"),
    ("open('f')", "unsupported call 'open'"),
    ("-" * 150 + "a", "nested deeper than 100"),
    ("(" * 300 + "a" + ")" * 300, "too many nested parentheses"),
    (" + ".join(["a"] * 6000), "too deeply nested or too long"),
    ("a\x00", "null bytes"),
    ("a\n+ b", "line 2"),
]


@pytest.mark.parametrize(("text", "fragment"), BAD, ids=[t[:40] for t, _ in BAD])
def test_bad_inputs(text: str, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_expr(text, SYMS)
    assert fragment in str(info.value)


def test_error_points_at_the_column() -> None:
    with pytest.raises(ParseError) as info:
        parse_expr("2*a + a.foo", SYMS)
    lines = str(info.value).split("\n")
    assert lines[1].strip() == "2*a + a.foo"
    assert lines[2].index("^") - lines[1].index("2") == 6
    assert lines[2].count("^") == len("a.foo")


def test_column_counts_characters_not_bytes() -> None:
    with pytest.raises(ParseError, match="unsupported syntax 'a.foo' at column 5 "):
        parse_expr("é + a.foo", SYMS, allow_new_symbols=True)


def test_unknown_name_lists_declared_symbols() -> None:
    with pytest.raises(ParseError, match=r"unknown name 'm' .*\(declared: a, b\)"):
        parse_expr("a + m", {"a": a, "b": b})
    with pytest.raises(ParseError, match="no symbols declared"):
        parse_expr("a + m")


def test_allow_new_symbols_creates_integer_symbols() -> None:
    e = parse_expr("n + 1", allow_new_symbols=True)
    (n,) = e.free_symbols
    assert n.is_integer and n == int_symbol("n")
    # declared symbols win over fresh ones
    assert parse_expr("a + n", {"a": a}, allow_new_symbols=True) == a + int_symbol("n")


def test_symbols_mapping_is_used_verbatim() -> None:
    batch = int_symbol("batch")
    assert parse_expr("x + 1", {"x": batch}) == batch + 1


def test_a_symbol_may_shadow_a_function_name_when_not_called() -> None:
    m = int_symbol("min")
    assert parse_expr("min + 1", {"min": m}) == m + 1
    assert parse_expr("min(a, 1)", {"min": m, "a": a}) == sympy.Min(a, 1)


def test_limits() -> None:
    with pytest.raises(ParseError, match="longer than the limit"):
        parse_expr("a" * (MAX_TEXT_LENGTH + 1), allow_new_symbols=True)
    with pytest.raises(ParseError, match="expected text"):
        parse_expr(123)  # type: ignore[arg-type]
    assert parse_expr(str(2**64)) == sympy.Integer(2**64)
    assert parse_expr("2 ** 64") == sympy.Integer(2**64)
    with pytest.raises(BudgetError, match="exceeds"):
        parse_expr("2 ** 64 * 2")
    with pytest.raises(BudgetError, match="larger than 2"):
        parse_expr(str(2**64 + 1))
    assert parse_expr("-" * 90 + "a", SYMS) == a


def test_never_evaluates(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    def boom(*_args: object, **_kw: object) -> None:
        raise AssertionError("eval called")

    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(sympy, "sympify", boom)
    assert parse_expr("Eq(a, 2*b + 1)", SYMS) == sympy.Eq(a, 2 * b + 1)


def test_parse_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_expr("a +", SYMS)


# -- canonical names, lone surrogates, budgets (issue 11) ------------------------------------
def test_names_are_read_in_nfkc_form_in_text_and_table() -> None:
    n = int_symbol("n")
    assert n == int_symbol("ｎ")  # one canonical spelling for a symbol name
    assert parse_expr("ｎ + 1", {"n": n}) == n + 1
    assert parse_expr("n + 1", {"ｎ": n}) == n + 1
    with pytest.raises(ParseError, match="one identifier 'n' in NFKC form"):  # found on a miss
        parse_expr("q", {"ｎ": n, "n": int_symbol("m")})


@pytest.mark.parametrize("text", ["n >= \ud800", "\udc80", "é + \udfff * 2"])
def test_lone_surrogates_are_parse_errors_with_a_column(text: str) -> None:
    with pytest.raises(ParseError, match="lone surrogate .* at column") as info:
        parse_expr(text, allow_new_symbols=True)
    str(info.value).encode("utf-8")  # the message itself is printable


BUDGET_BAD = [
    ("(a ** 64) ** 64 >= 1", "total degree 4096 exceeds the limit of 8"),
    ("((a ** 64) ** 64) ** 64 >= 1", "total degree"),
    ("a ** 9", "total degree 9"),
    ("(a * b * c) ** 3", "total degree 9"),
    ("Mod(a ** 9 * b ** 9, 4) == 0", "total degree 18"),
    ("max(a ** 20, 1)", "total degree 20"),
    ("(a + b + c + s0 + s1 + s77 + 1) ** 8 >= 1", "terms, more than the limit of 2000"),
    ("(a + b + c + s0 + s1 + 1) ** 4 * (a + b + c + s0 + 1) ** 4 >= 1", "terms, more than the limit"),
]


@pytest.mark.parametrize(("text", "fragment"), BUDGET_BAD, ids=[t[:40] for t, _ in BUDGET_BAD])
def test_budget_refuses_expensive_expressions(text: str, fragment: str) -> None:
    with pytest.raises(BudgetError, match=fragment.replace("(", r"\(").replace("*", r"\*")):
        parse_expr(text, SYMS)


def test_budget_admits_shapes_arithmetic() -> None:
    assert parse_expr("a ** 8 >= 1", SYMS) == sympy.Ge(a**8, 1)
    assert parse_expr("a * b * c * s0 * s1 * s77 <= 2 ** 63", SYMS) is not None
    assert parse_expr("(a + b + 1) ** 4 >= 0", SYMS) is not None
