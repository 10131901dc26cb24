"""The constraint graph of the input dims (networkx), written as DOT without graphviz.

Nodes are input dims with their range, what they equal and their one-dim guards; edges are
equalities and relations, labelled with the relation and the source line of the guard that
implies it (or ``(declared)``).
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import sympy

from export.program.analysis import Analysis
from shapes.ranges import range_text

__all__ = ["constraint_graph", "to_dot"]


def constraint_graph(analysis: Analysis) -> Any:
    """A networkx MultiGraph: input dims (with ranges) joined by equalities and relations."""
    g = nx.MultiGraph()
    dims = analysis.input_dims
    for sym in dims:
        name = analysis.names[sym]
        lo, hi = analysis.bounds(sym)
        g.add_node(name, range=range_text(lo, hi), notes=[])
    rep: dict[Any, Any] = {}
    for cls in analysis.classes():
        members = [s for s in cls if s in dims]
        for s in cls:
            if members:
                rep[s] = members[0]
        for other in members[1:]:
            rel = sympy.Eq(members[0], other)
            origins = _origins(analysis, rel)
            label = analysis.text(rel) + ("".join(f"\n{o}" for o in origins) or "\n(declared)")
            g.add_edge(analysis.names[members[0]], analysis.names[other], kind="equal", label=label,
                       origins=origins)
        roots = [s for s in cls if s in analysis.roots and s not in analysis.hidden]
        if members and roots:
            g.nodes[analysis.names[members[0]]]["notes"].append(f"= {analysis.names[roots[0]]}")
    seen: set[str] = set()

    def add(rel: Any, kind: str, origins: list[str]) -> None:
        syms = {rep.get(s, s) for s in rel.free_symbols}
        ins = sorted((s for s in syms if s in dims), key=lambda s: analysis.names[s])
        text = analysis.text(rel.subs({s: r for s, r in rep.items() if s != r and r in dims}))
        if text in seen or not ins:
            return
        seen.add(text)
        label = text + "".join(f"\n{o}" for o in origins)
        if len(ins) == 1:
            g.nodes[analysis.names[ins[0]]]["notes"].append(label)
            return
        for a, b in zip(ins, ins[1:]):
            g.add_edge(analysis.names[a], analysis.names[b], kind=kind, label=label, origins=origins)

    for rel in analysis.relations():
        add(rel, "relation", _origins(analysis, rel))
    for f in analysis.solver.facts:
        if f.reason.kind == "spec":
            continue
        if isinstance(f.rel, sympy.Eq) and all(s in rep for s in f.rel.free_symbols) \
                and len({rep[s] for s in f.rel.free_symbols}) == 1 and len(f.rel.free_symbols) == 2:
            continue  # an equality the class edges show
        # a trace assumption's origin is the export call (here: this command), not the model
        add(f.rel, f.reason.kind, [_where(f.reason)] if f.reason.origin and f.reason.kind == "guard" else [])
    return g


def _where(reason: Any) -> str:
    return f"{reason.origin}" + (f" ({reason.op.strip()})" if reason.op and reason.kind == "guard" else "")


def _origins(analysis: Analysis, rel: Any) -> list[str]:
    try:
        facts = analysis.solver.explain(rel)
    except Exception:  # noqa: BLE001 - explanations are a bonus
        return []
    out = []
    for f in facts:
        if f.reason.origin and f.reason.kind == "guard":
            w = _where(f.reason)
            if w not in out:
                out.append(w)
    return out


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(g: Any, name: str = "constraints") -> str:
    """DOT text for a constraint graph (no pydot/graphviz needed)."""
    lines = [f"graph {_dot_quote(name)} {{", "  node [shape=box, fontname=\"monospace\"];",
             "  edge [fontname=\"monospace\", fontsize=10];"]
    for node, data in g.nodes(data=True):
        label = "\n".join([node, data.get("range", ""), *data.get("notes", [])])
        lines.append(f"  {_dot_quote(node)} [label={_dot_quote(label)}];")
    for a, b, data in g.edges(data=True):
        style = {"equal": "bold", "relation": "solid"}.get(data.get("kind"), "dashed")
        lines.append(f"  {_dot_quote(a)} -- {_dot_quote(b)} [label={_dot_quote(data.get('label', ''))}, "
                     f"style={style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
