"""The user API: ``export``, ``dynamic_dim``, ``constrain_as_size``, ``constrain_as_value``."""

from __future__ import annotations

import contextlib
import inspect
import io
import sys
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.export import ExportedProgram

from export import _torch_compat as tc
from export.diagnose import Retry, data_dependent_error, violation_error
from export.errors import ExportError, InputError
from export.guards import SolverBridge
from export.inputs import Inputs
from export.program import SymshapeProgram, finish
from export.spec import Spec, dynamic_dim, from_constraints, from_dynamic_shapes, torch_dynamic_shapes, validate
from export.trace import Trace
from solver import HintMismatchError

__all__ = ["export", "traced", "dynamic_dim", "constrain_as_size", "constrain_as_value"]


def _as_module(f: Callable[..., Any]) -> torch.nn.Module:
    if isinstance(f, torch.nn.Module):
        return f
    if not callable(f):
        raise InputError(f"export needs an nn.Module, a function or a method, got {type(f).__name__}")
    sig = inspect.signature(f)

    class _Fn(torch.nn.Module):
        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return f(*args, **kwargs)

    _Fn.forward.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *sig.parameters.values()]
    )
    _Fn.__name__ = _Fn.__qualname__ = getattr(f, "__name__", "function")
    return _Fn()


def _spec_of(inputs: Inputs, constraints: Sequence[Any] | None, dynamic_shapes: Any) -> Spec:
    if constraints is not None and dynamic_shapes is not None:
        raise InputError("pass either constraints= (classic dynamic_dim API) or dynamic_shapes= (Dim API), not both")
    if constraints is not None:
        if not isinstance(constraints, (list, tuple)):
            raise InputError(f"constraints must be a list of dynamic_dim(...) constraints, got {type(constraints).__name__}")
        return from_constraints(inputs, constraints)
    if dynamic_shapes is not None:
        return from_dynamic_shapes(inputs, dynamic_shapes)
    return Spec("none", (), ())


def export(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    constraints: Sequence[Any] | None = None,
    dynamic_shapes: Any = None,
    strict: bool = False,
) -> SymshapeProgram:
    """Export ``f`` with every symbolic-shape decision made by symshape's solver.

    ``constraints`` takes the classic ``dynamic_dim`` API, ``dynamic_shapes`` torch's
    ``Dim`` API. Returns a real ``torch.export.ExportedProgram`` (a SymshapeProgram) whose
    ``range_constraints`` come from the solver, with ``equality_constraints`` and a
    ``symshape`` report. Raises ConstraintViolationError (with verified fixes) when the
    model needs more than the spec guarantees, DataDependentError for unguarded
    data-dependent branches, and InputError for a malformed spec, before any torch
    traceback.
    """
    if not isinstance(strict, bool):
        raise InputError(f"strict must be a bool, got {strict!r}")
    inputs = Inputs.bind(f, args, kwargs)
    spec = _spec_of(inputs, constraints, dynamic_shapes)
    return _run(f, args, kwargs, inputs, spec, strict, verify=True)


def traced(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    constraints: Sequence[Any] | None = None,
    dynamic_shapes: Any = None,
    strict: bool = False,
) -> tuple[ExportedProgram, Trace]:
    """Trace ``f`` as :func:`export` does, without judging: torch's program (its ranges
    untouched) and the frozen :class:`export.trace.Trace`. For tools and tests that study a
    trace (e.g. the ``>= 2`` policy, :func:`export.floor_policy.floor_policy`)."""
    inputs = Inputs.bind(f, args, kwargs)
    spec = _spec_of(inputs, constraints, dynamic_shapes)
    return _trace(f, args, kwargs, inputs, spec, strict)


def _trace(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any] | None, inputs: Inputs,
           spec: Spec, strict: bool) -> tuple[ExportedProgram, Trace]:
    """One routed torch.export trace; data-dependent failures become DataDependentError."""
    validate(spec, inputs)
    module = _as_module(f)
    bridge = SolverBridge(spec, inputs)
    torch_shapes = torch_dynamic_shapes(spec, inputs) if spec.decls else None
    captured = io.StringIO()
    with tc.route_shape_env(bridge):
        try:
            with contextlib.redirect_stderr(captured):
                ep = torch.export.export(module, args, kwargs, dynamic_shapes=torch_shapes, strict=strict)
        except ExportError:
            raise
        except HintMismatchError as e:
            raise InputError(str(e)) from None
        except Exception as e:  # noqa: BLE001 - translated into a user-facing error below
            translated = data_dependent_error(e, bridge.trace())
            if translated is not None:
                _replay_stderr(captured.getvalue(), drop=str(getattr(e, "partial_fx_graph", "")))
                raise translated from None
            _replay_stderr(captured.getvalue())
            raise
    _replay_stderr(captured.getvalue())
    return ep, bridge.trace(ep.range_constraints)


def _run(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any] | None, inputs: Inputs,
         spec: Spec, strict: bool, *, verify: bool) -> SymshapeProgram:
    ep, trace = _trace(f, args, kwargs, inputs, spec, strict)
    retry = None
    if verify:
        def rerun(new_args: tuple[Any, ...], new_kwargs: dict[str, Any] | None, new_spec: Spec) -> None:
            _check(f, new_args, new_kwargs, Inputs.bind(f, new_args, new_kwargs), new_spec, strict)

        retry = Retry(args, kwargs, rerun)
    error = violation_error(trace, retry)
    if error is not None:
        raise error
    return finish(ep, trace)


def _check(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any] | None, inputs: Inputs,
           spec: Spec, strict: bool) -> None:
    """A diagnosis re-export (fix verification, 0/1 probe): raises what :func:`export` would,
    without building the program (its final ranges), which no diagnosis reads."""
    _, trace = _trace(f, args, kwargs, inputs, spec, strict)
    error = violation_error(trace, None)
    if error is not None:
        raise error


def _replay_stderr(text: str, drop: str = "") -> None:
    """Pass on what torch printed while tracing, minus the partial graph it dumps on an
    error that symshape explains itself."""
    if drop:
        text = text.replace(drop, "").strip("\n")
    if text:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")


def _bridge_of(value: Any) -> SolverBridge | None:
    decider = tc.decider_of(value)
    return decider if isinstance(decider, SolverBridge) else None


def _constrain(value: Any, lo: int | None, hi: int | None, *, size: bool, what: str) -> None:
    if lo is not None and hi is not None and lo > hi:
        raise InputError(f"{what}(v, min={lo}, max={hi}): min > max")
    if not isinstance(value, torch.SymInt):
        if isinstance(value, int):  # eager / static: check now
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise RuntimeError(f"{what}: {value} is outside [{lo}, {hi}]")
            return
        raise InputError(f"{what} expects an int from .item() or a size, got {type(value).__name__}")
    bridge = _bridge_of(value)
    with bridge.declaring() if bridge is not None else contextlib.nullcontext():
        if size:
            torch._check(value >= 0)
        if lo is not None:
            torch._check(value >= lo)
        if hi is not None:
            torch._check(value <= hi)


def constrain_as_size(symbol: Any, min: int | None = None, max: int | None = None) -> None:  # noqa: A002
    """Declare that ``symbol`` (an ``.item()`` value used as a size) lies in ``[min, max]``
    (``min`` defaults to 0). The solver knows the range; the graph checks it at run time."""
    _constrain(symbol, 0 if min is None else min, max, size=True, what="constrain_as_size")


def constrain_as_value(symbol: Any, min: int | None = None, max: int | None = None) -> None:  # noqa: A002
    """Declare that ``symbol`` (an ``.item()`` value not used as a size) lies in ``[min, max]``."""
    _constrain(symbol, min, max, size=False, what="constrain_as_value")


