"""The Python API: `woods.Index`, one warm, thread-safe handle on a published index.

Why: an assistant backend (the MCP server, an editor plugin, a notebook) asks many small questions
of one index. Opening SQLite, FAISS and the query encoder per question costs more than answering
it, so `Index` opens them once and keeps them — and the embedding model — warm for its lifetime.

Guarantees:
- Every answer is a frozen dataclass (`SearchHit`, `Retrieval`, `UnitRecord`, `GraphNeighbor`,
  `RankedUnit`, `Structure`, `Status`) or the retrieval core's own typed value (`ResolveOutcome`);
  each has `to_dict()` with JSON-ready values.
- Concurrent readers are safe: the stores are read-only (`immutable=1` SQLite, an in-memory FAISS
  index), and every lazily built piece of shared state (the retriever's pipeline on its first
  query, the query embedder, the resolve searcher, the PageRank table) is built under a lock.
- One question sees one generation: each call pins the generation that was current when it
  started. `update()` publishes a new generation and switches the handle to it; calls already
  running finish on the old one, which is closed when the last of them returns. Never a mix.
- Reading never writes: only `update()` writes, through the index builder and its store lock.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from woods.errors import InputError, WoodsError
from woods.store.identity import public_identifier, strip_chunk

# The retriever assembles a context even when only the ranked list is wanted; candidates do not
# depend on the budget, so `search` asks for a small one and wastes little work.
SEARCH_ASSEMBLY_BUDGET = 256
DEFAULT_SEARCH_LIMIT = 10
# Ruby `codebase_retrieve` default budget: a comfortable slice of a modern context window.
DEFAULT_RETRIEVE_BUDGET = 8000
# Traversals deeper than this return most of a real codebase; nobody reads that as "dependencies".
MAX_GRAPH_DEPTH = 10
# The ranked list behind a search is 20 candidates deep (the executor's limit); more is never there.
MAX_SEARCH_LIMIT = 200
STRUCTURE_DETAILS = ("summary", "full")
# Query vectors kept per Index: an assistant often asks the same text twice in a row (search, then
# codebase_retrieve; resolve's search leg), and one embedding costs far more than the rest of a
# warm query. 256 vectors of 384 floats is about 400 KB.
QUERY_VECTOR_CACHE_SIZE = 256


class UnitNotFoundError(InputError, LookupError):
    """The identifier names no unit of this index (and no graph node, for graph questions)."""


class AmbiguousIdentifierError(InputError):
    """A public identifier names several units of different types; pass `type=` to choose one.

    `candidates` lists each variant as `{"key", "identifier", "type", "file_path", "line_start"}`,
    ordered by (type, key).
    """

    def __init__(self, message: str, candidates: Sequence[dict[str, Any]]) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


class IndexClosedError(WoodsError):
    """The `Index` was closed; open a new one."""


# -- result types --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked search result: the unit's public identifier, its storage key and where it lives.

    `sources` are the strategies that found it (vector, keyword, graph, direct, …).
    """

    identifier: str
    key: str
    type: str
    score: float
    file_path: str | None
    line_start: int | None
    line_end: int | None
    sources: tuple[str, ...]
    matched_fields: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "identifier": self.identifier,
            "key": self.key,
            "type": self.type,
            "score": self.score,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "sources": list(self.sources),
        }
        if self.matched_fields is not None:
            data["matched_fields"] = list(self.matched_fields)
        return data


@dataclass(frozen=True, slots=True)
class ContextSource:
    """A unit whose text is in an assembled context, in context order."""

    identifier: str
    type: str | None
    score: float
    file_path: str | None
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "identifier": self.identifier,
            "type": self.type,
            "score": self.score,
            "file_path": self.file_path,
            "truncated": self.truncated,
        }


@dataclass(frozen=True, slots=True)
class Retrieval:
    """A token-budgeted context for a question, ready to paste into a prompt.

    `stale` is the Ruby gem's stale-index signal: units were ranked but none of them could be
    read back (the metadata lost them), so the context is empty for a reason other than "no
    match". `result` is the retrieval core's full `RetrievalResult` (trace, candidates, …).
    """

    query: str
    context: str
    sources: tuple[ContextSource, ...]
    strategy: str
    tokens_used: int
    budget: int
    result: Any = field(repr=False, compare=False)

    @property
    def stale(self) -> bool:
        trace = self.result.trace
        return trace.ranked_count > 0 and trace.skipped_missing_metadata > 0 and not self.sources

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "context": self.context,
            "sources": [s.to_dict() for s in self.sources],
            "strategy": self.strategy,
            "tokens_used": self.tokens_used,
            "budget": self.budget,
        }


@dataclass(frozen=True, slots=True)
class UnitRecord:
    """One unit as stored: identity, place, text and the dependencies extraction recorded.

    `source_code` is None when the lookup asked for no source. `dependencies` are
    `{"target", "via", "type"}` dicts in extraction order; `dependents` `{"identifier", "type"}`.
    """

    key: str
    identifier: str
    type: str
    language: str | None
    file_path: str | None
    line_start: int | None
    line_end: int | None
    parent: str | None
    namespace: str | None
    signature: str | None
    docstring: str | None
    source_code: str | None
    dependencies: tuple[dict[str, Any], ...]
    dependents: tuple[dict[str, Any], ...]
    metadata: dict[str, Any]

    @classmethod
    def from_record(cls, record: dict[str, Any], include_source: bool = True) -> UnitRecord:
        def text(name: str) -> str | None:
            value = record.get(name)
            return None if value is None else str(value)

        def number(name: str) -> int | None:
            value = record.get(name)
            return None if value is None else int(value)

        key = str(record.get("id") or record["identifier"])
        return cls(
            key=key,
            identifier=str(record.get("identifier") or public_identifier(key)),
            type=str(record.get("type") or ""),
            language=text("language"),
            file_path=text("file_path"),
            line_start=number("line_start"),
            line_end=number("line_end"),
            parent=text("parent"),
            namespace=text("namespace"),
            signature=text("signature"),
            docstring=text("docstring"),
            source_code=text("source_code") if include_source else None,
            dependencies=tuple(dict(d) for d in record.get("dependencies") or ()),
            dependents=tuple(dict(d) for d in record.get("dependents") or ()),
            metadata=dict(record.get("metadata") or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "identifier": self.identifier,
            "type": self.type,
            "language": self.language,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "parent": self.parent,
            "namespace": self.namespace,
            "signature": self.signature,
            "docstring": self.docstring,
            "source_code": self.source_code,
            "dependencies": [dict(d) for d in self.dependencies],
            "dependents": [dict(d) for d in self.dependents],
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True, slots=True)
class GraphNeighbor:
    """A node reached by a dependency traversal: how (`via`) and how far (`depth`, 1 = direct).

    `indexed` is False for names the code refers to but the index holds no unit for (a gem's
    class, a stdlib module); `types` lists the unit types under that identifier, sorted.
    """

    identifier: str
    via: str
    depth: int
    indexed: bool
    types: tuple[str, ...] = ()
    file_path: str | None = None
    line_start: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "identifier": self.identifier,
            "via": self.via,
            "depth": self.depth,
            "indexed": self.indexed,
            "types": list(self.types),
            "file_path": self.file_path,
            "line_start": self.line_start,
        }


@dataclass(frozen=True, slots=True)
class RankedUnit:
    """A unit by structural importance (PageRank, Ruby §1.9), with its type."""

    identifier: str
    type: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"identifier": self.identifier, "type": self.type, "score": self.score}


@dataclass(frozen=True, slots=True)
class Structure:
    """What the index holds: counts by type, language and edge kind (and, in full detail, files)."""

    generation: str
    root: str | None
    created_at: str | None
    embedder: dict[str, Any]
    counts: dict[str, int]
    units_by_type: dict[str, int]
    files_by_language: dict[str, int]
    edges_by_via: dict[str, int]
    files: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = {
            "generation": self.generation,
            "root": self.root,
            "created_at": self.created_at,
            "embedder": dict(self.embedder),
            "counts": dict(self.counts),
            "units_by_type": dict(self.units_by_type),
            "files_by_language": dict(self.files_by_language),
            "edges_by_via": dict(self.edges_by_via),
        }
        if self.files:
            data["files"] = [dict(f) for f in self.files]
        return data


@dataclass(frozen=True, slots=True)
class Status:
    """Where the index is, what built it, and which files changed on disk since (`changes`)."""

    store: str
    generation: str
    root: str | None
    created_at: str | None
    embedder: dict[str, Any]
    counts: dict[str, int]
    changes: Any  # woods.freshness.Changes

    @property
    def fresh(self) -> bool:
        return bool(self.changes.fresh)

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "generation": self.generation,
            "root": self.root,
            "created_at": self.created_at,
            "embedder": dict(self.embedder),
            "counts": dict(self.counts),
            "fresh": self.fresh,
            "changes": self.changes.to_dict(),
        }


# -- generations ---------------------------------------------------------------------------------


class _CachingEmbedder:
    """A query embedder with a thread-safe LRU of query text → vector (read-only arrays)."""

    def __init__(self, embedder: Any, size: int = QUERY_VECTOR_CACHE_SIZE) -> None:
        self._embedder = embedder
        self._size = size
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, text: str) -> Any:
        with self._lock:
            cached = self._vectors.get(text)
            if cached is not None:
                self._vectors.move_to_end(text)
                return cached
        vector = np.array(self._embedder.embed(text), copy=True)
        vector.flags.writeable = False
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
        return vector

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._embedder, attribute)


class _Generation:
    """One open generation and the warm state built on it; closed when retired and unused."""

    def __init__(self, stores: Any, embedder_factory: Callable[[], Any], mode: str) -> None:
        from woods.retrieval.retriever import Retriever

        self.stores = stores
        self.embedder_factory = embedder_factory
        self.retriever = Retriever(stores, embedder_factory, mode=mode)
        self.users = 0
        self.retired = False
        self.lock = threading.Lock()  # guards the lazily built state below
        self._warm = False
        self._searcher: Any = None
        self._ranked: tuple[RankedUnit, ...] | None = None

    def retrieve(self, query: object, **options: Any) -> Any:
        """The retriever builds its pipeline on first use; that first call runs alone."""
        if self._warm:
            return self.retriever.retrieve(query, **options)
        with self.lock:
            result = self.retriever.retrieve(query, **options)
            self._warm = True
            return result

    def searcher(self) -> Any:
        with self.lock:
            if self._searcher is None:
                from woods.resolve import make_searcher

                self._searcher = make_searcher(self.stores, self.embedder_factory)
            return self._searcher

    def ranked_units(self) -> tuple[RankedUnit, ...]:
        """Every (identifier, type) with its PageRank, by (−score, identifier, type); built once."""
        with self.lock:
            if self._ranked is None:
                scores = self.stores.graph.pagerank()
                pairs = sorted({(r["identifier"], str(r.get("type") or "")) for r in self.stores.metadata.all_records()})
                units = [RankedUnit(ident, unit_type, round(scores.get(ident, 0.0), 6)) for ident, unit_type in pairs]
                self._ranked = tuple(sorted(units, key=lambda u: (-u.score, u.identifier, u.type)))
            return self._ranked


def _validate_positive(name: str, value: object, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    if maximum is not None and value > maximum:
        raise InputError(f"{name} must be at most {maximum}, got {value}")
    return value


def _validate_vias(via: str | Sequence[str] | None) -> frozenset[str] | None:
    if via is None:
        return None
    values = [via] if isinstance(via, str) else via
    if isinstance(values, (bytes, dict)) or not all(isinstance(v, str) and v.strip() for v in values):
        raise InputError(f"via must be an edge kind (e.g. calls) or a list of them, got {via!r}")
    return frozenset(values) or None


def _traverse(graph: Any, start: str, reverse: bool, depth: int, vias: frozenset[str] | None) -> list[tuple[str, str, int]]:
    """Breadth-first (identifier, via, distance), each node once, neighbours by (identifier, via).

    The graph store's `traverse` with a set of edge kinds instead of one (Ruby `via` takes a list).
    """
    seen = {start}
    found: list[tuple[str, str, int]] = []
    frontier = [start]
    for distance in range(1, depth + 1):
        following: list[str] = []
        for node in frontier:
            pairs = graph.edges_to(node) if reverse else sorted(set(graph.edges_from(node)))
            for neighbour, edge_via in pairs:
                if (vias is not None and edge_via not in vias) or neighbour in seen:
                    continue
                seen.add(neighbour)
                found.append((neighbour, edge_via, distance))
                following.append(neighbour)
        frontier = following
    return found


def provider_factory_for(embedder: dict[str, Any]) -> Callable[[], Any]:
    """The index-time provider that rebuilds an index made with `embedder` (its manifest entry)."""
    from woods.embedding.fake import FAKE_MODEL_NAME, FakeEmbeddingProvider
    from woods.embedding.select import index_provider

    name = str(embedder.get("name", ""))
    if name == FAKE_MODEL_NAME:
        dimension = int(embedder["dimension"])
        max_tokens = embedder.get("max_input_tokens")
        return lambda: FakeEmbeddingProvider(dimensions=dimension, max_input_tokens=max_tokens)
    if "all-MiniLM-L6-v2" in name:
        return lambda: index_provider("minilm")
    raise InputError(f"the index was built with embedder {name!r}, which `update` cannot rebuild; run `woods index`")


# -- the index -----------------------------------------------------------------------------------


class Index:
    """A warm, thread-safe handle on one woods index (see the module docstring for guarantees).

    Open with `Index.open(path)` (the repository; the index is `path/.woods`) or
    `Index.open(store=dir)`; use as a context manager or call `close()`.
    """

    def __init__(self, store_dir: Path, *, mode: str = "semantic") -> None:
        self.store_dir = Path(store_dir)
        self.mode = mode
        self._lock = threading.Lock()  # guards _current, users counts and the embedder cache
        self._update_lock = threading.Lock()  # one update at a time per handle
        self._embedders: dict[tuple[Any, ...], Any] = {}
        self._closed = False
        self._current = self._open_generation()

    @classmethod
    def open(cls, path: str | Path | None = None, *, store: str | Path | None = None, mode: str = "semantic") -> Index:
        """Open the index of repository `path` (default: cwd), or the index directory `store`."""
        from woods.store.index import store_dir_for

        if path is not None and store is not None:
            raise InputError("pass either path or store, not both")
        repo = Path(path) if path is not None else None
        if repo is not None and not repo.exists():
            raise InputError(f"path not found: {repo}")
        return cls(store_dir_for(repo, Path(store) if store is not None else None), mode=mode)

    # -- lifecycle -------------------------------------------------------------------------
    def _open_generation(self) -> _Generation:
        from woods.store.index import IndexStores

        stores = IndexStores.open(self.store_dir)
        description = dict(stores.manifest.embedder)
        try:
            return _Generation(stores, lambda: self._embedder_for(description), self.mode)
        except BaseException:
            stores.close()
            raise

    def _embedder_for(self, description: dict[str, Any]) -> Any:
        """The query embedder for an embedder description, created once and kept across updates."""
        from woods.embedding.select import query_embedder

        cache_key = (description.get("name"), description.get("dimension"), description.get("fingerprint"))
        with self._lock:
            embedder = self._embedders.get(cache_key)
            if embedder is None:
                embedder = _CachingEmbedder(query_embedder(description))
                self._embedders[cache_key] = embedder
            return embedder

    @contextlib.contextmanager
    def _use(self) -> Iterator[_Generation]:
        with self._lock:
            if self._closed:
                raise IndexClosedError(f"this woods Index ({self.store_dir}) is closed; open a new one")
            generation = self._current
            generation.users += 1
        try:
            yield generation
        finally:
            with self._lock:
                generation.users -= 1
                release = generation.retired and generation.users == 0
            if release:
                generation.stores.close()

    def _retire(self, generation: _Generation) -> None:
        with self._lock:
            generation.retired = True
            release = generation.users == 0
        if release:
            generation.stores.close()

    def close(self) -> None:
        """Close the index (idempotent). Calls still running finish first."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            generation = self._current
        self._retire(generation)

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def generation(self) -> str:
        """The name of the generation new calls read."""
        with self._use() as gen:
            return str(gen.stores.generation.name)

    # -- retrieval -------------------------------------------------------------------------
    def search(
        self,
        query: str,
        limit: int = DEFAULT_SEARCH_LIMIT,
        strategy: str | None = None,
        types: Sequence[str] | None = None,
        exclude_types: Sequence[str] | None = None,
    ) -> list[SearchHit]:
        """Ranked units for `query` (best first). `strategy` forces one of vector, keyword, graph,
        direct, hybrid (None or "auto" classifies the query); `types` keeps only those unit types."""
        limit = _validate_positive("limit", limit, MAX_SEARCH_LIMIT)
        with self._use() as gen:
            result = gen.retrieve(
                query,
                limit=limit,
                strategy=None if strategy in (None, "auto") else strategy,
                types=types,
                exclude_types=exclude_types,
                budget=SEARCH_ASSEMBLY_BUDGET,
            )
            keys = [strip_chunk(entry.key) for entry in result.candidates]
            records = gen.stores.metadata.find_batch(keys)
        hits = []
        for entry, key in zip(result.candidates, keys, strict=True):
            record = records.get(key) or {}
            hits.append(
                SearchHit(
                    identifier=entry.identifier,
                    key=key,
                    type=entry.type,
                    score=float(entry.score),
                    file_path=record.get("file_path"),
                    line_start=record.get("line_start"),
                    line_end=record.get("line_end"),
                    sources=tuple(entry.sources),
                    matched_fields=entry.matched_fields,
                )
            )
        return hits

    def retrieve(
        self,
        query: str,
        budget: int = DEFAULT_RETRIEVE_BUDGET,
        types: Sequence[str] | None = None,
        exclude_types: Sequence[str] | None = None,
    ) -> Retrieval:
        """The assembled, token-budgeted context for `query` (what `codebase_retrieve` returns)."""
        with self._use() as gen:
            result = gen.retrieve(query, budget=budget, types=types, exclude_types=exclude_types)
        sources = tuple(
            ContextSource(s.identifier, s.type, float(s.score), s.file_path, bool(s.truncated)) for s in result.sources
        )
        return Retrieval(
            query=str(query),
            context=result.context,
            sources=sources,
            strategy=result.strategy,
            tokens_used=int(result.tokens_used),
            budget=int(result.budget),
            result=result,
        )

    def resolve(
        self,
        ref: str,
        *,
        type: str | None = None,  # noqa: A002 — mirrors `woods resolve --type`
        limit: int = 5,
        strict: bool = False,
        recent: Sequence[str] | None = None,
    ) -> Any:
        """Turn a loose reference into one unit, or say why not (`woods.resolve.ResolveOutcome`).

        `recent` lists unit ids the caller just saw, most recent first: a short name that matches
        one of them resolves to it.
        """
        from woods.resolve import resolve

        if recent is not None and not isinstance(recent, (list, tuple)):
            recent = list(recent)
        with self._use() as gen:
            return resolve(
                gen.stores, ref, type=type, limit=limit, strict=strict, recent=recent, searcher=gen.searcher()
            )

    # -- units and the graph ---------------------------------------------------------------
    def lookup(
        self,
        identifier: str,
        *,
        type: str | None = None,  # noqa: A002 — the unit type, as everywhere in woods
        include_source: bool = True,
    ) -> UnitRecord | None:
        """The unit stored under `identifier` — a storage key or a public identifier — or None.

        Exact names only (use `resolve` for loose ones). When a public identifier names units of
        several types, `type` picks one; without it AmbiguousIdentifierError lists the variants.
        """
        if not isinstance(identifier, str) or not identifier.strip():
            raise InputError(f"identifier must be a non-blank string, got {identifier!r}")
        with self._use() as gen:
            record = self._find_one(gen.stores.metadata, identifier, type)
        return UnitRecord.from_record(record, include_source=include_source) if record else None

    @staticmethod
    def _find_one(metadata: Any, identifier: str, unit_type: str | None) -> dict[str, Any] | None:
        record = metadata.find(identifier)
        if record is None and strip_chunk(identifier) != identifier:
            record = metadata.find(strip_chunk(identifier))
        if record is not None:
            return record if unit_type is None or record.get("type") == unit_type else None
        variants = metadata.find_by_identifier(identifier)
        if unit_type is not None:
            variants = [r for r in variants if r.get("type") == unit_type]
        if len(variants) <= 1:
            return variants[0] if variants else None
        candidates = [
            {
                "key": r["id"],
                "identifier": r.get("identifier"),
                "type": r.get("type"),
                "file_path": r.get("file_path"),
                "line_start": r.get("line_start"),
            }
            for r in variants
        ]
        kinds = ", ".join(sorted({str(c["type"]) for c in candidates}))
        raise AmbiguousIdentifierError(
            f"{identifier!r} names {len(candidates)} units ({kinds}); pass type= to choose one", candidates
        )

    def dependencies(
        self, identifier: str, depth: int = 1, via: str | Sequence[str] | None = None
    ) -> list[GraphNeighbor]:
        """What `identifier` depends on, breadth-first up to `depth` hops (`via` keeps edge kinds)."""
        return self._neighbors(identifier, depth, via, reverse=False)

    def dependents(
        self, identifier: str, depth: int = 1, via: str | Sequence[str] | None = None
    ) -> list[GraphNeighbor]:
        """What depends on `identifier`, breadth-first up to `depth` hops."""
        return self._neighbors(identifier, depth, via, reverse=True)

    def _neighbors(self, identifier: str, depth: int, via: Any, *, reverse: bool) -> list[GraphNeighbor]:
        if not isinstance(identifier, str) or not identifier.strip():
            raise InputError(f"identifier must be a non-blank string, got {identifier!r}")
        depth = _validate_positive("depth", depth, MAX_GRAPH_DEPTH)
        vias = _validate_vias(via)
        with self._use() as gen:
            metadata, graph = gen.stores.metadata, gen.stores.graph
            record = metadata.find(identifier)
            node = str(record["identifier"]) if record else public_identifier(identifier)
            if record is None and not metadata.find_by_identifier(node) and not self._is_node(graph, node):
                raise UnitNotFoundError(f"{identifier!r} is not a unit or graph node of this index")
            found = _traverse(graph, node, reverse, depth, vias)
            return [self._neighbor(metadata, name, edge_via, distance) for name, edge_via, distance in found]

    @staticmethod
    def _is_node(graph: Any, identifier: str) -> bool:
        return bool(graph.edges_from(identifier) or graph.edges_to(identifier))

    @staticmethod
    def _neighbor(metadata: Any, identifier: str, via: str, distance: int) -> GraphNeighbor:
        records = metadata.find_by_identifier(identifier)
        if not records:
            return GraphNeighbor(identifier, via, distance, indexed=False)
        first = min(records, key=lambda r: (str(r.get("file_path") or ""), int(r.get("line_start") or 0), r["id"]))
        return GraphNeighbor(
            identifier,
            via,
            distance,
            indexed=True,
            types=tuple(sorted({str(r.get("type") or "") for r in records})),
            file_path=first.get("file_path"),
            line_start=first.get("line_start"),
        )

    def pagerank(self, limit: int = 20, types: Sequence[str] | None = None) -> list[RankedUnit]:
        """The most central units by PageRank (Ruby §1.9), optionally only of `types`."""
        limit = _validate_positive("limit", limit)
        wanted = None if types is None else set(types)
        with self._use() as gen:
            ranked = gen.ranked_units()
        return [u for u in ranked if wanted is None or u.type in wanted][:limit]

    # -- the index itself ------------------------------------------------------------------
    def structure(self, detail: str = "summary") -> Structure:
        """Counts by unit type, language and edge kind; `detail="full"` adds every indexed file."""
        if detail not in STRUCTURE_DETAILS:
            raise InputError(f"detail must be one of {', '.join(STRUCTURE_DETAILS)}, got {detail!r}")
        with self._use() as gen:
            stores = gen.stores
            manifest = stores.manifest
            files: tuple[dict[str, Any], ...] = ()
            if detail == "full":
                files = tuple(
                    {"path": f.path, "language": f.language, "units": f.unit_count} for f in stores.metadata.files()
                )
            return Structure(
                generation=stores.generation.name,
                root=manifest.root or None,
                created_at=manifest.data.get("created_at"),
                embedder=manifest.embedder,
                counts=manifest.counts,
                units_by_type=stores.metadata.type_counts(),
                files_by_language=stores.metadata.language_counts(),
                edges_by_via=stores.metadata.edge_counts_by_via(),
                files=files,
            )

    def status(self) -> Status:
        """The index's identity and which repository files changed since it was built."""
        from woods.freshness import changes_since_index

        with self._use() as gen:
            stores = gen.stores
            manifest = stores.manifest
            return Status(
                store=str(stores.store_dir),
                generation=stores.generation.name,
                root=manifest.root or None,
                created_at=manifest.data.get("created_at"),
                embedder=manifest.embedder,
                counts=manifest.counts,
                changes=changes_since_index(stores),
            )

    def update(self, *, wait: float = 30.0, provider_factory: Callable[[], Any] | None = None) -> Any:
        """Re-index the repository the index was built from and switch to the new generation.

        Vectors of unchanged embedding texts are reused, so only changed code is embedded.
        Returns the builder's `IndexSummary`. `provider_factory` overrides the embedder recorded in
        the manifest (it must produce compatible vectors).
        """
        from woods.indexing import index_repository

        with self._update_lock:
            with self._use() as gen:
                manifest = gen.stores.manifest
                root_text = manifest.root
                factory = provider_factory or provider_factory_for(manifest.embedder)
                max_bytes = int(manifest.data.get("max_file_bytes") or 1_000_000)
            if not root_text:
                raise InputError("this index records no repository root (built from a corpus); it cannot be updated")
            root = Path(root_text)
            summary = index_repository(root, self.store_dir, factory, max_file_bytes=max_bytes, wait=wait)
            fresh = self._open_generation()
            with self._lock:
                if self._closed:
                    old = fresh
                else:
                    old, self._current = self._current, fresh
            self._retire(old)
            return summary


__all__ = [
    "AmbiguousIdentifierError",
    "ContextSource",
    "GraphNeighbor",
    "Index",
    "IndexClosedError",
    "RankedUnit",
    "Retrieval",
    "SearchHit",
    "Status",
    "Structure",
    "UnitNotFoundError",
    "UnitRecord",
]
