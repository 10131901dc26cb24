"""Shared setup for the solver tests: makes ``oracle_support`` importable and prints the
oracle figures that the property tests collect (see ``oracle_support.COUNTS``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oracle_support import COUNTS  # noqa: E402


def pytest_terminal_summary(terminalreporter):  # noqa: D103 - pytest hook
    if COUNTS:
        terminalreporter.write_sep("-", "solver oracle figures")
        for key in sorted(COUNTS):
            terminalreporter.write_line(f"{key}: {COUNTS[key]}")
