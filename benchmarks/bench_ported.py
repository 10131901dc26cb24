"""PyTorch's own dynamic-shape export tests, ported: torch.export and symshape side by side.

Each case (``benchmarks/ported_cases/*.py``, a ``CASES`` list of :class:`Ported`) is one test
of PyTorch's suite (``source`` names it) reduced to its model, example, spec and the inputs it
runs. Both exporters export it with the same spec (symshape with its defaults), then run both
programs and eager on the case's own inputs and on sizes around both ranges (each dynamic
dim's equality class resized together). A case is scored:

  same     both export and agree with eager wherever they accept, or both refuse
  better   symshape exports (right wherever it accepts) where torch refuses, or admits sizes
           torch's program refuses and eager handles
  WORSE    symshape refuses where torch exports, or refuses a size torch's program runs right
           (as eager) and the user's spec admits (an input outside a declared ``Dim(min=,
           max=)`` is the user's own bound: refusing it is noted, not worse), or refuses with
           something other than an ``export.ExportError``
  WORSE0   WORSE only at size 0 (symshape's programs start at 1 unless evidence shows size 0 right)
  WRONG    a program accepts an input and differs from eager (either side; torch's is noted)

The cases: 314 rows from 191 tests (test/export/test_export.py, test/dynamo/test_export.py,
test/export/test_draft_export.py of pytorch/pytorch), ported by hand: each row names its test.

Measured 2026-12-03 (torch 2.14.1): before the fixes they prompted, same 198, better 19, WORSE
13, WORSE0 83, WRONG 1 (aliased example inputs, torch as wrong); after: same 223, better 24,
WORSE 3, WORSE0 64, WRONG 0. Later that day: same 227, better 24, **WORSE 0**, WORSE0 63, WRONG
0. test_export_max_onnx_reported (strict, Dim.DYNAMIC) had kept y's >= 2 floor: at y's size 1
the boundary graph dropped a slice that became whole (``Max(x, 1)`` is x) and read copy_'s
result where the general graph read its input; the 0/1 evidence now reads both as the same
values, and y admits 1 and 0 (x's size 0 stays refused: WORSE0). The two
test_disable_forced_specializations rows ran an input below the user's own ``Dim(min=2)``:
refusing it is the spec (noted on the row, not scored worse). WORSE0 are named Dims (torch's
default min 0, admitted by torch unchecked), which symshape starts at 1: only Dim.AUTO /
Dim.DYNAMIC dims are re-traced at 0.

Usage: python benchmarks/bench_ported.py [--case ID ...] [--verbose]
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import pkgutil
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

import torch  # noqa: E402

import export  # noqa: E402
from export.diagnose.probe import enlarged_inputs  # noqa: E402
from export.spec.inputs import Inputs  # noqa: E402
from shapes.spec import InputDim  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Ported:
    """One ported test: ``model()`` and ``args()`` build fresh objects; ``shapes()`` the
    ``dynamic_shapes`` (None: static); ``runs`` more argument tuples the test runs the program
    on; ``kwargs`` more keyword arguments of both exports (e.g. ``strict=True``)."""

    id: str
    source: str
    model: Callable[[], torch.nn.Module]
    args: Callable[[], tuple[Any, ...]]
    shapes: Callable[[], Any] = lambda: None
    runs: Callable[[], list[tuple[Any, ...]]] = lambda: []
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    note: str = ""


@dataclasses.dataclass
class Row:
    id: str
    score: str
    torch: str
    symshape: str
    detail: str = ""


def _export(fn: Callable[..., Any], case: Ported) -> tuple[Any, Optional[BaseException]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(case.model(), case.args(), dynamic_shapes=case.shapes(), **case.kwargs), None
        except Exception as e:  # noqa: BLE001 - scored
            return None, e


def _same(a: Any, b: Any) -> bool:
    fa, _ = torch.utils._pytree.tree_flatten(a)
    fb, _ = torch.utils._pytree.tree_flatten(b)
    return len(fa) == len(fb) and all(
        (x.shape == y.shape and torch.allclose(x, y, equal_nan=True)) if isinstance(x, torch.Tensor) else x == y
        for x, y in zip(fa, fb))


def _fresh(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return torch.utils._pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, args)


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return True, fn(*args)
        except Exception:  # noqa: BLE001 - refused
            return False, None


def _probe_args(case: Ported, s_ep: Any) -> list[tuple[str, tuple[Any, ...]]]:
    args = case.args()
    model = case.model()
    inputs = Inputs.bind(model, args, None)
    out = [(f"run {i}", a) for i, a in enumerate(case.runs())]
    sym = getattr(s_ep, "symshape", None)
    if sym is None:
        return out
    classes = [set(c) for c in sym.classes]
    by_name = {str(InputDim(leaf.name, i)): InputDim(leaf.name, i)
               for leaf in inputs.tensors for i in range(leaf.value.dim())}
    seen: list[set[str]] = []
    for name, (lo, hi) in dict(sym.ranges).items():
        group = next((c for c in classes if name in c), {name})
        if any(name in g for g in seen):
            continue
        seen.append(group)
        sizes = {0, 1, 2, 3, 5, 8, 17}
        for b in (lo, hi):
            if b is not None:
                sizes |= {b - 1, b, b + 1}
        for n in sorted(x for x in sizes if 0 <= x <= 64):
            dims = {by_name[d]: n for d in group if d in by_name}
            if dims:
                new, _ = enlarged_inputs(inputs, args, None, dims)
                out.append((f"{sorted(group)}={n}", new))
    return out


def _declared_bounds(case: Ported) -> list[tuple[int, int, int, int]]:
    """(argument position, dim, min, max) of every named ``Dim`` in the case's spec on a
    top-level tensor argument."""
    shapes = case.shapes()
    if not isinstance(shapes, (dict, list, tuple)):
        return []  # none, or a ShapesCollection (keyed by tensors): no bounds read
    if isinstance(shapes, dict):
        params = inspect.signature(case.model().forward).parameters
        per_arg = [shapes.get(n) for n in params]
    else:
        per_arg = list(shapes)
    out = []
    for pos, spec in enumerate(per_arg):
        items = spec.items() if isinstance(spec, dict) else enumerate(spec) if isinstance(spec, (list, tuple)) else ()
        for i, d in items:
            lo, hi = getattr(d, "min", None), getattr(d, "max", None)
            if isinstance(i, int) and isinstance(lo, int):
                out.append((pos, i, lo, hi if isinstance(hi, int) else sys.maxsize))
    return out


def _beyond_spec(bounds: list[tuple[int, int, int, int]], args: tuple[Any, ...]) -> bool:
    """Whether an input has a dim outside the user's declared ``Dim(min=, max=)``."""
    return any(pos < len(args) and isinstance(args[pos], torch.Tensor) and i < args[pos].dim()
               and not lo <= args[pos].shape[i] <= hi for pos, i, lo, hi in bounds)


def judge(case: Ported) -> Row:
    t_ep, t_err = _export(torch.export.export, case)
    s_ep, s_err = _export(export.export, case)
    t_word = "ok" if t_err is None else f"{type(t_err).__name__}"
    s_word = "ok" if s_err is None else f"{type(s_err).__name__}"
    if s_err is not None and not isinstance(s_err, export.ExportError):
        tb = "".join(traceback.format_exception_only(type(s_err), s_err)).strip()
        return Row(case.id, "WORSE", t_word, s_word, f"not an ExportError: {tb[:300]}")
    if t_err is None and s_err is not None:
        return Row(case.id, "WORSE", t_word, s_word, f"symshape refuses: {str(s_err).splitlines()[0][:200]}")
    if t_err is not None and s_err is not None:
        return Row(case.id, "same", t_word, s_word)
    worse, better, wrong, beyond = [], [], [], []
    bounds = _declared_bounds(case)
    for what, a in _probe_args(case, s_ep):
        e_ok, e_out = _call(case.model(), _fresh(a))  # fresh model and inputs per call: models may mutate either
        s_ok, s_out = _call(s_ep.module(), _fresh(a))
        t_ok, t_out = _call(t_ep.module(), _fresh(a)) if t_ep is not None else (False, None)
        if s_ok and not (e_ok and _same(s_out, e_out)):
            wrong.append(f"symshape {what}")
        if t_ok and not (e_ok and _same(t_out, e_out)):
            wrong.append(f"torch {what}")
        t_right = t_ok and e_ok and _same(t_out, e_out)
        if t_right and not s_ok:
            (beyond if _beyond_spec(bounds, a) else worse).append(what)
        if s_ok and e_ok and not t_right:
            better.append(what)
    if any(w.startswith("symshape") for w in wrong):
        return Row(case.id, "WRONG", t_word, s_word, "; ".join(wrong))
    if worse:
        torch_wrong = [w for w in wrong if w.startswith("torch")]
        only_zero = all(w.endswith("=0") for w in worse)
        return Row(case.id, "WORSE0" if only_zero else "WORSE", t_word, s_word,
                   "refuses what torch runs right: " + ", ".join(worse) + (f"; {'; '.join(torch_wrong)}" if torch_wrong else ""))
    note = f"; refuses inputs outside the declared Dim ranges, which torch runs: {', '.join(beyond)}" if beyond else ""
    if t_err is not None or better:
        return Row(case.id, "better", t_word, s_word, ", ".join(better) + (f"; {'; '.join(wrong)}" if wrong else "") + note)
    return Row(case.id, "same", t_word, s_word, "; ".join(wrong) + note)


def all_cases() -> list[Ported]:
    import benchmarks.ported_cases as pkg
    out: list[Ported] = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        try:
            out += importlib.import_module(f"benchmarks.ported_cases.{info.name}").CASES
        except Exception as e:  # noqa: BLE001 - one broken case file is reported, the others run
            print(f"HARNESS {info.name}: cannot import: {e!r:.200}", flush=True)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", action="append", default=[], help="run only this case id (repeatable)")
    p.add_argument("--verbose", action="store_true", help="print the detail of every row")
    ns = p.parse_args()
    rows = []
    for case in all_cases():
        if ns.case and case.id not in ns.case:
            continue
        try:
            row = judge(case)
        except Exception as e:  # noqa: BLE001 - a harness error is a row too
            row = Row(case.id, "HARNESS", "?", "?", repr(e)[:300])
        rows.append(row)
        if ns.verbose or row.score in ("WORSE", "WORSE0", "WRONG", "HARNESS"):
            print(f"{row.score:7} {row.id:55} torch={row.torch:28} symshape={row.symshape:28} {row.detail}", flush=True)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.score] = counts.get(r.score, 0) + 1
    print(f"torch {torch.__version__}: {len(rows)} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
