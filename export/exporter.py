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
from export.diagnose.judgement import Judgement, error_of, judge
from export.diagnose.model_error import model_error
from export.diagnose.probe import enlarged_inputs
from export.errors import ConstraintViolationError, DataDependentError, ExportError, InputError, SymshapeWarning
from export.larger_example import TRACE_LARGER, check_larger, check_mode, run_larger, trace_stats
from export.program.exported import SymshapeProgram, amend, finish, report_of
from export.program.refusals import CHECK, check_relations_mode
from export.program.zero_one import zero_one
from export.spec.classic import from_constraints
from export.spec.dynamic_shapes import from_dynamic_shapes, resolve_dynamic_shapes, torch_dynamic_shapes, validate
from export.spec.inputs import Inputs, signature_of
from export.spec.options import TorchOptions
from export.tracing.bridge import SolverBridge
from export.tracing.replay import REPLAY, check_verify_mode, declared_ranges, replayed
from export.tracing.trace import Trace
from shapes.errors import SpecError
from shapes.spec import InputDim, Spec
from solver import HintMismatchError

__all__ = ["Exporter", "Failure", "Session", "spec_of"]

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
class Failure:
    """An error an export raised for a spec on an example: the ``error``, whether it is
    ``final`` (a violation's fixes verified, or no violation), and the ``judgement`` of the
    trace it came from (None: it failed to trace)."""

    error: Exception
    final: bool
    judgement: Judgement | None


@dataclass
class Session:
    """What one :func:`export.export` call builds up across its traces, shared by every
    :class:`Exporter` of it (:meth:`Exporter.with_example`): the only mutable part of an
    export, kept apart from the frozen :class:`Exporter`."""

    traces: list[str] = field(default_factory=list)
    """Why each trace was made, in order: a failed export's ``err.stats["traces"]`` /
    ``["trace_reasons"]``."""
    failures: dict[Any, Failure] = field(default_factory=dict)
    """The errors already raised, by (spec, example sizes). The 0/1 probe of a batch-1 export
    re-raises what the larger example raised instead of tracing it again, and a violation
    first judged without verifying its fixes is verified from its judgement."""
    unfinished: dict[Any, list[tuple[Trace, ExportedProgram]]] = field(default_factory=dict)
    """The traces that failed, with torch's program (not yet given the solver's ranges), by
    example sizes: a re-run under a narrower spec on that example replays one
    (:func:`export.tracing.replay.replayed`) instead of tracing again, and finishes its
    program (then it is taken out: a program is finished once)."""
    replays: int = 0
    """How many re-runs were replayed instead of traced (``err.stats["replays"]``)."""


@dataclass(frozen=True, slots=True)
class _Judged:
    """A spec judged on an example: the session's ``key``, torch's program ``ep`` and the
    ``judgement``; ``source``: the unfinished failing trace it was replayed from (None:
    traced)."""

    key: Any
    ep: ExportedProgram
    judgement: Judgement
    source: tuple[Trace, ExportedProgram] | None = None


@dataclass(frozen=True, slots=True)
class Exporter:
    """One export as a value: ``f`` (the nn.Module or function exported), its example
    ``args``/``kwargs`` and their binding to ``f``'s signature (``inputs``), the torch
    ``options`` and symshape's; its :class:`Session` holds what the export's traces build
    up. Its methods are the steps of an export, through the packages in order:

    * :meth:`parse`: a user's ``constraints=`` / ``dynamic_shapes=`` form read into a Spec
      (``export.spec``);
    * :meth:`trace`: one routed torch.export trace, every guard asked of the solver, frozen
      into a Trace (``export.tracing``);
    * :meth:`judge`: the trace's one judgement, after the trace
      (:mod:`export.diagnose.judgement`);
    * :meth:`run`: traced and judged, then on success the program with the solver's ranges
      and the ``>= 2`` floors its 0/1 evidence leaves (``export.program``, whose boundary
      re-traces are :meth:`boundary_trace`); on failure the error (``export.diagnose``)
      with its fixes (``export.fixes``), verified and probed by re-exporting through this
      exporter: it is their :class:`export.fixes.suggested.ReExporter`;
    * :meth:`check`: what :meth:`run` raises, without building the program;
    * :meth:`with_example`: the same export on other example inputs (the probe's larger
      example, a boundary re-trace); :meth:`run_as_given` / :meth:`check_as_given`: run and
      check on this example exactly (what :mod:`export.larger_example` calls).

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
    fix_verification: str = REPLAY
    session: Session = field(default_factory=Session, compare=False)

    @staticmethod
    def of(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any] | None = None,
           options: TorchOptions | None = None, *, zero_one_examples: str = TRACE_LARGER,
           dim_relations: str = CHECK, fix_verification: str = REPLAY, session: Session | None = None) -> Exporter:
        """``f`` on ``args``/``kwargs`` (InputError when they do not fit its signature);
        ``zero_one_examples``, ``dim_relations`` and ``fix_verification`` as :func:`export`
        takes them; ``session``: the export this one is part of (default: a new one)."""
        mode = check_mode(zero_one_examples)  # before the inputs: a bad option is named first, as before
        relations = check_relations_mode(dim_relations)
        verification = check_verify_mode(fix_verification)
        options = options or TorchOptions()
        args, kwargs, inputs = Inputs.example(f, args, kwargs)  # ints unwrapped, aliased tensors copied
        return Exporter(f, args, kwargs, options, inputs, mode, relations, verification,
                        session if session is not None else Session())

    def with_example(self, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Exporter:
        """The same export (``f``, options, session) on other example inputs."""
        return Exporter.of(self.f, args, kwargs, self.options, zero_one_examples=self.zero_one_examples,
                           dim_relations=self.dim_relations, fix_verification=self.fix_verification,
                           session=self.session)

    def parse(self, form: Any, classic: bool) -> Spec:
        """The Spec :func:`export` builds from ``constraints=form`` (``classic``) or
        ``dynamic_shapes=form``."""
        if classic:
            return spec_of(self.inputs, form, None)
        return spec_of(self.inputs, None, resolve_dynamic_shapes(self.f, self.args, self.kwargs, form))

    def trace(self, spec: Spec, *, keep_zero_one: bool = False,
              layout_branches: bool = True) -> tuple[ExportedProgram, Trace]:
        """One routed torch.export trace; data-dependent failures become DataDependentError.
        ``keep_zero_one``: sizes 0/1 stay symbolic (a boundary re-trace).
        ``layout_branches``: an ``if`` that only chooses ``.contiguous()`` is no constraint
        (:mod:`export.tracing.layout_branch`); when one would have copied a tensor and the
        program's graph mutates a tensor, the trace is made again without that rule."""
        ep, trace = self._trace_once(spec, keep_zero_one, layout_branches)
        if trace.layout_copies and tc.graph_mutates(ep):
            _log.info("tracing again: a branch that only chooses .contiguous() copies a tensor the "
                      "program mutates")
            self.session.traces.append(_LAYOUT_TRACE)
            ep, trace = self._trace_once(spec, keep_zero_one, False, count=False)
        return ep, trace

    def _trace_once(self, spec: Spec, keep_zero_one: bool, layout_branches: bool,
                    count: bool = True) -> tuple[ExportedProgram, Trace]:
        """:meth:`trace`, once (``count``: say why in the session's traces)."""
        validate(spec, self.inputs)
        traces = self.session.traces
        if count:
            traces.append(_FIRST_TRACE if not traces else "boundary re-trace" if keep_zero_one else _DIAGNOSIS_TRACE)
        module = _as_module(self.f)
        bridge = SolverBridge(spec, self.inputs, layout_branches=layout_branches)
        torch_shapes = torch_dynamic_shapes(spec, self.inputs, tracing=True) if spec.decls else None
        captured = io.StringIO()
        with tc.route_shape_env(bridge, specialize_zero_one=not keep_zero_one), tc.decorator_resolved():
            try:
                with contextlib.redirect_stderr(captured):
                    ep = torch.export.export(module, self.args, self.kwargs, dynamic_shapes=torch_shapes,
                                             **self.options.as_kwargs())
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

    def judge(self, trace: Trace) -> Judgement:
        """The one judgement of ``trace`` under this export's ``dim_relations`` and torch's
        deferral option (:func:`export.diagnose.judgement.judge`)."""
        return judge(trace, self.dim_relations, self.options.prefer_deferred_runtime_asserts_over_guards)

    def run(self, spec: Spec, *, diagnose: bool = True) -> SymshapeProgram:
        """Trace, judge (a ConstraintViolationError with its fixes, verified by re-exporting
        when ``diagnose``), and build the program with its 0/1 evidence. A dim declared
        dynamic with an example of size 0/1 is traced at a larger example first
        (:mod:`export.larger_example`, unless ``zero_one_examples="raise"``). Its
        SymshapeWarnings point at the caller of :func:`export`."""
        caught: list[warnings.WarningMessage] = []
        traces = self.session.traces
        try:
            with warnings.catch_warnings(record=True) as caught:
                return self._run(spec, diagnose)
        except (ConstraintViolationError, DataDependentError) as e:
            e.stats.update(traces=len(traces), trace_reasons=dict(collections.Counter(traces)),
                           replays=self.session.replays)
            raise
        finally:
            for w in caught:  # (_run's frames are symshape's: the user's line is 3 up from here)
                if issubclass(w.category, SymshapeWarning):
                    warnings.warn(w.message, w.category, stacklevel=3)
                else:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)

    def _run(self, spec: Spec, diagnose: bool) -> SymshapeProgram:
        """:meth:`run`, its warnings not yet re-emitted; the program's report completed here,
        once (the larger example's notes, the traces made)."""
        spent = 0
        if self.zero_one_examples == TRACE_LARGER:
            larger = run_larger(self, spec, diagnose)
            if larger.program is not None:
                amend(larger.program, notes=larger.notes, stats=trace_stats(_own_trace(larger.program, larger.traces)))
                return larger.program
            spent = larger.spent
        ep = self.run_as_given(spec, diagnose=diagnose)
        amend(ep, stats=trace_stats(_own_trace(ep, {
            "example": 1, "larger example that gave no program": spent,
            "boundary re-trace": int(report_of(ep).stats.get("boundary_retraces", 0))})))
        return ep

    def _failure_key(self, spec: Spec) -> Any:
        """``spec`` on this example, as the session's failures key it."""
        return (spec, tuple((leaf.name, tuple(leaf.value.shape) if leaf.is_tensor else repr(leaf.value))
                            for leaf in self.inputs.leaves))

    def _raise_known(self, key: Any, diagnose: bool) -> None:
        """Raise what ``key`` raised before, if it did: a violation with verified fixes when
        ``diagnose`` asks for them (worked out now from its judgement, not traced again)."""
        known = self.session.failures.get(key)
        if known is None:
            return
        if not known.final and diagnose and known.judgement is not None:
            error = error_of(known.judgement, self)
            if error is not None:
                self.session.failures[key] = Failure(error, True, known.judgement)
                raise error
        if known.final or not diagnose:
            raise known.error

    def _judged(self, spec: Spec, diagnose: bool) -> _Judged:
        """:meth:`trace` and :meth:`judge` unless ``spec`` failed on this example before (then
        that is raised again, see :meth:`_raise_known`), or a trace that failed on this example
        replays under ``spec`` (:func:`export.tracing.replay.replayed`; not with
        ``fix_verification="re-export"``). A failure to trace is remembered, and a failing
        trace kept unfinished for a replay."""
        key = self._failure_key(spec)
        self._raise_known(key, diagnose)
        candidates = self.session.unfinished.get(key[1], []) if self.fix_verification == REPLAY else []
        if candidates:
            validate(spec, self.inputs)  # (a trace validates it itself)
            for source in reversed(candidates):
                again = replayed(source[0], spec)
                if again is not None:
                    _log.info("replaying the failing trace under the narrower spec (no second trace)")
                    self.session.replays += 1
                    return _Judged(key, source[1], self.judge(again), source)
        try:
            ep, trace = self.trace(spec)
        except Exception as e:  # noqa: BLE001 - kept to be raised again, then raised
            self.session.failures[key] = Failure(e, True, None)
            raise
        judged = _Judged(key, ep, self.judge(trace))
        if judged.judgement.fails:
            self.session.unfinished.setdefault(key[1], []).append((trace, ep))
        return judged

    def _raise_failing(self, key: Any, judgement: Judgement, diagnose: bool) -> None:
        """Raise the error of ``judgement`` (if it fails), remembered in the session under
        ``key``; ``diagnose``: its fixes verified by re-exporting through this exporter (then
        it is final)."""
        error = error_of(judgement, self if diagnose else None)
        if error is not None:
            self.session.failures[key] = Failure(error, diagnose, judgement)
            raise error

    def run_as_given(self, spec: Spec, *, diagnose: bool = True) -> SymshapeProgram:
        """:meth:`run` on this example as given, no larger example (what failed before fails
        again untraced)."""
        judged = self._judged(spec, diagnose)
        judgement = judged.judgement
        self._raise_failing(judged.key, judgement, diagnose)
        trace, ep = judgement.trace, judged.ep
        if judged.source is not None:  # its program is finished now: no other replay may take it
            self.session.unfinished[judged.key[1]].remove(judged.source)
            tc.drop_static_guards(ep, declared_ranges(trace), declared_ranges(judged.source[0]))  # (what its ranges decide)
        program = finish(ep, trace, zero_one(trace, ep, functools.partial(self.boundary_trace, spec)), judgement.kept)
        amend(program, stats={"verified_by": "trace" if judged.source is None else "replay"})
        return program

    def check(self, spec: Spec) -> None:
        """A diagnosis re-export that offers no program (a fix with checks): raises what
        :meth:`run` would, without building the program (its final ranges and 0/1 evidence)."""
        if self.zero_one_examples == TRACE_LARGER and check_larger(self, spec):
            return
        self.check_as_given(spec)

    def check_as_given(self, spec: Spec) -> None:
        """:meth:`check` on this example as given (what failed before fails again untraced)."""
        judged = self._judged(spec, False)
        self._raise_failing(judged.key, judged.judgement, False)

    def boundary_trace(self, spec: Spec, sizes: Mapping[InputDim, int]) -> tuple[ExportedProgram, Trace] | None:
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
            return self.with_example(b_args, b_kwargs).trace(spec, keep_zero_one=True)
        except Exception:  # noqa: BLE001 - no boundary trace, no evidence: the dim keeps its floor
            return None


def _own_trace(program: SymshapeProgram, reasons: Mapping[str, int]) -> dict[str, int]:
    """``reasons`` (why -> traces, the program's own first) without the program's own trace
    when its trace was replayed (``stats["verified_by"] == "replay"``)."""
    if report_of(program).stats.get("verified_by") != "replay":
        return dict(reasons)
    first = next(iter(reasons))
    return {**reasons, first: 0}


def _replay_stderr(text: str, drop: str = "") -> None:
    """Pass on what torch printed while tracing, minus the partial graph it dumps on an
    error that symshape explains itself."""
    if drop:
        text = text.replace(drop, "").strip("\n")
    if text:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
