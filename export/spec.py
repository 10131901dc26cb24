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
import numbers
import re
from collections.abc import Iterable, Mapping
from typing import Any

import sympy
import torch
from torch.export import Dim

from export import _torch_compat as tc
from export.errors import ClassicOperatorError, InputError
from export.inputs import Inputs, Leaf, leaf_name
from shapes.affine import Affine
from shapes.errors import SpecError
from shapes.spec import (
    CLASSIC_MIN,
    ClassicConstraint,
    ClassicDim,
    ClassicEquality,
    ClassicExpr,
    DimDecl,
    InputDim,
    RootDim,
    Spec,
    from_classic,
)

__all__ = ["RootDim", "DimDecl", "Spec", "dynamic_dim", "from_constraints", "from_dynamic_shapes", "validate",
           "resolve_dynamic_shapes", "ClassicTerm",
           "torch_dynamic_shapes", "torch_derived", "dynamic_shapes_tree", "TOKEN"]

TOKEN = re.compile(r"^#tensor(\d+)$")


def validate(spec: Spec, inputs: Inputs) -> None:
    """Example sizes inside their ranges; dims with one root agree on its value (InputError)."""
    try:
        spec.validate(inputs.size)
    except SpecError as e:
        raise InputError(str(e)) from None


def torch_dynamic_shapes(spec: Spec, inputs: Inputs, *, tracing: bool = False) -> dict[str, Any]:
    """``dynamic_shapes`` for torch: one ``Dim`` per root, derived dims for the rest, and
    ``Dim.AUTO`` / ``Dim.DYNAMIC`` with their bounds for hint dims. ``tracing``: the spec
    symshape's own trace runs with, where ``Dim.DYNAMIC`` is traced as ``Dim.AUTO``
    (symshape refuses its specialization itself, see :mod:`export.dynamic_hints`)."""
    dims = {r.name: Dim(r.name, min=r.lo, max=r.hi if r.hi is not None else tc.int_oo) for r in spec.roots}
    per_leaf: dict[str, dict[int, Any]] = {}
    for decl in spec.decls:
        per_leaf.setdefault(decl.dim.input_name, {})[decl.dim.dim] = (
            _torch_hint(decl, tracing) if decl.expr is None else _to_torch_dim(decl.expr, dims)
        )
    return dynamic_shapes_tree(inputs, per_leaf)


def _torch_hint(decl: DimDecl, tracing: bool) -> Any:
    hint = Dim.AUTO if decl.mode == "auto" or tracing else Dim.DYNAMIC
    if decl.lo == 0 and decl.hi is None:
        return hint
    return hint(min=decl.lo, max=decl.hi)


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

    return {p: _tree_of(v, p, (), per_leaf) for p, v in inputs.bound.items()}


def _tree_of(value: Any, param: str, path: tuple[Any, ...], per_leaf: Mapping[str, Mapping[int, Any]]) -> Any:
    """The spec of one input as torch takes it: builtin containers mirrored, a registered
    class (a dataclass) as the list of its flattened children, None for static leaves."""
    if isinstance(value, torch.Tensor):
        dims = per_leaf.get(leaf_name(param, path))
        return dict(dims) if dims else None
    children = _children(value)
    if children is None:
        return None
    specs = [_tree_of(child, param, path + (key,), per_leaf) for key, child in children]
    if isinstance(value, Mapping):
        return {tc.key_entry(key)[1]: spec for (key, _), spec in zip(children, specs)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*specs)
    return tuple(specs) if isinstance(value, tuple) else specs


# -- classic --------------------------------------------------------------------------------

def dynamic_dim(t: Any, index: int) -> ClassicTerm:
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
    return ClassicTerm(ClassicDim(InputDim(f"#tensor{id(t)}", index % t.dim())))


class ClassicTerm:
    """A classic ``dynamic_dim(t, i)`` (or ``a * dynamic_dim(t, i) + b``, or a constraint
    built from them) as the user holds it: the core's record (:class:`shapes.spec.ClassicDim`,
    ``ClassicExpr``, ``ClassicConstraint``, ``ClassicEquality``) behind the same operators
    and attributes, whose refusals (``d >= 2.5``, ``d * -1``, ``d == d``, ``d + 1.5``) are
    :class:`export.errors.ClassicOperatorError` (an InputError and a TypeError).

    >>> d = dynamic_dim(torch.zeros(4), 0)
    >>> (d <= 8).hi, (2 * d + 1).offset
    (8, 1)
    >>> d >= 2.5
    Traceback (most recent call last):
    ...
    export.errors.ClassicOperatorError: dynamic_dim(t, 0) >= 2.5: classic bounds must be ints
    """

    __slots__ = ("record",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, record: Any) -> None:
        self.record = record

    def __getattr__(self, name: str) -> Any:
        return getattr(self.record, name)

    def __repr__(self) -> str:
        return f"ClassicTerm({self.record.text})"

    def _apply(self, op: str, other: Any, shown: str) -> Any:
        other = other.record if isinstance(other, ClassicTerm) else other
        try:
            out = getattr(self.record, op)(other)
        except (SpecError, TypeError) as e:
            raise ClassicOperatorError(_untokened(str(e))) from None
        if out is NotImplemented:
            raise ClassicOperatorError(_untokened(f"{self.record.text} {shown} {other!r}: a classic dim combines "
                                                  "with ints (+, -, * by a positive int) and other dynamic_dim(...)s only"))
        return ClassicTerm(out)

    def __bool__(self) -> bool:
        raise ClassicOperatorError(_untokened(f"{self.record.text!r} is a constraint, not a bool (chained comparisons "
                                              "like 2 <= d <= 8 are not supported; write two constraints)"))

    def __ge__(self, k: Any) -> Any:
        return self._apply("__ge__", k, ">=")

    def __gt__(self, k: Any) -> Any:
        return self._apply("__gt__", k, ">")

    def __le__(self, k: Any) -> Any:
        return self._apply("__le__", k, "<=")

    def __lt__(self, k: Any) -> Any:
        return self._apply("__lt__", k, "<")

    def __eq__(self, k: Any) -> Any:  # type: ignore[override]
        return self._apply("__eq__", k, "==")

    def __ne__(self, k: Any) -> Any:  # type: ignore[override]
        return self._apply("__ne__", k, "!=")

    def __add__(self, k: Any) -> Any:
        return self._apply("__add__", k, "+")

    def __sub__(self, k: Any) -> Any:
        return self._apply("__sub__", k, "-")

    def __mul__(self, k: Any) -> Any:
        return self._apply("__mul__", k, "*")

    __radd__, __rmul__ = __add__, __mul__


def _untokened(text: str) -> str:
    """A message about classic records with their tensor tokens spelled ``t``."""
    return re.sub(r"#tensor\d+", "t", text)


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
    if isinstance(c, ClassicTerm):
        c = c.record
    if isinstance(c, ClassicExpr):
        raise InputError(f"constraints[{i}] is {c.text}, an expression: compare it with a dynamic_dim(...)")
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
    parameter order) into a :class:`Spec`. ``ShapesCollection`` / ``AdditionalInputs``
    are resolved first (:func:`resolve_dynamic_shapes`)."""
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
        raise InputError(f"dynamic_shapes must be a dict, a tuple/list, a torch.export.ShapesCollection or "
                         f"a torch.export.AdditionalInputs, got {type(dynamic_shapes).__name__}")
    builder = _ModernBuilder()
    for param, spec in per_param.items():
        builder.walk(inputs.bound[param], spec, param, ())
    try:
        return Spec("modern", tuple(builder.roots.values()), tuple(builder.decls))
    except SpecError as e:
        raise InputError(str(e)) from None


def resolve_dynamic_shapes(f: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any] | None,
                           dynamic_shapes: Any) -> Any:
    """``dynamic_shapes`` as a plain pytree: a ``torch.export.ShapesCollection`` or
    ``torch.export.AdditionalInputs`` is converted by its own public
    ``dynamic_shapes(f, args, kwargs)``, as ``torch.export.export`` does; anything else
    is returned as is. Their refusals (a tensor not among the inputs, inputs whose types
    or constant values differ) become InputErrors."""
    if not isinstance(dynamic_shapes, (torch.export.ShapesCollection, torch.export.AdditionalInputs)):
        return dynamic_shapes
    kind = type(dynamic_shapes).__name__
    try:
        return dynamic_shapes.dynamic_shapes(f, args, dict(kwargs or {}))
    except (ValueError, TypeError, AssertionError) as e:
        raise InputError(f"dynamic_shapes ({kind}): {e}") from None


_HINT_BOUND_MAX = 2**63 - 1


class _ModernBuilder:
    def __init__(self) -> None:
        self.roots: dict[str, RootDim] = {}
        self.decls: list[DimDecl] = []

    def walk(self, value: Any, spec: Any, param: str, path: tuple[Any, ...]) -> None:
        """Pair ``spec`` with the input ``value`` as torch does: builtin containers
        (dict, list, tuple, namedtuple) by key or position, a registered pytree class
        (a dataclass) by its flattened children, given as a list; ``None`` is static."""
        where = leaf_name(param, path)
        if spec is None:
            return
        if isinstance(value, torch.Tensor):
            self.tensor(value, spec, where)
            return
        children = _children(value)
        if children is None:
            note = (" (symshape does not support dynamic int inputs yet; pass a tensor, or None to keep it static)"
                    if isinstance(value, int) and (tc.is_dim_hint(spec) or isinstance(spec, Dim)) else "")
            raise InputError(f"dynamic_shapes for {where} is {spec!r:.60}, but {where} is a {type(value).__name__}, "
                             f"not a tensor: use None for it{note}")
        for (key, child), child_spec in zip(children, _spec_children(value, spec, children, where)):
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
            self.hint(d, spec)
            return
        if tc.is_derived_dim(spec) or isinstance(spec, Dim):
            expr = self.expr_of(spec, d)
            self.decls.append(DimDecl(d, "dynamic", expr, spec.__name__))
            return
        raise InputError(f"dynamic_shapes for {d} is {spec!r:.60}: use a Dim, Dim.AUTO/STATIC/DYNAMIC or None")

    def hint(self, d: InputDim, spec: Any) -> None:
        """``Dim.STATIC`` (static), ``Dim.AUTO`` / ``Dim.DYNAMIC`` with their bounds: hint
        dims, whose relations and guards the trace infers; DYNAMIC must not specialize."""
        kind = spec.type.name
        if kind == "STATIC":
            return
        what = f"Dim.{kind} for {d}"
        lo = _bound(spec.min, "min", what)
        hi = _bound(spec.max, "max", what)
        if hi is not None and lo is not None and lo > hi:
            raise InputError(f"{what} has min={lo} > max={hi}")
        text = f"Dim.{kind}" + (_bounds_text(lo, hi) if (lo, hi) != (None, None) else "")
        self.decls.append(DimDecl(d, "auto" if kind == "AUTO" else "dynamic", None, text, lo or 0, hi))

    def expr_of(self, spec: Any, d: InputDim) -> sympy.Expr:
        if tc.is_derived_dim(spec):
            inner = self.expr_of(spec.root, d)
            out = spec.fn(inner)
            if not isinstance(out, sympy.Expr):
                raise InputError(f"derived dim {spec.__name__} for {d} is not an expression of {spec.root.__name__}")
            return sympy.expand(out)
        name = spec.__name__
        what = f"Dim({name!r}) for {d}"
        lo = _bound(spec.min, "min", what)
        hi = _bound(spec.max, "max", what)
        lo = 0 if lo is None else lo
        if hi is not None and lo > hi:
            raise InputError(f"{what} has min={lo} > max={hi}")
        root = RootDim(name, lo, hi, _dim_text(name, lo, hi))
        seen = self.roots.get(name)
        if seen is not None and (seen.lo, seen.hi) != (root.lo, root.hi):
            raise InputError(f"two different Dims are named {name!r} ({seen.text} and {root.text}); "
                             "use one Dim object or distinct names")
        self.roots[name] = root
        return root.symbol


def _bound(value: Any, which: str, what: str) -> int | None:
    """A Dim bound as an int; None for no bound (``None``, ``int_oo``, ``inf``, and torch's
    ``2**63 - 1``). Floats, bools, strings are InputErrors: they would be bent silently."""
    if value is None or value is tc.int_oo or value == math.inf:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{what}: {which}={value!r} must be an int (got {type(value).__name__})")
    out = int(value)
    if which == "max" and out >= _HINT_BOUND_MAX:
        return None
    return out


def _bounds_text(lo: int | None, hi: int | None) -> str:
    return "(" + ", ".join(([f"min={lo}"] if lo is not None else []) + ([f"max={hi}"] if hi is not None else [])) + ")"


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
    if len(kids) == 1 and kids[0][0] == ():
        return None
    return [(p[0], v) for p, v in kids]


def _spec_children(value: Any, spec: Any, children: list[tuple[Any, Any]], where: str) -> list[Any]:
    """The specs of ``value``'s children, in the order of ``children``: a dict input takes
    a dict with its keys; a list, tuple or namedtuple input a sequence of its length; a
    registered class (a dataclass) a list of its flattened children, as in torch."""
    keys = [tc.key_entry(k)[1] for k, _ in children]
    if isinstance(value, Mapping):
        if not isinstance(spec, Mapping) or set(spec) != set(keys):
            raise InputError(f"dynamic_shapes for {where} must be a dict with the keys {keys} (one spec or "
                             f"None per entry), got {_shown(spec)}")
        return [spec[k] for k in keys]
    if isinstance(spec, (list, tuple)) and len(spec) == len(children):
        return list(spec)
    if isinstance(value, (list, tuple)):
        expected = f"a {type(value).__name__} of {len(children)} specs"
    else:
        expected = (f"a list of {len(children)} specs, one per flattened child of the registered "
                    f"{type(value).__name__} ({', '.join(map(str, keys))}), as torch.export takes it")
    raise InputError(f"dynamic_shapes for {where} must be {expected}, got {_shown(spec)}")


def _shown(spec: Any) -> str:
    n = f" of length {len(spec)}" if isinstance(spec, (list, tuple, Mapping)) else ""
    return f"{type(spec).__name__}{n}: {spec!r:.60}"
