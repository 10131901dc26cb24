"""A finished export's shape contract (:class:`shapes.contract.Contract`), read off its final solver.

The program admits exactly the input sizes for which its kept facts hold for some value of
the spec's roots (``batch``, ``_seq``). The contract says the same over input sizes alone, so
that a checker without a solver (or torch) can judge a call, and so that each condition can
be an assert in the graph:

* each root is read from one input dim it defines (``_seq = tokens.size(1) // 4``), which
  must then be a value the root can take (``tokens.size(1)`` divisible by 4); every other dim
  defined from it must equal what the root gives (``mask.size(1) == tokens.size(1)``);
* every other fact (guards, the trace's assumptions it keeps, the spec's checks) is rewritten
  with the roots so read; facts on torch's internal or data-dependent symbols are left to the
  program (their asserts stay in its graph);
* each input dim's final range is a condition of its own (implied by the facts, so it changes
  nothing, but it reads best and is what ONNX/ExecuTorch consumers bound memory by), worded
  with the fact that gives it where one fact does;
* a fact the ranges and the conditions kept before it already imply is dropped (the solver
  decides; an undecided one stays).

So the contract admits a call exactly when the program's facts do (the oracle in
``tests/export/program/test_contract.py`` checks it against ``ep.module()`` on grids).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sympy

from export.program.words import guard_words
from export.tracing.assumptions import Assumption, assumption
from export.tracing.trace import Trace
from shapes.affine import Affine
from shapes.contract import Condition, ConditionKind, Contract, ContractDim, ContractInput
from shapes.expr import FloorDiv
from shapes.printing import to_python
from shapes.spec import InputDim
from solver import DECLARED, Fact, Reason, Solver, SolverError, Truth

__all__ = ["contract_of", "ProgramInput"]

_ASSUMED = "the export assumed it"


@dataclass(frozen=True, slots=True)
class ProgramInput:
    """One user input of the program as the contract reads it: its leaf name (None: unnamed),
    its path from the call, and per dim its static size or None (dynamic); ``shape`` is None
    for an input that is no tensor, ``value`` an int input's static value (None: dynamic, or
    no int)."""

    name: str | None
    path: tuple[str | int, ...]
    kind: str
    shape: tuple[int | None, ...] = ()
    dtype: str | None = None
    value: int | None = None


@dataclass(frozen=True, slots=True)
class _Root:
    """A spec root read from one of its input dims: ``root = (dim - b) / a``."""

    dim: sympy.Symbol
    form: Affine


def contract_of(trace: Trace, final: Solver, inputs: Sequence[ProgramInput],
                runtime: Sequence[str] = ()) -> Contract:
    """The contract of the program whose kept facts are ``final``'s (see the module docstring);
    ``inputs`` are its user inputs in call order, ``runtime`` the words of its data-dependent
    asserts."""
    shown = _names(trace)
    entries, used, free = _inputs(trace, inputs)
    roots, derived = _roots(trace, used, shown)
    read = {r: _read_root(x) for r, x in roots.items()}
    dims = tuple(_dim(trace, final, sym, shown) for sym in used)
    values = {sym for d, sym in trace.dim_syms.items() if d.is_value}
    said = {sympy.Eq(trace.dim_syms[d.dim], d.expr) for d in trace.spec.decls
            if d.expr is not None and trace.dim_syms.get(d.dim) in used and Affine.of(d.expr) is not None}
    facts = [f for f in final.facts if _checkable(trace, f, said)]
    ranges = _ranges(dims, used, values, facts, read)
    checks = _pruned(used, dims, ranges + derived, _relations(final, facts, read, used, shown))
    return Contract(tuple(trace.inputs.params), entries, dims + free, tuple(ranges + derived + checks), tuple(runtime))


# -- inputs and dims ---------------------------------------------------------------------------

def _names(trace: Trace) -> dict[sympy.Symbol, str]:
    return {**{r.symbol: r.name for r in trace.spec.roots}, **trace.names}


def _inputs(trace: Trace, inputs: Sequence[ProgramInput]
            ) -> tuple[tuple[ContractInput, ...], list[sympy.Symbol], tuple[ContractDim, ...]]:
    """The contract's inputs, the input-dim symbols they use (in order), and a dim with no
    condition for each dynamic dim of the program the trace has no symbol for."""
    entries, used, free = [], [], []
    for i, p in enumerate(inputs):
        name = p.name if p.name is not None else f"input {i}"
        if p.kind == "int":
            sym = trace.dim_syms.get(InputDim(name, None)) if p.value is None else None
            shape: tuple[int | str, ...] = (sym.name,) if sym is not None else ((p.value,) if p.value is not None else ())
            used += [sym] if sym is not None else []
        elif p.kind == "tensor":
            dims: list[int | str] = []
            for d, n in enumerate(p.shape):
                sym = trace.dim_syms.get(InputDim(name, d)) if n is None else None
                if n is not None:
                    dims.append(n)
                    continue
                if sym is None:
                    unknown = ContractDim(f"{InputDim(name, d).symbol.name}_any", str(InputDim(name, d)), None, 0, None)
                    free.append(unknown)
                    dims.append(unknown.symbol)
                    continue
                dims.append(sym.name)
                used.append(sym)
            shape = tuple(dims)
        else:
            shape = ()
        entries.append(ContractInput(name, p.path, p.kind, shape, p.dtype))
    return tuple(entries), list(dict.fromkeys(used)), tuple(free)


def _dim(trace: Trace, final: Solver, sym: sympy.Symbol, shown: Mapping[sympy.Symbol, str]) -> ContractDim:
    d = next(d for d, s in trace.dim_syms.items() if s == sym)
    decl = trace.spec.decl(d)
    lo, hi = final.bounds(sym)
    text = to_python(decl.expr) if decl is not None and decl.expr is not None else None
    return ContractDim(sym.name, shown.get(sym, str(d)), text, lo, hi)


# -- roots ---------------------------------------------------------------------------------------

def _roots(trace: Trace, used: Sequence[sympy.Symbol], shown: Mapping[sympy.Symbol, str]
           ) -> tuple[dict[sympy.Symbol, _Root], list[Condition]]:
    """Each root read from one of its input dims (the one that *is* the root first), and the
    conditions that the dims defined from it say: the reading dim a value of the form, the
    others equal to what the root gives."""
    members: dict[sympy.Symbol, list[tuple[sympy.Symbol, Affine]]] = {}
    for decl in trace.spec.decls:
        sym = trace.dim_syms.get(decl.dim)
        form = Affine.of(decl.expr) if decl.expr is not None else None
        if sym in used and form is not None:
            members.setdefault(form.root, []).append((sym, form))
    roots: dict[sympy.Symbol, _Root] = {}
    conditions: list[Condition] = []
    for root, dims in members.items():
        dims.sort(key=lambda m: (m[1].a != 1 or m[1].b != 0))
        first, form = dims[0]
        roots[root] = _Root(first, form)
        name, says = shown[first], f"{shown[first]} = {_form_text(form, shown)}"
        if form.a > 1:
            r = form.b % form.a
            conditions.append(Condition(
                sympy.Eq(sympy.Mod(first - form.b, form.a), 0),
                f"{name} must be divisible by {form.a}" if r == 0 else f"{name} % {form.a} must be {r}",
                ConditionKind.DERIVED.value, note=says))
        value = _read_root(roots[root])
        for sym, other in dims[1:]:
            rel = sympy.Eq(sym, _affine(other, value, form))
            if (other.a, other.b) == (form.a, form.b):
                conditions.append(Condition(rel, f"{shown[sym]} must equal {name}", ConditionKind.EQUAL.value))
            else:
                conditions.append(Condition(
                    rel, f"{shown[sym]} must equal {to_python(rel.rhs, shown)}", ConditionKind.DERIVED.value,
                    note=f"{shown[sym]} = {_form_text(other, shown)}, {says}"))
    return roots, conditions


def _form_text(form: Affine, shown: Mapping[sympy.Symbol, str]) -> str:
    expr = form.a * form.root + form.b
    return to_python(expr, shown) if form.a != 1 or form.b else shown.get(form.root, str(form.root))


def _read_root(root: _Root) -> sympy.Expr:
    form = root.form
    return root.dim - form.b if form.a == 1 else FloorDiv(root.dim - form.b, form.a)


def _affine(other: Affine, value: sympy.Expr, read: Affine) -> sympy.Expr:
    """``other.a * root + other.b`` with the root read as ``value``, without the floor
    division where the reading dim's form makes it exact."""
    if read.a != 1 and other.a % read.a == 0:
        return sympy.expand(other.a // read.a * (value.args[0]) + other.b)
    return sympy.expand(other.a * value + other.b)


# -- facts -----------------------------------------------------------------------------------

def _checkable(trace: Trace, fact: Fact, said: set[sympy.Basic]) -> bool:
    """A fact the contract can say: about input dims and roots only, and not the spec's
    declared ranges and derived dims (``said``), which the ranges and :func:`_roots` say."""
    if fact.reason.kind == "spec" and (fact.reason.op == DECLARED or fact.rel in said):
        return False
    return not fact.rel.free_symbols & (trace.internal_syms | trace.unbacked_syms)


def _rewritten(fact: Fact, read: Mapping[sympy.Symbol, sympy.Expr], used: Sequence[sympy.Symbol]) -> sympy.Basic | None:
    rel = fact.rel.xreplace(dict(read)) if read else fact.rel
    return rel if rel.free_symbols <= set(used) and rel is not sympy.true else None


def _bounds_of(rel: sympy.Basic, sym: sympy.Symbol, size: bool) -> tuple[int | None, int | None] | None:
    """The range ``rel`` (on ``sym`` alone) says, when it is exactly a range; else None."""
    probe = Solver()
    x = probe.symbol(sym.name, 0 if size else None, None)
    try:
        probe.assume(rel.xreplace({sym: x}))
        lo, hi = probe.bounds(x)
        back = Solver()
        y = back.symbol(sym.name, lo if lo is not None else (0 if size else None), hi)
        if back.decide(rel.xreplace({sym: y})) is not Truth.TRUE:
            return None
    except SolverError:
        return None
    return lo, hi


def _ranges(dims: Sequence[ContractDim], used: Sequence[sympy.Symbol], values: set[sympy.Symbol],
            facts: Sequence[Fact], read: Mapping[sympy.Symbol, sympy.Expr]) -> list[Condition]:
    """Each input dim's final range as conditions, worded with the one fact that gives a bound
    where there is one (its line; the trace's assumption; the root's declared range)."""
    single: dict[sympy.Symbol, list[tuple[Fact, tuple[int | None, int | None]]]] = {}
    for fact in facts:
        rel = _rewritten(fact, read, used)
        if rel is not None and len(rel.free_symbols) == 1:
            sym = next(iter(rel.free_symbols))
            got = _bounds_of(rel, sym, sym not in values)
            if got is not None:
                single.setdefault(sym, []).append((fact, got))
    out = []
    for sym, dim in zip(used, dims):
        floor = None if sym in values else 0
        if dim.lo is not None and (floor is None or dim.lo > floor):
            giver = next((f for f, (lo, _) in single.get(sym, ()) if lo == dim.lo), None)
            out.append(_range(sympy.Ge(sym, dim.lo), f"{dim.name} must be >= {dim.lo}", giver, dim))
        if dim.hi is not None:
            giver = next((f for f, (_, hi) in single.get(sym, ()) if hi == dim.hi), None)
            out.append(_range(sympy.Le(sym, dim.hi), f"{dim.name} must be <= {dim.hi}", giver, dim))
    return out


def _range(rel: sympy.Basic, words: str, giver: Fact | None, dim: ContractDim) -> Condition:
    kind = ConditionKind.RANGE.value
    if giver is None:
        return Condition(rel, words, kind, note=_root_note(dim))
    if giver.reason.kind == "trace_assumption":
        tag = assumption(giver.reason)
        why = ("sizes 0 and 1 are specialized while tracing" if tag is Assumption.FLOOR else
               "torch's size symbols are positive, so a branch on size 0 was decided without a guard"
               if tag is Assumption.POSITIVE else giver.reason.op or "")
        return Condition(rel, words, kind, note=f"{_ASSUMED}: {why}")
    return Condition(rel, words, kind, origin=giver.reason.origin, code=giver.reason.op)


def _root_note(dim: ContractDim) -> str | None:
    """``tokens.size(1) = 4 * _seq`` for a dim a derived Dim declares."""
    if dim.dim is None or dim.dim.isidentifier():
        return None
    return f"{dim.name} = {dim.dim}"


def _relations(final: Solver, facts: Sequence[Fact], read: Mapping[sympy.Symbol, sympy.Expr],
               used: Sequence[sympy.Symbol], shown: Mapping[sympy.Symbol, str]) -> list[tuple[sympy.Basic, Condition]]:
    """Every fact that is no range of one dim, rewritten over input dims, in words."""
    out: list[tuple[sympy.Basic, Condition]] = []
    seen: set[sympy.Basic] = set()
    for fact in facts:
        rel = _rewritten(fact, read, used)
        if rel is None or rel in seen:
            continue
        seen.add(rel)
        try:
            words = guard_words(final, fact.rel, shown)
        except Exception:  # noqa: BLE001 - a condition's wording must never fail the export
            words = fact.reason.text or str(fact.rel)
        if fact.reason.kind == "trace_assumption":
            out.append((rel, Condition(rel, words, ConditionKind.RELATION.value, note=_ASSUMED)))
        else:
            out.append((rel, Condition(rel, words, ConditionKind.RELATION.value, origin=fact.reason.origin,
                                       code=fact.reason.op)))
    return out


def _pruned(used: Sequence[sympy.Symbol], dims: Sequence[ContractDim], kept: Sequence[Condition],
            candidates: Sequence[tuple[sympy.Basic, Condition]]) -> list[Condition]:
    """The candidates that the ranges, ``kept`` and the candidates kept before them do not
    already imply (a sound solver decides: an undecided candidate stays)."""
    s = Solver()
    for sym, dim in zip(used, dims):
        s.symbol(sym.name, dim.lo, dim.hi)
    out = []
    try:
        for c in kept:
            s.assume(c.relation, Reason("spec", c.words, None, None))
    except SolverError:
        return [c for _, c in candidates]
    for rel, cond in candidates:
        try:
            if s.decide(rel) is Truth.TRUE:
                continue
            s.assume(rel, Reason("guard", cond.words, None, None))
        except SolverError:
            pass
        out.append(cond)
    return out

