"""Turn the solver's fix records into a corrected :class:`shapes.spec.Spec`.

The solver speaks of its own symbols (root dims and input-dim symbols); a fix is applied
by rewriting the spec's root dims: a range narrows a root, an equality or a linear
relation substitutes one root by an expression of another, divisibility introduces a
fresh root (``b = 4*_b``), a specialization makes dims static. What a dim spec cannot
say (a nonlinear relation, a hole in a range) stays as a runtime check to add in code.
"""

from __future__ import annotations

import dataclasses

from collections.abc import Mapping
from dataclasses import dataclass

import sympy

from export.tracing.trace import Trace
from shapes.affine import Affine
from shapes.expr import int_symbol
from shapes.spec import DimDecl, InputDim, RootDim, Spec, classic_name
from solver import CheckFix, DivisibleFix, EqualFix, Fix, Fixes, RangeFix, RelationFix, SpecializeFix, solve_linear

__all__ = ["FixedSpec", "apply_fixes"]


@dataclass(frozen=True, slots=True)
class FixedSpec:
    """The corrected spec, and the relations only code can check (``torch._check``)."""

    spec: Spec
    checks: tuple[sympy.Basic, ...]
    unexpressed: tuple[Fix, ...]


class _Rewriter:
    def __init__(self, spec: Spec, dim_syms: Mapping[InputDim, sympy.Symbol]) -> None:
        self.ranges: dict[str, tuple[int | None, int | None]] = {r.name: (r.lo, r.hi) for r in spec.roots}
        self.texts: dict[str, str] = {r.name: r.text for r in spec.roots}
        self.subst: dict[sympy.Symbol, sympy.Expr] = {}
        self.decls = list(spec.decls)
        self.api = spec.api
        by_sym = {sym: d for d, sym in dim_syms.items()}
        self.decl_of = {sym: next((x for x in spec.decls if x.dim == d), None) for sym, d in by_sym.items()}
        self.value_roots = {s.name for x in spec.decls if x.dim.is_value and x.expr is not None
                            for s in x.expr.free_symbols}  # an int input's own Dim: no one else's

    # -- expressions in (current) roots ------------------------------------------------------
    def expr(self, sym: sympy.Symbol) -> sympy.Expr:
        if sym.name in self.ranges or sym in self.subst:
            return self._resolve(int_symbol(sym.name))
        decl = self.decl_of.get(sym)
        if decl is None:
            raise KeyError(sym)
        if decl.expr is None:  # a hint dim a fix must talk about: it becomes a root, with its bounds
            name = classic_name(decl.dim)
            while name in self.ranges or name == sym.name:
                name = f"_{name}"
            self.ranges[name] = (decl.lo, decl.hi)
            self.texts[name] = f"{decl.dim}"
            if decl.dim.is_value:
                self.value_roots.add(name)
            self.decls[self.decls.index(decl)] = DimDecl(decl.dim, "dynamic", int_symbol(name), name,
                                                         lo=None if decl.dim.is_value else 0)
            self.decl_of[sym] = self.decls[-1]
            return int_symbol(name)
        return self._resolve(decl.expr)

    def _resolve(self, e: sympy.Expr) -> sympy.Expr:
        for _ in range(8):
            new = sympy.expand(e.xreplace(self.subst))
            if new == e:
                break
            e = new
        return e

    @staticmethod
    def affine(e: sympy.Expr) -> tuple[sympy.Symbol, int, int] | None:
        form = Affine.of(e)
        return None if form is None else (form.root, form.a, form.b)

    # -- fixes -----------------------------------------------------------------------------------
    def narrow(self, r: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        old_lo, old_hi = self.ranges[r.name]
        new_lo = old_lo if lo is None else (lo if old_lo is None else max(old_lo, lo))
        new_hi = hi if old_hi is None else (old_hi if hi is None else min(old_hi, hi))
        self.ranges[r.name] = (new_lo, new_hi)

    def range_fix(self, e: sympy.Expr, lo: int | None, hi: int | None) -> bool:
        aff = self.affine(e)
        if aff is None:
            return not e.free_symbols
        r, a, b = aff
        if a < 0:
            return False
        self.narrow(r, *Affine(r, a, b).root_range(lo, hi))
        return True

    def _ties_int_input(self, *exprs: sympy.Expr) -> bool:
        """Whether the relation of ``exprs`` ties an int input's Dim to another Dim: an int
        takes a Dim of its own (torch would not check a shared one), so that is a check."""
        names = {s.name for e in exprs for s in e.free_symbols}
        return len(names) > 1 and bool(names & self.value_roots)

    def equate(self, e1: sympy.Expr, e2: sympy.Expr) -> bool:
        if self._ties_int_input(e1, e2):
            return False
        for lhs, rhs in ((e1, e2), (e2, e1)):
            aff = self.affine(lhs)
            if aff is None or abs(aff[1]) != 1 or aff[0] in rhs.free_symbols:
                continue
            r, a, b = aff
            value = sympy.expand((rhs - b) * a)  # r == (rhs - b) / a with a = +-1
            vaff = self.affine(value)
            if vaff is not None and vaff[1] < 0:
                continue  # a Dim cannot be a decreasing function of another (10 - a)
            lo, hi = self.ranges.pop(r.name)
            self.subst[r] = value
            if not self.range_fix(value, lo, hi) and value.free_symbols:
                self.ranges[r.name] = (lo, hi)
                del self.subst[r]
                continue
            return True
        return False

    def divisible(self, e: sympy.Expr, m: int, res: int, fresh: str) -> bool:
        aff = self.affine(e)
        if aff is None:
            return False
        r, a, b = aff
        if r.name in self.value_roots:
            return False  # an int input takes no derived Dim: its divisibility is a check
        c = solve_linear(a, b, (m, res))
        if c is None:
            return False
        m2, r2 = c
        if m2 == 1:
            return True
        lo, hi = self.ranges.pop(r.name)
        name = fresh if fresh not in self.ranges else f"{fresh}_{r.name}"
        new = int_symbol(name)
        self.subst[r] = m2 * new + r2
        self.ranges[name] = (max(0, -((r2 - (lo or 0)) // m2)), None if hi is None else (hi - r2) // m2)
        self.texts[name] = f"{r.name} = {m2}*{name} + {r2}" if r2 else f"{r.name} = {m2}*{name}"
        return True

    def specialize(self, e: sympy.Expr, v: int) -> bool:
        aff = self.affine(e)
        if aff is None:
            return not e.free_symbols and e == v
        r, a, b = aff
        if (v - b) % a:
            return False
        self.ranges.pop(r.name)
        self.subst[r] = sympy.Integer((v - b) // a)
        return True

    def result(self, checks: list[sympy.Basic], unexpressed: list[Fix]) -> FixedSpec:
        decls = []
        used: set[str] = set()
        for d in self.decls:
            if d.expr is None:
                decls.append(d)
                continue
            e = self._resolve(d.expr)
            if not e.free_symbols:
                continue  # static now
            used |= {s.name for s in e.free_symbols}
            decls.append(dataclasses.replace(d, expr=e))  # (its bounds, as declared: an int's may be None)
        roots = tuple(RootDim(n, lo, hi, self.texts.get(n, n)) for n, (lo, hi) in self.ranges.items() if n in used)
        return FixedSpec(Spec(self.api, roots, tuple(decls), tuple(checks)), tuple(checks), tuple(unexpressed))


def apply_fixes(trace: Trace, fixes: Fixes) -> FixedSpec:
    """The corrected spec of ``trace`` for ``fixes`` (see the module docstring)."""
    spec = trace.spec
    w = _Rewriter(spec, trace.dim_syms)
    checks: list[sympy.Basic] = []
    unexpressed: list[Fix] = []
    for fix in fixes:
        try:
            ok = _apply_one(w, fix)
        except KeyError:
            ok = False
        if not ok:
            unexpressed.append(fix)
            checks.extend(_in_input_dims(rel, trace.dim_syms, spec) for rel in fix.relations())
    return w.result(checks, unexpressed)


def _in_input_dims(rel: sympy.Basic, dim_syms: Mapping[InputDim, sympy.Symbol], spec: Spec) -> sympy.Basic:
    """``rel`` with root-dim symbols replaced by an input dim equal to them, so that the
    check can be written in the model (``x.shape[0]``) and assumed by a re-export."""
    subs = {}
    for sym in rel.free_symbols:
        if sym in dim_syms.values():
            continue
        primary = next((d for d in spec.decls if d.expr == sym and d.dim in dim_syms), None)
        if primary is not None:
            subs[sym] = dim_syms[primary.dim]
    return rel.xreplace(subs) if subs else rel


def _apply_one(w: _Rewriter, fix: Fix) -> bool:
    if isinstance(fix, RangeFix):
        return w.range_fix(w.expr(fix.symbol), fix.lo, fix.hi)
    if isinstance(fix, EqualFix):
        return w.equate(w.expr(fix.symbol), w.expr(fix.other))
    if isinstance(fix, RelationFix):
        rhs = fix.expr.xreplace({s: w.expr(s) for s in fix.expr.free_symbols})
        return w.equate(w.expr(fix.symbol), rhs)
    if isinstance(fix, DivisibleFix):
        return w.divisible(w.expr(fix.symbol), fix.modulus, fix.residue, fix.fresh.name)
    if isinstance(fix, SpecializeFix):
        return w.specialize(w.expr(fix.symbol), fix.value)
    if isinstance(fix, CheckFix):
        return False
    return False
