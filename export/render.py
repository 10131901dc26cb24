"""Render a spec as code: the modern ``Dim`` form and the classic ``dynamic_dim`` form.

Both outputs are valid Python that pastes and runs in the user's script (where the
example inputs are bound to the argument names). Fixes are data until this step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import sympy
import torch

from export.inputs import Inputs
from export.spec import Spec
from shapes.printing import to_python
from shapes.spec import CLASSIC_MAX, CLASSIC_MIN, InputDim

__all__ = ["render_modern", "render_classic", "render_checks", "dim_text", "plain_words"]


def dim_text(d: InputDim) -> str:
    """``x.shape[0]`` for an input dim (what user code would write)."""
    return f"{d.input_name}.shape[{d.dim}]"


def _dim_call(name: str, lo: int, hi: int | None) -> str:
    parts = [repr(name)] + ([f"min={lo}"] if lo != 0 else []) + ([f"max={hi}"] if hi is not None else [])
    return f"Dim({', '.join(parts)})"


def render_modern(spec: Spec, inputs: Inputs) -> str:
    """``from torch.export import Dim`` ... ``dynamic_shapes = {...}`` for ``spec``."""
    lines = ["from torch.export import Dim", ""]
    names = {r.symbol: r.name for r in spec.roots}
    for r in spec.roots:
        lines.append(f"{r.name} = {_dim_call(r.name, r.lo, r.hi)}")
    per_leaf: dict[str, dict[int, str]] = {}
    for decl in spec.decls:
        text = decl.text if decl.expr is None else to_python(decl.expr, names)
        per_leaf.setdefault(decl.dim.input_name, {})[decl.dim.dim] = text
    body = ", ".join(f"{p!r}: {_literal(v, p, per_leaf) if _mentions(p, per_leaf) else 'None'}"
                     for p, v in inputs.bound.items())
    lines.append(f"dynamic_shapes = {{{body}}}")
    return "\n".join(lines)


def _mentions(param: str, per_leaf: Mapping[str, Any]) -> bool:
    return any(name == param or name.startswith(param + "[") or name.startswith(param + ".") for name in per_leaf)


def _literal(value: Any, name: str, per_leaf: Mapping[str, Mapping[int, str]]) -> str:
    if isinstance(value, torch.Tensor):
        dims = per_leaf.get(name)
        return "None" if not dims else "{" + ", ".join(f"{i}: {t}" for i, t in sorted(dims.items())) + "}"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {_literal(v, f'{name}[{k!r}]', per_leaf)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        inner = ", ".join(_literal(getattr(value, f), f"{name}.{f}", per_leaf) for f in value._fields)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_literal(v, f"{name}[{i}]", per_leaf) for i, v in enumerate(value))
        return f"[{inner}]" if isinstance(value, list) else (f"({inner},)" if len(value) == 1 else f"({inner})")
    return "None"


def render_classic(spec: Spec, inputs: Inputs) -> str:
    """``def specify_constraints(...): return [dynamic_dim(x, 0) <= 5, ...]`` for ``spec``."""
    items: list[str] = []
    notes: list[str] = []
    for r, primary, related in spec.groups():
        if primary is None:
            for d in related:
                notes.append(f"# {d.dim} = {to_python(d.expr, {r.symbol: r.name})}: dynamic_dim cannot say "
                             f"this (use the Dim form)")
            continue
        p = _classic(primary.dim)
        ranged = False
        if r.lo > CLASSIC_MIN:
            items.append(f"{p} >= {r.lo}")
            ranged = True
        if r.hi is not None and r.hi < CLASSIC_MAX:
            items.append(f"{p} <= {r.hi}")
            ranged = True
        if not ranged and not related:
            items.append(p)
        for d in related:
            if d.expr is None or len(d.expr.free_symbols) != 1:
                continue
            rhs = to_python(d.expr, {r.symbol: p})
            items.append(f"{_classic(d.dim)} == {rhs}")
    mentioned = [p for p in inputs.params if any(_root_param(d.dim) == p for d in spec.decls)]
    params = mentioned or list(inputs.params)  # every dim static: still callable with the inputs
    head = f"def specify_constraints({', '.join(params)}):"
    if not items and not notes:
        return f"{head}\n    return []  # every input dim is static: no dynamic_dim to declare"
    lines = [head, "    return ["]
    lines += [f"        {item}," for item in items]
    lines += [f"        {note}" for note in notes]
    lines.append("    ]")
    return "\n".join(lines)


def _root_param(d: InputDim) -> str:
    name = d.input_name
    for sep in ("[", "."):
        name = name.split(sep, 1)[0]
    return name


def _classic(d: InputDim) -> str:
    return f"dynamic_dim({d.input_name}, {d.dim})"


def render_checks(checks: tuple[sympy.Basic, ...], names: Mapping[sympy.Symbol, str]) -> list[str]:
    """``torch._check(...)`` lines for relations a spec cannot say."""
    return [f"torch._check({to_python(rel, names)})" for rel in checks]


def _divisible(e: sympy.Expr, k: int, names: Mapping[sympy.Symbol, str], negated: bool) -> str:
    """``e must be divisible by k``, a factor prime to ``k`` left out (``3*t`` is when ``t`` is)."""
    c, x = e.as_coeff_Mul()
    if c.is_Integer and x.free_symbols and math.gcd(int(c), k) == 1:
        e = x
    return f"{to_python(e, names)} must {'not ' if negated else ''}be divisible by {k}"


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
            if value.is_Integer:
                note = ""
                if op == "!=" and value in (0, 1):
                    note = f" (a size of {value} behaves differently, e.g. in broadcasting, so the trace excluded it)"
                return f"{shown} must {'' if op == '==' else 'not '}be {value}{note}"
    if len(terms) == 2 and const == 0 and op in ("==", "!="):
        (c1, x1), (c2, x2) = (t.as_coeff_Mul() for t in terms)
        if c1 == -c2:
            verb = "must equal" if op == "==" else "must differ from"
            return f"{to_python(x1, names)} {verb} {to_python(x2, names)}"
    pos = sympy.Add(*[t for t in sympy.Add.make_args(d) if t.as_coeff_Mul()[0] > 0])
    neg = -sympy.Add(*[t for t in sympy.Add.make_args(d) if t.as_coeff_Mul()[0] < 0])
    rel2 = {"==": sympy.Eq, "!=": sympy.Ne, ">=": sympy.Ge}[op](pos, neg, evaluate=False)
    return f"the model requires {to_python(rel2, names)}"
