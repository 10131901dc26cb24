"""Fix synthesis: the weakest change to the spec under which every recorded guard holds.

Fixes are frozen records (data first); rendering them as code is the exporter's job. Every
fix is implied by the facts (spec + guards), so applying them keeps every size the traced
program accepts; :func:`suggest` then re-decides every guard under the fixed spec and
only reports ``verified=True`` when all come out TRUE. Together: the fixed spec describes
exactly the feasible sizes, which is the weakest spec that implies the guards.

>>> import sympy
>>> from solver import Solver, Reason
>>> s = Solver()
>>> x = s.symbol("x", lo=2, hi=None, hint=8)
>>> _ = s.guard(sympy.Le(x, 16), True, Reason.guard("x.size(0) <= 16", "model.py:3"))
>>> _ = s.guard(sympy.Eq(sympy.Mod(x, 2), 0), True, Reason.guard("x.size(0) % 2 == 0", "model.py:4"))
>>> fixes = suggest(s)
>>> [f.describe() for f in fixes]
['x in [2, 16]', 'x = 2*_x + 0 (x divisible by 2)']
>>> fixes.verified
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Union

import sympy

from shapes.expr import int_symbol
from shapes.ranges import range_text
from solver.truth import Reason, Truth

from solver.engine import Solver

__all__ = [
    "RangeFix",
    "EqualFix",
    "RelationFix",
    "DivisibleFix",
    "SpecializeFix",
    "CheckFix",
    "Fix",
    "Fixes",
    "suggest",
]


@dataclass(frozen=True, slots=True)
class RangeFix:
    """Declare ``symbol`` in ``[lo, hi]`` (``hi=None``: unbounded)."""

    symbol: sympy.Symbol
    lo: int | None
    hi: int | None
    reasons: tuple[Reason, ...] = ()

    def relations(self) -> list[sympy.Basic]:
        out = [] if self.lo is None else [sympy.Ge(self.symbol, self.lo)]
        return out + ([] if self.hi is None else [sympy.Le(self.symbol, self.hi)])

    def describe(self) -> str:
        return f"{self.symbol} in {range_text(self.lo, self.hi)}"


@dataclass(frozen=True, slots=True)
class EqualFix:
    """Declare ``symbol == other`` (the same dim)."""

    symbol: sympy.Symbol
    other: sympy.Symbol
    reasons: tuple[Reason, ...] = ()

    def relations(self) -> list[sympy.Basic]:
        return [sympy.Eq(self.symbol, self.other)]

    def describe(self) -> str:
        return f"{self.symbol} == {self.other}"


@dataclass(frozen=True, slots=True)
class RelationFix:
    """Declare ``symbol == expr`` for a linear ``expr`` of another dim (a derived dim)."""

    symbol: sympy.Symbol
    expr: sympy.Expr
    reasons: tuple[Reason, ...] = ()

    def relations(self) -> list[sympy.Basic]:
        return [sympy.Eq(self.symbol, self.expr)]

    def describe(self) -> str:
        return f"{self.symbol} == {self.expr}"


@dataclass(frozen=True, slots=True)
class DivisibleFix:
    """Declare ``symbol == modulus*fresh + residue``: a derived dim for divisibility."""

    symbol: sympy.Symbol
    modulus: int
    residue: int
    fresh: sympy.Symbol
    fresh_lo: int | None
    fresh_hi: int | None
    reasons: tuple[Reason, ...] = ()

    def relations(self) -> list[sympy.Basic]:
        return [sympy.Eq(sympy.Mod(self.symbol, self.modulus), self.residue)]

    def describe(self) -> str:
        kind = f"divisible by {self.modulus}" if self.residue == 0 else f"= {self.residue} mod {self.modulus}"
        return f"{self.symbol} = {self.modulus}*{self.fresh} + {self.residue} ({self.symbol} {kind})"


@dataclass(frozen=True, slots=True)
class SpecializeFix:
    """The dim is not dynamic: it can only be ``value``."""

    symbol: sympy.Symbol
    value: int
    reasons: tuple[Reason, ...] = ()

    def relations(self) -> list[sympy.Basic]:
        return [sympy.Eq(self.symbol, self.value)]

    def describe(self) -> str:
        return f"{self.symbol} == {self.value} (static)"


@dataclass(frozen=True, slots=True)
class CheckFix:
    """A relation a dim spec cannot say (nonlinear, a hole in a range): a runtime check."""

    rel: sympy.Basic
    reasons: tuple[Reason, ...] = ()

    def relations(self) -> list[sympy.Basic]:
        return [self.rel]

    def describe(self) -> str:
        return f"check {self.rel}"


Fix = Union[RangeFix, EqualFix, RelationFix, DivisibleFix, SpecializeFix, CheckFix]


@dataclass(frozen=True, slots=True)
class Fixes:
    """The suggested changes, in a stable order, and whether re-deciding every guard under
    the fixed spec proved them all (``verified``)."""

    items: tuple[Fix, ...]
    verified: bool

    def __iter__(self) -> Iterator[Fix]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def relations(self) -> list[sympy.Basic]:
        """All fixes as relations (to assume as spec facts)."""
        return [r for f in self.items for r in f.relations()]


def _reasons_for(solver: Solver, rels: list[sympy.Basic]) -> tuple[Reason, ...]:
    """The non-spec reasons behind a fix: the guards that explain its relations."""
    out: list[Reason] = []
    for rel in rels:
        try:
            facts = solver.explain(rel)
        except Exception:  # noqa: BLE001 - an unexplainable fix keeps no reasons
            continue
        for f in facts:
            if f.reason.kind != "spec" and f.reason not in out:
                out.append(f.reason)
    return tuple(out)


def suggest(solver: Solver, kinds: tuple[str, ...] = ("guard", "trace_assumption"), *,
            reasons: bool = True) -> Fixes:
    """The weakest verified change to ``solver``'s spec under which every fact of ``kinds``
    (by default every guard) is implied; empty when the spec already implies them all.
    ``reasons``: give each fix the guards that explain it (an unsat core per relation: the
    costliest part; a caller that shows no reasons passes False)."""
    spec = solver.replica(kinds=("spec",))
    targets = [f for f in solver.facts if f.reason.kind in kinds]
    if all(spec.decide(f.rel) is Truth.TRUE for f in targets):
        return Fixes((), True)
    candidates = list(_class_fixes(solver, spec)) + list(_residual_fixes(solver))
    chosen: list[Fix] = []
    fixed = spec
    for fix in candidates:
        rels = fix.relations()
        if all(fixed.decide(r) is Truth.TRUE for r in rels):
            continue  # the spec (with earlier fixes) already says it
        chosen.append(_with_reasons(fix, _reasons_for(solver, rels)) if reasons else fix)
        for r in rels:
            fixed.assume(r, Reason("spec", f"fix: {fix.describe()}"))
    verified = all(fixed.decide(f.rel) is Truth.TRUE for f in targets)
    return Fixes(tuple(chosen), verified)


def _with_reasons(fix: Fix, reasons: tuple[Reason, ...]) -> Fix:
    return dataclasses.replace(fix, reasons=reasons)


def _class_fixes(solver: Solver, spec: Solver) -> Iterator[Fix]:
    for cls in solver.classes():
        head = cls[0]
        for other in cls[1:]:
            yield EqualFix(other, head)
    for rel in solver.relations():
        if isinstance(rel.lhs, sympy.Symbol):
            yield RelationFix(rel.lhs, rel.rhs)
    for cls in solver.classes():
        head = cls[0]
        lo, hi = solver.bounds(head)
        if lo is not None and lo == hi:
            yield SpecializeFix(head, lo)
            continue
        yield RangeFix(head, lo, hi)
    for root, m, r in solver.congruences():
        lo, hi = solver.bounds(root)
        fresh_lo = None if lo is None else -((r - lo) // m)
        fresh_hi = None if hi is None else (hi - r) // m
        yield DivisibleFix(root, m, r, int_symbol(f"_{root.name}"), fresh_lo, fresh_hi)


def _residual_fixes(solver: Solver) -> Iterator[Fix]:
    for f in solver.facts:
        if f.reason.kind != "spec":
            yield CheckFix(f.rel)
