"""The torch adapter of the normalized spec: torch ``Dim`` objects and ``dynamic_dim`` tensors in,
:class:`shapes.spec.Spec` out, and back to torch ``dynamic_shapes``.

The torch-free core (root dims, dim declarations, validation, the classic normaliser) is
:mod:`shapes.spec`; this module names the tensors classic records refer to, walks torch's
``dynamic_shapes`` pytrees (``Dim``, derived dims, ``Dim.AUTO/STATIC/DYNAMIC``), checks the
spec against the example inputs (:class:`export.errors.InputError`), and rebuilds it as
torch ``Dim`` objects so torch's own bookkeeping starts from the same spec.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import sympy
import torch
from torch.export import Dim

from export import _torch_compat as tc
from export.errors import InputError
from export.inputs import Inputs, Leaf, leaf_name
from shapes.affine import Affine
from shapes.errors import SpecError
from shapes.spec import (
    CLASSIC_MIN,
    ClassicConstraint,
    ClassicDim,
    ClassicEquality,
    DimDecl,
    InputDim,
    RootDim,
    Spec,
    classic_name,
    from_classic,
)

__all__ = ["RootDim", "DimDecl", "Spec", "dynamic_dim", "from_constraints", "from_dynamic_shapes", "validate",
           "torch_dynamic_shapes", "torch_derived", "dynamic_shapes_tree", "TOKEN"]

TOKEN = re.compile(r"^#tensor(\d+)$")


def validate(spec: Spec, inputs: Inputs) -> None:
    """Example sizes inside their ranges; dims with one root agree on its value (InputError)."""
    try:
        spec.validate(inputs.size)
    except SpecError as e:
        raise InputError(str(e)) from None


def torch_dynamic_shapes(spec: Spec, inputs: Inputs) -> dict[str, Any]:
    """``dynamic_shapes`` for torch: one ``Dim`` per root, derived dims for the rest."""
    dims = {r.name: Dim(r.name, min=r.lo, max=r.hi if r.hi is not None else tc.int_oo) for r in spec.roots}
    per_leaf: dict[str, dict[int, Any]] = {}
    for decl in spec.decls:
        per_leaf.setdefault(decl.dim.input_name, {})[decl.dim.dim] = (
            Dim.AUTO if decl.expr is None else _to_torch_dim(decl.expr, dims)
        )
    return dynamic_shapes_tree(inputs, per_leaf)


def torch_derived(root: Any, form: Affine) -> Any:
    """The torch ``Dim`` for ``form`` (``a * root + b``) of the root ``Dim`` ``root``."""
    out = root * form.a if form.a != 1 else root
    return out + form.b if form.b else out


def _to_torch_dim(expr: sympy.Expr, dims: Mapping[str, Any]) -> Any:
    form = Affine.of(expr)
    if form is None:
        raise InputError(f"{expr}: a Dim can only be an affine function of one Dim")
    return torch_derived(dims[form.root.name], form)


def dynamic_shapes_tree(inputs: Inputs, per_leaf: Mapping[str, Mapping[int, Any]]) -> dict[str, Any]:
    """A dynamic_shapes pytree mirroring the bound arguments (None for static leaves);
    ``per_leaf`` maps a leaf's name to its ``{dim: Dim}``."""

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
    """Normalize classic constraints (see :func:`shapes.spec.from_classic`) after naming
    the tensors they refer to by their input names."""
    records = [_resolve(inputs, c, i) for i, c in enumerate(constraints)]
    try:
        return from_classic(records)
    except SpecError as e:
        raise InputError(str(e)) from None


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
    record: Any = c  # either record type: both have ``text``
    return dataclasses.replace(record, text=text, **changes)


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
            name = classic_name(d)
            lo = spec.min if spec.min is not None else 0
            self.roots[name] = RootDim(name, lo, spec.max, f"Dim.DYNAMIC for {d}")
            self.decls.append(DimDecl(d, "dynamic", self.roots[name].symbol, "Dim.DYNAMIC"))
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
