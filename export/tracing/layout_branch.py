"""Branches that only choose a memory layout: an ``if`` on sizes whose arms differ by ``.contiguous()``.

diffusers' upsamplers (``Upsample2D``, ``ResnetBlock2D``) work around a kernel bug with::

    if hidden_states.shape[0] >= 64:
        hidden_states = hidden_states.contiguous()

Whatever the test answers, the values computed after it are the same: ``contiguous()``
returns its input unchanged when it is contiguous, else a contiguous copy of it, the same
values in another layout. The bridge answers such a question by the example with no fact
(:meth:`export.tracing.questions.Questions.layout_branch`):

* when every tensor the arms name is contiguous in the trace, either answer traces the
  same graph;
* when one is not (diffusers' feature maps are channels-last on CPU), the other answer adds
  a copy. A copy differs from its input only for code that mutates one of them in place
  and reads the other: the export keeps the answer only if the program's graph mutates no
  tensor (:func:`export._torch_compat.graph_mutates`), else it traces again without this
  rule (``Exporter.trace``). (Code whose values depend on a layout is beyond any exported
  program: torch's kernels choose layouts by size.)

The rule is read from the source (:func:`layout_branches`), not from a table of lines:

* the ``if`` statement's test only reads sizes: comparisons, arithmetic and ``and``/``or``/
  ``not`` of names, constants, attributes, subscripts, ``.size()``/``.dim()``/``.numel()``/
  ``.stride()`` calls and the builtins ``pow``, ``min``, ``max``, ``abs``, ``int``, ``len`` (nothing else is
  called, so the answer changes nothing but the arm taken);
* each arm is only ``v = v.contiguous()`` statements (or ``pass``, or absent);

and from the frame when the question is asked (:func:`layout_now`): the builtins called are
not rebound, and every name the arms rebind is a tensor, contiguous or not (its strides read
as expressions: no question is asked to read them).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any

import sympy
import torch

from export import _torch_compat as tc

__all__ = ["LAYOUT_PREFIX", "LAYOUT_WHY", "LayoutBranch", "layout_branches", "layout_now", "layout_detail", "copies",
           "same_graph", "detail_names"]

LAYOUT_PREFIX = "layout-only branch of "
"""The site detail of a question asked by such an ``if`` (:mod:`export.tracing.sites`), before the names."""

COPY_SUFFIX = " (a copy at other sizes)"
"""The end of that detail when some tensor is not contiguous in the trace: the other answer copies it."""

LAYOUT_WHY = ("the branch only rebinds contiguous tensors to their .contiguous(), which returns them unchanged: "
              "either answer traces the same graph")
"""Why a question at a layout-only branch whose tensors are contiguous is value-neutral (the
0/1 tables' justification; a copying one is judged by ``Questions.layout_branch`` alone)."""

_SIZE_CALLS = frozenset({"size", "dim", "numel", "stride"})
_PURE_BUILTINS = frozenset({"pow", "min", "max", "abs", "int", "len"})
"""Builtins a test may call on sizes (diffusers: ``numel() * scale_factor > pow(2, 31)``),
when the frame does not rebind their names (:func:`layout_now`)."""
_READ_NODES = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.Name, ast.Constant, ast.Attribute,
               ast.Subscript, ast.Slice, ast.Tuple, ast.expr_context, ast.cmpop, ast.boolop, ast.unaryop,
               ast.operator)


def _builtins_read(test: ast.expr) -> frozenset[str] | None:
    """The builtins ``test`` calls, when it calls nothing but those of :data:`_PURE_BUILTINS`
    and ``.size()``/``.dim()``/``.numel()``/``.stride()`` (with constant arguments); None otherwise."""
    called: set[str] = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            if node.keywords:
                return None
            if isinstance(node.func, ast.Name) and node.func.id in _PURE_BUILTINS:
                called.add(node.func.id)
            elif not (isinstance(node.func, ast.Attribute) and node.func.attr in _SIZE_CALLS
                      and all(isinstance(a, (ast.Constant, ast.UnaryOp)) for a in node.args)):
                return None
        elif not isinstance(node, _READ_NODES):
            return None
    return frozenset(called)


def _contiguous_of_itself(stmt: ast.stmt) -> str | None:
    """``v`` for ``v = v.contiguous()``, else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    name, call = stmt.targets[0].id, stmt.value
    if isinstance(call, ast.Call) and not call.args and not call.keywords and isinstance(call.func, ast.Attribute) \
            and call.func.attr == "contiguous" and isinstance(call.func.value, ast.Name) and call.func.value.id == name:
        return name
    return None


def _arm_names(stmts: list[ast.stmt]) -> set[str] | None:
    """The names an arm rebinds to their ``.contiguous()``; None when it does anything else."""
    names: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, ast.Pass):
            continue
        name = _contiguous_of_itself(stmt)
        if name is None:
            return None
        names.add(name)
    return names


@dataclass(frozen=True, slots=True)
class LayoutBranch:
    """A layout-only ``if``: the ``names`` its arms rebind to their ``.contiguous()``, and the
    ``builtins`` its test calls."""

    names: tuple[str, ...]
    builtins: frozenset[str] = frozenset()


def layout_branches(source: str) -> Mapping[int, LayoutBranch]:
    """The lines of the tests of the layout-only ``if`` statements of ``source`` (a module's
    text), each with its :class:`LayoutBranch`.

    >>> src = '''
    ... def up(h, n):
    ...     if h.shape[0] >= 64:
    ...         h = h.contiguous()
    ...     if h.shape[0] > 4 and n.size(1) == 2:
    ...         pass
    ...     else:
    ...         n = n.contiguous()
    ...     if h.shape[0] >= 64:
    ...         h = h.contiguous()
    ...         h = h * 2
    ...     if len(h) > 3:
    ...         h = h.contiguous()
    ...     if h.numel() * 2 > pow(2, 31) and print(h):
    ...         h = h.contiguous()
    ...     return h
    ... '''
    >>> {line: (b.names, sorted(b.builtins)) for line, b in layout_branches(src).items()}
    {3: (('h',), []), 5: (('n',), []), 12: (('h',), ['len'])}
    >>> layout_branches("def f(:") == {}
    True
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out: dict[int, LayoutBranch] = {}
    for node in ast.walk(tree):
        called = _builtins_read(node.test) if isinstance(node, ast.If) else None
        if not isinstance(node, ast.If) or called is None:
            continue
        body, other = _arm_names(node.body), _arm_names(node.orelse)
        if body is None or other is None or not (body | other):
            continue
        branch = LayoutBranch(tuple(sorted(body | other)), called)
        for line in range(node.test.lineno, (node.test.end_lineno or node.test.lineno) + 1):
            out[line] = branch
    return out


def _plainly_contiguous(value: Any) -> bool:
    """Whether ``value`` is a tensor whose strides are its sizes' contiguous strides, as expressions."""
    if not isinstance(value, torch.Tensor):
        return False
    try:
        sizes = [tc.sym_expr(s) for s in value.shape]
        strides = [tc.sym_expr(s) for s in value.stride()]
    except Exception:  # noqa: BLE001 - a tensor whose strides cannot be read is not known contiguous
        return False
    expected: sympy.Expr = sympy.Integer(1)
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size is None or stride is None or sympy.expand(stride - expected) != 0:
            return False
        expected = expected * size
    return True


def layout_now(frame: FrameType, branch: LayoutBranch) -> bool | None:
    """Whether every name ``branch`` rebinds is, in ``frame``, a tensor with contiguous
    strides (True), a tensor while some is not contiguous (False), or None when one is no
    tensor or the frame rebinds a builtin the test calls.

    >>> import sys
    >>> h = torch.ones(2, 3)
    >>> here = sys._getframe()
    >>> layout_now(here, LayoutBranch(("h",))), layout_now(here, LayoutBranch(("torch",)))
    (True, None)
    >>> h = h.t()
    >>> layout_now(sys._getframe(), LayoutBranch(("h",), frozenset({"max"})))
    False
    >>> max = min
    >>> layout_now(sys._getframe(), LayoutBranch(("h",), frozenset({"max"}))) is None
    True
    >>> del max
    """
    scope = frame.f_locals
    if any(b in scope or b in frame.f_globals for b in branch.builtins):
        return None
    values = [scope.get(n) for n in branch.names]
    if not values or not all(isinstance(v, torch.Tensor) for v in values):
        return None
    return all(_plainly_contiguous(v) for v in values)


def layout_detail(names: tuple[str, ...], contiguous: bool) -> str:
    """The site detail of a question asked by a layout-only branch that rebinds ``names``
    (``contiguous``: all contiguous in the trace, else the other answer copies).

    >>> layout_detail(("h", "x"), True), layout_detail(("h",), False)
    ('layout-only branch of h, x', 'layout-only branch of h (a copy at other sizes)')
    """
    return LAYOUT_PREFIX + ", ".join(names) + ("" if contiguous else COPY_SUFFIX)


def copies(detail: str) -> bool:
    """Whether a layout-only branch's site detail says the other answer copies.

    >>> copies(layout_detail(("h",), False)), copies(layout_detail(("h",), True))
    (True, False)
    """
    return detail.startswith(LAYOUT_PREFIX) and detail.endswith(COPY_SUFFIX)


def same_graph(detail: str) -> bool:
    """Whether a site detail is a layout-only branch whose tensors were all contiguous: either
    answer traces the same graph (a value-neutral site whatever it answers). A copying one
    is judged by ``Questions.layout_branch`` alone: its graph must not mutate a tensor.

    >>> same_graph(layout_detail(("h",), True)), same_graph(layout_detail(("h",), False)), same_graph("")
    (True, False, False)
    """
    return detail.startswith(LAYOUT_PREFIX) and not detail.endswith(COPY_SUFFIX)


def detail_names(detail: str) -> str:
    """The names a layout-only branch's site detail lists.

    >>> detail_names(layout_detail(("h", "x"), False))
    'h, x'
    """
    return detail.removeprefix(LAYOUT_PREFIX).removesuffix(COPY_SUFFIX)
