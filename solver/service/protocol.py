"""JSON problems and answers, replay, and the JSON-lines ``serve`` session.

A *problem* (``{"format": "symshape.problem", "version": 1, ...}``, see
:mod:`solver.service.codec` and ``docs/protocol.md``) records what a solver was told; its *answers*
(``{"format": "symshape.answers", ...}``) are what the solver concluded: the answer to each
guard, the final bounds, classes, relations, congruences and violations. Replaying a problem
reproduces its answers.

>>> import sympy
>>> s = Solver()
>>> n = s.symbol("n", 1, 16, hint=8)
>>> s.guard(sympy.Ge(n, 2), True)
True
>>> problem = problem_from_solver(s)
>>> problem["guards"]
[{'rel': 'n >= 2', 'hint': True, 'reason': {'kind': 'guard', 'text': 'n >= 2', 'origin': None, 'op': None}}]
>>> answers = replay(problem)
>>> answers["guards"], answers["bounds"]
([{'rel': 'n >= 2', 'hint': True, 'result': True, 'decided': 'unknown'}], {'n': [2, 16]})
>>> [v["rel"] for v in answers["violations"]]
['n >= 2']
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

import sympy

from shapes.errors import ShapesError
from shapes.printing import to_text
from solver.service import codec
from solver.service.check import check_request
from solver.engine import Solver
from solver.errors import LimitError, ProtocolError, SolverError, TimeLimitError
from solver.service.limits import DEFAULT_LIMITS, Limits, check_count, check_int, check_problem_data, time_limit
from solver.service.problem import (
    Problem,
    decode_symbol,
    describe_json,
    load_json,
    optional_bool,
    parse_expression,
    parse_relation,
    reason_from_dict,
    reason_to_dict,
)
from solver.records import Violation
from solver.kernel.smt import Deadline
from solver.truth import DECLARED, Fact, Reason, Truth

__all__ = [
    "ANSWERS_FORMAT",
    "ANSWERS_VERSION",
    "SERVE_OPS",
    "problem_from_solver",
    "solver_from_problem",
    "answers_from_solver",
    "replay",
    "Session",
    "serve",
]

ANSWERS_FORMAT = "symshape.answers"
ANSWERS_VERSION = 1
SERVE_OPS = ("new", "symbol", "assume", "guard", "decide", "bounds", "explain", "classes",
             "relations", "congruences", "violations", "problem", "answers", "load", "check")
"""The request ops of :class:`Session`, in documentation order."""


# -- problems ----------------------------------------------------------------------------------
def problem_from_solver(s: Solver) -> dict[str, Any]:
    """The JSON data of the problem a solver was told (symbols, facts, guard stream)."""
    return codec.capture(s).to_dict()


def solver_from_problem(obj: object, *, limits: Limits = DEFAULT_LIMITS,
                        deadline: Deadline | None = None, **options: int) -> Solver:
    """Validate a problem (JSON data) within ``limits`` and replay it into a new
    ``Solver(deadline=deadline, **options)``. (The time limit is the caller's: see
    :func:`solver.service.limits.time_limit`, which moves ``deadline``.)

    >>> s = solver_from_problem({"format": "symshape.problem", "version": 1,
    ...                          "symbols": [{"name": "n", "lo": 0, "hi": 4}]})
    >>> [i.symbol.name for i in s.symbols]
    ['n']
    """
    check_problem_data(obj, limits)
    return codec.restore(Problem.from_dict(obj), Solver(deadline=deadline, **options))


# -- answers -----------------------------------------------------------------------------------
def answers_from_solver(s: Solver) -> dict[str, Any]:
    """What a solver concluded, as JSON data (deterministic for a given problem)."""
    guards = [_guard_answer(g.rel, g.hint, g.result, g.decided) for g in s.guards]
    violations = s.violations()
    return {
        "format": ANSWERS_FORMAT,
        "version": ANSWERS_VERSION,
        "guards": guards,
        "bounds": {i.symbol.name: list(s.bounds(i.symbol)) for i in s.symbols},
        "classes": _classes(s),
        "relations": [to_text(r) for r in s.relations()],
        "congruences": _congruences(s),
        "violations": [_violation(v) for v in violations],
        "stats": _stats(s, guards, len(violations)),
    }


def replay(obj: object, *, limits: Limits = DEFAULT_LIMITS, deadline: Deadline | None = None,
           **options: int) -> dict[str, Any]:
    """Replay a problem (JSON data) and return its answers.

    >>> replay({"format": "symshape.problem", "version": 1,
    ...         "symbols": [{"name": "a", "lo": 1, "hi": 9}, {"name": "b", "lo": 1, "hi": 9}],
    ...         "facts": [{"rel": "b == 2 * a"}]})["bounds"]
    {'a': [1, 4], 'b': [2, 8]}
    """
    return answers_from_solver(solver_from_problem(obj, limits=limits, deadline=deadline, **options))


def _guard_answer(rel: sympy.Basic, hint: bool | None, result: bool, decided: Truth) -> dict[str, Any]:
    return {"rel": to_text(rel), "hint": hint, "result": result, "decided": decided.value}


def _classes(s: Solver) -> list[list[str]]:
    return [[sym.name for sym in group] for group in s.classes()]


def _congruences(s: Solver) -> list[dict[str, Any]]:
    return [{"symbol": root.name, "modulus": m, "residue": r} for root, m, r in s.congruences()]


def _fact(f: Fact) -> dict[str, Any]:
    return {"rel": to_text(f.rel), "reason": reason_to_dict(f.reason), "index": f.index}


def _violation(v: Violation) -> dict[str, Any]:
    return {"rel": to_text(v.fact.rel), "reason": reason_to_dict(v.fact.reason),
            "truth_under_spec": v.truth_under_spec.value}


def _stats(s: Solver, guards: list[dict[str, Any]], n_violations: int) -> dict[str, Any]:
    decided = {t.value: sum(g["decided"] == t.value for g in guards) for t in Truth}
    return {
        "symbols": len(s.symbols),
        "facts": sum(f.reason.op != DECLARED for f in s.facts),
        "guards": len(guards),
        "guards_decided": decided,
        "violations": n_violations,
    }


# -- the serve session -------------------------------------------------------------------------
_REQUEST_FIELDS: Mapping[str, tuple[str, ...]] = {
    "new": ("rlimit", "enum_limit"),
    "symbol": ("name", "lo", "hi", "hint", "source"),
    "assume": ("rel", "reason"),
    "guard": ("rel", "hint", "reason"),
    "decide": ("rel",),
    "bounds": ("expr",),
    "explain": ("rel",),
    "load": ("problem",),
    "check": ("contract", "shapes"),
}


_DISCARDING_OPS: Mapping[str, int] = {"new": 2, "load": 2, "violations": 1, "answers": 1}
"""Ops that drop a solver (the session's, or a spec-only replica), with the ``gc`` generation
to collect afterwards. A solver's state holds reference cycles, so without a collection its
Z3 context (tens of MiB of native memory, invisible to the collector's thresholds) would
live on until some later full collection: the server's memory grew by ~25 MiB per dropped
solver. Replicas are young (generation 1 suffices); a replaced session solver is old."""


class Session:
    """One ``serve`` conversation: a current solver; a request in, a response out.

    Every request runs within the session's :class:`~solver.service.limits.Limits`. Its Z3 queries
    stop shortly before the time limit (the session's :class:`~solver.kernel.smt.Deadline`, shared
    by every solver it builds), so a request stuck in Z3 still answers, soundly
    (``unknown``, or looser bounds). A request that fails changes nothing it had not
    recorded; one interrupted by the time limit in Python code (or by a bug) answers at
    once, and the solver is rebuilt from its record before the next request (:meth:`settle`;
    :func:`serve` calls it right after answering), so the state is always what the
    ``problem`` op shows and what a replay of it gives. Should the rebuild itself run past
    ``Limits.rebuild_time_limit``, the solver is reset to an empty one and the next response
    carries a ``notice`` saying so.

    >>> session = Session()
    >>> session.handle_line('{"id": 1, "op": "symbol", "name": "n", "lo": 2, "hi": 8}')
    {'id': 1, 'symbol': 'n'}
    >>> session.handle_line('{"id": 2, "op": "decide", "rel": "n >= 1"}')
    {'id': 2, 'truth': 'true'}
    >>> session.handle_line('{"id": 3, "op": "decide", "rel": "m >= 1"}')["error"]["type"]
    'ProtocolError'
    >>> session.handle_line('{"id": 4, "op": "decide", "rel": "(n ** 64) ** 64 >= 1"}')["error"]["type"]
    'LimitError'
    """

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, **options: int) -> None:
        self.options = dict(options)
        self.limits = limits
        self.deadline = Deadline()
        self.solver = self._new_solver()
        self._stale = False  # a request was interrupted: rebuild before the next one
        self._notice: str | None = None  # for the next response

    def handle_line(self, line: str) -> dict[str, Any]:
        """Answer one JSON request line; never raises for bad input."""
        try:
            if len(line) > self.limits.max_request_chars:
                raise LimitError(f"request: {len(line)} characters exceed the limit of "
                                 f"{self.limits.max_request_chars} per line")
            request = load_json(line, "request")
        except ProtocolError as exc:
            return _error(None, exc)
        return self.handle(request)

    def handle(self, request: object) -> dict[str, Any]:
        """Answer one decoded request: ``{"id": ..., <result fields>}`` or ``{"id", "error"}``,
        plus ``notice`` when the solver had to be reset since the last response."""
        self.settle()
        response = self._answer(request)
        if self._notice is not None:
            response["notice"], self._notice = self._notice, None
        return response

    def settle(self) -> None:
        """Rebuild the solver from its record if a request was interrupted (a no-op else)."""
        if self._stale:
            self._stale = False
            self._rebuild()

    def _answer(self, request: object) -> dict[str, Any]:
        rid = request.get("id") if isinstance(request, dict) else None
        try:
            op = _request_op(request)
            assert isinstance(request, dict)  # _request_op raised ProtocolError otherwise
            _check_fields(request, op)
            with time_limit(self.limits.time_limit, deadline=self.deadline):
                body = getattr(self, f"_op_{op}")(request)
            if op in _DISCARDING_OPS:
                gc.collect(_DISCARDING_OPS[op])
        except TimeLimitError as exc:
            return _error(rid, TimeLimitError(f"{exc}; {self._recover()}"))
        except (SolverError, ShapesError) as exc:
            return _error(rid, exc)
        except ZeroDivisionError as exc:  # a symbolic divisor that is 0 for admissible values
            return _error(rid, ProtocolError(f"division by zero: a divisor in the request can be 0 "
                                             f"for admissible values ({exc}); {self._recover()}"))
        except Exception as exc:  # noqa: BLE001 - a server reports its bugs and keeps going
            return _error(rid, SolverError(f"{type(exc).__name__}: {exc}; {self._recover()}"),
                          "InternalError")
        return {"id": rid, **body}

    def _recover(self) -> str:
        """Mark the solver for a rebuild from its record (after an interrupted request)."""
        self._stale = True
        return "the solver is rebuilt from its record before the next request"

    def _rebuild(self) -> None:
        try:
            with time_limit(self.limits.rebuild_time_limit, "rebuilding the solver", self.deadline):
                record = codec.capture(self.solver)
                self.solver = codec.restore(record, self._new_solver())
            gc.collect()
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, never keep a damaged solver
            self.solver = self._new_solver()
            self.reset(f"the solver could not be rebuilt from its record after an interrupted "
                       f"request ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")

    def reset(self, why: str) -> None:
        """Replace the solver by an empty one; the next response carries a ``notice``."""
        self.solver = self._new_solver()
        self._stale = False
        self._notice = f"{why}; the session's solver was reset to an empty one"

    # helpers
    def _new_solver(self) -> Solver:
        return Solver(deadline=self.deadline, **self.options)

    def _names(self) -> dict[str, sympy.Symbol]:
        return {i.symbol.name: i.symbol for i in self.solver.symbols}

    def _rel(self, request: Mapping[str, Any]) -> sympy.Basic:
        if "rel" not in request:
            raise ProtocolError("rel: missing")
        return parse_relation(request["rel"], self._names(), "rel")

    def _reason(self, request: Mapping[str, Any], default: Reason) -> Reason:
        reason = reason_from_dict(request["reason"]) if "reason" in request else default
        if reason.op == DECLARED:
            raise ProtocolError(f'reason.op: "{DECLARED}" is reserved for the ranges of '
                                'op "symbol"; declare the range there')
        return reason

    def _room_for_fact(self) -> None:
        facts = sum(f.reason.op != DECLARED for f in self.solver.facts)
        check_count(facts + 1, self.limits.max_facts, "facts", "facts")
        check_count(len(self.solver.guards) + 1, self.limits.max_guards, "guards", "guards")

    # ops (one method per entry of SERVE_OPS)
    def _op_new(self, r: Mapping[str, Any]) -> dict[str, Any]:
        self.options = {k: _positive_int(r[k], k) for k in ("rlimit", "enum_limit") if k in r}
        self.solver = self._new_solver()
        return {"ok": True}

    def _op_symbol(self, r: Mapping[str, Any]) -> dict[str, Any]:
        spec = decode_symbol(r, "", ("id", "op"))
        for field in ("lo", "hi", "hint"):
            check_int(getattr(spec, field), field, self.limits)
        check_count(len(self.solver.symbols) + 1, self.limits.max_symbols, "symbols", "symbols")
        self.solver.symbol(spec.name, spec.lo, spec.hi, hint=spec.hint, source=spec.source, adapts=spec.adapts)
        return {"symbol": spec.name}

    def _op_assume(self, r: Mapping[str, Any]) -> dict[str, Any]:
        rel = self._rel(r)
        self._room_for_fact()
        self.solver.assume(rel, self._reason(r, Reason.spec(r["rel"])))
        return {"ok": True}

    def _op_guard(self, r: Mapping[str, Any]) -> dict[str, Any]:
        rel = self._rel(r)
        hint = optional_bool(r.get("hint"), "hint")
        self._room_for_fact()
        result = self.solver.guard(rel, hint, self._reason(r, Reason.guard(r["rel"])))
        g = self.solver.guards[-1]
        return {"result": result, "decided": g.decided.value}

    def _op_decide(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"truth": self.solver.decide(self._rel(r)).value}

    def _op_bounds(self, r: Mapping[str, Any]) -> dict[str, Any]:
        if "expr" not in r:
            raise ProtocolError("expr: missing")
        lo, hi = self.solver.bounds(parse_expression(r["expr"], self._names(), "expr"))
        return {"lo": lo, "hi": hi}

    def _op_explain(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"facts": [_fact(f) for f in self.solver.explain(self._rel(r))]}

    def _op_classes(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"classes": _classes(self.solver)}

    def _op_relations(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"relations": [to_text(rel) for rel in self.solver.relations()]}

    def _op_congruences(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"congruences": _congruences(self.solver)}

    def _op_violations(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"violations": [_violation(v) for v in self.solver.violations()]}

    def _op_problem(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"problem": problem_from_solver(self.solver)}

    def _op_answers(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"answers": answers_from_solver(self.solver)}

    def _op_load(self, r: Mapping[str, Any]) -> dict[str, Any]:
        if "problem" not in r:
            raise ProtocolError("problem: missing")
        check_problem_data(r["problem"], self.limits)
        problem = Problem.from_dict(r["problem"])
        self.solver = codec.restore(problem, self._new_solver())
        return {"ok": True, "symbols": len(problem.symbols), "facts": len(problem.facts),
                "guards": len(problem.guards)}

    def _op_check(self, r: Mapping[str, Any]) -> dict[str, Any]:
        """Sizes against a program's shape contract (:mod:`solver.service.check`); the solver is untouched."""
        return check_request(r, self.limits)


def _request_op(request: object) -> str:
    if not isinstance(request, dict):
        raise ProtocolError(f"request: expected an object, got {describe_json(request)}")
    rid = request.get("id")
    if rid is not None and (isinstance(rid, (bool, dict, list, float))):
        raise ProtocolError(f"id: expected an int, a string or null, got {describe_json(rid)}")
    op = request.get("op")
    if op not in SERVE_OPS:
        got = "missing" if "op" not in request else f"unknown op {describe_json(op)}"
        raise ProtocolError(f"op: {got} (expected one of {', '.join(SERVE_OPS)})")
    return op


def _check_fields(request: Mapping[str, Any], op: str) -> None:
    allowed = ("id", "op", *_REQUEST_FIELDS.get(op, ()))
    for key in request:
        if key not in allowed:
            raise ProtocolError(f"{key}: unknown field for op {json.dumps(op)} "
                                f"(expected {', '.join(allowed)})")


def _positive_int(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ProtocolError(f"{path}: expected a positive int, got {describe_json(value)}")
    return value


def _error(rid: object, exc: Exception, kind: str | None = None) -> dict[str, Any]:
    return {"id": rid, "error": {"type": kind or type(exc).__name__, "message": str(exc)}}


def serve(lines: Iterable[str], out: TextIO, *, limits: Limits = DEFAULT_LIMITS, **options: int) -> int:
    """Answer JSON-lines requests from ``lines`` on ``out`` (one line each, flushed).

    Blank lines are skipped; returns the number of requests answered.

    >>> import io
    >>> out = io.StringIO()
    >>> serve(['{"id": 1, "op": "classes"}', '', 'oops'], out)
    2
    >>> print(out.getvalue().splitlines()[0])
    {"id": 1, "classes": []}
    """
    session = Session(limits=limits, **options)
    count = 0
    for line in lines:
        if not line.strip():
            continue
        out.write(json.dumps(session.handle_line(line)) + "\n")
        out.flush()
        session.settle()  # a rebuild after an interrupted request, once its answer is out
        count += 1
    return count
