"""Dynamic-shape tests of PyTorch's ``test/dynamo/test_export.py`` (and a few data-dependent
ones of ``test/export/test_draft_export.py``), ported to ``torch.export.export`` form.

``torch._dynamo.export(f, dynamic_shapes=...)`` / ``constraints=[dynamic_dim(...)]`` become
``dynamic_shapes`` with ``Dim``; ``config.patch(assume_static_by_default=False)`` becomes
``Dim.AUTO`` on every dim. Tests that ran through dynamo keep ``strict=True``; draft_export
tests use plain (non-strict) ``torch.export.export``. Models holding parameters are built
under a fixed seed so eager and both programs share weights. ``torch.empty`` outputs are
replaced by ``torch.zeros`` (so programs can be compared with eager).
"""
from __future__ import annotations

import math

import torch
from functorch.experimental.control_flow import map as cf_map
from torch.export import Dim

from benchmarks.bench_ported import Ported

SRC = "test/dynamo/test_export.py::ExportTests::"
DRAFT = "test/export/test_draft_export.py::TestDraftExport::"
STRICT = {"strict": True}


def _seeded(cls, *a):
    def make():
        torch.manual_seed(0)
        return cls(*a)
    return make


# --- shape control flow -------------------------------------------------------------------

class ShapeControlFlow1(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 10:
            return x.cos()
        return x.sin()


class CondDynPredList(torch.nn.Module):
    def forward(self, x):
        def true_fn(x):
            return x + x

        def false_fn(x):
            return x[:2].clone()

        return torch.cond(x.shape[0] <= 2, true_fn, false_fn, [x])


class CondDynPredTuple(torch.nn.Module):
    def forward(self, x):
        def true_fn(x):
            return x + x

        def false_fn(x):
            return x[:2].clone()

        return torch.cond(x.shape[0] <= 2, true_fn, false_fn, (x,))


class SymbolicShapeEmpty(torch.nn.Module):
    def forward(self, x):
        return torch.zeros(x.shape[0] * 2)  # original: torch.empty


class DynamicSlicing(torch.nn.Module):
    def forward(self, x):
        return x[: x.shape[0] - 2, x.shape[1] - 1 :: 2]


class DynamicSlicingSimple(torch.nn.Module):
    def forward(self, x):
        return x[slice(None, None, None)]


class PreDispatchSimple(torch.nn.Module):
    def forward(self, x):
        y = torch.ones_like(x)
        return torch.matmul(x, y)


class SymBool(torch.nn.Module):
    def forward(self, x):
        a = torch.scalar_tensor(x.shape[0] > 4)
        return x.sin().sum() + a.sum()


class ListContains(torch.nn.Module):
    def forward(self, x):
        assert x.size(-1) in [4, 5, 6], "bad"
        return x + x


class ListNotContains(torch.nn.Module):
    def forward(self, x):
        assert x.size(0) not in [4, 5, 6], "bad1"
        assert "monkey" not in ["cow", "pig"], "bad2"
        return x + x


# --- constraint violations ----------------------------------------------------------------

class CVFoo(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] == x.shape[1] * 2:
            return x + 1
        else:
            return x + 2


class CVBar(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] == 5:
            return x + 1
        else:
            return x + 2


class CVQux(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 5 and x.shape[0] < 10:
            return x + 1
        else:
            return x + 2


class Untracked(torch.nn.Module):
    def forward(self, x, y):
        return y + 1


class GuardFull(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] == 3:
            return x.sin()
        return x.cos()


class GuardPartial(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 3:
            return x.sin()
        return x.cos()


class Relationship(torch.nn.Module):
    def forward(self, a, b, c):
        if a.shape[0] == b.shape[1] == c.shape[2]:
            return a.sin()
        return a.cos()


class NoRaise(torch.nn.Module):
    def forward(self, a, b, c):
        if a.shape[1] == 3:
            return a.cos()
        return a * b * c


class MultiDynUnsafe(torch.nn.Module):
    def forward(self, a, b, c):
        if a.shape[0] == c.shape[0]:
            return a.cos()
        return a * c, b


class RedundantDim(torch.nn.Module):
    def forward(self, x, y):
        if x.shape[0] == y["k"].shape[0]:
            return x + 1
        else:
            return x - 1


class EnforceEq(torch.nn.Module):
    def forward(self, x, y):
        return torch.matmul(x, y)


class NonzeroChecked(torch.nn.Module):
    def forward(self, x):
        b = x.nonzero()
        torch._check(b.shape[0] >= 2)
        torch._check(b.shape[0] <= 5)
        return b


class ItemSize(torch.nn.Module):
    def forward(self, x, y):
        b = x.item()
        return torch.zeros((b, y.shape[0]))  # original: torch.empty


class ItemSizeChecked(torch.nn.Module):
    def forward(self, x, y):
        b = x.item()
        torch._check_is_size(b)  # original: constrain_as_size(b)
        return torch.zeros((b, y.shape[0]))


class DimNot1(torch.nn.Module):
    def forward(self, a):
        if a.shape[0] != 1:
            return a.cos()
        return a * a


class RangeFoo(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 3:  # ok
            return x.sin()
        return x.cos()


class RangeBar(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 5:  # error
            return x.sin()
        return x.cos()


class TrivialFoo(torch.nn.Module):
    def forward(self, x):
        if (2 * x.shape[0] + 3) % (x.shape[0] - 3) == 0:
            return x + 1
        else:
            return x - 1


class TrivialBar(torch.nn.Module):
    def forward(self, x):
        if (2 * x.shape[0] + 2) % (x.shape[0] + 1) == 0:
            return x + 1
        else:
            return x - 1


class TrivialQux(torch.nn.Module):
    def forward(self, x):
        if (3 * x.shape[0]) % 2 == 0:
            return x + 1
        else:
            return x - 1


class Cos(torch.nn.Module):
    def forward(self, x):
        return x.cos()


class PersistAssert(torch.nn.Module):
    def forward(self, x):
        assert x.shape[0] > 4, "Shape must be more than 4"
        return x.cos() + x.sin()


class RoundSlice(torch.nn.Module):
    def forward(self, x):
        return x[: round(x.shape[0] / 2)]


class FloorSlice(torch.nn.Module):
    def forward(self, x):
        return x[: math.floor(x.shape[0] / 2)]


def _t(x):
    return x.cos()


def _f(x):
    return x.sin()


class CondPredSym(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.shape[0] > 2, _t, _f, [x])


class CondPredTensor(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.all(), _t, _f, [x])


class CondPredComplex(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.dim() > 1 and x.shape[1] > 5 and x.shape[1] <= 10, _t, _f, [x])


class SymContains(torch.nn.Module):
    def forward(self, x, y):
        return x.size(0) in y


class CondMetaMismatch(torch.nn.Module):
    def forward(self, x):
        def true_fn(x):
            return torch.tensor([[3], [2]])

        def false_fn(x):
            return torch.tensor([3.14])

        return torch.cond(x.shape[0] < 3, true_fn, false_fn, [x])


class DynamicSliceExportMod(torch.nn.Module):
    def forward(self, x):
        results = []
        for i in range(4):
            results.append(x[: x.size(0) - i, i : x.size(2), i:3])
        return tuple(results)


class DynamicShapeSimpleModel(torch.nn.Module):
    def forward(self, a, b, c):
        d = (torch.matmul(a, b) + c) / 2
        d_s0 = d.shape[0]
        d_s1 = d.shape[1]
        d_s3 = d_s0 * d_s1
        e = d.view(d_s3)
        return torch.cat([e, e])


class LinearModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear(x)


class _A(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buffer1", torch.zeros(6, 4))

    def forward(self):
        return self.buffer1.sum()


class _B(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buffer2", torch.ones(6, 4))

    def forward(self):
        return self.buffer2.sum()


class CondBufferLifted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = _A()
        self.b = _B()

    def forward(self, x):
        def true_fn(x):
            return x.cos() + self.a()

        def false_fn(x):
            return x.sin() + self.b()

        return (torch.cond(x.shape[0] > 4, true_fn, false_fn, [x]),)


class NestedCondBufferLifted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = _A()
        self.b = _B()

    def forward(self, x):
        def true_true_fn(x):
            return x.cos() + self.a()

        def true_false_fn(x):
            return x.cos() + self.a() + 1

        def true_fn(x):
            return torch.cond(x.shape[0] > 5, true_true_fn, true_false_fn, [x])

        def false_fn(x):
            return x.sin() + self.b()

        return (torch.cond(x.shape[0] > 4, true_fn, false_fn, [x]),)


class MapCond(torch.nn.Module):
    def inner(self, x, pred):
        def true_fn(x):
            return x + x

        def false_fn(x):
            return x * x

        return torch.cond(pred, true_fn, false_fn, [x])

    def forward(self, pred, xs):
        def body(x, pred):
            return self.inner(x, pred)

        return cf_map(body, xs, pred)


class MapZero(torch.nn.Module):
    def forward(self, xs):
        def body(x):
            return x + 1

        return cf_map(body, xs)


# --- draft_export data-dependent tests (ported to torch.export.export) ---------------------

class UnbackedDivMod(torch.nn.Module):
    def forward(self, x):
        x = torch.zeros(x.item())
        x = x.unsqueeze(0).repeat(10, 2)
        return x.view(-1, 2, 2345)


class DedupDD(torch.nn.Module):
    def forward(self, x, y, z):
        res = 0
        for v in [x, y]:
            b = v.item()
            if b > 10:
                res += v * b
            else:
                res += v + b
        return z * res


class ComplexDD(torch.nn.Module):
    def forward(self, x, y):
        a = x.item()
        a = -a
        a = a // 3
        a = a + 5
        z = torch.cat([y, y])
        return z[:a]


class Offsets(torch.nn.Module):
    def forward(self, x):
        a = x.item()
        if a == 0:
            raise RuntimeError("bad")
        return x * a


class ShapeFailure(torch.nn.Module):
    def forward(self, a):
        assert a.shape[0] == 3
        return a * a


class MaskedLinear(torch.nn.Module):
    def forward(self, x, mask, weight, bias):
        masked = x[mask != 0, :, :]
        return torch.nn.functional.linear(masked, weight, bias)


class Constantify(torch.nn.Module):
    def forward(self, x, y):
        xt = torch.tensor(x.shape)
        u0 = xt[0].item()
        return y * torch.arange(u0)


class DDSliceItem(torch.nn.Module):
    def forward(self, a, b, c):
        res = a + b  # original: a custom op mylib::foo1 computing a + b
        c_item = c.item()
        return res[:c_item]


def _mask(n, ones=()):
    m = torch.zeros(n)
    for i in ones:
        m[i] = 1
    return m


R = torch.randn

CASES = [
    # shape control flow
    Ported("dynamo_shape_control_flow_1_auto", SRC + "test_export_shape_control_flow_1", ShapeControlFlow1,
           lambda: (torch.ones(6, 4),), lambda: ({0: Dim.AUTO},), lambda: [(torch.ones(3, 4),), (torch.ones(12, 4),)],
           STRICT, "guard x.shape[0] <= 10 from the example"),
    Ported("dynamo_shape_control_flow_1_dim", SRC + "test_export_shape_control_flow_1", ShapeControlFlow1,
           lambda: (torch.ones(6, 4),), lambda: ({0: Dim("b")},), lambda: [(torch.ones(3, 4),)],
           STRICT, "named Dim: torch refuses (guard <= 10)"),
    Ported("dynamo_cond_dynamic_shape_pred_list", SRC + "test_export_with_cond_dynamic_shape_pred", CondDynPredList,
           lambda: (R(2, 2),), lambda: ({0: Dim("b")},), lambda: [(R(3, 2),), (R(5, 2),)],
           STRICT, "cond on x.shape[0] <= 2, branches of different sizes"),
    Ported("dynamo_cond_dynamic_shape_pred_tuple_ex3", SRC + "test_export_with_cond_dynamic_shape_pred", CondDynPredTuple,
           lambda: (R(3, 2),), lambda: ({0: Dim("b")},), lambda: [(R(2, 2),), (R(1, 2),)],
           STRICT, "tuple operands, example in the false branch"),
    Ported("dynamo_cond_dynamic_shape_pred_auto", SRC + "test_export_with_cond_dynamic_shape_pred", CondDynPredList,
           lambda: (R(2, 2),), lambda: ({0: Dim.AUTO, 1: Dim.AUTO},), lambda: [(R(3, 2),)],
           STRICT, "AUTO variant"),
    Ported("dynamo_export_symbolic_shape", SRC + "test_export_symbolic_shape", SymbolicShapeEmpty,
           lambda: (R(6, 5),), lambda: ({0: Dim.AUTO, 1: Dim.AUTO},), lambda: [(R(3, 2),)],
           STRICT, "assume_static_by_default=False -> AUTO; empty -> zeros"),
    Ported("dynamo_dynamic_slicing_auto", SRC + "test_dynamic_slicing", DynamicSlicing,
           lambda: (R(4, 5),), lambda: ({0: Dim.AUTO, 1: Dim.AUTO},), lambda: [(R(6, 7),)],
           STRICT, "x[: s0 - 2, s1 - 1 :: 2]"),
    Ported("dynamo_dynamic_slicing_nonstrict", SRC + "test_dynamic_slicing", DynamicSlicing,
           lambda: (R(4, 5),), lambda: ({0: Dim("a"), 1: Dim("b")},), lambda: [(R(6, 7),)],
           {}, "non-strict variant"),
    Ported("dynamo_dynamic_slicing_simple", SRC + "test_dynamic_slicing_simple", DynamicSlicingSimple,
           lambda: (R(4, 5),), lambda: ({0: Dim.AUTO, 1: Dim.AUTO},), lambda: [(R(6, 7),)], STRICT),
    Ported("dynamo_pre_dispatch_simple_eq", SRC + "test_pre_dispatch_simple", PreDispatchSimple,
           lambda: (R(5, 5),), lambda: (lambda d: ({0: d, 1: d},))(Dim("d")), lambda: [(R(6, 6),)],
           STRICT, "matmul(x, ones_like(x)): square, one Dim"),
    Ported("dynamo_pre_dispatch_simple_two_dims", SRC + "test_pre_dispatch_simple", PreDispatchSimple,
           lambda: (R(5, 5),), lambda: ({0: Dim("a"), 1: Dim("b")},), lambda: [(R(6, 6),)],
           STRICT, "two Dims: matmul forces a == b (torch refuses)"),
    Ported("dynamo_pre_dispatch_simple_auto", SRC + "test_pre_dispatch_simple", PreDispatchSimple,
           lambda: (R(5, 5),), lambda: ({0: Dim.AUTO, 1: Dim.AUTO},), lambda: [(R(6, 6),)],
           STRICT, "AUTO: torch infers a == b"),
    Ported("dynamo_symbool", SRC + "test_symbool", SymBool,
           lambda: (torch.ones(6, 4),), lambda: ({0: Dim("b")},), lambda: [(torch.ones(3, 4),)], STRICT),
    Ported("dynamo_list_contains_auto", SRC + "test_list_contains", ListContains,
           lambda: (R(1, 5),), lambda: ({0: Dim.AUTO, 1: Dim.AUTO},), lambda: [(R(3, 5),)], STRICT),
    Ported("dynamo_list_contains_dim", SRC + "test_list_contains", ListContains,
           lambda: (R(2, 5),), lambda: ({1: Dim("d")},), lambda: [(R(2, 4),), (R(2, 6),)],
           STRICT, "named Dim on the asserted dim (size in {4,5,6})"),
    Ported("dynamo_list_contains_dim_range", SRC + "test_list_contains", ListContains,
           lambda: (R(2, 5),), lambda: ({1: Dim("d", min=4, max=6)},), lambda: [(R(2, 4),), (R(2, 6),)],
           STRICT, "variant: Dim(4..6) satisfies the assert"),
    Ported("dynamo_list_not_contains_auto", SRC + "test_list_not_contains", ListNotContains,
           lambda: (R(1, 5),), lambda: ({0: Dim.AUTO, 1: Dim.AUTO},), lambda: [(R(1, 7),)], STRICT),
    Ported("dynamo_list_not_contains_dim", SRC + "test_list_not_contains", ListNotContains,
           lambda: (R(3, 5),), lambda: ({0: Dim("b")},), lambda: [(R(7, 5),), (R(2, 5),)],
           STRICT, "named Dim on dim 0: size not in {4,5,6}"),
    # constraint violations
    Ported("dynamo_cv_messages_foo", SRC + "test_constraint_violation_error_messages", CVFoo,
           lambda: (torch.zeros(8, 4),), lambda: {"x": (Dim("dim0", min=3, max=10), Dim("dim1"))},
           lambda: [], STRICT, "dim0 == 2*dim1: torch refuses"),
    Ported("dynamo_cv_messages_foo_derived", SRC + "test_constraint_violation_error_messages", CVFoo,
           lambda: (torch.zeros(8, 4),), lambda: (lambda d1: {"x": (2 * d1, d1)})(Dim("dim1", min=2, max=5)),
           lambda: [(torch.zeros(6, 3),), (torch.zeros(10, 5),)], STRICT, "variant: the suggested fix dim0 = 2*dim1"),
    Ported("dynamo_cv_messages_bar", SRC + "test_constraint_violation_error_messages", CVBar,
           lambda: (torch.zeros(5),), lambda: {"x": (Dim("dim0", min=3, max=8),)}, lambda: [],
           STRICT, "specialized to 5: torch refuses"),
    Ported("dynamo_cv_messages_qux", SRC + "test_constraint_violation_error_messages", CVQux,
           lambda: (torch.zeros(7),), lambda: {"x": (Dim("dim0", min=3, max=8),)}, lambda: [],
           STRICT, "5 < x < 10 with dim0 in [3, 8]: torch refuses"),
    Ported("dynamo_cv_messages_qux_fixed", SRC + "test_constraint_violation_error_messages", CVQux,
           lambda: (torch.zeros(7),), lambda: {"x": (Dim("dim0", min=6, max=8),)},
           lambda: [(torch.zeros(6),), (torch.zeros(8),)], STRICT, "variant: the suggested range 6..8"),
    Ported("dynamo_untracked_inputs_in_constraints", SRC + "test_untracked_inputs_in_constraints", Untracked,
           lambda: (R(2), R(5, 4)), lambda: {"x": {0: Dim("dim0_x")}, "y": {0: Dim("dim0_y")}},
           lambda: [(R(3), R(5, 4)), (R(7), R(2, 4))], STRICT, "x unused; no specialization"),
    Ported("dynamo_raise_guard_full_constraint", SRC + "test_export_raise_guard_full_constraint", GuardFull,
           lambda: (R(3, 3, 3),), lambda: ({0: Dim("dimx")},), lambda: [], STRICT, "x.shape[0] == 3: torch refuses"),
    Ported("dynamo_raise_guard_full_constraint_auto", SRC + "test_export_raise_guard_full_constraint", GuardFull,
           lambda: (R(3, 3, 3),), lambda: ({0: Dim.AUTO},), lambda: [(R(3, 3, 3),)], STRICT, "AUTO specializes"),
    Ported("dynamo_raise_guard_partial_constraint", SRC + "test_export_raise_guard_partial_constraint", GuardPartial,
           lambda: (R(3, 3, 3),), lambda: ({0: Dim("dimx")},), lambda: [], STRICT, "x.shape[0] > 3: torch refuses"),
    Ported("dynamo_raise_on_relationship_bad", SRC + "test_export_raise_on_relationship", Relationship,
           lambda: (R(3, 3, 3), R(3, 3, 3), R(3, 3, 3)), lambda: (lambda d: ({0: d}, {0: d}, {0: d}))(Dim("dim")),
           lambda: [], STRICT, "a0 == b1 == c2 with b1, c2 static: torch refuses"),
    Ported("dynamo_raise_on_relationship_ok", SRC + "test_export_raise_on_relationship", Relationship,
           lambda: (R(3, 3, 3), R(3, 3, 3), R(3, 3, 3)), lambda: (lambda d: ({0: d}, {1: d}, {2: d}))(Dim("dim")),
           lambda: [(R(5, 3, 3), R(3, 5, 3), R(3, 3, 5))], STRICT),
    Ported("dynamo_export_no_raise", SRC + "test_export_no_raise", NoRaise,
           lambda: (R(3, 3, 3), R(3, 3, 3), R(3, 3, 3)), lambda: (lambda d: ({0: d}, {0: d}, {0: d}))(Dim("dim")),
           lambda: [(R(5, 3, 3), R(5, 3, 3), R(5, 3, 3))], STRICT),
    Ported("dynamo_multi_dyn_unsafe_relationship_bad", SRC + "test_export_multi_dynamic_dim_unsafe_relationship",
           MultiDynUnsafe, lambda: (R(3, 3, 3), R(2, 2, 2), R(3, 3, 3)),
           lambda: ({0: Dim("dimx")}, {0: Dim("dimy")}, {0: Dim("dimz")}), lambda: [],
           STRICT, "a0 == c0 with separate Dims: torch refuses"),
    Ported("dynamo_multi_dyn_unsafe_relationship_ok", SRC + "test_export_multi_dynamic_dim_unsafe_relationship",
           MultiDynUnsafe, lambda: (R(3, 3, 3), R(2, 2, 2), R(3, 3, 3)),
           lambda: (lambda dx: ({0: dx}, {0: Dim("dimy")}, {0: dx}))(Dim("dimx")),
           lambda: [(R(4, 3, 3), R(6, 2, 2), R(4, 3, 3))], STRICT),
    Ported("dynamo_redundant_dim_in_error_message", SRC + "test_remove_redundant_dynamic_dim_in_error_message",
           RedundantDim, lambda: (R(3), {"k": R(3)}),
           lambda: {"x": {0: Dim("dim0_a")}, "y": {"k": {0: Dim("dim0_b")}}}, lambda: [],
           STRICT, "dim0_b = dim0_a: torch refuses"),
    Ported("dynamo_redundant_dim_fixed", SRC + "test_remove_redundant_dynamic_dim_in_error_message",
           RedundantDim, lambda: (R(3), {"k": R(3)}),
           lambda: (lambda d: {"x": {0: d}, "y": {"k": {0: d}}})(Dim("dim0_a")), lambda: [(R(6), {"k": R(6)})],
           STRICT, "variant: the suggested fix"),
    Ported("dynamo_enforce_equalities_bad_input", SRC + "test_enforce_equalities", EnforceEq,
           lambda: (R(10, 3, 3), R(10, 3, 4)),
           lambda: (lambda b, s: {"x": (b, s, s), "y": (b, s, s)})(*torch.export.dims("batch", "size")),
           lambda: [], STRICT, "example violates size == size: both refuse"),
    Ported("dynamo_enforce_equalities", SRC + "test_enforce_equalities", EnforceEq,
           lambda: (R(10, 3, 3), R(10, 3, 3)),
           lambda: (lambda b, s: {"x": (b, s, s), "y": (b, s, s)})(*torch.export.dims("batch", "size")),
           lambda: [(R(4, 5, 5), R(4, 5, 5))], STRICT),
    Ported("dynamo_preserve_constraints_as_metadata_tensor", SRC + "test_export_preserve_constraints_as_metadata_tensor",
           NonzeroChecked, lambda: (torch.tensor([8, 8, 6]),), lambda: None,
           lambda: [(torch.tensor([0, 8, 6]),), (torch.tensor([1, 0, 0]),)], STRICT,
           "nonzero + torch._check 2 <= n <= 5; second run violates the check"),
    Ported("dynamo_exported_graph_serialization", SRC + "test_exported_graph_serialization", ItemSize,
           lambda: (torch.tensor([3]), R(8, 8, 6)), lambda: (None, {0: Dim("dimy", min=6, max=10)}),
           lambda: [(torch.tensor([5]), R(7, 8, 6)), (torch.tensor([0]), R(10, 8, 6))], STRICT,
           "unbacked size from .item(); empty -> zeros"),
    Ported("dynamo_preserve_constraints_as_metadata_scalar", SRC + "test_export_preserve_constraints_as_metadata_scalar",
           ItemSizeChecked, lambda: (torch.tensor([3]), R(8, 8, 6)), lambda: (None, {0: Dim("dimy", min=6, max=10)}),
           lambda: [(torch.tensor([5]), R(7, 8, 6)), (torch.tensor([0]), R(10, 8, 6))], STRICT,
           "older version: constrain_as_size -> torch._check_is_size"),
    Ported("dynamo_dynamic_dim_not_1", SRC + "test_export_dynamic_dim_not_1", DimNot1,
           lambda: (R(1, 1, 1),), lambda: ({0: Dim("dimx")},), lambda: [(R(3, 1, 1),)],
           STRICT, "example size 1 with a named Dim: torch refuses"),
    Ported("dynamo_dynamic_dim_not_1_dynamic", SRC + "test_export_dynamic_dim_not_1", DimNot1,
           lambda: (R(1, 1, 1),), lambda: ({0: Dim.DYNAMIC},), lambda: [(R(3, 1, 1),)],
           STRICT, "variant: Dim.DYNAMIC"),
    Ported("dynamo_dynamic_dim_not_1_ex2", SRC + "test_export_dynamic_dim_not_1", DimNot1,
           lambda: (R(2, 1, 1),), lambda: ({0: Dim("dimx")},), lambda: [(R(1, 1, 1),), (R(5, 1, 1),)],
           STRICT, "variant: example 2 (0/1 specialization boundary)"),
    Ported("dynamo_multi_dynamic_dim_constraint_bad", SRC + "test_export_multi_dynamic_dim_constraint", MultiDynUnsafe,
           lambda: (R(3, 3, 3), R(2, 2, 2), R(3, 3, 3)),
           lambda: ({0: Dim("dimx_0"), 1: Dim("dimx_1"), 2: Dim("dimx_2")}, None, None), lambda: [],
           STRICT, "a0 == c0 with c static: torch refuses"),
    Ported("dynamo_multi_dynamic_dim_constraint_ok", SRC + "test_export_multi_dynamic_dim_constraint", MultiDynUnsafe,
           lambda: (R(3, 3, 3), R(2, 2, 2), R(3, 3, 3)),
           lambda: (lambda d0: ({0: d0, 1: Dim("dimx_1"), 2: Dim("dimx_2")}, None, {0: d0}))(Dim("dimx_0")),
           lambda: [(R(5, 3, 3), R(2, 2, 2), R(5, 3, 3))], STRICT),
    Ported("dynamo_dynamic_dim_range_constraint_ok", SRC + "test_export_dynamic_dim_range_constraint", RangeFoo,
           lambda: (torch.ones(6, 4, 4),), lambda: ({0: Dim("dimx", min=5, max=6)},),
           lambda: [(torch.ones(5, 4, 4),)], STRICT),
    Ported("dynamo_dynamic_dim_range_constraint_bad", SRC + "test_export_dynamic_dim_range_constraint", RangeBar,
           lambda: (torch.ones(6, 4, 4),), lambda: ({0: Dim("dimx", min=5, max=6)},), lambda: [],
           STRICT, "x > 5 with dimx in [5, 6]: torch refuses"),
    Ported("dynamo_trivial_constraint_foo", SRC + "test_trivial_constraint", TrivialFoo,
           lambda: (R(12),), lambda: {"x": (Dim("dim0", max=100),)}, lambda: [],
           STRICT, "complex divisibility: torch refuses"),
    Ported("dynamo_trivial_constraint_bar", SRC + "test_trivial_constraint", TrivialBar,
           lambda: (R(12),), lambda: {"x": (Dim("dim0", max=100),)}, lambda: [(R(7),), (R(50),)],
           STRICT, "trivially true"),
    Ported("dynamo_trivial_constraint_qux", SRC + "test_trivial_constraint", TrivialQux,
           lambda: (R(12),), lambda: {"x": (Dim("dim0", max=100),)}, lambda: [],
           STRICT, "(3x) % 2 == 0: torch refuses"),
    Ported("dynamo_trivial_constraint_qux_derived", SRC + "test_trivial_constraint", TrivialQux,
           lambda: (R(12),), lambda: (lambda h: {"x": (2 * h,)})(Dim("h", max=50)), lambda: [(R(8),), (R(30),)],
           STRICT, "variant: even sizes via a derived dim"),
    Ported("dynamo_dynamic_dim_cleanup", SRC + "test_export_dynamic_dim_cleanup", Cos,
           lambda: (R(3, 3, 3),), lambda: ({0: Dim("dim")},), lambda: [(R(7, 3, 3),)], STRICT),
    Ported("dynamo_persist_assert_auto", SRC + "test_export_persist_assert", PersistAssert,
           lambda: (R(5, 4, 6),), lambda: ({0: Dim.AUTO, 1: Dim.AUTO, 2: Dim.AUTO},),
           lambda: [(R(3, 4, 5),), (R(7, 4, 5),)], STRICT, "older version (shape assert); run (3,4,5) must fail"),
    Ported("dynamo_persist_assert_dim", SRC + "test_export_persist_assert", PersistAssert,
           lambda: (R(5, 4, 6),), lambda: ({0: Dim("b")},), lambda: [], STRICT, "named Dim: torch refuses"),
    Ported("dynamo_persist_assert_dim_min5", SRC + "test_export_persist_assert", PersistAssert,
           lambda: (R(5, 4, 6),), lambda: ({0: Dim("b", min=5)},), lambda: [(R(9, 4, 6),)], STRICT),
    Ported("dynamo_round_dynamic_shapes", SRC + "test_round_dynamic_shapes", RoundSlice,
           lambda: (torch.ones(6, 4),), lambda: ({0: Dim("b")},), lambda: [(torch.ones(5, 4),), (torch.ones(7, 4),)],
           STRICT, "round() on a SymInt; dynamo refused it once"),
    Ported("dynamo_floor_dynamic_shapes", SRC + "test_round_dynamic_shapes", FloorSlice,
           lambda: (torch.ones(6, 4),), lambda: ({0: Dim("b")},), lambda: [(torch.ones(5, 4),), (torch.ones(7, 4),)],
           STRICT, "f_correct"),
    Ported("dynamo_cond_pred_symnode", SRC + "test_cond_supported_pred_types", CondPredSym,
           lambda: (torch.rand(5, 8),), lambda: ({0: Dim("a"), 1: Dim("b")},),
           lambda: [(torch.rand(2, 8),), (torch.rand(1, 3),)], STRICT),
    Ported("dynamo_cond_pred_tensor", SRC + "test_cond_supported_pred_types", CondPredTensor,
           lambda: (torch.rand(5, 8),), lambda: ({0: Dim("a"), 1: Dim("b")},),
           lambda: [(torch.zeros(2, 8),), (torch.rand(4, 3),)], STRICT),
    Ported("dynamo_cond_pred_complex", SRC + "test_cond_supported_pred_types", CondPredComplex,
           lambda: (torch.rand(5, 8),), lambda: ({0: Dim("a"), 1: Dim("b")},),
           lambda: [(torch.rand(2, 4),), (torch.rand(3, 11),)], STRICT, "python `and` of SymBools"),
    Ported("dynamo_sym_contains_dims", SRC + "test_sym_contains", SymContains,
           lambda: (torch.ones(2), torch.ones(3)), lambda: ({0: Dim("a")}, {0: Dim("b")}),
           lambda: [(torch.ones(3), torch.full((4,), 3.0)), (torch.ones(3), torch.ones(5))],
           STRICT, "x.size(0) in y; the test's runs change y's rank, same-rank runs here"),
    Ported("dynamo_cond_mismatch_return_tensor_meta", SRC + "test_cond_raise_user_error_on_mismatch_return_tensor_meta",
           CondMetaMismatch, lambda: (torch.rand(5),), lambda: ({0: Dim("b")},), lambda: [],
           STRICT, "branches return different metadata: both refuse"),
    Ported("dynamo_export_defaults_ok_auto", SRC + "test_export_defaults_ok", DynamicSliceExportMod,
           lambda: (R(5, 5, 5),), lambda: ({0: Dim.AUTO, 1: Dim.AUTO, 2: Dim.AUTO},),
           lambda: [(R(7, 6, 4),), (R(3, 5, 5),)], STRICT),
    Ported("dynamo_export_defaults_ok_dims", SRC + "test_export_defaults_ok", DynamicSliceExportMod,
           lambda: (R(5, 5, 5),), lambda: ({0: Dim("a"), 1: Dim("b"), 2: Dim("c")},),
           lambda: [(R(7, 6, 4),), (R(3, 5, 5),)], STRICT),
    Ported("dynamo_fake_mode_with_constraints", SRC + "test_symbolic_tracing_within_fake_mode_with_constraints",
           DynamicShapeSimpleModel, lambda: (R(2, 4), R(4, 7), R(2, 7)),
           lambda: (lambda d: ({0: d}, None, {0: d}))(Dim("d")), lambda: [(R(5, 4), R(4, 7), R(5, 7))],
           STRICT, "real inputs instead of a FakeTensorMode; view(d0*d1)"),
    Ported("dynamo_fake_mode_with_constraints_separate", SRC + "test_symbolic_tracing_within_fake_mode_with_constraints",
           DynamicShapeSimpleModel, lambda: (R(2, 4), R(4, 7), R(2, 7)),
           lambda: ({0: Dim("a0")}, None, {0: Dim("c0")}), lambda: [],
           STRICT, "variant: without the equality (a0 == c0 forced by the add): torch refuses"),
    Ported("dynamo_fake_mode_with_constraints_params", SRC +
           "test_symbolic_tracing_within_fake_mode_with_constraints_with_parameters",
           _seeded(LinearModel), lambda: (R(10, 2, 2),), lambda: ({0: Dim("b")},), lambda: [(R(3, 2, 2),)], STRICT),
    Ported("dynamo_cond_op_param_buffer_lifted", "test/dynamo/test_export.py::ExportTests::test_cond_op_param_buffer_lifted",
           CondBufferLifted, lambda: (torch.ones(6, 4),), lambda: ({0: Dim("b")},),
           lambda: [(torch.ones(3, 4),), (torch.ones(6, 4),)], STRICT, "cond on x.shape[0] > 4"),
    Ported("dynamo_nested_cond_op_param_buffer_lifted", SRC + "test_nested_cond_op_param_buffer_lifted",
           NestedCondBufferLifted, lambda: (torch.ones(6, 4),), lambda: ({0: Dim("b")},),
           lambda: [(torch.ones(5, 4),), (torch.ones(3, 4),)], STRICT),
    Ported("dynamo_map_cond", SRC + "test_export_with_map_cond", MapCond,
           lambda: (torch.tensor(True), R(3, 2, 1)), lambda: (None, {0: Dim.AUTO, 1: Dim.AUTO, 2: Dim.AUTO}),
           lambda: [(torch.tensor(False), R(4, 3, 2))], STRICT, "the test runs a (4,3,2) input; all dims AUTO"),
    Ported("dynamo_map_zero_sized_tensor", SRC + "test_export_with_map_zero_sized_tensor", MapZero,
           lambda: (R(0, 2),), lambda: ({0: Dim.AUTO},), lambda: [], STRICT, "map over 0 rows: dynamo refuses"),
    # draft_export tests, run through torch.export.export
    Ported("dynamo_draft_unbacked_div_mod_replacement", DRAFT + "test_unbacked_div_mod_replacement", UnbackedDivMod,
           lambda: (torch.tensor([938]),), lambda: None, lambda: [(torch.tensor([469 * 2]),), (torch.tensor([4690]),)],
           {}, "zeros(u0).repeat(10, 2).view(-1, 2, 2345)"),
    Ported("dynamo_draft_dedup_data_dependent_failure", DRAFT + "test_dedup_data_dependent_failure", DedupDD,
           lambda: (torch.tensor(5), torch.tensor(3), torch.tensor(2)), lambda: None,
           lambda: [(torch.tensor(4), torch.tensor(2), torch.tensor(6))], {}, "branch on .item() > 10"),
    Ported("dynamo_draft_complex_data_dependent_expr", DRAFT + "test_complex_data_dependent_expr", ComplexDD,
           lambda: (torch.tensor(6), R(5)), lambda: {"x": None, "y": {0: Dim.DYNAMIC}},
           lambda: [(torch.tensor(3), R(4)), (torch.tensor(-3), R(6)), (torch.tensor(20), R(2))], {},
           "z[: (-u0)//3 + 5] with z = cat([y, y])"),
    Ported("dynamo_draft_offsets", DRAFT + "test_offsets", Offsets,
           lambda: (torch.tensor(3),), lambda: None, lambda: [(torch.tensor(7),)], {}, "if .item() == 0: raise"),
    Ported("dynamo_draft_shape_failure", DRAFT + "test_shape_failure", ShapeFailure,
           lambda: (torch.ones(3, 3),), lambda: {"a": {0: Dim("a0")}}, lambda: [(R(3, 3),)],
           {}, "assert a.shape[0] == 3 under a named Dim: torch refuses"),
    Ported("dynamo_draft_masked_linear", DRAFT + "test_masked_linear", MaskedLinear,
           lambda: (R(10, 8, 7), torch.zeros(10), R(25, 7), R(25)), lambda: None,
           lambda: [(R(10, 8, 7), _mask(10, (2, 3)), R(25, 7), R(25))], {}, "boolean-mask indexing"),
    Ported("dynamo_draft_masked_linear_dyn", DRAFT + "test_masked_linear", MaskedLinear,
           lambda: (R(10, 8, 7), _mask(10, (1,)), R(25, 7), R(25)),
           lambda: (lambda n: {"x": {0: n}, "mask": {0: n}, "weight": None, "bias": None})(Dim("n")),
           lambda: [(R(6, 8, 7), _mask(6, (2, 3)), R(25, 7), R(25))], {}, "variant: dynamic batch"),
    Ported("dynamo_draft_constantify_unbacked_symbol", DRAFT + "test_constantify_unbacked_symbol", Constantify,
           lambda: (R(3, 5), R(3)), lambda: None, lambda: [(R(3, 5), R(3))], {}, "torch.tensor(x.shape)[0].item()"),
    Ported("dynamo_draft_data_dependent_failure", DRAFT + "test_data_dependent_failure", DDSliceItem,
           lambda: (torch.ones(3, 3), torch.ones(3, 3), torch.tensor(3)), lambda: None,
           lambda: [(R(3, 3), R(3, 3), torch.tensor(2))], {}, "res[:c.item()] (custom op replaced by a + b)"),
    Ported("dynamo_draft_data_dependent_failure_dyn", DRAFT + "test_data_dependent_failure", DDSliceItem,
           lambda: (torch.ones(3, 3), torch.ones(3, 3), torch.tensor(3)),
           lambda: (lambda d: {"a": {0: d}, "b": {0: d}, "c": None})(Dim("d")),
           lambda: [(R(5, 3), R(5, 3), torch.tensor(2)), (R(2, 3), R(2, 3), torch.tensor(4))], {},
           "variant: dynamic rows"),
]
