"""A classic derived dim (``dynamic_dim(z, 0) == 2 * dynamic_dim(y, 0) + 1``) with no max.

The classic default max ``2**63 - 2`` holds for every dim, a derived one too: torch computes a
derived Dim's max from its root's and refuses one past ``sys.maxsize - 1`` (an AssertionError
while it builds the constraints, which reached the user as "export could not trace the
model"). ``shapes.classic.from_classic`` lowers the root's max so that every dim derived from it
stays within that limit; a relation no size satisfies within it is an InputError.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
import torch

import export
from export import dynamic_dim
from export.errors import ConstraintViolationError, InputError
from export.spec.classic import from_constraints
from export.spec.inputs import Inputs
from shapes.ranges import CLASSIC_MAX


def _classic(y: torch.Tensor, z: torch.Tensor, a: int, b: int, *extra: Any) -> list[Any]:
    return [dynamic_dim(y, 0), dynamic_dim(z, 0) == a * dynamic_dim(y, 0) + b, *extra]


def test_torch_s_limit_is_the_classic_default_max() -> None:
    assert CLASSIC_MAX == sys.maxsize - 1


def test_the_reported_model_exports() -> None:
    y, z = torch.randn(3, 4), torch.randn(7, 4)
    ep = export.export(lambda y, z: torch.cat([y, y, y[:1]]) + z, (y, z), constraints=_classic(y, z, 2, 1))
    assert ep.symshape.relations == ("z.size(0) == 2 * y.size(0) + 1",)
    lo, hi = ep.symshape.ranges["y.size(0)"]
    assert lo == 2 and hi is not None and 2 * hi + 1 <= CLASSIC_MAX
    assert ep.symshape.to_dict()["ranges"]["z.size(0)"] == [5, None]
    y2, z2 = torch.randn(5, 4), torch.randn(11, 4)
    torch.testing.assert_close(ep.module()(y2, z2), torch.cat([y2, y2, y2[:1]]) + z2)
    with pytest.raises(Exception, match=r"z\.size\(0\) must equal 2 \* y\.size\(0\) \+ 1 .*got z\.size\(0\) = 10"):
        ep.module()(torch.randn(5, 4), torch.randn(10, 4))


@pytest.mark.parametrize("a, b, model", [
    (4, 0, lambda y, z: torch.cat([y, y, y, y]) + z),  # no offset: 4 * CLASSIC_MAX overflowed as well
    (3, -1, lambda y, z: torch.cat([y, y, y[1:]]) + z),
])
def test_other_derived_forms_export(a: int, b: int, model: Any) -> None:
    y = torch.randn(3, 4)
    z = torch.randn(a * 3 + b, 4)
    ep = export.export(model, (y, z), constraints=_classic(y, z, a, b))
    y2 = torch.randn(6, 4)
    z2 = torch.randn(a * 6 + b, 4)
    torch.testing.assert_close(ep.module()(y2, z2), model(y2, z2))


def test_a_guard_under_the_derived_spec_is_a_violation_with_a_fix() -> None:
    # the model needs y.size(0) even: the same spec now reaches the solver (was a ModelError)
    y, z = torch.randn(4, 4), torch.randn(9, 4)
    with pytest.raises(ConstraintViolationError) as info:
        export.export(lambda y, z: (torch.cat([y, y, y[:1]]) + z, y.reshape(-1, 2, 4)), (y, z),
                      constraints=_classic(y, z, 2, 1))
    assert "y.size(0) must be divisible by 2" in str(info.value)
    assert "'z': {0: 4 * _y_0 + 1}" in str(info.value)  # the fix's derived dim, without a max


def test_a_declared_max_is_kept() -> None:
    y, z = torch.randn(3, 4), torch.randn(7, 4)
    ep = export.export(lambda y, z: torch.cat([y, y, y[:1]]) + z, (y, z),
                       constraints=_classic(y, z, 2, 1, dynamic_dim(y, 0) <= 100))
    assert ep.symshape.ranges == {"y.size(0)": (2, 100), "z.size(0)": (5, 201)}


def _inputs() -> Inputs:
    def g(y: Any, z: Any) -> Any:
        return y

    return Inputs.bind(g, (torch.randn(3, 4), torch.randn(7, 4)), None)


@pytest.mark.parametrize("a, b, hi", [
    (1, 0, CLASSIC_MAX), (1, 5, CLASSIC_MAX - 5), (2, 0, CLASSIC_MAX // 2), (2, 1, (CLASSIC_MAX - 1) // 2),
    (1000, 7, (CLASSIC_MAX - 7) // 1000),
])
def test_the_root_max_keeps_every_derived_dim_within_torch_s_limit(a: int, b: int, hi: int) -> None:
    inputs = _inputs()
    y, z = inputs.bound["y"], inputs.bound["z"]
    spec = from_constraints(inputs, _classic(y, z, a, b))
    assert [(r.lo, r.hi) for r in spec.roots] == [(2, hi)]
    assert a * hi + b <= CLASSIC_MAX < a * (hi + 1) + b


def test_no_size_within_torch_s_limit_is_an_input_error_naming_the_inputs() -> None:
    inputs = _inputs()
    y, z = inputs.bound["y"], inputs.bound["z"]
    with pytest.raises(InputError) as info:
        from_constraints(inputs, _classic(y, z, 2**62, 0))
    assert str(info.value) == ("contradictory constraints for y.size(0): dynamic_dim(y, 0) >= 2 leave no size with "
                               f"z.size(0) == {2**62} * y.size(0) at most {CLASSIC_MAX} (the largest size torch takes)")
