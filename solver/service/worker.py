"""``serve`` with a hard wall-clock guard: the session lives in a worker process.

Z3 does not check its time limit everywhere (a nonlinear query over huge constants can run
for seconds past its ``timeout``), and no signal interrupts native code. So the command line
runs the :class:`~solver.service.protocol.Session` in a forked worker process and waits for each
answer at most the time limit plus :data:`GRACE`. A late worker is stopped (its answer
abandoned: sound, nothing it concluded is used), the request answers ``TimeLimitError``, and a
new worker replays the *journal*: the request lines that changed the session and succeeded
(``new``, ``symbol``, ``assume``, ``guard``, ``load``; a ``new`` or ``load`` starts the journal
over). The replay runs in the background within ``Limits.rebuild_time_limit``: a request that
arrives meanwhile waits for it within its own time limit, or answers ``TimeLimitError``
without being run. Should the replay fail or run past its limit, the session is reset to an
empty solver and the next response carries a ``notice``. (A request interrupted inside the
worker by the time limit is rebuilt by the worker's own session, the same way.)

Only where ``fork`` exists (POSIX); :func:`serve_guarded` falls back to the in-process
:func:`solver.service.protocol.serve` elsewhere, or without a time limit.

>>> GRACE
1.0
>>> _journal_op('{"id": 1, "op": "assume", "rel": "n >= 1"}'), _journal_op("not json")
('assume', None)
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection
from typing import Any, TextIO, TypeVar

from solver.errors import TimeLimitError
from solver.service.limits import DEFAULT_LIMITS, Limits
from solver.service.protocol import Session, serve

__all__ = ["GRACE", "JOURNALED_OPS", "available", "serve_guarded", "GuardedSession", "call_bounded"]

GRACE = 1.0
"""Seconds past the time limit before a worker that has not answered is stopped."""
JOURNALED_OPS = frozenset({"new", "symbol", "assume", "guard", "load"})
_RESTARTING_OPS = frozenset({"new", "load"})
T = TypeVar("T")


def available() -> bool:
    """Whether worker processes can be forked here."""
    return "fork" in multiprocessing.get_all_start_methods()


def _journal_op(line: str) -> str | None:
    """The op of a request line that belongs in the journal, if it does."""
    try:
        request = json.loads(line)
    except ValueError:
        return None
    op = request.get("op") if isinstance(request, dict) else None
    return op if isinstance(op, str) and op in JOURNALED_OPS else None


def _work(conn: Connection, limits: Limits, options: dict[str, int]) -> None:
    """The worker's loop: ``("line", text)`` -> the response; ``("replay", lines)`` -> the
    first failure (a message) or None; ``("settle", None)`` -> None once rebuilt."""
    session = Session(limits=limits, **options)
    while True:
        try:
            kind, payload = conn.recv()
        except EOFError:
            return
        if kind == "line":
            conn.send(session.handle_line(payload))
        elif kind == "replay":
            conn.send(_replay(session, payload))
        else:
            session.settle()
            conn.send(None)


def _replay(session: Session, lines: list[str]) -> str | None:
    for i, line in enumerate(lines):
        response = session.handle_line(line)
        if "error" in response:
            return f"replaying request {i + 1} of the journal failed: {response['error']['type']}"
    return None


class _Worker:
    """One forked worker process and its pipe."""

    def __init__(self, limits: Limits, options: dict[str, int]) -> None:
        ctx = multiprocessing.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_work, args=(child, limits, options), daemon=True)
        self.proc.start()
        child.close()

    def ask(self, kind: str, payload: object, seconds: float | None) -> tuple[bool, Any]:
        """Send a message; ``(True, reply)``, or ``(False, None)`` when late or dead."""
        try:
            self.conn.send((kind, payload))
            if seconds is not None and not self.conn.poll(seconds):
                return False, None
            return True, self.conn.recv()
        except (EOFError, OSError):
            return False, None

    def stop(self) -> None:
        self.proc.kill()
        self.proc.join()
        self.conn.close()


class GuardedSession:
    """A :class:`~solver.service.protocol.Session` in a worker process, stopped when late.

    ``handle_line`` answers within ``limits.time_limit + GRACE`` seconds, whatever the
    request. After a stopped request, a new worker replays the journal while the next
    requests wait for it (within their own time), or answer ``TimeLimitError`` (not run)
    while it is still busy.
    """

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, **options: int) -> None:
        if limits.time_limit is None:
            raise ValueError("a GuardedSession needs a time limit")
        self.limits = limits
        self.options = dict(options)
        self.journal: list[str] = []
        self._worker = _Worker(limits, self.options)
        self._busy_since: float | None = None  # a rebuild is running in the worker
        self._notice: str | None = None

    @property
    def time_limit(self) -> float:
        assert self.limits.time_limit is not None  # checked in __init__
        return self.limits.time_limit

    def handle_line(self, line: str) -> dict[str, Any]:
        start = time.monotonic()
        if not self._await_rebuild(self.time_limit):
            return self._respond(_error(line, "the session's solver is still being rebuilt after a "
                                        "stopped request; this request was not run: send it again"))
        allowance = max(self.time_limit + GRACE - (time.monotonic() - start), GRACE)
        answered, response = self._worker.ask("line", line, allowance)
        if not answered:
            self._restart()
            self._begin_rebuild("replay", self.journal)
            response = _error(line, f"the request ran past the time limit of {self.time_limit:g} s and "
                              "was stopped; the solver is rebuilt from its record before the next request")
        elif "error" not in response:
            self._record(line)
        elif response["error"]["type"] == TimeLimitError.__name__:
            self._begin_rebuild("settle", None)  # the worker's session rebuilds itself
        return self._respond(response)

    def settle(self) -> None:
        """Wait for a running rebuild to end (at most ``limits.rebuild_time_limit``)."""
        while not self._await_rebuild(self.time_limit):
            pass

    def close(self) -> None:
        self._worker.stop()

    def _begin_rebuild(self, kind: str, payload: object) -> None:
        self._worker.conn.send((kind, payload))
        self._busy_since = time.monotonic()

    def _await_rebuild(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a running rebuild; True when none runs any more."""
        if self._busy_since is None:
            return True
        limit = self.limits.rebuild_time_limit
        left = None if limit is None else limit + GRACE - (time.monotonic() - self._busy_since)
        wait = seconds if left is None else max(0.0, min(seconds, left))
        try:
            done = self._worker.conn.poll(wait)
            failure = self._worker.conn.recv() if done else None
        except (EOFError, OSError):
            done, failure = True, "the worker process died"
        if not done and (left is None or left > wait):
            return False
        self._busy_since = None
        if not done or failure is not None:
            self._reset(failure or f"rebuilding the solver ran past {limit:g} s")
        return True

    def _reset(self, why: str) -> None:
        self._restart()
        self.journal = []
        self._notice = f"{why}; the session's solver was reset to an empty one"

    def _respond(self, response: dict[str, Any]) -> dict[str, Any]:
        if self._notice is not None:
            response = {**response, "notice": self._notice}
            self._notice = None
        return response

    def _restart(self) -> None:
        self._worker.stop()
        self._worker = _Worker(self.limits, self.options)

    def _record(self, line: str) -> None:
        op = _journal_op(line)
        if op in _RESTARTING_OPS:
            self.journal = [line]
        elif op is not None:
            self.journal.append(line)


def _error(line: str, message: str) -> dict[str, Any]:
    return {"id": _request_id(line), "error": {"type": TimeLimitError.__name__, "message": message}}


def _request_id(line: str) -> object:
    try:
        request = json.loads(line)
    except ValueError:
        return None
    rid = request.get("id") if isinstance(request, dict) else None
    return rid if rid is None or (isinstance(rid, (int, str)) and not isinstance(rid, bool)) else None


def serve_guarded(lines: Iterable[str], out: TextIO, *, limits: Limits = DEFAULT_LIMITS, **options: int) -> int:
    """:func:`solver.service.protocol.serve` with every request in a worker process (see the module
    docstring); the in-process server where fork is missing or without a time limit."""
    if not available() or limits.time_limit is None:
        return serve(lines, out, limits=limits, **options)
    session = GuardedSession(limits=limits, **options)
    count = 0
    try:
        for line in lines:
            if not line.strip():
                continue
            out.write(json.dumps(session.handle_line(line)) + "\n")
            out.flush()
            count += 1
    finally:
        session.close()
    return count


def call_bounded(fn: Callable[[], T], seconds: float | None, what: str) -> T:
    """``fn()`` in a worker process, stopped after ``seconds`` (+ :data:`GRACE`) with a
    :class:`TimeLimitError`; its exception, if it raises, is raised here. In-process where
    fork is missing or for ``None``.

    >>> call_bounded(lambda: sum(range(10)), 5.0, "the sum")
    45
    """
    if seconds is None or not available():
        return fn()
    ctx = multiprocessing.get_context("fork")
    conn, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_call, args=(fn, child), daemon=True)
    proc.start()
    child.close()
    try:
        if not conn.poll(seconds + GRACE):
            raise TimeLimitError(f"{what} ran past the time limit of {seconds:g} s and was stopped")
        ok, value = conn.recv()
    except EOFError:
        raise TimeLimitError(f"{what} ended without an answer (the worker process died)") from None
    finally:
        proc.kill()
        proc.join()
        conn.close()
    if not ok:
        raise value
    return value


def _call(fn: Callable[[], object], conn: Connection) -> None:
    try:
        conn.send((True, fn()))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        conn.send((False, exc))
