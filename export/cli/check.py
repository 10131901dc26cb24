"""``symshape check FILE [--shape NAME=SIZES ...] [--show] [--json]``: sizes against a program's
shape contract, or the contract itself.

The command is :class:`solver.service.CheckCommand`, torch-free, the same as ``python -m solver
check`` (same output, same exit statuses: 0 admitted or shown, 1 refused, 2 usage or input
error, 3 internal error); symshape only wires it in, and says its errors as
``symshape: error: ...``. See ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from solver.service import CheckCommand

__all__ = ["add_check_parser", "run_check"]

ERROR_PREFIX = "symshape: error: "


def add_check_parser(subparsers: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    """Add ``check`` to symshape's subcommands."""
    return CheckCommand.add_parser(subparsers)


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``symshape check``; returns its exit status."""
    return CheckCommand.run(args, out, err, error_prefix=ERROR_PREFIX)
