"""Questions about units and the dependency graph over one pinned generation: units by exact
name or by a loose reference (resolve), graph walks, a unit's source as it reads in its file, and
pictures of the graph.

Why here: the stores answer by key and by edge; these turn a caller's identifier (a storage key,
a chunk id or a public identifier) into the library's answers (`woods.api.records`), with the same
errors on every interface. `Index` checks the arguments and pins the generation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from woods.api.records import GraphNeighbor, GraphWalk, UnitRecord
from woods.errors import InputError, UnitNotFoundError
from woods.store.identity import public_identifier, strip_chunk

if TYPE_CHECKING:
    from woods.api.generations import WarmGeneration
    from woods.diagram import Diagram
    from woods.resolve import ResolveOutcome
    from woods.store.base import Record
    from woods.store.index import IndexStores
    from woods.store.metadata import SQLiteMetadataStore
    from woods.store.postgres import PostgresMetadataStore, PostgresStores

GRAPH_DIRECTIONS = ("dependencies", "dependents")


def lookup_all(gen: WarmGeneration, identifier: str, *, unit_type: str | None, include_source: bool) -> list[UnitRecord]:
    """Every unit stored under `identifier`, of `unit_type` when given (`Index.lookup_all`)."""
    if unit_type is not None:
        check_unit_types(gen.stores, [unit_type])
    records = records_named(gen.stores.metadata, identifier)
    if unit_type is not None:
        records = [r for r in records if r.get("type") == unit_type]
    return [UnitRecord.from_record(r, include_source=include_source) for r in records]


def resolve(
    gen: WarmGeneration,
    ref: str,
    *,
    unit_type: str | None,
    limit: int,
    strict: bool,
    recent: tuple[str, ...] | None,
) -> ResolveOutcome:
    """A loose reference turned into one unit, or why not, a stale or moved one said so
    (`Index.resolve`)."""
    from woods.freshness import root_moved_warning, stale_files, stale_warning
    from woods.resolve import resolve as resolve_reference

    outcome = resolve_reference(
        gen.stores, ref, type=unit_type, limit=limit, strict=strict, recent=recent, searcher=gen.searcher(),
        names=gen.names(),
    )
    stale = stale_files(gen.stores, gen.root, [outcome.file_path]) if outcome.file_path else set()
    moved = root_moved_warning(gen.root, gen.stores.manifest.root)
    if stale or moved:
        outcome = replace(
            outcome, stale=bool(stale), warnings=(*outcome.warnings, *moved, *stale_warning(stale))
        )
    return outcome


def traverse(
    gen: WarmGeneration,
    identifier: str,
    *,
    direction: str,
    depth: int,
    via: str | tuple[str, ...] | None,
    types: tuple[str, ...] | None,
) -> GraphWalk:
    """A breadth-first walk of the graph from `identifier` (`Index.traverse`)."""
    check_unit_types(gen.stores, types)
    metadata, graph = gen.stores.metadata, gen.stores.graph
    records = records_named(metadata, identifier)
    node = str(records[0]["identifier"]) if records else public_identifier(identifier)
    if not records and not metadata.find_by_identifier(node) and not graph.has_node(node):
        raise UnitNotFoundError(
            f"{identifier!r} is not a unit or graph node of this index; resolve finds loose names"
        )
    found = graph.traverse(node, reverse=direction == "dependents", depth=depth, via=via)
    neighbors = [_neighbor(metadata, name, edge_via, hops) for name, edge_via, hops in found]
    if types:
        neighbors = [n for n in neighbors if set(types).intersection(n.types)]
    return GraphWalk(node, direction, depth, via, types, tuple(neighbors))


def structure_diagram(gen: WarmGeneration, top: int) -> Diagram:
    """The repository's packages (or files) and their dependencies (`Index.structure_diagram`)."""
    from woods.diagram import module_diagram

    entries = [e for group in gen.names().by_identifier.values() for e in group]
    pagerank = gen.stores.metadata.pagerank_scores()
    edges = [(source_key, target_key) for source_key, _s, _t, target_key, _via in gen.stores.metadata.edges()]
    return module_diagram(((e.key, e.identifier, e.file_path) for e in entries), pagerank, edges, top)


def walk_diagram(gen: WarmGeneration, walk: GraphWalk, limit: int) -> Diagram:
    """A graph walk as a diagram (`Index.walk_diagram`)."""
    from woods.diagram import walk_diagram as drawn

    nodes = [(n.identifier, n.depth, n.indexed) for n in walk.neighbors]
    kinds = None if walk.via is None else {walk.via} if isinstance(walk.via, str) else set(walk.via)
    depth_of = {walk.identifier: 0, **{n.identifier: n.depth for n in walk.neighbors}}
    # An arrow one hop along the walk: how each node was reached (a dependency points away from
    # the start, a dependent towards it), not every edge among the nodes.
    step = 1 if walk.direction == "dependencies" else -1
    pagerank = gen.stores.metadata.pagerank_scores()
    edges = [
        (source, target, via)
        for source in sorted(depth_of)
        for target, via in gen.stores.graph.edges_from(source)
        if target in depth_of and depth_of[target] - depth_of[source] == step
        and (kinds is None or via in kinds)
    ]
    return drawn(walk.identifier, nodes, pagerank, edges, walk.direction, limit)


def records_named(metadata: SQLiteMetadataStore | PostgresMetadataStore, identifier: str) -> list[Record]:
    """Records stored under a storage key (or chunk id), else every typed variant of a public
    identifier, ordered by (type, key); [] when nothing is stored under it."""
    record = metadata.find(identifier)
    if record is None and strip_chunk(identifier) != identifier:
        record = metadata.find(strip_chunk(identifier))
    return [record] if record is not None else metadata.find_by_identifier(identifier)


def _neighbor(metadata: SQLiteMetadataStore | PostgresMetadataStore, identifier: str, via: str, depth: int) -> GraphNeighbor:
    records = metadata.find_by_identifier(identifier)
    if not records:
        return GraphNeighbor(identifier, via, depth, indexed=False)
    first = min(records, key=lambda r: (str(r.get("file_path") or ""), int(r.get("line_start") or 0), str(r["id"])))
    return GraphNeighbor(
        identifier,
        via,
        depth,
        indexed=True,
        types=tuple(sorted({str(r.get("type") or "") for r in records})),
        file_path=first.get("file_path"),
        line_start=first.get("line_start"),
        line_end=first.get("line_end"),
    )


def check_unit_types(stores: IndexStores | PostgresStores, types: Sequence[str] | None) -> None:
    """InputError naming the valid types when a requested unit type is unknown to woods and absent
    from this index (a type woods knows but the index lacks is a legitimate empty answer)."""
    from woods.retrieval.retriever import KNOWN_UNIT_TYPES

    present = stores.metadata.type_counts()
    for unit_type in types or ():
        if unit_type not in KNOWN_UNIT_TYPES and unit_type not in present:
            from woods.suggest import unknown_type_message

            raise InputError(unknown_type_message(unit_type, present))


# Enclosing units climbed to find a unit's first-line indentation (Ruby module > class > method …).
MAX_INDENT_PARENTS = 8


def indent_in_parents(metadata: SQLiteMetadataStore | PostgresMetadataStore, unit: UnitRecord) -> str | None:
    """The indentation of `unit`'s first line in its file, read from the text of the nearest
    enclosing unit that holds that line after its own first line; None when none does."""
    first = (unit.source_code or "").split("\n", 1)[0].strip()
    parent, start = unit.parent, unit.line_start
    for _level in range(MAX_INDENT_PARENTS):
        if not parent or start is None:
            return None
        holders = [r for r in metadata.find_by_identifier(parent)
                   if r.get("file_path") == unit.file_path and int(r.get("line_start") or 0) <= start]
        if not holders:
            return None
        holder = max(holders, key=lambda r: (int(r.get("line_start") or 0), str(r["id"])))
        offset = start - int(holder.get("line_start") or 0)
        lines = str(holder.get("source_code") or "").split("\n")
        if 0 < offset < len(lines) and lines[offset].strip().startswith(first[:40]):
            line = lines[offset]
            return line[: len(line) - len(line.lstrip())]
        parent = holder.get("parent")
    return None


__all__ = ["GRAPH_DIRECTIONS", "MAX_INDENT_PARENTS", "check_unit_types", "indent_in_parents", "lookup_all",
           "records_named", "resolve", "structure_diagram", "traverse", "walk_diagram"]
