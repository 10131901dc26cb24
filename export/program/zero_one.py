"""Sizes 0/1: evidence, per hard decision that relied on torch's ``>= 2`` floor, that the
general program is still right at size 1.

:func:`export.program.floor_policy.floor_policy` names the decisions that relied on the floor.
Each gets evidence of one of two kinds, recorded as :class:`ZeroOneEvidence`:

* ``site``: every place that asked it is in a table of value-neutral places
  (:mod:`export.tracing.sites`: torch lines such as the stride of a size-1 dim, view/reshape
  grouping, the fake-tensor cache; the kernel of an op already recorded as a node; a
  torch function's own check; library lines neutral given their frame's state);
* ``retrace``: for the dims the table leaves uncovered, a **boundary re-trace** with those
  dims at example size 1 kept symbolic (torch's ``specialize_zero_one`` off). The point
  ``S`` (a set of dims at 1, the others ``>= 2``) is covered when the boundary graph equals
  the general graph structurally (same ops, targets, arguments and outputs once both are
  read at the point; value identities such as a slice made whole at the point folded, see
  :func:`export.program.graph_form.graph_form`) and every hard decision of the boundary
  trace not covered by the table is decided the same way by the general program's region at
  the point. Two dims
  ``b, s`` are relieved together only when ``{b}``, ``{s}`` and ``{b, s}`` are all covered.

A dim whose decisions lack evidence keeps the floor (``kind="kept"`` says why).

**Size 0.** torch's size symbols are positive, so sympy folds a question like ``s == 0`` to
False without asking: the trace never shows what the model does at 0, and sizes stay ``>= 1``.
For the classes of ``Dim.AUTO`` / ``Dim.DYNAMIC`` dims (torch's fully dynamic dims, whose
programs torch runs at 0) that the spec lets be 0 and that are admitted at 1, a boundary
re-trace at 0 (the class at an example of 0, made static there, so nothing is folded) is the
evidence, as above: the graph at 0 must be the general graph read at 0, and each decision of
the boundary trace must hold in the general program's region at 0; then the class drops its
``>= 1`` (``ZeroOneEvidence`` with rel ``... >= 1``). A named ``Dim`` (whose default min is 0
in torch, so that a user's ``min=0`` cannot be told apart) is not re-traced: its programs
start at 1. torch admits 0 on every such dim unchecked, and runs ``x.sum(0) if x.shape[0] !=
0 else ...`` wrongly there; symshape's boundary graph differs, and 0 stays refused.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import sympy
from torch.export import ExportedProgram

from export import _torch_compat as tc
from export.program.floor_policy import FloorPolicy, floor_policy, is_floor, needed_floor, relaxed_solver
from export.program.graph_form import graph_form
from export.tracing.sites import covered, justification
from export.tracing.assumptions import Assumption, is_assumption
from export.tracing.trace import Trace, relation_text
from shapes.spec import InputDim
from solver import Reason, Solver, SolverError, Truth

__all__ = ["ZeroOneEvidence", "ZeroOne", "Boundary", "zero_one", "keeps_torch_guard"]

Boundary = Callable[[Mapping[InputDim, int]], "tuple[ExportedProgram, Trace] | None"]
"""Re-trace with the given example sizes and 0/1 kept symbolic; None when it fails."""

MAX_RETRACED_DIMS = 2
"""At most this many dims are re-traced together (2 dims: 3 boundary points)."""

_KINDS = ("spec", "guard", "trace_assumption")


@dataclass(frozen=True, slots=True)
class ZeroOneEvidence:
    """Why a decision that relied on a dim being ``>= 2`` does (or does not) hold the
    program back at size 1. ``dim`` is the dim, ``rel`` the decision, ``kind`` one of
    ``site`` / ``retrace`` / ``kept``, ``site`` where it was asked, ``why`` the
    justification (the table's line, the boundary points checked, or what failed)."""

    dim: str
    rel: str
    kind: str
    site: str
    why: str

    def __str__(self) -> str:
        return f"{self.dim}: {self.rel} [{self.kind}] at {self.site}: {self.why}"


@dataclass(frozen=True, slots=True)
class ZeroOne:
    """The outcome: ``covered`` decisions (by the site table), ``relieved`` root dims (by
    a boundary re-trace: all their decisions), ``kept`` root dims that keep the floor
    whatever covers their decisions (torch's own guards reject size 1), the ``evidence``
    records, and the number of boundary ``retraces`` run. ``policy`` is the final floor
    policy of exactly these ``covered``/``relieved``/``kept`` (what
    :func:`export.program.exported.finish` writes into the program); :func:`zero_one` always
    sets it, None only on a ZeroOne built by hand (:data:`NOTHING`: ``finish`` builds it)."""

    covered: frozenset[sympy.Basic]
    relieved: frozenset[sympy.Symbol]
    evidence: tuple[ZeroOneEvidence, ...]
    retraces: int = 0
    kept: frozenset[sympy.Symbol] = frozenset()
    policy: FloorPolicy | None = None


NOTHING = ZeroOne(frozenset(), frozenset(), ())


def zero_one(trace: Trace, program: ExportedProgram | None = None, boundary: Boundary | None = None) -> ZeroOne:
    """The 0/1 evidence of ``trace`` (see the module docstring). ``boundary`` re-traces
    and ``program`` is the general program to compare with (either None: the site table
    only)."""
    needed = needed_floor(trace, relaxed_solver(trace))
    if not needed:
        policy, zero_records, zero_runs = _size_zero(trace, program, boundary, floor_policy(trace, needed=needed))
        return ZeroOne(frozenset(), frozenset(), tuple(zero_records), zero_runs, policy=policy)
    names = trace.names
    records: list[ZeroOneEvidence] = []
    covered_rels: set[sympy.Basic] = set()
    open_roots: list[sympy.Symbol] = []
    for root, rels in needed.items():
        dim = _dim_name(trace, root)
        left = False
        for rel in rels:
            sites = trace.sites.get(rel, frozenset())
            where = "; ".join(sorted(str(s) for s in sites)) or "?"
            if covered(sites):
                covered_rels.add(rel)
                why = "; ".join(sorted({justification(s) or "" for s in sites}))
                records.append(ZeroOneEvidence(dim, relation_text(rel, names), "site", where, why))
            else:
                left = True
        if left:
            open_roots.append(root)
    points = _Points(trace, program, needed, open_roots, boundary if program is not None else None)
    relieved, retrace_records = _retrace(trace, needed, covered_rels, open_roots, points)
    relief = floor_policy(trace, covered_rels, relieved, needed=needed) if program is not None and (covered_rels or relieved) else None
    blocked = _torch_checks(trace, program, needed, relief)
    if blocked:
        names = {_dim_name(trace, r): g for r, g in blocked.items()}
        records = [_blocked(e, names) for e in records]
        retrace_records = [_blocked(e, names) for e in retrace_records]
        relieved = frozenset(r for r in relieved if r not in blocked)
    # the policy that judged torch's guards is the final one unless it relieved a kept dim
    policy = relief if relief is not None and not blocked else \
        floor_policy(trace, covered_rels, relieved, frozenset(blocked), needed=needed)
    policy, zero_records, zero_runs = _size_zero(trace, program, boundary, policy)
    return ZeroOne(frozenset(covered_rels), relieved, tuple(records + retrace_records + zero_records),
                   points.runs + zero_runs, frozenset(blocked), policy)


def _size_zero(trace: Trace, program: ExportedProgram | None, boundary: Boundary | None,
               policy: FloorPolicy) -> tuple[FloorPolicy, list[ZeroOneEvidence], int]:
    """Size 0 on the evidence of a boundary re-trace at 0 (see the module docstring), for the
    classes of ``Dim.AUTO`` / ``Dim.DYNAMIC`` dims (torch's fully dynamic dims, whose programs
    torch runs at 0) that the spec lets be 0 and ``policy`` admits at 1: the policy with their
    ``>= 1`` (torch's positive symbols) dropped where the graph at 0 is the general graph read
    at 0 and every decision of the boundary trace holds in the general program's region there;
    at most :data:`MAX_RETRACED_DIMS` classes, each subset a point of its own."""
    if program is None or boundary is None:
        return policy, [], 0
    final = policy.final
    roots = _zero_candidates(trace, final)
    if not roots:
        return policy, [], 0
    runs = 0
    results: dict[frozenset[sympy.Symbol], str | None] = {}

    def ok(point: frozenset[sympy.Symbol]) -> bool:
        nonlocal runs
        if point not in results:
            runs += 1
            results[point] = _zero_point(trace, program, boundary, final, point)
        return results[point] is None

    best = _largest_covered(roots, ok)
    records = []
    for root in roots:
        dim = _dim_name(trace, root)
        if root in best:
            records.append(ZeroOneEvidence(dim, f"{dim} >= 1", "retrace", "torch's positive size symbols",
                                           "boundary re-trace at 0: the same graph, the decisions hold"))
        else:
            why = "; ".join(w for p, w in results.items() if root in p and w is not None) or "not tried"
            records.append(ZeroOneEvidence(dim, f"{dim} >= 1", "kept", "torch's positive size symbols", why))
    if not best:
        return policy, records, runs
    zero = set(best)
    relaxed = final.replica(kinds=_KINDS, keep=lambda f: not _positive_on(trace, f, zero))
    return dataclasses.replace(policy, final=relaxed), records, runs


def _largest_covered(roots: list[sympy.Symbol],
                     ok: Callable[[frozenset[sympy.Symbol]], bool]) -> tuple[sympy.Symbol, ...]:
    """The largest set of ``roots`` (at most :data:`MAX_RETRACED_DIMS`, the first such in
    ``roots``' order) every nonempty subset of which is a point ``ok`` covers; ``()`` if none."""
    for k in range(min(len(roots), MAX_RETRACED_DIMS), 0, -1):
        for combo in itertools.combinations(roots, k):
            if all(ok(frozenset(sub)) for n in range(1, k + 1) for sub in itertools.combinations(combo, n)):
                return combo
    return ()


def _positive_on(trace: Trace, fact: Any, roots: set[sympy.Symbol]) -> bool:
    return is_assumption(fact, Assumption.POSITIVE) and any(trace.solver.root_of(x) in roots for x in fact.rel.free_symbols)


def _zero_candidates(trace: Trace, final: Solver) -> list[sympy.Symbol]:
    """Root dims whose every input dim is a hint dim (``Dim.AUTO`` / ``Dim.DYNAMIC``) that the
    spec lets be 0, with the final lower bound 1 (not derived, not kept at 2)."""
    by_root: dict[sympy.Symbol, list[InputDim]] = {}
    for d, sym in trace.dim_syms.items():
        by_root.setdefault(trace.solver.root_of(sym), []).append(d)
    out = []
    for root, dims in by_root.items():
        decls = [trace.spec.decl(d) for d in dims]
        if not all(x is not None and x.is_hint and (x.lo or 0) <= 0 for x in decls):
            continue
        try:
            lo, _ = final.bounds(root)
        except SolverError:
            continue
        if lo == 1:
            out.append(root)
    return sorted(out, key=str)


def _zero_point(trace: Trace, program: ExportedProgram, boundary: Boundary, final: Solver,
                point: frozenset[sympy.Symbol]) -> str | None:
    """Why the program is not known right with the ``point``'s classes at 0 (None: it is)."""
    sizes = {d: 0 for d, sym in trace.dim_syms.items() if trace.solver.root_of(sym) in point}
    got = boundary(sizes)
    if got is None:
        return "the boundary re-trace at 0 failed"
    ep0, t0 = got
    region = final.replica(kinds=_KINDS, keep=lambda f: not _positive_on(trace, f, set(point)))
    try:
        for r in point:
            region.assume(sympy.Eq(r, 0), Reason("trace_assumption", f"{r} == 0", None, "boundary point", Assumption.BOUNDARY))
    except SolverError:
        return "the program's facts need size >= 1"
    wrong = _undecided(t0, region)
    if wrong is not None:
        return f"the boundary trace at 0 decided {wrong}, which the program's region does not imply"
    values = {str(s): 0 for r in point for s in _members(trace, r)}
    if graph_form(program, trace, values) != graph_form(ep0, t0, values):
        return "the graph at 0 differs from the general one"
    return None


def _torch_checks(trace: Trace, program: ExportedProgram | None, needed: Mapping[sympy.Symbol, tuple[sympy.Basic, ...]],
                  policy: FloorPolicy | None) -> dict[sympy.Symbol, str]:
    """Root dims whose size 1 torch's own recorded guards (the program's run-time input
    checks) still reject under ``policy`` (the relieved one): relieving them would report
    a range the program does not run. Only a guard the program keeps counts, by the rule
    :func:`export.program.exported.finish` drops the others with (:func:`keeps_torch_guard`):
    one over input dims the relieved ranges do not imply leaves the program (the contract's
    asserts check what those ranges need), so it blocks nothing; one the program keeps blocks
    the needed dims it names unless the relieved ranges prove it. A guard symshape cannot read
    is kept: it blocks the needed dims of torch's symbols in it."""
    if program is None or policy is None:
        return {}
    final = policy.final
    out: dict[sympy.Symbol, str] = {}
    for guard in tc.recorded_guards(program):
        rel = trace.convert(guard)
        if (rel is not None and not rel.free_symbols) or not keeps_torch_guard(trace, final, guard):
            continue
        try:
            if rel is not None and final.decide(rel) is Truth.TRUE:
                continue
        except Exception:  # noqa: BLE001 - undecided, as keeps_torch_guard reads it: the guard blocks
            pass
        for x in rel.free_symbols if rel is not None else _symbols_of(trace, guard):
            try:
                root = trace.solver.root_of(x)
            except SolverError:
                continue
            if root in needed:
                out.setdefault(root, relation_text(rel, trace.names) if rel is not None else str(guard))
    return out


def _symbols_of(trace: Trace, guard: sympy.Basic) -> set[sympy.Basic]:
    """The solver symbols of the torch symbols in ``guard`` (one symshape cannot convert)."""
    out: set[sympy.Basic] = set()
    for s in guard.free_symbols:
        try:
            out |= trace.symbol(s).free_symbols
        except Exception:  # noqa: BLE001 - a symbol of no integer size (a float input) names no dim
            continue
    return out


def keeps_torch_guard(trace: Trace, final: Solver, guard: sympy.Basic) -> bool:
    """Whether the program under the ``final`` ranges keeps torch's recorded ``guard`` (torch's
    sympy expression) among its run-time input checks: it is no relation over input dims
    alone (kept as torch wrote it), the final ranges imply it, or they cannot decide it. A
    guard on input dims they do not imply was answered with a ``>= 2`` floor the 0/1 evidence
    relieved: the program drops it (:func:`export._torch_compat.drop_guards`), and the
    contract's asserts check everything the final ranges need."""
    rel = trace.convert(guard)
    if rel is None or not rel.free_symbols <= set(trace.dim_syms.values()) | set(trace.root_syms.values()):
        return True
    try:
        return final.decide(rel) is Truth.TRUE
    except Exception:  # noqa: BLE001 - undecided: torch's guard stays
        return True


def _blocked(e: ZeroOneEvidence, blocked: Mapping[str, str]) -> ZeroOneEvidence:
    guard = blocked.get(e.dim)
    if guard is None or e.kind == "kept":
        return e
    return ZeroOneEvidence(e.dim, e.rel, "kept", e.site,
                           f"{e.why}; but torch recorded the guard {guard}, which the program checks at run time")


def _retrace(trace: Trace, needed: Mapping[sympy.Symbol, tuple[sympy.Basic, ...]], covered_rels: set[sympy.Basic],
             roots: list[sympy.Symbol], points: _Points) -> tuple[frozenset[sympy.Symbol], list[ZeroOneEvidence]]:
    """Relieve what a boundary re-trace can: the largest set of ``roots`` (at most
    :data:`MAX_RETRACED_DIMS`) all of whose points are covered."""
    best = _largest_covered(roots, points.ok)
    out: list[ZeroOneEvidence] = []
    for root in roots:
        dim = _dim_name(trace, root)
        for rel in needed[root]:
            if rel in covered_rels:
                continue
            sites = trace.sites.get(rel, frozenset())
            where = "; ".join(sorted(str(s) for s in sites)) or "?"
            if root in best:
                why = "boundary re-trace: " + "; ".join(points.describe(frozenset(sub)) for n in range(1, len(best) + 1)
                                                         for sub in itertools.combinations(best, n))
                out.append(ZeroOneEvidence(dim, relation_text(rel, trace.names), "retrace", where, why))
            else:
                out.append(ZeroOneEvidence(dim, relation_text(rel, trace.names), "kept", where, points.failure(root)))
    return frozenset(best), out


class _Points:
    """Boundary points checked on demand, memoized: a point is a set of root dims at 1."""

    def __init__(self, trace: Trace, program: ExportedProgram | None, needed: Mapping[sympy.Symbol, tuple[sympy.Basic, ...]],
                 roots: list[sympy.Symbol], boundary: Boundary | None) -> None:
        self.trace, self.program, self.needed, self.roots = trace, program, needed, roots
        self.boundary = boundary
        self.results: dict[frozenset[sympy.Symbol], str | None] = {}  # point -> failure (None: covered)
        self.runs = 0

    def ok(self, point: frozenset[sympy.Symbol]) -> bool:
        if point not in self.results:
            self.results[point] = self._check(point)
        return self.results[point] is None

    def describe(self, point: frozenset[sympy.Symbol]) -> str:
        return "{" + ", ".join(sorted(f"{_dim_name(self.trace, r)}=1" for r in point)) + "} same graph, decisions hold"

    def failure(self, root: sympy.Symbol) -> str:
        fails = [f"{{{', '.join(sorted(_dim_name(self.trace, r) + '=1' for r in p))}}}: {why}"
                 for p, why in self.results.items() if root in p and why is not None]
        if self.boundary is None:
            return "not in the site table, and no boundary re-trace was run"
        return "; ".join(fails) or "not in the site table; the boundary re-trace was not tried for this dim"

    def _check(self, point: frozenset[sympy.Symbol]) -> str | None:
        if self.boundary is None or self.program is None:
            return "no boundary re-trace"
        sizes = _boundary_sizes(self.trace, point)
        if sizes is None:
            return "a derived dim (no example of size 1)"
        self.runs += 1
        got = self.boundary(sizes)
        if got is None:
            return "the boundary re-trace failed"
        ep1, t1 = got
        region = _region(self.trace, self.roots, point)
        if region is None:
            return None  # the program's region holds no such point: nothing to cover
        wrong = _undecided(t1, region)
        if wrong is not None:
            return f"the boundary trace decided {wrong}, which the program's region does not imply"
        values = {str(s): 1 for r in point for s in _members(self.trace, r)}
        if graph_form(self.program, self.trace, values) != graph_form(ep1, t1, values):
            return "the boundary graph differs from the general one"
        return None


def _members(trace: Trace, root: sympy.Symbol) -> list[sympy.Symbol]:
    """The input-dim and root-dim symbols of ``root``'s class."""
    syms = list(trace.dim_syms.values()) + list(trace.root_syms.values())
    return [s for s in syms if trace.solver.root_of(s) == root]


def _boundary_sizes(trace: Trace, point: frozenset[sympy.Symbol]) -> dict[InputDim, int] | None:
    """Example sizes with every input dim of the point's classes at 1; None when one of
    them is a derived dim (``2*b``: no size 1)."""
    sizes: dict[InputDim, int] = {}
    for d, sym in trace.dim_syms.items():
        if trace.solver.root_of(sym) not in point:
            continue
        decl = trace.spec.decl(d)
        if decl is not None and decl.expr is not None and not isinstance(decl.expr, sympy.Symbol):
            return None
        sizes[d] = 1
    return sizes


def _region(trace: Trace, roots: Iterable[sympy.Symbol], point: frozenset[sympy.Symbol]) -> Solver | None:
    """The general program's facts at the point, no ``>= 2`` floor but the point's dims
    at 1 and the other open dims ``>= 2``; None when no assignment satisfies them."""
    open_roots = set(roots)
    region = trace.solver.replica(kinds=_KINDS, keep=lambda f: not is_floor(f))
    try:
        for r in open_roots:
            rel = sympy.Eq(r, 1) if r in point else sympy.Ge(r, 2)
            region.assume(rel, Reason("trace_assumption", str(rel), None, "boundary point", Assumption.BOUNDARY))
    except SolverError:
        return None
    return region


def _undecided(t1: Trace, region: Solver) -> str | None:
    """The first hard decision of the boundary trace (not covered by the site table) whose
    answer the region does not imply, as text; None when all are implied."""
    for rel in sorted(t1.hard, key=str):
        if covered(t1.sites.get(rel, frozenset())):
            continue
        answer = t1.answers.get(rel)
        if answer is None:
            return relation_text(rel, t1.names)
        try:
            t = region.decide(rel)
        except SolverError:
            return relation_text(rel, t1.names)
        if t is not (Truth.TRUE if answer else Truth.FALSE):
            return f"{relation_text(rel, t1.names)} -> {answer}"
    if t1.stats.to_torch:
        return f"{t1.stats.to_torch} question(s) torch answered itself"
    return None


def _dim_name(trace: Trace, root: sympy.Symbol) -> str:
    return trace.names.get(root, str(root))


