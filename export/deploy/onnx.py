"""ONNX with the program's contract: a model, and an onnxruntime session, that refuse what
``ep.module()`` refuses.

``torch.onnx.export(ep, dynamo=True)`` drops every check of the program (its asserts, torch's
guard function), names the model's dynamic dims after torch's symbols (``s31``, ``4*s9``), and
onnxruntime checks only ranks and static sizes. So an ``if x.shape[0] == 1`` model, exported for
batch >= 2, runs batch 1 through the batch-2 path there: silently wrong.
:func:`onnx_export` exports as torch does, then puts the program's contract in the model
(``metadata_props``: ``symshape.contract``, the contract's JSON, and ``symshape.onnx_inputs``,
which contract input each graph input is; see :mod:`shapes.contract_onnx`) and writes the
dims in the user's names; :func:`onnx_session` is an onnxruntime session behind that contract:
a call it refuses raises :class:`export.errors.RefusedInputError` in the causes' words before
onnxruntime runs (the same text ``ep.module()`` raises).

Dim names: a graph input's dynamic dim is its ``Dim``'s expression as the contract writes it
(``ContractDim.dim``, Python spelling over the ``Dim`` names: ``batch``, ``4 * _seq``,
``2 * b``), or for ``Dim.AUTO``/``Dim.DYNAMIC`` the contract's symbol (``x_size0``). Every
other dim (outputs, intermediate values) is torch's expression with each torch symbol
replaced by the name of the first input dim that has it alone (``s34 + s64`` -> ``p + s``;
``(s27//4)`` -> ``x_size1 // 4``), or read from one that is a multiple of it (``4*s9`` names
``s9`` as ``_seq``), printed the same way; a symbol no input dim gives (a data-dependent size)
keeps torch's name. Two inputs torch holds equal only by a check (``Dim("m")`` for
``mask.size(1)`` where the program needs ``past + seq``) keep the user's names: the contract,
not the dim names, says how they relate.

Example (docs/deploying.md)::

    ep = export.export(model, (tokens, mask), dynamic_shapes=spec)
    onnx_export(ep, "model.onnx")
    session = onnx_session("model.onnx")
    out, = session.run(None, {"tokens": tokens.numpy(), "mask": mask.numpy()})
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sympy
import torch
import torch.onnx

from export import _torch_compat as tc
from export.deploy.checked import checked, program_contract
from export.errors import ExportError, InputError
from export.program.exported import SymshapeProgram
from shapes import Affine, FloorDiv, int_symbol, parse_expr, to_python
from shapes.contract import Contract
from shapes.contract_onnx import OnnxContract
from shapes.errors import ContractError, ShapesError

__all__ = ["onnx_export", "onnx_session", "CheckedSession", "dim_naming", "renamed"]

_INSTALL = "pip install onnx onnxscript onnxruntime"
_OURS = ("f", "dynamo")  # what onnx_export passes to torch.onnx.export itself
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# -- exporting -------------------------------------------------------------------------------------

def onnx_export(program: SymshapeProgram, path: str | os.PathLike[str], **torch_onnx_options: Any) -> Path:
    """``torch.onnx.export(program, f=path, dynamo=True, **torch_onnx_options)``, quiet unless
    ``verbose=True``, then the model's dims renamed to the user's (the module docstring) and
    the program's contract put in its ``metadata_props``; returns the model's path. Load it
    with :func:`onnx_session`, or read its contract with ``shapes.contract_files.read_contract``.

    torch's failure to convert the program is an :class:`export.errors.ExportError` that says
    what failed and what to do (torch's own error is its ``__context__``)."""
    contract = program_contract(program, "onnx_export")
    given = sorted(k for k in _OURS if k in torch_onnx_options)
    if given:
        raise InputError(f"onnx_export passes {', '.join(given)} to torch.onnx.export itself "
                         "(the model goes to `path`, through torch's dynamo exporter)")
    onnx = _onnx_module()
    target = Path(path)
    verbose = bool(torch_onnx_options.pop("verbose", False))
    try:
        with _quiet(verbose):
            torch.onnx.export(program, f=target, dynamo=True, verbose=verbose, **torch_onnx_options)
    except ImportError as e:
        raise ExportError(f"torch.onnx could not export the program: {e} ({_INSTALL})") from None
    except torch.onnx.OnnxExporterError as e:
        raise ExportError(_conversion_failure(e)) from None
    model = onnx.load(os.fspath(target), load_external_data=False)  # weights stay in torch's .data file
    placeholders = [s.arg.name for s in program.graph_signature.input_specs
                    if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    inputs = _bind(contract, placeholders, [v.name for v in _graph_inputs(model.graph)])
    naming = dim_naming(contract, _torch_shapes(program))
    _rename(model.graph, contract, dict(inputs), naming)
    _set_metadata(model, OnnxContract(contract, inputs).metadata())
    onnx.save(model, os.fspath(target))
    return target


def _onnx_module() -> Any:
    try:
        import onnx  # optional: only the ONNX path needs it (export.deploy imports this module when used)
    except ImportError:
        raise ExportError(f"exporting to ONNX needs the onnx package ({_INSTALL})") from None
    return onnx


@contextlib.contextmanager
def _quiet(verbose: bool) -> Iterator[None]:
    """torch.onnx's progress lines and its logged notes (``torchvision is not installed.
    Skipping torchvision::nms``) off for one export, unless ``verbose``."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    if not verbose:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _conversion_failure(error: BaseException) -> str:
    """What torch.onnx failed at, in a few lines: the innermost errors of its chain (the
    outermost is torch's generic "Failed to convert ... Next steps" when there are others)."""
    chain, seen = [], set()
    at: BaseException | None = error
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        chain.append(at)
        at = at.__cause__
    lines: list[str] = []
    for e in reversed(chain[1:] or chain):
        text = _ANSI.sub("", str(e)).strip()
        first = text.splitlines()[0].strip() if text else type(e).__name__
        first = first.removesuffix(" See the stack trace for more information.")
        if first not in lines:
            lines.append(first)
    return ("torch.onnx could not convert the program to ONNX:\n" + "\n".join(f"  {line}" for line in lines[:2]) +
            "\nWhat to do: give an operator with no ONNX function one, as onnx_export(ep, path, "
            "custom_translation_table={op: onnxscript_function}) (it goes to torch.onnx.export), or keep it out of "
            "the model;\ntorch.onnx.export(ep, path, dynamo=True, report=True) writes torch's report of the failure "
            "(torch's error is this error's __context__). ep.module() still runs the program.")


def _graph_inputs(graph: Any) -> list[Any]:
    """The graph's inputs that are fed (an initializer listed as an input is not)."""
    initializers = {t.name for t in graph.initializer}
    return [v for v in graph.input if v.name not in initializers]


def _bind(contract: Contract, placeholders: Sequence[str], onnx_names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Each ONNX input's contract input: by the placeholder it is named after (torch's
    default), else by position among the placeholders ONNX feeds (``input_names=``)."""
    names = [i.name for i in contract.inputs]
    by_placeholder = dict(zip(placeholders, names))
    if all(n in by_placeholder for n in onnx_names):
        return tuple((n, by_placeholder[n]) for n in onnx_names)
    fed = [name for name, entry in zip(names, contract.inputs)
           if entry.kind == "tensor" or (entry.kind == "int" and any(isinstance(s, str) for s in entry.shape))]
    if len(fed) == len(onnx_names):
        return tuple(zip(onnx_names, fed))
    raise ExportError(f"cannot tell which program input each ONNX input is: the model's inputs are "
                      f"{list(onnx_names)}, the program's {list(placeholders)}; export without input_names=")


def _torch_shapes(program: SymshapeProgram) -> list[tuple[int | str, ...]]:
    """torch's size expressions (text) of each user input's dims, in call order (an int input:
    its value)."""
    out: list[tuple[int | str, ...]] = []
    for val in tc.user_input_values(program):
        sizes = val.shape if isinstance(val, torch.Tensor) else (val,) if isinstance(val, (int, torch.SymInt)) else ()
        out.append(tuple(n if isinstance(n, int) else str(tc.sym_expr(n)) for n in sizes))
    return out


# -- the user's names for torch's symbols -------------------------------------------------------

def dim_naming(contract: Contract, torch_shapes: Sequence[Sequence[int | str]]) -> dict[sympy.Symbol, sympy.Expr]:
    """torch's symbols (``s9``) as expressions over the user's dim names (``_seq``), from each
    input dim's torch expression (``torch_shapes``, in the contract's input order) and the
    contract's name for it (its ``Dim`` expression, else its symbol): a dim torch gives as a
    bare symbol names it, in call order; then a dim that is ``a * s + b`` names ``s``.

    >>> from shapes.contract import ContractDim, ContractInput
    >>> c = Contract(("t",), (ContractInput("t", ("t",), "tensor", ("t_size0", "t_size1")),),
    ...              (ContractDim("t_size0", "t.size(0)", "batch", 1, None),
    ...               ContractDim("t_size1", "t.size(1)", "4 * _seq", 4, 128)), ())
    >>> dim_naming(c, [("s31", "4*s9")])
    {s31: batch, s9: _seq}
    """
    users = _user_dims(contract)
    pairs = []
    for entry, shape in zip(contract.inputs, torch_shapes):
        for want, got in zip(entry.shape, shape):
            if isinstance(want, str) and isinstance(got, str):
                expr = _parsed(got)
                if expr is not None:
                    pairs.append((expr, users[want]))
    naming: dict[sympy.Symbol, sympy.Expr] = {}
    for expr, user in pairs:
        if isinstance(expr, sympy.Symbol) and expr not in naming:
            naming[expr] = user
    for expr, user in pairs:
        form = Affine.of(expr) if not isinstance(expr, sympy.Symbol) else None
        if form is not None and form.root not in naming:
            value = sympy.expand((user - form.b) / form.a)
            exact = all(t.as_coeff_Mul()[0].is_integer for t in sympy.Add.make_args(value))
            naming[form.root] = value if exact else FloorDiv(user - form.b, form.a)
    return naming


def _user_dims(contract: Contract) -> dict[str, sympy.Expr]:
    """Each contract dim's name as an expression: its ``Dim``'s (``4 * _seq``), else its symbol."""
    out: dict[str, sympy.Expr] = {}
    for d in contract.dims:
        expr = _parsed(d.dim) if d.dim is not None else None
        out[d.symbol] = expr if isinstance(expr, sympy.Expr) else int_symbol(d.symbol)
    return out


def _parsed(text: str) -> sympy.Expr | None:
    try:
        expr = parse_expr(text, allow_new_symbols=True)
    except ShapesError:
        return None
    return expr if isinstance(expr, sympy.Expr) else None


def _shown(expr: sympy.Expr) -> str | None:
    try:
        return to_python(expr)
    except ShapesError:
        return None


def renamed(text: str, naming: Mapping[sympy.Symbol, sympy.Expr]) -> str:
    """A dim of torch's (``s34 + s64``) in the user's names (``s + p``), printed as symshape
    prints expressions; a text symshape cannot parse has its symbols replaced in place.

    >>> s, p, b = int_symbol("s34"), int_symbol("s64"), int_symbol("s1")
    >>> renamed("s34 + s64", {s: int_symbol("s"), p: int_symbol("p")}), renamed("(s1//4)", {b: int_symbol("b")})
    ('p + s', 'b // 4')
    """
    expr = _parsed(text)
    shown = _shown(expr.xreplace(dict(naming))) if expr is not None else None
    if shown is not None:
        return shown

    def name(m: re.Match[str]) -> str:
        value = naming.get(int_symbol(m.group(0)))
        text = _shown(value) if value is not None else None
        if text is None:
            return m.group(0)
        return text if text.isidentifier() else f"({text})"

    return _NAME.sub(name, text)


def _rename(graph: Any, contract: Contract, inputs: Mapping[str, str], naming: Mapping[sympy.Symbol, sympy.Expr]) -> None:
    """The graph's dims in the user's names: each input's dynamic dims as the contract names
    them, every other dim (outputs, values, subgraphs) through :func:`renamed`."""
    entries = {i.name: i for i in contract.inputs}
    users = {s: _shown(e) for s, e in _user_dims(contract).items()}
    for value in _graph_inputs(graph):
        entry = entries.get(inputs.get(value.name, ""))
        dims = _dims(value)
        if entry is None or len(dims) != len(entry.shape):
            _rename_values([value], naming)
            continue
        for d, want in zip(dims, entry.shape):
            if d.HasField("dim_param"):
                shown = users.get(want) if isinstance(want, str) else None
                d.dim_param = shown if shown is not None else renamed(d.dim_param, naming)
    _rename_values(list(graph.output) + list(graph.value_info), naming)
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                _rename_values(list(sub.input) + list(sub.output) + list(sub.value_info), naming)


def _dims(value: Any) -> list[Any]:
    kind = value.type.WhichOneof("value")
    return list(value.type.tensor_type.shape.dim) if kind == "tensor_type" else []


def _rename_values(values: Iterable[Any], naming: Mapping[sympy.Symbol, sympy.Expr]) -> None:
    for value in values:
        for d in _dims(value):
            if d.HasField("dim_param"):
                d.dim_param = renamed(d.dim_param, naming)


def _set_metadata(model: Any, entries: Mapping[str, str]) -> None:
    kept = [(p.key, p.value) for p in model.metadata_props if p.key not in entries]
    del model.metadata_props[:]
    for key, value in [*kept, *entries.items()]:
        prop = model.metadata_props.add()
        prop.key, prop.value = key, value


# -- running ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CheckedSession:
    """An onnxruntime ``session`` behind its model's contract (``onnx_contract``: the contract
    and the ONNX input each contract input is fed as): :meth:`run` checks the feeds first."""

    onnx_contract: OnnxContract
    session: Any

    @property
    def contract(self) -> Contract:
        return self.onnx_contract.contract

    def check(self, feeds: Mapping[str, Any]) -> None:
        """:class:`export.errors.RefusedInputError` in the causes' words unless ``feeds``
        (ONNX input name -> array) meet the contract; a feed of no input is an InputError."""
        try:
            checked(self.contract, lambda: self.onnx_contract.check(feeds))
        except ContractError as e:
            raise InputError(str(e)) from None

    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any], run_options: Any = None) -> list[Any]:
        """``session.run(output_names, feeds, run_options)`` after :meth:`check`."""
        self.check(feeds)
        return list(self.session.run(output_names, dict(feeds), run_options))


def onnx_session(path: str | os.PathLike[str], *, contract: OnnxContract | None = None,
                 **ort_options: Any) -> CheckedSession:
    """``onnxruntime.InferenceSession(path, **ort_options)`` behind the model's contract (from
    its metadata, or ``contract``). ``providers`` default to every provider onnxruntime has
    (the best first). A model without a contract is an InputError."""
    try:
        import onnxruntime  # optional: only the ONNX path needs it
    except ImportError:
        raise ExportError(f"running an ONNX model needs onnxruntime ({_INSTALL})") from None
    ort_options.setdefault("providers", onnxruntime.get_available_providers())
    shown = os.fspath(path)
    session = onnxruntime.InferenceSession(shown, **ort_options)
    if contract is None:
        try:
            contract = OnnxContract.from_metadata(session.get_modelmeta().custom_metadata_map, shown)
        except ContractError as e:
            raise InputError(f"{e} (or pass contract=shapes.contract_onnx.OnnxContract(ep.symshape.contract, ...))") \
                from None
    return CheckedSession(contract, session)
