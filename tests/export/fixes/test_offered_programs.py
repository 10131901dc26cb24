"""The programs a ConstraintViolationError offers (issue 8): ``err.fixes.program`` is what
``export(f, args, kwargs, dynamic_shapes=err.fixes.apply(spec))`` returns (same range
constraints, symshape ranges and equalities, same graph), for every kind of fix; and
``err.fixes.larger_example_program`` is what exporting the user's spec with the
``larger_example`` sizes returns. Each program runs sizes inside its ranges like eager and
refuses sizes outside. A fix that needs ``torch._check`` lines offers no program."""

from __future__ import annotations

import dataclasses
import gc
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.export import Dim

from replay_oracle import SLICE_MAX_GUARD_213, differences  # noqa: E402
from zero_one_models import ClsToken, LinView  # noqa: E402

import export  # noqa: E402
from export.spec.inputs import Inputs  # noqa: E402
from export.diagnose.probe import enlarged_inputs  # noqa: E402
from export.tracing.trace import Trace  # noqa: E402
from shapes.spec import InputDim  # noqa: E402


class Add(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class Slice6(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 5:] * 2


class Flat(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], 64)


class Pinned(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(6, -1)


def _violation(model: torch.nn.Module, args: tuple[Any, ...], **spec: Any) -> Any:
    """The fixes of the error (a 0/1 example raises, as torch does: ``zero_one_examples="raise"``)."""
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, args, zero_one_examples="raise", **spec)
    return info.value.fixes


def _runs_like_eager(ep: Any, model: torch.nn.Module, *args: torch.Tensor) -> bool:
    return torch.allclose(ep.module()(*args), model(*args), atol=1e-6)


def _refuses(ep: Any, *args: torch.Tensor) -> bool:
    try:
        ep.module()(*args)
    except Exception:  # noqa: BLE001 - torch's input checks raise plain errors
        return True
    return False


# (id, model, example args, spec keywords (fresh per call), args inside, args outside)
Case = tuple[str, Callable[[], torch.nn.Module], tuple[Any, ...], Callable[[], dict[str, Any]],
             tuple[Any, ...], tuple[Any, ...]]
_XY = (torch.randn(4, 3), torch.randn(4, 3))
CASES: list[Case] = [
    ("separate_dims_equal", Add, (torch.randn(4, 3), torch.randn(4, 3)),
     lambda: {"dynamic_shapes": {"x": {0: Dim("a")}, "y": {0: Dim("b")}}},
     (torch.randn(7, 3), torch.randn(7, 3)), (torch.randn(7, 3), torch.randn(6, 3))),
    ("range", Slice6, (torch.randn(2, 8),), lambda: {"dynamic_shapes": {"x": {1: Dim("n", max=16)}}},
     (torch.randn(2, 12),), (torch.randn(2, 17),)),
    ("batch1_static", ClsToken, (torch.randn(1, 5, 8),), lambda: {"dynamic_shapes": {"x": {0: Dim("b")}}},
     (torch.randn(1, 5, 8),), (torch.randn(2, 5, 8),)),
    ("batch1_static_two_dims", LinView, (torch.randn(1, 5, 8),),
     lambda: {"dynamic_shapes": {"x": {0: Dim("b"), 1: Dim("s")}}},
     (torch.randn(1, 9, 8),), (torch.randn(3, 9, 8),)),
    ("classic_equal", Add, _XY, lambda: {"constraints": [export.dynamic_dim(_XY[0], 0), export.dynamic_dim(_XY[1], 0)]},
     (torch.randn(7, 3), torch.randn(7, 3)), (torch.randn(7, 3), torch.randn(6, 3))),
    ("dynamic_pinned", Pinned, (torch.randn(6, 4),), lambda: {"dynamic_shapes": {"x": {0: Dim.DYNAMIC}}},
     (torch.randn(6, 4),), (torch.randn(5, 4),)),
]


@pytest.mark.parametrize("name, make, args, spec, inside, outside", CASES, ids=[c[0] for c in CASES])
def test_offered_program_is_what_reexporting_with_apply_returns(
        name: str, make: Callable[[], torch.nn.Module], args: tuple[Any, ...], spec: Callable[[], dict[str, Any]],
        inside: tuple[Any, ...], outside: tuple[Any, ...]) -> None:
    model = make()
    fixes = _violation(model, args, **spec())
    assert fixes.verified and fixes.program is not None, fixes.render()
    (key, given), = spec().items()
    again = export.export(model, args, **{key: fixes.apply(given)})
    assert differences(fixes.program, again) == (list(SLICE_MAX_GUARD_213) if name == "range" else [])
    assert isinstance(fixes.program, export.SymshapeProgram)
    assert _runs_like_eager(fixes.program, model, *inside)
    assert _refuses(fixes.program, *outside) and _refuses(again, *outside)


def test_a_fix_found_at_a_larger_example_offers_what_its_reexport_says() -> None:
    """At batch 1 the export traces at 2 and fails there; the offered program is the one the
    fix's re-export on the batch-1 example returns, its note on the larger example included."""
    args = (torch.randn(1, 3), torch.randn(1, 3))
    given = {"x": {0: Dim("a")}, "y": {0: Dim("b")}}
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Add(), args, dynamic_shapes=given)
    fixes = info.value.fixes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", export.SymshapeWarning)
        again = export.export(Add(), args, dynamic_shapes=fixes.apply(given))
    assert differences(fixes.program, again) == []
    assert any("traced at 2" in w for w in fixes.program.symshape.warnings)


def test_classic_fix_offers_the_classic_reexport() -> None:
    """The classic form's program comes from ``constraints=`` (its ranges start at 2)."""
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    fixes = _violation(Add(), (x, y), constraints=[export.dynamic_dim(x, 0), export.dynamic_dim(y, 0)])
    assert isinstance(fixes.apply(), list)  # apply() without a spec: the form the export was given
    assert fixes.program.symshape.ranges["x.size(0)"][0] == 2


@pytest.mark.parametrize("make, shape, spec", [
    (ClsToken, (1, 5, 8), lambda: {"x": {0: Dim("b")}}),
    (LinView, (1, 5, 8), lambda: {"x": {0: Dim("b"), 1: Dim("s")}}),
], ids=["cls_token", "lin_view"])
def test_larger_example_program_is_the_spec_exported_with_the_larger_example(make, shape, spec) -> None:
    model, x = make(), torch.randn(*shape)
    fixes = _violation(model, (x,), dynamic_shapes=spec())
    assert fixes.larger_example is not None and fixes.larger_example_program is not None
    sizes = {InputDim("x", 0): fixes.larger_example["x.size(0)"]}
    args, _ = enlarged_inputs(Inputs.bind(model, (x,), None), (x,), None, sizes)
    again = export.export(model, args, dynamic_shapes=spec())
    assert differences(fixes.larger_example_program, again) == []
    for b in (1, 2, 5):  # dynamic: batch 1 (the example's) and larger batches, like eager
        assert _runs_like_eager(fixes.larger_example_program, model, torch.randn(b, 5, 8))
    assert _refuses(fixes.larger_example_program, torch.randn(2, 5, 5))  # a static dim changed
    # by default, one export call returns that program (traced once, at the larger example)
    with pytest.warns(export.SymshapeWarning, match=r"x.size\(0\) = 1 in the example: traced at 2"):
        direct = export.export(model, (x,), dynamic_shapes=spec())
    # the same program, with the note the batch-1 call warned (the larger example's export has none)
    assert differences(direct, fixes.larger_example_program) == ["warnings"]
    assert [w for w in direct.symshape.warnings if "traced at 2" not in w] == list(again.symshape.warnings)
    assert direct.symshape.stats["traces"] == 1, direct.symshape.stats


def test_a_fix_with_checks_offers_no_program_when_relations_raise() -> None:
    fixes = _violation(Flat(), (torch.randn(2, 8, 8),), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("h"), 2: Dim("w")}},
                       dim_relations="raise")
    assert fixes.checks and not fixes.verified and fixes.verified_with_checks
    assert fixes.program is None and fixes.larger_example_program is None


def test_a_product_no_dim_can_say_is_a_runtime_check_by_default() -> None:
    """``h * w == 64``: torch exports it with a runtime check, and so does symshape, saying so."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ep = export.export(Flat(), (torch.randn(2, 8, 8),), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("h"), 2: Dim("w")}})
    (kept,) = ep.symshape.checks
    assert "x.size(1) * x.size(2)" in kept.relation and "64" in kept.relation, kept
    assert kept.origin is not None and "test_offered_programs.py" in kept.origin
    notes = [str(w.message) for w in caught if issubclass(w.category, export.SymshapeWarning)]
    assert len(notes) == 1 and notes[0].startswith("kept as runtime checks of the program"), notes
    assert _runs_like_eager(ep, Flat(), torch.randn(3, 4, 16))  # h=4, w=16: runs, as eager does
    with pytest.raises(export.RefusedInputError, match="x.size.1. \\* x.size.2.|x.size.2. \\* x.size.1."):
        ep.module()(torch.randn(3, 4, 8))


def test_offered_programs_do_not_show_in_repr_or_equality() -> None:
    fixes = _violation(Add(), (torch.randn(4, 3), torch.randn(4, 3)),
                       dynamic_shapes={"x": {0: Dim("a")}, "y": {0: Dim("b")}})
    assert "program=" not in repr(fixes)
    assert dataclasses.replace(fixes, program=None) == fixes


def test_the_offered_program_warns_nothing_while_the_export_fails() -> None:
    """Its notes are in its report; the failing export's warnings are the trace's own."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fixes = _violation(ClsToken(), (torch.randn(1, 5, 8),), dynamic_shapes={"x": {0: Dim("b")}})
    assert fixes.program is not None
    assert not [w for w in caught if issubclass(w.category, export.SymshapeWarning)]


def test_the_larger_example_export_warns_once_at_the_callers_line() -> None:
    """By default the same export succeeds: one warning, its own, pointing at this file."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ep = export.export(ClsToken(), (torch.randn(1, 5, 8),), dynamic_shapes={"x": {0: Dim("b")}})
    notes = [w for w in caught if issubclass(w.category, export.SymshapeWarning)]
    assert [str(w.message) for w in notes] == list(ep.symshape.warnings) == [
        "x.size(0) = 1 in the example: traced at 2; the program admits x.size(0) in [1, inf]"]
    assert notes[0].filename == __file__


def test_apply_on_a_positional_list_spec_gives_dynamic_shapes() -> None:
    """A list ``dynamic_shapes`` (one entry per positional input) is no classic constraint
    list: ``apply`` returns ``dynamic_shapes`` for it (it used to return constraints)."""
    model, args = Add(), (torch.randn(4, 3), torch.randn(4, 3))
    fixes = _violation(model, args, dynamic_shapes=[{0: Dim("a")}, {0: Dim("b")}])
    fixed = fixes.apply([{0: Dim("a")}, {0: Dim("b")}])
    assert isinstance(fixed, dict)
    assert differences(export.export(model, args, dynamic_shapes=fixed), fixes.program) == []


def _live_traces() -> int:
    gc.collect()
    return sum(isinstance(o, Trace) for o in gc.get_objects())


def test_offered_programs_keep_no_trace_alive() -> None:
    """The error holds its programs; they keep what a program keeps (its final solver),
    not the traces or the diagnosis' solvers."""
    before = _live_traces()
    try:
        export.export(ClsToken(), (torch.randn(1, 5, 8),), dynamic_shapes={"x": {0: Dim("b")}},
                      zero_one_examples="raise")
    except export.ConstraintViolationError as e:
        programs = (e.fixes.program, e.fixes.larger_example_program)
    assert all(p is not None for p in programs)
    assert _live_traces() == before
    ep = export.export(ClsToken(), (torch.randn(1, 5, 8),), dynamic_shapes={"x": {0: Dim("b")}})
    assert ep.symshape.ranges["x.size(0)"] == (1, None)
    assert _live_traces() == before
