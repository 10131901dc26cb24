"""The records a solver hands out: declared symbols, answered guards, violations.

>>> from shapes import int_symbol
>>> SymbolInfo(int_symbol("n"), 2, None, hint=8, source="x.size(0)")
SymbolInfo(symbol=n, lo=2, hi=None, hint=8, source='x.size(0)', order=0, adapts=False)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from solver.truth import Fact, Reason, Truth

__all__ = ["SymbolInfo", "GuardRecord", "Violation"]


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    """A declared symbol: range ``[lo, hi]`` (None = unbounded), example value, source;
    ``adapts``: its declared range adapts to what the guards need (a front end's inferred
    dim, torch's ``Dim.AUTO``): a guard on it alone is no violation of its declaration."""

    symbol: sympy.Symbol
    lo: int | None
    hi: int | None
    hint: int | None = None
    source: str | None = None
    order: int = 0
    adapts: bool = False


@dataclass(frozen=True, slots=True)
class GuardRecord:
    """One question of the guard stream: the relation, the hint, the answer and how it came."""

    rel: sympy.Basic
    hint: bool | None
    result: bool
    decided: Truth
    reason: Reason


@dataclass(frozen=True, slots=True)
class Violation:
    """A recorded guard (or trace assumption) that the spec facts do not imply."""

    fact: Fact
    truth_under_spec: Truth
