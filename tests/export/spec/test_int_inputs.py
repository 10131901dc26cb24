"""Int inputs made dynamic (symints, issue 21 item 3): ``Dim.AUTO`` / ``Dim.DYNAMIC`` as torch
takes them, a named ``Dim`` of the int's own (torch refuses it), ranges, ``AdditionalInputs``
whose int changes, examples 0 and 1. The oracle: on a grid of ints the program agrees with eager
wherever it runs, and runs every int torch's own program runs."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
from torch.export import AdditionalInputs, Dim

import export
from export.errors import ConstraintViolationError, InputError, RefusedInputError


class Slice(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return x[:n] * 2


class Branch(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        if n > 4:
            return x * n
        return x - n


class Ones(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return x + torch.ones(n)


class Reshape(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return x.reshape(n, -1)


X = torch.randn(8, 3)
GRID = range(-2, 11)

CASES: list[tuple[str, torch.nn.Module, tuple[Any, ...], dict[str, Any]]] = [
    ("slice DYNAMIC", Slice(), (X, 4), {"x": None, "n": Dim.DYNAMIC}),
    ("slice AUTO", Slice(), (X, 4), {"x": None, "n": Dim.AUTO}),
    ("slice dynamic batch", Slice(), (X, 4), {"x": {0: Dim.DYNAMIC}, "n": Dim.DYNAMIC}),
    ("slice example 0", Slice(), (X, 0), {"x": None, "n": Dim.DYNAMIC}),
    ("slice example 1", Slice(), (X, 1), {"x": None, "n": Dim.DYNAMIC}),
    ("branch DYNAMIC", Branch(), (X, 6), {"x": None, "n": Dim.DYNAMIC}),
    ("branch negative example", Branch(), (X, -3), {"x": None, "n": Dim.DYNAMIC}),
    ("branch bounded", Branch(), (X, 6), {"x": None, "n": Dim.DYNAMIC(min=5, max=9)}),
    ("ones DYNAMIC", Ones(), (torch.randn(5), 5), {"x": {0: Dim("a")}, "n": Dim.DYNAMIC}),
    ("ones own Dim", Ones(), (torch.randn(5), 5), {"x": {0: Dim("a")}, "n": Dim("n")}),
    ("reshape DYNAMIC", Reshape(), (torch.randn(4, 6), 2), {"x": {0: Dim("a"), 1: Dim("b")}, "n": Dim.DYNAMIC}),
]


def _inputs(args: tuple[Any, ...], n: int) -> tuple[Any, ...]:
    return (args[0], n)


def _runs(fn: Any, args: tuple[Any, ...]) -> tuple[bool, Any]:
    try:
        return True, fn(*args)
    except Exception as e:  # noqa: BLE001 - a refusal or eager's own error
        return False, e


def _torch_program(m: torch.nn.Module, args: tuple[Any, ...], ds: Any) -> Any:
    try:
        return torch.export.export(m, args, dynamic_shapes=ds)
    except Exception:  # noqa: BLE001 - torch refuses the spec (a named Dim on an int)
        return None


@pytest.mark.parametrize("name,model,args,ds", CASES, ids=[c[0] for c in CASES])
def test_int_input_programs_agree_with_eager_and_refuse_nothing_torch_runs(name: str, model: torch.nn.Module,
                                                                          args: tuple[Any, ...], ds: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export.export(model, args, dynamic_shapes=ds)
        theirs = _torch_program(model, args, ds)
    assert ep.symshape.ranges.get("n") is not None or "n" not in ep.symshape.ranges
    ours_run, torch_run = [], []
    for n in GRID:
        call = _inputs(args, n)
        eager_ok, want = _runs(model, call)
        ok, got = _runs(ep.module(), call)
        if ok:
            assert eager_ok and torch.equal(got, want), f"{name}: n={n} silently wrong"
            ours_run.append(n)
        else:
            assert isinstance(got, RefusedInputError), f"{name}: n={n}: {got!r}"
        if theirs is not None and _runs(theirs.module(), call)[0] and eager_ok:
            torch_run.append(n)
    assert set(torch_run) <= set(ours_run), f"{name}: refuses {sorted(set(torch_run) - set(ours_run))}"
    assert _runs(ep.module(), args)[0], f"{name}: the program refuses its own example"


def test_example_one_is_traced_at_two_and_says_so() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ep = export.export(Slice(), (X, 1), dynamic_shapes={"x": None, "n": Dim.DYNAMIC})
    assert ep.symshape.ranges["n"] == (0, 8)
    assert ep.symshape.stats["trace_reasons"] == {"larger example (n = 2)": 1}
    assert any("n = 1 in the example: traced at 2; the program admits n in [0, 8]" in str(w.message) for w in caught)


def test_a_refused_int_is_named_in_the_causes_words() -> None:
    ep = export.export(Slice(), (X, 4), dynamic_shapes={"x": None, "n": Dim.DYNAMIC})
    with pytest.raises(RefusedInputError, match=r"n must be <= 8 \(got n = 9|n <= 8.*got n = 9"):
        ep.module()(X, 9)


def test_own_dim_range_violation_gets_a_verified_fix_in_the_dim_form() -> None:
    with pytest.raises(ConstraintViolationError) as info:
        export.export(Branch(), (X, 6), dynamic_shapes={"x": None, "n": Dim("n", max=10)})
    fixes = info.value.fixes
    assert "n must be >= 5" in str(info.value)
    assert "n = Dim('n', min=5, max=10)" in fixes.modern and "'n': n" in fixes.modern
    assert fixes.verified
    ep = export.export(Branch(), (X, 6), dynamic_shapes=fixes.apply({"x": None, "n": Dim("n", max=10)}))
    assert ep.symshape.ranges["n"] == (5, 10)


def test_own_dim_equal_to_a_size_is_kept_as_a_runtime_check() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export.export(Ones(), (torch.randn(5), 5), dynamic_shapes={"x": {0: Dim("a")}, "n": Dim("n")})
    assert [k.relation for k in ep.symshape.checks] == ["x.size(0) must equal n"]
    with pytest.raises(RefusedInputError):
        ep.module()(torch.randn(5), 4)
    with pytest.raises(ConstraintViolationError):
        export.export(Ones(), (torch.randn(5), 5), dynamic_shapes={"x": {0: Dim("a")}, "n": Dim("n")},
                      dim_relations="raise")


def test_changing_int_in_additional_inputs_is_dynamic() -> None:
    extra = AdditionalInputs()
    extra.add((X, 4))
    extra.add((torch.randn(6, 3), 3))
    ep = export.export(Slice(), (X, 4), dynamic_shapes=extra)
    assert ep.module()(torch.randn(5, 3), 2).shape == (2, 3)


BAD = [
    ("a Dim shared with a tensor dim", {"x": {0: Dim("a")}, "n": Dim("a")},
     r"the int input n is Dim\('a'\), which names another input too.*Dim.DYNAMIC or a Dim of its own"),
    ("a tensor dim takes the int's Dim", {"n": Dim("a"), "x": {0: Dim("a")}},
     r"x.size\(0\) is a, the Dim of an int input: an int takes a Dim of its own"),
    ("a derived Dim", {"x": {0: Dim("a")}, "n": 2 * Dim("a")}, r"the int input n is the derived Dim"),
    ("a dict for an int", {"x": None, "n": {0: Dim("b")}}, r"the int input n is \{0: Dim\('b'.*\}"),
    ("a static int that is not the example", {"x": None, "n": 3}, r"n is declared static 3 but the example is 4"),
    ("an example outside the bounds", {"x": None, "n": Dim.DYNAMIC(min=5)}, r"n = 4 is outside the declared range"),
]


@pytest.mark.parametrize("name,ds,match", BAD, ids=[b[0] for b in BAD])
def test_bad_int_specs_are_one_clear_input_error(name: str, ds: Any, match: str) -> None:
    with pytest.raises(InputError, match=match):
        export.export(Ones(), (torch.randn(4), 4), dynamic_shapes=ds)
