"""Small traces shared by the step modules' own test files (``tests/export/<pkg>/test_<module>.py``),
built by hand through the real bridge (``trace_builder``, no torch.export), and the report's
JSON schema (docs/report.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch.export import Dim

from export.exporter import Exporter
from export.tracing.trace import Trace
from trace_builder import TraceBuilder, user_site

__all__ = ["REPORT_SCHEMA", "PINNED_LINE", "pinned_trace", "divisible_trace", "problem_of", "ViewBy4",
           "view_by_4_exporter"]

REPORT_SCHEMA: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text(encoding="utf-8"))
"""The report document's schema (every document any status gives must follow it)."""

PINNED_LINE = "if x.shape[0] == 6:"


def pinned_trace() -> Trace:
    """``x`` (6, 3) with ``{0: Dim.DYNAMIC, 1: Dim("s")}``; ``model.py:10`` asks
    ``x.size(0) == 6`` (:data:`PINNED_LINE`): the model pins the Dim.DYNAMIC dim to 6."""
    b = TraceBuilder("x", (torch.randn(6, 3),), {"x": {0: Dim.DYNAMIC, 1: Dim("s")}})
    b.ask("x.size(0) == 6", site=user_site(PINNED_LINE))
    return b.trace()


def divisible_trace(spec: Any = None) -> Trace:
    """``x`` (3, 8) with ``{0: Dim("b"), 1: Dim("s")}`` (or ``spec``); ``model.py:14`` asks
    ``x.size(1) % 4 == 0`` (``x.view(-1, 4)``): a guard the named ``s`` does not imply."""
    b = TraceBuilder("x", (torch.randn(3, 8),), spec or {"x": {0: Dim("b"), 1: Dim("s")}})
    b.ask("x.size(1) % 4 == 0", site=user_site("y = x.view(x.shape[0], -1, 4)", line=14))
    return b.trace()


def problem_of(trace: Trace) -> dict[str, Any]:
    """The trace's solver problem as the JSON data a program or an error carries."""
    text = trace.problem()
    assert text is not None
    return json.loads(text)  # type: ignore[no-any-return]


class ViewBy4(torch.nn.Module):
    """``x.view(b, -1, 4)``: a dim that must be divisible by 4, for the fixes' real exports."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], -1, 4)


def view_by_4_exporter() -> Exporter:
    """An exporter of :class:`ViewBy4` on a 3 x 8 example (each test module builds its own: a
    session is one export's)."""
    return Exporter.of(ViewBy4(), (torch.randn(3, 8),))


class PositionTable(torch.nn.Module):
    """A learned position table of 16 rows (BERT's ``position_ids[:, :seq]``): seq <= 16."""

    def __init__(self) -> None:
        super().__init__()
        self.pos = torch.nn.Parameter(torch.randn(16, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.pos[: x.shape[1]]
