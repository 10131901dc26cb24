"""When every dim of the fix is static, the classic fix is still a function of the inputs
(issue 9, item 4): ``def specify_constraints(x, y): return []``, callable as the classic API
is (``constraints=specify_constraints(x, y)``), and exporting with what it returns succeeds."""
from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

import export
from export.spec.inputs import Inputs
from export.spec.render import render_classic
from export.spec.dynamic_shapes import from_dynamic_shapes


class MatMul(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x, y)


class Chunk3(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Any:
        return torch.ops.aten.chunk.default(x, 3, 0)


# (model, args, dynamic_shapes, expected def line): exports whose fix makes every dim static
CASES = [
    (MatMul(), (torch.randn(10, 2, 3), torch.randn(10, 3, 4)), {"x": {0: Dim("b")}, "y": None},
     "def specify_constraints(x, y):"),
    (Chunk3(), (torch.randn(3),), ([Dim("shape", min=1, max=3)],), "def specify_constraints(x):"),
]


def _call_classic(text: str, args: tuple[Any, ...]) -> Any:
    scope: dict[str, Any] = {"dynamic_dim": export.dynamic_dim}
    exec(text, scope)  # noqa: S102 - the rendered fix is code the user pastes
    return scope["specify_constraints"](*args)


@pytest.mark.parametrize("model,args,shapes,head", CASES, ids=["matmul_static", "chunk3_static"])
def test_all_static_classic_fix_takes_the_inputs(model: Any, args: tuple[Any, ...], shapes: Any, head: str) -> None:
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, args, dynamic_shapes=shapes)
    fixes = info.value.fixes
    assert fixes is not None and fixes.verified
    assert fixes.classic.splitlines()[0] == head
    constraints = _call_classic(fixes.classic, args)
    assert constraints == []
    export.export(model, args, constraints=constraints)


def test_render_classic_static_spec_is_callable() -> None:
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y

    args = (torch.zeros(2, 3), torch.zeros(2, 3))
    inputs = Inputs.bind(f, args, None)
    spec = from_dynamic_shapes(inputs, {"x": None, "y": None})
    text = render_classic(spec, inputs)
    assert text == "def specify_constraints(x, y):\n    return []  # every input dim is static: no dynamic_dim to declare"
    assert _call_classic(text, args) == []
