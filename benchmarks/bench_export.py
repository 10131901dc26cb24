"""Export-time benchmark: vanilla ``torch.export.export`` vs symshape's ``export`` on the zoo.

Usage::

    python benchmarks/bench_export.py                 # --repeat 5, all zoo models
    python benchmarks/bench_export.py --quick         # --repeat 2, no per-model warm-up
    python benchmarks/bench_export.py --repeat 9 --models transformer,kv_decoder --strict
    python benchmarks/bench_export.py --profile transformer   # cProfile symshape's export
    python benchmarks/bench_export.py --out bench_export.json

Each model is exported with both exporters in the same process, interleaved (the order
alternates every repeat) with a fresh model instance and fresh ``Dim`` objects per run;
a warm-up round (untimed) comes first because the first torch.export in a process is
slow. Reported: the median wall time of each, their ratio, symshape's decisions
(asked/routed, with the solver stage that settled them) and the solver's own time. The
target is a median ratio (over models) <= 1.10.

Measured 2026-12-03 (torch 2.14.1, ``--repeat 7 --models mlp,convnet,transformer,kv_decoder,nested``,
one thread, the 2-core machine otherwise quiet): mlp 0.93, convnet 1.00, transformer
(``nn.TransformerEncoderLayer``) 1.01, kv_decoder 1.38 (min-time ratio 1.19; single runs of it
range 0.91-1.37 on this machine), nested 1.21 (min 1.09); median 1.014. Every one of them is one
trace (``ep.symshape.stats["trace_reasons"]``), with 6-13 ms in the solver.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import export  # noqa: E402
from benchmarks.zoo import ZOO, ZooEntry  # noqa: E402

TARGET = 1.10


def _vanilla(e: ZooEntry, strict: bool) -> Any:
    model, args, kwargs = e.build()
    return torch.export.export(model, args, kwargs, dynamic_shapes=e.dynamic_shapes(), strict=strict)


def _symshape(e: ZooEntry, strict: bool) -> Any:
    model, args, kwargs = e.build()
    return export.export(model, args, kwargs, dynamic_shapes=e.dynamic_shapes(), strict=strict)


RUNNERS = {"vanilla": _vanilla, "symshape": _symshape}


def _timed(fn: Any, e: ZooEntry, strict: bool) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    out = fn(e, strict)
    return time.perf_counter() - start, out


def bench(entries: list[ZooEntry], repeat: int, strict: bool, warmup: bool) -> list[dict[str, Any]]:
    if warmup:
        for e in entries:
            for fn in RUNNERS.values():
                fn(e, strict)
    else:  # at least the process-wide first-export cost
        for fn in RUNNERS.values():
            fn(entries[0], strict)
    rows = []
    for e in entries:
        times: dict[str, list[float]] = {k: [] for k in RUNNERS}
        last = None
        for r in range(repeat):
            order = list(RUNNERS) if r % 2 == 0 else list(RUNNERS)[::-1]
            for kind in order:
                t, ep = _timed(RUNNERS[kind], e, strict)
                times[kind].append(t)
                if kind == "symshape":
                    last = ep
        assert last is not None
        stats = dict(last.symshape.stats)
        v, s = statistics.median(times["vanilla"]), statistics.median(times["symshape"])
        rows.append({"model": e.name, "vanilla_s": v, "symshape_s": s, "ratio": s / v,
                     "min_ratio": min(times["symshape"]) / min(times["vanilla"]),
                     "asked": stats["asked"], "routed": stats["routed"], "to_torch": stats["to_torch"],
                     "solver_s": stats["solver_seconds"], "stages": stats["stages"],
                     "times": times})
        print(f"  {e.name}: vanilla {v:.3f}s symshape {s:.3f}s", file=sys.stderr, flush=True)
    return rows


def _stages(stages: dict[str, int]) -> str:
    return " ".join(f"{k}:{v}" for k, v in sorted(stages.items(), key=lambda kv: -kv[1]))


def table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'model':<18}{'vanilla s':>10}{'symshape s':>11}{'ratio':>7}{'(min)':>7}{'extra ms':>9}"
            f"{'solver s':>9}  {'asked/routed':<13}stages")
    lines = [head, "-" * len(head)]
    for r in rows:
        extra = 1000 * (r["symshape_s"] - r["vanilla_s"])
        lines.append(f"{r['model']:<18}{r['vanilla_s']:>10.3f}{r['symshape_s']:>11.3f}{r['ratio']:>7.2f}"
                     f"{r['min_ratio']:>7.2f}{extra:>9.1f}"
                     f"{r['solver_s']:>9.3f}  {str(r['asked']) + '/' + str(r['routed']):<13}{_stages(r['stages'])}")
    return "\n".join(lines)


def profile(e: ZooEntry, strict: bool, top: int) -> str:
    """cProfile one symshape export (after a warm-up); hot spots in export/, solver/, shapes/."""
    _symshape(e, strict)
    _vanilla(e, strict)
    prof = cProfile.Profile()
    prof.enable()
    _symshape(e, strict)
    prof.disable()
    out = io.StringIO()
    st = pstats.Stats(prof, stream=out)
    st.sort_stats("cumulative").print_stats(r"(export|solver|shapes)/[a-z_]+\.py", top)
    st.sort_stats("tottime").print_stats(r"(export|solver|shapes)/[a-z_]+\.py", top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=None, help="timed runs per exporter and model (default 5, quick 2)")
    p.add_argument("--quick", action="store_true", help="fewer repeats, no per-model warm-up")
    p.add_argument("--strict", action="store_true", help="export with strict=True (zoo models that support it)")
    p.add_argument("--models", default="", help="comma-separated zoo names (default: all)")
    p.add_argument("--profile", metavar="MODEL", help="cProfile symshape's export of MODEL instead of benchmarking")
    p.add_argument("--top", type=int, default=25, help="rows of the profile to show")
    p.add_argument("--out", help="write the results as JSON")
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    names = [n for n in a.models.split(",") if n]
    entries = [e for e in ZOO if (not names or e.name in names) and (e.strict or not a.strict)]
    if not entries:
        p.error(f"no zoo model matches {a.models!r}; known: {', '.join(e.name for e in ZOO)}")
    if a.profile:
        e = next((x for x in ZOO if x.name == a.profile), None)
        if e is None:
            p.error(f"unknown model {a.profile!r}")
        print(profile(e, a.strict, a.top))
        return 0
    repeat = a.repeat if a.repeat is not None else (2 if a.quick else 5)
    if repeat < 1:
        p.error("--repeat must be >= 1")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, repeat {repeat}, "
          f"{'strict' if a.strict else 'non-strict'}", flush=True)
    rows = bench(entries, repeat, a.strict, warmup=not a.quick)
    print(table(rows))
    med = statistics.median(r["ratio"] for r in rows)
    verdict = "PASS" if med <= TARGET else "MISS"
    print(f"\nmedian ratio symshape/vanilla: {med:.3f} (target <= {TARGET:.2f}): {verdict}"
          f"  [median of min-time ratios: {statistics.median(r['min_ratio'] for r in rows):.3f}]")
    if a.out:
        Path(a.out).write_text(json.dumps({"repeat": repeat, "strict": a.strict, "rows": rows,
                                           "median_ratio": med, "verdict": verdict}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
