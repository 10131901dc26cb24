"""One-way imports: the module import graph of shapes, solver and export has no cycle.

Every ``import`` / ``from ... import`` statement of the three packages (at any depth, type-only
imports under ``TYPE_CHECKING`` included) is an edge; networkx finds any cycle.
"""

from __future__ import annotations

import ast
import functools
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
    """The import graph (a fresh copy: tests may plant edges in it)."""
    return _read_graph().copy()


@functools.cache
def _read_graph() -> nx.DiGraph:
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
    assert g.has_edge("export.exporter", "solver") or any(t.startswith("solver") for t in g.successors("export.exporter"))
    assert g.has_edge("export.api", "export.exporter")


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


# -- the sub-packages read as the pipeline (issue 20) ------------------------------------------

PIPELINES = {
    "export": ("export.spec", "export.tracing", "export.program", "export.fixes", "export.diagnose"),
    "solver": ("solver.kernel", "solver.state", "solver.decide"),
}
"""Each wing's sub-packages in pipeline order: a module may import its own sub-package and
earlier ones, never a later one."""


def _unit(module: str) -> str:
    """The sub-package a module belongs to (``export.tracing.bridge`` -> ``export.tracing``), or
    the module itself when it sits at a wing's top (``solver.engine``)."""
    parts = module.split(".")
    if len(parts) >= 2 and (ROOT.joinpath(*parts[:2]) / "__init__.py").exists():
        return ".".join(parts[:2])
    return module


def _unit_graph() -> nx.DiGraph:
    """Sub-packages and top modules, an edge per import between two of them; a package's
    ``__init__`` re-exports are left out (they import downward by construction)."""
    g = import_graph()
    units = nx.DiGraph()
    for a, b in g.edges():
        if (ROOT.joinpath(*a.split(".")) / "__init__.py").exists():
            continue
        if _unit(a) != _unit(b):
            units.add_edge(_unit(a), _unit(b))
    return units


def test_sub_packages_import_only_earlier_ones() -> None:
    units = _unit_graph()
    backward = []
    for order in PIPELINES.values():
        rank = {u: i for i, u in enumerate(order)}
        backward += [f"{a} -> {b}" for a, b in units.edges() if a in rank and b in rank and rank[b] > rank[a]]
    assert not backward, "imports against the pipeline order: " + ", ".join(backward)


def test_no_cycle_between_sub_packages() -> None:
    cycles = list(nx.simple_cycles(_unit_graph()))
    assert not cycles, "cycles between sub-packages: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles[:10])


def test_each_wing_is_packages_with_a_small_top() -> None:
    """At most 10 plain modules at export's top and 12 at solver's, each with >= 3 sub-packages."""
    for wing, most in (("export", 10), ("solver", 12)):
        top = [p for p in (ROOT / wing).glob("*.py")]
        subs = [d for d in (ROOT / wing).iterdir() if (d / "__init__.py").exists()]
        assert len(top) <= most and len(subs) >= 3, (wing, sorted(p.name for p in top), sorted(d.name for d in subs))
