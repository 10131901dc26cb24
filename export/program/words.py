"""Causes in words: a guard as a sentence (:func:`plain_words`), and floor-division and
remainder facts said as the congruences they amount to (:func:`congruence_words`).

torch states a divisibility as the guard its op asked (``2 * ((c + 1) // 2) == c``,
``(L + 3) % 4 == 3``, ``h * w == 4 * (h // 2) * (w // 2)``); when the solver proves such facts
equivalent to congruences of input dims under the spec, a cause reads
``x.size(1) must be divisible by 2`` (or ``x.size(2) % 4 must be 3``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import sympy

from export.tracing.trace import Trace, relation_text, spec_or_positive
from shapes.expr import FloorDiv
from shapes.printing import to_python
from shapes.ranges import range_text
from solver import Fact, Reason, Solver, SolverError, Truth

__all__ = ["congruence_words", "plain_words", "specialized_words", "interval_words", "guard_words", "REQUIRES"]

REQUIRES = "the model requires "
"""How :func:`plain_words` begins a relation it has no sentence for (said as code)."""


def congruence_words(trace: Trace, facts: list[Fact]) -> list[str] | None:
    """``facts`` said as congruences of input dims, or None: the congruences the solver
    derives from the spec (with sizes >= 1) plus ``facts`` (beyond the spec's own), provided
    they imply every fact back (an equivalence, not a consequence) and each is about a class
    with an input dim equal to its root (``x.size(1) % 4 must be 3``).

    >>> import torch
    >>> from torch.export import Dim
    >>> from export.api import traced
    >>> def glu(x):
    ...     a, b = x.chunk(2, dim=-1)
    ...     return a * b
    >>> _, trace = traced(glu, (torch.randn(3, 8),), dynamic_shapes={"x": {1: Dim("c")}})
    >>> guards = [f for f in trace.solver.facts if f.reason.kind == "guard"]
    >>> [str(f.rel) for f in guards]
    ['Eq(FloorDiv(x_size1 + 1, 2), x_size1 - FloorDiv(x_size1 + 1, 2))']
    >>> congruence_words(trace, guards)
    ['x.size(1) must be divisible by 2']
    """
    kinds = ("spec", "trace_assumption")
    try:
        spec = trace.solver.replica(kinds=kinds, keep=spec_or_positive)
        before = set(spec.congruences())
        found = trace.solver.replica(kinds=kinds, keep=spec_or_positive, extra=tuple((f.rel, f.reason) for f in facts))
        new = [c for c in found.congruences() if c not in before]
        if not new:
            return None
        back = trace.solver.replica(kinds=kinds, keep=spec_or_positive, extra=tuple(
            (sympy.Eq(sympy.Mod(root, m), r), Reason("guard", f"{root} % {m} == {r}", None, None))
            for root, m, r in new))
        if any(back.decide(f.rel) is not Truth.TRUE for f in facts):
            return None
        words = []
        for root, m, r in new:
            shown = _input_dim_named(trace, spec, root)
            if shown is None:
                return None
            words.append(f"{shown} must be divisible by {m}" if r == 0 else f"{shown} % {m} must be {r}")
        return words
    except SolverError:
        return None


def guard_words(solver: Solver, rel: sympy.Basic, names: Mapping[sympy.Symbol, str]) -> str:
    """A guard of ``solver``'s in words: :func:`plain_words` of its normal form, a relation
    that is a range over the spec said as that range (:func:`interval_words`), one the
    other facts make true said as asked. Raises what the solver raises."""
    simple = solver.simplify(rel, minmax=True)
    known = isinstance(simple, sympy.logic.boolalg.BooleanAtom)  # true given the other facts (the
    words = relation_text(rel, names) if known else plain_words(simple, names)  # guard's own): as asked
    if (not known and words.startswith(REQUIRES)) \
            or (len(rel.free_symbols) == 1 and rel.has(FloorDiv, sympy.Mod, sympy.Min, sympy.Max)):
        # (a range of one dim through its floor divisions: ``((x.size(2) // 4 + 1) // 2 + 6) // 7
        # must be >= 2`` reads ``x.size(2) must be >= 52``)
        base = solver.replica(kinds=("spec", "trace_assumption"), keep=spec_or_positive)
        return interval_words(base, rel, names) or words
    return words


def interval_words(base: Solver, rel: sympy.Basic, names: Mapping[sympy.Symbol, str]) -> str | None:
    """A guard on one input dim said as the range it amounts to over ``base``'s facts (the
    spec), when it is exactly that range: torch's ``max(1, n - 5) + 5 == n`` (from
    ``x[:, 5:]``) reads ``x.size(1) must be >= 6``. None when it is no range.

    >>> from shapes import int_symbol
    >>> s = Solver(); n = s.symbol("n", 1, None)
    >>> interval_words(s, sympy.Eq(sympy.Max(1, n - 5) + 5, n), {n: "x.size(1)"})
    'x.size(1) must be >= 6'
    >>> interval_words(s, sympy.Eq(sympy.Mod(n, 2), 0), {n: "x.size(1)"}) is None
    True
    """
    if len(rel.free_symbols) != 1:
        return None
    sym = next(iter(rel.free_symbols))
    if sym not in names:
        return None
    try:
        before = base.bounds(sym)
        lo, hi = base.replica(kinds=("spec", "trace_assumption"), extra=((rel, Reason("guard", "", None, None)),)).bounds(sym)
        if (lo, hi) == before:
            return None
        said = tuple((r, Reason("guard", "", None, None)) for r in
                     ([sympy.Ge(sym, lo)] if lo is not None else []) + ([sympy.Le(sym, hi)] if hi is not None else []))
        if base.replica(kinds=("spec", "trace_assumption"), extra=said).decide(rel) is not Truth.TRUE:
            return None
    except SolverError:
        return None
    name = names[sym]
    if lo is not None and lo == hi:
        return f"{name} must be {lo}"
    if lo != before[0] and hi != before[1]:
        return f"{name} must be in {range_text(lo, hi)}"
    return f"{name} must be >= {lo}" if lo != before[0] else f"{name} must be <= {hi}"


def _input_dim_named(trace: Trace, spec: Solver, root: sympy.Symbol) -> str | None:
    """The name of an input dim equal to ``root`` under the spec (``x.size(1)``), or None."""
    for d, sym in sorted(trace.dim_syms.items(), key=lambda kv: str(kv[0])):
        if spec.root_of(sym) == spec.root_of(root) and spec.decide(sympy.Eq(sym, root)) is Truth.TRUE:
            return trace.names.get(sym, str(d))
    return None




def _divisible(e: sympy.Expr, k: int, names: Mapping[sympy.Symbol, str], negated: bool) -> str:
    """``e must be divisible by k``, a factor prime to ``k`` left out (``3*t`` is when ``t`` is)."""
    c, x = e.as_coeff_Mul()
    if c.is_Integer and x.free_symbols and math.gcd(int(c), k) == 1:
        e = x
    return f"{to_python(e, names)} must {'not ' if negated else ''}be divisible by {k}"


def _rounded_to_itself(terms: tuple[sympy.Expr, ...]) -> tuple[sympy.Expr, int] | None:
    """``(e, k)`` when ``terms`` sum to ``k*FloorDiv(e + j, k) - e`` (either sign) with ``0 <= j < k``:
    ``e`` rounded to a multiple of ``k`` is ``e`` itself, i.e. ``e`` is divisible by ``k``."""
    for mine, other in (terms, terms[::-1]):
        c, f = mine.as_coeff_Mul()
        if not isinstance(f, FloorDiv) or not f.args[1].is_Integer or not c.is_Integer:
            continue
        k = int(f.args[1])
        if k < 2 or abs(int(c)) != k:
            continue
        e = -other / int(c) * k
        j = sympy.expand(f.args[0] - e)
        if j.is_Integer and 0 <= int(j) < k:
            return e, k
    return None


def plain_words(rel: sympy.Basic, names: Mapping[sympy.Symbol, str]) -> str:
    """A guard in words: ``x.size(1) must be divisible by 4``, ``x.size(0) must be <= 5``,
    ``x.size(0) must equal y.size(0)``; otherwise the relation as code.

    ``rel`` should be in the solver's normal form (``d op 0``, see ``Solver.simplify``).

    >>> from shapes import int_symbol
    >>> t = int_symbol("t")
    >>> plain_words(sympy.Eq(sympy.Mod(t, 4), 0), {t: "x.size(1)"})
    'x.size(1) must be divisible by 4'
    >>> plain_words(sympy.Ge(5 - t, 0), {t: "x.size(0)"})
    'x.size(0) must be <= 5'
    >>> from shapes import FloorDiv
    >>> plain_words(sympy.Ge(-sympy.Mod(3 * FloorDiv(t, 4), 4), 0), {t: "x.size(2)"})  # Swin's window padding
    'x.size(2) // 4 must be divisible by 4'
    >>> plain_words(sympy.Eq(7 * FloorDiv(FloorDiv(t, 4) + 6, 7) - FloorDiv(t, 4), 0), {t: "x.size(3)"})  # swin_t's
    'x.size(3) // 4 must be divisible by 7'
    """
    if not isinstance(rel, (sympy.Eq, sympy.Ne, sympy.Ge)) or rel.rhs != 0:
        return to_python(rel, names)
    d = rel.lhs
    op = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Ge: ">="}[type(rel)]
    const, rest = d.as_coeff_Add()
    if isinstance(rest, sympy.Mod) and rest.args[1].is_Integer and op in ("==", "!="):
        k = int(rest.args[1])
        target = -int(const)
        if target == 0 and k > 0:
            return _divisible(rest.args[0], k, names, op == "!=")
        return f"{to_python(rest, names)} must {'' if op == '==' else 'not '}be {target}"
    terms = sympy.Add.make_args(rest)
    if len(terms) == 1:
        c, x = rest.as_coeff_Mul()
        if c.is_Integer and x.free_symbols:
            shown = to_python(x, names)
            value = sympy.Rational(-const, c)
            if op == ">=" and value == 0 and c < 0 and isinstance(x, sympy.Mod) and x.args[1].is_Integer \
                    and int(x.args[1]) > 0:  # Mod(e, k) <= 0: the remainder is 0
                return _divisible(x.args[0], int(x.args[1]), names, False)
            if op == ">=":
                bound = sympy.ceiling(value) if c > 0 else sympy.floor(value)
                return f"{shown} must be {'>=' if c > 0 else '<='} {bound}"
            if value == 0 and isinstance(x, sympy.Mod) and x.args[1].is_Integer and int(x.args[1]) > 0:
                return _divisible(x.args[0], int(x.args[1]), names, op == "!=")  # -Mod(e, k) == 0
            if value.is_Integer:
                note = ""
                if op == "!=" and value in (0, 1):
                    note = f" (a size of {value} behaves differently, e.g. in broadcasting, so the trace excluded it)"
                return f"{shown} must {'' if op == '==' else 'not '}be {value}{note}"
    if len(terms) == 2 and const == 0 and op in ("==", "!="):
        multiple = _rounded_to_itself(terms)
        if multiple is not None:
            return _divisible(*multiple, names, op == "!=")
        (c1, x1), (c2, x2) = (t.as_coeff_Mul() for t in terms)
        if c1 == -c2:
            verb = "must equal" if op == "==" else "must differ from"
            return f"{to_python(x1, names)} {verb} {to_python(x2, names)}"
    pos = sympy.Add(*[t for t in sympy.Add.make_args(d) if t.as_coeff_Mul()[0] > 0])
    neg = -sympy.Add(*[t for t in sympy.Add.make_args(d) if t.as_coeff_Mul()[0] < 0])
    rel2 = {"==": sympy.Eq, "!=": sympy.Ne, ">=": sympy.Ge}[op](pos, neg, evaluate=False)
    return f"{REQUIRES}{to_python(rel2, names)}"


def specialized_words(dims: tuple[str, ...], value: object) -> str:
    """The cause of a dynamic dim torch specialized at its 0/1 example size.

    >>> specialized_words(("x.size(0)",), 1)
    'x.size(0) was specialized to 1: the example input has size 1 on a dim declared dynamic; use an example of size >= 2'
    """
    return (f"{', '.join(dims)} was specialized to {value}: the example input has size {value} "
            f"on a dim declared dynamic; use an example of size >= 2")
