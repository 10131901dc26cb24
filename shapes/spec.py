"""The normalized spec of one export, independent of torch.

Either API (classic ``dynamic_dim`` constraints, torch ``Dim`` objects) becomes a :class:`Spec`:
*root dims* (named integer variables with ranges) and, per dynamic input dim, a
:class:`DimDecl` (its value as an expression of root dims, or ``auto``). The classic records
normalize in :mod:`shapes.classic` (:func:`shapes.classic.from_classic`); torch's ``Dim``
objects in the adapter ``export.spec.dynamic_shapes``.

>>> from shapes.classic import dynamic_dim, from_classic
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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import sympy

from shapes.affine import Affine
from shapes.errors import SpecError
from shapes.expr import int_symbol
from shapes.ranges import range_text

__all__ = ["InputDim", "RootDim", "DimDecl", "Spec", "classic_name", "is_int"]


def is_int(v: object) -> bool:
    """Whether ``v`` is an int and not a bool (a size, a bound, a coefficient)."""
    return isinstance(v, int) and not isinstance(v, bool)


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
        if self.dim is not None and (not is_int(self.dim) or self.dim < 0):
            raise SpecError(f"{self.input_name}: dim must be an int >= 0 (or None for an int input), got {self.dim!r}")

    @property
    def is_value(self) -> bool:
        """Whether this is the value of an int input rather than a tensor's size."""
        return self.dim is None

    def __str__(self) -> str:
        return self.input_name if self.dim is None else f"{self.input_name}.size({self.dim})"

    @property
    def symbol(self) -> sympy.Symbol:
        """A symbol standing for this size (in :attr:`shapes.classic.ClassicEquality.relation`)."""
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
        if (self.lo is not None and not is_int(self.lo)) or (self.hi is not None and not is_int(self.hi)):
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

        >>> from shapes.classic import dynamic_dim, from_classic
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
                        f"{size} is not in {range_text(decl.lo, decl.hi)}; use an example inside the range or widen it"
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
                    f"{root.name} = {value}{where} is not in {range_text(root.lo, root.hi)}; "
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
