"""Budgets of the service: per problem, per request, per second.

A client of ``python -m solver serve`` / ``replay`` may send anything. Every request and
every loaded problem is held to :class:`Limits` (documented in ``docs/protocol.md``,
*Budgets*): counts of symbols, facts and guards, the magnitude of integers (far beyond any
tensor size), the length of a request line, and a wall-clock time limit per request. The
expression budget (total degree, expanded size, literals up to ``2**64``) is the parser's,
:mod:`shapes.budget`. A budget exceeded is a :class:`~solver.errors.LimitError` (or a
:class:`~solver.errors.TimeLimitError`), never a stall.

>>> check_int(2**70, "symbols[0].hi", DEFAULT_LIMITS)
Traceback (most recent call last):
...
solver.errors.LimitError: symbols[0].hi: integer of 71 bits exceeds the limit of 2**64 (beyond any tensor size)
>>> check_problem_data({"symbols": [{"name": "n"}] * 3}, Limits(max_symbols=2))
Traceback (most recent call last):
...
solver.errors.LimitError: symbols: 3 symbols exceed the limit of 2 per problem
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

import z3

from solver.errors import LimitError, TimeLimitError

__all__ = ["Limits", "DEFAULT_LIMITS", "check_int", "check_count", "check_problem_data",
           "time_limit", "bound_z3_queries"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The budgets of one ``serve`` session or ``replay`` (all configurable).

    ``time_limit`` is in seconds per request (``None``: no limit); it is enforced with a
    ``SIGALRM`` timer, so only when requests run on the main thread of a POSIX process.
    ``rebuild_time_limit`` bounds the replay of a session's record after an interrupted
    request (past it, the session's solver is reset to an empty one).
    """

    max_symbols: int = 10_000
    max_facts: int = 20_000
    max_guards: int = 100_000
    max_int_bits: int = 64
    max_request_chars: int = 64 * 2**20
    time_limit: float | None = 8.0
    rebuild_time_limit: float | None = 60.0


DEFAULT_LIMITS = Limits()


def check_int(value: object, path: str, limits: Limits) -> None:
    """Refuse an int beyond ``2**limits.max_int_bits`` in magnitude (other values pass)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**limits.max_int_bits:
        raise LimitError(f"{path}: integer of {abs(value).bit_length()} bits exceeds the limit of "
                         f"2**{limits.max_int_bits} (beyond any tensor size)")


def check_count(count: int, limit: int, path: str, what: str) -> None:
    """Refuse ``count`` items past ``limit``."""
    if count > limit:
        raise LimitError(f"{path}: {count} {what} exceed the limit of {limit} per problem")


def check_problem_data(obj: object, limits: Limits) -> None:
    """Check the budgets of a problem's raw JSON data, before any of it is decoded.

    Malformed parts are left alone (the decoder names them); this only refuses sizes.
    """
    if not isinstance(obj, dict):
        return
    for key, limit in (("symbols", limits.max_symbols), ("facts", limits.max_facts),
                       ("guards", limits.max_guards)):
        entries = obj.get(key)
        if isinstance(entries, list):
            check_count(len(entries), limit, key, key)
    symbols = obj.get("symbols")
    for i, entry in enumerate(symbols if isinstance(symbols, list) else ()):
        if isinstance(entry, dict):
            for field in ("lo", "hi", "hint"):
                check_int(entry.get(field), f"symbols[{i}].{field}", limits)


class _Expired(BaseException):
    """Raised by the timer inside the interrupted code; a BaseException so that no
    ``except Exception`` on the way swallows it."""


@contextmanager
def time_limit(seconds: float | None, what: str = "the request") -> Iterator[None]:
    """Interrupt the block with :class:`TimeLimitError` after ``seconds`` of wall time.

    A no-op for ``None``, off the main thread, or where ``signal.setitimer`` is missing.
    The timer fires again every 0.2 s until the block ends, in case the interruption was
    swallowed on the way.

    >>> with time_limit(5.0):
    ...     sum(range(10))
    45
    """
    if seconds is None or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield
        return
    armed = [True]

    def fire(signum: int, frame: FrameType | None) -> None:
        if armed[0]:
            raise _Expired

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.2)
    try:
        yield
    except _Expired:
        _disarm(armed, previous)
        raise TimeLimitError(f"{what} ran past the time limit of {seconds:g} s and was "
                             "interrupted") from None
    finally:
        _disarm(armed, previous)


def _disarm(armed: list[bool], previous: signal.Handlers | int | object) -> None:
    """Stop the timer and restore the previous handler (idempotent; a late firing retries)."""
    while True:
        try:
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)  # type: ignore[arg-type]
            return
        except _Expired:
            continue


def bound_z3_queries(seconds: float | None) -> None:
    """Bound every Z3 query of this process by ``seconds`` of wall time (Z3's global
    ``timeout`` parameter; ``None`` leaves it alone).

    A command-line entry point calls this once: the time limit cannot interrupt native Z3
    code (a signal is handled when the call returns), so the queries stop themselves. The
    engine reads a stopped query as "unknown", which is always sound. Answers then depend on
    the machine's speed, but only for queries that already exhausted Z3's resource limit.
    """
    if seconds is not None:
        z3.set_param("timeout", max(1, int(seconds * 1000)))
