"""Printers: symbolic dims as Python source, and a canonical text form for JSON.

:func:`to_python` writes an expression or relation as a Python expression over ints,
with minimal but always correct parentheses; :func:`to_text` writes the canonical text
that :func:`shapes.parse.parse_expr` reads back to an equal sympy object.

>>> import sympy
>>> from shapes.expr import FloorDiv, int_symbol
>>> b, n = int_symbol("b"), int_symbol("n")
>>> to_python(sympy.Eq(n, 2 * b + 1))
'n == 2 * b + 1'
>>> to_python(sympy.Ne(sympy.Mod(n, 4), 0), {n: "x.size(0)"})
'x.size(0) % 4 != 0'
>>> to_python(-FloorDiv(n, 2) + b)
'b - n // 2'
>>> to_python(sympy.And(n >= 2, sympy.Or(b < 3, sympy.Eq(b, n))))
'n >= 2 and (b == n or b < 3)'
>>> to_text(n / 2 + 1)
'n / 2 + 1'
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Mapping

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.expr import FloorDiv, canonical, check_supported

__all__ = ["to_python", "to_text"]

# Python operator precedence, loosest first.
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _POW, _ATOM = range(9)

_CMP_OPS: dict[type, str] = {
    sympy.Eq: "==", sympy.Ne: "!=", sympy.Lt: "<", sympy.Le: "<=", sympy.Gt: ">", sympy.Ge: ">=",
}


def to_python(expr_or_rel: sympy.Basic, names: Mapping[sympy.Symbol, str] | None = None) -> str:
    """Print an expression or relation as Python source over ints.

    Parameters
    ----------
    expr_or_rel
        An expression or relation of the symbolic-dim language.
    names
        Source text for symbols (``{s0: "x.size(0)"}``); unmapped symbols print as their
        names. Text that is not a Python primary (name, call, attribute, subscript,
        constant) is parenthesized.

    Raises
    ------
    UnsupportedExpressionError
        For constructs outside the language, and for non-integer rationals (Python's ``/``
        would compute floats; write ``FloorDiv`` instead).

    >>> from shapes.expr import int_symbol
    >>> a, b = int_symbol("a"), int_symbol("b")
    >>> to_python(sympy.Min(a, b) * (a - 1), {a: "x.shape[0]"})
    '(x.shape[0] - 1) * min(x.shape[0], b)'
    """
    return _Printer(names or {}, exact_text=False).doprint(expr_or_rel)


def to_text(expr_or_rel: sympy.Basic) -> str:
    """The stable canonical text of an expression or relation, for serialization.

    ``parse_expr(to_text(e), allow_new_symbols=True) == e`` for every supported ``e``
    in sympy's evaluated form with integer constants of magnitude at most ``2**200``.
    Non-integer rationals print as ``p / q``. Symbol names must be Python identifiers.

    >>> from shapes.expr import FloorDiv, int_symbol
    >>> a = int_symbol("a")
    >>> to_text(sympy.Le(FloorDiv(3 * a, 2) - 1, a ** 2))
    '3 * a // 2 - 1 <= a ** 2'
    """
    return _Printer({}, exact_text=True).doprint(expr_or_rel)


def _is_primary(text: str) -> bool:
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Constant))


class _Printer:
    def __init__(self, names: Mapping[sympy.Symbol, str], *, exact_text: bool) -> None:
        self.names = names
        self.exact_text = exact_text

    def doprint(self, expr: sympy.Basic) -> str:
        if isinstance(expr, bool):
            return repr(expr)
        if isinstance(expr, int):
            return str(expr)
        expr = canonical(sympy.sympify(expr))
        check_supported(expr)
        return self._print(expr, _OR)

    def _wrap(self, text: str, prec: int, need: int) -> str:
        return f"({text})" if prec < need else text

    def _print(self, e: sympy.Basic, need: int) -> str:
        text, prec = self._p(e)
        return self._wrap(text, prec, need)

    def _p(self, e: sympy.Basic) -> tuple[str, int]:  # noqa: C901 - one dispatch
        if e is sympy.true or e is sympy.false:
            return ("True" if e is sympy.true else "False"), _ATOM
        if e.is_Integer:
            return str(int(e)), (_UNARY if e < 0 else _ATOM)
        if e.is_Rational:
            if not self.exact_text:
                raise UnsupportedExpressionError(
                    f"{e}: non-integer rational in Python source would compute a float; "
                    "use FloorDiv for integer division")
            return f"{int(e.p)} / {int(e.q)}", _MUL
        if e.is_Symbol:
            return self._symbol(e)
        if isinstance(e, sympy.Add):
            return self._add(e), _ADD
        if isinstance(e, sympy.Mul):
            return self._mul(e)
        if isinstance(e, sympy.Pow):
            base = self._print(e.base, _POW + 1)
            return f"{base} ** {int(e.exp)}", _POW
        if isinstance(e, (FloorDiv, sympy.Mod)):
            op = "//" if isinstance(e, FloorDiv) else "%"
            a, b = e.args
            return f"{self._print(a, _MUL)} {op} {self._print(b, _MUL + 1)}", _MUL
        if isinstance(e, (sympy.Min, sympy.Max)):
            fn = "min" if isinstance(e, sympy.Min) else "max"
            return f"{fn}({', '.join(self._print(a, _OR) for a in e.args)})", _ATOM
        cmp_op = _CMP_OPS.get(type(e))
        if cmp_op is not None:
            return f"{self._print(e.lhs, _ADD)} {cmp_op} {self._print(e.rhs, _ADD)}", _CMP
        if isinstance(e, sympy.Not):
            return f"not {self._print(e.args[0], _NOT)}", _NOT
        if isinstance(e, (sympy.And, sympy.Or)):
            word, prec = ("and", _AND) if isinstance(e, sympy.And) else ("or", _OR)
            return f" {word} ".join(self._print(a, prec + 1) for a in e.args), prec
        raise UnsupportedExpressionError(f"cannot print {e!r}")  # pragma: no cover

    def _symbol(self, s: sympy.Symbol) -> tuple[str, int]:
        if s in self.names:
            text = self.names[s]
            return text, (_ATOM if _is_primary(text) else _OR)
        if self.exact_text and not (s.name.isidentifier() and not keyword.iskeyword(s.name)):
            raise UnsupportedExpressionError(
                f"symbol name {s.name!r} is not a Python identifier; to_text cannot spell it")
        return s.name, _ATOM

    def _add(self, e: sympy.Add) -> str:
        terms = list(e.as_ordered_terms())
        first_neg = [t for t in terms if not _is_negative(t)]
        if first_neg and _is_negative(terms[0]):  # prefer "1 - b" over "-b + 1"
            terms.remove(first_neg[0])
            terms.insert(0, first_neg[0])
        out = [self._print(terms[0], _ADD)]
        for t in terms[1:]:
            if _is_negative(t):
                out.append(f"- {self._print(-t, _MUL)}")
            else:
                out.append(f"+ {self._print(t, _MUL)}")
        return " ".join(out)

    def _mul(self, e: sympy.Mul) -> tuple[str, int]:
        coeff, rest = e.as_coeff_Mul()
        if coeff.is_Rational and not coeff.is_Integer:
            if not self.exact_text:
                raise UnsupportedExpressionError(
                    f"{e}: non-integer coefficient {coeff} in Python source would compute a "
                    "float; use FloorDiv for integer division")
            num, _ = self._factors(int(coeff.p), rest)
            return f"{num} / {int(coeff.q)}", _MUL
        return self._factors(int(coeff), rest)

    def _factors(self, c: int, rest: sympy.Expr) -> tuple[str, int]:
        factors = list(sympy.Mul.make_args(rest)) if rest != 1 else []
        if not factors:
            return str(c), (_UNARY if c < 0 else _ATOM)
        if c != 1 and len(factors) > 1 and any(isinstance(f, sympy.Add) for f in factors):
            # `2 * (a + b) * c` would re-parse as `(2*a + 2*b) * c`: keep the product whole.
            inner, _ = self._factors(1, rest)
            return (f"-({inner})" if c == -1 else f"{c} * ({inner})"), (_UNARY if c == -1 else _MUL)
        if c == -1:
            # `-a * b` is `(-a) * b`, which equals `-(a * b)`; the first factor binds to the minus.
            head = f"-{self._print(factors[0], _UNARY)}"
            tail = [self._print(f, _MUL + 1) for f in factors[1:]]
            return " * ".join([head, *tail]), (_MUL if tail else _UNARY)
        if c == 1 and len(factors) == 1:
            text, prec = self._p(factors[0])
            return (f"({text})", _ATOM) if prec < _MUL else (text, prec)
        parts = [] if c == 1 else [str(c)]
        for f in factors:
            parts.append(self._print(f, _MUL + 1 if parts else _MUL))
        return " * ".join(parts), _MUL


def _is_negative(term: sympy.Expr) -> bool:
    c, _ = term.as_coeff_Mul()
    return bool(c.is_negative)
