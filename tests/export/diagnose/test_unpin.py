"""``export.diagnose.unpin``: a fix that pins a declared dim static only because its example puts a
derived size at 1 gives way to the fix found at a larger example.

The refusals are fast (hand-built traces, no re-export); the unpinned fix runs one tiny model
(``x.view(b, -1, 3).squeeze(1)``) through a real :class:`export.exporter.Exporter`."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

from export.diagnose.unpin import unpinned
from export.exporter import Exporter
from export.fixes.suggested import SuggestedFixes
from export.fixes.verify import suggest_fixes
from shapes.spec import InputDim
from trace_builder import TraceBuilder, user_site


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], -1, 3).squeeze(1)


def _hand_trace(*questions: str) -> Any:
    b = TraceBuilder("x", (torch.randn(2, 3),), {"x": {1: Dim("K")}})
    for question in questions:
        b.ask(question, site=user_site("return x.view(x.shape[0], -1, 3).squeeze(1)"))
    return b.trace()


VIEW_AT_ONE = ("x.size(1) % 3 == 0", "x.size(1) // 3 == 1")  # the view's -1 is 1: K static 3


@pytest.mark.parametrize("questions", [VIEW_AT_ONE, ("x.size(1) == 3",)])
def test_nothing_to_unpin_without_an_exporter(questions: tuple[str, ...]) -> None:
    trace = _hand_trace(*questions)
    fixes = suggest_fixes(trace, None)
    assert fixes.fixed.spec.decl(InputDim("x", 1)) is None  # the static fix
    assert unpinned(trace, None, fixes) is None


@pytest.fixture(scope="module")
def exporter() -> Exporter:
    return Exporter.of(Model(), (torch.randn(2, 3),))


def test_a_dim_pinned_by_its_own_value_is_not_traced_again(exporter: Exporter) -> None:
    trace = _hand_trace("x.size(1) == 3")  # x.size(1) == 3 itself: no derived size at 1
    assert unpinned(trace, exporter, suggest_fixes(trace, None)) is None


def test_a_fix_that_pins_nothing_is_kept(exporter: Exporter) -> None:
    b = TraceBuilder("x", (torch.randn(2, 3),), {"x": {1: Dim("K")}})
    b.ask("x.size(1) % 3 == 0", site=user_site("return x.view(x.shape[0], -1, 3)"))
    trace = b.trace()
    fixes = suggest_fixes(trace, None)
    assert fixes.fixed.spec.decl(InputDim("x", 1)) is not None  # K = 3 * _K: dynamic
    assert unpinned(trace, exporter, fixes) is None


def test_the_larger_examples_fix_keeps_the_dim_dynamic(exporter: Exporter) -> None:
    spec = exporter.parse({"x": {1: Dim("K")}}, classic=False)
    _, trace = exporter.trace(spec)
    static = suggest_fixes(trace, None)
    assert static.fixed.spec.decl(InputDim("x", 1)) is None
    found = unpinned(trace, exporter, static)
    assert found is not None
    fixes, note = found
    assert isinstance(fixes, SuggestedFixes) and fixes.verified and fixes.program is not None
    assert fixes.modern == "from torch.export import Dim\n\n_K = Dim('_K', min=1)\ndynamic_shapes = {'x': {1: 3 * _K}}"
    assert note == ("(this fix was found at a larger example, x.size(1) = 6 (example 3): the example puts a size the "
                    "model derives at 1; it re-exports with the example as given)")
    assert fixes.inputs is trace.inputs
    assert fixes.program.symshape.ranges == {"x.size(1)": (3, None)}
