"""Decision rate on the large problem, per stage, with the answers kept for comparison.

Usage::

    python benchmarks/bench_rate.py                       # 10,000 symbols x 20,000 facts
    python benchmarks/bench_rate.py --answers out.json    # also write the 2,000 answers
    python benchmarks/bench_rate.py --compare before.json # and check them against a saved run
    python benchmarks/bench_rate.py --no-hints            # a client that declares no example values

It loads :func:`benchmarks.streams.large_problem` with example values (or, ``--no-hints``,
without: the point then starts at each range's low end), then decides every
question once, timing each call (process CPU time: the machine is shared, and CPU time
tracks a quiet machine's wall time better than wall time does) and crediting it to the stage
``Solver.stats`` names. The
comparison enforces the rule for a faster engine: the same TRUE/FALSE answers, and an
UNKNOWN may only have become TRUE/FALSE (never the reverse, never a flip).
Target: >= 1,000 decisions/s (issue 11).

Measured (CPU time, a 2-core machine shared with other sessions, load 1-2; seed 0):
with example values, load 3.7-5.2 s, 1,000-1,420/s (55 -> 26 questions undecided by every
cheap stage and walk); without, load 4.6-6.6 s, 1,200-1,460/s (63 -> 25). Before the
large-problem walk stage (solver/decide/pipeline.py ``_walked_witness``) the same runs gave
990-1,240/s and 940-1,140/s. The answers with and without example values are identical
(seeds 0, 1, 2), and identical to the runs before the walk stage. Seeds 1 and 2 run at
1,030-1,080/s with example values and 820-1,410/s without while the test suite ran alongside:
CPU time is not immune to a busy machine, so compare runs made side by side.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.streams import large_problem  # noqa: E402
from solver import Solver  # noqa: E402

TARGET_RATE = 1_000.0


def run(n_symbols: int, n_facts: int, seed: int, hints: bool = True) -> dict:
    """Load, decide every question; answers, per-stage counts and seconds, and the rate.
    ``hints``: declare the example values (False: a client that declares none)."""
    p = large_problem(n_symbols, n_facts, seed=seed)
    s = Solver()
    for d in p.symbols:
        s.symbol(d.name, d.lo, d.hi, hint=d.value if hints else None)
    t0 = time.process_time()
    for _, rel in p.facts:
        s.assume(rel)
    load_s = time.process_time() - t0
    gc.collect()
    answers: list[str] = []
    counts: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    total = 0.0
    for q in p.questions:
        before = Counter(s.stats)
        t = time.process_time()
        answer = s.decide(q)
        dt = time.process_time() - t
        total += dt
        stage = next(iter(Counter(s.stats) - before), "?")
        counts[stage] += 1
        seconds[stage] += dt
        answers.append(answer.value)
    return {"symbols": n_symbols, "facts": n_facts, "hints": hints, "load_s": load_s, "decided": len(answers),
            "decide_s": total, "rate": len(answers) / total, "counts": dict(counts),
            "seconds": {k: round(v, 3) for k, v in seconds.items()}, "answers": answers}


def compare(before: list[str], after: list[str]) -> list[str]:
    """The questions whose answer changed in a way a sound speed-up must not change it."""
    bad = []
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        if a != b and a != "unknown":
            bad.append(f"question {i}: {a} -> {b}")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", default="10000x20000", help="symbols x facts")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-hints", action="store_true", help="declare no example values")
    ap.add_argument("--answers", type=Path, help="write the answers (JSON) here")
    ap.add_argument("--compare", type=Path, help="answers (JSON) of an earlier run to check against")
    args = ap.parse_args()
    n_sym, n_facts = (int(v) for v in args.large.split("x"))
    r = run(n_sym, n_facts, args.seed, hints=not args.no_hints)
    print(f"{'with' if r['hints'] else 'without'} example values: load {r['load_s']:.2f} CPU s; {r['decided']} decisions in {r['decide_s']:.2f} CPU s = "
          f"{r['rate']:.0f}/s (target >= {TARGET_RATE:.0f}/s)")
    for stage, n in sorted(r["counts"].items(), key=lambda kv: -r["seconds"][kv[0]]):
        print(f"  {stage:>12}: {n:5d} answers, {r['seconds'][stage]:.3f} s")
    if args.answers:
        args.answers.write_text(json.dumps(r["answers"]))
    if args.compare:
        bad = compare(json.loads(args.compare.read_text()), r["answers"])
        gained = sum(1 for a, b in zip(json.loads(args.compare.read_text()), r["answers"]) if a != b)
        print(f"compare: {len(bad)} forbidden changes, {gained - len(bad)} UNKNOWN settled")
        for line in bad[:20]:
            print("  " + line)
        if bad:
            sys.exit(1)


if __name__ == "__main__":
    main()
