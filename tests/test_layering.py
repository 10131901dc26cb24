"""The one-way import rule (DESIGN.md section 1): shapes and solver never import torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import importlib, importlib.abc, pkgutil, sys

    class BlockTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError(f"torch is blocked in this test (import of {name!r})")
            return None

    sys.meta_path.insert(0, BlockTorch())
    imported = []
    for pkg_name in ("shapes", "solver"):
        pkg = importlib.import_module(pkg_name)
        imported.append(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=pkg_name + "."):
            importlib.import_module(info.name)
            imported.append(info.name)
    leaked = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
    assert not leaked, leaked
    print(" ".join(imported))
""")


def test_shapes_and_solver_import_without_torch():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    modules = proc.stdout.split()
    assert {"shapes", "shapes.expr", "solver", "solver.engine", "solver.smt"} <= set(modules), modules


def test_the_blocker_really_blocks():
    probe = SCRIPT.replace("imported = []", "imported = []\ntry:\n    import torch\nexcept ImportError:\n"
                           "    pass\nelse:\n    raise SystemExit('torch imported despite the blocker')")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
