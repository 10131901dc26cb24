"""The one-way import rule (DESIGN.md section 1): shapes and solver never import torch, and
only the ``export/_torch_compat/`` package touches torch's private names."""

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
    assert {"shapes", "shapes.expr", "solver", "solver.engine", "solver.kernel.smt"} <= set(modules), modules


TORCH_FREE_TESTS = ("tests/shapes", "tests/solver")
"""Test folders whose result cannot depend on the torch release: .ci/run runs them once (with
the README's command), not again on each other supported torch."""


def _top_imports(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("folder", TORCH_FREE_TESTS)
def test_torch_free_test_folders_import_neither_torch_nor_export(folder: str) -> None:
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files
    bad = {str(f.relative_to(ROOT)): sorted(_top_imports(ast.parse(f.read_text())) & {"torch", "export"})
           for f in files}
    assert not {f: names for f, names in bad.items() if names}


def test_ci_leaves_out_exactly_the_torch_free_parts() -> None:
    """.ci/run's per-release suites skip these folders and the torch-free packages' doctests."""
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("TORCH_FREE=(")]
    assert len(lines) == 1, lines
    assert set(lines[0].removeprefix("TORCH_FREE=(").split(")")[0].split()) == {*TORCH_FREE_TESTS, "shapes", "solver"}


def test_the_blocker_really_blocks():
    probe = SCRIPT.replace("imported = []", "imported = []\ntry:\n    import torch\nexcept ImportError:\n"
                           "    pass\nelse:\n    raise SystemExit('torch imported despite the blocker')")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


# -- private torch names stay in the export/_torch_compat/ package (issue 7, item 5) ---------

COMPAT = ROOT / "export" / "_torch_compat"
MAX_COMPAT_LINES = 500

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
        if COMPAT in path.parents:
            continue
        names = private_torch_names(path.read_text())
        if names:
            offenders[str(path.relative_to(ROOT))] = names
    assert not offenders, f"private torch names outside the export/_torch_compat/ package: {offenders}"
    inside = {p.name: private_torch_names(p.read_text()) for p in sorted(COMPAT.glob("*.py"))}
    assert inside["routing.py"] and inside["pytree.py"], "the detector finds the compat package's own imports"


def test_torch_compat_modules_are_small() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(COMPAT.rglob("*.py"))}
    assert {"__init__.py", "version.py", "routing.py", "patches.py"} <= set(sizes), sizes
    big = {name: n for name, n in sizes.items() if n > MAX_COMPAT_LINES}
    assert not big, f"export/_torch_compat/ modules over {MAX_COMPAT_LINES} lines: {big}"


def test_torch_compat_gates_the_version_before_any_private_import() -> None:
    """The package's ``__init__`` runs the version gate before it imports a private torch name or
    a module of the package (each of which has some); ``version.py`` itself imports no torch."""
    body = ast.parse((COMPAT / "__init__.py").read_text(encoding="utf-8")).body
    gate = next(i for i, n in enumerate(body) if isinstance(n, ast.AnnAssign)
                and getattr(n.target, "id", None) == "TORCH_VERSION"
                and "check_torch_version" in ast.unparse(n.value))
    early = [ast.unparse(n) for n in body[:gate] if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert set(early) == {"from __future__ import annotations", "import torch",
                          "from export._torch_compat.version import SUPPORTED_TORCH, check_torch_version"}, early
    version = ast.parse((COMPAT / "version.py").read_text(encoding="utf-8"))
    modules = {a.name for n in ast.walk(version) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module or "" for n in ast.walk(version) if isinstance(n, ast.ImportFrom)}
    assert modules and not {m for m in modules if m.split(".")[0] == "torch"}, modules


# -- export uses only the public APIs of solver and shapes (issue 7, item 4) ----------------
#
# "Public" is defined per package:
# * solver: the names in ``solver/__init__.py``'s ``__all__`` (the engine, a curated re-export
#   list, as ``jax/export.py`` does) and in ``solver/service/__init__.py``'s (the JSON round trip,
#   replay, the server); every other submodule of ``solver`` is internal to it. export writes
#   ``from solver import X`` or ``from solver.service import X``, never ``solver.<module>``.
# * shapes: its modules without a leading underscore, and in each the names its ``__all__``
#   lists (every such module defines one). ``from shapes.spec import Spec`` and ``from shapes
#   import Spec`` are both public; ``shapes._x`` or a name outside the module's ``__all__`` is not.

SOLVER_INIT = ROOT / "solver" / "__init__.py"
SERVICE_INIT = ROOT / "solver" / "service" / "__init__.py"


def declared_all(path: Path) -> list[str] | None:
    """The literal ``__all__`` of a module's source, or None when it defines none."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def _shapes_public(module: str) -> set[str] | None:
    """The public names of ``shapes`` or ``shapes.<module>``, None when the module is not public."""
    parts = module.split(".")
    if parts[0] != "shapes" or any(p.startswith("_") for p in parts[1:]):
        return None
    path = ROOT.joinpath(*parts).with_suffix(".py") if len(parts) > 1 else ROOT / "shapes" / "__init__.py"
    if not path.exists():
        return None
    names = set(declared_all(path) or ())
    if len(parts) == 1:  # the package also offers its public modules
        names |= {p.stem for p in (ROOT / "shapes").glob("*.py") if not p.stem.startswith("_")}
    return names


def _public(module: str) -> set[str] | None:
    """What export may take from ``module`` (None: nothing, the module itself is internal)."""
    if module == "solver":
        return set(declared_all(SOLVER_INIT) or ()) | {"service"}
    if module == "solver.service":
        return set(declared_all(SERVICE_INIT) or ())
    if module == "shapes" or module.startswith("shapes."):
        return _shapes_public(module)
    return None


def non_public_imports(source: str) -> list[str]:
    """Every use of a non-public name of ``solver`` or ``shapes`` in ``source``: ``import
    solver.x``, ``from solver.x import y``, ``from solver import name_not_in_all``, and
    ``alias.attr`` on an imported ``solver``/``shapes`` module outside its public names."""
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> the solver/shapes module it stands for
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ("solver", "shapes"):
                    if _public(a.name) is None:
                        found.append(a.name)
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in ("solver", "shapes"):
            public = _public(node.module or "")
            for a in node.names:
                if public is None or a.name not in public:
                    found.append(f"{node.module}.{a.name}")
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        dotted = _dotted(node) if isinstance(node, ast.Attribute) and id(node) not in inner else None
        head, _, rest = (dotted or "").partition(".")
        if head in aliases:
            found += _non_public_access(aliases[head], rest.split("."))
    return sorted(set(found))


def _non_public_access(module: str, attrs: list[str]) -> list[str]:
    """``module.a.b...``: follow public submodules, then the first attribute must be public."""
    for attr in attrs:
        if attr.startswith("__") and attr.endswith("__"):
            return []
        public = _public(module)
        if public is None or attr not in public:
            return [f"{module}.{attr}"]
        if _public(f"{module}.{attr}") is None:  # a public name, not a module: done
            return []
        module = f"{module}.{attr}"
    return []


@pytest.mark.parametrize("source, expected", [
    ("from solver import Solver, Truth", []),
    ("from solver.fixes import Fixes", ["solver.fixes.Fixes"]),
    ("from solver.kernel import congruence as cg", ["solver.kernel.congruence"]),
    ("import solver.service.protocol", ["solver.service.protocol"]),
    ("from solver.service import to_json, Session", []),
    ("from solver.service import capture", ["solver.service.capture"]),
    ("from solver import to_json", ["solver.to_json"]),
    ("import solver\nsolver.decide.stages.by_interval(e)", ["solver.decide"]),
    ("import solver as s\ns.Solver(); s.__file__", []),
    ("from shapes.spec import InputDim\nfrom shapes import FloorDiv, spec", []),
    ("from shapes.spec import _normalize", ["shapes.spec._normalize"]),
    ("from shapes._private import x", ["shapes._private.x"]),
    ("import shapes\nshapes.int_symbol('n'); shapes.expr._walk", ["shapes.expr._walk"]),
    ("import shapes\nshapes.expr.int_symbol('n').name", []),
    ("from . import render\nfrom export.spec.render import x", []),
])
def test_public_import_detector(source: str, expected: list[str]) -> None:
    assert non_public_imports(source) == expected


@pytest.mark.parametrize("init", [SOLVER_INIT, SERVICE_INIT], ids=["solver", "solver.service"])
def test_solver_surfaces_only_reexport_what_they_list(init: Path) -> None:
    import importlib

    module = importlib.import_module(".".join(init.parent.relative_to(ROOT).parts))
    tree = ast.parse(init.read_text(encoding="utf-8"))
    imported = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    names = declared_all(init) or []
    assert sorted(names) == sorted(imported), f"{init}: __all__ and the re-exports differ"
    assert all(isinstance(n, (ast.Expr, ast.ImportFrom, ast.Assign)) for n in tree.body), "re-exports only"
    assert all(hasattr(module, n) for n in names)


def test_solver_surface_is_small() -> None:
    """The engine's names in ``solver``, the service's in ``solver.service`` (issue 20, item 4)."""
    engine, service = declared_all(SOLVER_INIT) or [], declared_all(SERVICE_INIT) or []
    assert len(engine) <= 25 and len(service) <= 15, (len(engine), len(service))
    assert not set(engine) & set(service)
    assert {"to_json", "from_json", "Session", "serve", "replay", "Problem", "Limits"} <= set(service)


def test_every_public_shapes_module_declares_its_public_names() -> None:
    missing = [p.name for p in sorted((ROOT / "shapes").glob("*.py")) if not p.stem.startswith("_")
               and declared_all(p) is None]
    assert not missing, f"shapes modules without __all__ (their public names are undefined): {missing}"


def test_export_uses_only_public_solver_and_shapes_names() -> None:
    offenders = {}
    for path in sorted((ROOT / "export").rglob("*.py")):
        names = non_public_imports(path.read_text(encoding="utf-8"))
        if names:
            offenders[str(path.relative_to(ROOT))] = names
    assert not offenders, f"export reaches past the public API of solver/shapes: {offenders}"
