"""RSS of ``python -m solver serve`` over a long session (issue 11: flat within 10%).

Usage::

    python benchmarks/bench_serve.py                  # 10,000 requests
    python benchmarks/bench_serve.py --requests 2000 --in-process

Sends a deterministic mix of requests (declare, assume, guard, decide, bounds, explain,
and failing ones: unknown names, parse errors, contradictions, hint mismatches, budget
errors) in rounds of :data:`ROUND` requests; each round starts a fresh solver (``new``)
over new symbol names, so the live state stays bounded and growth means a leak (per-request
state kept, caches without bounds). The resident set size of the server (the command's
process plus its worker process) is sampled after every response; the mean over the first
and the last 1,000 requests and their ratio are printed. ``--in-process`` measures a
:class:`solver.service.protocol.Session` in this process instead (no worker), sampling this
process's RSS. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from solver.service.protocol import Session  # noqa: E402

ROUND = 250
WINDOW = 1000


def requests(total: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """The request stream: rounds of ``ROUND`` requests, each round on a fresh solver."""
    rng = random.Random(seed)
    sent = 0
    rnd = 0
    while sent < total:
        for request in _round(rng, rnd):
            if sent == total:
                return
            sent += 1
            yield {"id": sent, **request}
        rnd += 1


def _round(rng: random.Random, rnd: int) -> Iterator[dict[str, Any]]:
    names = [f"s{rnd}_{i}" for i in range(12)]
    yield {"op": "new"}
    for i, name in enumerate(names):
        yield {"op": "symbol", "name": name, "lo": 1 + i % 3, "hi": 64 + 8 * i, "hint": 8 + i}
    for _ in range(ROUND - 1 - len(names)):
        a, b, c = rng.sample(names, 3)
        yield rng.choice([
            {"op": "assume", "rel": f"{a} + {b} <= {rng.randint(60, 200)}"},
            {"op": "assume", "rel": f"{a} >= {rng.randint(1, 4)}"},
            {"op": "assume", "rel": f"{a} >= 10000"},                               # contradiction
            {"op": "guard", "rel": f"{a} * {b} >= {rng.randint(8, 80)}", "hint": True},
            {"op": "guard", "rel": f"{c} % 2 == 0", "hint": rng.random() < 0.5},
            {"op": "guard", "rel": f"{a} >= 1", "hint": False},                     # hint mismatch
            {"op": "decide", "rel": f"{a} + {b} >= {c}"},
            {"op": "decide", "rel": f"{a} * {b} >= {rng.randint(1, 50)}"},
            {"op": "decide", "rel": f"nope_{rng.randint(0, 10**6)} >= 1"},           # unknown name
            {"op": "decide", "rel": f"{a} >= "},                                     # parse error
            {"op": "decide", "rel": f"({a} ** 64) ** 64 >= 1"},                      # budget error
            {"op": "bounds", "expr": f"{a} * {b} - {c}"},
            {"op": "bounds", "expr": f"2 * {a} + {b} // 3"},
            {"op": "explain", "rel": f"{a} >= 1"},
            {"op": "classes"},
            {"op": "violations"},
        ])


def _rss_kib(pid: int) -> int:
    """Memory of ``pid`` and its children (KiB): the proportional set size (PSS, so the pages
    a forked worker shares with its parent count once), or the RSS where PSS is missing."""
    total = 0
    for p in [pid, *_children(pid)]:
        total += _status_kib(f"/proc/{p}/smaps_rollup", "Pss:") or _status_kib(f"/proc/{p}/status", "VmRSS:")
    return total


def _status_kib(path: str, key: str) -> int:
    try:
        with open(path, encoding="ascii") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith(key)), 0)
    except OSError:
        return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def run_command(total: int) -> tuple[list[int], dict[str, int], float]:
    """Drive ``python -m solver serve``; RSS per response, error types, seconds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "solver", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    rss: list[int] = []
    errors: dict[str, int] = {}
    start = time.monotonic()
    for request in requests(total):
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        response = json.loads(proc.stdout.readline())
        if "error" in response:
            errors[response["error"]["type"]] = errors.get(response["error"]["type"], 0) + 1
        rss.append(_rss_kib(proc.pid))
    proc.stdin.close()
    proc.wait()
    return rss, errors, time.monotonic() - start


def run_in_process(total: int) -> tuple[list[int], dict[str, int], float]:
    """The same stream through an in-process Session; this process's RSS."""
    session = Session()
    rss: list[int] = []
    errors: dict[str, int] = {}
    start = time.monotonic()
    for request in requests(total):
        response = session.handle_line(json.dumps(request))
        if "error" in response:
            errors[response["error"]["type"]] = errors.get(response["error"]["type"], 0) + 1
        rss.append(_rss_kib(os.getpid()))
    return rss, errors, time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--in-process", action="store_true")
    args = parser.parse_args()
    run = run_in_process if args.in_process else run_command
    rss, errors, seconds = run(args.requests)
    window = min(WINDOW, len(rss) // 2)
    first, last = statistics.mean(rss[:window]), statistics.mean(rss[-window:])
    print(f"serve ({'in-process Session' if args.in_process else 'python -m solver serve'}): "
          f"{len(rss)} requests in {seconds:.1f} s ({len(rss) / seconds:.0f} requests/s)")
    print(f"errors by type: {json.dumps(dict(sorted(errors.items())))}")
    print(f"memory (PSS) mean of the first {window} requests: {first / 1024:.1f} MiB")
    print(f"memory (PSS) mean of the last {window} requests:  {last / 1024:.1f} MiB")
    print(f"last / first: {last / first:.3f}  (target: within 10%, <= 1.10)")
    print(f"memory (PSS) min / max over the run: {min(rss) / 1024:.1f} / {max(rss) / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
