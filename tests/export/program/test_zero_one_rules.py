"""The 0/1 rules of ``export.program.zero_one`` (site evidence, no re-trace) and the answers the
bridge gives at value-neutral places, on traces built by hand (``trace_builder``): each
decision asked at a chosen site, no torch.export. A decision that relied on torch's ``>= 2``
floor is covered only when every site that asked it is in a table; a dim all of whose such
decisions are covered gets the relieved policy (range from 1), the others keep ``[2, ...]``."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

from export import _torch_compat as tc
from export.program.floor_policy import floor_policy
from export.program.zero_one import ZeroOne, zero_one
from export.tracing.sites import Site, justification
from export.tracing.trace import Trace
from trace_builder import Frame, TraceBuilder, recorded_op_site, torch_function_site, torch_site, user_site

REFS, PRIMS, COMMON = "torch/_refs/__init__.py", "torch/_prims/__init__.py", "torch/_prims_common/__init__.py"
SDPA = "transformers/integrations/sdpa_attention.py"

GROUPING = torch_site(REFS, "_reshape_view_helper_core_alg", "if length == a_.shape[idx]:", 4170)
COLLAPSE = torch_site(PRIMS, "_collapse_view_helper", "if shape[idx] != 1:", 1489)
ACCUM = torch_site(REFS, "_reshape_view_helper_core_alg", "if accum != length:", 4199)
CHANGED_TEXT = torch_site(REFS, "_reshape_view_helper_core_alg", "if length == a.shape[idx]:", 4170)  # another torch
OTHER_FUNCTION = torch_site(REFS, "_reshape_view_helper", "if length == a_.shape[idx]:", 4170)
OTHER_FILE = torch_site("torch/_refs/nn/__init__.py", "_reshape_view_helper_core_alg", "if length == a_.shape[idx]:")
SQUEEZE = torch_site(REFS, "squeeze", "if a.shape[idx] == 1:", 3000)  # changes a shape at 1: in no table
USER = user_site("if x.shape[0] == 1:")
USER_SAME_TEXT = user_site("if length == a_.shape[idx]:", function="_reshape_view_helper_core_alg")
CONTIGUOUS = user_site("y = x.contiguous()")


def _trace(*asked: tuple[str, Any]) -> Trace:
    """``x`` of shape (3, 8) with ``Dim("b")``, ``Dim("s")``: each question asked at its site(s)."""
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b"), 1: Dim("s")}})
    for question, sites in asked:
        for site in sites if isinstance(sites, list) else [sites]:
            b.ask(question, site=site)
    return b.trace()


def _range(trace: Trace, z: ZeroOne, dim: str) -> tuple[int | None, int | None]:
    assert z.policy is not None
    sym = next(s for d, s in trace.dim_syms.items() if str(d) == dim)
    return z.policy.final.bounds(sym)


@pytest.mark.parametrize("sites, covered", [
    (GROUPING, True),
    (COLLAPSE, True),
    (ACCUM, True),
    (recorded_op_site("aten.reshape.default"), True),  # the op is a graph node already
    (torch_function_site(torch._C.TensorBase.contiguous), True),
    (CONTIGUOUS, True),  # any line whose only call is .contiguous()
    (USER, False),  # the user's own branch: a different program at 1
    (USER_SAME_TEXT, False),  # the table's line and function, but the user's file
    (CHANGED_TEXT, False),  # the line's text differs (another torch): unknown
    (OTHER_FUNCTION, False),
    (OTHER_FILE, False),
    (SQUEEZE, False),
    (recorded_op_site("aten.squeeze.default"), False),  # a recorded op not listed
    (torch_function_site(torch._C.TensorBase.squeeze), False),
    ([GROUPING, COLLAPSE], True),  # every site covered
    ([GROUPING, USER], False),  # one uncovered site: not covered
    ([CHANGED_TEXT, COLLAPSE], False),
], ids=lambda v: v.function if isinstance(v, Frame) else None)
def test_a_floor_reliant_decision_is_covered_only_at_table_sites(sites: Any, covered: bool) -> None:
    trace = _trace(("x.size(0) == 1", [sites] if isinstance(sites, tuple) else sites))
    z = zero_one(trace)
    (evidence,) = z.evidence
    assert (evidence.dim, evidence.rel) == ("b", "x.size(0) == 1")
    assert evidence.kind == ("site" if covered else "kept")
    assert _range(trace, z, "x.size(0)") == ((1, None) if covered else (2, None))
    assert z.retraces == 0  # no program, no boundary: the site table only
    if covered:
        assert evidence.why and z.covered
    else:
        assert evidence.why == "not in the site table, and no boundary re-trace was run"


def test_a_dim_is_relieved_only_when_all_its_decisions_are_covered() -> None:
    trace = _trace(("x.size(0) == 1", GROUPING), ("x.size(0) != 1", COLLAPSE),  # b: all covered
                   ("x.size(1) == 1", GROUPING), ("x.size(1) > 1", USER))  # s: one left
    z = zero_one(trace)
    assert sorted((e.dim, e.rel, e.kind) for e in z.evidence) == [
        ("b", "x.size(0) != 1", "site"), ("b", "x.size(0) == 1", "site"),
        ("s", "x.size(1) == 1", "site"), ("s", "x.size(1) > 1", "kept")]
    assert _range(trace, z, "x.size(0)") == (1, None) and _range(trace, z, "x.size(1)") == (2, None)
    assert z.policy is not None and {str(k) for k in z.policy.needed} == {"s"}
    assert [str(r) for r in z.policy.needed[trace.solver.root_of(next(iter(z.policy.needed)))]] == ["x_size1 > 1"]
    # the same policy from floor_policy, given what the evidence covered
    direct = floor_policy(trace, z.covered)
    assert {str(k): v for k, v in direct.needed.items()} == {str(k): v for k, v in z.policy.needed.items()}


@pytest.mark.parametrize("question, relies", [
    ("x.size(0) == 1", True),  # False only because of the floor
    ("x.size(0) >= 2", True),
    ("x.size(0) > 1", True),
    ("x.size(0) >= 3", False),  # the example answers True: a new fact, not the floor
    ("x.size(0) == 3", False),
    ("x.size(0) <= 100", False),  # recorded as a fact
])
def test_only_decisions_the_floor_settles_need_evidence(question: str, relies: bool) -> None:
    trace = _trace((question, USER))
    z = zero_one(trace)
    assert bool(z.evidence) is relies
    assert (_range(trace, z, "x.size(0)")[0] == 2) is relies


def test_without_the_floor_nothing_relies_on_it() -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b")}}, floors=False)
    assert b.ask("x.size(0) == 1", site=USER) is False
    trace = b.trace()
    z = zero_one(trace)
    assert z.evidence == () and trace.answered_by_fact  # x.size(0) != 1 became a fact: no assumption needed
    assert _range(trace, z, "x.size(0)") == (2, None)  # (the fact's own bound, not a floor)


def test_a_soft_query_never_needs_the_floor() -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b")}})
    b.ask("x.size(0) == 1", api="guard_or_false", site=USER)
    b.ask("x.size(0) == 1", api="guard_size_oblivious", site=USER)
    trace = b.trace()
    assert not trace.hard and zero_one(trace).evidence == ()


# -- what the bridge answers NEUTRAL at value-neutral places ------------------------------------

@pytest.mark.parametrize("site, api, neutral", [
    (GROUPING, "guard_bool", True),  # a derived size (x.size(1) // 4) asked not to be 1 at a table place
    (USER, "guard_bool", False),  # the user's own: a guard (a fact on s)
    (CHANGED_TEXT, "guard_bool", False),
    (torch_site(COMMON, "check_contiguous_sizes_strides", "if maybe_guard_or_false(x == 1):", 285),
     "guard_or_false", True),
])
def test_a_derived_size_not_0_or_1_at_a_neutral_place_is_answered_by_the_example(site: Frame, api: str,
                                                                                 neutral: bool) -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b"), 1: Dim("s")}})
    said = b.ask("x.size(1) // 4 == 1", api=api, site=site)
    trace = b.trace()
    assert (said is tc.NEUTRAL) is neutral
    assert bool(trace.neutral) is neutral
    facts = [f.reason.text for f in trace.solver.facts if f.reason.kind == "guard"]
    assert bool(facts) is (not neutral and api == "guard_bool")


STRIDE_LT = torch_site(COMMON, "__lt__", "guard_or_false(", 484)


@pytest.mark.parametrize("site, neutral", [(STRIDE_LT, True), (GROUPING, False), (USER, False)])
def test_stride_order_sites_are_neutral_whatever_they_answer(site: Frame, neutral: bool) -> None:
    """``guard_or_false`` answered True (against its fallback) of a comparison that is no 0/1
    question: only ``K.__lt__``'s stride comparison lets the example answer it with no fact."""
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b"), 1: Dim("s")}})
    said = b.ask("x.size(1) // 4 < x.size(1)", api="guard_or_false", site=site)
    assert (said is tc.NEUTRAL) is neutral


def test_guard_or_false_with_its_general_answer_is_neutral_anywhere() -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b")}})
    assert b.ask("x.size(0) == 5", api="guard_or_false", site=USER) is tc.NEUTRAL  # False: the general answer
    assert b.ask("x.size(0) == 3", api="guard_or_false", site=USER) is True  # against it: a fact
    assert [f.reason.text for f in b.trace().solver.facts if f.reason.kind == "guard"] == ["x.size(0) == 3"]


LAYOUT_SOURCE = "def forward(self, h):\n    if h.shape[0] >= 64:\n        h = h.contiguous()\n    return h\n"


@pytest.mark.parametrize("h, neutral", [
    (torch.randn(3, 8), True),  # contiguous: either answer traces the same graph
    (torch.randn(8, 3).t(), True),  # not contiguous: a copy at other sizes, kept unless the graph mutates
    ("not a tensor", False),  # the arms' name is no tensor now: no rule
])
def test_a_layout_only_branch_is_answered_with_no_fact(h: Any, neutral: bool) -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b")}})
    site = user_site("", line=2, source=LAYOUT_SOURCE, locals={"self": None, "h": h})
    said = b.ask("x.size(0) >= 64", site=site)
    trace = b.trace()
    assert (said is tc.NEUTRAL) is neutral
    assert bool(trace.layout_branches) is neutral
    if neutral:
        assert trace.layout_copies is (not h.is_contiguous())
    else:
        assert [trace.text(f.rel) for f in trace.solver.facts if f.reason.kind == "guard"] == ["x.size(0) < 64"]


def _enabled(code: str, condition: str) -> bool:
    """Whether the installed transformers' sdpa function is the one the conditional entry was
    read in (else the entry is disabled and its sites judged as any other)."""
    return justification(Site(f"/x/site-packages/{SDPA}", 60, "sdpa_attention_forward", code, condition)) is not None


def _is_torchdynamo_compiling() -> bool:
    return True


_is_torchdynamo_compiling.__module__ = "transformers.utils.import_utils"


def _not_compiling() -> bool:
    return False


_not_compiling.__module__ = "transformers.utils.import_utils"

CAUSAL = "is_causal = q_length > 1 and attention_mask is None and is_causal"
ONE = "elif q_length == 1 and not is_torchdynamo_compiling():"


@pytest.mark.parametrize("code, frame_state, covered", [
    (CAUSAL, {"locals": {"attention_mask": torch.ones(1)}}, True),  # with a mask: falsy either way
    (CAUSAL, {"locals": {"attention_mask": None}}, False),  # without one: the answer counts
    (ONE, {"globals": {"is_torchdynamo_compiling": _is_torchdynamo_compiling}}, True),
    (ONE, {"globals": {"is_torchdynamo_compiling": _not_compiling}}, False),
    (ONE, {"globals": {"is_torchdynamo_compiling": lambda: True}}, False),  # not transformers' own check
])
def test_conditional_sites_cover_only_when_their_frame_state_holds(code: str, frame_state: dict[str, Any],
                                                                   covered: bool) -> None:
    question = "x.size(0) > 1" if code == CAUSAL else "x.size(0) == 1"
    covered = covered and _enabled(code, "attention_mask is not None" if code == CAUSAL else
                                   "is_torchdynamo_compiling() is True")
    site = torch_site(SDPA, "sdpa_attention_forward", code, 60, **frame_state)
    trace = _trace((question, site))
    z = zero_one(trace)
    (evidence,) = z.evidence
    assert evidence.kind == ("site" if covered else "kept")
    assert _range(trace, z, "x.size(0)") == ((1, None) if covered else (2, None))


def test_a_conditional_site_is_covered_only_if_it_held_at_every_asking() -> None:
    with_mask = torch_site(SDPA, "sdpa_attention_forward", CAUSAL, 60, locals={"attention_mask": torch.ones(1)})
    without = torch_site(SDPA, "sdpa_attention_forward", CAUSAL, 60, locals={"attention_mask": None})
    trace = _trace(("x.size(0) > 1", [with_mask, without]))
    assert [e.kind for e in zero_one(trace).evidence] == ["kept"]
