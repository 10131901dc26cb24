"""Problems as data: the records of what a solver was told, and their versioned JSON.

A *problem* is a solver's symbols, its facts (with reasons) and the ordered guard stream (with
hints). This module holds the records (:class:`SymbolSpec`, :class:`FactSpec`,
:class:`GuardSpec`, :class:`Problem`) and turns them into plain JSON data and back
(:meth:`Problem.to_dict`, :meth:`Problem.from_dict`, :func:`dumps`, :func:`loads`). It knows no
solver: :mod:`solver.service.codec` captures a solver's record as a problem and replays one.

It never evaluates code: relations are read by :func:`shapes.parse.parse_expr`, restricted to
the declared symbol names. Every malformed input raises :class:`solver.errors.ProtocolError`
naming the field path.

>>> text = '''{"format": "symshape.problem", "version": 1,
...   "symbols": [{"name": "n", "lo": 2, "hi": 8, "hint": 4, "source": "x.size(0)"}],
...   "facts": [{"rel": "n % 2 == 0", "reason": {"kind": "spec", "text": null,
...              "origin": null, "op": null}}],
...   "guards": [{"rel": "n > 3", "hint": true, "reason": {"kind": "guard", "text": "n > 3",
...               "origin": "model.py:9", "op": "view"}}]}'''
>>> p = loads(text)
>>> p.symbols[0].name, p.facts[0].rel, p.guards[0].hint
('n', Eq(Mod(n, 2), 0), True)
>>> loads(text.replace('"lo": 2', '"lo": "x"'))
Traceback (most recent call last):
...
solver.errors.ProtocolError: symbols[0].lo: expected an int or null, got "x"
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from shapes.errors import BudgetError, ShapesError
from shapes.expr import canonical, canonical_name, check_supported, int_symbol
from shapes.parse import parse_expr
from shapes.printing import to_text
from shapes.relation import is_relation
from solver.errors import LimitError, ProtocolError
from solver.truth import DECLARED, REASON_KINDS, Reason

__all__ = [
    "PROBLEM_FORMAT",
    "PROBLEM_VERSION",
    "SymbolSpec",
    "FactSpec",
    "GuardSpec",
    "Problem",
    "dumps",
    "loads",
    "load_json",
    "decode_symbol",
    "symbol_name",
    "optional_bool",
    "reason_to_dict",
    "reason_from_dict",
    "parse_relation",
    "parse_expression",
    "describe_json",
]

PROBLEM_FORMAT = "symshape.problem"
PROBLEM_VERSION = 2
"""Version 2 adds a reason's optional ``tag``; version 1 problems (no tags) are still read."""
READ_VERSIONS = (1, 2)

_SYMBOL_FIELDS = ("name", "lo", "hi", "hint", "source", "adapts")
_REASON_FIELDS = ("kind", "text", "origin", "op", "tag")
_FACT_FIELDS = ("rel", "reason", "after_guards")
_GUARD_FIELDS = ("rel", "hint", "reason")
_PROBLEM_FIELDS = ("format", "version", "symbols", "facts", "guards")


# -- records ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SymbolSpec:
    """A symbol declaration: ``Solver.symbol(name, lo, hi, hint=hint, source=source)``."""

    name: str
    lo: int | None = 0
    hi: int | None = None
    hint: int | None = None
    source: str | None = None
    adapts: bool = False


@dataclass(frozen=True, slots=True)
class FactSpec:
    """A fact to assume; ``after_guards`` guards of the stream are replayed before it."""

    rel: sympy.Basic
    reason: Reason
    after_guards: int = 0


@dataclass(frozen=True, slots=True)
class GuardSpec:
    """One question of the guard stream, with the example inputs' answer (``hint``)."""

    rel: sympy.Basic
    hint: bool | None
    reason: Reason


@dataclass(frozen=True, slots=True)
class Problem:
    """Symbols, facts and the ordered guard stream: everything a solver was told.

    >>> p = Problem((SymbolSpec("n", 1, 4),), (), ())
    >>> Problem.from_dict(p.to_dict()) == p
    True
    """

    symbols: tuple[SymbolSpec, ...]
    facts: tuple[FactSpec, ...]
    guards: tuple[GuardSpec, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON data of the problem (rels as canonical text)."""
        return {
            "format": PROBLEM_FORMAT,
            "version": PROBLEM_VERSION,
            "symbols": [_symbol_to_dict(s) for s in self.symbols],
            "facts": [_fact_to_dict(f) for f in self.facts],
            "guards": [_guard_to_dict(g) for g in self.guards],
        }

    @staticmethod
    def from_dict(obj: object) -> Problem:
        """Validate JSON data and build the problem; ProtocolError names the bad field."""
        return _decode_problem(obj)


# -- encoding ----------------------------------------------------------------------------------
def reason_to_dict(reason: Reason) -> dict[str, str | None]:
    """``{"kind", "text", "origin", "op"}``, and ``"tag"`` when the reason has one.

    >>> reason_to_dict(Reason.spec("n <= 8"))
    {'kind': 'spec', 'text': 'n <= 8', 'origin': None, 'op': None}
    >>> reason_to_dict(Reason("trace_assumption", "n >= 2", None, "torch assumes sizes >= 2", "floor"))["tag"]
    'floor'
    """
    out = {"kind": reason.kind, "text": reason.text, "origin": reason.origin, "op": reason.op}
    if reason.tag is not None:
        out["tag"] = reason.tag
    return out


def _symbol_to_dict(s: SymbolSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": s.name, "lo": s.lo, "hi": s.hi, "hint": s.hint, "source": s.source}
    if s.adapts:  # optional: version 1 problems without it read as False
        out["adapts"] = True
    return out


def _fact_to_dict(f: FactSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"rel": to_text(f.rel), "reason": reason_to_dict(f.reason)}
    if f.after_guards:
        out["after_guards"] = f.after_guards
    return out


def _guard_to_dict(g: GuardSpec) -> dict[str, Any]:
    return {"rel": to_text(g.rel), "hint": g.hint, "reason": reason_to_dict(g.reason)}


def dumps(problem: Problem, indent: int | None = None) -> str:
    """The problem as JSON text.

    >>> dumps(Problem((SymbolSpec("n", 1, None),), (), ()))[:45]
    '{"format": "symshape.problem", "version": 2, '
    """
    return json.dumps(problem.to_dict(), indent=indent)


# -- decoding ----------------------------------------------------------------------------------
def describe_json(value: object) -> str:
    """A short JSON spelling of a value for error messages.

    >>> describe_json("x"), describe_json(None), describe_json([1, 2])
    ('"x"', 'null', 'a list')
    """
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _fail(path: str, message: str) -> ProtocolError:
    return ProtocolError(f"{path}: {message}")


def _expect_object(value: object, path: str, fields: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"expected an object, got {describe_json(value)}")
    for key in value:
        if key not in fields:
            raise _fail(path, f"unknown field {json.dumps(key)} (expected {', '.join(fields)})")
    return value


def _expect_list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(path, f"expected a list, got {describe_json(value)}")
    return value


def _optional_int(value: object, path: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise _fail(path, f"expected an int or null, got {describe_json(value)}")
    return value


def _optional_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, f"must be true or false, got {value!r}")
    return value


def _optional_str(value: object, path: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _fail(path, f"expected a string or null, got {describe_json(value)}")
    return value


def optional_bool(value: object, path: str) -> bool | None:
    """``value`` if it is true, false or null, else a ProtocolError naming ``path``."""
    if value is not None and not isinstance(value, bool):
        raise _fail(path, f"expected true, false or null, got {describe_json(value)}")
    return value


def reason_from_dict(obj: object, path: str = "reason") -> Reason:
    """Validate a reason object.

    >>> reason_from_dict({"kind": "guard", "origin": "m.py:3"})
    Reason(kind='guard', text=None, origin='m.py:3', op=None, tag=None)
    >>> reason_from_dict({"kind": "hunch"}, "facts[0].reason")
    Traceback (most recent call last):
    ...
    solver.errors.ProtocolError: facts[0].reason.kind: unknown reason kind "hunch" (expected spec, trace_assumption, guard)
    """
    d = _expect_object(obj, path, _REASON_FIELDS)
    kind = d.get("kind")
    if kind not in REASON_KINDS:
        got = "missing" if "kind" not in d else f"unknown reason kind {describe_json(kind)}"
        raise _fail(f"{path}.kind", f"{got} (expected {', '.join(REASON_KINDS)})")
    text, origin, op, tag = (_optional_str(d.get(k), f"{path}.{k}") for k in _REASON_FIELDS[1:])
    return Reason(kind, text, origin, op, tag)


def symbol_name(value: object, path: str) -> str:
    """A Python identifier, in its canonical (NFKC) form: ``"ｎ"`` is read as ``"n"``.

    >>> symbol_name("ｎ", "name")
    'n'
    """
    if not isinstance(value, str) or not value:
        raise _fail(path, f"expected a non-empty string, got {describe_json(value)}")
    name = canonical_name(value)
    if not name.isidentifier() or keyword.iskeyword(name):
        raise _fail(path, f"symbol name {describe_json(value)} is not a Python identifier")
    return name


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def decode_symbol(obj: object, path: str = "", extra: tuple[str, ...] = ()) -> SymbolSpec:
    """Validate a symbol object (``extra``: further fields to tolerate, e.g. a request's ``op``).

    >>> decode_symbol({"name": "n", "hi": 8})
    SymbolSpec(name='n', lo=0, hi=8, hint=None, source=None, adapts=False)
    >>> decode_symbol({"name": "n", "lo": 9, "hi": 8}, "symbols[1]")
    Traceback (most recent call last):
    ...
    solver.errors.ProtocolError: symbols[1]: empty range: lo=9 > hi=8
    """
    d = _expect_object(obj, path or "symbol", _SYMBOL_FIELDS + extra)
    if "name" not in d:
        raise _fail(_join(path, "name"), "missing")
    spec = SymbolSpec(
        symbol_name(d["name"], _join(path, "name")),
        _optional_int(d.get("lo", 0), _join(path, "lo")),
        _optional_int(d.get("hi"), _join(path, "hi")),
        _optional_int(d.get("hint"), _join(path, "hint")),
        _optional_str(d.get("source"), _join(path, "source")),
        _optional_bool(d.get("adapts", False), _join(path, "adapts")),
    )
    if spec.lo is not None and spec.hi is not None and spec.lo > spec.hi:
        raise _fail(path or "symbol", f"empty range: lo={spec.lo} > hi={spec.hi}")
    return spec


def _decode_symbols(value: object) -> tuple[SymbolSpec, ...]:
    specs = tuple(decode_symbol(o, f"symbols[{i}]") for i, o in enumerate(_expect_list(value, "symbols")))
    seen: dict[str, int] = {}
    for i, s in enumerate(specs):
        if s.name in seen:
            raise _fail(f"symbols[{i}].name", f"duplicate symbol name {describe_json(s.name)} "
                        f"(first declared at symbols[{seen[s.name]}])")
        seen[s.name] = i
    return specs


def parse_relation(text: object, symbols: Mapping[str, sympy.Symbol], path: str) -> sympy.Basic:
    """Parse a relation over the given symbols; ProtocolError names ``path``.

    >>> n = int_symbol("n")
    >>> parse_relation("n >= 2", {"n": n}, "rel")
    n >= 2
    >>> parse_relation("n + 1", {"n": n}, "facts[0].rel")
    Traceback (most recent call last):
    ...
    solver.errors.ProtocolError: facts[0].rel: expected a relation, got the integer expression "n + 1"
    """
    value = _parse(text, symbols, path)
    if not is_relation(value):
        raise _fail(path, f"expected a relation, got the integer expression {describe_json(text)}")
    return value


def parse_expression(text: object, symbols: Mapping[str, sympy.Symbol], path: str) -> sympy.Expr:
    """Parse an integer expression over the given symbols; ProtocolError names ``path``.

    >>> parse_expression("2 * n", {"n": int_symbol("n")}, "expr")
    2*n
    """
    value = _parse(text, symbols, path)
    if not isinstance(value, sympy.Expr):
        raise _fail(path, f"expected an integer expression, got the relation {describe_json(text)}")
    return value


def _parse(text: object, symbols: Mapping[str, sympy.Symbol], path: str) -> sympy.Basic:
    if not isinstance(text, str):
        raise _fail(path, f"expected a string, got {describe_json(text)}")
    try:
        value = parse_expr(text, symbols)
        check_supported(canonical(value))
    except BudgetError as exc:
        raise LimitError(f"{path}: {exc}") from None
    except (ShapesError, ValueError, TypeError, ArithmeticError, RecursionError) as exc:
        raise _fail(path, str(exc)) from None
    return value


def _decode_fact(obj: object, path: str, symbols: Mapping[str, sympy.Symbol], n_guards: int) -> FactSpec:
    d = _expect_object(obj, path, _FACT_FIELDS)
    if "rel" not in d:
        raise _fail(f"{path}.rel", "missing")
    rel = parse_relation(d["rel"], symbols, f"{path}.rel")
    reason = reason_from_dict(d["reason"], f"{path}.reason") if "reason" in d else Reason.spec(d["rel"])
    if reason.op == DECLARED:
        raise _fail(f"{path}.reason.op", f'"{DECLARED}" is reserved for the declared ranges; '
                    "give the range in symbols[] instead")
    after = d.get("after_guards", 0)
    if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after <= n_guards:
        raise _fail(f"{path}.after_guards", f"expected an int in [0, {n_guards}] (the number of "
                    f"guards replayed before this fact), got {describe_json(after)}")
    return FactSpec(rel, reason, after)


def _decode_guard(obj: object, path: str, symbols: Mapping[str, sympy.Symbol]) -> GuardSpec:
    d = _expect_object(obj, path, _GUARD_FIELDS)
    if "rel" not in d:
        raise _fail(f"{path}.rel", "missing")
    rel = parse_relation(d["rel"], symbols, f"{path}.rel")
    hint = optional_bool(d.get("hint"), f"{path}.hint")
    reason = reason_from_dict(d["reason"], f"{path}.reason") if "reason" in d else Reason.guard(d["rel"])
    if reason.op == DECLARED:
        raise _fail(f"{path}.reason.op", f'"{DECLARED}" is reserved for the declared ranges')
    return GuardSpec(rel, hint, reason)


def _check_header(d: Mapping[str, Any]) -> None:
    fmt = d.get("format")
    if fmt != PROBLEM_FORMAT:
        got = "missing" if "format" not in d else f"got {describe_json(fmt)}"
        raise _fail("format", f'expected "{PROBLEM_FORMAT}", {got}')
    version = d.get("version")
    if isinstance(version, bool) or version not in READ_VERSIONS:
        got = "missing" if "version" not in d else f"unsupported version {describe_json(version)}"
        raise _fail("version", f"{got} (this reader supports versions {', '.join(map(str, READ_VERSIONS))})")


def _decode_problem(obj: object) -> Problem:
    d = _expect_object(obj, "problem", _PROBLEM_FIELDS)
    _check_header(d)
    symbols = _decode_symbols(d.get("symbols", []))
    table = {s.name: int_symbol(s.name) for s in symbols}
    guards = tuple(_decode_guard(o, f"guards[{i}]", table)
                   for i, o in enumerate(_expect_list(d.get("guards", []), "guards")))
    facts = tuple(_decode_fact(o, f"facts[{i}]", table, len(guards))
                  for i, o in enumerate(_expect_list(d.get("facts", []), "facts")))
    for i in range(1, len(facts)):
        if facts[i].after_guards < facts[i - 1].after_guards:
            raise _fail(f"facts[{i}].after_guards", "facts must be listed in replay order "
                        f"(after_guards {facts[i].after_guards} < {facts[i - 1].after_guards} of facts[{i - 1}])")
    return Problem(symbols, facts, guards)


def loads(text: str | bytes) -> Problem:
    """Parse and validate JSON text (no code is ever evaluated).

    >>> loads('{"format": "symshape.problem", "version": 3}')
    Traceback (most recent call last):
    ...
    solver.errors.ProtocolError: version: unsupported version 3 (this reader supports versions 1, 2)
    """
    return Problem.from_dict(load_json(text, "problem"))


def load_json(text: str | bytes, what: str) -> object:
    """``json.loads`` with every failure (syntax, NaN, nesting, huge ints) as a ProtocolError.

    >>> load_json("[1, NaN]", "request")
    Traceback (most recent call last):
    ...
    solver.errors.ProtocolError: request: invalid JSON: NaN is not allowed
    """
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, TypeError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise _fail(what, f"invalid JSON: {exc}") from None


def _reject_constant(name: str) -> object:
    raise ProtocolError(f"{name} is not allowed")
