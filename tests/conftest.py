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
    "e2e/",
)
"""Test files (paths under ``tests/``, a folder when it ends in ``/``) whose tests are all slow."""

SLOW_TESTS: tuple[str, ...] = ()
"""Single tests (``path::name`` prefixes) that are slow in a file that is otherwise fast."""


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
