"""torch's symbols, value ranges and sympy functions, read as plain Python values.

Ranges are ``(lo, hi)`` pairs of ints with None for an infinite bound; the sympy function
classes torch puts in its expressions are re-exported here for :mod:`export.tracing.convert`.
"""

from __future__ import annotations

from typing import Any

import sympy
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.utils._sympy.functions import (
    CeilToInt,
    CleanDiv,
    FloorDiv,
    FloorToInt,
    Identity,
    IntTrueDiv,
    IsNonOverlappingAndDenseIndicator,
    LShift,
    Max,
    Min,
    Mod,
    ModularIndexing,
    PowByNatural,
    PythonMod,
    RoundToInt,
    RShift,
    TruncToInt,
    Where,
)
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.symbol import SymT, symbol_is_type
from torch.utils._sympy.value_ranges import ValueRanges

__all__ = [
    "value_range", "range_bounds", "symbol_kind", "symbol_range", "symbol_hint",
    # torch's sympy functions (for export.tracing.convert)
    "FloorDiv", "CleanDiv", "ModularIndexing", "PythonMod", "Mod", "IntTrueDiv",
    "FloorToInt", "CeilToInt", "TruncToInt", "RoundToInt", "PowByNatural", "Max", "Min",
    "Where", "Identity", "LShift", "RShift", "IsNonOverlappingAndDenseIndicator", "int_oo",
]


def value_range(lo: int | None, hi: int | None) -> ValueRanges:
    """torch's ``ValueRanges`` for ``[lo, hi]``; None means unbounded (``int_oo``)."""
    return ValueRanges(-int_oo if lo is None else lo, int_oo if hi is None else hi)


def range_bounds(vr: ValueRanges) -> tuple[int | None, int | None]:
    """``(lo, hi)`` of a torch ``ValueRanges`` as Python ints, None for infinite bounds."""

    def conv(b: Any) -> int | None:
        if b in (int_oo, -int_oo, sympy.oo, -sympy.oo):
            return None
        return int(b)

    return conv(vr.lower), conv(vr.upper)


def symbol_kind(sym: sympy.Symbol) -> str:
    """``"backed"`` (input size ``s*``), ``"unbacked"`` (``u*``, e.g. from ``.item()``),
    ``"float"`` or ``"other"``."""
    if symbol_is_type(sym, SymT.SIZE):
        return "backed"
    if symbol_is_type(sym, SymT.UNBACKED_INT):
        return "unbacked"
    if symbol_is_type(sym, (SymT.FLOAT, SymT.UNBACKED_FLOAT)):
        return "float"
    return "other"



def symbol_range(env: ShapeEnv, sym: sympy.Symbol) -> tuple[int | None, int | None]:
    """torch's current range of ``sym`` in ``env`` (None = unbounded)."""
    return range_bounds(env.var_to_range[sym])


def symbol_hint(env: ShapeEnv, sym: sympy.Symbol) -> int | None:
    """The example value of a backed symbol of ``env``, or None."""
    value = env.backed_var_to_val.get(sym)
    return None if value is None else int(value)
