"""Loading saved programs: no code runs, every damage is a named error (issue 11, items 2 and 5)."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from hostile_archives import (
    Pair,
    canary_expression,
    canary_pickle,
    exists,
    make_args,
    member,
    rewrite,
    with_expr,
)

import export
from export.program.archive import check_expression
from export.errors import ArchiveError, ExportError

from json_edit import DELETE, set_at  # noqa: E402


def load_bytes(data: bytes) -> Any:
    return export.load(io.BytesIO(data))


def test_archive_error_is_an_export_error() -> None:
    assert issubclass(ArchiveError, ExportError) and export.ArchiveError is ArchiveError


def test_round_trip_keeps_everything(program_bytes: bytes) -> None:
    ep = load_bytes(program_bytes)
    assert isinstance(ep, export.SymshapeProgram)
    assert [(a.input_name, a.dim, b.input_name, b.dim) for a, b in ep.equality_constraints] == [("x", 0, "y", 0)]
    assert ep.symshape.problem and json.loads(ep.symshape.problem)["format"] == "symshape.problem"
    model = Pair()
    model.load_state_dict({k.replace("lin.", "lin."): v for k, v in ep.state_dict.items()})
    for b, s in [(2, 4), (5, 10)]:
        args = make_args(b, s)
        torch.testing.assert_close(ep.module()(*args), model(*args))


def test_extra_without_version_still_loads(program_bytes: bytes) -> None:
    doc = json.loads(member(program_bytes, "extra/symshape.json"))
    del doc["version"], doc["format"]
    ep = load_bytes(rewrite(program_bytes, {"extra/symshape.json": json.dumps(doc).encode()}))
    assert ep.equality_constraints


def test_plain_torch_program_loads() -> None:
    ep = torch.export.export(Pair(), make_args(3, 8))
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    loaded = load_bytes(buf.getvalue())
    assert not isinstance(loaded, export.SymshapeProgram)


# -- no code runs -----------------------------------------------------------------------------


def pickled_weight(data: bytes, payload: bytes) -> bytes:
    """``data`` whose first weight is stored pickled (``use_pickle``) as ``payload``."""
    config = json.loads(member(data, "data/weights/model_weights_config.json"))
    first = next(iter(config["config"].values()))
    first["use_pickle"] = True
    return rewrite(data, {"data/weights/model_weights_config.json": json.dumps(config).encode(),
                          f"data/weights/{first['path_name']}": payload})


def custom_constant(data: bytes, prefix: str, payload: bytes) -> bytes:
    config = {"config": {"evil": {"path_name": f"{prefix}0", "is_param": False, "use_pickle": True,
                                  "tensor_meta": None}}}
    return rewrite(data, {"data/constants/model_constants_config.json": json.dumps(config).encode(),
                          f"data/constants/{prefix}0": payload})


HOSTILE: dict[str, Callable[[bytes, str], bytes]] = {
    "sample inputs": lambda d, p: rewrite(d, {"data/sample_inputs/model.pt": canary_pickle(p)}),
    "sample inputs, raw pickle": lambda d, p: rewrite(d, {"data/sample_inputs/model.pt": canary_pickle(p, torch_format=False)}),
    "pickled weight": lambda d, p: pickled_weight(d, canary_pickle(p)),
    "legacy weights file": lambda d, p: rewrite(d, {"data/weights/model.pt": canary_pickle(p)}),
    "opaque constant": lambda d, p: custom_constant(d, "opaque_obj_", canary_pickle(p, torch_format=False)),
    "custom object constant": lambda d, p: custom_constant(d, "custom_obj_", canary_pickle(p)),
    "expression": lambda d, p: with_expr(d, canary_expression(p)),
    "old format": lambda d, p: rewrite(d, {"archive_format": None, "serialized_example_inputs.pt": canary_pickle(p)}),
}


@pytest.mark.parametrize("how", sorted(HOSTILE))
def test_nothing_runs_on_load(how: str, program_bytes: bytes, tmp_path: Any) -> None:
    canary = str(tmp_path / "ran")
    data = HOSTILE[how](program_bytes, canary)
    with pytest.raises(ArchiveError) as info:
        load_bytes(data)
    assert not exists(canary), "code from the archive ran"
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("how", sorted(HOSTILE))
def test_nothing_runs_on_replay(how: str, program_bytes: bytes, tmp_path: Any) -> None:
    from export.cli.main import main

    canary = str(tmp_path / "ran")
    path = tmp_path / "hostile.pt2"
    path.write_bytes(HOSTILE[how](program_bytes, canary))
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(path)], stdout=out, stderr=err) == 2
    assert not exists(canary)
    assert len(err.getvalue().strip().splitlines()) == 1 and "Traceback" not in err.getvalue()


def test_the_expression_canary_is_real(tmp_path: Any) -> None:
    """The canary expression does run when sympified (what torch's loader does)."""
    import sympy

    canary = str(tmp_path / "ran")
    try:
        sympy.sympify(canary_expression(canary))
    except Exception:  # noqa: BLE001 - it may fail afterwards; the file is what counts
        pass
    assert exists(canary)


# -- expressions -------------------------------------------------------------------------------

ACCEPTED = [
    "Symbol('s77', integer=True, positive=True)",
    "Add(Symbol('s0', integer=True, positive=True), Integer(-1))",
    "Mul(Integer(-1), Symbol('s0', integer=True, positive=True))",
    "FloorDiv(Symbol('s0', integer=True, positive=True), Integer(2))",
    "Pow(Symbol('s0', integer=True, positive=True), Integer(2))",
    "Float('0.5', precision=53)",
    "Rational(1, 2)",
    "And(StrictGreaterThan(Symbol('u0', integer=True), Integer(3)), Unequality(Symbol('u0', integer=True), Integer(1)))",
    "Piecewise(ExprCondPair(Symbol('s0', integer=True), true), ExprCondPair(Integer(1), true))",
    "-int_oo",
    "oo",
    "Max(Integer(3), ModularIndexing(Symbol('s1', integer=True), Integer(1), Integer(4)))",
]

REFUSED = [
    ("__import__('os').system('id')", "unexpected '.'"),
    ("__import__(chr(111))", "'__import__'"),
    ("eval(chr(49))", "'eval'"),
    ("sympify(Symbol('x'))", "'sympify'"),
    ("Symbol('x').func", "unexpected '.'"),
    ("getattr(Symbol('x'), chr(95))", "'getattr'"),
    ("Symbol('a b')", "unexpected"),
    ("Symbol(\"x\")", "unexpected"),
    ("floor('__import__(1)')", "unexpected"),
    ("Integer(1) + Integer(2)", "unexpected '+'"),
    ("[Integer(1)]", "unexpected '['"),
    ("lambda: 1", "unexpected ':'"), ("lambda", "'lambda'"),
    ("Add(Integer(1)", "expected ','"),
    ("Integer(123456789012345678901234567890)", "digits"),
    ("Pow(Integer(10), Integer(100000))", "exponent"),
    ("Pow(Pow(Integer(10), Integer(60)), Integer(60))", "nested"),
    ("Add(" * 100 + "Integer(1)" + ")" * 100, "deeper"),
    ("Integer(1)" + " " * 20_000, "longer"),
    ("factorial(Integer(100000000))", "'factorial'"),
    ("Symbol('x', __class__=1)", "'_'"),
    ("Rational('1e99999999')", "unexpected"),
    ("Pow(Integer(2), 99999)", "exponent"),
    ("", "unexpected"),
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_torch_expressions_are_accepted(text: str) -> None:
    check_expression(text)


@pytest.mark.parametrize(("text", "why"), REFUSED, ids=range(len(REFUSED)))
def test_hostile_expressions_are_refused(text: str, why: str) -> None:
    with pytest.raises(ArchiveError, match=None) as info:
        check_expression(text)
    assert why in str(info.value)


def test_every_expression_of_a_real_program_is_accepted(program_bytes: bytes) -> None:
    from hostile_archives import member as get

    doc = json.loads(get(program_bytes, "models/model.json"))
    texts = [t for t in _expr_strs(doc)]
    assert texts
    for t in texts:
        check_expression(t)


def _expr_strs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "expr_str"] + [x for v in node.values() for x in _expr_strs(v)]
    if isinstance(node, list):
        return [x for v in node for x in _expr_strs(v)]
    return []


# -- damaged extra/symshape.json ---------------------------------------------------------------


def doc_edit(fn: Callable[[dict[str, Any]], Any]) -> Callable[[str], str]:
    def edit(text: str) -> str:
        doc = json.loads(text)
        out = fn(doc)
        return json.dumps(doc if out is None else out)

    return edit


def set_path(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def fn(doc: dict[str, Any]) -> None:
        set_at(doc, path, value)

    return fn


RANGE = ["report", "ranges", "x.size(0)"]

DAMAGE: list[tuple[str, Callable[[str], str], str]] = [
    ("not JSON", lambda t: "{not json", "not valid JSON"),
    ("truncated", lambda t: t[: len(t) // 2], "not valid JSON"),
    ("empty", lambda t: "", "not valid JSON"),
    ("NaN", lambda t: t.replace('"ranges": {', '"ranges": {"z": [NaN, null], ', 1), "not valid JSON"),
    ("huge literal", lambda t: t.replace('"ranges": {', '"ranges": {"z": [' + "9" * 5000 + ", null], ", 1), "not valid JSON"),
    ("deep nesting", lambda t: "[" * 100_000 + "]" * 100_000, "not valid JSON"),
    ("top is a list", doc_edit(lambda d: [d]), "expected an object"),
    ("top is null", lambda t: "null", "expected an object"),
    ("wrong version", doc_edit(set_path(["version"], 3)), "version 3 is not supported"),
    ("version as string", doc_edit(set_path(["version"], "1")), "version '1' is not supported"),
    ("no report", doc_edit(set_path(["report"], DELETE)), "report: missing"),
    ("no equalities", doc_edit(set_path(["equality_constraints"], DELETE)), "equality_constraints: missing"),
    ("report is a list", doc_edit(set_path(["report"], [])), "report: expected an object"),
    ("no ranges", doc_edit(set_path(["report", "ranges"], DELETE)), "report.ranges: missing"),
    ("range not a list", doc_edit(set_path(RANGE, 5)), "expected a list"),
    ("range of one", doc_edit(set_path(RANGE, [1])), "expected [lo, hi]"),
    ("bound a string", doc_edit(set_path(RANGE, ["2", None])), "expected an int or null, got string"),
    ("bound a bool", doc_edit(set_path(RANGE, [True, None])), "got bool"),
    ("bound a float", doc_edit(set_path(RANGE, [2.5, None])), "got float"),
    ("bound huge", doc_edit(set_path(RANGE, [10**400, None])), "out of range"),
    ("bound infinite", lambda t: t.replace('"ranges": {', '"ranges": {"z": [1e999, null], ', 1), "is not an int"),
    ("equalities a dict", doc_edit(set_path(["equality_constraints"], {})), "expected a list"),
    ("pair of three", doc_edit(set_path(["equality_constraints"], [[["x", 0], ["y", 0], ["z", 0]]])), "pair"),
    ("dim negative", doc_edit(set_path(["equality_constraints"], [[["x", -1], ["y", 0]]])), "out of range"),
    ("dim a string", doc_edit(set_path(["equality_constraints"], [[["x", "0"], ["y", 0]]])), "expected an int"),
    ("input name an int", doc_edit(set_path(["equality_constraints"], [[[0, 0], ["y", 0]]])), "input name"),
    ("classes of ints", doc_edit(set_path(["report", "classes"], [[1, 2]])), "report.classes[0][0]"),
    ("relations null", doc_edit(set_path(["report", "relations"], None)), "report.relations: expected a list"),
    ("stats a list", doc_edit(set_path(["report", "stats"], [])), "report.stats"),
    ("problem an int", doc_edit(set_path(["report", "problem"], 3)), "report.problem"),
    ("warnings a string", doc_edit(set_path(["report", "warnings"], "careful")), "report.warnings"),
]


@pytest.mark.parametrize(("name", "damage", "message"), DAMAGE, ids=[d[0] for d in DAMAGE])
def test_damaged_symshape_json(name: str, damage: Callable[[str], str], message: str, program_bytes: bytes) -> None:
    text = member(program_bytes, "extra/symshape.json").decode()
    data = rewrite(program_bytes, {"extra/symshape.json": damage(text).encode()})
    with pytest.raises(ArchiveError) as info:
        load_bytes(data)
    assert message in str(info.value), str(info.value)
    assert "extra/symshape.json" in str(info.value)


TORCH_DAMAGE: list[tuple[str, Callable[[bytes], bytes]]] = [
    ("not a zip", lambda d: b"hello"),
    ("truncated", lambda d: d[: len(d) // 2]),
    ("empty", lambda d: b""),
    ("no model", lambda d: rewrite(d, {"models/model.json": None})),
    ("model not JSON", lambda d: rewrite(d, {"models/model.json": b"{"})),
    ("model of wrong shape", lambda d: rewrite(d, {"models/model.json": b'{"graph_module": 3}'})),
    ("no weights config", lambda d: rewrite(d, {"data/weights/model_weights_config.json": None})),
    ("weights config damaged", lambda d: rewrite(d, {"data/weights/model_weights_config.json": b"[]"})),
    ("weight truncated", lambda d: rewrite(d, {"data/weights/weight_0": b"\x00"})),
    ("no sample inputs", lambda d: rewrite(d, {"data/sample_inputs/model.pt": None})),
    ("extra not UTF-8", lambda d: rewrite(d, {"extra/symshape.json": b"\xff\xfe{"})),
]


@pytest.mark.parametrize(("name", "damage"), TORCH_DAMAGE, ids=[d[0] for d in TORCH_DAMAGE])
def test_damaged_archive(name: str, damage: Callable[[bytes], bytes], program_bytes: bytes) -> None:
    with pytest.raises(ArchiveError) as info:
        load_bytes(damage(program_bytes))
    assert "\n" not in str(info.value)


def test_missing_file_is_an_archive_error(tmp_path: Any) -> None:
    with pytest.raises(ArchiveError, match="cannot read"):
        export.load(str(tmp_path / "nope.pt2"))


def torch_function_expressions() -> list[str]:
    """srepr of each of torch's sympy functions, as torch.export.save writes them."""
    import sympy
    from torch.utils._sympy import functions as F

    s = sympy.Symbol("s0", integer=True, positive=True)
    u = sympy.Symbol("u1", integer=True)
    exprs = [F.FloorDiv(s, 3), F.ModularIndexing(s, 2, 4), F.CleanDiv(s * 4, 4), F.PythonMod(u, 3),
             F.IntTrueDiv(u, s), F.Identity(s), F.Where(sympy.Eq(s, 1), u, 2), F.PowByNatural(u, s),
             F.CeilToInt(F.IntTrueDiv(u, 2)), F.FloorToInt(F.IntTrueDiv(u, 3)), F.TruncToInt(F.ToFloat(u)),
             F.LShift(u, 2), F.RShift(u, 1), F.CeilDiv(u, s), F.Max(s, u + 1), F.Min(s, 7), F.Mod(u, 5),
             F.RoundToInt(F.ToFloat(u)), F.OpaqueUnaryFn_sqrt(F.ToFloat(s)), F.FloatPow(F.ToFloat(s), 2.0),
             F.IsNonOverlappingAndDenseIndicator(s, 1, 1, s), s**2 + 2 * s * u - 1, sympy.Ne(s, 1) & (u >= 0)]
    return [sympy.srepr(e) for e in exprs]


def test_torch_function_expressions_are_accepted() -> None:
    for text in torch_function_expressions():
        check_expression(text)
