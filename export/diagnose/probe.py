"""Probing a 0/1 specialization: re-export with the specialized dims enlarged.

torch specializes a dynamic dim whose example size is 0 or 1 before any guard is asked,
so the trace never says what the dim is *for*. Re-exporting with a larger example (the
same data repeated along that dim) answers it: either the export then succeeds (use an
example of size >= 2), or it needs the dim equal to another one (the dim broadcasts
against that dim: it is a static 1, or it follows the other dim).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch

from export import _torch_compat as tc
from export.errors import ConstraintViolationError, ExportError
from export.fixes.suggested import ReExporter, offered
from export.spec.inputs import Inputs
from export.program.exported import SymshapeProgram
from export.tracing.trace import Trace
from shapes.spec import InputDim, Spec

__all__ = ["ProbeResult", "candidate_sizes", "enlarged_inputs", "probe_specializations", "tied_sizes"]

_log = logging.getLogger("symshape")
"""Progress of the steps that trace again (the CLI prints it; ``logging`` users may too)."""


@dataclass(frozen=True)
class ProbeResult:
    """What re-exporting with larger examples showed: the ``sizes`` tried last, whether the
    spec exported with them (``ok``, and then the ``program``: what ``export`` returns for
    the spec and the enlarged example), else the dims each specialized one must equal."""

    sizes: Mapping[InputDim, int]
    ok: bool
    partners: Mapping[InputDim, tuple[str, str | None, str | None]]  # dim -> (other dim, origin, code)
    program: SymshapeProgram | None = field(default=None, repr=False, compare=False)


def _resized(t: torch.Tensor, dim: int, n: int) -> torch.Tensor:
    if t.shape[dim] == 0:
        shape = list(t.shape)
        shape[dim] = n
        return torch.zeros(shape, dtype=t.dtype, device=t.device)
    reps = [1] * t.dim()
    reps[dim] = math.ceil(n / t.shape[dim])
    return t.repeat(*reps).narrow(dim, 0, n).clone(memory_format=torch.contiguous_format)


def enlarged_inputs(inputs: Inputs, args: tuple[Any, ...], kwargs: dict[str, Any] | None,
                    sizes: Mapping[InputDim, int]) -> tuple[tuple[Any, ...], dict[str, Any] | None]:
    """``args``/``kwargs`` with the given dims of the example tensors resized (data repeated),
    and the given int inputs (``dim=None``, an argument of their own) set to their value."""
    new: dict[int, torch.Tensor] = {}
    ints: dict[str, int] = {}
    for d, n in sizes.items():
        leaf = inputs.leaf_named(d.input_name)
        if leaf is not None and d.dim is None and d.input_name in inputs.bound:
            ints[d.input_name] = n
        if leaf is None or not leaf.is_tensor or d.dim is None:
            continue
        base = new.get(id(leaf.value), leaf.value)
        new[id(leaf.value)] = _resized(base, d.dim, n)

    def swap(x: Any) -> Any:
        return new.get(id(x), x) if isinstance(x, torch.Tensor) else x

    args, kwargs = tc.tree_map(swap, args), (tc.tree_map(swap, kwargs) if kwargs is not None else None)
    if ints:
        params = list(inputs.bound)
        args = tuple(ints.get(params[i], a) if i < len(params) else a for i, a in enumerate(args))
        if kwargs is not None:
            kwargs = {k: ints.get(k, v) for k, v in kwargs.items()}
    return args, kwargs


def tied_sizes(spec: Spec, dims: Iterable[InputDim], value: int) -> dict[InputDim, int]:
    """Sizes for every dim tied to the specialized ones, with their root set to ``value``."""
    out: dict[InputDim, int] = {}
    for d in dims:
        decl = spec.decl(d)
        if decl is None or decl.expr is None or len(decl.expr.free_symbols) != 1:
            out[d] = value
            continue
        root = next(iter(decl.expr.free_symbols))
        for other in spec.decls:
            if other.expr is not None and other.expr.free_symbols == {root}:
                out[other.dim] = int(other.expr.subs(root, value))
    return out


def candidate_sizes(spec: Spec, inputs: Inputs, dims: Iterable[InputDim]) -> list[dict[InputDim, int]]:
    """The example sizes to try for the 0/1 ``dims`` (and the dims tied to them), in order:
    their root at 2, then at the example sizes (>= 2) of declared dims, then of static dims
    (at most 6): a larger size the model can run, and one that matches a dim it must equal.

    >>> from shapes.spec import DimDecl
    >>> x = torch.randn(1, 3)
    >>> spec = Spec("modern", (), (DimDecl(InputDim("x", 0), "auto", None, "Dim.AUTO"),))
    >>> [{str(d): n for d, n in s.items()} for s in candidate_sizes(spec, Inputs.bind(lambda x: x, (x,), None),
    ...                                                            [InputDim("x", 0)])]
    [{'x.size(0)': 2}, {'x.size(0)': 3}]
    """
    dims = list(dims)
    sizes_seen = inputs.example_sizes()
    declared = sorted({n for d, n in sizes_seen.items() if n >= 2 and spec.decl(d) is not None})
    static = sorted({n for d, n in sizes_seen.items() if n >= 2 and spec.decl(d) is None})
    return [tied_sizes(spec, dims, value) for value in list(dict.fromkeys([2, *declared, *static]))[:6]]


def probe_specializations(trace: Trace, dims: list[InputDim], exporter: ReExporter) -> ProbeResult | None:
    """Re-export ``trace``'s spec with the specialized ``dims`` of ``exporter``'s example
    enlarged (to 2, then to other dims' example sizes, while the model cannot run the
    enlarged example) through ``exporter.with_example``, which raises what ``export`` raises
    or gives the program (:func:`export.fixes.suggested.offered`); None when no probe could
    be traced."""
    spec, inputs = trace.spec, trace.inputs
    for sizes in candidate_sizes(spec, inputs, dims):
        try:
            new_args, new_kwargs = enlarged_inputs(inputs, exporter.args, exporter.kwargs, sizes)
        except Exception:  # noqa: BLE001 - a probe that cannot be built is skipped
            continue
        _log.info("probing a larger example: %s", ", ".join(f"{d} = {n}" for d, n in sizes.items()))
        try:
            program = offered(exporter.with_example(new_args, new_kwargs), spec)
            return ProbeResult(sizes, True, {}, program)
        except ConstraintViolationError as e:  # traced, and refused: other sizes would trace alike
            return ProbeResult(sizes, False, _partners(e, dims))
        except (ExportError, Exception):  # noqa: BLE001 - the enlarged example does not fit the model
            continue
    return None


def _partners(e: ConstraintViolationError, dims: list[InputDim]) -> dict[InputDim, tuple[str, str | None, str | None]]:
    out: dict[InputDim, tuple[str, str | None, str | None]] = {}
    names = {str(d): d for d in dims}
    for cause in e.causes:
        if not any(isinstance(f.rel, sympy.Eq) for f in cause.facts):
            continue
        involved = [n for n in cause.dims if n in names]
        partners = [n for n in cause.dims if n not in names]
        if involved and partners:
            out[names[involved[0]]] = (partners[0], cause.origin, cause.code)
        elif involved and any(isinstance(f.rel, sympy.Eq) and f.rel.rhs.is_Integer for f in cause.facts):
            value = next(f.rel.rhs for f in cause.facts if isinstance(f.rel, sympy.Eq) and f.rel.rhs.is_Integer)
            out[names[involved[0]]] = (f"a static dim of size {value}", cause.origin, cause.code)
    return out
