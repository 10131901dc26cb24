"""Prints the oracle figures that the solver's property tests collect (see
``oracle_support.COUNTS``, in ``tests/support/``)."""

from oracle_support import COUNTS


def pytest_terminal_summary(terminalreporter):  # noqa: D103 - pytest hook
    if COUNTS:
        terminalreporter.write_sep("-", "solver oracle figures")
        for key in sorted(COUNTS):
            terminalreporter.write_line(f"{key}: {COUNTS[key]}")
