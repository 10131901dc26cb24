"""A trace replayed under a narrower spec: what a re-export with the same example would
leave behind, without tracing again (issue 35).

Tracing is deterministic given the answers torch gets. Every hinted question of a trace is
answered with its value on the example, whatever the spec; what the spec changes is which
answers become facts (a narrower spec implies some of them) and the answers that are *not*
the example's: the questions the trace left open (static queries neither the solver nor
torch could answer, data-dependent ones), which a narrower spec might settle, sending
torch down another path. :func:`replayed` rebuilds the trace's solver under ``spec``: the
spec's own facts, then the trace's facts in their order, each only where the new facts do
not already imply it, as the bridge would record them. It hands back None, and the caller
traces again, unless

* torch would start a trace of ``spec`` with the symbols the trace ended with
  (:func:`same_symbols`: ``spec`` differs in its bounds only, or equates dims torch itself
  unified during the trace), and every size it admits is one the traced spec
  admits (its domain is narrower: the traced graph is right on it, since it is right on
  the traced spec's domain where the trace's facts hold, and the program checks those
  facts);
* every open question stays open under the new facts, and no static query the solver could
  not read was left to torch undecided (torch's own answer, from the narrower ranges, might
  differ).

Then the replayed trace, with the traced program, is the program a re-export gives: the
oracle tests (``tests/export/tracing/test_replay.py``, ``tests/e2e/test_replay_oracle.py``)
re-export and compare.
"""

from __future__ import annotations

import dataclasses

import sympy

from export.tracing.assumptions import Assumption, is_assumption
from export.spec.options import one_of
from export.tracing.bridge import SolverBridge
from export.tracing.trace import Trace, frozen_map
from shapes.spec import Spec
from solver import DECLARED, SolverError, Truth

__all__ = ["REPLAY", "RE_EXPORT", "VERIFY_MODES", "check_verify_mode", "declared_ranges", "replayed", "same_structure", "same_symbols", "traced_domain"]

REPLAY = "replay"
"""``fix_verification="replay"`` (default): a re-run of the export under a narrower spec on
the same example (a fix's verification) replays a failing trace where :func:`replayed`
allows it, and traces again elsewhere."""
RE_EXPORT = "re-export"
"""``fix_verification="re-export"``: every re-run traces again (the oracle replay is tested
against)."""
VERIFY_MODES = (REPLAY, RE_EXPORT)


def check_verify_mode(mode: object) -> str:
    """``mode`` when it is one of :data:`VERIFY_MODES`, else InputError.

    >>> check_verify_mode("re-export")
    're-export'
    >>> check_verify_mode("retrace")
    Traceback (most recent call last):
    ...
    export.errors.InputError: fix_verification must be 'replay' or 're-export', got 'retrace'
    """
    return one_of("fix_verification", mode, VERIFY_MODES)


def traced_domain(trace: Trace, spec: Spec) -> list[sympy.Basic] | None:
    """The traced spec's constraints as relations over the trace's input-dim symbols, and
    the roots ``spec`` keeps (a root that some dim *is* stands for that dim): what every size
    ``spec`` admits must satisfy for the traced graph to be right on it. None when the traced
    spec has a root that no dim is and ``spec`` drops.

    >>> import torch
    >>> from torch.export import Dim
    >>> from export.exporter import Exporter
    >>> ex = Exporter.of(lambda x: x * 2, (torch.randn(3, 4),))
    >>> _, t = ex.trace(ex.parse({"x": {0: Dim("b", max=8)}}, classic=False))
    >>> traced_domain(t, t.spec)
    [x_size0 >= 0, x_size0 <= 8]
    """
    old = trace.spec
    kept = {r.name for r in spec.roots}
    subst: dict[sympy.Basic, sympy.Basic] = {}
    for root, primary, _ in old.groups():
        if primary is not None and primary.dim in trace.dim_syms:
            subst[root.symbol] = trace.dim_syms[primary.dim]
        elif root.name not in kept:
            return None
    rels: list[sympy.Basic] = []
    for root in old.roots:
        x = subst.get(root.symbol, root.symbol)
        rels += [r for r in (_bound(sympy.Ge, x, root.lo), _bound(sympy.Le, x, root.hi)) if r is not None]
    for decl in old.decls:
        sym = trace.dim_syms.get(decl.dim)
        if sym is None:
            return None
        if decl.expr is not None:
            rels.append(sympy.Eq(sym, decl.expr.xreplace(subst)))
        rels += [r for r in (_bound(sympy.Ge, sym, decl.lo), _bound(sympy.Le, sym, decl.hi)) if r is not None]
    rels += [c.xreplace(subst) for c in old.checks]
    return list(dict.fromkeys(r for r in rels if r is not sympy.true))


def same_structure(a: Spec, b: Spec) -> bool:
    """Whether ``a`` and ``b`` differ in their bounds only: the same roots, the same input dims
    declared the same way (mode, expression of the roots) and the same checks, i.e. the same
    symbols and relations to torch, which then asks the same questions on the same example.
    A fix that equates two dims, makes one a multiple or static changes torch's symbols (its
    graph would differ in them): that is verified by re-exporting.

    >>> from shapes.expr import int_symbol
    >>> from shapes.spec import DimDecl, InputDim, RootDim
    >>> b = int_symbol("b")
    >>> def spec(hi): return Spec("dynamic_shapes", (RootDim("b", 0, hi, "b"),),
    ...                           (DimDecl(InputDim("x", 0), "dynamic", b, "b"),))
    >>> same_structure(spec(None), spec(6)), same_structure(spec(6), spec(6).without([InputDim("x", 0)]))
    (True, False)
    """
    def shape(s: Spec) -> tuple[object, ...]:
        return (s.api, sorted(r.name for r in s.roots), sorted(((str(d.dim), d.mode, str(d.expr)) for d in s.decls)),
                s.checks)
    return shape(a) == shape(b)


def same_symbols(trace: Trace, spec: Spec) -> bool:
    """Whether a trace of ``spec`` starts with the symbols ``trace``'s torch program ends with,
    so that it would ask the same questions and build the same graph: ``spec`` is the traced
    spec with other bounds (:func:`same_structure`), or it equates dims that torch itself
    unified during the trace (an equality guard, ``s43 -> s17``: torch's program already holds
    them as one, as a trace of ``spec`` would from the start). That is: the same input dims
    in the same modes and the same checks; no new root; torch holds each root as the own
    symbol of one of the dims that *are* it; and each dim whose expression changed had its
    own torch symbol, which torch replaced by exactly that expression of the root. A new root
    (a multiple ``4 * _n``) or a static dim is another symbol to torch: re-exported. (Which
    dim's symbol torch keeps for two dims it unifies is torch's choice, the same in a re-export
    of ``spec``: the oracle tests compare the programs' symbols too.)"""
    old = trace.spec
    if same_structure(old, spec):
        return True
    if (spec.api, spec.checks) != (old.api, old.checks) or not {r.name for r in spec.roots} <= {r.name for r in old.roots}:
        return False
    if {(d.dim, d.mode) for d in spec.decls} != {(d.dim, d.mode) for d in old.decls}:
        return False
    own = {v: k for k, v in trace.sym_map.items() if v in trace.dim_syms.values()}  # dim's solver symbol -> torch's

    def final(sym: sympy.Basic) -> sympy.Basic | None:
        """The solver expression of what torch's own symbol for the dim ``sym`` became."""
        e: sympy.Basic | None = own.get(sym)
        for _ in range(len(trace.replacements) + 1):
            if e is None or not e.free_symbols & trace.replacements.keys():
                break
            e = e.xreplace(trace.replacements)
        return None if e is None else e.xreplace(trace.sym_map)

    before = {d.dim: d.expr for d in old.decls}
    for root, primary, related in spec.groups():
        if primary is None:
            return False
        group = [primary, *related]
        held = final(trace.dim_syms[primary.dim])  # what torch holds the root as: one bare dim of it
        if held not in {trace.dim_syms[d.dim] for d in group if d.expr == root.symbol}:
            return False
        if any(d.expr is not None and d.expr != before[d.dim]
               and final(trace.dim_syms[d.dim]) != d.expr.xreplace({root.symbol: held}) for d in group):
            return False
    return True


def _bound(op: type, x: sympy.Basic, value: int | None) -> sympy.Basic | None:
    return None if value is None else op(x, value)


def replayed(trace: Trace, spec: Spec) -> Trace | None:
    """``trace`` under ``spec``, or None when a re-export might take another path (see the
    module docstring). ``spec``'s example sizes must be the trace's (the caller's key)."""
    if trace.opaque_questions or not same_symbols(trace, spec):
        return None
    fresh = SolverBridge(spec, trace.inputs).trace()  # the spec declared, nothing asked yet
    s = fresh.solver  # (built here, told the trace's facts below, then frozen into the replayed trace)
    if any(fresh.dim_syms[d.dim] != trace.dim_syms.get(d.dim) for d in spec.decls):
        return None
    domain = traced_domain(trace, spec)
    if domain is None or any(s.decide(rel) is not Truth.TRUE for rel in domain):
        return None
    declared = {info.symbol for info in s.symbols}
    for info in trace.solver.symbols:  # torch's own symbols, dims torch made dynamic, data-dependent values
        if info.symbol not in declared:
            s.symbol(info.symbol.name, info.lo, info.hi, hint=info.hint, source=info.source, adapts=info.adapts)
    implied_guard = False
    try:
        for fact in trace.solver.facts[trace.spec_facts:]:
            if fact.reason.op == DECLARED:
                continue
            if s.decide(fact.rel) is Truth.TRUE:  # implied: a re-export would record no fact
                implied_guard |= fact.reason.kind != "trace_assumption"
            elif fact.reason.kind != "trace_assumption" and not is_assumption(fact, Assumption.RUNTIME_CHECK):
                s.guard_record(fact.rel, True, fact.reason)  # a guard's fact, as the bridge records it
            else:
                s.assume(fact.rel, fact.reason)
    except SolverError:  # (the example lies outside: validated before; never expected)
        return None
    if any(s.decide(q, cheap=True) is not Truth.UNKNOWN for q in trace.open_questions):
        return None
    return dataclasses.replace(  # (the same dim and AUTO symbols; roots equated by torch are gone)
        trace, spec=spec, solver=s, root_syms=fresh.root_syms, names=frozen_map({**trace.names, **fresh.names}),
        spec_facts=fresh.spec_facts,
        # a question whose fact the new spec implies is settled, not answered by a fact: the
        # >= 2 policy must see it (none implied: the same questions as traced)
        answered_by_fact=frozenset() if implied_guard else trace.answered_by_fact)


def declared_ranges(trace: Trace) -> dict[sympy.Symbol, tuple[int | None, int | None]]:
    """The range ``trace``'s spec alone gives each input size, keyed by torch's own symbol of
    the size: what a trace of that spec starts with, so that torch decides statically the
    guards these ranges imply (a replayed program drops them,
    :func:`export._torch_compat.drop_static_guards`, as a re-export never records them).

    >>> import torch
    >>> from torch.export import Dim
    >>> from export.exporter import Exporter
    >>> ex = Exporter.of(lambda x: x * 2, (torch.randn(3, 4),))
    >>> _, t = ex.trace(ex.parse({"x": {0: Dim("b", max=8)}}, classic=False))
    >>> sorted(declared_ranges(t).values())
    [(0, 8)]
    """
    spec_only = trace.solver.replica(kinds=("spec",))
    own = {v: k for k, v in trace.sym_map.items() if v in trace.dim_syms.values()}  # dim's solver symbol -> torch's
    return {own[sym]: spec_only.bounds(sym) for d, sym in trace.dim_syms.items() if sym in own and not d.is_value}
