"""``dynamic_shapes`` forms new in torch 2.14 (``ShapesSpec``, ``@dynamic_spec``, top-level
``**kwargs`` entries), the same in 2.15; absent on 2.13, where each function is the identity."""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import sympy

from export._torch_compat.patches import _PATCHES
from export._torch_compat.symbols import range_bounds

__all__ = [
    "is_shapes_spec", "decorated_dynamic_shapes", "shapes_spec_leaves", "shapes_spec_assumptions",
    "spec_symbol_range", "normalize_kwargs_shapes", "decorator_resolved",
]


def _dynamic_spec_module() -> Any:
    """torch's ``dynamic_spec`` module if ``torch.export`` takes its specs (2.14: it has
    ``_resolve_dynamic_shapes``; 2.13 has the module for ``torch.compile`` only), else None."""
    try:
        ds = importlib.import_module("torch.fx.experimental.dynamic_spec")
    except ImportError:
        return None
    return ds if hasattr(ds, "_resolve_dynamic_shapes") else None


def is_shapes_spec(spec: Any) -> bool:
    """``spec`` is a torch 2.14 ``ShapesSpec`` / ``ParamsSpec`` (never on 2.13).

    >>> is_shapes_spec({"x": {0: None}})
    False
    """
    ds = _dynamic_spec_module()
    return ds is not None and isinstance(spec, (ds.ShapesSpec, ds.ParamsSpec))


def decorated_dynamic_shapes(f: Any, dynamic_shapes: Any) -> Any:
    """torch 2.14's own resolution of an ``@dynamic_spec`` on ``f`` (``forward`` for a
    module): its ``ShapesSpec`` if ``dynamic_shapes`` is None; ValueError if both are given."""
    ds = _dynamic_spec_module()
    return dynamic_shapes if ds is None else ds._resolve_dynamic_shapes(f, dynamic_shapes)


def shapes_spec_leaves(f: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any] | None,
                       spec: Any) -> list[tuple[Any, Any]]:
    """``(input leaf, its spec)`` for a ``ShapesSpec``/``ParamsSpec``, bound by torch's own
    ``_bind_spec_to_args`` (the order of ``tree_flatten((args, kwargs))``)."""
    ds = _dynamic_spec_module()
    binding = importlib.import_module("torch.fx.experimental._spec_binding")
    shapes_spec = ds._coerce_to_shapes_spec(spec)
    leaf_specs, flat, _ = binding._bind_spec_to_args(f, args, dict(kwargs or {}), shapes_spec)
    return list(zip(flat, leaf_specs))


def shapes_spec_assumptions(spec: Any) -> list[Any]:
    """The ``assumptions`` of a ``ShapesSpec`` (none for a ``ParamsSpec``)."""
    return list(getattr(spec, "assumptions", []))


def spec_symbol_range(value: Any, sym: sympy.Symbol) -> tuple[int | None, int | None]:
    """The declared range of an ``IntVar``/``ShapeVar`` symbol of a 2.14 spec SymInt."""
    return range_bounds(value.node.shape_env.var_to_range[sym])


def normalize_kwargs_shapes(dynamic_shapes: Any, f: Any, args: tuple[Any, ...],
                            kwargs: Mapping[str, Any] | None) -> Any:
    """torch 2.14's ``_normalize_dynamic_shapes``: a ``**kwargs`` entry given at top level
    by its call-site name moves under the ``**kwargs`` parameter (identity on 2.13)."""
    from_torch = getattr(importlib.import_module("torch.export.dynamic_shapes"), "_normalize_dynamic_shapes", None)
    if from_torch is None:
        return dynamic_shapes
    return from_torch(dynamic_shapes, f, args, dict(kwargs) if kwargs is not None else None)


@contextlib.contextmanager
def decorator_resolved() -> Iterator[None]:
    """Inside the ``with``, ``torch.export.export`` does not apply an ``@dynamic_spec``
    again: symshape resolved it itself and passes the equivalent ``Dim`` spec."""
    ds = _dynamic_spec_module()
    if ds is None:
        yield
        return
    original = ds._resolve_dynamic_shapes
    owner = threading.get_ident()

    def resolve(f: Any, dynamic_shapes: Any) -> Any:
        # another thread's plain torch.export meanwhile: torch's own resolution
        return dynamic_shapes if threading.get_ident() == owner else original(f, dynamic_shapes)

    with _PATCHES.lock:
        ds._resolve_dynamic_shapes = resolve
        try:
            yield
        finally:
            ds._resolve_dynamic_shapes = original
