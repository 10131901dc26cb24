"""The normalized spec of one export, independent of torch, and the classic constraint records.

Either API (classic ``dynamic_dim`` constraints, torch ``Dim`` objects) becomes a :class:`Spec`:
*root dims* (named integer variables with ranges) and, per dynamic input dim, a
:class:`DimDecl` (its value as an expression of root dims, or ``auto``). The classic records
normalize here (:func:`from_classic`); torch's ``Dim`` objects in the adapter
``export.spec.dynamic_shapes``.

>>> x, y, z = dynamic_dim("x", 0), dynamic_dim("y", 0), dynamic_dim("z", 0)
>>> spec = from_classic([x <= 64, x == y, z == 2 * x + 1])
>>> [(r.name, r.lo, r.hi) for r in spec.roots]
[('y_0', 2, 64)]
>>> [(str(d.dim), d.expr) for d in spec.decls]
[('x.size(0)', y_0), ('y.size(0)', y_0), ('z.size(0)', 2*y_0 + 1)]
>>> spec.validate({InputDim("x", 0): 4, InputDim("y", 0): 4, InputDim("z", 0): 9}.__getitem__)
>>> spec.validate({InputDim("x", 0): 4, InputDim("y", 0): 4, InputDim("z", 0): 8}.__getitem__)
Traceback (most recent call last):
...
shapes.errors.SpecError: z.size(0) = 8 cannot be dynamic_dim(z, 0): no integer y_0 gives 8; change the example input or the spec

Classic constraints keep the user's spelling:

>>> c = dynamic_dim("x", 0) <= 5
>>> c.text, c.lo, c.hi
('dynamic_dim(x, 0) <= 5', None, 5)
>>> (dynamic_dim("x", 0) == 2 * dynamic_dim("y", 0) + 1).text
'dynamic_dim(x, 0) == 2 * dynamic_dim(y, 0) + 1'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Union

import sympy

from shapes.affine import Affine
from shapes.errors import SpecError
from shapes.expr import int_symbol

__all__ = ["InputDim", "RootDim", "DimDecl", "Spec", "from_classic", "classic_name", "ClassicDim",
           "ClassicExpr", "ClassicConstraint", "ClassicEquality", "ClassicRecord", "dynamic_dim",
           "CLASSIC_MIN", "CLASSIC_MAX", "UNBOUNDED", "open_max"]

CLASSIC_MIN = 2
"""Default lower bound of a classic ``dynamic_dim``."""
CLASSIC_MAX = 2**63 - 2
"""Default upper bound of a classic ``dynamic_dim`` (the classic torch.export default)."""
UNBOUNDED = CLASSIC_MAX // 2
"""An upper bound this large is no real limit: it is :data:`CLASSIC_MAX` showing through
(directly, rounded down to a multiple, or what it leaves a derived dim's root)."""


def open_max(hi: int | None) -> int | None:
    """``hi`` as users see it: None (unbounded, ``inf``) for the classic default maximum.

    >>> open_max(64), open_max(2**63 - 2), open_max(2**63 - 8), open_max(None)
    (64, None, None, None)
    """
    return None if hi is None or hi >= UNBOUNDED else hi


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _lo(lo: int | None) -> str:
    return "-inf" if lo is None else str(lo)


def _hi(hi: int | None) -> str:
    return "inf" if hi is None else str(hi)


_NON_IDENT = re.compile(r"\W")


@dataclass(frozen=True, slots=True)
class InputDim:
    """Dimension ``dim`` of the input named ``input_name``; prints as ``x.size(0)``. With
    ``dim=None`` it is the value of an int input (a symint: ``n``), which prints as its name.

    >>> str(InputDim("x", 0)), InputDim("x", 0).symbol
    ('x.size(0)', x_0)
    >>> str(InputDim("n", None)), InputDim("n", None).symbol, InputDim("n", None).is_value
    ('n', n, True)
    """

    input_name: str
    dim: int | None

    def __post_init__(self) -> None:
        if not isinstance(self.input_name, str) or not self.input_name:
            raise SpecError(f"input name must be a non-empty str, got {self.input_name!r}")
        if self.dim is not None and (not _is_int(self.dim) or self.dim < 0):
            raise SpecError(f"{self.input_name}: dim must be an int >= 0 (or None for an int input), got {self.dim!r}")

    @property
    def is_value(self) -> bool:
        """Whether this is the value of an int input rather than a tensor's size."""
        return self.dim is None

    def __str__(self) -> str:
        return self.input_name if self.dim is None else f"{self.input_name}.size({self.dim})"

    @property
    def symbol(self) -> sympy.Symbol:
        """A symbol standing for this size (in :attr:`ClassicEquality.relation`)."""
        base = _NON_IDENT.sub('_', self.input_name)
        return int_symbol(base if self.dim is None else f"{base}_{self.dim}")


def classic_name(d: InputDim) -> str:
    """The root dim name for an input dim that names its own root (``x.size(0)`` ->
    ``x_0``): a classic dim, a ``Dim.DYNAMIC``.

    >>> classic_name(InputDim("d['a']", 1))
    'd_a__1'
    """
    tail = "" if d.dim is None else f"_{d.dim}"
    return re.sub(r"\W+", "_", f"{d.input_name}{tail}").strip("_")


# -- the normalized spec ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RootDim:
    """A dim variable of the spec: ``lo <= name <= hi`` (None: unbounded; ``lo`` is None
    only for the value of an int input)."""

    name: str
    lo: int | None
    hi: int | None
    text: str

    @property
    def symbol(self) -> sympy.Symbol:
        return int_symbol(self.name)


@dataclass(frozen=True, slots=True)
class DimDecl:
    """A dynamic input dim: ``mode`` is ``dynamic`` (must stay symbolic) or ``auto`` (may
    specialize); ``expr`` its value in root symbols, or None for a *hint* dim whose
    relations and guards the trace infers (``Dim.AUTO``; ``Dim.DYNAMIC`` is a hint dim of
    mode ``dynamic``). ``lo``/``hi`` bound a hint dim (``Dim.AUTO(min=4, max=32)``);
    a dim with an ``expr`` takes its range from its root. ``lo=None`` (no lower bound) is
    for the value of an int input only: sizes are never negative.

    >>> d = DimDecl(InputDim("x", 0), "dynamic", None, "Dim.DYNAMIC(min=4)", lo=4)
    >>> d.is_hint, d.lo, d.hi
    (True, 4, None)
    """

    dim: InputDim
    mode: str
    expr: sympy.Expr | None
    text: str
    lo: int | None = 0
    hi: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("dynamic", "auto"):
            raise SpecError(f"{self.dim}: mode must be 'dynamic' or 'auto', got {self.mode!r}")
        if (self.lo is not None and not _is_int(self.lo)) or (self.hi is not None and not _is_int(self.hi)):
            raise SpecError(f"{self.dim}: bounds must be ints, got min={self.lo!r}, max={self.hi!r}")
        if self.lo is None and not self.dim.is_value:
            raise SpecError(f"{self.dim}: a size has a lower bound (0 or more)")
        if self.hi is not None and self.lo is not None and self.lo > self.hi:
            raise SpecError(f"{self.dim}: {self.text} has min {self.lo} > max {self.hi}")

    @property
    def is_hint(self) -> bool:
        """Whether the trace infers this dim (``Dim.AUTO`` / ``Dim.DYNAMIC``, no expression)."""
        return self.expr is None


@dataclass(frozen=True, slots=True)
class Spec:
    """The normalized spec of one export (see the module docstring); ``api`` is ``classic``,
    ``modern`` or ``none``."""

    api: str
    roots: tuple[RootDim, ...]
    decls: tuple[DimDecl, ...]
    checks: tuple[sympy.Basic, ...] = ()
    """Relations a Dim cannot say, assumed as if ``torch._check``-ed in the model (over the
    input-dim symbols of ``export.tracing.bridge.dim_symbol_name``); used to verify fixes."""

    def root(self, name: str) -> RootDim:
        return next(r for r in self.roots if r.name == name)

    def decl(self, d: InputDim) -> DimDecl | None:
        return next((x for x in self.decls if x.dim == d), None)

    def without(self, dims: Iterable[InputDim]) -> Spec:
        """This spec with ``dims`` made static: their decls dropped, and the roots no decl
        left uses.

        >>> x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
        >>> spec = from_classic([x <= 64, x == y])
        >>> [str(d.dim) for d in spec.without([InputDim("y", 0)]).decls]
        ['x.size(0)']
        """
        drop = set(dims)
        decls = tuple(d for d in self.decls if d.dim not in drop)
        used = {s.name for d in decls if d.expr is not None for s in d.expr.free_symbols}
        return Spec(self.api, tuple(r for r in self.roots if r.name in used), decls)

    def groups(self) -> list[tuple[RootDim, DimDecl | None, list[DimDecl]]]:
        """Per root: the dim that *is* the root (``expr == root``, or None), then the other
        dims defined from it. What the classic form can say hangs off the first."""
        out = []
        for r in self.roots:
            decls = [d for d in self.decls if d.expr is not None and r.symbol in d.expr.free_symbols]
            primary = next((d for d in decls if d.expr == r.symbol), None)
            out.append((r, primary, [d for d in decls if d is not primary]))
        return out

    def root_values(self, size_of: Callable[[InputDim], int]) -> dict[str, int]:
        """The value of each root fixed by an example size (first dim of it wins), for dims
        affine in one root whose size some integer root value gives."""
        values: dict[str, int] = {}
        for decl in self.decls:
            form = Affine.of(decl.expr) if decl.expr is not None else None
            if form is not None:
                v = form.solve(size_of(decl.dim))
                if v is not None:
                    values.setdefault(form.root.name, v)
        return values

    def validate(self, size_of: Callable[[InputDim], int]) -> None:
        """Example sizes inside their ranges; dims with one root agree on its value.

        Raises :class:`SpecError` naming the dim, its declaration and what to change.
        """
        values: dict[str, tuple[int, DimDecl]] = {}
        for decl in self.decls:
            size = size_of(decl.dim)
            if decl.expr is None:
                if not ((decl.lo is None or decl.lo <= size) and (decl.hi is None or size <= decl.hi)):
                    raise SpecError(
                        f"{decl.dim} = {size} is outside the declared range of {decl.text}: "
                        f"{size} is not in [{_lo(decl.lo)}, {_hi(decl.hi)}]; use an example inside the range or widen it"
                    )
                continue
            if len(decl.expr.free_symbols) != 1:
                continue
            sym = next(iter(decl.expr.free_symbols))
            root = self.root(sym.name)
            form = Affine.of(decl.expr)
            value = form.solve(size) if form is not None else None
            if value is None:
                raise SpecError(
                    f"{decl.dim} = {size} cannot be {decl.text}: no integer {root.name} gives {size}; "
                    "change the example input or the spec"
                )
            if not ((root.lo is None or root.lo <= value) and (root.hi is None or value <= root.hi)):
                where = f" ({decl.text} = {size})" if decl.expr != sym else ""
                raise SpecError(
                    f"{decl.dim} = {size} is outside the declared range of {root.text}: "
                    f"{root.name} = {value}{where} is not in [{_lo(root.lo)}, {_hi(root.hi)}]; "
                    "use an example inside the range or widen it"
                )
            seen = values.get(root.name)
            if seen is not None and seen[0] != value:
                raise SpecError(
                    f"{decl.dim} = {size} and {seen[1].dim} = {size_of(seen[1].dim)} are declared "
                    f"as {decl.text} and {seen[1].text}, which disagree on {root.name} "
                    f"({value} vs {seen[0]}); make the example inputs consistent"
                )
            values[root.name] = (value, decl)


# -- classic records -> spec -------------------------------------------------------------------

def from_classic(records: Iterable[ClassicRecord]) -> Spec:
    """Normalize classic constraints: one root per class of equal dims, derived dims for
    ``y == a * x + b``; the classic default range is ``[2, 2**63 - 2]``.

    >>> x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
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
    roots: dict[InputDim, RootDim] = {}
    decls = []
    for d in links.dims:
        root, form = links.find(d)
        if root not in roots:
            lo, hi = ranges.get(root, (CLASSIC_MIN, CLASSIC_MAX))
            text = ", ".join(texts.get(root, [])) or f"dynamic_dim({root.input_name}, {root.dim})"
            if lo > hi:
                raise SpecError(f"contradictory constraints for {root}: {text} leave no size")
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
        if not _is_int(k):
            return NotImplemented
        if self.coeff * mul <= 0:
            raise SpecError(f"{text}: the coefficient of a classic dim must be positive")
        return ClassicExpr(self.input, self.coeff * mul, self.offset * mul + add, text)

    def __add__(self, k: int) -> ClassicExpr:
        return self._lin(k, 1, k, f"{self.text} + {k}")

    def __sub__(self, k: int) -> ClassicExpr:
        return self._lin(k, 1, -k if _is_int(k) else 0, f"{self.text} - {k}")

    def __mul__(self, k: int) -> ClassicExpr:
        text = f"{k} * {self.text}" if self.offset == 0 else f"{k} * ({self.text})"
        return self._lin(k, k if _is_int(k) else 1, 0, text)

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
        if not _is_int(k):
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
        if _is_int(other):
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
