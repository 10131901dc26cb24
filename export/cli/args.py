"""Command-line arguments of ``symshape``: the parser, and the flags turned into a spec.

The parser's ``check`` subcommand is :mod:`export.cli.check` (torch-free, shared with
``python -m solver check``).

``--dynamic`` flags become torch ``dynamic_shapes`` (one ``Dim`` per DIMNAME, derived dims for
affine DIMNAMEs), ``--constraint`` flags classic records (:func:`export.spec.render.render_flags` goes back
from a fixed spec to ``--dynamic`` flags).

>>> parse_dynamic("x:0:batch:2:64")
DynamicArg(name='x', dim=0, dim_name='batch', lo=2, hi=64, text='x:0:batch:2:64')
>>> parse_dynamic("y['a:b']:-1:seq").name
"y['a:b']"
>>> parse_example("x:0:4")
ExampleArg(name='x', dim=0, size=4, text='x:0:4')
>>> parse_path("d[0].w['k']")
('d', (('item', 0), ('attr', 'w'), ('item', 'k')))
"""

from __future__ import annotations

import argparse
import ast
import keyword
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from torch.export import Dim

from export import _torch_compat as tc
from export.cli.check import add_check_parser
from export.spec.inputs import Inputs, Leaf
from export.spec.dynamic_shapes import dynamic_shapes_tree, torch_derived
from shapes.affine import Affine, parse_affine
from shapes.classic import ClassicRecord, dynamic_dim
from shapes.spec import InputDim

__all__ = ["PROG", "HINTS", "UsageError", "DynamicArg", "ExampleArg", "Path", "build_parser", "parse_dynamic",
           "parse_example", "parse_path", "root_name", "affine_dim", "dynamic_shapes_of", "constraints_of",
           "example_sizes"]

PROG = "symshape"
HINTS = ("auto", "static", "dynamic")
_HINTS = HINTS
Labels = dict[tuple[str, int], str]
"""(input name, dim) -> what the flags called it (a DIMNAME, or ``x.size(0)``)."""


class UsageError(Exception):
    """Bad command-line arguments or inputs: one line on stderr, exit status 2."""



# -- argument parsing --------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


def version_line() -> str:
    """``symshape 0.1.0 (torch 2.14.1)``: what ``symshape --version`` prints."""
    from importlib.metadata import version

    import export

    return f"{PROG} {export.__version__} (torch {version('torch')})"


def build_parser() -> argparse.ArgumentParser:
    """The ``symshape`` argument parser."""
    parser = _Parser(prog=PROG, description="symshape: explainable torch.export with dynamic shapes.")
    parser.add_argument("--version", action="version", version=version_line())
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
    ex.add_argument("--example", "-e", action="append", default=[], metavar="NAME:DIM:SIZE",
                    help="trace with dim DIM of the example tensor NAME resized to SIZE (its data repeated), "
                         "e.g. x:0:4 for a factory whose example has batch 1; give one flag per tensor dim "
                         "that must keep matching another")
    ex.add_argument("--strict", action="store_true", help="trace with torch.export's strict mode (dynamo)")
    ex.add_argument("--zero-one-examples", choices=("trace_larger", "raise"), default="trace_larger",
                    help="an example of size 0/1 on a dim declared dynamic: trace at a larger example built "
                         "from it and export the dynamic program (trace_larger, the default), or fail as "
                         "torch does (raise)")
    ex.add_argument("--dim-relations", choices=("check", "raise"), default="check",
                    help="a relation between dims that no Dim can say (z == x + y, a product, M >= N): keep it "
                         "as a runtime check of the program (check, the default, as torch does), or fail with "
                         "constraint violations whose fix adds torch._check lines (raise)")
    ex.add_argument("--fix-verification", choices=("replay", "re-export"), default="replay",
                    help="how a suggested fix is verified: by replaying the failing trace where the fix only "
                         "narrows the spec (replay, the default; otherwise a re-export), or always by "
                         "re-exporting (re-export)")
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
    add_check_parser(sub)
    return parser


@dataclass(frozen=True, slots=True)
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
    parts: list[str] = []
    cur: list[str] = []
    depth, quote = 0, None
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


def _int_field(value: str, what: str, spec: str, *, allow_inf: bool = False, flag: str = "--dynamic") -> int | None:
    value = value.strip()
    if value == "" or (allow_inf and value.lower() in ("inf", "none")):
        return None
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"{flag} {spec}: {what} must be an integer, got {value!r}") from None


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


@dataclass(frozen=True, slots=True)
class ExampleArg:
    """One ``--example NAME:DIM:SIZE``."""

    name: str
    dim: int
    size: int
    text: str


def parse_example(spec: str) -> ExampleArg:
    """Parse ``NAME:DIM:SIZE`` (syntax only; names are checked against the inputs)."""
    parts = _split_top(spec)
    if len(parts) != 3:
        raise UsageError(f"--example {spec}: expected NAME:DIM:SIZE, e.g. x:0:4")
    name = parts[0].strip()
    parse_path(name, f"--example {spec}")
    dim = _int_field(parts[1], "DIM (the dim index)", spec, flag="--example")
    size = _int_field(parts[2], "SIZE", spec, flag="--example")
    if dim is None or size is None:
        raise UsageError(f"--example {spec}: expected NAME:DIM:SIZE, e.g. x:0:4")
    if size < 0:
        raise UsageError(f"--example {spec}: SIZE must be >= 0, got {size}")
    return ExampleArg(name, dim, size, spec)


def affine_dim(text: str) -> Affine | None:
    """``4*seq+1`` -> ``4 * seq + 1`` (:func:`shapes.affine.parse_affine`); None unless an
    increasing affine expression of one name that is not auto/static/dynamic."""
    form = parse_affine(text)
    if form is None or form.a <= 0 or form.root.name in _HINTS:
        return None
    return form


def root_name(dim_name: str) -> str:
    if dim_name in _HINTS or dim_name.isidentifier():
        return dim_name
    affine = affine_dim(dim_name)
    assert affine is not None
    return str(affine.root.name)


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


# -- flags -> spec ------------------------------------------------------------------------------

def _match(leaf_path: tuple[Any, ...], param: str, steps: Path) -> bool:
    head, rest = leaf_path[0], leaf_path[1:]
    if getattr(head, "key", None) != param or len(rest) != len(steps):
        return False
    for entry, (kind, value) in zip(rest, steps):
        what, key = tc.key_entry(entry)
        if what in ("key", "attr"):
            ok = key == value
        elif what == "index":
            ok = kind == "item" and key == value
        else:
            ok = False
        if not ok:
            return False
    return True


def _resolve_leaf(inputs: Inputs, text: str, where: str) -> Leaf:
    param, steps = parse_path(text, where)
    if param not in inputs.bound:
        raise UsageError(f"{where}: {param!r} is not an argument of the model; the arguments are "
                         f"{', '.join(inputs.params) or '(none)'}")
    leaf = next((lf for lf in inputs.leaves if _match(lf.path, param, steps)), None)
    if leaf is None:
        tensors = [lf.name for lf in inputs.tensors if lf.name == param or lf.name.startswith(param)]
        raise UsageError(f"{where}: no input {text!r}; tensors under {param!r}: {', '.join(tensors) or '(none)'}")
    if not leaf.is_tensor:
        raise UsageError(f"{where}: input {leaf.name} is a {type(leaf.value).__name__}, not a tensor")
    return leaf


def _check_dim(leaf: Leaf, dim: int, where: str) -> int:
    n = leaf.value.dim()
    if not -n <= dim < n:
        raise UsageError(f"{where}: {leaf.name} has {n} dims (shape {tuple(leaf.value.shape)}); "
                         f"dim {dim} is out of range" + (f" [0, {n - 1}]" if n else ""))
    return dim % n


def dynamic_shapes_of(inputs: Inputs, specs: Sequence[DynamicArg]) -> tuple[dict[str, Any], Labels]:
    """torch ``dynamic_shapes`` for the ``--dynamic`` flags, and (leaf, dim) -> DIMNAME."""
    bounds: dict[str, tuple[int | None, int | None, str]] = {}
    for s in specs:
        if s.dim_name in _HINTS:
            continue
        root = root_name(s.dim_name)
        seen = bounds.get(root)
        lo, hi = s.lo, s.hi
        if seen is not None:
            for mine, theirs, what in ((lo, seen[0], "MIN"), (hi, seen[1], "MAX")):
                if mine is not None and theirs is not None and mine != theirs:
                    raise UsageError(f"--dynamic {s.text}: {root} has {what} {mine} here but "
                                     f"{theirs} in --dynamic {seen[2]}; give a Dim's range once")
            lo = lo if lo is not None else seen[0]
            hi = hi if hi is not None else seen[1]
        bounds[root] = (lo, hi, s.text)
    dims: dict[str, Any] = {}
    for name, (lo, hi, text) in bounds.items():
        kw = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
        try:
            dims[name] = Dim(name, **kw)
        except Exception as e:  # noqa: BLE001 - torch validates names and ranges
            raise UsageError(f"--dynamic {text}: {e}") from None
    per_leaf: dict[str, dict[int | None, Any]] = {}
    labels: Labels = {}
    for s in specs:
        where = f"--dynamic {s.text}"
        leaf = _resolve_leaf(inputs, s.name, where)
        dim = _check_dim(leaf, s.dim, where)
        if dim in per_leaf.get(leaf.name, {}):
            raise UsageError(f"{where}: {leaf.name} dim {dim} is declared twice")
        if s.dim_name in _HINTS:
            hint = getattr(Dim, s.dim_name.upper())
            kw = {k: v for k, v in (("min", s.lo), ("max", s.hi)) if v is not None}
            value = hint(**kw) if kw else hint
        elif s.dim_name.isidentifier():
            value = dims[s.dim_name]
        else:
            form = affine_dim(s.dim_name)
            assert form is not None  # parse_dynamic checked it
            value = torch_derived(dims[form.root.name], form)
        per_leaf.setdefault(leaf.name, {})[dim] = value
        labels[(leaf.name, dim)] = s.dim_name
    return dynamic_shapes_tree(inputs, per_leaf), labels


def example_sizes(inputs: Inputs, specs: Sequence[ExampleArg]) -> dict[InputDim, int]:
    """The example dims the ``--example`` flags resize, and their new sizes."""
    sizes: dict[InputDim, int] = {}
    for s in specs:
        where = f"--example {s.text}"
        leaf = _resolve_leaf(inputs, s.name, where)
        d = InputDim(leaf.name, _check_dim(leaf, s.dim, where))
        if d in sizes and sizes[d] != s.size:
            raise UsageError(f"{where}: {d} is resized twice ({sizes[d]} and {s.size})")
        sizes[d] = s.size
    return sizes


_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "=="}


def constraints_of(inputs: Inputs, texts: Sequence[str]) -> tuple[list[ClassicRecord], Labels]:
    """Classic constraint records for the ``--constraint`` flags, and (leaf, dim) -> its name."""
    records: list[ClassicRecord] = []
    labels: Labels = {}
    for text in texts:
        where = f"--constraint {text!r}"
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            raise UsageError(f"{where}: not a valid expression") from None

        def value(node: ast.AST) -> Any:
            if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
                return node.value
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                return -value(node.operand)
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
                a, b = value(node.left), value(node.right)
                try:
                    return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
                except Exception as e:  # noqa: BLE001 - shapes rejects non-affine forms
                    raise UsageError(f"{where}: {e}") from None
            ref = _dim_ref(node)
            if ref is not None:
                leaf = _resolve_leaf(inputs, ref[0], where)
                dim = _check_dim(leaf, ref[1], where)
                labels[(leaf.name, dim)] = f"{leaf.name}.size({dim})"
                return dynamic_dim(leaf.name, dim)
            raise UsageError(f"{where}: expected dims like dynamic_dim(x, 0), x.shape[0] or x.size(0), "
                             f"ints, + - *, and comparisons; got {ast.unparse(node)!r}")

        if isinstance(tree, ast.Compare):
            operands = [tree.left, *tree.comparators]
            for op, a, b in zip(tree.ops, operands, operands[1:]):
                if type(op) not in _CMP:
                    raise UsageError(f"{where}: unsupported comparison {type(op).__name__}; use < <= > >= ==")
                left, right = value(a), value(b)
                try:
                    rec = {ast.Lt: lambda: left < right, ast.LtE: lambda: left <= right,
                           ast.Gt: lambda: left > right, ast.GtE: lambda: left >= right,
                           ast.Eq: lambda: left == right}[type(op)]()
                except Exception as e:  # noqa: BLE001 - shapes validates
                    raise UsageError(f"{where}: {e}") from None
                if isinstance(rec, bool) or rec is NotImplemented:
                    raise UsageError(f"{where}: each comparison needs a dim on one side")
                records.append(rec)
        else:
            rec = value(tree)
            if isinstance(rec, int):
                raise UsageError(f"{where}: expected a dim or a comparison")
            records.append(rec)
    return records, labels


def _dim_ref(node: ast.AST) -> tuple[str, int] | None:
    """``dynamic_dim(NAME, I)``, ``NAME.shape[I]``, ``NAME.size(I)``, ``NAME.size()[I]``."""
    def idx(n: ast.AST) -> int | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            v = idx(n.operand)
            return None if v is None else -v
        return None

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dynamic_dim" \
            and len(node.args) == 2 and not node.keywords and idx(node.args[1]) is not None:
        return ast.unparse(node.args[0]), idx(node.args[1])  # type: ignore[return-value]
    if isinstance(node, ast.Subscript) and idx(node.slice) is not None:
        base = node.value
        if isinstance(base, ast.Attribute) and base.attr == "shape":
            return ast.unparse(base.value), idx(node.slice)  # type: ignore[return-value]
        if isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr == "size" \
                and not base.args:
            return ast.unparse(base.func.value), idx(node.slice)  # type: ignore[return-value]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
            and len(node.args) == 1 and idx(node.args[0]) is not None:
        return ast.unparse(node.func.value), idx(node.args[0])  # type: ignore[return-value]
    return None
