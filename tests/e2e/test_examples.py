"""The README's main command runs examples/demo.py: keep it (and the solver tour) working."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(script: str) -> str:
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", script)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_export_demo_shows_the_error_the_fix_and_a_program_that_matches_eager() -> None:
    text = _run("demo.py")
    assert "tokens.size(1) must be divisible by 4" in text
    assert "_seq = Dim('_seq', min=1, max=32)" in text  # issue 9 item 2: seq = 4 (_seq = 1) is admitted
    assert "def specify_constraints(tokens, mask):" in text
    assert text.count("matches eager: True") == 4
    assert "batch=1 seq=8: matches eager: True" in text  # issue 8: batch 1 is right, so it runs
    assert "batch=2 seq=4: matches eager: True" in text
    assert "must not be 1" not in text
    assert "seq=6 is rejected: RefusedInputError: the exported program refuses these inputs:" in text
    # issue 21 item 4: the refusal reads like the cause, not torch's guard
    assert "tokens.size(1) must be divisible by 4 (tokens.size(1) = 4 * _seq; got tokens.size(1) = 6)" in text
    assert "Guard failed" not in text


def test_solver_demo_shows_a_verified_fix() -> None:
    text = _run("solver_demo.py")
    assert "suggested fixes (verified=True):" in text
    assert "seq = 4*_seq + 0 (seq divisible by 4)" in text
