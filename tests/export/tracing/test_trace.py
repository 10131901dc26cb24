"""The frozen Trace a tracing hands over, and the bridge that makes it (issue 7, item 1)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
import sympy
import torch
from torch.export import Dim

import export
from export.api import traced
from export.tracing.bridge import SolverBridge
from export.tracing.assumptions import FLOOR_OP, POSITIVE_OP, Assumption
from export.tracing.trace import Trace
from solver import Deadline


class Pair(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if x.shape[0] == 1:
            return x
        return (x + y).reshape(-1, 2)


class Items(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        k = n.max().item()
        export.constrain_as_size(k, min=1, max=10)
        return x.sum() + torch.ones(k).sum()


@pytest.fixture(scope="module")
def pair() -> Trace:
    _, trace = traced(Pair(), (torch.randn(8, 4), torch.randn(8, 4)),
                      dynamic_shapes={"x": {0: Dim("b")}, "y": {0: Dim("b")}})
    return trace


def test_trace_is_frozen_and_read_only(pair: Trace) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        pair.stats = None  # type: ignore[misc]
    x = pair.dim_syms[export.InputDim("x", 0)]
    with pytest.raises(TypeError):
        pair.names[x] = "z"  # type: ignore[index]
    with pytest.raises(TypeError):
        pair.sym_map[x] = x  # type: ignore[index]


def test_trace_symbols_names_and_kinds(pair: Trace) -> None:
    assert {str(d): str(s) for d, s in pair.dim_syms.items()} == {"x.size(0)": "x_size0", "y.size(0)": "y_size0"}
    assert pair.names[pair.dim_syms[export.InputDim("y", 0)]] == "y.size(0)"
    assert set(pair.root_syms) == {"b"} and not pair.auto_syms and not pair.unbacked_syms
    assert pair.user_syms == {*pair.dim_syms.values(), pair.root_syms["b"]}
    assert pair.dynamic_syms == set(pair.dim_syms.values())
    assert sympy.Eq(pair.dim_syms[export.InputDim("x", 0)], 1) in pair.hard
    assert pair.stats.asked >= pair.stats.routed > 0 and pair.stats.to_torch == 0
    ops = {(f.reason.tag, f.reason.op) for f in pair.solver.facts if f.reason.kind == "trace_assumption"}
    assert {(Assumption.FLOOR, FLOOR_OP), (Assumption.POSITIVE, POSITIVE_OP)} <= ops  # the tag, and the words apart
    assert any(note.question == sympy.Eq(pair.dim_syms[export.InputDim("x", 0)], 1) and note.answer is False
               for note in pair.branch_notes)  # branch notes: their own field now, worded when the program is finished


def test_tracing_builds_no_replica_and_the_program_words_the_branch_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bridge only notes the user's branch on ``x.size(0) == 1`` while tracing (issue 20:
    no spec-only replica for its bounds); the program words the warning when finished."""
    from solver import Solver

    built: list[int] = []
    real = Solver.replica
    monkeypatch.setattr(Solver, "replica", lambda self, *a, **k: built.append(1) or real(self, *a, **k))
    _, trace = traced(Pair(), (torch.randn(8, 4), torch.randn(8, 4)),
                      dynamic_shapes={"x": {0: Dim("b")}, "y": {0: Dim("b")}})
    assert trace.branch_notes and not built
    with pytest.warns(export.SymshapeWarning, match=r"x.size\(0\) == 1 was decided False at .*test_trace.py:\d+: "
                      r"if x.shape\[0\] == 1:, only because export assumes x.size\(0\) >= 2"):
        export.export(Pair(), (torch.randn(8, 4), torch.randn(8, 4)),
                      dynamic_shapes={"x": {0: Dim("b")}, "y": {0: Dim("b")}})


def test_convert_is_pure(pair: Trace) -> None:
    """Converting after tracing never tells the solver anything (unknown torch symbols
    become plain integer symbols of the same name)."""
    torch_x = next(s for s, e in pair.sym_map.items() if e == pair.dim_syms[export.InputDim("x", 0)])
    unknown = sympy.Symbol("s999", integer=True, positive=True)
    before = (len(pair.solver.symbols), len(pair.solver.facts))
    assert pair.convert(sympy.Gt(torch_x + unknown, 3)) == sympy.Gt(pair.dim_syms[export.InputDim("x", 0)]
                                                                    + sympy.Symbol("s999", integer=True), 3)
    assert pair.convert(torch_x + 1) is None  # not a relation
    assert pair.expression(torch_x * 2) == 2 * pair.dim_syms[export.InputDim("x", 0)]
    assert pair.expression(sympy.Eq(torch_x, 2)) is None  # not an integer expression
    assert (len(pair.solver.symbols), len(pair.solver.facts)) == before


def test_unbacked_values_and_their_origin() -> None:
    _, trace = traced(Items(), (torch.randn(4, 3), torch.tensor([3, 5])), dynamic_shapes={"x": {0: Dim("b")}, "n": None})
    assert trace.unbacked_syms
    frames = list(trace.unbacked_origins.values())
    assert frames and frames[0].code.startswith("k = n.max().item()")
    u = next(iter(trace.unbacked_syms))
    assert trace.solver.bounds(u) == (1, 10)
    assert not trace.is_about_inputs(next(f for f in trace.solver.facts if u in f.rel.free_symbols))


def test_the_bridge_is_only_a_decider() -> None:
    """After tracing, the bridge offers nothing but :meth:`SolverBridge.trace`; during
    tracing, torch's hooks and the inline-constraint scope (issue 7: the bridge shrinks
    to the decider)."""
    public = {n for n, _ in inspect.getmembers(SolverBridge) if not n.startswith("_")}
    hooks = {"attach", "on_symbol", "on_specialize", "on_range_update", "on_replacement", "on_constraint_violation",
             "on_question", "on_static", "judges_constraints",
             "on_traced"}
    assert public == hooks | {"trace", "declaring"}


def test_an_export_gives_its_solver_the_z3_limits() -> None:
    """Each trace's solver (and its replicas) runs Z3 within one allowance: a query at most
    ``Z3_QUERY_SECONDS``, all of them ``Z3_EXPORT_SECONDS`` (tests/solver/test_z3_allowance.py)."""
    from export.tracing.bridge import Z3_EXPORT_SECONDS, Z3_QUERY_SECONDS, export_deadline

    d = export_deadline()
    assert (d.query_seconds, d.z3_seconds, d.used) == (Z3_QUERY_SECONDS, Z3_EXPORT_SECONDS, 0.0)
    assert d.timeout_ms() == int(Z3_QUERY_SECONDS * 1000)



class Windows(torch.nn.Module):
    """Swin's shape in small: a branch on the smaller merged size of a patched image."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = min((x.shape[1] // 4 + 1) // 2, (x.shape[2] // 4 + 1) // 2)
        if rows <= 4:
            return x * 2
        return x + 1


def test_a_min_guard_bounds_each_dim_without_z3(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the trace's Z3 allowance spent (as Swin's is), ``min(h', w') > 4`` still gives
    each dim its bound (``h >= 36``, ``w >= 36``) as a Dim: the fact splits into one fact per
    dim, which the union-find takes; no ``torch._check`` line."""
    import export.tracing.bridge as guards

    def spent() -> Deadline:
        d = Deadline(query_seconds=guards.Z3_QUERY_SECONDS, z3_seconds=guards.Z3_EXPORT_SECONDS)
        d.charge(guards.Z3_EXPORT_SECONDS)
        return d

    monkeypatch.setattr(guards, "export_deadline", spent)
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Windows(), (torch.randn(2, 64, 48),), dynamic_shapes={"x": {1: Dim("h"), 2: Dim("w")}})
    fixes = info.value.fixes
    assert fixes.checks == () and fixes.verified, fixes.render()
    assert "Dim('h', min=36)" in fixes.modern and "Dim('w', min=36)" in fixes.modern, fixes.modern
