"""The user API: ``export``, ``dynamic_dim``, ``constrain_as_size``, ``constrain_as_value``."""

from __future__ import annotations

import contextlib
import inspect
import io
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.export import ExportedProgram

from export import _torch_compat as tc
from export.spec.classic import dynamic_dim, from_constraints
from export.diagnose.data_dependent import data_dependent_error
from export.diagnose.violations import violation_error
from export.fixes.suggested import Retry
from export.diagnose.dynamic_hints import specialized_error
from export.errors import ExportError, InputError, SymshapeWarning
from export.tracing.bridge import SolverBridge
from export.spec.inputs import Inputs, signature_of
from export.program.exported import SymshapeProgram, finish
from export.diagnose.probe import enlarged_inputs
from export.spec.dynamic_shapes import Spec, from_dynamic_shapes, resolve_dynamic_shapes, torch_dynamic_shapes, validate
from export.tracing.trace import Trace
from export.program.zero_one import zero_one
from shapes.errors import SpecError
from shapes.spec import InputDim
from solver import HintMismatchError

__all__ = ["export", "traced", "TorchOptions", "dynamic_dim", "constrain_as_size", "constrain_as_value"]


@dataclass(frozen=True, slots=True)
class TorchOptions:
    """The keywords of ``torch.export.export`` symshape passes through to torch as given:
    ``strict``, ``preserve_module_call_signature``,
    ``prefer_deferred_runtime_asserts_over_guards`` and any other keyword the installed
    torch's ``export`` takes (``extra``)."""

    strict: bool = False
    preserve_module_call_signature: tuple[str, ...] = ()
    prefer_deferred_runtime_asserts_over_guards: bool = False
    extra: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def of(strict: Any, preserve: Any, prefer_deferred: Any, extra: Mapping[str, Any]) -> TorchOptions:
        """Validated options (InputError for a wrong type or a keyword torch does not take).

        >>> TorchOptions.of(True, ("sub",), False, {}).as_kwargs()["preserve_module_call_signature"]
        ('sub',)
        >>> TorchOptions.of(False, (), False, {"fast": 1})
        Traceback (most recent call last):
        ...
        export.errors.InputError: export() got an unexpected keyword 'fast': torch.export.export takes ...
        """
        for name, v in (("strict", strict), ("prefer_deferred_runtime_asserts_over_guards", prefer_deferred)):
            if not isinstance(v, bool):
                raise InputError(f"{name} must be a bool, got {v!r}")
        if isinstance(preserve, str) or not isinstance(preserve, (tuple, list)) or \
                not all(isinstance(p, str) for p in preserve):
            raise InputError(f"preserve_module_call_signature must be a tuple of submodule names, got {preserve!r}")
        known = set(inspect.signature(torch.export.export).parameters) - set(_OWN_KEYWORDS)
        unknown = sorted(set(extra) - known)
        if unknown:
            raise InputError(f"export() got an unexpected keyword {unknown[0]!r}: torch.export.export takes "
                             f"{', '.join(sorted(known | set(_OWN_KEYWORDS)))}")
        return TorchOptions(strict, tuple(preserve), prefer_deferred, tuple(sorted(extra.items())))

    def as_kwargs(self) -> dict[str, Any]:
        return {"strict": self.strict, "preserve_module_call_signature": self.preserve_module_call_signature,
                "prefer_deferred_runtime_asserts_over_guards": self.prefer_deferred_runtime_asserts_over_guards,
                **dict(self.extra)}


_OWN_KEYWORDS = ("mod", "args", "kwargs", "dynamic_shapes", "strict", "preserve_module_call_signature",
                 "prefer_deferred_runtime_asserts_over_guards")


def _as_module(f: Callable[..., Any]) -> torch.nn.Module:
    if isinstance(f, torch.nn.Module):
        return f
    if not callable(f):
        raise InputError(f"export needs an nn.Module, a function or a method, got {type(f).__name__}")
    sig = signature_of(f)

    class _Fn(torch.nn.Module):
        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return f(*args, **kwargs)

    _Fn.forward.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *sig.parameters.values()]
    )
    _Fn.__name__ = _Fn.__qualname__ = getattr(f, "__name__", "function")
    return _Fn()


def _spec_of(inputs: Inputs, constraints: Sequence[Any] | None, dynamic_shapes: Any) -> Spec:
    if constraints is not None and dynamic_shapes is not None:
        raise InputError("pass either constraints= (classic dynamic_dim API) or dynamic_shapes= (Dim API), not both")
    try:
        if constraints is not None:
            if not isinstance(constraints, (list, tuple)):
                raise InputError(f"constraints must be a list of dynamic_dim(...) constraints, got {type(constraints).__name__}")
            return from_constraints(inputs, constraints)
        if dynamic_shapes is not None:
            return from_dynamic_shapes(inputs, dynamic_shapes)
    except SpecError as e:  # the core's own refusal, as the user-facing error
        raise InputError(str(e)) from None
    return Spec("none", (), ())


def _verify_additional(dynamic_shapes: Any, ep: ExportedProgram) -> None:
    """``AdditionalInputs.verify``, as torch.export runs it: every additional input must be
    accepted by the exported program (InputError naming the first that is not)."""
    if not isinstance(dynamic_shapes, torch.export.AdditionalInputs):
        return
    try:
        dynamic_shapes.verify(ep)
    except Exception as e:  # noqa: BLE001 - torch's check raises plain errors
        raise InputError(f"dynamic_shapes (AdditionalInputs): an additional input is not accepted by the "
                         f"exported program: {e}") from None


def export(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    constraints: Sequence[Any] | None = None,
    dynamic_shapes: Any = None,
    strict: bool = False,
    preserve_module_call_signature: tuple[str, ...] = (),
    prefer_deferred_runtime_asserts_over_guards: bool = False,
    **torch_options: Any,
) -> SymshapeProgram:
    """Export ``f`` with every symbolic-shape decision made by symshape's solver.

    ``constraints`` takes the classic ``dynamic_dim`` API, ``dynamic_shapes`` torch's
    ``Dim`` API. Returns a real ``torch.export.ExportedProgram`` (a SymshapeProgram) whose
    ``range_constraints`` come from the solver, with ``equality_constraints`` and a
    ``symshape`` report. Raises ConstraintViolationError (with verified fixes) when the
    model needs more than the spec guarantees, DataDependentError for unguarded
    data-dependent branches, and InputError for a malformed spec, before any torch
    traceback.

    ``dynamic_shapes`` takes every form ``torch.export.export`` takes (a dict or tuple
    pytree of ``Dim``, derived dims, ``Dim.AUTO/STATIC/DYNAMIC`` with bounds, ints and
    None; a ``ShapesCollection``; an ``AdditionalInputs``, whose inputs are verified
    against the program). ``strict``, ``preserve_module_call_signature``,
    ``prefer_deferred_runtime_asserts_over_guards`` and any other keyword of the installed
    ``torch.export.export`` are passed through to torch.
    """
    opts = TorchOptions.of(strict, preserve_module_call_signature, prefer_deferred_runtime_asserts_over_guards,
                           torch_options)
    inputs = Inputs.bind(f, args, kwargs)
    spec = _spec_of(inputs, constraints, resolve_dynamic_shapes(f, args, kwargs, dynamic_shapes))
    ep = _run(f, args, kwargs, inputs, spec, opts)
    _verify_additional(dynamic_shapes, ep)
    return ep


def traced(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    constraints: Sequence[Any] | None = None,
    dynamic_shapes: Any = None,
    strict: bool = False,
    **torch_options: Any,
) -> tuple[ExportedProgram, Trace]:
    """Trace ``f`` as :func:`export` does, without judging: torch's program (its ranges
    untouched) and the frozen :class:`export.tracing.trace.Trace`. For tools and tests that study a
    trace (e.g. the ``>= 2`` policy, :func:`export.program.floor_policy.floor_policy`)."""
    opts = TorchOptions.of(strict, torch_options.pop("preserve_module_call_signature", ()),
                           torch_options.pop("prefer_deferred_runtime_asserts_over_guards", False), torch_options)
    inputs = Inputs.bind(f, args, kwargs)
    spec = _spec_of(inputs, constraints, resolve_dynamic_shapes(f, args, kwargs, dynamic_shapes))
    return _trace(f, args, kwargs, inputs, spec, opts)


def _trace(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any] | None, inputs: Inputs,
           spec: Spec, opts: TorchOptions, *, keep_zero_one: bool = False) -> tuple[ExportedProgram, Trace]:
    """One routed torch.export trace; data-dependent failures become DataDependentError.
    ``keep_zero_one``: sizes 0/1 stay symbolic (a boundary re-trace)."""
    validate(spec, inputs)
    module = _as_module(f)
    bridge = SolverBridge(spec, inputs)
    torch_shapes = torch_dynamic_shapes(spec, inputs, tracing=True) if spec.decls else None
    captured = io.StringIO()
    with tc.route_shape_env(bridge, specialize_zero_one=not keep_zero_one), tc.decorator_resolved():
        try:
            with contextlib.redirect_stderr(captured):
                ep = torch.export.export(module, args, kwargs, dynamic_shapes=torch_shapes, **opts.as_kwargs())
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
         spec: Spec, opts: TorchOptions, *, diagnose: bool = True) -> SymshapeProgram:
    """Trace, judge (a ConstraintViolationError with its fixes, verified by re-exporting
    when ``diagnose``), and build the program with its 0/1 evidence."""
    ep, trace = _trace(f, args, kwargs, inputs, spec, opts)
    retry = _retry(f, args, kwargs, inputs, opts) if diagnose else None
    error = violation_error(trace, retry) or specialized_error(trace, retry)
    if error is not None:
        raise error

    def boundary(sizes: Mapping[InputDim, int]) -> tuple[ExportedProgram, Trace] | None:
        try:
            b_args, b_kwargs = enlarged_inputs(inputs, args, kwargs, sizes)
            return _trace(f, b_args, b_kwargs, Inputs.bind(f, b_args, b_kwargs), spec, opts, keep_zero_one=True)
        except Exception:  # noqa: BLE001 - no boundary trace, no evidence: the dim keeps its floor
            return None

    return finish(ep, trace, zero_one(trace, ep, boundary))


def _retry(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any] | None, inputs: Inputs,
           opts: TorchOptions) -> Retry:
    """How diagnosis re-exports ``f``: each re-export raises what :func:`export` would, or
    returns the program :func:`export` would (``build``), which a verified fix offers."""

    def rerun(new_args: tuple[Any, ...], new_kwargs: dict[str, Any] | None, new_spec: Spec,
              build: bool) -> SymshapeProgram | None:
        new_inputs = Inputs.bind(f, new_args, new_kwargs)
        if not build:
            _check(f, new_args, new_kwargs, new_inputs, new_spec, opts)
            return None
        with warnings.catch_warnings():  # the export failed: the program's notes are in its report
            warnings.simplefilter("ignore", SymshapeWarning)
            return _run(f, new_args, new_kwargs, new_inputs, new_spec, opts, diagnose=False)

    def parse(form: Any, classic: bool) -> Spec:
        if classic:
            return _spec_of(inputs, form, None)
        return _spec_of(inputs, None, resolve_dynamic_shapes(f, args, kwargs, form))

    return Retry(args, kwargs, rerun, parse)


def _check(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any] | None, inputs: Inputs,
           spec: Spec, opts: TorchOptions) -> None:
    """A diagnosis re-export that offers no program (a fix with checks): raises what
    :func:`export` would, without building the program (its final ranges and 0/1 evidence)."""
    _, trace = _trace(f, args, kwargs, inputs, spec, opts)
    error = violation_error(trace, None) or specialized_error(trace, None)
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


