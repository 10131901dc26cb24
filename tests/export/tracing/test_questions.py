"""``export.tracing.questions``: the bridge's record of which question was asked where.

Fast: the questions are asked through the real bridge by ``trace_builder`` from synthetic
sites (no torch.export), or handed to a :class:`Questions` directly with a synthetic frame.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
import sympy
import torch
from torch.export import Dim

from export import _torch_compat as tc
from export.tracing.questions import Questions
from export.tracing.trace import BranchNote
from shapes.spec import DimDecl, InputDim, Spec
from solver import Solver
from trace_builder import _CHECK_FRAME, TraceBuilder, call_from, torch_site, user_site

GROUPING = torch_site("torch/_refs/__init__.py", "_reshape_view_helper_core_alg", "if length == a_.shape[idx]:", 4170)
SQUEEZE = torch_site("torch/_refs/__init__.py", "squeeze", "if a.shape[idx] == 1:", 3000)  # in no table
LAYOUT_SOURCE = "def forward(self, h):\n    if h.shape[0] >= 64:\n        h = h.contiguous()\n    return h\n"


def _builder(**kw: Any) -> TraceBuilder:
    return TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b"), 1: Dim("s")}}, **kw)


def test_a_hard_question_records_its_site_and_answer() -> None:
    b = _builder()
    assert b.ask("x.size(0) >= 3", site=user_site("if x.shape[0] >= 3:", line=12, function="step")) is True
    trace = b.trace()
    rel = trace.convert(b.question("x.size(0) >= 3"))
    assert trace.hard == {rel}
    assert trace.answers == {rel: True}
    [site] = trace.sites[rel]
    assert (site.line, site.function, site.code, site.detail) == (12, "step", "if x.shape[0] >= 3:", "")


def test_one_question_asked_at_two_sites_keeps_both() -> None:
    b = _builder()
    for line in (5, 9):
        b.ask("x.size(1) > 4", site=user_site("if x.shape[1] > 4:", line=line))
    trace = b.trace()
    [rel] = trace.hard
    assert sorted(s.line for s in trace.sites[rel]) == [5, 9]


@pytest.mark.parametrize("site, question, neutral", [
    (GROUPING, "x.size(1) // 4 == 1", True),  # a value-neutral torch place, a derived size's 0/1 question
    (SQUEEZE, "x.size(1) // 4 == 1", False),  # a place in no table: a guard
    (GROUPING, "x.size(1) // 4 == 2", False),  # not a 0/1 question
    (GROUPING, "x.size(1) == 1", False),  # plain dim, decided by the >= 2 floor: zero_one judges it
])
def test_neutral_questions(site: Any, question: str, neutral: bool) -> None:
    b = _builder()
    said = b.ask(question, site=site)
    trace = b.trace()
    rel = trace.convert(b.question(question))
    assert (said is tc.NEUTRAL) is neutral
    assert (rel in trace.neutral) is neutral
    if neutral:
        assert [(s.function, s.line) for s in trace.neutral[rel]] == [("_reshape_view_helper_core_alg", 4170)]
        assert not any(f.reason.kind == "guard" for f in trace.solver.facts)


def test_a_layout_only_branch_is_recorded_with_its_answer() -> None:
    site = user_site("", line=2, source=LAYOUT_SOURCE, locals={"self": None, "h": torch.randn(3, 8)})
    b = _builder()
    assert b.ask("x.size(0) >= 64", site=site) is tc.NEUTRAL
    trace = b.trace()
    [(rel, sites)] = trace.layout_branches.items()
    assert rel == trace.convert(b.question("x.size(0) >= 64"))
    [(where, answer)] = sites
    assert (where.line, where.code, answer) == (2, "if h.shape[0] >= 64:", False)


def test_the_layout_rule_off_makes_it_a_guard() -> None:
    site = user_site("", line=2, source=LAYOUT_SOURCE, locals={"self": None, "h": torch.randn(3, 8)})
    b = _builder(layout_branches=False)
    assert b.ask("x.size(0) >= 64", site=site) is False
    trace = b.trace()
    assert not trace.layout_branches
    assert [trace.text(f.rel) for f in trace.solver.facts if f.reason.kind == "guard"] == ["x.size(0) < 64"]


@pytest.mark.parametrize("question, site, notes", [
    ("x.size(0) == 1", user_site("if x.shape[0] == 1:"), [(False, "model.py:10", "if x.shape[0] == 1:")]),
    ("x.size(0) > 2", user_site("if x.shape[0] > 2:"), [(True, "model.py:10", "if x.shape[0] > 2:")]),
    ("x.size(0) == 3", user_site("if x.shape[0] == 3:"), []),  # not 0, 1 or 2
    ("x.size(0) == 1", SQUEEZE, []),  # torch's line, not the user's
])
def test_branch_notes(question: str, site: Any, notes: list[tuple[bool, str, str]]) -> None:
    b = _builder()
    b.ask(question, site=site)
    b.ask(question, site=site)  # asked twice: noted once
    trace = b.trace()
    assert [(n.answer, n.origin, n.code) for n in trace.branch_notes] == notes
    assert all(isinstance(n, BranchNote) and n.question == trace.convert(b.question(question))
               for n in trace.branch_notes)


@pytest.mark.parametrize("spec, size, notes", [
    ({0: Dim.AUTO}, 1, ["x.size(0) (Dim.AUTO) became static 1: its example size is 1, and torch never keeps "
                        "sizes 0 and 1 dynamic; use an example of size >= 2 to keep it dynamic."]),
    ({0: Dim.AUTO}, 0, ["x.size(0) (Dim.AUTO) became static 0: its example size is 0, and torch never keeps "
                        "sizes 0 and 1 dynamic; use an example of size >= 2 to keep it dynamic."]),
    ({0: Dim.AUTO}, 3, []),
    ({0: Dim.DYNAMIC}, 1, []),  # judged as a violation elsewhere, not noted
    (None, 1, []),  # static
])
def test_zero_one_notes_of_an_auto_dim(spec: Any, size: int, notes: list[str]) -> None:
    b = TraceBuilder("x", (torch.randn(size, 8),), {"x": spec} if spec else None)
    assert list(b.trace().zero_one_notes) == notes


def _questions() -> Questions:
    return Questions(Solver(), Spec("none", (), ()), {}, {}, lambda expr: expr)


def test_a_users_torch_check_is_a_user_check() -> None:
    q = _questions()
    n = sympy.Symbol("n", integer=True)
    frame = call_from([user_site("torch._check(n >= 2)"), _CHECK_FRAME], sys._getframe)
    raw = q.hard_question(sympy.Ge(n, 2), True, q.asking(frame))
    assert raw is not None and raw[1:] == (10, "forward", "")  # (file, line, function, detail)
    assert q.is_user_check(sympy.Ge(n, 2))
    plain = call_from([user_site("if n >= 3:")], sys._getframe)
    q.hard_question(sympy.Ge(n, 3), False, q.asking(plain))
    assert not q.is_user_check(sympy.Ge(n, 3))
    assert q.hard == {sympy.Ge(n, 2), sympy.Ge(n, 3)} and q.answers == {sympy.Ge(n, 2): True, sympy.Ge(n, 3): False}


def test_the_site_of_an_asking_is_walked_once() -> None:
    q = _questions()
    asking = q.asking(call_from([user_site("if x.shape[0] > 1:", line=3)], sys._getframe))
    first = asking.site()
    assert first[0] is not None and first[0][1] == 3 and first[1] is False
    assert asking.site() is first  # the frame is dropped: the same answer, no second walk


@pytest.mark.parametrize("api, expected", [("guard_bool", True), ("guard_size_oblivious", False)])
def test_neutral_is_only_for_its_apis(api: str, expected: bool) -> None:
    n = sympy.Symbol("n", integer=True, positive=True)
    spec = Spec("modern", (), (DimDecl(InputDim("x", 0), "auto", None, "Dim.AUTO"),))
    q = Questions(Solver(), spec, {}, {}, lambda expr: expr)
    asking = q.asking(call_from([GROUPING], sys._getframe))
    assert q.neutral(sympy.Eq(sympy.floor(n / 4), 1), False, api, asking) is expected
