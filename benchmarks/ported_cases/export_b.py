"""Dynamic-shape tests of PyTorch's ``test/export/test_export.py`` (second half of the file,
from ``test_unbacked_noncontig_lin`` on), ported to side-by-side rows.

Models that hold random parameters are built under a fixed seed (the harness builds the
model several times and compares eager with both programs). Where the original test uses
``torch.empty``/``torch.randn`` inside ``forward`` the port uses a deterministic constructor
instead (noted per row), since the harness compares values.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import torch
from torch.export import Dim, dims

from benchmarks.bench_ported import Ported

SRC = "test/export/test_export.py::TestExport::"
AUTO, STATIC, DYNAMIC = Dim.AUTO, Dim.STATIC, Dim.DYNAMIC


def seeded(cls: Any, *a: Any) -> Any:
    """A factory building ``cls(*a)`` with the same random parameters every time."""
    def make() -> torch.nn.Module:
        torch.manual_seed(0)
        return cls(*a)
    return make


# --------------------------------------------------------------------- unbacked / .item()

class UnbackedNoncontigLin(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(32, 64)

    def forward(self, x):
        n = x.item()
        y = torch.zeros(n).view(1, -1, 32)  # original: torch.empty(x)
        return self.lin(y)


class AddXY(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class SymOrSymAnd(torch.nn.Module):
    def forward(self, xs):
        from torch.fx.experimental.symbolic_shapes import sym_and, sym_or
        u0, u1, u2 = xs.tolist()
        torch._check(sym_or(u0 == 2, u0 == 4, u0 == 6))
        torch._check(sym_and(u1 >= 4, u1 <= 8, u2 == 5))
        return u0 + u1 + u2


class NonzeroCheck(torch.nn.Module):
    def forward(self, x):
        b = x.nonzero()
        torch._check(b.shape[0] >= 3)
        return b


class _CondA(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.buffer = torch.nn.Buffer(torch.ones(6, 4))

    def forward(self):
        return self.buffer.cos()


class CondSymboolPred(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = _CondA()

    def forward(self, x):
        def true_fn(x):
            return x.cos() + self.a().sum()

        def false_fn(x):
            return x.sin()

        return torch.cond(x.shape[0] > 4, true_fn, false_fn, [x])


class CcodePythonMod(torch.nn.Module):
    def forward(self, xs):
        u0, u1 = xs.tolist()
        torch._check_is_size(u1)
        return u0, u1


class NoCheckIsSize(torch.nn.Module):
    def forward(self, x):
        a = x.item()
        return torch.arange(24.0).view(a, 4)  # original: torch.randn(24).view(a, 4)


class MatmulXY(torch.nn.Module):
    def forward(self, x, y):
        return torch.matmul(x, y)


class Lin10to1(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(10, 1)

    def forward(self, x):
        return self.lin(x)


class RedundantAsserts(torch.nn.Module):
    def forward(self, x):
        y = x.item()
        torch._check_is_size(y)
        return torch.zeros(y)


class SumAB(torch.nn.Module):
    def forward(self, a, b):
        return a.sum() + b.sum()


class SumContainer(torch.nn.Module):
    def forward(self, a, b):
        return a[0].sum() + a[1].sum() + b.sum()


class RuntimeAssertWithSize(torch.nn.Module):
    def forward(self, x, y):
        a = x.item()
        torch._check_is_size(a)
        torch._check(a <= y.size(0))
        return y[:a]


class PadSeq(torch.nn.Module):
    def forward(self, x):
        return torch._C._nn.pad_sequence([x])


class PadSeqBatchFirst(torch.nn.Module):
    def forward(self, x):
        return torch._C._nn.pad_sequence([x], batch_first=True)


class PadSeqMulti(torch.nn.Module):
    def forward(self, x, y, z):
        return torch._C._nn.pad_sequence([x, y, z])


class PadSeqMultiBatchFirst(torch.nn.Module):
    def forward(self, x, y, z):
        return torch._C._nn.pad_sequence([x, y, z], batch_first=True)


class SymSqrt(torch.nn.Module):
    def forward(self, x):
        return x / torch.sym_sqrt(x.shape[0])


@dataclasses.dataclass
class _Inp3:
    f: torch.Tensor
    p: torch.Tensor


try:
    torch.export.register_dataclass(_Inp3, serialized_type_name="symshape_ported_export_b._Inp3")
except Exception:  # noqa: BLE001 - already registered on re-import
    pass


class UnusedDataclassInput(torch.nn.Module):
    def forward(self, x: _Inp3):
        return x.f + 1


# --------------------------------------------------------------------- symint inputs

class MulXY(torch.nn.Module):
    def forward(self, x, y):
        return x * y


class DictMooMul(torch.nn.Module):
    def forward(self, x, y):
        return x["moo"] * y


class SymintSpecialize(torch.nn.Module):
    def forward(self, x, y):
        assert x == 3
        assert y.shape[0] == 4
        return x * y


class SymintRangeSubset(torch.nn.Module):
    def forward(self, x, y):
        assert x > 3
        assert x <= 5
        return x * y


class SymintRangeBigger(torch.nn.Module):
    def forward(self, x, y):
        assert x > 1
        assert x < 20
        return x * y


class SymintRangeOutside(torch.nn.Module):
    def forward(self, x, y):
        assert x > 10
        assert x < 20
        return x * y


class ShapesBounds(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, zs: list[torch.Tensor]):
        return x[:3] + y @ torch.cat(zs)


_SB_X = torch.randn(7, 5)
_SB_Y = torch.randn(3, 6)
_SB_ZS = [torch.randn(2, 5), torch.randn(4, 5)]


def _sb_shapes() -> Any:
    sc = torch.export.ShapesCollection()
    sc[_SB_X] = (DYNAMIC, DYNAMIC)
    sc[_SB_Y] = (DYNAMIC, DYNAMIC)
    for z in _SB_ZS:
        sc[z] = (DYNAMIC, DYNAMIC)
    return sc


def _int_wrappers() -> tuple[Any, Any]:
    from torch.export.dynamic_shapes import _IntWrapper
    return _IntWrapper(5), _IntWrapper(5)


_SC_INTS: list[Any] = []


def _sc_int_args() -> tuple[Any, ...]:
    if not _SC_INTS:
        _SC_INTS.extend(_int_wrappers())
    return tuple(_SC_INTS)


def _sc_int_shapes() -> Any:
    args = _sc_int_args()
    sc = torch.export.ShapesCollection()
    sc[args[0]] = DYNAMIC
    sc[args[1]] = DYNAMIC
    return sc


def _additional_ints() -> Any:
    ai = torch.export.AdditionalInputs()
    ai.add((5, 5))
    ai.add((3, 5))
    ai.add((5, 4))
    return ai


class VeryLargeUpperbound(torch.nn.Module):
    def forward(self, x, t):
        unbacked = t.item()
        torch._check(unbacked <= 1000000007999999992)
        y = torch.ones(unbacked)
        return x.reshape([-1]) + y


class PythonAssertSymInt(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        assert y.max().item() > 0
        return y


class UnbackedScalarCtor(torch.nn.Module):
    def forward(self, u, zuf, b):
        return torch.tensor([u.item()]), torch.tensor([zuf.item()]), torch.tensor([b.item()])


class NestedSpec(torch.nn.Module):
    def forward(self, x):
        (a0, a1), (b0, b1), (c0, c1, c2) = x
        return a0 + a1 + b0 + b1 + c0 + c1 + c2


# --------------------------------------------------------------------- forced specializations

class Mod4Reshape(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0] - 1, 4, -1)


class FreeReshape(torch.nn.Module):
    def forward(self, x, y, z):
        return x.reshape([-1]) + y.reshape([-1]) + z


class Reshape3d(torch.nn.Module):
    def forward(self, x, y):
        return x.reshape([-1]) + y


class HybridFoo(torch.nn.Module):
    def forward(self, w, x, y, z):
        return w.reshape([-1]) + x, y + z


class UnbackedExpand(torch.nn.Module):
    def forward(self, xs):
        u0, u1, u2 = xs.tolist()
        x = torch.zeros(u0, u1, 1)  # original: torch.empty
        return x.expand(-1, u1, u2)


class UnbackedExpandBar(torch.nn.Module):
    def forward(self, xs):
        u0, u1 = xs.tolist()
        x = torch.zeros(u0)  # original: torch.empty
        return x.expand(u1)


class ReshapeViewHelper(torch.nn.Module):
    def forward(self, x):
        x = x.view(x.size(1), -1)
        return torch.nn.functional.softmax(x, dim=0)


class ExplicitGuards(torch.nn.Module):
    def forward(self, x, y):
        if x.shape[0] == y.shape[0]:
            return x + y
        elif x.shape[0] == y.shape[0] ** 3:
            return x + 2, y + 3
        elif x.shape[0] ** 2 == y.shape[0] * 3:
            return x * 2.0, y * 3.0


class UnbackedKth(torch.nn.Module):
    def forward(self, x, y):
        n = y.item()
        k = min(n, 128)
        return x.kthvalue(k, dim=0, keepdim=True).values


class IntermediateShapeComp(torch.nn.Module):
    def forward(self, x, y):
        z = torch.cat([x, x], dim=0)
        w = z.repeat(y.shape[0])
        return w.shape[0] + x.shape[0]


class ChecksToConstrainRange(torch.nn.Module):
    def forward(self, x, y):
        n = y.item()
        m = y.item()
        torch._check_is_size(n)
        torch._check(m >= 0)
        torch._check(n >= 3)
        torch._check(-m >= -9)
        torch._check(n <= 6)
        return x[:n]


class Baddbmm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(64, 64, 192, dtype=torch.float16))
        self.bias = torch.nn.Parameter(torch.randn(64, 1, 192, dtype=torch.float16))

    def forward(self, x):
        return torch.ops.aten.baddbmm.default(self.bias, x, self.weight)


class SymFloatOps(torch.nn.Module):
    def forward(self, x):
        return -(x.max().item() / 2) + x


class CseForSymint(torch.nn.Module):
    def forward(self, x, y):
        if (x.shape[0] ** 2 - y.shape[0] ** 2 >= 4
                and x.shape[0] ** 2 - y.shape[0] ** 2 <= 20
                and x.shape[0] ** 2 - y.shape[0] ** 2 != 15):
            return x * 2, y * 2


class Lin4(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)


class RepeatInterleave(torch.nn.Module):
    def forward(self, values, batch_sizes):
        return torch.repeat_interleave(torch.arange(values.shape[0]), batch_sizes)


class SimpleEquality(torch.nn.Module):
    def forward(self, x, y, z):
        return x + y + z


class OffBy4(torch.nn.Module):
    def forward(self, x, y):
        return x + y[4:]


class LinearRel(torch.nn.Module):
    def forward(self, x, y):
        return x[1::4] + y


class SerdesGeneric(torch.nn.Module):
    def forward(self, a, b, c, d):
        if d == "hello":
            x = a[0] + a[1][1:]
            b = torch.cat([b, b], dim=0).reshape([-1, 1])
            return x + b, c * 2


class Relations(torch.nn.Module):
    def forward(self, u, w, x, y, z):
        a = u[1:] + w + x
        b = y.flatten() + z
        return a, b


class CheckSpecialize4(torch.nn.Module):
    def forward(self, x):
        torch._check(x.shape[0] == 4)
        return x + 2


class ModConstraint(torch.nn.Module):
    def forward(self, x):
        return x.view(x.shape[0] - 1, -1)


class SymRound(torch.nn.Module):
    def forward(self, x):
        out_size = round(x.shape[0] / 2.0)
        return x[:out_size]


class LrShift(torch.nn.Module):
    def forward(self, x):
        rshift = x.shape[0] >> 1
        lshift = x.shape[0] << 1
        return x[:rshift], x[:lshift]


class IntLiftConstant(torch.nn.Module):
    def forward(self, a, x):
        return a + torch.tensor(1) + x


class UnbackedLt(torch.nn.Module):
    def forward(self, x, ranks):
        first_k = ranks.max().item()
        narrow = x.narrow(dim=1, start=0, length=first_k)
        return narrow < narrow.size(1)


class UnbackedContiguous(torch.nn.Module):
    def forward(self, x, mask):
        masked_select = x.masked_select(mask)
        view = masked_select.view(-1, 1548)
        return view.contiguous() + 1


class UnbackedSelectIndex(torch.nn.Module):
    def forward(self, x, y):
        u0 = y.item()
        return x.select(0, u0)


class UnbackedSdpa(torch.nn.Module):
    def forward(self, query, cache, start_pos):
        sp = start_pos.item()
        torch._check(sp >= 0)
        torch._check(sp <= 126)
        key = cache[:, : sp + 1, :, :]
        value = cache[:, : sp + 1, :, :]
        query = query.transpose(1, 2)
        key = key.transpose(1, 2)
        value = value.transpose(1, 2)
        return torch.nn.functional.scaled_dot_product_attention(query, key, value)


def _sdpa_args(pos: int) -> tuple[Any, ...]:
    g = torch.Generator().manual_seed(1)
    cache = torch.randn(1, 128, 16, 128, generator=g).to(torch.float16)
    query = torch.randn(1, 1, 16, 128, generator=g).to(torch.float16)
    return query, cache, torch.tensor([pos])


def _t(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def _shapes3(shapes: Any) -> tuple[Any, ...]:
    return tuple(torch.randn(*s) for s in shapes)


CASES: list[Ported] = [
    Ported("test_unbacked_noncontig_lin", SRC + "test_unbacked_noncontig_lin", seeded(UnbackedNoncontigLin),
           lambda: (torch.tensor([128]),), runs=lambda: [(torch.tensor([512]),)],
           note="item() as a size; torch.empty replaced by torch.zeros"),
    Ported("test_runtime_assert_for_prim", SRC + "test_runtime_assert_for_prim", AddXY,
           lambda: (torch.ones(7, 5), 5), lambda: {"x": {0: Dim("dim0_x", min=6)}, "y": None},
           runs=lambda: [(torch.ones(8, 5), 5), (torch.ones(8, 5), 6)]),
    Ported("test_runtime_assert_for_prim_v2", SRC + "test_runtime_assert_for_prim", AddXY,
           lambda: (torch.ones(7, 5), 5.0), lambda: {"x": {0: Dim("dim0_x", min=6)}, "y": None},
           runs=lambda: [(torch.ones(7, 5), 6.0)], note="float constant input"),
    Ported("test_sym_or_sym_and", SRC + "test_sym_or_sym_and", SymOrSymAnd,
           lambda: (torch.tensor([2, 6, 5]),),
           runs=lambda: [(torch.tensor([4, 7, 5]),), (torch.tensor([6, 5, 5]),), (torch.tensor([3, 6, 5]),),
                         (torch.tensor([6, 6, 6]),)]),
    Ported("test_redundant_assert_max_upper_bound", SRC + "test_redundant_assert_max_upper_bound", NonzeroCheck,
           lambda: (torch.tensor([1, 1, 1, 0, 1]),), lambda: ((Dim("dim"),),),
           runs=lambda: [(torch.tensor([1, 1, 1, 1, 0, 0, 1]),), (torch.tensor([1, 0, 0, 1]),)]),
    Ported("test_export_cond_symbool_pred", SRC + "test_export_cond_symbool_pred", CondSymboolPred,
           lambda: (torch.ones(6, 4),), lambda: {"x": {0: Dim("dim0", min=3)}},
           runs=lambda: [(torch.ones(6, 4),), (torch.ones(3, 4),)]),
    Ported("test_ccode_python_mod", SRC + "test_ccode_python_mod", CcodePythonMod,
           lambda: (torch.tensor([2, 3]),), runs=lambda: [(torch.tensor([-5, 7]),)]),
    Ported("test_no_check_is_size_error", SRC + "test_no_check_is_size_error", NoCheckIsSize,
           lambda: (torch.tensor(6),), runs=lambda: [(torch.tensor(6),), (torch.tensor(5),)],
           note="randn(24) replaced by arange(24.)"),
    Ported("test_multiple_definitions_same_name_dim", SRC + "test_multiple_definitions_same_name_dim", MatmulXY,
           lambda: (torch.randn(10, 10), torch.randn(10, 10)),
           lambda: (lambda A, B: {"x": (A, B), "y": (B, A)})(Dim("C", min=3), Dim("C", max=12)),
           note="torch: UserError 'Found different definitions ... for the same symbolic dimension'"),
    Ported("test_export_decomps_dynamic", SRC + "test_export_decomps_dynamic", seeded(Lin10to1),
           lambda: (torch.randn(5, 10),), lambda: {"x": {0: Dim("batch")}}),
    Ported("test_redundant_asserts", SRC + "test_redundant_asserts", RedundantAsserts,
           lambda: (torch.tensor([3]),), runs=lambda: [(torch.tensor([0]),), (torch.tensor([7]),)]),
    Ported("test_non_arg_name_dynamic_shapes_api", SRC + "test_non_arg_name_dynamic_shapes_api", SumAB,
           lambda: (torch.randn(4, 4), torch.randn(4, 4)), lambda: (None, {0: Dim("dim")}),
           runs=lambda: [(torch.randn(4, 4), torch.randn(7, 4))]),
    Ported("test_non_arg_name_dynamic_shapes_api_v2", SRC + "test_non_arg_name_dynamic_shapes_api", SumAB,
           lambda: (torch.randn(4, 4), torch.randn(4, 4)), lambda: (None, None),
           runs=lambda: [(torch.randn(4, 4), torch.randn(7, 4))], note="static: 7 must be refused"),
    Ported("test_non_arg_name_dynamic_shapes_api_with_container_type",
           SRC + "test_non_arg_name_dynamic_shapes_api_with_container_type", SumContainer,
           lambda: ((torch.randn(4, 4), torch.randn(4, 4)), torch.randn(4, 4)),
           lambda: ((None, {0: Dim("dim", min=3)}), None),
           runs=lambda: [((torch.randn(4, 4), torch.randn(2, 4)), torch.randn(4, 4)),
                         ((torch.randn(4, 4), torch.randn(9, 4)), torch.randn(4, 4))]),
    Ported("test_runtime_assert_with_size", SRC + "test_runtime_assert_with_size", RuntimeAssertWithSize,
           lambda: (torch.tensor(5), torch.ones(10)), lambda: {"x": None, "y": {0: Dim("t")}},
           runs=lambda: [(torch.tensor(6), torch.randn(13)), (torch.tensor(14), torch.randn(13))]),
    Ported("test_pad_sequence", SRC + "test_pad_sequence", PadSeq, lambda: (torch.randn(3, 2),),
           lambda: {"x": {0: Dim("batch_size")}}),
    Ported("test_pad_sequence_v2", SRC + "test_pad_sequence", PadSeqBatchFirst, lambda: (torch.randn(3, 2),),
           lambda: {"x": {0: Dim("batch_size")}}),
    Ported("test_pad_sequence_v3", SRC + "test_pad_sequence", PadSeqMulti,
           lambda: (torch.randn(5, 2), torch.randn(4, 2), torch.randn(3, 2)),
           lambda: {"x": {0: Dim("batch_size")}, "y": {0: Dim("y")}, "z": {0: Dim("z")}},
           runs=lambda: [(torch.randn(2, 2), torch.randn(6, 2), torch.randn(4, 2))]),
    Ported("test_pad_sequence_v4", SRC + "test_pad_sequence", PadSeqMultiBatchFirst,
           lambda: (torch.randn(5, 2), torch.randn(4, 2), torch.randn(3, 2)),
           lambda: {"x": {0: Dim("batch_size")}, "y": {0: Dim("y")}, "z": {0: Dim("z")}},
           runs=lambda: [(torch.randn(2, 2), torch.randn(6, 2), torch.randn(4, 2))],
           note="the original defines ModuleMultiBatchFirst but exports ModuleMulti again; ported as meant"),
    Ported("test_sym_sqrt", SRC + "test_sym_sqrt", SymSqrt, lambda: (torch.ones(16, 4),),
           lambda: {"x": {0: Dim("dim")}}),
    Ported("test_preserve_shape_dynamism_for_unused_inputs", SRC + "test_preserve_shape_dynamism_for_unused_inputs",
           UnusedDataclassInput, lambda: (_Inp3(f=torch.ones(10, 4), p=torch.zeros(10, 4)),),
           lambda: (lambda a, b: {"x": [{0: a}, {0: b}]})(*dims("dim0_x_f", "dim0_x_p")),
           runs=lambda: [(_Inp3(f=torch.ones(7, 4), p=torch.zeros(3, 4)),)], note="dims(); dataclass input"),
    Ported("test_symint_input_basic", SRC + "test_symint_input_basic", MulXY, lambda: (4, 5),
           lambda: {"x": DYNAMIC, "y": AUTO}, runs=lambda: [(4, 5), (3, 6)]),
    Ported("test_symint_input_basic_v2", SRC + "test_symint_input_basic", MulXY, lambda: (5, 5),
           lambda: {"x": None, "y": AUTO}, runs=lambda: [(5, 6), (3, 5)]),
    Ported("test_symint_input_basic_v3", SRC + "test_symint_input_basic", DictMooMul,
           lambda: ({"moo": 2}, torch.ones(3, 3)), lambda: {"x": {"moo": DYNAMIC}, "y": {0: DYNAMIC}},
           runs=lambda: [({"moo": 3}, torch.ones(4, 3))]),
    Ported("test_symint_input_specialization", SRC + "test_symint_input_specialization", SymintSpecialize,
           lambda: (3, torch.randn(4, 4)), lambda: (DYNAMIC, None),
           note="torch: UserError 'You marked ... but your code specialized it to be a constant'"),
    Ported("test_symint_input_specialization_v2", SRC + "test_symint_input_specialization", SymintSpecialize,
           lambda: (3, torch.randn(4, 4)), lambda: (AUTO, None), runs=lambda: [(4, torch.randn(4, 4))]),
    Ported("test_symint_input_ranges", SRC + "test_symint_input_ranges", MulXY, lambda: (3, torch.randn(4, 4)),
           lambda: (DYNAMIC(min=3, max=10), None),
           runs=lambda: [(4, torch.randn(4, 4)), (16, torch.randn(4, 4)), (2, torch.randn(4, 4))]),
    Ported("test_symint_input_ranges_v2", SRC + "test_symint_input_ranges", SymintRangeSubset,
           lambda: (4, torch.randn(4, 4)), lambda: (DYNAMIC(min=3, max=10), None),
           runs=lambda: [(5, torch.randn(4, 4)), (6, torch.randn(4, 4))], note="range narrows to [4, 5]"),
    Ported("test_symint_input_ranges_v3", SRC + "test_symint_input_ranges", SymintRangeBigger,
           lambda: (4, torch.randn(4, 4)), lambda: (DYNAMIC(min=3, max=10), None),
           runs=lambda: [(10, torch.randn(4, 4)), (11, torch.randn(4, 4))], note="range stays [3, 10]"),
    Ported("test_symint_input_ranges_v4", SRC + "test_symint_input_ranges", SymintRangeOutside,
           lambda: (14, torch.randn(4, 4)), lambda: (DYNAMIC(min=3, max=10), None),
           note="torch: ValueError '[3, 10], conflicting with ... [11, 19]'"),
    Ported("test_symint_input_additional_inputs", SRC + "test_symint_input_additional_inputs", AddXY,
           lambda: (6, 7), _additional_ints, runs=lambda: [(5, 5), (3, 5), (5, 4)]),
    Ported("test_symint_input_shapes_collection", SRC + "test_symint_input_shapes_collection", AddXY,
           _sc_int_args, _sc_int_shapes, runs=lambda: [(5, 5), (3, 5), (5, 4)],
           note="_IntWrapper args keyed in a ShapesCollection (shared module-level objects)"),
    Ported("test_dynamic_shapes_bounds", SRC + "test_dynamic_shapes_bounds", ShapesBounds,
           lambda: (_SB_X, _SB_Y, _SB_ZS), _sb_shapes,
           note="ShapesCollection of tensors; torch: Constraints violated (y.size(0) specialized to 3)"),
    Ported("test_replace_unbacked_with_very_large_upperbound",
           SRC + "test_replace_unbacked_with_very_large_upperbound", VeryLargeUpperbound,
           lambda: (torch.randn(6, 2), torch.tensor([12])), lambda: {"x": (AUTO, STATIC), "t": (STATIC,)},
           runs=lambda: [(torch.randn(4, 2), torch.tensor([8]))], kwargs={"strict": True}),
    Ported("test_python_asserts_with_sym_int", SRC + "test_python_asserts_with_sym_int", PythonAssertSymInt,
           lambda: (torch.zeros(4, dtype=torch.int),),
           runs=lambda: [(torch.ones(4, dtype=torch.int),), (-torch.ones(4, dtype=torch.int),)]),
    Ported("test_unbacked_scalar_constructor", SRC + "test_unbacked_scalar_constructor", UnbackedScalarCtor,
           lambda: (torch.tensor([3]), torch.tensor([3.14]), torch.tensor([True])),
           runs=lambda: [(torch.tensor([5]), torch.tensor([-1.2]), torch.tensor([False]))]),
    Ported("test_nested_dynamic_shapes_spec", SRC + "test_nested_dynamic_shapes_spec", NestedSpec,
           lambda: (((1, 2), (torch.randn(4, 4), torch.randn(4, 4)),
                     (torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4))),),
           lambda: {"x": ((None, None), (None, None), (None, None, None))}),
    Ported("test_disable_forced_specializations_ok", SRC + "test_disable_forced_specializations_ok", Mod4Reshape,
           lambda: (torch.randn(10, 72),), lambda: (lambda dx, dy: {"x": (dx, dy)})(*dims("dx", "dy")),
           runs=lambda: [(torch.randn(8, 7),), (torch.randn(12, 11),), (torch.randn(8, 8),)],
           kwargs={"prefer_deferred_runtime_asserts_over_guards": True},
           note="case 1; the original uses private _export(pre_dispatch=True)"),
    Ported("test_disable_forced_specializations_ok_v5", SRC + "test_disable_forced_specializations_ok", Mod4Reshape,
           lambda: (torch.randn(10, 72),), lambda: (lambda dx, dy: {"x": (dx, dy)})(*dims("dx", "dy")),
           runs=lambda: [(torch.randn(8, 7),), (torch.randn(12, 11),), (torch.randn(8, 8),)],
           note="case 1 with default options (not in the original): torch raises Constraints violated"),
    Ported("test_disable_forced_specializations_ok_v2", SRC + "test_disable_forced_specializations_ok", FreeReshape,
           lambda: (torch.randn(6, 8), torch.randn(3, 16), torch.randn(48)),
           lambda: {"x": [Dim(f"dx{i}", min=2) for i in range(2)], "y": [Dim(f"dy{i}", min=2) for i in range(2)],
                    "z": [Dim(f"dz{i}", min=4) for i in range(1)]},
           runs=lambda: [(torch.randn(48, 1), torch.randn(4, 12), torch.randn(48)),
                         (torch.randn(5, 8), torch.randn(4, 10), torch.randn(40)),
                         (torch.randn(5, 8), torch.randn(4, 5), torch.randn(30))],
           kwargs={"prefer_deferred_runtime_asserts_over_guards": True}, note="case 2, private_api=True"),
    Ported("test_disable_forced_specializations_ok_v3", SRC + "test_disable_forced_specializations_ok", FreeReshape,
           lambda: (torch.randn(6, 8), torch.randn(3, 16), torch.randn(48)),
           lambda: {"x": [Dim(f"dx{i}", min=2) for i in range(2)], "y": [Dim(f"dy{i}", min=2) for i in range(2)],
                    "z": [Dim(f"dz{i}", min=4) for i in range(1)]},
           runs=lambda: [(torch.randn(48, 1), torch.randn(4, 12), torch.randn(48)),
                         (torch.randn(5, 8), torch.randn(4, 10), torch.randn(40)),
                         (torch.randn(5, 8), torch.randn(4, 5), torch.randn(30))],
           note="case 2, public export"),
    Ported("test_disable_forced_specializations_ok_v4", SRC + "test_disable_forced_specializations_ok", Reshape3d,
           lambda: (torch.randn(4, 3, 2), torch.randn(24)),
           lambda: {"x": (Dim("dx0", min=2), Dim("dx1", min=2), Dim("dx2", min=2)), "y": (Dim("dy", min=8),)},
           runs=lambda: [(torch.randn(9, 7, 2), torch.randn(126)), (torch.randn(4, 3, 2), torch.randn(10))],
           kwargs={"prefer_deferred_runtime_asserts_over_guards": True}, note="case 3"),
    Ported("test_disable_forced_specializations_errors", SRC + "test_disable_forced_specializations_errors", HybridFoo,
           lambda: (torch.randn(3, 4), torch.randn(12), torch.randn(4), torch.randn(4)),
           lambda: {"w": [Dim(f"dw{i}") for i in range(2)], "x": [Dim(f"dx{i}") for i in range(1)],
                    "y": [Dim("dy")], "z": [Dim("dz")]},
           note="torch: Constraints violated, suggested fix dz = dy"),
    Ported("test_unbacked_expand", SRC + "test_unbacked_expand", UnbackedExpand, lambda: (torch.tensor([1, 2, 3]),),
           runs=lambda: [(torch.tensor([3, 4, 5]),), (torch.tensor([0, 1, 0]),)], note="empty -> zeros"),
    Ported("test_unbacked_expand_v2", SRC + "test_unbacked_expand", UnbackedExpandBar,
           lambda: (torch.tensor([2, 2]),),
           runs=lambda: [(torch.tensor([5, 5]),), (torch.tensor([1, 1]),), (torch.tensor([1, 5]),)],
           note="empty -> zeros"),
    Ported("test_reshape_view_helper", SRC + "test_reshape_view_helper", ReshapeViewHelper,
           lambda: (torch.rand(1024, 20, 16),), lambda: {"x": {0: Dim("batch")}},
           runs=lambda: [(torch.randn(20, 20, 16),), (torch.randn(400, 20, 16),), (torch.randn(42, 20, 16),)],
           kwargs={"prefer_deferred_runtime_asserts_over_guards": True}),
    Ported("test_allow_explicit_guards_as_runtime_asserts", SRC + "test_allow_explicit_guards_as_runtime_asserts",
           ExplicitGuards, lambda: (torch.randn(6), torch.randn(12)),
           lambda: {"x": [Dim("dx", min=4)], "y": [Dim("dy", min=4)]},
           runs=lambda: [(torch.randn(9), torch.randn(27)), (torch.randn(4), torch.randn(4)),
                         (torch.randn(64), torch.randn(4)), (torch.randn(10), torch.randn(9))],
           kwargs={"prefer_deferred_runtime_asserts_over_guards": True}),
    Ported("test_allow_explicit_guards_as_runtime_asserts_v2", SRC + "test_allow_explicit_guards_as_runtime_asserts",
           ExplicitGuards, lambda: (torch.randn(6), torch.randn(12)),
           lambda: {"x": [Dim("dx", min=4)], "y": [Dim("dy", min=4)]},
           runs=lambda: [(torch.randn(9), torch.randn(27)), (torch.randn(4), torch.randn(4))],
           note="same model with default export options (not in the original)"),
    Ported("test_unbacked_kth_value", SRC + "test_unbacked_kth_value", UnbackedKth,
           lambda: (torch.arange(64), torch.tensor([32])), runs=lambda: [(torch.arange(64), torch.tensor([5]))]),
    Ported("test_intermediate_shape_comp", SRC + "test_intermediate_shape_comp", IntermediateShapeComp,
           lambda: (torch.randn(6), torch.randn(4)), lambda: {"x": (Dim("dx0"),), "y": (Dim("dy"),)}),
    Ported("test_checks_to_constrain_range", SRC + "test_checks_to_constrain_range", ChecksToConstrainRange,
           lambda: (torch.randn(10), torch.tensor(6)),
           runs=lambda: [(torch.randn(10), torch.tensor(5)), (torch.randn(10), torch.tensor(2))]),
    Ported("test_baddbmm", SRC + "test_baddbmm", seeded(Baddbmm),
           lambda: (torch.randn(64, 1, 64, dtype=torch.float16),), lambda: ({1: Dim("batch")},),
           runs=lambda: [(torch.randn(64, 16, 64, dtype=torch.float16),)],
           note="original runs under backed_size_oblivious=True (not applied); run at 16 instead of 2048"),
    Ported("test_sym_float_operators", SRC + "test_sym_float_operators", SymFloatOps, lambda: (torch.ones(4),),
           runs=lambda: [(torch.arange(5.0),)]),
    Ported("test_cse_for_symint", SRC + "test_cse_for_symint", CseForSymint,
           lambda: (torch.randn(5), torch.randn(3)), lambda: {"x": (Dim("dx"),), "y": (Dim("dy"),)},
           runs=lambda: [(torch.randn(4), torch.randn(2)), (torch.randn(4), torch.randn(1))],
           kwargs={"prefer_deferred_runtime_asserts_over_guards": True}),
    Ported("test_export_linear_preserve_dynamic_shape", SRC + "test_export_linear_preserve_dynamic_shape",
           seeded(Lin4), lambda: (torch.randn(8, 4),), lambda: {"x": {0: Dim("x")}},
           runs=lambda: [(torch.randn(3, 4),), (torch.randn(7, 4),)]),
    Ported("test_repeat_interleave", SRC + "test_repeat_interleave", RepeatInterleave,
           lambda: (torch.tensor([[1, 2, 3]]), torch.tensor([2])), lambda: ({0: Dim("dim")}, {0: Dim("dim")}),
           runs=lambda: [(torch.tensor([[1, 2, 3], [4, 5, 6]]), torch.tensor([2, 3]))],
           note="original runs under backed_size_oblivious=True (not applied); fixed ints instead of randint"),
]

# test_automatic_dynamic_shapes_simple_equality
_SE_PASS_FULL = [((4, 4), (4, 4), (4, 4)), ((1, 1), (1, 1), (1, 1)), ((0, 9), (0, 9), (0, 9)),
                 ((4, 4), (4, 4), (4, 3)), ((4, 4), (5, 4), (4, 5))]
_SE_PASS_S1 = [((4, 3), (4, 3), (4, 3)), ((1, 3), (1, 3), (1, 3)), ((0, 3), (0, 3), (0, 3)),
               ((4, 4), (4, 4), (4, 4)), ((1, 1), (1, 1), (1, 1))]
_SE_PASS_STATIC = [((6, 3), (6, 3), (6, 3)), ((6, 4), (6, 4), (6, 4)), ((1, 3), (1, 3), (1, 3))]
for _i, _spec in enumerate([
        lambda: ((AUTO, AUTO), (AUTO, AUTO), (AUTO, AUTO)),
        lambda: [[AUTO, AUTO], [AUTO, AUTO], [AUTO, AUTO]],
        lambda: {"x": (AUTO, AUTO), "y": (AUTO, AUTO), "z": (AUTO, AUTO)}]):
    CASES.append(Ported("test_automatic_dynamic_shapes_simple_equality" + (f"_v{_i + 1}" if _i else ""),
                        SRC + "test_automatic_dynamic_shapes_simple_equality", SimpleEquality,
                        lambda: tuple(torch.randn(6, 3) for _ in range(3)), _spec,
                        runs=lambda: [_shapes3(s) for s in _SE_PASS_FULL], note="fully dynamic"))
for _i, _spec in enumerate([
        lambda: [{0: AUTO, 1: AUTO}, {0: AUTO, 1: AUTO}, (AUTO, None)],
        lambda: {"x": (AUTO, AUTO), "y": (AUTO, AUTO), "z": (AUTO, None)}]):
    CASES.append(Ported(f"test_automatic_dynamic_shapes_simple_equality_v{_i + 4}",
                        SRC + "test_automatic_dynamic_shapes_simple_equality", SimpleEquality,
                        lambda: tuple(torch.randn(6, 3) for _ in range(3)), _spec,
                        runs=lambda: [_shapes3(s) for s in _SE_PASS_S1], note="static s1"))
CASES.append(Ported("test_automatic_dynamic_shapes_simple_equality_v6",
                    SRC + "test_automatic_dynamic_shapes_simple_equality", SimpleEquality,
                    lambda: tuple(torch.randn(6, 3) for _ in range(3)),
                    lambda: {"x": (None, AUTO), "y": (AUTO, AUTO), "z": (AUTO, None)},
                    runs=lambda: [_shapes3(s) for s in _SE_PASS_STATIC], note="fully static"))

# test_automatic_dynamic_shapes_constant_relation
_OB_RUNS = [((10,), (14,)), ((3,), (7,)), ((2,), (6,)), ((10,), (13,))]
for _i, _spec in enumerate([lambda: ((AUTO,), (AUTO,)), lambda: {"x": (AUTO,), "y": (AUTO,)},
                            lambda: {"x": (AUTO,), "y": (None,)}]):
    CASES.append(Ported("test_automatic_dynamic_shapes_constant_relation" + (f"_v{_i + 1}" if _i else ""),
                        SRC + "test_automatic_dynamic_shapes_constant_relation", OffBy4,
                        lambda: (torch.randn(6), torch.randn(10)), _spec,
                        runs=lambda: [_shapes3(s) for s in _OB_RUNS]))

# test_automatic_dynamic_shapes_linear_relation
_LR_RUNS = [((33,), (8,)), ((32,), (8,)), ((31,), (8,)), ((30,), (8,)), ((34,), (8,)), ((22,), (5,)),
            ((21,), (5,)), ((20,), (5,)), ((19,), (5,)), ((18,), (5,))]
for _i, _spec in enumerate([lambda: ((AUTO,), (AUTO,)), lambda: {"x": (AUTO,), "y": (AUTO,)},
                            lambda: ((AUTO,), None), lambda: {"x": (AUTO,), "y": None},
                            lambda: (None, (AUTO,))]):
    CASES.append(Ported("test_automatic_dynamic_shapes_linear_relation" + (f"_v{_i + 1}" if _i else ""),
                        SRC + "test_automatic_dynamic_shapes_linear_relation", LinearRel,
                        lambda: (torch.randn(21), torch.randn(5)), _spec,
                        runs=lambda: [_shapes3(s) for s in _LR_RUNS]))


def _serdes_shapes() -> Any:
    dz = Dim("dz", min=4, max=16)
    dx = 2 * dz
    dy = dx + 1
    return {"a": [(dx, 4), (dy, 4)], "b": (dz,), "c": None, "d": None}


def _serdes_in(a0: int, b: int, c: int = 4) -> tuple[Any, ...]:
    return [torch.randn(a0, 4), torch.randn(a0 + 1, 4)], torch.randn(b), torch.randn(c, c), "hello"


CASES += [
    Ported("test_dynamic_shapes_serdes_generic", SRC + "test_dynamic_shapes_serdes_generic", SerdesGeneric,
           lambda: _serdes_in(8, 4), _serdes_shapes,
           runs=lambda: [_serdes_in(16, 8), _serdes_in(24, 12), _serdes_in(16, 8, 5)],
           note="derived dims 2*dz, 2*dz+1"),
    Ported("test_dim_dynamic", SRC + "test_dim_dynamic", Relations,
           lambda: (torch.randn(5), torch.randn(4), torch.randn(4), torch.randn(4, 4), torch.randn(16)),
           lambda: {"u": (DYNAMIC,), "w": (DYNAMIC,), "x": (DYNAMIC,), "y": (DYNAMIC, DYNAMIC), "z": (DYNAMIC,)},
           runs=lambda: [(torch.randn(6), torch.randn(5), torch.randn(5), torch.randn(7, 8), torch.randn(56))]),
    Ported("test_dim_dynamic_v2", SRC + "test_dim_dynamic", CheckSpecialize4, lambda: (torch.randn(4, 8),),
           lambda: {"x": (DYNAMIC, DYNAMIC)}, note="torch: UserError 'You marked ... specialized'"),
    Ported("test_dim_dynamic_v3", SRC + "test_dim_dynamic", ModConstraint, lambda: (torch.randn(3, 4),),
           lambda: {"x": (DYNAMIC, DYNAMIC)}, runs=lambda: [(torch.randn(5, 8),), (torch.randn(4, 2),)],
           kwargs={"prefer_deferred_runtime_asserts_over_guards": True}, note="private_api=True"),
    Ported("test_dim_dynamic_v4", SRC + "test_dim_dynamic", ModConstraint, lambda: (torch.randn(3, 4),),
           lambda: {"x": (DYNAMIC, DYNAMIC)}, runs=lambda: [(torch.randn(5, 8),), (torch.randn(4, 2),)],
           note="private_api=False"),
    Ported("test_dynamic_sym_round", "test/export/test_export.py::TestExport::test_dynamic_sym_round", SymRound,
           lambda: (torch.randn(8),), lambda: {"x": {0: Dim("n", min=5, max=10)}},
           runs=lambda: [(torch.randn(i),) for i in range(5, 11)]),
    Ported("test_dynamic_lr_shift", SRC + "test_dynamic_lr_shift", LrShift, lambda: (torch.randn(8),),
           lambda: {"x": {0: Dim("N", min=5, max=10)}}),
    Ported("test_int_lift_constant", "test/export/test_export.py::TestExportCustomClass::test_int_lift_constant",
           IntLiftConstant, lambda: (1, torch.ones(3)), lambda: (DYNAMIC, {0: DYNAMIC}),
           runs=lambda: [(3, torch.randn(4))]),
    Ported("test_export_unbacked_lt", "test/export/test_export.py::TestExportCustomClass::test_export_unbacked_lt",
           UnbackedLt, lambda: (torch.randn(8, 16), torch.arange(8, dtype=torch.int8)),
           lambda: {"x": (AUTO, AUTO), "ranks": (AUTO,)}, kwargs={"strict": True},
           runs=lambda: [(torch.randn(4, 10), torch.arange(6, dtype=torch.int8))]),
    Ported("test_unbacked_contiguous",
           "test/export/test_export.py::TestExportCustomClass::test_unbacked_contiguous", UnbackedContiguous,
           lambda: (torch.randn(768, 1548, dtype=torch.bfloat16), torch.zeros(768, 1, dtype=torch.bool)),
           kwargs={"strict": True},
           runs=lambda: [(torch.randn(768, 1548, dtype=torch.bfloat16),
                          torch.arange(768).reshape(768, 1) % 2 == 0)],
           note="no spec; masked_select then view(-1, 1548)"),
    Ported("test_unbacked_select_index",
           "test/export/test_export.py::TestExportCustomClass::test_unbacked_select_index", UnbackedSelectIndex,
           lambda: (torch.randn(3, 3, dtype=torch.bfloat16), torch.tensor([0])),
           runs=lambda: [(torch.randn(3, 3, dtype=torch.bfloat16), torch.tensor([2]))]),
    Ported("test_unbacked_sdpa", "test/export/test_export.py::TestOneOffModelExportResult::test_unbacked_sdpa",
           UnbackedSdpa, lambda: _sdpa_args(0), runs=lambda: [_sdpa_args(3), _sdpa_args(126)],
           note="original under sdpa_kernel(MATH) and no_grad (not applied)"),
]
