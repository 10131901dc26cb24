"""``export.program.analysis``: a solver problem replayed with the names users read.

Fast: the problems are real traces' (``trace_builder``, no torch.export), serialized to JSON
as a program or an error carries them and replayed by :func:`analyse`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import sympy
import torch
from torch.export import Dim

from export.program.analysis import INPUT_DIM, Analysis, analyse, congruence_texts, internal_roots
from export.spec.classic import dynamic_dim, from_constraints
from solver import Solver
from solver.errors import ProtocolError
from trace_builder import TraceBuilder, user_site

X, Y = torch.randn(4, 8), torch.randn(4, 16)


@pytest.fixture(scope="module")
def modern() -> Analysis:
    b = TraceBuilder("x, y", (X, Y), {"x": {0: Dim("b"), 1: Dim("s")}, "y": {0: Dim("b"), 1: Dim.AUTO}})
    b.ask("x.size(1) % 4 == 0", site=user_site("x.view(-1, 4)"))
    b.ask("y.size(1) == 2 * x.size(1)", site=user_site("torch.cat((y, x, x), 1)", line=11))
    problem = b.trace().problem()
    assert problem is not None
    return analyse(json.loads(problem))


@pytest.fixture(scope="module")
def classic() -> Analysis:
    b = TraceBuilder("x, y", (X, Y), None)
    b = TraceBuilder("x, y", (X, Y), from_constraints(b.inputs, [dynamic_dim(X, 0) <= 64,
                                                                 dynamic_dim(Y, 0) == dynamic_dim(X, 0)]))
    problem = b.trace().problem()
    assert problem is not None
    return analyse(json.loads(problem))


@pytest.mark.parametrize("source, match", [("x.size(0)", ("x", "0")), ("d['a'].size(12)", ("d['a']", "12")),
                                           ("x.size()", None), ("b", None), ("x.shape[0]", None)])
def test_input_dim_pattern(source: str, match: tuple[str, str] | None) -> None:
    m = INPUT_DIM.match(source)
    assert (m and (m["leaf"], m["dim"])) == match or (m is None and match is None)


def test_names_and_input_dims(modern: Analysis) -> None:
    assert sorted(modern.names.values()) == ["b", "s", "x.size(0)", "x.size(1)", "y.size(0)", "y.size(1)"]
    assert [modern.names[s] for s in modern.input_dims] == ["x.size(0)", "x.size(1)", "y.size(0)", "y.size(1)"]
    assert sorted(modern.names[s] for s in modern.roots) == ["b", "s"] and modern.hidden == {}


def test_classes_relations_bounds(modern: Analysis) -> None:
    assert sorted(sorted(c) for c in modern.class_names()) == [["b", "x.size(0)", "y.size(0)"], ["s", "x.size(1)"]]
    assert [modern.text(r) for r in modern.relations()] == ["y.size(1) == 2 * s"]
    assert {modern.names[s]: modern.bounds(s) for s in modern.input_dims} == {
        "x.size(0)": (2, None), "x.size(1)": (4, None), "y.size(0)": (2, None), "y.size(1)": (8, None)}


def test_value_of_an_input_dim_in_the_users_terms(modern: Analysis) -> None:
    assert {modern.names[s]: modern.value_of(s) for s in modern.input_dims} == {
        "x.size(0)": "b", "x.size(1)": "s", "y.size(0)": "b", "y.size(1)": "2 * s"}


def test_congruence_texts(modern: Analysis) -> None:
    assert congruence_texts(modern.solver, modern.names) == ("s % 4 == 0",)
    assert congruence_texts(modern.solver, {}) == ("s % 4 == 0",)  # unnamed: the symbol's own name


def test_a_classic_spec_hides_its_internal_root(classic: Analysis) -> None:
    assert {str(k): v for k, v in classic.hidden.items()} == {"x_0": "x.size(0)"}
    assert [sorted(c) for c in classic.class_names()] == [["x.size(0)", "y.size(0)"]]  # x_0 left out
    assert classic.bounds(next(s for s in classic.input_dims if classic.names[s] == "x.size(0)")) == (2, 64)


def test_internal_roots_of_a_solver() -> None:
    s = Solver()
    r = s.symbol("x_0", 2, None, source="dynamic_dim(x, 0)")
    fix = s.symbol("_y_1", 2, None, source="a fix's root")
    d = s.symbol("x_size0", 0, None, source="x.size(0)")
    e = s.symbol("y_size1", 0, None, source="y.size(1)")
    named = s.symbol("b", 0, None, source="Dim('b')")
    s.assume(sympy.Eq(d, r))
    s.assume(sympy.Eq(e, fix))
    s.assume(sympy.Eq(named, d))
    assert internal_roots(s) == {r: "x.size(0)", fix: "y.size(1)"}  # b is a name the user gave


def test_text_of_what_is_no_relation_is_its_str(modern: Analysis) -> None:
    assert modern.text("not a relation") == "not a relation"


@pytest.mark.parametrize("problem, message", [
    ({"format": "nonsense"}, 'format: expected "symshape.problem", got "nonsense"'),
    ({}, 'format: expected "symshape.problem", missing'),
])
def test_a_damaged_problem_is_refused(problem: dict[str, Any], message: str) -> None:
    with pytest.raises(ProtocolError) as info:
        analyse(problem)
    assert str(info.value) == message
