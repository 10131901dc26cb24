"""What ExecuTorch's memory planning reads of a program's sizes, for :mod:`export.deploy.executorch`
(torch's private ``SymInt.node``, ``ShapeEnv`` ranges and ``bound_sympy``; no ExecuTorch import).

ExecuTorch (1.5) plans every tensor of a program for the largest size it can take: each size
is bounded with torch's ``bound_sympy`` over the shape env's ranges, and a size with no finite
bound is planned at its hint (its value in the trace), the expression as a whole. So a dim
with no max plans the inputs at the example's size, and a product such as
``batch * (seq // 4)`` at the example's product even where ``seq`` has a max: the ``.pte``
refuses sizes that no per-dim bound says; and the shape env's ranges are torch's, which can
be narrower than the program's (torch keeps its ``>= 2`` floor where the export relieved it,
and derives ``s <= 62`` from ``s + p <= 64``). :func:`size_upper_bound` bounds a size over
the program's ranges instead, each symbol without a finite max capped at its hint, so that
a plan made with it runs every call whose dims stay within those ranges and caps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy
import torch
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

from export._torch_compat.symbols import symbol_hint

__all__ = ["size_upper_bound"]


def _finite(bound: Any) -> bool:
    return bound not in (int_oo, -int_oo, sympy.oo, -sympy.oo) and bool(getattr(bound, "is_finite", True))


def _range(env: Any, sym: sympy.Symbol, known: Mapping[sympy.Symbol, ValueRanges], cap_at_hint: bool) -> ValueRanges:
    """``sym``'s range: ``known``'s (the program's ``range_constraints``), else the shape
    env's; with ``cap_at_hint``, no higher than its hint when it has no finite max."""
    vr: ValueRanges = known.get(sym) or env.var_to_range.get(sym, ValueRanges(-int_oo, int_oo))
    hint = symbol_hint(env, sym) if cap_at_hint and not _finite(vr.upper) else None
    if hint is None:
        return vr
    return ValueRanges(vr.lower, max(hint, int(vr.lower)) if _finite(vr.lower) else hint)


def size_upper_bound(size: int | torch.SymInt, known: Mapping[sympy.Symbol, ValueRanges], *,
                     cap_at_hint: bool) -> int | None:
    """The largest value ``size`` (an int, or a SymInt of a traced program) takes over its
    symbols' ranges: ``known``'s (pass a program's ``range_constraints``: the export's
    final ranges, which torch's shape env may not hold), else torch's shape env's; with
    ``cap_at_hint``, a symbol with no finite max ranges up to its hint (the size it was
    traced at). None when it has no finite bound (a symbol with no max and no cap, or a
    data-dependent one, which has no hint).

    >>> size_upper_bound(7, {}, cap_at_hint=False)
    7
    """
    if isinstance(size, int):
        return size
    expr = size.node.expr
    env = size.node.shape_env
    ranges = {s: _range(env, s, known, cap_at_hint) for s in expr.free_symbols}
    hi = bound_sympy(expr, ranges).upper
    if not _finite(hi) and len(ranges) == 1:
        (sym, vr), = ranges.items()
        return _largest_value(expr, sym, vr)
    return int(hi) if _finite(hi) else None


_MAX_POINTS = 1 << 14
"""How many values of one symbol :func:`_largest_value` evaluates at most."""


def _largest_value(expr: sympy.Expr, sym: sympy.Symbol, vr: ValueRanges) -> int | None:
    """The largest value of ``expr`` over the integers of ``vr`` where it is defined, for a
    range of at most :data:`_MAX_POINTS` values: interval arithmetic cannot bound a quotient
    by a range that holds 0 (``s // (s // 4)``, how torch writes the 4 of ``reshape(b, s // 4,
    4)``), where the program is no program (it refuses those sizes)."""
    if not (_finite(vr.lower) and _finite(vr.upper)) or int(vr.upper) - int(vr.lower) >= _MAX_POINTS:
        return None
    values = []
    for v in range(int(vr.lower), int(vr.upper) + 1):
        try:
            value = expr.xreplace({sym: sympy.Integer(v)})
        except ZeroDivisionError:
            continue
        if value.is_Integer:
            values.append(int(value))
    return max(values) if values else None
