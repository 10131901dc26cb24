"""One normalized spec from either API: classic ``constraints`` or modern ``dynamic_shapes``.

Both become a :class:`Spec`: *root dims* (named variables with ranges) and, per dynamic
input dim, a :class:`DimDecl` (its value as an expression of root dims, or ``auto``).
The spec is validated against the example inputs before tracing, and rebuilt as torch
``Dim`` objects so torch's own bookkeeping starts from the same spec.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import sympy
import torch
from torch.export import Dim

from export import _torch_compat as tc
from export.errors import InputError
from export.inputs import Inputs, Leaf, leaf_name
from shapes.expr import evaluate, int_symbol
from shapes.spec import CLASSIC_MAX, CLASSIC_MIN, ClassicConstraint, ClassicDim, ClassicEquality, InputDim

__all__ = ["RootDim", "DimDecl", "Spec", "dynamic_dim", "from_constraints", "from_dynamic_shapes", "TOKEN"]

TOKEN = re.compile(r"^#tensor(\d+)$")


@dataclass(frozen=True, slots=True)
class RootDim:
    """A dim variable of the spec: ``lo <= name <= hi`` (``hi=None``: unbounded)."""

    name: str
    lo: int
    hi: int | None
    text: str

    @property
    def symbol(self) -> sympy.Symbol:
        return int_symbol(self.name)


@dataclass(frozen=True, slots=True)
class DimDecl:
    """A dynamic input dim: ``mode`` is ``dynamic`` (must stay symbolic) or ``auto`` (may
    specialize); ``expr`` its value in root symbols (None for ``auto``)."""

    dim: InputDim
    mode: str
    expr: sympy.Expr | None
    text: str


@dataclass(frozen=True, slots=True)
class Spec:
    """The normalized spec of one export (see the module docstring)."""

    api: str
    roots: tuple[RootDim, ...]
    decls: tuple[DimDecl, ...]
    checks: tuple[sympy.Basic, ...] = ()
    """Relations a Dim cannot say, assumed as if ``torch._check``-ed in the model (over the
    input-dim symbols of :func:`export.guards.dim_symbol_name`); used to verify fixes."""

    def root(self, name: str) -> RootDim:
        return next(r for r in self.roots if r.name == name)

    def decl(self, d: InputDim) -> DimDecl | None:
        return next((x for x in self.decls if x.dim == d), None)

    def groups(self) -> list[tuple[RootDim, DimDecl | None, list[DimDecl]]]:
        """Per root: the dim that *is* the root (``expr == root``, or None), then the other
        dims defined from it. What the classic form can say hangs off the first."""
        out = []
        for r in self.roots:
            decls = [d for d in self.decls if d.expr is not None and r.symbol in d.expr.free_symbols]
            primary = next((d for d in decls if d.expr == r.symbol), None)
            out.append((r, primary, [d for d in decls if d is not primary]))
        return out

    def validate(self, inputs: Inputs) -> None:
        """Example sizes inside their ranges; dims with one root agree on its value."""
        values: dict[str, tuple[int, DimDecl]] = {}
        for decl in self.decls:
            size = inputs.size(decl.dim)
            if decl.expr is None:
                continue
            syms = list(decl.expr.free_symbols)
            if len(syms) != 1:
                continue
            root = self.root(syms[0].name)
            value = _solve_affine(decl.expr, syms[0], size)
            if value is None:
                raise InputError(
                    f"{decl.dim} = {size} cannot be {decl.text}: no integer {root.name} gives {size}; "
                    "change the example input or the spec"
                )
            if not (root.lo <= value and (root.hi is None or value <= root.hi)):
                where = f" ({decl.text} = {size})" if decl.expr != syms[0] else ""
                raise InputError(
                    f"{decl.dim} = {size} is outside the declared range of {root.text}: "
                    f"{root.name} = {value}{where} is not in [{root.lo}, {_hi(root.hi)}]; "
                    "use an example inside the range or widen it"
                )
            seen = values.get(root.name)
            if seen is not None and seen[0] != value:
                raise InputError(
                    f"{decl.dim} = {size} and {seen[1].dim} = {inputs.size(seen[1].dim)} are declared "
                    f"as {decl.text} and {seen[1].text}, which disagree on {root.name} "
                    f"({value} vs {seen[0]}); make the example inputs consistent"
                )
            values[root.name] = (value, decl)

    def torch_dynamic_shapes(self, inputs: Inputs) -> dict[str, Any]:
        """``dynamic_shapes`` for torch: one ``Dim`` per root, derived dims for the rest."""
        dims = {r.name: Dim(r.name, min=r.lo, max=r.hi if r.hi is not None else tc.int_oo) for r in self.roots}
        per_leaf: dict[str, dict[int, Any]] = {}
        for decl in self.decls:
            per_leaf.setdefault(decl.dim.input_name, {})[decl.dim.dim] = (
                Dim.AUTO if decl.expr is None else _to_torch_dim(decl.expr, dims)
            )
        return _rebuild(inputs, per_leaf)


def _hi(hi: int | None) -> str:
    return "inf" if hi is None else str(hi)


def _solve_affine(expr: sympy.Expr, sym: sympy.Symbol, value: int) -> int | None:
    a = int(expr.coeff(sym)) if expr.is_Add or expr.is_Mul or expr == sym else 0
    b = int(expr.subs(sym, 0))
    if a == 0 or (value - b) % a:
        return None
    v = (value - b) // a
    return v if evaluate(expr, {sym: v}) == value else None


def _to_torch_dim(expr: sympy.Expr, dims: Mapping[str, Any]) -> Any:
    sym = next(iter(expr.free_symbols))
    root = dims[sym.name]
    if expr == sym:
        return root
    a, b = int(expr.coeff(sym)), int(expr.subs(sym, 0))
    out = root * a if a != 1 else root
    return out + b if b else out


def _rebuild(inputs: Inputs, per_leaf: Mapping[str, Mapping[int, Any]]) -> dict[str, Any]:
    """A dynamic_shapes pytree mirroring the bound arguments (None for static leaves)."""

    def leaf_spec(param: str) -> Any:
        def f(path: Any, value: Any) -> Any:
            dims = per_leaf.get(leaf_name(param, tuple(path)))
            return dict(dims) if dims and isinstance(value, torch.Tensor) else None

        return f

    return {p: tc.tree_map_with_path(leaf_spec(p), v) for p, v in inputs.bound.items()}


# -- classic --------------------------------------------------------------------------------

def dynamic_dim(t: Any, index: int) -> ClassicDim:
    """The classic ``dynamic_dim(t, i)``: dim ``i`` of the example tensor ``t`` is dynamic.

    Compare it with ints (``>= > <= <``) for its range, with another dim (``==``, also
    ``2 * dynamic_dim(x, 0) + 1``) for relations; alone it means ``[2, 2**63 - 2]``.
    """
    if not isinstance(t, torch.Tensor):
        raise InputError(f"dynamic_dim expects an example input tensor, got {type(t).__name__}: {t!r:.60}")
    if isinstance(index, bool) or not isinstance(index, int):
        raise InputError(f"dynamic_dim(t, {index!r}): the dim index must be an int")
    if not -t.dim() <= index < t.dim():
        raise InputError(
            f"dynamic_dim(t, {index}): the tensor has {t.dim()} dims (shape {tuple(t.shape)}); "
            f"use an index in [0, {t.dim() - 1}]"
        )
    return ClassicDim(InputDim(f"#tensor{id(t)}", index % t.dim()))


def from_constraints(inputs: Inputs, constraints: Iterable[Any]) -> Spec:
    """Normalize classic constraints: one root per class of equal dims, derived dims for
    ``y == a * x + b``; the classic default range is ``[2, 2**63 - 2]``."""
    records = [_resolve(inputs, c, i) for i, c in enumerate(constraints)]
    dims: list[InputDim] = []
    for r in records:
        for d in _dims_of(r):
            if d not in dims:
                dims.append(d)
    parent: dict[InputDim, tuple[InputDim, int, int]] = {}  # d == a*parent + b

    def find(d: InputDim) -> tuple[InputDim, int, int]:
        a, b = 1, 0
        while d in parent:
            p, pa, pb = parent[d]
            d, a, b = p, a * pa, a * pb + b
        return d, a, b

    for r in records:
        if isinstance(r, ClassicEquality):
            (rl, al, bl), (rr, ar, br) = find(r.lhs), find(r.rhs)
            # al*rl + bl == coeff*(ar*rr + br) + offset
            a, b = r.coeff * ar, r.coeff * br + r.offset - bl
            if rl == rr:
                if (al, 0) != (a, b):
                    raise InputError(f"contradictory constraints: {r.text} conflicts with earlier equalities")
                continue
            if al != 1:
                raise InputError(f"{r.text}: relations must define each dim from one other dim")
            parent[rl] = (rr, a, b)
    ranges: dict[InputDim, list[int | None]] = {}
    texts: dict[InputDim, list[str]] = {}
    for r in records:
        if isinstance(r, ClassicConstraint):
            root, a, b = find(r.input)
            lo_hi = ranges.setdefault(root, [CLASSIC_MIN, CLASSIC_MAX])
            if r.lo is not None:
                lo_hi[0] = max(lo_hi[0], math.ceil((r.lo - b) / a))  # type: ignore[type-var]
            if r.hi is not None:
                lo_hi[1] = min(lo_hi[1], (r.hi - b) // a)  # type: ignore[type-var]
            texts.setdefault(root, []).append(r.text)
    roots: dict[InputDim, RootDim] = {}
    decls = []
    for d in dims:
        root, a, b = find(d)
        if root not in roots:
            lo, hi = ranges.get(root, [CLASSIC_MIN, CLASSIC_MAX])
            name = _classic_name(root)
            text = ", ".join(texts.get(root, [])) or f"dynamic_dim({root.input_name}, {root.dim})"
            if lo > hi:  # type: ignore[operator]
                raise InputError(f"contradictory constraints for {root}: {text} leave no size")
            roots[root] = RootDim(name, int(lo), int(hi), text)  # type: ignore[arg-type]
        sym = roots[root].symbol
        decls.append(DimDecl(d, "dynamic", a * sym + b, f"dynamic_dim({d.input_name}, {d.dim})"))
    return Spec("classic", tuple(roots.values()), tuple(decls))


def _classic_name(d: InputDim) -> str:
    return re.sub(r"\W+", "_", f"{d.input_name}_{d.dim}").strip("_")


def _dims_of(r: Any) -> list[InputDim]:
    if isinstance(r, ClassicEquality):
        return [r.lhs, r.rhs]
    return [r.input]


def _resolve(inputs: Inputs, c: Any, i: int) -> Any:
    """Replace the tensor tokens of a classic record by the example input's name."""
    if isinstance(c, ClassicDim):
        c = c >= CLASSIC_MIN
    if isinstance(c, bool):
        raise InputError(
            f"constraints[{i}] is a bool: compare dynamic_dim(...) with ints or dims "
            "(chained comparisons like 2 <= d <= 8 are not supported: write two constraints)"
        )
    if not isinstance(c, (ClassicConstraint, ClassicEquality)):
        raise InputError(f"constraints[{i}] is {c!r:.60}, not a dynamic_dim(...) constraint")
    fields = ("input",) if isinstance(c, ClassicConstraint) else ("lhs", "rhs")
    changes: dict[str, Any] = {}
    text = c.text
    for f in fields:
        d = getattr(c, f)
        leaf = _leaf_of_token(inputs, d.input_name, i)
        changes[f] = InputDim(leaf.name, d.dim)
        text = text.replace(d.input_name, leaf.name)
    return dataclasses.replace(c, text=text, **changes)


def _leaf_of_token(inputs: Inputs, token: str, i: int) -> Leaf:
    m = TOKEN.match(token)
    if m is None:
        leaf = inputs.leaf_named(token)
    else:
        leaf = next((x for x in inputs.tensors if id(x.value) == int(m[1])), None)
    if leaf is None or not leaf.is_tensor:
        raise InputError(
            f"constraints[{i}] refers to a tensor that is not one of the example inputs; "
            "call dynamic_dim on the very tensors passed in args/kwargs"
        )
    return leaf


# -- modern ---------------------------------------------------------------------------------

def from_dynamic_shapes(inputs: Inputs, dynamic_shapes: Any) -> Spec:
    """Normalize torch's ``dynamic_shapes`` (dict by parameter name, or a tuple/list in
    parameter order) into a :class:`Spec`."""
    if isinstance(dynamic_shapes, Mapping):
        unknown = [k for k in dynamic_shapes if k not in inputs.bound]
        if unknown:
            raise InputError(
                f"dynamic_shapes names {unknown[0]!r}, which is not an argument; "
                f"the arguments are {list(inputs.params)}"
            )
        per_param = dict(dynamic_shapes)
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) > len(inputs.params):
            raise InputError(
                f"dynamic_shapes has {len(dynamic_shapes)} entries but there are only "
                f"{len(inputs.params)} arguments {list(inputs.params)}"
            )
        per_param = dict(zip(inputs.params, dynamic_shapes))
    else:
        raise InputError(f"dynamic_shapes must be a dict or a tuple/list, got {type(dynamic_shapes).__name__}")
    builder = _ModernBuilder()
    for param, spec in per_param.items():
        builder.walk(inputs.bound[param], spec, param, ())
    return Spec("modern", tuple(builder.roots.values()), tuple(builder.decls))


class _ModernBuilder:
    def __init__(self) -> None:
        self.roots: dict[str, RootDim] = {}
        self.dim_objects: dict[str, Any] = {}
        self.decls: list[DimDecl] = []

    def walk(self, value: Any, spec: Any, param: str, path: tuple[Any, ...]) -> None:
        where = leaf_name(param, path)
        if spec is None:
            return
        if isinstance(value, torch.Tensor):
            self.tensor(value, spec, where)
            return
        children = _children(value)
        if children is None:
            raise InputError(
                f"dynamic_shapes for {where} is {spec!r:.60}, but {where} is a "
                f"{type(value).__name__}, not a tensor: use None for it"
            )
        spec_children = _children(spec)
        if spec_children is None or [k for k, _ in spec_children] != [k for k, _ in children][: len(spec_children)] or len(spec_children) != len(children):
            raise InputError(
                f"dynamic_shapes for {where} must mirror its structure ({type(value).__name__} with "
                f"keys {[k.key if hasattr(k, 'key') else getattr(k, 'idx', k) for k, _ in children]})"
            )
        for (key, child), (_, child_spec) in zip(children, spec_children):
            self.walk(child, child_spec, param, path + (key,))

    def tensor(self, t: torch.Tensor, spec: Any, where: str) -> None:
        if isinstance(spec, Mapping):
            items = list(spec.items())
        elif isinstance(spec, (tuple, list)):
            if len(spec) != t.dim():
                raise InputError(f"dynamic_shapes for {where} has {len(spec)} entries but {where} has "
                                 f"{t.dim()} dims (shape {tuple(t.shape)})")
            items = list(enumerate(spec))
        else:
            raise InputError(f"dynamic_shapes for tensor {where} must be a dict {{dim: Dim}} or a tuple, "
                             f"got {type(spec).__name__}")
        for i, d in items:
            if isinstance(i, bool) or not isinstance(i, int) or not -t.dim() <= i < t.dim():
                raise InputError(f"dynamic_shapes for {where} names dim {i!r}, but {where} has {t.dim()} "
                                 f"dims (shape {tuple(t.shape)})")
            self.dim(InputDim(where, i % t.dim()), d, int(t.shape[i]))

    def dim(self, d: InputDim, spec: Any, size: int) -> None:
        if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
            if isinstance(spec, int) and spec != size:
                raise InputError(f"{d} is declared static {spec} but the example has size {size}")
            return
        if tc.is_dim_hint(spec):
            kind = spec.type.name
            if kind == "STATIC":
                return
            if kind == "AUTO":
                self.decls.append(DimDecl(d, "auto", None, "Dim.AUTO"))
                return
            name = _classic_name(d)
            lo = spec.min if spec.min is not None else 0
            self.roots[name] = RootDim(name, lo, spec.max, f"Dim.DYNAMIC for {d}")
            self.decls.append(DimDecl(d, "dynamic", int_symbol(name), "Dim.DYNAMIC"))
            return
        if tc.is_derived_dim(spec) or isinstance(spec, Dim):
            expr = self.expr_of(spec, d)
            self.decls.append(DimDecl(d, "dynamic", expr, spec.__name__))
            return
        raise InputError(f"dynamic_shapes for {d} is {spec!r:.60}: use a Dim, Dim.AUTO/STATIC/DYNAMIC or None")

    def expr_of(self, spec: Any, d: InputDim) -> sympy.Expr:
        if tc.is_derived_dim(spec):
            inner = self.expr_of(spec.root, d)
            out = spec.fn(inner)
            if not isinstance(out, sympy.Expr):
                raise InputError(f"derived dim {spec.__name__} for {d} is not an expression of {spec.root.__name__}")
            return sympy.expand(out)
        name = spec.__name__
        hi = None if spec.max in (tc.int_oo, math.inf) or spec.max >= 2**63 - 1 else int(spec.max)
        root = RootDim(name, int(spec.min), hi, _dim_text(name, int(spec.min), hi))
        seen = self.roots.get(name)
        if seen is not None and (seen.lo, seen.hi) != (root.lo, root.hi):
            raise InputError(f"two different Dims are named {name!r} ({seen.text} and {root.text}); "
                             "use one Dim object or distinct names")
        self.roots[name] = root
        return root.symbol


def _dim_text(name: str, lo: int, hi: int | None) -> str:
    parts = [repr(name)] + ([f"min={lo}"] if lo else []) + ([f"max={hi}"] if hi is not None else [])
    return f"Dim({', '.join(parts)})"


def _children(value: Any) -> list[tuple[Any, Any]] | None:
    """Direct pytree children with their keys, or None for a leaf."""
    if isinstance(value, torch.Tensor):
        return None
    try:
        kids = tc.tree_flatten_with_path(value, is_leaf=lambda x: x is not value)
    except Exception:  # noqa: BLE001 - not a container pytree knows
        return None
    if len(kids) == 1 and kids[0][0] == () :
        return None
    return [(p[0], v) for p, v in kids]
