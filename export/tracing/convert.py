"""Convert torch's symbolic-shape sympy expressions into the :mod:`shapes` language.

torch spells guards with its own sympy functions (``torch.utils._sympy.functions``);
the engine speaks :mod:`shapes`: integer symbols, ``+ - *``, constant powers,
``sympy.Mod``, :class:`shapes.FloorDiv`, ``sympy.Min/Max``, relations and
``And/Or/Not``. The mapping is exact (no semantics change):

=====================================  ===========================================
torch                                  shapes
=====================================  ===========================================
symbol ``s0`` / ``u0``                 ``symbols(s0)`` (caller mapping or creator)
``FloorDiv(a, b)``, ``CleanDiv``       ``FloorDiv(a, b)``
``ModularIndexing(x, a, b)``           ``Mod(FloorDiv(x, a), b)``
``PythonMod(a, b)``, ``Mod(a, b)``     ``sympy.Mod(a, b)`` (torch's ``Mod`` is only
                                       built for ``a >= 0, b >= 1``, where they agree)
``FloorToInt(IntTrueDiv(a, b))``       ``FloorDiv(a, b)``
``CeilToInt(IntTrueDiv(a, b))``        ``-FloorDiv(-a, b)``
``*ToInt(x)`` with integer ``x``       ``x``
``PowByNatural(a, k)``, ``a**k``       ``a**k`` (constant ``k >= 0`` only)
``LShift(a, k)`` / ``RShift(a, k)``    ``a * 2**k`` / ``FloorDiv(a, 2**k)`` (constant k)
torch ``Max/Min``, ``Abs(x)``          ``sympy.Max/Min``, ``Max(x, -x)``
``Identity(x)``                        ``x``
``floor(p/q)``, ``ceiling(p/q)``       ``FloorDiv(p, q)``, ``-FloorDiv(-p, q)``
relations, ``And/Or/Not``, true/false  the same, with converted arguments
=====================================  ===========================================

Anything else (floats, ``Where``/``Piecewise``, ``IntTrueDiv`` outside a rounding,
``IsNonOverlappingAndDenseIndicator``, infinities, symbolic exponents) raises
:class:`export.errors.UnsupportedGuardError` naming the sub-expression.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Union

import sympy

import shapes
from shapes.relation import relation_of
from export import _torch_compat as tc
from export.errors import UnsupportedGuardError

__all__ = ["SymbolMap", "to_shapes", "default_symbol"]

SymbolMap = Union[Mapping[sympy.Symbol, sympy.Expr], Callable[[sympy.Symbol], sympy.Expr]]
"""How torch symbols become shapes expressions: a mapping, or a function called per symbol."""

_RELATIONS: tuple[type, ...] = (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)
_ROUNDINGS: tuple[type, ...] = (tc.FloorToInt, tc.CeilToInt, tc.TruncToInt, tc.RoundToInt)
_INFINITIES: tuple[sympy.Basic, ...] = (tc.int_oo, -tc.int_oo, sympy.oo, -sympy.oo, sympy.zoo, sympy.nan)


def default_symbol(sym: sympy.Symbol) -> sympy.Symbol:
    """The default creator: an integer shapes symbol with the torch symbol's name.

    >>> default_symbol(sympy.Symbol("s0", integer=True, positive=True))
    s0
    """
    if not sym.is_integer:
        raise UnsupportedGuardError(f"symbol {sym} is not integer-valued (a float input?)", sym, sym)
    return shapes.int_symbol(sym.name)


def to_shapes(expr: sympy.Basic, symbols: SymbolMap | None = None) -> sympy.Basic:
    """Convert a torch sympy expression or boolean into the shapes language.

    ``symbols`` maps each torch symbol to its shapes expression (a mapping, or a
    callable creating one); by default :func:`default_symbol`. A mapping missing a
    symbol raises :class:`UnsupportedGuardError`.

    >>> s0 = sympy.Symbol("s0", integer=True, positive=True)
    >>> to_shapes(sympy.Eq(tc.ModularIndexing(s0, 2, 4), 1))
    Eq(Mod(FloorDiv(s0, 2), 4), 1)
    """
    lookup = _lookup(symbols)
    try:
        return _Converter(lookup, expr).convert(expr)
    except UnsupportedGuardError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, shapes.UnsupportedExpressionError) as e:
        raise UnsupportedGuardError(f"cannot convert {expr}: {e}", expr, expr) from None


def _minmax(op: type, args: list[sympy.Expr]) -> sympy.Expr:
    """``Min``/``Max`` without sympy's own pairwise evaluation (milliseconds per call, asking
    its assumption system to order the arguments); constants fold, duplicates go, and the
    solver prunes the rest with the known ranges."""
    nums = [x for x in args if x.is_Number]
    rest = list(dict.fromkeys(x for x in args if not x.is_Number))
    if nums:
        rest.append(max(nums) if op is sympy.Max else min(nums))
    if len(rest) == 1:
        return rest[0]
    return op(*rest, evaluate=False)


def _lookup(symbols: SymbolMap | None) -> Callable[[sympy.Symbol], sympy.Expr]:
    if symbols is None:
        return default_symbol
    if callable(symbols) and not isinstance(symbols, Mapping):
        return symbols
    table = symbols

    def get(sym: sympy.Symbol) -> sympy.Expr:
        try:
            return table[sym]
        except KeyError:
            raise UnsupportedGuardError(f"no shapes symbol given for torch symbol {sym}", sym) from None

    return get


class _Converter:
    """One conversion: memoizes symbols so a creator is called once per symbol."""

    def __init__(self, lookup: Callable[[sympy.Symbol], sympy.Expr], whole: sympy.Basic) -> None:
        self._lookup = lookup
        self._whole = whole
        self._symbols: dict[sympy.Symbol, sympy.Expr] = {}

    def unsupported(self, node: sympy.Basic, why: str) -> UnsupportedGuardError:
        return UnsupportedGuardError(
            f"unsupported in guard {self._whole}: {node} ({why})", node, self._whole
        )

    def convert(self, e: sympy.Basic) -> sympy.Basic:  # noqa: C901 - one dispatch table
        if e is sympy.true or e is sympy.false:
            return e
        if isinstance(e, sympy.Symbol):
            if e not in self._symbols:
                self._symbols[e] = self._lookup(e)
            return self._symbols[e]
        if isinstance(e, sympy.Number):
            if e in _INFINITIES:
                raise self.unsupported(e, "infinite value")
            if isinstance(e, sympy.Rational):
                return e
            raise self.unsupported(e, "non-rational constant")
        c = self.convert
        a = e.args
        if isinstance(e, sympy.Add):
            return sympy.Add(*map(c, a))
        if isinstance(e, sympy.Mul):
            return sympy.Mul(*map(c, a))
        if isinstance(e, (sympy.Pow, tc.PowByNatural)):
            return c(a[0]) ** self.natural(e, a[1])
        if isinstance(e, tc.FloorDiv):  # also CleanDiv
            return shapes.FloorDiv(c(a[0]), c(a[1]))
        if isinstance(e, tc.ModularIndexing):
            return sympy.Mod(shapes.FloorDiv(c(a[0]), c(a[1])), c(a[2]))
        if isinstance(e, (tc.PythonMod, tc.Mod, sympy.Mod)):
            return sympy.Mod(c(a[0]), c(a[1]))
        if isinstance(e, (tc.Max, sympy.Max)):
            return _minmax(sympy.Max, list(map(c, a)))
        if isinstance(e, (tc.Min, sympy.Min)):
            return _minmax(sympy.Min, list(map(c, a)))
        if isinstance(e, sympy.Abs):
            x = c(a[0])
            return sympy.Max(x, -x)
        if isinstance(e, tc.Identity):
            return c(a[0])
        if isinstance(e, tc.LShift):
            return c(a[0]) * 2 ** self.natural(e, a[1])
        if isinstance(e, tc.RShift):
            return shapes.FloorDiv(c(a[0]), 2 ** self.natural(e, a[1]))
        if isinstance(e, _ROUNDINGS):
            return self.rounding(e)
        if isinstance(e, (sympy.floor, sympy.ceiling)):
            num, den = sympy.fraction(sympy.together(a[0]))
            if not den.is_Integer or not a[0].is_rational:
                raise self.unsupported(e, "floor/ceiling of a non-integer division")
            return self.divide(c(num), c(den), ceil=isinstance(e, sympy.ceiling))
        if isinstance(e, _RELATIONS):
            return relation_of(type(e), c(a[0]), c(a[1]))
        if isinstance(e, sympy.And):
            return sympy.And(*map(c, a))
        if isinstance(e, sympy.Or):
            return sympy.Or(*map(c, a))
        if isinstance(e, sympy.Not):
            return sympy.Not(c(a[0]))
        raise self.unsupported(e, f"{type(e).__name__} has no shapes equivalent")

    def natural(self, e: sympy.Basic, k: sympy.Basic) -> int:
        if not (k.is_Integer and int(k) >= 0):
            raise self.unsupported(e, "only constant non-negative integer exponents/shifts")
        return int(k)

    def rounding(self, e: sympy.Basic) -> sympy.Expr:
        (x,) = e.args
        if isinstance(x, tc.IntTrueDiv) and isinstance(e, (tc.FloorToInt, tc.CeilToInt)):
            return self.divide(self.convert(x.args[0]), self.convert(x.args[1]),
                               ceil=isinstance(e, tc.CeilToInt))
        if x.is_integer:
            return self.convert(x)
        raise self.unsupported(e, "rounding of a non-integer value")

    @staticmethod
    def divide(num: sympy.Expr, den: sympy.Expr, *, ceil: bool) -> sympy.Expr:
        return -shapes.FloorDiv(-num, den) if ceil else shapes.FloorDiv(num, den)
