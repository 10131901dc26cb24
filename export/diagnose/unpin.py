"""A fix that would pin a declared dim static only because its example puts a size at 1.

``x.view(b, -1, 3)`` on an example with ``x.size(1) = 3``: the view's ``-1`` is 1, the trace
guards ``x.size(1) // 3 == 1``, and the solver's fix for a named ``Dim("K")`` is
``x.size(1)`` static 3, although eager runs every multiple of 3. At a larger example (the
pinned dims' roots doubled, ``x.size(1) = 6``) the same spec fails for what the model really
needs, and that error's fix (``K = 3 * _K``) keeps the dim dynamic. It is offered instead when
it takes the user's example too and re-exports there, as the user will apply it (an
example that puts the derived root at 1 is then traced at a larger one:
:mod:`export.larger_example`).
"""

from __future__ import annotations

import dataclasses
import logging

import sympy

from export.diagnose.probe import enlarged_inputs, tied_sizes
from export.errors import ConstraintViolationError
from export.fixes.suggested import ReExporter, SuggestedFixes, verify
from export.tracing.trace import Trace
from shapes.affine import Affine
from shapes.expr import FloorDiv
from shapes.spec import DimDecl, InputDim

__all__ = ["unpinned"]

_log = logging.getLogger("symshape")


def _derived_at_zero_one(trace: Trace, pinned: list[DimDecl]) -> bool:
    """Whether a guard of the trace pins a size the model derives from a pinned dim at 0 or 1
    (``x.size(1) // 3 == 1``): only then can a larger example tell another fix. A dim pinned
    by its own value (``x.size(1) == 16``) is not traced again."""
    syms = {trace.dim_syms[d.dim] for d in pinned if d.dim in trace.dim_syms}
    return any(isinstance(f.rel, sympy.Eq) and f.rel.rhs in (0, 1) and f.rel.lhs.has(FloorDiv, sympy.Mod)
               and f.rel.free_symbols & syms for f in trace.solver.facts if f.reason.kind == "guard")


def unpinned(trace: Trace, exporter: ReExporter | None, fixes: SuggestedFixes) -> tuple[SuggestedFixes, str] | None:
    """A verified fix that keeps the dims ``fixes`` pins static, found at a larger example,
    and a note saying so; None when there is none (or nothing is pinned)."""
    spec, inputs = trace.spec, trace.inputs
    kept = fixes.fixed.spec
    pinned = [d for d in spec.decls if d.expr is not None and not d.dim.is_value and kept.decl(d.dim) is None
              and inputs.size(d.dim) >= 2]
    if exporter is None or not pinned or not _derived_at_zero_one(trace, pinned):
        return None
    sizes: dict[InputDim, int] = {}
    for decl in pinned:  # every dim of each pinned root, at twice the root's example value
        form = Affine.of(decl.expr)
        value = None if form is None else form.solve(inputs.size(decl.dim))
        if value is None:
            return None
        sizes.update(tied_sizes(spec, [decl.dim], 2 * value))
    if any(n < 2 for n in sizes.values()):
        return None
    try:
        args, kwargs = enlarged_inputs(inputs, exporter.args, exporter.kwargs, sizes)
        _log.info("the fix pins %s static: tracing a larger example (%s)", ", ".join(str(d.dim) for d in pinned),
                  ", ".join(f"{d} = {n}" for d, n in sizes.items()))
        exporter.with_example(args, kwargs).check(spec)
        return None  # the spec itself works there: no other fix to find
    except ConstraintViolationError as e:
        other = e.fixes
    except Exception:  # noqa: BLE001 - the model cannot run the larger example
        return None
    if not isinstance(other, SuggestedFixes) or other.fixed.checks:
        return None
    fixed = other.fixed
    if any(fixed.spec.decl(d.dim) is None for d in pinned):
        return None
    try:
        fixed.spec.validate(inputs.size)
        program = verify(fixed, inputs, exporter)  # at the user's example, as the user will apply it
    except Exception:  # noqa: BLE001 - not verified (SpecError: not the user's example): the static fix stands
        return None
    if program is None:
        return None
    moved = ", ".join(f"{d} = {n} (example {inputs.size(d)})" for d, n in sizes.items())
    note = (f"(this fix was found at a larger example, {moved}: the example puts a size the model derives at 1; "
            f"it re-exports with the example as given)")
    return dataclasses.replace(other, inputs=inputs, verified=True, program=program), note
