"""User dim specs, independent of torch: named dims, derived dims, bindings, classic constraints.

>>> b = DimSpec("b", min=1, max=64)
>>> d = 2 * b + 1
>>> d.name, d.min, d.max
('2 * b + 1', 3, 129)
>>> x0, y0 = InputDim("x", 0), InputDim("y", 0)
>>> spec = ShapeSpec(bindings=(DimBinding(x0, b), DimBinding(y0, d)))
>>> spec.range_facts()
(b >= 1, b <= 64)
>>> spec.validate({x0: 4, y0: 9})
>>> spec.validate({x0: 4, y0: 8})
Traceback (most recent call last):
...
shapes.errors.SpecError: y.size(0) = 8 but dim '2 * b + 1' requires 2 * b + 1 = 9 given x.size(0) = 4

Classic constraints keep the user's spelling:

>>> c = dynamic_dim("x", 0) <= 5
>>> c.text, c.lo, c.hi
('dynamic_dim(x, 0) <= 5', None, 5)
>>> (dynamic_dim("x", 0) == 2 * dynamic_dim("y", 0) + 1).text
'dynamic_dim(x, 0) == 2 * dynamic_dim(y, 0) + 1'
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Union

import sympy

from shapes.errors import SpecError
from shapes.expr import FloorDiv, check_supported, evaluate, int_symbol
from shapes.printing import to_python, to_text
from shapes.relation import is_relation

__all__ = ["DimSpec", "InputDim", "DimBinding", "ShapeSpec", "ClassicDim", "ClassicExpr",
           "ClassicConstraint", "ClassicEquality", "dynamic_dim", "CLASSIC_MIN", "CLASSIC_MAX"]

CLASSIC_MIN = 2
"""Default lower bound of a classic ``dynamic_dim``."""
CLASSIC_MAX = 2**63 - 2
"""Default upper bound of a classic ``dynamic_dim`` (the classic torch.export default)."""


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _range_text(lo: int, hi: int | None) -> str:
    return f"[{lo}, {'inf' if hi is None else hi}]"


@dataclass(frozen=True, slots=True)
class DimSpec:
    """A named dynamic dim with an inclusive range ``[min, max]`` (``max=None``: unbounded).

    A derived dim (``2 * b + 1``, ``b // 2``) has ``derived`` set to its expression in the
    symbol of its ``root`` dim and its range computed from the root's; its ``name`` is the
    expression's text. ``source`` records where the spec came from, for messages.

    >>> DimSpec("b", min=8, max=4)
    Traceback (most recent call last):
    ...
    shapes.errors.SpecError: dim 'b': min 8 > max 4
    """

    name: str
    min: int = 0
    max: int | None = None
    derived: sympy.Expr | None = None
    source: str | None = None
    root: DimSpec | None = None

    def __post_init__(self) -> None:
        if not _is_int(self.min) or not (self.max is None or _is_int(self.max)):
            raise SpecError(f"dim {self.name!r}: min and max must be ints, got "
                            f"{self.min!r} and {self.max!r}")
        if self.max is not None and self.min > self.max:
            raise SpecError(f"dim {self.name!r}: min {self.min} > max {self.max}")
        if (self.derived is None) != (self.root is None):
            raise SpecError(f"dim {self.name!r}: 'derived' and 'root' go together")
        if self.derived is None:
            if not (isinstance(self.name, str) and self.name.isidentifier()
                    and not keyword.iskeyword(self.name)):
                raise SpecError(f"dim name {self.name!r} is not a Python identifier")
        elif self.root is not None and not self.derived.free_symbols <= {self.root.symbol}:
            raise SpecError(f"derived dim {self.name!r} must be an expression of its root "
                            f"{self.root.name!r} only")

    @property
    def symbol(self) -> sympy.Symbol:
        """The integer symbol of the (root) dim."""
        return self.root.symbol if self.root is not None else int_symbol(self.name)

    @property
    def expr(self) -> sympy.Expr:
        """The dim's value: its symbol, or the derived expression in the root's symbol."""
        return self.derived if self.derived is not None else self.symbol

    def derive(self, fn: Callable[[sympy.Expr], sympy.Expr] | sympy.Expr,
               source: str | None = None) -> DimSpec:
        """A dim defined as a nondecreasing expression of this one.

        ``fn`` is a callable applied to :attr:`expr` or an expression in :attr:`symbol`.
        Allowed: ``+``/``-`` ints, ``*`` by positive ints, ``//`` by positive ints.

        >>> b = DimSpec("b", min=2, max=10)
        >>> h = b.derive(lambda s: FloorDiv(s, 2) - 1)
        >>> h.name, h.min, h.max, h.root.name
        ('b // 2 - 1', 0, 4, 'b')
        """
        root = self.root if self.root is not None else self
        if isinstance(fn, (sympy.Basic, int)):
            expr = sympy.sympify(fn).subs(self.symbol, self.expr)
        else:
            expr = fn(self.expr)
        expr = sympy.expand(expr) if isinstance(expr, sympy.Add) else expr
        check_supported(expr)
        text = to_text(expr)
        if not _nondecreasing(expr, root.symbol):
            raise SpecError(f"derived dim {text}: must be nondecreasing in {root.name!r} "
                            "(+/- ints, * and // by positive ints)")
        lo = int(evaluate(expr, {root.symbol: root.min}))
        hi = None if root.max is None else int(evaluate(expr, {root.symbol: root.max}))
        if expr.is_Integer:
            raise SpecError(f"derived dim {text} does not depend on {root.name!r}")
        if lo < 0:
            raise SpecError(f"derived dim {text} can be negative ({lo}) for {root.name!r} in "
                            f"{_range_text(root.min, root.max)}; raise the min of {root.name!r}")
        return DimSpec(text, lo, hi, derived=expr, source=source or text, root=root)

    def _arith(self, fn: Callable[[sympy.Expr], sympy.Expr], k: object) -> DimSpec:
        return self.derive(fn) if _is_int(k) else NotImplemented  # type: ignore[return-value]

    def __add__(self, k: int) -> DimSpec:
        return self._arith(lambda e: e + k, k)

    def __sub__(self, k: int) -> DimSpec:
        return self._arith(lambda e: e - k, k)

    def __mul__(self, k: int) -> DimSpec:
        return self._arith(lambda e: e * k, k)

    def __floordiv__(self, k: int) -> DimSpec:
        return self._arith(lambda e: FloorDiv(e, k), k)

    __radd__, __rmul__ = __add__, __mul__


def _nondecreasing(e: sympy.Basic, s: sympy.Symbol) -> bool:
    if e == s or e.is_Integer:
        return True
    if isinstance(e, sympy.Add):
        return all(_nondecreasing(a, s) for a in e.args)
    if isinstance(e, sympy.Mul):
        c, rest = e.as_coeff_Mul()
        return bool(c.is_Integer and c > 0) and _nondecreasing(rest, s)
    if isinstance(e, FloorDiv):
        k = e.args[1]
        return bool(k.is_Integer and k > 0) and _nondecreasing(e.args[0], s)
    return False


_NON_IDENT = re.compile(r"\W")


@dataclass(frozen=True, slots=True)
class InputDim:
    """Dimension ``dim`` of the input named ``input_name``; prints as ``x.size(0)``.

    >>> str(InputDim("x", 0)), InputDim("x", 0).symbol
    ('x.size(0)', x_0)
    """

    input_name: str
    dim: int

    def __post_init__(self) -> None:
        if not isinstance(self.input_name, str) or not self.input_name:
            raise SpecError(f"input name must be a non-empty str, got {self.input_name!r}")
        if not _is_int(self.dim) or self.dim < 0:
            raise SpecError(f"{self.input_name}: dim must be an int >= 0, got {self.dim!r}")

    def __str__(self) -> str:
        return f"{self.input_name}.size({self.dim})"

    @property
    def symbol(self) -> sympy.Symbol:
        """A symbol for this size when no :class:`DimSpec` is bound to it."""
        return int_symbol(f"{_NON_IDENT.sub('_', self.input_name)}_{self.dim}")


@dataclass(frozen=True, slots=True)
class DimBinding:
    """``input`` has the dynamic dim ``dim``, or the static size ``dim`` (an int)."""

    input: InputDim
    dim: DimSpec | int

    def __post_init__(self) -> None:
        if not isinstance(self.input, InputDim):
            raise SpecError(f"binding input must be an InputDim, got {self.input!r}")
        if not isinstance(self.dim, DimSpec) and not (_is_int(self.dim) and self.dim >= 0):
            raise SpecError(f"{self.input}: expected a DimSpec or a static size >= 0, "
                            f"got {self.dim!r}")

    @property
    def range(self) -> tuple[int, int | None]:
        """The inclusive range of sizes the binding allows."""
        if isinstance(self.dim, DimSpec):
            return self.dim.min, self.dim.max
        return self.dim, self.dim


@dataclass(frozen=True, slots=True)
class ShapeSpec:
    """Bindings of input dims, declared equalities between input dims, extra relations.

    ``relations`` are sympy relations over the dims' symbols (:attr:`DimSpec.symbol`,
    :attr:`InputDim.symbol` for unbound dims).
    """

    bindings: tuple[DimBinding, ...] = ()
    equalities: tuple[tuple[InputDim, InputDim], ...] = ()
    relations: tuple[sympy.Basic, ...] = ()

    def __post_init__(self) -> None:
        for field in ("bindings", "equalities", "relations"):
            object.__setattr__(self, field, tuple(getattr(self, field)))
        seen: set[InputDim] = set()
        roots: dict[str, DimSpec] = {}
        for bnd in self.bindings:
            if bnd.input in seen:
                raise SpecError(f"{bnd.input} is bound twice")
            seen.add(bnd.input)
            root = (bnd.dim.root or bnd.dim) if isinstance(bnd.dim, DimSpec) else None
            if root is not None and roots.setdefault(root.name, root) != root:
                other = roots[root.name]
                raise SpecError(f"dim {root.name!r} declared twice with different specs: "
                                f"{_range_text(root.min, root.max)} and "
                                f"{_range_text(other.min, other.max)}")
        for pair in self.equalities:
            if len(pair) != 2 or not all(isinstance(p, InputDim) for p in pair):
                raise SpecError(f"equality {pair!r} must be a pair of InputDims")
        for rel in self.relations:
            if not is_relation(rel):
                raise SpecError(f"{rel!r} is not a relation")
            check_supported(rel, what="relation")

    def binding(self, input_dim: InputDim) -> DimBinding | None:
        """The binding of ``input_dim``, if any."""
        return next((b for b in self.bindings if b.input == input_dim), None)

    def dims(self) -> tuple[DimSpec, ...]:
        """The root dims, in order of first binding."""
        out: dict[str, DimSpec] = {}
        for b in self.bindings:
            if isinstance(b.dim, DimSpec):
                root = b.dim.root or b.dim
                out.setdefault(root.name, root)
        return tuple(out.values())

    def expr_of(self, input_dim: InputDim) -> sympy.Expr:
        """The size of ``input_dim`` as an expression (static int, dim expr, or own symbol)."""
        b = self.binding(input_dim)
        if b is None:
            return input_dim.symbol
        return b.dim.expr if isinstance(b.dim, DimSpec) else sympy.Integer(b.dim)

    def range_facts(self) -> tuple[sympy.Basic, ...]:
        """``min <= s`` and ``s <= max`` for each root dim's symbol ``s``."""
        facts: list[sympy.Basic] = []
        for d in self.dims():
            facts.append(sympy.Ge(d.symbol, d.min))
            if d.max is not None:
                facts.append(sympy.Le(d.symbol, d.max))
        return tuple(facts)

    def facts(self) -> tuple[sympy.Basic, ...]:
        """Range facts, the declared equalities as ``Eq`` and the extra relations."""
        eqs = [sympy.Eq(self.expr_of(a), self.expr_of(b)) for a, b in self.equalities]
        return self.range_facts() + tuple(e for e in eqs if e is not sympy.true) + self.relations

    def source_names(self) -> dict[sympy.Symbol, str]:
        """Source text for each root symbol (its first bound input), for :func:`to_python`."""
        names: dict[sympy.Symbol, str] = {}
        for b in self.bindings:
            if isinstance(b.dim, DimSpec) and b.dim.derived is None:
                names.setdefault(b.dim.symbol, str(b.input))
        for lhs, rhs in self.equalities:
            for i in (lhs, rhs):
                if self.binding(i) is None:
                    names.setdefault(i.symbol, str(i))
        return names

    def ranges(self) -> dict[InputDim, tuple[int, int | None]]:
        """Allowed size range of every mentioned input dim, intersected across equalities.

        Raises :class:`SpecError` naming the dims when an intersection is empty.
        """
        classes: list[list[InputDim]] = []
        for d in dict.fromkeys([b.input for b in self.bindings] + [*sum(self.equalities, ())]):
            classes.append([d])
        for a, b in self.equalities:  # merge the classes of a and b
            ca, cb = (next(c for c in classes if d in c) for d in (a, b))
            if ca is not cb:
                ca.extend(cb)
                classes.remove(cb)
        out: dict[InputDim, tuple[int, int | None]] = {}
        for members in classes:
            lo, hi = 0, None
            for m in members:
                mlo, mhi = self._range(m)
                lo, hi = max(lo, mlo), mhi if hi is None else (hi if mhi is None else min(hi, mhi))
            if hi is not None and lo > hi:
                parts = "; ".join(self._describe(m) for m in members)
                raise SpecError(f"contradictory constraints: {parts} are declared equal but "
                                f"their ranges do not intersect (min {lo} > max {hi})")
            out.update(dict.fromkeys(members, (lo, hi)))
        return out

    def _range(self, d: InputDim) -> tuple[int, int | None]:
        b = self.binding(d)
        return b.range if b is not None else (0, None)

    def _describe(self, d: InputDim) -> str:
        b = self.binding(d)
        src = b.dim.source if b is not None and isinstance(b.dim, DimSpec) else None
        return f"{d} in {_range_text(*self._range(d))}" + (f" ({src})" if src else "")

    def validate(self, example_sizes: Mapping[InputDim, int]) -> None:
        """Check example sizes against the spec; raise :class:`SpecError` naming the input.

        Checks each size against its binding's range, that dims sharing a root dim agree,
        that dims declared equal have equal sizes, that ranges are consistent, and that
        relations hold when all their symbols are known.
        """
        for d, v in example_sizes.items():
            if not _is_int(v) or v < 0:
                raise SpecError(f"{d}: example size must be an int >= 0, got {v!r}")
        env: dict[sympy.Symbol, int] = {}
        witness: dict[sympy.Symbol, InputDim] = {}
        bound = [b for b in self.bindings if b.input in example_sizes]
        bound.sort(key=lambda b: isinstance(b.dim, DimSpec) and b.dim.derived is not None)
        for b in bound:  # roots first, so derived dims can be checked against them
            v, (lo, hi) = example_sizes[b.input], b.range
            if not isinstance(b.dim, DimSpec):
                if v != b.dim:
                    raise SpecError(f"{b.input} = {v} but it is declared static with size {b.dim}")
                continue
            if v < lo or (hi is not None and v > hi):
                raise SpecError(f"{b.input} = {v} is outside the range {_range_text(lo, hi)} "
                                f"of dim {b.dim.name!r}")
            s = b.dim.symbol
            if b.dim.derived is None and s not in env:
                env[s], witness[s] = v, b.input
            elif s in env and evaluate(b.dim.expr, env) != v:
                want = evaluate(b.dim.expr, env)
                raise SpecError(f"{b.input} = {v} but dim {b.dim.name!r} requires "
                                f"{b.dim.name} = {want} given {witness[s]} = {env[s]}")
        for lhs, rhs in self.equalities:
            if (lhs in example_sizes and rhs in example_sizes
                    and example_sizes[lhs] != example_sizes[rhs]):
                raise SpecError(f"{lhs} and {rhs} are declared equal but the example sizes are "
                                f"{example_sizes[lhs]} and {example_sizes[rhs]}")
            for i in (lhs, rhs):
                if self.binding(i) is None and i in example_sizes:
                    env.setdefault(i.symbol, example_sizes[i])
        self.ranges()
        for rel in self.relations:
            if rel.free_symbols <= set(env) and not evaluate(rel, env):
                sizes = ", ".join(f"{k} = {v}" for k, v in example_sizes.items())
                raise SpecError(f"relation {to_python(rel, self.source_names())} is violated "
                                f"by the example sizes ({sizes})")

    @classmethod
    def from_classic(cls, constraints: Iterable[ClassicRecord]) -> ShapeSpec:
        """Build a spec from classic ``dynamic_dim`` constraints (default range [2, 2**63-2]).

        >>> x, y = dynamic_dim("x", 0), dynamic_dim("y", 0)
        >>> s = ShapeSpec.from_classic([x >= 4, x == y])
        >>> s.ranges()[y.input]
        (4, 9223372036854775806)
        >>> ShapeSpec.from_classic([x >= 10, x < 5])
        Traceback (most recent call last):
        ...
        shapes.errors.SpecError: contradictory constraints for x.size(0): dynamic_dim(x, 0) >= 10, dynamic_dim(x, 0) < 5
        """
        constraints = list(constraints)
        ranges: dict[InputDim, list[ClassicConstraint]] = {}
        for c in constraints:
            if isinstance(c, ClassicConstraint):
                ranges.setdefault(c.input, []).append(c)
            elif isinstance(c, ClassicEquality):
                ranges.setdefault(c.lhs, [])
                ranges.setdefault(c.rhs, [])
            else:
                raise SpecError(f"{c!r} is not a classic constraint record")
        dims: dict[InputDim, DimSpec] = {}
        for inp, cs in ranges.items():
            lo = max([CLASSIC_MIN, *(c.lo for c in cs if c.lo is not None)])
            hi = min([CLASSIC_MAX, *(c.hi for c in cs if c.hi is not None)])
            if lo > hi:
                raise SpecError(f"contradictory constraints for {inp}: "
                                f"{', '.join(c.text for c in cs) or 'default range'}")
            dims[inp] = DimSpec(inp.symbol.name, lo, hi, source=", ".join(c.text for c in cs)
                                or f"dynamic_dim({inp.input_name}, {inp.dim})")
        equalities, relations = [], []
        for c in constraints:
            if isinstance(c, ClassicEquality):
                if (c.coeff, c.offset) == (1, 0):
                    equalities.append((c.lhs, c.rhs))
                else:
                    relations.append(sympy.Eq(dims[c.lhs].symbol,
                                              c.coeff * dims[c.rhs].symbol + c.offset))
        spec = cls(tuple(DimBinding(i, d) for i, d in dims.items()), tuple(equalities),
                   tuple(relations))
        spec.ranges()
        return spec


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


class _Affine:
    """Arithmetic shared by :class:`ClassicDim` and :class:`ClassicExpr`: ``+ - *`` by ints."""

    __slots__ = ()
    input: InputDim
    coeff: int
    offset: int
    text: str
    __hash__ = None  # type: ignore[assignment]

    def _lin(self, k: object, mul: int, add: int, text: str) -> ClassicExpr:
        if not _is_int(k):
            return NotImplemented  # type: ignore[return-value]
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
class ClassicExpr(_Affine):
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


def _equality(d: ClassicDim, e: _Affine, text: str) -> ClassicEquality:
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
class ClassicDim(_Affine):
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

    coeff = property(lambda self: 1)  # type: ignore[assignment]
    offset = property(lambda self: 0)  # type: ignore[assignment]
    text = property(  # type: ignore[assignment]
        lambda self: f"dynamic_dim({self.input.input_name}, {self.input.dim})")
    __ge__ = _bound(">=", lambda k: k, None)  # type: ignore[assignment]
    __gt__ = _bound(">", lambda k: k + 1, None)  # type: ignore[assignment]
    __le__ = _bound("<=", None, lambda k: k)  # type: ignore[assignment]
    __lt__ = _bound("<", None, lambda k: k - 1)  # type: ignore[assignment]
    _pin = _bound("==", lambda k: k, lambda k: k)

    def __eq__(self, other: object) -> ClassicRecord:  # type: ignore[override]
        if _is_int(other):
            return self._pin(other)
        if isinstance(other, _Affine):
            return _equality(self, other, f"{self.text} == {other.text}")
        raise TypeError(f"{self.text} == {other!r}: compare with an int, a dynamic_dim or "
                        "a * dynamic_dim(...) + b")


def dynamic_dim(input_name: str, dim: int) -> ClassicDim:
    """The classic ``dynamic_dim(x, i)``; ``x`` is the input's name.

    >>> dynamic_dim("x", 0).text
    'dynamic_dim(x, 0)'
    """
    return ClassicDim(InputDim(input_name, dim))
