"""What the CLI writes besides the report (issue 23, item 2): ``--out`` on a failed export, the
warnings in the report and the JSON document (the same keys on success and failure)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import torch

import export
from export.cli import main

MODELS = Path(__file__).resolve().parent / "models"
SIMPLE = MODELS / "simple.py"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_out_on_a_batch1_failure_writes_the_spec_exported_with_a_larger_example(tmp_path: Path) -> None:
    path = tmp_path / "p.pt2"
    code, text, err = run("export", f"{SIMPLE}:make_batch1", "-d", "x:0:batch", "-q", "--out", str(path),
                          "--zero-one-examples", "raise")
    assert code == 1, err
    assert f"Saved to {path}: your spec's program, exported with a larger example (x.size(0) = 2)" in text
    ep = export.load(str(path))
    for batch in (1, 2, 5):  # the dim stays dynamic: every batch eager runs
        x = torch.randn(batch, 8)
        assert torch.equal(ep.module()(x), x.reshape(batch, -1, 4).sum(-1))


def test_a_batch1_example_exports_the_dynamic_program_by_default(tmp_path: Path) -> None:
    path = tmp_path / "p.pt2"
    code, text, err = run("export", f"{SIMPLE}:make_batch1", "-d", "x:0:batch", "-q", "--out", str(path))
    assert code == 0, err
    line = next(t for t in text.splitlines() if t.startswith("symshape: warning: "))
    assert "x.size(0) = 1 in the example: traced at 2; the program admits x.size(0) in [1, inf]" in line
    ep = export.load(str(path))
    for batch in (1, 2, 5):
        x = torch.randn(batch, 8)
        assert torch.equal(ep.module()(x), x.reshape(batch, -1, 4).sum(-1))


def test_out_says_why_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "p.pt2"
    code, text, _ = run("export", f"{SIMPLE}:make_data_dependent", "-d", "x:0:b", "-q", "--out", str(path))
    assert code == 1 and not path.exists()
    assert f"Program not written to {path}: the export failed on a data-dependent branch" in text


def test_json_has_the_same_keys_on_success_and_failure(tmp_path: Path) -> None:
    ok = json.loads(run("export", f"{SIMPLE}:make", "-d", "x:0:b", "-d", "y:0:b", "--json")[1])
    bad = json.loads(run("export", f"{SIMPLE}:make_batch1", "-d", "x:0:batch", "--json",
                         "--zero-one-examples", "raise")[1])
    assert ok["status"] == "exported" and bad["status"] == "violations"
    for key in ("warnings", "out", "out_note", "ranges", "violations", "fixes", "stats"):
        assert key in ok and key in bad, key
    assert isinstance(ok["warnings"], list) and isinstance(bad["warnings"], list)


def test_a_warning_is_in_the_report_and_the_json() -> None:
    code, text, err = run("export", f"{SIMPLE}:make_branch", "-d", "x:0:b", "-q")
    assert code == 0, err
    line = next(t for t in text.splitlines() if t.startswith("symshape: warning: "))
    assert "x.size(0) == 1 was decided False" in line and "simple.py" in line
    assert "SymshapeWarning" not in err  # not a Python warning located in symshape's own code
    doc = json.loads(run("export", f"{SIMPLE}:make_branch", "-d", "x:0:b", "--json")[1])
    assert any("x.size(0) == 1 was decided False" in w for w in doc["warnings"])


def test_example_resizes_a_dim_of_the_factorys_example(tmp_path: Path) -> None:
    """``--example x:0:4``: the factory's batch-1 example traced at batch 4, as if the factory
    had built it (no 0/1 example left, so no larger-example warning)."""
    path = tmp_path / "p.pt2"
    code, text, err = run("export", f"{SIMPLE}:make_batch1", "-d", "x:0:batch", "-e", "x:0:4", "--out", str(path))
    assert code == 0, err
    assert "symshape: example resized: x.size(0) = 1 -> 4" in err
    assert "symshape: warning:" not in text
    ep = export.load(str(path))
    assert ep.symshape.ranges["x.size(0)"] == (1, None)
    for batch in (1, 2, 5):
        x = torch.randn(batch, 8)
        assert torch.equal(ep.module()(x), x.reshape(batch, -1, 4).sum(-1))


def test_example_flags_are_checked_like_dynamic_flags() -> None:
    for flags, message in ((["-e", "x:0"], "expected NAME:DIM:SIZE"),
                           (["-e", "x:0:four"], "SIZE must be an integer"),
                           (["-e", "x:0:-1"], "SIZE must be >= 0"),
                           (["-e", "x:2:4"], "dim 2 is out of range"),
                           (["-e", "z:0:4"], "'z' is not an argument"),
                           (["-e", "x:0:4", "-e", "x:0:5"], "resized twice")):
        code, _, err = run("export", f"{SIMPLE}:make_batch1", "-d", "x:0:batch", *flags)
        assert code == 2 and message in err, (flags, err)
        assert "Traceback" not in err


def test_progress_lines_name_every_step_that_traces_again() -> None:
    """A failing export's progress says when it verifies the fix; a batch-1 example's, that it
    traces at a larger example. ``-q`` and ``--json`` print none."""
    _, _, err = run("export", f"{SIMPLE}:make_div8", "-d", "x:1:s")
    assert "symshape: verifying the suggested fix: re-exporting with it [" in err, err
    _, _, err = run("export", f"{SIMPLE}:make_batch1", "-d", "x:0:batch")
    assert "symshape: x.size(0) = 1 in the example: tracing at a larger one (x.size(0) = 2) [" in err, err
    for quiet in ("-q", "--json"):
        _, _, err = run("export", f"{SIMPLE}:make_div8", "-d", "x:1:s", quiet)
        assert "verifying" not in err, err


def test_a_clean_auto_export_replays_with_no_violation(tmp_path: Path) -> None:
    """Replay and export agree on what a violation is: the divisibility a Dim.AUTO adopted is part
    of its program (a congruence), not a violation; with a named Dim it is one."""
    problem = tmp_path / "p.json"
    code, _, err = run("export", f"{SIMPLE}:make_div8", "-d", "x:1:auto", "-q", "--problem", str(problem))
    assert code == 0, err
    doc = json.loads(run("replay", str(problem), "--json")[1])
    assert doc["status"] == "replayed" and doc["violations"] == [], doc["violations"]
    assert doc["congruences"] == ["x.size(1) % 8 == 0"]
    named = tmp_path / "named.json"
    assert run("export", f"{SIMPLE}:make_div8", "-d", "x:1:s", "-q", "--problem", str(named))[0] == 1
    doc = json.loads(run("replay", str(named), "--json")[1])
    assert [v["constraint"] for v in doc["violations"]] == ["x.size(1) must be divisible by 8"]
