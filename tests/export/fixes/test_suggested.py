"""``export.fixes.suggested``: fixes as data, their renderings and forms, and the re-export
that verifies one (:func:`verify`, :func:`offered`) through a :class:`ReExporter`.

The data and texts are fast (hand-built traces, ``step_cases``); verification re-exports one
tiny model (``x.view(b, -1, 4)``) through a real :class:`export.exporter.Exporter`."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import pytest
import torch
from torch.export import Dim

from export.errors import ConstraintViolationError, SymshapeWarning
from export.exporter import Exporter
from export.fixes.apply import FixedSpec
from export.fixes.suggested import ReExporter, SuggestedFixes, classic_constraints, offered, user_form, verify
from export.fixes.verify import suggest_fixes
from export.program.exported import SymshapeProgram
from export.spec.classic import dynamic_dim, from_constraints
from export.spec.inputs import Inputs
from shapes.expr import int_symbol
from shapes.spec import DimDecl, InputDim, RootDim, Spec
from step_cases import divisible_trace, view_by_4_exporter

MODERN = "from torch.export import Dim\n\nb = Dim('b', min=1)\n_s = Dim('_s', min=1)\ndynamic_shapes = {'x': {0: b, 1: 4 * _s}}"
CLASSIC = ("def specify_constraints(x):\n    return [\n        dynamic_dim(x, 0),\n"
           "        # x.size(1) = 4 * _s: dynamic_dim cannot say this (use the Dim form)\n    ]")


@pytest.fixture(scope="module")
def fixes() -> SuggestedFixes:
    return suggest_fixes(divisible_trace(), None)


def _indented(text: str) -> list[str]:
    return ["    " + line if line else line for line in text.splitlines()]


def test_the_fixes_as_data(fixes: SuggestedFixes) -> None:
    assert (fixes.modern, fixes.classic, fixes.checks, fixes.verified) == (MODERN, CLASSIC, (), False)
    assert len(fixes) == 3 and [type(f).__name__ for f in fixes] == ["RangeFix", "RangeFix", "DivisibleFix"]
    assert fixes.program is None and fixes.larger_example is None


@pytest.mark.parametrize("changes, tail", [
    ({}, ["", "(not verified: re-exporting with this fix did not succeed)"]),
    ({"verified": True}, []),
    ({"verified": True, "larger_example": {"x.size(0)": 2}},
     ["", "Or keep the spec and export with a larger example: x.size(0) = 2 (verified)"]),
    ({"checks": ("torch._check(x.shape[0] <= 8)",)},
     ["", "Also add, in the model, where the constraint arises (apply() cannot add these):",
      "    torch._check(x.shape[0] <= 8)", "", "(not verified: re-exporting with this fix did not succeed)"]),
    ({"checks": ("torch._check(x.shape[0] <= 8)",), "verified_with_checks": True},
     ["", "Also add, in the model, where the constraint arises (apply() cannot add these):",
      "    torch._check(x.shape[0] <= 8)", "", "(verified with the torch._check lines added to the model)"]),
    ({"checks": ("torch._check(x.shape[0] <= 8)",), "checks_kept": True, "verified": True},
     ["", "The re-exported program checks these relations at run time (no Dim can say them); adding them to the "
          "model is an alternative:", "    torch._check(x.shape[0] <= 8)"]),
])
def test_render(fixes: SuggestedFixes, changes: dict[str, Any], tail: list[str]) -> None:
    text = dataclasses.replace(fixes, **changes).render()
    assert text.splitlines() == ["Suggested fix (Dim form):", *_indented(MODERN), "", "Suggested fix (classic form):",
                                 *_indented(CLASSIC), *tail]


def test_apply_in_the_form_given(fixes: SuggestedFixes) -> None:
    modern = fixes.apply()  # the export was given the Dim form
    assert list(modern) == ["x"] and str(modern["x"][1]) == "4*_s" and modern["x"][0].min == 1
    assert str(fixes.apply({"x": None})) == str(modern) == str(fixes.dynamic_shapes())
    assert [c.text for c in fixes.apply([])] == ["dynamic_dim(x, 0) >= 2"]  # a classic list: the classic form
    assert [c.text for c in fixes.constraints()] == ["dynamic_dim(x, 0) >= 2"]


def test_classic_constraints() -> None:
    b = int_symbol("b")
    spec = Spec("classic", (RootDim("b", 3, 64, "b"),), (
        DimDecl(InputDim("x", 0), "dynamic", b, "b"), DimDecl(InputDim("y", 0), "dynamic", 2 * b + 1, "b"),
        DimDecl(InputDim("n", None), "dynamic", b, "b")))  # an int input: dynamic_dim names tensor dims only
    assert [c.text for c in classic_constraints(spec)] == [
        "dynamic_dim(x, 0) >= 3", "dynamic_dim(x, 0) <= 64", "dynamic_dim(y, 0) == 2 * dynamic_dim(x, 0) + 1"]


def test_user_form_of_a_classic_spec_is_classic_constraints() -> None:
    x = torch.randn(4, 8)
    inputs = Inputs.bind(lambda x: x, (x,), None)
    spec = from_constraints(inputs, [dynamic_dim(x, 0) <= 16])
    form = user_form(spec, inputs)
    assert [c.text for c in form] == ["dynamic_dim(x, 0) >= 2", "dynamic_dim(x, 0) <= 16"]


@pytest.fixture(scope="module")
def exporter() -> Exporter:
    return view_by_4_exporter()


def test_an_exporter_is_a_re_exporter(exporter: Exporter) -> None:
    def takes(r: ReExporter) -> tuple[Any, ...]:
        return r.args

    assert takes(exporter)[0].shape == (3, 8) and exporter.kwargs is None


def test_verify_re_exports_the_fix_as_the_user_would(exporter: Exporter, fixes: SuggestedFixes) -> None:
    program = verify(fixes.fixed, fixes.inputs, exporter)
    assert isinstance(program, SymshapeProgram)
    assert program.symshape.ranges == {"x.size(0)": (1, None), "x.size(1)": (4, None)}


def test_verify_raises_what_export_raises(exporter: Exporter) -> None:
    trace = divisible_trace()
    with pytest.raises(ConstraintViolationError, match="x.size\\(1\\) must be divisible by 4"):
        verify(FixedSpec(trace.spec, (), ()), trace.inputs, exporter)


def test_offered_emits_no_symshape_warning(exporter: Exporter) -> None:
    spec = exporter.parse({"x": {0: Dim("b", min=1)}}, classic=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SymshapeWarning)
        program = offered(exporter, spec)
    assert program.symshape.ranges == {"x.size(0)": (1, None)}
