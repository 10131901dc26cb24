"""Command line: ``python -m solver replay problem.json``, ``serve`` and ``check``.

``replay`` prints the answers of a saved problem as JSON (exit 0), or one line on stderr and
exit 2 when the file is missing, malformed or beyond a budget (exit 3, one line, for a bug:
never a traceback). ``serve`` answers JSON-lines requests from stdin on stdout, one response
per line (see ``docs/protocol.md``). Both run within :class:`solver.service.limits.Limits`, set by
the flags below; Z3 queries stop shortly before the time limit (see :func:`time_limit`).
``check FILE --shape x=2,8`` checks sizes against the shape contract a program file carries
(:mod:`solver.service.check_command`, also ``symshape check``).

>>> build_parser().parse_args(["replay", "p.json"]).command
'replay'
>>> _limits(build_parser().parse_args(["serve", "--max-symbols", "50"]), 8.0).max_symbols
50
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence

from shapes.errors import ShapesError
from solver import __version__
from solver.errors import LimitError, SolverError
from solver.service.check_command import CheckCommand
from solver.service.problem import load_json
from solver.service.limits import DEFAULT_LIMITS, Limits, time_limit
from solver.service.protocol import replay
from solver.kernel.smt import Deadline
from solver.service.worker import call_bounded, serve_guarded

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_PIPE_CLOSED = 141
REPLAY_TIME_LIMIT = 60.0


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m solver`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m solver",
        description="symshape solver: replay saved JSON problems, serve JSON-lines requests, or check "
                    "input sizes against a program's shape contract.",
    )
    parser.add_argument("--version", action="version", version=f"symshape solver {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    rep = sub.add_parser("replay", help="replay a JSON problem and print its answers as JSON",
                         description="Replay a symshape.problem JSON file and print the answers.")
    rep.add_argument("problem", help="path of the problem JSON file ('-' for stdin)")
    rep.add_argument("--indent", type=int, default=2, help="JSON indent of the output (default 2)")
    _add_limit_flags(rep, REPLAY_TIME_LIMIT, "the whole replay")
    srv = sub.add_parser("serve", help="answer JSON-lines requests on stdin, one response per line",
                         description="Read one JSON request per line on stdin; write one JSON "
                                     "response per line on stdout. Errors are responses too.")
    _add_limit_flags(srv, DEFAULT_LIMITS.time_limit, "each request")
    CheckCommand.add_parser(sub)
    return parser


def _add_limit_flags(parser: argparse.ArgumentParser, time_default: float | None, what: str) -> None:
    d = DEFAULT_LIMITS
    parser.add_argument("--time-limit", type=_seconds, default=time_default, metavar="SECONDS",
                        help=f"wall-clock limit for {what}; 0 for none (default {time_default:g})")
    for flag, default in (("--max-symbols", d.max_symbols), ("--max-facts", d.max_facts),
                          ("--max-guards", d.max_guards)):
        parser.add_argument(flag, type=_positive, default=default, metavar="N",
                            help=f"per problem (default {default})")


def _seconds(text: str) -> float | None:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value or None


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}")
    return value


def _limits(args: argparse.Namespace, time_limit: float | None) -> Limits:
    return Limits(max_symbols=args.max_symbols, max_facts=args.max_facts,
                  max_guards=args.max_guards, time_limit=time_limit)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _replay(path: str, indent: int, limits: Limits) -> int:
    try:
        text = _read(path)
        if len(text) > limits.max_request_chars:
            raise LimitError(f"problem: {len(text)} characters exceed the limit of "
                             f"{limits.max_request_chars}")
        answers = call_bounded(lambda: _answers(text, limits), limits.time_limit, "the replay")
    except (OSError, UnicodeDecodeError) as exc:
        return _fail(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    except (SolverError, ShapesError) as exc:
        return _fail(f"{path}: {exc}")
    except Exception as exc:  # noqa: BLE001 - a bug: one line, never a traceback
        return _fail(f"{path}: internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
    print(json.dumps(answers, indent=indent))
    return EXIT_OK


def _answers(text: str, limits: Limits) -> dict[str, object]:
    """The replay itself (in a worker process when one can be forked)."""
    deadline = Deadline()
    with time_limit(limits.time_limit, "the replay", deadline):
        return replay(load_json(text, "problem"), limits=limits, deadline=deadline)


def _fail(message: str, status: int = EXIT_BAD_INPUT) -> int:
    first = message.splitlines()[0] if message else "error"
    print(f"error: {first}", file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (141 when the reader closed the output,
    as in ``python -m solver replay f | head -1``: quietly, no traceback)."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "check":
            status = CheckCommand.run(args, sys.stdout, sys.stderr)
        elif args.command == "replay":
            status = _replay(args.problem, args.indent, _limits(args, args.time_limit))
        else:
            serve_guarded(sys.stdin, sys.stdout, limits=_limits(args, args.time_limit))
            status = EXIT_OK
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit too
        return EXIT_PIPE_CLOSED


if __name__ == "__main__":
    sys.exit(main())
