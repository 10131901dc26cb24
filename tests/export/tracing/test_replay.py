"""Replay (issue 35): a fix that only narrows the spec (its ranges, or equating dims torch
unified in the trace) is verified by replaying the failing trace (:mod:`export.tracing.replay`),
and the program it offers is the re-export's.

Tables: models whose fix is a range, an equality or an offset (replayed; the oracle re-exports
and compares the programs part by part and on a grid of sizes against each other), fixes that
give torch other symbols (re-exported, never replayed), and :func:`replayed`'s refusals on
hand-made specs."""

from __future__ import annotations

import dataclasses

import pytest
import sympy
import torch
from torch.export import Dim

import export
from export.exporter import Exporter
from export.tracing.replay import replayed, same_structure, same_symbols, traced_domain
from replay_oracle import SLICE_MAX_GUARD_213, differences, failing, same_outcomes
from step_cases import PositionTable


class Branch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.shape[0] <= 6 else x + 1


class Slice(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 5:] * 2


class CheckMin(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch._check(x.shape[0] >= 4)
        return x.sum(0)


class SlicedTable(torch.nn.Module):
    """BERT's ``mask[:, None, None, :]``: the full slice asks whether ``sys.maxsize`` is past the
    size, which torch knows only for a bounded dim; next to a table that needs a max."""

    def __init__(self) -> None:
        super().__init__()
        self.pos = torch.nn.Parameter(torch.randn(16, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, None, :, :] + self.pos[: x.shape[1]]


class TwoBranches(torch.nn.Module):
    """Two dims, each with its own bound: the fix narrows both."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        a = x * 2 if x.shape[0] < 10 else x
        return a.sum() + (y[3:] if y.shape[0] > 5 else y).sum()


class Add(torch.nn.Module):
    """Two dims declared apart that must be equal: the fix equates them (torch unified them)."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class Shifted(torch.nn.Module):
    """``y`` one longer than ``x``: the fix says ``y.size(0) == x.size(0) + 1``."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y[1:]


def _grid(*shapes: tuple[int, ...]) -> list[tuple[torch.Tensor, ...]]:
    return [tuple(torch.randn(*s) for s in shape) for shape in shapes]


REPLAYED_FIXES = [  # id, model, example args, failing spec, grid (args per point)
    ("branch", Branch(), (torch.randn(4, 3),), lambda: {"x": {0: Dim("b", max=64)}},
     _grid(*[((n, 3),) for n in (1, 2, 4, 6, 7, 20)])),
    ("slice", Slice(), (torch.randn(2, 8),), lambda: {"x": {1: Dim("n", max=16)}},
     _grid(*[((2, n),) for n in (3, 5, 6, 9, 16, 17)])),
    ("check_min", CheckMin(), (torch.randn(5, 3),), lambda: {"x": {0: Dim("b")}},
     _grid(*[((n, 3),) for n in (1, 3, 4, 9)])),
    ("table", PositionTable(), (torch.randn(2, 5, 8),), lambda: {"x": {0: Dim("b"), 1: Dim("s")}},
     _grid(*[((b, s, 8),) for b, s in ((1, 1), (2, 7), (3, 16), (2, 17))])),
    ("table_batch1", PositionTable(), (torch.randn(1, 5, 8),), lambda: {"x": {0: Dim("b"), 1: Dim("s")}},
     _grid(*[((b, s, 8),) for b, s in ((1, 1), (2, 7), (5, 16), (2, 17))])),
    ("sliced_table", SlicedTable(), (torch.randn(2, 5, 8),), lambda: {"x": {0: Dim("b"), 1: Dim("s")}},
     _grid(*[((b, s, 8),) for b, s in ((1, 1), (2, 7), (3, 16), (2, 17))])),
    ("two_dims", TwoBranches(), (torch.randn(4, 2), torch.randn(7, 2)), lambda: {"x": {0: Dim("a")}, "y": {0: Dim("c")}},
     _grid(*[((a, 2), (c, 2)) for a, c in ((1, 6), (9, 6), (10, 6), (4, 5), (4, 40))])),
    ("equal", Add(), (torch.randn(4, 3), torch.randn(4, 3)), lambda: {"x": {0: Dim("a")}, "y": {0: Dim("b")}},
     _grid(*[((a, 3), (b, 3)) for a, b in ((1, 1), (4, 4), (7, 7), (4, 5), (5, 1))])),
    ("offset", Shifted(), (torch.randn(4, 3), torch.randn(5, 3)), lambda: {"x": {0: Dim("a")}, "y": {0: Dim("b")}},
     _grid(*[((a, 3), (b, 3)) for a, b in ((1, 2), (4, 5), (9, 10), (4, 4), (5, 7))])),
]


@pytest.mark.parametrize(("model", "args", "spec", "grid"), [pytest.param(*c[1:], id=c[0]) for c in REPLAYED_FIXES])
def test_a_narrowing_fix_is_verified_by_replay_and_offers_the_reexports_program(model, args, spec, grid, request) -> None:
    replay, again = failing(model, args, spec, "replay"), failing(model, args, spec, "re-export")
    assert replay is not None and again is not None
    assert replay.fixes.verified and again.fixes.verified
    assert replay.fixes.modern == again.fixes.modern and replay.fixes.classic == again.fixes.classic
    a, b = replay.fixes.program, again.fixes.program
    assert a.symshape.stats["verified_by"] == "replay" and b.symshape.stats["verified_by"] == "trace"
    assert replay.stats["replays"] == 1 and replay.stats["traces"] == again.stats["traces"] - 1
    assert differences(a, b) == (list(SLICE_MAX_GUARD_213) if request.node.callspec.id == "slice" else [])
    assert same_outcomes(a, b, model, grid) == [] and str(replay) == str(again)


class View4(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], -1, 4)


class PlusSix(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.ones(6)


STRUCTURAL_FIXES = [  # a fix that makes a dim a multiple of a new root, or static: re-exported
    ("divisible", View4(), (torch.randn(3, 8),), lambda: {"x": {1: Dim("n")}}),
    ("static", PlusSix(), (torch.randn(2, 6),), lambda: {"x": {1: Dim("n")}}),
]


@pytest.mark.parametrize(("model", "args", "spec"), [pytest.param(*c[1:], id=c[0]) for c in STRUCTURAL_FIXES])
def test_a_fix_that_changes_torchs_symbols_is_verified_by_reexport(model, args, spec) -> None:
    err = failing(model, args, spec, "replay")
    assert err is not None and err.fixes.verified and err.stats["replays"] == 0
    assert err.fixes.program is None or err.fixes.program.symshape.stats["verified_by"] == "trace"


def test_a_direct_export_says_it_was_traced() -> None:
    ep = export.export(Branch(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b", max=6)}})
    assert ep.symshape.stats["verified_by"] == "trace" and ep.symshape.stats["traces"] == 1


def test_fix_verification_is_checked() -> None:
    with pytest.raises(export.InputError, match="fix_verification must be 'replay' or 're-export', got 'again'"):
        export.export(Branch(), (torch.randn(4, 3),), fix_verification="again")


# -- replayed() on hand-made specs ----------------------------------------------------------------

def _traced(spec: dict) -> tuple[Exporter, object]:
    ex = Exporter.of(Branch(), (torch.randn(4, 3),))
    _, trace = ex.trace(ex.parse(spec, classic=False))
    return ex, trace


@pytest.mark.parametrize(("narrower", "replays"), [
    ({"x": {0: Dim("b", max=6)}}, True),           # the fix
    ({"x": {0: Dim("b", min=3, max=5)}}, True),    # narrower still
    ({"x": {0: Dim("b", max=64)}}, True),          # the same spec
    ({"x": {0: Dim("b", max=100)}}, False),        # wider: the traced graph is not known right there
    ({"x": {0: Dim("c", max=6)}}, False),          # another root: other symbols to torch
    ({"x": {0: Dim("b", max=6), 1: Dim("w")}}, False),  # another dim declared
    ({"x": {0: Dim.AUTO}}, False),                 # another mode
])
def test_replayed_only_under_a_narrower_spec_of_the_same_structure(narrower: dict, replays: bool) -> None:
    ex, trace = _traced({"x": {0: Dim("b", max=64)}})
    spec = ex.parse(narrower, classic=False)
    out = replayed(trace, spec)
    assert (out is not None) == replays
    if out is not None:
        assert out.spec == spec and out.sym_map == trace.sym_map and out.hard == trace.hard


def test_an_open_question_the_narrower_spec_settles_is_traced_again() -> None:
    ex, trace = _traced({"x": {0: Dim("b", max=64)}})
    b = trace.dim_syms[next(iter(trace.dim_syms))]
    fix = ex.parse({"x": {0: Dim("b", max=6)}}, classic=False)
    assert replayed(trace, fix) is not None
    opened = dataclasses.replace(trace, open_questions=frozenset({sympy.Le(b, 8)}))  # open at max=64, true at 6
    assert replayed(opened, fix) is None
    still = dataclasses.replace(trace, open_questions=frozenset({sympy.Le(b, 3)}))  # open at 6 too
    assert replayed(still, fix) is not None
    assert replayed(dataclasses.replace(trace, opaque_questions=1), fix) is None


def test_the_replayed_solver_has_the_trace_facts_the_fix_does_not_imply() -> None:
    ex, trace = _traced({"x": {0: Dim("b", max=64)}})
    fixed = replayed(trace, ex.parse({"x": {0: Dim("b", max=6)}}, classic=False))
    assert fixed is not None
    ours = [f.reason.text for f in fixed.solver.facts[fixed.spec_facts:] if f.reason.kind == "guard"]
    assert ours == []  # x.size(0) <= 6 is the spec's now
    assert [f.reason.text for f in trace.solver.facts if f.reason.kind == "guard"] == ["x.size(0) <= 6"]
    assert not ex.judge(fixed).fails and ex.judge(trace).fails


def test_traced_domain_names_the_input_dims() -> None:
    ex, trace = _traced({"x": {0: Dim("b", min=3, max=64)}})
    assert [str(r) for r in traced_domain(trace, trace.spec)] == ["x_size0 >= 3", "x_size0 <= 64", "x_size0 >= 0"]
    assert same_structure(trace.spec, ex.parse({"x": {0: Dim("b", max=6)}}, classic=False))


def test_an_equality_replays_only_where_torch_unified_the_dims() -> None:
    ex = Exporter.of(Add(), (torch.randn(4, 3), torch.randn(4, 3)))
    _, trace = ex.trace(ex.parse({"x": {0: Dim("a")}, "y": {0: Dim("b")}}, classic=False))
    a = Dim("a", min=1)
    equal = ex.parse({"x": {0: a}, "y": {0: a}}, classic=False)
    assert trace.replacements and same_symbols(trace, equal) and replayed(trace, equal) is not None
    untold = dataclasses.replace(trace, replacements={})  # the equality a fact of the solver's only
    assert not same_symbols(untold, equal) and replayed(untold, equal) is None
    shifted = ex.parse({"x": {0: a}, "y": {0: a + 1}}, classic=False)  # not what torch unified
    assert not same_symbols(trace, shifted)


def test_a_full_slice_builds_one_graph_for_a_bounded_and_an_unbounded_dim() -> None:
    """``x[:, None, :, :]``'s no-op slice: torch elides it only when the dim has a max, so a fix
    adding one would change the graph; symshape keeps it either way (the int64-limit question is
    never statically known), and the fix replays."""
    model, x = SlicedTable(), torch.randn(2, 5, 8)
    bounded = export.export(model, (x,), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("s", max=16)}})
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, (x,), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("s")}})
    assert info.value.stats["replays"] == 1
    slices = [ep.graph_module.code.count("aten.slice.Tensor") for ep in (bounded, info.value.fixes.program)]
    assert slices[0] == slices[1] == 3  # both full slices (views, no copy) and the table's [:s]
    plain = torch.export.export(model, (x,), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("s", max=16)}})
    assert plain.graph_module.code.count("aten.slice.Tensor") == 2  # torch elides the bounded dim's
