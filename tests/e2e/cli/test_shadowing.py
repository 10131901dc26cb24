"""Folders whose own export.py / solver.py / shapes.py shadow symshape's packages (YOLOv5 ships an
export.py): importing symshape and running the CLI still work, the model gets its siblings, and
where Python itself picks the user's file first, the error names it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import export

ROOT = Path(export.__file__).resolve().parents[1]  # the symshape under test
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}

SIBLINGS = {
    "export.py": 'HELPER = "user export"\n\ndef helper():\n    return 3\n',
    "solver.py": 'VALUE = "user solver"\n',
    "shapes.py": "SCALE = 2\n",
}
MODEL = textwrap.dedent("""
    import torch

    import export  # the sibling export.py, not symshape's
    import shapes
    import solver

    assert export.HELPER == "user export", export
    assert solver.VALUE == "user solver", solver


    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * shapes.SCALE + export.helper()


    def make():
        from export import helper  # the factory sees the siblings too
        assert helper() == 3
        return Scale(), (torch.randn(4, 3),)
""")


def _folder(path: Path, files: dict[str, str]) -> Path:
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A model folder with its own export.py, solver.py and shapes.py."""
    return _folder(tmp_path / "project", {**SIBLINGS, "model.py": MODEL})


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A working folder with its own solver.py and shapes.py."""
    return _folder(tmp_path / "elsewhere", {"solver.py": SIBLINGS["solver.py"], "shapes.py": SIBLINGS["shapes.py"]})


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=ENV, timeout=180)


def _console_script() -> str:
    exe = shutil.which("symshape", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the symshape console script is not installed in this environment")
    return exe


def _exported(p: subprocess.CompletedProcess[str]) -> None:
    assert p.returncode == 0, p.stdout + p.stderr
    assert "exported" in p.stdout and "x: [b, 3]" in p.stdout, p.stdout


def test_console_script_in_a_folder_that_shadows_every_package(project: Path) -> None:
    _exported(_run([_console_script(), "export", "model.py:make", "-d", "x:0:b", "-q"], project))


def test_python_m_export_with_a_model_folder_that_shadows_every_package(project: Path, elsewhere: Path) -> None:
    # the current folder shadows solver and shapes; the model's folder all three
    _exported(_run([sys.executable, "-m", "export", "export", str(project / "model.py") + ":make",
                    "-d", "x:0:b", "-q"], elsewhere))


def test_import_export_next_to_a_solver_py_and_shapes_py(elsewhere: Path) -> None:
    code = ("import export, shapes, solver, sys\n"
            "print(export.__file__, shapes.__file__, solver.__file__)\n"
            "print(solver.Solver, shapes.int_symbol)")
    p = _run([sys.executable, "-c", code], elsewhere)
    assert p.returncode == 0, p.stderr
    files = p.stdout.split("\n")[0].split()
    assert all(Path(f).resolve().is_relative_to(ROOT) for f in files), files


def test_a_foreign_solver_already_imported_is_named(elsewhere: Path) -> None:
    p = _run([sys.executable, "-c", "import solver\nimport export"], elsewhere)
    assert p.returncode != 0
    assert "ImportError" in p.stderr and str(elsewhere / "solver.py") in p.stderr, p.stderr
    assert "shadows it" in p.stderr


def test_the_model_folder_is_not_left_on_sys_path_or_in_sys_modules(project: Path) -> None:
    code = textwrap.dedent(f"""
        import sys, export, solver, shapes
        from export.cli import main
        before = list(sys.path)
        assert main(["export", {str(project / 'model.py') + ':make'!r}, "-d", "x:0:b", "-q"]) == 0
        assert sys.path == before
        assert sys.modules["export"] is export and sys.modules["solver"] is solver
        assert sys.modules["shapes"] is shapes
        print("ok")
    """)
    p = _run([sys.executable, "-c", code], project.parent)
    assert p.returncode == 0 and "ok" in p.stdout, p.stdout + p.stderr
