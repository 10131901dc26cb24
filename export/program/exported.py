"""The result: a real ``torch.export.ExportedProgram`` whose ranges come from the solver.

:func:`finish` writes the solver's final ranges into ``range_constraints``, adds runtime
checks for the lower bounds torch leaves unchecked, and attaches the seed's
``equality_constraints`` (pairs of :class:`shapes.spec.InputDim`) and a :class:`Report`
(ranges, classes, relations, assumptions, routing statistics, the solver problem).
:func:`save` / :func:`load` keep all of it across ``torch.export.save/load``.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import sympy
import torch
from torch.export import ExportedProgram

from export import _torch_compat as tc
from export.program import archive
from export.program.document import program_document
from export.program.contract import ProgramInput, contract_of
from export.program.branches import branch_warnings, layout_notes
from export.errors import ArchiveError, RefusedInputError, SymshapeWarning
from export.program.floor_policy import floor_policy
from export.spec.inputs import Inputs
from export.tracing.trace import Trace, problem_json, trace_stats
from export.program.words import guard_words
from export.program.analysis import analyse, congruence_texts, internal_roots
from export.program.refusals import KeptCheck, input_sizes, kept_warning, refusal_text
from export.program.zero_one import NOTHING, ZeroOne, ZeroOneEvidence, keeps_torch_guard
from shapes.contract import Contract, Refusal, refusal_message
from shapes.printing import to_python
from shapes.spec import InputDim
from solver import Solver

__all__ = ["SymshapeProgram", "Report", "finish", "amend", "report_of", "save", "load"]

_EXTRA = "symshape.json"


@dataclass(frozen=True)
class Report:
    """What the solver concluded about one export."""

    ranges: Mapping[str, tuple[int | None, int | None]]
    classes: tuple[tuple[str, ...], ...]
    relations: tuple[str, ...]
    assumptions: tuple[str, ...]
    stats: Mapping[str, Any] = field(default_factory=dict)
    problem: str | None = None
    warnings: tuple[str, ...] = ()
    zero_one: tuple[ZeroOneEvidence, ...] = ()
    """Per decision that relied on a dim being >= 2: the evidence that size 1 is still
    right (``site`` / ``retrace``) or why the dim keeps the floor (``kept``)."""
    congruences: tuple[str, ...] = ()
    """Divisibility the program's dims need beyond what their Dims say (``x.size(1) % 8 == 0``:
    a ``Dim.AUTO`` the model made a multiple of 8)."""
    checks: tuple[KeptCheck, ...] = ()
    """Relations between input dims that no ``Dim`` can say, kept as runtime checks
    (``dim_relations="check"``): what the program refuses beyond its ranges and classes."""
    inputs: tuple[str | None, ...] = ()
    """The program's user inputs in call order, by name (``x``, ``d['a']``; None: not named):
    how a refused call's sizes are named (:mod:`export.program.refusals`)."""
    contract: Contract | None = None
    """The program's shape contract (:class:`shapes.contract.Contract`): every condition on
    input sizes it relies on, as data a checker without torch can judge a call by
    (``ep.symshape.contract.check(x, y)``); None on a program saved before contracts."""

    def to_dict(self) -> dict[str, Any]:
        """The report's JSON document (``"schema": "symshape.report/2"``, status ``exported``;
        the same keys as a failed export's ``err.to_dict()``, see docs/cli.md)."""
        return program_document(self)

    def archived(self) -> dict[str, Any]:
        """The report as :func:`save` keeps it (``extra/symshape.json``; :meth:`from_archived`)."""
        return {"ranges": {k: list(v) for k, v in self.ranges.items()}, "classes": [list(c) for c in self.classes],
                "relations": list(self.relations), "assumptions": list(self.assumptions),
                "stats": dict(self.stats), "problem": self.problem, "warnings": list(self.warnings),
                "zero_one": [dataclasses.asdict(e) for e in self.zero_one], "congruences": list(self.congruences),
                "checks": [dataclasses.asdict(k) for k in self.checks], "inputs": list(self.inputs),
                "contract": self.contract.to_dict() if self.contract is not None else None}

    @staticmethod
    def from_archived(d: Mapping[str, Any]) -> Report:
        return Report({k: (v[0], v[1]) for k, v in d["ranges"].items()}, tuple(tuple(c) for c in d["classes"]),
                      tuple(d["relations"]), tuple(d["assumptions"]), dict(d["stats"]), d.get("problem"),
                      tuple(d.get("warnings", ())), tuple(ZeroOneEvidence(**e) for e in d.get("zero_one", ())),
                      tuple(d.get("congruences", ())),
                      tuple(KeptCheck(k["relation"], k.get("origin"), k.get("code"), tuple(k.get("dims", ())))
                            for k in d.get("checks", ())),
                      tuple(d.get("inputs", ())),
                      Contract.from_dict(d["contract"]) if d.get("contract") is not None else None)


class SymshapeProgram(ExportedProgram):
    """An ExportedProgram with ``equality_constraints`` and a symshape :class:`Report`.

    The report's solver problem (JSON) is rendered on first access: most exports never
    need it, and printing every guard costs about as much as the rest of the report.
    """

    equality_constraints: list[tuple[InputDim, InputDim]]

    @property
    def symshape(self) -> Report:
        report: Report = self.__dict__["_symshape_report"]
        solver = self.__dict__.get("_symshape_solver")
        if solver is not None and report.problem is None:
            report = dataclasses.replace(report, problem=problem_json(solver))
            self.__dict__["_symshape_report"] = report
        return report

    @property
    def symshape_solver(self) -> Solver | None:
        """The final-range solver this export judged with (classes, relations, bounds), kept
        in-process; None on a loaded program, whose report carries the solver problem as JSON."""
        return self.__dict__.get("_symshape_solver")

    def module(self, *args: Any, **kwargs: Any) -> torch.fx.GraphModule:
        """torch's ``module()``, whose refusal of a call says why in plain words: a
        :class:`export.errors.RefusedInputError` (``x.size(1) must be divisible by 4 (got
        x.size(1) = 6)``) from torch's ``Guard failed: ...`` or a failed assert of the graph."""
        module = super().module(*args, **kwargs)
        report = report_of(self)
        contract = report.contract

        def explain(flat: Sequence[Any]) -> str | None:
            if contract is not None:
                reasons = contract.failures_of(flat)
                return refusal_message(reasons) if reasons else None
            judged = self._judged_by()  # a program saved before contracts: its problem replayed
            static = tc.static_input_sizes(self, report.inputs)
            return None if judged is None else refusal_text(judged, input_sizes(report.inputs, flat), static)

        tc.explain_refusals(module, explain, RefusedInputError)
        return module

    def _judged_by(self) -> Solver | None:
        """The solver this export was judged with; for a loaded program, its problem replayed."""
        solver = self.symshape_solver
        if solver is None and self.symshape.problem:
            try:
                solver = analyse(json.loads(self.symshape.problem)).solver
            except Exception:  # noqa: BLE001 - no solver, no words: torch's refusal stands
                return None
            self.__dict__["_symshape_solver"] = solver
        return solver

    def __str__(self) -> str:
        text = super().__str__()
        pairs = ", ".join(f"({a!r}, {b!r})" for a, b in self.equality_constraints)
        return f"{text}Equality constraints: [{pairs}]\n"


def _placeholder_names(ep: ExportedProgram, inputs: Inputs) -> dict[str, str]:
    """Leaf name -> the graph's placeholder name for user inputs."""
    user = [s.arg.name for s in ep.graph_signature.input_specs if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    leaves = [leaf for leaf in inputs.leaves if leaf.is_tensor or not isinstance(leaf.value, (int, float, bool, str, type(None)))]
    if len(user) == len(inputs.leaves):
        leaves = list(inputs.leaves)
    return {leaf.name: name for leaf, name in zip(leaves, user)}


def finish(ep: ExportedProgram, trace: Trace, zero_one: ZeroOne = NOTHING,
           kept: tuple[KeptCheck, ...] = ()) -> SymshapeProgram:
    """Write the solver's conclusions into ``ep`` and return it as a SymshapeProgram. The
    trace must know every symbol of ``ep.range_constraints``
    (:meth:`export.tracing.bridge.SolverBridge.trace` declares them); ``zero_one`` is the
    evidence that lets dims drop torch's ``>= 2`` floor (:mod:`export.program.zero_one`);
    ``kept`` the relations no Dim can say that the program checks at run time (torch's guards
    hold them; the report lists them, and one SymshapeWarning says so)."""
    policy = zero_one.policy or floor_policy(trace, zero_one.covered, zero_one.relieved, zero_one.kept)
    s = policy.final
    inputs = trace.inputs
    ranges = {}
    for sym in list(ep.range_constraints):
        expr = trace.sym_map.get(sym) or trace.expression(sym)
        if expr is None:
            continue
        ranges[sym] = s.bounds(expr)
    tc.set_range_constraints(ep, {**{k: tc.range_bounds(v) for k, v in ep.range_constraints.items()}, **ranges})
    names = _placeholder_names(ep, inputs)
    dim_ranges = {str(d): s.bounds(sym) for d, sym in trace.dim_syms.items()}
    tc.reword_asserts(ep, functools.partial(_assert_words, trace, s))
    order = _input_order(ep, names)
    contract = contract_of(trace, s, _program_inputs(ep, trace, order), tc.data_dependent_asserts(ep))
    sources = {sym: (names[d.input_name], d.dim) for d, sym in trace.dim_syms.items() if d.input_name in names}
    tc.add_asserts(ep, [(c.relation, f"symshape: {Refusal(c, ()).text()}") for c in contract.conditions], sources)
    if s is not trace.solver:  # floors relieved: torch's guards that relied on them are no longer the program's
        tc.drop_guards(ep, functools.partial(keeps_torch_guard, trace, s))
    equalities = _equalities(trace, names)
    hidden = internal_roots(s)
    shown = {**trace.names, **hidden}
    classes = (tuple(shown.get(x, str(x)) for x in cls if x not in hidden) for cls in s.classes())
    report = Report(
        dim_ranges,
        tuple(cls for cls in classes if len(cls) > 1),
        tuple(_relation_text(r, shown) for r in s.relations()),
        tuple(f"{f.reason.text}: {f.reason.op}" for f in s.facts if f.reason.kind == "trace_assumption")
        + layout_notes(trace),
        {**trace_stats(trace), "stages": dict(s.stats),
         "facts": len(s.facts), "guards": len(s.guards), "boundary_retraces": zero_one.retraces},
        None,
        trace.zero_one_notes + branch_warnings(trace, policy.needed) + ((kept_warning(kept),) if kept else ()),
        zero_one.evidence,
        congruence_texts(s, shown),
        kept,
        order,
        contract,
    )
    for note in report.warnings:
        warnings.warn(note, SymshapeWarning, stacklevel=4)
    return _attach(ep, equalities, report, s)


def _assert_words(trace: Trace, solver: Solver, condition: sympy.Basic) -> str | None:
    """A deferred runtime assertion of torch's graph (``prefer_deferred_runtime_asserts_over_guards``,
    an asserted size) in the causes' words, when it speaks of input dims only."""
    rel = trace.convert(condition)
    if rel is None or not rel.free_symbols or not rel.free_symbols <= trace.names.keys():
        return None
    names, made = dict(trace.names), []
    for torch_sym in sorted(condition.free_symbols & trace.unbacked_origins.keys(), key=str):
        sym, frame = trace.sym_map.get(torch_sym), trace.unbacked_origins[torch_sym]
        if sym in names:  # a data-dependent value: named as the user's line names it
            names[sym] = frame.assigned(names[sym])
            made.append(f"{names[sym]} comes from {frame.code.strip()} at {frame.origin}")
    try:
        words = guard_words(solver, rel, names)
    except Exception:  # noqa: BLE001 - torch's message stays
        return None
    where = f" ({'; '.join(made)})" if made else ""
    return f"symshape: the exported program refuses these inputs: {words}{where}"


def _program_inputs(ep: ExportedProgram, trace: Trace, order: Sequence[str | None]) -> list[ProgramInput]:
    """The program's user inputs as its contract reads them (:class:`ProgramInput`), in call order."""
    out = []
    for name, val in zip(order, tc.user_input_values(ep)):
        leaf = trace.inputs.leaf_named(name) if name is not None else None
        path = tuple(_path_part(e) for e in leaf.path) if leaf is not None else (name or "",)
        if isinstance(val, torch.Tensor):
            shape = tuple(n if isinstance(n, int) else None for n in val.shape)
            out.append(ProgramInput(name, path, "tensor", shape, str(val.dtype).removeprefix("torch.")))
        elif isinstance(val, (int, torch.SymInt)) and not isinstance(val, bool):
            out.append(ProgramInput(name, path, "int", value=val if isinstance(val, int) else None))
        else:
            out.append(ProgramInput(name, path, "other"))
    return out


def _path_part(entry: Any) -> str | int:
    kind, key = tc.key_entry(entry)
    return key if isinstance(key, (str, int)) and not isinstance(key, bool) else str(key)


def _input_order(ep: ExportedProgram, names: Mapping[str, str]) -> tuple[str | None, ...]:
    """The user inputs' names in the order of the program's user-input placeholders."""
    by_placeholder = {p: leaf for leaf, p in names.items()}
    return tuple(by_placeholder.get(s.arg.name) for s in ep.graph_signature.input_specs
                 if s.kind == torch.export.graph_signature.InputKind.USER_INPUT)


def _relation_text(rel: Any, names: Mapping[Any, str]) -> str:
    try:
        return to_python(rel, names)
    except Exception:  # noqa: BLE001 - a report line must never fail the export
        return str(rel)


def _attach(ep: ExportedProgram, equalities: list[tuple[InputDim, InputDim]], report: Report,
            solver: Solver | None = None) -> SymshapeProgram:
    ep.__class__ = SymshapeProgram
    ep.equality_constraints = equalities  # type: ignore[attr-defined]
    ep.__dict__["_symshape_report"] = report
    if solver is not None:
        ep.__dict__["_symshape_solver"] = solver
    return ep  # type: ignore[return-value]


def report_of(ep: SymshapeProgram) -> Report:
    """``ep.symshape`` as far as it is built: its solver problem (JSON) not rendered if no one
    read it yet (``problem`` then None), for the steps that read only its ranges and stats."""
    report: Report = ep.__dict__["_symshape_report"]
    return report


def amend(ep: SymshapeProgram, *, notes: tuple[str, ...] = (), stats: Mapping[str, Any] | None = None) -> None:
    """Add ``notes`` (warning texts, not emitted here) and ``stats`` entries to ``ep``'s
    report: what the step that called :func:`finish` learned about the export as a whole
    (e.g. :mod:`export.larger_example`: the example it traced at, the traces it made)."""
    report: Report = ep.__dict__["_symshape_report"]
    ep.__dict__["_symshape_report"] = dataclasses.replace(
        report, warnings=report.warnings + notes, stats={**report.stats, **(stats or {})})




def _equalities(trace: Trace, names: Mapping[str, str]) -> list[tuple[InputDim, InputDim]]:
    by_sym = {sym: d for d, sym in trace.dim_syms.items()}
    out = []
    for cls in trace.solver.classes():
        dims = [by_sym[x] for x in cls if x in by_sym and by_sym[x].input_name in names]
        for other in dims[1:]:
            out.append((InputDim(names[dims[0].input_name], dims[0].dim), InputDim(names[other.input_name], other.dim)))
    return out


def save(ep: ExportedProgram, f: str | IO[bytes]) -> None:
    """``torch.export.save`` that keeps the equality constraints and the symshape report
    (in ``extra/symshape.json``, version :data:`export.program.archive.EXTRA_VERSION`)."""
    extra = {}
    if isinstance(ep, SymshapeProgram):
        extra[_EXTRA] = json.dumps({
            "format": "symshape.program", "version": archive.EXTRA_VERSION,
            "equality_constraints": [[[a.input_name, a.dim], [b.input_name, b.dim]] for a, b in ep.equality_constraints],
            "report": ep.symshape.archived(),
        })
    torch.export.save(ep, f, extra_files=extra)


def load(f: str | IO[bytes]) -> ExportedProgram:
    """``torch.export.load`` that restores what :func:`save` kept, and never runs code
    from the archive: it refuses (:class:`export.errors.ArchiveError`) archives whose
    loading would unpickle Python objects or evaluate non-sympy expressions, and names
    the damage of any archive torch or symshape cannot read.

    >>> load(io.BytesIO(b"PK not really"))
    Traceback (most recent call last):
    ...
    export.errors.ArchiveError: <stream>: not a .pt2 archive (File is not a zip file)
    """
    name, data = archive.read_archive(f)
    clean = archive.checked_archive(data, name)
    extra: dict[str, Any] = {_EXTRA: None}  # None: absent (torch replaces an empty dict by its own)
    try:
        ep = torch.export.load(io.BytesIO(clean), extra_files=extra)
    except Exception as e:  # noqa: BLE001 - whatever torch cannot read is a damaged archive
        raise ArchiveError(f"{name}: torch cannot load the program: {_line(e)}") from e
    if extra[_EXTRA] is None:
        return ep
    pairs, report = archive.decode_extra(extra[_EXTRA], name)
    try:
        restored = Report.from_archived(report)
    except Exception as e:  # noqa: BLE001 - a field decode_extra passed but the report refuses
        raise ArchiveError(f"{name}: extra/{_EXTRA}: report: {_line(e)}") from e
    return _attach(ep, [(InputDim(*a), InputDim(*b)) for a, b in pairs], restored)


def _line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:200] if text else ''}".rstrip(": ")
