"""``export.fixes.verify``: the solver's fix for a failing trace, and the static fix of 0/1
dims, verified by re-exporting what ``apply()`` returns.

Fast without an exporter (hand-built traces: nothing re-exported, nothing verified); the
verified rows re-export one tiny model (``x.view(b, -1, 4)``) through a real Exporter."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

from export.exporter import Exporter
from export.fixes.suggested import SuggestedFixes
from export.fixes.verify import fix_spec, static_fixes, suggest_fixes
from export.program.exported import SymshapeProgram
from shapes.printing import to_python
from shapes.spec import InputDim
from step_cases import divisible_trace
from trace_builder import TraceBuilder, user_site
from step_cases import view_by_4_exporter

X0, X1 = InputDim("x", 0), InputDim("x", 1)


def test_fix_spec_of_a_divisibility() -> None:
    records, fixed = fix_spec(divisible_trace())
    assert [type(f).__name__ for f in records] == ["RangeFix", "RangeFix", "DivisibleFix"]
    assert fixed.checks == ()
    assert {str(d.dim): str(d.expr) for d in fixed.spec.decls} == {"x.size(0)": "b", "x.size(1)": "4*_s"}


def test_a_relation_no_dim_can_say_is_a_check() -> None:
    b = TraceBuilder("x", (torch.randn(4, 8),), {"x": {0: Dim("a"), 1: Dim("b")}})
    b.ask("x.size(0) * x.size(1) <= 64", site=user_site("if x.numel() <= 64:"))
    trace = b.trace()
    fixes = suggest_fixes(trace, None)
    assert [to_python(c, trace.names) for c in fixes.fixed.checks] == ["x.size(0) * x.size(1) <= 64"]
    assert fixes.checks == ("torch._check(x.shape[0] * x.shape[1] <= 64)",)
    assert not fixes.verified and not fixes.verified_with_checks and not fixes.checks_kept
    assert "Also add, in the model, where the constraint arises (apply() cannot add these):" in fixes.render()


def test_static_dims_join_the_fix_at_their_example_sizes() -> None:
    trace = divisible_trace()
    fixes = suggest_fixes(trace, None, static=[X0])
    assert fixes.fixed.spec.decl(X0) is None and str(fixes.fixed.spec.decl(X1).expr) == "4*_s"  # type: ignore[union-attr]
    assert [(type(f).__name__, getattr(f, "value", None)) for f in fixes][-1] == ("SpecializeFix", 3)


def test_static_fixes_without_an_exporter() -> None:
    trace = divisible_trace()
    fixes = static_fixes(trace, None, [X1], larger={"x.size(1)": 12})
    assert fixes.fixed.spec.decl(X1) is None and fixes.fixed.spec.decl(X0) is not None
    assert [(f.symbol, f.value) for f in fixes] == [(trace.dim_syms[X1], 8)]  # the example size
    assert not fixes.verified and fixes.program is None and fixes.larger_example == {"x.size(1)": 12}
    assert fixes.modern == "from torch.export import Dim\n\nb = Dim('b')\ndynamic_shapes = {'x': {0: b}}"
    assert static_fixes(trace, None, [X1], values=[5]).records.items[0].value == 5


@pytest.fixture(scope="module")
def exporter() -> Exporter:
    return view_by_4_exporter()


def test_the_fix_is_verified_by_re_exporting(exporter: Exporter) -> None:
    _, trace = exporter.trace(exporter.parse({"x": {0: Dim("b"), 1: Dim("s")}}, classic=False))
    fixes = suggest_fixes(trace, exporter)
    assert isinstance(fixes, SuggestedFixes) and fixes.verified
    assert isinstance(fixes.program, SymshapeProgram)
    assert fixes.program.symshape.ranges == {"x.size(0)": (1, None), "x.size(1)": (4, None)}
    assert "(not verified" not in fixes.render()
    out = fixes.program.module()(torch.randn(2, 12))
    assert out.shape == (2, 3, 4)


def test_the_static_fix_is_verified_by_re_exporting(exporter: Exporter) -> None:
    _, trace = exporter.trace(exporter.parse({"x": {0: Dim("b"), 1: Dim("s")}}, classic=False))
    fixes = static_fixes(trace, exporter, [X1])
    assert fixes.verified and fixes.program is not None
    assert fixes.program.symshape.ranges == {"x.size(0)": (1, None)}
    assert fixes.records.verified is True


def test_a_fix_that_does_not_re_export_is_not_verified(exporter: Exporter) -> None:
    _, trace = exporter.trace(exporter.parse({"x": {0: Dim("b"), 1: Dim("s")}}, classic=False))
    fixes = static_fixes(trace, exporter, [X0], values=[3])  # x.size(1) stays Dim("s"): not divisible by 4
    assert not fixes.verified and fixes.program is None
