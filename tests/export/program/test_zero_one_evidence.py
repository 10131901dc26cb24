"""0/1 evidence end to end: the program accepts size 1 exactly when evidence says it is
right (and then matches eager there), keeps the floor otherwise; re-trace evidence for
identical vs different boundary graphs, one and two dims."""

from __future__ import annotations

import io
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sympy
import torch
from torch.export import Dim

from zero_one_models import (  # noqa: E402
    CausalAlways, CausalIfNoMask, ClsToken, EmptyBranch, EqOne, LinView, PadInto, SecondDimOnly, ThreeWay, TwoBranches)

import export  # noqa: E402
from export.api import traced  # noqa: E402
from export.program.graph_form import graph_form  # noqa: E402
from export.program.zero_one import zero_one  # noqa: E402
from shapes.spec import InputDim  # noqa: E402


def _runs_like_eager(ep: export.SymshapeProgram, model: torch.nn.Module, *args: torch.Tensor) -> bool:
    return torch.allclose(ep.module()(*args), model(*args), atol=1e-5)


@pytest.mark.parametrize("make, shape, spec, small", [
    (ClsToken, (3, 5, 8), {"x": {0: Dim("b")}}, [(1, 5, 8)]),
    (LinView, (3, 5, 8), {"x": {0: Dim("b"), 1: Dim("s")}}, [(1, 5, 8), (3, 1, 8), (1, 1, 8)]),
])
def test_minimal_cases_accept_size_1_and_match_eager(make, shape, spec, small) -> None:
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error", export.SymshapeWarning)  # nothing the user must act on
        ep = export.export(model, (torch.randn(*shape),), dynamic_shapes=spec)
    assert ep.symshape.warnings == ()
    assert all(lo == 1 for lo, _ in ep.symshape.ranges.values())
    assert all(lo == 1 for lo, _ in (vr for vr in ((r.lower, r.upper) for r in ep.range_constraints.values())))
    for s in small:
        x = torch.randn(*s)
        assert _runs_like_eager(ep, model, x)
    assert ep.symshape.stats["boundary_retraces"] == 0  # the site table covered everything


def test_branch_on_one_still_refuses_size_1() -> None:
    with pytest.warns(export.SymshapeWarning, match=r"x.size\(0\) == 1 was decided False") as seen:
        ep = export.export(EqOne(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b")}})
    assert len(seen) == 1
    assert ep.symshape.ranges["x.size(0)"] == (2, None)
    with pytest.raises(RuntimeError, match=r"x.size\(0\) must be >= 2"):
        ep.module()(torch.ones(1, 3))
    assert ep.symshape.stats["boundary_retraces"] == 1


def test_retrace_with_the_same_graph_relieves_the_dim() -> None:
    model, b, s = CausalIfNoMask(), Dim("b"), Dim("s")
    ep = export.export(model, (torch.randn(2, 2, 5, 8), torch.zeros(2, 1, 5, 5)),
                       dynamic_shapes={"q": {0: b, 2: s}, "mask": {0: b, 2: s, 3: s}})
    assert ep.symshape.ranges["q.size(2)"] == (1, None)
    (record,) = [e for e in ep.symshape.zero_one if e.kind != "site"]
    assert record.kind == "retrace" and record.dim == "s" and "{s=1} same graph" in record.why
    assert _runs_like_eager(ep, model, torch.randn(1, 2, 1, 8), torch.zeros(1, 1, 1, 1))
    assert _runs_like_eager(ep, model, torch.randn(3, 2, 1, 8), torch.randn(3, 1, 1, 1))


def test_retrace_with_another_graph_keeps_the_floor() -> None:
    model = CausalAlways()
    ep = export.export(model, (torch.randn(2, 2, 5, 8),), dynamic_shapes={"q": {0: Dim("b"), 2: Dim("s")}})
    assert ep.symshape.ranges["q.size(2)"] == (2, None) and ep.symshape.ranges["q.size(0)"] == (1, None)
    (record,) = ep.symshape.zero_one
    assert record.kind == "kept" and "boundary graph differs" in record.why
    with pytest.raises(RuntimeError, match=r"q.size\(2\) must be >= 2"):
        ep.module()(torch.randn(2, 2, 1, 8))


def test_two_dims_need_three_points() -> None:
    model = TwoBranches()
    ep = export.export(model, (torch.randn(4, 5, 3),), dynamic_shapes={"x": {0: Dim("a"), 1: Dim("c")}})
    assert ep.symshape.ranges == {"x.size(0)": (1, None), "x.size(1)": (1, None)}
    assert ep.symshape.stats["boundary_retraces"] == 3
    why = {e.why for e in ep.symshape.zero_one}
    assert all("{a=1}" in w and "{c=1}" in w and "{a=1, c=1}" in w for w in why)
    for shape in [(1, 5, 3), (4, 1, 3), (1, 1, 3)]:
        assert _runs_like_eager(ep, model, torch.randn(*shape))


def test_one_dim_relieved_the_other_kept() -> None:
    model = SecondDimOnly()
    ep = export.export(model, (torch.randn(4, 5),), dynamic_shapes={"x": {0: Dim("a"), 1: Dim("c")}})
    assert ep.symshape.ranges == {"x.size(0)": (1, None), "x.size(1)": (2, None)}
    kinds = {e.dim: e.kind for e in ep.symshape.zero_one}
    assert kinds == {"a": "retrace", "c": "kept"}
    assert _runs_like_eager(ep, model, torch.randn(1, 5))
    with pytest.raises(RuntimeError, match=r"x.size\(1\) must be >= 2"):
        ep.module()(torch.randn(4, 1))


def test_without_a_boundary_the_table_alone_decides() -> None:
    ep, trace = traced(CausalIfNoMask(), (torch.randn(2, 2, 5, 8), torch.zeros(2, 1, 5, 5)),
                       dynamic_shapes={"q": {2: Dim("s")}, "mask": {2: Dim("s"), 3: Dim("s")}})
    result = zero_one(trace)
    assert not result.relieved and result.retraces == 0
    assert [e.kind for e in result.evidence] == ["kept"]


def test_graph_form_reads_sizes_at_the_point() -> None:
    ep, trace = traced(LinView(), (torch.randn(3, 5, 8),), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("s")}})
    general = graph_form(ep, trace, {})
    at_one = graph_form(ep, trace, {"x_size0": 1, "b": 1})
    assert general != at_one
    assert any("('size', 'b')" in str(op) for op in general)  # x.size(0) is b: one name per class
    assert not any("('size', 'b" in str(op) or "x_size0" in str(op) for op in at_one)


def test_evidence_survives_save_and_load() -> None:
    ep = export.export(LinView(), (torch.randn(3, 5, 8),), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("s")}})
    buf = io.BytesIO()
    export.save(ep, buf)
    buf.seek(0)
    loaded = export.load(buf)
    assert loaded.symshape.zero_one == ep.symshape.zero_one and ep.symshape.zero_one


class BothOne(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if x.shape[0] == 1 or y.shape[0] == 1:
            return x * y
        return x + y


def test_a_branch_warns_once_per_line_not_per_input_sharing_the_dim() -> None:
    b = Dim("b")
    with pytest.warns(export.SymshapeWarning) as seen:
        ep = export.export(BothOne(), (torch.randn(3, 2), torch.randn(3, 2)),
                           dynamic_shapes={"x": {0: b}, "y": {0: b}})
    assert len([w for w in seen if issubclass(w.category, export.SymshapeWarning)]) == 1
    assert len(ep.symshape.warnings) == 1 and "if x.shape[0] == 1 or y.shape[0] == 1:" in ep.symshape.warnings[0]
    assert ep.symshape.ranges["x.size(0)"] == (2, None)


class Patches(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Conv2d(3, 8, 16, stride=16)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        return self.proj(img).flatten(2).transpose(1, 2)


def _patches() -> tuple[Patches, tuple[torch.Tensor], dict]:
    h, w = Dim("_h", min=1, max=32), Dim("_w", min=1, max=32)
    return Patches(), (torch.randn(2, 3, 48, 32),), {"img": {2: 16 * h, 3: 16 * w}}


def test_torchs_own_guard_over_input_dims_does_not_keep_the_floor() -> None:
    """torch records ``(h // 16) * (w // 16) != h // 16`` (the flatten of a 1-by-w patch grid
    assumed ``w // 16 >= 2``); it speaks of input dims only, so the program drops it once the
    floor is relieved (:func:`export.program.zero_one.keeps_torch_guard`, the rule of
    ``finish``'s ``drop_guards``), and it keeps no floor: 16 px runs like eager on every release."""
    model, args, spec = _patches()
    ep = export.export(model, args, dynamic_shapes=spec)
    assert ep.symshape.ranges == {"img.size(2)": (16, 512), "img.size(3)": (16, 512)}
    assert ep.symshape.zero_one and not [e for e in ep.symshape.zero_one if e.kind == "kept"]
    for hw in [(16, 16), (16, 32), (32, 16), (48, 64), (512, 16)]:
        assert _runs_like_eager(ep, model, torch.randn(2, 3, *hw)), hw


@pytest.mark.xfail(strict=True, reason=(
    "export/_torch_compat/program.py::add_asserts skips a contract condition whose value in torch's symbols "
    "is one already 'present': the derived dims are 16*s16 and 16*s62 there, so img.size(2) >= 16, "
    "img.size(3) >= 16 and both 'divisible by 16' all read True and only the first is emitted; torch's "
    "own program checks no divisibility either (it runs 40 x 40), so ep.module() runs 24 x 16, 16 x 24 "
    "(like eager: the conv floors) where the contract refuses them"))
def test_the_patches_program_refuses_what_its_contract_refuses() -> None:
    model, args, spec = _patches()
    ep = export.export(model, args, dynamic_shapes=spec)
    for hw in [(24, 16), (16, 24)]:
        x = torch.randn(2, 3, *hw)
        assert ep.symshape.contract.failures_of((x,)), hw
        with pytest.raises(RuntimeError, match=r"must be divisible by 16"):
            ep.module()(x)


def _injected(monkeypatch: pytest.MonkeyPatch, extra: Callable[[sympy.Symbol], sympy.Basic]) -> Any:
    """The Patches trace's 0/1 evidence with one more guard of torch's, ``extra(s)`` over torch's
    symbol ``s`` of ``img.size(2)``: torch's recorded guards, as :mod:`export.program.zero_one`
    reads them, plus it."""
    import export._torch_compat as tc
    from export.program.zero_one import keeps_torch_guard

    model, args, spec = _patches()
    ep, trace = traced(model, args, dynamic_shapes=spec)
    real = tc.recorded_guards(ep)
    size2 = trace.dim_syms[InputDim("img", 2)]
    (s,) = [t for t, e in trace.sym_map.items() if e == size2 and t in set().union(*(g.free_symbols for g in real))]
    guard = extra(s)
    result = zero_one(trace, ep)
    assert not result.kept and result.policy is not None  # torch's own guards alone keep no floor
    dropped = [g for g in real if not keeps_torch_guard(trace, result.policy.final, g)]
    assert dropped  # the flatten's guard: the program no longer checks it
    monkeypatch.setattr(tc, "recorded_guards", lambda program: [*real, guard])
    assert keeps_torch_guard(trace, result.policy.final, guard)
    return trace, zero_one(trace, ep)


@pytest.mark.parametrize("extra", [
    # over a symbol that is no input dim (as an unbacked size would be): the program keeps it
    lambda s: sympy.Ne(s, 16 * sympy.Symbol("u0", integer=True, positive=True)),
    # one symshape cannot read (a float symbol): kept as well, and blocks the dim it names
    lambda s: sympy.Gt(s * sympy.Symbol("zf", real=True), 1),
], ids=["non-input symbol", "unreadable"])
def test_a_torch_guard_the_program_keeps_still_keeps_the_floor(monkeypatch: pytest.MonkeyPatch, extra) -> None:
    """No model found (corpus, common layers, deploy cases) whose torch guard on a relieved dim
    is one the program keeps: the guard is injected into the Patches trace's recorded guards.
    A guard the program keeps and the relieved ranges do not prove still refuses size 1 at run
    time, so the dim it names keeps its floor, and the evidence says which guard."""
    trace, result = _injected(monkeypatch, extra)
    root = trace.solver.root_of(trace.dim_syms[InputDim("img", 2)])
    assert root in result.kept and root not in result.relieved
    assert result.policy is not None and result.policy.final.bounds(root)[0] == 2
    kept = [e for e in result.evidence if e.dim == trace.names.get(root, str(root))]
    assert kept and all(e.kind == "kept" and "torch recorded the guard" in e.why for e in kept), kept
    other = trace.solver.root_of(trace.dim_syms[InputDim("img", 3)])
    assert other not in result.kept  # the guard names img.size(2) only


# -- size 0 (Dim.AUTO / Dim.DYNAMIC): a boundary re-trace at 0 ----------------------------------

def _zero(shape: tuple[int, ...], dims: tuple[int, ...]) -> torch.Tensor:
    return torch.randn(*[0 if i in dims else n for i, n in enumerate(shape)])


AUTO2 = {0: Dim.AUTO, 1: Dim.AUTO}


@pytest.mark.parametrize("make, shapes, spec, ranges, zero_right", [
    # every dim right at 0: admitted, each class alone and together
    (ThreeWay, [(6, 3)] * 3, (AUTO2,) * 3, {"x.size(0)": (0, None), "x.size(1)": (0, None)}, [(0,), (1,), (0, 1)]),
    (ThreeWay, [(6, 3)] * 3, ({0: Dim.DYNAMIC, 1: Dim.AUTO},) * 3, {"x.size(0)": (0, None)}, [(0,), (1,), (0, 1)]),
    # a branch on 0 that torch folds unseen: the graph at 0 differs, 0 stays refused
    (EmptyBranch, [(4, 3)], ({0: Dim.AUTO},), {"x.size(0)": (1, None)}, []),
    # a named Dim is not re-traced at 0: it starts at 1
    (ThreeWay, [(6, 3)] * 3, ({0: Dim("b"), 1: Dim.AUTO},) * 3, {"x.size(0)": (1, None), "x.size(1)": (0, None)},
     [(1,)]),
])
def test_size_0_is_admitted_exactly_where_the_graph_at_0_is_the_general_one(make, shapes, spec, ranges,
                                                                             zero_right) -> None:
    model = make()
    ep = export.export(model, tuple(torch.randn(*s) for s in shapes), dynamic_shapes=spec)
    for dim, want in ranges.items():
        assert ep.symshape.ranges[dim] == want, ep.symshape.zero_one
    for dims in zero_right:
        args = tuple(_zero(s, dims) for s in shapes)
        torch.testing.assert_close(ep.module()(*args), model(*args))
    for dim, (lo, _) in ranges.items():
        if lo == 1:
            i = int(dim[len("x.size("):-1])
            with pytest.raises(RuntimeError, match=r"must be >= 1"):
                ep.module()(*(_zero(s, (i,)) for s in shapes))


def test_size_0_where_eager_differs_is_refused_though_torch_runs_it() -> None:
    """The side-by-side fact behind the refusal: torch's program runs size 0 and differs from
    eager (silently wrong); symshape's boundary graph at 0 is not the general one."""
    x = torch.randn(0, 3)
    torch_ep = torch.export.export(EmptyBranch(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim.AUTO},))
    assert not torch.equal(torch_ep.module()(x), EmptyBranch()(x))
    ep = export.export(EmptyBranch(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim.AUTO},))
    assert any(e.kind == "kept" and "differs" in e.why for e in ep.symshape.zero_one)


@pytest.mark.parametrize("strict", [False, True])
def test_a_slice_made_whole_and_an_in_place_result_read_as_the_general_graph(strict) -> None:
    """At y's size 1 (and 0) the boundary graph drops a slice that became whole (``Max(x, 1)``
    is x) and reads the in-place ops' results where the general graph reads their inputs:
    the same values, so y's dims are relieved (torch's program runs them too; both right)."""
    model, dyn = PadInto(), {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}
    ep = export.export(model, (torch.randn(2, 3), torch.randn(3, 2)), dynamic_shapes=(dyn, dyn), strict=strict)
    assert ep.symshape.ranges["y.size(0)"] == (0, None), ep.symshape.zero_one
    assert ep.symshape.ranges["y.size(1)"] == (0, None), ep.symshape.zero_one
    # the example's guards hold: x.size(0) <= y.size(0), y.size(1) < x.size(1)
    for xs, ys in [((1, 5), (1, 2)), ((1, 5), (1, 1)), ((1, 5), (2, 1)), ((1, 3), (1, 0)), ((1, 2), (4, 1)),
                   ((2, 6), (3, 5))]:
        x, y = torch.randn(*xs), torch.randn(*ys)
        torch.testing.assert_close(ep.module()(x, y), model(x, y))
