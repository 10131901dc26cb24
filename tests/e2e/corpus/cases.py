"""A corpus of realistic torch.export dynamic-shape cases.

Every case is a tiny, self-contained re-statement of a pattern reported in the wild (pytorch/pytorch
issues, torch's own tests, tutorials, forum posts); `source` says where. Nothing here is copied
code: each model is a few lines written to reproduce the pattern.

Fields (see README.md):
  expect      symshape's verdict for the *given* spec: ok | violation | specialized |
              data_dependent | silently_wrong
  expect_dims the input dims at fault, written like "x.size(0)"
  expect_fix  the weakest correct fix, in words / code
  vanilla     what torch 2.13's torch.export.export does today: "ok", "error:<substring>",
              or "wrong:<description>" (pinned by test_corpus_vanilla.py)
  vanilla_fix what torch itself suggests (if anything) and whether that is right
  offending   for silently_wrong: an input the spec admits on which ep.module() != eager
  check       optional extra assertion on the ExportedProgram for vanilla == "ok"
  torch_fix_spec / torch_fix_exports
              torch's suggested fix applied literally, and whether the re-export succeeds
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

Build = Callable[[], "tuple[Any, tuple, dict]"]

VERDICTS = ("ok", "violation", "specialized", "data_dependent", "silently_wrong")


@dataclass(frozen=True)
class Case:
    id: str
    source: str
    summary: str
    build: Build
    dynamic_shapes: Optional[Callable[[], Any]]
    expect: str
    expect_dims: tuple[str, ...]
    expect_fix: str
    vanilla: str
    constraints_spec: Optional[str] = None
    notes: str = ""
    vanilla_fix: Optional[str] = None
    offending: Optional[Callable[[], "tuple[tuple, dict]"]] = None
    check: Optional[Callable[[Any, Any], None]] = None
    # torch's own suggested fix, applied literally, and whether re-exporting with it succeeds
    torch_fix_spec: Optional[Callable[[], Any]] = None
    torch_fix_exports: Optional[bool] = None


def _m(model: nn.Module, *args: Any, **kwargs: Any):
    """Return a build() closure: seeds, builds the eval-mode model and example inputs."""

    def build():
        torch.manual_seed(0)
        mod = model() if isinstance(model, type) else model
        mod.eval()
        return mod, tuple(a() if callable(a) else a for a in args), {
            k: (v() if callable(v) else v) for k, v in kwargs.items()
        }

    return build


def _r(*shape):
    return lambda: torch.randn(*shape)


def _runs_like_eager(*inputs):
    """check(): ep.module() matches eager on each of the given (other-shaped) inputs."""

    def check(ep, model):
        for make in inputs:
            torch.manual_seed(1)
            args = make()
            got, want = ep.module()(*args), model(*args)
            got = got if isinstance(got, (tuple, list)) else (got,)
            want = want if isinstance(want, (tuple, list)) else (want,)
            for g, w in zip(got, want):
                assert g.shape == w.shape, (g.shape, w.shape)
                assert torch.allclose(g, w, atol=1e-5, equal_nan=True)

    return check


def _rejects_at_runtime(make, match, eager_ok=True):
    """check(): ep.module() raises (a runtime guard) on an input the *declared* spec admits --
    torch silently narrowed the spec. With eager_ok, eager runs fine on that input."""

    def check(ep, model):
        args = make()
        if eager_ok:
            model(*args)
        try:
            ep.module()(*args)
        except Exception as e:  # noqa: BLE001
            assert match in str(e), str(e)
        else:
            raise AssertionError("expected the exported program to reject this input")

    return check


def _static_dim(arg_index, dim, value):
    """check(): the placeholder for user input `arg_index` has a static size `value` at `dim`."""

    def check(ep, model):
        user = [n for n in ep.graph.nodes if n.op == "placeholder"]
        user = [n for n in user if n.name in ep.graph_signature.user_inputs]
        size = user[arg_index].meta["val"].shape[dim]
        assert isinstance(size, int) and size == value, size

    return check


# ----------------------------------------------------------------------------------------------
# models (a few lines each)
# ----------------------------------------------------------------------------------------------


class BranchLe6(nn.Module):
    def forward(self, x, c):
        if x.shape[0] <= 6:
            return x + 1, c + 2
        return x - 1, c - 2


class AddOffset1(nn.Module):
    def forward(self, x, y):
        return x + y[1:]


class AddStride2(nn.Module):
    def forward(self, x, y):
        return x + y[1::2]


class AddOffsets12(nn.Module):
    def forward(self, x, y, z):
        return x + y[1:] + z[2:]


class ViewMinusOne(nn.Module):
    def forward(self, x):
        return x.view(x.shape[0] - 1, -1)


class MatMul(nn.Module):
    def forward(self, x, y):
        return torch.matmul(x, y)


class Add(nn.Module):
    def forward(self, x, y):
        return x + y


class EmbedMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 8)

    def forward(self, input_ids, attention_mask):
        return self.emb(input_ids) * attention_mask.unsqueeze(-1)


class CatTimesBuffer10(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.randn(10))

    def forward(self, a, b):
        return torch.cat([a, b]) * self.w


class CatPlus(nn.Module):
    def forward(self, x, y, z):
        return torch.cat((x, y), dim=1) + z


class CatPlusStrided(nn.Module):
    def forward(self, x, y, z):
        return torch.cat((x, y), dim=1) + z[:, ::2]


class FlattenLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2 * 64, 5)

    def forward(self, x):  # x: (B, 2, H, W), the head was built for 8x8 maps
        return self.fc(x.flatten(1))


class Reshape4(nn.Module):
    def forward(self, x):
        return x.reshape(-1, 4).sum(1)


class SplitHeads(nn.Module):
    def forward(self, x):
        b, s, d = x.shape
        return x.view(b, s, 4, d // 4).transpose(1, 2)


class DownUpSkip(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(1, 1, 3, stride=2, padding=1)

    def forward(self, x):
        return x + F.interpolate(self.down(x), scale_factor=2.0, mode="nearest")


class PosTable(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(16, 8))

    def forward(self, x):
        return x + self.pos[: x.shape[1]]


class SliceFrom5(nn.Module):
    def forward(self, x):
        return x[:, 5:] * 2


class SliceTo5(nn.Module):
    def forward(self, x):
        return x[:, :5] * 2


class CheckGe4(nn.Module):
    def forward(self, x):
        torch._check(x.shape[0] >= 4)
        return x * 2


class Chunk3(nn.Module):
    def forward(self, x):
        return torch.ops.aten.chunk.default(x, 3, 0)


class Split23(nn.Module):
    def forward(self, x):
        a, b = x.split([2, 3])
        return a.sum() + b.sum()


class Not512(nn.Module):
    def forward(self, x):
        if x.shape[1] == 512:
            return x * 0
        return x + 1


class Conv3In(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x)


class CacheWrite(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(10))

    def forward(self, x):
        self.cache[0 : x.shape[0]] = x
        return x * 1


class EvenOdd(nn.Module):
    def forward(self, w):
        if w.shape[0] % 2 == 0:
            return w[::2]
        return w[1:-1:2]


class Repeat2(nn.Module):
    def forward(self, x, y):
        return x.repeat(2) + y


class PatchPos(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 8, 4, stride=4)
        self.pos = nn.Parameter(torch.randn(1, 16, 8))  # 16 tokens = a 16x16 image

    def forward(self, x):
        return self.patch(x).flatten(2).transpose(1, 2) + self.pos


class MaskedFill(nn.Module):
    def forward(self, scores, mask):
        return scores.masked_fill(mask == 0, -1e9)


class TutorialWXYZ(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 3)

    def forward(self, w, x, y, z):
        x0 = x + y  # (8, 4)
        x1 = self.lin(w)  # (6, 3)
        x3 = x0.flatten() + z  # (32,)
        return x1, x3


class PadToMax(nn.Module):
    def forward(self, x, y):
        s1 = max(x.shape[0], y.shape[0])
        s2 = max(x.shape[1], y.shape[1])
        z = torch.zeros((s1, s2), dtype=x.dtype)
        z[: x.shape[0], : x.shape[1]] = x
        z[: y.shape[0], : y.shape[1]] += y
        return z


class LengthMask(nn.Module):
    def forward(self, x, lengths):
        max_len = lengths.max().item()
        mask = torch.arange(max_len) < lengths[:, None]
        return x * mask[..., None]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 8)
        self.b = nn.Linear(8, 2)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x)).relu()


class EqOneBranch(nn.Module):
    def forward(self, x):
        if x.shape[0] == 1:  # "single sample": return a zero summary
            return x.sum(0, keepdim=True) * 0
        return x * 2


class Squeeze0(nn.Module):
    def forward(self, x):
        return x.squeeze(0) * 2


class Double(nn.Module):
    def forward(self, x):
        return x * 2


class NonzeroBranch(nn.Module):
    def forward(self, x):
        y = x.nonzero()
        if y.shape[0] > 2:
            return x.cos()
        return x.sin()


class ItemBranch(nn.Module):
    def forward(self, x):
        if x.sum().item() > 0:
            return x * 2
        return x / 2


class ItemRepeat(nn.Module):
    def forward(self, x, n):
        k = n.item()
        if k == 1:
            return x
        return x.repeat(k, 1)


class ItemLoop(nn.Module):
    def forward(self, x, n):
        out = x
        for _ in range(n.item()):
            out = out * 2
        return out


class KeepBoxes(nn.Module):
    def forward(self, boxes, scores):
        kept = boxes[scores > 0.5]
        if kept.numel() == 0:
            return boxes.new_zeros(1, 4)
        return kept.mean(0, keepdim=True)


class ItemClamp(nn.Module):
    def forward(self, x, n):
        k = n.item()
        if k > x.shape[0]:
            k = x.shape[0]
        return x[:k]


class EmptyBranch(nn.Module):
    def forward(self, boxes):
        if boxes.shape[0] == 0:
            return boxes.new_zeros(1, 4)
        return boxes.mean(0, keepdim=True)


class SkipNormSmallBatch(nn.Module):
    def forward(self, x):
        if x.shape[0] < 2:  # too few samples to normalise over the batch
            return x
        return (x - x.mean(0)) / x.std(0)


class CausalAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.out = nn.Linear(16, 16)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, 2, 8).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, s, 16))


class CondOnShape(nn.Module):
    def forward(self, x):
        return torch.cond(x.shape[0] > 4, lambda t: t.cos(), lambda t: t.sin(), (x,))


# ----------------------------------------------------------------------------------------------
# the cases
# ----------------------------------------------------------------------------------------------

CASES: list[Case] = [
    # ------------------------------------------------------------------ violation: ranges
    Case(
        id="branch_le6_range",
        source="pytorch/pytorch test/export/test_export.py::test_non_strict_dynamic_shapes_suggested_fixes",
        summary="`if x.shape[0] <= 6` takes the branch of the example (5): the branch bounds the dim",
        build=_m(BranchLe6, torch.ones(5), torch.ones(4)),
        dynamic_shapes=lambda: ({0: Dim("dim", min=3)}, None),
        constraints_spec="dynamic_dim(x, 0) >= 3",
        expect="violation",
        expect_dims=("x.size(0)",),
        expect_fix="x.size(0) <= 6  (dim = Dim('dim', min=3, max=6)), or torch.cond on the predicate",
        vanilla="error:dim = Dim('dim', min=3, max=6)",
        vanilla_fix="dim = Dim('dim', min=3, max=6) (correct)",
        torch_fix_spec=lambda: ({0: Dim("dim", min=3, max=6)}, None),
        torch_fix_exports=True,
    ),
    Case(
        id="pos_table_max_len",
        source="pytorch/TensorRT#2922 (GPT2 export constraint violation); pytorch/pytorch#126127 (x1 <= 512)",
        summary="learned positional table of 16 rows sliced by the sequence length bounds seq <= 16",
        build=_m(PosTable, _r(2, 5, 8)),
        dynamic_shapes=lambda: ({0: Dim("B"), 1: Dim("S")},),
        expect="violation",
        expect_dims=("x.size(1)",),
        expect_fix="x.size(1) <= 16  (S = Dim('S', max=16))",
        vanilla="error:S = Dim('S', max=16)",
        vanilla_fix="S = Dim('S', max=16) (correct)",
    ),
    Case(
        id="cache_write_max",
        source="pytorch/pytorch#146046 (Dynamic Dims not getting produced right: cache[0:n] = x)",
        summary="writing x into a 10-slot buffer `cache[0:x.shape[0]] = x` with a declared max of 12",
        build=_m(CacheWrite, _r(5)),
        dynamic_shapes=lambda: ({0: Dim("dim", min=1, max=12)},),
        expect="violation",
        expect_dims=("x.size(0)",),
        expect_fix="x.size(0) <= 10  (dim = Dim('dim', min=1, max=10))",
        vanilla="error:dim = Dim('dim', max=10)",
        vanilla_fix="dim = Dim('dim', max=10) (correct upper bound; the reported guard also says "
        "2 <= dim, which is only the tracing assumption)",
    ),
    Case(
        id="check_ge4_min",
        source="pytorch/pytorch#137508 ([export] add min/max ranges to _DimHints; torch._check(x.shape[0] >= 4))",
        summary="an explicit torch._check(x.shape[0] >= 4) in the model against a spec with no minimum",
        build=_m(CheckGe4, _r(6)),
        dynamic_shapes=lambda: ({0: Dim("n")},),
        expect="violation",
        expect_dims=("x.size(0)",),
        expect_fix="x.size(0) >= 4  (n = Dim('n', min=4))",
        vanilla="error:n = Dim('n', min=4)",
        vanilla_fix="n = Dim('n', min=4) (correct)",
    ),
    Case(
        id="not_equal_512",
        source="pytorch/pytorch#126127 (guard Ne(512, input_ids.size(1)) against Dim max=512)",
        summary="`if x.shape[1] == 512` special-cases the max length; the example (8) takes the != branch",
        build=_m(Not512, _r(2, 8)),
        dynamic_shapes=lambda: ({1: Dim("s", max=512)},),
        expect="violation",
        expect_dims=("x.size(1)",),
        expect_fix="x.size(1) <= 511  (s = Dim('s', max=511)) -- or torch.cond to keep 512",
        vanilla="error:satisfy the generated guard L['x'].size()[1] != 512",
        vanilla_fix="none: torch prints no 'Suggested fixes' for a != guard at the range end",
    ),
    Case(
        id="slice_from5_min",
        source="pytorch/pytorch#161705 via PR #185166 (Fix export slice bounds across dynamic dim: x[:, 5:])",
        summary="x[:, 5:] on a dynamic dim: guards n >= 6; torch also guards n - 5 != 1 (the 0/1 rule on the "
                "result), asked where its answer changes no value",
        build=_m(SliceFrom5, _r(2, 8)),
        dynamic_shapes=lambda: ({1: Dim("n")},),
        expect="violation",
        expect_dims=("x.size(1)",),
        expect_fix="x.size(1) >= 6  (n = Dim('n', min=6)): n = 6 gives a slice of size 1, which runs like eager",
        vanilla="error:n = Dim('n', min=6)",
        vanilla_fix="n = Dim('n', min=6) is WRONG: re-exporting with it fails again on (n - 5) != 1",
        notes="benchmark: torch's suggested fix is too weak",
        torch_fix_spec=lambda: ({1: Dim("n", min=6)},),
        torch_fix_exports=False,
    ),
    Case(
        id="slice_to5_min",
        source="pytorch/pytorch#161705 via PR #185166 (x[:, :5] creates range guards although eager clamps)",
        summary="x[:, :5] on a dynamic dim: guards n >= 5 and n != 5",
        build=_m(SliceTo5, _r(2, 8)),
        dynamic_shapes=lambda: ({1: Dim("n")},),
        expect="violation",
        expect_dims=("x.size(1)",),
        expect_fix="x.size(1) >= 5  (n = Dim('n', min=5))",
        vanilla="error:n = Dim('n', min=5)",
        vanilla_fix="n = Dim('n', min=5) is WRONG: re-exporting with it fails again on n != 5",
        notes="benchmark: torch's suggested fix is too weak",
        torch_fix_spec=lambda: ({1: Dim("n", min=5)},),
        torch_fix_exports=False,
    ),
    # ------------------------------------------------------------------ violation: equalities
    Case(
        id="matmul_batch_unshared",
        source="pytorch/pytorch test/export/test_export.py::test_export_api_with_dynamic_shapes (batch = None  # 10)",
        summary="bmm where only x's batch is dynamic and y's batch is static 10",
        build=_m(MatMul, _r(10, 2, 3), _r(10, 3, 4)),
        dynamic_shapes=lambda: ({0: Dim("batch")}, None),
        expect="violation",
        expect_dims=("x.size(0)",),
        expect_fix="y.size(0) == x.size(0): give y's dim 0 the same Dim (batch); "
        "the only change on x alone is to specialize x.size(0) = 10",
        vanilla="error:specialized it to be a constant (10)",
        vanilla_fix="batch = 10 (valid but kills the dynamism; the intended fix is sharing the Dim)",
    ),
    Case(
        id="matmul_inner_dims",
        source="pytorch/pytorch test/export/test_export.py::test_export_api_with_dynamic_shapes (batch, M, K, N)",
        summary="bmm with separate Dims for y's batch and contraction dim",
        build=_m(MatMul, _r(10, 2, 3), _r(10, 3, 4)),
        dynamic_shapes=lambda: ((Dim("b"), Dim("M"), Dim("K")), (Dim("b2"), Dim("K2"), Dim("N"))),
        expect="violation",
        expect_dims=("y.size(0)", "y.size(1)"),
        expect_fix="y.size(0) == x.size(0) and y.size(1) == x.size(2)  (b2 = b, K2 = K)",
        vanilla="error:K2 = K",
        vanilla_fix="b2 = b / K2 = K (correct)",
    ),
    Case(
        id="add_separate_dims",
        source="pytorch/pytorch#126127 (export tied b1 = b2, x1 = x2 across inputs)",
        summary="x + y with two independent Dims",
        build=_m(Add, _r(4), _r(4)),
        dynamic_shapes=lambda: ({0: Dim("dx")}, {0: Dim("dy")}),
        expect="violation",
        expect_dims=("y.size(0)",),
        expect_fix="y.size(0) == x.size(0)  (dy = dx)",
        vanilla="error:dy = dx",
        vanilla_fix="dy = dx (correct)",
    ),
    Case(
        id="ids_mask_equal",
        source="pytorch/pytorch#126127 (input_ids / attention_mask must share b and seq)",
        summary="embedding(input_ids) * attention_mask with separately declared batch/seq Dims",
        build=_m(EmbedMask, lambda: torch.randint(0, 100, (2, 6)), torch.ones(2, 6)),
        dynamic_shapes=lambda: {
            "input_ids": {0: Dim("b1"), 1: Dim("x1")},
            "attention_mask": {0: Dim("b2"), 1: Dim("x2")},
        },
        expect="violation",
        expect_dims=("attention_mask.size(0)", "attention_mask.size(1)"),
        expect_fix="attention_mask.size(0) == input_ids.size(0), attention_mask.size(1) == input_ids.size(1)",
        vanilla="error:x2 = x1",
        vanilla_fix="b2 = b1 / x2 = x1 (correct)",
    ),
    Case(
        id="length_mask_batch",
        source="pytorch/pytorch#120288 / #146298 (lengths.max().item() pad masks in export)",
        summary="pad mask from lengths.max().item(); x and lengths declare separate batch Dims",
        build=_m(LengthMask, _r(2, 5, 3), torch.tensor([5, 3])),
        dynamic_shapes=lambda: {"x": {0: Dim("B"), 1: Dim("T")}, "lengths": {0: Dim("B2")}},
        expect="violation",
        expect_dims=("lengths.size(0)",),
        expect_fix="lengths.size(0) == x.size(0)  (B2 = B)",
        vanilla="error:B2 = B",
        vanilla_fix="B2 = B (correct; with it the export passes and the data-dependent max_len "
        "becomes a runtime assert u0 >= 2 -- a lengths.max() of 1 is then rejected at runtime)",
    ),
    Case(
        id="masked_fill_mask_dims",
        source="pytorch/pytorch PR #155717 ([ONNX] 0/1 on dynamic dims: cat/broadcast against z)",
        summary="scores.masked_fill(mask == 0, ...) with a (B, 1, S, S) mask whose dims are all separately named",
        build=_m(MaskedFill, _r(2, 4, 5, 5), torch.ones(2, 1, 5, 5)),
        dynamic_shapes=lambda: (
            {0: Dim("B"), 2: Dim("S"), 3: Dim("S2")},
            {0: Dim("B3"), 2: Dim("S3"), 3: Dim("S4")},
        ),
        expect="violation",
        expect_dims=("mask.size(0)", "mask.size(2)", "mask.size(3)"),
        expect_fix="mask.size(0) == scores.size(0), mask.size(2) == scores.size(2), mask.size(3) == scores.size(3)",
        vanilla="error:S4 = S2",
        vanilla_fix="B3 = B / S4 = S2 -- INCOMPLETE: S3 = S is listed as violated but missing from "
        "'Suggested fixes', so applying them fails again",
        notes="benchmark: torch's suggested fixes are incomplete",
        torch_fix_spec=lambda: (lambda b, s2: ({0: b, 2: Dim("S"), 3: s2}, {0: b, 2: Dim("S3"), 3: s2}))(Dim("B"), Dim("S2")),
        torch_fix_exports=False,
    ),
    Case(
        id="cat_sum_const10",
        source="pytorch/pytorch PR #124949 (disable_forced_specializations: s0*s1 = s2 style relations)",
        summary="torch.cat([a, b]) * w with w of fixed length 10: a + b == 10",
        build=_m(CatTimesBuffer10, _r(4), _r(6)),
        dynamic_shapes=lambda: ({0: Dim("a")}, {0: Dim("b")}),
        expect="violation",
        expect_dims=("a.size(0)", "b.size(0)"),
        expect_fix="a.size(0) + b.size(0) == 10  (b = 10 - a, a <= 8)",
        vanilla="error:b = 10 - a",
        vanilla_fix="a = Dim('a', max=8) / b = 10 - a -- right relation but NOT WRITABLE: building "
        "10 - a raises 'Attempted to negate a. (Only increasing linear operations ...)'",
        notes="benchmark: torch suggests a fix its own Dim API rejects (no Dim spelling of "
        "a + b == 10 exists; specialization or a runtime check are the only options)",
        torch_fix_spec=lambda: (lambda a: ({0: a}, {0: 10 - a}))(Dim("a", max=8)),
        torch_fix_exports=False,
    ),
    Case(
        id="cat_sum_undeclared",
        source="pytorch/pytorch PR #155717 (cat((x, y), 1) + z with z of size x1 + y1)",
        summary="cat((x, y), 1) + z: z.size(1) must be x.size(1) + y.size(1), but three free Dims were declared",
        build=_m(CatPlus, _r(2, 3), _r(2, 5), _r(2, 8)),
        dynamic_shapes=lambda: (lambda b: (
            {0: b, 1: Dim("dx")}, {0: b, 1: Dim("dy")}, {0: b, 1: Dim("dz")}
        ))(Dim("b")),
        expect="violation",
        expect_dims=("z.size(1)",),
        expect_fix="z.size(1) == x.size(1) + y.size(1)",
        vanilla="ok",
        vanilla_fix="none: torch silently turns the relation into a runtime guard; the ExportedProgram "
        "rejects z.size(1) = 9 although the declared spec admits it",
        check=_rejects_at_runtime(
            lambda: (torch.randn(2, 3), torch.randn(2, 5), torch.randn(2, 9)),
            "Guard failed",
            eager_ok=False,
        ),
        notes="torch narrows the spec silently (benchmark: we should report it)",
    ),
    Case(
        id="cat_plus_strided",
        source="pytorch/pytorch#146315 (torch.export.export + dynamic shapes fails with x + y[::2])",
        summary="cat((x, y), 1) + z[:, ::2]: (z.size(1) + 1) // 2 == x.size(1) + y.size(1)",
        build=_m(CatPlusStrided, _r(2, 3), _r(2, 5), _r(2, 16)),
        dynamic_shapes=lambda: (lambda b: {
            "x": {0: b, 1: Dim("dx")}, "y": {0: b, 1: Dim("dy")}, "z": {0: b, 1: Dim("dz")}
        })(Dim("batch")),
        expect="violation",
        expect_dims=("z.size(1)",),
        expect_fix="(z.size(1) + 1) // 2 == x.size(1) + y.size(1), i.e. z.size(1) in "
        "{2*(x1+y1) - 1, 2*(x1+y1)}; not a Dim expression -- keep dz free and state the relation "
        "as a runtime check, or declare dz = 2*k with k == dx + dy",
        vanilla="error:((1 + L['z'].size()[1]) // 2) != 1",
        vanilla_fix="none: only the (dz+1)//2 != 1 guard is reported, no suggested fix; the real "
        "relation to dx + dy is not mentioned",
    ),
    Case(
        id="tutorial_wxyz",
        source="pytorch/tutorials intermediate/torch_export_tutorial.py (PR #3214, w/x/y/z example)",
        summary="linear on w, x + y broadcast, flatten + z: w1 == 5, y1 == x0, z0 == x0*y0",
        build=_m(TutorialWXYZ, _r(6, 5), _r(4), _r(8, 4), _r(32)),
        dynamic_shapes=lambda: {
            "w": (Dim("w0"), Dim("w1")),
            "x": (Dim("x0"),),
            "y": (Dim("y0"), Dim("y1")),
            "z": (Dim("z0"),),
        },
        expect="violation",
        expect_dims=("w.size(1)", "y.size(1)", "z.size(0)"),
        expect_fix="w.size(1) = 5 (static), y.size(1) == x.size(0), z.size(0) == y.size(0) * x.size(0)",
        vanilla="error:y1 = x0",
        vanilla_fix="w1 = 5 / y1 = x0 -- omits z0 == x0*y0 (a product); after applying torch's fix "
        "the export passes and the product becomes a runtime guard that rejects admitted inputs",
        notes="benchmark: torch omits product relations from its suggestions",
        torch_fix_spec=lambda: (lambda x0: {"w": (Dim("w0"), 5), "x": (x0,), "y": (Dim("y0"), x0), "z": (Dim("z0"),)})(Dim("x0")),
        torch_fix_exports=True,
    ),
    Case(
        id="pad_to_max_sym_max",
        source="pytorch/pytorch#150851 (Cannot export torch.sym_max(x.shape[0], y.shape[0]))",
        summary="z = zeros(max(x0, y0), max(x1, y1)); paste x and y; Dim.DYNAMIC everywhere",
        build=_m(PadToMax, lambda: torch.arange(6.0).reshape(2, 3), lambda: torch.arange(6.0).reshape(3, 2) * 10),
        dynamic_shapes=lambda: ({0: Dim.DYNAMIC, 1: Dim.DYNAMIC}, {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}),
        expect="ok",
        expect_dims=("x.size(1)", "y.size(1)"),
        expect_fix="x.size(1) >= y.size(1) (the max() branch taken by the example); or use "
        "torch.sym_max so no branch is taken",
        vanilla="ok",
        vanilla_fix="none: Dim.DYNAMIC accepts the relational guard silently; x=(3,2), y=(2,3) is "
        "rejected at runtime although eager handles it",
        check=_rejects_at_runtime(lambda: (torch.ones(3, 2), torch.ones(2, 3)), "Guard failed"),
    ),
    # ------------------------------------------------------------------ violation: derived dims
    Case(
        id="derived_offset_plus1",
        source="pytorch/pytorch test/export/test_export.py::test_derived_dim_basic",
        summary="x + y[1:] with independent Dims: y.size(0) == x.size(0) + 1",
        build=_m(AddOffset1, _r(5), _r(6)),
        dynamic_shapes=lambda: ({0: Dim("dimx", min=3, max=6)}, {0: Dim("dimy", min=4, max=7)}),
        expect="violation",
        expect_dims=("y.size(0)",),
        expect_fix="y.size(0) == x.size(0) + 1  (dimy = dimx + 1)",
        vanilla="error:dimy = dimx + 1",
        vanilla_fix="dimy = dimx + 1 (correct)",
        torch_fix_spec=lambda: (lambda dx: ({0: dx}, {0: dx + 1}))(Dim("dimx", min=3, max=6)),
        torch_fix_exports=True,
    ),
    Case(
        id="derived_stride_2x_plus1",
        source="pytorch/pytorch test/export/test_export.py::test_derived_dim_nested",
        summary="x + y[1::2] with independent Dims: y.size(0) // 2 == x.size(0)",
        build=_m(AddStride2, _r(5), _r(11)),
        dynamic_shapes=lambda: ({0: Dim("dimx", min=3, max=6)}, {0: Dim("dimy")}),
        expect="violation",
        expect_dims=("y.size(0)",),
        expect_fix="y.size(0) // 2 == x.size(0), i.e. y.size(0) in {2*x, 2*x + 1}; the "
        "derived dim dimy = 2*dimx + 1 (as in torch's test) is a valid, slightly stronger fix",
        vanilla="error:dimy = Dim('dimy', min=4)",
        vanilla_fix="dimy = Dim('dimy', min=4) only -- the relation to dimx is not suggested; "
        "with that fix the export passes and y.size(0) // 2 == x.size(0) becomes a runtime guard "
        "(y.size(0) = 12 with x.size(0) = 4 is rejected although the spec admits it)",
        notes="benchmark: torch misses the FloorDiv relation and narrows silently",
        torch_fix_spec=lambda: ({0: Dim("dimx", min=3, max=6)}, {0: Dim("dimy", min=4)}),
        torch_fix_exports=True,
    ),
    Case(
        id="derived_out_of_order",
        source="pytorch/pytorch test/export/test_export.py::test_derived_dim_out_of_order_simplified",
        summary="x + y[1:] + z[2:] with x, y derived from _dimz but z declared as its own Dim",
        build=_m(AddOffsets12, _r(5), _r(6), _r(7)),
        dynamic_shapes=lambda: (lambda dz: (
            {0: dz - 2}, {0: dz - 1}, {0: Dim("dimz", min=6, max=8)}
        ))(Dim("_dimz", min=6, max=8)),
        expect="violation",
        expect_dims=("z.size(0)",),
        expect_fix="z.size(0) == x.size(0) + 2  (dimz = _dimz)",
        vanilla="error:dimz = _dimz",
        vanilla_fix="dimz = _dimz (correct)",
    ),
    Case(
        id="repeat_2x",
        source="pytorch/pytorch test/export/test_export.py (derived dims: dimw = dimx * 2)",
        summary="x.repeat(2) + y: y.size(0) == 2 * x.size(0)",
        build=_m(Repeat2, _r(3), _r(6)),
        dynamic_shapes=lambda: ({0: Dim("dx")}, {0: Dim("dy")}),
        expect="violation",
        expect_dims=("y.size(0)",),
        expect_fix="y.size(0) == 2*x.size(0)  (dy = 2*dx)",
        vanilla="error:dy = 2*dx",
        vanilla_fix="dy = 2*dx (correct)",
    ),
    # ------------------------------------------------------------------ violation: divisibility / products
    Case(
        id="reshape_divisible_4",
        source="pytorch/pytorch#151094 (guard Eq(Mod(..., 2560), 0) from reshape([batch, -1]))",
        summary="x.reshape(-1, 4) on a 1-d dynamic input",
        build=_m(Reshape4, _r(12)),
        dynamic_shapes=lambda: ({0: Dim("n")},),
        expect="violation",
        expect_dims=("x.size(0)",),
        expect_fix="x.size(0) = 4*k with k >= 2  (_n = Dim('_n', min=2); n = 4*_n)",
        vanilla="error:n = 4*_n",
        vanilla_fix="_n = Dim('_n', max=oo); n = 4*_n (works; torch then refines _n >= 2 itself)",
        torch_fix_spec=lambda: ({0: 4 * Dim("_n")},),
        torch_fix_exports=True,
    ),
    Case(
        id="split_heads_divisible",
        source="pytorch/pytorch#144852 (SD3 transformer export: dims must be divisible by 16)",
        summary="x.view(B, S, 4, D // 4) for multi-head attention with a dynamic hidden size",
        build=_m(SplitHeads, _r(2, 5, 32)),
        dynamic_shapes=lambda: ({0: Dim("B"), 1: Dim("S"), 2: Dim("D")},),
        expect="violation",
        expect_dims=("x.size(2)",),
        expect_fix="x.size(2) = 4*k with k >= 2  (_D = Dim('_D', min=2); D = 4*_D)",
        vanilla="error:D = 4*_D",
        vanilla_fix="_D = Dim('_D', min=1, max=oo); D = 4*_D -- works (torch silently refines "
        "_D >= 2 although it printed the guard D != 4); eight guards are listed for one fact",
        torch_fix_spec=lambda: ({0: Dim("B"), 1: Dim("S"), 2: 4 * Dim("_D", min=1)},),
        torch_fix_exports=True,
    ),
    Case(
        id="down_up_even",
        source="pytorch/pytorch#124507 (torch.export of ResNet with dynamic height: height must be even)",
        summary="x + upsample2x(conv_stride2(x)): h and w must be even",
        build=_m(DownUpSkip, _r(1, 1, 8, 8)),
        dynamic_shapes=lambda: ({2: Dim("h"), 3: Dim("w")},),
        expect="violation",
        expect_dims=("x.size(2)", "x.size(3)"),
        expect_fix="x.size(2) = 2*k, x.size(3) = 2*j with k, j >= 2  (h = 2*_h, w = 2*_w)",
        vanilla="error:h = 2*_h",
        vanilla_fix="_h = Dim('_h', min=1); h = 2*_h (same for w) -- works (torch refines _h >= 2 "
        "itself); the guards it prints are FloorDiv forms, not 'h is even'",
        torch_fix_spec=lambda: (lambda h, w: ({2: 2 * h, 3: 2 * w},))(Dim("_h", min=1), Dim("_w", min=1)),
        torch_fix_exports=True,
    ),
    Case(
        id="mod2_branch",
        source="pytorch/pytorch test/export/test_export.py::test_derived_dim_integer",
        summary="`if w.shape[0] % 2 == 0: w[::2] else w[1:-1:2]` with an even example",
        build=_m(EvenOdd, _r(10)),
        dynamic_shapes=lambda: ({0: Dim("w")},),
        expect="violation",
        expect_dims=("w.size(0)",),
        expect_fix="w.size(0) = 2*k with k >= 2  (w = 2*_w)",
        vanilla="error:w = 2*_w",
        vanilla_fix="_w = Dim('_w', max=oo); w = 2*_w (correct)",
    ),
    Case(
        id="view_minus_one",
        source="pytorch/pytorch test/export/test_export.py::test_export_mod_constraints",
        summary="x.view(x.shape[0] - 1, -1): (x0 - 1) must divide x0*x1",
        build=_m(ViewMinusOne, _r(3, 4)),
        dynamic_shapes=lambda: ({0: Dim("dim0_x", min=3), 1: Dim("dim1_x", max=8000)},),
        expect="violation",
        expect_dims=("x.size(0)", "x.size(1)"),
        expect_fix="x.size(1) % (x.size(0) - 1) == 0 (gcd(x0, x0-1) = 1); not a Dim expression -- "
        "e.g. x.size(0) = 3 static and x.size(1) = 2*k",
        vanilla="error:satisfy the generated guard (L['x'].size()[0] % ((-1) + L['x'].size()[0])) != 0",
        vanilla_fix="none in 2.13 (older torch suggested dim0_x = None  # 3, dim1_x = 2*_dim1_x)",
    ),
    Case(
        id="flatten_hw_product",
        source="Samsung/TICO#248 (Lesson learned: x.view(bsz, -1) vs view(-1, x.shape[-1]))",
        summary="x.flatten(1) into a Linear(2*64): h * w == 64 although h and w were declared free",
        build=_m(FlattenLinear, _r(3, 2, 8, 8)),
        dynamic_shapes=lambda: ({0: Dim("batch"), 2: Dim("h"), 3: Dim("w")},),
        expect="violation",
        expect_dims=("x.size(2)", "x.size(3)"),
        expect_fix="x.size(2) * x.size(3) == 64 (not a Dim expression: keep it as a runtime check "
        "and say so; specializing h = w = 8 is stronger than needed, h=4, w=16 is valid)",
        vanilla="ok",
        vanilla_fix="none: export passes and the product becomes a runtime guard "
        "(2*w*h == 128) that rejects inputs the declared spec admits",
        check=_rejects_at_runtime(lambda: (torch.randn(3, 2, 5, 5),), "Guard failed", eager_ok=False),
        notes="torch narrows the spec silently (benchmark)",
    ),
    Case(
        id="patch_pos_product",
        source="meta-pytorch/segment-anything-fast#109 (dynamic h/w on a ViT encoder triggers guard errors)",
        summary="ViT patchify (conv k4 s4) + fixed 16-token positional embedding: (H//4)*(W//4) == 16",
        build=_m(PatchPos, _r(2, 3, 16, 16)),
        dynamic_shapes=lambda: ({0: Dim("B"), 2: Dim("H"), 3: Dim("W")},),
        expect="violation",
        expect_dims=("x.size(2)", "x.size(3)"),
        expect_fix="(x.size(2) // 4) * (x.size(3) // 4) == 16 with H//4, W//4 >= 2; not a Dim "
        "expression -- specialize H = W = 16 or keep H, W dynamic with that runtime check",
        vanilla="error:H = Dim('H', min=4)",
        vanilla_fix="H = Dim('H', min=4) / W = Dim('W', min=4) is WRONG: re-export fails on "
        "(H // 4) != 1, and the product relation is never mentioned",
        notes="benchmark: torch's suggested fix is wrong",
        torch_fix_spec=lambda: ({0: Dim("B"), 2: Dim("H", min=4), 3: Dim("W", min=4)},),
        torch_fix_exports=False,
    ),
    # ------------------------------------------------------------------ violation: to a constant
    Case(
        id="chunk3_constant",
        source="pytorch/pytorch#134663 (Error in torch.export for aten.chunk with dynamic shape)",
        summary="aten.chunk(x, 3) with Dim(min=1, max=3): the number of outputs fixes the size",
        build=_m(Chunk3, _r(3)),
        dynamic_shapes=lambda: ([Dim("shape", min=1, max=3)],),
        expect="violation",
        expect_dims=("x.size(0)",),
        expect_fix="x.size(0) == 3 (static)",
        vanilla="error:shape = 3",
        vanilla_fix="shape = 3 (correct)",
    ),
    Case(
        id="split_sizes_constant",
        source="pytorch/pytorch#140011 (torch.export infers dynamic_shape as constant)",
        summary="x.split([2, 3]) forces x.size(0) == 5",
        build=_m(Split23, _r(5)),
        dynamic_shapes=lambda: ({0: Dim("n")},),
        expect="violation",
        expect_dims=("x.size(0)",),
        expect_fix="x.size(0) == 5 (static)",
        vanilla="error:n = 5",
        vanilla_fix="n = 5 (correct)",
    ),
    Case(
        id="conv_in_channels",
        source="pytorch/pytorch#133653 / Samsung/TICO#248 (dim inferred to be a constant)",
        summary="Conv2d(3, ...) with the channel dim declared dynamic",
        build=_m(Conv3In, _r(2, 3, 8, 8)),
        dynamic_shapes=lambda: ({0: Dim("batch"), 1: Dim("ch")},),
        expect="violation",
        expect_dims=("x.size(1)",),
        expect_fix="x.size(1) == 3 (static)",
        vanilla="error:ch = 3",
        vanilla_fix="ch = 3 (correct)",
    ),
    # ------------------------------------------------------------------ specialized (0/1)
    Case(
        id="batch1_named_dim",
        source="pytorch/pytorch#133653 (Exporting ResNet-50 with dynamic batch: batch inferred to be a constant (1))",
        summary="conv + batchnorm with a dynamic batch Dim but an example batch of 1",
        build=_m(ConvBN, _r(1, 3, 8, 8)),
        dynamic_shapes=lambda: ({0: Dim("batch", max=10)},),
        expect="specialized",
        expect_dims=("x.size(0)",),
        expect_fix="use an example of size >= 2 for x.size(0)",
        vanilla="error:specialized it to be a constant (1)",
        vanilla_fix="batch = 1 (valid but static; the right fix is the example)",
    ),
    Case(
        id="batch1_dim_dynamic",
        source="pytorch/pytorch#151582 ([export] Warn users when 0/1 specialization happens)",
        summary="MLP with Dim.DYNAMIC on the batch and an example batch of 1",
        build=_m(MLP, _r(1, 4)),
        dynamic_shapes=lambda: ({0: Dim.DYNAMIC},),
        expect="specialized",
        expect_dims=("x.size(0)",),
        expect_fix="use an example of size >= 2 for x.size(0)",
        vanilla="error:0/1 specialized due to hint of 1",
    ),
    Case(
        id="batch1_dim_auto_static",
        source="pytorch/pytorch#151582 (ONNX exporter uses Dim.AUTO; batch silently static)",
        summary="MLP with Dim.AUTO on the batch and an example batch of 1: exports, but static",
        build=_m(MLP, _r(1, 4)),
        dynamic_shapes=lambda: ({0: Dim.AUTO},),
        expect="specialized",
        expect_dims=("x.size(0)",),
        expect_fix="use an example of size >= 2 for x.size(0)",
        vanilla="ok",
        vanilla_fix="none: Dim.AUTO silently falls back to static 1",
        check=_static_dim(0, 0, 1),
    ),
    Case(
        id="broadcast_size1",
        source="pytorch/pytorch PR #155717 ([ONNX] Support 0/1 on dynamic dimension: z of shape (1, 8))",
        summary="x (3, 4) + y (1, 4) where y's dim 0 is declared dynamic: it broadcasts, so it is 1",
        build=_m(Add, _r(3, 4), _r(1, 4)),
        dynamic_shapes=lambda: ({0: Dim("b")}, {0: Dim("c")}),
        expect="specialized",
        expect_dims=("y.size(0)",),
        expect_fix="y.size(0) = 1 static (it is a broadcast dim); if y should follow x, use an "
        "example of size >= 2 and y.size(0) == x.size(0)",
        vanilla="error:c = 1",
        vanilla_fix="c = 1 (correct)",
    ),
    Case(
        id="eq1_branch_example1",
        source="pytorch docs exportdb dynamic_shape_if_guard (if x.shape[0] == 3 ...) / tutorial 0/1 section",
        summary="`if x.shape[0] == 1` with an example batch of 1",
        build=_m(EqOneBranch, _r(1, 3)),
        dynamic_shapes=lambda: ({0: Dim("b", min=1, max=8)},),
        expect="specialized",
        expect_dims=("x.size(0)",),
        expect_fix="use an example of size >= 2 AND keep the == 1 branch correct: x.size(0) >= 2 "
        "(min=2) or torch.cond(x.shape[0] == 1, ...) -- see eq1_branch_silently_wrong",
        vanilla="error:specialized it to be a constant (1)",
        vanilla_fix="b = 1",
    ),
    Case(
        id="squeeze_example1",
        source="pytorch/pytorch#122294 (AOTInductor dynamic shapes fail for SAM: choose size > 1)",
        summary="x.squeeze(0) with an example of size 1 at the dynamic dim",
        build=_m(Squeeze0, _r(1, 3)),
        dynamic_shapes=lambda: ({0: Dim("b", min=1, max=8)},),
        expect="specialized",
        expect_dims=("x.size(0)",),
        expect_fix="use an example of size >= 2 for x.size(0) (the export is then correct for b = 1 too)",
        vanilla="error:specialized it to be a constant (1)",
        vanilla_fix="b = 1",
    ),
    Case(
        id="example_size0",
        source="pytorch/pytorch#186485 (Fix export dynamic dims with size-one examples: 0/1 examples)",
        summary="an elementwise op with an empty (size-0) example on the dynamic dim",
        build=_m(Double, _r(0, 3)),
        dynamic_shapes=lambda: ({0: Dim("n")},),
        expect="specialized",
        expect_dims=("x.size(0)",),
        expect_fix="use an example of size >= 2 for x.size(0)",
        vanilla="error:n = 0",
        vanilla_fix="n = 0 (valid but static)",
    ),
    Case(
        id="attn_mask_heads1",
        source="pytorch/pytorch#176349 (example at the min boundary fails) / PR #155717 (broadcast 0/1)",
        summary="masked_fill with a (B, 1, S, S) mask whose broadcast head dim is declared dynamic",
        build=_m(MaskedFill, _r(2, 4, 5, 5), torch.ones(2, 1, 5, 5)),
        dynamic_shapes=lambda: (lambda b, s: (
            {0: b, 2: s, 3: s}, {0: b, 1: Dim("H1"), 2: s, 3: s}
        ))(Dim("B"), Dim("S")),
        expect="specialized",
        expect_dims=("mask.size(1)",),
        expect_fix="mask.size(1) = 1 static (a broadcast dim)",
        vanilla="error:H1 = 1",
        vanilla_fix="H1 = 1 (correct)",
    ),
    # ------------------------------------------------------------------ data-dependent
    Case(
        id="nonzero_branch",
        source="pytorch/pytorch test/export/test_export.py::test_raise_user_error_when_guard_on_data_dependent_operation",
        summary="`if x.nonzero().shape[0] > 2` branches on a data-dependent size",
        build=_m(NonzeroBranch, torch.tensor([2.0, 3.0, 5.0])),
        dynamic_shapes=None,
        expect="data_dependent",
        expect_dims=(),
        expect_fix="torch.cond(y.shape[0] > 2, cos, sin, (x,)) at the `if` (no torch._check can decide it)",
        vanilla="error:Could not guard on data-dependent expression u0 > 2",
    ),
    Case(
        id="item_value_branch",
        source="runebook.dev 'PyTorch torch.export: Solving Dynamic Shapes and Data-Dependent Control Flow' "
        "(if x.sum().item() > 0)",
        summary="Python `if` on a float .item()",
        build=_m(ItemBranch, lambda: torch.randn(4).abs()),
        dynamic_shapes=None,
        expect="data_dependent",
        expect_dims=(),
        expect_fix="torch.cond(x.sum() > 0, ...) or torch.where(x.sum() > 0, x * 2, x / 2)",
        vanilla="error:Could not guard on data-dependent expression zuf0 > 0.0",
    ),
    Case(
        id="item_eq1_repeat",
        source="pytorch/pytorch#157355 (GuardOnDataDependentSymNode: Eq(u0, 1))",
        summary="k = n.item(); `if k == 1: return x` before x.repeat(k, 1)",
        build=_m(ItemRepeat, _r(2, 3), torch.tensor(3)),
        dynamic_shapes=None,
        expect="data_dependent",
        expect_dims=(),
        expect_fix="drop the branch (repeat(1, 1) is the identity) or torch._check(k != 1) / "
        "torch._check(k >= 2) at the `k = n.item()` line",
        vanilla="error:Could not guard on data-dependent expression Eq(u0, 1)",
    ),
    Case(
        id="item_loop_count",
        source="pytorch/executorch#8988 (Could not guard on data-dependent expression from .item())",
        summary="`for _ in range(n.item())`: a data-dependent trip count",
        build=_m(ItemLoop, _r(3), torch.tensor(2)),
        dynamic_shapes=None,
        expect="data_dependent",
        expect_dims=(),
        expect_fix="not fixable by torch._check: the trip count must be static; rewrite as "
        "x * 2 ** n (tensor math) or use torch._higher_order_ops.while_loop",
        vanilla="error:Could not extract specialized integer from data-dependent expression u0",
    ),
    Case(
        id="mask_empty_check",
        source="pytorch/pytorch#91990 (export does not support boolean tensor indexing: masks in detection)",
        summary="boxes[scores > 0.5] then `if kept.numel() == 0` fallback",
        build=_m(KeepBoxes, _r(6, 4), lambda: torch.rand(6)),
        dynamic_shapes=None,
        expect="data_dependent",
        expect_dims=(),
        expect_fix="torch.cond(kept.shape[0] == 0, ...) at the `if` (or torch._check(kept.shape[0] > 0) "
        "if empty is impossible by contract)",
        vanilla="error:Could not guard on data-dependent expression Eq(4*u0, 0)",
    ),
    Case(
        id="item_clamp_branch",
        source="pytorch/pytorch#123592 / PR #146298 (narrow/slice on .item() with torch._check bounds)",
        summary="k = n.item(); `if k > x.shape[0]: k = x.shape[0]`; x[:k]",
        build=_m(ItemClamp, _r(6, 2), torch.tensor(3)),
        dynamic_shapes=lambda: ({0: Dim("b")}, None),
        expect="data_dependent",
        expect_dims=("x.size(0)",),
        expect_fix="k = torch.sym_min(k, x.shape[0]) instead of the `if`, or torch._check(k <= x.shape[0]) "
        "at the model line",
        vanilla="error:Could not guard on data-dependent expression u0 > 6",
    ),
    # ------------------------------------------------------------------ silently wrong
    Case(
        id="eq1_branch_silently_wrong",
        source="pytorch docs exportdb dynamic_shape_if_guard; pytorch/tutorials PR #3214 (0/1 specialization)",
        summary="`if x.shape[0] == 1` decided False by the >= 2 assumption although the spec admits 1",
        build=_m(EqOneBranch, _r(4, 3)),
        dynamic_shapes=lambda: ({0: Dim("b", min=1, max=8)},),
        expect="silently_wrong",
        expect_dims=("x.size(0)",),
        expect_fix="x.size(0) >= 2 (b = Dim('b', min=2, max=8)), or torch.cond(x.shape[0] == 1, ...)",
        vanilla="wrong:batch 1 takes the x * 2 branch instead of the zero summary",
        offending=lambda: ((torch.ones(1, 3),), {}),
        notes="range_constraints says [1, 8]; no runtime assert guards size 1",
    ),
    Case(
        id="empty_boxes_silently_wrong",
        source="pytorch/pytorch#91990 (detection post-processing with empty boxes)",
        summary="`if boxes.shape[0] == 0` fallback decided False; Dim's default min is 0 in 2.13",
        build=_m(EmptyBranch, _r(5, 4)),
        dynamic_shapes=lambda: ({0: Dim("n")},),
        expect="silently_wrong",
        expect_dims=("boxes.size(0)",),
        expect_fix="boxes.size(0) >= 1 (n = Dim('n', min=1)), or torch.cond(boxes.shape[0] == 0, ...)",
        vanilla="wrong:0 boxes give the NaN mean instead of the zeros fallback",
        offending=lambda: ((torch.randn(0, 4),), {}),
    ),
    Case(
        id="small_batch_silently_wrong",
        source="pytorch/pytorch#151582 / #133653 (batch-size-1 behaviour differs after export)",
        summary="`if x.shape[0] < 2: return x` skip of batch normalisation, decided False",
        build=_m(SkipNormSmallBatch, _r(4, 3)),
        dynamic_shapes=lambda: ({0: Dim("b")},),
        expect="silently_wrong",
        expect_dims=("x.size(0)",),
        expect_fix="x.size(0) >= 2 (b = Dim('b', min=2)), or torch.cond(x.shape[0] < 2, ...)",
        vanilla="wrong:batch 1 is normalised (NaN std) instead of returned unchanged",
        offending=lambda: ((torch.randn(1, 3),), {}),
    ),
    # ------------------------------------------------------------------ ok
    Case(
        id="mlp_dynamic_batch",
        source="pytorch docs torch.export (Dim batch); pytorch/pytorch#171964 (Linear with Dim.DYNAMIC)",
        summary="two-layer MLP with a dynamic batch",
        build=_m(MLP, _r(3, 4)),
        dynamic_shapes=lambda: ({0: Dim("batch")},),
        expect="ok",
        expect_dims=(),
        expect_fix="",
        vanilla="ok",
        check=_runs_like_eager(lambda: (torch.randn(7, 4),), lambda: (torch.randn(1, 4),)),
    ),
    Case(
        id="convbn_dynamic_batch_hw",
        source="pytorch/pytorch#133653 (ResNet dynamic batch with example >= 2)",
        summary="conv + batchnorm (eval) with dynamic batch, height and width",
        build=_m(ConvBN, _r(2, 3, 8, 8)),
        dynamic_shapes=lambda: ({0: Dim("batch"), 2: Dim("h"), 3: Dim("w")},),
        expect="ok",
        expect_dims=(),
        expect_fix="",
        vanilla="ok",
        check=_runs_like_eager(lambda: (torch.randn(3, 3, 5, 9),), lambda: (torch.randn(1, 3, 8, 8),)),
    ),
    Case(
        id="attention_dynamic_seq",
        source="pytorch/pytorch#140011 (seq_len dynamic for a transformer)",
        summary="causal SDPA block with dynamic batch and sequence length (max 64)",
        build=_m(CausalAttention, _r(2, 5, 16)),
        dynamic_shapes=lambda: ({0: Dim("B"), 1: Dim("S", max=64)},),
        expect="ok",
        expect_dims=(),
        expect_fix="",
        vanilla="ok",
        check=_runs_like_eager(lambda: (torch.randn(3, 9, 16),), lambda: (torch.randn(1, 1, 16),)),
    ),
    Case(
        id="derived_offset_correct",
        source="pytorch/pytorch test/export/test_export.py::test_derived_dim_basic (dimy = dimx + 1 works)",
        summary="x + y[1:] with y declared as dimx + 1",
        build=_m(AddOffset1, _r(5), _r(6)),
        dynamic_shapes=lambda: (lambda dx: ({0: dx}, {0: dx + 1}))(Dim("dimx", min=3, max=6)),
        expect="ok",
        expect_dims=(),
        expect_fix="",
        vanilla="ok",
        check=_runs_like_eager(lambda: (torch.randn(4), torch.randn(5))),
    ),
    Case(
        id="matmul_shared_dims",
        source="pytorch/pytorch test/export/test_export.py::test_export_api_with_dynamic_shapes (dims batch, M, K, N)",
        summary="bmm with batch and contraction dims shared between x and y",
        build=_m(MatMul, _r(10, 2, 3), _r(10, 3, 4)),
        dynamic_shapes=lambda: (lambda b, m, k, n: ((b, m, k), (b, k, n)))(
            Dim("batch"), Dim("M"), Dim("K"), Dim("N")
        ),
        expect="ok",
        expect_dims=(),
        expect_fix="",
        vanilla="ok",
        check=_runs_like_eager(lambda: (torch.randn(3, 5, 7), torch.randn(3, 7, 2))),
    ),
    Case(
        id="cond_shape_predicate",
        source="pytorch docs cond.html (DynamicShapeCondPredicate: torch.cond(x.shape[0] > 4, ...))",
        summary="torch.cond on a shape predicate keeps both branches",
        build=_m(CondOnShape, _r(6, 3)),
        dynamic_shapes=lambda: ({0: Dim("b")},),
        expect="ok",
        expect_dims=(),
        expect_fix="",
        vanilla="ok",
        check=_runs_like_eager(lambda: (torch.randn(2, 3),), lambda: (torch.randn(9, 3),)),
    ),
    Case(
        id="reshape_derived_correct",
        source="pytorch/pytorch test/export/test_export.py::test_export_mod_constraints (dim1_x = 2*_dim1_x)",
        summary="x.reshape(-1, 4) with x.size(0) declared as 4*k",
        build=_m(Reshape4, _r(12)),
        dynamic_shapes=lambda: ({0: 4 * Dim("k", min=2)},),
        expect="ok",
        expect_dims=(),
        expect_fix="",
        vanilla="ok",
        check=_runs_like_eager(lambda: (torch.randn(20),)),
    ),
    Case(
        id="cache_write_at_max",
        source="pytorch/pytorch#146046 (example at the max used to specialize silently)",
        summary="cache[0:n] = x with Dim(min=1, max=10) and an example of size 10 (== the buffer)",
        build=_m(CacheWrite, _r(10)),
        dynamic_shapes=lambda: ({0: Dim("dim", min=1, max=10)},),
        expect="ok",
        expect_dims=(),
        expect_fix="",
        vanilla="ok",
        check=_runs_like_eager(lambda: (torch.randn(3),)),
        notes="fixed in torch 2.13: the dim stays dynamic with range [1, 10]",
    ),
]

BY_ID = {c.id: c for c in CASES}
assert len(BY_ID) == len(CASES), "duplicate case ids"
