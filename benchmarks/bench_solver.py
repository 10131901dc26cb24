"""Solver throughput benchmark: synthetic guard streams of growing size and the real torch streams.

Usage::

    python benchmarks/bench_solver.py            # full sizes (up to 10^5 guards, 10^3 symbols)
    python benchmarks/bench_solver.py --quick    # a few seconds
    python benchmarks/bench_solver.py --out bench.json --seed 3

For each stream size (N guards over M symbols) it reports

* ``guard/s``: end-to-end ``Solver.guard(rel, hint)`` throughput over the whole stream
  (median of ``--repeat`` fresh replays; symbol declaration is not timed);
* ``decide/s`` by stage: each guard's relation is first passed to ``Solver.decide`` (timed
  alone, attributed to the stage that ``Solver.stats`` credits) and then to ``guard``
  (untimed, a cache hit), so cheap-stage throughput is measured without the guard's
  bookkeeping; the same per-call timing is also done for ``guard`` itself;
* Z3: the wall time of every ``Smt.check`` (wrapped) and of the ``decide`` calls Z3 settled;
* the time growth when the stream grows 10x at the same number of symbols;
* ``tracemalloc`` peak of one replay (declaration + stream).

Targets: >= 100,000 decisions/s on the cheap stages; 10x more guards costs <= 12x time;
median Z3 query <= 5 ms. Sympy relations are built before any timing.

Two scale sections (``--scale``, also run by default; ``--no-scale`` skips them):

* union-find: per-operation cost of ``link`` / ``find`` / ``mark+undo`` at 10^3, 10^4, 10^5
  links (chains, reverse chains, stars, balanced merges); flat means the ratio stays near 1;
  ``find`` also as a ratio to a plain dict lookup of the same keys (the machine's own growth),
  with the forest depth and the first (compressing) pass;
* a large problem (``streams.large_problem``): 10,000 symbols + 20,000 mixed facts (chains,
  stars, derived dims, inequalities) loaded with ``assume`` (with and without example values),
  then decisions/s and ``bounds`` time on it, each phase under a wall-clock cap (reported).

  Figures (the same loaded 2-core machine, one run each, wall time; ratios matter):
  before the feasible point (solver/state/point.py), without example values only 8,248 of the
  20,000 facts loaded in the 60 s cap (136/s) and decisions ran at 4/s (49 of 111 to Z3);
  with it, 20,000 facts load in 11.8 s (1,688/s; 9.8 s with example values) with no Z3
  query, decisions run at 112/s (153/s with example values; the same stages decide), and
  ``bounds`` on the large component takes 80 ms per call with or without example values
  (was 33 s for one call with them: the full solver; a quiet machine measured 559-836 ms).
  Later (issue 11, wall time, one run each, load 0.2-2): with example values 20,000 facts in
  4.0 s, 1,005 decisions/s, bounds 58 ms; without, 6.0 s, 943 decisions/s, bounds 70 ms
  (quiet machine, before the large-problem walk stage); ``bench_rate.py [--no-hints]`` reports
  the CPU-time rates per stage (1,000-1,420/s and 1,200-1,460/s with the walk stage).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.streams import (  # noqa: E402
    CHEAP_STAGES,
    large_problem,
    REAL_STREAMS_PATH,
    SLOW_STAGES,
    STAGES,
    GuardStream,
    declare,
    load_real_streams,
    replay_real,
    synthetic_stream,
)
from shapes import int_symbol  # noqa: E402
from solver import Solver  # noqa: E402
from solver.kernel.union_find import UnionFind  # noqa: E402

FULL_SIZES = [(100, 10), (1_000, 10), (1_000, 100), (10_000, 100), (10_000, 1_000), (100_000, 1_000)]
QUICK_SIZES = [(100, 10), (1_000, 10), (1_000, 100), (10_000, 100)]

TARGET_CHEAP_RATE = 100_000.0
TARGET_GROWTH = 12.0
TARGET_Z3_MEDIAN_MS = 5.0


def _stage_of(stats: Counter, before: dict[str, int]) -> str:
    for k in STAGES:
        if stats[k] != before.get(k, 0):
            return k
    return "?"


def _timed_check(smt, sink: list[float]):
    """Wrap ``smt.check`` (instance attribute) so each Z3 query's wall time lands in ``sink``."""
    inner = smt.check

    def check(extra=()):
        t0 = time.perf_counter()
        try:
            return inner(extra)
        finally:
            sink.append(time.perf_counter() - t0)

    smt.check = check


def run_total(stream: GuardStream) -> tuple[float, float, Solver]:
    """(declare seconds, guard-loop seconds, solver) for one fresh replay."""
    gc.collect()
    s = Solver()
    t0 = time.perf_counter()
    declare(s, stream)
    t1 = time.perf_counter()
    guard = s.guard
    for rel, hint in stream.guards:
        guard(rel, hint)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, s


def run_per_call(stream: GuardStream, mode: str) -> dict:
    """Per-call timing attributed to stages; ``mode`` is ``decide`` or ``guard`` (see module doc)."""
    gc.collect()
    s = Solver()
    declare(s, stream)
    z3_times: list[float] = []
    _timed_check(s._smt, z3_times)  # noqa: SLF001 - benchmark introspection
    per_stage: dict[str, list[float]] = {k: [] for k in STAGES}
    stats = s.stats
    perf = time.perf_counter
    for rel, hint in stream.guards:
        before = dict(stats)
        if mode == "decide":
            t0 = perf()
            s.decide(rel)
            dt = perf() - t0
            stage = _stage_of(stats, before)
            s.guard(rel, hint)
        else:
            t0 = perf()
            s.guard(rel, hint)
            dt = perf() - t0
            stage = _stage_of(stats, before)
        per_stage.setdefault(stage, []).append(dt)
    return {"per_stage": per_stage, "z3_query_times": z3_times, "z3_queries": s._smt.queries,  # noqa: SLF001
            "facts": len(s.facts)}


def run_memory(stream: GuardStream) -> int:
    gc.collect()
    tracemalloc.start()
    s = Solver()
    declare(s, stream)
    for rel, hint in stream.guards:
        s.guard(rel, hint)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del s
    return peak


def _rate(n: int, secs: float) -> float:
    return n / secs if secs > 0 else float("inf")


def bench_size(n: int, m: int, seed: int, repeat: int, budget: float) -> dict:
    t = time.perf_counter()
    stream = synthetic_stream(n, m, seed=seed)
    build = time.perf_counter() - t
    decl_times, loop_times = [], []
    stats: Counter = Counter()
    facts = 0
    for r in range(repeat):
        d, l, s = run_total(stream)
        decl_times.append(d)
        loop_times.append(l)
        stats, facts = Counter(s.stats), len(s.facts)
        if r == 0 and l * repeat > budget:  # keep the full run inside the budget
            break
    per_call_runs = len(loop_times)  # as many as the budget allowed for the plain replays
    decs = [run_per_call(stream, "decide") for _ in range(per_call_runs)]
    guas = [run_per_call(stream, "guard") for _ in range(per_call_runs)]
    dec = decs[0]
    peak = run_memory(stream)

    def stage_table(runs: list[dict]) -> dict:
        """Per stage: count, median over runs of the summed seconds, rate, median call time."""
        out = {}
        for k in runs[0]["per_stage"]:
            ts = runs[0]["per_stage"][k]
            if ts:
                secs = statistics.median(sum(r["per_stage"][k]) for r in runs)
                out[k] = {"n": len(ts), "seconds": secs, "per_s": _rate(len(ts), secs),
                          "median_us": statistics.median(x for r in runs for x in r["per_stage"][k]) * 1e6}
        for name, group in (("_cheap", CHEAP_STAGES), ("_slow", SLOW_STAGES)):
            n_calls = sum(len(runs[0]["per_stage"].get(k, [])) for k in group)
            secs = statistics.median(sum(x for k in group for x in r["per_stage"].get(k, [])) for r in runs)
            out[name] = {"n": n_calls, "seconds": secs, "per_s": _rate(n_calls, secs) if n_calls else None}
        return out

    loop = statistics.median(loop_times)
    return {
        "n": n, "m": m, "build_s": build, "distinct": stream.distinct(), "facts": facts,
        "declare_s": statistics.median(decl_times), "loop_s": loop, "loop_runs": loop_times,
        "guard_per_s": _rate(n, loop), "stats": dict(stats),
        "cheap_frac": sum(stats[k] for k in CHEAP_STAGES) / max(1, sum(stats[k] for k in STAGES)),
        "decide_stages": stage_table(decs), "guard_stages": stage_table(guas), "per_call_runs": per_call_runs,
        "z3_query_ms": [x * 1e3 for d in decs for x in d["z3_query_times"]],
        "z3_decide_ms": [x * 1e3 for d in decs for x in d["per_stage"].get("z3", [])],
        "z3_queries": dec["z3_queries"], "peak_mib": peak / 2**20,
    }


def bench_real(path: Path, repeat: int) -> list[dict]:
    streams = load_real_streams(path)
    out = []
    for model, rows in streams.items():
        reps = [replay_real(model, rows) for _ in range(repeat)]
        d = reps[0].as_dict()
        d["seconds"] = statistics.median(r.seconds for r in reps)
        d["per_s"] = _rate(d["decisions"], d["seconds"])
        nonconst = replay_real(model, rows, skip_constants=True).as_dict()
        d["nonconstant"] = {k: nonconst[k] for k in ("decisions", "agree", "stages", "z3_queries", "seconds")}
        d["declared_ranges_agree"] = replay_real(model, rows, ranges="declared").agree
        out.append(d)
    return out


def _fmt_rate(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if x != float("inf") else "inf"


def report(results: list[dict], real: list[dict], growth: list[dict]) -> dict:
    print("\n== synthetic streams: end-to-end guard() ==")
    hdr = f"{'N':>7} {'M':>5} {'distinct':>8} {'facts':>6} {'declare':>8} {'loop s':>8} {'guard/s':>9} {'cheap%':>7} {'z3q':>5} {'peakMiB':>8}"
    print(hdr)
    for r in results:
        print(f"{r['n']:>7} {r['m']:>5} {r['distinct']:>8} {r['facts']:>6} {r['declare_s']:>8.3f} {r['loop_s']:>8.3f} "
              f"{_fmt_rate(r['guard_per_s']):>9} {100 * r['cheap_frac']:>6.1f}% {r['z3_queries']:>5} {r['peak_mib']:>8.1f}")

    print("\n== stage counts (guard replay) ==")
    print(f"{'N':>7} {'M':>5} " + " ".join(f"{k[:10]:>10}" for k in STAGES))
    for r in results:
        print(f"{r['n']:>7} {r['m']:>5} " + " ".join(f"{r['stats'].get(k, 0):>10}" for k in STAGES))

    for key, title in (("decide_stages", "decide() per call, by stage: decisions/s (median us)"),
                       ("guard_stages", "guard() per call, by stage: guards/s (median us)")):
        print(f"\n== {title} ==")
        cols = [k for k in STAGES if any(k in r[key] for r in results)]
        print(f"{'N':>7} {'M':>5} {'CHEAP/s':>10} {'SLOW/s':>8} " + " ".join(f"{k[:16]:>17}" for k in cols))
        for r in results:
            t = r[key]
            cells = []
            for k in cols:
                c = t.get(k)
                cells.append(f"{_fmt_rate(c['per_s'])} ({c['median_us']:.0f})" if c else "-")
            print(f"{r['n']:>7} {r['m']:>5} {_fmt_rate(t['_cheap']['per_s']):>10} {_fmt_rate(t['_slow']['per_s']):>8} "
                  + " ".join(f"{c:>17}" for c in cells))

    print("\n== growth: time when the stream grows 10x (same M) ==")
    for g in growth:
        print(f"  M={g['m']:>5}: N {g['n0']:>6} -> {g['n1']:>6}: guard loop {g['t0']:.3f}s -> {g['t1']:.3f}s = {g['factor']:.2f}x")

    z3_all = [x for r in results for x in r["z3_query_ms"]]
    z3_dec = [x for r in results for x in r["z3_decide_ms"]]
    print("\n== Z3 (Smt.check wall time, pooled over the per-call decide() runs) ==")
    for r in results:
        q, dq = r["z3_query_ms"], r["z3_decide_ms"]
        if q:
            print(f"  N={r['n']:>6} M={r['m']:>5}: {len(q)} queries, median {statistics.median(q):.2f} ms, "
                  f"p90 {sorted(q)[int(0.9 * (len(q) - 1))]:.2f} ms, max {max(q):.2f} ms; "
                  f"z3-decided decide() median {statistics.median(dq) if dq else float('nan'):.2f} ms")
    z3_median = statistics.median(z3_all) if z3_all else None
    z3_dec_median = statistics.median(z3_dec) if z3_dec else None

    print("\n== real torch 2.13 streams (declared s<N> in [2, inf), guard(rel, hint=hint_result)) ==")
    print(f"{'model':>19} {'decisions':>9} {'agree':>6} {'errors':>6} {'time s':>7} {'dec/s':>9} {'z3q':>4}  stages / solver facts")
    for d in real:
        print(f"{d['model']:>19} {d['decisions']:>9} {d['agree']:>6} {len(d['errors']):>6} {d['seconds']:>7.3f} "
              f"{_fmt_rate(d['per_s']):>9} {d['z3_queries']:>4}  {d['stages']}")
        nc = d["nonconstant"]
        print(f"{'':>19} non-constant only: {nc['decisions']} decisions, agree {nc['agree']}, {nc['stages']}")
        print(f"{'':>19} torch outcome -> solver truth: {d['by_outcome']}")
        print(f"{'':>19} solver recorded {len(d['solver_facts'])} guard facts {d['solver_facts']}; "
              f"torch recorded {d['torch_guards']}; skipped {d['skipped']}; "
              f"with declared upper bounds: agree {d['declared_ranges_agree']}")
        for row in d["disagree"][:5]:
            print(f"{'':>19} DISAGREE i={row[0]} {row[1]}: solver {row[2]}, torch {row[3]}")
        for row in d["errors"][:5]:
            print(f"{'':>19} ERROR i={row[0]} {row[1]}: {row[2]}")

    cheap_rates = [r["decide_stages"]["_cheap"]["per_s"] for r in results]
    guard_cheap_rates = [r["guard_stages"]["_cheap"]["per_s"] for r in results]
    worst_growth = max((g["factor"] for g in growth), default=None)
    per_size = [(statistics.median(r["z3_query_ms"]), r["n"], r["m"]) for r in results if len(r["z3_query_ms"]) >= 5]
    z3_worst = max(per_size) if per_size else None
    real_ok = all(not d["disagree"] and not d["errors"] for d in real)
    verdicts = [
        ("cheap-stage decide() >= 100,000/s (every size)", min(cheap_rates) >= TARGET_CHEAP_RATE,
         f"min {min(cheap_rates):,.0f}/s, max {max(cheap_rates):,.0f}/s"),
        ("  (info) cheap-stage guard() >= 100,000/s", min(guard_cheap_rates) >= TARGET_CHEAP_RATE,
         f"min {min(guard_cheap_rates):,.0f}/s, max {max(guard_cheap_rates):,.0f}/s"),
        ("10x guards costs <= 12x time", worst_growth is not None and worst_growth <= TARGET_GROWTH,
         "worst " + (f"{worst_growth:.2f}x" if worst_growth is not None else "n/a")),
        ("median Z3 query <= 5 ms (every size)", z3_worst is not None and z3_worst[0] <= TARGET_Z3_MEDIAN_MS,
         (f"worst per-size median Smt.check {z3_worst[0]:.2f} ms (N={z3_worst[1]}, M={z3_worst[2]}); "
          f"pooled median {z3_median:.2f} ms over {len(z3_all)} queries; "
          f"pooled median z3-decided decide() {z3_dec_median:.2f} ms") if z3_worst is not None else "no Z3 query"),
        ("real streams agree with torch", real_ok,
         ", ".join(f"{d['model']} {d['agree']}/{d['decisions']}" for d in real)),
    ]
    print("\n== targets ==")
    for name, ok, detail in verdicts:
        print(f"  {'PASS' if ok else 'MISS'}  {name}: {detail}")
    return {"verdicts": [{"target": n, "pass": ok, "detail": d} for n, ok, d in verdicts],
            "z3_median_ms": z3_median, "z3_decide_median_ms": z3_dec_median}


def _uf_pairs(shape: str, n: int) -> list[tuple[int, int]]:
    if shape == "chain":
        return [(i + 1, i) for i in range(n)]
    if shape == "reverse_chain":
        return [(i + 1, i) for i in reversed(range(n))]
    if shape == "star":
        return [(i + 1, 0) for i in range(n)]
    pairs, step = [], 1  # balanced: pairs, then pairs of pairs, ...
    while step <= n:
        pairs += [(i + step, i) for i in range(0, n + 1 - step, 2 * step)]
        step *= 2
    return pairs[:n]


def _depth(uf: UnionFind, sym) -> int:
    """Edges from ``sym`` up to its tree root (introspection: the forest's shape)."""
    d = 0
    while sym in uf._parent:  # noqa: SLF001 - benchmark introspection
        sym, d = uf._parent[sym][0], d + 1  # noqa: SLF001
    return d


def _steady_find(uf: UnionFind, syms: list, rounds: int = 3) -> tuple[float, float]:
    """Seconds of a ``find`` pass and of a ``dict.get`` pass over the same keys, each the
    best of ``rounds`` interleaved passes (the machine is shared: the best is the least noisy)."""
    get = {x: i for i, x in enumerate(syms)}.get
    find_s, dict_s = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for x in syms:
            uf.find(x)
        t1 = time.perf_counter()
        for x in syms:
            get(x)
        t2 = time.perf_counter()
        find_s.append(t1 - t0)
        dict_s.append(t2 - t1)
    return min(find_s), min(dict_s)


def bench_union_find(sizes: tuple[int, ...] = (1_000, 10_000, 100_000)) -> list[dict]:
    """Per-operation microseconds of link, find and a scoped link undone, as classes grow.

    ``find`` is timed twice over every symbol: the first pass pays for path compression
    (deep only for balanced merges: union by size bounds depth by log2 n), the second is the
    steady state. Both are also given as a ratio to a plain ``dict.get`` of the same symbol
    keys, measured alongside: a Python dict lookup itself gets slower from 10^3 to 10^5 keys
    (cache misses), so the ratio is the union-find's own growth."""
    out = []
    for shape in ("chain", "reverse_chain", "star", "balanced"):
        for n in sizes:
            syms = [int_symbol(f"u{i}") for i in range(n + 1)]
            probes = min(2_000, n)
            extras = [int_symbol(f"e{i}") for i in range(probes)]
            pairs = _uf_pairs(shape, n)
            uf = UnionFind()
            for x in syms:
                uf.add(x, (0, 10**9))
            gc.collect()
            t0 = time.perf_counter()
            for a, b in pairs:
                uf.link(syms[a], 1, syms[b], 0)
            t1 = time.perf_counter()
            depth = max(_depth(uf, x) for x in syms)
            t_first = time.perf_counter()
            for x in syms:
                uf.find(x)
            t2 = time.perf_counter()
            find_s, dict_s = _steady_find(uf, syms)
            t5 = time.perf_counter()
            for i in range(probes):  # a scope: link a fresh symbol into the big class, undo
                mark = uf.mark()
                uf.add(extras[i], (0, 10**9))
                uf.link(extras[i], 1, syms[i % n], 0)
                uf.undo(mark)
            t6 = time.perf_counter()
            per = 1e6 / len(syms)
            out.append({"shape": shape, "links": len(pairs), "link_us": (t1 - t0) / len(pairs) * 1e6,
                        "depth": depth, "first_find_us": (t2 - t_first) * per, "find_us": find_s * per,
                        "dict_us": dict_s * per, "find_per_dict": find_s / dict_s,
                        "scope_us": (t6 - t5) / probes * 1e6})
    return out


def _capped(items: list, step, cap: float) -> tuple[int, float]:
    t0 = time.perf_counter()
    done = 0
    for x in items:
        step(x)
        done += 1
        if time.perf_counter() - t0 > cap:
            break
    return done, time.perf_counter() - t0


def bench_large(n_symbols: int, n_facts: int, cap: float, seed: int) -> list[dict]:
    """Load the large problem with and without example values; decisions and bounds on it."""
    p = large_problem(n_symbols, n_facts, seed=seed)
    out = []
    for hints in (True, False):
        gc.collect()
        s = Solver()
        t0 = time.perf_counter()
        for d in p.symbols:
            s.symbol(d.name, d.lo, d.hi, hint=d.value if hints else None)
        declare_s = time.perf_counter() - t0
        loaded, load_s = _capped([rel for _, rel in p.facts], s.assume, cap)
        before = Counter(s.stats)
        decided, decide_s = _capped(list(p.questions), s.decide, cap / 2)
        stages = dict(Counter(s.stats) - before)
        syms = [int_symbol(d.name) for d in p.symbols[:: max(1, n_symbols // 50)]]
        bounded, bounds_s = _capped(syms, s.bounds, cap / 4)
        out.append({"hints": hints, "symbols": n_symbols, "facts": n_facts, "declare_s": declare_s,
                    "loaded": loaded, "load_s": load_s, "facts_per_s": _rate(loaded, load_s),
                    "decided": decided, "decide_s": decide_s, "decisions_per_s": _rate(decided, decide_s),
                    "decide_stages": stages, "bounds": bounded, "bounds_ms": bounds_s / max(1, bounded) * 1e3})
    return out


def report_scale(uf_rows: list[dict], large: list[dict]) -> None:
    print("\n== union-find: microseconds per operation as classes grow (flat = ratio near 1) ==")
    print(f"{'shape':>14} {'links':>7} {'link us':>8} {'find us':>8} {'scope us':>9} {'depth':>6} "
          f"{'1st find':>9} {'dict us':>8} {'find/dict':>9}")
    for r in uf_rows:
        print(f"{r['shape']:>14} {r['links']:>7} {r['link_us']:>8.2f} {r['find_us']:>8.2f} {r['scope_us']:>9.2f} "
              f"{r['depth']:>6} {r['first_find_us']:>9.2f} {r['dict_us']:>8.3f} {r['find_per_dict']:>9.2f}")
    for shape in sorted({r["shape"] for r in uf_rows}):
        rows = [r for r in uf_rows if r["shape"] == shape]
        print(f"  {shape}: link cost x{rows[-1]['link_us'] / rows[0]['link_us']:.2f}, find x"
              f"{rows[-1]['find_us'] / rows[0]['find_us']:.2f}, scope x{rows[-1]['scope_us'] / rows[0]['scope_us']:.2f} "
              f"from {rows[0]['links']} to {rows[-1]['links']} links; a dict lookup of the same keys "
              f"x{rows[-1]['dict_us'] / rows[0]['dict_us']:.2f}, find per dict lookup "
              f"x{rows[-1]['find_per_dict'] / rows[0]['find_per_dict']:.2f}")
    print("\n== large problem: assume, decide, bounds (each phase under a wall-clock cap) ==")
    for r in large:
        print(f"  {'with' if r['hints'] else 'without'} example values: declare {r['symbols']} symbols "
              f"{r['declare_s']:.2f}s; facts {r['loaded']}/{r['facts']} in {r['load_s']:.1f}s "
              f"({_fmt_rate(r['facts_per_s'])}/s); decisions {r['decided']} in {r['decide_s']:.1f}s "
              f"({_fmt_rate(r['decisions_per_s'])}/s) {r['decide_stages']}; bounds {r['bounds']} calls, "
              f"{r['bounds_ms']:.0f} ms each")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only (a few seconds)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=None, help="replays per size (median); default 5, quick 3")
    ap.add_argument("--sizes", type=str, default=None, help="override, e.g. '1000x10,10000x100'")
    ap.add_argument("--budget", type=float, default=90.0,
                    help="seconds of guard loop per size before repeats are dropped")
    ap.add_argument("--real", type=Path, default=REAL_STREAMS_PATH, help="real guard streams (jsonl)")
    ap.add_argument("--out", type=Path, default=None, help="write all figures as JSON")
    ap.add_argument("--scale", action="store_true", help="only the scale sections")
    ap.add_argument("--no-scale", action="store_true", help="skip the scale sections")
    ap.add_argument("--large", type=str, default="10000x20000", help="large problem: symbols x facts")
    ap.add_argument("--cap", type=float, default=60.0, help="seconds per large-problem phase")
    args = ap.parse_args(argv)
    if not args.no_scale:
        n_sym, n_facts = (int(v) for v in args.large.split("x"))
        uf_rows = bench_union_find((1_000, 10_000) if args.quick else (1_000, 10_000, 100_000))
        large = bench_large(n_sym, n_facts, args.cap, args.seed)
        report_scale(uf_rows, large)
        if args.scale:
            if args.out:
                args.out.write_text(json.dumps({"union_find": uf_rows, "large": large}, indent=1, default=str))
            return 0

    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    if args.sizes:
        sizes = [tuple(int(v) for v in part.split("x")) for part in args.sizes.split(",")]
    repeat = args.repeat or (3 if args.quick else 5)
    t_start = time.perf_counter()
    results = []
    for n, m in sizes:
        t = time.perf_counter()
        r = bench_size(n, m, args.seed, repeat, args.budget)
        results.append(r)
        print(f"[{time.perf_counter() - t_start:7.1f}s] N={n} M={m}: {r['guard_per_s']:,.0f} guards/s "
              f"(size took {time.perf_counter() - t:.1f}s)", flush=True)
    growth = []
    by = {(r["n"], r["m"]): r for r in results}
    for (n, m), r in sorted(by.items()):
        r10 = by.get((n * 10, m))
        if r10:
            growth.append({"m": m, "n0": n, "n1": n * 10, "t0": r["loop_s"], "t1": r10["loop_s"],
                           "factor": r10["loop_s"] / r["loop_s"]})
    real = bench_real(args.real, repeat) if args.real.exists() else []
    summary = report(results, real, growth)
    print(f"\ntotal {time.perf_counter() - t_start:.1f}s")
    if args.out:
        payload = {"seed": args.seed, "repeat": repeat, "sizes": results, "growth": growth, "real": real, **summary}
        args.out.write_text(json.dumps(payload, indent=1, default=str))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
