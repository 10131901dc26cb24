"""The user API: ``export`` (and ``traced``, its trace without judging), ``dynamic_dim``,
``constrain_as_size``, ``constrain_as_value``. Each export is one :class:`export.exporter.Exporter`."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.export import ExportedProgram

from export import _torch_compat as tc
from export.errors import InputError, SymshapeWarning
from export.exporter import Exporter, spec_of
from export.larger_example import TRACE_LARGER
from export.program.exported import SymshapeProgram, amend
from export.program.refusals import CHECK
from export.spec.classic import dynamic_dim
from export.spec.dynamic_shapes import resolve_dynamic_shapes
from export.spec.inputs import Inputs
from export.spec.options import TorchOptions
from export.tracing.bridge import SolverBridge
from export.tracing.replay import REPLAY
from export.tracing.trace import Trace

__all__ = ["export", "traced", "TorchOptions", "dynamic_dim", "constrain_as_size", "constrain_as_value"]


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


def _note_copies(inputs: Inputs, ep: SymshapeProgram) -> None:
    """Say in ``ep``'s report, and as a SymshapeWarning, which inputs were traced with a copy
    (one tensor object passed twice, see :meth:`Inputs.example`)."""
    notes = tuple(f"{copy} is the same tensor object as {original} in the example: traced with a copy, so that "
                  f"the program reads {copy} on its own (torch.export would read {original} for both)"
                  for copy, original in inputs.copies)
    if notes:
        amend(ep, notes=notes)
    for note in notes:
        warnings.warn(note, SymshapeWarning, stacklevel=3)


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
    zero_one_examples: str = TRACE_LARGER,
    dim_relations: str = CHECK,
    fix_verification: str = REPLAY,
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

    ``zero_one_examples`` says what an example of size 0 or 1 on a dim declared dynamic
    (named or derived ``Dim``, ``Dim.AUTO/DYNAMIC``, classic ``dynamic_dim``) does, since
    torch never traces such a size dynamic:

    * ``"trace_larger"`` (default): trace once at a larger example built from yours (the
      data repeated along those dims, size 2 first) and return that dynamic program; it
      admits size 1 when its 0/1 evidence shows the program is right there (``[1, inf]``),
      else its range starts at 2. A SymshapeWarning (also in ``ep.symshape.warnings``)
      says what was traced and the range. When no larger example exports (the dim must
      broadcast, or equal another dim), your example is traced as given: the error then
      explains it (``Dim.AUTO``: the dim becomes static, with a warning).
    * ``"raise"``: torch's semantics: the dim is specialized and the export raises
      ConstraintViolationError (``Dim.AUTO``: static, with a warning); ``err.fixes``
      offers the static pin and ``err.fixes.larger_example_program``.

    ``dim_relations`` says what a relation between dims that no ``Dim`` can say does
    (``z.size(1) == x.size(1) + y.size(1)``, a product, ``M >= N``), as torch does:
    ``"check"`` (default) keeps it as a runtime check of the program when the spec plus such
    relations implies everything the model needs (``ep.symshape.checks``, one SymshapeWarning;
    ``ep.module()`` refuses an input that breaks one, in those words); ``"raise"`` makes it a
    ConstraintViolationError whose fix adds ``torch._check`` lines to the model. Ranges,
    equalities and divisibility a ``Dim`` can say are violations either way.

    ``fix_verification`` says how a suggested fix is verified: ``"replay"`` (default)
    replays the failing trace under the fixed spec where that is provably what a re-export
    would do (the fix only narrows the spec, on the same example, and changes no answer the
    trace got: :mod:`export.tracing.replay`), and re-exports elsewhere; ``"re-export"``
    always re-exports. ``err.fixes.program.symshape.stats["verified_by"]`` says which
    (``"replay"`` or ``"trace"``), ``err.stats["replays"]`` how many re-runs were replayed.

    >>> from torch.export import Dim
    >>> ep = export(torch.nn.Linear(4, 2), (torch.randn(1, 4),), dynamic_shapes={"input": {0: Dim("b")}})
    >>> ep.symshape.ranges, ep.symshape.warnings
    ({'input.size(0)': (1, None)}, ('input.size(0) = 1 in the example: traced at 2; the program admits input.size(0) in [1, inf]',))
    >>> ep.module()(torch.randn(5, 4)).shape
    torch.Size([5, 2])
    """
    opts = TorchOptions.of(strict, preserve_module_call_signature, prefer_deferred_runtime_asserts_over_guards,
                           torch_options)
    with tc.exclusive():  # one symshape export at a time per process (torch's tracing globals)
        exporter = Exporter.of(f, args, kwargs, opts, zero_one_examples=zero_one_examples, dim_relations=dim_relations,
                               fix_verification=fix_verification)
        spec = spec_of(exporter.inputs, constraints, resolve_dynamic_shapes(f, args, kwargs, dynamic_shapes))
        ep = exporter.run(spec)
        _note_copies(exporter.inputs, ep)
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
    with tc.exclusive():
        exporter = Exporter.of(f, args, kwargs, opts)
        spec = spec_of(exporter.inputs, constraints, resolve_dynamic_shapes(f, args, kwargs, dynamic_shapes))
        return exporter.trace(spec)


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


