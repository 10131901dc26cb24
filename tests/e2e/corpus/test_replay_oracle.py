"""The re-export oracle of replay on the corpus (issue 35): every failing case is exported with
``fix_verification="replay"`` and ``"re-export"``; where the fix was verified by replaying the
failing trace, the error (text, fixes) and the offered program must be the re-export's, part by
part (tests/support/replay_oracle.py) and on the case's must-admit and must-reject sizes. The
range-only fixes of the corpus must all replay."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import expectations as E  # noqa: E402

from replay_oracle import SLICE_MAX_GUARD_213, differences, failing, same_outcomes  # noqa: E402

CASES = [c for c in E.load_cases().CASES if c.dynamic_shapes is not None and E.EXPECT[c.id].verdict == "violation"]

RANGE_ONLY = {"branch_le6_range", "pos_table_max_len", "cache_write_max", "check_ge4_min", "not_equal_512",
              "slice_from5_min", "slice_to5_min"}
"""The corpus's failing cases whose fix narrows ranges only (2.15): each is verified by replay."""


@functools.cache
def _both(case_id: str) -> tuple:
    case = next(c for c in CASES if c.id == case_id)
    model, args, kwargs = case.build()
    again_model, again_args, again_kwargs = case.build()  # (a fresh model: exporting may not touch it, but)
    return (model, args, failing(model, args, case.dynamic_shapes, "replay", kwargs),
            failing(again_model, again_args, case.dynamic_shapes, "re-export", again_kwargs))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_a_replayed_fix_offers_the_reexports_program(case_id: str) -> None:
    model, args, replay, again = _both(case_id)
    if replay is None:
        assert again is None, f"{case_id}: fails only when its fix is re-exported"
        return
    assert again is not None and str(replay) == str(again)
    program = replay.fixes.program
    if program is None or program.symshape.stats["verified_by"] != "replay":
        assert replay.stats["replays"] == 0
        assert case_id not in RANGE_ONLY, f"{case_id}: a range-only fix, not replayed"
        return
    exp = E.EXPECT[case_id]
    grid = [E.inputs_at(model, args, s, exp.make) for s in (*exp.admit, *exp.reject)]
    known = list(SLICE_MAX_GUARD_213) if case_id == "slice_from5_min" else []
    assert differences(program, again.fixes.program) == known
    assert same_outcomes(program, again.fixes.program, model, grid) == []
    assert replay.stats["traces"] == again.stats["traces"] - replay.stats["replays"]


def test_the_range_only_fixes_replay() -> None:
    replayed = {c for c in RANGE_ONLY if _both(c)[2].stats["replays"]}
    assert replayed == RANGE_ONLY
