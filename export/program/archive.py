"""Reading a saved program (``.pt2``) without running code that it carries.

``torch.export.load`` unpickles several members of an archive (the sample inputs, pickled
weights and constants, custom objects) and falls back to ``torch.load(weights_only=False)``
when the safe mode refuses one; it also hands every ``expr_str`` of ``models/*.json`` to
``sympy.sympify``, i.e. to ``eval``. :func:`checked_archive` looks at the archive first and
raises :class:`ArchiveError` unless

* it is a zip with unique member names in torch's pt2 layout;
* every member torch would unpickle loads under ``torch.load(weights_only=True)`` (tensors
  and containers only), and no constant is a custom or opaque Python object;
* every ``expr_str`` is sympy's ``srepr`` of an expression over symbols, numbers and the
  functions torch prints (:func:`check_expression`).

It returns the archive rebuilt from exactly the members it checked, so torch reads what was
checked (no zip-parser differential). :func:`decode_extra` validates ``extra/symshape.json``.
"""

from __future__ import annotations

import builtins
import os
import io
import json
import keyword
import math
import re
import zipfile
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

import sympy
import torch

from export.errors import ArchiveError

__all__ = ["read_archive", "checked_archive", "check_expression", "decode_extra", "first_line", "EXTRA_VERSION"]

EXTRA_VERSION = 2
"""Version of ``extra/symshape.json`` written; files without a version are version 1. Version 2:
the report's solver problem is a version-2 problem (typed reasons: a fact's assumption ``tag``)."""
READ_VERSIONS = (1, 2)
"""The versions read (a version-1 report's problem has no tags; its words say them)."""

MAX_INT = 2**63
"""Bounds, dims and sizes beyond this are no tensor's: a damaged archive."""

_MAX_EXPR_CHARS = 10_000
_MAX_DIGITS = 20
_MAX_DEPTH = 64
_POW_LIKE = frozenset({"Pow", "PowByNatural", "FloatPow", "LShift", "RShift"})
_MAX_EXPONENT = 64
_SAFE_NAMES = frozenset({
    "Symbol", "Integer", "Rational", "Float", "Add", "Mul", "Pow", "Mod", "Max", "Min", "Abs",
    "floor", "ceiling", "Equality", "Unequality", "StrictLessThan", "StrictGreaterThan",
    "LessThan", "GreaterThan", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "And", "Or", "Not", "Xor",
    "ITE", "Piecewise", "ExprCondPair", "Tuple", "true", "false", "oo", "zoo", "nan",
    "True", "False", "None", "Identity",
})
"""Names of sympy's namespace an ``expr_str`` may use (``Identity`` is torch's, which the
loader puts first). Names outside sympy's namespace and Python's builtins are harmless
(torch's own functions, or new symbols)."""

_TOKEN = re.compile(r"""\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)
                         |(?P<str>'[A-Za-z_][A-Za-z0-9_]{0,63}'|'[-+]?[0-9.]{1,40}(?:[eE][-+]?\d{1,3})?')|(?P<op>[(),=-]))""",
                    re.VERBOSE)


def read_archive(f: str | os.PathLike[str] | IO[bytes]) -> tuple[str, bytes]:
    """The archive's name for messages and its bytes, read once (torch then reads the
    same bytes, not the file again)."""
    if isinstance(f, os.PathLike):
        f = os.fspath(f)
    name = f if isinstance(f, str) else str(getattr(f, "name", "<stream>"))
    try:
        if isinstance(f, str):
            with open(f, "rb") as fh:
                return name, fh.read()
        data = f.read()
    except OSError as e:
        raise ArchiveError(f"{name}: cannot read: {e.strerror or e}") from None
    if not isinstance(data, bytes):
        raise ArchiveError(f"{name}: not a binary stream")
    return name, data


def checked_archive(data: bytes, name: str) -> bytes:
    """The archive rebuilt from its checked members, or :class:`ArchiveError`.

    >>> checked_archive(b"not a zip", "x.pt2")
    Traceback (most recent call last):
    ...
    export.errors.ArchiveError: x.pt2: not a .pt2 archive (File is not a zip file)
    """
    members = _members(data, name)
    inner = {path.split("/", 1)[1]: path for path in members if "/" in path}
    if inner.get("archive_format") is None or members[inner["archive_format"]].strip() != b"pt2":
        raise ArchiveError(f"{name}: not a .pt2 archive saved by torch.export.save (no 'archive_format' of 'pt2')")
    pickled = {path for path, payload in members.items() if path.endswith(".pt") or payload[:4] == b"PK\x03\x04"}
    for rel, path in inner.items():
        if re.fullmatch(r"data/(weights|constants)/[^/]*_config\.json", rel):
            pickled |= _pickled_payloads(members, path, rel.split("/")[1], name)
        elif rel.startswith("models/") and rel.endswith(".json"):
            _check_model_json(members[path], f"{name}: {rel}")
    for path in sorted(pickled):
        _check_safe_pickle(members[path], f"{name}: {path}")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for path, payload in members.items():
            z.writestr(path, payload)
    return out.getvalue()


def _members(data: bytes, name: str) -> dict[str, bytes]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            infos = z.infolist()
            paths = [i.filename for i in infos]
            if len(set(paths)) != len(paths):
                raise ArchiveError(f"{name}: damaged archive: duplicate member names")
            return {i.filename: z.read(i) for i in infos if not i.is_dir()}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError) as e:
        raise ArchiveError(f"{name}: not a .pt2 archive ({first_line(e) or 'not a zip file'})") from None
    except OSError as e:
        raise ArchiveError(f"{name}: damaged archive: {e}") from None


def _pickled_payloads(members: Mapping[str, bytes], config_path: str, kind: str, name: str) -> set[str]:
    """Members a weights/constants config tells torch to unpickle; custom and opaque objects
    (which torch unpickles without any safe mode) refuse the archive."""
    config = _json(members[config_path], f"{name}: {config_path}")
    entries = config.get("config") if isinstance(config, dict) else None
    if not isinstance(entries, dict):
        raise ArchiveError(f"{name}: {config_path}: damaged: no 'config' object")
    folder = config_path.rsplit("/", 1)[0]
    out = set()
    for fqn, meta in entries.items():
        path_name = meta.get("path_name") if isinstance(meta, dict) else None
        if not isinstance(path_name, str):
            raise ArchiveError(f"{name}: {config_path}: damaged entry for {fqn!r}")
        if kind == "constants" and path_name.startswith(("custom_obj_", "opaque_obj_")):
            raise ArchiveError(f"{name}: constant {fqn!r} is a pickled Python object ({path_name}); "
                               "symshape does not unpickle archives")
        if meta.get("use_pickle"):
            path = f"{folder}/{path_name}"
            if path not in members:
                raise ArchiveError(f"{name}: {config_path}: {path_name} is missing")
            out.add(path)
    return out


def _check_safe_pickle(payload: bytes, where: str) -> None:
    try:
        torch.load(io.BytesIO(payload), weights_only=True)
    except Exception as e:  # noqa: BLE001 - whatever the safe unpickler refuses, we refuse
        lines = [ln.strip() for ln in str(e).splitlines() if "GLOBAL" in ln or "Unsupported" in ln]
        why = lines[0] if lines else first_line(e)
        raise ArchiveError(f"{where}: holds Python objects beyond tensors, which symshape does not "
                           f"unpickle ({why[:160]})") from None


def _check_model_json(payload: bytes, where: str) -> None:
    for i, text in enumerate(_expr_strs(_json(payload, where))):
        try:
            check_expression(text)
        except ArchiveError as e:
            raise ArchiveError(f"{where}: expression {i}: {e}") from None


def _expr_strs(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if k == "expr_str":
                    yield v
                else:
                    stack.append(v)
        elif isinstance(item, list):
            stack.extend(item)


def _json(payload: bytes | str, where: str, parse_constant: Callable[[str], Any] | None = None) -> Any:
    try:
        return json.loads(payload, parse_constant=parse_constant)
    except (ValueError, RecursionError) as e:
        raise ArchiveError(f"{where}: not valid JSON ({first_line(e, 120)})") from None


def first_line(e: BaseException, limit: int | None = None) -> str:
    """The first line of ``e``'s message (its type's name when it has none), cut to ``limit``
    characters: how a refused file's error is worded in one line (here and in ``symshape replay``).

    >>> first_line(ValueError("Expecting value: line 1\\n(char 0)")), first_line(RecursionError())
    ('Expecting value: line 1', 'RecursionError')
    >>> first_line(ValueError("x" * 50), limit=8)
    'xxxxxxxx'
    """
    lines = str(e).strip().splitlines()
    return (lines[0] if lines else type(e).__name__)[:limit]


# -- expressions ------------------------------------------------------------------------


def check_expression(text: object) -> None:
    """Raise :class:`ArchiveError` unless ``text`` is safe for torch to ``sympify``: calls
    of allowed names on symbols, numbers and quoted names, as ``sympy.srepr`` prints them.

    >>> check_expression("Add(Symbol('s0', integer=True, positive=True), Integer(-1))")
    >>> check_expression("eval(chr(49))")
    Traceback (most recent call last):
    ...
    export.errors.ArchiveError: the name 'eval' is not allowed in an expression
    """
    if not isinstance(text, str):
        raise ArchiveError(f"expected a string, got {type(text).__name__}")
    if len(text) > _MAX_EXPR_CHARS:
        raise ArchiveError(f"longer than {_MAX_EXPR_CHARS} characters")
    tokens = _tokens(text)
    _Parser(tokens).expression()


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            bad = text[pos:].lstrip()[:1]
            raise ArchiveError(f"unexpected {bad!r} at column {len(text) - len(text[pos:].lstrip())}")
        kind = m.lastgroup or "op"
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _check_name(name: str) -> None:
    if name in _SAFE_NAMES:
        return
    if name.startswith("_") or keyword.iskeyword(name) or hasattr(builtins, name) or hasattr(sympy, name):
        raise ArchiveError(f"the name {name!r} is not allowed in an expression")


class _Parser:
    """expr := '-'* (NAME ['(' args ')'] | NUM | STR); args := [arg (',' arg)*];
    arg := NAME '=' expr | expr. Bounded depth, digits and constant exponents."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.i = 0
        self.in_pow = False

    def peek(self, k: int = 0) -> tuple[str, str]:
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else ("end", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, op: str) -> None:
        if self.take() != ("op", op):
            raise ArchiveError(f"expected {op!r} at token {self.i}")

    def expression(self) -> None:
        self.expr(0)
        if self.peek()[0] != "end":
            raise ArchiveError(f"unexpected {self.peek()[1]!r} after the expression")

    def expr(self, depth: int) -> tuple[str, str]:
        """Parse one expression; returns its head (kind, value), for the exponent rule."""
        if depth > _MAX_DEPTH:
            raise ArchiveError(f"nested deeper than {_MAX_DEPTH}")
        while self.peek() == ("op", "-"):
            self.take()
        kind, value = self.take()
        if kind == "num" and len(value) > _MAX_DIGITS:
            raise ArchiveError(f"a number longer than {_MAX_DIGITS} digits")
        if kind in ("num", "str"):
            return kind, value
        if kind != "name":
            raise ArchiveError(f"unexpected {value or 'end'!r} at token {self.i}")
        _check_name(value)
        if self.peek() == ("op", "("):
            self.take()
            if value in _POW_LIKE:
                if self.in_pow:
                    raise ArchiveError("powers nested inside powers")
                self.in_pow = True
                self.args(value, depth)
                self.in_pow = False
            else:
                self.args(value, depth)
        return kind, value

    def args(self, callee: str, depth: int) -> None:
        heads: list[tuple[str, str]] = []
        while self.peek() != ("op", ")"):
            if self.peek()[0] == "name" and self.peek(1) == ("op", "="):
                if self.take()[1].startswith("_"):
                    raise ArchiveError("a keyword argument starting with '_'")
                self.take()
            heads.append(self.expr_with_literal(depth + 1))
            if self.peek() != ("op", ")"):
                self.expect(",")
        self.take()
        if callee in _POW_LIKE and len(heads) == 2 and heads[1][0] == "int" and abs(int(heads[1][1])) > _MAX_EXPONENT:
            raise ArchiveError(f"{callee} with a constant exponent beyond {_MAX_EXPONENT}")

    def expr_with_literal(self, depth: int) -> tuple[str, str]:
        """An argument; a literal ``Integer(k)`` or ``k`` reports ("int", k)."""
        start = self.i
        head = self.expr(depth)
        toks = self.tokens[start:self.i]
        if head == ("name", "Integer") and len(toks) in (4, 5):
            return "int", "".join(t[1] for t in toks[2:-1])
        if head[0] == "num" and "." not in head[1] and "e" not in head[1].lower():
            return "int", "".join(t[1] for t in toks)
        return head


# -- extra/symshape.json ----------------------------------------------------------------


def decode_extra(text: str, name: str) -> tuple[list[tuple[tuple[str, int], tuple[str, int]]], dict[str, Any]]:
    """``extra/symshape.json`` as (equality pairs, the report's dict), or
    :class:`ArchiveError` naming the bad field.

    >>> decode_extra('{"equality_constraints": [], "report": []}', "m.pt2")
    Traceback (most recent call last):
    ...
    export.errors.ArchiveError: m.pt2: extra/symshape.json: report: expected an object, got list
    """
    where = f"{name}: extra/symshape.json"
    data = _json(text, where, parse_constant=_no_constant)
    try:
        return _decode(data)
    except _Bad as e:
        raise ArchiveError(f"{where}: {e}") from None


class _Bad(Exception):
    """A field of symshape.json is wrong (internal: becomes ArchiveError with the file)."""


def _no_constant(word: str) -> Any:
    raise ValueError(f"{word} is not a number JSON allows")


def _decode(data: Any) -> tuple[list[tuple[tuple[str, int], tuple[str, int]]], dict[str, Any]]:
    top = _obj(data, "the top level")
    version = top.get("version", 1)
    if version not in READ_VERSIONS or isinstance(version, bool):
        raise _Bad(f"version {version!r} is not supported (this symshape reads versions "
                   f"{', '.join(map(str, READ_VERSIONS))})")
    pairs = []
    for i, pair in enumerate(_list(_field(top, "equality_constraints", ""), "equality_constraints")):
        path = f"equality_constraints[{i}]"
        items = _list(pair, path)
        if len(items) != 2:
            raise _Bad(f"{path}: expected a pair of input dims")
        a, b = (_input_dim(x, f"{path}[{j}]") for j, x in enumerate(items))
        pairs.append((a, b))
    report = _obj(_field(top, "report", ""), "report")
    ranges = {}
    for k, v in _obj(_field(report, "ranges", "report."), "report.ranges").items():
        bounds = _list(v, f"report.ranges[{k!r}]")
        if len(bounds) != 2:
            raise _Bad(f"report.ranges[{k!r}]: expected [lo, hi]")
        ranges[k] = [_int(x, f"report.ranges[{k!r}]", none=True) for x in bounds]
    return pairs, {
        "ranges": ranges,
        "classes": [_strs(c, f"report.classes[{i}]")
                    for i, c in enumerate(_list(_field(report, "classes", "report."), "report.classes"))],
        "relations": _strs(_field(report, "relations", "report."), "report.relations"),
        "assumptions": _strs(_field(report, "assumptions", "report."), "report.assumptions"),
        "stats": _obj(_field(report, "stats", "report."), "report.stats"),
        "problem": _str_or_none(report.get("problem"), "report.problem"),
        "warnings": _strs(report.get("warnings", []), "report.warnings"),
        **{k: v for k, v in report.items() if k not in _REPORT_KEYS},
    }


_REPORT_KEYS = frozenset({"ranges", "classes", "relations", "assumptions", "stats", "problem", "warnings"})


def _field(obj: Mapping[str, Any], key: str, prefix: str) -> Any:
    if key not in obj:
        raise _Bad(f"{prefix}{key}: missing")
    return obj[key]


def _type(x: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "bool", type(None): "null"}.get(type(x), type(x).__name__)


def _obj(x: Any, path: str) -> dict[str, Any]:
    if not isinstance(x, dict):
        raise _Bad(f"{path}: expected an object, got {_type(x)}")
    return x


def _list(x: Any, path: str) -> list[Any]:
    if not isinstance(x, list):
        raise _Bad(f"{path}: expected a list, got {_type(x)}")
    return x


def _strs(x: Any, path: str) -> list[str]:
    items = _list(x, path)
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise _Bad(f"{path}[{i}]: expected a string, got {_type(s)}")
    return items


def _str_or_none(x: Any, path: str) -> str | None:
    if x is not None and not isinstance(x, str):
        raise _Bad(f"{path}: expected a string or null, got {_type(x)}")
    return x


def _int(x: Any, path: str, *, none: bool = False, lo: int = -MAX_INT) -> Any:
    if x is None and none:
        return None
    if isinstance(x, bool) or not isinstance(x, int):
        if isinstance(x, float) and not math.isfinite(x):
            raise _Bad(f"{path}: {x} is not an int")
        raise _Bad(f"{path}: expected an int{' or null' if none else ''}, got {_type(x)}")
    if not lo <= x <= MAX_INT:
        raise _Bad(f"{path}: {str(x)[:24]}{'...' if len(str(x)) > 24 else ''} is out of range [{lo}, 2**63]")
    return x


def _input_dim(x: Any, path: str) -> tuple[str, int]:
    items = _list(x, path)
    if len(items) != 2 or not isinstance(items[0], str):
        raise _Bad(f"{path}: expected [input name, dim]")
    return items[0], _int(items[1], f"{path}[1]", lo=0)
