"""Run one export with plain torch.export and with symshape, and compare what they did.

The comparison (:func:`compare`) is semantic:

* **error or not**: both export, or both refuse (torch with any exception, symshape with an
  ``export.ExportError``);
* **ranges**, per input dim: the same upper bound; the same lower bound up to symshape's
  documented 0/1 policy (sizes are >= 1; torch's assumed ``>= 2`` is kept only where a
  decision relied on it; size 0 on a ``Dim.AUTO``/``Dim.DYNAMIC`` dim where a re-trace at 0
  shows the program right there): where torch's lower bound is 0, 1 or 2, symshape's is 0, 1
  or 2 (the probes below check symshape's program against eager at its lower bound); above
  that, they are equal;
* **runtime checks** on sizes just inside and just outside both ranges (every dim of one
  equality class resized together): where both programs accept, both match eager; where
  symshape admits a size torch rejects, symshape's output matches eager (it admits only
  what it computes correctly); symshape never rejects a size torch admits, except size 0
  (torch's size symbols are positive, a documented refusal).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import pytest
import torch

import export
from export.spec.inputs import Inputs
from export.diagnose.probe import enlarged_inputs
from shapes.spec import InputDim


@dataclasses.dataclass
class Outcome:
    """One side of a comparison: the program, or the error."""

    ep: Any = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def run_both(model: torch.nn.Module, args: tuple[Any, ...], dynamic_shapes: Any, **kw: Any) -> tuple[Outcome, Outcome]:
    """torch.export.export and export.export on the same inputs and spec (symshape with
    torch's 0/1 semantics, ``zero_one_examples="raise"``: its default traces a 0/1 example of
    a dim declared dynamic at a larger size instead)."""
    out = []
    for fn, own in ((torch.export.export, {}), (export.export, {"zero_one_examples": "raise"})):
        try:
            out.append(Outcome(fn(model, args, dynamic_shapes=dynamic_shapes, **own, **kw)))
        except Exception as e:  # noqa: BLE001 - compared below
            out.append(Outcome(error=e))
    return out[0], out[1]


def torch_ranges(ep: Any, inputs: Inputs) -> dict[str, tuple[int, int | None]]:
    """Per dynamic input dim (``x.size(0)``), torch's range from ``range_constraints``."""
    user = [s.arg.name for s in ep.graph_signature.input_specs
            if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    out = {}
    for leaf, name in zip(inputs.leaves, user):
        val = nodes[name].meta.get("val")
        if not leaf.is_tensor or not isinstance(val, torch.Tensor):
            continue
        for i, size in enumerate(val.shape):
            if isinstance(size, torch.SymInt):
                expr = size.node.expr
                vr = ep.range_constraints.get(expr)
                if vr is None:
                    continue
                hi = None if not math.isfinite(float(vr.upper)) else int(vr.upper)
                out[str(InputDim(leaf.name, i))] = (int(vr.lower), hi)
    return out


def _runs(ep: Any, args: tuple[Any, ...]) -> tuple[bool, Any]:
    try:
        return True, ep.module()(*args)
    except Exception:  # noqa: BLE001 - a rejected input
        return False, None


def _same(a: Any, b: Any) -> bool:
    fa, _ = torch.utils._pytree.tree_flatten(a)
    fb, _ = torch.utils._pytree.tree_flatten(b)
    return len(fa) == len(fb) and all(
        torch.allclose(x, y) if isinstance(x, torch.Tensor) else x == y for x, y in zip(fa, fb))


def compare(model: torch.nn.Module, args: tuple[Any, ...], dynamic_shapes: Any, **kw: Any) -> tuple[Outcome, Outcome]:
    """Export both ways and assert the parity described in the module docstring."""
    t, s = run_both(model, args, dynamic_shapes, **kw)
    assert t.ok == s.ok, f"torch: {t.error!r:.300}\nsymshape: {s.error!r:.300}"
    if not s.ok:
        assert isinstance(s.error, export.ExportError), repr(s.error)
        return t, s
    inputs = Inputs.bind(model, args, None)
    t_ranges, s_ranges = torch_ranges(t.ep, inputs), dict(s.ep.symshape.ranges)
    for dim, (t_lo, t_hi) in t_ranges.items():
        s_lo, s_hi = s_ranges[dim]
        assert s_hi == t_hi, f"{dim}: torch {t_lo, t_hi}, symshape {s_lo, s_hi}"
        assert s_lo in ((0, 1, 2) if t_lo <= 2 else (t_lo,)), f"{dim}: torch {t_lo, t_hi}, symshape {s_lo, s_hi}"
    assert set(s_ranges) >= set(t_ranges)
    _probe_sizes(model, args, inputs, t.ep, s.ep, t_ranges, s_ranges)
    return t, s


def _probe_sizes(model: torch.nn.Module, args: tuple[Any, ...], inputs: Inputs, t_ep: Any, s_ep: Any,
                 t_ranges: dict[str, tuple[int, int | None]], s_ranges: dict[str, tuple[int | None, int | None]]) -> None:
    by_name = {str(InputDim(leaf.name, i)): InputDim(leaf.name, i)
               for leaf in inputs.tensors for i in range(leaf.value.dim())}
    classes = [set(c) for c in s_ep.symshape.classes]
    groups: list[set[str]] = []
    for name in s_ranges:
        if not any(name in g for g in groups):
            groups.append({d for d in next((c for c in classes if name in c), {name}) if d in s_ranges})
    for group in groups:
        first = sorted(group)[0]
        sizes = set()
        for lo, hi in (t_ranges.get(first, (None, None)), s_ranges[first]):
            if lo is not None:
                sizes |= {lo - 1, lo, lo + 1}
            if hi is not None:
                sizes |= {hi - 1, hi, hi + 1}
        for n in sorted(x for x in sizes if 0 <= x <= 64):
            new_args, _ = enlarged_inputs(inputs, args, None, {by_name[d]: n for d in group if d in by_name})
            _check_one(model, new_args, t_ep, s_ep, f"{sorted(group)} = {n}")


def _check_one(model: torch.nn.Module, args: tuple[Any, ...], t_ep: Any, s_ep: Any, what: str) -> None:
    t_ok, t_out = _runs(t_ep, args)
    s_ok, s_out = _runs(s_ep, args)
    try:
        eager_ok, eager = True, model(*args)
    except Exception:  # noqa: BLE001 - eager fails: no program may accept
        eager_ok, eager = False, None
    if s_ok:
        assert eager_ok and _same(s_out, eager), f"{what}: symshape accepts, but differs from eager"
    if t_ok and not s_ok:
        assert " = 0" in what, f"{what}: torch accepts, symshape rejects"


# -- the table runner both parity tables use ---------------------------------------------------

# (id, model, args, dynamic_shapes, expect): expect is "ok" or "error" (both the same way)
FormCase = tuple[str, torch.nn.Module, Callable[[], tuple[Any, ...]], Callable[[], Any], str]


def form_params(cases: list[FormCase], only: tuple[str, ...] | None = None) -> list[Any]:
    """``cases`` (those named in ``only``, if given, in table order) as pytest params, each
    with its id."""
    return [pytest.param(c, id=c[0]) for c in cases if only is None or c[0] in only]


def check_form(case: FormCase, *, strict: bool = False) -> None:
    """Export one table row both ways (:func:`compare`) and check its expected verdict."""
    _, model, args, shapes, expect = case
    _, s = compare(model, args(), shapes(), strict=strict)
    assert s.ok == (expect == "ok"), repr(s.error)
