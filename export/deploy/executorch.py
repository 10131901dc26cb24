"""ExecuTorch with the program's contract: a ``.pte`` that refuses what ``ep.module()`` refuses.

ExecuTorch (``to_edge(ep).to_executorch()``, run by :mod:`executorch.runtime`) keeps none of the
program's checks: an ``if x.shape[0] == 1`` model runs size 1 down the other branch, silently
wrong. And it plans each tensor's memory for the largest size it can take: a dim with no ``max``
is planned at its size in the trace, so a larger input is refused with ``set_inputs() ...
failed with error 0x10`` and no word of which dim (docs/deploying.md).

* :func:`executorch_lower` lowers a symshape program (``export.export``, ``export.load``) to a
  ``.pte`` and writes its contract beside it (``model.pte.symshape.json``,
  :func:`shapes.contract_files.sidecar_path`). A dim with no finite max is an
  :class:`~export.errors.InputError` naming each such dim and the ``Dim`` to give a max;
  ``unbounded="example"`` lowers anyway, plans those dims at their traced sizes and writes a
  contract that refuses, in words, the sizes the ``.pte`` was not planned for.
* :func:`executorch_load` loads a ``.pte`` behind that contract
  (:class:`~export.deploy.checked.CheckedProgram`): call it as you would call ``ep.module()``;
  a call the contract refuses raises :class:`~export.errors.RefusedInputError` in the causes'
  words before anything runs.

The plan: every tensor of the program (inputs, intermediates, outputs) is planned for its
largest size over the program's ranges (its ``range_constraints``), a dim with no max
(``unbounded="example"``) ranging up to its traced size, so that the ``.pte`` runs every call
its contract admits. ExecuTorch's own planning (its ``ConstraintBasedSymShapeEvalPass``, which
``executorch_lower`` replaces) reads torch's shape env, whose ranges can be narrower than the
program's (``q.size(1) <= 62`` where the program admits 63), and plans a size with no finite
bound at its traced value, the expression as a whole: with ``batch`` unbounded and ``seq <=
128``, ``batch * (seq // 4)`` is planned at the example's product, so ``seq = 128`` fails
inside the method even at the example's batch. The ``.pte`` refuses an input with more
elements than planned (``set_inputs() ... error 0x10``), not a dim above its plan: the
contract of ``unbounded="example"`` caps each dim, so it refuses a few calls the ``.pte``
would run (``(4, 4)`` where ``(2, 8)`` was planned).

A use, as docs/deploying.md shows it::

    ep = export.export(model, (x,), dynamic_shapes={"x": {0: Dim("b", max=64)}})
    executorch_lower(ep, "model.pte")          # writes model.pte and model.pte.symshape.json
    program = executorch_load("model.pte")
    program(torch.randn(5, 4))                 # what ep.module() returns
    program(torch.randn(1, 4))                 # RefusedInputError: x.size(0) must be >= 2 ...
"""

from __future__ import annotations

import dataclasses
import enum
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import sympy
import torch
from torch.fx.passes.infra.pass_base import PassBase, PassResult

try:  # ExecuTorch installs beside torch 2.14.1 only: without it, this module imports and its functions say so
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower
    from executorch.exir.tensor import TensorSpec
    from executorch.runtime import Runtime
except ImportError as e:
    _MISSING: str | None = f"{type(e).__name__}: {e}"
else:
    _MISSING = None

from export import _torch_compat as tc
from export.deploy.checked import CheckedProgram, program_contract
from export.errors import ExportError, InputError, RefusedInputError, SymshapeWarning
from export.program.exported import SymshapeProgram
from shapes.contract import Condition, ConditionKind, Contract, ContractDim, refusal_message
from shapes.contract_files import read_contract, sidecar_path, write_sidecar
from shapes.errors import ContractError
from shapes.expr import int_symbol

__all__ = ["executorch_lower", "executorch_load", "Unbounded", "METHOD"]

METHOD = "forward"
"""The method of the ``.pte`` the program is lowered to and loaded from."""

_ERRORS = {0x01: "Internal", 0x02: "InvalidState", 0x10: "NotSupported", 0x11: "NotImplemented",
           0x12: "InvalidArgument", 0x13: "InvalidType", 0x14: "OperatorMissing", 0x20: "NotFound",
           0x21: "MemoryAllocationFailed", 0x23: "InvalidProgram", 0x25: "OutOfResources"}
"""ExecuTorch's error codes (``runtime/core/error.h``), as its runtime's messages give them."""


class Unbounded(enum.Enum):
    """What :func:`executorch_lower` does with a dim that has no finite max."""

    RAISE = "raise"
    """An :class:`~export.errors.InputError` naming each such dim and the ``Dim`` to bound."""
    EXAMPLE = "example"
    """Plan each at its size in the trace, warn, and write a contract that refuses larger ones."""


# -- lowering ------------------------------------------------------------------------------------

def executorch_lower(program: SymshapeProgram, pte_path: str | os.PathLike[str], *,
                     unbounded: str | Unbounded = Unbounded.RAISE,
                     compile_config: EdgeCompileConfig | None = None,
                     backend_config: ExecutorchBackendConfig | None = None,
                     partitioner: Sequence[Any] | None = None) -> Path:
    """Lower ``program`` (exported by symshape) to an ExecuTorch program at ``pte_path`` and
    write its contract beside it (``<pte_path>.symshape.json``); returns ``pte_path``.

    ``unbounded`` (:class:`Unbounded`): ``"raise"`` (the default) refuses a program with a dim
    that has no finite max, naming each and the fix (``batch = Dim('batch', max=...)``,
    ``Dim.AUTO(max=...)``), since ExecuTorch plans memory for the largest size; ``"example"``
    plans each such dim at its size in the trace, warns (:class:`~export.errors.SymshapeWarning`)
    and writes the contract with those dims capped there, so the loaded program refuses, in
    words, what the ``.pte`` cannot run. ``compile_config`` goes to ExecuTorch's ``to_edge``,
    ``backend_config`` to ``to_executorch`` (its ``sym_shape_eval_pass`` is replaced: see the
    module docstring), ``partitioner`` (e.g. ``[XnnpackPartitioner()]``) to
    ``to_edge_transform_and_lower``. A failure inside ExecuTorch is an
    :class:`~export.errors.ExportError` saying where it failed; ExecuTorch's exception is its
    ``__context__``."""
    _require_executorch("executorch_lower")
    contract = program_contract(program, "executorch_lower")
    mode = _mode(unbounded)
    _check_inputs(contract)
    if mode is Unbounded.RAISE and contract.unbounded():
        raise InputError(_unbounded_text(contract))
    buffer, loaded = _lowered(program, mode, compile_config, backend_config, partitioner)
    planned = _planned_sizes(loaded, contract)
    capped, caps = _within_plan(contract, planned)
    unexpected = [c for c in caps if _dim_of(contract, c).hi is not None]
    if mode is Unbounded.EXAMPLE and contract.unbounded():
        warnings.warn(_example_text(contract, capped), SymshapeWarning, stacklevel=2)
    if unexpected:
        warnings.warn(_tightened_text(contract, capped, unexpected), SymshapeWarning, stacklevel=2)
    path = Path(pte_path)
    path.write_bytes(buffer)
    write_sidecar(capped, path)
    return path


def _require_executorch(what: str) -> None:
    if _MISSING is not None:
        raise ImportError(f"{what} needs ExecuTorch, which does not import here ({_MISSING}): it installs beside "
                          "torch 2.14.1 (pip install executorch==1.5.1)")


def _mode(unbounded: str | Unbounded) -> Unbounded:
    try:
        return Unbounded(unbounded)
    except ValueError:
        raise InputError(f"unbounded must be {' or '.join(repr(m.value) for m in Unbounded)}, got {unbounded!r}") from None


def _check_inputs(contract: Contract) -> None:
    """ExecuTorch takes a dynamic int input as no value at all (its ``.pte`` expects None there
    and computes as if it were its example): refuse such a program."""
    ints = [i.name for i in contract.inputs if i.kind == "int" and i.shape and isinstance(i.shape[0], str)]
    if ints:
        raise InputError(f"ExecuTorch drops the value of a dynamic int input ({', '.join(ints)}): its program "
                         "expects no value there and computes as if it were the example's. Pass it as a tensor "
                         "(torch.tensor(n)), or make it static (Dim.STATIC, or None in dynamic_shapes), and export again")


class _PlanAtBounds(PassBase):
    """ExecuTorch's sym-shape pass, planning each tensor for its largest size over the
    program's ranges (``known``: its ``range_constraints``), a dim with no max at its traced
    size when ``cap_at_hint``."""

    def __init__(self, known: Mapping[Any, Any], cap_at_hint: bool) -> None:
        super().__init__()
        self.known = known
        self.cap_at_hint = cap_at_hint

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        for module in graph_module.modules():
            if isinstance(module, torch.fx.GraphModule):
                for node in module.graph.nodes:
                    for spec in _specs(node.meta.get("spec")):
                        spec.shape = [self._bound(s, node) for s in spec.shape]
                        spec.stride = [self._bound(s, node) for s in spec.stride]
        return PassResult(graph_module, True)

    def _bound(self, size: Any, node: torch.fx.Node) -> int:
        hi = tc.size_upper_bound(size, self.known, cap_at_hint=self.cap_at_hint)
        if hi is None:
            raise _NoBound(f"ExecuTorch plans each tensor's memory for its largest size, and {node.name}{_origin(node)} "
                           f"has a size with none ({size}): a data-dependent size needs a max in the model "
                           "(torch._check(n <= ...)), a dim a max in dynamic_shapes")
        return hi


def _origin(node: torch.fx.Node) -> str:
    """`` (at model.py:12: return torch.zeros(n))``: the model's line a node comes from, when known."""
    found = re.findall(r'File "([^"]+)", line (\d+), in \w+\n\s*(.*)', node.meta.get("stack_trace") or "")
    if not found:
        return ""
    file, line, code = found[-1]
    return f" (at {Path(file).name}:{line}: {code.strip()})"


class _NoBound(ExportError):
    """A size :class:`_PlanAtBounds` cannot bound (raised inside ExecuTorch's pass manager)."""


def _specs(value: Any) -> list[Any]:
    if isinstance(value, TensorSpec):
        return [value]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _specs(v)]
    return []


def _lowered(program: SymshapeProgram, mode: Unbounded, compile_config: EdgeCompileConfig | None,
             backend_config: ExecutorchBackendConfig | None, partitioner: Sequence[Any] | None) -> tuple[bytes, Any]:
    """The ``.pte``'s bytes and the program ExecuTorch's runtime loads from them.

    A view is planned inside its base's buffer for its own largest size; where that bound is
    looser than the base's (``x.reshape(b, s // 4, 4)``: torch writes the 4 as ``s // (s //
    4)``, bounded by ``s``'s max), the method does not load (error 0x21). Such a program is
    lowered again with ``remove_view_copy=False``: its views are copies, each planned on its own."""
    config = dataclasses.replace(backend_config or ExecutorchBackendConfig(),
                                 sym_shape_eval_pass=_PlanAtBounds(dict(program.range_constraints),
                                                                   mode is Unbounded.EXAMPLE))
    buffer = _lower_once(program, config, compile_config, partitioner)
    loaded = _load(buffer)
    if isinstance(loaded, str) and config.remove_view_copy:
        buffer = _lower_once(program, dataclasses.replace(config, remove_view_copy=False), compile_config, partitioner)
        loaded = _load(buffer)
    if isinstance(loaded, str):
        raise ExportError(f"ExecuTorch lowered the program, and its runtime cannot load the result: {loaded}")
    return buffer, loaded[0]


def _lower_once(program: SymshapeProgram, config: ExecutorchBackendConfig, compile_config: EdgeCompileConfig | None,
                partitioner: Sequence[Any] | None) -> bytes:
    step = "to_edge"
    try:
        if partitioner:
            step = "to_edge_transform_and_lower"
            edge = to_edge_transform_and_lower(program, partitioner=list(partitioner), compile_config=compile_config)
        else:
            edge = to_edge(program, compile_config=compile_config)
        step = "to_executorch"
        return bytes(edge.to_executorch(config).buffer)
    except Exception as e:  # noqa: BLE001 - any failure inside ExecuTorch, said in one block
        ours = _cause_of(e)
        if ours is not None:
            raise ExportError(str(ours)) from None
        raise ExportError(f"ExecuTorch could not lower the program: {step} raised {type(e).__name__}: "
                          f"{_first_line(e)}\n(ExecuTorch's exception is this error's __context__)") from None


def _coded(text: str) -> str:
    """``text`` with ExecuTorch's error code named (``error 0x21 (MemoryAllocationFailed)``)."""
    found = re.search(r"0x:?([0-9a-fA-F]+)", text)
    return f"{text} ({_ERRORS.get(int(found.group(1), 16), 'unknown')})" if found else text


def _cause_of(e: BaseException) -> _NoBound | None:
    seen: set[int] = set()
    current: BaseException | None = e
    while current is not None and id(current) not in seen:
        if isinstance(current, _NoBound):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _first_line(e: BaseException) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    return lines[0].strip() if lines else "(no message)"


# -- the plan and the contract -------------------------------------------------------------------

def _load(source: bytes | Path) -> tuple[Any, Any] | str:
    """The program ExecuTorch's runtime loads from ``source`` and its method, or why it refuses it."""
    try:
        loaded = Runtime.get().load_program(source)
        return loaded, loaded.load_method(METHOD)
    except Exception as e:  # noqa: BLE001 - the runtime's refusal, in one line
        return _coded(_first_line(e))


def _planned_sizes(loaded: Any, contract: Contract) -> list[tuple[int, ...] | None]:
    """The sizes the ``.pte`` planned each contract input for (None for a non-tensor input)."""
    if METHOD not in loaded.method_names:
        raise InputError(f"the ExecuTorch program has no method {METHOD!r} (its methods: {sorted(loaded.method_names)})")
    meta = loaded.metadata(METHOD)
    if meta.num_inputs() != len(contract.inputs):
        raise InputError(f"the contract is not this ExecuTorch program's: it has {len(contract.inputs)} inputs "
                         f"({', '.join(i.name for i in contract.inputs)}), the program {meta.num_inputs()}")
    planned: list[tuple[int, ...] | None] = []
    for j, entry in enumerate(contract.inputs):
        if entry.kind != "tensor":
            planned.append(None)
            continue
        sizes = tuple(int(n) for n in meta.input_tensor_meta(j).sizes())
        static = [(d, want, got) for d, (want, got) in enumerate(zip(entry.shape, sizes)) if isinstance(want, int) and want != got]
        if len(sizes) != len(entry.shape) or static:
            raise InputError(f"the contract is not this ExecuTorch program's: {entry.name} has the shape "
                             f"{tuple(entry.shape)} there, {sizes} in the program")
        planned.append(sizes)
    return planned


def _dim_of(contract: Contract, symbol: str) -> ContractDim:
    return next(d for d in contract.dims if d.symbol == symbol)


def _within_plan(contract: Contract, planned: Sequence[tuple[int, ...] | None]) -> tuple[Contract, list[str]]:
    """``contract`` with each input dim no larger than the ``.pte`` planned it (``planned``:
    per contract input, its planned sizes), and the symbols of the dims it capped: a dim with
    no max, or a max above the plan, gets the planned size as its max and a condition saying
    so (one per ``Dim`` shared by several inputs)."""
    caps: dict[str, int] = {}
    for entry, sizes in zip(contract.inputs, planned):
        for want, size in zip(entry.shape, sizes or ()):
            if isinstance(want, str):
                hi = _dim_of(contract, want).hi
                if hi is None or size < hi:
                    caps[want] = min(size, caps.get(want, size))
    if not caps:
        return contract, []
    dims = tuple(dataclasses.replace(d, hi=caps[d.symbol]) if d.symbol in caps else d for d in contract.dims)
    said: set[tuple[str, int]] = set()
    added: list[Condition] = []
    for d in contract.dims:
        if d.symbol in caps and (d.dim or d.symbol, caps[d.symbol]) not in said:
            said.add((d.dim or d.symbol, caps[d.symbol]))
            added.append(_cap_condition(d, caps[d.symbol]))
    at = max((i + 1 for i, c in enumerate(contract.conditions) if c.kind == ConditionKind.RANGE.value), default=0)
    conditions = contract.conditions[:at] + tuple(added) + contract.conditions[at:]
    return dataclasses.replace(contract, dims=dims, conditions=conditions), list(caps)


def _cap_condition(d: ContractDim, cap: int) -> Condition:
    if d.hi is None:
        note = f"the .pte's memory is planned at its traced size: {_said(d)} has no max"
    else:
        note = f"the .pte's memory is planned for {d.name} <= {cap}"
    return Condition(sympy.Le(int_symbol(d.symbol), cap), f"{d.name} must be <= {cap}", ConditionKind.RANGE.value,
                     note=note)


def _roots(d: ContractDim) -> tuple[str, ...]:
    """The user's ``Dim`` names a dim reads (``("_seq",)`` for ``4 * _seq``); none for ``Dim.AUTO``."""
    return tuple(dict.fromkeys(re.findall(r"[A-Za-z_]\w*", d.dim or "")))


def _said(d: ContractDim) -> str:
    return f"Dim {', '.join(_roots(d))}" if _roots(d) else "its Dim.AUTO"


def _groups(dims: Sequence[ContractDim]) -> list[list[ContractDim]]:
    """``dims`` by the user's ``Dim`` they read (``x.size(0)`` and ``z.size(0)`` of ``b`` and
    ``2 * b``), in order; a ``Dim.AUTO`` dim is a group of its own."""
    groups: dict[tuple[str, ...], list[ContractDim]] = {}
    for d in dims:
        groups.setdefault(_roots(d) or ("", d.symbol), []).append(d)
    return list(groups.values())


def _fix(group: Sequence[ContractDim]) -> str:
    """The code that gives ``group``'s dims a max."""
    d = group[0]
    if not _roots(d):
        found = re.fullmatch(r"(.+)\.size\((\d+)\)", d.name)
        classic = f" (classic: dynamic_dim({found.group(1)}, {found.group(2)}) <= ...)" if found else ""
        return f"Dim.AUTO(max=...){classic}"
    return "; ".join(f"{r} = Dim({r!r}, max=...)" for r in _roots(d))


def _shown(group: Sequence[ContractDim]) -> str:
    dims = sorted(set(d.dim for d in group if d.dim), key=lambda t: (len(t), t))
    return f"{', '.join(d.name for d in group)} ({'Dim ' + ', '.join(dims) if dims else 'Dim.AUTO'})"


def _unbounded_text(contract: Contract) -> str:
    lines = ["ExecuTorch plans each tensor's memory for its largest size, and these dims have no max:"]
    lines += [f"  {_shown(g)}: {_fix(g)}" for g in _groups(contract.unbounded())]
    lines.append("Give each a max in dynamic_shapes and export again, or lower with unbounded='example': memory is "
                 "then planned at their traced sizes, and the contract beside the .pte refuses larger ones.")
    return "\n".join(lines)


def _example_text(contract: Contract, capped: Contract) -> str:
    caps: dict[int, list[str]] = {}
    for d in contract.unbounded():
        caps.setdefault(_dim_of(capped, d.symbol).hi or 0, []).append(d.name)
    said = ", ".join(f"{', '.join(names)} <= {cap}" for cap, names in caps.items())
    fixes = "; ".join(dict.fromkeys(_fix(g) for g in _groups(contract.unbounded())))
    return (f"executorch_lower: planned memory at the traced sizes for the dims with no max: the .pte runs {said} "
            f"only, and the contract beside it refuses larger sizes. To plan for more, give them a max: {fixes}")


def _tightened_text(contract: Contract, capped: Contract, symbols: Sequence[str]) -> str:
    said = ", ".join(f"{_dim_of(contract, s).name} <= {_dim_of(capped, s).hi} "
                     f"(the program admits {_dim_of(contract, s).hi})" for s in symbols)
    return f"ExecuTorch planned memory for less than the program admits: {said}; the contract beside the .pte says so"


# -- loading and running -----------------------------------------------------------------------

def executorch_load(pte_path: str | os.PathLike[str], *, contract: Contract | None = None) -> CheckedProgram:
    """The ExecuTorch program at ``pte_path`` behind its contract (the sidecar
    ``<pte_path>.symshape.json`` that :func:`executorch_lower` wrote, or ``contract``): call it
    as you would call ``ep.module()`` (positional or keyword arguments, as the program takes
    them). The contract is checked first (:class:`~export.errors.RefusedInputError` in the
    causes' words), then the method runs on the call's flat inputs; it returns torch tensors,
    one output as itself, several as a tuple (the program's flat outputs, in order). A contract
    that admits more than the ``.pte`` was planned for is capped to the plan, with a warning."""
    _require_executorch("executorch_load")
    path = Path(pte_path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if contract is None:
        side = sidecar_path(path)
        if not side.is_file():
            raise InputError(f"{path}: no contract beside it ({side.name}): lower with export.deploy.executorch_lower, "
                             "or pass contract=ep.symshape.contract")
        try:
            contract = read_contract(side)
        except ContractError as e:
            raise InputError(f"{side}: the contract is damaged: {e}") from None
    loaded = _load(path)
    if isinstance(loaded, str):
        raise InputError(f"{path}: ExecuTorch's runtime cannot load it ({loaded})")
    capped, caps = _within_plan(contract, _planned_sizes(loaded[0], contract))
    if caps:
        warnings.warn(_tightened_text(contract, capped, caps), SymshapeWarning, stacklevel=2)
    return CheckedProgram(capped, _Method(loaded[1], capped, str(path)), "ExecuTorch")


@dataclasses.dataclass(frozen=True)
class _Method:
    """A loaded method called like the program: the call's inputs flattened in the contract's order."""

    method: Any
    contract: Contract
    shown: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values = _flat(self.contract, args, kwargs)
        wrong = [f"{e.name} must be {e.dtype} (the .pte computes in {e.dtype}; got {str(v.dtype).removeprefix('torch.')})"
                 for e, v in zip(self.contract.inputs, values)
                 if isinstance(v, torch.Tensor) and e.dtype is not None and str(v.dtype).removeprefix("torch.") != e.dtype]
        if wrong:
            raise RefusedInputError(refusal_message(wrong))
        inputs = [v.contiguous() if isinstance(v, torch.Tensor) else v for v in values]
        try:
            outputs = list(self.method.execute(inputs))
        except RuntimeError as e:
            raise ExportError(self._failed(e, inputs)) from None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _failed(self, e: RuntimeError, inputs: Sequence[Any]) -> str:
        found = re.search(r"(set_inputs|execute)\(\).*error (0x[0-9a-fA-F]+)", str(e))
        sizes = ", ".join(f"{entry.name} {tuple(v.shape)}" if isinstance(v, torch.Tensor) else f"{entry.name} = {v!r}"
                          for entry, v in zip(self.contract.inputs, inputs))
        if found is None:
            return f"ExecuTorch failed running {self.shown} on {sizes}: {_first_line(e)}"
        code = int(found.group(2), 16)
        return (f"ExecuTorch failed running {self.shown} on {sizes}: its {found.group(1)} step returned error "
                f"{found.group(2)} ({_ERRORS.get(code, 'unknown')}), which its log (stderr) explains; the contract "
                "admitted these inputs, so the .pte and its contract disagree")


def _flat(contract: Contract, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> list[Any]:
    """The call's inputs in the contract's order (the contract check has bound them already)."""
    bound = {**dict(zip(contract.params, args)), **kwargs}
    values = []
    for entry in contract.inputs:
        value: Any = bound.get(str(entry.path[0]))
        for key in entry.path[1:]:
            value = _step(value, key)
        values.append(value)
    return values


def _step(value: Any, key: str | int) -> Any:
    """``value[key]`` (a dict key, a sequence index), or the attribute ``key`` (a dataclass field)."""
    if isinstance(value, Mapping):
        return value[key]
    if isinstance(value, (list, tuple)) and isinstance(key, int):
        return value[key]
    return getattr(value, str(key))
