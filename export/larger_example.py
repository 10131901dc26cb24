"""One call, one right program for an example of size 0 or 1 on a dim declared dynamic.

torch never keeps a size-0/1 example dynamic: it specializes the dim before any guard is
asked, so ``export(model, (x_batch1,), dynamic_shapes={"x": {0: Dim("b")}})`` fails (torch
raises; so did symshape, with the static pin as its first fix). With
``zero_one_examples="trace_larger"`` (the default of :func:`export.export`) the export traces
*once* at a larger example built from the user's (:func:`export.diagnose.probe.enlarged_inputs`:
the data repeated along those dims; the sizes of :func:`export.diagnose.probe.candidate_sizes`,
2 first), and the 0/1 evidence of that trace (:mod:`export.program.zero_one`) decides whether
the program admits size 1: ``[1, inf]`` when the general program is right there, ``[2, inf]``
when a decision takes another path at 1 (the warning names its line). Size 0 is admitted
on the same evidence, for ``Dim.AUTO`` / ``Dim.DYNAMIC`` dims only. A :class:`export.errors.SymshapeWarning` (also
in ``ep.symshape.warnings``) says what was done; ``ep.symshape.stats["traces"]`` counts the
traces and ``stats["trace_reasons"]`` says why each was made.

When no larger example gives the program, the export falls back to the user's example as
given (what ``zero_one_examples="raise"`` always does): torch's 0/1 specialization, the error
with the probe's explanation (a broadcast against another dim is named), or for ``Dim.AUTO``
the static dim with its warning. The larger trace's own error is raised instead when none of
its causes involves the enlarged dims (another guard the spec must state: its fixes keep the
batch dynamic, and re-exporting with them traces at the larger example again).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from export.diagnose.probe import candidate_sizes, enlarged_inputs
from export.errors import ConstraintViolationError, SymshapeWarning
from export.fixes.suggested import SuggestedFixes
from export.program.exported import SymshapeProgram, amend, report_of
from export.spec.inputs import Inputs
from export.spec.options import one_of
from shapes.affine import Affine
from shapes.errors import SpecError
from shapes.ranges import range_text
from shapes.spec import DimDecl, InputDim, Spec

__all__ = ["MODES", "TRACE_LARGER", "RAISE", "Larger", "check_mode", "zero_one_dims", "run_larger", "check_larger",
           "trace_stats"]

_log = logging.getLogger("symshape")
"""Progress of the steps that trace again (the CLI prints it; ``logging`` users may too)."""

TRACE_LARGER = "trace_larger"
RAISE = "raise"
MODES = (TRACE_LARGER, RAISE)
"""The values of ``export(..., zero_one_examples=...)``."""

E = TypeVar("E", bound="LargerExporter")
T = TypeVar("T")


class LargerExporter(Protocol):
    """What this module needs of :class:`export.exporter.Exporter`: the example, the same
    export on other example inputs, and its run and check on an example exactly as given."""

    @property
    def inputs(self) -> Inputs: ...

    @property
    def args(self) -> tuple[Any, ...]: ...

    @property
    def kwargs(self) -> dict[str, Any] | None: ...

    def with_example(self: E, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> E: ...

    def run_as_given(self, spec: Spec, *, diagnose: bool = True) -> SymshapeProgram: ...

    def check_as_given(self, spec: Spec) -> None: ...


def check_mode(mode: Any) -> str:
    """``mode`` when it is one of :data:`MODES`, else InputError.

    >>> check_mode("raise")
    'raise'
    >>> check_mode("larger")
    Traceback (most recent call last):
    ...
    export.errors.InputError: zero_one_examples must be 'trace_larger' or 'raise', got 'larger'
    """
    return one_of("zero_one_examples", mode, MODES)


def _declared_lo(spec: Spec, decl: DimDecl) -> int:
    """The lower end of ``decl``'s declared range (0 for a derived dim: its root decides)."""
    if decl.expr is None:
        return decl.lo or 0
    syms = list(decl.expr.free_symbols)
    if len(syms) == 1 and decl.expr == syms[0]:
        return spec.root(str(syms[0])).lo or 0
    return 0


def zero_one_dims(spec: Spec, inputs: Inputs) -> list[InputDim]:
    """The declared dims (any form: named, derived, AUTO, DYNAMIC, classic) whose example size
    is 0 or 1 and whose declared range starts at 2 or below: only torch's 0/1 rule keeps them
    from being traced dynamic.

    >>> import torch
    >>> from shapes.spec import DimDecl
    >>> spec = Spec("modern", (), (DimDecl(InputDim("x", 0), "auto", None, "Dim.AUTO"),
    ...                            DimDecl(InputDim("x", 1), "auto", None, "Dim.AUTO")))
    >>> [str(d) for d in zero_one_dims(spec, Inputs.bind(lambda x: x, (torch.randn(1, 3),), None))]
    ['x.size(0)']
    """
    usable = [decl for decl in spec.decls
              if _declared_lo(spec, decl) <= 2 and (not decl.dim.is_value or decl.dim.input_name in inputs.bound)]
    small = [decl for decl in usable if inputs.size(decl.dim) in (0, 1)]
    roots = {s for decl in small if decl.expr is not None for s in decl.expr.free_symbols}
    derived = []
    for decl in usable:
        if decl in small or decl.expr is None or decl.expr.free_symbols <= roots:
            continue  # 0/1 itself, a hint, or its root enlarged already
        if _root_at_zero_one(spec, decl, inputs.size(decl.dim)):
            derived.append(decl)
            roots |= decl.expr.free_symbols
    return [decl.dim for decl in spec.decls if decl in small or decl in derived]


def _root_at_zero_one(spec: Spec, decl: DimDecl, size: int) -> bool:
    """Whether ``decl`` is derived (``3 * _K``) and the example puts its root at 0 or 1
    (``x.size(1) = 3``: ``_K = 1``), a root whose declared range starts at 2 or below: a
    guard on the root's 0/1 value (``x.size(1) // 3 == 1`` in ``view(b, -1, 3)``) would pin it.

    >>> from shapes.spec import DimDecl, RootDim
    >>> k = RootDim("_K", 1, None, "Dim('_K', min=1)")
    >>> decl = DimDecl(InputDim("x", 1), "dynamic", 3 * k.symbol, "3*_K")
    >>> spec = Spec("modern", (k,), (decl,))
    >>> _root_at_zero_one(spec, decl, 3), _root_at_zero_one(spec, decl, 6)
    (True, False)
    """
    if decl.expr is None or len(decl.expr.free_symbols) != 1:
        return False
    form = Affine.of(decl.expr)
    if form is None or (form.a, form.b) == (1, 0):
        return False
    value = form.solve(size)
    root_lo = spec.root(form.root.name).lo
    return value in (0, 1) and (root_lo is None or root_lo <= 2)


@dataclass(frozen=True)
class _Done:
    """What the larger examples gave: ``result`` of the step that passed (None: none did),
    the ``sizes`` it traced with, and the number of larger examples that ``failed``."""

    result: Any
    sizes: Mapping[InputDim, int]
    failed: int


def _at_larger(exporter: E, spec: Spec, dims: list[InputDim], step: Callable[[E], T],
               diagnosed: Callable[[E], T] | None = None) -> _Done:
    """``step`` on ``exporter`` at the first candidate larger example it passes (result None
    when none passes: the caller falls back to the example as given). A
    ConstraintViolationError none of whose causes involves the enlarged dims is raised (with
    a note on the sizes), as ``diagnosed`` raises it when given (``step`` then skips the
    fix's verification: an error the fallback replaces costs no verification traces)."""
    failed = 0
    for sizes in candidate_sizes(spec, exporter.inputs, dims):
        if any(n in (0, 1) for n in sizes.values()):
            continue  # a derived dim at 0/1 again: not a larger example
        try:
            args, kwargs = enlarged_inputs(exporter.inputs, exporter.args, exporter.kwargs, sizes)
            larger = exporter.with_example(args, kwargs)
        except Exception:  # noqa: BLE001 - an example that cannot be built is skipped
            continue
        _log.info("%s in the example: tracing at a larger one (%s)",
                  ", ".join(f"{d} = {exporter.inputs.size(d)}" for d in dims),
                  ", ".join(f"{d} = {n}" for d, n in sizes.items()))
        try:
            return _Done(step(larger), sizes, failed)
        except ConstraintViolationError as e:
            if not _fix_keeps(e, sizes, exporter.inputs):
                return _Done(None, sizes, failed + 1)  # the enlarged dims are at fault: the example explains it
            error = e
        except Exception:  # noqa: BLE001 - the model cannot run this example: the next size, or fall back
            failed += 1
            continue
        if diagnosed is not None:
            try:
                return _Done(diagnosed(larger), sizes, failed)
            except ConstraintViolationError as e:
                error = e
        error.args = (f"{error}\n\n{_traced_at(sizes, exporter.inputs)}",)
        _note_offered(error, sizes, exporter.inputs)
        raise error
    return _Done(None, {}, failed)


def _fix_keeps(e: ConstraintViolationError, sizes: Mapping[InputDim, int], inputs: Inputs) -> bool:
    """Whether the larger example's error is about other dims: its fix keeps every enlarged
    dim declared, and the fixed spec takes the user's own example (re-exporting with it traces
    at the larger example again). Else (a broadcast, an equality with a dim of another
    example size, a static pin) the example as given explains the error better."""
    fixes = e.fixes
    if not isinstance(fixes, SuggestedFixes) or not e.causes:
        return False
    fixed = fixes.fixed.spec
    if any(fixed.decl(d) is None for d in sizes):
        return False
    try:
        fixed.validate(inputs.size)
    except SpecError:
        return False
    return True


def _note_offered(error: ConstraintViolationError, sizes: Mapping[InputDim, int], inputs: Inputs) -> None:
    """Give the program the larger example's error offers (its fix's, verified at the larger
    example) the notes that a re-export with the fix on the user's own example gives it: that
    re-export traces at the same larger example, and says so."""
    fixes = error.fixes
    if not isinstance(fixes, SuggestedFixes) or fixes.program is None:
        return
    program = fixes.program
    fixed = fixes.fixed.spec
    amend(program, notes=_notes(program, fixed, [d for d in zero_one_dims(fixed, inputs) if d in sizes], inputs, sizes))


def _notes(ep: SymshapeProgram, spec: Spec, dims: list[InputDim], inputs: Inputs,
           sizes: Mapping[InputDim, int]) -> tuple[str, ...]:
    """The notes of a program traced at the larger example ``sizes`` for the 0/1 ``dims`` of
    ``inputs`` (:func:`_note` each, merged across the dims of one ``Dim``)."""
    return merged_notes([(str(d), _note(ep, spec, d, inputs.size(d), sizes[d])) for d in dims])


def _traced_at(sizes: Mapping[InputDim, int], inputs: Inputs) -> str:
    moved = ", ".join(f"{d} = {n} (example {inputs.size(d)})" for d, n in sizes.items() if inputs.size(d) != n)
    return (f"(traced at a larger example, {moved}: torch never traces sizes 0 and 1 dynamic; "
            "zero_one_examples='raise' traces the example as given)")


@dataclass(frozen=True)
class Larger:
    """What :func:`run_larger` gave: the ``program`` traced at a larger example (None: none,
    the caller exports the example as given), the ``notes`` its report and warnings carry,
    the ``traces`` it made (why -> how many), and the traces ``spent`` without a program."""

    program: SymshapeProgram | None
    notes: tuple[str, ...] = ()
    traces: Mapping[str, int] = field(default_factory=dict)
    spent: int = 0


def run_larger(exporter: LargerExporter, spec: Spec, diagnose: bool) -> Larger:
    """The program :meth:`LargerExporter.run_as_given` builds at a larger example when
    ``spec`` declares a dim dynamic whose example size is 0/1 (:func:`zero_one_dims`), with
    its notes (warned here) and trace counts (the caller puts both in the report); no
    program when there is no such dim, or no larger example gives a program that keeps it (a
    ``Dim.AUTO`` dim must also admit its example size: AUTO may be static instead). Fixes
    are verified (``diagnose``) only for the error that is raised (see :func:`_at_larger`)."""
    dims = zero_one_dims(spec, exporter.inputs)
    if not dims:
        return Larger(None)

    def run(e: LargerExporter) -> SymshapeProgram:
        return e.run_as_given(spec, diagnose=False)

    def diagnosed(e: LargerExporter) -> SymshapeProgram:
        return e.run_as_given(spec, diagnose=True)

    with warnings.catch_warnings(record=True) as caught:  # a program not returned warns of nothing
        done = _at_larger(exporter, spec, dims, run, diagnosed if diagnose else None)
    if done.result is None:
        _reemit(caught, keep_symshape=False)
        return Larger(None, spent=done.failed)
    ep: SymshapeProgram = done.result
    ranges = report_of(ep).ranges
    inputs = exporter.inputs
    boundary = int(report_of(ep).stats.get("boundary_retraces", 0))
    for d in dims:
        decl = spec.decl(d)
        lo, hi = ranges.get(str(d), (None, None))
        n = inputs.size(d)
        if decl is not None and decl.mode == "auto" and not ((lo is None or lo <= n) and (hi is None or n <= hi)):
            _reemit(caught, keep_symshape=False)
            return Larger(None, spent=done.failed + 1 + boundary)
    notes = _notes(ep, spec, dims, inputs, done.sizes)
    moved = ", ".join(f"{d} = {n}" for d, n in done.sizes.items())
    _reemit(caught, keep_symshape=True)
    for note in notes:
        warnings.warn(note, SymshapeWarning, stacklevel=2)
    return Larger(ep, notes, {f"larger example ({moved})": 1, "larger example the model could not run": done.failed,
                              "boundary re-trace": boundary})


def _reemit(caught: list[warnings.WarningMessage], *, keep_symshape: bool) -> None:
    """Warn again what a larger example's export warned (its SymshapeWarnings only when
    its program is the one returned)."""
    for w in caught:
        if keep_symshape or not issubclass(w.category, SymshapeWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def check_larger(exporter: LargerExporter, spec: Spec) -> bool:
    """Whether :meth:`LargerExporter.check_as_given` passed at a larger example
    (:func:`run_larger` without the program); False: there is no 0/1 dim, or the caller
    checks the example as given."""
    def passed(e: LargerExporter) -> bool:
        e.check_as_given(spec)
        return True

    dims = zero_one_dims(spec, exporter.inputs)
    return bool(dims) and bool(_at_larger(exporter, spec, dims, passed).result)


def trace_stats(reasons: Mapping[str, int]) -> dict[str, Any]:
    """``stats`` entries for the traces an export made: ``traces`` (their number) and
    ``trace_reasons`` (why -> how many; reasons with none left out).

    >>> trace_stats({"example": 1, "boundary re-trace": 0})
    {'traces': 1, 'trace_reasons': {'example': 1}}
    """
    kept = {why: n for why, n in reasons.items() if n}
    return {"traces": sum(kept.values()), "trace_reasons": kept}


def merged_notes(notes: list[tuple[str, str]]) -> tuple[str, ...]:
    """One note per group of dims whose notes say the same of each (the dims of one ``Dim``
    across inputs): ``(dim text, note)`` pairs, the dims named once, then "each".

    >>> merged_notes([("x.size(0)", "x.size(0) = 1: the program admits x.size(0) in [1, inf]"),
    ...               ("m.size(0)", "m.size(0) = 1: the program admits m.size(0) in [1, inf]"),
    ...               ("x.size(1)", "x.size(1) = 1: the program admits x.size(1) in [2, inf]")])
    ('x.size(0), m.size(0) = 1: the program admits each in [1, inf]', 'x.size(1) = 1: the program admits x.size(1) in [2, inf]')
    """
    groups: dict[str, list[str]] = {}
    for dim, note in notes:
        groups.setdefault(note.replace(dim, "\0"), []).append(dim)
    out = []
    for template, dims in groups.items():
        if len(dims) == 1:
            out.append(template.replace("\0", dims[0]))
        else:
            out.append(template.replace("\0", ", ".join(dims), 1).replace("\0", "each"))
    return tuple(out)


def _note(ep: SymshapeProgram, spec: Spec, d: InputDim, n: int, traced: int) -> str:
    """The warning for one 0/1 dim: what was traced, the range the program admits, and why
    the example size is refused when it is."""
    lo, hi = report_of(ep).ranges.get(str(d), (None, None))
    text = f"{d} = {n} in the example: traced at {traced}; the program admits {d} in {range_text(lo, hi)}"
    if (lo is None or lo <= n) and (hi is None or n <= hi):
        return text
    decl = spec.decl(d)
    if n == 0:
        return text + ("; size 0 is refused (torch's size symbols are positive: symshape admits size 0 only on "
                       "the evidence of a re-trace at 0, for Dim.AUTO / Dim.DYNAMIC dims)")
    names = {str(d)} | ({str(s) for s in decl.expr.free_symbols} if decl is not None and decl.expr is not None else set())
    kept = [e for e in report_of(ep).zero_one if e.kind == "kept" and e.dim in names]
    if kept:
        return text + f"; size 1 is refused: {kept[0].rel} takes another path at {kept[0].site} ({kept[0].why})"
    if decl is not None and _declared_lo(spec, decl) > n:
        return text + f"; size {n} is below the declared minimum {_declared_lo(spec, decl)} ({decl.text})"
    return text + f"; size {n} is refused (the program's range)"
