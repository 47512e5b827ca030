"""Diagrams: the shape of a codebase, or of one unit's neighbourhood, as Mermaid or Graphviz DOT.

Why: a list of 300 edges is read; a picture of the 20 most central packages and how they depend
on each other is looked at. `woods structure --format mermaid|dot` draws the repository's packages
(directories; files when every file fits) with the unit edges between them aggregated; `woods deps
/ dependents --format mermaid|dot` draws a unit's neighbourhood. Both are cut to a readable size,
the most central first (PageRank, computed at index time), and say what they left out.

Guarantees: pure functions of their inputs; node ids are `n1`, `n2` … in node order, so labels
(paths, identifiers) never need to be valid Mermaid or DOT identifiers; every order has an explicit
tie-break, so the same index always draws the same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FORMATS = ("mermaid", "dot")
# Nodes drawn by default: about what fits a screen and stays legible.
DEFAULT_DIAGRAM_NODES = 20
# Edges drawn per node at most (the heaviest first): more turns a diagram into a hairball.
EDGES_PER_NODE = 2


@dataclass(frozen=True, slots=True)
class DiagramNode:
    """A box: its label (a path or an identifier), its weight (PageRank), and whether it stands
    for something the index holds (`external`: a name the code refers to but does not define)."""

    label: str
    weight: float
    external: bool = False


@dataclass(frozen=True, slots=True)
class DiagramEdge:
    """An arrow between nodes (indexes into `Diagram.nodes`) with its label (edge kind or count)."""

    source: int
    target: int
    label: str


@dataclass(frozen=True, slots=True)
class Diagram:
    """Nodes (most central first), edges between them, and how much was left out to stay legible."""

    title: str
    nodes: tuple[DiagramNode, ...]
    edges: tuple[DiagramEdge, ...]
    omitted_nodes: int = 0
    omitted_edges: int = 0

    def render(self, fmt: str) -> str:
        """The diagram as `mermaid` or `dot` text (ValueError for another format)."""
        if fmt == "mermaid":
            return self.to_mermaid()
        if fmt == "dot":
            return self.to_dot()
        raise ValueError(f"unknown diagram format {fmt!r} (expected {' or '.join(FORMATS)})")

    def _note(self) -> str | None:
        if not (self.omitted_nodes or self.omitted_edges):
            return None
        return f"{self.title}: {self.omitted_nodes} more nodes and {self.omitted_edges} more edges not drawn"

    def to_mermaid(self) -> str:
        lines = ["flowchart LR"]
        note = self._note()
        lines.append(f"  %% {note or self.title}")
        for number, node in enumerate(self.nodes, 1):
            label = node.label.replace('"', "#quot;")
            lines.append(f'  n{number}(["{label}"])' if node.external else f'  n{number}["{label}"]')
        for edge in self.edges:
            label = edge.label.replace('"', "#quot;").replace("|", "#124;")
            lines.append(f"  n{edge.source + 1} -->|{label}| n{edge.target + 1}")
        return "\n".join(lines) + "\n"

    def to_dot(self) -> str:
        def quote(text: str) -> str:
            return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

        lines = ["digraph woods {", f"  label={quote(self._note() or self.title)};", "  rankdir=LR;",
                 "  node [shape=box];"]
        for number, node in enumerate(self.nodes, 1):
            style = ", style=dashed" if node.external else ""
            lines.append(f"  n{number} [label={quote(node.label)}{style}];")
        for edge in self.edges:
            lines.append(f"  n{edge.source + 1} -> n{edge.target + 1} [label={quote(edge.label)}];")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "nodes": [{"label": n.label, "weight": round(n.weight, 6), "external": n.external} for n in self.nodes],
            "edges": [{"source": self.nodes[e.source].label, "target": self.nodes[e.target].label, "label": e.label}
                      for e in self.edges],
            "omitted_nodes": self.omitted_nodes,
            "omitted_edges": self.omitted_edges,
        }


def _parent_dir(path: str) -> str:
    head, _sep, _name = path.rpartition("/")
    return head or "."


def module_diagram(
    units: Iterable[tuple[str, str, str]],
    pagerank: Mapping[str, float],
    edges: Iterable[tuple[str, str | None]],
    limit: int = DEFAULT_DIAGRAM_NODES,
) -> Diagram:
    """The repository's modules and their dependencies.

    `units` are (storage key, identifier, file path); `pagerank` is by identifier; `edges` are
    (source key, target key or None when the target is not a unit). A node is a file when every
    file fits in `limit`, else a package (the file's directory); its weight is the PageRank of its
    units summed. The `limit` heaviest nodes are kept, by (−weight, label); an arrow says how many
    unit edges go from one node to another, the heaviest `EDGES_PER_NODE × nodes` drawn."""
    file_of: dict[str, str] = {}
    weight_of_file: dict[str, float] = {}
    for key, identifier, path in units:
        file_of[key] = path
        weight_of_file[path] = weight_of_file.get(path, 0.0) + float(pagerank.get(identifier, 0.0))
    by_file = len(weight_of_file) <= limit

    def group(path: str) -> str:
        return path if by_file else _parent_dir(path)

    weights: dict[str, float] = {}
    for path, weight in weight_of_file.items():
        weights[group(path)] = weights.get(group(path), 0.0) + weight
    counts: dict[tuple[str, str], int] = {}
    for source_key, target_key in edges:
        if target_key is None or source_key not in file_of or target_key not in file_of:
            continue
        pair = (group(file_of[source_key]), group(file_of[target_key]))
        if pair[0] != pair[1]:
            counts[pair] = counts.get(pair, 0) + 1
    ordered = sorted(weights, key=lambda name: (-weights[name], name))
    kept = ordered[:limit]
    index = {name: i for i, name in enumerate(kept)}
    drawn = sorted(((n, s, t) for (s, t), n in counts.items() if s in index and t in index),
                   key=lambda row: (-row[0], index[row[1]], index[row[2]]))
    edge_cap = EDGES_PER_NODE * len(kept)
    title = f"{'files' if by_file else 'packages'} by PageRank, arrows counting unit dependencies"
    return Diagram(
        title,
        tuple(DiagramNode(name, weights[name]) for name in kept),
        tuple(DiagramEdge(index[s], index[t], str(n)) for n, s, t in drawn[:edge_cap]),
        omitted_nodes=len(ordered) - len(kept),
        omitted_edges=len(counts) - min(len(drawn), edge_cap),
    )


def walk_diagram(
    root: str,
    nodes: Sequence[tuple[str, int, bool]],
    pagerank: Mapping[str, float],
    edges: Iterable[tuple[str, str, str]],
    direction: str,
    limit: int = DEFAULT_DIAGRAM_NODES,
) -> Diagram:
    """A unit's neighbourhood: `root` and the `nodes` a walk reached as (identifier, depth,
    indexed), nearest first and then most central (−PageRank, identifier), cut to `limit` nodes;
    `edges` are (source, target, via) of the graph among them (others are ignored)."""
    ranked = sorted(nodes, key=lambda n: (n[1], -float(pagerank.get(n[0], 0.0)), n[0]))
    kept = [(root, 0, True), *[n for n in ranked if n[0] != root][: max(0, limit - 1)]]
    index = {name: i for i, (name, _depth, _indexed) in enumerate(kept)}
    drawn = sorted({(index[s], index[t], via) for s, t, via in edges if s in index and t in index and s != t})
    title = f"{direction} of {root}"
    edge_cap = EDGES_PER_NODE * len(kept) + len(kept)
    return Diagram(
        title,
        tuple(DiagramNode(name, float(pagerank.get(name, 0.0)), external=not indexed) for name, _d, indexed in kept),
        tuple(DiagramEdge(s, t, via) for s, t, via in drawn[:edge_cap]),
        omitted_nodes=len(ranked) - (len(kept) - 1),
        omitted_edges=max(0, len(drawn) - edge_cap),
    )


__all__ = ["DEFAULT_DIAGRAM_NODES", "FORMATS", "Diagram", "DiagramEdge", "DiagramNode", "module_diagram", "walk_diagram"]
