"""Command line: ``symshape export MODEL.py:FACTORY ...`` and ``symshape replay FILE``.

``export`` loads ``MODEL.py`` (the user's own code: it is executed), calls ``FACTORY()`` for
``(model, args)`` or ``(model, args, kwargs)``, exports with the dims declared by
``--dynamic`` (torch ``Dim`` API) or ``--constraint`` (classic ``dynamic_dim`` API) and
reports what the solver concluded: symbolic input shapes, ranges, equality classes,
relations, trace assumptions, and for a failed export the root causes with verified fixes.

Exit status: 0 exported, 1 constraint violations (or a data-dependent branch), 2 usage or
input error, 3 the export failed for another reason (a torch error while tracing).
See ``docs/cli.md``.

The argument parsing lives in :mod:`export.cli_args`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import io
import json
import os
import re
import sys
import time
import traceback
import warnings
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TextIO

from export.cli_args import (
    HINTS,
    DynamicArg,
    Path,
    UsageError,
    affine_dim,
    build_parser,
    parse_dynamic,
    parse_path,
    root_name,
)

__all__ = ["main", "build_parser", "parse_dynamic", "parse_path", "UsageError", "DynamicArg"]

_HINTS = HINTS

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2
EXIT_FAILED = 3

_INPUT_DIM = re.compile(r"^(?P<leaf>.+)\.size\((?P<dim>\d+)\)$")


class _Failed(Exception):
    """The export failed for another reason: exit status 3."""


# -- loading the model -------------------------------------------------------------------------

def _split_target(target: str) -> tuple[str, str]:
    path, sep, factory = target.rpartition(":")
    if not sep or not path or not factory:
        raise UsageError(f"{target!r}: expected MODEL.py:FACTORY, e.g. model.py:make")
    if not all(p.isidentifier() for p in factory.split(".")):
        raise UsageError(f"{target!r}: FACTORY {factory!r} is not a Python name")
    return path, factory


@contextlib.contextmanager
def _loaded(path: str, debug: bool) -> Iterator[Any]:
    """Execute ``path`` as a module; sys.modules and sys.path are restored on exit."""
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    full = os.path.abspath(path)
    folder = os.path.dirname(full)
    name = "_symshape_model_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(full))[0])
    spec = importlib.util.spec_from_file_location(name, full)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    saved_path = list(sys.path)
    sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        try:
            spec.loader.exec_module(module)
        except Exception as e:  # noqa: BLE001 - the user's code
            raise UsageError(f"{path}: loading failed: {_exc_line(e, full)}") from (e if debug else None)
        yield module
    finally:
        sys.path[:] = saved_path
        for key in set(sys.modules) - before:
            mod = sys.modules.get(key)
            file = getattr(mod, "__file__", None) or ""
            if key == name or (file and os.path.abspath(file).startswith(folder + os.sep)
                               and "site-packages" not in file):
                sys.modules.pop(key, None)


def _exc_line(e: BaseException, file: str | None = None) -> str:
    where = ""
    if file is not None:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if os.path.abspath(f.filename) == file]
        if frames:
            where = f" (at {os.path.basename(file)}:{frames[-1].lineno})"
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}{where}".rstrip(": ")


def _call_factory(module: Any, path: str, factory: str, debug: bool) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    obj: Any = module
    for part in factory.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                           and getattr(v, "__module__", None) == module.__name__)
            hint = f"; functions defined there: {', '.join(names)}" if names else ""
            raise UsageError(f"{path}: has no {factory!r}{hint}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"{path}:{factory} is a {type(obj).__name__}, not a function")
    try:
        result = obj()
    except Exception as e:  # noqa: BLE001 - the user's code
        raise UsageError(f"{path}:{factory}() raised {_exc_line(e, os.path.abspath(path))}") \
            from (e if debug else None)
    if not isinstance(result, (tuple, list)) or len(result) not in (2, 3):
        raise UsageError(f"{path}:{factory}() must return (model, args) or (model, args, kwargs), "
                         f"got {_describe(result)}")
    model, args, kwargs = (*result, None) if len(result) == 2 else result
    if not callable(model):
        raise UsageError(f"{path}:{factory}(): the model is a {type(model).__name__}, not an nn.Module or function")
    if isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        args = (args,)
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, Mapping):
        raise UsageError(f"{path}:{factory}(): kwargs must be a dict, got {type(kwargs).__name__}")
    return model, args, dict(kwargs)


def _describe(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__


# -- the spec from the command line ------------------------------------------------------------

def _match(leaf_path: tuple[Any, ...], param: str, steps: Path) -> bool:
    from export import _torch_compat as tc

    head, rest = leaf_path[0], leaf_path[1:]
    if getattr(head, "key", None) != param or len(rest) != len(steps):
        return False
    for entry, (kind, value) in zip(rest, steps):
        what, key = tc.key_entry(entry)
        if what == "key":
            ok = key == value
        elif what == "index":
            ok = kind == "item" and key == value
        elif what == "attr":
            ok = key == value
        else:
            ok = False
        if not ok:
            return False
    return True


def _resolve_leaf(inputs: Any, text: str, where: str) -> Any:
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


def _check_dim(leaf: Any, dim: int, where: str) -> int:
    n = leaf.value.dim()
    if not -n <= dim < n:
        raise UsageError(f"{where}: {leaf.name} has {n} dims (shape {tuple(leaf.value.shape)}); "
                         f"dim {dim} is out of range" + (f" [0, {n - 1}]" if n else ""))
    return dim % n


def _dynamic_shapes(inputs: Any, specs: Sequence[DynamicArg]) -> tuple[dict[str, Any], dict[tuple[str, int], str]]:
    """torch ``dynamic_shapes`` for the ``--dynamic`` flags, and (leaf, dim) -> DIMNAME."""
    from torch.export import Dim

    from export.spec import _rebuild  # noqa: PLC2701 - same package

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
    per_leaf: dict[str, dict[int, Any]] = {}
    labels: dict[tuple[str, int], str] = {}
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
            root, a, b = affine_dim(s.dim_name)  # type: ignore[misc]
            value = dims[root] * a if a != 1 else dims[root]
            value = value + b if b else value
        per_leaf.setdefault(leaf.name, {})[dim] = value
        labels[(leaf.name, dim)] = s.dim_name
    return _rebuild(inputs, per_leaf), labels


_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "=="}


def _constraints(inputs: Any, texts: Sequence[str]) -> tuple[list[Any], dict[tuple[str, int], str]]:
    """Classic constraint records for the ``--constraint`` flags."""
    from shapes.spec import dynamic_dim

    records: list[Any] = []
    labels: dict[tuple[str, int], str] = {}
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


# -- what the solver concluded -----------------------------------------------------------------

class _Analysis:
    """A solver problem replayed: display names, classes, relations, bounds, facts."""

    def __init__(self, problem: Mapping[str, Any]) -> None:
        from solver.protocol import solver_from_problem

        self.problem = problem
        self.solver = solver_from_problem(problem)
        self.names: dict[Any, str] = {}
        self.input_dims: list[Any] = []
        for info in self.solver.symbols:
            src = info.source or ""
            if _INPUT_DIM.match(src):
                self.names[info.symbol] = src
                self.input_dims.append(info.symbol)
            else:
                self.names[info.symbol] = info.symbol.name
        self.roots = [i.symbol for i in self.solver.symbols if i.symbol not in self.input_dims]

    def text(self, rel: Any) -> str:
        from shapes.printing import to_python

        try:
            return to_python(rel, self.names)
        except Exception:  # noqa: BLE001
            return str(rel)

    def bounds(self, sym: Any) -> tuple[int | None, int | None]:
        return self.solver.bounds(sym)

    def classes(self) -> list[list[Any]]:
        return [list(c) for c in self.solver.classes() if len(c) > 1]

    def relations(self) -> list[Any]:
        return list(self.solver.relations())

    def value_of(self, sym: Any) -> str:
        """What an input dim is, in the user's terms: a Dim name, a derived expression, or itself."""
        lo, hi = self.bounds(sym)
        if lo is not None and lo == hi:
            return str(lo)
        for cls in self.solver.classes():
            if sym in cls:
                roots = [s for s in cls if s in self.roots]
                if roots:
                    return self.names[roots[0]]
                members = list(cls)
                break
        else:
            members = [sym]
        for rel in self.relations():
            lhs, rhs = getattr(rel, "lhs", None), getattr(rel, "rhs", None)
            if lhs in members and rhs is not None and rhs.free_symbols and rhs.free_symbols <= set(self.roots):
                return self.text(rhs)
        return self.names[members[0]] if members[0] in self.input_dims else self.names[sym]


def _range_text(lo: int | None, hi: int | None) -> str:
    return f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"


def _input_shapes(inputs: Any, analysis: _Analysis | None, labels: Mapping[tuple[str, int], str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    by_dim = {}
    if analysis is not None:
        for sym in analysis.input_dims:
            by_dim[analysis.names[sym]] = sym
    for leaf in inputs.tensors:
        dims = []
        for i, n in enumerate(leaf.value.shape):
            sym = by_dim.get(f"{leaf.name}.size({i})")
            if sym is not None:
                dims.append(analysis.value_of(sym))  # type: ignore[union-attr]
            elif analysis is None and (leaf.name, i) in labels and labels[(leaf.name, i)] != "static":
                dims.append(labels[(leaf.name, i)])
            else:
                dims.append(str(int(n)))
        out[leaf.name] = dims
    return out


# -- the constraint graph -----------------------------------------------------------------------

def constraint_graph(analysis: _Analysis) -> Any:
    """A networkx MultiGraph: input dims (with ranges) joined by equalities and relations."""
    import networkx as nx
    import sympy

    g = nx.MultiGraph()
    dims = analysis.input_dims
    for sym in dims:
        name = analysis.names[sym]
        lo, hi = analysis.bounds(sym)
        g.add_node(name, range=_range_text(lo, hi), notes=[])
    rep: dict[Any, Any] = {}
    for cls in analysis.classes():
        members = [s for s in cls if s in dims]
        for s in cls:
            if members:
                rep[s] = members[0]
        for other in members[1:]:
            rel = sympy.Eq(members[0], other)
            origins = _origins(analysis, rel)
            label = analysis.text(rel) + ("".join(f"\n{o}" for o in origins) or "\n(declared)")
            g.add_edge(analysis.names[members[0]], analysis.names[other], kind="equal", label=label,
                       origins=origins)
        roots = [s for s in cls if s in analysis.roots]
        if members and roots:
            g.nodes[analysis.names[members[0]]]["notes"].append(f"= {analysis.names[roots[0]]}")
    seen: set[str] = set()

    def add(rel: Any, kind: str, origins: list[str]) -> None:
        syms = {rep.get(s, s) for s in rel.free_symbols}
        ins = sorted((s for s in syms if s in dims), key=lambda s: analysis.names[s])
        text = analysis.text(rel.subs({s: r for s, r in rep.items() if s != r and r in dims}))
        if text in seen or not ins:
            return
        seen.add(text)
        label = text + "".join(f"\n{o}" for o in origins)
        if len(ins) == 1:
            g.nodes[analysis.names[ins[0]]]["notes"].append(label)
            return
        for a, b in zip(ins, ins[1:]):
            g.add_edge(analysis.names[a], analysis.names[b], kind=kind, label=label, origins=origins)

    for rel in analysis.relations():
        add(rel, "relation", _origins(analysis, rel))
    for f in analysis.solver.facts:
        if f.reason.kind == "spec":
            continue
        if isinstance(f.rel, sympy.Eq) and all(s in rep for s in f.rel.free_symbols) \
                and len({rep[s] for s in f.rel.free_symbols}) == 1 and len(f.rel.free_symbols) == 2:
            continue  # an equality the class edges show
        # a trace assumption's origin is the export call (here: this command), not the model
        add(f.rel, f.reason.kind, [_where(f.reason)] if f.reason.origin and f.reason.kind == "guard" else [])
    return g


def _where(reason: Any) -> str:
    return f"{reason.origin}" + (f" ({reason.op.strip()})" if reason.op and reason.kind == "guard" else "")


def _origins(analysis: _Analysis, rel: Any) -> list[str]:
    try:
        facts = analysis.solver.explain(rel)
    except Exception:  # noqa: BLE001 - explanations are a bonus
        return []
    out = []
    for f in facts:
        if f.reason.origin and f.reason.kind == "guard":
            w = _where(f.reason)
            if w not in out:
                out.append(w)
    return out


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(g: Any, name: str = "constraints") -> str:
    """DOT text for a constraint graph (no pydot/graphviz needed)."""
    lines = [f"graph {_dot_quote(name)} {{", "  node [shape=box, fontname=\"monospace\"];",
             "  edge [fontname=\"monospace\", fontsize=10];"]
    for node, data in g.nodes(data=True):
        label = "\n".join([node, data.get("range", ""), *data.get("notes", [])])
        lines.append(f"  {_dot_quote(node)} [label={_dot_quote(label)}];")
    for a, b, data in g.edges(data=True):
        style = {"equal": "bold", "relation": "solid"}.get(data.get("kind"), "dashed")
        lines.append(f"  {_dot_quote(a)} -- {_dot_quote(b)} [label={_dot_quote(data.get('label', ''))}, "
                     f"style={style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- export ------------------------------------------------------------------------------------

class _Progress:
    def __init__(self, enabled: bool, stream: TextIO) -> None:
        self.enabled = enabled
        self.stream = stream
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def say(self, text: str) -> None:
        if self.enabled:
            print(f"symshape: {text} [{self.elapsed():.1f}s]", file=self.stream, flush=True)


def _write_text(path: str, text: str, what: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise UsageError(f"{path}: cannot write the {what}: {e.strerror or e}") from None


def _cmd_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    dyn = [parse_dynamic(s) for s in args.dynamic]
    if dyn and args.constraint:
        raise UsageError("use either --dynamic (Dim API) or --constraint (classic API), not both")
    path, factory = _split_target(args.target)
    progress = _Progress(not (args.quiet or args.json), err)
    progress.say(f"loading {path}:{factory}")
    import export
    from export.errors import ConstraintViolationError, DataDependentError, ExportError, InputError
    from export.inputs import Inputs

    doc: dict[str, Any] = {"status": None, "target": args.target}
    # with --json, stdout is the document: the model's own prints go to stderr
    quiet_stdout = contextlib.redirect_stdout(err) if args.json else contextlib.nullcontext()
    with quiet_stdout, _loaded(path, args.debug) as module:
        model, ex_args, ex_kwargs = _call_factory(module, path, factory, args.debug)
        try:
            inputs = Inputs.bind(model, ex_args, ex_kwargs)
        except InputError as e:
            raise UsageError(str(e)) from None
        if dyn:
            dynamic_shapes, labels = _dynamic_shapes(inputs, dyn)
            spec_kw: dict[str, Any] = {"dynamic_shapes": dynamic_shapes}
        elif args.constraint:
            records, labels = _constraints(inputs, args.constraint)
            spec_kw = {"constraints": records}
        else:
            spec_kw, labels = {}, {}
        what = getattr(model, "__name__", None) or type(model).__name__
        progress.say(f"exporting {what} (tracing{', strict' if args.strict else ''}, "
                     f"{len(labels)} dynamic dim{'s' if len(labels) != 1 else ''})")
        ep = error = None
        captured = io.StringIO()
        try:
            # torch prints the partial graph of a failed trace on stderr: kept for --debug only
            with contextlib.redirect_stderr(captured):
                ep = export.export(model, ex_args, ex_kwargs, strict=args.strict, **spec_kw)
        except (ConstraintViolationError, DataDependentError) as e:
            error = e
        except InputError as e:
            raise UsageError(str(e)) from (e if args.debug else None)
        except ExportError as e:
            if type(e).__name__ == "UnsupportedTorchVersionError":
                raise UsageError(str(e)) from None
            raise _Failed(f"{type(e).__name__}: {e}") from e
        except Exception as e:  # noqa: BLE001 - torch or the model failed while tracing
            raise _Failed(f"torch.export failed: {_exc_line(e)} (rerun with --debug for details)") from e
        finally:
            text = captured.getvalue()
            if text and (args.debug or "def forward(" not in text):
                err.write(text)
        elapsed = progress.elapsed()
        progress.say("exported" if ep is not None else
                     f"export failed: {'constraint violations' if isinstance(error, ConstraintViolationError) else 'data-dependent branch'}")
        problem_text = ep.symshape.problem if ep is not None else getattr(error, "problem", None)
        problem = json.loads(problem_text) if problem_text else None
        analysis = _Analysis(problem) if problem is not None else None
        doc["inputs"] = _input_shapes(inputs, analysis if ep is not None else None, labels)
        doc["elapsed_seconds"] = round(elapsed, 3)
    if ep is not None:
        report = ep.symshape
        doc.update(status="exported", ranges={k: list(v) for k, v in report.ranges.items()},
                   classes=_classes(analysis, report), relations=_relations(analysis, report),
                   assumptions=list(report.assumptions), violations=[], fixes=None, stats=dict(report.stats),
                   equality_constraints=[[str(a), str(b)] for a, b in ep.equality_constraints])
    else:
        doc.update(status="violations" if isinstance(error, ConstraintViolationError) else "data_dependent")
        doc.update(_failure(error, analysis))
    doc["problem"] = problem
    doc["out"] = None
    if ep is not None and args.out:
        try:
            export.save(ep, args.out)
        except OSError as e:
            raise UsageError(f"{args.out}: cannot write the program: {e.strerror or e}") from None
        doc["out"] = args.out
    if args.problem and problem is not None:
        _write_text(args.problem, json.dumps(problem, indent=2) + "\n", "problem")
    if args.graph:
        if analysis is None:
            raise _Failed("no solver problem to draw (the export recorded none)")
        _write_text(args.graph, to_dot(constraint_graph(analysis)), "graph")
        doc["graph"] = args.graph
    if args.json:
        print(json.dumps(doc, indent=2, default=str), file=out)
    else:
        _print_report(doc, error, out)
    return EXIT_OK if ep is not None else EXIT_VIOLATION


def _classes(analysis: _Analysis | None, report: Any) -> list[list[str]]:
    if analysis is None:
        return [list(c) for c in report.classes]
    return [[analysis.names[s] for s in cls] for cls in analysis.classes()]


def _relations(analysis: _Analysis | None, report: Any) -> list[str]:
    if analysis is None:
        return list(report.relations)
    return [analysis.text(r) for r in analysis.relations()]


def _failure(error: Any, analysis: _Analysis | None) -> dict[str, Any]:
    from export.diagnose import SuggestedFixes

    violations = [{"dims": list(c.dims), "origin": c.origin, "code": c.code, "constraint": c.constraint,
                   "kind": c.kind} for c in getattr(error, "causes", ())]
    if not violations:
        violations = [{"dims": [], "origin": None, "code": None, "constraint": str(error).splitlines()[0],
                       "kind": "data_dependent"}]
    fixes = getattr(error, "fixes", None)
    fix_doc = None
    if isinstance(fixes, SuggestedFixes):
        fix_doc = {"modern": fixes.modern, "classic": fixes.classic, "checks": list(fixes.checks),
                   "verified": fixes.verified, "flags": fix_flags(fixes.fixed.spec)}
    stats = {}
    if analysis is not None:
        p = analysis.problem
        stats = {"symbols": len(p.get("symbols", [])), "facts": len(p.get("facts", [])),
                 "guards": len(p.get("guards", [])), "violations": len(violations)}
    return {"ranges": {analysis.names[s]: list(analysis.bounds(s)) for s in analysis.input_dims} if analysis else {},
            "classes": [[analysis.names[s] for s in c] for c in analysis.classes()] if analysis else [],
            "relations": [analysis.text(r) for r in analysis.relations()] if analysis else [],
            "assumptions": _assumptions(analysis), "violations": violations, "fixes": fix_doc,
            "stats": stats, "message": str(error)}


def fix_flags(fixed_spec: Any) -> list[str] | None:
    """The ``--dynamic`` flags that declare a (fixed) spec, ranges on each Dim's first use
    (None when a dim is not an affine function of one Dim)."""
    import shlex

    from shapes.printing import to_python

    roots = {r.symbol: r for r in fixed_spec.roots}
    names = {sym: r.name for sym, r in roots.items()}
    done: set[str] = set()
    flags = []
    for decl in fixed_spec.decls:
        head = f"{decl.dim.input_name}:{decl.dim.dim}"
        if decl.expr is None:
            flags.append(f"--dynamic {shlex.quote(head + ':auto')}")
            continue
        syms = list(decl.expr.free_symbols)
        if len(syms) != 1 or syms[0] not in roots:
            return None
        root = roots[syms[0]]
        text = to_python(decl.expr, names).replace(" ", "")
        rng = ""
        if root.name not in done:
            done.add(root.name)
            if root.hi is not None:
                rng = f":{root.lo}:{root.hi}"
            elif root.lo:
                rng = f":{root.lo}"
        flags.append(f"--dynamic {shlex.quote(f'{head}:{text}{rng}')}")
    return flags


def _assumptions(analysis: _Analysis | None) -> list[str]:
    if analysis is None:
        return []
    return [f"{f.reason.text}: {f.reason.op}" for f in analysis.solver.facts if f.reason.kind == "trace_assumption"]


def _print_report(doc: Mapping[str, Any], error: Any, out: TextIO) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    verdict = {"exported": "exported", "violations": "constraint violations",
               "data_dependent": "data-dependent branch"}[doc["status"]]
    p(f"{doc['target']}: {verdict} ({doc['elapsed_seconds']:.2f}s)")
    p("")
    p("Inputs:")
    width = max((len(k) for k in doc["inputs"]), default=0)
    for name, dims in doc["inputs"].items():
        p(f"  {(name + ':').ljust(width + 1)} [{', '.join(dims)}]")
    if doc.get("ranges"):
        p("")
        p("Ranges:")
        w = max(len(k) for k in doc["ranges"])
        for name, (lo, hi) in doc["ranges"].items():
            p(f"  {name.ljust(w)}  {_range_text(lo, hi)}")
    if doc.get("classes"):
        p("")
        p("Equality classes:")
        for cls in doc["classes"]:
            p("  " + " == ".join(cls))
    if doc.get("relations"):
        p("")
        p("Relations:")
        for r in doc["relations"]:
            p(f"  {r}")
    if doc.get("assumptions"):
        p("")
        p("Trace assumptions (what torch took for granted while tracing; an exported program keeps, "
          "in its ranges and runtime checks, the ones a decision relied on):")
        for a in doc["assumptions"]:
            p(f"  {a}")
    if error is not None:
        p("")
        p(str(error))
        fixes = doc.get("fixes")
        if fixes is not None:
            p("")
            p("The fix was verified: re-exporting with it succeeds." if fixes["verified"]
              else "The fix is not verified: re-exporting with it did not succeed.")
            if fixes.get("flags") == [] and not fixes["checks"]:
                p("")
                p("Suggested flags: none (export with static shapes)")
            elif fixes.get("flags"):
                p("")
                p("Suggested flags (replace the --dynamic/--constraint flags with these):")
                p("    " + " ".join(fixes["flags"]))
    if doc.get("out"):
        p("")
        p(f"Saved the exported program to {doc['out']}")
    if doc.get("graph"):
        p(f"Wrote the constraint graph to {doc['graph']}")


# -- replay ------------------------------------------------------------------------------------

def _load_problem(path: str) -> Any:
    if path != "-" and not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if path != "-" and zipfile.is_zipfile(path):
        import export

        try:
            ep = export.load(path)
        except Exception as e:  # noqa: BLE001 - a bad archive
            raise UsageError(f"{path}: cannot load the exported program: {_exc_line(e)}") from None
        report = getattr(ep, "symshape", None)
        if report is None or not report.problem:
            raise UsageError(f"{path}: this .pt2 carries no symshape problem (was it saved by symshape?)")
        return json.loads(report.problem)
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
        data = json.loads(text)
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: not JSON: {e}") from None
    if isinstance(data, dict) and data.get("format") != "symshape.problem" and "problem" in data:
        if data["problem"] is None:
            raise UsageError(f"{path}: the export document carries no problem")
        data = data["problem"]
    return data


def _cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from solver.errors import SolverError
    from solver.protocol import replay

    problem = _load_problem(args.file)
    try:
        answers = replay(problem)
    except SolverError as e:
        raise UsageError(f"{args.file}: {str(e).splitlines()[0]}") from None
    if args.json:
        print(json.dumps(answers, indent=2), file=out)
        return EXIT_OK
    p = lambda *a: print(*a, file=out)  # noqa: E731
    names = {s["name"]: s.get("source") or s["name"] for s in problem.get("symbols", [])}
    shown = {k: (v if _INPUT_DIM.match(v or "") else k) for k, v in names.items()}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(shown, key=len, reverse=True))) + r")\b") \
        if shown else None

    def rename(text: str) -> str:
        return pattern.sub(lambda m: shown[m[1]], text) if pattern else text

    st = answers["stats"]
    p(f"{args.file}: {st['symbols']} symbols, {st['facts']} facts, {st['guards']} guards "
      f"({', '.join(f'{n} {k}' for k, n in st['guards_decided'].items())}), {st['violations']} violations")
    p("")
    p("Bounds:")
    w = max((len(shown.get(k, k)) for k in answers["bounds"]), default=0)
    for k, (lo, hi) in answers["bounds"].items():
        p(f"  {shown.get(k, k).ljust(w)}  {_range_text(lo, hi)}")
    if answers["classes"]:
        p("")
        p("Equality classes:")
        for cls in answers["classes"]:
            if len(cls) > 1:
                p("  " + " == ".join(shown.get(n, n) for n in cls))
    if answers["relations"]:
        p("")
        p("Relations:")
        for r in answers["relations"]:
            p(f"  {rename(r)}")
    if answers["congruences"]:
        p("")
        p("Congruences:")
        for c in answers["congruences"]:
            p(f"  {c['symbol']} % {c['modulus']} == {c['residue']}")
    if answers["violations"]:
        p("")
        p("Violations (guards the spec does not imply):")
        for v in answers["violations"]:
            r = v["reason"]
            where = f" at {r['origin']}" if r.get("origin") else ""
            p(f"  {rename(v['rel'])}{where} [{v['truth_under_spec']} under the spec]")
    return EXIT_OK


# -- main --------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the command line; returns the exit status (also for ``--help`` and usage errors)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    want_json = "--json" in argv
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:  # --help
            return int(e.code or 0)
        if args.command == "export":
            return _cmd_export(args, out, err)
        return _cmd_replay(args, out, err)
    except UsageError as e:
        return _fail(e, EXIT_USAGE, debug, want_json, out, err)
    except _Failed as e:
        return _fail(e, EXIT_FAILED, debug, want_json, out, err)
    except KeyboardInterrupt:
        print("symshape: interrupted", file=err)
        return 130
    except Exception as e:  # noqa: BLE001 - a bug in symshape: still one line unless --debug
        return _fail(_Failed(f"internal error: {_exc_line(e)} (rerun with --debug for the traceback)"),
                     EXIT_FAILED, debug, want_json, out, err, cause=e)


def _fail(e: Exception, code: int, debug: bool, want_json: bool, out: TextIO, err: TextIO,
          cause: BaseException | None = None) -> int:
    if debug:
        traceback.print_exception(cause or e, file=err)
    print(f"symshape: error: {e}", file=err)
    if want_json:
        print(json.dumps({"status": "error", "exit": code, "error": str(e)}, indent=2), file=out)
    return code


if __name__ == "__main__":
    sys.exit(main())
