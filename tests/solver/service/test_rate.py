"""The decision-rate benchmark (benchmarks/bench_rate.py): its answer comparison and a small
run through the large-problem path, checked against a solver that never takes it.

Timing-free: the assertions are on answers and stage counts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import bench_rate  # noqa: E402
from benchmarks.streams import large_problem  # noqa: E402
from solver import Solver  # noqa: E402
from solver.decide import pipeline  # noqa: E402


def test_compare_allows_only_settling_an_unknown():
    before = ["true", "false", "unknown", "unknown"]
    assert bench_rate.compare(before, ["true", "false", "true", "unknown"]) == []
    assert bench_rate.compare(before, ["unknown", "true", "unknown", "false"]) == [
        "question 0: true -> unknown", "question 1: false -> true"]


def test_small_run_local_path_agrees_with_full_z3(monkeypatch):
    """200 symbols x 400 facts with every Z3 question on the local path: the same TRUE/FALSE
    answers as the full-Z3 path wherever that one decides, and never a flip."""
    monkeypatch.setattr(pipeline, "FULL_SMT_FACTS", 0)
    local = bench_rate.run(200, 400, seed=3)
    monkeypatch.setattr(pipeline, "FULL_SMT_FACTS", 10**9)
    p = large_problem(200, 400, seed=3)
    full = Solver()
    for d in p.symbols:
        full.symbol(d.name, d.lo, d.hi, hint=d.value)
    for _, rel in p.facts:
        full.assume(rel)
    answers = [full.decide(q).value for q in p.questions]
    assert local["decided"] == len(p.questions) == sum(local["counts"].values())
    for a, b in zip(answers, local["answers"], strict=True):
        assert a == b or b == "unknown", (a, b)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
