"""The warnings on user branches that compare a dim with 0, 1 or 2 (``export.program.branches``),
on traces built by hand (``trace_builder``): no torch.export."""

from __future__ import annotations

import torch
from torch.export import Dim

from export.program.branches import branch_warnings, layout_notes
from export.program.floor_policy import floor_policy
from export.tracing.trace import Trace
from trace_builder import TraceBuilder, torch_site, user_site

BRANCH = user_site("if x.shape[0] == 1:", line=14)
GROUPING = torch_site("torch/_refs/__init__.py", "_reshape_view_helper_core_alg", "if length == a_.shape[idx]:", 4170)


def _warnings(trace: Trace) -> tuple[str, ...]:
    return branch_warnings(trace, floor_policy(trace).needed)


def test_a_user_branch_the_floor_decided_is_one_warning_at_its_line() -> None:
    b = TraceBuilder("x", (torch.randn(4, 3),), {"x": {0: Dim("b")}})
    b.ask("x.size(0) == 1", site=BRANCH)
    b.ask("x.size(0) == 1", site=BRANCH)  # asked again at the same line: one note
    (warning,) = _warnings(b.trace())
    assert warning.startswith("x.size(0) == 1 was decided False at model.py:14: if x.shape[0] == 1:")
    assert "only because export assumes x.size(0) >= 2" in warning


def test_no_warning_when_torch_asked_it_or_the_example_decided_it() -> None:
    b = TraceBuilder("x", (torch.randn(4, 3),), {"x": {0: Dim("b")}})
    b.ask("x.size(0) == 1", site=GROUPING, user=BRANCH)  # torch's line asked it: no user branch
    b.ask("x.size(0) == 4", site=user_site("if x.shape[0] == 4:"))  # not 0/1/2: no note
    trace = b.trace()
    assert trace.branch_notes == () and _warnings(trace) == ()


def test_no_warning_when_the_floor_did_not_decide_it() -> None:
    b = TraceBuilder("x", (torch.randn(4, 3),), {"x": {0: Dim("b")}}, floors=False)
    b.ask("x.size(0) == 1", site=BRANCH)  # a fact, not the floor
    trace = b.trace()
    assert len(trace.branch_notes) == 1 and _warnings(trace) == ()


def test_two_inputs_of_one_dim_at_one_line_warn_once() -> None:
    b = TraceBuilder("x, y", (torch.randn(4, 3), torch.randn(4, 3)), {"x": {0: Dim("b")}, "y": {0: Dim("b")}})
    line = user_site("if x.shape[0] == 1 or y.shape[0] == 1:", line=20)
    b.ask("x.size(0) == 1", site=line)
    b.ask("y.size(0) == 1", site=line)
    assert len(_warnings(b.trace())) == 1


def test_a_layout_only_branch_is_an_assumption_note() -> None:
    source = "def forward(self, h):\n    if h.shape[0] >= 64:\n        h = h.contiguous()\n    return h\n"
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b")}})
    b.ask("x.size(0) >= 64", site=user_site("", line=2, source=source, locals={"self": None, "h": torch.randn(2)}))
    (note,) = layout_notes(b.trace())
    assert note.startswith("x.size(0) >= 64 is False in the example; every size runs that branch at model.py:2")
