"""Command line: ``python -m solver replay problem.json`` and ``python -m solver serve``.

``replay`` prints the answers of a saved problem as JSON (exit 0), or one line on stderr and
exit 2 when the file is missing or malformed. ``serve`` answers JSON-lines requests from stdin
on stdout, one response per line (see ``docs/protocol.md``).

>>> build_parser().parse_args(["replay", "p.json"]).command
'replay'
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from solver.codec import load_json
from solver.errors import SolverError
from solver.protocol import replay, serve

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m solver`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m solver",
        description="symshape solver: replay saved JSON problems, or serve JSON-lines requests.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    rep = sub.add_parser("replay", help="replay a JSON problem and print its answers as JSON",
                         description="Replay a symshape.problem JSON file and print the answers.")
    rep.add_argument("problem", help="path of the problem JSON file ('-' for stdin)")
    rep.add_argument("--indent", type=int, default=2, help="JSON indent of the output (default 2)")
    sub.add_parser("serve", help="answer JSON-lines requests on stdin, one response per line",
                   description="Read one JSON request per line on stdin; write one JSON "
                               "response per line on stdout. Errors are responses too.")
    return parser


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _replay(path: str, indent: int) -> int:
    try:
        answers = replay(load_json(_read(path), "problem"))
    except (OSError, UnicodeDecodeError) as exc:
        return _fail(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    except SolverError as exc:
        return _fail(f"{path}: {exc}")
    print(json.dumps(answers, indent=indent))
    return EXIT_OK


def _fail(message: str) -> int:
    first = message.splitlines()[0] if message else "error"
    print(f"error: {first}", file=sys.stderr)
    return EXIT_BAD_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "replay":
        return _replay(args.problem, args.indent)
    serve(sys.stdin, sys.stdout)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
