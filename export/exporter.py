"""One export as a value, :class:`Exporter`: the function, its example inputs bound to its
signature and torch's options, whose methods are the steps of an export (``parse``, ``trace``,
``run``, ``check``; ``with_example`` for other example inputs). :func:`export.api.export` is
one call of it; diagnosis re-exports through it (:class:`export.fixes.suggested.ReExporter`)."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import inspect
import io
import logging
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.export import ExportedProgram

from export import _torch_compat as tc
from export.diagnose.data_dependent import data_dependent_error
from export.diagnose.dynamic_hints import specialized_error
from export.diagnose.kept import Kept, KeptMemo
from export.diagnose.model_error import model_error
from export.diagnose.probe import enlarged_inputs
from export.diagnose.violations import violation_error
from export.errors import (ConstraintViolationError, DataDependentError, ExportError, InconsistentDecisionError,
                           InputError, SymshapeWarning, TraceEnded)
from export.larger_example import TRACE_LARGER, check_larger, check_mode, run_larger, trace_stats
from export.program.exported import SymshapeProgram, amend, finish, report_of
from export.program.refusals import CHECK, check_relations_mode
from export.program.zero_one import zero_one
from export.spec.classic import from_constraints
from export.spec.dynamic_shapes import from_dynamic_shapes, resolve_dynamic_shapes, torch_dynamic_shapes, validate
from export.spec.inputs import Inputs, signature_of
from export.spec.options import TorchOptions
from export.tracing.bridge import SolverBridge
from export.tracing.trace import Trace
from shapes.errors import SpecError
from shapes.spec import InputDim, Spec
from solver import HintMismatchError

__all__ = ["Exporter", "spec_of"]

_log = logging.getLogger("symshape")
"""Progress of the steps that trace again (the CLI prints it; ``logging`` users may too)."""


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


def spec_of(inputs: Inputs, constraints: Sequence[Any] | None, dynamic_shapes: Any) -> Spec:
    """The Spec of ``constraints=`` (the classic ``dynamic_dim`` API) or ``dynamic_shapes=`` (torch's
    ``Dim`` API, resolved: :func:`export.spec.dynamic_shapes.resolve_dynamic_shapes`) for
    ``inputs``; InputError for both at once or a malformed spec."""
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


_FIRST_TRACE = "example"
_DIAGNOSIS_TRACE = "re-export (fix verification or 0/1 probe)"
_LAYOUT_TRACE = "again without layout-only branches (the program mutates a tensor)"


@dataclass(frozen=True, slots=True)
class Exporter:
    """One export as a value: ``f`` (the nn.Module or function exported), its example
    ``args``/``kwargs`` and their binding to ``f``'s signature (``inputs``), and the torch
    ``options``. Its methods are the steps of an export, through the packages in order:

    * :meth:`parse`: a user's ``constraints=`` / ``dynamic_shapes=`` form read into a Spec
      (``export.spec``);
    * :meth:`trace`: one routed torch.export trace, every guard asked of the solver, frozen
      into a Trace (``export.tracing``);
    * :meth:`run`: the trace judged, then on success the program with the solver's ranges
      and the ``>= 2`` floors its 0/1 evidence leaves (``export.program``, whose boundary
      re-traces are this exporter on a size-1 example); on failure the error
      (``export.diagnose``) with its fixes (``export.fixes``), verified and probed by
      re-exporting through this exporter: it is their
      :class:`export.fixes.suggested.ReExporter`;
    * :meth:`check`: what :meth:`run` raises, without building the program;
    * :meth:`with_example`: the same exporter on other example inputs (the probe's larger
      example, a boundary re-trace).

    >>> from torch.export import Dim
    >>> exporter = Exporter.of(lambda x: x[:, 5:] * 2, (torch.randn(2, 8),))
    >>> spec = exporter.parse({"x": {1: Dim("n", max=16)}}, classic=False)
    >>> exporter.check(spec)
    Traceback (most recent call last):
    ...
    export.errors.ConstraintViolationError: Constraints violated: ...
    >>> fixed = exporter.parse({"x": {1: Dim("n", min=6, max=16)}}, classic=False)
    >>> exporter.run(fixed).symshape.ranges
    {'x.size(1)': (6, 16)}
    >>> exporter.with_example((torch.randn(2, 12),), None).run(fixed).module()(torch.randn(2, 9)).shape
    torch.Size([2, 4])
    """

    f: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any] | None
    options: TorchOptions
    inputs: Inputs
    zero_one_examples: str = TRACE_LARGER
    dim_relations: str = CHECK
    traces: list[str] = field(default_factory=list, compare=False)
    """Why each trace of this export was made, in order (shared with :meth:`with_example`):
    a failed export's ``err.stats["traces"]`` / ``["trace_reasons"]``."""
    failures: dict[Any, tuple[Exception, bool, Trace | None]] = field(default_factory=dict, compare=False)
    """The errors already raised, by (spec, example sizes): the error, whether it is final
    (a violation's fixes verified, or no violation), and the trace it came from (shared
    with :meth:`with_example`). The 0/1 probe of a batch-1 export re-raises what the larger
    example raised instead of tracing it again, and a violation first judged without
    verifying its fixes is verified from its trace."""
    kept: KeptMemo = field(default_factory=KeptMemo, compare=False)
    """The relations kept as checks of the last trace judged (shared with :meth:`with_example`):
    a failing trace judged where it ends early is not judged again."""

    @staticmethod
    def of(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any] | None = None,
           options: TorchOptions | None = None, *, zero_one_examples: str = TRACE_LARGER,
           dim_relations: str = CHECK, traces: list[str] | None = None,
           failures: dict[Any, tuple[Exception, bool, Trace | None]] | None = None,
           kept: KeptMemo | None = None) -> Exporter:
        """``f`` on ``args``/``kwargs`` (InputError when they do not fit its signature);
        ``zero_one_examples`` and ``dim_relations`` as :func:`export` takes them."""
        mode = check_mode(zero_one_examples)  # before the inputs: a bad option is named first, as before
        relations = check_relations_mode(dim_relations)
        options = options or TorchOptions()
        args, kwargs, inputs = Inputs.example(f, args, kwargs)  # ints unwrapped, aliased tensors copied
        return Exporter(f, args, kwargs, options, inputs, mode, relations,
                        traces if traces is not None else [], failures if failures is not None else {},
                        kept if kept is not None else
                        KeptMemo(relations, options.prefer_deferred_runtime_asserts_over_guards))

    def with_example(self, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Exporter:
        """The same export (``f``, options) on other example inputs."""
        return Exporter.of(self.f, args, kwargs, self.options, zero_one_examples=self.zero_one_examples,
                           dim_relations=self.dim_relations, traces=self.traces, failures=self.failures,
                           kept=self.kept)

    def parse(self, form: Any, classic: bool) -> Spec:
        """The Spec :func:`export` builds from ``constraints=form`` (``classic``) or
        ``dynamic_shapes=form``."""
        if classic:
            return spec_of(self.inputs, form, None)
        return spec_of(self.inputs, None, resolve_dynamic_shapes(self.f, self.args, self.kwargs, form))

    def trace(self, spec: Spec, *, keep_zero_one: bool = False, early: bool = False,
              layout_branches: bool = True) -> tuple[ExportedProgram | None, Trace]:
        """One routed torch.export trace; data-dependent failures become DataDependentError.
        ``keep_zero_one``: sizes 0/1 stay symbolic (a boundary re-trace); ``early``: a trace
        that fails for a violation ends before torch builds its program (None).
        ``layout_branches``: an ``if`` that only chooses ``.contiguous()`` is no constraint
        (:mod:`export.tracing.layout_branch`); when one would have copied a tensor and the
        program's graph mutates a tensor, the trace is made again without that rule."""
        ep, trace = self._trace_once(spec, keep_zero_one, early, layout_branches)
        if ep is not None and trace.layout_copies and tc.graph_mutates(ep):
            _log.info("tracing again: a branch that only chooses .contiguous() copies a tensor the "
                      "program mutates")
            self.traces.append(_LAYOUT_TRACE)
            ep, trace = self._trace_once(spec, keep_zero_one, early, False, count=False)
        return ep, trace

    def _trace_once(self, spec: Spec, keep_zero_one: bool, early: bool, layout_branches: bool,
                    count: bool = True) -> tuple[ExportedProgram | None, Trace]:
        """:meth:`trace`, once (``count``: say why in :attr:`traces`)."""
        validate(spec, self.inputs)
        if count:
            self.traces.append(_FIRST_TRACE if not self.traces else
                               "boundary re-trace" if keep_zero_one else _DIAGNOSIS_TRACE)
        module = _as_module(self.f)
        bridge = SolverBridge(spec, self.inputs, fails=self.kept.fails if early else None,
                              layout_branches=layout_branches)
        torch_shapes = torch_dynamic_shapes(spec, self.inputs, tracing=True) if spec.decls else None
        captured = io.StringIO()
        with tc.route_shape_env(bridge, specialize_zero_one=not keep_zero_one), tc.decorator_resolved():
            try:
                with contextlib.redirect_stderr(captured):
                    ep = torch.export.export(module, self.args, self.kwargs, dynamic_shapes=torch_shapes,
                                             **self.options.as_kwargs())
            except TraceEnded as e:
                _replay_stderr(captured.getvalue())
                return None, e.trace
            except ExportError:
                raise
            except HintMismatchError as e:
                raise InputError(str(e)) from None
            except Exception as e:  # noqa: BLE001 - translated into a user-facing error below
                failed_trace = bridge.trace()
                translated = data_dependent_error(e, failed_trace)
                if translated is not None:
                    _replay_stderr(captured.getvalue(), drop=str(getattr(e, "partial_fx_graph", "")))
                    raise translated from None
                _replay_stderr(captured.getvalue())
                failed = model_error(e, failed_trace)  # None: raised inside symshape, a bug not to disguise
                if failed is None:
                    raise
                raise failed from e
        _replay_stderr(captured.getvalue())
        return ep, bridge.trace(ep.range_constraints)

    def run(self, spec: Spec, *, diagnose: bool = True) -> SymshapeProgram:
        """Trace, judge (a ConstraintViolationError with its fixes, verified by re-exporting
        when ``diagnose``), and build the program with its 0/1 evidence. A dim declared
        dynamic with an example of size 0/1 is traced at a larger example first
        (:mod:`export.larger_example`, unless ``zero_one_examples="raise"``). Its
        SymshapeWarnings point at the caller of :func:`export`."""
        caught: list[warnings.WarningMessage] = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                return self._run(spec, diagnose)
        except (ConstraintViolationError, DataDependentError) as e:
            e.stats.update(traces=len(self.traces), trace_reasons=dict(collections.Counter(self.traces)))
            raise
        finally:
            for w in caught:  # (_run's frames are symshape's: the user's line is 3 up from here)
                if issubclass(w.category, SymshapeWarning):
                    warnings.warn(w.message, w.category, stacklevel=3)
                else:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)

    def _run(self, spec: Spec, diagnose: bool) -> SymshapeProgram:
        """:meth:`run`, its warnings not yet re-emitted."""
        spent = 0
        if self.zero_one_examples == TRACE_LARGER:
            larger, spent = run_larger(self, spec, lambda e: e._run_here(spec, False),
                                       (lambda e: e._run_here(spec, True)) if diagnose else None)
            if larger is not None:
                return larger
        ep = self._run_here(spec, diagnose)
        amend(ep, stats=trace_stats({"example": 1, "larger example that gave no program": spent,
                                     "boundary re-trace": int(report_of(ep).stats.get("boundary_retraces", 0))}))
        return ep

    def _failure_key(self, spec: Spec) -> Any:
        """``spec`` on this example, as :attr:`failures` keys it."""
        return (spec, tuple((leaf.name, tuple(leaf.value.shape) if leaf.is_tensor else repr(leaf.value))
                            for leaf in self.inputs.leaves))

    def _raise_known(self, key: Any, diagnose: bool) -> None:
        """Raise what ``key`` raised before, if it did: a violation with verified fixes when
        ``diagnose`` asks for them (worked out now from its kept trace, not traced again)."""
        known = self.failures.get(key)
        if known is None:
            return
        error, verified, trace = known
        if not verified and diagnose and trace is not None:
            _, judged = self._judge(trace, diagnose=True)
            if judged is not None:
                self.failures[key] = (judged, True, trace)
                raise judged
        if verified or not diagnose:
            raise error

    def _judge(self, trace: Trace, *, diagnose: bool) -> tuple[Kept, ExportError | None]:
        """The relations kept as checks, and the error of ``trace`` (None: it gives a program);
        ``diagnose``: the error's fixes verified by re-exporting through this exporter."""
        exporter = self if diagnose else None
        kept = self.kept.of(trace)  # checks None: judge as violations
        error = (violation_error(trace, exporter, kept.fix, kept.causes) if kept.checks is None else None) or \
            specialized_error(trace, exporter)
        return kept, error

    def _trace_new(self, spec: Spec, diagnose: bool) -> tuple[Any, ExportedProgram | None, Trace]:
        """:meth:`trace` unless ``spec`` failed on this example before (then that is raised
        again, see :meth:`_raise_known`); a failure to trace is remembered. With the key."""
        key = self._failure_key(spec)
        self._raise_known(key, diagnose)
        try:
            ep, trace = self.trace(spec, early=True)
        except Exception as e:  # noqa: BLE001 - kept to be raised again, then raised
            self.failures[key] = (e, True, None)
            raise
        return key, ep, trace

    def _run_here(self, spec: Spec, diagnose: bool) -> SymshapeProgram:
        """:meth:`run` on this example as given (what failed before fails again untraced)."""
        key, ep, trace = self._trace_new(spec, diagnose)
        kept, error = self._judge(trace, diagnose=diagnose)
        if error is None and ep is None:  # ended early, yet no error (not expected): trace in full
            ep, trace = self.trace(spec)
            kept, error = self._judge(trace, diagnose=diagnose)
        if error is not None:
            self.failures[key] = (error, diagnose, trace)
            raise error
        if ep is None:
            raise InconsistentDecisionError("a trace that gives a program ended without one")
        return finish(ep, trace, zero_one(trace, ep, functools.partial(self._boundary, spec)), kept.checks or ())

    def check(self, spec: Spec) -> None:
        """A diagnosis re-export that offers no program (a fix with checks): raises what
        :meth:`run` would, without building the program (its final ranges and 0/1 evidence)."""
        if self.zero_one_examples == TRACE_LARGER and check_larger(self, spec, lambda e: e._check_here(spec)):
            return
        self._check_here(spec)

    def _check_here(self, spec: Spec) -> None:
        """:meth:`check` on this example as given (what failed before fails again untraced)."""
        key, _, trace = self._trace_new(spec, False)
        kept = self.kept.of(trace)
        error = violation_error(trace, None, kept.fix, kept.causes) or specialized_error(trace, None)
        if error is not None:
            self.failures[key] = (error, False, trace)
            raise error

    def _boundary(self, spec: Spec, sizes: Mapping[InputDim, int]) -> tuple[ExportedProgram, Trace] | None:
        """A boundary re-trace (:data:`export.program.zero_one.Boundary`): ``spec`` on the
        example with ``sizes``, 0/1 kept symbolic; None when it fails."""
        _log.info("re-tracing with sizes 0/1 kept symbolic (%s): does size 1 take the traced path?",
                  ", ".join(f"{d} = {n}" for d, n in sizes.items()))
        zero = {d for d, n in sizes.items() if n == 0}
        if zero:  # a Dim.DYNAMIC at an example of 0 is an error to torch: at the point it may specialize
            spec = dataclasses.replace(spec, decls=tuple(
                dataclasses.replace(x, mode="auto") if x.dim in zero else x for x in spec.decls))
        try:
            b_args, b_kwargs = enlarged_inputs(self.inputs, self.args, self.kwargs, sizes)
            ep, trace = self.with_example(b_args, b_kwargs).trace(spec, keep_zero_one=True)
        except Exception:  # noqa: BLE001 - no boundary trace, no evidence: the dim keeps its floor
            return None
        return None if ep is None else (ep, trace)


def _replay_stderr(text: str, drop: str = "") -> None:
    """Pass on what torch printed while tracing, minus the partial graph it dumps on an
    error that symshape explains itself."""
    if drop:
        text = text.replace(drop, "").strip("\n")
    if text:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
