"""Two exported graphs compared at a point: :func:`graph_form` reads a program's graph as
comparable data (ops and targets in order, sizes as expressions in the trace's dims read at the
point, value identities folded), so that the 0/1 evidence (:mod:`export.program.zero_one`)
can tell whether a boundary re-trace gave the general program's graph."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy
from torch.export import ExportedProgram

from export import _torch_compat as tc
from export.tracing.trace import Trace
from solver import Truth

__all__ = ["graph_form"]

_INT_MAX = 2**63 - 1
_ASSERTS = ("_assert_scalar", "sym_constrain_range", "_assert_tensor_metadata", "_assert_async")


def graph_form(ep: ExportedProgram, trace: Trace, values: Mapping[str, int]) -> tuple[Any, ...]:
    """The graph of ``ep`` as comparable data, read at a point: ops and targets in order,
    arguments with nodes by position and sizes as their expressions (torch's symbols
    renamed to the trace's dims, those named in ``values`` replaced by the value, the others
    read as sizes >= 1, so ``Max(1, n)`` reads ``n``). Size arithmetic and runtime asserts
    are folded away (a boundary trace computes sizes as constants; asserts are checks,
    compared as guards, not as ops); a slice that takes every element at the point (torch
    drops it where it can tell) and ``contiguous`` read as their input; an in-place op's
    result (``copy_``, ``add_``: its schema returns the mutated first argument) reads as
    that argument, whichever of the two later nodes name."""
    env: dict[Any, Any] = {}
    out: list[Any] = []
    canon = _Canonical(trace)
    for node in ep.graph_module.graph.nodes:
        if node.op == "placeholder":
            env[node] = ("input", node.name)
            continue
        size = _size_form(canon, node.meta.get("val"), values) if node.op == "call_function" else None
        if size is not None:
            env[node] = size
            continue
        if node.op == "call_function" and any(a in str(node.target) for a in _ASSERTS):
            continue
        if _is_full_slice(node) or _is_value_identity(node) or _is_whole_slice(canon, node, values):
            env[node] = _norm(node.args[0], env)  # the same values as its input, at every size
            continue
        env[node] = ("node", len(out))
        out.append((node.op, str(node.target), _norm(node.args, env), _norm(dict(node.kwargs), env)))
        if node.op == "call_function" and node.args and tc.returns_self(node.target):
            env[node] = _norm(node.args[0], env)  # the mutated first argument, whichever node names it
    return tuple(out)


def _is_whole_slice(canon: "_Canonical", node: Any, values: Mapping[str, int]) -> bool:
    """``aten.slice.Tensor(x, dim, 0, end)`` whose result, read at the point, is as long as
    ``x`` along ``dim``: every element of ``x`` (torch drops such a slice when it can tell,
    e.g. ``z[:, :n]`` where ``z`` has ``Max(n, m)`` columns and ``m`` is 1 at the point)."""
    bounds = _slice_bounds(node)
    if bounds is None or bounds[0] not in (0, None) or bounds[2] not in (1, None) or len(node.args) < 2 or \
            not hasattr(node.args[0], "meta"):
        return False
    source, result, dim = node.args[0].meta.get("val"), node.meta.get("val"), node.args[1]
    if not isinstance(dim, int) or not hasattr(source, "shape") or not hasattr(result, "shape") or \
            len(source.shape) != len(result.shape):
        return False
    before, after = (_size_form(canon, v.shape[dim], values) for v in (source, result))
    return before is not None and before == after


def _is_value_identity(node: Any) -> bool:
    """``aten.contiguous``: the input's values in another layout (torch records it only
    when it cannot tell the input is contiguous already, e.g. not at size 1)."""
    return node.op == "call_function" and str(node.target).startswith("aten.contiguous.")


def _is_full_slice(node: Any) -> bool:
    """``aten.slice.Tensor(x, dim, 0, >= 2**63 - 1[, 1])``: every element of ``x``, whatever
    its size (torch drops such a slice when it can tell it is full, e.g. at size 1)."""
    bounds = _slice_bounds(node)
    if bounds is None:
        return False
    start, end, step = bounds
    return start in (0, None) and (end is None or (isinstance(end, int) and end >= _INT_MAX)) and step in (1, None)


def _slice_bounds(node: Any) -> tuple[Any, Any, Any] | None:
    """``(start, end, step)`` of an ``aten.slice.Tensor`` node (torch's defaults filled in),
    None for any other node."""
    if node.op != "call_function" or str(node.target) != "aten.slice.Tensor":
        return None
    rest = list(node.args[2:]) + [node.kwargs.get(k) for k in ("start", "end", "step") if k in node.kwargs]
    start, end, step = (rest + [0, _INT_MAX, 1][len(rest):])[:3]
    return start, end, step


class _Canonical:
    """Sizes in a trace's dims, each dim replaced by the first (by name) dim its trace
    proves equal to it: two traces may pick different members of one class."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.named: dict[sympy.Symbol, sympy.Symbol] = {}
        self.dims = sorted({*trace.dim_syms.values(), *trace.root_syms.values()}, key=lambda s: s.name)
        self.sizes = frozenset(trace.dim_syms.values())  # input tensors' sizes: >= 1 off the point

    def symbol(self, sym: sympy.Symbol) -> sympy.Symbol:
        if sym not in self.named:
            self.named[sym] = sym
            if sym in self.dims:
                root = self.trace.solver.root_of(sym)
                for other in self.dims:
                    if self.trace.solver.root_of(other) == root and \
                            self.trace.solver.decide(sympy.Eq(other, sym)) is Truth.TRUE:
                        self.named[sym] = other
                        break
        return self.named[sym]

    def expression(self, expr: sympy.Basic, values: Mapping[str, int]) -> str:
        mine = self.trace.expression(expr) if not isinstance(expr, sympy.logic.boolalg.BooleanAtom) else expr
        if mine is None:
            return str(expr)
        subs: dict[sympy.Basic, Any] = {}
        for s in mine.free_symbols:
            c = self.symbol(s)
            # an input's size off the point is >= 1 there (size 0 is judged after size 1, each
            # point with the others >= 1): Max(1, n) and n read alike; a derived dim's root may be 0
            positive = s in self.sizes or c in self.sizes
            subs[s] = values.get(s.name, values.get(c.name, self._positive(c) if positive else c))
        return str(sympy.expand(mine.xreplace(subs)) if subs else mine)

    def _positive(self, sym: sympy.Symbol) -> sympy.Symbol:
        return sympy.Symbol(sym.name, integer=True, positive=True)


def _size_form(canon: _Canonical, val: Any, values: Mapping[str, int]) -> tuple[str, str] | None:
    expr = tc.sym_expr(val) if not isinstance(val, (list, tuple)) else None
    if expr is None:
        return None
    return ("size", canon.expression(expr, values))


def _norm(x: Any, env: Mapping[Any, Any]) -> Any:
    if isinstance(x, (list, tuple)):
        return tuple(_norm(v, env) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _norm(v, env)) for k, v in x.items()))
    if x in env if _hashable(x) else False:
        return env[x]
    if isinstance(x, int) and not isinstance(x, bool):
        return ("size", str(x))
    return repr(x)


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True
