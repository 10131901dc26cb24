"""Command-line arguments of ``symshape``: the parser, ``--dynamic`` specs and input paths.

>>> parse_dynamic("x:0:batch:2:64")
DynamicArg(name='x', dim=0, dim_name='batch', lo=2, hi=64, text='x:0:batch:2:64')
>>> parse_dynamic("y['a:b']:-1:seq").name
"y['a:b']"
>>> parse_path("d[0].w['k']")
('d', (('item', 0), ('attr', 'w'), ('item', 'k')))
"""

from __future__ import annotations

import argparse
import ast
import keyword
from dataclasses import dataclass
from typing import Any

__all__ = ["PROG", "HINTS", "UsageError", "DynamicArg", "Path", "build_parser", "parse_dynamic", "parse_path",
           "root_name", "affine_dim"]

PROG = "symshape"
HINTS = ("auto", "static", "dynamic")
_HINTS = HINTS


class UsageError(Exception):
    """Bad command-line arguments or inputs: one line on stderr, exit status 2."""



# -- argument parsing --------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    """The ``symshape`` argument parser."""
    parser = _Parser(prog=PROG, description="symshape: explainable torch.export with dynamic shapes.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    ex = sub.add_parser(
        "export", help="export a model and report its symbolic shapes, or why it cannot be exported",
        description="Export FACTORY() from MODEL.py with symshape and report ranges, equalities, "
                    "assumptions, or the violated constraints with verified fixes.",
        epilog="exit status: 0 exported, 1 constraint violations, 2 usage/input error, 3 export failed",
    )
    ex.add_argument("target", metavar="MODEL.py:FACTORY",
                    help="a Python file and a function in it returning (model, args) or (model, args, kwargs)")
    ex.add_argument("--dynamic", "-d", action="append", default=[], metavar="NAME:DIM:DIMNAME[:MIN[:MAX]]",
                    help="declare dim DIM of input NAME (an argument name, or a path like y['a'], d[0], n.a) "
                         "dynamic as the Dim DIMNAME (one DIMNAME = one Dim); DIMNAME may be auto, static "
                         "or dynamic (Dim.AUTO/STATIC/DYNAMIC); MIN/MAX are optional (MAX may be 'inf')")
    ex.add_argument("--constraint", "-c", action="append", default=[], metavar="TEXT",
                    help="a classic constraint, e.g. 'dynamic_dim(x, 0) <= 64', 'x.shape[0] == y.shape[0]' "
                         "or '2 <= x.size(1) <= 512' (the classic API: not together with --dynamic)")
    ex.add_argument("--strict", action="store_true", help="trace with torch.export's strict mode (dynamo)")
    ex.add_argument("--out", "-o", metavar="PATH", help="write the exported program (.pt2) when the export succeeds")
    ex.add_argument("--json", action="store_true", help="print a JSON document instead of the report")
    ex.add_argument("--graph", metavar="PATH", help="write the constraint graph of the input dims as DOT")
    ex.add_argument("--problem", metavar="PATH", help="write the solver problem JSON (for 'symshape replay')")
    ex.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    ex.add_argument("--debug", action="store_true", help="show full tracebacks")
    rp = sub.add_parser(
        "replay", help="re-run a saved solver problem (JSON, --json output, or a .pt2) and print its answers",
        description="Replay a symshape.problem JSON file, a 'symshape export --json' document, or the "
                    "problem a .pt2 saved by symshape carries, and print the solver's answers.",
    )
    rp.add_argument("file", metavar="FILE", help="problem.json, export.json or model.pt2 ('-' for stdin JSON)")
    rp.add_argument("--json", action="store_true", help="print the answers as JSON")
    rp.add_argument("--debug", action="store_true", help="show full tracebacks")
    return parser


@dataclass(frozen=True)
class DynamicArg:
    """One ``--dynamic NAME:DIM:DIMNAME[:MIN[:MAX]]``."""

    name: str
    dim: int
    dim_name: str
    lo: int | None
    hi: int | None
    text: str


def _split_top(text: str) -> list[str]:
    """Split on ':' outside brackets and quotes."""
    cur: list[str]
    parts, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == ":" and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def _int_field(value: str, what: str, spec: str, *, allow_inf: bool = False) -> int | None:
    value = value.strip()
    if value == "" or (allow_inf and value.lower() in ("inf", "none")):
        return None
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"--dynamic {spec}: {what} must be an integer, got {value!r}") from None


def parse_dynamic(spec: str) -> DynamicArg:
    """Parse ``NAME:DIM:DIMNAME[:MIN[:MAX]]`` (syntax only; names are checked against the inputs)."""
    parts = _split_top(spec)
    if len(parts) < 3 or len(parts) > 5:
        raise UsageError(f"--dynamic {spec}: expected NAME:DIM:DIMNAME[:MIN[:MAX]], e.g. x:0:batch or x:0:batch:2:64")
    name, dim_text, dim_name = (p.strip() for p in parts[:3])
    if not name:
        raise UsageError(f"--dynamic {spec}: NAME (the input) is empty")
    parse_path(name, f"--dynamic {spec}")
    dim = _int_field(dim_text, "DIM (the dim index)", spec)
    if dim is None:
        raise UsageError(f"--dynamic {spec}: DIM (the dim index) is empty")
    dim_name = dim_name.replace(" ", "")
    if not (dim_name.isidentifier() and not keyword.iskeyword(dim_name)):
        affine = affine_dim(dim_name)
        if affine is None:
            raise UsageError(f"--dynamic {spec}: DIMNAME {dim_name!r} must be a Python identifier, an "
                             f"affine expression of one like 4*seq or 2*b+1, or one of {', '.join(_HINTS)}")
    lo = _int_field(parts[3], "MIN", spec) if len(parts) > 3 else None
    hi = _int_field(parts[4], "MAX", spec, allow_inf=True) if len(parts) > 4 else None
    if dim_name == "static" and (lo is not None or hi is not None):
        raise UsageError(f"--dynamic {spec}: a static dim takes no MIN/MAX")
    if lo is not None and lo < 0:
        raise UsageError(f"--dynamic {spec}: MIN must be >= 0, got {lo}")
    if lo is not None and hi is not None and lo > hi:
        raise UsageError(f"--dynamic {spec}: MIN {lo} > MAX {hi}")
    return DynamicArg(name, dim, dim_name, lo, hi, spec)


def affine_dim(text: str) -> tuple[str, int, int] | None:
    """``4*seq+1`` -> ``('seq', 4, 1)``; None unless an affine expression of one name."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None

    def walk(n: ast.AST) -> tuple[str | None, int, int] | None:  # (root, a, b): a*root + b
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return None, 0, n.value
        if isinstance(n, ast.Name) and not keyword.iskeyword(n.id) and n.id not in _HINTS:
            return n.id, 1, 0
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            v = walk(n.operand)
            return None if v is None else (v[0], -v[1], -v[2])
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult)):
            x, y = walk(n.left), walk(n.right)
            if x is None or y is None or (x[0] and y[0] and x[0] != y[0]):
                return None
            root = x[0] or y[0]
            if isinstance(n.op, ast.Mult):
                if x[0] and y[0]:
                    return None
                return (root, x[1] * y[2], x[2] * y[2]) if x[0] else (root, y[1] * x[2], x[2] * y[2]) \
                    if y[0] else (None, 0, x[2] * y[2])
            sign = 1 if isinstance(n.op, ast.Add) else -1
            return root, x[1] + sign * y[1], x[2] + sign * y[2]
        return None

    out = walk(node)
    if out is None or out[0] is None or out[1] <= 0:
        return None
    return out[0], out[1], out[2]


def root_name(dim_name: str) -> str:
    if dim_name in _HINTS or dim_name.isidentifier():
        return dim_name
    affine = affine_dim(dim_name)
    assert affine is not None
    return affine[0]


Path = tuple[tuple[str, Any], ...]


def parse_path(text: str, where: str = "input") -> tuple[str, Path]:
    """``y['a'][0].w`` -> ``('y', (('item', 'a'), ('item', 0), ('attr', 'w')))``."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise UsageError(f"{where}: {text!r} is not an input name or path like x, y['a'], d[0], n.a") from None
    steps: list[tuple[str, Any]] = []
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, (int, str)) and not isinstance(node.slice.value, bool):
            steps.append(("item", node.slice.value))
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name):  # d[a]: shell-friendly d['a']
            steps.append(("item", node.slice.id))
            node = node.value
        elif isinstance(node, ast.Attribute):
            steps.append(("attr", node.attr))
            node = node.value
        else:
            raise UsageError(f"{where}: {text!r} is not an input name or path like x, y['a'], d[0], n.a")
    return node.id, tuple(reversed(steps))
