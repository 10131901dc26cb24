"""Why a program refuses an input, in the words of an export's causes (issue 21, item 4).

When ``ep.module()`` refuses a call, torch says ``Guard failed: 8 * x.size()[1] * x.size()[0] ==
32 * x.size()[0] * (x.size()[1] // 4)``. :func:`refusal_text` says it the way the export's own
causes do, with the sizes of the call: ``x.size(1) must be divisible by 4 (got x.size(1) = 6)``,
and the source line that needs it. It judges each fact the program relies on (declared ranges,
the trace's guards and assumptions) at the call's sizes with the solver the program was
judged with: a fact the sizes make false is a reason. It runs only after torch refused, so a
call that passes pays nothing.

>>> from solver import Reason, Solver
>>> import sympy
>>> s = Solver()
>>> x1 = s.symbol("x_size1", 1, None, source="x.size(1)")
>>> s.assume(sympy.Eq(sympy.Mod(x1, 4), 0), Reason("guard", "x.size(1) % 4 == 0", "m.py:3", "x.view(-1, 4)"))
>>> print(refusal_text(s, {"x.size(1)": 6}))
the exported program refuses these inputs:
  x.size(1) must be divisible by 4 (got x.size(1) = 6), needed at m.py:3: x.view(-1, 4)
>>> refusal_text(s, {"x.size(1)": 8}) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from export.errors import InputError
from export.program.words import guard_words
from shapes.ranges import range_text
from solver import DECLARED, Fact, Solver, Truth

__all__ = ["refusal_text", "input_sizes", "KeptCheck", "CHECK", "RAISE", "check_relations_mode", "kept_warning"]

CHECK = "check"
"""``dim_relations="check"`` (default): a relation between dims that no ``Dim`` can say
(``z.size(1) == x.size(1) + y.size(1)``, a product, ``M >= N``) is a runtime check of the program."""
RAISE = "raise"
"""``dim_relations="raise"``: such a relation is a ConstraintViolationError, every relation in the spec."""


def check_relations_mode(mode: Any) -> str:
    """``mode`` if ``export`` takes it as ``dim_relations``, else InputError."""
    if mode not in (CHECK, RAISE):
        raise InputError(f"dim_relations={mode!r}: expected {CHECK!r} (keep relations no Dim can say as runtime "
                         f"checks of the program) or {RAISE!r} (raise ConstraintViolationError for them)")
    return str(mode)


@dataclass(frozen=True)
class KeptCheck:
    """A relation between input dims that no ``Dim`` can say, kept as a runtime check of the
    program (``dim_relations="check"``): in the causes' words, with its source line."""

    relation: str
    origin: str | None = None
    code: str | None = None
    dims: tuple[str, ...] = ()

    def describe(self) -> str:
        where = f" at {self.origin}" + (f": {self.code}" if self.code else "") if self.origin else ""
        return f"{self.relation}{where}"


def kept_warning(kept: Sequence[KeptCheck]) -> str:
    """The one SymshapeWarning of an export that keeps relations as runtime checks."""
    lines = "; ".join(f"{i}. {k.describe()}" for i, k in enumerate(kept, 1))
    return (f"kept as runtime checks of the program (no Dim can say these relations): {lines}. The program "
            f"refuses inputs that break them, with these words; dim_relations='raise' raises instead")

_MAX_REASONS = 4


def input_sizes(names: Sequence[str | None], flat: Sequence[Any]) -> dict[str, int]:
    """``{"x.size(1)": 6}`` for the tensors among a call's flat user inputs, named by ``names``
    (the program's user inputs in order; None for one that is no tensor), and ``{"n": 3}``
    for its int inputs."""
    out: dict[str, int] = {}
    for name, value in zip(names, flat):
        if name is not None and isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
            continue
        shape = getattr(value, "shape", None)
        if name is None or shape is None:
            continue
        for d, n in enumerate(shape):
            out[f"{name}.size({d})"] = int(n)
    return out


def _pinned(solver: Solver, values: Mapping[sympy.Symbol, int]) -> Solver:
    """A solver that knows only the declared ranges, with the call's input dims pinned."""
    out = Solver()
    for info in solver.symbols:
        v = values.get(info.symbol)
        out.symbol(info.symbol.name, v if v is not None else info.lo, v if v is not None else info.hi,
                   source=info.source)
    return out


def _name(info: Any) -> str:
    """An input dim by its source (``x.size(1)``); a Dim's root by the Dim's name (``_s``)."""
    source = info.source or info.symbol.name
    m = re.match(r"Dim\('([^']+)'", source)
    return m.group(1) if m else source


def _range(info: Any) -> str:
    return f"{_name(info)} in {range_text(info.lo, info.hi)}"


def _reason(fact: Fact, solver: Solver, names: Mapping[sympy.Symbol, str], values: Mapping[sympy.Symbol, int]) -> str:
    if fact.reason.op == DECLARED:
        words = (fact.reason.text or "").replace(" in [", " must be in [", 1)
    else:
        try:
            words = guard_words(solver, fact.rel, names)
        except Exception:  # noqa: BLE001 - a refusal's wording must never hide the refusal
            words = fact.reason.text or str(fact.rel)
    free = sorted(fact.rel.free_symbols, key=str)
    got = [f"{names[s]} = {values[s]}" for s in free if s in values]
    roots = [_range(solver.info(s)) for s in free if s not in values]
    notes = "; ".join(([f"with {', '.join(roots)}"] if roots else []) + ([f"got {', '.join(got)}"] if got else []))
    text = f"{words} ({notes})" if notes else words
    if fact.reason.origin:
        text += f", needed at {fact.reason.origin}" + (f": {fact.reason.op}" if fact.reason.op else "")
    return text


def _derived(rel: sympy.Basic, values: Mapping[sympy.Symbol, int]
             ) -> tuple[sympy.Symbol, int, sympy.Symbol, int] | None:
    """``(dim, a, root, b)`` when ``rel`` says ``dim == a * root + b`` for an input dim and a
    Dim's root (a derived dim, or a dim that is a Dim), else None."""
    if not isinstance(rel, sympy.Eq) or len(rel.free_symbols) != 2:
        return None
    dims = [s for s in rel.free_symbols if s in values]
    roots = [s for s in rel.free_symbols if s not in values]
    if len(dims) != 1 or len(roots) != 1:
        return None
    poly = sympy.Poly(rel.lhs - rel.rhs, dims[0], roots[0]) if (rel.lhs - rel.rhs).is_polynomial(*dims, *roots) else None
    if poly is None or poly.total_degree() != 1:
        return None
    c_dim, c_root = poly.coeff_monomial(dims[0]), poly.coeff_monomial(roots[0])
    const = poly.coeff_monomial(1)
    if c_dim not in (1, -1) or not c_root.is_Integer or not const.is_Integer or c_root == 0:
        return None
    a, b = int(-c_root * c_dim), int(-const * c_dim)  # dim == a * root + b
    return (dims[0], a, roots[0], b) if a > 0 else None


def _derived_words(solver: Solver, names: Mapping[sympy.Symbol, str], values: Mapping[sympy.Symbol, int],
                   dim: sympy.Symbol, a: int, root: sympy.Symbol, b: int) -> str | None:
    """Why ``values[dim]`` is no ``a * root + b`` with ``root`` in its range, or None."""
    v, info = values[dim], solver.info(root)
    name, got = names[dim], f"got {names[dim]} = {v}"
    form = f"{a} * {names[root]}" + (f" + {b}" if b > 0 else f" - {-b}" if b < 0 else "") if a != 1 or b else names[root]
    if (v - b) % a:
        need = f"divisible by {a}" if b % a == 0 else f"{b % a} modulo {a}"
        return f"{name} must be {need} ({name} = {form}; {got})"
    r = (v - b) // a
    if info.lo is not None and r < info.lo:
        return f"{name} must be >= {a * info.lo + b} ({name} = {form}, {_range(info)}; {got})"
    if info.hi is not None and r > info.hi:
        return f"{name} must be <= {a * info.hi + b} ({name} = {form}, {_range(info)}; {got})"
    return None


def _unequal(solver: Solver, names: Mapping[sympy.Symbol, str], values: Mapping[sympy.Symbol, int]) -> list[str]:
    """Input dims the program holds equal whose sizes differ in the call."""
    out = []
    for cls in solver.classes():
        dims = [s for s in cls if s in values]
        if len({values[s] for s in dims}) > 1:
            first = dims[0]
            for other in dims[1:]:
                if values[other] != values[first]:
                    out.append(f"{names[other]} must equal {names[first]} "
                               f"(got {names[other]} = {values[other]}, {names[first]} = {values[first]})")
    return out


def refusal_text(solver: Solver, sizes: Mapping[str, int], static: Mapping[str, int] | None = None) -> str | None:
    """Why the program judged by ``solver`` refuses a call whose input dims have ``sizes``
    (``{"x.size(1)": 6}``, :func:`input_sizes`); ``static``: the program's static input dims
    and their sizes. None when no fact it relies on is false there.

    >>> print(refusal_text(Solver(), {"x.size(2)": 3}, {"x.size(2)": 6}))
    the exported program refuses these inputs:
      x.size(2) must be 6 (static in the program; got x.size(2) = 3)
    """
    reasons = [f"{d} must be {n} (static in the program; got {d} = {sizes[d]})"
               for d, n in (static or {}).items() if d in sizes and sizes[d] != n]
    by_source = {info.source: info.symbol for info in solver.symbols if info.source}
    values = {sym: sizes[src] for src, sym in by_source.items() if src in sizes}
    names = {info.symbol: _name(info) for info in solver.symbols}
    reasons += _unequal(solver, names, values) if values else []
    pinned = _pinned(solver, values)
    for fact in solver.facts if values else ():  # in order: a fact false given the ones before it is a reason
        if len(reasons) >= _MAX_REASONS:
            break
        derived = _derived(fact.rel, values)
        if derived is not None:  # x.size(1) == 4 * _s: judged on its own, in the words of a Dim
            text = _derived_words(solver, names, values, *derived)
            if text is not None and text not in reasons:
                reasons.append(text)
            continue
        try:
            false = pinned.decide(fact.rel) is Truth.FALSE
            if not false:
                pinned.assume(fact.rel)
        except Exception:  # noqa: BLE001 - a fact the pinned solver cannot judge is no reason
            continue
        if false and fact.rel.free_symbols & values.keys():
            text = _reason(fact, solver, names, values)
            if text not in reasons:
                reasons.append(text)
    if not reasons:
        return None
    return "the exported program refuses these inputs:\n" + "\n".join(f"  {r}" for r in reasons[:_MAX_REASONS])
