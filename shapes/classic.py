"""The classic constraint records (``dynamic_dim(x, 0) <= 64``, ``x == 2 * y + 1``) and their
normalization into a :class:`shapes.spec.Spec` (:func:`from_classic`).

Classic constraints keep the user's spelling:

>>> c = dynamic_dim("x", 0) <= 5
>>> c.text, c.lo, c.hi
('dynamic_dim(x, 0) <= 5', None, 5)
>>> (dynamic_dim("x", 0) == 2 * dynamic_dim("y", 0) + 1).text
'dynamic_dim(x, 0) == 2 * dynamic_dim(y, 0) + 1'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Union

import sympy

from shapes.affine import Affine
from shapes.errors import SpecError
from shapes.expr import int_symbol
from shapes.ranges import CLASSIC_MAX, CLASSIC_MIN
from shapes.spec import DimDecl, InputDim, RootDim, Spec, classic_name, is_int

__all__ = ["from_classic", "ClassicDim", "ClassicExpr", "ClassicConstraint", "ClassicEquality", "ClassicRecord",
           "dynamic_dim"]


# -- classic records -> spec -------------------------------------------------------------------

def from_classic(records: Iterable[ClassicRecord]) -> Spec:
    """Normalize classic constraints: one root per class of equal dims, derived dims for
    ``y == a * x + b``; the classic default range is ``[2, 2**63 - 2]``, for a derived dim
    too: a root's max is lowered so that ``2 * x + 1`` stays at most ``2**63 - 2``, the
    largest max torch takes for a Dim, derived or not (2**62 - 2 is no real limit either).

    >>> x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
    >>> [(r.lo, r.hi) for r in from_classic([x >= 2, y == 2 * x + 1]).roots]
    [(2, 4611686018427387902)]
    >>> from_classic([x >= 10, x < 5])
    Traceback (most recent call last):
    ...
    shapes.errors.SpecError: contradictory constraints for x.size(0): dynamic_dim(x, 0) >= 10, dynamic_dim(x, 0) < 5 leave no size
    """
    records = list(records)
    links = _Links()
    for r in records:
        if isinstance(r, ClassicEquality):
            links.relate(r)
        elif isinstance(r, ClassicConstraint):
            links.sym(r.input)  # dims keep the order of first mention
        else:
            raise SpecError(f"{r!r} is not a classic constraint record")
    ranges: dict[InputDim, tuple[int, int]] = {}
    texts: dict[InputDim, list[str]] = {}
    for r in records:
        if isinstance(r, ClassicConstraint):
            root, form = links.find(r.input)
            lo, hi = ranges.get(root, (CLASSIC_MIN, CLASSIC_MAX))
            r_lo, r_hi = form.root_range(r.lo, r.hi)
            ranges[root] = (lo if r_lo is None else max(lo, r_lo), hi if r_hi is None else min(hi, r_hi))
            texts.setdefault(root, []).append(r.text)
    capped: dict[InputDim, list[str]] = {}
    for d in links.dims:  # a derived dim is at most CLASSIC_MAX too (torch refuses a Dim whose max passes it)
        root, form = links.find(d)
        lo, hi = ranges.get(root, (CLASSIC_MIN, CLASSIC_MAX))
        top = form.root_range(None, CLASSIC_MAX)[1] if form.a > 0 else None
        if top is not None and top < hi:
            ranges[root] = (lo, top)
            shown = (f"{form.a} * " if form.a != 1 else "") + str(root)
            shown += f" {'+-'[form.b < 0]} {abs(form.b)}" if form.b else ""
            capped.setdefault(root, []).append(f"{d} == {shown}")
    roots: dict[InputDim, RootDim] = {}
    decls = []
    for d in links.dims:
        root, form = links.find(d)
        if root not in roots:
            lo, hi = ranges.get(root, (CLASSIC_MIN, CLASSIC_MAX))
            text = ", ".join(texts.get(root, [])) or f"dynamic_dim({root.input_name}, {root.dim})"
            if lo > hi:
                limit = capped.get(root)
                raise SpecError(f"contradictory constraints for {root}: {text} leave no size" + (
                    f" with {', '.join(limit)} at most {CLASSIC_MAX} (the largest size torch takes)" if limit else ""))
            roots[root] = RootDim(classic_name(root), lo, hi, text)
        expr = Affine(roots[root].symbol, form.a, form.b).expr
        decls.append(DimDecl(d, "dynamic", expr, f"dynamic_dim({d.input_name}, {d.dim})"))
    return Spec("classic", tuple(roots.values()), tuple(decls))


class _Links:
    """An affine union-find over input dims: ``d == a * parent + b`` per link."""

    def __init__(self) -> None:
        self.dims: dict[InputDim, None] = {}  # every dim seen, in order
        self.parent: dict[InputDim, tuple[InputDim, Affine]] = {}
        self._sym: dict[InputDim, sympy.Symbol] = {}

    def sym(self, d: InputDim) -> sympy.Symbol:
        self.dims.setdefault(d)
        return self._sym.setdefault(d, int_symbol(f"_d{len(self._sym)}"))

    def find(self, d: InputDim) -> tuple[InputDim, Affine]:
        """The root of ``d`` and ``d`` as an affine form of it."""
        form = Affine(self.sym(d), 1, 0)
        while d in self.parent:
            d, link = self.parent[d]
            form = form.compose(link)
        return d, form

    def relate(self, r: ClassicEquality) -> None:
        """Record ``lhs == coeff * rhs + offset``."""
        (rl, fl), (rr, fr) = self.find(r.lhs), self.find(r.rhs)
        rhs = Affine(fr.root, r.coeff, r.offset).compose(fr)  # coeff * (fr) + offset
        if rl == rr:
            if (fl.a, fl.b) != (rhs.a, rhs.b):
                raise SpecError(f"contradictory constraints: {r.text} conflicts with earlier equalities")
            return
        if fl.a != 1:
            raise SpecError(f"{r.text}: relations must define each dim from one other dim")
        self.parent[rl] = (rr, Affine(rhs.root, rhs.a, rhs.b - fl.b))


# -- classic records ----------------------------------------------------------------------------

class _NoBool:
    __slots__ = ()

    def __bool__(self) -> bool:
        raise TypeError(f"{self.text!r} is a constraint record, not a bool "  # type: ignore[attr-defined]
                        "(chained comparisons like 2 <= d <= 8 are not supported; "
                        "write two constraints)")


@dataclass(frozen=True, slots=True)
class ClassicConstraint(_NoBool):
    """A classic range constraint ``lo <= input <= hi`` with the user's spelling."""

    input: InputDim
    lo: int | None
    hi: int | None
    text: str


@dataclass(frozen=True, slots=True)
class ClassicEquality(_NoBool):
    """``lhs == coeff * rhs + offset`` between classic dims, with the user's spelling."""

    lhs: InputDim
    rhs: InputDim
    coeff: int
    offset: int
    text: str

    @property
    def relation(self) -> sympy.Basic:
        """The equality over the inputs' symbols."""
        return sympy.Eq(self.lhs.symbol, self.coeff * self.rhs.symbol + self.offset)


ClassicRecord = Union[ClassicConstraint, ClassicEquality]


class _ClassicArith:
    """Arithmetic shared by :class:`ClassicDim` and :class:`ClassicExpr`: ``+ - *`` by ints."""

    __slots__ = ()
    input: InputDim
    coeff: int
    offset: int
    text: str
    __hash__ = None  # type: ignore[assignment]

    def _lin(self, k: object, mul: int, add: int, text: str) -> ClassicExpr:
        if not is_int(k):
            return NotImplemented
        if self.coeff * mul <= 0:
            raise SpecError(f"{text}: the coefficient of a classic dim must be positive")
        return ClassicExpr(self.input, self.coeff * mul, self.offset * mul + add, text)

    def __add__(self, k: int) -> ClassicExpr:
        return self._lin(k, 1, k, f"{self.text} + {k}")

    def __sub__(self, k: int) -> ClassicExpr:
        return self._lin(k, 1, -k if is_int(k) else 0, f"{self.text} - {k}")

    def __mul__(self, k: int) -> ClassicExpr:
        text = f"{k} * {self.text}" if self.offset == 0 else f"{k} * ({self.text})"
        return self._lin(k, k if is_int(k) else 1, 0, text)

    __radd__, __rmul__ = __add__, __mul__

    def __ne__(self, other: object) -> ClassicEquality:  # type: ignore[override]
        raise TypeError(f"{self.text} != ...: '!=' is not a supported classic constraint")


@dataclass(frozen=True, slots=True, eq=False)
class ClassicExpr(_ClassicArith):
    """``coeff * input + offset``, built from a :class:`ClassicDim`, with its spelling."""

    input: InputDim
    coeff: int
    offset: int
    text: str

    def __eq__(self, other: object) -> ClassicEquality:  # type: ignore[override]
        if isinstance(other, ClassicDim):
            return _equality(other, self, f"{self.text} == {other.text}")
        raise TypeError(f"{self.text} == {other!r}: only dynamic_dim(...) == "
                        "a * dynamic_dim(...) + b is supported")


def _equality(d: ClassicDim, e: _ClassicArith, text: str) -> ClassicEquality:
    if d.input == e.input:
        raise SpecError(f"{text}: a dim related to itself")
    return ClassicEquality(d.input, e.input, e.coeff, e.offset, text)


def _bound(op: str, lo: Callable[[int], int] | None, hi: Callable[[int], int] | None
           ) -> Callable[[ClassicDim, object], ClassicConstraint]:
    def compare(self: ClassicDim, k: object) -> ClassicConstraint:
        if not is_int(k):
            raise TypeError(f"{self.text} {op} {k!r}: classic bounds must be ints")
        return ClassicConstraint(self.input, lo and lo(k), hi and hi(k),  # type: ignore[arg-type]
                                 f"{self.text} {op} {k}")
    return compare


@dataclass(frozen=True, slots=True, eq=False)
class ClassicDim(_ClassicArith):
    """The classic ``dynamic_dim(x, 0)``: compare with ints for ranges, ``==`` for equalities.

    >>> d = dynamic_dim("x", 1)
    >>> (d > 3).lo, (d < 9).hi, (d == 4).text
    (4, 8, 'dynamic_dim(x, 1) == 4')
    >>> bool(d >= 2)
    Traceback (most recent call last):
    ...
    TypeError: 'dynamic_dim(x, 1) >= 2' is a constraint record, not a bool ...
    """

    input: InputDim

    def __post_init__(self) -> None:
        if not isinstance(self.input, InputDim):
            raise SpecError(f"ClassicDim needs an InputDim, got {self.input!r}")

    coeff = property(lambda self: 1)
    offset = property(lambda self: 0)
    text = property(
        lambda self: f"dynamic_dim({self.input.input_name}, {self.input.dim})")
    __ge__ = _bound(">=", lambda k: k, None)
    __gt__ = _bound(">", lambda k: k + 1, None)
    __le__ = _bound("<=", None, lambda k: k)
    __lt__ = _bound("<", None, lambda k: k - 1)
    _pin = _bound("==", lambda k: k, lambda k: k)

    def __eq__(self, other: object) -> ClassicRecord:  # type: ignore[override]
        if is_int(other):
            return self._pin(other)
        if isinstance(other, _ClassicArith):
            return _equality(self, other, f"{self.text} == {other.text}")
        raise TypeError(f"{self.text} == {other!r}: compare with an int, a dynamic_dim or "
                        "a * dynamic_dim(...) + b")


def dynamic_dim(input_name: str, dim: int) -> ClassicDim:
    """The classic ``dynamic_dim(x, i)``; ``x`` is the input's name.

    >>> dynamic_dim("x", 0).text
    'dynamic_dim(x, 0)'
    """
    return ClassicDim(InputDim(input_name, dim))
