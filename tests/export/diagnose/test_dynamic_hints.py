"""``export.diagnose.dynamic_hints``: a ``Dim.DYNAMIC`` the model pins to one value is refused.

Fast: hand-built traces (``trace_builder``), no re-export (``exporter=None``: the fix is
rendered, not verified)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

from export.diagnose.dynamic_hints import pinned_dynamic_dims, specialized_error
from export.errors import ConstraintViolationError
from shapes.spec import InputDim
from step_cases import PINNED_LINE, pinned_trace
from trace_builder import TraceBuilder, user_site

MESSAGE = """\
Constraints violated: the model needs more than the declared dynamic shapes guarantee.
  1. x.size(0) is declared Dim.DYNAMIC, but the model specializes it to 6; declare it static 6 (or Dim.AUTO)
     at model.py:10: x.size(0) == 6

Suggested fix (Dim form):
    from torch.export import Dim

    s = Dim('s')
    dynamic_shapes = {'x': {1: s}}

Suggested fix (classic form):
    def specify_constraints(x):
        return [
            dynamic_dim(x, 1),
        ]

(not verified: re-exporting with this fix did not succeed)"""


def _trace(spec: Any, size: int = 6, question: str | None = "x.size(0) == 6", answer: bool | None = None) -> Any:
    b = TraceBuilder("x", (torch.randn(size, 3),), {"x": spec})
    if question:
        b.ask(question, answer, site=user_site(PINNED_LINE))
    return b.trace()


@pytest.mark.parametrize("spec, size, question, pinned", [
    ({0: Dim.DYNAMIC}, 6, "x.size(0) == 6", [("x.size(0)", 6)]),
    ({0: Dim.DYNAMIC}, 6, "x.size(0) <= 6", []),  # bounded, not pinned
    ({0: Dim.DYNAMIC(min=2, max=6)}, 6, "x.size(0) >= 6", [("x.size(0)", 6)]),  # a range that closed
    ({0: Dim.AUTO}, 6, "x.size(0) == 6", []),  # AUTO may specialize
    ({0: Dim.DYNAMIC}, 1, None, []),  # a 0/1 example: judged with the specializations
    ({0: Dim.DYNAMIC}, 6, None, []),
])
def test_pinned_dynamic_dims(spec: Any, size: int, question: str | None, pinned: list[tuple[str, int]]) -> None:
    assert [(str(d.dim), v) for d, v in pinned_dynamic_dims(_trace(spec, size, question))] == pinned


def test_the_error_golden() -> None:
    err = specialized_error(pinned_trace(), None)
    assert isinstance(err, ConstraintViolationError)
    assert str(err) == MESSAGE
    [cause] = err.causes
    assert (cause.dims, cause.origin, cause.kind) == (("x.size(0)",), "model.py:10", "pinned")
    assert [f.reason.kind for f in cause.facts] == ["guard"]  # the trace's facts, not the spec's
    assert err.fixes is not None and err.fixes.fixed.spec.decl(InputDim("x", 0)) is None  # made static
    assert err.fixes.verified is False


def test_two_pinned_dims_are_numbered() -> None:
    b = TraceBuilder("x", (torch.randn(6, 4),), {"x": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}})
    b.ask("x.size(0) == 6", site=user_site(PINNED_LINE))
    b.ask("x.size(1) == 4", site=user_site("if x.shape[1] == 4:", line=11))
    err = specialized_error(b.trace(), None)
    assert err is not None
    assert [line for line in str(err).splitlines() if line.startswith("  ")][:4] == [
        "  1. x.size(0) is declared Dim.DYNAMIC, but the model specializes it to 6; declare it static 6 (or Dim.AUTO)",
        "     at model.py:10: x.size(0) == 6",
        "  2. x.size(1) is declared Dim.DYNAMIC, but the model specializes it to 4; declare it static 4 (or Dim.AUTO)",
        "     at model.py:11: x.size(1) == 4"]


def test_no_error_when_nothing_is_pinned() -> None:
    assert specialized_error(_trace({0: Dim.DYNAMIC}, question="x.size(0) > 3"), None) is None


def test_a_pinned_causes_code_is_the_lines_text() -> None:
    err = specialized_error(pinned_trace(), None)
    assert err is not None and err.causes[0].code == PINNED_LINE
