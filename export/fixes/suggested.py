"""Fixes as data (``err.fixes``), and the re-exports that verify them.

:class:`SuggestedFixes` holds a corrected spec, its renderings, and the programs its
verification built: re-exporting with exactly what :meth:`SuggestedFixes.apply` returns is
the verification, so the program it yields is the one the user would get by re-exporting
(``err.fixes.program``; no second trace needed). :class:`ReExporter` is what diagnosis needs
of the export it diagnoses to re-run it (another spec, other example inputs; the pipeline
:class:`export.exporter.Exporter` is one); :func:`verify` re-exports a fix the way the user would,
:func:`offered` builds the program a diagnosis offers.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from export.errors import SymshapeWarning
from export.fixes.apply import FixedSpec
from export.spec.inputs import Inputs
from export.program.exported import SymshapeProgram
from export.program.refusals import CHECK
from export.spec.dynamic_shapes import torch_dynamic_shapes
from shapes.affine import Affine
from shapes.classic import dynamic_dim as classic_dim
from shapes.spec import Spec
from solver import Fixes

__all__ = ["ReExporter", "SuggestedFixes", "offered", "user_form", "verify"]


class ReExporter(Protocol):
    """What diagnosis (fix verification, the 0/1 probe) needs of the export it diagnoses:
    its example ``args``/``kwargs``, re-running it with another spec (:meth:`run`,
    :meth:`check`) or other example inputs (:meth:`with_example`), and reading a user's
    spec form as ``export`` does (:meth:`parse`). Every re-export raises what ``export``
    raises. :class:`export.exporter.Exporter` is one (fixes and diagnose sit below the API and
    never import it)."""

    @property
    def args(self) -> tuple[Any, ...]:
        """The example positional inputs."""
        ...

    @property
    def kwargs(self) -> dict[str, Any] | None:
        """The example keyword inputs."""
        ...

    def run(self, spec: Spec, *, diagnose: bool = True) -> SymshapeProgram:
        """The program ``export`` returns for ``spec`` (``diagnose``: a failure's fixes are
        verified by re-exporting)."""
        ...

    def check(self, spec: Spec) -> None:
        """Raise what ``export`` would for ``spec``, without building the program."""
        ...

    def with_example(self, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> ReExporter:
        """The same export on other example inputs."""
        ...

    def parse(self, form: Any, classic: bool) -> Spec:
        """The Spec ``export`` builds from a user's ``constraints=`` (``classic``) or
        ``dynamic_shapes=`` ``form``."""
        ...

    @property
    def dim_relations(self) -> str:
        """``export``'s ``dim_relations``: relations no Dim can say are kept as runtime checks
        (``"check"``) or raised (``"raise"``)."""
        ...


def offered(exporter: ReExporter, spec: Spec) -> SymshapeProgram:
    """The program a diagnosis re-export offers (a verified fix's, a larger example's):
    what ``export`` returns for ``spec``, a failure not diagnosed (it raises), its
    SymshapeWarnings not emitted (the user's export failed: they are in the program's
    report)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SymshapeWarning)
        return exporter.run(spec, diagnose=False)


def classic_constraints(spec: Spec) -> list[Any]:
    """``spec`` as classic ``dynamic_dim`` constraints (records naming the inputs; a
    dynamic dim is at least 2 in that form).

    >>> from shapes.expr import int_symbol
    >>> from shapes.spec import DimDecl, InputDim, RootDim
    >>> b = int_symbol("b")
    >>> spec = Spec("classic", (RootDim("b", 0, 64, "b"),),
    ...             (DimDecl(InputDim("x", 0), "dynamic", b, "b"), DimDecl(InputDim("y", 0), "dynamic", b, "b")))
    >>> [c.text for c in classic_constraints(spec)]
    ['dynamic_dim(x, 0) >= 2', 'dynamic_dim(x, 0) <= 64', 'dynamic_dim(y, 0) == dynamic_dim(x, 0)']
    """
    out: list[Any] = []
    for r, primary, related in spec.groups():
        if primary is None or primary.dim.dim is None:
            continue  # dynamic_dim names tensor dims only
        p = classic_dim(primary.dim.input_name, primary.dim.dim)
        out.append(p >= max(r.lo or 0, 2))
        if r.hi is not None:
            out.append(p <= r.hi)
        for d in related:
            form = Affine.of(d.expr) if d.expr is not None else None
            if form is None or d.dim.dim is None:
                continue  # dynamic_dim says only a * x + b, of tensor dims
            a, b = form.a, form.b
            other = classic_dim(d.dim.input_name, d.dim.dim)
            out.append(other == (p if (a, b) == (1, 0) else a * p + b))
    return out


def user_form(spec: Spec, inputs: Inputs) -> Any:
    """What a user passes to re-export with ``spec``: classic constraints for a classic
    spec, else torch ``dynamic_shapes`` (what :meth:`SuggestedFixes.apply` returns)."""
    return classic_constraints(spec) if spec.api == "classic" else torch_dynamic_shapes(spec, inputs)


def verify(fixed: FixedSpec, inputs: Inputs, exporter: ReExporter) -> SymshapeProgram | None:
    """Re-export with ``fixed``: a fix without checks exactly as the user would, with what
    ``apply()`` returns (the program); a fix with checks with its spec assuming them (what the
    model gives once the ``torch._check`` lines are added; no program: ``apply`` alone does
    not give it), unless the re-export keeps such checks as runtime checks of its program
    (``dim_relations="check"``): then as the user would. Raises what ``export`` raises."""
    if fixed.checks and exporter.dim_relations != CHECK:
        exporter.check(fixed.spec)
        return None
    return offered(exporter, exporter.parse(user_form(fixed.spec, inputs), fixed.spec.api == "classic"))


@dataclass(frozen=True)
class SuggestedFixes:
    """Fixes as data (``records``, ``fixed``), rendered (``modern``, ``classic``,
    ``checks``), and whether re-exporting with exactly what :meth:`apply` returns
    succeeded (``verified``). A fix that needs ``torch._check`` lines in the model
    (``checks``) is ``verified`` only when the re-export keeps them as runtime checks of its
    program (``checks_kept``, ``dim_relations="check"``: the lines are then an alternative,
    not the fix); with ``dim_relations="raise"`` ``apply`` cannot add them, and
    ``verified_with_checks`` says whether re-exporting with the spec plus those checks
    succeeded. ``larger_example`` (input dim text -> size) is the other choice for dims
    specialized at an example size 0/1: export with those example sizes, same spec
    (re-exported before it is offered); None when it does not work.

    ``program`` is the program that verification exported, i.e. what
    ``export(f, args, kwargs, dynamic_shapes=err.fixes.apply(spec))`` returns (None when
    the fix is not verified); ``larger_example_program`` the program exported with the
    user's spec and the ``larger_example`` sizes (None without one). Their SymshapeWarnings
    were not emitted (the export failed): they are in ``program.symshape.warnings``.
    """

    records: Fixes
    fixed: FixedSpec
    modern: str
    classic: str
    checks: tuple[str, ...]
    verified: bool
    inputs: Inputs = field(repr=False)
    verified_with_checks: bool = False
    larger_example: Mapping[str, int] | None = None
    program: SymshapeProgram | None = field(default=None, repr=False, compare=False)
    larger_example_program: SymshapeProgram | None = field(default=None, repr=False, compare=False)
    checks_kept: bool = False

    def __iter__(self) -> Any:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def dynamic_shapes(self) -> dict[str, Any]:
        """The corrected ``dynamic_shapes`` (torch ``Dim`` objects)."""
        return torch_dynamic_shapes(self.fixed.spec, self.inputs)

    def constraints(self) -> list[Any]:
        """The corrected classic ``constraints`` (records naming the inputs)."""
        return classic_constraints(self.fixed.spec)

    def apply(self, spec: Any = None) -> Any:
        """The corrected spec in the form given: a list of classic constraints gives
        ``constraints``, any other ``dynamic_shapes`` the corrected ``dynamic_shapes``;
        without ``spec``, the form the export was given."""
        if isinstance(spec, (list, tuple)) and _looks_classic(spec):
            return self.constraints()
        if spec is None:
            return user_form(self.fixed.spec, self.inputs)
        return self.dynamic_shapes()

    def render(self) -> str:
        parts = ["Suggested fix (Dim form):", _indent(self.modern), "", "Suggested fix (classic form):",
                 _indent(self.classic)]
        if self.checks and self.checks_kept:
            parts += ["", "The re-exported program checks these relations at run time (no Dim can say them); "
                      "adding them to the model is an alternative:", *(_indent(c) for c in self.checks)]
        elif self.checks:
            parts += ["", "Also add, in the model, where the constraint arises (apply() cannot add these):",
                      *(_indent(c) for c in self.checks)]
        if self.larger_example:
            sizes = ", ".join(f"{d} = {n}" for d, n in self.larger_example.items())
            parts += ["", f"Or keep the spec and export with a larger example: {sizes} (verified)"]
        if self.checks and self.verified_with_checks and not self.checks_kept:
            parts += ["", "(verified with the torch._check lines added to the model)"]
        elif not self.verified:
            parts += ["", "(not verified: re-exporting with this fix did not succeed)"]
        return "\n".join(parts)


def _looks_classic(spec: list[Any] | tuple[Any, ...]) -> bool:
    """A (possibly empty) sequence of classic constraint records, not a dynamic_shapes tuple."""
    return all(hasattr(c, "text") for c in spec)


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else line for line in text.splitlines())
