"""``export.fixes.apply``: the solver's fix records applied to the user's spec.

Fast: a hand-built trace (``trace_builder``) of ``x`` (4, 8) ``{b, s}``, ``y`` (4, 6) ``{c, AUTO}``
and an int ``n`` with its own ``Dim("v")``; each row applies fix records and reads the corrected
spec as the Dim form renders it (golden), the checks in input dims, and what no Dim says."""

from __future__ import annotations

from typing import Any, Callable

import pytest
import sympy
import torch
from torch.export import Dim

from export.fixes.apply import FixedSpec, apply_fixes
from export.spec.render import render_modern
from export.tracing.trace import Trace
from shapes.expr import int_symbol
from shapes.printing import to_python
from shapes.spec import InputDim
from solver import CheckFix, DivisibleFix, EqualFix, Fixes, RangeFix, RelationFix, SpecializeFix
from trace_builder import TraceBuilder


@pytest.fixture(scope="module")
def trace() -> Trace:
    b = TraceBuilder("x, y, n", (torch.randn(4, 8), torch.randn(4, 6), 3),
                     {"x": {0: Dim("b"), 1: Dim("s")}, "y": {0: Dim("c"), 1: Dim.AUTO}, "n": Dim("v")})
    return b.trace()


def _syms(t: Trace) -> dict[str, Any]:
    return {**t.root_syms, "y1": t.dim_syms[InputDim("y", 1)], "x0": t.dim_syms[InputDim("x", 0)],
            "x1": t.dim_syms[InputDim("x", 1)], "n": t.dim_syms[InputDim("n", None)]}


ALL = ["b = Dim('b')", "s = Dim('s')", "c = Dim('c')", "v = Dim('v')"]
SAME = "dynamic_shapes = {'x': {0: b, 1: s}, 'y': {0: c, 1: Dim.AUTO}, 'n': v}"
_S, _V = int_symbol("_s"), int_symbol("_v")

CASES: list[tuple[str, Callable[[dict[str, Any]], list[Any]], list[str], list[str], list[str]]] = [
    ("range", lambda s: [RangeFix(s["b"], 2, 64)], ["b = Dim('b', min=2, max=64)", *ALL[1:], SAME], [], []),
    ("two ranges narrow", lambda s: [RangeFix(s["s"], None, 16), RangeFix(s["s"], 4, None)],
     [ALL[0], "s = Dim('s', min=4, max=16)", *ALL[2:], SAME], [], []),
    ("equal", lambda s: [EqualFix(s["c"], s["b"])],
     [ALL[0], ALL[1], ALL[3], "dynamic_shapes = {'x': {0: b, 1: s}, 'y': {0: b, 1: Dim.AUTO}, 'n': v}"], [], []),
    ("relation of a hint dim", lambda s: [RelationFix(s["y1"], 2 * s["s"] - 10)],
     [ALL[0], "s = Dim('s', min=5)", *ALL[2:], "dynamic_shapes = {'x': {0: b, 1: s}, 'y': {0: c, 1: 2 * s - 10}, 'n': v}"],
     [], []),
    ("decreasing: a check", lambda s: [RelationFix(s["c"], 10 - s["b"])], [*ALL, SAME],
     ["y_size0 == 10 - x_size0"], ["RelationFix"]),
    ("divisible", lambda s: [DivisibleFix(s["s"], 4, 0, _S, 1, None)],
     [ALL[0], *ALL[2:], "_s = Dim('_s')", "dynamic_shapes = {'x': {0: b, 1: 4 * _s}, 'y': {0: c, 1: Dim.AUTO}, 'n': v}"],
     [], []),
    ("divisible with a residue", lambda s: [DivisibleFix(s["s"], 4, 1, _S, 0, None)],
     [ALL[0], *ALL[2:], "_s = Dim('_s')",
      "dynamic_shapes = {'x': {0: b, 1: 4 * _s + 1}, 'y': {0: c, 1: Dim.AUTO}, 'n': v}"], [], []),
    ("specialize", lambda s: [SpecializeFix(s["b"], 4)],
     [*ALL[1:], "dynamic_shapes = {'x': {1: s}, 'y': {0: c, 1: Dim.AUTO}, 'n': v}"], [], []),
    ("specialize a hint dim", lambda s: [SpecializeFix(s["y1"], 6)],
     [*ALL, "dynamic_shapes = {'x': {0: b, 1: s}, 'y': {0: c}, 'n': v}"], [], []),
    ("check", lambda s: [CheckFix(sympy.Eq(s["b"] * s["s"], 32))], [*ALL, SAME], ["x_size0 * x_size1 == 32"],
     ["CheckFix"]),
    ("an int's Dim is its own", lambda s: [EqualFix(s["v"], s["b"])], [*ALL, SAME], ["n_value == x_size0"], ["EqualFix"]),
    ("an int takes no derived Dim", lambda s: [DivisibleFix(s["v"], 2, 1, _V, 0, None)], [*ALL, SAME],
     ["n_value % 2 == 1"], ["DivisibleFix"]),
]


@pytest.mark.parametrize("make, modern, checks, unexpressed", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_apply_fixes(trace: Trace, make: Callable[[dict[str, Any]], list[Any]], modern: list[str],
                     checks: list[str], unexpressed: list[str]) -> None:
    fixed = apply_fixes(trace, Fixes(tuple(make(_syms(trace))), False))
    assert isinstance(fixed, FixedSpec)
    assert render_modern(fixed.spec, trace.inputs).splitlines()[2:] == modern
    assert [to_python(c, {}) for c in fixed.checks] == checks
    assert list(fixed.spec.checks) == list(fixed.checks)
    assert [type(f).__name__ for f in fixed.unexpressed] == unexpressed


def test_no_fixes_leave_the_spec(trace: Trace) -> None:
    fixed = apply_fixes(trace, Fixes((), True))
    assert fixed.spec == trace.spec and fixed.checks == () and fixed.unexpressed == ()


def test_a_fix_of_an_unknown_symbol_is_unexpressed(trace: Trace) -> None:
    stranger = sympy.Symbol("zz", integer=True)
    fixed = apply_fixes(trace, Fixes((RangeFix(stranger, 2, 4),), False))
    assert [type(f).__name__ for f in fixed.unexpressed] == ["RangeFix"]
    assert fixed.checks == (stranger >= 2, stranger <= 4)  # kept as a check, as the solver said it
    assert (fixed.spec.roots, fixed.spec.decls) == (trace.spec.roots, trace.spec.decls)


def test_the_fixed_spec_validates_on_a_fitting_example(trace: Trace) -> None:
    s = _syms(trace)
    fixed = apply_fixes(trace, Fixes((EqualFix(s["c"], s["b"]), DivisibleFix(s["s"], 4, 0, _S, 1, None)), False))
    fixed.spec.validate(trace.inputs.size)  # x (4, 8), y (4, 6): b = 4, _s = 2
    assert {str(d.dim): str(d.expr) for d in fixed.spec.decls if d.expr is not None} == {
        "x.size(0)": "b", "x.size(1)": "4*_s", "y.size(0)": "b", "n": "v"}
