"""Every ``dynamic_shapes`` form torch 2.13 accepts, exported by torch and by symshape on the
same model and inputs: same verdict, same ranges (up to the documented 0/1 policy), same
runtime behaviour on sizes just inside and outside (see parity.py)."""

from __future__ import annotations

import collections
import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from torch._dynamo.exc import UserError  # what torch's own export raises
from torch.export import Dim

from form_models import Concat, Double, Sub, Upto10, VarKw, ramp as _r  # noqa: E402
from parity import FormCase, check_form, form_params  # noqa: E402

import export  # noqa: E402


class Parity(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1 if x.size(0) % 2 == 0 else x - 1


class PlusSix(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.ones(6)


class Pair(torch.nn.Module):
    def forward(self, t: Any) -> torch.Tensor:
        return t[0].sum(0) + t[1].sum(0)


class Nested(torch.nn.Module):
    def forward(self, d: dict[str, Any], y: torch.Tensor) -> torch.Tensor:
        return (d["a"] * 2).sum() + d["b"][0].sum() + d["b"][1][0] - y.sum()


class AtMost(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.sum() + y.sum() if x.size(0) <= y.size(0) else x.sum()


class SliceTo(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x[: y.size(0)] + y


class Twice(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return y.reshape(x.size(0), 2) + x.unsqueeze(1)


class Fields(torch.nn.Module):
    def forward(self, x: Any) -> torch.Tensor:
        return x.f.sum() + x.p.sum()


@dataclasses.dataclass
class Inp:
    f: torch.Tensor
    p: torch.Tensor


torch.export.register_dataclass(Inp)
NT = collections.namedtuple("NT", "a b")


def _shapes_collection() -> Any:
    args = ({"a": _r(4, 3), "b": [_r(5), _r(2)]}, _r(3))
    sc = torch.export.ShapesCollection()
    sc[args[0]["a"]] = {0: Dim("n")}
    sc[args[0]["b"][0]] = (Dim.DYNAMIC,)
    return args, sc


def _additional(extra: list[tuple[Any, ...]]) -> Any:
    ai = torch.export.AdditionalInputs()
    for a in extra:
        ai.add(a)
    return ai


SC_ARGS, SC = _shapes_collection()

# (id, model, args, dynamic_shapes, expect): expect is "ok" or "error" (both the same way)
CASES: list[FormCase] = [
    ("dynamic_relates_to_named", Sub(), lambda: (_r(5), _r(5)), lambda: ({0: Dim("d1", min=3)}, {0: Dim.DYNAMIC}), "ok"),
    ("named_relates_to_dynamic", Sub(), lambda: (_r(5), _r(5)), lambda: ({0: Dim.DYNAMIC}, {0: Dim("d1", min=3)}), "ok"),
    ("dynamic_dynamic", Sub(), lambda: (_r(5), _r(5)), lambda: ({0: Dim.DYNAMIC}, {0: Dim.DYNAMIC}), "ok"),
    ("dynamic_auto", Sub(), lambda: (_r(5), _r(5)), lambda: ({0: Dim.DYNAMIC}, {0: Dim.AUTO}), "ok"),
    ("named_le_dynamic", AtMost(), lambda: (_r(4), _r(6)), lambda: ({0: Dim("a")}, {0: Dim.DYNAMIC}), "ok"),
    ("dynamic_le_named", AtMost(), lambda: (_r(4), _r(6)), lambda: ({0: Dim.DYNAMIC}, {0: Dim("a")}), "ok"),
    ("named_le_auto", AtMost(), lambda: (_r(4), _r(6)), lambda: ({0: Dim("a")}, {0: Dim.AUTO}), "ok"),
    ("slice_named_by_dynamic", SliceTo(), lambda: (_r(8), _r(5)), lambda: ({0: Dim("a")}, {0: Dim.DYNAMIC}), "ok"),
    ("slice_dynamic_by_named", SliceTo(), lambda: (_r(8), _r(5)), lambda: ({0: Dim.DYNAMIC}, {0: Dim("b")}), "ok"),
    ("slice_dynamic_by_dynamic", SliceTo(), lambda: (_r(8), _r(5)), lambda: ({0: Dim.DYNAMIC}, {0: Dim.DYNAMIC}), "ok"),
    ("dynamic_mod2_branch", Parity(), lambda: (_r(6),), lambda: ({0: Dim.DYNAMIC},), "ok"),
    ("dynamic_le_branch", Upto10(), lambda: (_r(6),), lambda: ({0: Dim.DYNAMIC},), "ok"),
    ("dynamic_bounded_le_branch", Upto10(), lambda: (_r(6),), lambda: ({0: Dim.DYNAMIC(min=3, max=8)},), "ok"),
    ("dynamic_min_le_branch", Upto10(), lambda: (_r(6),), lambda: ({0: Dim.DYNAMIC(min=3)},), "ok"),
    ("auto_bounds_kept", Parity(), lambda: (_r(6),), lambda: ({0: Dim.AUTO(min=4, max=32)},), "ok"),
    ("dynamic_bounds_kept", Parity(), lambda: (_r(6),), lambda: ({0: Dim.DYNAMIC(min=4, max=32)},), "ok"),
    ("auto_max_only", Double(), lambda: (_r(6),), lambda: ({0: Dim.AUTO(max=9)},), "ok"),
    ("dynamic_specialized_by_guard", PlusSix(), lambda: (_r(6),), lambda: ({0: Dim.DYNAMIC},), "error"),
    ("auto_specialized_by_guard", PlusSix(), lambda: (_r(6),), lambda: ({0: Dim.AUTO},), "ok"),
    ("dynamic_example_1", Double(), lambda: (_r(1),), lambda: ({0: Dim.DYNAMIC},), "error"),
    ("auto_example_1", Double(), lambda: (_r(1),), lambda: ({0: Dim.AUTO},), "ok"),
    ("static_hint", Double(), lambda: (_r(6, 2),), lambda: ({0: Dim.STATIC, 1: Dim.DYNAMIC},), "ok"),
    ("static_int", Double(), lambda: (_r(6, 2),), lambda: ({0: 6, 1: Dim("w")},), "ok"),
    ("static_int_wrong", Double(), lambda: (_r(6, 2),), lambda: ({0: 5},), "error"),
    ("tensor_spec_tuple", Double(), lambda: (_r(6, 2),), lambda: ((Dim("b"), None),), "ok"),
    ("tensor_spec_list", Double(), lambda: (_r(6, 2),), lambda: ([Dim("b"), Dim.AUTO],), "ok"),
    ("none_leaf", Sub(), lambda: (_r(5), _r(5)), lambda: ({0: Dim("b")}, None), "error"),
    ("derived", Concat(), lambda: (_r(4), _r(8)), lambda: {"x": {0: Dim("b")}, "y": {0: 2 * Dim("b")}}, "ok"),
    ("tuple_input", Pair(), lambda: ((_r(3, 2), _r(4, 2)),), lambda: {"t": ({1: Dim("a")}, {1: Dim("a")})}, "ok"),
    ("tuple_input_none_child", Pair(), lambda: ((_r(3, 2), _r(4, 2)),), lambda: {"t": ({0: Dim("a")}, None)}, "ok"),
    ("namedtuple_input", Pair(), lambda: (NT(_r(3, 2), _r(4, 2)),), lambda: {"t": NT({0: Dim.DYNAMIC}, None)}, "ok"),
    ("nested_dict_list", Nested(), lambda: ({"a": _r(4, 3), "b": [_r(5), _r(2)]}, _r(3)),
     lambda: {"d": {"a": {0: Dim("n")}, "b": [{0: Dim.DYNAMIC}, None]}, "y": None}, "ok"),
    ("dataclass_list", Fields(), lambda: (Inp(_r(4), _r(5)),), lambda: {"x": [{0: Dim("a")}, {0: Dim("b")}]}, "ok"),
    ("dataclass_none_child", Fields(), lambda: (Inp(_r(4), _r(5)),), lambda: {"x": [None, {0: Dim.DYNAMIC}]}, "ok"),
    ("dataclass_by_field_refused", Fields(), lambda: (Inp(_r(4), _r(5)),),
     lambda: {"x": {"f": {0: Dim("a")}, "p": {0: Dim("b")}}}, "error"),
    ("dataclass_short_refused", Fields(), lambda: (Inp(_r(4), _r(5)),), lambda: {"x": [{0: Dim("a")}]}, "error"),
    ("shapes_collection", Nested(), lambda: SC_ARGS, lambda: SC, "ok"),
    ("shapes_collection_foreign_tensor", Double(), lambda: (_r(4),),
     lambda: (lambda sc: (sc.__setitem__(_r(4), {0: Dim("b")}), sc)[1])(torch.export.ShapesCollection()), "error"),
    ("additional_inputs", Sub(), lambda: (_r(5, 2), _r(5, 2)), lambda: _additional([(_r(7, 2), _r(7, 2))]), "ok"),
    ("additional_inputs_two_dims", Double(), lambda: (_r(5, 2),), lambda: _additional([(_r(7, 3),), (_r(2, 2),)]), "ok"),
    ("additional_input_rejected", Upto10(), lambda: (_r(6),), lambda: _additional([(_r(12),)]), "error"),
    ("additional_input_type_differs", Double(), lambda: (_r(6),), lambda: _additional([(3,)]), "error"),
]


@pytest.mark.parametrize("case", form_params(CASES))
def test_form_matches_torch(case: FormCase) -> None:
    check_form(case)


def test_auto_bounds_are_enforced_at_runtime() -> None:
    ep = export.export(Parity(), (_r(6),), dynamic_shapes=({0: Dim.AUTO(min=4, max=32)},))
    assert ep.symshape.ranges["x.size(0)"] == (4, 32)
    for n, bound in ((3, ">= 4"), (33, "<= 32")):
        with pytest.raises(export.RefusedInputError, match=re.escape(f"x.size(0) must be {bound}")):
            ep.module()(_r(n))
    torch.testing.assert_close(ep.module()(_r(32)), Parity()(_r(32)))


def test_dynamic_specialized_error_names_the_line_and_fix() -> None:
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(PlusSix(), (_r(6),), dynamic_shapes={"x": {0: Dim.DYNAMIC}})
    text = str(info.value)
    assert "x.size(0) is declared Dim.DYNAMIC, but the model specializes it to 6" in text
    assert "return x + torch.ones(6)" in open(__file__).read() and "test_forms.py:" in text
    assert info.value.fixes.verified
    assert info.value.fixes.apply({"x": {0: Dim.DYNAMIC}}) == {"x": None}


class BranchAndPlain(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x + 1 if x.size(0) <= 10 else x - 1).sum() + y.sum()


def test_fix_keeps_dynamic_hints_as_declared() -> None:
    """A fix for a named Dim keeps a Dim.DYNAMIC (with its bounds) as the user wrote it."""
    spec = {"x": {0: Dim("a")}, "y": {0: Dim.DYNAMIC(min=2, max=40)}}
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(BranchAndPlain(), (_r(6), _r(7)), dynamic_shapes=spec)
    assert info.value.fixes.verified
    fixed = info.value.fixes.apply(spec)
    assert fixed["y"] == {0: Dim.DYNAMIC(min=2, max=40)}
    ep = export.export(BranchAndPlain(), (_r(6), _r(7)), dynamic_shapes=fixed)
    assert ep.symshape.ranges["y.size(0)"] == (2, 40)


def test_known_differences_from_torch() -> None:
    """Where symshape knowingly differs from torch 2.13, both ways, on y == 2 * x."""
    # x named, y DYNAMIC: y = 2 * a is what the trace infers for y; torch refuses ("must always
    # be related to the values of a"), symshape exports with y's relation in the program
    ep = export.export(Twice(), (_r(4), _r(8)), dynamic_shapes=({0: Dim("a")}, {0: Dim.DYNAMIC}))
    assert ep.symshape.ranges["y.size(0)"] == (2, None)
    torch.testing.assert_close(ep.module()(_r(5), _r(10)), Twice()(_r(5), _r(10)))
    with pytest.raises(UserError, match="must always be related to the values of a"):
        torch.export.export(Twice(), (_r(4), _r(8)), dynamic_shapes=({0: Dim("a")}, {0: Dim.DYNAMIC}))
    # x DYNAMIC, y named: torch exports a program that rejects every odd y although Dim("b")
    # declares them; symshape reports that the model needs y == 2 * x.size(0)
    vanilla = torch.export.export(Twice(), (_r(4), _r(8)), dynamic_shapes=({0: Dim.DYNAMIC}, {0: Dim("b")}))
    with pytest.raises(AssertionError, match=re.escape("Guard failed: y.size()[0] == 2 * x.size()[0]")):
        vanilla.module()(_r(4), _r(9))
    with pytest.raises(export.ConstraintViolationError, match=r"y.size\(0\) == 2 \* x.size\(0\)"):
        export.export(Twice(), (_r(4), _r(8)), dynamic_shapes=({0: Dim.DYNAMIC}, {0: Dim("b")}))
    # an example outside a hint's bounds: torch exports a program that rejects its own example
    vanilla = torch.export.export(Double(), (_r(3),), dynamic_shapes=({0: Dim.AUTO(min=4, max=32)},))
    with pytest.raises(AssertionError, match=re.escape("Guard failed: x.size()[0] >= 4")):
        vanilla.module()(_r(3))
    with pytest.raises(export.InputError, match="outside the declared range of Dim.AUTO"):
        export.export(Double(), (_r(3),), dynamic_shapes=({0: Dim.AUTO(min=4, max=32)},))


STRICT_IDS = ("dynamic_relates_to_named", "dynamic_dynamic", "dynamic_mod2_branch", "dynamic_bounds_kept",
              "dynamic_specialized_by_guard", "named_le_dynamic", "shapes_collection", "additional_inputs")


@pytest.mark.parametrize("case", form_params(CASES, only=STRICT_IDS))
def test_form_matches_torch_strict(case: FormCase) -> None:
    """The same forms traced with dynamo (strict=True), passed through to torch."""
    check_form(case, strict=True)


def test_export_takes_no_keyword_these_tables_miss() -> None:
    """``torch.export.export``'s parameters on every supported torch (2.13, 2.14, 2.15): a release
    that adds one (a new way to give shapes) fails here until a table covers it."""
    import inspect

    assert list(inspect.signature(torch.export.export).parameters) == [
        "mod", "args", "kwargs", "dynamic_shapes", "strict", "preserve_module_call_signature",
        "prefer_deferred_runtime_asserts_over_guards"]


def test_var_keyword_top_level_name_as_installed_torch() -> None:
    """A ``**kwargs`` entry given at top level by its name: refused by torch 2.13 (and by
    symshape there), accepted by 2.14 and 2.15 (and by symshape there, see test_forms_214.py)."""
    args, kwargs, shapes = (_r(5),), {"y": _r(5)}, {"x": {0: Dim("b")}, "y": {0: Dim("b")}}
    try:
        torch.export.export(VarKw(), args, kwargs, dynamic_shapes=shapes)
        torch_ok = True
    except Exception:  # noqa: BLE001 - torch's verdict, compared below
        torch_ok = False
    if torch_ok:
        assert set(export.export(VarKw(), args, kwargs, dynamic_shapes=shapes).symshape.ranges) == {
            "x.size(0)", "kw['y'].size(0)"}
    else:
        with pytest.raises(export.InputError, match="not an argument"):
            export.export(VarKw(), args, kwargs, dynamic_shapes=shapes)
