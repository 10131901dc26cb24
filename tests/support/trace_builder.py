"""A trace's questions and answers without ``torch.export``: a real :class:`Trace` in milliseconds.

:class:`TraceBuilder` drives the real :class:`export.tracing.bridge.SolverBridge` through the
hooks torch calls while tracing, in torch's order: one torch size symbol per dynamic input dim
(``on_symbol``, with the source name torch gives it, ``L['x'].size()[0]``) and torch's ``>= 2``
range on it (``on_range_update``), the phantom symbol of a derived dim's root (``_seq``), a 0/1
or static example size specialized (``on_specialize``); then the questions, each asked with
``on_question`` from the frame of a chosen **site**. The site is a synthetic Python frame: a
tiny function compiled with ``compile(src, filename, "exec")`` whose file name, function name
and line are the site's, and whose source text is registered in ``linecache`` under that file
name, so the real site reader (:func:`export.tracing.sites.asking_site`, ``resolve``,
:func:`export.tracing.provenance.user_frame`) sees exactly that (file, line, function, code).
A torch site's file lives (by name only: no file is written) under the installed torch's own
folder, ``<torch>/_symshape_synthetic/torch/_refs/__init__.py``: torch's code to every reader,
and a suffix the site tables match; a user site's under a temporary folder (``model.py``).
Nothing is mocked: torch's own sympy symbols and functions, the real solver, the real tables.

>>> import torch
>>> from torch.export import Dim
>>> b = TraceBuilder(lambda x: x, (torch.randn(4, 3),), {"x": {0: Dim("b")}})
>>> b.ask("x.size(0) == 1", site=user_site("if x.shape[0] == 1:"))
False
>>> trace = b.trace()
>>> [(s.line, s.function, s.code) for s in trace.sites[trace.convert(b.question("x.size(0) == 1"))]]
[(10, 'forward', 'if x.shape[0] == 1:')]
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import CodeType, FunctionType
from typing import Any

import sympy
import torch
from torch.utils._sympy.symbol import SymT, make_symbol

from export import _torch_compat as tc
from export.spec.dynamic_shapes import from_dynamic_shapes, resolve_dynamic_shapes, validate
from export.spec.inputs import Inputs, Leaf
from export.tracing.bridge import SolverBridge
from export.tracing.trace import Trace
from shapes.spec import InputDim, Spec

__all__ = ["Frame", "TraceBuilder", "torch_site", "user_site", "recorded_op_site", "torch_function_site",
           "TORCH_ROOT", "USER_ROOT"]

TORCH_ROOT = os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), "_symshape_synthetic")
"""Where torch sites' files are named: inside the installed torch's folder (so no reader takes
them for the user's code), under a folder torch does not have (so no real file is shadowed)."""
USER_ROOT = os.path.join(tempfile.gettempdir(), "symshape_synthetic_user")
"""Where user sites' files are named: outside torch, the standard library and symshape."""


@dataclass(frozen=True)
class Frame:
    """One synthetic frame: ``path`` under its root (``torch/_refs/__init__.py``, ``model.py``),
    ``function``, ``line`` and ``code`` (the stripped source text of the line), ``torch``: under
    :data:`TORCH_ROOT` (else :data:`USER_ROOT`). ``locals``/``globals``: what the frame holds when
    the question is asked (a conditional site reads them); ``source``: the whole file's text
    (``code`` is then its line ``line``), for a rule that parses the file (layout-only branches)."""

    path: str
    function: str
    code: str
    line: int
    torch: bool
    locals: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    globals: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    source: str | None = None

    @property
    def filename(self) -> str:
        """The file name the frame's code carries (its text registered in ``linecache``)."""
        return _FILES.filename(self)


def torch_site(path: str, function: str, code: str, line: int = 100, *,
               locals: Mapping[str, Any] | None = None, globals: Mapping[str, Any] | None = None) -> Frame:
    """A frame of torch's code: ``torch_site("torch/_refs/__init__.py", "_reshape_view_helper_core_alg",
    "if length == a_.shape[idx]:")`` (``path`` as the site tables key it)."""
    return Frame(path, function, code, line, True, dict(locals or {}), dict(globals or {}))


def user_site(code: str, line: int = 10, function: str = "forward", path: str = "model.py", *,
              locals: Mapping[str, Any] | None = None, globals: Mapping[str, Any] | None = None,
              source: str | None = None) -> Frame:
    """A frame of the user's code (``model.py:10`` in ``forward`` by default). With ``source``
    (the whole file), ``code`` is read from it at ``line``."""
    if source is not None:
        code = source.splitlines()[line - 1].strip()
    return Frame(path, function, code, line, False, dict(locals or {}), dict(globals or {}), source)


class _Op:
    """What ``torch/_ops.py``'s ``__call__`` holds as ``self``: an op whose ``str`` is its name."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __str__(self) -> str:
        return self._name


def recorded_op_site(op: str) -> tuple[Frame, Frame]:
    """The frames of a question asked inside the fake kernel of ``op`` (``aten.reshape.default``)
    that ``proxy_call`` has recorded as a node: ``proxy_call``'s ``out = func(*args, **kwargs)``
    calling ``torch/_ops.py``'s ``__call__`` (detail ``recorded op <op>``)."""
    return (torch_site("torch/fx/experimental/proxy_tensor.py", "proxy_call", "out = func(*args, **kwargs)", 900),
            torch_site("torch/_ops.py", "__call__", "return self._op(*args, **kwargs)", 875,
                       locals={"self": _Op(op)}))


def torch_function_site(func: Any) -> Frame:
    """The frame of a question a torch function's C++ code asks as non-strict export's
    torch-function mode calls it (``func``: the real function, e.g. ``torch.Tensor.contiguous``)."""
    return torch_site("torch/_export/non_strict_utils.py", "__torch_function__", "return func(*args, **kwargs)", 1000,
                      locals={"func": func})


_CHECK_FRAME = torch_site("torch/__init__.py", "_check", "_check_with(AssertionError, cond, message)", 1700)
"""torch's ``torch._check``: symbolic machinery to the site reader, which notes the check path."""

DEFAULT_USER = user_site("return self.layer(x)", line=1)
"""The user frame above a torch site when the test names none (where a reason's origin points)."""


class _Files:
    """The synthetic files: each frame's file name, and the text registered for it in
    ``linecache``. Two frames with one path but different text at a line get two files
    (``v1/torch/...``), so every site reads its own line."""

    def __init__(self) -> None:
        self._lines: dict[str, dict[int, str]] = {}  # file name -> line -> text
        self._whole: dict[str, str] = {}  # file name -> a frame's whole source
        self._names: dict[tuple[bool, str, int, str, str | None], str] = {}
        self._code: dict[tuple[str, int, str, tuple[str, ...]], CodeType] = {}

    def filename(self, frame: Frame) -> str:
        key = (frame.torch, frame.path, frame.line, frame.code, frame.source)
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = self._assign(frame)
        self._register(name)
        return name

    def _assign(self, frame: Frame) -> str:
        root = TORCH_ROOT if frame.torch else USER_ROOT
        for variant in range(1000):
            name = os.path.join(root, *([f"v{variant}"] if variant else []), *frame.path.split("/"))
            if frame.source is not None:
                if name not in self._lines and self._whole.get(name, frame.source) == frame.source:
                    self._whole[name] = frame.source
                    return name
                continue
            lines = self._lines.setdefault(name, {}) if name not in self._whole else None
            if lines is not None and lines.get(frame.line, frame.code) == frame.code:
                lines[frame.line] = frame.code
                return name
        raise ValueError(f"too many synthetic variants of {frame.path}")

    def _register(self, name: str) -> None:
        if name in self._whole:
            text = self._whole[name]
        else:
            lines = self._lines[name]
            text = "".join(f"{lines.get(i, '')}\n" for i in range(1, max(lines) + 1))
        entry = (len(text), None, text.splitlines(keepends=True), name)
        if linecache.cache.get(name) != entry:
            linecache.cache[name] = entry  # mtime None: linecache.checkcache keeps it

    def code(self, frame: Frame, params: tuple[str, ...]) -> CodeType:
        """The code of a function named ``frame.function`` whose call of its first
        parameter is at ``frame.line`` of ``frame.filename``."""
        key = (frame.filename, frame.line, frame.function, params)
        if key not in self._code:
            signature = ", ".join(("__symshape_next__", "__symshape_args__", *params))
            call = "return __symshape_next__(*__symshape_args__)"
            if frame.line == 1:
                src = f"def {frame.function}({signature}): {call}\n"
            else:
                src = "\n" * (frame.line - 2) + f"def {frame.function}({signature}):\n    {call}\n"
            module = compile(src, frame.filename, "exec")
            self._code[key] = next(c for c in module.co_consts if isinstance(c, CodeType))
        return self._code[key]


_FILES = _Files()


def call_from(frames: Sequence[Frame], target: Callable[..., Any], *args: Any) -> Any:
    """``target(*args)`` called from the innermost of ``frames`` (outermost first), each frame
    called from the one before it: the caller's frame of ``target`` is ``frames[-1]``."""
    call: Callable[..., Any] = target
    call_args: tuple[Any, ...] = args
    for frame in reversed(frames):
        names = tuple(frame.locals)
        fn = FunctionType(_FILES.code(frame, names), {"__name__": "synthetic", **frame.globals}, frame.function)
        call, call_args = functools.partial(fn, call, call_args, **frame.locals), ()  # (partial: no frame)
    return call(*call_args)


def _callable(f: Any) -> Callable[..., Any]:
    """``f`` itself, or a function of that signature (``"x, y"``, ``["x", "y"]``, an
    :class:`inspect.Signature`)."""
    if callable(f):
        return f  # type: ignore[no-any-return]
    if isinstance(f, str):
        f = [p.strip() for p in f.split(",") if p.strip()]
    sig = f if isinstance(f, inspect.Signature) else inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in f])

    def model(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a TraceBuilder's signature is never called")

    model.__signature__ = sig  # type: ignore[attr-defined]
    return model


class _Sizes:
    """A tensor input in a question's text: ``x.size(0)``, ``x.shape[0]``, ``x.numel()``."""

    def __init__(self, sizes: Sequence[sympy.Expr]) -> None:
        self.shape = tuple(sizes)

    def size(self, i: int | None = None) -> Any:
        return self.shape if i is None else self.shape[i]

    def numel(self) -> sympy.Expr:
        return sympy.Mul(*self.shape)

    def dim(self) -> int:
        return len(self.shape)


_COMPARE: dict[type, Callable[[Any, Any], sympy.Basic]] = {
    ast.Eq: sympy.Eq, ast.NotEq: sympy.Ne, ast.Lt: sympy.Lt, ast.LtE: sympy.Le, ast.Gt: sympy.Gt, ast.GtE: sympy.Ge}


class TraceBuilder:
    """A trace built by hand (see the module docstring): ``f`` (a callable, or a signature:
    ``"x, y"``), its example ``args``/``kwargs`` and ``dynamic_shapes`` (any form
    :func:`export.export` takes, or a :class:`shapes.spec.Spec`) give the spec and inputs as
    the exporter builds them; ``floors``: torch's ``>= 2`` range on every dynamic dim, as
    torch sets it (False: none; add them with :meth:`floor`); ``symbols=False``: no symbol is
    announced (a replay of a recorded trace drives ``bridge``'s hooks itself). Then :meth:`ask` the
    questions and take the :meth:`trace`.

    Torch's symbols are made as torch makes them (``make_symbol(SymT.SIZE, i)``: ``s0``,
    ``s1``, ..., positive integers); :meth:`sym` reads one, and a question may be torch's
    sympy expression over them or text over the inputs (``x.size(1) // 4 == 1``,
    ``x.shape[0] * y.shape[0] > 4``, ``n >= 3`` for an int input, ``_seq == 2`` for a root
    dim that has no input dim of its own, ``u0 >= 0`` for :meth:`unbacked` symbols)."""

    def __init__(self, f: Any, args: tuple[Any, ...], dynamic_shapes: Any = None,
                 kwargs: dict[str, Any] | None = None, *, floors: bool = True, layout_branches: bool = True,
                 symbols: bool = True) -> None:
        fn = _callable(f)
        args, kwargs, self.inputs = Inputs.example(fn, args, kwargs)
        if isinstance(dynamic_shapes, Spec):
            self.spec = dynamic_shapes
        elif dynamic_shapes is None:
            self.spec = Spec("none", (), ())
        else:
            self.spec = from_dynamic_shapes(self.inputs, resolve_dynamic_shapes(fn, args, kwargs, dynamic_shapes))
        validate(self.spec, self.inputs)
        self.bridge = SolverBridge(self.spec, self.inputs, layout_branches=layout_branches)
        self._next = 0
        self._dims: dict[InputDim, sympy.Symbol] = {}  # dynamic input dim -> torch's symbol
        self._roots: dict[str, sympy.Symbol] = {}  # phantom root (a derived dim's) -> torch's symbol
        self._values: dict[sympy.Symbol, int] = {}  # torch's backed symbols -> example value
        self._unbacked: dict[str, sympy.Symbol] = {}
        if symbols:
            self._declare(floors)

    # -- torch's symbols -----------------------------------------------------------------------
    def _symbol(self) -> sympy.Symbol:
        sym = make_symbol(SymT.SIZE, self._next, positive=True, integer=True)
        self._next += 1
        return sym

    @staticmethod
    def source(leaf: Leaf, dim: int | None) -> str:
        """torch's source name of a leaf's size (non-strict): ``L['x'].size()[0]``, ``L['n']``."""
        base = "L" + tc.keystr(leaf.path)
        return base if dim is None else f"{base}.size()[{dim}]"

    def _declare(self, floors: bool) -> None:
        """What torch announces as it makes the fake inputs: per input, in order, each dim
        a symbol (and its range) or a constant; then the phantom roots of derived dims."""
        for leaf in self.inputs.leaves:
            if leaf.is_tensor:
                dims: Iterable[tuple[int | None, int]] = enumerate(int(n) for n in leaf.value.shape)
            elif isinstance(leaf.value, int) and not isinstance(leaf.value, bool):
                dims = [(None, int(leaf.value))]
            else:
                continue
            for i, n in dims:
                d = InputDim(leaf.name, i)
                source = self.source(leaf, i)
                if self.spec.decl(d) is None or n in (0, 1):
                    self.bridge.on_specialize(source, n)  # static, or torch's 0/1 specialization
                    continue
                sym = self._symbol()
                self._dims[d], self._values[sym] = sym, n
                self.bridge.on_symbol(sym, source, n)
                if floors:
                    self.bridge.on_range_update(sym, 2, None)
        values = self.spec.root_values(self.inputs.size)
        plain = {decl.expr for decl in self.spec.decls if isinstance(decl.expr, sympy.Symbol)}
        for root in self.spec.roots:
            if root.symbol in plain or root.name not in values:
                continue
            sym = self._symbol()
            self._roots[root.name], self._values[sym] = sym, int(values[root.name])
            self.bridge.on_symbol(sym, root.name, int(values[root.name]))
            if floors:
                self.bridge.on_range_update(sym, 2, None)

    def sym(self, name: str, dim: int | None = None) -> sympy.Symbol:
        """torch's symbol of the input dim ``name.size(dim)`` (``dim`` None: an int input's
        value, or the phantom symbol of a root dim ``name``)."""
        d = InputDim(name, dim)
        if d in self._dims:
            return self._dims[d]
        if dim is None and name in self._roots:
            return self._roots[name]
        raise KeyError(f"{d} is not a dynamic input dim of this trace (static, or specialized to 0/1)")

    def unbacked(self, name: str = "u0") -> sympy.Symbol:
        """torch's data-dependent symbol ``u<i>`` (a ``.item()``), usable in questions' text."""
        if name not in self._unbacked:
            self._unbacked[name] = make_symbol(SymT.UNBACKED_INT, int(name.lstrip("u") or 0), integer=True)
        return self._unbacked[name]

    # -- torch's hooks ---------------------------------------------------------------------------
    def floor(self, name: str, dim: int | None = None, lo: int = 2, hi: int | None = None) -> TraceBuilder:
        """torch's range ``[lo, hi]`` on the dim's symbol (``lo=2``: its ``>= 2`` assumption)."""
        self.bridge.on_range_update(self.sym(name, dim), lo, hi)
        return self

    def specialize(self, name: str, dim: int | None, value: int) -> TraceBuilder:
        """torch made the input dim a constant (``on_specialize``)."""
        leaf = self.inputs.leaf_named(name)
        if leaf is None:
            raise KeyError(name)
        self.bridge.on_specialize(self.source(leaf, dim), value)
        return self

    def question(self, question: str | sympy.Basic) -> sympy.Basic:
        """The question as torch asks it: a torch sympy boolean over torch's symbols (text is
        read as Python over the inputs; ``a // b`` becomes torch's ``FloorDiv``)."""
        if isinstance(question, sympy.Basic):
            return question
        tree = ast.parse(question.strip(), mode="eval")
        names: dict[str, Any] = {"Max": sympy.Max, "Min": sympy.Min, "__builtins__": {}}
        for leaf in self.inputs.leaves:
            if len(leaf.path) != 1:
                continue
            if leaf.is_tensor:
                names[leaf.name] = _Sizes([self._dims.get(InputDim(leaf.name, i), sympy.Integer(n))
                                           for i, n in enumerate(leaf.value.shape)])
            elif InputDim(leaf.name, None) in self._dims:
                names[leaf.name] = self._dims[InputDim(leaf.name, None)]
            elif isinstance(leaf.value, int):
                names[leaf.name] = sympy.Integer(leaf.value)
        names.update(self._roots)
        names.update(self._unbacked)
        out = self._boolean(tree.body, names)
        if isinstance(out, (bool, sympy.logic.boolalg.BooleanAtom)):
            raise ValueError(f"{question!r} folds to {out} as torch's symbols read it: torch would not ask it")
        return out

    def _boolean(self, node: ast.expr, names: dict[str, Any]) -> Any:
        if isinstance(node, ast.BoolOp):
            parts = [self._boolean(v, names) for v in node.values]
            return sympy.And(*parts) if isinstance(node.op, ast.And) else sympy.Or(*parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return sympy.Not(self._boolean(node.operand, names))
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise ValueError("one comparison per question (use `and`)")
            lhs, rhs = (self._value(x, names) for x in (node.left, node.comparators[0]))
            return _COMPARE[type(node.ops[0])](lhs, rhs)
        raise ValueError(f"not a question: {ast.unparse(node)}")

    def _value(self, node: ast.expr, names: dict[str, Any]) -> sympy.Expr:
        value = eval(compile(ast.Expression(node), "<question>", "eval"), names)  # noqa: S307 - test text
        return _torch_form(sympy.sympify(value))

    def hint(self, expr: sympy.Basic) -> bool | None:
        """The question's value on the example (None: it reads a data-dependent value)."""
        if not expr.free_symbols <= self._values.keys():
            return None
        value = expr.xreplace({s: sympy.Integer(v) for s, v in self._values.items()})
        return bool(value) if isinstance(value, sympy.logic.boolalg.BooleanAtom) else None

    def ask(self, question: str | sympy.Basic, answer: bool | None = None, *, api: str = "guard_bool",
            site: Frame | Sequence[Frame] | None = None, user: Frame | None = None,
            via_check: bool = False) -> tc.Answer:
        """Ask ``question`` as torch does (``on_question(expr, hint, api)``) from ``site``'s frame:
        a torch site is called from ``user`` (default :data:`DEFAULT_USER`), a user site is the
        innermost user frame itself (default ``user_site(<the question>)``); several frames are
        outermost first. ``via_check``: through ``torch._check``. ``answer`` is the example's
        answer (checked against it when the example decides it; the hint of a data-dependent
        question, None: none). The bridge's answer is returned (``NEUTRAL``: no fact, no guard)."""
        expr = self.question(question)
        hint = self.hint(expr)
        if hint is not None and answer is not None and answer != hint:
            raise ValueError(f"{expr} is {hint} on the example, not {answer}: torch asks with the example's answer")
        if hint is None:
            hint = answer
        if site is None:
            frames: list[Frame] = [user or user_site(question if isinstance(question, str) else str(expr))]
        else:
            given = [site] if isinstance(site, Frame) else list(site)
            frames = ([user or DEFAULT_USER] if given[0].torch else ([user] if user else [])) + given
        if via_check:
            frames.append(_CHECK_FRAME)
        return call_from(frames, self.bridge.on_question, expr, hint, tc.Api(api))  # type: ignore[no-any-return]

    def trace(self) -> Trace:
        """The frozen :class:`export.tracing.trace.Trace` (``SolverBridge.trace``)."""
        for frame_files in list(_FILES._names.values()):
            _FILES._register(frame_files)  # (a linecache.clearcache() meanwhile: the sites still read)
        return self.bridge.trace()


def _torch_form(expr: sympy.Expr) -> sympy.Expr:
    """Python's ``//`` on sympy values (``floor(a/b)``) as torch spells it: ``FloorDiv(a, b)``."""
    def floordiv(e: sympy.Basic) -> sympy.Basic:
        num, den = sympy.fraction(sympy.together(e.args[0]))
        return tc.FloorDiv(num, den)

    return expr.replace(lambda e: isinstance(e, sympy.floor), floordiv) if expr.has(sympy.floor) else expr
