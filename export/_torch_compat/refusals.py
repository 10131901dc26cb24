"""A program's refusal of an input, in the user's words: where ``ep.module()`` checks its inputs.

torch's unlifted module (``ExportedProgram.module()``) checks a call's inputs twice before the
graph runs: a forward pre-hook (``_check_input_constraints_pre_hook``: ranges and equalities,
``RuntimeError: Expected input at *args[0].shape[0] to be <= 64, but got 65``) and, since torch
2.13, the ``_guards_fn`` submodule the graph calls first (the export's guards,
``AssertionError: Guard failed: x.size()[1] * x.size()[0] % (4 * x.size()[0]) == 0``).
:func:`explain_refusals` wraps both: when one fails, ``explain(flat user inputs)`` says why in
plain words and ``error(text)`` is raised from torch's error; when ``explain`` finds nothing,
torch's error stands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.fx._pytree import tree_flatten_spec

__all__ = ["explain_refusals", "ASSERT_PREFIX"]

Explain = Callable[[Sequence[Any]], "str | None"]

_PRE_HOOK = "_check_input_constraints_pre_hook"


class _ExplainedGuards(torch.nn.Module):
    """``_guards_fn`` (called with the flat user inputs), its failures explained."""

    def __init__(self, guards: torch.nn.Module, explain: Explain, error: type[Exception]) -> None:
        super().__init__()
        self.guards = guards
        self.explain = explain
        self.error = error

    def forward(self, *flat: Any) -> Any:
        try:
            return self.guards(*flat)
        except (AssertionError, RuntimeError) as e:
            text = self.explain(flat)
            if text is None:
                raise
            raise self.error(text) from e


def _explained_hook(hook: Callable[..., Any], explain: Explain, error: type[Exception]) -> Callable[..., Any]:
    def checked(module: torch.nn.Module, args: Any, kwargs: Any) -> Any:
        try:
            return hook(module, args, kwargs)
        except (AssertionError, RuntimeError) as e:
            flat = _flat_inputs(module, args, kwargs)
            text = explain(flat) if flat is not None else None
            if text is None:
                raise
            raise error(text) from e

    return checked


ASSERT_PREFIX = "symshape: "
"""How the messages of symshape's asserts in a program's graph begin (``_assert_scalar``:
the conditions of its contract, :mod:`export.program.contract`)."""


def _flat_inputs(module: torch.nn.Module, args: Any, kwargs: Any) -> Any:
    spec = getattr(module, "_in_spec", None)
    try:
        return tree_flatten_spec((args, kwargs or {}), spec) if spec is not None else None
    except Exception:  # noqa: BLE001 - inputs that do not fit the spec: torch's error says so
        return None


def _explained_forward(module: torch.nn.Module, explain: Explain, error: type[Exception]) -> Callable[..., Any]:
    forward = module.forward

    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return forward(*args, **kwargs)
        except RuntimeError as e:
            if not str(e).startswith(ASSERT_PREFIX) or isinstance(e, error):
                raise
            flat = _flat_inputs(module, args, kwargs)
            text = explain(flat) if flat is not None else None
            if text is None:
                raise
            raise error(text) from e

    checked.__wrapped__ = forward  # type: ignore[attr-defined]
    return checked


def explain_refusals(module: torch.nn.Module, explain: Explain, error: type[Exception]) -> torch.nn.Module:
    """``module`` (what ``ExportedProgram.module()`` returned) with its input checks' failures
    (the pre-hook, ``_guards_fn``, and symshape's asserts in the graph, whose messages start
    with :data:`ASSERT_PREFIX`) raised as ``error(explain(flat user inputs))``; returned for
    chaining."""
    guards = getattr(module, "_guards_fn", None)
    if isinstance(guards, torch.nn.Module) and not isinstance(guards, _ExplainedGuards):
        module._guards_fn = _ExplainedGuards(guards, explain, error)
    hooks = getattr(module, "_forward_pre_hooks", {})
    for key, hook in list(hooks.items()):
        if getattr(hook, "__name__", "") == _PRE_HOOK:
            hooks[key] = _explained_hook(hook, explain, error)
    if "forward" not in module.__dict__:
        module.forward = _explained_forward(module, explain, error)
    return module
