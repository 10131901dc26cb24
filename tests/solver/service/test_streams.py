"""Guard-stream generators and the real torch streams (benchmarks/streams.py).

Fast (a few seconds) and timing-free: the assertions are on answers and on ``Solver.stats``.
"""

from __future__ import annotations

import doctest
import functools
import sys
from collections import Counter
from pathlib import Path

import pytest
import sympy

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import streams  # noqa: E402
from benchmarks.streams import (  # noqa: E402
    CHEAP_STAGES,
    REAL_STREAMS_PATH,
    STAGES,
    cheap_fraction,
    declare,
    load_real_streams,
    replay,
    replay_real,
    synthetic_stream,
)
from shapes import evaluate  # noqa: E402
from solver import Solver, Truth  # noqa: E402

SIZES = [(100, 10, 0), (600, 25, 1), (2_500, 80, 2)]


@functools.lru_cache(maxsize=None)
def _stream(n: int, m: int, seed: int) -> streams.GuardStream:
    return synthetic_stream(n, m, seed=seed)


@functools.lru_cache(maxsize=None)
def _replayed(n: int, m: int, seed: int, with_hints: bool = True) -> tuple[Solver, list[bool]]:
    st = _stream(n, m, seed)
    s = Solver()
    declare(s, st, with_hints=with_hints)
    return s, replay(s, st.guards)  # raises on any HintMismatchError / ContradictionError


def test_module_doctests() -> None:
    failed, _ = doctest.testmod(streams)
    assert failed == 0


@pytest.mark.parametrize("n,m,seed", SIZES)
def test_deterministic(n: int, m: int, seed: int) -> None:
    a, b = _stream(n, m, seed), synthetic_stream(n, m, seed=seed)
    assert a.fingerprint() == b.fingerprint()
    assert [rel for rel, _ in a.guards] == [rel for rel, _ in b.guards]
    if n <= 1000:
        assert synthetic_stream(n, m, seed=seed + 100).fingerprint() != a.fingerprint()


@pytest.mark.parametrize("n,m,seed", SIZES)
def test_shape_of_stream(n: int, m: int, seed: int) -> None:
    st = _stream(n, m, seed)
    assert len(st.guards) == n and len(st.symbols) == m
    assert len({d.name for d in st.symbols}) == m
    assert all(isinstance(rel, sympy.Basic) and isinstance(hint, bool) for rel, hint in st.guards)
    kinds = Counter(st.kinds)
    assert kinds.most_common(1)[0][0] in ("eq1", "constant")  # the 0/1 checks dominate
    if n >= 600:
        for k in ("eq1", "ne1", "range_true", "mod", "product", "floordiv", "linear", "constant"):
            assert kinds[k] > 0, k
    assert st.distinct() < n  # questions are re-asked


@pytest.mark.parametrize("n,m,seed", SIZES)
def test_hints_come_from_one_example_in_range(n: int, m: int, seed: int) -> None:
    st = _stream(n, m, seed)
    for d in st.symbols:
        assert (d.lo is None or d.lo <= d.value) and (d.hi is None or d.value <= d.hi), d
    env = st.assignment
    for rel, hint in st.guards:
        assert bool(evaluate(rel, env)) is hint, rel


@pytest.mark.parametrize("with_hints", [True, False])
@pytest.mark.parametrize("n,m,seed", SIZES)
def test_replay_consistent(n: int, m: int, seed: int, with_hints: bool) -> None:
    """No HintMismatchError / ContradictionError: every settled answer agrees with the hint."""
    st = _stream(n, m, seed)
    s, answers = _replayed(n, m, seed, with_hints)
    assert answers == [hint for _, hint in st.guards]
    assert sum(s.stats[k] for k in STAGES) == n  # one stage credited per guard
    assert s.stats["undecided"] == 0
    # the recorded guard facts hold at the example assignment
    env = st.assignment
    assert all(evaluate(f.rel, env) for f in s.facts)
    # and each distinct question became a fact at most once
    new_facts = [g for g in s.guards if g.decided is Truth.UNKNOWN]
    assert len(new_facts) == len({g.rel for g in new_facts})


@pytest.mark.parametrize("n,m,seed", SIZES)
def test_cheap_stages_decide_most(n: int, m: int, seed: int) -> None:
    s, _ = _replayed(n, m, seed, True)
    assert cheap_fraction(s.stats) > 0.90, dict(s.stats)
    assert sum(s.stats[k] for k in CHEAP_STAGES) > 0.9 * n


needs_data = pytest.mark.skipif(not REAL_STREAMS_PATH.exists(), reason="real guard streams not available")


@pytest.fixture(scope="module")
def real() -> dict:
    return load_real_streams()


@needs_data
def test_real_streams_loaded(real: dict) -> None:
    assert set(real) == {"mlp", "transformer", "transformer_mask", "transformer_strict"}
    assert {m: len(rows) for m, rows in real.items()} == {
        "mlp": 165, "transformer": 2490, "transformer_mask": 2881, "transformer_strict": 4072}


@needs_data
@pytest.mark.parametrize("model", ["mlp", "transformer", "transformer_mask", "transformer_strict"])
@pytest.mark.parametrize("ranges", ["open", "declared"])
def test_real_stream_replays_and_agrees(real: dict, model: str, ranges: str) -> None:
    rows = real[model]
    rep = replay_real(model, rows, ranges=ranges)
    assert rep.errors == []
    assert rep.disagree == []
    guards = [g for g in rows if g.entry == "evaluate_expr"]
    assert rep.decisions == rep.agree == len(guards)
    assert len(rep.skipped) == len(rows) - len(guards)  # the create_symbol specialization only
    assert sum(rep.stages.values()) == rep.decisions
    # torch decided everything but two guards without recording anything: so does the solver
    assert [f.split()[1] for f in rep.solver_facts] == [t.split()[1] for t in rep.torch_guards]
    assert rep.by_outcome.get(("static(no guard)", "unknown"), 0) == 0


@needs_data
def test_real_torch_guards_become_facts(real: dict) -> None:
    rep = replay_real("transformer_mask", real["transformer_mask"])
    assert rep.torch_guards == ["i=1149 Eq(s52, s28)", "i=1150 Eq(s25, s98)"]
    assert len(rep.solver_facts) == 2
    assert rep.skipped and "create_symbol" in rep.skipped[0]


@needs_data
def test_real_constants_use_constant_stage(real: dict) -> None:
    rep = replay_real("mlp", real["mlp"])
    assert rep.stages["constant"] >= 1
    nonconst = replay_real("mlp", real["mlp"], skip_constants=True)
    assert nonconst.decisions == 48 and nonconst.stages["constant"] == 0
