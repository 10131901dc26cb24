"""A restricted, safe parser for symbolic-dim expressions and relations.

Text is parsed with Python's :mod:`ast` and only whitelisted nodes are translated to
sympy (never ``eval`` or ``sympify``). It reads Python spelling (``a // 2``,
``a % 4 == 0 and b >= 2``), sympy's printed form (``Eq(s0, 2*s1 + 1)``,
``(s0 >= 2) & (s1 < 3)``) and :func:`shapes.printing.to_text` output.

>>> e = parse_expr("Ne(Mod(s0, 4), 0)", allow_new_symbols=True)
>>> e
Ne(Mod(s0, 4), 0)
>>> parse_expr("2 <= n <= 8", allow_new_symbols=True)
(2 <= n) & (n <= 8)
>>> parse_expr("floor(n / 2) + 1", allow_new_symbols=True)
FloorDiv(n, 2) + 1
>>> parse_expr("n.foo + 1", allow_new_symbols=True)
Traceback (most recent call last):
...
shapes.errors.ParseError: unsupported syntax 'n.foo' at column 1 in "n.foo + 1"
    n.foo + 1
    ^^^^^
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence

import sympy
from sympy.logic.boolalg import Boolean

from shapes.budget import DEFAULT_BUDGET, Budget, check
from shapes.errors import BudgetError, ParseError, UnsupportedExpressionError
from shapes.expr import FloorDiv, canonical, canonical_name, int_symbol

__all__ = ["parse_expr", "MAX_TEXT_LENGTH", "MAX_DEPTH", "MAX_INT_BITS", "MAX_EXPONENT", "Budget"]

MAX_TEXT_LENGTH = 100_000
"""Longest accepted text, in characters."""
MAX_DEPTH = 100
"""Deepest accepted nesting of sub-expressions (left-deep ``a + b + c`` chains are flat)."""
MAX_INT_BITS = 64
"""Integer literals and folded constants must have magnitude at most ``2**MAX_INT_BITS``
(beyond any tensor size: torch sizes are below ``2**63``)."""
MAX_EXPONENT = 64
"""Largest accepted exponent of one ``**`` on a non-constant base (constants: up to
``MAX_INT_BITS``); the total degree is limited by :mod:`shapes.budget`."""

_RELATIONS: dict[str, type] = {"Eq": sympy.Eq, "Ne": sympy.Ne, "Lt": sympy.Lt, "Le": sympy.Le,
                               "Gt": sympy.Gt, "Ge": sympy.Ge}
_CMP_NODES: dict[type, type] = {ast.Eq: sympy.Eq, ast.NotEq: sympy.Ne, ast.Lt: sympy.Lt,
                                ast.LtE: sympy.Le, ast.Gt: sympy.Gt, ast.GtE: sympy.Ge}
_FUNCTIONS = frozenset([*_RELATIONS, "And", "Or", "Not", "Mod", "FloorDiv", "Min", "Max",
                        "min", "max", "floor"])


def parse_expr(text: str, symbols: Mapping[str, sympy.Symbol] | None = None, *,
               allow_new_symbols: bool = False, budget: Budget = DEFAULT_BUDGET) -> sympy.Basic:
    """Parse an expression or relation of the symbolic-dim language.

    Parameters
    ----------
    text
        Source text (at most :data:`MAX_TEXT_LENGTH` characters; surrounding
        whitespace is ignored).
    symbols
        Names that may appear, mapped to their symbols.
    allow_new_symbols
        Create integer symbols (:func:`shapes.int_symbol`) for undeclared names instead
        of raising.
    budget
        Largest total degree and expanded size accepted (:mod:`shapes.budget`).

    Names are read in their canonical (NFKC) form, as Python reads identifiers, and so are
    the keys of ``symbols``.

    Raises
    ------
    ParseError
        With the offending fragment, its column and a caret line under the text;
        :class:`~shapes.errors.BudgetError` (a ParseError) past ``budget`` or past
        :data:`MAX_INT_BITS`.

    >>> n = int_symbol("n")
    >>> parse_expr("max(n, 2) * 2 - n % 3", {"n": n})
    -Mod(n, 3) + 2*Max(2, n)
    >>> parse_expr("n + m", {"n": n})
    Traceback (most recent call last):
    ...
    shapes.errors.ParseError: unknown name 'm' at column 5 in "n + m" (declared: n)
        n + m
            ^
    """
    if not isinstance(text, str):
        raise ParseError(f"expected text (str), got {type(text).__name__}")
    if len(text) > MAX_TEXT_LENGTH:
        raise ParseError(f"text of {len(text)} characters is longer than the limit of "
                         f"{MAX_TEXT_LENGTH}")
    src = text.strip()
    if not src:
        raise ParseError("empty expression: expected an expression or relation")
    bad = next((i for i, ch in enumerate(src) if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:  # not encodable: ast.parse would raise UnicodeEncodeError
        shown = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in src)
        raise _located(f"lone surrogate {src[bad]!r} (not a Unicode character)", shown, bad, bad + 1)
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as exc:
        raise _syntax_error(src, exc) from None
    except (RecursionError, MemoryError):
        raise ParseError(f"expression too deeply nested or too long to parse safely: "
                         f"{_clip(src, 0)!r}") from None
    value = _Parser(src, symbols or {}, allow_new_symbols).value(tree.body, 0)
    check(value, budget)
    return value


def _canonical_names(symbols: Mapping[str, sympy.Basic]) -> Mapping[str, sympy.Basic]:
    """The symbol table keyed by canonical (NFKC) names, as Python reads identifiers."""
    table: dict[str, sympy.Basic] = {}
    spelled: dict[str, str] = {}
    for name, sym in symbols.items():
        key = canonical_name(name)
        if table.get(key, sym) != sym:
            raise ParseError(f"symbol names {spelled[key]!r} and {name!r} are one identifier "
                             f"{key!r} in NFKC form (as Python reads names) but stand for "
                             "different symbols")
        table[key], spelled[key] = sym, name
    return table


def _clip(src: str, at: int, width: int = 60) -> str:
    if len(src) <= width:
        return src
    lo = max(0, min(at - width // 2, len(src) - width))
    return ("..." if lo else "") + src[lo:lo + width] + ("..." if lo + width < len(src) else "")


def _located(msg: str, src: str, start: int, end: int, note: str = "",
             kind: type[ParseError] = ParseError) -> ParseError:
    """A ParseError quoting the text, with the column and a caret line under the fragment."""
    line_no = src.count("\n", 0, start) + 1
    line_start = src.rfind("\n", 0, start) + 1
    line_end = src.find("\n", start)
    line = src[line_start:] if line_end < 0 else src[line_start:line_end]
    col = start - line_start
    end = max(min(end, line_start + len(line)), start + 1)
    where = f"column {col + 1}" if line_no == 1 and "\n" not in src else \
        f"line {line_no}, column {col + 1}"
    shown = line
    if len(line) > 60:  # clip long lines around the fragment
        lo = max(0, col - 30)
        shown, col = line[lo:lo + 60], col - lo
    return kind(f'{msg} at {where} in "{_clip(src, start)}"{note}\n    {shown}\n    '
                      f'{" " * col}{"^" * max(1, min(end - start, len(shown) - col))}')


def _syntax_error(src: str, exc: SyntaxError) -> ParseError:
    reason = (exc.msg or "invalid syntax").split(" (")[0]
    if "null bytes" in reason or "Exceeds the limit" in reason:
        return ParseError(f"{reason}: text rejected")
    lines = src.split("\n")
    line_no = min(max(exc.lineno or 1, 1), len(lines))
    offset = exc.offset or 0
    if offset <= 0 or (line_no == len(lines) and offset > len(lines[-1])):
        return ParseError(f'{reason}: unexpected end of text; parsed "{_clip(src, len(src))}" '
                          "and nothing remains")
    start = sum(len(l) + 1 for l in lines[:line_no - 1]) + offset - 1
    err = _located(reason, src, start, start + 1)
    err.args = (f"{err.args[0]}\n    parsed {src[:start]!r}, remains {src[start:]!r}",)
    return err


def _is_cond(v: sympy.Basic) -> bool:
    """A truth value (relation, And/Or/Not, true/false); symbols are integers here."""
    return isinstance(v, Boolean) and not isinstance(v, sympy.Expr)


class _Parser:
    def __init__(self, src: str, symbols: Mapping[str, sympy.Basic], allow_new: bool) -> None:
        self.src = src
        self.lines = src.split("\n")
        self.symbols = symbols
        self.canonical = False  # whether the keys of ``symbols`` were put in NFKC form
        self.allow_new = allow_new

    # -- positions and errors -------------------------------------------------------------
    def _index(self, lineno: int, col_bytes: int) -> int:
        line = self.lines[lineno - 1]
        col = len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
        return sum(len(l) + 1 for l in self.lines[:lineno - 1]) + col

    def error(self, msg: str, node: ast.AST, note: str = "",
              kind: type[ParseError] = ParseError) -> ParseError:
        start = self._index(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end_line = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        end_col = getattr(node, "end_col_offset", None)
        end = self._index(end_line, end_col) if end_col is not None else start + 1
        return _located(msg, self.src, start, end, note, kind)

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.src, node) or type(node).__name__

    # -- typed values ---------------------------------------------------------------------
    def value(self, node: ast.AST, depth: int) -> sympy.Basic:
        if depth > MAX_DEPTH:
            raise self.error(f"expression nested deeper than {MAX_DEPTH} levels", node)
        handler: Callable[[ast.AST, int], sympy.Basic] | None = getattr(
            self, "_" + type(node).__name__, None)
        if handler is None:
            raise self.error(f"unsupported syntax {self.segment(node)!r}", node)
        return handler(node, depth + 1)

    def integer(self, node: ast.AST, depth: int, what: str = "operand") -> sympy.Expr:
        v = self.value(node, depth)
        if not isinstance(v, sympy.Expr):
            raise self.error(f"{what} {self.segment(node)!r} is a condition, expected an "
                             "integer expression", node)
        return v

    def boolean(self, node: ast.AST, depth: int, what: str = "operand") -> sympy.Basic:
        v = self.value(node, depth)
        if not _is_cond(v):
            raise self.error(f"{what} {self.segment(node)!r} is an integer expression, "
                             "expected a condition (a comparison, And/Or/Not, True/False)", node)
        return v

    def checked(self, v: sympy.Basic, node: ast.AST) -> sympy.Basic:
        """Reject folded constants (and coefficients) beyond :data:`MAX_INT_BITS`."""
        c = v
        if isinstance(v, sympy.Add):
            c = v.as_coeff_Add()[0]
        elif isinstance(v, sympy.Mul):
            c = v.as_coeff_Mul()[0]
        if isinstance(c, sympy.Rational) and max(abs(int(c.p)), int(c.q)) > 2 ** MAX_INT_BITS:
            raise self.error(f"constant in {self.segment(node)!r} exceeds 2**{MAX_INT_BITS}", node,
                             kind=BudgetError)
        return v

    # -- node handlers (named after ast node types) ---------------------------------------
    def _Constant(self, node: ast.Constant, depth: int) -> sympy.Basic:
        v = node.value
        if isinstance(v, bool):
            return sympy.true if v else sympy.false
        if isinstance(v, int):
            if abs(v) > 2 ** MAX_INT_BITS:
                raise self.error(f"integer literal larger than 2**{MAX_INT_BITS}", node,
                                 kind=BudgetError)
            return sympy.Integer(v)
        kind = {float: "float", complex: "complex", str: "string", bytes: "bytes"}.get(
            type(v), repr(v))
        raise self.error(f"{kind} literal {self.segment(node)!r} not supported "
                         "(dims are integers)", node)

    def _Name(self, node: ast.Name, depth: int) -> sympy.Basic:
        name = node.id
        if name in self.symbols:
            return self.symbols[name]
        if not self.canonical:  # a key spelled in another form: look again by NFKC (rare)
            self.symbols, self.canonical = _canonical_names(self.symbols), True
            if name in self.symbols:
                return self.symbols[name]
        if name in _FUNCTIONS:
            raise self.error(f"'{name}' is a function; call it as {name}(...)", node)
        if self.allow_new:
            return int_symbol(name)
        declared = ", ".join(sorted(self.symbols)[:10]) + (", ..." if len(self.symbols) > 10
                                                             else "")
        hint = f"declared: {declared}" if self.symbols else \
            "no symbols declared; pass symbols= or allow_new_symbols=True"
        raise self.error(f"unknown name {name!r}", node, f" ({hint})")

    def _UnaryOp(self, node: ast.UnaryOp, depth: int) -> sympy.Basic:
        if isinstance(node.op, ast.USub):
            return -self.integer(node.operand, depth)
        if isinstance(node.op, ast.UAdd):
            return self.integer(node.operand, depth)
        word = "not" if isinstance(node.op, ast.Not) else "~"
        return sympy.Not(self.boolean(node.operand, depth, f"operand of '{word}'"))

    def _BinOp(self, node: ast.BinOp, depth: int) -> sympy.Basic:
        chain: list[ast.BinOp] = []  # flatten the left spine: a + b + c is not "nested"
        left: ast.AST = node
        while isinstance(left, ast.BinOp):
            chain.append(left)
            left = left.left
        if isinstance(chain[-1].op, (ast.BitAnd, ast.BitOr)):
            acc: sympy.Basic = self.value(left, depth)
        else:
            acc = self.integer(left, depth)
        terms: list[sympy.Basic] = []
        for op_node in reversed(chain):
            op = op_node.op
            if isinstance(op, (ast.Add, ast.Sub)):
                if _is_cond(acc):
                    raise self.error(f"arithmetic on a condition in {self.segment(op_node)!r}",
                                     op_node)
                right = self.integer(op_node.right, depth)
                terms.append(right if isinstance(op, ast.Add) else -right)
                continue
            if terms:
                acc, terms = self.checked(sympy.Add(acc, *terms), op_node), []
            acc = self.checked(self.binary(op_node, acc, depth), op_node)
        if terms:
            acc = self.checked(sympy.Add(acc, *terms), node)
        return acc

    def binary(self, node: ast.BinOp, a: sympy.Basic, depth: int) -> sympy.Basic:
        op = node.op
        if isinstance(op, (ast.BitAnd, ast.BitOr)):
            name = "&" if isinstance(op, ast.BitAnd) else "|"
            if not _is_cond(a):
                raise self.error(f"bitwise '{name}' on integers is not supported; "
                                 "use it only between conditions", node)
            b = self.boolean(node.right, depth, f"operand of '{name}'")
            return sympy.And(a, b) if name == "&" else sympy.Or(a, b)
        if not isinstance(op, (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)):
            raise self.error(f"unsupported operator in {self.segment(node)!r}", node)
        if _is_cond(a):
            raise self.error(f"arithmetic on a condition in {self.segment(node)!r}", node)
        b = self.integer(node.right, depth)
        if isinstance(op, ast.Mult):
            return a * b
        if isinstance(op, ast.Pow):
            limit = MAX_INT_BITS if a.is_Number else MAX_EXPONENT
            if not (b.is_Integer and 0 <= int(b) <= limit):
                raise self.error(f"exponent {self.segment(node.right)!r} must be an integer "
                                 f"constant in [0, {limit}]", node.right,
                                 kind=BudgetError if b.is_Integer and int(b) > limit else ParseError)
            if a.is_Number and int(b) * max(1, abs(sympy.Rational(a).p).bit_length()) > \
                    2 * MAX_INT_BITS:
                raise self.error(f"constant power exceeds 2**{MAX_INT_BITS}", node, kind=BudgetError)
            return a ** b
        if b == 0:
            raise self.error(f"division by zero in {self.segment(node)!r}", node)
        if isinstance(op, ast.FloorDiv):
            return FloorDiv(a, b)
        if isinstance(op, ast.Mod):
            return sympy.Mod(a, b)
        if not b.is_Rational:
            raise self.error(f"true division by a non-constant in {self.segment(node)!r}; "
                             "use '//' (floor division)", node)
        return a / b

    def _Compare(self, node: ast.Compare, depth: int) -> sympy.Basic:
        found = [_CMP_NODES.get(type(op)) for op in node.ops]
        kinds = [k for k in found if k is not None]
        if len(kinds) != len(found):
            raise self.error(f"unsupported comparison in {self.segment(node)!r} "
                             "(only == != < <= > >=)", node)
        operands = [node.left, *node.comparators]
        values = [self.value(n, depth) for n in operands]
        rels = [self.relation(rel, values[i], values[i + 1], operands[i:i + 2], node)
                for i, rel in enumerate(kinds)]
        return rels[0] if len(rels) == 1 else sympy.And(*rels)

    def relation(self, rel: type, a: sympy.Basic, b: sympy.Basic, nodes: Sequence[ast.AST],
                 node: ast.AST) -> sympy.Basic:
        kinds = {_is_cond(a), _is_cond(b)}
        if kinds != {False} and not (kinds == {True} and rel in (sympy.Eq, sympy.Ne)):
            bad = nodes[0] if _is_cond(a) else nodes[1]
            raise self.error(f"cannot compare condition {self.segment(bad)!r} "
                             f"in {self.segment(node)!r}", bad)
        return rel(a, b)

    def _BoolOp(self, node: ast.BoolOp, depth: int) -> sympy.Basic:
        word = "and" if isinstance(node.op, ast.And) else "or"
        vals = [self.boolean(v, depth, f"operand of '{word}'") for v in node.values]
        return sympy.And(*vals) if word == "and" else sympy.Or(*vals)

    def _Call(self, node: ast.Call, depth: int) -> sympy.Basic:
        fn = node.func.id if isinstance(node.func, ast.Name) else None
        if fn not in _FUNCTIONS:
            raise self.error(f"unsupported call {self.segment(node.func)!r} (allowed: "
                             f"{', '.join(sorted(_FUNCTIONS))})", node.func)
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.error(f"{fn}() takes only plain positional arguments", node)
        args = node.args
        arity = {"Not": 1, "floor": 1, "Mod": 2, "FloorDiv": 2, **dict.fromkeys(_RELATIONS, 2)}
        want = arity.get(fn)
        if want is not None and len(args) != want:
            raise self.error(f"{fn}() takes {want} argument{'s' * (want > 1)}, got {len(args)}",
                             node)
        if want is None and fn in ("Min", "Max", "min", "max") and not args:
            raise self.error(f"{fn}() needs at least one argument", node)
        if fn in _RELATIONS:
            vals = [self.value(a, depth) for a in args]
            return self.relation(_RELATIONS[fn], vals[0], vals[1], args, node)
        if fn in ("And", "Or", "Not"):
            vals = [self.boolean(a, depth, f"argument of {fn}()") for a in args]
            return {"And": sympy.And, "Or": sympy.Or, "Not": sympy.Not}[fn](*vals)
        if fn == "floor":
            return self.floor(node, depth)
        ints = [self.integer(a, depth, f"argument of {fn}()") for a in args]
        if fn in ("Mod", "FloorDiv"):
            if ints[1] == 0:
                raise self.error(f"division by zero in {self.segment(node)!r}", node)
            return self.checked((sympy.Mod if fn == "Mod" else FloorDiv)(*ints), node)
        return (sympy.Min if fn in ("Min", "min") else sympy.Max)(*ints)

    def floor(self, node: ast.Call, depth: int) -> sympy.Basic:
        arg = node.args[0]
        if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Div):
            a, b = self.integer(arg.left, depth), self.integer(arg.right, depth)
            if b == 0:
                raise self.error(f"division by zero in {self.segment(node)!r}", node)
            return FloorDiv(a, b)
        try:
            return canonical(sympy.floor(self.integer(arg, depth, "argument of floor()")))
        except UnsupportedExpressionError as exc:
            raise self.error(f"unsupported floor: {exc}", node) from None

