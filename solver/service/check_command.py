"""The ``check`` command, one implementation for ``python -m solver check`` and ``symshape check``.

``check FILE [--shape NAME=SIZES ...] [--show] [--json]`` reads the shape contract a program
file carries (:func:`shapes.contract_files.read_contract`: a symshape ``.pt2``, an AOTI
package, an ONNX model, a contract's JSON or a program's ``<file>.symshape.json`` sidecar; ``-``
reads one from stdin) and checks the given sizes against it (:mod:`solver.service.check`), or
prints the contract. No torch: this runs where the program is served.

Exit status: 0 admitted (or the contract shown), 1 refused (the refusal printed as
:class:`shapes.errors.RefusedInputError` says it), 2 usage or input error (one line on stderr:
an unknown input, a bad size, an unreadable file or a damaged contract), 3 internal error.

>>> import argparse, io
>>> parser = argparse.ArgumentParser(prog="tool")
>>> _ = CheckCommand.add_parser(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["check", "missing.pt2", "--shape", "x=2,8"])
>>> err = io.StringIO()
>>> CheckCommand.run(args, io.StringIO(), err), err.getvalue()
(2, 'error: missing.pt2: no such file\\n')
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Sequence
from typing import Any, BinaryIO, TextIO

from shapes.contract import Contract, ContractDim, ContractInput, Refusal
from shapes.contract_files import read_contract
from shapes.errors import ShapesError
from shapes.ranges import range_text
from solver.errors import SolverError
from solver.service.check import Sizes, Verdict, parse_shape_arg, verdict_of_items

__all__ = ["CheckCommand", "contract_text", "verdict_text", "EXIT_ADMITTED", "EXIT_REFUSED", "EXIT_USAGE",
           "EXIT_INTERNAL"]

EXIT_ADMITTED = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

_ADMITTED = "the exported program admits these inputs:"
_READ_ERRORS = (OSError, ValueError, EOFError, RuntimeError, NotImplementedError, RecursionError, zlib.error)
"""What reading a damaged file may raise besides a ContractError (an input error, exit 2)."""


class _InputError(Exception):
    """A usage or input error of the command: one line, exit status 2."""


class CheckCommand:
    """The ``check`` subcommand: :meth:`add_parser` adds it to a command line's subparsers,
    :meth:`run` runs it on the parsed arguments."""

    NAME = "check"
    HELP = "check input sizes against a program's shape contract, or print the contract (no torch)"
    DESCRIPTION = ("Read the shape contract FILE carries (a symshape .pt2, an AOTInductor package, an ONNX "
                   "model, a contract JSON or a <file>.symshape.json sidecar; '-' reads stdin) and check "
                   "the sizes given with --shape against it; without --shape, print the contract.")
    EPILOG = "exit status: 0 admitted (or the contract shown), 1 refused, 2 usage or input error, 3 internal error"

    @classmethod
    def add_parser(cls, subparsers: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
        """Add ``check`` to ``subparsers`` (of ``python -m solver`` or ``symshape``)."""
        parser: argparse.ArgumentParser = subparsers.add_parser(cls.NAME, help=cls.HELP, description=cls.DESCRIPTION,
                                                                epilog=cls.EPILOG)
        parser.add_argument("file", metavar="FILE", help="model.pt2, model.onnx, contract.json, "
                            "model.pte (its model.pte.symshape.json), or '-' for stdin")
        parser.add_argument("--shape", "-s", action="append", default=[], metavar="NAME=SIZES",
                            help="the sizes of input NAME: x=2,8 (a tensor), n=3 (an int input), x= (a 0-dim "
                                 "tensor); NAME as the contract names it (d['a']) or d[a]; quote it in a shell")
        parser.add_argument("--show", action="store_true", help="print the contract (also with --shape)")
        parser.add_argument("--json", action="store_true",
                            help="print JSON: {admitted, reasons, message, shapes, contract, file}, or the contract")
        return parser

    @staticmethod
    def run(args: argparse.Namespace, out: TextIO, err: TextIO, *, error_prefix: str = "error: ",
            stdin: BinaryIO | None = None) -> int:
        """Run ``check`` on ``args`` (from :meth:`add_parser`); returns the exit status."""
        try:
            given = [_shape_item(text) for text in args.shape]
            contract = _read(args.file, stdin)
            result = verdict_of_items(contract, given, indexed=False) if given else None
        except (_InputError, ShapesError, SolverError) as e:  # a ContractError, a bad --shape, an unknown input
            return _fail(str(e), EXIT_USAGE, args.json, out, err, error_prefix)
        except Exception as e:  # noqa: BLE001 - a bug: one line, never a traceback
            return _fail(f"{args.file}: internal error: {type(e).__name__}: {e}", EXIT_INTERNAL, args.json,
                         out, err, error_prefix)
        if args.json:
            doc: dict[str, Any] = contract.to_dict() if result is None else {
                "file": args.file, **result.to_dict(), "shapes": {k: _json_sizes(v) for k, v in result.shapes},
                "contract": contract.to_dict()}
            print(json.dumps(doc, indent=2), file=out)
        else:
            if result is None or args.show:
                print(contract_text(contract, args.file), file=out)
            if result is not None:
                print(("\n" if args.show else "") + verdict_text(result), file=out)
        return EXIT_ADMITTED if result is None or result.admitted else EXIT_REFUSED


def _shape_item(text: str) -> tuple[str, tuple[int, ...], str]:
    where = f"--shape {text}"
    try:
        name, sizes = parse_shape_arg(text)
    except SolverError as e:
        raise _InputError(f"{where}: {e}") from None
    return name, sizes, where


def _read(path: str, stdin: BinaryIO | None) -> Contract:
    try:
        if path == "-":
            return read_contract((stdin or sys.stdin.buffer).read(), "<stdin>")
        return read_contract(path)
    except ShapesError:  # a ContractError names the file and what is wrong
        raise
    except _READ_ERRORS as e:
        raise _InputError(f"{path}: cannot read a contract: {type(e).__name__}: {e}") from None


def _fail(message: str, status: int, as_json: bool, out: TextIO, err: TextIO, prefix: str) -> int:
    line = message.splitlines()[0] if message else "error"
    print(f"{prefix}{line}", file=err)
    if as_json:
        print(json.dumps({"error": line, "exit": status}, indent=2), file=out)
    return status


def _json_sizes(value: Sizes) -> list[int] | int:
    return list(value) if isinstance(value, tuple) else value


# -- text ----------------------------------------------------------------------------------------

def verdict_text(result: Verdict) -> str:
    """The refusal exactly as :class:`shapes.errors.RefusedInputError` says it, or what was admitted.

    >>> print(verdict_text(Verdict((("x", (2, 8)), ("n", 3)), ())))
    the exported program admits these inputs:
      x: [2, 8]
      n: 3
    """
    if result.message is not None:
        return result.message
    w = max((len(name) for name, _ in result.shapes), default=0) + 1
    rows = [f"{(name + ':').ljust(w)} {v if isinstance(v, int) else '[' + ', '.join(map(str, v)) + ']'}"
            for name, v in result.shapes]
    return "\n".join([_ADMITTED, *(f"  {r}" for r in rows)])


def contract_text(contract: Contract, file: str) -> str:
    """The contract for a reader: each input's shape in its dims' names (the user's ``Dim``
    where there is one), each dim with its ``Dim`` and range, each condition in its words with
    its origin, and the checks only the program makes."""
    dims = {d.symbol: d for d in contract.dims}
    lines = [f"{file}: the shape contract of a program with {_count(len(contract.inputs), 'input')}, "
             f"{_count(len(contract.dims), 'dynamic dim')}, {_count(len(contract.conditions), 'condition')}"]
    w = max((len(i.name) for i in contract.inputs), default=0) + 1
    _section(lines, "Inputs (in call order):", [f"{(i.name + ':').ljust(w)} {_input_text(i, dims)}" for i in contract.inputs])
    nw = max((len(d.name) for d in contract.dims), default=0)
    dw = max((len(d.dim or "-") for d in contract.dims), default=0)
    _section(lines, "Dims (name, Dim, range):",
             [f"{d.name.ljust(nw)}  {(d.dim or '-').ljust(dw)}  {range_text(d.lo, d.hi)}" for d in contract.dims])
    _section(lines, "Conditions (the program relies on each):",
             [Refusal(c, ()).text() for c in contract.conditions])
    _section(lines, "Runtime checks (the program itself makes these, on data-dependent values):",
             list(contract.runtime))
    return "\n".join(lines)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _section(lines: list[str], title: str, rows: Sequence[str]) -> None:
    if rows:
        lines += ["", title, *(f"  {r}" for r in rows)]


def _input_text(entry: ContractInput, dims: dict[str, ContractDim]) -> str:
    def size(s: int | str) -> str:
        d = dims.get(s) if isinstance(s, str) else None
        return str(s) if d is None else (d.dim or d.name)

    if entry.kind == "int":
        return "int" + (f" = {entry.shape[0]}" if entry.shape and isinstance(entry.shape[0], int) else "")
    if entry.kind == "other":
        return "(not a tensor or an int: not checked)"
    return f"[{', '.join(size(s) for s in entry.shape)}]" + (f" {entry.dtype}" if entry.dtype else "")
