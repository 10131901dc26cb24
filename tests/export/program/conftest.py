"""The archive tests' one saved symshape program per session (exporting costs seconds)."""

import pytest
from hostile_archives import saved_program


@pytest.fixture(scope="session")
def program_bytes() -> bytes:
    return saved_program()
