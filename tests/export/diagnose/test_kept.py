"""Relations no Dim can say, kept as runtime checks (export/diagnose/kept.py), and where they may
not be: a relation that leaves a dim the user declared dynamic a single size is torch's
specialization, raised with the static fix (PyTorch's ``test_issue_161902``: ``2 * dx`` and
``dx + 1`` held equal by ``x + y`` are both 2; torch raises naming both specialized to 2).

Table: model, spec, whether it exports with the relation kept, the words of the cause, the
fix as ``apply`` returns it. Oracle: the verified fix's program runs every size eager runs on
a small grid and refuses the rest.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
from torch.export import Dim

import export
from export import ConstraintViolationError, RefusedInputError
from shapes import parse_expr
from shapes.affine import dim_expressible


class Add(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class CatAdd(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, y]) + z


def _pinning() -> Any:
    dx = Dim("dx", min=1, max=2)
    return {"x": (2 * dx, Dim.STATIC), "y": (dx + 1, Dim.STATIC)}


def test_a_relation_that_leaves_a_declared_dynamic_dim_one_size_is_a_violation_with_the_static_fix() -> None:
    args = (torch.randn(2, 3), torch.randn(2, 3))
    with pytest.raises(ConstraintViolationError) as caught:
        export.export(Add(), args, dynamic_shapes=_pinning())
    err = caught.value
    assert "x.size(0) must equal y.size(0), which leaves only x.size(0) = 2, y.size(0) = 2" in str(err)
    assert "(declared x.size(0) = 2*dx, y.size(0) = dx + 1): no dynamic size" in str(err)
    assert err.fixes.apply(_pinning()) == {"x": None, "y": None}
    assert err.fixes.verified and err.fixes.program is not None
    program = err.fixes.program.module()
    torch.testing.assert_close(program(*args), Add()(*args))
    with pytest.raises(RefusedInputError):
        program(torch.randn(4, 3), torch.randn(4, 3))


def test_a_relation_that_leaves_the_dims_dynamic_is_still_a_kept_check() -> None:
    a, b = Dim("a"), Dim("b")
    spec = {"x": {0: a}, "y": {0: b}, "z": {0: Dim("c")}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export.export(CatAdd(), (torch.randn(2, 3), torch.randn(3, 3), torch.randn(5, 3)), dynamic_shapes=spec)
    assert [k.relation for k in ep.symshape.checks] == ["the model requires x.size(0) + y.size(0) == z.size(0)"]
    for n, m in ((1, 1), (4, 7)):
        x, y, z = torch.randn(n, 3), torch.randn(m, 3), torch.randn(n + m, 3)
        torch.testing.assert_close(ep.module()(x, y, z), CatAdd()(x, y, z))


@pytest.mark.parametrize(("text", "sayable"), [
    ("x >= 4", True), ("x < 9", True), ("Eq(x, 2*y + 1)", True), ("Eq(2*x, 4*y + 2)", True), ("Eq(Mod(x, 4), 0)", True),
    ("x >= y", False), ("Eq(x*y, z)", False), ("Ne(x, 20)", False), ("Eq(x + y, z)", False),
    ("Eq(x + y, 10)", False),  # y = 10 - x: a Dim cannot be negated (issue 34: kept.py said it could)
])
def test_what_a_dim_can_say_has_one_definition(text: str, sayable: bool) -> None:
    """shapes.affine.dim_expressible, what the bridge's user checks and the kept relations ask."""
    assert dim_expressible(parse_expr(text, allow_new_symbols=True)) is sayable
