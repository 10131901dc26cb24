"""Pytrees (torch's, so the same containers as export), torch's source names of input
sizes, and the kinds of ``Dim`` objects."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from torch.export.dynamic_shapes import _DerivedDim, _DimHint, _IntWrapper
from torch.utils import _pytree as _pytree

__all__ = [
    "tree_flatten_with_path", "tree_map", "tree_map_with_path", "keystr", "key_entry",
    "SizeSource", "size_source", "is_dim_hint", "is_derived_dim", "int_wrapper_value",
]


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[tuple[tuple[Any, ...], Any]]:
    """The leaves of ``tree`` with their key paths (torch's pytree, so the same containers
    as export: dicts, lists, tuples, namedtuples, registered dataclasses).

    >>> [(keystr(p), v) for p, v in tree_flatten_with_path({"a": [1, 2]})]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    flat, _ = _pytree.tree_flatten_with_path(tree, is_leaf=is_leaf)
    return [(tuple(p), v) for p, v in flat]


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with every leaf replaced by ``fn(leaf)``."""
    return _pytree.tree_map(fn, tree)


def tree_map_with_path(fn: Callable[[tuple[Any, ...], Any], Any], tree: Any) -> Any:
    """``tree`` with every leaf replaced by ``fn(key_path, leaf)``."""
    return _pytree.tree_map_with_path(fn, tree)


def keystr(path: tuple[Any, ...]) -> str:
    """A key path as Python source (``['y']['a']``, ``[0]``, ``.n``)."""
    return _pytree.keystr(tuple(path))


def key_entry(entry: Any) -> tuple[str, Any]:
    """One step of a key path: ``("key", k)`` (a mapping key), ``("index", i)`` (a
    sequence position), ``("attr", name)`` (an attribute), or ``("other", entry)``.

    >>> [key_entry(e) for e in tree_flatten_with_path({"a": [1]})[0][0]]
    [('key', 'a'), ('index', 0)]
    """
    if isinstance(entry, _pytree.MappingKey):
        return "key", entry.key
    if isinstance(entry, _pytree.SequenceKey):
        return "index", entry.idx
    if isinstance(entry, _pytree.GetAttrKey):
        return "attr", entry.name
    return "other", entry


@dataclasses.dataclass(frozen=True, slots=True)
class SizeSource:
    """An input size as torch names it: ``L['y']['a'].size()[0]`` (non-strict: ``path``
    is the key path ``['y']['a']`` of the bound arguments) or
    ``L['flat_args'][3].size()[0]`` (strict: ``flat_index`` 3 of the flattened inputs).
    ``dim`` is None for an input's own value (``L['n']``: an int input made a symint)."""

    dim: int | None
    path: str | None = None
    flat_index: int | None = None


_SOURCE_DIM = re.compile(r"^(?P<base>.*)\.size\(\)\[(?P<dim>\d+)\]$")
_FLAT_ARG = re.compile(r"L\['flat_args'\]\[(\d+)\]")
_INPUT_VALUE = re.compile(r"L(\[('[^']*'|\d+)\])+")
"""An input's own value: ``L['n']``, ``L['d']['k']``, ``L['flat_args'][1]``."""


def size_source(name: str) -> SizeSource | None:
    """The input size behind torch's source name ``name`` (or the input itself, for an int
    input); None for anything else (strides, storage offsets, locals).

    >>> size_source("L['y']['a'].size()[0]"), size_source("L['flat_args'][3].size()[1]")
    (SizeSource(dim=0, path="['y']['a']", flat_index=None), SizeSource(dim=1, path=None, flat_index=3))
    >>> size_source("L['n']"), size_source("L['flat_args'][1]")
    (SizeSource(dim=None, path="['n']", flat_index=None), SizeSource(dim=None, path=None, flat_index=1))
    >>> size_source("L['x'].stride()[0]") is None
    True
    """
    m = _SOURCE_DIM.match(name)
    if m is None:
        if _INPUT_VALUE.fullmatch(name) is None:
            return None
        base, dim = name, None
    else:
        base, dim = m["base"], int(m["dim"])
    flat = _FLAT_ARG.fullmatch(base)
    if flat is not None:
        return SizeSource(dim, flat_index=int(flat[1]))
    if base.startswith("L["):
        return SizeSource(dim, path=base[1:])
    return None


def is_dim_hint(spec: Any) -> bool:
    """Whether ``spec`` is ``Dim.AUTO``, ``Dim.STATIC`` or ``Dim.DYNAMIC`` (possibly
    with a range): it has ``.type.name``, ``.min`` and ``.max``."""
    return isinstance(spec, _DimHint)


def is_derived_dim(spec: Any) -> bool:
    """Whether ``spec`` is a derived ``Dim`` (``2 * b + 1``): it has ``.root`` (a Dim)
    and ``.fn`` (the function of the root's symbol)."""
    return isinstance(spec, _DerivedDim)


def int_wrapper_value(leaf: Any) -> int | None:
    """The int a ``torch.export.dynamic_shapes._IntWrapper`` stands for (``.val``: torch's
    tag for an int input, so that a ``ShapesCollection`` can mark it dynamic by identity;
    ``torch.export.export`` takes it as that int), None for any other leaf. (torch 2.13-2.15
    all have it, with ``.val``.)

    >>> int_wrapper_value(_IntWrapper(5)), int_wrapper_value(5)
    (5, None)
    """
    return leaf.val if isinstance(leaf, _IntWrapper) else None
