"""Dim.AUTO and an equality whose sides share a factor, on real models, against torch.export.

torch asks ``Eq(2*s0, 2*s1)`` when two ``cat((t, t))`` are added together; an AUTO dim absorbs
it as it absorbs ``Eq(s0, s1)`` (``export.diagnose.violations._adapts`` reads the relation's
normal form, ``x - y == 0``). Each case exports with plain ``torch.export.export`` and with
symshape, the same model, inputs and spec, and records both verdicts. Where both export, the
two programs accept the same sizes on a grid and compute the same values.

torch's verdict on an equality of an AUTO dim and a declared one depends on which symbol its
solver makes the root, not on whether the AUTO dim can take the value: it exports
``x == 2 * y`` with ``a`` declared on x and y AUTO by silently making ``a`` even (x becomes
``2 * s``: its program refuses every odd x, which ``Dim("a")`` admits; the model does need
an even x, which symshape reports with its fix ``x = 2 * y_0``), and refuses the same
relation with x AUTO (x could just be ``2 * b``) and ``y == x + 1`` with y AUTO. symshape
never narrows a declared dim and lets the AUTO dim take whatever value it has coefficient
+-1 for; the rows where the verdicts differ check that each verdict is the right one (the
narrowing is real, the absorbing program is right). The trace-built table of the same
relations is in tests/export/diagnose/test_violations.py.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch
from torch.export import Dim

import export
from export.errors import ConstraintViolationError


class TwoCats(torch.nn.Module):  # Eq(2*x, 2*y)
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x]) + torch.cat([y, y])


class ThreeSix(torch.nn.Module):  # Eq(3*x, 6*y): x == 2*y
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x, x]) + torch.cat([y] * 6)


class Doubled(torch.nn.Module):  # Eq(x, 2*y)
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + torch.cat([y, y])


class Padded(torch.nn.Module):  # Eq(2*x + 2, 2*y): y == x + 1
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x, torch.ones(2, x.size(1))]) + torch.cat([y, y])


A, B, AUTO = Dim("a"), Dim("b"), Dim.AUTO
OK, REFUSED = True, False

CASES = [
    # model, example sizes of dim 0, spec of dim 0 of (x, y), torch's verdict, symshape's verdict
    pytest.param(TwoCats, (3, 3), (A, AUTO), OK, OK, id="2x==2y-a-auto"),
    pytest.param(TwoCats, (3, 3), (AUTO, A), OK, OK, id="2x==2y-auto-a"),
    pytest.param(TwoCats, (3, 3), (AUTO, AUTO), OK, OK, id="2x==2y-auto-auto"),
    pytest.param(TwoCats, (3, 3), (A, B), REFUSED, REFUSED, id="2x==2y-a-b"),
    pytest.param(ThreeSix, (6, 3), (AUTO, B), REFUSED, OK, id="3x==6y-auto-b"),
    pytest.param(ThreeSix, (6, 3), (A, AUTO), OK, REFUSED, id="3x==6y-a-auto"),
    pytest.param(Doubled, (6, 3), (AUTO, B), REFUSED, OK, id="x==2y-auto-b"),
    pytest.param(Doubled, (6, 3), (A, AUTO), OK, REFUSED, id="x==2y-a-auto"),
    pytest.param(Padded, (3, 4), (A, AUTO), REFUSED, OK, id="2x+2==2y-a-auto"),
    pytest.param(Padded, (3, 4), (AUTO, B), OK, OK, id="2x+2==2y-auto-b"),
]

GRID: list[tuple[int, int]] = [(n, k) for n, k in itertools.product(range(2, 9), repeat=2)]
"""Sizes of (x, y) dim 0 every program runs on (from 2: symshape may admit 1 where torch does not)."""


def _spec(dims: tuple[Any, Any]) -> dict[str, dict[int, Any]]:
    return {"x": {0: dims[0]}, "y": {0: dims[1]}}


def _inputs(sizes: tuple[int, int]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(sizes[0], 4), torch.randn(sizes[1], 4)


def _runs(program: Any, sizes: tuple[int, int]) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]] | None:
    args = _inputs(sizes)
    try:
        return program(*args), args
    except Exception:  # noqa: BLE001 - an input check (or the kernel) refusing the sizes
        return None


@pytest.mark.parametrize("model, example, dims, torch_ok, ours_ok", CASES)
def test_symshape_and_torch_on_an_equality_with_a_common_factor(
        model: type[torch.nn.Module], example: tuple[int, int], dims: tuple[Any, Any], torch_ok: bool,
        ours_ok: bool) -> None:
    m, args = model(), _inputs(example)
    try:
        theirs: torch.export.ExportedProgram | None = torch.export.export(m, args, dynamic_shapes=_spec(dims))
    except Exception as e:  # noqa: BLE001 - torch's UserError; the verdict is what is compared
        assert "Constraints violated" in str(e), e
        theirs = None
    assert (theirs is not None) is torch_ok
    try:
        ours: export.SymshapeProgram | None = export.export(m, args, dynamic_shapes=_spec(dims))
    except ConstraintViolationError:
        ours = None
    assert (ours is not None) is ours_ok
    eager = {s: _runs(m, s) for s in GRID}  # the sizes the model itself runs on
    if ours is not None:  # symshape's program accepts every size eager runs on, with eager's values
        for s, want in eager.items():
            got = _runs(ours.module(), s)
            assert (got is None) is (want is None), s
            if got is not None and want is not None:
                torch.testing.assert_close(got[0], m(*got[1]))
    if theirs is not None and ours is not None:  # the same sizes accepted by both programs
        assert {s for s in GRID if _runs(theirs.module(), s)} == {s for s in GRID if _runs(ours.module(), s)}
    if theirs is not None and ours is None:  # torch narrowed the declared dim of x (a)
        lost = [n for n in range(2, 9) if not any(_runs(theirs.module(), (n, k)) for k in range(1, 9))]
        assert lost, "torch's program accepts every x.size(0) its declaration admits: symshape should have exported"
