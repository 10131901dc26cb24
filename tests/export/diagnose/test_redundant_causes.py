"""Causes the others imply are not listed (issue 8 item 5): the table gives a model, its spec
and the texts the message must and must not hold; the fix still re-exports."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import export


class ViewByOther(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.view(y.shape[0], -1) + y[:, :1]


class MaskView(torch.nn.Module):
    """GPT-2's ``attention_mask.view(batch_size, -1)`` then a broadcast with the ids."""

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return ids.float() * mask.view(ids.shape[0], -1)


CASES = [
    ("view_by_other", ViewByOther, (torch.randn(4, 3), torch.randn(4, 2)),
     {"x": {0: Dim("a")}, "y": {0: Dim("b")}}, "must equal", "%"),
    ("mask_view", MaskView, (torch.ones(2, 8, dtype=torch.long), torch.ones(2, 8)),
     {"ids": {0: Dim("b1"), 1: Dim("s1")}, "mask": {0: Dim("b2"), 1: Dim("s2")}}, "must equal", "%"),
]


@pytest.mark.parametrize(("name", "model", "args", "spec", "said", "unsaid"), CASES, ids=[c[0] for c in CASES])
def test_implied_causes_are_dropped(name: str, model: type[torch.nn.Module], args: tuple, spec: dict,
                                    said: str, unsaid: str) -> None:
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(model(), args, dynamic_shapes=spec)
    causes = str(info.value).split("Suggested fix")[0]
    assert said in causes and unsaid not in causes, causes
    fixed = info.value.fixes.apply(spec)
    ep = export.export(model(), args, dynamic_shapes=fixed)
    assert torch.equal(ep.module()(*args), model()(*args))


def test_past_max_facts_the_short_causes_stay_and_what_they_imply_goes() -> None:
    """More than ``MAX_FACTS`` violations (Swin's window guards): the shortest are kept, and a
    longer one goes when the spec and the kept ones imply it (here: ``h = 0 (mod 32)`` and
    ``h >= 64`` follow from the short guards, and every window guard from those; a short one
    another short one implies goes too)."""
    import types

    import sympy

    from export.diagnose.redundant import MAX_FACTS, irredundant
    from shapes import FloorDiv
    from solver import Fact, Reason, Solver

    s = Solver()
    h = s.symbol("h", 0, None, hint=64)
    quarter, merged = FloorDiv(h, 4), FloorDiv(FloorDiv(h, 4) + 1, 2)
    short = [sympy.Eq(sympy.Mod(h, 4), 0), sympy.Ne(sympy.Mod(quarter, 2), 1),
             sympy.Le(sympy.Mod(3 * quarter, 4), 0), sympy.Le(sympy.Mod(3 * merged, 4), 0), sympy.Gt(merged, 4)]
    long = []
    for size in (quarter, merged):
        padded = size + sympy.Mod(3 * size, 4)
        long += [sympy.Eq(sympy.Mod(padded, FloorDiv(padded, 4)), 0), sympy.Eq(FloorDiv(padded, FloorDiv(padded, 4)), 4),
                 sympy.Eq(4 * FloorDiv(padded, 4), padded), sympy.Ne(FloorDiv(padded, 4), 0),
                 sympy.Eq(FloorDiv(padded, 4) * FloorDiv(padded, FloorDiv(padded, 4)), padded),
                 sympy.Ge(FloorDiv(padded, 4) * FloorDiv(padded, 4), 4)]
    rels = long[:6] + short + long[6:]
    facts = [Fact(r, Reason.guard(str(r), f"swin.py:{i}"), i) for i, r in enumerate(rels)]
    assert len(facts) > MAX_FACTS
    kept = [f.rel for f in irredundant(facts, types.SimpleNamespace(solver=s))]  # type: ignore[arg-type]
    assert kept == [r for r in short if r in kept] and len(kept) >= 4, kept  # only short ones, in order
    assert sympy.Gt(merged, 4) in kept and sympy.Eq(sympy.Mod(h, 4), 0) in kept, kept


class Windows(torch.nn.Module):
    """Window arithmetic nested four deep (as shifted-window attention pads to its windows):
    the branch's relation reads about 1,600 characters."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.shape[0], x.shape[1]
        for _ in range(4):
            a = (a + 3) // 2 + a % 5
            b = (b + 3) // 2 + b % 5
        return x + 1 if a * b > 50 else x - 1


def test_a_relation_too_long_to_read_is_named_not_printed() -> None:
    spec = {"x": {0: Dim("h"), 1: Dim("w")}}
    with pytest.raises(export.ConstraintViolationError) as info:
        export.export(Windows(), (torch.randn(64, 64),), dynamic_shapes=spec, dim_relations="raise")
    causes = str(info.value).split("Suggested fix")[0]
    assert "a relation of x.size(0), x.size(1) (with floor divisions and remainders) too long to print" in causes
    assert len(causes) < 600, causes
    assert info.value.guards and len(str(info.value.guards[0].rel)) > 400  # the whole relation is kept
    assert "torch._check(" in str(info.value)  # the line to paste is code: printed in full
