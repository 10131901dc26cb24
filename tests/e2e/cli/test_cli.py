"""The symshape command line: export (report, --json, --graph, --out), replay, exit statuses."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch

import export
from export.cli import main, parse_dynamic, UsageError

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
ENCODER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "examples", "demo.py")  # the README demo
SIMPLE = os.path.join(MODELS, "simple.py")
ENCODER_FAIL = ["-d", "tokens:0:batch", "-d", "tokens:1:seq", "-d", "mask:0:mask_batch", "-d", "mask:1:mask_seq"]
ENCODER_OK = ["-d", "tokens:0:batch:2", "-d", "tokens:1:4*_seq:2:32", "-d", "mask:0:batch", "-d", "mask:1:4*_seq"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def script() -> list[str]:
    exe = shutil.which("symshape", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "export"]


# -- success -------------------------------------------------------------------------------------

def test_export_success_saves_a_program_that_runs(tmp_path):
    out = tmp_path / "enc.pt2"
    code, text, err = run("export", f"{ENCODER}:make", *ENCODER_OK, "--out", str(out))
    assert code == 0, err
    assert "exported" in text
    assert "tokens: [batch, 4 * _seq, 16]" in text
    assert "tokens.size(1)  [8, 128]" in text
    assert "batch == tokens.size(0) == mask.size(0)" in text
    assert "tokens.size(1) == 4 * _seq" in text
    assert f"Saved the exported program to {out}" in text
    assert "symshape: exporting TinyEncoder" in err and "symshape: exported" in err
    ep = export.load(str(out))
    assert ep.symshape.ranges["tokens.size(1)"] == (8, 128)
    torch.manual_seed(0)
    tokens, mask = torch.randn(3, 64, 16), torch.ones(3, 64)
    assert ep.module()(tokens, mask).shape == (3, 16, 16)


def test_nested_inputs_auto_static_and_trace_assumptions(tmp_path):
    out = tmp_path / "n.pt2"
    code, text, err = run("export", f"{SIMPLE}:make_nested", "-d", "x:0:b", "-d", "d['a']:0:auto",
                          "-d", "d.b[0]:0:b", "-d", "d[b][0]:1:static", "-o", str(out), "--quiet")
    assert code == 0, err
    assert err == ""  # --quiet: no progress
    assert "x:         [b, 3]" in text and "d['b'][0]: [b, 3]" in text
    assert "b == x.size(0) == d['b'][0].size(0)" in text
    assert "Trace assumptions" in text and "x.size(0) >= 1" in text  # positive sizes; no branch needed >= 2
    ep = export.load(str(out))
    d = {"a": torch.randn(5), "b": [torch.randn(7, 3)]}
    x = torch.randn(7, 3)
    assert torch.allclose(ep.module()(x, d=d), x * 2 + d["a"].sum() + d["b"][0])


def test_classic_constraints():
    code, text, err = run("export", f"{SIMPLE}:make", "-q", "-c", "2 <= x.shape[0] <= 64",
                          "-c", "dynamic_dim(y, 0) == x.size(0)", "-c", "y.size(1) >= 4")
    assert code == 0, err
    assert "x.size(0)  [2, 64]" in text and "y.size(1)  [4, inf]" in text  # the classic max is no limit
    assert "\n  x.size(0) == y.size(0)\n" in text  # the internal root x_0 is not shown
    assert "x: [x.size(0), 3]" in text and "y: [x.size(0), y.size(1)]" in text
    assert "x_0" not in text and "y_1" not in text and "9223372036854775806" not in text


# -- violations ----------------------------------------------------------------------------------

def test_violation_exit_1_with_causes_and_fixes():
    code, text, err = run("export", f"{ENCODER}:make", *ENCODER_FAIL)
    assert code == 1
    assert "constraint violations" in text
    assert "Constraints violated" in text
    assert "demo.py:24" in text and "demo.py:25" in text and "demo.py:26" in text
    assert "Suggested fix (Dim form):" in text and "4 * _seq" in text
    assert "Suggested fix (classic form):" in text and "dynamic_dim(mask, 0) == dynamic_dim(tokens, 0)" in text
    assert "The fix was verified" in text
    assert "--dynamic 'tokens:1:4*_seq:1:32'" in text
    assert "export failed: constraint violations" in err


def test_json_document(tmp_path):
    graph = tmp_path / "g.dot"
    problem = tmp_path / "p.json"
    code, text, err = run("export", f"{ENCODER}:make", *ENCODER_FAIL, "--json", "--graph", str(graph),
                          "--problem", str(problem))
    assert code == 1
    assert "symshape: exporting" not in err  # --json: no progress
    doc = json.loads(text)
    for key in ("status", "inputs", "ranges", "classes", "relations", "assumptions", "violations", "fixes",
                "stats", "problem"):
        assert key in doc, key
    assert doc["status"] == "violations"
    assert doc["inputs"] == {"tokens": ["batch", "seq", "16"], "mask": ["mask_batch", "mask_seq"]}
    v = doc["violations"][0]
    assert set(v) == {"dims", "origin", "code", "constraint", "kind"}
    assert any(v["origin"].endswith("demo.py:25") and v["kind"] == "guard" for v in doc["violations"])
    assert set(doc["fixes"]) >= {"modern", "classic", "checks", "verified"}
    assert doc["fixes"]["verified"] is True and "Dim('_seq', min=1, max=32)" in doc["fixes"]["modern"]
    assert doc["stats"]["guards"] > 0
    assert json.loads(problem.read_text())["format"] == "symshape.problem"

    dot = graph.read_text()
    assert dot.startswith('graph "constraints" {')
    for node in ("tokens.size(0)", "tokens.size(1)", "mask.size(0)", "mask.size(1)"):
        assert f'  "{node}" [label=' in dot
    assert '"tokens.size(0)" -- "mask.size(0)"' in dot
    assert '"tokens.size(1)" -- "mask.size(1)"' in dot
    assert re.search(r"tokens.size\(1\) == mask.size\(1\)\\n\S*demo.py:25", dot)  # relation, source line
    assert "[4, 128]" in dot and re.search(r"tokens.size\(1\) <= 128\\n\S*demo.py:24", dot)

    # replay the saved problem and the --json document
    code, text, _ = run("replay", str(problem))
    assert code == 0 and "violations" in text and "tokens.size(1) must be <= 128" in text  # the causes' words
    doc_file = tmp_path / "doc.json"
    doc_file.write_text(json.dumps(doc))
    code, text, _ = run("replay", str(doc_file), "--json")
    replayed = json.loads(text)  # the report's form, its violations the export's causes
    assert code == 0 and replayed["schema"] == "symshape.report/2" and replayed["status"] == "violations"
    assert sorted(v["constraint"] for v in replayed["violations"]) == sorted(v["constraint"] for v in doc["violations"])


def test_json_success_fields():
    code, text, _ = run("export", f"{SIMPLE}:make", "-d", "x:0:b:2:64", "-d", "y:0:b", "-d", "y:1:w:4", "--json")
    assert code == 0
    doc = json.loads(text)
    assert doc["status"] == "exported" and doc["violations"] == [] and doc["fixes"] is None
    assert doc["inputs"] == {"x": ["b", "3"], "y": ["b", "w"]}
    assert doc["ranges"]["x.size(0)"] == [2, 64] and doc["ranges"]["y.size(1)"] == [4, None]
    assert ["b", "x.size(0)", "y.size(0)"] in doc["classes"]
    assert doc["stats"]["guards"] > 0


def test_data_dependent_exit_1():
    code, text, err = run("export", f"{SIMPLE}:make_data_dependent", "--json")
    assert code == 1
    doc = json.loads(text)
    assert doc["status"] == "data_dependent" and doc["violations"][0]["kind"] == "data_dependent"
    assert "def forward" not in err  # torch's partial graph is not shown without --debug


# -- usage errors --------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "message"), [
    ([f"{SIMPLE}:nope"], "has no 'nope'"),
    ([SIMPLE], "expected MODEL.py:FACTORY"),
    ([os.path.join(MODELS, "missing.py") + ":make"], "no such file"),
    ([f"{SIMPLE}:make_broken"], "raised RuntimeError: cannot build the model today"),
    ([f"{SIMPLE}:make_wrong"], "must return (model, args)"),
    ([f"{SIMPLE}:make", "-d", "x:0"], "expected NAME:DIM:DIMNAME"),
    ([f"{SIMPLE}:make", "-d", "x:zero:b"], "DIM (the dim index) must be an integer"),
    ([f"{SIMPLE}:make", "-d", "x:0:b:9:3"], "MIN 9 > MAX 3"),
    ([f"{SIMPLE}:make", "-d", "x:5:b"], "x has 2 dims (shape (4, 3)); dim 5 is out of range"),
    ([f"{SIMPLE}:make", "-d", "z:0:b"], "'z' is not an argument"),
    ([f"{SIMPLE}:make", "-d", "x:0:b:8"], "outside the declared range"),
    ([f"{SIMPLE}:make", "-d", "x:0:b", "-c", "x.shape[0] <= 8"], "not both"),
    ([f"{SIMPLE}:make", "-c", "x.shape[0] <= y"], "expected dims like"),
    ([f"{SIMPLE}:make", "--bogus"], "unrecognized arguments"),
])
def test_usage_errors_exit_2(argv, message):
    code, text, err = run("export", *argv)
    assert code == 2
    assert message in err, err
    assert "Traceback" not in err
    assert err.count("\n") <= 3


def test_parse_dynamic():
    d = parse_dynamic("y['a:b']:-1:seq:2:inf")
    assert (d.name, d.dim, d.dim_name, d.lo, d.hi) == ("y['a:b']", -1, "seq", 2, None)
    assert parse_dynamic("x:1:2*b+1").dim_name == "2*b+1"
    with pytest.raises(UsageError):
        parse_dynamic("x:0:b+c")


def test_replay_errors():
    code, _, err = run("replay", os.path.join(MODELS, "missing.json"))
    assert code == 2 and "no such file" in err
    code, _, err = run("replay", SIMPLE)
    assert code == 2 and "not JSON" in err


# -- the console script and python -m export -----------------------------------------------------

def test_console_script_end_to_end(tmp_path):
    out = tmp_path / "m.pt2"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    p = subprocess.run([*script(), "export", f"{SIMPLE}:make", "-d", "x:0:b", "-d", "y:0:b", "-d", "y:1:w:4",
                        "--out", str(out)], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "x: [b, 3]" in p.stdout and "symshape: exported" in p.stderr
    p = subprocess.run([*script(), "replay", str(out)], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Bounds:" in p.stdout and "y.size(1)" in p.stdout
    p = subprocess.run([sys.executable, "-m", "export", "export", f"{SIMPLE}:make", "-d", "x:7:b"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2 and "dim 7 is out of range" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("mode, traces, replays", [(None, 1, 1), ("re-export", 2, 0)])
def test_fix_verification(mode, traces, replays):
    """The fix (x and y share their batch) equates dims torch unified: replayed by default,
    re-exported with --fix-verification re-export; the same fix either way."""
    flags = [] if mode is None else ["--fix-verification", mode]
    code, text, _ = run("export", f"{SIMPLE}:make", "-d", "x:0:a", "-d", "y:0:b", "--json", *flags)
    doc = json.loads(text)
    assert code == 1 and doc["fixes"]["verified"] is True
    assert (doc["stats"]["traces"], doc["stats"]["replays"]) == (traces, replays)
    assert "dynamic_shapes = {'x': {0: a}, 'y': {0: a}}" in doc["fixes"]["modern"]
