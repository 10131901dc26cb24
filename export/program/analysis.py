"""What the solver concluded, for the report and the graph.

The report needs the final solver (classes, relations, bounds, explanations) with display
names: input dims as ``x.size(0)``, the user's Dim names, and the spec's internal roots (a classic
``dynamic_dim(x, 0)`` is the root ``x_0``) as the input dim they stand for (:func:`internal_roots`).
Bounds from the classic default maximum (``2**63 - 2``) are shown as ``inf`` (:func:`shapes.ranges.range_text`). A program exported in this process keeps it (:attr:`SymshapeProgram.symshape_solver`),
and :class:`Analysis` reads that one; only a failed export or a loaded program, which carry the
solver problem as JSON, rebuild it by replaying the problem (:func:`analyse`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from shapes.printing import to_python
from shapes.spec import InputDim, classic_name
from solver import Solver
from solver.service import from_json

__all__ = ["Analysis", "analyse", "INPUT_DIM", "internal_roots", "congruence_texts"]

INPUT_DIM = re.compile(r"^(?P<leaf>.+)\.size\((?P<dim>\d+)\)$")
"""A solver symbol's source naming an input dim: ``x.size(0)``."""


def analyse(problem: Mapping[str, Any]) -> Analysis:
    """The solver state of an export, from its problem (JSON, as the program carries it)."""
    return Analysis(problem, from_json(problem))


def congruence_texts(solver: Solver, names: Mapping[Any, str]) -> tuple[str, ...]:
    """Each congruence ``solver`` knows, in ``names``' words: ``x.size(1) % 8 == 0``."""
    return tuple(f"{names.get(sym, str(sym))} % {m} == {r}" for sym, m, r in solver.congruences())


def internal_roots(solver: Solver) -> dict[Any, str]:
    """The spec's internal roots (no name the user gave: a classic ``dynamic_dim(x, 0)`` or a
    ``Dim.DYNAMIC`` is the root ``x_0``; a fix's ``_x_0``), each with the display name of the
    input dim it stands for (an equal input dim whose classic name it carries).

    >>> from solver import Solver
    >>> s = Solver()
    >>> r = s.symbol("x_0", 2, None, source="dynamic_dim(x, 0)")
    >>> d = s.symbol("x_size0", 0, None, source="x.size(0)")
    >>> import sympy; s.assume(sympy.Eq(d, r))
    >>> internal_roots(s)
    {x_0: 'x.size(0)'}
    """
    dims: dict[Any, str] = {}
    for info in solver.symbols:
        m = INPUT_DIM.match(info.source or "")
        if m:
            dims[info.symbol] = classic_name(InputDim(m["leaf"], int(m["dim"])))
    sources = {info.symbol: info.source or "" for info in solver.symbols}
    out: dict[Any, str] = {}
    for cls in solver.classes():
        for sym in cls:
            if sym in dims:
                continue
            match = [d for d in cls if d in dims and dims[d] == sym.name.lstrip("_")]
            if match:
                out[sym] = sources[match[0]]
    return out


class Analysis:
    """A solver problem replayed: display names, classes, relations, bounds, facts."""

    def __init__(self, problem: Mapping[str, Any], solver: Solver) -> None:
        self.problem = problem
        self.solver = solver
        self.names: dict[Any, str] = {}
        self.input_dims: list[Any] = []
        for info in self.solver.symbols:
            src = info.source or ""
            if INPUT_DIM.match(src):
                self.names[info.symbol] = src
                self.input_dims.append(info.symbol)
            else:
                self.names[info.symbol] = info.symbol.name
        self.hidden = internal_roots(self.solver)
        """Internal roots, shown as the input dim they stand for."""
        self.names.update(self.hidden)
        self.roots = [i.symbol for i in self.solver.symbols if i.symbol not in self.input_dims]

    def text(self, rel: Any) -> str:
        try:
            return to_python(rel, self.names)
        except Exception:  # noqa: BLE001
            return str(rel)

    def bounds(self, sym: Any) -> tuple[int | None, int | None]:
        return self.solver.bounds(sym)

    def classes(self) -> list[list[Any]]:
        return [list(c) for c in self.solver.classes() if len(c) > 1]

    def class_names(self) -> list[list[str]]:
        """The equality classes as shown: display names, internal roots left out."""
        shown = ([self.names[s] for s in c if s not in self.hidden] for c in self.classes())
        return [c for c in shown if len(c) > 1]

    def relations(self) -> list[Any]:
        return list(self.solver.relations())

    def value_of(self, sym: Any) -> str:
        """What an input dim is, in the user's terms: a Dim name, a derived expression, or itself."""
        lo, hi = self.bounds(sym)
        if lo is not None and lo == hi:
            return str(lo)
        for cls in self.solver.classes():
            if sym in cls:
                roots = [s for s in cls if s in self.roots]
                if roots:
                    return self.names[roots[0]]
                members = list(cls)
                break
        else:
            members = [sym]
        for rel in self.relations():
            lhs, rhs = getattr(rel, "lhs", None), getattr(rel, "rhs", None)
            if lhs in members and rhs is not None and rhs.free_symbols and rhs.free_symbols <= set(self.roots):
                return self.text(rhs)
        return self.names[members[0]] if members[0] in self.input_dims else self.names[sym]
