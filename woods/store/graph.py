"""The dependency graph of an index: one-hop queries from the stored edges, traversals and
PageRank on top — the same for every backend (`DependencyGraph` over an `EdgeSource`).

Why both: the stored edges (SQLite's `edges` table, PostgreSQL's per-generation table) are the
source of truth and answer one-hop questions (`dependencies_of`, `dependents_of`) with an index
lookup — no graph load on the query path. A networkx DiGraph is built from the same rows on first
use for multi-hop traversals (a warm MCP server or API handle keeps it). It is deliberately not
cached as a pickle: loading a pickle from a repository's `.woods/` would run whatever code a
tampered file holds. PageRank is computed once at index time with the Ruby gem's exact algorithm
(damping 0.85, a fixed 20 iterations) and stored per unit.

Nodes are public identifiers; typed variants of one identifier share a node for traversal (Ruby
`dependencies_of` is the union over types) while their records stay distinct in the metadata store.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

    from woods.store.contracts import GraphSource, RankSource

# Ruby DependencyGraph#pagerank: damping 0.85, a fixed 20 iterations (not "until converged"), so
# scores are reproducible bit-for-bit across runs and ports.
PAGERANK_DAMPING = 0.85
PAGERANK_ITERATIONS = 20


def compute_pagerank(
    nodes: Sequence[str],
    edges: Iterable[tuple[str, str]],
    damping: float = PAGERANK_DAMPING,
    iterations: int = PAGERANK_ITERATIONS,
) -> dict[str, float]:
    """PageRank as the Ruby gem computes it.

    Only edges whose target is a node count, with multiplicity (two references = weight 2);
    nodes without such edges are dangling and their mass is spread uniformly; every iteration
    starts from `(1 − d) / n`.
    """
    n = len(nodes)
    if n == 0:
        return {}
    import numpy as np  # index time only: readers of the graph never load numpy
    index = {node: i for i, node in enumerate(nodes)}
    src_list: list[int] = []
    dst_list: list[int] = []
    for source, target in edges:
        s, t = index.get(source), index.get(target)
        if s is not None and t is not None:
            src_list.append(s)
            dst_list.append(t)
    src = np.asarray(src_list, dtype=np.int64)
    dst = np.asarray(dst_list, dtype=np.int64)
    outdeg = np.bincount(src, minlength=n).astype(np.float64)
    dangling = outdeg == 0
    rank = np.full(n, 1.0 / n)
    for _ in range(iterations):
        share = np.zeros(n)
        if len(src):
            np.add.at(share, dst, rank[src] / outdeg[src])
        dangling_mass = rank[dangling].sum()
        rank = (1.0 - damping) / n + damping * (share + dangling_mass / n)
    return {node: float(rank[i]) for node, i in index.items()}


def pagerank_percentiles(scores: dict[str, float]) -> dict[str, float]:
    """1 − i/n over identifiers ordered by (−pagerank, identifier): the Ruby ranker's importance
    signal (ties broken by identifier, as the gem breaks them), computed once at index time instead of on every cold query."""
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    total = float(len(ranked))
    return {identifier: 1.0 - (index / total) for index, (identifier, _score) in enumerate(ranked)}


class PercentileLookup(Mapping[str, float]):
    """A read-only mapping identifier → stored PageRank percentile, read one key at a time.

    The ranker needs importance for the ~20–60 candidates of a query, not for every unit: reading
    all 70k rows of a large index on each cold query cost ~0.35 s.
    """

    def __init__(self, metadata: RankSource) -> None:
        self._metadata = metadata
        self._cache: dict[str, float | None] = {}

    def __getitem__(self, identifier: str) -> float:
        if identifier not in self._cache:
            self._cache[identifier] = self._metadata.pagerank_percentile(identifier)
        value = self._cache[identifier]
        if value is None:
            raise KeyError(identifier)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._metadata.identifiers()))

    def __len__(self) -> int:
        return len(self._metadata.identifiers())


def build_digraph(edges: Iterable[tuple[str, str, str]]) -> nx.DiGraph:
    """DiGraph of public identifiers; each edge carries `vias` (sorted) and `weight` (multiplicity)."""
    import networkx as nx

    graph = nx.DiGraph()
    for source, target, via in edges:
        if graph.has_edge(source, target):
            data = graph[source][target]
            data["weight"] += 1
            if via not in data["vias"]:
                data["vias"] = sorted([*data["vias"], via])
        else:
            graph.add_edge(source, target, vias=[via], weight=1)
    return graph


class DependencyGraph:
    """Implements the `Graph` contract over any `GraphSource` (both backends' metadata stores);
    see the module docstring. Nodes are public identifiers."""

    def __init__(self, source: GraphSource) -> None:
        self._source = source
        self._digraph: nx.DiGraph | None = None
        self._digraph_lock = threading.Lock()
        self._pagerank: dict[str, float] | None = None

    def dependencies_of(self, identifier: str, via: str | None = None) -> list[str]:
        return self._source.edge_neighbours(identifier, reverse=False, via=via)

    def dependents_of(self, identifier: str, via: str | None = None) -> list[str]:
        return self._source.edge_neighbours(identifier, reverse=True, via=via)

    def edges_from(self, identifier: str) -> list[tuple[str, str]]:
        """(target, via) pairs in extraction order."""
        return self._source.edges_from(identifier)

    def edges_to(self, identifier: str) -> list[tuple[str, str]]:
        """(source, via) pairs ordered by (source, via)."""
        return self._source.edges_to(identifier)

    def has_node(self, identifier: str) -> bool:
        """True when some edge starts or ends at `identifier` (a unit, or a name the code refers to
        that the index holds no unit for, such as a gem's class)."""
        return self._source.has_edge_node(identifier)

    def traverse(
        self,
        identifier: str,
        *,
        reverse: bool = False,
        depth: int = 2,
        via: str | Collection[str] | None = None,
    ) -> list[tuple[str, str, int]]:
        """Breadth-first (identifier, via, depth) up to `depth` hops, each node once, in BFS order
        with neighbours sorted by (identifier, via). `via` keeps only edges of that kind (or of any
        of those kinds). One hop reads SQLite; deeper walks use the networkx graph (built once per
        store). This is the one traversal every interface answers graph questions with."""
        wanted = _edge_kinds(via)
        if depth <= 1:
            pairs = self.edges_to(identifier) if reverse else sorted(set(self.edges_from(identifier)))
            seen: set[str] = {identifier}
            hops = []
            for neighbour, edge_via in pairs:
                if (wanted is not None and edge_via not in wanted) or neighbour in seen:
                    continue
                seen.add(neighbour)
                hops.append((neighbour, edge_via, 1))
            return hops if depth == 1 else []
        graph = self.digraph()
        if identifier not in graph:
            return []
        step = graph.predecessors if reverse else graph.successors
        found: list[tuple[str, str, int]] = []
        visited = {identifier}
        frontier: deque[tuple[str, int]] = deque([(identifier, 0)])
        while frontier:
            node, distance = frontier.popleft()
            if distance >= depth:
                continue
            pairs = []
            for neighbour in step(node):
                data = graph[neighbour][node] if reverse else graph[node][neighbour]
                pairs.extend((neighbour, v) for v in data["vias"])
            for neighbour, edge_via in sorted(pairs):
                if (wanted is not None and edge_via not in wanted) or neighbour in visited:
                    continue
                visited.add(neighbour)
                found.append((neighbour, edge_via, distance + 1))
                frontier.append((neighbour, distance + 1))
        return found

    def pagerank_percentiles(self) -> PercentileLookup:
        """Importance percentiles precomputed at index time (see `pagerank_percentiles()`)."""
        return PercentileLookup(self._source)

    def pagerank(self) -> dict[str, float]:
        if self._pagerank is None:
            self._pagerank = self._source.pagerank_scores()
        return self._pagerank

    def digraph(self) -> nx.DiGraph:
        """The whole graph as a networkx DiGraph (built from the stored edges on first use)."""
        with self._digraph_lock:
            if self._digraph is None:
                self._digraph = build_digraph((s, t, v) for _k, s, t, _tk, v in self._source.edges())
            return self._digraph


def _edge_kinds(via: str | Collection[str] | None) -> frozenset[str] | None:
    """`via` as a set of edge kinds; None, "" or an empty collection keeps every kind."""
    if via is None:
        return None
    kinds = frozenset([via] if via else ()) if isinstance(via, str) else frozenset(via)
    return kinds or None
