"""``serve`` with a hard wall-clock guard: the session lives in a worker process.

Z3 does not check its time limit everywhere (a nonlinear query over huge constants can run
for seconds past its ``timeout``), and no signal interrupts native code. So the command line
runs the :class:`~solver.protocol.Session` in a forked worker process and waits for each
answer at most the time limit plus :data:`GRACE`. A late worker is stopped (its answer
abandoned: sound, nothing it concluded is used), the request answers ``TimeLimitError``, and a
new worker replays the *journal*: the request lines that changed the session and succeeded
(``new``, ``symbol``, ``assume``, ``guard``, ``load``; a ``new`` or ``load`` starts the journal
over). The replay runs after the answer is written, within ``Limits.rebuild_time_limit``;
past it, the session is reset to an empty solver and the next response carries a
``notice``.

Only where ``fork`` exists (POSIX); :func:`serve_guarded` falls back to the in-process
:func:`solver.protocol.serve` elsewhere, or without a time limit.

>>> GRACE
1.0
>>> _journal_op('{"id": 1, "op": "assume", "rel": "n >= 1"}'), _journal_op("not json")
('assume', None)
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection
from typing import Any, TextIO, TypeVar

from solver.errors import TimeLimitError
from solver.limits import DEFAULT_LIMITS, Limits
from solver.protocol import Session, serve

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
    """A :class:`~solver.protocol.Session` in a worker process, restarted when late.

    ``handle_line`` answers within ``limits.time_limit + GRACE`` seconds, whatever the
    request; ``settle`` does the deferred work (a rebuild) once an answer is out.
    """

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, **options: int) -> None:
        self.limits = limits
        self.options = dict(options)
        self.journal: list[str] = []
        self._worker = _Worker(limits, self.options)
        self._pending: str | None = None  # "replay" or "settle"
        self._notice: str | None = None

    def handle_line(self, line: str) -> dict[str, Any]:
        self.settle()
        wait = None if self.limits.time_limit is None else self.limits.time_limit + GRACE
        answered, response = self._worker.ask("line", line, wait)
        if not answered:
            self._restart()
            self._pending = "replay"
            response = {"id": _request_id(line), "error": {
                "type": TimeLimitError.__name__,
                "message": f"the request ran past the time limit of {self.limits.time_limit:g} s "
                           "and was stopped; the solver is rebuilt from its record before the next request"}}
        elif "error" not in response:
            self._record(line)
        elif response["error"]["type"] == TimeLimitError.__name__:
            self._pending = "settle"
        if self._notice is not None:
            response["notice"], self._notice = self._notice, None
        return dict(response)

    def settle(self) -> None:
        """Rebuild after an interrupted request (bounded by ``limits.rebuild_time_limit``)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        wait = None if self.limits.rebuild_time_limit is None else self.limits.rebuild_time_limit + GRACE
        answered, failure = self._worker.ask(pending, self.journal if pending == "replay" else None, wait)
        if answered and failure is None:
            return
        self._restart()
        self.journal = []
        why = failure or f"rebuilding the solver ran past {self.limits.rebuild_time_limit} s"
        self._notice = f"{why}; the session's solver was reset to an empty one"

    def close(self) -> None:
        self._worker.stop()

    def _restart(self) -> None:
        self._worker.stop()
        self._worker = _Worker(self.limits, self.options)

    def _record(self, line: str) -> None:
        op = _journal_op(line)
        if op in _RESTARTING_OPS:
            self.journal = [line]
        elif op is not None:
            self.journal.append(line)


def _request_id(line: str) -> object:
    try:
        request = json.loads(line)
    except ValueError:
        return None
    rid = request.get("id") if isinstance(request, dict) else None
    return rid if rid is None or (isinstance(rid, (int, str)) and not isinstance(rid, bool)) else None


def serve_guarded(lines: Iterable[str], out: TextIO, *, limits: Limits = DEFAULT_LIMITS, **options: int) -> int:
    """:func:`solver.protocol.serve` with every request in a worker process (see the module
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
            session.settle()
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
    return value  # type: ignore[no-any-return]


def _call(fn: Callable[[], object], conn: Connection) -> None:
    try:
        conn.send((True, fn()))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        conn.send((False, exc))
