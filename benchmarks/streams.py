"""Guard streams for solver benchmarks and tests.

Two sources:

* :func:`synthetic_stream` -- N guards over M symbols, shaped like what real exports ask:
  mostly ``Eq(s, 1)`` / ``Ne(s, 1)`` / ``Ge(s, k)`` against declared ranges, equalities
  between dims (a guard fact the first time, re-asked afterwards), divisibility
  (``Eq(Mod(s, k), 0)``), derived dims (``Eq(d, 2*s)``, ``Eq(s_i*s_j, p)``,
  ``Eq(FloorDiv(s, 2), f)``) and trivial constants. Every hint is the relation's value at
  one random example assignment that satisfies every declared range, so the facts a replay
  records are consistent and ``Solver.guard(rel, hint)`` never meets a contradicting hint.
  Deterministic from the seed; every sympy relation is built here, before any timing.

* :func:`load_real_streams` / :func:`replay_real` -- the guard streams torch 2.13 recorded
  while exporting four models (``../shared/data/torch213_guard_streams.jsonl``, beside the project). Only
  the printed expression and its boolean value on the example inputs are recorded (not the
  symbol values), so the torch symbols ``s<N>`` are declared with ``lo=2`` (torch's 0/1
  specialization), no hint, and each guard is asked as ``guard(rel, hint=hint_result)``.

>>> st = synthetic_stream(200, 12, seed=1)
>>> len(st.guards), len(st.symbols)
(200, 12)
>>> synthetic_stream(200, 12, seed=1).fingerprint() == st.fingerprint()
True
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sympy

from shapes import FloorDiv, evaluate, int_symbol, parse_expr
from solver import Solver, Truth

__all__ = [
    "CHEAP_STAGES",
    "SLOW_STAGES",
    "STAGES",
    "REAL_STREAMS_PATH",
    "SymbolDecl",
    "GuardStream",
    "synthetic_stream",
    "declare",
    "replay",
    "RealGuard",
    "load_real_streams",
    "replay_real",
    "RealReplay",
    "cheap_fraction",
    "LargeProblem",
    "large_problem",
]

STAGES = ("cache", "union_find", "interval", "congruence", "boolean", "constant", "witness", "refutation", "z3",
          "enumeration", "undecided")
SLOW_STAGES = ("witness", "refutation", "z3", "enumeration", "undecided")
CHEAP_STAGES = tuple(s for s in STAGES if s not in SLOW_STAGES)

REAL_STREAMS_PATH = Path(__file__).resolve().parents[2] / "shared" / "data" / "torch213_guard_streams.jsonl"
"""``../shared/data`` beside the project (where CI and the dev machines keep it)."""


# ---------------------------------------------------------------------------------------------
# synthetic streams
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SymbolDecl:
    """Arguments of ``Solver.symbol``; ``value`` is the example assignment's value."""

    name: str
    lo: int | None
    hi: int | None
    value: int
    kind: str = "base"  # base | linear | product | floordiv


@dataclass(frozen=True)
class GuardStream:
    """Declared symbols and the ordered guards ``(rel, hint)`` of one stream."""

    name: str
    seed: int
    symbols: tuple[SymbolDecl, ...]
    guards: tuple[tuple[sympy.Basic, bool], ...]
    kinds: tuple[str, ...] = field(default=(), repr=False)  # the generator's label of each guard

    @property
    def assignment(self) -> dict[sympy.Symbol, int]:
        return {int_symbol(d.name): d.value for d in self.symbols}

    def fingerprint(self) -> str:
        """A digest of the declarations and the printed guards (for determinism checks)."""
        h = hashlib.sha256()
        for d in self.symbols:
            h.update(repr((d.name, d.lo, d.hi, d.value, d.kind)).encode())
        for rel, hint in self.guards:
            h.update(f"{rel}|{hint};".encode())
        return h.hexdigest()

    def distinct(self) -> int:
        return len(set(rel for rel, _ in self.guards))


# kind -> relative weight of one question of that kind (multiplied by the symbol's popularity)
_WEIGHTS = {
    "eq1": 10.0,        # Eq(s, 1): the 0/1 checks of broadcasting / layer norm
    "ne1": 3.0,         # Ne(s, 1)
    "range_true": 3.0,  # Ge(s, lo) / Gt(s, lo - 1) / Le(s, hi): settled by the declared range
    "range_new": 0.6,   # Ge(s, k) inside the range: a guard fact the first time
    "scaled": 1.5,      # Ne(64*s, 64), Eq(64*s, 64)
    "eq_dims": 2.0,     # Eq(a, b) for dims that are equal in the example (fact once)
    "ne_dims": 0.15,    # Eq(a, b) for dims that differ in the example (a residual Ne fact)
    "mod": 1.0,         # Eq(Mod(s, k), 0)
    "linear": 1.0,      # Eq(d, 2*s)
    "product": 1.0,     # Eq(s_i*s_j, p), Eq(s_i*s_j, 1), Ge(s_i*s_j, 4)
    "floordiv": 0.8,    # Eq(FloorDiv(s, 2), f), Ge(FloorDiv(s, k), 1)
}


def _value(rng: random.Random) -> int:
    """An example size: mostly small powers of two and 'odd' sizes, sometimes 1."""
    r = rng.random()
    if r < 0.04:
        return 1
    if r < 0.55:
        return 2 ** rng.randint(1, 10)
    return rng.randint(2, 1024)


def _range_for(rng: random.Random, v: int) -> tuple[int | None, int | None]:
    r = rng.random()
    lo = 2 if (v >= 2 and r < 0.8) else (0 if r < 0.9 else 1)
    lo = min(lo, v)
    r = rng.random()
    hi = None if r < 0.5 else max(v, rng.choice((64, 256, 1024, 4096, 8192)))
    return lo, hi


def synthetic_stream(n_guards: int, n_symbols: int, seed: int = 0, *, const_frac: float = 0.2,
                     zipf: float = 1.0) -> GuardStream:
    """``n_guards`` guards over ``n_symbols`` symbols (see the module docstring).

    ``const_frac`` of the guards are the trivial constants ``True``/``False`` torch also
    asks; the others are drawn (Zipf-like popularity over symbols) from a pool of about
    ``8 * n_symbols`` distinct questions, so most questions are re-asked many times.
    """
    if n_symbols < 4:
        raise ValueError("need at least 4 symbols")
    rng = random.Random(f"symshape-bench/{seed}/{n_guards}/{n_symbols}")
    n_base = max(2, round(n_symbols * 0.6))
    n_lin = round(n_symbols * 0.15)
    n_prod = round(n_symbols * 0.15)
    n_fd = n_symbols - n_base - n_lin - n_prod

    decls: list[SymbolDecl] = []
    # base dims, in equality groups (shared batch / sequence dims): group sizes 1..3
    groups: list[list[int]] = []
    while len(decls) < n_base:
        size = min(rng.choice((1, 1, 1, 2, 2, 3)), n_base - len(decls))
        v = _value(rng)
        if rng.random() < 0.25 and v >= 2:  # some dims are multiples of 8/64 (divisibility)
            v = max(8, v - v % rng.choice((8, 64)))
            if v % 8:
                v = 64
        members = []
        for _ in range(size):
            lo, hi = _range_for(rng, v)
            members.append(len(decls))
            decls.append(SymbolDecl(f"s{len(decls)}", lo, hi, v, "base"))
        groups.append(members)
    base = list(range(n_base))
    derived: list[tuple[int, str, tuple[int, ...]]] = []  # (index, kind, sources)
    for kind, count in (("linear", n_lin), ("product", n_prod), ("floordiv", n_fd)):
        for _ in range(count):
            if kind == "product":
                i, j = rng.sample(base, 2)
                v = decls[i].value * decls[j].value
                src: tuple[int, ...] = (i, j)
            else:
                i = rng.choice(base)
                v = 2 * decls[i].value if kind == "linear" else decls[i].value // 2
                src = (i,)
            lo = min(2, v) if kind != "floordiv" else 0
            derived.append((len(decls), kind, src))
            decls.append(SymbolDecl(f"s{len(decls)}", lo, None, v, kind))

    syms = [int_symbol(d.name) for d in decls]
    env = {s: d.value for s, d in zip(syms, decls)}
    popularity = list(range(len(decls)))
    rng.shuffle(popularity)
    pop = [1.0 / (1 + popularity[i]) ** zipf for i in range(len(decls))]

    pool: list[tuple[sympy.Basic, str, float]] = []

    def add(rel: sympy.Basic, kind: str, w: float) -> None:
        pool.append((rel, kind, _WEIGHTS[kind] * w))

    for i, (d, s) in enumerate(zip(decls, syms)):
        w = pop[i]
        add(sympy.Eq(s, 1), "eq1", w)
        add(sympy.Ne(s, 1), "ne1", w)
        if d.lo is not None:
            add(sympy.Ge(s, d.lo), "range_true", w)
            add(sympy.Gt(s, d.lo - 1), "range_true", w / 2)
        if d.hi is not None:
            add(sympy.Le(s, d.hi), "range_true", w / 2)
        if d.kind == "base":
            k = rng.randint(2, max(3, 2 * d.value))
            add(sympy.Ge(s, k) if rng.random() < 0.7 else sympy.Lt(s, k), "range_new", w)
            add(sympy.Ne(64 * s, 64), "scaled", w)
            add(sympy.Eq(64 * s, 64), "scaled", w / 3)
            k = rng.choice((2, 4, 8, 16, 64)) if d.value % 8 == 0 else rng.choice((2, 2, 4, 8))
            if d.value % k and rng.random() < 0.7:
                k = 2 if d.value % 2 == 0 else k  # divisibility questions mostly hold
            add(sympy.Eq(sympy.Mod(s, k), 0), "mod", w)
            add(sympy.Ge(FloorDiv(s, rng.choice((2, 4, 8))), 1), "floordiv", w / 2)
    for g in groups:
        for a, b in zip(g, g[1:]):
            add(sympy.Eq(syms[a], syms[b]), "eq_dims", (pop[a] + pop[b]) / 2)
    for _ in range(max(1, n_base // 10)):
        a, b = rng.sample(base, 2)
        if decls[a].value != decls[b].value:
            add(sympy.Eq(syms[a], syms[b]), "ne_dims", (pop[a] + pop[b]) / 2)
    for idx, kind, src in derived:
        s, w = syms[idx], pop[idx] + sum(pop[i] for i in src)
        if kind == "linear":
            add(sympy.Eq(s, 2 * syms[src[0]]), "linear", w)
            add(sympy.Ge(s, 2 * syms[src[0]]), "linear", w / 2)
        elif kind == "product":
            p = syms[src[0]] * syms[src[1]]
            add(sympy.Eq(p, s), "product", w)
            add(sympy.Eq(p, 1), "product", w)
            add(sympy.Ge(p, 4), "product", w / 2)
        else:
            add(sympy.Eq(FloorDiv(syms[src[0]], 2), s), "floordiv", w)
            add(sympy.Ge(s, 0), "floordiv", w / 2)

    n_const = round(n_guards * const_frac)
    picks = rng.choices(range(len(pool)), weights=[p[2] for p in pool], k=n_guards - n_const)
    consts = [sympy.true if rng.random() < 0.4 else sympy.false for _ in range(n_const)]
    order = [("q", i) for i in picks] + [("c", i) for i in range(n_const)]
    rng.shuffle(order)
    hints: dict[int, bool] = {}
    guards: list[tuple[sympy.Basic, bool]] = []
    kinds: list[str] = []
    for tag, i in order:
        if tag == "c":
            guards.append((consts[i], consts[i] is sympy.true))
            kinds.append("constant")
            continue
        rel, kind, _ = pool[i]
        if i not in hints:
            hints[i] = bool(evaluate(rel, env))
        guards.append((rel, hints[i]))
        kinds.append(kind)
    return GuardStream(f"synthetic-N{n_guards}-M{n_symbols}", seed, tuple(decls), tuple(guards), tuple(kinds))


@dataclass(frozen=True)
class LargeProblem:
    """Many symbols, many mixed facts (true at ``symbols[i].value``) and questions about them."""

    symbols: tuple[SymbolDecl, ...]
    facts: tuple[tuple[str, sympy.Basic], ...]  # (kind, relation)
    questions: tuple[sympy.Basic, ...]


def large_problem(n_symbols: int, n_facts: int, seed: int = 0, n_questions: int = 2_000) -> LargeProblem:
    """Chains (``s_i == s_j``), stars (``s_leaf == s_hub``), derived dims (``s_j == 2*s_i + 1``)
    and inequalities (``s_a <= s_b + c``, ``s_a + s_b <= s_c + c``, ``s_a >= k``), all true at
    one hidden example assignment; questions mix ranges, equalities and comparisons.

    >>> p = large_problem(100, 200, seed=1, n_questions=10)
    >>> len(p.symbols), len(p.facts), len(p.questions)
    (100, 200, 10)
    >>> all(evaluate(rel, {int_symbol(d.name): d.value for d in p.symbols}) for _, rel in p.facts)
    True
    """
    rng = random.Random(seed)
    syms = [int_symbol(f"s{i}") for i in range(n_symbols)]
    val: dict[int, int] = {}
    facts: list[tuple[str, sympy.Basic]] = []
    order = list(range(n_symbols))
    n_links = min(n_facts * 2 // 5, n_symbols - n_symbols // 10)
    free = order[n_symbols // 10:]  # the first tenth are roots (hubs); the rest get linked
    for i in order[: n_symbols // 10]:
        val[i] = rng.randint(2, 512)
    rng.shuffle(free)
    for k in range(n_links):
        new = free[k]
        kind = rng.choices(["chain", "star", "derived"], [5, 3, 3])[0]
        old = (new - 1 if kind == "chain" and new - 1 in val else rng.choice(order[: n_symbols // 10]))
        if kind == "derived":
            a, b = rng.choice([(2, 0), (2, 1), (1, 3), (4, 0)])
            val[new] = a * val[old] + b
            facts.append((kind, sympy.Eq(syms[new], a * syms[old] + b)))
        else:
            val[new] = val[old]
            facts.append((kind, sympy.Eq(syms[new], syms[old])))
    for i in order:
        val.setdefault(i, rng.randint(2, 512))
    known = list(val)
    while len(facts) < n_facts:
        a, b, c = (rng.choice(known) for _ in range(3))
        kind = rng.choices(["le", "sum", "lower"], [5, 2, 2])[0]
        if kind == "le":
            slack = max(0, val[a] - val[b]) + rng.randint(0, 8)
            facts.append(("ineq", sympy.Le(syms[a], syms[b] + slack)))
        elif kind == "sum":
            slack = max(0, val[a] + val[b] - val[c]) + rng.randint(0, 8)
            facts.append(("ineq", sympy.Le(syms[a] + syms[b], syms[c] + slack)))
        else:
            facts.append(("lower", sympy.Ge(syms[a], max(1, val[a] - rng.randint(0, 64)))))
    questions = []
    for _ in range(n_questions):
        a, b = rng.choice(known), rng.choice(known)
        kind = rng.choice(["ge", "eq1", "le", "eq"])
        k = val[a] + rng.randint(-20, 20)
        questions.append({"ge": sympy.Ge(syms[a], k), "eq1": sympy.Eq(syms[a], 1), "le": sympy.Le(syms[a], syms[b]),
                          "eq": sympy.Eq(syms[a], syms[b])}[kind])
    decls = tuple(SymbolDecl(f"s{i}", 1, 10**6, val[i]) for i in range(n_symbols))
    return LargeProblem(decls, tuple(facts[:n_facts]), tuple(questions))


def declare(solver: Solver, stream: GuardStream, *, with_hints: bool = True) -> dict[str, sympy.Symbol]:
    """Declare the stream's symbols on ``solver`` (with the example values as hints)."""
    return {d.name: solver.symbol(d.name, d.lo, d.hi, hint=d.value if with_hints else None) for d in stream.symbols}


def replay(solver: Solver, guards: Iterable[tuple[sympy.Basic, bool]]) -> list[bool]:
    """``solver.guard(rel, hint)`` for each guard, in order; the answers."""
    guard = solver.guard
    return [guard(rel, hint) for rel, hint in guards]


# ---------------------------------------------------------------------------------------------
# real streams (torch 2.13 exports)
# ---------------------------------------------------------------------------------------------
_SYM = re.compile(r"\bs\d+\b")
_BOOL = {"True": True, "False": False}

# Upper bounds the recorded data reveals (README and the ``ranges`` of the recorded guards):
# mlp's batch is ``Dim('batch', max=1024)``; in transformer_mask the guards Eq(s52, s28) and
# Eq(s25, s98) narrowed s52 to [2, 256] and s25 to [2, 512], the ranges of s28 and s98.
# The same spec is assumed for ``transformer``. Used only with ``ranges="declared"``.
DECLARED_HI: dict[str, dict[str, int]] = {
    "mlp": {"s77": 1024},
    "transformer": {"s28": 256, "s98": 512},
    "transformer_mask": {"s28": 256, "s98": 512},
}


@dataclass(frozen=True, slots=True)
class RealGuard:
    """One recorded decision of a real export."""

    model: str
    i: int
    text: str
    hint: bool | None
    result: bool | None
    outcome: str
    entry: str


def load_real_streams(path: str | Path = REAL_STREAMS_PATH) -> dict[str, list[RealGuard]]:
    """The recorded decisions of each model, in order."""
    out: dict[str, list[RealGuard]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            r = json.loads(line)
            out.setdefault(r["model"], []).append(RealGuard(
                r["model"], int(r["i"]), r["expr"], _BOOL.get(str(r["hint_result"])),
                _BOOL.get(str(r["result"])), r["outcome"], r["entry"]))
    for rows in out.values():
        rows.sort(key=lambda g: g.i)
    return out


@dataclass
class RealReplay:
    """What replaying one model's stream gave (see :func:`replay_real`)."""

    model: str
    decisions: int = 0                  # guard() calls made
    skipped: list[str] = field(default_factory=list)  # rows that are no guard (create_symbol)
    agree: int = 0                      # solver answer == torch's ``result``
    disagree: list[tuple[int, str, bool, bool]] = field(default_factory=list)  # (i, expr, solver, torch)
    errors: list[tuple[int, str, str]] = field(default_factory=list)  # (i, expr, error)
    stages: Counter = field(default_factory=Counter)
    by_outcome: Counter = field(default_factory=Counter)  # (torch outcome, solver truth) -> count
    solver_facts: list[str] = field(default_factory=list)  # guards the solver had to record
    torch_guards: list[str] = field(default_factory=list)  # guards torch recorded
    z3_queries: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "model": self.model, "decisions": self.decisions, "skipped": self.skipped,
            "agree": self.agree, "disagree": self.disagree, "errors": self.errors,
            "stages": dict(self.stages),
            "by_outcome": {f"{a} -> {b}": n for (a, b), n in sorted(self.by_outcome.items())},
            "solver_facts": self.solver_facts, "torch_guards": self.torch_guards,
            "z3_queries": self.z3_queries, "seconds": self.seconds,
        }


def _real_solver(model: str, rows: Sequence[RealGuard], ranges: str) -> tuple[Solver, dict[str, sympy.Symbol]]:
    names = sorted({n for g in rows if g.entry == "evaluate_expr" for n in _SYM.findall(g.text)},
                   key=lambda n: int(n[1:]))
    his = DECLARED_HI.get(model, {}) if ranges == "declared" else {}
    s = Solver()
    return s, {n: s.symbol(n, 2, his.get(n), source=f"{model}:{n}") for n in names}


def replay_real(model: str, rows: Sequence[RealGuard], *, ranges: str = "open",
                skip_constants: bool = False) -> RealReplay:
    """Replay one model's recorded stream through a fresh :class:`Solver`.

    ``ranges``: ``"open"`` declares every ``s<N>`` as ``[2, inf)``; ``"declared"`` adds the
    upper bounds of :data:`DECLARED_HI`. Torch's trivial constants are replayed too (they
    exercise the constant stage) unless ``skip_constants``.
    """
    import time

    if ranges not in ("open", "declared"):
        raise ValueError(f"ranges must be 'open' or 'declared', got {ranges!r}")
    solver, symbols = _real_solver(model, rows, ranges)
    rep = RealReplay(model)
    parsed = []
    for g in rows:
        if g.entry != "evaluate_expr":
            rep.skipped.append(f"i={g.i} {g.entry}: {g.text}")
            continue
        if skip_constants and g.text in _BOOL:
            continue
        try:
            parsed.append((g, parse_expr(g.text, symbols)))
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            rep.errors.append((g.i, g.text, f"parse: {type(e).__name__}: {e}"))
    t0 = time.perf_counter()
    for g, rel in parsed:
        before = dict(solver.stats)
        n_facts = len(solver.facts)
        try:
            got = solver.guard(rel, hint=g.hint)
        except Exception as e:  # noqa: BLE001
            rep.errors.append((g.i, g.text, f"{type(e).__name__}: {e}"))
            continue
        rep.decisions += 1
        stage = next((k for k, v in solver.stats.items() if v != before.get(k, 0)), "?")
        rep.stages[stage] += 1
        truth = solver.guards[-1].decided
        rep.by_outcome[(g.outcome, truth.value)] += 1
        if len(solver.facts) > n_facts:
            rep.solver_facts.append(f"i={g.i} {solver.facts[-1].rel}  (asked {g.text}, torch: {g.outcome})")
        if g.outcome == "guard":
            rep.torch_guards.append(f"i={g.i} {g.text}")
        if g.result is None or got == g.result:
            rep.agree += 1
        else:
            rep.disagree.append((g.i, g.text, got, g.result))
    rep.seconds = time.perf_counter() - t0
    rep.z3_queries = solver._smt.queries  # noqa: SLF001 - benchmark introspection
    return rep


def cheap_fraction(stats: Counter) -> float:
    """Share of decisions made by the cheap stages (everything but z3 / enumeration / undecided)."""
    total = sum(stats[k] for k in STAGES)
    return sum(stats[k] for k in CHEAP_STAGES) / total if total else math.nan
