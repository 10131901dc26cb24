"""Example-input forms found by porting PyTorch's own export tests:

* ``_IntWrapper`` int inputs (torch's tag for an int, so a ``ShapesCollection`` can mark it
  dynamic by identity; ``test_symint_input_shapes_collection``): symshape takes them as the
  ints they stand for, and the program runs ints.
* One tensor object passed as several inputs (``test_derived_dim_out_of_order_repeat_derived``
  passes ``(u, v, w, u, u)``): torch traces the aliasing into the program, which then reads one
  input for all of them; symshape traces each repeated occurrence with a copy, so the program
  reads each input on its own. Views of one base are distinct objects and stay as they are.

Each row exports with symshape and runs the program against eager on other inputs (separate
tensors, and aliased ones where the example was aliased); a row may also name inputs the
program must refuse.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
from torch.export import Dim, ShapesCollection
from torch.export.dynamic_shapes import _IntWrapper

import export

Call = tuple[tuple[Any, ...], dict[str, Any]]


class AddXY(torch.nn.Module):
    def forward(self, x: Any, y: Any) -> Any:
        return x + y


class Scale(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return x * n


class Ones(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return x + torch.ones(n)


class Nested(torch.nn.Module):
    def forward(self, x: torch.Tensor, others: list[int]) -> torch.Tensor:
        return x * others[0] + others[1]


class Weighted(torch.nn.Module):
    def forward(self, x: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
        return x + 2 * x1


class OutOfOrder(torch.nn.Module):
    """PyTorch's ``test_derived_dim_out_of_order_repeat_derived``."""

    def forward(self, x: Any, y: Any, z: Any, x1: Any, x2: Any) -> Any:
        return x + y[1:] + z[2:] + x1 + x2


class Pytree(torch.nn.Module):
    def forward(self, a: dict[str, torch.Tensor], b: list[torch.Tensor], c: torch.Tensor) -> torch.Tensor:
        return a["p"] + 2 * b[0] + 3 * c


class Matmul(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x @ y.T


class Prefix(torch.nn.Module):
    def forward(self, x: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
        return x[:3] * x1[:3] + x1.sum()


class Bump(torch.nn.Module):
    def forward(self, x: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
        x.add_(1)
        return x1 * 2


def _symint_collection() -> tuple[tuple[Any, ...], dict[str, Any], Any]:
    args = (_IntWrapper(5), _IntWrapper(5))
    sc = ShapesCollection()
    sc[args[0]] = Dim.DYNAMIC
    sc[args[1]] = Dim.DYNAMIC
    return args, {}, sc


def _wrapper_with_tensor() -> tuple[tuple[Any, ...], dict[str, Any], Any]:
    """torch's ShapesCollection docstring: a tensor and wrapped ints, some left static."""
    x = torch.randn(6, 3)
    args = (x, [_IntWrapper(4), _IntWrapper(2)])
    sc = ShapesCollection()
    sc[x] = (Dim.DYNAMIC, 3)
    sc[args[1][0]] = Dim.DYNAMIC
    return args, {}, sc


def _aliased_collection() -> tuple[tuple[Any, ...], dict[str, Any], Any]:
    u = torch.randn(5)
    sc = ShapesCollection()
    sc[u] = {0: Dim("d")}
    return (u, u), {}, sc


U, V, W = torch.randn(5), torch.randn(6), torch.randn(7)
A = torch.randn(4, 3)
DIMY = Dim("dimy", min=5, max=7)
DIMX = DIMY - 1
DIMZ = DIMY + 1


def _t(*shapes: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    return tuple(torch.randn(s) for s in shapes)


def _same(n: int, shape: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    t = torch.randn(shape)
    return (t,) * n


@dataclass
class Row:
    name: str
    model: torch.nn.Module
    example: Callable[[], tuple[tuple[Any, ...], dict[str, Any], Any]]
    """(args, kwargs, dynamic_shapes), built fresh per run (a ShapesCollection holds its objects)."""
    others: list[Call]
    """Inputs the program must run as eager does."""
    refused: list[Call] = field(default_factory=list)
    """Inputs the program must refuse."""
    copies: int = 0
    """How many inputs are traced with a copy (one report warning each)."""
    options: dict[str, Any] = field(default_factory=dict)


ROWS = [
    # -- _IntWrapper inputs ------------------------------------------------------------------
    Row("symint ShapesCollection (test_symint_input_shapes_collection)", AddXY(), _symint_collection,
        [((3, 5), {}), ((7, 1), {}), ((-2, 40), {})]),
    Row("symint ShapesCollection, strict", AddXY(), _symint_collection,
        [((3, 5), {}), ((7, 1), {})], options={"strict": True}),
    Row("wrapped ints beside a tensor, one left static", Nested(), _wrapper_with_tensor,
        [((torch.randn(9, 3), [7, 2]), {}), ((torch.randn(2, 3), [-1, 2]), {})],
        refused=[((torch.randn(9, 3), [7, 5]), {})]),
    Row("wrapped int in a plain tuple spec", Scale(),
        lambda: ((torch.randn(4, 2), _IntWrapper(3)), {}, ({0: Dim("b")}, Dim.DYNAMIC)),
        [((torch.randn(7, 2), 5), {}), ((torch.randn(2, 2), -4), {})]),
    Row("wrapped int with a Dim of its own", Ones(),
        lambda: ((torch.randn(5), _IntWrapper(5)), {}, ({0: Dim("a")}, Dim("n"))),
        [((torch.randn(8), 8), {}), ((torch.randn(3), 3), {})]),
    Row("wrapped int left static", Scale(),
        lambda: ((torch.randn(4, 2), _IntWrapper(3)), {}, ({0: Dim("b")}, None)),
        [((torch.randn(7, 2), 3), {})], refused=[((torch.randn(7, 2), 4), {})]),
    # -- one tensor object passed as several inputs -------------------------------------------
    Row("x, x1 the same tensor, one Dim", Weighted(),
        lambda: ((U, U), {}, ({0: Dim("d")}, {0: Dim("d")})),
        [(_t((6,), (6,)), {}), (_same(2, (9,)), {}), (_t((3,), (3,)), {})], copies=1),
    Row("x, x1 the same tensor, strict", Weighted(),
        lambda: ((U, U), {}, ({0: Dim("d")}, {0: Dim("d")})),
        [(_t((6,), (6,)), {}), (_same(2, (9,)), {})], copies=1, options={"strict": True}),
    Row("x, x1 the same tensor, static", Weighted(), lambda: ((U, U), {}, None),
        [(_t((5,), (5,)), {}), (_same(2, (5,)), {})], copies=1),
    Row("x, x1 the same tensor, Dim.AUTO", Weighted(),
        lambda: ((U, U), {}, ({0: Dim.AUTO}, {0: Dim.AUTO})),
        [(_t((6,), (6,)), {}), (_same(2, (2,)), {})], copies=1),
    Row("x, x1 the same tensor of size 1 (traced larger)", Weighted(),
        lambda: ((U[:1], ) * 2, {}, ({0: Dim("d")}, {0: Dim("d")})),
        [(_t((6,), (6,)), {}), (_same(2, (1,)), {})], copies=1),
    Row("x, x1 the same tensor, classic dynamic_dim", Weighted(),
        lambda: ((U, U), {}, None),
        [(_t((6,), (6,)), {}), (_same(2, (9,)), {})], copies=1,
        options={"constraints": [export.dynamic_dim(U, 0) >= 2]}),
    Row("(u, v, w, u, u) out-of-order derived dims (test_derived_dim_out_of_order_repeat_derived)", OutOfOrder(),
        lambda: ((U, V, W, U, U), {}, ({0: DIMX}, {0: DIMY}, {0: DIMZ}, {0: DIMX}, {0: DIMZ - 2})),
        [(_t((6,), (7,), (8,), (6,), (6,)), {}), (_t((4,), (5,), (6,), (4,), (4,)), {})],
        refused=[(_t((6,), (7,), (8,), (6,), (5,)), {})], copies=2),
    Row("the same tensor in a dict, a list and a kwarg", Pytree(),
        lambda: (({"p": A}, [A]), {"c": A},
                 {"a": {"p": {0: Dim("d")}}, "b": [{0: Dim("d")}], "c": {0: Dim("d")}}),
        [(({"p": torch.randn(7, 3)}, [torch.randn(7, 3)]), {"c": torch.randn(7, 3)}),
         (({"p": A}, [A]), {"c": A})], copies=2),
    Row("the same tensor in a ShapesCollection", Weighted(), _aliased_collection,
        [(_t((6,), (6,)), {}), (_same(2, (8,)), {})], copies=1),
    Row("the same tensor transposed by the model", Matmul(),
        lambda: ((A, A), {}, ({0: Dim("m"), 1: Dim("k")}, {0: Dim("n"), 1: Dim("k")})),
        [(_t((5, 2), (6, 2)), {}), (_same(2, (3, 4)), {})], copies=1),
    Row("the same tensor, one of them updated in place", Bump(), lambda: ((U, U), {}, ({0: Dim("d")}, {0: Dim("d")})),
        [(_t((6,), (6,)), {}), (_same(2, (4,)), {})], copies=1),
    # -- views of one base are left alone -------------------------------------------------------
    Row("a view of another input", Prefix(),
        lambda: ((U, U[:3]), {}, ({0: Dim("d", min=3)}, None)),
        [(_t((8,), (3,)), {}), ((lambda t: (t, t[:3]))(torch.randn(6)), {})]),
    Row("a view of another input, updated in place", Bump(),
        lambda: ((U, U[:3]), {}, ({0: Dim("d")}, None)),
        [(_t((8,), (3,)), {}), ((lambda t: (t, t[:3]))(torch.randn(6)), {})]),
    Row("a view of another input, strict", Prefix(),
        lambda: ((U, U.view(5)), {}, None),
        [(_t((5,), (5,)), {}), ((lambda t: (t, t.view(5)))(torch.randn(5)), {})], options={"strict": True}),
]


def _leaves(tree: Any) -> list[Any]:
    return torch.utils._pytree.tree_leaves(tree)


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and torch.allclose(a, b)
    return bool(a == b)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_program_runs_other_inputs_as_eager(row: Row) -> None:
    args, kwargs, ds = row.example()
    before = [(id(a), a.clone()) for a in args if isinstance(a, torch.Tensor)]
    options = dict(row.options)
    if "constraints" not in options:
        options["dynamic_shapes"] = ds
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ep = export.export(row.model, args, kwargs or None, **options)
    assert all(id(a) == i and torch.equal(a, t) for (i, t), a in
               zip(before, [a for a in args if isinstance(a, torch.Tensor)])), "the user's tensors were touched"
    notes = [w for w in ep.symshape.warnings if "the same tensor object" in w]
    assert len(notes) == row.copies, ep.symshape.warnings
    assert sum("the same tensor object" in str(w.message) for w in caught) == row.copies
    for call in row.others:
        (e_args, e_kwargs), (p_args, p_kwargs) = copy.deepcopy(call), copy.deepcopy(call)  # aliasing kept
        expected = row.model(*e_args, **e_kwargs)
        got = ep.module()(*p_args, **p_kwargs)
        assert _close(got, expected), (call, got, expected)
        after = (_leaves((p_args, p_kwargs)), _leaves((e_args, e_kwargs)))  # in-place updates too
        assert all(_close(a, b) for a, b in zip(*after)), after
    for call_args, call_kwargs in row.refused:
        with pytest.raises(export.RefusedInputError, match="the exported program refuses these inputs"):
            ep.module()(*call_args, **call_kwargs)


def test_aliased_example_program_differs_from_torch_where_torch_is_wrong() -> None:
    """The reason for the copies: torch's own program reads ``x1`` for both inputs."""
    u = torch.randn(5)
    ds = ({0: Dim("d")}, {0: Dim("d")})
    a, b = torch.randn(6), torch.randn(6)
    theirs = torch.export.export(Weighted(), (u, u), dynamic_shapes=ds).module()(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = export.export(Weighted(), (u, u), dynamic_shapes=ds).module()(a, b)
    assert torch.allclose(ours, Weighted()(a, b))
    assert not torch.allclose(theirs, Weighted()(a, b))  # if torch fixes it, this row can go


def test_aliased_example_with_one_position_static_is_a_violation() -> None:
    """``x1`` declared static while the same tensor's ``x`` is dynamic: ``x + 2 * x1`` needs them
    equal, so ``x`` cannot be dynamic (torch's program would run, reading ``x1`` twice)."""
    u = torch.randn(5)
    with pytest.raises(export.ConstraintViolationError, match=r"x\.size\(0\) must be 5"):
        export.export(Weighted(), (u, u), dynamic_shapes=({0: Dim("d")}, None))
