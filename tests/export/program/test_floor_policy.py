"""The ``>= 2`` policy as a function of a Trace: which dims keep torch's floor, and why.

A table of real traces (real torch, real solver): each row names the model, the spec, and
the expected ``needed`` map (root dim -> the hard decisions that relied on the floor),
plus the lower bound the final ranges give the first input dim. Every row is also checked
against the policy's definition, decided independently by brute force over small sizes:
a hard decision needs the floor iff some size assignment >= 0 (but with a dim < 2) that
satisfies every non-floor fact of the trace flips its answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import sympy
import torch
from torch.export import Dim
from torch.fx.experimental.symbolic_shapes import guard_or_false

from export.api import traced
from export.program.floor_policy import floor_policy, is_floor
from export.tracing.trace import Trace
from solver import Truth


class EqOne(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] == 1:
            return x * 2
        return x + 1


class AddOnly(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


class GtFour(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] > 4:
            return x * 2
        return x + 1


class SoftEqOne(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if guard_or_false(x.shape[0] == 1):
            return x * 2
        return x + 1


class OtherInput(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if y.shape[0] == 1:
            return x * 2
        return x + y


@dataclass(frozen=True)
class Case:
    name: str
    model: Callable[[], torch.nn.Module]
    args: tuple[Any, ...]
    spec: Any
    needed: dict[str, list[str]]  # root name -> the hard decisions, as printed
    lo: int  # the final lower bound of the first input dim


def _x(n: int) -> torch.Tensor:
    return torch.randn(n, 3)


a = Dim("a")
CASES = [
    Case("eq_one", EqOne, (_x(8),), {"x": {0: a}}, {"a": ["Eq(x_size0, 1)"]}, 2),
    Case("add_only", AddOnly, (_x(8),), {"x": {0: a}}, {}, 1),
    Case("gt_four_becomes_a_fact", GtFour, (_x(8),), {"x": {0: a}}, {}, 5),
    Case("soft_query", SoftEqOne, (_x(8),), {"x": {0: a}}, {}, 1),
    Case("spec_min_2_decides", EqOne, (_x(8),), {"x": {0: Dim("m", min=2)}}, {}, 2),
    Case("one_root_two_inputs", OtherInput, (_x(8), _x(8)), {"x": {0: a}, "y": {0: a}},
         {"a": ["Eq(y_size0, 1)"]}, 2),
]


@pytest.fixture(scope="module", params=CASES, ids=[c.name for c in CASES])
def case_trace(request: pytest.FixtureRequest) -> tuple[Case, Trace]:
    case: Case = request.param
    _, trace = traced(case.model(), case.args, dynamic_shapes=case.spec)
    return case, trace


def test_needed_floor_table(case_trace: tuple[Case, Trace]) -> None:
    case, trace = case_trace
    policy = floor_policy(trace)
    got = {root.name: [str(r) for r in rels] for root, rels in policy.needed.items()}
    assert got == case.needed
    first = next(iter(trace.dim_syms.values()))
    assert policy.final.bounds(first)[0] == case.lo
    assert policy.needs_floor(first) is bool(case.needed)


def test_final_keeps_exactly_the_needed_floors(case_trace: tuple[Case, Trace]) -> None:
    _, trace = case_trace
    policy = floor_policy(trace)
    for f in trace.solver.facts:
        if is_floor(f):
            needed = any(trace.solver.root_of(x) in policy.needed for x in f.rel.free_symbols)
            assert policy.keeps(f) is needed
            assert (f in policy.final.facts) is needed, f
    assert all(policy.keeps(f) for f in policy.final.facts if is_floor(f))


def _brute_needs_floor(trace: Trace, rel: sympy.Basic, hi: int = 6) -> bool:
    """Whether some assignment of sizes in [0, hi] with a dim below 2, satisfying every
    fact but the floors, gives ``rel`` another value than the trace's answer."""
    answer = trace.solver.decide(rel)
    if answer is Truth.UNKNOWN:
        return False
    facts = [f.rel for f in trace.solver.facts if not is_floor(f)]
    syms = sorted(set().union(*(f.free_symbols for f in facts), rel.free_symbols), key=str)
    for values in itertools.product(range(hi + 1), repeat=len(syms)):
        env = dict(zip(syms, values))
        if all(v >= 2 for v in values) or not all(bool(f.subs(env)) for f in facts):
            continue
        if bool(rel.subs(env)) is not (answer is Truth.TRUE):
            return True
    return False


def test_needed_floor_matches_brute_force(case_trace: tuple[Case, Trace]) -> None:
    _, trace = case_trace
    policy = floor_policy(trace)
    needed_rels = {r for rels in policy.needed.values() for r in rels}
    for rel in trace.hard - trace.answered_by_fact:
        assert (rel in needed_rels) is _brute_needs_floor(trace, rel), rel


def test_policy_leaves_the_trace_alone(case_trace: tuple[Case, Trace]) -> None:
    _, trace = case_trace
    before = (len(trace.solver.facts), len(trace.solver.symbols), len(trace.solver.guards))
    floor_policy(trace)
    floor_policy(trace)
    assert (len(trace.solver.facts), len(trace.solver.symbols), len(trace.solver.guards)) == before
