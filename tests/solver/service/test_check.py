"""Sizes against a program's shape contract, without torch (issue 33, item 3): the ``check``
request of ``serve`` (answers, malformed input, the budgets), the verdict against the contract's
own ``check_shapes`` (the oracle), names and ``--shape`` syntax, and ``python -m solver check``
in-process on contract files. (The same command on real saved programs, in subprocesses and
with torch blocked, is tests/e2e/cli/test_check.py.)"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapes.contract import Contract
from shapes.contract_files import write_sidecar
from shapes.errors import ContractError, RefusedInputError
from solver.__main__ import main as solver_main
from solver.errors import LimitError, ProtocolError
from solver.service import Limits, Session
from solver.service.check import find_input, input_path, parse_shape_arg, parse_sizes, verdict_of
from solver.service.worker import _journal_op

ROOT = Path(__file__).resolve().parents[3]


def contract_doc() -> dict[str, Any]:
    """x: [batch, 4 * _s, 16] with batch <= 64; n an int input in [1, 8]; d['a'] of batch rows;
    d['b'][0] a vector; o an input the contract does not check."""
    return {
        "format": "symshape.contract", "version": 1, "params": ["x", "n", "d", "o"],
        "inputs": [
            {"name": "x", "path": ["x"], "kind": "tensor", "shape": ["x_size0", "x_size1", 16], "dtype": "float32"},
            {"name": "n", "path": ["n"], "kind": "int", "shape": ["n"]},
            {"name": "d['a']", "path": ["d", "a"], "kind": "tensor", "shape": ["d_a_size0"], "dtype": "float32"},
            {"name": "d['b'][0]", "path": ["d", "b", 0], "kind": "tensor", "shape": [3]},
            {"name": "o", "path": ["o"], "kind": "other", "shape": []},
        ],
        "dims": [
            {"symbol": "x_size0", "name": "x.size(0)", "dim": "batch", "min": 1, "max": 64},
            {"symbol": "x_size1", "name": "x.size(1)", "dim": "4 * _s", "min": 4, "max": None},
            {"symbol": "n", "name": "n", "dim": None, "min": 1, "max": 8},
            {"symbol": "d_a_size0", "name": "d['a'].size(0)", "dim": "batch", "min": 1, "max": 64},
        ],
        "conditions": [
            {"kind": "range", "relation": "x_size0 <= 64", "words": "x.size(0) must be <= 64"},
            {"kind": "derived", "relation": "x_size1 % 4 == 0", "words": "x.size(1) must be divisible by 4",
             "note": "x.size(1) = 4 * _s", "origin": "m.py:3", "code": "x.view(b, -1, 4, 16)"},
            {"kind": "range", "relation": "n >= 1", "words": "n must be >= 1"},
            {"kind": "range", "relation": "n <= 8", "words": "n must be <= 8"},
            {"kind": "equal", "relation": "d_a_size0 == x_size0", "words": "d['a'].size(0) must equal x.size(0)"},
            {"kind": "relation", "relation": "n * x_size0 <= 128", "words": "n * x.size(0) must be <= 128",
             "origin": "m.py:7", "code": "y = x.repeat(n, 1, 1)"},
        ],
        "runtime": ["x.sum() > 0 (checked by the program)"],
    }


CONTRACT = Contract.from_dict(contract_doc())
OK = {"x": [2, 8, 16], "n": 3, "d['a']": [2], "d['b'][0]": [3]}


def contract_message(shapes: dict[str, Any]) -> str | None:
    """The oracle: what the contract itself raises for ``shapes`` (None: it admits them)."""
    try:
        CONTRACT.check_shapes({k: tuple(v) if isinstance(v, list) else v for k, v in shapes.items()})
    except RefusedInputError as e:
        return str(e)
    return None


def ask(request: dict[str, Any], session: Session | None = None) -> dict[str, Any]:
    return (session or Session()).handle({"id": 1, "op": "check", **request})


# -- answers ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("changes, reasons", [
    ({}, []),
    ({"x": [65, 8, 16], "d['a']": [65]}, ["x.size(0) must be <= 64 (got x.size(0) = 65)",
                                          "n * x.size(0) must be <= 128 (got n = 3, x.size(0) = 65), "
                                          "needed at m.py:7: y = x.repeat(n, 1, 1)"]),
    ({"x": [2, 6, 16]}, ["x.size(1) must be divisible by 4 (x.size(1) = 4 * _s; got x.size(1) = 6), "
                         "needed at m.py:3: x.view(b, -1, 4, 16)"]),
    ({"x": [2, 8]}, ["x must have 3 dims (got 2: (2, 8))"]),
    ({"x": [2, 8, 15]}, ["x.size(2) must be 16 (static in the program; got x.size(2) = 15)"]),
    ({"n": 9}, ["n must be <= 8 (got n = 9)"]),
    ({"n": [0]}, ["n must be >= 1 (got n = 0)"]),
    ({"d['a']": [3]}, ["d['a'].size(0) must equal x.size(0) (got d['a'].size(0) = 3, x.size(0) = 2)"]),
    ({"d['b'][0]": [4]}, ["d['b'][0].size(0) must be 3 (static in the program; got d['b'][0].size(0) = 4)"]),
    ({"n": None}, ["n is missing"]),
    ({"x": None, "n": None}, ["x is missing", "n is missing"]),
])
def test_check_answers_as_the_contract_says(changes: dict[str, Any], reasons: list[str]) -> None:
    shapes = {k: v for k, v in {**OK, **changes}.items() if v is not None}
    answer = ask({"contract": contract_doc(), "shapes": shapes})
    assert answer == {"id": 1, "admitted": not reasons, "reasons": reasons, "message": contract_message(shapes)}
    if reasons:
        assert answer["message"] == "the exported program refuses these inputs:\n" + "\n".join(f"  {r}" for r in reasons)


def test_the_verdict_is_the_contracts_own_on_a_grid() -> None:
    """The oracle: on every point of a grid, the verdict's text is what Contract.check_shapes
    raises (and admitted is Contract.admits)."""
    for b, s, n, a in itertools.product((0, 1, 2, 63, 64, 65), (0, 4, 6, 8), (0, 1, 8, 9), (1, 2, 64)):
        shapes = {"x": [b, s, 16], "n": n, "d['a']": [a], "d['b'][0]": [3]}
        v = verdict_of(CONTRACT, shapes)
        assert v.message == contract_message(shapes), shapes
        assert v.admitted == CONTRACT.admits({k: tuple(x) if isinstance(x, list) else x for k, x in shapes.items()})


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["x", "n", "d['a']", "d['b'][0]"]),
                       st.one_of(st.integers(-3, 200), st.lists(st.integers(0, 200), max_size=4)), max_size=4))
def test_any_shapes_are_answered_or_refused_with_a_named_field(shapes: dict[str, Any]) -> None:
    answer = ask({"contract": contract_doc(), "shapes": shapes})
    if "error" in answer:
        assert answer["error"]["type"] == "ProtocolError", answer
        assert answer["error"]["message"].startswith("shapes["), answer
    else:
        assert answer["message"] == contract_message(shapes)


def test_names_may_be_written_as_paths() -> None:
    spelled = {"x": [2, 8, 16], "n": [3], "d[a]": [2], 'd["b"][0]': [3]}
    assert ask({"contract": contract_doc(), "shapes": spelled})["admitted"] is True
    assert find_input(CONTRACT, "d.a").name == "d['a']"
    assert find_input(CONTRACT, "d[b][0]").name == "d['b'][0]"
    assert input_path("d['b'][0]") == ("d", "b", 0) and input_path("d['0']") == ("d", "0")
    assert input_path("x + 1") is None and input_path("d[") is None and input_path("x" * 2000) is None
    with pytest.raises(ContractError, match=r"no input named 'd\[1\]'"):
        find_input(CONTRACT, "d[1]")  # an index is no key


def test_the_check_leaves_the_session_alone() -> None:
    session = Session()
    session.handle({"op": "symbol", "name": "k", "lo": 1, "hi": 4})
    before = session.handle({"op": "problem"})
    assert ask({"contract": contract_doc(), "shapes": OK}, session)["admitted"] is True
    assert ask({"contract": contract_doc(), "shapes": {"q": [1]}}, session)["error"]["type"] == "ContractError"
    assert session.handle({"op": "problem"}) == before
    assert _journal_op(json.dumps({"op": "check", "contract": {}, "shapes": {}})) is None  # not replayed


# -- malformed ------------------------------------------------------------------------------------------

def _with(**changes: Any) -> dict[str, Any]:
    return {**contract_doc(), **changes}


@pytest.mark.parametrize("request_, kind, message", [
    ({"shapes": OK}, "ProtocolError", "contract: missing"),
    ({"contract": contract_doc()}, "ProtocolError", "shapes: missing"),
    ({"contract": contract_doc(), "shapes": OK, "extra": 1}, "ProtocolError", 'extra: unknown field for op "check"'),
    ({"contract": "{}", "shapes": OK}, "ProtocolError", "contract: expected an object (a symshape.contract document), got"),
    ({"contract": [], "shapes": OK}, "ProtocolError", "contract: expected an object"),
    ({"contract": {"format": "symshape.problem", "version": 1}, "shapes": OK}, "ContractError",
     "contract: not a shape contract: format is 'symshape.problem'"),
    ({"contract": _with(version=2), "shapes": OK}, "ContractError", "contract version 2 is not supported"),
    ({"contract": _with(dims=[{"name": "x.size(0)"}]), "shapes": OK}, "ContractError",
     "contract.dims[0]: missing field 'symbol'"),
    ({"contract": _with(conditions=[{"kind": "range", "relation": "q >= 1", "words": "w"}]), "shapes": OK},
     "ContractError", "contract.conditions[0].relation: unknown name 'q'"),
    ({"contract": _with(conditions=[{"kind": "range", "relation": "__import__('os')", "words": "w"}]), "shapes": OK},
     "ContractError", "contract.conditions[0].relation: unsupported call '__import__'"),
    ({"contract": _with(conditions=[{"kind": "hunch", "relation": "n >= 1", "words": "w"}]), "shapes": OK},
     "ContractError", "contract.conditions[0].kind: expected one of"),
    ({"contract": contract_doc(), "shapes": [1]}, "ProtocolError", "shapes: expected an object (sizes by input name)"),
    ({"contract": contract_doc(), "shapes": {**OK, "q": [1]}}, "ContractError",
     """shapes["q"]: no input named 'q' in the contract (its inputs: x, n, d['a'], d['b'][0], o)"""),
    ({"contract": contract_doc(), "shapes": {**OK, "x": [2, "8", 16]}}, "ProtocolError",
     'shapes["x"][1]: expected a size (an int >= 0), got "8"'),
    ({"contract": contract_doc(), "shapes": {**OK, "x": [2, True, 16]}}, "ProtocolError",
     'shapes["x"][1]: expected a size (an int >= 0), got true'),
    ({"contract": contract_doc(), "shapes": {**OK, "x": [2, -8, 16]}}, "ProtocolError",
     'shapes["x"][1]: a size is >= 0, got -8'),
    ({"contract": contract_doc(), "shapes": {**OK, "x": 2}}, "ProtocolError",
     'shapes["x"]: input x is a tensor: expected a list of its sizes, got 2'),
    ({"contract": contract_doc(), "shapes": {**OK, "n": [1, 2]}}, "ProtocolError",
     'shapes["n"]: input n is an int: expected one value, got 2'),
    ({"contract": contract_doc(), "shapes": {**OK, "o": [1]}}, "ProtocolError",
     'shapes["o"]: input o is neither a tensor nor an int'),
    ({"contract": contract_doc(), "shapes": {**OK, "d[a]": [2]}}, "ProtocolError",
     """shapes["d[a]"]: input d['a'] is given twice"""),
])
def test_malformed_requests_name_the_field(request_: dict[str, Any], kind: str, message: str) -> None:
    answer = ask(request_)
    assert answer["error"]["type"] == kind, answer
    assert answer["error"]["message"].startswith(message), answer


# -- the budgets ------------------------------------------------------------------------------------------

def test_counts_and_magnitudes_are_refused_before_decoding() -> None:
    small = Session(limits=Limits(max_symbols=3, max_facts=5))
    refused = {
        "contract.inputs: 5 inputs exceed the limit of 3": ask({"contract": contract_doc(), "shapes": OK}, small),
        "contract.conditions: 6 conditions exceed the limit of 5":
            ask({"contract": _with(inputs=[], dims=[]), "shapes": {}}, small),
        'shapes["x"]: 4 sizes exceed the limit of 3': ask({"contract": _with(inputs=contract_doc()["inputs"][:1], dims=contract_doc()["dims"][:2],
                                                                 conditions=[]),
                                                           "shapes": {"x": [1, 2, 3, 4]}}, small),
    }
    for message, answer in refused.items():
        assert answer["error"] == {"type": "LimitError", "message": message + " per problem"}, answer
    huge = [{**contract_doc()["dims"][0], "max": 2**70}, *contract_doc()["dims"][1:]]
    for request_, where in (({"contract": _with(dims=huge), "shapes": OK}, "contract.dims[0].max"),
                            ({"contract": contract_doc(), "shapes": {**OK, "x": [2**65, 8, 16]}}, 'shapes["x"][0]'),
                            ({"contract": contract_doc(), "shapes": {**OK, "n": -2**65}}, 'shapes["n"]')):
        answer = ask(request_)
        assert answer["error"]["type"] == "LimitError" and answer["error"]["message"].startswith(where), answer


def test_a_relation_past_the_parsers_budget_is_a_contract_error() -> None:
    doc = _with(conditions=[{"kind": "range", "relation": "(n ** 64) ** 64 >= 1", "words": "w"}])
    answer = ask({"contract": doc, "shapes": OK})
    assert answer["error"]["type"] == "ContractError"
    assert answer["error"]["message"].startswith("contract.conditions[0].relation: total degree 4096 exceeds")


def test_a_long_line_is_refused_and_a_slow_contract_stops_at_the_time_limit() -> None:
    session = Session(limits=Limits(max_request_chars=1000))
    line = json.dumps({"id": 1, "op": "check", "contract": contract_doc(), "shapes": OK})
    assert session.handle_line(line)["error"]["type"] == "LimitError"
    many = _with(conditions=[{"kind": "relation", "relation": f"x_size0 + {i} * x_size1 >= {i}", "words": f"c{i}"}
                             for i in range(5000)])
    timed = Session(limits=Limits(time_limit=0.5))
    start = time.monotonic()
    answer = ask({"contract": many, "shapes": OK}, timed)
    assert time.monotonic() - start < 3.0  # the limit, and the interruption at once
    assert answer["error"]["type"] == "TimeLimitError", answer
    assert ask({"contract": contract_doc(), "shapes": OK}, timed)["admitted"] is True  # the session goes on


def test_the_serve_command_answers_check_in_its_worker() -> None:
    """``python -m solver serve`` (requests in a forked worker, within the time limit)."""
    lines = [json.dumps({"id": i, "op": "check", "contract": contract_doc(), "shapes": shapes})
             for i, shapes in enumerate([OK, {**OK, "n": 9}, {"q": [1]}])]
    done = subprocess.run([sys.executable, "-m", "solver", "serve"], input="\n".join(lines) + "\n", cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0] == {"id": 0, "admitted": True, "reasons": [], "message": None}
    assert answers[1]["reasons"] == ["n must be <= 8 (got n = 9)"]
    assert answers[2]["error"]["type"] == "ContractError"


# -- the documented session ------------------------------------------------------------------------------

def test_the_documented_check_session_answers_as_shown() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text()
    section = text.split("### `check`: sizes against a program's shape contract", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"^```\n(.*?)^```", section, re.S | re.M)[0].splitlines()
    first = json.loads(block[0].removeprefix("> "))["contract"]
    session = Session()
    pairs = list(zip(block[::2], block[1::2]))
    assert len(pairs) >= 5
    for request_line, response_line in pairs:
        assert request_line.startswith("> ") and response_line.startswith("< ")
        request = request_line[2:].replace('"contract": {...}', '"contract": ' + json.dumps(first))
        assert session.handle_line(request) == json.loads(response_line[2:]), request_line


# -- --shape syntax -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, parsed", [
    ("x=2,8", ("x", (2, 8))), ("x=[2, 8]", ("x", (2, 8))), ("x=(2,8)", ("x", (2, 8))), ("x= 2 , 8 ", ("x", (2, 8))),
    ("n=3", ("n", (3,))), ("x=5,", ("x", (5,))), ("x=", ("x", ())), ("x=()", ("x", ())), ("x=[]", ("x", ())),
    ("d['a']=6", ("d['a']", (6,))), ("d['a=b']=1,2", ("d['a=b']", (1, 2))), ("d[a] = 4", ("d[a]", (4,))),
])
def test_shape_args_parse(text: str, parsed: tuple[str, tuple[int, ...]]) -> None:
    assert parse_shape_arg(text) == parsed


@pytest.mark.parametrize("text, message", [
    ("x", "expected NAME=SIZES"), ("=2,8", "expected NAME=SIZES"), ("x=2,a", "'a' is not a size"),
    ("x=2,,8", "'' is not a size"), ("x=-1", "'-1' is not a size"), ("x=2.5", "'2.5' is not a size"),
    ("x=2 8", "'2 8' is not a size"), ("x=1," + "9" * 5000, "a size of 5000 digits is beyond any tensor size"),
])
def test_bad_shape_args_say_why(text: str, message: str) -> None:
    with pytest.raises(ProtocolError, match=re.escape(message)):
        parse_shape_arg(text)
    assert parse_sizes(" [ 1 ] ") == (1,)


# -- python -m solver check, in-process -----------------------------------------------------------------------

def run_check(*argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin))
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "stdin", fake_stdin)
        code = solver_main(["check", *argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture()
def contract_file(tmp_path: Path) -> Path:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(contract_doc()))
    return path


ARGS = ("-s", "x=2,8,16", "-s", "n=3", "-s", "d[a]=2", "--shape", "d['b'][0]=3")


def test_the_command_admits_refuses_and_shows(contract_file: Path) -> None:
    code, out, err = run_check(str(contract_file), *ARGS)
    assert (code, err) == (0, "")
    assert out == ("the exported program admits these inputs:\n  x:         [2, 8, 16]\n  n:         3\n"
                   "  d['a']:    [2]\n  d['b'][0]: [3]\n")
    code, out, _ = run_check(str(contract_file), *ARGS, "-s", "x=65,6,16")
    assert code == 2 and out == ""  # x given twice
    refused = ("-s", "x=65,6,16", "-s", "n=3", "-s", "d[a]=65", "--shape", "d['b'][0]=3")
    code, out, err = run_check(str(contract_file), *refused)
    assert (code, err) == (1, "")
    assert out == contract_message({"x": [65, 6, 16], "n": 3, "d['a']": [65], "d['b'][0]": [3]}) + "\n"
    code, shown, _ = run_check(str(contract_file))
    assert code == 0
    for line in (f"{contract_file}: the shape contract of a program with 5 inputs, 4 dynamic dims, 6 conditions",
                 "  x:         [batch, 4 * _s, 16] float32", "  n:         int",
                 "  d['a']:    [batch] float32", "  d['b'][0]: [3]", "  o:         (not a tensor or an int: not checked)",
                 "  x.size(0)       batch   [1, 64]", "  x.size(1)       4 * _s  [4, inf]", "  n               -       [1, 8]",
                 "  x.size(1) must be divisible by 4 (x.size(1) = 4 * _s), needed at m.py:3: x.view(b, -1, 4, 16)",
                 "  x.sum() > 0 (checked by the program)"):
        assert line in shown.splitlines(), (line, shown)
    code, both, _ = run_check(str(contract_file), *ARGS, "--show")
    assert code == 0 and both.startswith(shown) and both.endswith("the exported program admits these inputs:\n"
                                                                  "  x:         [2, 8, 16]\n  n:         3\n"
                                                                  "  d['a']:    [2]\n  d['b'][0]: [3]\n")


def test_the_command_prints_json(contract_file: Path) -> None:
    code, out, _ = run_check(str(contract_file), *ARGS[:4], "--json")
    doc = json.loads(out)
    assert code == 1
    assert doc == {"file": str(contract_file), "admitted": False, "reasons": ["d['a'] is missing", "d['b'][0] is missing"],
                   "message": contract_message({"x": [2, 8, 16], "n": 3}), "shapes": {"x": [2, 8, 16], "n": 3},
                   "contract": CONTRACT.to_dict()}
    code, out, _ = run_check(str(contract_file), "--json")
    assert code == 0 and Contract.from_dict(json.loads(out)) == CONTRACT
    code, out, err = run_check(str(contract_file), "-s", "q=1", "--json")
    assert code == 2 and json.loads(out) == {"error": err.strip().removeprefix("error: "), "exit": 2}


def test_the_command_reads_stdin_and_a_sidecar(contract_file: Path, tmp_path: Path) -> None:
    code, out, _ = run_check("-", *ARGS, stdin=contract_file.read_bytes())
    assert code == 0 and out.startswith("the exported program admits")
    program = tmp_path / "model.pte"
    program.write_bytes(b"\x00\x00\x00\x00ET12 not a contract")
    write_sidecar(CONTRACT, program)
    for path in (program, tmp_path / "model.pte.symshape.json"):
        assert run_check(str(path), *ARGS)[0] == 0
        assert run_check(str(path), "-s", "x=2,6,16", *ARGS[2:])[0] == 1


@pytest.mark.parametrize("argv, message", [
    (("-s", "q=1"), "error: --shape q=1: no input named 'q' in the contract (its inputs: x, n, d['a'], d['b'][0], o)"),
    (("-s", "x=2,a"), "error: --shape x=2,a: 'a' is not a size (sizes are ints >= 0, separated by commas: 2,8)"),
    (("-s", "x"), "error: --shape x: expected NAME=SIZES, e.g. x=2,8 (a tensor's sizes) or n=3 (an int input)"),
    (("-s", "n=1,2"), "error: --shape n=1,2: input n is an int: expected one value, got 2"),
    (("-s", "o=1"), "error: --shape o=1: input o is neither a tensor nor an int"),
    (("-s", "x=99999999999999999999999"), "error: --shape x=99999999999999999999999: integer of 77 bits exceeds"),
])
def test_usage_errors_are_one_line_and_exit_2(contract_file: Path, argv: tuple[str, ...], message: str) -> None:
    code, out, err = run_check(str(contract_file), *argv)
    assert code == 2 and out == "" and err.startswith(message) and err.count("\n") == 1, err


def test_unreadable_files_exit_2(tmp_path: Path) -> None:
    cases = {"missing.pt2": None, "bad.json": b'{"format": "symshape.contract", "version": 1, "params": 3}',
             "notjson.json": b"{oops", "deep.json": b'{"format": ' + b"[" * 100_000, "archive.pt2": b"PK\x03\x04 not really a zip",
             "other.pt2": None}
    for name, data in cases.items():
        if data is not None:
            (tmp_path / name).write_bytes(data)
    with zipfile.ZipFile(tmp_path / "other.pt2", "w") as z:
        z.writestr("m/data.bin", b"no contract here")
    for name in cases:
        code, out, err = run_check(str(tmp_path / name), "-s", "x=1")
        assert code == 2 and out == "" and err.startswith(f"error: {tmp_path / name}: ") and err.count("\n") == 1, (name, err)
