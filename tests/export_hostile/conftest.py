"""Shared setup for the hostile-use tests: makes ``hostile_archives`` importable and saves
one symshape program per session (exporting costs seconds)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_archives import saved_program  # noqa: E402


@pytest.fixture(scope="session")
def program_bytes() -> bytes:
    return saved_program()
