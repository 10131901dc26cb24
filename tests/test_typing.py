"""The style guide's typing rule: ``shapes/``, ``solver/`` and ``export/`` are mypy-clean, with no
``type: ignore`` that is no longer needed (``--warn-unused-ignores``).

Skipped when mypy is not installed (it is in the ``test`` extra, so CI has it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_shapes_solver_and_export_are_mypy_clean(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    cmd = [sys.executable, "-m", "mypy", "shapes", "solver", "export", "--ignore-missing-imports", "--warn-unused-ignores",
           "--cache-dir", str(tmp_path / "mypy_cache")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout, proc.stdout
