"""A solver and the problem it was told: :func:`capture` and :func:`restore`, and the JSON
round trip over them, :func:`to_json` / :func:`from_json`.

The problem records and their JSON live in :mod:`solver.service.problem`. Imports go one way: this
module uses :mod:`solver.engine`, never the reverse.

>>> import sympy
>>> s = Solver(); n = s.symbol("n", 1, 8, hint=4)
>>> s.assume(sympy.Eq(sympy.Mod(n, 2), 0)); s.guard(sympy.Ge(n, 3), True)
True
>>> p = capture(s)
>>> [f.rel for f in p.facts], [(g.rel, g.hint) for g in p.guards]
([Eq(Mod(n, 2), 0)], [(n >= 3, True)])
>>> restore(p, Solver()).bounds(n)
(4, 8)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import sympy

from shapes.errors import ShapesError
from shapes.relation import negate
from solver.engine import Solver
from solver.errors import ProtocolError, SolverError
from solver.service.limits import DEFAULT_LIMITS, check_problem_data
from solver.service.problem import FactSpec, GuardSpec, Problem, SymbolSpec, dumps, loads, symbol_name
from solver.records import GuardRecord
from solver.kernel.smt import DEFAULT_RLIMIT
from solver.state.known import DEFAULT_ENUM_LIMIT
from solver.truth import DECLARED, Fact, Reason, Truth

__all__ = ["capture", "restore", "to_json", "from_json"]


# -- solver record <-> problem -------------------------------------------------------------------
def capture(solver: Solver) -> Problem:
    """The problem a solver was told, from its public record (symbols, facts, guards).

    Facts that a guard added are not listed as facts: replaying the guard re-creates them.
    A fact's ``after_guards`` places it in the guard stream, so that replay asks every guard
    with the same facts known as the original run (decided guards may move later, where
    they stay decided).
    """
    symbols = tuple(SymbolSpec(symbol_name(i.symbol.name, f"symbols[{k}].name"), i.lo, i.hi, i.hint, i.source, i.adapts)
                    for k, i in enumerate(solver.symbols))
    guards = solver.guards
    facts = [f for f in solver.facts if f.reason.op != DECLARED]
    placed = _place_facts(facts, guards)
    return Problem(symbols, tuple(placed), tuple(GuardSpec(g.rel, g.hint, g.reason) for g in guards))


def _guard_fact(g: GuardRecord) -> sympy.Basic:
    """The fact an undecided guard added: its relation, or the negation for a False answer."""
    return g.rel if g.result else negate(g.rel)


def _place_facts(facts: Sequence[Fact], guards: Sequence[GuardRecord]) -> list[FactSpec]:
    """Drop guard-made facts; place every other fact right after the last guard-made one."""
    made = _guard_made(facts, guards)
    out: list[FactSpec] = []
    after = 0
    for i, f in enumerate(facts):
        if i in made:
            after = made[i] + 1
        else:
            out.append(FactSpec(f.rel, f.reason, after))
    return out


def _guard_made(facts: Sequence[Fact], guards: Sequence[GuardRecord]) -> dict[int, int]:
    """``{fact position: guard index}`` for the facts that undecided guards added, in order."""
    made: dict[int, int] = {}
    pos = 0
    for gi, g in enumerate(guards):
        if g.decided is Truth.UNKNOWN:
            pos = _find_fact(facts, pos, _guard_fact(g), g.reason)
            made[pos] = gi
            pos += 1
    return made


def _find_fact(facts: Sequence[Fact], start: int, rel: sympy.Basic, reason: Reason) -> int:
    for i in range(start, len(facts)):
        if facts[i].reason == reason and facts[i].rel == rel:
            return i
    raise SolverError(f"inconsistent solver record: no fact for the guard {rel} ({reason.describe()})")


def restore(problem: Problem, solver: Solver) -> Solver:
    """Replay a problem into a fresh solver and return it.

    Errors while replaying (a contradiction, a hint the facts contradict, an undecided guard
    without a hint) become ProtocolErrors naming the offending entry.
    """
    if solver.symbols or solver.facts or solver.guards:
        raise SolverError("restore needs a fresh solver (no symbols, facts or guards)")
    for i, s in enumerate(problem.symbols):
        with _entry(f"symbols[{i}]"):
            solver.symbol(s.name, s.lo, s.hi, hint=s.hint, source=s.source, adapts=s.adapts)
    pending = list(enumerate(problem.facts))
    for gi, g in enumerate(problem.guards):
        pending = _assume_until(solver, pending, gi)
        with _entry(f"guards[{gi}]"):
            solver.guard(g.rel, g.hint, g.reason)
    _assume_until(solver, pending, len(problem.guards))
    return solver


def _assume_until(solver: Solver, pending: list[tuple[int, FactSpec]], n_guards: int) -> list[tuple[int, FactSpec]]:
    """Assume the pending facts placed before guard ``n_guards``; return the rest."""
    k = 0
    while k < len(pending) and pending[k][1].after_guards <= n_guards:
        i, f = pending[k]
        with _entry(f"facts[{i}]"):
            solver.assume(f.rel, f.reason)
        k += 1
    return pending[k:]


@contextmanager
def _entry(path: str) -> Iterator[None]:
    """Turn the solver's errors while replaying one entry into ProtocolErrors naming it."""
    try:
        yield
    except ProtocolError:
        raise
    except (SolverError, ShapesError) as exc:  # HintMismatch, Contradiction, UndecidedGuard, ...
        raise ProtocolError(f"{path}: {exc}") from exc


def to_json(solver: Solver, indent: int | None = None) -> str:
    """The problem ``solver`` was told (symbols, facts, guard stream) as versioned JSON.

    >>> import sympy
    >>> s = Solver(); n = s.symbol("n", 1, 8, hint=4)
    >>> s.guard(sympy.Ge(n, 2), True)
    True
    >>> t = from_json(to_json(s))
    >>> t.bounds(n), [g.decided for g in t.guards]
    ((2, 8), [<Truth.UNKNOWN: 'unknown'>])
    """
    return dumps(capture(solver), indent)


def from_json(data: str | bytes | Mapping[str, object], *, rlimit: int = DEFAULT_RLIMIT,
              enum_limit: int = DEFAULT_ENUM_LIMIT) -> Solver:
    """Replay a JSON problem into a new solver: JSON text, or JSON data already parsed (a
    dict, as an archive or a request carries it; checked against the default
    :class:`solver.service.limits.Limits` first).

    Never evaluates code; malformed input raises ProtocolError naming the field.

    >>> s = from_json({"format": "symshape.problem", "version": 1,
    ...                "symbols": [{"name": "n", "lo": 0, "hi": 4}]})
    >>> [i.symbol.name for i in s.symbols]
    ['n']
    """
    if isinstance(data, Mapping):
        check_problem_data(data, DEFAULT_LIMITS)
        return restore(Problem.from_dict(data), Solver(rlimit=rlimit, enum_limit=enum_limit))
    return restore(loads(data), Solver(rlimit=rlimit, enum_limit=enum_limit))