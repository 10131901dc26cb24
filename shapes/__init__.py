"""shapes: the language of symbolic dims (no torch, no z3).

Integer symbols, expressions with floor division and modulo, affine forms, relations, the
normalized spec with the classic constraint records, and Python-source printers. Re-exports only.
"""

__version__ = "0.1.0"
"""symshape's version (the same in ``shapes``, ``solver``, ``export`` and pyproject.toml)."""

from shapes.affine import Affine, linear_terms, parse_affine
from shapes.classic import ClassicConstraint, ClassicDim, ClassicEquality, ClassicExpr, dynamic_dim, from_classic
from shapes.errors import ParseError, ShapesError, SpecError, UnsupportedExpressionError
from shapes.expr import FloorDiv, canonical, check_supported, evaluate, int_symbol, symbols_of
from shapes.parse import parse_expr
from shapes.printing import to_python, to_text
from shapes.ranges import CLASSIC_MAX, CLASSIC_MIN
from shapes.relation import as_difference, is_relation, negate
from shapes.spec import DimDecl, InputDim, RootDim, Spec

__all__ = [
    "CLASSIC_MAX",
    "CLASSIC_MIN",
    "Affine",
    "ClassicConstraint",
    "ClassicDim",
    "ClassicEquality",
    "ClassicExpr",
    "DimDecl",
    "FloorDiv",
    "InputDim",
    "ParseError",
    "RootDim",
    "ShapesError",
    "Spec",
    "SpecError",
    "UnsupportedExpressionError",
    "as_difference",
    "canonical",
    "check_supported",
    "dynamic_dim",
    "evaluate",
    "from_classic",
    "int_symbol",
    "is_relation",
    "linear_terms",
    "negate",
    "parse_affine",
    "parse_expr",
    "symbols_of",
    "to_python",
    "to_text",
]
