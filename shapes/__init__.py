"""shapes: the language of symbolic dims (no torch, no z3).

Integer symbols, expressions with floor division and modulo, relations, user specs and
Python-source printers. Re-exports only.
"""

from shapes.errors import ParseError, ShapesError, SpecError, UnsupportedExpressionError
from shapes.expr import FloorDiv, canonical, check_supported, evaluate, int_symbol, symbols_of
from shapes.parse import parse_expr
from shapes.printing import to_python, to_text
from shapes.relation import as_difference, is_relation, negate
from shapes.spec import (
    CLASSIC_MAX,
    CLASSIC_MIN,
    ClassicConstraint,
    ClassicDim,
    ClassicEquality,
    ClassicExpr,
    DimBinding,
    DimSpec,
    InputDim,
    ShapeSpec,
    dynamic_dim,
)

__all__ = [
    "CLASSIC_MAX",
    "CLASSIC_MIN",
    "ClassicConstraint",
    "ClassicDim",
    "ClassicEquality",
    "ClassicExpr",
    "DimBinding",
    "DimSpec",
    "FloorDiv",
    "InputDim",
    "ParseError",
    "ShapeSpec",
    "ShapesError",
    "SpecError",
    "UnsupportedExpressionError",
    "as_difference",
    "canonical",
    "check_supported",
    "dynamic_dim",
    "evaluate",
    "int_symbol",
    "is_relation",
    "negate",
    "parse_expr",
    "symbols_of",
    "to_python",
    "to_text",
]
