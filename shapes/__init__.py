"""shapes: the language of symbolic dims (no torch, no z3).

Integer symbols, expressions with floor division and modulo, relations, user specs and
Python-source printers. Re-exports only.
"""

from shapes.errors import ParseError, ShapesError, SpecError, UnsupportedExpressionError
from shapes.expr import FloorDiv, canonical, check_supported, evaluate, int_symbol, symbols_of
from shapes.relation import as_difference, is_relation, negate

__all__ = [
    "FloorDiv",
    "ParseError",
    "ShapesError",
    "SpecError",
    "UnsupportedExpressionError",
    "as_difference",
    "canonical",
    "check_supported",
    "evaluate",
    "int_symbol",
    "is_relation",
    "negate",
    "symbols_of",
]
