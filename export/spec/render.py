"""Render a spec as code: the modern ``Dim`` form, the classic ``dynamic_dim`` form, and the
``symshape export --dynamic`` flags.

Both code outputs are valid Python that pastes and runs in the user's script (where the
example inputs are bound to the argument names). Fixes are data until this step. A maximum that
only repeats the classic default (``2**63 - 2``, or what it leaves a derived dim's root) is left
out: such a Dim is unbounded.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

import sympy
import torch

from export.spec.inputs import Inputs
from shapes.printing import to_python
from shapes.ranges import CLASSIC_MIN, open_max
from shapes.spec import InputDim, RootDim, Spec

__all__ = ["render_modern", "render_classic", "render_checks", "render_flags", "dim_text", "dim_call", "shown_max"]

def shown_max(root: RootDim, spec: Spec) -> int | None:
    """``root.hi`` as the fix shows it: None when it (or a dim derived from it, at that value)
    only repeats the classic default maximum."""
    if open_max(root.hi) is None:
        return None
    for decl in spec.decls:
        if decl.expr is not None and root.symbol in decl.expr.free_symbols:
            at = decl.expr.subs(root.symbol, root.hi)
            if at.is_number and open_max(int(at)) is None:
                return None
    return root.hi


def dim_text(d: InputDim) -> str:
    """``x.shape[0]`` for an input dim (what user code would write); an int input's name."""
    return d.input_name if d.dim is None else f"{d.input_name}.shape[{d.dim}]"


def dim_call(name: str, lo: int | None, hi: int | None) -> str:
    """The ``Dim(...)`` call that declares a root ``name`` in ``[lo, hi]`` (``hi`` None: no max).

    >>> dim_call("b", 0, None), dim_call("s", 2, 64), dim_call("n", None, 8)
    ("Dim('b')", "Dim('s', min=2, max=64)", 'Dim.DYNAMIC(max=8)')
    """
    if lo is None:  # an int input with no lower bound: torch takes that only as Dim.DYNAMIC
        return "Dim.DYNAMIC" + (f"(max={hi})" if hi is not None else "")
    parts = [repr(name)] + ([f"min={lo}"] if lo != 0 else []) + ([f"max={hi}"] if hi is not None else [])
    return f"Dim({', '.join(parts)})"


def render_modern(spec: Spec, inputs: Inputs) -> str:
    """``from torch.export import Dim`` ... ``dynamic_shapes = {...}`` for ``spec``."""
    lines = ["from torch.export import Dim", ""]
    names = {r.symbol: r.name for r in spec.roots}
    for r in spec.roots:
        lines.append(f"{r.name} = {dim_call(r.name, r.lo, shown_max(r, spec))}")
    per_leaf: dict[str, dict[int | None, str]] = {}
    for decl in spec.decls:
        text = decl.text if decl.expr is None else to_python(decl.expr, names)
        per_leaf.setdefault(decl.dim.input_name, {})[decl.dim.dim] = text
    body = ", ".join(f"{p!r}: {_literal(v, p, per_leaf) if _mentions(p, per_leaf) else 'None'}"
                     for p, v in inputs.bound.items())
    lines.append(f"dynamic_shapes = {{{body}}}")
    return "\n".join(lines)


def _mentions(param: str, per_leaf: Mapping[str, Any]) -> bool:
    return any(name == param or name.startswith(param + "[") or name.startswith(param + ".") for name in per_leaf)


def _literal(value: Any, name: str, per_leaf: Mapping[str, Mapping[int | None, str]]) -> str:
    if isinstance(value, torch.Tensor):
        dims = per_leaf.get(name)
        return "None" if not dims else "{" + ", ".join(f"{i}: {t}" for i, t in sorted(dims.items())) + "}"
    if isinstance(value, int) and not isinstance(value, bool):
        return per_leaf.get(name, {}).get(None, "None")
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
        if primary.dim.is_value:
            notes.append(f"# {primary.dim}: dynamic_dim cannot make an int input dynamic (use the Dim form)")
            continue
        p = _classic(primary.dim)
        ranged = False
        if r.lo is not None and r.lo > CLASSIC_MIN:
            items.append(f"{p} >= {r.lo}")
            ranged = True
        hi = shown_max(r, spec)
        if hi is not None:
            items.append(f"{p} <= {hi}")
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




def render_flags(spec: Spec) -> list[str] | None:
    """The ``symshape export --dynamic`` flags that declare ``spec``, ranges on each Dim's first
    use (None when a dim is not an affine function of one Dim)."""
    roots = {r.symbol: r for r in spec.roots}
    names = {sym: r.name for sym, r in roots.items()}
    done: set[str] = set()
    flags = []
    for decl in spec.decls:
        if decl.dim.is_value:
            return None  # --dynamic names tensor dims only
        head = f"{decl.dim.input_name}:{decl.dim.dim}"
        if decl.expr is None:
            flags.append(f"--dynamic {shlex.quote(head + ':auto')}")
            continue
        syms = list(decl.expr.free_symbols)
        if len(syms) != 1 or syms[0] not in roots:
            return None
        root = roots[syms[0]]
        text = to_python(decl.expr, names).replace(" ", "")
        rng = ""
        if root.name not in done:
            done.add(root.name)
            hi = shown_max(root, spec)
            if hi is not None:
                rng = f":{root.lo}:{hi}"
            elif root.lo:
                rng = f":{root.lo}"
        flags.append(f"--dynamic {shlex.quote(f'{head}:{text}{rng}')}")
    return flags
