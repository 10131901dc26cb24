"""The warnings on user branches that compare a dim with 0, 1 or 2 and rely on the ``>= 2`` floor,
and the notes on layout-only branches (decided by the example, no constraint).

While tracing, the bridge notes every user branch comparing a dim with 0, 1 or 2
(:class:`export.tracing.trace.BranchNote`). When the program is finished, a note becomes a
warning only if its question is one the ``>= 2`` floor decided (:mod:`export.program.floor_policy`
keeps the floor for its dim) and the user's spec alone lets the dim be smaller than 2: the
spec's lower bound is read here, from a spec-only replica of the trace's solver, built
only when some note is left to judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy

from export.tracing.layout_branch import detail_names
from export.tracing.provenance import UserFrame
from export.tracing.trace import BranchNote, Trace, relation_text
from solver import Solver

__all__ = ["branch_warnings", "branch_warning", "layout_notes"]


def branch_warning(note: BranchNote, names: Mapping[sympy.Symbol, str]) -> str:
    """The warning of one branch note (``names``: the trace's names of solver symbols).

    >>> n = sympy.Symbol("x_size0", integer=True)
    >>> note = BranchNote(question=sympy.Eq(n, 1), answer=False, origin="m.py:3", code="if x.shape[0] == 1:")
    >>> print(branch_warning(note, {n: "x.size(0)"}))  # doctest: +NORMALIZE_WHITESPACE
    x.size(0) == 1 was decided False at m.py:3: if x.shape[0] == 1:, only because export assumes x.size(0) >= 2
    (sizes 0 and 1 are specialized while tracing); the program rejects x.size(0) < 2 at run time. If size 1
    matters, handle it before calling the exported program or make the dim static.
    """
    rel = note.question
    sym, const = rel.lhs, rel.rhs
    where = f" at {note.origin}: {note.code}" if note.origin else ""
    return (f"{relation_text(rel, names)} was decided {note.answer}{where}, only because export assumes "
            f"{names[sym]} >= 2 (sizes 0 and 1 are specialized while tracing); the program "
            f"rejects {names[sym]} < 2 at run time. If size {int(const)} matters, handle it "
            "before calling the exported program or make the dim static.")


def branch_warnings(trace: Trace, needed: Mapping[Any, tuple[sympy.Basic, ...]]) -> tuple[str, ...]:
    """The warnings of the trace's branch notes whose question relied on the ``>= 2`` floor
    (is in ``needed``, :attr:`export.program.floor_policy.FloorPolicy.needed`) on a dim the
    spec alone lets be below 2, once per line (not once per input sharing a dim)."""
    kept = {rel for rels in needed.values() for rel in rels}
    spec: Solver | None = None
    lower: dict[sympy.Basic, int | None] = {}
    out: dict[str, str] = {}
    for note in trace.branch_notes:
        if note.question not in kept:
            continue
        sym = note.question.lhs
        if sym not in lower:
            if spec is None:
                spec = trace.solver.replica(kinds=("spec",))
            lower[sym] = spec.bounds(sym)[0]  # the lower bound the user's spec alone gives the dim
        lo = lower[sym]
        if lo is None or lo >= 2:
            continue
        text = branch_warning(note, trace.names)
        out.setdefault(note.origin or text, text)
    return tuple(out.values())


def layout_notes(trace: Trace) -> tuple[str, ...]:
    """What the program assumes of the trace's layout-only branches
    (:mod:`export.tracing.layout_branch`): one line per ``if``, in the report's ``assumptions``.

    >>> from export.tracing.sites import Site
    >>> n = sympy.Symbol("n", integer=True)
    >>> site = Site("/x/up.py", 160, "forward", "if h.shape[0] >= 64:", "layout-only branch of h")
    >>> class T: layout_branches = {sympy.Ge(n, 64): frozenset({(site, False)})}; names = {n: "x.size(0)"}
    >>> print(layout_notes(T()))  # doctest: +NORMALIZE_WHITESPACE
    ('x.size(0) >= 64 is False in the example; every size runs that branch at up.py:160 (if h.shape[0] >= 64:):
      it only rebinds h to its .contiguous(), the same values either way',)
    """
    out: dict[tuple[str, int], str] = {}
    for rel, sites in trace.layout_branches.items():
        for site, answer in sorted(sites, key=lambda s: (s[0].file, s[0].line)):
            where = UserFrame(site.file, site.line, site.function, site.code).origin
            out.setdefault((site.file, site.line), (
                f"{relation_text(rel, trace.names)} is {answer} in the example; every size runs that branch at "
                f"{where} ({site.code}): it only rebinds {detail_names(site.detail)} to its .contiguous(), "
                "the same values either way"))
    return tuple(out[k] for k in sorted(out))
