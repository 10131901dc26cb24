"""The one-way import rule (DESIGN.md section 1): shapes and solver never import torch, and
only ``export/_torch_compat.py`` touches torch's private names."""

from __future__ import annotations

import ast
import contextlib
import doctest
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


# -- private torch names stay in export/_torch_compat.py (issue 7, item 5) -------------------

COMPAT = ROOT / "export" / "_torch_compat.py"

PUBLIC_UNDERSCORE = {
    # torch._check / torch._check_with are documented public APIs (torch.export docs:
    # "use torch._check to tell the tracer a fact"); the README tells users to write them.
    "torch._check",
    "torch._check_with",
}


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attribute accesses on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _private(path: str) -> bool:
    parts = path.split(".")
    return parts[0] == "torch" and any(p.startswith("_") for p in parts[1:]) and not any(
        path == ok or path.startswith(ok + ".") for ok in PUBLIC_UNDERSCORE)


def private_torch_names(source: str) -> list[str]:
    """Every private torch name ``source`` reaches: imported (``from torch.utils import
    _pytree``, ``import torch._dynamo``) or accessed (``torch.utils._pytree.tree_map``, also
    through an alias of a torch module), in the code and in its doctest examples."""
    trees = [ast.parse(source)]
    for node in ast.walk(trees[0]):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node)
            for ex in doctest.DocTestParser().get_examples(doc or ""):
                with contextlib.suppress(SyntaxError):
                    trees.append(ast.parse(ex.source))
    found: list[str] = []
    for tree in trees:
        aliases: dict[str, str] = {}  # local name -> the torch module path it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "torch" or a.name.startswith("torch."):
                        aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else "torch"
                        found += [a.name] if _private(a.name) else []
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    aliases[a.asname or a.name] = full
                    found += [full] if _private(full) else []
        for node in ast.walk(tree):
            dotted = _dotted(node) if isinstance(node, ast.Attribute) else None
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            if head in aliases:
                full = f"{aliases[head]}.{rest}"
                found += [full] if _private(full) else []
    return sorted(set(found))


@pytest.mark.parametrize("source, expected", [
    ("from torch.utils import _pytree as pytree", ["torch.utils._pytree"]),
    ("import torch.utils._pytree as p", ["torch.utils._pytree"]),
    ("from torch._guards import TracingContext", ["torch._guards.TracingContext"]),
    ("import torch\nx = torch.utils._pytree.tree_map", ["torch.utils._pytree", "torch.utils._pytree.tree_map"]),
    ("import torch.export as te\nte.dynamic_shapes._DerivedDim", ["torch.export.dynamic_shapes._DerivedDim"]),
    ("from torch.export import dynamic_shapes as ds\nds._DimHint", ["torch.export.dynamic_shapes._DimHint"]),
    ('def f():\n    """\n    >>> import torch._dynamo\n    """', ["torch._dynamo"]),
    ("import torch\ntorch._check(x > 0)\ntorch.export.Dim('a')", []),
    ("import sympy\nsympy._private.thing", []),
])
def test_private_torch_detector(source: str, expected: list[str]) -> None:
    assert private_torch_names(source) == expected


def test_only_torch_compat_touches_private_torch() -> None:
    offenders = {}
    for path in sorted((ROOT / "export").rglob("*.py")):
        if path == COMPAT:
            continue
        names = private_torch_names(path.read_text())
        if names:
            offenders[str(path.relative_to(ROOT))] = names
    assert not offenders, f"private torch names outside export/_torch_compat.py: {offenders}"
    assert private_torch_names(COMPAT.read_text()), "the detector finds the compat module's own imports"
