"""An error the model's code (or torch running it) raises while export traces it is an
``export.ModelError`` (an ExportError and a RuntimeError): one block naming the error (its type
and first line, torch's size symbols in the user's words), the model's line, and what to do;
torch's exception is its ``__cause__``. An error raised inside symshape's own packages is a
bug in symshape and is never disguised as the model's: it propagates unchanged."""
from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
import torch._dynamo.exc as dynamo_exc
from functorch.experimental.control_flow import map as cf_map
from torch.export import Dim

import export
from export.diagnose.model_error import model_error
from export.tracing import bridge as bridge_module
from export.tracing.bridge import dim_symbol_name
from export.tracing.provenance import UserFrame

HERE = UserFrame(__file__, 0, "forward", "").origin.rsplit(":", 1)[0]  # as messages print it
HEAD = "export could not trace the model: "


class MaxOfTensorAndSize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Any:
        return max(x, x.shape[0])


class CondBranchesDiffer(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.shape[0] < 3, lambda x: torch.tensor([[3], [2]]), lambda x: torch.tensor([3.14]), [x])


class MapOverEmpty(torch.nn.Module):
    def forward(self, xs: torch.Tensor) -> torch.Tensor:
        return cf_map(lambda x: x + 1, xs)


def _needs_int64(x: torch.Tensor) -> None:
    if x.dtype != torch.int64:
        raise TypeError("expects an int64 tensor")


class RaisesInHelper(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _needs_int64(x)
        return x + 1


class MatmulMismatch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ torch.ones(3, 3)


class ListsTheFolder(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + len(os.listdir("."))


def _line(f: Callable[..., Any], text: str) -> str:
    """``file:line`` of the line of ``f``'s source holding ``text``, as messages print it."""
    lines, first = inspect.getsourcelines(f)
    return f"{HERE}:{first + next(i for i, ln in enumerate(lines) if text in ln)}"


@dataclass(frozen=True)
class Case:
    id: str
    model: torch.nn.Module
    args: tuple[Any, ...]
    shapes: dict[str, Any]
    strict: bool
    first: str
    """The message's first line (a regex, matched in full)."""
    cause: type[BaseException]
    at: tuple[Callable[..., Any], str] | None
    """The model's line the message names: (function, text of the line); None: no location."""
    last: str = "The model's code (or torch running it) raised this while torch traced it with the example inputs"
    not_cause: tuple[type[BaseException], ...] = field(default=())


CASES = [
    Case("max_of_tensor_and_size", MaxOfTensorAndSize(), (torch.randn(4, 4),), {"x": {0: Dim.AUTO}}, False,
         re.escape(HEAD + "RuntimeError: Boolean value of Tensor with more than one value is ambiguous"),
         RuntimeError, (MaxOfTensorAndSize.forward, "return max(x, x.shape[0])"),
         not_cause=(export.ExportError,)),
    Case("cond_branches_differ", CondBranchesDiffer(), (torch.randn(4),), {"x": {0: Dim("b")}}, False,
         re.escape(HEAD + "RuntimeError: When merging two branches' output in torch.cond, expected same") + r" \w+ .*",
         dynamo_exc.TorchRuntimeError, (CondBranchesDiffer.forward, "return torch.cond(")),
    Case("cond_branches_differ_strict", CondBranchesDiffer(), (torch.randn(4),), {"x": {0: Dim("b")}}, True,
         re.escape(HEAD + "RuntimeError: When merging two branches' output in torch.cond, expected same") + r" \w+ .*",
         dynamo_exc.TorchRuntimeError, (CondBranchesDiffer.forward, "return torch.cond(")),
    Case("map_over_empty_strict", MapOverEmpty(), (torch.randn(0, 2),), {"xs": {0: Dim.AUTO}}, True,
         re.escape(HEAD + "RuntimeError: Leading dimensions of mapped xs cannot be 0."),
         dynamo_exc.Unsupported, (MapOverEmpty.forward, "return cf_map(")),
    Case("raises_in_helper", RaisesInHelper(), (torch.randn(4, 4),), {"x": {0: Dim("b")}}, False,
         re.escape(HEAD + "TypeError: expects an int64 tensor"),
         TypeError, (_needs_int64, 'raise TypeError("expects an int64 tensor")')),
    Case("raises_in_helper_strict", RaisesInHelper(), (torch.randn(4, 4),), {"x": {0: Dim("b")}}, True,
         re.escape(HEAD + "TypeError: expects an int64 tensor"),
         dynamo_exc.Unsupported, (_needs_int64, 'raise TypeError("expects an int64 tensor")')),
    Case("matmul_mismatch_names_the_dim", MatmulMismatch(), (torch.randn(4, 4),), {"x": {0: Dim("b")}}, False,
         re.escape(HEAD + "RuntimeError: a and b must have same reduction dim, but got [x.size(0), 4] X [3, 3]."),
         RuntimeError, (MatmulMismatch.forward, "return x @ torch.ones(3, 3)")),
    Case("matmul_mismatch_strict", MatmulMismatch(), (torch.randn(4, 4),), {"x": {0: Dim("b")}}, True,
         re.escape(HEAD + "RuntimeError: a and b must have same reduction dim, but got [x.size(0), 4] X [3, 3]."),
         dynamo_exc.TorchRuntimeError, (MatmulMismatch.forward, "return x @ torch.ones(3, 3)")),
    Case("strict_cannot_trace", ListsTheFolder(), (torch.randn(4, 4),), {"x": {0: Dim("b")}}, True,
         re.escape(HEAD + "Unsupported: ") + r".+",
         dynamo_exc.Unsupported, (ListsTheFolder.forward, "os.listdir"),
         last="torch's strict tracer (dynamo) cannot trace this code; it is no dynamic-shape constraint. "
              "Rewrite the line, or export with strict=False."),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_models_error_is_a_model_error(case: Case) -> None:
    with pytest.raises(export.ModelError) as info:
        export.export(case.model, case.args, dynamic_shapes=case.shapes, strict=case.strict)
    e = info.value
    assert isinstance(e, export.ExportError) and isinstance(e, RuntimeError)
    lines = str(e).splitlines()
    assert re.fullmatch(case.first, lines[0]), lines[0]
    assert type(e.__cause__) is case.cause or isinstance(e.__cause__, case.cause), type(e.__cause__)
    assert not isinstance(e.__cause__, case.not_cause)
    assert lines[-1].startswith(case.last), lines[-1]
    assert "dynamic-shape constraint" in lines[-1]
    if case.at is not None:
        origin = _line(*case.at)
        assert e.origin == origin
        assert lines[1] == f"  at {origin}: {e.code}" and case.at[1] in (e.code or "")
        assert len(lines) == 3, lines
    for noise in ("Explanation:", "Developer debug context", "TORCHDYNAMO_VERBOSE", "from user code",
                  "Traceback", "graph-break"):
        assert noise not in str(e), noise


def test_torch_export_raises_the_same_cause_raw() -> None:
    """The cause is what plain torch.export raises on the same model (the message adds to it)."""
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous") as raw:
        torch.export.export(MaxOfTensorAndSize(), (torch.randn(4, 4),), dynamic_shapes={"x": {0: Dim.AUTO}},
                            strict=False)
    with pytest.raises(export.ModelError) as ours:
        export.export(MaxOfTensorAndSize(), (torch.randn(4, 4),), dynamic_shapes={"x": {0: Dim.AUTO}})
    assert type(ours.value.__cause__) is type(raw.value)
    assert str(ours.value.__cause__) == str(raw.value)


class DataDependent(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum().item() > 0:
            return x + 1
        return x - 1


@pytest.mark.parametrize("strict", [False, True])
def test_a_data_dependent_branch_stays_a_data_dependent_error(strict: bool) -> None:
    with pytest.raises(export.DataDependentError):
        export.export(DataDependent(), (torch.randn(4, 4),), dynamic_shapes={"x": {0: Dim("b")}}, strict=strict)


@pytest.mark.parametrize("strict", [False, True])
def test_an_error_inside_symshape_is_not_disguised(monkeypatch: pytest.MonkeyPatch, strict: bool) -> None:
    """A bug in the bridge (here: the test that a converted guard is a relation broken, so that calling
    it raises inside ``export/tracing/bridge.py``) propagates as raised, not as a ModelError."""
    monkeypatch.setattr(bridge_module, "is_relation", None)
    with pytest.raises(TypeError, match="'NoneType' object is not callable") as info:
        export.export(MatmulMismatch(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b")}}, strict=strict)
    assert not isinstance(info.value, export.ExportError)
    assert os.path.samefile(str(info.traceback[-1].path), bridge_module.__file__)


def test_model_error_tells_symshape_from_the_user() -> None:
    """:func:`model_error` on an exception raised inside symshape's code is None (the caller
    re-raises it); on the same kind of exception raised in the user's code, a ModelError."""
    try:
        dim_symbol_name(None)  # type: ignore[arg-type]
    except AttributeError as e:
        assert model_error(e) is None
    try:
        None.input_name  # type: ignore[attr-defined]  # noqa: B018 - raised here, in the user's code
    except AttributeError as e:
        error = model_error(e)
        assert isinstance(error, export.ModelError)
        assert str(error).startswith(HEAD + "AttributeError: 'NoneType' object has no attribute 'input_name'")
        assert error.origin is not None and error.origin.startswith(HERE + ":")
