"""One-way imports: the module import graph of shapes, solver and export has no cycle.

Every ``import`` / ``from ... import`` statement of the three packages (at any depth, type-only
imports under ``TYPE_CHECKING`` included) is an edge; networkx finds any cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("shapes", "solver", "export")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node: ast.AST, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The project modules an import statement names (``from pkg import mod`` names ``pkg.mod``)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = module.split(".") if is_package else module.split(".")[:-1]
            anchor = anchor[: len(anchor) - node.level + 1]
            base = ".".join(anchor + ([base] if base else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    else:
        return []
    out = []
    for name in names:
        while name and name not in known:  # ``import solver.engine.x`` -> the module that exists
            name = name.rpartition(".")[0]
        if name:
            out.append(name)
    return out


def import_graph() -> nx.DiGraph:
    files = {p: _module_name(p) for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}
    known = set(files.values())
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for path, module in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            for target in _targets(node, module, path.name == "__init__.py", known):
                if target != module:
                    graph.add_edge(module, target)
    return graph


def test_the_graph_is_read():
    g = import_graph()
    assert g.has_edge("solver.service.codec", "solver.engine")
    assert g.has_edge("solver.engine", "solver.state.known") and g.has_edge("solver.state.known", "solver.kernel.union_find")
    assert g.has_edge("export.api", "solver") or any(t.startswith("solver") for t in g.successors("export.api"))


def test_no_import_cycle():
    g = import_graph()
    cycles = list(nx.simple_cycles(g))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles[:10])


def test_the_engine_imports_neither_codec_nor_fixes():
    g = import_graph()
    assert not {"solver.service.codec", "solver.fixes", "solver.service.protocol"} & set(g.successors("solver.engine"))


def test_shapes_and_solver_have_no_cycle_at_all():
    g = import_graph().subgraph(m for m in import_graph() if m.split(".")[0] in ("shapes", "solver"))
    assert not list(nx.simple_cycles(g))


def test_a_planted_cycle_is_found():
    g = import_graph()
    assert not list(nx.simple_cycles(g))
    g.add_edge("solver.engine", "solver.service.codec")
    assert list(nx.simple_cycles(g))
