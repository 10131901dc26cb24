"""shapes.contract: a program's shape contract, checked without torch (issue 33).

Tables: calls against one contract (ranks, static sizes, ranges, equalities, derived dims, ints,
missing inputs, numpy-like values), the words of each refusal, malformed documents naming the
field. Oracles: the JSON form round-trips and conforms to docs/contract.schema.json; a check
refuses exactly the sizes at which some condition is false (brute force over a box).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import sympy

from json_schema import errors as schema_errors
from shapes import int_symbol
from shapes.contract import Condition, Contract, ContractDim, ContractInput
from shapes.errors import ContractError, RefusedInputError, ShapesError
from shapes.expr import FloorDiv, evaluate

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "contract.schema.json").read_text())

b, s, m, n = (int_symbol(x) for x in ("x_size0", "x_size1", "mask_size1", "n"))
CONTRACT = Contract(
    params=("x", "extra"),
    inputs=(ContractInput("x", ("x",), "tensor", ("x_size0", "x_size1", 16), "float32"),
            ContractInput("extra['mask']", ("extra", "mask"), "tensor", ("x_size0", "mask_size1"), "float32"),
            ContractInput("extra['n']", ("extra", "n"), "int", ("n",)),
            ContractInput("extra['flag']", ("extra", "flag"), "other")),
    dims=(ContractDim("x_size0", "x.size(0)", "batch", 1, 64),
          ContractDim("x_size1", "x.size(1)", "4 * _s", 4, 128),
          ContractDim("mask_size1", "extra['mask'].size(1)", None, 1, None),
          ContractDim("n", "extra['n']", None, None, 8)),
    conditions=(
        Condition(sympy.Le(b, 64), "x.size(0) must be <= 64", "range"),
        Condition(sympy.Le(s, 128), "x.size(1) must be <= 128", "range", note="x.size(1) = 4 * _s",
                  origin="m.py:3", code="x + self.pos[:s]"),
        Condition(sympy.Le(n, 8), "extra['n'] must be <= 8", "range"),
        Condition(sympy.Eq(sympy.Mod(s, 4), 0), "x.size(1) must be divisible by 4", "derived", note="x.size(1) = 4 * _s"),
        Condition(sympy.Eq(m, s), "extra['mask'].size(1) must equal x.size(1)", "equal"),
        Condition(sympy.Ge(FloorDiv(s, 4), n), "the model requires x.size(1) // 4 >= extra['n']", "relation",
                  origin="m.py:5", code="h[:, :n]"),
    ),
    runtime=("v must be >= 1 (v comes from v = x.max().item() at m.py:7)",),
)


class Shaped:
    """Anything with a ``shape`` (a numpy array, an onnxruntime value)."""

    def __init__(self, *shape: int) -> None:
        self.shape = shape


def _call(x: Sequence[int], mask: Sequence[int], n: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (Shaped(*x),), {"extra": {"mask": Shaped(*mask), "n": n, "flag": True}}


REFUSED = [
    ("too large", _call((65, 8, 16), (65, 8), 2), ["x.size(0) must be <= 64 (got x.size(0) = 65)"]),
    ("not divisible, with its line", _call((2, 6, 16), (2, 6), 1),
     ["x.size(1) must be divisible by 4 (x.size(1) = 4 * _s; got x.size(1) = 6)"]),
    ("unequal", _call((2, 8, 16), (2, 12), 1),
     ["extra['mask'].size(1) must equal x.size(1) (got extra['mask'].size(1) = 12, x.size(1) = 8)"]),
    ("a relation", _call((2, 8, 16), (2, 8), 3),
     ["the model requires x.size(1) // 4 >= extra['n'] (got x.size(1) = 8, extra['n'] = 3), needed at m.py:5: h[:, :n]"]),
    ("static size", _call((2, 8, 15), (2, 8), 1), ["x.size(2) must be 16 (static in the program; got x.size(2) = 15)"]),
    ("rank", _call((2, 8), (2, 8), 1), ["x must have 3 dims (got 2: (2, 8))"]),
    ("int input not an int", _call((2, 8, 16), (2, 8), 1.5), ["extra['n'] must be an int (got float)"]),
    ("missing input", ((Shaped(2, 8, 16),), {"extra": {"n": 1}}), ["extra['mask'] is missing"]),
    ("several at once", _call((65, 6, 16), (65, 6), 9), ["x.size(0) must be <= 64 (got x.size(0) = 65)",
                                                         "extra['n'] must be <= 8 (got extra['n'] = 9)",
                                                         "x.size(1) must be divisible by 4"]),
]


@pytest.mark.parametrize(("call", "reasons"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_a_refused_call_says_why(call: tuple[tuple[Any, ...], dict[str, Any]], reasons: list[str]) -> None:
    args, kwargs = call
    with pytest.raises(RefusedInputError) as caught:
        CONTRACT.check(*args, **kwargs)
    text = str(caught.value)
    assert text.startswith("the exported program refuses these inputs:\n")
    for r in reasons:
        assert r in text, text
    assert isinstance(caught.value, RuntimeError) and isinstance(caught.value, AssertionError)


@pytest.mark.parametrize("call", [_call((2, 8, 16), (2, 8), 2), _call((64, 128, 16), (64, 128), 8),
                                  _call((1, 4, 16), (1, 4), -3)], ids=["middle", "at the caps", "negative int"])
def test_a_call_that_meets_the_contract_passes(call: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
    args, kwargs = call
    CONTRACT.check(*args, **kwargs)
    CONTRACT.check(x=args[0], **kwargs)  # by name too


def test_sizes_by_name_and_flat_values_agree_with_the_call() -> None:
    assert CONTRACT.admits({"x": (2, 8, 16), "extra['mask']": (2, 8), "extra['n']": 2})
    assert not CONTRACT.admits({"x": (2, 8, 16), "extra['mask']": (2, 8), "extra['n']": 9})
    with pytest.raises(RefusedInputError, match="extra\\['n'\\] is missing"):
        CONTRACT.check_shapes({"x": (2, 8, 16), "extra['mask']": (2, 8)})
    with pytest.raises(ContractError, match="no input named y"):
        CONTRACT.check_shapes({"y": (2,)})
    CONTRACT.check_flat([Shaped(2, 8, 16), Shaped(2, 8), 2, None])


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((1, 2, 3), {}, "takes 2 parameters"),
    ((), {"z": 1}, "no parameter 'z'"),
    ((Shaped(2, 8, 16),), {"x": 1}, "given twice"),
])
def test_a_call_that_does_not_fit_the_parameters_is_a_contract_error(args: tuple[Any, ...], kwargs: dict[str, Any],
                                                                      match: str) -> None:
    with pytest.raises(ContractError, match=match):
        CONTRACT.check(*args, **kwargs)


def test_the_json_form_round_trips_and_conforms_to_the_schema() -> None:
    doc = CONTRACT.to_dict()
    assert schema_errors(doc, SCHEMA) == []
    again = Contract.from_json(json.dumps(doc))
    assert again == CONTRACT
    assert again.to_dict() == doc


BAD = [
    ("not an object", [], "a contract is a JSON object"),
    ("another format", {"format": "x"}, "not a shape contract"),
    ("another version", {**CONTRACT.to_dict(), "version": 2}, "version 2 is not supported"),
    ("missing field", {k: v for k, v in CONTRACT.to_dict().items() if k != "dims"}, "missing field 'dims'"),
    ("a relation with code", {**CONTRACT.to_dict(), "conditions": [
        {**CONTRACT.to_dict()["conditions"][0], "relation": "__import__('os').system('true')"}]},
     "contract.conditions\\[0\\].relation"),
    ("an unknown symbol", {**CONTRACT.to_dict(), "conditions": [
        {**CONTRACT.to_dict()["conditions"][0], "relation": "y_size0 <= 3"}]}, "unknown name 'y_size0'"),
    ("no relation", {**CONTRACT.to_dict(), "conditions": [
        {**CONTRACT.to_dict()["conditions"][0], "relation": "x_size0 + 1"}]}, "is no relation"),
    ("a bare symbol", {**CONTRACT.to_dict(), "conditions": [
        {**CONTRACT.to_dict()["conditions"][0], "relation": "x_size0"}]}, "is no relation"),
    ("a bad kind", {**CONTRACT.to_dict(), "conditions": [
        {**CONTRACT.to_dict()["conditions"][0], "kind": "wish"}]}, "kind: expected one of"),
    ("a shape naming no dim", {**CONTRACT.to_dict(), "inputs": [
        {**CONTRACT.to_dict()["inputs"][0], "shape": ["q", 1]}]}, "neither a size nor a dim"),
    ("a bool as a bound", {**CONTRACT.to_dict(), "dims": [
        {**CONTRACT.to_dict()["dims"][0], "max": True}]}, "max: expected an int or null"),
]


@pytest.mark.parametrize(("doc", "match"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_malformed_document_names_the_field(doc: Any, match: str) -> None:
    with pytest.raises(ContractError, match=match):
        Contract.from_dict(doc)
    assert issubclass(ContractError, ShapesError) and issubclass(ContractError, ValueError)


def test_refusals_are_the_reasons_of_check_shapes() -> None:
    assert CONTRACT.refusals({"x": (2, 8, 16), "extra['mask']": (2, 8), "extra['n']": 2}) == []
    assert CONTRACT.refusals({"x": (2, 8, 16)}) == ["extra['mask'] is missing", "extra['n'] is missing"]
    assert CONTRACT.refusals({"x": (2, 6, 16), "extra['mask']": (2, 6), "extra['n']": 1}) == [
        "x.size(1) must be divisible by 4 (x.size(1) = 4 * _s; got x.size(1) = 6)"]


def test_not_json_is_a_contract_error() -> None:
    with pytest.raises(ContractError, match="a contract is JSON"):
        Contract.from_json("{not json")


def test_a_check_refuses_exactly_where_a_condition_is_false() -> None:
    """Brute force over a box of sizes: refused iff some condition evaluates false there."""
    for x0, x1, m1, nv in itertools.product([1, 2, 64, 65], [3, 4, 6, 8, 128, 132], [4, 8, 12], [-1, 0, 2, 3, 9]):
        point = {b: x0, s: x1, m: m1, n: nv}
        want = all(evaluate(c.relation, point) for c in CONTRACT.conditions)
        args, kwargs = _call((x0, x1, 16), (x0, m1), nv)
        try:
            CONTRACT.check(*args, **kwargs)
            got = True
        except RefusedInputError:
            got = False
        assert got == want, point


def test_the_dims_with_no_finite_max_are_named() -> None:
    assert [d.name for d in CONTRACT.unbounded()] == ["extra['mask'].size(1)"]
