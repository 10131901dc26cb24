"""The seed documents' examples (torch.export docs, classic API), reproduced with symshape."""

from __future__ import annotations

import pytest
import torch

import export
from export import InputDim, constrain_as_size, constrain_as_value, dynamic_dim


class Seed(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.branch1 = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU())
        self.branch2 = torch.nn.Sequential(torch.nn.Linear(128, 64), torch.nn.ReLU())
        self.buffer = torch.ones(32)

    def forward(self, x1: torch.Tensor, x2: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out1 = self.branch1(x1)
        out2 = self.branch2(x2)
        return (out1 + self.buffer, out2)


def _seed_program() -> tuple[Seed, export.SymshapeProgram]:
    model = Seed()
    example_args = (torch.randn(32, 64), torch.randn(32, 128))
    constraints = [
        dynamic_dim(example_args[0], 0),
        dynamic_dim(example_args[1], 0),
        dynamic_dim(example_args[0], 0) == dynamic_dim(example_args[1], 0),
    ]
    return model, export.export(model, example_args, constraints=constraints)


def test_seed_ranges_and_equality_constraints() -> None:
    model, ep = _seed_program()
    ranges = {(vr.lower, vr.upper) for vr in ep.range_constraints.values()}
    assert ranges == {(2, 2**63 - 2)}, "the classic default range [2, 2**63 - 2]"
    assert ep.equality_constraints == [(InputDim("x1", 0), InputDim("x2", 0))]
    text = str(ep)
    assert "Range constraints" in text and "Equality constraints" in text
    for n in (2, 7, 40):
        a, b = torch.randn(n, 64), torch.randn(n, 128)
        for got, want in zip(ep.module()(a, b), model(a, b)):
            torch.testing.assert_close(got, want)
    with pytest.raises(export.RefusedInputError, match=r"x2.size\(0\) must equal x1.size\(0\)"):  # checked at run time
        ep.module()(torch.randn(3, 64), torch.randn(4, 128))


def test_seed_save_load_keeps_ranges_and_equalities(tmp_path) -> None:
    model, ep = _seed_program()
    path = tmp_path / "exported_program.pt2"
    export.save(ep, str(path))
    loaded = export.load(str(path))
    assert loaded.equality_constraints == ep.equality_constraints
    assert {(v.lower, v.upper) for v in loaded.range_constraints.values()} == {(2, 2**63 - 2)}
    assert loaded.symshape.problem == ep.symshape.problem
    a, b = torch.randn(5, 64), torch.randn(5, 128)
    torch.testing.assert_close(loaded.module()(a, b)[0], model(a, b)[0])
    with pytest.raises(export.RefusedInputError, match=r"x1.size\(0\) must be >= 2"):  # below the range: rejected
        loaded.module()(torch.randn(1, 64), torch.randn(1, 128))


def test_seed_specialization_of_static_shapes() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] > 5:
            return x + 1
        return x - 1

    ep = export.export(fn, (torch.rand(10, 2),))
    assert ep.range_constraints == {}
    torch.testing.assert_close(ep.module()(torch.ones(10, 2)), torch.full((10, 2), 2.0))


def test_seed_non_tensor_inputs_are_specialized() -> None:
    def fn(x: torch.Tensor, const: int, times: int) -> torch.Tensor:
        for _ in range(times):
            x = x + const
        return x

    ep = export.export(fn, (torch.rand(2, 2), 1, 3))
    adds = [n for n in ep.graph.nodes if n.target == torch.ops.aten.add.Tensor]
    assert len(adds) == 3


def test_seed_constrain_as_size_inline() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        d = x.max().item()
        constrain_as_size(d, min=3, max=10)
        return torch.ones(d)

    ep = export.export(fn, (torch.tensor([1, 5, 2]),))
    assert ep.module()(torch.tensor([4, 7, 1])).shape == (7,)
    # the graph's own assert (torch raises a RuntimeError), in symshape's words
    with pytest.raises(RuntimeError, match="refuses these inputs: d must be <= 10"):
        ep.module()(torch.tensor([1, 11, 2]))  # 11 > max: the graph rejects it
    with pytest.raises(RuntimeError, match="refuses these inputs: d must be >= 3"):
        ep.module()(torch.tensor([1, 2, 0]))  # 2 < min
    ranges = [(v.lower, v.upper) for v in ep.range_constraints.values()]
    assert (3, 10) in ranges


def test_seed_constrain_as_value_decides_the_branch() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        v = x.max().item()
        constrain_as_value(v, min=10, max=200)
        if v > 1024:
            return x
        return x * 2

    ep = export.export(fn, (torch.tensor([10, 50]),))
    torch.testing.assert_close(ep.module()(torch.tensor([20, 30])), torch.tensor([40, 60]))
    with pytest.raises(RuntimeError, match="refuses these inputs: v must be <= 200"):  # the graph's assert
        ep.module()(torch.tensor([5, 300]))


def test_seed_data_dependent_branch_without_constraint_is_explained() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        v = x.max().item()
        if v > 1024:
            return x
        return x * 2

    with pytest.raises(export.DataDependentError, match="constrain_as"):
        export.export(fn, (torch.tensor([10, 50]),))


def test_seed_cond_on_shape_predicate_stays_symbolic() -> None:
    class DynamicShapeCondPredicate(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.cond(x.shape[0] > 4, lambda x: x.cos(), lambda x: x.sin(), (x,))

    model = DynamicShapeCondPredicate()
    ep = export.export(model, (torch.randn(4, 3),), dynamic_shapes={"x": {0: torch.export.Dim.DYNAMIC}})
    assert any(n.target is torch.ops.higher_order.cond for n in ep.graph.nodes)
    for n in (3, 5, 9):
        x = torch.randn(n, 3)
        torch.testing.assert_close(ep.module()(x), model(x))
