"""Which guards block an export (``export.diagnose.violations.blocking_violations``), which of
them are causes (``export.diagnose.redundant.irredundant``) and how they group
(``causes_of``), on traces built by hand (``trace_builder``): no torch.export."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

from export.diagnose.redundant import irredundant
from export.diagnose.violations import SPECIALIZED, blocking_violations, causes_of
from export.tracing.trace import Trace
from trace_builder import TraceBuilder, torch_site, user_site

RESHAPE = user_site("x = x.reshape(b, s // 4, 4)", line=26)
ADD = user_site("z = x + y", line=30)
CHECK = torch_site("torch/_refs/__init__.py", "_reshape_view_helper", "torch._check(", 4268)


def _blocking(spec: dict[str, Any], *questions: tuple[str, Any], shapes: tuple[tuple[int, ...], ...] = ((3, 8), (3, 8)),
              api: str = "guard_bool") -> tuple[list[str], Trace]:
    b = TraceBuilder("x, y", tuple(torch.randn(*s) for s in shapes), spec)
    for q, site in questions:
        b.ask(q, api=api, site=site)
    trace = b.trace()
    return sorted(trace.text(f.rel) for f in blocking_violations(trace)), trace


@pytest.mark.parametrize("spec, question, blocks", [
    ({"x": {1: Dim("s")}}, "x.size(1) % 4 == 0", True),  # a declared Dim: the spec does not say it
    ({"x": {1: Dim("s")}}, "x.size(1) <= 64", True),
    ({"x": {1: Dim("s", max=64)}}, "x.size(1) <= 64", False),  # the spec implies it: no fact at all
    ({"x": {1: Dim.AUTO}}, "x.size(1) % 4 == 0", False),  # Dim.AUTO absorbs what the trace needs
    ({"x": {1: Dim.DYNAMIC}}, "x.size(1) % 4 == 0", False),
    ({"x": {0: Dim("a")}, "y": {0: Dim("b")}}, "x.size(0) == y.size(0)", True),
    ({"x": {0: Dim("a")}, "y": {0: Dim.AUTO}}, "x.size(0) == y.size(0)", False),  # the AUTO dim takes a's value
    ({"x": {0: Dim("a")}, "y": {0: Dim.AUTO}}, "2 * x.size(0) == 2 * y.size(0)", False),  # x == y: see below
    ({"x": {0: Dim("a")}, "y": {0: Dim.AUTO}}, "x.size(0) <= y.size(0)", False),  # y grows without a max
    ({"x": {0: Dim("a")}, "y": {0: Dim.AUTO(max=8)}}, "x.size(0) <= y.size(0)", True),  # a may pass 8
    ({"x": {0: Dim("a", max=8)}, "y": {0: Dim.AUTO(max=8)}}, "x.size(0) <= y.size(0)", False),
])
def test_a_guard_blocks_only_on_what_the_user_declared(spec: dict[str, Any], question: str, blocks: bool) -> None:
    got, _ = _blocking(spec, (question, RESHAPE))
    assert bool(got) is blocks


# An equality is read in its normal form (the gcd of its coefficients divided out, as the solver
# and shapes.relation.as_difference read it): torch asks Eq(2*s0, 2*s1) for two cat((t, t))
# added together, which an AUTO dim absorbs as it absorbs Eq(s0, s1). The AUTO dim adapts when
# it has coefficient +-1 in that form, whatever the declared dims are; otherwise (y = x / 2 needs
# an even x) the declared dim is restricted. tests/e2e/test_auto_normal_form.py checks the rows
# marked "e2e" against torch.export on a real model.
A, B, AUTO = Dim("a"), Dim("b"), Dim.AUTO


@pytest.mark.parametrize("spec, question, shapes, blocks", [
    ({"x": {0: A}, "y": {0: AUTO}}, "2 * x.size(0) == 2 * y.size(0)", ((3, 8), (3, 8)), False),  # e2e
    ({"x": {0: AUTO}, "y": {0: A}}, "2 * x.size(0) == 2 * y.size(0)", ((3, 8), (3, 8)), False),
    ({"x": {0: AUTO}, "y": {0: AUTO}}, "2 * x.size(0) == 2 * y.size(0)", ((3, 8), (3, 8)), False),  # e2e
    ({"x": {0: A}, "y": {0: B}}, "2 * x.size(0) == 2 * y.size(0)", ((3, 8), (3, 8)), True),  # e2e: two declared
    ({"x": {0: AUTO}, "y": {0: B}}, "3 * x.size(0) == 6 * y.size(0)", ((6, 8), (3, 8)), False),  # x == 2*y; e2e
    ({"x": {0: A}, "y": {0: AUTO}}, "3 * x.size(0) == 6 * y.size(0)", ((6, 8), (3, 8)), True),  # y == x/2; e2e
    ({"x": {0: AUTO}, "y": {0: B}}, "x.size(0) == 2 * y.size(0)", ((6, 8), (3, 8)), False),  # e2e
    ({"x": {0: A}, "y": {0: AUTO}}, "x.size(0) == 2 * y.size(0)", ((6, 8), (3, 8)), True),  # e2e
    ({"x": {0: A}, "y": {0: AUTO}}, "2 * x.size(0) + 2 == 2 * y.size(0)", ((3, 8), (4, 8)), False),  # y == x+1; e2e
    ({"x": {0: A}, "y": {0: AUTO}}, "4 * x.size(0) + 2 == 2 * y.size(0)", ((3, 8), (7, 8)), False),  # y == 2x+1
    ({"x": {0: AUTO}, "y": {0: B}}, "4 * x.size(0) + 2 == 2 * y.size(0)", ((3, 8), (7, 8)), True),  # x == (y-1)/2
    ({"x": {0: AUTO}}, "2 * x.size(0) == 6", ((3, 8), (3, 8)), False),  # x == 3: the AUTO dim goes static
    ({"x": {0: A}}, "2 * x.size(0) == 6", ((3, 8), (3, 8)), True),
])
def test_an_auto_dim_absorbs_an_equality_in_its_normal_form(spec: dict[str, Any], question: str,
                                                            shapes: tuple[tuple[int, ...], ...], blocks: bool) -> None:
    got, _ = _blocking(spec, (question, ADD), shapes=shapes)
    assert bool(got) is blocks, got


def test_torch_s_own_assumptions_never_block() -> None:
    got, trace = _blocking({"x": {0: Dim("a"), 1: Dim("s")}})  # floors and positivity only
    assert got == [] and any(f.reason.kind == "trace_assumption" for f in trace.solver.facts)


def test_a_data_dependent_check_is_not_blocking() -> None:
    b = TraceBuilder("x, y", (torch.randn(3, 8), torch.randn(3, 8)), {"x": {0: Dim("a")}})
    b.unbacked("u0")
    assert b.ask("u0 <= x.size(0)", api="runtime_assert", site=user_site("torch._check(n <= x.shape[0])")) is True
    trace = b.trace()
    assert blocking_violations(trace) == []
    assert [trace.text(f.rel) for f in trace.solver.facts if f.reason.kind == "guard"] == ["u0 <= x.size(0)"]


def test_a_declared_dim_specialized_by_a_size_1_example_blocks() -> None:
    got, trace = _blocking({"x": {0: Dim("a")}, "y": {0: Dim.AUTO}}, shapes=((1, 8), (1, 8)))
    assert got == ["x.size(0) == 1"]
    (cause,) = causes_of(blocking_violations(trace), trace)
    assert cause.kind == SPECIALIZED and cause.dims == ("x.size(0)",)


def test_one_line_s_guards_are_one_cause_at_that_line() -> None:
    _, trace = _blocking({"x": {0: Dim("a"), 1: Dim("s")}, "y": {0: Dim("b")}},
                         ("x.size(1) % 4 == 0", RESHAPE), ("x.size(1) >= 8", RESHAPE), ("x.size(0) == y.size(0)", ADD))
    causes = causes_of(blocking_violations(trace), trace)
    by_origin = {c.origin: c for c in causes}
    assert set(by_origin) == {"model.py:26", "model.py:30"}
    assert by_origin["model.py:26"].dims == ("x.size(1)",) and len(by_origin["model.py:26"].facts) == 2
    assert "divisible by 4" in by_origin["model.py:26"].constraint
    assert by_origin["model.py:26"].describe().endswith("at model.py:26: x = x.reshape(b, s // 4, 4)")


def test_a_guard_asked_in_torch_points_at_the_user_s_line_above_it() -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {1: Dim("s")}})
    b.ask("x.size(1) % 4 == 0", site=CHECK, user=RESHAPE)
    trace = b.trace()
    (cause,) = causes_of(blocking_violations(trace), trace)
    assert (cause.origin, cause.code) == ("model.py:26", "x = x.reshape(b, s // 4, 4)")


# -- redundant causes -----------------------------------------------------------------------------

@pytest.mark.parametrize("questions, kept", [
    # (the weaker asked first: asked after the stronger, the facts settle it and it is no fact at all)
    # the remainder is 0 once the sizes are equal: one cause, the equality
    ([("x.size(0) % y.size(0) == 0", RESHAPE), ("x.size(0) == y.size(0)", ADD)], ["x.size(0) == y.size(0)"]),
    ([("x.size(1) % 4 == 0", ADD), ("x.size(1) % 8 == 0", RESHAPE)], ["x.size(1) % 8 == 0"]),
    ([("x.size(1) >= 6", ADD), ("x.size(1) >= 8", RESHAPE)], ["x.size(1) >= 8"]),
    ([("x.size(1) % 4 == 0", RESHAPE), ("x.size(1) <= 64", ADD)], ["x.size(1) % 4 == 0", "x.size(1) <= 64"]),
    ([("x.size(1) % 4 == 0", RESHAPE)], ["x.size(1) % 4 == 0"]),
])
def test_a_cause_the_others_imply_is_dropped(questions: list[tuple[str, Any]], kept: list[str]) -> None:
    _, trace = _blocking({"x": {0: Dim("a"), 1: Dim("s")}, "y": {0: Dim("b")}}, *questions)
    blocking = blocking_violations(trace)
    assert len(blocking) == len(questions)
    assert sorted(trace.text(f.rel) for f in irredundant(blocking, trace)) == kept


def test_a_guard_the_facts_already_imply_is_no_new_violation() -> None:
    _, trace = _blocking({"x": {1: Dim("s")}}, ("x.size(1) % 8 == 0", RESHAPE), ("x.size(1) % 4 == 0", ADD))
    assert [trace.text(f.rel) for f in blocking_violations(trace)] == ["x.size(1) % 8 == 0"]


def test_a_specialization_is_never_dropped_as_redundant() -> None:
    _, trace = _blocking({"x": {0: Dim("a"), 1: Dim("s")}}, ("x.size(1) % 4 == 0", RESHAPE), shapes=((1, 8), (1, 8)))
    blocking = blocking_violations(trace)
    assert sorted(trace.text(f.rel) for f in irredundant(blocking, trace)) == ["x.size(0) == 1", "x.size(1) % 4 == 0"]
