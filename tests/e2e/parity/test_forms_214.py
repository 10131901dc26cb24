"""The ``dynamic_shapes`` forms torch 2.14 added, exported by torch and by symshape on the same
model and inputs (same verdict, ranges, runtime behaviour just inside and outside; see
parity.py): ``ShapesSpec`` / ``ParamsSpec``, the ``@dynamic_spec`` decorator on ``forward``,
and a ``**kwargs`` entry given at top level by its name. Skipped on a torch without them (2.13);
torch 2.15 has the same forms, unchanged (docs/torch_internals.md, section 7), and runs this
table as it is."""

from __future__ import annotations

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

ds = pytest.importorskip("torch.fx.experimental.dynamic_spec")
if not hasattr(ds, "_resolve_dynamic_shapes"):
    pytest.skip(f"torch {torch.__version__}: torch.export takes no ShapesSpec / @dynamic_spec (torch 2.14 forms)",
                allow_module_level=True)
ShapesSpec, ParamsSpec, ShapeVar, TensorSpec, dynamic_spec = (
    ds.ShapesSpec, ds.ParamsSpec, ds.ShapeVar, ds.TensorSpec, ds.dynamic_spec)


class Decorated(torch.nn.Module):
    @dynamic_spec({"x": TensorSpec([ShapeVar("b", min=2, max=40), None])})
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def _shared() -> Any:
    b = ShapeVar("b", min=2, max=64)
    return ShapesSpec(ParamsSpec({"x": TensorSpec([b, 3]), "y": TensorSpec([b, 3])}))


def _derived() -> Any:
    b = ShapeVar("batch", min=2, max=128)
    return ShapesSpec(ParamsSpec({"x": TensorSpec([b, 3]), "y": TensorSpec([b * 2, 3])}))


# (id, model, args, dynamic_shapes, expect): expect is "ok" or "error" (both the same way)
CASES: list[FormCase] = [
    ("shapes_spec_derived", Concat(), lambda: (_r(4, 3), _r(8, 3)), _derived, "ok"),
    ("shapes_spec_shared", Sub(), lambda: (_r(5, 3), _r(5, 3)), _shared, "ok"),
    ("params_spec", Double(), lambda: (_r(6, 2),), lambda: ParamsSpec({"x": TensorSpec([ShapeVar("n", max=50), 2])}), "ok"),
    ("shapes_spec_dict_params", Double(), lambda: (_r(6, 2),), lambda: ShapesSpec({"x": TensorSpec([None, ShapeVar("w")])}), "ok"),
    ("shapes_spec_static_wrong", Double(), lambda: (_r(6, 2),), lambda: ShapesSpec({"x": TensorSpec([5, None])}), "error"),
    ("shapes_spec_guard_beyond_range", Upto10(), lambda: (_r(6),), lambda: ShapesSpec({"x": TensorSpec([ShapeVar("n")])}), "error"),
    ("shapes_spec_guard_within_range", Upto10(), lambda: (_r(6),),
     lambda: ShapesSpec({"x": TensorSpec([ShapeVar("n", min=2, max=10)])}), "ok"),
    ("decorator", Decorated(), lambda: (_r(6, 2),), lambda: None, "ok"),
    ("decorator_and_dynamic_shapes", Decorated(), lambda: (_r(6, 2),), lambda: {"x": {0: Dim("b")}}, "error"),
]


@pytest.mark.parametrize("case", form_params(CASES))
def test_form_matches_torch(case: FormCase) -> None:
    check_form(case)


def test_decorator_ranges_are_enforced() -> None:
    ep = export.export(Decorated(), (_r(6, 2),))
    assert ep.symshape.ranges["x.size(0)"] == (2, 40)
    for n, bound in ((1, ">= 2"), (41, "<= 40")):
        with pytest.raises(export.RefusedInputError, match=re.escape(f"x.size(0) must be {bound}")):
            ep.module()(_r(n, 2))
    torch.testing.assert_close(ep.module()(_r(40, 2)), Decorated()(_r(40, 2)))


def test_assumptions_refused_clearly() -> None:
    """Known difference: torch wires ShapesSpec assumptions into its ShapeEnv; symshape
    refuses them with an InputError naming the alternatives (no silent drop)."""
    b = ShapeVar("b", min=2, max=64)
    spec = ShapesSpec(ParamsSpec({"x": TensorSpec([b])}), assumptions=[b % 2 == 0])
    torch.export.export(Double(), (_r(6),), dynamic_shapes=spec)
    with pytest.raises(export.InputError, match="assumptions"):
        export.export(Double(), (_r(6),), dynamic_shapes=spec)


@pytest.mark.parametrize("shapes", [
    {"x": {0: Dim("b", max=30)}, "y": {0: Dim("b", max=30)}},
    {"x": {0: Dim("b", max=30)}, "kw": {"y": {0: Dim("b", max=30)}}},
], ids=["top_level_name", "under_var_keyword"])
def test_var_keyword_entry_by_name(shapes: dict[str, Any]) -> None:
    args, kwargs = (_r(5),), {"y": _r(5)}
    t_ep = torch.export.export(VarKw(), args, kwargs, dynamic_shapes=shapes)
    s_ep = export.export(VarKw(), args, kwargs, dynamic_shapes=shapes)
    ranges = s_ep.symshape.ranges
    assert set(ranges) == {"x.size(0)", "kw['y'].size(0)"}
    assert all(lo in (1, 2) and hi == 30 for lo, hi in ranges.values()), ranges  # the 0/1 policy, as parity.py
    assert {(min(max(int(v.lower), 1), 2), int(v.upper)) for v in t_ep.range_constraints.values()} <= {(1, 30), (2, 30)}
    _runs_like_torch(t_ep, s_ep)


def _runs_like_torch(t_ep: Any, s_ep: Any) -> None:
    """Sizes just inside and outside the range, and unequal sizes: symshape's program accepts
    what torch's accepts, matching eager. (torch 2.14.1's and 2.15.0's own program for a
    ``**kwargs`` input fails at call time, ``NameError: name 'L'`` in its generated input
    guard; symshape's program is torch's and fails identically: the outcome, not its cause, is
    compared.)"""
    for x, y in ((_r(2), _r(2)), (_r(30), _r(30)), (_r(31), _r(31)), (_r(5), _r(6))):
        outcomes = []
        for ep in (t_ep, s_ep):
            try:
                out = ep.module()(x, y=y)
            except export.RefusedInputError as e:  # symshape's words for torch's refusal (issue 21 item 4)
                outcomes.append(type(e.__cause__).__name__)
            except Exception as e:  # noqa: BLE001 - compared below
                outcomes.append(type(e).__name__)
            else:
                torch.testing.assert_close(out, VarKw()(x, y=y))
                outcomes.append("ok")
        assert outcomes[0] == outcomes[1], f"sizes {len(x)}, {len(y)}: torch {outcomes[0]}, symshape {outcomes[1]}"


def test_var_keyword_name_collision_refused() -> None:
    """A **kwargs key that collides with a positional name: torch and symshape both refuse."""
    class Coll(torch.nn.Module):
        def forward(self, x: torch.Tensor, **kw: torch.Tensor) -> torch.Tensor:
            return x + kw["z"]

    shapes = {"x": {0: Dim("b")}, "z": {0: Dim("b")}, "kw": {"z": {0: Dim("b")}}}
    args, kwargs = (_r(5),), {"z": _r(5)}
    with pytest.raises(UserError, match="both as a top-level key and under"):
        torch.export.export(Coll(), args, kwargs, dynamic_shapes=shapes)
    with pytest.raises(export.InputError):
        export.export(Coll(), args, kwargs, dynamic_shapes=shapes)


def test_dynamic_spec_offers_no_form_this_table_misses() -> None:
    """``dynamic_spec``'s public names on every torch that has these forms (2.14, 2.15): a
    release that adds a spec kind fails here until this table covers it."""
    assert sorted(ds.__all__) == [
        "DictSpec", "IntVar", "IntermediateSpec", "LeafIntSpec", "LeafSpec", "ObjectSpec", "ParamsSpec",
        "STATIC", "SeqSpec", "ShapeVar", "ShapesSpec", "TensorSpec", "dynamic_spec"]


STRICT_IDS = ("shapes_spec_derived", "shapes_spec_guard_beyond_range", "decorator")


@pytest.mark.parametrize("case", form_params(CASES, only=STRICT_IDS))
def test_form_matches_torch_strict(case: FormCase) -> None:
    """The same forms traced with dynamo (strict=True), as torch's own ShapesSpec example does."""
    check_form(case, strict=True)


def test_known_differences_from_torch() -> None:
    """Where symshape knowingly differs from torch 2.14 and 2.15 on a ShapesSpec: torch traces its
    dims as *unbacked* symbols (no 0/1 specialization; an equality the model needs between
    two of them becomes a runtime assert), symshape as the equivalent named ``Dim``s, whose
    every needed guard is a violation with a fix. symshape is stricter, never looser: it
    refuses these exports and exports nothing torch refuses."""
    def one_var() -> Any:
        return ShapesSpec({"x": TensorSpec([ShapeVar("n")])})

    for size in (0, 1):  # an example of size 0/1
        torch.export.export(Double(), (_r(size),), dynamic_shapes=one_var())
        with pytest.raises(export.ConstraintViolationError, match=f"specialized to {size}"):
            export.export(Double(), (_r(size),), dynamic_shapes=one_var(), zero_one_examples="raise")
        # by default symshape traces at a larger example, and exports too (sizes >= 1)
        with pytest.warns(export.SymshapeWarning, match=f"x.size\\(0\\) = {size} in the example: traced at 2"):
            ep = export.export(Double(), (_r(size),), dynamic_shapes=one_var())
        assert ep.symshape.ranges["x.size(0)"] == (1, None)
    # two ShapeVars the model needs equal: torch asserts it at runtime, symshape reports it
    two = ShapesSpec({"x": TensorSpec([ShapeVar("a")]), "y": TensorSpec([ShapeVar("b")])})
    vanilla = torch.export.export(Sub(), (_r(5), _r(5)), dynamic_shapes=two)
    with pytest.raises(AssertionError, match=re.escape("Guard failed: y.size()[0] == x.size()[0]")):
        vanilla.module()(_r(5), _r(6))
    with pytest.raises(export.ConstraintViolationError, match=r"x.size\(0\) must equal y.size\(0\)"):
        export.export(Sub(), (_r(5), _r(5)), dynamic_shapes=two)
