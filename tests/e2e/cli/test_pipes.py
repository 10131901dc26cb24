"""Output survives a closed pipe (issue 23, item 3): ``... | head -1`` gets its line, the command
stops quietly (no traceback, no "internal error") with the shell's status for a closed pipe."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SIMPLE = HERE / "models" / "simple.py"
ENCODER = HERE.parents[2] / "examples" / "demo.py"
FAIL = "-d tokens:0:batch -d tokens:1:seq -d mask:0:mask_batch -d mask:1:mask_seq"


def _symshape() -> str:
    exe = shutil.which("symshape", path=os.path.dirname(sys.executable))
    return shlex.quote(exe) if exe else f"{shlex.quote(sys.executable)} -m export"


def _piped(command: str, cwd: Path) -> tuple[int, str, str]:
    """``command | head -1`` in bash with pipefail: the command's status, head's line, stderr."""
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {command} 2>err.txt | head -1"], cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, (cwd / "err.txt").read_text()


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A solver problem of a failing export (for the replays)."""
    where = tmp_path_factory.mktemp("problem")
    path = where / "p.json"
    subprocess.run(f"{_symshape()} export {shlex.quote(str(ENCODER))}:make {FAIL} -q --problem {path}",
                   shell=True, cwd=where, capture_output=True, timeout=600)
    assert path.exists()
    return path


@pytest.mark.parametrize("how", ["report", "json"])
def test_export_into_head(tmp_path: Path, how: str) -> None:
    flag = "--json" if how == "json" else ""
    code, line, err = _piped(f"{_symshape()} export {shlex.quote(str(ENCODER))}:make {FAIL} -q {flag}", tmp_path)
    assert line.strip(), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert code in (1, 141), (code, err)  # 1: the violation's status, when head read everything in time


@pytest.mark.parametrize("command", ["{symshape} replay --json {problem}", "{symshape} replay {problem}",
                                     "{python} -m solver replay {problem}"])
def test_replays_into_head(tmp_path: Path, problem: Path, command: str) -> None:
    text = command.format(symshape=_symshape(), python=shlex.quote(sys.executable), problem=shlex.quote(str(problem)))
    for _ in range(3):
        code, line, err = _piped(text, tmp_path)
        assert line.strip(), err
        assert "Traceback" not in err and "internal error" not in err and "Exception ignored" not in err, err
        assert code in (0, 1, 141), (code, err)


def test_versions() -> None:
    import export
    import shapes
    import solver

    assert export.__version__ == solver.__version__ == shapes.__version__
    pyproject = (HERE.parents[2] / "pyproject.toml").read_text()
    assert f'version = "{export.__version__}"' in pyproject
    for pkg in ("shapes", "solver", "export"):
        assert (HERE.parents[2] / pkg / "py.typed").exists()
    out = subprocess.run(f"{_symshape()} --version", shell=True, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.startswith(f"symshape {export.__version__} (torch "), out
