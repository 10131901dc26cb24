"""Where the program runs: AOTInductor beside ``ep.module()``, symshape's programs beside torch's.

Usage::

    python benchmarks/bench_deploy.py              # both parts
    python benchmarks/bench_deploy.py --part refusals
    python benchmarks/bench_deploy.py --part cost --calls 200

**refusals** (issue 33's measurement, side by side in one run): each model of
``tests/support/deploy_models.py`` exported by torch (``torch.export.export``, the same spec)
and by symshape, each program compiled by the real AOTInductor, then run on the model's grid
of sizes. Per exporter: the calls its ``ep.module()`` refuses, how many of those its AOTI
package runs anyway (torch's loader for torch's package; symshape's loader
``export.deploy.aoti_load_package`` for symshape's, and torch's loader on symshape's package
too), results that differ from ``ep.module()``'s, and refusals in words.

**cost** (what the checks cost at run time): on zoo models, the median time of a call of
``ep.module()`` with symshape's asserts and of the same graph without them, of
``contract.check`` alone, and of an AOTI package through symshape's loader (the contract
checked first) against torch's loader (no check).

Measured 2026-12-07 (torch 2.15.0, 2-core machine with other work running, one thread).

refusals -- calls ``ep.module()`` refuses, and how many of them each AOTI package runs anyway:

=============  ===============  =====================  ======================  =================
model          refused calls    symshape, its loader   symshape, torch's       torch's program,
                                                       loader                  torch's loader
=============  ===============  =====================  ======================  =================
cat64          79               0                      0                       79 (of 79)
groups AUTO    36 (torch: 45)   0                      0                       45 (of 45)
product        560              0                      0                       560
kv step        4076             0                      4076                    4076
prefix         550              0                      300                     575
tiny encoder   1284             0                      1068                    1290
one branch     1                0                      0                       0 (batch 1 wrong)
doubled        77               0                      77                      77
=============  ===============  =====================  ======================  =================

0 results differing from ``ep.module()``'s, 0 refusals of what ``ep.module()`` runs, every
refusal through symshape's loader in the contract's words. Under torch's own loader a symshape
package still runs what the graph cannot assert: where torch gave two dims one symbol (kv step,
doubled, part of prefix and tiny encoder) the relation between them is no expression of the
graph's symbols. That gap is structural; the contract, checked by symshape's loader (or by
AOTInductor's ``AOTI_RUNTIME_CHECK_INPUTS``), closes it.

cost -- ``ep.module()`` with the asserts 1.0-1.2x the same graph without them (TinyEncoder
+0.04 ms); ``contract.check`` 6-18 us per call; an AOTI call through symshape's loader against
torch's: TinyEncoder 0.044 vs 0.028 ms, GPT-2 1.0x, a Llama KV-cache step 1.14x.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

import torch  # noqa: E402

import export  # noqa: E402
from benchmarks import hf_zoo  # noqa: E402
from deploy_models import CASES, case, first, grid, outcome  # noqa: E402
from export.deploy import aoti_compile_and_package, aoti_load_package  # noqa: E402


@contextlib.contextmanager
def _quiet() -> Any:
    """AOTInductor's C++ checks print ``Error: ...`` on stderr for every refused call."""
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


BARE = "symshape, torch's loader"
CHECKED = "AOTI, symshape's loader"
PLAIN = "AOTI, torch's loader"


def _agree(a: Any, b: Any) -> bool:
    x, y = first(a), first(b)
    return x.shape == y.shape and torch.allclose(x, y, atol=1e-5, rtol=1e-4)


def _score(model: Any, module: Any, compiled: Any, calls: list[tuple[torch.Tensor, ...]]) -> dict[str, int]:
    """Per call of ``calls``: whether ``module`` (``ep.module()``) refuses it, whether the
    ``compiled`` consumer runs it anyway, differs from ``module``, refuses what it runs, says
    why in words, and whether what the consumer returns differs from eager (``wrong``)."""
    out = {"refused": 0, "ran_refused": 0, "differ": 0, "refused_ran": 0, "in_words": 0, "wrong": 0}
    for call in calls:
        runs, want = outcome(module, call)
        with _quiet():
            c_runs, got = outcome(compiled, call)
        if c_runs:
            eager_runs, truth = outcome(model, call)
            out["wrong"] += (not eager_runs) or not _agree(truth, got)
        if not runs:
            out["refused"] += 1
            out["ran_refused"] += c_runs
            out["in_words"] += (not c_runs) and isinstance(got, export.RefusedInputError)
        elif not c_runs:
            out["refused_ran"] += 1
        elif not _agree(want, got):
            out["differ"] += 1
    return out


def refusals(folder: Path) -> list[dict[str, Any]]:
    rows = []
    for c in CASES:
        model, args, spec = case(c.name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = export.export(model, args, dynamic_shapes=spec)
            try:
                theirs: Any = torch.export.export(model, args, dynamic_shapes=case(c.name)[2])
            except Exception as e:  # noqa: BLE001 - torch's export may fail where symshape's succeeds
                theirs = f"{type(e).__name__}"
        calls = grid(ours, args, c.sizes)
        row: dict[str, Any] = {"model": c.name, "calls": len(calls)}
        path = aoti_compile_and_package(ours, folder / f"ours_{len(rows)}.pt2")
        row["symshape"] = _score(model, ours.module(), aoti_load_package(path), calls)
        row[BARE] = _score(model, ours.module(), torch._inductor.aoti_load_package(path), calls)
        if isinstance(theirs, str):
            row["torch"] = theirs
        else:
            mine = torch._inductor.aoti_compile_and_package(theirs, package_path=str(folder / f"torch_{len(rows)}.pt2"))
            row["torch"] = _score(model, theirs.module(), torch._inductor.aoti_load_package(mine), calls)
        rows.append(row)
        print(_line(row), flush=True)
    return rows


def _line(row: dict[str, Any]) -> str:
    def part(v: Any) -> str:
        if isinstance(v, str):
            return f"export fails ({v})"
        return f"refused {v['refused']}, AOTI ran {v['ran_refused']} of them, differ {v['differ']}, " \
               f"refused what runs {v['refused_ran']}, in words {v['in_words']}, wrong vs eager {v['wrong']}"
    bare = row[BARE]
    return (f"{row['model']:<13} {row['calls']:>5} calls | symshape: {part(row['symshape'])} | symshape with torch's "
            f"loader: {part(bare)} | torch: {part(row['torch'])}")


def _median(fn: Any, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _without_asserts(ep: Any) -> Any:
    """``ep``'s graph without symshape's asserts (a copy), as a plain ExportedProgram's module."""
    bare = copy.deepcopy(ep)
    graph = bare.graph_module.graph
    for node in list(graph.nodes):
        if node.target is torch.ops.aten._assert_scalar.default and str(node.args[1]).startswith("symshape: "):
            graph.erase_node(node)
    graph.eliminate_dead_code()
    bare.graph_module.recompile()
    return torch.export.ExportedProgram.module(bare)


def cost(folder: Path, calls: int) -> list[dict[str, Any]]:
    models: list[tuple[str, Any, tuple[Any, ...], dict[str, Any]]] = []
    model, args, spec = case("tiny encoder")
    models.append(("tiny encoder", model, args, {"dynamic_shapes": spec}))
    for name in ("gpt2", "llama_kv"):
        m = hf_zoo.MODELS[name]
        a, k = m.inputs(hf_zoo.example_sizes(m, "shared"))
        models.append((name, m.build(), (a, k), {"dynamic_shapes": hf_zoo.spec(m, "shared")}))
    rows = []
    for name, model, args, options in models:
        call_args, call_kwargs = (args, {}) if name == "tiny encoder" else args
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ep = export.export(model, call_args, call_kwargs, **options)
        module, bare = ep.module(), _without_asserts(ep)
        contract = ep.symshape.contract
        path = aoti_compile_and_package(ep, folder / f"cost_{len(rows)}.pt2")
        mine, torchs = aoti_load_package(path), torch._inductor.aoti_load_package(path)
        asserts = sum(1 for n in ep.graph.nodes if n.target is torch.ops.aten._assert_scalar.default)
        with torch.no_grad():
            row = {
                "model": name, "asserts": asserts, "conditions": len(contract.conditions),
                "module": _median(lambda: module(*call_args, **call_kwargs), calls),
                "module without asserts": _median(lambda: bare(*call_args, **call_kwargs), calls),
                "contract.check": _median(lambda: contract.check(*call_args, **call_kwargs), calls),
                CHECKED: _median(lambda: mine(*call_args, **call_kwargs), calls),
                PLAIN: _median(lambda: torchs(*call_args, **call_kwargs), calls),
            }
        rows.append(row)
        checked, plain = row[CHECKED], row[PLAIN]
        print(f"{name:<13} {asserts} asserts, {row['conditions']} conditions | ep.module() "
              f"{row['module'] * 1e3:.3f} ms vs {row['module without asserts'] * 1e3:.3f} ms without the asserts "
              f"({row['module'] / row['module without asserts']:.3f}x) | contract.check {row['contract.check'] * 1e6:.0f} us"
              f" | AOTI {checked * 1e3:.3f} ms checked vs {plain * 1e3:.3f} ms bare ({checked / plain:.3f}x)", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--part", choices=("refusals", "cost", "both"), default="both")
    p.add_argument("--calls", type=int, default=100, help="calls per timing (cost part)")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        if a.part in ("refusals", "both"):
            refusals(Path(tmp))
        if a.part in ("cost", "both"):
            cost(Path(tmp), a.calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())

