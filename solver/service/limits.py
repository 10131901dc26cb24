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

import ctypes

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

from solver.errors import LimitError, TimeLimitError
from solver.kernel.smt import Deadline

__all__ = ["Limits", "DEFAULT_LIMITS", "check_int", "check_count", "check_problem_data",
           "time_limit", "z3_seconds", "Z3_MARGIN"]

Z3_MARGIN = 1.0  # seconds (at most a quarter of the limit) between the Z3 deadline and the timer


@dataclass(frozen=True, slots=True)
class Limits:
    """The budgets of one ``serve`` session or ``replay`` (all configurable).

    ``time_limit`` is in seconds per request (``None``: no limit); Z3 queries stop before it
    (a deadline, on any thread) and Python code is interrupted at it (a ``SIGALRM`` timer,
    only when requests run on the main thread of a POSIX process).
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
def time_limit(seconds: float | None, what: str = "the request",
               deadline: Deadline | None = None) -> Iterator[None]:
    """Bound the block by ``seconds`` of wall time.

    Two guards: ``deadline`` (the Z3 deadline of the solvers at work, when given) stops
    every Z3 query :func:`z3_seconds` after entry, so native Z3 code, which no signal can
    interrupt, ends first and answers ``unknown`` (sound); and a ``SIGALRM`` timer raises
    :class:`TimeLimitError` in Python code after ``seconds``. The timer is a no-op for
    ``None``, off the main thread, or where ``signal.setitimer`` is missing; it fires again
    every 0.2 s until the block ends, in case the interruption was swallowed on the way.

    >>> from solver.kernel.smt import Deadline
    >>> d = Deadline()
    >>> with time_limit(5.0, deadline=d):
    ...     0 < d.timeout_ms() <= 4_000
    True
    """
    z3_end = (deadline or Deadline()).within(z3_seconds(seconds))
    with z3_end:
        if seconds is None or threading.current_thread() is not threading.main_thread() \
                or not hasattr(signal, "setitimer"):
            yield
            return
        with _alarm(seconds, what):
            yield


def z3_seconds(seconds: float | None) -> float | None:
    """The Z3 deadline within a time limit: up to a second earlier, so that the request can
    still answer (soundly ``unknown``) before the timer interrupts it.

    >>> z3_seconds(8.0), z3_seconds(2.0), z3_seconds(None)
    (7.0, 1.5, None)
    """
    return None if seconds is None else seconds - min(Z3_MARGIN, seconds / 4)


@contextmanager
def _alarm(seconds: float, what: str) -> Iterator[None]:
    """The ``SIGALRM`` guard of :func:`time_limit` (main thread, POSIX)."""
    armed, fired = [True], [False]

    def fire(signum: int, frame: FrameType | None) -> None:
        if armed[0]:
            fired[0] = True
            raise _Expired

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.2)
    try:
        yield
    except _Expired:
        _disarm(armed, previous)
        raise TimeLimitError(f"{what} ran past the time limit of {seconds:g} s and was "
                             "interrupted") from None
    except ctypes.ArgumentError as e:  # the timer fired while ctypes converted a Z3 argument
        if not (fired[0] and "_Expired" in str(e)):
            raise
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
