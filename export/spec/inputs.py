"""The example inputs of an export: flattened leaves with their paths and user-facing names.

A leaf's *path* is its pytree key path inside the arguments bound to the signature of
``f`` (``x``, ``y['a']``, ``d[0]``, ``n.a``); tensors are found by path and by identity
(the classic ``dynamic_dim(t, i)`` names a tensor object). torch names the same leaves in
its sources (``L['x'].size()[0]`` non-strict, ``L['flat_args'][3].size()[0]`` strict);
:meth:`Inputs.dim_of_source` maps those back.

>>> import torch
>>> def f(x, y): ...
>>> inp = Inputs.bind(f, (torch.zeros(2, 3),), {"y": {"a": torch.zeros(4)}})
>>> [leaf.name for leaf in inp.tensors]
['x', "y['a']"]
>>> inp.dim_of_source("L['y']['a'].size()[0]")
InputDim(input_name="y['a']", dim=0)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from export import _torch_compat as tc
from export.errors import InputError
from shapes.spec import InputDim

__all__ = ["Leaf", "Inputs", "signature_of", "leaf_name"]

@dataclass(frozen=True, slots=True)
class Leaf:
    """One flattened input: its path, user-facing name, flat index, and value."""

    path: tuple[Any, ...]
    name: str
    index: int
    value: Any

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.value, torch.Tensor)


def signature_of(f: Callable[..., Any]) -> inspect.Signature:
    """The signature export binds arguments with (``forward``'s for modules). A callable
    without one (a builtin such as ``torch.relu``) or a non-callable is an InputError.

    >>> signature_of(lambda x, y=1: x)
    <Signature (x, y=1)>
    >>> signature_of(torch.relu)
    Traceback (most recent call last):
    ...
    export.errors.InputError: export needs an nn.Module or a Python function whose signature names its inputs; torch.relu is a builtin without a Python signature: wrap it, e.g. def f(x): return torch.relu(x)
    """
    if not callable(f):
        raise InputError(f"export needs an nn.Module, a function or a method, got {type(f).__name__}: {f!r:.60}")
    target = f.forward if isinstance(f, torch.nn.Module) else f
    try:
        return inspect.signature(target)
    except (ValueError, TypeError):
        module, name = getattr(f, "__module__", None), getattr(f, "__name__", None)
        shown = name if module in (None, "builtins") else f"{module}.{name}"
        shown = shown if name is not None else repr(f)
        raise InputError(
            f"export needs an nn.Module or a Python function whose signature names its inputs; {shown} is a "
            f"builtin without a Python signature: wrap it, e.g. def f(x): return {shown}(x)") from None


def _name_of(path: tuple[Any, ...]) -> str:
    head, rest = path[0], path[1:]
    return leaf_name(head.key, rest)


def leaf_name(param: str, rest: tuple[Any, ...]) -> str:
    """The user-facing name of a leaf: ``param`` plus its key path (``y['a']``, ``d[0]``)."""
    return f"{param}{tc.keystr(tuple(rest))}"


@dataclass(frozen=True, slots=True)
class Inputs:
    """The bound example inputs of one export."""

    leaves: tuple[Leaf, ...]
    bound: Mapping[str, Any]
    copies: tuple[tuple[str, str], ...] = ()
    """``(copy, original)`` leaf names: an input traced with a copy of the tensor object
    the user's example passed as ``original`` too (see :meth:`example`)."""

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(self.bound)

    @staticmethod
    def example(f: Callable[..., Any], args: tuple[Any, ...],
                kwargs: dict[str, Any] | None) -> tuple[tuple[Any, ...], dict[str, Any] | None, Inputs]:
        """The example inputs as symshape traces them, and their binding: a torch.export
        ``_IntWrapper`` (the tag a ``ShapesCollection`` marks an int input by) as its int,
        and a tensor object met again among the inputs as a copy of it (``clone()``, in
        ``args`` then ``kwargs`` order), so that the graph reads each input on its own
        (torch traces the example's aliasing into the program: ``f(u, u)`` would read one
        input for both). The user's objects are untouched; views of one tensor are
        distinct objects and stay as they are.

        >>> def f(x, y, n): ...
        >>> u = torch.zeros(2)
        >>> args, _, inp = Inputs.example(f, (u, u, 3), None)
        >>> args[0] is u, args[1] is u, inp.copies
        (True, False, (('y', 'x'),))
        """
        user = Inputs.bind(f, args, kwargs)
        seen: set[int] = set()

        def traced(leaf: Any) -> Any:
            value = tc.int_wrapper_value(leaf)
            if value is not None:
                return value
            if isinstance(leaf, torch.Tensor):
                if id(leaf) in seen:
                    return leaf.detach().clone().requires_grad_(leaf.requires_grad)
                seen.add(id(leaf))
            return leaf

        changed = any(tc.int_wrapper_value(leaf.value) is not None for leaf in user.leaves) or \
            len({id(leaf.value) for leaf in user.tensors}) < len(user.tensors)
        if not changed:
            return args, kwargs, user
        new_args: tuple[Any, ...] = tc.tree_map(traced, args)
        new_kwargs: dict[str, Any] | None = tc.tree_map(traced, kwargs) if kwargs is not None else None
        inputs = Inputs.bind(f, new_args, new_kwargs)
        copies = tuple((mine.name, next(o.name for o in inputs.leaves if o.value is theirs.value))
                       for mine, theirs in zip(inputs.leaves, user.leaves)
                       if isinstance(theirs.value, torch.Tensor) and mine.value is not theirs.value)
        return new_args, new_kwargs, Inputs(inputs.leaves, inputs.bound, copies)

    @staticmethod
    def bind(f: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any] | None) -> Inputs:
        """Bind ``args``/``kwargs`` to ``f``'s signature and flatten them."""
        if not isinstance(args, tuple):
            raise InputError(f"args must be a tuple of example inputs, got {type(args).__name__}")
        try:
            bound = signature_of(f).bind(*args, **(kwargs or {}))
        except TypeError as e:
            raise InputError(f"the example inputs do not match the signature of {_callable_name(f)}: {e}") from None
        flat = tc.tree_flatten_with_path(dict(bound.arguments))
        leaves = tuple(Leaf(p, _name_of(p), i, v) for i, (p, v) in enumerate(flat))
        return Inputs(leaves, dict(bound.arguments))

    @property
    def tensors(self) -> tuple[Leaf, ...]:
        return tuple(leaf for leaf in self.leaves if leaf.is_tensor)

    def leaf_of_tensor(self, t: torch.Tensor) -> Leaf | None:
        """The leaf holding exactly this tensor object (identity, not equality)."""
        for leaf in self.leaves:
            if leaf.value is t:
                return leaf
        return None

    def leaf_named(self, name: str) -> Leaf | None:
        for leaf in self.leaves:
            if leaf.name == name:
                return leaf
        return None

    def dim_of_source(self, source_name: str) -> InputDim | None:
        """The input dim behind a torch source name (an int input's value: ``dim=None``),
        or None (strides, offsets, unknown).

        >>> def f(x, n): ...
        >>> inp = Inputs.bind(f, (torch.zeros(2), 3), None)
        >>> inp.dim_of_source("L['n']"), inp.dim_of_source("L['flat_args'][1]"), inp.dim_of_source("L['x']")
        (InputDim(input_name='n', dim=None), InputDim(input_name='n', dim=None), None)
        """
        source = tc.size_source(source_name)
        leaf = None if source is None else self._leaf_of_source(source)
        if leaf is None or source is None or (source.dim is None) == leaf.is_tensor:
            return None
        if source.dim is None and not _is_int(leaf.value):
            return None
        return InputDim(leaf.name, source.dim)

    def _leaf_of_source(self, source: tc.SizeSource) -> Leaf | None:
        if source.flat_index is not None:
            i = source.flat_index
            return self.leaves[i] if i < len(self.leaves) else None
        return next((leaf for leaf in self.leaves if tc.keystr(leaf.path) == source.path), None)

    def size(self, d: InputDim) -> int:
        """The example size of ``d`` (the value, for an int input)."""
        leaf = self.leaf_named(d.input_name)
        assert leaf is not None
        if d.dim is None:
            assert _is_int(leaf.value)
            return int(leaf.value)
        assert leaf.is_tensor
        return int(leaf.value.shape[d.dim])

    def example_sizes(self) -> dict[InputDim, int]:
        return {InputDim(t.name, i): int(n) for t in self.tensors for i, n in enumerate(t.value.shape)}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _callable_name(f: Callable[..., Any]) -> str:
    return type(f).__name__ if isinstance(f, torch.nn.Module) else getattr(f, "__qualname__", repr(f))
