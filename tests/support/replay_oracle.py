"""The re-export oracle of replay (issue 35): a failing export's fix verified by replaying its
trace (``fix_verification="replay"``) and by re-exporting (``"re-export"``) must offer the same
program. Shared by tests/export/tracing/test_replay.py and tests/e2e/corpus/test_replay_oracle.py."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

import torch

import export
from export._torch_compat import TORCH_VERSION


def failing(model: Any, args: tuple[Any, ...], spec: Callable[[], Any], verification: str,
            kwargs: dict[str, Any] | None = None) -> export.ConstraintViolationError | None:
    """The ConstraintViolationError of exporting ``model`` with ``spec()`` (None: it exports,
    or fails otherwise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            export.export(model, args, kwargs, dynamic_shapes=spec(), fix_verification=verification)
        except export.ConstraintViolationError as e:
            return e
        except export.ExportError:
            return None
    return None


def program_key(ep: Any) -> tuple[Any, ...]:
    """What must agree between two programs of one spec: torch's range constraints, the graph's
    code and signature, symshape's ranges, classes, relations, checks, contract, warnings,
    assumptions, 0/1 evidence and congruences, the equality constraints; every node's name and
    value as torch prints it (its symbolic sizes), and torch's guard code (``_guards_code``)."""
    r = ep.symshape
    metas = tuple((n.name, str(n.meta.get("val"))) for n in ep.graph.nodes)
    return (str(ep.range_constraints), ep.graph_module.code, str(ep.graph_signature), dict(r.ranges), r.classes,
            r.relations, r.checks, str(r.contract), r.warnings, str(getattr(ep, "equality_constraints", None)),
            r.assumptions, r.zero_one, r.congruences, metas, tuple(getattr(ep, "_guards_code", None) or ()))


def differences(a: Any, b: Any) -> list[str]:
    """The parts of :func:`program_key` in which ``a`` and ``b`` differ, named."""
    names = ("range_constraints", "code", "signature", "ranges", "classes", "relations", "checks", "contract",
             "warnings", "equality_constraints", "assumptions", "zero_one", "congruences", "node_values", "guards_code")
    return [n for n, x, y in zip(names, program_key(a), program_key(b)) if x != y]


SLICE_MAX_GUARD_213 = ("guards_code",) if TORCH_VERSION < (2, 14) else ()
"""The one known difference between a replayed program and the re-export's: on torch 2.13 a
fix for ``x[:, 5:]`` (``n >= 6``) replayed keeps torch's guard ``max(1, n - 5) == n - 5``,
which 2.13's static evaluation cannot decide over the fix's range (2.14 and 2.15 can, and
``export._torch_compat.drop_static_guards`` drops it); the re-export never records it because
symshape answers torch's static query. The range implies the guard: the program refuses
nothing more. Tests that meet it expect exactly this difference, nothing else."""


def outcome(ep: Any, model: Any, args: tuple[Any, ...]) -> tuple[str, Any]:
    """``("ok", outputs)`` or ``("refused", error type)`` for ``ep.module()`` on ``args``."""
    try:
        with torch.no_grad():
            return "ok", ep.module()(*args)
    except Exception as e:  # noqa: BLE001 - a refusal is an outcome
        return "refused", type(e).__name__


def same_outcomes(a: Any, b: Any, model: Any, grid: Iterable[tuple[Any, ...]]) -> list[str]:
    """The grid points where ``a`` and ``b`` do not agree (one refuses, or outputs differ)."""
    bad = []
    for args in grid:
        (ka, va), (kb, vb) = outcome(a, model, args), outcome(b, model, args)
        if ka != kb or (ka == "ok" and not _equal(va, vb)):
            bad.append(f"{[tuple(t.shape) for t in args if isinstance(t, torch.Tensor)]}: {ka} vs {kb}")
    return bad


def _equal(x: Any, y: Any) -> bool:
    xs, ys = torch.utils._pytree.tree_leaves(x), torch.utils._pytree.tree_leaves(y)
    return len(xs) == len(ys) and all(
        torch.equal(p, q) if isinstance(p, torch.Tensor) else p == q for p, q in zip(xs, ys))
