"""The torch adapter of the normalized spec: torch's ``dynamic_shapes`` in,
:class:`shapes.spec.Spec` out, and back to torch ``dynamic_shapes``.

The torch-free core (root dims, dim declarations, validation, the classic normaliser) is
:mod:`shapes.spec`; the classic ``dynamic_dim`` API is :mod:`export.spec.classic`. This module
resolves ``ShapesCollection`` / ``AdditionalInputs``, walks torch's ``dynamic_shapes``
pytrees (``Dim``, derived dims, ``Dim.AUTO/STATIC/DYNAMIC`` with bounds, dataclasses as
lists of children) with torch's pairing rules, checks the spec against the example inputs
(:class:`export.errors.InputError`), and rebuilds it as torch ``Dim`` objects so torch's own
bookkeeping starts from the same spec.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import sympy
import torch
from torch.export import Dim

from export import _torch_compat as tc
from export.errors import InputError
from export.spec.inputs import Inputs, leaf_name
from export.spec.render import dim_call
from shapes.affine import Affine
from shapes.errors import SpecError
from shapes.ranges import range_text
from shapes.spec import DimDecl, InputDim, RootDim, Spec

__all__ = ["from_dynamic_shapes", "resolve_dynamic_shapes", "validate",
           "torch_dynamic_shapes", "torch_derived", "dynamic_shapes_tree"]

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
    (symshape refuses its specialization itself, see :mod:`export.diagnose.dynamic_hints`)."""
    value_roots = {s.name for x in spec.decls if x.dim.is_value and x.expr is not None for s in x.expr.free_symbols}
    dims = {r.name: Dim(r.name, min=-tc.int_oo if r.lo is None and r.name in value_roots else r.lo,
                        max=r.hi if r.hi is not None else tc.int_oo) for r in spec.roots}
    per_leaf: dict[str, dict[int | None, Any]] = {}
    for decl in spec.decls:
        if decl.dim.is_value:  # torch takes only hints on an int; symshape holds it to its own Dim's range
            root = spec.root(next(iter(decl.expr.free_symbols)).name) if decl.expr is not None else None
            lo, hi = (root.lo, root.hi) if root is not None else (decl.lo, decl.hi)
            if (lo is not None and lo < 0) or (hi is not None and hi < 0):
                entry = _negative_int(decl, root, lo, hi, tracing, dims)
            else:
                entry = _torch_hint(decl.mode, tracing, lo, hi, bare_lo=None)
        elif decl.expr is None:
            entry = _torch_hint(decl.mode, tracing, decl.lo, decl.hi, bare_lo=0)
        else:
            entry = _to_torch_dim(decl.expr, dims)
        per_leaf.setdefault(decl.dim.input_name, {})[decl.dim.dim] = entry
    return dynamic_shapes_tree(inputs, per_leaf)


def _torch_hint(mode: str, tracing: bool, lo: int | None, hi: int | None, *, bare_lo: int | None) -> Any:
    """``Dim.AUTO`` / ``Dim.DYNAMIC`` with the bounds ``[lo, hi]``, bare when they are
    ``[bare_lo, inf]`` (0 for a size, no bound for an int)."""
    hint = Dim.AUTO if mode == "auto" or tracing else Dim.DYNAMIC
    return hint if (lo, hi) == (bare_lo, None) else hint(min=lo, max=hi)


def _negative_int(decl: DimDecl, root: RootDim | None, lo: int | None, hi: int | None, tracing: bool,
                  dims: dict[str, Any]) -> Any:
    """An int input whose range ``[lo, hi]`` has a negative bound, which torch's
    ``Dim.AUTO`` / ``Dim.DYNAMIC`` cannot take (torch asserts ``min``/``max`` >= 0).

    ``tracing``: the hint without its negative bounds (a negative ``max`` too), i.e. a wider
    range than declared. That is sound: torch's range of an int input is only where its
    guards start; symshape's solver answers them (the trace is routed) and holds the value
    to the declared range, as for any int input, and the program checks that range at run
    time. Otherwise (a ``dynamic_shapes`` a user passes back to ``export.export``, e.g. a
    fix): the int's own named ``Dim`` with the declared range, which symshape reads back as
    it is (a hint would lose the negative bound and widen the spec)."""
    if tracing:
        return _torch_hint(decl.mode, tracing, None if lo is not None and lo < 0 else lo,
                           None if hi is None or hi < 0 else hi, bare_lo=None)
    if root is not None:
        return dims[root.name]
    name = "_".join(w for w in "".join(c if c.isalnum() else " " for c in decl.dim.input_name).split())
    name = name if name.isidentifier() else f"v_{name}"
    while name in dims:
        name = f"_{name}"
    return Dim(name, min=lo if lo is not None else -tc.int_oo, max=hi if hi is not None else tc.int_oo)


def torch_derived(root: Any, form: Affine) -> Any:
    """The torch ``Dim`` for ``form`` (``a * root + b``) of the root ``Dim`` ``root``."""
    out = root * form.a if form.a != 1 else root
    return out + form.b if form.b else out


def _to_torch_dim(expr: sympy.Expr, dims: Mapping[str, Any]) -> Any:
    form = Affine.of(expr)
    if form is None:
        raise InputError(f"{expr}: a Dim can only be an affine function of one Dim")
    return torch_derived(dims[form.root.name], form)


def dynamic_shapes_tree(inputs: Inputs, per_leaf: Mapping[str, Mapping[int | None, Any]]) -> dict[str, Any]:
    """A dynamic_shapes pytree mirroring the bound arguments (None for static leaves);
    ``per_leaf`` maps a leaf's name to its ``{dim: Dim}`` (``{None: Dim}`` for an int input)."""

    return {p: _tree_of(v, p, (), per_leaf) for p, v in inputs.bound.items()}


def _tree_of(value: Any, param: str, path: tuple[Any, ...], per_leaf: Mapping[str, Mapping[int | None, Any]]) -> Any:
    """The spec of one input as torch takes it: builtin containers mirrored, a registered
    class (a dataclass) as the list of its flattened children, None for static leaves."""
    if isinstance(value, torch.Tensor):
        dims = per_leaf.get(leaf_name(param, path))
        return dict(dims) if dims else None
    if is_int_input(value):
        return per_leaf.get(leaf_name(param, path), {}).get(None)
    children = _children(value)
    if children is None:
        return None
    specs = [_tree_of(child, param, path + (key,), per_leaf) for key, child in children]
    if isinstance(value, Mapping):
        return {tc.key_entry(key)[1]: spec for (key, _), spec in zip(children, specs)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*specs)
    return tuple(specs) if isinstance(value, tuple) else specs


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
    """``dynamic_shapes`` as a plain pytree, resolved as the installed ``torch.export.export``
    does: a ``torch.export.ShapesCollection`` or ``torch.export.AdditionalInputs`` by its own
    public ``dynamic_shapes(f, args, kwargs)``; on torch 2.14 also an ``@dynamic_spec`` on
    ``f`` (torch's own ``_resolve_dynamic_shapes``), a ``ShapesSpec`` / ``ParamsSpec``
    (bound to the inputs by torch's ``_bind_spec_to_args``, see :func:`from_shapes_spec`)
    and a ``**kwargs`` entry given at top level by its name (torch's
    ``_normalize_dynamic_shapes``). Anything else is returned as is. torch's refusals
    become InputErrors."""
    try:
        dynamic_shapes = tc.decorated_dynamic_shapes(f, dynamic_shapes)
    except ValueError as e:
        raise InputError(f"dynamic_shapes: {e}") from None
    if tc.is_shapes_spec(dynamic_shapes):
        return from_shapes_spec(f, args, kwargs, dynamic_shapes)
    if isinstance(dynamic_shapes, (torch.export.ShapesCollection, torch.export.AdditionalInputs)):
        kind = type(dynamic_shapes).__name__
        try:
            return dynamic_shapes.dynamic_shapes(f, args, dict(kwargs or {}))
        except (ValueError, TypeError, AssertionError) as e:
            raise InputError(f"dynamic_shapes ({kind}): {e}") from None
    try:
        return tc.normalize_kwargs_shapes(dynamic_shapes, f, args, kwargs)
    except Exception as e:  # noqa: BLE001 - torch's UserError for colliding names
        raise InputError(f"dynamic_shapes: {e}") from None


def from_shapes_spec(f: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any] | None, spec: Any) -> Any:
    """A torch 2.14 ``ShapesSpec`` / ``ParamsSpec`` as the equivalent ``Dim`` pytree: each
    ``ShapeVar``/``IntVar`` a named ``Dim`` with its bounds, an affine expression of one of
    them a derived dim, an int static. Like a named ``Dim``, every guard the model needs
    beyond the declared range is a violation (torch: "no silent specialization"). Refused
    (InputError): ``assumptions``, a dynamic int input, a non-affine expression."""
    kind = type(spec).__name__
    if tc.shapes_spec_assumptions(spec):
        raise InputError(f"dynamic_shapes ({kind}): assumptions= are not supported by symshape yet; state "
                         "the relation with a derived expression (TensorSpec([2 * B])) or torch._check in the model")
    try:
        leaves = tc.shapes_spec_leaves(f, args, kwargs, spec)
    except (ValueError, TypeError, KeyError) as e:
        raise InputError(f"dynamic_shapes ({kind}): {e}") from None
    inputs = Inputs.bind(f, args, kwargs)
    roots: dict[sympy.Symbol, Any] = {}
    per_leaf: dict[str, dict[int | None, Any]] = {}
    for value, leaf_spec in leaves:
        if leaf_spec is None:
            continue
        leaf = inputs.leaf_of_tensor(value) if isinstance(value, torch.Tensor) else None
        if leaf is None:
            if isinstance(leaf_spec, int) and not isinstance(leaf_spec, torch.SymInt):
                continue  # a static int: torch checks it at trace time, symshape keeps it constant
            raise InputError(f"dynamic_shapes ({kind}) makes the {type(value).__name__} input {value!r:.40} "
                             "dynamic: symshape does not support dynamic int inputs yet; leave it STATIC")
        dims = list(leaf_spec)
        if len(dims) != value.dim():
            raise InputError(f"dynamic_shapes ({kind}) for {leaf.name} has {len(dims)} entries but {leaf.name} "
                             f"has {value.dim()} dims (shape {tuple(value.shape)})")
        per_leaf[leaf.name] = {i: _spec_dim(d, roots, f"{leaf.name}.size({i})", kind) for i, d in enumerate(dims)}
    return dynamic_shapes_tree(inputs, per_leaf)


def _spec_dim(d: Any, roots: dict[sympy.Symbol, Any], where: str, kind: str) -> Any:
    """One ``TensorSpec`` entry as a torch ``Dim`` (None and ints as they are)."""
    if d is None or (isinstance(d, int) and not isinstance(d, bool)):
        return d
    expr = sympy.sympify(d.node.expr)
    form = Affine.of(expr) if len(expr.free_symbols) == 1 else None
    if form is None:
        raise InputError(f"dynamic_shapes ({kind}) for {where} is {expr}: symshape takes a ShapeVar or an affine "
                         "expression of one ShapeVar (2 * B + 1)")
    sym = form.root
    if sym not in roots:
        lo, hi = tc.spec_symbol_range(d, sym)
        base = str(sym).split("#")[0]
        name = base if base.isidentifier() and all(str(s).split("#")[0] != base for s in roots) else \
            f"{base if base.isidentifier() else 'v'}_{str(sym).split('#')[-1]}"
        roots[sym] = Dim(name, min=lo if lo is not None else 0, max=hi if hi is not None else tc.int_oo)
    return torch_derived(roots[sym], form)


_HINT_BOUND_MAX = 2**63 - 1


class _ModernBuilder:
    def __init__(self) -> None:
        self.roots: dict[str, RootDim] = {}
        self.decls: list[DimDecl] = []
        self.int_roots: set[str] = set()  # the named Dims of int inputs: one input each

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
        if is_int_input(value):
            self.int_input(InputDim(where, None), spec, int(value))
            return
        children = _children(value)
        if children is None:
            raise InputError(f"dynamic_shapes for {where} is {spec!r:.60}, but {where} is a {type(value).__name__}, "
                             f"not a tensor or an int: use None for it")
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
            self.hint(d, spec, size)
            return
        if tc.is_derived_dim(spec) or isinstance(spec, Dim):
            if _root_name(spec) in self.int_roots:
                raise InputError(f"dynamic_shapes for {d} is {spec.__name__}, the Dim of an int input: an int takes "
                                 "a Dim of its own (torch would not check the relation); give the int Dim.DYNAMIC "
                                 "or a Dim of its own, and symshape keeps its relation to the sizes as a runtime check")
            expr = self.expr_of(spec, d)
            self.decls.append(DimDecl(d, "dynamic", expr, spec.__name__))
            return
        raise InputError(f"dynamic_shapes for {d} is {spec!r:.60}: use a Dim, Dim.AUTO/STATIC/DYNAMIC or None")

    def int_input(self, d: InputDim, spec: Any, value: int) -> None:
        """An int input made dynamic (a symint): ``Dim.AUTO`` / ``Dim.DYNAMIC`` with their
        bounds (no lower bound unless given: ints may be negative), ``Dim.STATIC``, an int
        (its value), or a named ``Dim`` of its own, whose range the program checks (torch
        takes only the hints). A Dim shared with another input or a derived Dim is refused:
        torch would not check the relation at run time."""
        if tc.is_dim_hint(spec):
            self.hint(d, spec, value)  # no lower bound unless given (d.is_value); STATIC: bounds checked
            return
        if isinstance(spec, Dim) and not tc.is_derived_dim(spec):
            name = spec.__name__
            if name in self.roots or name in self.int_roots:
                raise InputError(f"dynamic_shapes for the int input {d} is Dim({name!r}), which names another input "
                                 f"too: an int takes a Dim of its own (torch would not check that they are equal); "
                                 f"give {d} Dim.DYNAMIC or a Dim of its own, and symshape keeps its relation to "
                                 f"the other inputs as a runtime check")
            expr = self.expr_of(spec, d)
            self.int_roots.add(name)
            # lo=None: the int's value takes its range from its own Dim, a negative min included
            self.decls.append(DimDecl(d, "dynamic", expr, spec.__name__, lo=None))
            return
        if tc.is_derived_dim(spec):
            raise InputError(f"dynamic_shapes for the int input {d} is the derived Dim {spec.__name__}: an int "
                             f"takes a Dim of its own (torch would not check the relation); give {d} Dim.DYNAMIC "
                             f"or a Dim of its own, and symshape keeps its relation to the other inputs as a "
                             f"runtime check")
        if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
            if isinstance(spec, int) and spec != value:
                raise InputError(f"{d} is declared static {spec} but the example is {value}")
            return
        raise InputError(f"dynamic_shapes for the int input {d} is {spec!r:.60}: use Dim.AUTO/DYNAMIC/STATIC, "
                         "a Dim of its own, or None")

    def hint(self, d: InputDim, spec: Any, size: int) -> None:
        """``Dim.STATIC`` (static: bounds, if given, must hold the example size, as torch
        checks), ``Dim.AUTO`` / ``Dim.DYNAMIC`` with their bounds: hint dims, whose relations
        and guards the trace infers; DYNAMIC must not specialize. A size's lower bound is 0
        unless given; an int input's (``d.is_value``) is none."""
        kind = spec.type.name
        what = f"Dim.{kind} for {'the int input ' if d.is_value else ''}{d}"
        lo = _bound(spec.min, "min", what)
        hi = _bound(spec.max, "max", what)
        if hi is not None and lo is not None and lo > hi:
            raise InputError(f"{what} has min={lo} > max={hi}")
        if kind == "STATIC":
            if (lo is not None and size < lo) or (hi is not None and size > hi):
                raise InputError(f"Dim.STATIC{_bounds_text(lo, hi)} for {d}: the example size {size} is outside "
                                 f"{range_text(0 if lo is None else lo, hi)}, and a static "
                                 f"dim keeps its example size: give an example in that range, or other bounds")
            return
        text = f"Dim.{kind}" + (_bounds_text(lo, hi) if (lo, hi) != (None, None) else "")
        self.decls.append(DimDecl(d, "auto" if kind == "AUTO" else "dynamic", None, text,
                                  lo if d.is_value else lo or 0, hi))

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
        if lo is None and not d.is_value:
            lo = 0
        if hi is not None and lo is not None and lo > hi:
            raise InputError(f"{what} has min={lo} > max={hi}")
        # an int's own Dim may have no min (min=-int_oo, as torch_dynamic_shapes gives it back)
        text = dim_call(name, lo, hi) if lo is not None else \
            f"Dim({name!r}, min=-int_oo{f', max={hi}' if hi is not None else ''})"
        root = RootDim(name, lo, hi, text)
        seen = self.roots.get(name)
        if seen is not None and (seen.lo, seen.hi) != (root.lo, root.hi):
            raise InputError(f"two different Dims are named {name!r} ({seen.text} and {root.text}); "
                             "use one Dim object or distinct names")
        self.roots[name] = root
        return root.symbol


def is_int_input(value: Any) -> bool:
    """Whether an input leaf is a Python int (not a bool): one torch can make a symint."""
    return isinstance(value, int) and not isinstance(value, bool)


def _root_name(spec: Any) -> str:
    while tc.is_derived_dim(spec):
        spec = spec.root
    return str(spec.__name__)


def _bound(value: Any, which: str, what: str) -> int | None:
    """A Dim bound as an int; None for no bound (``None``, ``int_oo``, ``inf``, and torch's
    ``2**63 - 1``; ``-int_oo`` / ``-inf`` as a min). Floats, bools, strings are InputErrors:
    they would be bent silently."""
    if value is None or value is tc.int_oo or value == math.inf:
        return None
    if which == "min" and (value == -tc.int_oo or value == -math.inf):
        return None  # an int's own Dim with no lower bound
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{what}: {which}={value!r} must be an int (got {type(value).__name__})")
    out = int(value)
    if which == "max" and out >= _HINT_BOUND_MAX:
        return None
    return out


def _bounds_text(lo: int | None, hi: int | None) -> str:
    return "(" + ", ".join(([f"min={lo}"] if lo is not None else []) + ([f"max={hi}"] if hi is not None else [])) + ")"


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
