"""The report as one JSON document (issue 23, items 1 and 4): ``symshape.report/2``, the same keys
on success and failure, validated against docs/report.schema.json; user-facing text without
internal root names or the classic maximum 2**63 - 2; replay's violations are export's causes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.export import Dim

import export
from export.cli import main
from export.program.document import CLI_KEYS, KEYS, SCHEMA
from json_schema import validate

ROOT = Path(__file__).resolve().parents[3]
SCHEMA_DOC = json.loads((ROOT / "docs" / "report.schema.json").read_text())
SIMPLE = Path(__file__).resolve().parent / "models" / "simple.py"
DEMO = ROOT / "examples" / "demo.py"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def doc_of(*argv: str) -> tuple[int, dict[str, Any]]:
    code, text, _ = run(*argv, "--json")
    doc = json.loads(text)
    validate(doc, SCHEMA_DOC)
    assert doc["schema"] == SCHEMA
    return code, doc


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    return {
        "exported": doc_of("export", f"{SIMPLE}:make", "-d", "x:0:b", "-d", "y:0:b")[1],
        "violations": doc_of("export", f"{SIMPLE}:make_div8", "-c", "dynamic_dim(x, 1)")[1],
        "data_dependent": doc_of("export", f"{SIMPLE}:make_data_dependent", "-d", "x:0:b")[1],
        "error": doc_of("export", f"{SIMPLE}:make", "-d", "x:5:b")[1],
    }


def test_every_export_document_has_the_same_keys(docs: dict[str, dict[str, Any]]) -> None:
    for status, doc in docs.items():
        assert doc["status"] == status
        assert set(KEYS) | set(CLI_KEYS) <= set(doc), status
        assert set(doc["stats"]) == set(docs["exported"]["stats"]), status  # stats: one shape
    assert docs["error"]["exit"] == 2 and "dim 5 is out of range" in docs["error"]["message"]
    assert docs["violations"]["fixes"]["flags"] == ["--dynamic 'x:1:8*_x_1:1'"]
    assert docs["exported"]["message"] is None and docs["violations"]["message"].startswith("Constraints violated")


def test_a_data_dependent_branch_is_located(docs: dict[str, dict[str, Any]]) -> None:
    doc = docs["data_dependent"]
    (v,) = doc["violations"]
    assert v["kind"] == "data_dependent" and v["origin"].endswith("simple.py:32")
    assert v["code"] == "if x.sum().item() > 0:"
    assert "simple.py:32" in doc["message"] and doc["problem"] is not None


def test_python_api_documents_validate() -> None:
    model, args = torch.nn.Linear(4, 2), (torch.randn(3, 4),)
    ep = export.export(model, args, dynamic_shapes={"input": {0: Dim("batch")}})
    ok = ep.symshape.to_dict()
    validate(ok, SCHEMA_DOC)
    assert ok["status"] == "exported" and ok["ranges"]["input.size(0)"][1] is None
    with pytest.raises(export.ConstraintViolationError) as e:
        export.export(lambda x: x.reshape(-1, 4), (torch.randn(8),), dynamic_shapes={"x": {0: Dim("n")}})
    bad = e.value.to_dict()
    validate(bad, SCHEMA_DOC)
    assert bad["status"] == "violations" and set(bad) == set(ok)
    assert bad["violations"][0]["constraint"] == "x.size(0) must be divisible by 4"
    with pytest.raises(export.DataDependentError) as d:
        export.export(lambda x: x + 1 if x.sum() > 0 else x, (torch.ones(3),))
    dd = d.value.to_dict()
    validate(dd, SCHEMA_DOC)
    assert dd["status"] == "data_dependent" and set(dd) == set(ok) and dd["violations"][0]["origin"]


# -- replay --------------------------------------------------------------------------------------

def test_replay_of_a_clean_export_has_no_violations(tmp_path: Path) -> None:
    """The problem of a clean export holds torch's >= 1 / >= 2 size assumptions the spec does not
    imply: the program enforces them, so they are not violations (export reports no cause)."""
    pt2, problem = tmp_path / "clean.pt2", tmp_path / "p.json"
    code, _, err = run("export", f"{SIMPLE}:make_branch", "-d", "x:0:b", "-q", "--out", str(pt2), "--problem", str(problem))
    assert code == 0, err
    for path in (pt2, problem):
        code, text, _ = run("replay", str(path))
        assert code == 0 and text.splitlines()[0].endswith(", 0 violations"), text
        assert "Violations" not in text
        code, doc = doc_of("replay", str(path))
        assert doc["status"] == "replayed" and doc["violations"] == [] and doc["stats"]["violations"] == 0


def test_replay_violations_are_the_export_causes(tmp_path: Path) -> None:
    problem = tmp_path / "p.json"
    code, exported = doc_of("export", f"{SIMPLE}:make_div8", "-c", "dynamic_dim(x, 1)", "--problem", str(problem))
    assert code == 1
    _, replayed = doc_of("replay", str(problem))
    strip = [{k: v[k] for k in ("dims", "origin", "constraint")} for v in exported["violations"]]
    assert [{k: v[k] for k in ("dims", "origin", "constraint")} for v in replayed["violations"]] == strip
    code, text, _ = run("replay", str(problem))
    assert "1 violations" in text.splitlines()[0]
    assert "  1. x.size(1) must be divisible by 8\n     at " in text and "simple.py:61: return x.reshape" in text
    assert "x_size1" not in text and "x_1" not in text and "9223372036854775" not in text


# -- user-facing text: no internal names, no 2**63 - 2 ---------------------------------------------

# (a range as text: tests/shapes/test_ranges.py)

TEXT_CASES = [
    # (argv, lines the report must show, texts it must not)
    ((f"{DEMO}:make", "-c", "tokens.shape[0] == mask.shape[0]", "-c", "dynamic_dim(tokens, 1)"),
     ["    mask_0 = Dim('mask_0', min=2)",
      "    --dynamic tokens:0:mask_0:2 --dynamic mask:0:mask_0",
      "  tokens.size(0)  [2, inf]",
      "  tokens.size(0) == mask.size(0)"],
     ["9223372036854775806", "mask_0 == ", "tokens_1"]),
    ((f"{SIMPLE}:make_div8", "-c", "dynamic_dim(x, 1)"),
     ["    _x_1 = Dim('_x_1', min=1)",
      "    --dynamic 'x:1:8*_x_1:1'",
      "  x.size(1)  [8, inf]",
      "  1. x.size(1) must be divisible by 8"],
     ["1152921504606846975", "9223372036854775800", "x_1 =="]),
    ((f"{SIMPLE}:make_affine", "-c", "z.size(0) == 2*y.size(0)+1", "-c", "y.size(0) <= 64"),
     ["  y: [y.size(0), 4]", "  z: [2 * y.size(0) + 1, 4]", "  z.size(0) == 2 * y.size(0) + 1"],
     ["y_0"]),
]


@pytest.mark.parametrize(("argv", "shown", "hidden"), TEXT_CASES)
def test_report_text_speaks_the_users_terms(argv: tuple[str, ...], shown: list[str], hidden: list[str]) -> None:
    _, text, _ = run("export", *argv, "-q")
    lines = text.splitlines()
    for line in shown:
        assert line in lines, (line, text)
    for word in hidden:
        assert word not in text, (word, text)


def test_replay_text_speaks_the_users_terms(tmp_path: Path) -> None:
    pt2 = tmp_path / "a.pt2"
    code, _, err = run("export", f"{SIMPLE}:make_affine", "-c", "z.size(0) == 2*y.size(0)+1", "-c",
                       "y.size(0) <= 64", "-q", "--out", str(pt2))
    assert code == 0, err
    _, text, _ = run("replay", str(pt2))
    assert "  z.size(0) == 2 * y.size(0) + 1" in text.splitlines() and "y_0" not in text
    assert export.load(str(pt2)).symshape.relations == ("z.size(0) == 2 * y.size(0) + 1",)
