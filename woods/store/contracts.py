"""The store contract: what the layers above the stores may read, written down as small Protocols.

Why: two backends serve a published index — a `.woods/` directory (`SQLiteMetadataStore`,
`FaissVectorStore`, `IndexStores`) and PostgreSQL (`PostgresMetadataStore`, `PostgresVectorStore`,
`PostgresStores`) — and the retrieval core, resolve, freshness and the library must not care which
one they read. Each protocol below is one capability, named by what it is; both backends implement
every one of them (mypy checks it: `woods/store/backend.py` assigns each backend to `OpenIndex`),
and callers are typed against the few they use. A capability a reader may lack is said in the type
— a protocol of its own, or a method whose answer documents the absence (`keyword_fields`,
`pagerank_percentiles`) — never found out by probing attributes.

The rows that cross the boundary are typed here too: `UnitRow` (a unit's stored record),
`UnitSummary` (its indexed columns, no source text), `FileRow`, `ChunkRow`, `VectorHit`, `EdgeRow`.
Every list a store returns is in a documented, deterministic order.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Required, TypedDict

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np

    from woods.store.index import Manifest


# -- rows -------------------------------------------------------------------------------------------


class UnitRow(TypedDict, total=False):
    """One unit as the metadata store returns it: `Unit.to_dict()` (the Ruby gem's `to_h` field
    names) plus `"id"`, its storage key (`woods.store.identity`). Optional fields the unit lacks are
    absent, not None, so a keyword never matches a record through a key name alone."""

    id: Required[str]
    identifier: Required[str]
    type: Required[str]
    language: str
    file_path: str
    line_start: int
    line_end: int
    namespace: str | None
    signature: str
    docstring: str
    parent: str
    source_code: str
    source_hash: str
    metadata: dict[str, Any]
    dependencies: list[dict[str, Any]]
    dependents: list[Any]


@dataclass(frozen=True, slots=True)
class UnitSummary:
    """What ranking needs of a unit, read from indexed columns (never the unit's source)."""

    key: str
    identifier: str
    name: str
    type: str
    language: str
    file_path: str
    line_start: int
    line_end: int
    parent: str | None
    pagerank_percentile: float


# (key, identifier, type, file_path, line_start, line_end, parent) of one unit: the columns resolve's
# name table is built from (no record decoded).
NameRow = tuple[str, str, str, str, int, int, "str | None"]


@dataclass(frozen=True, slots=True)
class FileRow:
    """One indexed file as recorded at index time (the basis of freshness checks)."""

    path: str
    language: str
    sha256: str
    size: int
    mtime_ns: int
    unit_count: int
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """One embedding text of a unit: its embedding id (`key` or `key#chunk_i`), the id of its vector,
    its place in the unit and the SHA-256 of its text (what vector reuse matches on)."""

    embedding_id: str
    vector_id: int
    unit_key: str
    chunk_index: int
    chunk_type: str
    line_start: int
    line_end: int
    text_sha256: str
    plan_key: str = ""  # what the unit's chunking depended on (indexing reuses plans by it)


# (source_key, source, target, target_key, via): one dependency edge as stored; `target_key` is None
# when the target is no unit of the index (a gem's class, a standard-library module).
EdgeRow = tuple[str, str, str, "str | None", str]


@dataclass(frozen=True, slots=True)
class VectorHit:
    """One nearest-neighbour hit: the embedding id (`X` or `X#chunk_i`), cosine, and metadata.

    `metadata` is `{"type", "identifier", "file_path", "key"}` of the unit the vector belongs to.
    """

    embedding_id: str
    score: float
    metadata: dict[str, Any]


def unit_scores(hits: Iterable[VectorHit]) -> list[tuple[str, float]]:
    """(unit key, score) of each hit, in order (the embedding id where a hit has no key): what
    code search's vector leg reads of a `search` (`search_units`)."""
    return [(str(h.metadata.get("key") or h.embedding_id), h.score) for h in hits]


# -- unit records: the Ruby gem's metadata store --------------------------------------------------


class UnitReader(Protocol):
    """Units by storage key, public identifier or type; their count. (The Ruby gem's
    MetadataStore, less its substring search.)"""

    def find(self, key: str) -> UnitRow | None:
        """The record stored under `key` (a plain identifier or a typed key), or None."""

    def find_batch(self, keys: Iterable[str]) -> dict[str, UnitRow]:
        """`{key: record}` for the keys that exist (one query, any number of keys)."""

    def find_by_identifier(self, identifier: str) -> list[UnitRow]:
        """Every record whose public identifier is `identifier` (one per type), ordered by type."""

    def find_by_type(self, unit_type: str) -> list[UnitRow]:
        """Every record of a type, ordered by key."""

    def all_identifiers(self) -> list[str]:
        """Every storage key, in insertion order."""

    def count(self) -> int: ...

    def type_counts(self) -> dict[str, int]:
        """Units per type, ordered by type."""


class KeywordSearch(Protocol):
    """The Ruby gem's keyword search: case-insensitive substring matches over unit records."""

    def search(self, query: str, fields: Sequence[str] | None = None) -> list[UnitRow]:
        """Case-insensitive substring search (Ruby MetadataStore#search contract).

        `fields=None` matches against the whole record serialised as JSON (keys included);
        otherwise against the named top-level fields. `%`, `_` and `\\` match literally.
        Ordered by insertion (rowid). Field names must match `[A-Za-z_][A-Za-z0-9_]*`.
        """

    def keyword_fields(self, keyword: str) -> list[tuple[str, list[str]]] | None:
        """(key, matched top-level fields) of every unit `search(keyword)` returns, same order —
        or None when this store does not compute them (an in-memory view): the caller then derives
        them from `search(keyword)`, field by field."""


class RecordStore(UnitReader, KeywordSearch, Protocol):
    """Unit records and the substring search over them: everything the Ruby-parity pipeline reads
    (the gem's MetadataStore). Implemented by both backends, by a scope's in-memory view
    (`woods.retrieval.scope.RecordView`) and by the parity bench's record view."""


# -- columns without records -----------------------------------------------------------------------


class UnitCatalogue(Protocol):
    """Units by their indexed columns (names, files, PageRank) — no record or source text decoded."""

    def unit_summaries(self, keys: Iterable[str]) -> dict[str, UnitSummary]:
        """The summaries of the units `keys` names that exist."""

    def units_named(self, names: Iterable[str], limit: int = 200) -> list[UnitSummary]:
        """Units whose last-segment name is one of `names` (exact spelling), by (file, line, key)."""

    def units_in_files(self, paths: Iterable[str]) -> list[UnitSummary]:
        """Every unit of the files `paths`, by (file, line, key)."""

    def name_rows(self) -> list[NameRow]:
        """Every unit's `NameRow`, in insertion order (resolve's name table)."""

    def identifiers(self) -> set[str]:
        """The distinct public identifiers of the index."""

    def language_counts(self) -> dict[str, int]:
        """Indexed files per language, ordered by language."""

    def top_pagerank(self, limit: int, types: Sequence[str] | None = None) -> list[tuple[str, str, float]]:
        """(identifier, type, pagerank) ordered by (−pagerank, identifier, type)."""


class UnitLookup(Protocol):
    """Records by the names a reference spells: the last segment, a file path, a stable-id prefix."""

    def find_by_name(self, name: str, limit: int = 50) -> list[UnitRow]:
        """Records whose last identifier segment is `name`, ordered by (−pagerank, identifier, key)."""

    def files_matching(self, path: str) -> list[str]:
        """Indexed file paths equal to `path` or ending in `/path`, sorted."""

    def units_in_file(self, file_path: str) -> list[UnitRow]:
        """Units of one file ordered by (line_start, −line_end, key): outermost first."""

    def find_by_stable_prefix(self, prefix: str, limit: int = 21) -> list[UnitRow]:
        """Records whose stable id starts with `prefix` (lowercase hex), by stable id."""

    def all_records(self) -> list[UnitRow]:
        """Every record, in insertion order."""


class FileCatalogue(Protocol):
    """The indexed files as recorded at index time."""

    def files(self) -> list[FileRow]:
        """Every file row, by path."""

    def file_rows(self, paths: Iterable[str]) -> dict[str, FileRow]:
        """`{path: row}` for the given paths that are indexed."""

    def file_paths(self) -> list[str]:
        """Every indexed file's repository-relative path, sorted."""

    def file_links(self, paths: Iterable[str]) -> set[tuple[str, str]]:
        """(source file, target file) of every resolved dependency edge between two of `paths`."""


class LexicalSearch(Protocol):
    """The code-aware lexical index (BM25 over name, qualifier, path, doc and body columns)."""

    def lexical_search(self, terms: Sequence[str], limit: int, weights: Sequence[float]) -> list[tuple[str, float]]:
        """(key, score) of the best units matching any of `terms`, higher = better, ordered by
        (−score, key); `weights` has one weight per column."""

    def common_terms(self, terms: Sequence[str]) -> set[str]:
        """The terms matching at least half the units: BM25 floors their IDF, so they rank nothing."""


class ChunkCatalogue(Protocol):
    """Which embedding texts (chunks) each unit has and where their vectors are."""

    def chunk_vector_ids(self, unit_keys: Iterable[str]) -> dict[str, list[int]]:
        """unit key → the vector ids of its chunks, in chunk order."""

    def chunks(self) -> list[ChunkRow]:
        """Every chunk row, by vector id."""

    def chunk_count(self) -> int: ...

    def vector_meta(self, vector_ids: Iterable[int] | None = None) -> dict[int, tuple[str, str, str, str, str]]:
        """vector_id → (embedding_id, unit_key, identifier, type, file_path), for the given ids or all."""


class EdgeSource(Protocol):
    """The dependency edges as stored: what graph traversal is built on (`DependencyGraph`)."""

    def edge_neighbours(self, identifier: str, *, reverse: bool, via: str | None) -> list[str]:
        """The distinct targets of edges from `identifier` (sources of edges to it, `reverse`),
        of kind `via` when given, sorted."""

    def edges_from(self, identifier: str) -> list[tuple[str, str]]:
        """(target, via) of every edge from `identifier`, in extraction order."""

    def edges_to(self, identifier: str) -> list[tuple[str, str]]:
        """The distinct (source, via) of edges to `identifier`, sorted."""

    def has_edge_node(self, identifier: str) -> bool:
        """True when some edge starts or ends at `identifier`."""

    def edges(self) -> list[EdgeRow]:
        """Every edge, in (source_key, ordinal) order."""


class RankSource(Protocol):
    """PageRank as computed at index time, per public identifier."""

    def pagerank_scores(self) -> dict[str, float]:
        """PageRank per public identifier (the max over typed variants)."""

    def pagerank_percentile(self, identifier: str) -> float | None:
        """The identifier's PageRank percentile (1 − i/n by (−pagerank, identifier)), or None."""

    def identifiers(self) -> set[str]:
        """The distinct public identifiers of the index."""


class GraphSource(EdgeSource, RankSource, Protocol):
    """Edges and ranks: everything `DependencyGraph` reads."""


class IndexMetadata(
    RecordStore, UnitLookup, UnitCatalogue, FileCatalogue, LexicalSearch, ChunkCatalogue, GraphSource, Protocol
):
    """The metadata store of a published index, whichever backend holds it: every capability above."""

    def meta(self) -> dict[str, str]:
        """The generation's `meta` table (schema version, manifest)."""

    def edge_counts_by_via(self) -> dict[str, int]:
        """Edges per kind, ordered by kind."""

    def extraction(self, path: str) -> dict[str, Any] | None:
        """The cached raw extraction of one file (units before linking), or None."""

    def close(self) -> None: ...


# -- vectors ---------------------------------------------------------------------------------------


class VectorSearch(Protocol):
    """Filtered nearest-neighbour search over chunk vectors (the Ruby gem's VectorStore)."""

    dimension: int

    def search(
        self,
        vector: np.ndarray,
        limit: int,
        types: Collection[str] | None = None,
        keys: Collection[str] | None = None,
    ) -> list[VectorHit]:
        """Top `limit` hits by cosine, ordered by (−score, embedding_id).

        `types` keeps only vectors of units of those types; `keys` only vectors of those unit
        storage keys. Both filters apply before the limit (exhaustive over the eligible set).
        """

    def count(self) -> int: ...


class UnitVectorSearch(VectorSearch, Protocol):
    """Vector search as code search reads it: best units by cosine and stored vectors by id."""

    def search_units(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """(unit key, cosine) of the `limit` nearest chunks, ordered by (−score, embedding id)."""

    def reconstruct(self, vector_ids: Sequence[int]) -> np.ndarray:
        """The stored vectors of `vector_ids`, one row each, in that order."""

    def vectors_for(self, vector_ids: list[int]) -> np.ndarray:
        """`reconstruct` for vector reuse at index time."""


# -- the graph --------------------------------------------------------------------------------------


class GraphReader(Protocol):
    """One-hop dependencies and PageRank by public identifier (the Ruby gem's GraphStore)."""

    def dependencies_of(self, identifier: str, via: str | None = None) -> list[str]:
        """Public identifiers `identifier` depends on (union over its typed variants), sorted."""

    def dependents_of(self, identifier: str, via: str | None = None) -> list[str]:
        """Public identifiers that depend on `identifier`, sorted."""

    def pagerank(self) -> dict[str, float]:
        """PageRank per public identifier (damping 0.85, a fixed 20 iterations, as the gem computes it)."""

    def pagerank_percentiles(self) -> Mapping[str, float] | None:
        """Importance percentiles precomputed at index time, or None when this graph has none (a
        scoped view: its percentiles are ranks within the scope, computed from `pagerank()`)."""


class Graph(GraphReader, Protocol):
    """The whole dependency graph of an index: one-hop edges, traversals, networkx on demand."""

    def edges_from(self, identifier: str) -> list[tuple[str, str]]: ...

    def edges_to(self, identifier: str) -> list[tuple[str, str]]: ...

    def has_node(self, identifier: str) -> bool: ...

    def traverse(
        self, identifier: str, *, reverse: bool = False, depth: int = 2, via: str | Collection[str] | None = None
    ) -> list[tuple[str, str, int]]: ...

    def digraph(self) -> nx.DiGraph: ...


# -- an open index ----------------------------------------------------------------------------------


class SearchableIndex(Protocol):
    """What the retriever reads of an open index (every `OpenIndex` is one): its metadata, its
    vectors (None while `has_vectors` is False) and its graph."""

    @property
    def metadata(self) -> IndexMetadata: ...

    @property
    def vectors(self) -> UnitVectorSearch | None: ...

    @property
    def graph(self) -> GraphReader | None: ...

    @property
    def has_vectors(self) -> bool: ...


class Generation(Protocol):
    """How a reader names the generation it pinned (a local generation directory, or a
    PostgreSQL generation reference): its `name`."""

    @property
    def name(self) -> str: ...


class OpenIndex(Protocol):
    """An open, read-only published index: its stores, its manifest and the generation they pin.

    `store_dir` is the directory (a `Path`) or the redacted PostgreSQL URL (a `str`); `repo` the
    one repository a PostgreSQL view reads (None for a directory, or a view of several), and
    `repo_of(key)` the repository a unit key belongs to (None for a directory). `vectors` is None
    while `has_vectors` is False (phase 2 of `woods index` has not published them)."""

    @property
    def store_dir(self) -> Path | str: ...

    @property
    def generation(self) -> Generation: ...

    @property
    def manifest(self) -> Manifest: ...

    @property
    def metadata(self) -> IndexMetadata: ...

    @property
    def graph(self) -> Graph: ...

    @property
    def vectors(self) -> UnitVectorSearch | None: ...

    @property
    def has_vectors(self) -> bool: ...

    @property
    def repo(self) -> str | None: ...

    def repo_of(self, key: str) -> str | None: ...

    def close(self) -> None: ...


__all__ = [
    "ChunkCatalogue",
    "ChunkRow",
    "EdgeRow",
    "EdgeSource",
    "FileCatalogue",
    "FileRow",
    "Generation",
    "Graph",
    "GraphReader",
    "GraphSource",
    "IndexMetadata",
    "KeywordSearch",
    "LexicalSearch",
    "NameRow",
    "OpenIndex",
    "RankSource",
    "RecordStore",
    "SearchableIndex",
    "UnitCatalogue",
    "UnitLookup",
    "UnitReader",
    "UnitRow",
    "UnitSummary",
    "UnitVectorSearch",
    "VectorHit",
    "VectorSearch",
    "unit_scores",
]
