"""``symshape replay`` and ``export.load`` on damaged input: exit 2 with one line, an
ArchiveError, never an internal error or a traceback (issue 11, items 3 and 5).

The fuzz tests are derandomized and bounded (examples and a per-example deadline of
none, but few examples: each load costs ~0.1 s)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hostile_archives import member, rewrite
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import export
from export.cli.main import main
from export.errors import ArchiveError

FUZZ = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def replay(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["replay", str(path)], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def assert_one_line_usage_error(code: int, err: str) -> None:
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "internal error" not in err, err


def test_replay_of_a_good_archive(program_bytes: bytes, tmp_path: Path) -> None:
    path = tmp_path / "ok.pt2"
    path.write_bytes(program_bytes)
    code, out, err = replay(path)
    assert code == 0, err
    assert "Bounds:" in out


def with_problem(data: bytes, problem: Any) -> bytes:
    doc = json.loads(member(data, "extra/symshape.json"))
    doc["report"]["problem"] = problem
    return rewrite(data, {"extra/symshape.json": json.dumps(doc).encode()})


PROBLEMS = [
    "{not json",
    "",
    "[]",
    "null",
    '{"format": "symshape.problem", "version": 1, "symbols": "x"}',
    '{"format": "symshape.problem", "version": 99}',
    '{"format": "symshape.problem", "version": 1, "symbols": [{"name": "a", "lo": 5, "hi": 1}]}',
    '{"format": "symshape.problem", "version": 1, "symbols": [{"name": "a"}], "facts": [{"rel": "a.b >= 1"}]}',
    "[" * 50_000 + "]" * 50_000,
]


@pytest.mark.parametrize("problem", PROBLEMS, ids=range(len(PROBLEMS)))
def test_replay_of_a_damaged_stored_problem(problem: str, program_bytes: bytes, tmp_path: Path) -> None:
    path = tmp_path / "p.pt2"
    path.write_bytes(with_problem(program_bytes, problem))
    code, _, err = replay(path)
    if problem == "":
        assert code == 2 and "carries no symshape problem" in err
    assert_one_line_usage_error(code, err)


@pytest.mark.parametrize("problem", PROBLEMS, ids=range(len(PROBLEMS)))
def test_replay_of_a_damaged_problem_file(problem: str, tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(problem)
    assert_one_line_usage_error(*replay(path)[::2])


def test_replay_of_a_damaged_archive(program_bytes: bytes, tmp_path: Path) -> None:
    path = tmp_path / "bad.pt2"
    path.write_bytes(rewrite(program_bytes, {"extra/symshape.json": b'{"report": 3}'}))
    code, _, err = replay(path)
    assert_one_line_usage_error(code, err)
    assert "extra/symshape.json" in err


# -- fuzz --------------------------------------------------------------------------------------

MUTATION = st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)),
                    min_size=1, max_size=8)


def mutate(data: bytes, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    out = bytearray(data)
    for pos, value in edits:
        out[pos % len(out)] = value
    return bytes(out[:cut] if cut is not None else out)


@FUZZ
@given(edits=MUTATION, cut=st.one_of(st.none(), st.integers(min_value=0, max_value=20_000)))
def test_fuzz_archive_bytes(program_bytes: bytes, tmp_path_factory: Any, edits: list[tuple[int, int]],
                            cut: int | None) -> None:
    data = mutate(program_bytes, edits, cut)
    try:
        export.load(io.BytesIO(data))
    except ArchiveError as e:
        assert "\n" not in str(e)
    path = tmp_path_factory.mktemp("fuzz") / "m.pt2"
    path.write_bytes(data)
    code, _, err = replay(path)
    assert code in (0, 2), err
    if code == 2:
        assert_one_line_usage_error(code, err)


JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                      st.floats(allow_nan=False), st.text(max_size=8))
JSON = st.recursive(JSON_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                    max_leaves=12)
KEYS = ["version", "equality_constraints", "report", "report.ranges", "report.classes", "report.relations",
        "report.assumptions", "report.stats", "report.problem", "report.warnings"]


@FUZZ
@given(key=st.sampled_from(KEYS), value=JSON, text_cut=st.one_of(st.none(), st.integers(min_value=0, max_value=600)))
def test_fuzz_symshape_json(program_bytes: bytes, key: str, value: Any, text_cut: int | None) -> None:
    doc = json.loads(member(program_bytes, "extra/symshape.json"))
    node = doc
    *parents, last = key.split(".")
    for p in parents:
        node = node[p]
    node[last] = value
    text = json.dumps(doc)
    if text_cut is not None:
        text = text[:text_cut]
    try:
        ep = export.load(io.BytesIO(rewrite(program_bytes, {"extra/symshape.json": text.encode()})))
    except ArchiveError as e:
        assert "extra/symshape.json" in str(e)
    else:
        assert isinstance(ep, export.SymshapeProgram)
