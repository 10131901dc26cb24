"""Bad inputs get a clear InputError naming the input and dim, before any torch traceback."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import export
from export import InputError, dynamic_dim


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


X, Y = torch.randn(4, 3), torch.randn(4, 3)


def _classic(build):
    return lambda: export.export(add, (X, Y), constraints=build())


def _modern(shapes, args=(X, Y)):
    return lambda: export.export(add, args, dynamic_shapes=shapes)


CASES = [
    ("non-tensor to dynamic_dim", lambda: dynamic_dim(3, 0), "dynamic_dim expects an example input tensor, got int"),
    ("dim index out of range", lambda: dynamic_dim(X, 2), r"dynamic_dim\(t, 2\): the tensor has 2 dims \(shape \(4, 3\)\)"),
    ("dim index not an int", lambda: dynamic_dim(X, "0"), "the dim index must be an int"),
    ("contradictory classic bounds", _classic(lambda: [dynamic_dim(X, 0) >= 10, dynamic_dim(X, 0) < 5]),
     r"contradictory constraints for x.size\(0\)"),
    ("example outside classic range", _classic(lambda: [dynamic_dim(X, 0) >= 5]),
     r"x.size\(0\) = 4 is outside the declared range"),
    ("equal dims, different example sizes",
     lambda: export.export(add, (X, torch.randn(5, 3)),
                           constraints=[dynamic_dim(X, 0) == dynamic_dim(Y, 0)]),
     "refers to a tensor that is not one of the example inputs"),
    ("tensor not among the inputs", _classic(lambda: [dynamic_dim(torch.randn(4, 3), 0)]),
     "not one of the example inputs"),
    ("chained comparison", _classic(lambda: [2 <= dynamic_dim(X, 0) <= 8]), "not a bool|chained"),
    ("modern: unknown argument name", _modern({"z": {0: Dim("b")}}), "names 'z', which is not an argument"),
    ("modern: dim out of range", _modern({"x": {5: Dim("b")}}), r"names dim 5, but x has 2 dims"),
    ("modern: example outside Dim range", _modern({"x": {0: Dim("b", min=8)}}),
     r"x.size\(0\) = 4 is outside the declared range of Dim\('b', min=8\)"),
    ("modern: shared Dim, different sizes", _modern({"x": {0: Dim("b")}, "y": {0: Dim("b")}},
                                                   (X, torch.randn(5, 3))),
     r"disagree on b \(5 vs 4\)|disagree on b \(4 vs 5\)"),
    ("modern: derived dim no integer root", _modern({"x": {0: Dim("b")}, "y": {0: 2 * Dim("b")}},
                                                   (X, torch.randn(5, 3))),
     r"y.size\(0\) = 5 cannot be 2\*b"),
    ("modern: spec for a non-tensor", lambda: export.export(lambda x, n: x * n, (X, 3),
                                                             dynamic_shapes={"x": None, "n": {0: Dim("b")}}),
     r"the int input n is \{0: Dim\('b'.*\}: use Dim.AUTO/DYNAMIC/STATIC, a Dim of its own, or None"),
    ("both APIs at once", lambda: export.export(add, (X, Y), constraints=[], dynamic_shapes={}), "either"),
    ("args not a tuple", lambda: export.export(add, [X, Y]), "args must be a tuple"),
    ("args do not match the signature", lambda: export.export(add, (X,)), "do not match the signature"),
]


@pytest.mark.parametrize("name,call,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_named(name, call, message) -> None:
    with pytest.raises((InputError, TypeError)) as info:
        call()
    assert not isinstance(info.value, InputError) or info.value.__cause__ is None
    import re

    assert re.search(message, str(info.value)), str(info.value)


def test_equal_dims_with_different_example_sizes_classic() -> None:
    y5 = torch.randn(5, 3)
    with pytest.raises(InputError, match=r"disagree"):
        export.export(add, (X, y5), constraints=[dynamic_dim(X, 0) == dynamic_dim(y5, 0)])


def test_min_greater_than_max_in_torch_dim_is_torch_s_error() -> None:
    with pytest.raises(AssertionError, match="inconsistent min=9, max=3"):  # torch 2.13-2.15 alike
        Dim("b", min=9, max=3)


def test_silently_wrong_vanilla_program_is_rejected_by_symshape() -> None:
    class One(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if x.shape[0] == 1:
                return x * 2
            return x + 1

    x = torch.randn(4, 3)
    vanilla = torch.export.export(One(), (x,), dynamic_shapes={"x": {0: Dim("b")}})
    one = torch.ones(1, 3)
    assert torch.equal(vanilla.module()(one), one + 1), "torch 2.13 runs the wrong branch for size 1"
    ep = export.export(One(), (x,), dynamic_shapes={"x": {0: Dim("b")}})
    assert ep.symshape.ranges["x.size(0)"] == (2, None)
    with pytest.raises(RuntimeError, match=r"x.size\(0\) must be >= 2"):
        ep.module()(one)
    torch.testing.assert_close(ep.module()(torch.ones(3, 3)), torch.full((3, 3), 2.0))
    assert any("0/1 specialization" in a for a in ep.symshape.assumptions)
    (note,) = ep.symshape.warnings
    assert note.startswith("x.size(0) == 1 was decided False at ") and "if x.shape[0] == 1:" in note


@pytest.mark.parametrize("strict", [False, True])
def test_violation_fix_is_verified_by_reexport(strict: bool) -> None:
    class Branch(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if x.shape[0] > 5:
                return x + 1
            return x - 1

    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Branch(), (X,), dynamic_shapes={"x": {0: Dim("b")}}, strict=strict)
    err = info.value
    assert len(err.causes) == 1 and err.causes[0].constraint == "x.size(0) must be <= 5"
    line = next(i for i, text in enumerate(open(__file__), 1) if "if x.shape[0] > 5:" in text)
    assert err.causes[0].origin.endswith(f"test_inputs.py:{line}") and "x.shape[0] > 5" in err.causes[0].code
    assert err.fixes.verified
    fixed = err.fixes.apply({"x": {0: Dim("b")}})
    ep = export.export(Branch(), (X,), dynamic_shapes=fixed, strict=strict)
    assert ep.symshape.ranges["x.size(0)"] == (1, 5)  # no hard branch relied on >= 2
    classic = err.fixes.apply([])
    ep = export.export(Branch(), (X,), constraints=classic, strict=strict)
    assert ep.symshape.ranges["x.size(0)"] == (2, 5)  # the classic API starts at 2
