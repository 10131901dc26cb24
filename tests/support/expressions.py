"""Hypothesis strategies for the protocol's expression language, shared by the replay
property tests: sums of terms (products, floor-division, remainder, max) over given atoms."""

from __future__ import annotations

from hypothesis import strategies as st

OPS = ["==", "!=", "<", "<=", ">", ">="]


def expressions(atoms: list[str]) -> st.SearchStrategy[str]:
    """Sums of 1-3 terms over ``atoms``."""
    atom = st.sampled_from(atoms)
    term = st.one_of(
        atom,
        st.tuples(st.sampled_from(["2", "3", "-1"]), atom).map(lambda t: f"{t[0]} * {t[1]}"),
        st.tuples(atom, st.sampled_from(["2", "3"])).map(lambda t: f"{t[0]} // {t[1]}"),
        st.tuples(atom, st.sampled_from(["2", "4"])).map(lambda t: f"{t[0]} % {t[1]}"),
        st.tuples(atom, atom).map(lambda t: f"max({t[0]}, {t[1]})"),
        st.tuples(atom, atom).map(lambda t: f"{t[0]} * {t[1]}"),
    )
    return st.lists(term, min_size=1, max_size=3).map(" + ".join)


def relations(expr: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Relations ``expr op expr``."""
    return st.tuples(expr, st.sampled_from(OPS), expr).map(" ".join)
