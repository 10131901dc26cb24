"""One judgement per trace (export/diagnose/judgement.py): a trace is judged once, after torch's
export returned (never inside it), and the program, the error and its fixes read that one value.

Table: model, spec, whether it fails, the kept checks; oracle: the judgement of each trace is
computed exactly once (a spy on ``judge``), the error and its verified fix are those a user
reads, the program matches eager.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

import export
from export.diagnose import judgement as judgement_module
from export.diagnose.judgement import Judgement, error_of, judge
from export.exporter import Exporter


class Branch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.shape[0] <= 6 else x + 1


class CatSum(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.cat((x, y), 1) + z


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[Judgement]:
    """Every judgement made, in order, with the trace it judged."""
    seen: list[Judgement] = []
    plain = judgement_module.judge

    def spy(trace: Any, *args: Any, **kwargs: Any) -> Judgement:
        out = plain(trace, *args, **kwargs)
        seen.append(out)
        return out

    monkeypatch.setattr("export.exporter.judge", spy)
    return seen


def _traces(seen: list[Judgement]) -> list[int]:
    return [id(j.trace) for j in seen]


@pytest.mark.parametrize("verification", ["replay", "re-export"])
def test_a_failing_export_judges_each_trace_once_and_verifies_its_fix(judged: list[Judgement],
                                                                      verification: str) -> None:
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Branch(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b", max=64)}},
                      fix_verification=verification)
    err = info.value
    # the example, then the fix's verification: its replay (the fix narrows a range), or a re-export
    assert (err.stats["traces"], err.stats["replays"]) == ((1, 1) if verification == "replay" else (2, 0))
    assert len(judged) == 2 and len(set(_traces(judged))) == 2
    assert judged[0].fails and not judged[1].fails
    assert [c.constraint for c in judged[0].causes] == ["x.size(0) must be <= 6"]
    assert err.fixes.verified and err.fixes.program is not None
    x = torch.randn(5, 3)
    torch.testing.assert_close(err.fixes.program.module()(x), Branch()(x))


@pytest.mark.parametrize("relations, fails", [("check", False), ("raise", True)])
def test_kept_checks_are_part_of_the_judgement(judged: list[Judgement], relations: str, fails: bool) -> None:
    args = (torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 7))
    spec = {"x": {1: Dim("a")}, "y": {1: Dim("c")}, "z": {1: Dim("d")}}
    if fails:
        with pytest.raises(export.ConstraintViolationError):
            export.export(CatSum(), args, dynamic_shapes=spec, dim_relations=relations)
        assert judged[0].fails and judged[0].checks is None and judged[0].blocking
        return
    ep = export.export(CatSum(), args, dynamic_shapes=spec, dim_relations=relations)
    assert len(judged) == 1 and not judged[0].fails
    assert judged[0].blocking and judged[0].kept == judged[0].checks
    assert ep.symshape.checks == judged[0].kept and "z.size(1)" in judged[0].kept[0].relation
    torch.testing.assert_close(ep.module()(*args), CatSum()(*args))


def test_a_clean_export_is_judged_once_with_nothing_blocking(judged: list[Judgement]) -> None:
    ep = export.export(Branch(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b", max=6)}})
    assert len(judged) == 1
    assert (judged[0].blocking, judged[0].causes, judged[0].checks, judged[0].fails) == ((), (), (), False)
    assert ep.symshape.ranges == {"x.size(0)": (1, 6)}


def test_the_judgement_is_a_value_the_error_reads_without_tracing_again() -> None:
    exporter = Exporter.of(Branch(), (torch.randn(4, 3),))
    ep, trace = exporter.trace(exporter.parse({"x": {0: Dim("b", max=64)}}, classic=False))
    first = judge(trace)
    assert first == judge(trace) or first.causes == judge(trace).causes  # pure: the same trace, the same answer
    error = error_of(first, None)  # no re-exporter: nothing traced, nothing verified
    assert error is not None and not error.fixes.verified
    assert exporter.session.traces == ["example"]
    assert "x.size(0) must be <= 6" in str(error)


def test_dim_relations_is_checked_by_judge() -> None:
    exporter = Exporter.of(Branch(), (torch.randn(4, 3),))
    _, trace = exporter.trace(exporter.parse({"x": {0: Dim("b", max=64)}}, classic=False))
    with pytest.raises(export.InputError, match="dim_relations"):
        judge(trace, "keep")
