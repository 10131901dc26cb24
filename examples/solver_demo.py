"""A tour of the constraint engine: facts, decisions, guards, violations and a verified fix.

Run: python examples/solver_demo.py
"""

from __future__ import annotations

import sympy

from solver import Reason, Solver, suggest


def main() -> None:
    s = Solver()
    batch = s.symbol("batch", lo=2, hi=64, hint=8, source="x.size(0)")
    seq = s.symbol("seq", lo=2, hi=None, hint=12, source="x.size(1)")
    out = s.symbol("out", lo=2, hi=None, hint=16, source="y.size(0)")
    s.assume(sympy.Eq(out, 2 * batch), Reason.spec("y.size(0) == 2 * x.size(0)"))

    print("decide out >= 4        ->", s.decide(sympy.Ge(out, 4)).value)
    print("decide out % 4 == 0    ->", s.decide(sympy.Eq(sympy.Mod(out, 4), 0)).value)
    print("bounds(out)            ->", s.bounds(out))

    # The traced model branches on sizes: guards the hint (example inputs) decides.
    s.guard(sympy.Eq(batch, 1), False, Reason.guard("x.size(0) == 1", "model.py:9", "broadcast"))
    s.guard(sympy.Eq(sympy.Mod(seq, 4), 0), True, Reason.guard("x.size(1) % 4 == 0", "model.py:14", "reshape"))
    s.guard(sympy.Le(seq, 512), True, Reason.guard("x.size(1) <= 512", "model.py:20", "positional table"))

    print("\nviolations (guards the declared spec does not imply):")
    for v in s.violations():
        print("  ", v.fact.rel, "<-", v.fact.reason.describe())
    fixes = suggest(s)
    print(f"\nsuggested fixes (verified={fixes.verified}):")
    for fix in fixes:
        why = "; ".join(r.describe() for r in fix.reasons)
        print(f"   {fix.describe():40s} because {why}")
    print("\nwhy is seq <= 512?", [f.reason.describe() for f in s.explain(sympy.Le(seq, 600))])


if __name__ == "__main__":
    main()
