"""One call, one right program for a size-0/1 example on a dim declared dynamic (issue 21,
item 1): ``export`` traces once at a larger example built from the user's and returns the
dynamic program (``zero_one_examples="trace_larger"``, the default); the 0/1 evidence decides
whether size 1 is admitted; ``zero_one_examples="raise"`` keeps torch's error. Real torch."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
from torch.export import Dim

import export
from export.exporter import Exporter


def _export(model: Any, args: tuple[Any, ...], **kw: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ep = export.export(model, args, **kw)
    return ep, [str(w.message) for w in caught if issubclass(w.category, export.SymshapeWarning)]


def _like_eager(ep: Any, model: Any, *args: torch.Tensor) -> bool:
    return torch.allclose(ep.module()(*args), model(*args), atol=1e-5)


@pytest.fixture
def traces(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One entry per routed trace (True: a boundary re-trace)."""
    out: list[bool] = []
    real = Exporter.trace

    def counted(self: Any, spec: Any, *, keep_zero_one: bool = False, **rest: Any) -> Any:
        out.append(keep_zero_one)
        return real(self, spec, keep_zero_one=keep_zero_one, **rest)

    monkeypatch.setattr(Exporter, "trace", counted)
    return out


class Conv(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.conv(x)).mean((2, 3)))


def _mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))


def _encoder() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True).eval()


MODELS = [
    ("mlp", _mlp, (8,), "input"),
    ("conv", Conv, (3, 6, 6), "x"),
    ("transformer_encoder_layer", _encoder, (5, 16), "src"),
]


@pytest.mark.parametrize("name, make, rest, arg", MODELS, ids=[m[0] for m in MODELS])
def test_a_batch_1_example_exports_the_dynamic_program_in_one_call(name, make, rest, arg, traces) -> None:
    model = make()
    ep, notes = _export(model, (torch.randn(1, *rest),), dynamic_shapes={arg: {0: Dim("batch")}})
    assert ep.symshape.ranges[f"{arg}.size(0)"] == (1, None)
    assert notes[-1] == (f"{arg}.size(0) = 1 in the example: traced at 2; the program admits "
                         f"{arg}.size(0) in [1, inf]")
    assert notes[-1] in ep.symshape.warnings
    assert traces.count(False) == 1  # one trace, at the larger example (no failing trace first)
    assert ep.symshape.stats["traces"] == len(traces)
    assert ep.symshape.stats["trace_reasons"][f"larger example ({arg}.size(0) = 2)"] == 1
    with torch.no_grad():
        for b in (1, 2, 5):
            assert _like_eager(ep, model, torch.randn(b, *rest)), b


def test_the_option_raise_reproduces_torchs_error(traces) -> None:
    model, x = _mlp(), torch.randn(1, 8)
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, (x,), dynamic_shapes={"input": {0: Dim("batch")}}, zero_one_examples="raise")
    assert "input.size(0) was specialized to 1" in str(info.value)
    assert info.value.fixes.larger_example == {"input.size(0)": 2}
    assert len(traces) == 3  # the failing export, the probe, the static fix's verification
    with pytest.raises(export.InputError, match="zero_one_examples must be"):
        export.export(model, (x,), dynamic_shapes={"input": {0: Dim("batch")}}, zero_one_examples="never")


class Pair(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.sum(0) + y.reshape(-1, 2, 3).sum((0, 1))


def test_a_derived_dim_is_enlarged_with_its_root() -> None:
    b = Dim("b")
    model, x, y = Pair(), torch.randn(1, 3), torch.randn(2, 3)
    ep, notes = _export(model, (x, y), dynamic_shapes={"x": {0: b}, "y": {0: 2 * b}})
    assert ep.symshape.ranges["x.size(0)"] == (1, None) and ep.symshape.ranges["y.size(0)"] == (2, None)
    assert notes == ["x.size(0) = 1 in the example: traced at 2; the program admits x.size(0) in [1, inf]"]
    for n in (1, 2, 5):
        assert _like_eager(ep, model, torch.randn(n, 3), torch.randn(2 * n, 3))


class Masked(torch.nn.Module):
    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return ids * mask


def test_one_dim_across_inputs_is_one_warning() -> None:
    """A batch-1 example of a Dim shared by several inputs (ids, mask, past keys...) is said
    once, naming them all, not once per input."""
    b = Dim("b")
    model, ids, mask = Masked(), torch.ones(1, 4), torch.ones(1, 4)
    ep, notes = _export(model, (ids, mask), dynamic_shapes={"ids": {0: b}, "mask": {0: b}})
    assert notes == ["ids.size(0), mask.size(0) = 1 in the example: traced at 2; the program admits each in [1, inf]"]
    assert _like_eager(ep, model, torch.randn(3, 4), torch.randn(3, 4))


@pytest.mark.parametrize("hint", [Dim.AUTO, Dim.DYNAMIC], ids=["auto", "dynamic"])
def test_auto_and_dynamic_hints_stay_dynamic(hint) -> None:
    model = _mlp()
    ep, notes = _export(model, (torch.randn(1, 8),), dynamic_shapes={"input": {0: hint}})
    assert ep.symshape.ranges["input.size(0)"] == (0, None)  # (a fully dynamic dim: 0 on the evidence at 0)
    assert notes == ["input.size(0) = 1 in the example: traced at 2; the program admits input.size(0) in [0, inf]"]
    for b in (0, 1, 2, 5):
        assert _like_eager(ep, model, torch.randn(b, 8))


def test_auto_stays_static_when_the_model_needs_size_1() -> None:
    """AUTO may be static: no larger example runs ``view(3)``, so the example is traced as given."""
    ep, notes = _export(lambda x: x.view(3) * 2, (torch.randn(1, 3),), dynamic_shapes={"x": {0: Dim.AUTO}})
    assert ep.symshape.ranges["x.size(0)"] == (1, 1)
    assert len(notes) == 1 and "(Dim.AUTO) became static 1" in notes[0]
    assert ep.symshape.stats["trace_reasons"]["example"] == 1


def test_classic_dynamic_dim_exports_its_declared_range() -> None:
    """A classic dynamic dim ranges from 2: the program is that range, the note says why 1 is refused."""
    model, x = _mlp(), torch.randn(1, 8)
    ep, notes = _export(model, (x,), constraints=[export.dynamic_dim(x, 0)])
    assert ep.symshape.ranges["input.size(0)"][0] == 2
    assert "below the declared minimum 2 (dynamic_dim(input, 0))" in notes[-1]
    assert "the program admits input.size(0) in [2, inf]" in notes[-1] and "9223372036854775806" not in notes[-1]
    for b in (2, 5):
        assert _like_eager(ep, model, torch.randn(b, 8))
    with pytest.raises(export.InputError, match="outside the declared range"):  # torch's semantics: refused
        export.export(model, (x,), constraints=[export.dynamic_dim(x, 0)], zero_one_examples="raise")


def test_size_1_on_another_path_keeps_the_floor_and_the_warning_names_the_line() -> None:
    def eq1(x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.shape[0] == 1 else x + 1

    ep, notes = _export(eq1, (torch.randn(1, 3),), dynamic_shapes={"x": {0: Dim("b")}})
    assert ep.symshape.ranges["x.size(0)"] == (2, None)
    note = notes[-1]
    assert note.startswith("x.size(0) = 1 in the example: traced at 2; the program admits x.size(0) in [2, inf]; "
                           "size 1 is refused: x.size(0) == 1 takes another path at ")
    assert "test_larger_example.py" in note and "if x.shape[0] == 1" in note
    assert _like_eager(ep, eq1, torch.randn(4, 3))
    with pytest.raises(export.RefusedInputError, match=r"x.size\(0\) must be >= 2"):
        ep.module()(torch.randn(1, 3))


def test_size_0_of_a_named_dim_is_traced_larger_and_not_admitted() -> None:
    ep, notes = _export(lambda x: x * 2, (torch.randn(0, 3),), dynamic_shapes={"x": {0: Dim("n")}})
    assert ep.symshape.ranges["x.size(0)"] == (1, None)
    assert notes[-1].endswith("size 0 is refused (torch's size symbols are positive: symshape admits size 0 only "
                              "on the evidence of a re-trace at 0, for Dim.AUTO / Dim.DYNAMIC dims)")


@pytest.mark.parametrize("hint", [Dim.AUTO, Dim.DYNAMIC], ids=["auto", "dynamic"])
def test_size_0_of_a_fully_dynamic_dim_is_traced_larger_and_admitted_on_evidence(hint: Any) -> None:
    ep, notes = _export(lambda x: x * 2, (torch.randn(0, 3),), dynamic_shapes={"x": {0: hint}})
    assert ep.symshape.ranges["x.size(0)"] == (0, None)
    assert notes[-1].startswith("x.size(0) = 0 in the example: traced at ") and notes[-1].endswith("[0, inf]")
    for n in (0, 1, 5):
        assert _like_eager(ep, lambda x: x * 2, torch.randn(n, 3))


def test_a_broadcast_against_a_static_dim_falls_back_to_the_error() -> None:
    """The larger example cannot be traced dynamic (x.size(0) must be 1 or 3): the user's example
    is traced as given and the error names the broadcast; no larger-example program exists."""
    def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y

    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(add, (torch.randn(1, 4), torch.randn(3, 4)), dynamic_shapes={"x": {0: Dim("b")}, "y": None})
    text = str(info.value)
    assert "x.size(0) broadcasts against a static dim of size 3" in text
    assert info.value.fixes.larger_example_program is None and info.value.fixes.verified


class _Broadcast(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


def test_a_failed_export_counts_its_traces_and_traces_no_example_twice(traces) -> None:
    """A broadcast dim declared dynamic with an example of 1: the larger examples (2: the model
    fails, 3: a violation about the enlarged dim), the example as given, and the static fix's
    verification; the 0/1 probe re-raises what the larger examples raised instead of tracing
    them again."""
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(_Broadcast(), (torch.randn(3, 4), torch.randn(1, 4)),
                      dynamic_shapes=({0: Dim("b")}, {0: Dim("c")}))
    assert info.value.stats["traces"] == len(traces) == 4
    assert info.value.stats["trace_reasons"] == {"example": 1, "re-export (fix verification or 0/1 probe)": 3}
    assert info.value.to_dict()["stats"]["traces"] == 4
    assert info.value.fixes.verified


@pytest.mark.parametrize("verification, reasons, replays", [
    ("replay", {"example": 1}, 1),  # the fix only narrows the range: its verification replays the trace
    ("re-export", {"example": 1, "re-export (fix verification or 0/1 probe)": 1}, 0),
])
def test_a_failing_export_traces_its_example_and_verifies_the_fix(verification: str, reasons: dict[str, int],
                                                                   replays: int) -> None:
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(lambda x: x[:, 5:] * 2, (torch.randn(2, 8),), dynamic_shapes={"x": {1: Dim("n")}},
                      fix_verification=verification)
    assert info.value.stats["trace_reasons"] == reasons and info.value.stats["replays"] == replays
    assert info.value.fixes.program.symshape.stats["verified_by"] == ("replay" if replays else "trace")


class _Triples(torch.nn.Module):
    """``view(b, -1, 3)``: the ``-1`` is ``x.size(1) // 3``, 1 on an example of 3."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], -1, 3).sum(-1)


def test_a_derived_dim_whose_root_is_1_in_the_example_is_traced_at_a_larger_one() -> None:
    model, k = _Triples(), Dim("_K")
    ep, notes = _export(model, (torch.randn(2, 3),), dynamic_shapes={"x": {0: Dim("b"), 1: 3 * k}})
    assert ep.symshape.ranges["x.size(1)"] == (3, None)
    assert notes == ["x.size(1) = 3 in the example: traced at 6; the program admits x.size(1) in [3, inf]"]
    for b, n in ((1, 3), (2, 6), (3, 12)):
        assert _like_eager(ep, model, torch.randn(b, n))


def test_a_fix_that_would_pin_a_dim_for_its_example_is_found_at_a_larger_one() -> None:
    """``Dim("K")`` on an example of 3: the trace needs ``x.size(1) // 3 == 1``, whose fix would be
    K static; at x.size(1) = 6 the fix is ``3 * _K``, offered verified at the user's example."""
    model, spec = _Triples(), {"x": {0: Dim("b"), 1: Dim("K")}}
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model, (torch.randn(2, 3),), dynamic_shapes=spec)
    fixes = info.value.fixes
    assert "dynamic_shapes = {'x': {0: b, 1: 3 * _K}}" in fixes.modern and fixes.verified
    assert "found at a larger example, x.size(1) = 6 (example 3)" in str(info.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export.export(model, (torch.randn(2, 3),), dynamic_shapes=fixes.apply(spec))
    for b, n in ((1, 3), (2, 9)):
        assert _like_eager(ep, model, torch.randn(b, n))


def test_a_dim_the_model_needs_static_keeps_the_static_fix() -> None:
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(lambda x: x.view(x.shape[0], 3) * 2, (torch.randn(2, 3),),
                      dynamic_shapes={"x": {0: Dim("b"), 1: Dim("K")}})
    assert "'x': {0: b}" in info.value.fixes.modern and "larger example" not in str(info.value)
