"""symshape's export on a zoo of real models (benchmarks/zoo.py).

For each model (non-strict, and strict=True where the zoo says so): the exported program
runs like eager at sizes across the declared ranges and rejects sizes outside them; every
symbolic decision was routed to the solver; the solver's final ranges, torch's
``range_constraints`` and the ``equality_constraints`` match the spec; ``export.save`` /
``export.load`` keep all of it.
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import sympy
import torch
from torch.utils import _pytree as pytree

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import export  # noqa: E402
from export import _torch_compat as tc  # noqa: E402
from benchmarks.zoo import ZOO, ZooEntry  # noqa: E402

CASES = [pytest.param(e, False, id=f"{e.name}") for e in ZOO] + [
    pytest.param(e, True, id=f"{e.name}-strict") for e in ZOO if e.strict
]

# Decisions symshape may leave to torch (guards it cannot convert), per model: none so far.
TO_TORCH_ALLOWED: dict[str, int] = {}


@functools.cache
def _exported(name: str, strict: bool) -> tuple[torch.nn.Module, Any]:
    e = next(z for z in ZOO if z.name == name)
    model, args, kwargs = e.build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export.export(model, args, kwargs, dynamic_shapes=e.dynamic_shapes(), strict=strict)
    return model, ep


def _calls(e: ZooEntry) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    _, args, kwargs = e.build()
    return [(args, kwargs), *e.sizes()]


def _leaf_names(model: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """User-facing names of the tensor leaves (``inputs['b'][0]``), in torch's flat order."""
    params = list(inspect.signature(model.forward).parameters)
    names = []
    for path, leaf in pytree.tree_flatten_with_path((args, kwargs))[0]:
        (which, key), rest = path[:2], path[2:]
        param = params[key.idx] if which.idx == 0 else key.key
        if isinstance(leaf, torch.Tensor):
            names.append(param + pytree.keystr(tuple(rest)))
    return names


def _placeholders(e: ZooEntry, ep: Any) -> dict[str, str]:
    """User-facing leaf name -> the program's placeholder name."""
    model, args, kwargs = e.build()
    users = list(ep.graph_signature.user_inputs)
    names = _leaf_names(model, args, kwargs)
    assert len(users) == len(names), (users, names)
    return dict(zip(names, users))


def _split(dim_name: str) -> tuple[str, int]:
    leaf, _, rest = dim_name.rpartition(".size(")
    return leaf, int(rest.rstrip(")"))


def _torch_range(ep: Any, placeholder: str, dim: int) -> tuple[int | None, int | None]:
    """The range ``range_constraints`` gives the size ``dim`` of a placeholder."""
    node = next(n for n in ep.graph.nodes if n.op == "placeholder" and n.name == placeholder)
    size = node.meta["val"].shape[dim]
    assert isinstance(size, torch.SymInt), f"{placeholder}.size({dim}) was specialized to {size}"
    expr = size.node.expr
    rc = ep.range_constraints
    if expr in rc:
        return tc.range_bounds(rc[expr])
    (sym,) = expr.free_symbols  # a derived dim a*s + b
    lo, hi = tc.range_bounds(rc[sym])
    a = sympy.Poly(expr, sym).coeffs()[0]
    assert a > 0
    return int(expr.subs(sym, lo)), int(expr.subs(sym, hi))


def _run(ep: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ep.module()(*args, **kwargs)


def _check_runs_like_eager(e: ZooEntry, model: torch.nn.Module, ep: Any) -> None:
    for args, kwargs in _calls(e):
        expected = model(*args, **kwargs)
        got = _run(ep, args, kwargs)
        torch.testing.assert_close(got, expected, atol=2e-5, rtol=1e-4)


def _check_rejects_outside(e: ZooEntry, ep: Any) -> None:
    for args, kwargs in e.outside():
        shapes = [tuple(t.shape) for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        with pytest.raises((AssertionError, RuntimeError, ValueError)):
            _run(ep, args, kwargs)
            pytest.fail(f"{e.name}: the program accepted {shapes}, outside its ranges")


def _check_ranges(e: ZooEntry, ep: Any) -> None:
    assert dict(ep.symshape.ranges) == e.ranges, e.notes
    names = _placeholders(e, ep)
    for dim_name, expected in e.ranges.items():
        leaf, dim = _split(dim_name)
        assert _torch_range(ep, names[leaf], dim) == expected, f"{dim_name}: range_constraints disagree"


def _classes(pairs: list[tuple[Any, Any]]) -> set[frozenset[tuple[str, int]]]:
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for a, b in pairs:
        parent[find((a.input_name, a.dim))] = find((b.input_name, b.dim))
    groups: dict[tuple[str, int], set[tuple[str, int]]] = {}
    for x in list(parent):
        groups.setdefault(find(x), set()).add(x)
    return {frozenset(g) for g in groups.values()}


def _check_equalities(e: ZooEntry, ep: Any) -> None:
    names = _placeholders(e, ep)
    expected = {frozenset((names[leaf], dim) for leaf, dim in map(_split, group)) for group in e.tied}
    assert _classes(ep.equality_constraints) == expected


# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("e", "strict"), CASES)
def test_runs_like_eager(e: ZooEntry, strict: bool) -> None:
    model, ep = _exported(e.name, strict)
    assert isinstance(ep, export.SymshapeProgram) and isinstance(ep, torch.export.ExportedProgram)
    _check_runs_like_eager(e, model, ep)


@pytest.mark.parametrize(("e", "strict"), CASES)
def test_rejects_sizes_outside_the_ranges(e: ZooEntry, strict: bool) -> None:
    _, ep = _exported(e.name, strict)
    _check_rejects_outside(e, ep)


@pytest.mark.parametrize(("e", "strict"), CASES)
def test_every_decision_is_routed(e: ZooEntry, strict: bool) -> None:
    _, ep = _exported(e.name, strict)
    stats = ep.symshape.stats
    assert stats["asked"] == stats["routed"] + stats["to_torch"]
    assert stats["routed"] > 0
    assert stats["to_torch"] <= TO_TORCH_ALLOWED.get(e.name, 0), stats
    assert stats["guards"] <= stats["routed"] and stats["facts"] > 0
    assert sum(stats["stages"].values()) > 0


@pytest.mark.parametrize(("e", "strict"), CASES)
def test_ranges_match_the_spec(e: ZooEntry, strict: bool) -> None:
    _, ep = _exported(e.name, strict)
    _check_ranges(e, ep)


@pytest.mark.parametrize(("e", "strict"), CASES)
def test_equality_constraints_tie_declared_dims(e: ZooEntry, strict: bool) -> None:
    _, ep = _exported(e.name, strict)
    _check_equalities(e, ep)
    classes = {frozenset(c) for c in ep.symshape.classes}
    for group in e.tied:
        assert any(set(group) <= c for c in classes), (group, ep.symshape.classes)


@pytest.mark.parametrize(("e", "strict"), CASES)
def test_save_load_round_trip(e: ZooEntry, strict: bool, tmp_path: Path) -> None:
    model, ep = _exported(e.name, strict)
    path = tmp_path / f"{e.name}.pt2"
    export.save(ep, str(path))
    loaded = export.load(str(path))
    assert isinstance(loaded, export.SymshapeProgram)
    assert loaded.equality_constraints == ep.equality_constraints
    assert loaded.symshape.to_dict() == ep.symshape.to_dict()
    assert {str(k): tc.range_bounds(v) for k, v in loaded.range_constraints.items()} == {
        str(k): tc.range_bounds(v) for k, v in ep.range_constraints.items()}
    _check_ranges(e, loaded)
    _check_equalities(e, loaded)
    _check_runs_like_eager(e, model, loaded)
    _check_rejects_outside(e, loaded)
