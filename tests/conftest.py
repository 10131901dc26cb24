"""The suite's one conftest for what every test folder shares.

* ``tests/support/`` (models, oracles, archive helpers shared by several folders) is put on
  ``sys.path``: test modules import its helpers by plain name (``import oracle_support``).
* ``program_bytes``: one saved symshape program per session (exporting costs seconds), for the
  archive and replay tests.
* The ``slow`` marker: end-to-end exports of real models, the corpus, the CLI in subprocesses,
  the brute-force and Z3 oracle families and the solver's load tests. :data:`SLOW` lists them
  here, by path, so the fast loop is one table to read::

      python -m pytest -m "not slow"     # the fast loop while working
      python -m pytest                   # everything (what CI runs)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "support"))

SLOW: tuple[str, ...] = (
    "e2e/",  # real models, the corpus, parity with torch, the CLI and the examples in subprocesses
    "solver/state/test_class_members.py",  # brute-force oracles over whole boxes of sizes
    "solver/state/test_point.py",
    "solver/decide/test_walk_witness.py",
    "solver/decide/test_scale.py",  # large problems
    "solver/decide/test_min_max_facts.py",
    "solver/kernel/test_bounds_near.py",
    "solver/service/test_replay_property.py",
    "solver/service/test_rate.py",  # the load test
)
"""Test files (paths under ``tests/``, a folder when it ends in ``/``) whose tests are all slow."""

SLOW_TESTS: tuple[str, ...] = (
    "shapes/test_printing.py::test_to_text_is_stable",  # hypothesis round trips, thousands of expressions
    "shapes/test_printing.py::test_to_text_round_trips",
    "shapes/test_printing.py::test_to_python_parses_back",
    "shapes/test_printing.py::test_sympy_str_parses_back",
    "shapes/test_printing.py::test_to_python_evaluates_like_evaluate",
    "shapes/test_spec.py::test_from_classic_against_brute_force",
    "solver/test_fixes.py::test_fixes_admit_exactly_the_feasible_sizes",
    "solver/test_semantics.py::test_explain_is_sufficient_and_minimal",
    "solver/decide/test_oracle.py::test_bounded_decide_bounds_and_assume_are_exact",
    "solver/decide/test_oracle.py::test_unbounded_against_independent_z3",
    "solver/decide/test_oracle.py::test_exhaustive_common_factor_family",
    "solver/decide/test_reparam.py::test_whole_solver_after_a_congruence_is_never_wrong",
    "solver/decide/test_local_cache.py::test_local_path_with_caches_across_scopes",
    "solver/service/test_python_api_replay.py::test_replayed_solver_answers_as_the_live_one",
    "solver/service/test_time_limits.py::test_serve_command_answers_every_hostile_request_within_the_limit",
    "export/test_torch_compat.py::test_importing_the_package_on_unsupported_torch_names_the_range",
)
"""Single tests (``path::name`` prefixes) that are slow in a file that is otherwise fast: the
brute-force and Z3 oracle families, hypothesis round trips, subprocesses."""


def _is_slow(item: pytest.Item) -> bool:
    try:
        rel = Path(str(item.fspath)).resolve().relative_to(TESTS).as_posix()
    except ValueError:  # a doctest of a package module: fast
        return False
    if any(rel == s or (s.endswith("/") and rel.startswith(s)) for s in SLOW):
        return True
    node = f"{rel}::{item.name}"
    return any(node.startswith(s) for s in SLOW_TESTS)


@pytest.fixture(scope="session")
def program_bytes() -> bytes:
    from hostile_archives import saved_program

    return saved_program()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: an end-to-end test or a brute-force oracle family (tests/conftest.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
