"""``symshape replay FILE``: re-run a saved solver problem and print the solver's answers.

FILE is a ``symshape.problem`` JSON file, a ``symshape export --json`` document, or a ``.pt2``
saved by symshape (which carries its problem); ``-`` reads JSON from stdin.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import zipfile
from collections.abc import Iterable
from typing import Any, TextIO

from export.program.archive import first_line
from export.program.analysis import analyse
from export.diagnose.replayed import problem_document
from export.cli.args import UsageError
from export.errors import ExportError
from export.program.exported import load
from shapes.ranges import range_text
from solver import SolverError
from solver.service import replay

__all__ = ["run_replay"]

_MESSAGE_CHARS = 300
"""A refused input's error message is cut to this many characters (one line)."""


def _load_problem(path: str) -> Any:
    if path != "-" and not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if path != "-" and zipfile.is_zipfile(path):
        return _problem_text(_program_problem(path), f"{path}: the stored problem")
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    data = _problem_text(text, path)
    if isinstance(data, dict) and data.get("format") != "symshape.problem" and "problem" in data:
        if data["problem"] is None:
            raise UsageError(f"{path}: the export document carries no problem")
        data = data["problem"]
    return data


def _program_problem(path: str) -> str:
    """The problem a symshape .pt2 carries. torch logs its own failures (with tracebacks)
    on stderr while loading: kept out of the one-line error."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            ep = load(path)
    except ExportError as e:
        raise UsageError(f"{path}: cannot load the exported program: {first_line(e, _MESSAGE_CHARS)}") from None
    report = getattr(ep, "symshape", None)
    if report is None or not report.problem:
        raise UsageError(f"{path}: this .pt2 carries no symshape problem (was it saved by symshape?)")
    return str(report.problem)


def _problem_text(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise UsageError(f"{what}: not JSON: {first_line(e, _MESSAGE_CHARS)}") from None


def run_replay(args: argparse.Namespace, out: TextIO) -> int:
    """``symshape replay FILE``: print (or dump as JSON) the answers of a replayed problem."""
    problem = _load_problem(args.file)
    try:  # a problem the solver refuses (damaged, hostile): the user's input, not a symshape bug
        answers = replay(problem)
        analysis = analyse(problem)
        doc = problem_document(problem, analysis)
    except (SolverError, ValueError, TypeError, KeyError, RecursionError, OverflowError) as e:
        raise UsageError(f"{args.file}: {first_line(e, _MESSAGE_CHARS)}") from None
    if args.json:
        print(json.dumps({**doc, "file": args.file}, indent=2), file=out)
        return 0
    # the solver's symbol names (``x_size1``, a classic root ``y_0``) as the report shows them
    shown = {info.symbol.name: analysis.names[info.symbol] for info in analysis.solver.symbols}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(shown, key=len, reverse=True))) + r")\b") \
        if shown else None

    def rename(text: str) -> str:
        return pattern.sub(lambda m: shown[m[1]], text) if pattern else text

    st = answers["stats"]
    print(f"{args.file}: {st['symbols']} symbols, {st['facts']} facts, {st['guards']} guards "
          f"({', '.join(f'{n} {k}' for k, n in st['guards_decided'].items())}), {len(doc['violations'])} violations",
          file=out)
    hidden = {sym.name for sym in analysis.hidden}  # an internal root: the same as the input dim it is
    bounds = {shown.get(k, k): b for k, b in answers["bounds"].items() if k not in hidden}
    w = max((len(k) for k in bounds), default=0)
    _section(out, "Bounds:", True, (f"{k.ljust(w)}  {range_text(lo, hi)}" for k, (lo, hi) in bounds.items()))
    _section(out, "Equality classes:", bool(doc["classes"]), (" == ".join(cls) for cls in doc["classes"]))
    _section(out, "Relations:", bool(doc["relations"]), doc["relations"])
    _section(out, "Congruences:", bool(answers["congruences"]),
             (f"{rename(c['symbol'])} % {c['modulus']} == {c['residue']}" for c in answers["congruences"]))
    _section(out, "Violations (what the model needs beyond the spec):", bool(doc["violations"]),
             (_violation_text(i, v) for i, v in enumerate(doc["violations"], 1)))
    return 0


def _section(out: TextIO, title: str, present: bool, rows: Iterable[str]) -> None:
    """If ``present``: a blank line, ``title``, then each row indented by two spaces."""
    if present:
        print("", file=out)
        print(title, file=out)
        for row in rows:
            print(f"  {row}", file=out)


def _violation_text(i: int, v: dict[str, Any]) -> str:
    """``1. x.size(1) must be divisible by 8`` and, below it, where (as an export's causes)."""
    if not v["origin"]:
        return f"{i}. {v['constraint']}"
    return f"{i}. {v['constraint']}\n     at {v['origin']}" + (f": {v['code']}" if v["code"] else "")
