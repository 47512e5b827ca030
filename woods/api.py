"""The Python API: `woods.Index`, one warm, thread-safe handle on a published index, and
`build_index`, the one way an index is built.

Why: the library answers every question; the CLI (`woods …`) and the MCP server (`woods mcp`) are
thin renderers over it, so the same question gets the same answer on every interface — the same
ranked hits and scores, the same resolve outcome, the same graph rows under the same field names.
An assistant backend (the MCP server, an editor plugin, a notebook) asks many small questions of
one index; opening SQLite, FAISS and the query encoder per question costs more than answering it,
so `Index` opens them once and keeps them — and the embedding model — warm for its lifetime.

Guarantees:
- Every answer is a frozen dataclass (`SearchResult` of `SearchHit`s, `Retrieval`, `UnitRecord`,
  `GraphWalk` of `GraphNeighbor`s, `RankedUnit`, `Structure`, `Status`) or the retrieval core's
  own typed value (`ResolveOutcome`); each has `to_dict()` with JSON-ready values, and those dicts
  are exactly what `woods … --json` and the MCP tools emit.
- Results from files that changed on disk since indexing are marked `stale` (search hits, the
  resolved unit), with one warning naming them.
- Concurrent readers are safe: the stores are read-only (`immutable=1` SQLite, an in-memory FAISS
  index), and every lazily built piece of shared state (the retrievers' pipelines and the FAISS store
  on their first query, the query embedder, the resolve searcher and name index, the PageRank
  table) is built once, under a lock, however many threads ask first.
- One question sees one generation: each call pins the generation that was current when it
  started. `update()` publishes a new generation and switches the handle to it; calls already
  running finish on the old one, which is closed when the last of them returns. Never a mix.
- Reading never writes: only `build_index` and `update()` write, through the index builder and its
  store lock.
- The repository a handle was given is the repository: files are compared and re-indexed there,
  never in the directory a copied or moved index was first built from (which it names in a warning
  until the next index re-roots it).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from woods.errors import AmbiguousIdentifierError, IndexClosedError, InputError, UnitNotFoundError
from woods.limits import (
    DEFAULT_CONTEXT_BUDGET,
    DEFAULT_GRAPH_DEPTH,
    DEFAULT_LOCK_WAIT_SECONDS,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_PAGERANK_LIMIT,
    DEFAULT_PROFILE,
    DEFAULT_SEARCH_LIMIT,
    MAX_CONTEXT_BUDGET,
    MAX_GRAPH_DEPTH,
    MAX_LIST_LIMIT,
    MAX_SEARCH_LIMIT,
    RESOLVE_DEFAULT_LIMIT,
)
from woods.store.identity import public_identifier, strip_chunk

if TYPE_CHECKING:
    import numpy as np

    from woods.diagram import Diagram
    from woods.embedding.provider import EmbeddingProvider, QueryEmbedder
    from woods.evaluate.runner import EvaluationReport
    from woods.filters import FileFilter
    from woods.freshness import Changes
    from woods.indexing import IndexSummary, Progress
    from woods.resolve import NameTable, ResolveOutcome, Searcher
    from woods.retrieval.candidates import (
        AppliedScope,
        Classification,
        RankedEntry,
        RetrievalResult,
        RetrievalTrace,
        SourceAttribution,
        TypeRankEntry,
    )
    from woods.retrieval.code_search import CodeSearchConfig
    from woods.retrieval.localize import Localization, LocalizedFile, LocalizedUnit
    from woods.retrieval.retriever import Retriever
    from woods.snippets import SnippetLine
    from woods.store.base import Record
    from woods.store.index import IndexStores
    from woods.store.metadata import SQLiteMetadataStore
    from woods.store.postgres import PostgresMetadataStore, PostgresStores

# Kept under their old names for callers of this module; the values live in woods.limits.
DEFAULT_RETRIEVE_BUDGET = DEFAULT_CONTEXT_BUDGET
STRUCTURE_DETAILS = ("summary", "full")
# How `search` reads its query: decide by its shape, a question, or an issue text (woods.localize).
READ_AS = ("auto", "query", "issue")
GRAPH_DIRECTIONS = ("dependencies", "dependents")
# Query vectors kept per Index: an assistant often asks the same text twice in a row (search, then
# codebase_retrieve; resolve's search leg), and one embedding costs far more than the rest of a
# warm query. 256 vectors of 384 floats is about 400 KB.
QUERY_VECTOR_CACHE_SIZE = 256


# -- result types --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked search result: the unit's public identifier, its storage key and where it lives.

    `key` is the unit's storage key (what `lookup` takes); `chunk` is the embedding id when a chunk
    of a long unit ranked (`<key>#chunk_N`), else None. `source` is the representative strategy,
    `sources` every strategy that found it (vector, keyword, graph, direct, exact, lexical, …).
    `stale` is True when the unit's file changed on disk since indexing. `repo` names the
    repository of a PostgreSQL store the unit belongs to (None for a `.woods` directory).
    `snippet` holds the one to three lines of the unit that match the query best, numbered as in
    the file, with the spans of the query's words (`woods.snippets`); `line` is the line a
    `path:line` reference points at (the best-matching one, else the unit's first line).
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
    source: str = ""
    chunk: str | None = None
    stale: bool = False
    repo: str | None = None
    # Why an issue localisation put the unit here (the frame, name, message … that matched).
    evidence: tuple[str, ...] = ()
    snippet: tuple[SnippetLine, ...] = ()

    @property
    def line(self) -> int | None:
        from woods.snippets import best_line

        return best_line(self.snippet) or self.line_start

    @classmethod
    def from_entry(cls, entry: RankedEntry) -> SearchHit:
        key = strip_chunk(entry.key)
        return cls(
            identifier=entry.identifier,
            key=key,
            type=entry.type,
            score=float(entry.score),
            file_path=entry.file_path,
            line_start=entry.line_start,
            line_end=entry.line_end,
            sources=tuple(entry.sources),
            matched_fields=entry.matched_fields,
            source=entry.source,
            chunk=entry.key if entry.key != key else None,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "identifier": self.identifier,
            "key": self.key,
            "chunk": self.chunk,
            "type": self.type,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "score": self.score,
            "source": self.source,
            "sources": list(self.sources),
            "snippet": [line.to_dict() for line in self.snippet],
        }
        if self.matched_fields is not None:
            data["matched_fields"] = list(self.matched_fields)
        if self.stale:
            data["stale"] = True
        if self.repo is not None:
            data["repo"] = self.repo
        if self.evidence:
            data["evidence"] = list(self.evidence)
        return data


@dataclass(frozen=True, slots=True)
class ContextSource:
    """A unit whose text is in an assembled context, in context order.

    `truncated` is True when its block was cut to fit the budget; `matched_fields` are the fields
    a lexical search matched (None otherwise).
    """

    identifier: str
    type: str | None
    score: float
    file_path: str | None
    truncated: bool = False
    matched_fields: tuple[str, ...] | None = None

    @classmethod
    def from_attribution(cls, source: SourceAttribution) -> ContextSource:
        return cls(
            source.identifier, source.type, float(source.score), source.file_path, bool(source.truncated),
            source.matched_fields,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "identifier": self.identifier,
            "type": self.type,
            "score": self.score,
            "file_path": self.file_path,
            "truncated": self.truncated,
        }
        if self.matched_fields is not None:
            data["matched_fields"] = list(self.matched_fields)
        return data


@dataclass(frozen=True, slots=True)
class SearchResult(Sequence[SearchHit]):
    """The answer to a search: the ranked hits — this object *is* that sequence (iterate it, take
    `len`, index it) — plus everything an interface prints about how they were found.

    Why both: `woods search` shows the strategy, classification, trace, warnings and the assembled
    context next to the list; keeping them on the result means the CLI, the MCP server and Python
    callers read one answer instead of re-running pipeline stages. `warnings` includes the
    staleness warning when hits come from files changed since indexing. `to_dict()` is the JSON
    object `woods search --json` prints (without `schema_version`). Equality ignores the trace
    (it carries timings).
    """

    query: str
    hits: tuple[SearchHit, ...]
    mode: str
    strategy: str
    budget: int
    tokens_used: int
    context: str = field(repr=False)
    sources: tuple[ContextSource, ...]
    classification: Classification
    type_rank_context: Mapping[str, TypeRankEntry] | None
    applied_scope: AppliedScope | None
    warnings: tuple[str, ...]
    trace: RetrievalTrace = field(compare=False)
    result: RetrievalResult = field(repr=False, compare=False)
    # Set when the query was read as an issue text (a trace, a log, a bug report): its files with
    # the evidence behind them (`Index.localize`); the hits are then its units.
    localization: Localization | None = None

    @overload
    def __getitem__(self, index: int) -> SearchHit: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[SearchHit, ...]: ...

    def __getitem__(self, index: int | slice) -> SearchHit | tuple[SearchHit, ...]:
        return self.hits[index]

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.hits)

    def to_dict(self, *, context: bool = True) -> dict[str, Any]:
        """The search as JSON; `context=False` leaves the assembled context out."""
        data: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "strategy": self.strategy,
            "budget": self.budget,
            "tokens_used": self.tokens_used,
        }
        if context:
            data["context"] = self.context
        data.update(
            {
                "sources": [s.to_dict() for s in self.sources],
                "results": [h.to_dict() for h in self.hits],
                "classification": self.classification.to_dict(),
                "trace": self.trace.to_dict(),
                "type_rank_context": (
                    None
                    if self.type_rank_context is None
                    else {t: e.to_dict() for t, e in self.type_rank_context.items()}
                ),
                "applied_scope": None if self.applied_scope is None else self.applied_scope.to_dict(),
                "warnings": list(self.warnings),
            }
        )
        if self.localization is not None:
            data["localization"] = self.localization.to_dict()
        return data


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
    result: RetrievalResult = field(repr=False, compare=False)

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
class LocalizeResult:
    """Where an issue text points: files (best first) with their units and the evidence behind
    each (`Index.localize`, the MCP `localize` tool, `woods search --as issue`). `found` counts
    what was read out of the text by kind; `terms` are the words the search leg asked with.
    `to_dict()` is the JSON the interfaces emit."""

    query: str
    files: tuple[LocalizedFile, ...]
    units: tuple[LocalizedUnit, ...]
    found: dict[str, int]
    terms: tuple[str, ...]
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query, "files": [f.to_dict() for f in self.files], "found": dict(self.found),
            "terms": list(self.terms), "warnings": list(self.warnings),
        }


@dataclass(frozen=True, slots=True)
class UnitRecord:
    """One unit as stored: identity, place, text and the dependencies extraction recorded.

    `source_code` is None when the lookup asked for no source (and `to_dict()` then leaves it
    out). `dependencies` are `{"target", "via", "type"}` dicts in extraction order; `dependents`
    `{"identifier", "type"}`. `source_hash` is the SHA-256 of the source.
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
    source_hash: str | None = None

    @classmethod
    def from_record(cls, record: Record, include_source: bool = True) -> UnitRecord:
        def text(name: str) -> str | None:
            value = record.get(name)
            return None if value is None else str(value)

        def number(name: str) -> int | None:
            value = record.get(name)
            return int(value) if isinstance(value, int | float | str) else None

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
            source_hash=text("source_hash"),
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
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
            "source_hash": self.source_hash,
            "dependencies": [dict(d) for d in self.dependencies],
            "dependents": [dict(d) for d in self.dependents],
            "metadata": dict(self.metadata),
        }
        if self.source_code is None:
            del data["source_code"]
        return data


@dataclass(frozen=True, slots=True)
class GraphNeighbor:
    """A node reached by a dependency traversal: how (`via`) and how far (`depth`, 1 = direct).

    `indexed` is False for names the code refers to but the index holds no unit for (a gem's
    class, a stdlib module); `types` lists the unit types under that identifier, sorted; the
    location is that of its first unit by (file_path, line_start, key).
    """

    identifier: str
    via: str
    depth: int
    indexed: bool
    types: tuple[str, ...] = ()
    file_path: str | None = None
    line_start: int | None = None
    line_end: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "identifier": self.identifier,
            "via": self.via,
            "depth": self.depth,
            "indexed": self.indexed,
            "types": list(self.types),
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
        }


@dataclass(frozen=True, slots=True)
class GraphWalk:
    """A breadth-first walk of the dependency graph from `identifier` (the public identifier the
    walk started at), in `direction` ("dependencies" or "dependents"): each node once, in BFS
    order, neighbours sorted by (identifier, via). `via` and `types` echo the filters applied."""

    identifier: str
    direction: str
    depth: int
    via: str | tuple[str, ...] | None
    types: tuple[str, ...] | None
    neighbors: tuple[GraphNeighbor, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "identifier": self.identifier,
            "direction": self.direction,
            "depth": self.depth,
            "via": list(self.via) if isinstance(self.via, tuple) else self.via,
            "types": None if self.types is None else list(self.types),
            "total": len(self.neighbors),
            "results": [n.to_dict() for n in self.neighbors],
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
    """What the index holds: counts by type, language and edge kind, the most central units (and,
    in full detail, every file). Every mapping is keyed in name order."""

    generation: str
    root: str | None
    created_at: str | None
    embedder: dict[str, Any]
    counts: dict[str, int]
    units_by_type: dict[str, int]
    files_by_language: dict[str, int]
    edges_by_via: dict[str, int]
    files: tuple[dict[str, Any], ...] = ()
    top_pagerank: tuple[RankedUnit, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "generation": self.generation,
            "root": self.root,
            "created_at": self.created_at,
            "embedder": dict(self.embedder),
            "counts": dict(self.counts),
            "units_by_type": dict(self.units_by_type),
            "files_by_language": dict(self.files_by_language),
            "edges_by_via": dict(self.edges_by_via),
            "top_pagerank": [u.to_dict() for u in self.top_pagerank],
        }
        if self.files:
            data["files"] = [dict(f) for f in self.files]
        return data


@dataclass(frozen=True, slots=True)
class Status:
    """Where the index is, what built it and what it holds (units by type, files by language,
    discovery skips by reason, the whole manifest), and which files changed on disk since."""

    store: str
    generation: str
    root: str | None
    created_at: str | None
    embedder: dict[str, Any]
    counts: dict[str, int]
    changes: Changes
    manifest: dict[str, Any] = field(default_factory=dict)
    units_by_type: dict[str, int] = field(default_factory=dict)
    files_by_language: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    repo: str | None = None
    # The vector state (woods.indexing.resume.vector_state): `state` complete / embedding /
    # interrupted / pending, `embedded` and `total` chunks when known.
    vectors: dict[str, Any] = field(default_factory=dict)
    # The root the manifest recorded, when it differs from `root` (a copied or moved repository).
    recorded_root: str | None = None
    # What the user must know about this index: a moved root, a background phase 2 that stopped
    # or failed (the handle's own thread has no caller to raise to).
    warnings: tuple[str, ...] = ()
    # `--glob` / `--lang` as applied, with the files and units they select (None: no filter; then
    # `units_by_type`, `files_by_language` and `changes` cover the whole index, else those files).
    filter: dict[str, Any] | None = None

    @property
    def fresh(self) -> bool:
        return bool(self.changes.fresh)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {} if self.repo is None else {"repo": self.repo}
        return data | {
            "store": self.store,
            "generation": self.generation,
            "root": self.root,
            "created_at": self.created_at,
            "embedder": dict(self.embedder),
            "counts": dict(self.counts),
            "units_by_type": dict(self.units_by_type),
            "files_by_language": dict(self.files_by_language),
            "skipped": dict(self.skipped),
            "manifest": dict(self.manifest),
            "fresh": self.fresh,
            "changes": self.changes.to_dict(),
            "vectors": dict(self.vectors),
            "recorded_root": self.recorded_root,
            "warnings": list(self.warnings),
        } | ({} if self.filter is None else {"filter": dict(self.filter)})


# -- building ------------------------------------------------------------------------------------


def build_index(
    path: str | os.PathLike[str],
    *,
    store: str | os.PathLike[str] | None = None,
    repo: str | None = None,
    full: bool = False,
    allow_purge: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    wait: float = DEFAULT_LOCK_WAIT_SECONDS,
    progress: Progress | None = None,
    workers: int | None = None,
    provider_factory: Callable[[], EmbeddingProvider] | None = None,
    contextual: bool | None = None,
    contextual_factory: Callable[[], EmbeddingProvider] | None = None,
    vectors: bool = True,
    should_stop: Callable[[], bool] | None = None,
    on_searchable: Callable[[IndexSummary], None] | None = None,
) -> IndexSummary:
    """Index the repository at `path` into `store` (default `path/.woods`) and publish it.

    Phase 1 publishes the units with the base embedder's vectors (`provider_factory`, default
    woods's static model) and calls `on_searchable(summary)`: searchable, hybrid, in seconds.
    Phase 2 adds contextual vectors (MiniLM) and switches the index to them: `contextual` True asks
    for it (the `contextual` extra must be installed), False leaves it out, None (default) runs it
    where the extra is installed and the base embedder is the default one
    (`woods.embedding.select.contextual_factory`); `contextual_factory` supplies another
    contextual embedder (tests). `vectors=False` leaves phase 2 for later (a later run, or
    `Index.update(background=True)`); `should_stop()` is asked between its batches
    (EmbeddingCancelled; finished batches are kept for the next run).

    `store` may be a PostgreSQL URL (`postgresql://…`): the repository is then published there as
    the collection `repo` (default: the name of the repository's directory).

    Incremental unless `full`: unchanged files are not parsed again and unchanged code is not
    embedded again. `allow_purge` lets a run remove over 30% of the indexed units. `wait` is how
    long to wait for another indexer's lock. `workers` parse processes (None: one per CPU, at most
    4; a script passing more than 1 needs the `if __name__ == "__main__":` guard).
    This is what `woods index`, the MCP server's `reindex` and `Index.update()` run.
    """
    from woods.embedding.select import contextual_factory as choose_contextual
    from woods.embedding.select import index_provider
    from woods.indexing import index_repository, parse_workers
    from woods.store.backend import StoreTarget, is_server_url, server_target
    from woods.store.index import store_dir_for

    root = Path(path)
    if not root.exists():
        raise InputError(f"path not found: {root}")
    if not root.is_dir():
        raise InputError(f"not a directory: {root}; pass a repository directory")
    max_file_bytes = _validate_positive("max_file_bytes", max_file_bytes)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
        raise InputError(f"wait must be a number of seconds >= 0, got {wait!r}")
    count = parse_workers() if workers is None else _validate_positive("workers", workers)
    factory = provider_factory if provider_factory is not None else index_provider
    second = contextual_factory
    if second is None:
        second = choose_contextual(contextual, default_base=provider_factory is None)
    elif contextual is False:
        raise InputError("contextual=False and a contextual_factory contradict each other; pass one")
    target: Path | StoreTarget
    if is_server_url(store):
        target = server_target(str(store), repo if repo is not None else root.resolve().name)
    elif repo is not None:
        raise InputError("--repo names a repository of a PostgreSQL store; pass --store postgresql://…")
    else:
        target = store_dir_for(root, None if store is None else Path(store))
    notes = ignore_store_in_git(target) if isinstance(target, Path) else []
    summary = index_repository(
        root, target, factory, contextual_factory=second, max_file_bytes=max_file_bytes, progress=progress,
        wait=float(wait),
        full=full, allow_purge=allow_purge, workers=count, vectors=vectors, should_stop=should_stop,
        on_searchable=on_searchable,
    )
    empty = empty_index_warning(root, summary)
    summary.warnings.extend([*notes, *([empty] if empty else [])])
    return summary


# What `.woods/.gitignore` holds: everything in the store is woods' own output, never a commit.
STORE_GITIGNORE = "# woods' index: generated, never committed\n*\n"


def ignore_store_in_git(store_dir: Path) -> list[str]:
    """Make git ignore the store: `STORE/.gitignore` holding `*` (written once, left alone after).
    A store woods cannot write is reported by the build itself; here it is only a warning."""
    marker = store_dir / ".gitignore"
    try:
        store_dir.mkdir(parents=True, exist_ok=True)
        if not marker.exists():
            marker.write_text(STORE_GITIGNORE, encoding="utf-8")
    except OSError as exc:
        return [f"could not write {marker}: {exc.strerror or exc}; add {store_dir.name}/ to .gitignore yourself"]
    return []


def empty_index_warning(root: Path, summary: IndexSummary) -> str | None:
    """Why an index holds no file, or None when it holds some: an empty directory, or what every
    entry was skipped for (unsupported, gitignored, binary …, largest first)."""
    if summary.files:
        return None
    if not summary.skipped:
        return f"indexed nothing: {root} holds no files"
    total = sum(summary.skipped.values())
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(summary.skipped.items(),
                                                                          key=lambda item: (-item[1], item[0])))
    return (
        f"indexed nothing: no source or document file woods reads under {root}; all {total} entries were "
        f"skipped ({reasons}) — docs/cli.md#woods-index says what each reason means"
    )


# -- generations ---------------------------------------------------------------------------------


class _CachingEmbedder:
    """A query embedder with a thread-safe LRU of query text → vector (read-only arrays)."""

    def __init__(self, embedder: QueryEmbedder, size: int = QUERY_VECTOR_CACHE_SIZE) -> None:
        self._embedder = embedder
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, text: str) -> np.ndarray:
        with self._lock:
            cached = self._vectors.get(text)
            if cached is not None:
                self._vectors.move_to_end(text)
                return cached
        import numpy as np  # loaded with the first query vector, never by keyword-only use

        vector = np.array(self._embedder.embed(text), copy=True)
        vector.flags.writeable = False
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
        return vector


class _Generation:
    """One open generation and the warm state built on it; closed when retired and unused."""

    def __init__(
        self,
        stores: IndexStores | PostgresStores,
        embedder_factory: Callable[[], QueryEmbedder],
        mode: str,
        profile: str,
        ranking: CodeSearchConfig | None = None,
        root: Path | None = None,
    ) -> None:
        self.stores = stores
        # The repository this generation's files are compared with and re-indexed from: the root
        # the handle was given (woods.freshness.index_root), never blindly the recorded one.
        self.root = root
        self.ranking = ranking
        self.embedder_factory = embedder_factory
        self.mode = mode
        self.users = 0
        self.retired = False
        self.lock = threading.Lock()  # guards the lazily built state below
        self._retrievers: dict[tuple[str, str], Retriever] = {}
        self._searcher: Searcher | None = None
        self._names: NameTable | None = None
        self._ranked: tuple[RankedUnit, ...] | None = None
        self.profile = profile
        self.retriever(mode, profile)  # an unknown mode or profile fails when the index is opened

    def retriever(self, mode: str, profile: str) -> Retriever:
        """The retriever of one mode (semantic or lexical) and ranking profile, built on first use."""
        with self.lock:
            retriever = self._retrievers.get((mode, profile))
            if retriever is None:
                from woods.retrieval.retriever import Retriever

                retriever = Retriever(
                    self.stores, self.embedder_factory, mode=mode, profile=profile, code_config=self.ranking
                )
                self._retrievers[(mode, profile)] = retriever
            return retriever

    def retrieve(
        self,
        query: str,
        *,
        mode: str | None = None,
        budget: int = DEFAULT_CONTEXT_BUDGET,
        types: Sequence[str] | None = None,
        exclude_types: Sequence[str] | None = None,
        strategy: str | None = None,
        path_prefixes: Sequence[str] | None = None,
        limit: int = DEFAULT_SEARCH_LIMIT,
        profile: str | None = None,
        files: FileFilter | None = None,
        context_limit: int | None = None,
    ) -> RetrievalResult:
        """One retrieval; concurrent calls run side by side (what a retriever builds on first use
        is built once, under its own lock: woods.lazy)."""
        retriever = self.retriever(self.mode if mode is None else mode, self.profile if profile is None else profile)
        return retriever.retrieve(
            query, budget=budget, types=types, exclude_types=exclude_types, strategy=strategy,
            path_prefixes=path_prefixes, limit=limit, files=files, context_limit=context_limit,
        )

    def searcher(self) -> Searcher:
        with self.lock:
            if self._searcher is None:
                from woods.resolve import make_searcher

                self._searcher = make_searcher(self.stores, self.embedder_factory)
            return self._searcher

    def names(self) -> NameTable:
        """Every unit by name (resolve's exact stages), built once per generation and dropped with
        it: nothing of a closed handle stays in the process."""
        with self.lock:
            if self._names is None:
                from woods.resolve import NameTable

                self._names = NameTable.from_metadata(self.stores.metadata)
            return self._names

    def ranked_units(self) -> tuple[RankedUnit, ...]:
        """Every (identifier, type) with its PageRank (the highest of the identifier's typed
        variants, 6 decimals), by (−score, identifier, type); built once."""
        with self.lock:
            if self._ranked is None:
                metadata = self.stores.metadata
                rows = metadata.top_pagerank(metadata.count())
                best: dict[str, float] = {}
                for identifier, _unit_type, score in rows:
                    best[identifier] = max(score, best.get(identifier, score))
                pairs = sorted({(identifier, unit_type) for identifier, unit_type, _score in rows})
                units = [RankedUnit(ident, unit_type, round(best[ident], 6)) for ident, unit_type in pairs]
                self._ranked = tuple(sorted(units, key=lambda u: (-u.score, u.identifier, u.type)))
            return self._ranked


def _looks_like_issue(text: object) -> bool:
    """Whether a query is a pasted issue, log or trace (woods.retrieval.evidence.looks_like_issue);
    anything that is not text is left to the search's own validation."""
    if not isinstance(text, str) or not might_be_issue(text):
        return False
    from woods.retrieval.evidence import looks_like_issue

    return looks_like_issue(text)


def might_be_issue(text: str) -> bool:
    """The cheap test before the evidence reader is imported (its regular expressions cost a cold
    search 60+ ms): a text reads as an issue only when it has several lines, a `:` (an error line,
    a frame, a test id) or a test runner's FAIL mark — a one-line question has none of them
    (tests/test_localize.py checks that every text this rejects, `looks_like_issue` rejects too)."""
    return "\n" in text or ":" in text or "FAIL" in text


def _default_base() -> EmbeddingProvider:
    from woods.embedding.select import index_provider

    return index_provider()


def _embedders_of(
    manifest: Mapping[str, Any],
) -> tuple[Callable[[], EmbeddingProvider] | None, Callable[[], EmbeddingProvider] | None]:
    """(base, contextual) provider factories that rebuild an index as it is: the base embedder is
    the one phase 1 used (a phase-2 generation records it as `vectors.base_embedder`; None means
    the default, also for an index of an earlier woods whose only vectors were MiniLM's); the
    contextual one is the embedder of a phase-2 generation, else the automatic choice
    (`woods.embedding.select.contextual_factory`) for an index on the default base."""
    from woods.embedding.select import (
        MINILM_MARKER,
        contextual_factory,
        is_default_base,
        provider_factory_for,
    )

    embedder = dict(manifest.get("embedder") or {})
    vectors = manifest.get("vectors") or {}
    recorded_base = vectors.get("base_embedder") if isinstance(vectors, Mapping) else None
    if recorded_base is not None:
        base_description = dict(recorded_base)
        second = provider_factory_for(embedder)
    else:
        base_description = {} if MINILM_MARKER in str(embedder.get("name", "")) else embedder
        second = None
    default = not base_description or is_default_base(base_description)
    base = None if default else provider_factory_for(base_description)
    if second is None:
        second = contextual_factory(None, default_base=default)
    return base, second


def _validate_positive(name: str, value: object, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    if maximum is not None and value > maximum:
        raise InputError(f"{name} must be at most {maximum}, got {value}")
    return value


def _validate_identifier(identifier: object) -> str:
    if not isinstance(identifier, str) or not identifier.strip():
        raise InputError(f"identifier must be a non-blank string, got {identifier!r}")
    return identifier


def _validate_names(name: str, values: object) -> tuple[str, ...] | None:
    """A list of non-blank strings (unit types, edge kinds), or None."""
    if values is None:
        return None
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, Sequence | set | frozenset):
        raise InputError(f"{name} must be a list of names, got {values!r}")
    checked = tuple(values)
    if not all(isinstance(v, str) and v.strip() for v in checked):
        raise InputError(f"{name} must be a list of non-blank names, got {values!r}")
    return checked


def _validate_via(via: object) -> str | tuple[str, ...] | None:
    """One edge kind or a list of them, as given (a string stays a string)."""
    if via is None:
        return None
    if isinstance(via, str):
        if not via.strip():
            raise InputError("via must be an edge kind (e.g. calls) or a list of them, got ''")
        return via
    try:
        return _validate_names("via", via)
    except InputError:
        raise InputError(f"via must be an edge kind (e.g. calls) or a list of them, got {via!r}") from None


def _records_named(metadata: SQLiteMetadataStore | PostgresMetadataStore, identifier: str) -> list[Record]:
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


def _repo_name(stores: IndexStores | PostgresStores) -> str | None:
    """The one repository a PostgreSQL view reads (None: a `.woods` directory, or several)."""
    return getattr(stores, "repo", None)


def _with_repo(stores: IndexStores | PostgresStores, hit: SearchHit) -> SearchHit:
    """The hit with the repository it comes from, for a PostgreSQL store."""
    repo_of = getattr(stores, "repo_of", None)
    return replace(hit, repo=repo_of(hit.key)) if callable(repo_of) else hit


def _file_filter(globs: Sequence[str] | None, langs: Sequence[str] | None) -> FileFilter | None:
    """`woods.filters.file_filter`, imported only by a question that filters (None otherwise)."""
    if globs is None and langs is None:
        return None
    from woods.filters import file_filter

    return file_filter(globs, langs)


def _with_snippets(
    metadata: SQLiteMetadataStore | PostgresMetadataStore, query: str, hits: list[SearchHit]
) -> list[SearchHit]:
    """The hits with their best-matching lines (one batch read of the units' stored text)."""
    from woods.snippets import snippet, snippet_terms

    if not hits:
        return hits
    records = metadata.find_batch(h.key for h in hits)
    terms = snippet_terms(query)
    shown = []
    for hit in hits:
        record = records.get(hit.key)
        source = None if record is None else record.get("source_code")
        start = hit.line_start if hit.line_start is not None else (1 if record is None else record.get("line_start", 1))
        lines = snippet(str(source), start, terms) if isinstance(source, str) and source else ()
        shown.append(replace(hit, snippet=lines))
    return shown


def _missing_name_warnings(
    stores: IndexStores | PostgresStores, query: str, names: Callable[[], NameTable]
) -> tuple[str, ...]:
    """`no unit named …; closest: …` for a query that is one name (a symbol) no unit has."""
    from woods.retrieval.query_analysis import analyze

    analysis = analyze(query)
    if not analysis.is_symbol or not analysis.names:
        return ()
    if stores.metadata.find_by_name(analysis.names[0], limit=1):
        return ()  # the common case, answered without loading resolve's name index
    from woods.resolve import missing_name_warning

    warning = missing_name_warning(stores, analysis.names[0], names)
    return () if warning is None else (warning,)


def _check_unit_types(stores: IndexStores | PostgresStores, types: Sequence[str] | None) -> None:
    """InputError naming the valid types when a requested unit type is unknown to woods and absent
    from this index (a type woods knows but the index lacks is a legitimate empty answer)."""
    from woods.retrieval.retriever import KNOWN_UNIT_TYPES

    present = stores.metadata.type_counts()
    for unit_type in types or ():
        if unit_type not in KNOWN_UNIT_TYPES and unit_type not in present:
            from woods.suggest import unknown_type_message

            raise InputError(unknown_type_message(unit_type, present))


def _filtered_contents(
    stores: IndexStores | PostgresStores, files: FileFilter, changes: Changes, names: NameTable
) -> tuple[Changes, dict[str, int], dict[str, int], dict[str, Any]]:
    """What `status` shows under a file filter: the changes, units by type and files by language
    of the selected files, and the filter with how many files and units it selected."""
    from woods.freshness import Changes as ChangesType

    rows = stores.metadata.files()
    language_of = {row.path: row.language for row in rows}
    chosen = {row.path for row in rows if files.matches(row.path, row.language)}
    by_language: dict[str, int] = {}
    for row in rows:
        if row.path in chosen:
            by_language[row.language] = by_language.get(row.language, 0) + 1
    by_type: dict[str, int] = {}
    units = 0
    for entries in names.by_identifier.values():
        for entry in entries:
            if entry.file_path in chosen:
                by_type[entry.type] = by_type.get(entry.type, 0) + 1
                units += 1

    def keep(paths: Sequence[str]) -> list[str]:
        return [p for p in paths if files.matches(p, language_of.get(p))]

    narrowed = ChangesType(keep(changes.changed), keep(changes.added), keep(changes.deleted), changes.root_missing)
    selected = {**files.to_dict(), "files": len(chosen), "units": units}
    return narrowed, dict(sorted(by_type.items())), dict(sorted(by_language.items())), selected


# Enclosing units climbed to find a unit's first-line indentation (Ruby module > class > method …).
MAX_INDENT_PARENTS = 8


def _indent_in_parents(metadata: SQLiteMetadataStore | PostgresMetadataStore, unit: UnitRecord) -> str | None:
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


# -- the index -----------------------------------------------------------------------------------


class Index:
    """A warm, thread-safe handle on one woods index (see the module docstring for guarantees).

    Open with `Index.open(path)` (the repository; the index is `path/.woods`),
    `Index.open(store=dir)` or `Index("postgresql://…", repo=NAME)` (a PostgreSQL store: one
    repository, or all of them when `repo` is None); use as a context manager or call `close()`.
    `mode` is the default retrieval mode of `search` (semantic or lexical); `profile` the default
    ranking profile (`code`, woods' code search; `ruby`, the Ruby gem woods 2.0's pipeline);
    `exact` makes a PostgreSQL store's vector searches exact scans (HNSW otherwise, above
    `woods.store.postgres.EXACT_SEARCH_MAX_CHUNKS` chunks). `ranking` overrides the code profile's
    weights (`woods.retrieval.code_search.CodeSearchConfig`; for measuring a change, see
    bench/semble_eval.py) — the defaults are the measured ones.
    """

    def __init__(
        self,
        store_dir: str | os.PathLike[str],
        *,
        mode: str = "semantic",
        profile: str = DEFAULT_PROFILE,
        repo: str | None = None,
        exact: bool = False,
        ranking: CodeSearchConfig | None = None,
        one_shot: bool = False,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        from woods.store.backend import is_server_url

        self.store_dir: str | Path = str(store_dir) if is_server_url(store_dir) else Path(store_dir)
        # The repository directory this handle was given (None: the store's own — see
        # woods.freshness.index_root). Files are read and re-indexed there and nowhere else.
        self.given_root = None if root is None else Path(root)
        self.repo = repo
        self.exact = exact
        self.mode = mode
        self.profile = profile
        self.ranking = ranking
        # A handle for one question (the CLI) loads the query encoder that starts fastest; a
        # long-lived one (MCP, the API) the one that answers fastest (`query_embedder`).
        self.one_shot = one_shot
        self._lock = threading.Lock()  # guards _current, users counts and the embedder cache
        self._update_lock = threading.Lock()  # one update at a time per handle
        self._embedders: dict[tuple[object, ...], _CachingEmbedder] = {}
        self._closed = False
        # Phase 2 running in the background (update(background=True)), how to stop it, and what
        # it reported (a cancelled or failed phase 2 is a recorded warning, never lost silently).
        self._background: threading.Thread | None = None
        self._background_stop = threading.Event()
        self._background_warnings: list[str] = []
        self._current = self._open_generation()

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        store: str | os.PathLike[str] | None = None,
        mode: str = "semantic",
        profile: str = DEFAULT_PROFILE,
        repo: str | None = None,
        exact: bool = False,
        ranking: CodeSearchConfig | None = None,
    ) -> Index:
        """Open the index of repository `path` (default: cwd), or the index directory or
        PostgreSQL URL `store` (`repo` picks one repository of a PostgreSQL store)."""
        from woods.store.backend import is_server_url
        from woods.store.index import store_dir_for

        if path is not None and store is not None:
            raise InputError("pass either path or store, not both")
        root = Path(path) if path is not None else None
        if root is not None and not root.exists():
            raise InputError(f"path not found: {root}")
        if is_server_url(store):
            return cls(str(store), mode=mode, profile=profile, repo=repo, exact=exact, ranking=ranking)
        location = store_dir_for(root, Path(store) if store is not None else None)
        return cls(location, mode=mode, profile=profile, repo=repo, exact=exact, ranking=ranking, root=root)

    # -- lifecycle -------------------------------------------------------------------------
    def _open_generation(self) -> _Generation:
        from woods.freshness import index_root
        from woods.store.backend import open_stores

        stores = open_stores(self.store_dir, self.repo, exact=self.exact)
        description = dict(stores.manifest.embedder)
        try:
            root = index_root(self.store_dir, self.given_root, stores.manifest.root)
            return _Generation(
                stores, lambda: self._embedder_for(description), self.mode, self.profile, self.ranking, root
            )
        except BaseException:
            stores.close()
            raise

    def _embedder_for(self, description: Mapping[str, Any]) -> QueryEmbedder:
        """The query embedder for an embedder description, created once and kept across updates."""
        from woods.embedding.select import query_embedder

        cache_key = (description.get("name"), description.get("dimension"), description.get("fingerprint"))
        with self._lock:
            embedder = self._embedders.get(cache_key)
            if embedder is None:
                embedder = _CachingEmbedder(query_embedder(dict(description), one_shot=self.one_shot))
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
        """Close the index (idempotent). Calls still running finish first; a background phase 2
        stops after its current batch (its finished batches are kept for the next run)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            generation = self._current
        with self._update_lock:  # an update under way finishes first and starts no new thread
            self._stop_background()
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
        *,
        path_prefixes: Sequence[str] | None = None,
        mode: str | None = None,
        budget: int = DEFAULT_CONTEXT_BUDGET,
        profile: str | None = None,
        globs: Sequence[str] | None = None,
        langs: Sequence[str] | None = None,
        read_as: str = "auto",
    ) -> SearchResult:
        """Ranked units for `query` (best first), with how they were found and the assembled context.

        `strategy` forces one of vector, keyword, graph, direct, hybrid (None or "auto" classifies
        the query); `types` keeps only those unit types, `exclude_types` drops some;
        `path_prefixes` keeps units under those repository-relative paths (whole segments);
        `globs` keeps units of files matching gitignore-style patterns (`!` excludes) and `langs`
        of those languages (names or extensions: `python`, `py`; `woods.filters`);
        `mode` is semantic or lexical (the lexical index alone, no model; default: the index's
        mode); `budget` sizes the assembled context in tokens; the context holds the first `limit`
        ranked units at most, so `sources` never names a unit `results` lacks; `profile` is the
        ranking profile, `code` or `ruby` (default: the index handle's). `globs` / `langs` keep
        units of the files they select. `read_as` is `auto` (a pasted stack trace, log or bug
        report is localised — `localize` — when no strategy, filter or Ruby profile is asked for; a
        question is searched), `query` or `issue` (forced; filters and the strategy are then not
        applied, with a warning).

        Each hit carries its best-matching lines (`snippet`). A query that is one name no unit is
        named (`zorblaxQuuxHandler`, `make_reponse`) says so first in `warnings`, with the
        closest names of the index.
        """
        from woods.freshness import root_moved_warning, stale_files, stale_warning

        limit = _validate_positive("limit", limit, MAX_SEARCH_LIMIT)
        budget = _validate_positive("budget", budget, MAX_CONTEXT_BUDGET)
        if read_as not in READ_AS:
            raise InputError(f"read_as must be one of {', '.join(READ_AS)}, got {read_as!r}")
        plain = strategy in (None, "auto") and not (types or exclude_types or path_prefixes or globs or langs) and (
            (profile or self.profile) == "code"
        )
        if read_as == "issue" or (read_as == "auto" and plain and _looks_like_issue(query)):
            ignored = () if plain else ("an issue text is localised as a whole: the strategy, filters and profile "
                                        "given were not applied",)
            return self._localized_search(query, limit=limit, budget=budget, mode=mode, warnings=ignored)
        files = _file_filter(globs, langs)
        with self._use() as gen:
            result = gen.retrieve(
                query,
                mode=mode,
                limit=limit,
                strategy=None if strategy in (None, "auto") else strategy,
                types=types,
                exclude_types=exclude_types,
                path_prefixes=path_prefixes,
                budget=budget,
                profile=profile,
                files=files,
                context_limit=limit,
            )
            hits = [_with_repo(gen.stores, SearchHit.from_entry(entry)) for entry in result.candidates]
            hits = _with_snippets(gen.stores.metadata, query, hits)
            stale = stale_files(gen.stores, gen.root, (h.file_path for h in hits if h.file_path))
            moved = root_moved_warning(gen.root, gen.stores.manifest.root)
            named = _missing_name_warnings(gen.stores, query, gen.names)
        return SearchResult(
            query=str(query),
            hits=tuple(replace(h, stale=True) if h.file_path in stale else h for h in hits),
            mode=result.mode,
            strategy=result.strategy,
            budget=int(result.budget),
            tokens_used=int(result.tokens_used),
            context=result.context,
            sources=tuple(ContextSource.from_attribution(s) for s in result.sources),
            classification=result.classification,
            type_rank_context=result.type_rank_context,
            applied_scope=result.applied_scope,
            warnings=(*named, *result.warnings, *moved, *stale_warning(stale)),
            trace=result.trace,
            result=result,
        )

    def localize(self, text: str, *, limit: int = DEFAULT_SEARCH_LIMIT, mode: str | None = None) -> LocalizeResult:
        """Which files and units a pasted issue, failing test run or stack trace points at, each
        with the evidence behind it (woods/retrieval/localize.py): frames mapped to the units at
        their lines, names, error classes, messages matched in the code, failing tests, one step
        through the dependency graph, and the code search's answer to the text's weighted words.
        `limit` files; `mode` lexical asks no model."""
        from woods.freshness import root_moved_warning

        limit = _validate_positive("limit", limit, MAX_SEARCH_LIMIT)
        with self._use() as gen:
            localized = gen.retriever(self.mode if mode is None else mode, "code").localize(text, limit=limit)
            moved = root_moved_warning(gen.root, gen.stores.manifest.root)
        found = localized.localization
        return LocalizeResult(str(text), found.files, found.units, dict(found.found), found.terms, tuple(moved))

    def _localized_search(
        self, query: str, *, limit: int, budget: int, mode: str | None, warnings: tuple[str, ...]
    ) -> SearchResult:
        """`search` for an issue text: `localize`'s units as the hits, its files in `localization`."""
        from woods.freshness import root_moved_warning, stale_files, stale_warning

        with self._use() as gen:
            localized = gen.retriever(self.mode if mode is None else mode, "code").localize(
                query, budget=budget, limit=limit
            )
            result = localized.result
            why = {u.key: u.evidence for u in localized.localization.units}
            hits = [
                replace(_with_repo(gen.stores, SearchHit.from_entry(entry)), evidence=why.get(entry.key, ()))
                for entry in result.candidates[:limit]
            ]
            stale = stale_files(gen.stores, gen.root, (h.file_path for h in hits if h.file_path))
            moved = root_moved_warning(gen.root, gen.stores.manifest.root)
        return SearchResult(
            query=str(query),
            hits=tuple(replace(h, stale=True) if h.file_path in stale else h for h in hits),
            mode=result.mode,
            strategy=result.strategy,
            budget=int(result.budget),
            tokens_used=int(result.tokens_used),
            context=result.context,
            sources=tuple(ContextSource.from_attribution(s) for s in result.sources),
            classification=result.classification,
            type_rank_context=None,
            applied_scope=None,
            warnings=(*warnings, *moved, *stale_warning(stale)),
            trace=result.trace,
            result=result,
            localization=localized.localization,
        )

    def retrieve(
        self,
        query: str,
        budget: int = DEFAULT_CONTEXT_BUDGET,
        types: Sequence[str] | None = None,
        exclude_types: Sequence[str] | None = None,
        *,
        profile: str | None = None,
        globs: Sequence[str] | None = None,
        langs: Sequence[str] | None = None,
    ) -> Retrieval:
        """The assembled, token-budgeted context for `query` (what `codebase_retrieve` returns);
        `globs` and `langs` keep the files they select, as in `search`."""
        budget = _validate_positive("budget", budget, MAX_CONTEXT_BUDGET)
        files = _file_filter(globs, langs)
        with self._use() as gen:
            result = gen.retrieve(
                query, budget=budget, types=types, exclude_types=exclude_types, profile=profile, files=files
            )
        return Retrieval(
            query=str(query),
            context=result.context,
            sources=tuple(ContextSource.from_attribution(s) for s in result.sources),
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
        limit: int = RESOLVE_DEFAULT_LIMIT,
        strict: bool = False,
        recent: Sequence[str] | None = None,
    ) -> ResolveOutcome:
        """Turn a loose reference into one unit, or say why not (`woods.resolve.ResolveOutcome`).

        `recent` lists unit ids the caller just saw, most recent first: a short name that matches
        one of them resolves to it. A resolved unit whose file changed since indexing comes back
        with `stale=True` and a warning.
        """
        from woods.freshness import root_moved_warning, stale_files, stale_warning
        from woods.resolve import resolve

        recent_ids = _validate_names("recent", recent)  # a bare string is refused, not read letter by letter
        with self._use() as gen:
            outcome = resolve(
                gen.stores, ref, type=type, limit=limit, strict=strict, recent=recent_ids, searcher=gen.searcher(),
                names=gen.names(),
            )
            stale = stale_files(gen.stores, gen.root, [outcome.file_path]) if outcome.file_path else set()
            moved = root_moved_warning(gen.root, gen.stores.manifest.root)
        if stale or moved:
            outcome = replace(
                outcome, stale=bool(stale), warnings=(*outcome.warnings, *moved, *stale_warning(stale))
            )
        return outcome

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
        units = self.lookup_all(identifier, type=type, include_source=include_source)
        if len(units) <= 1:
            return units[0] if units else None
        candidates = [
            {
                "key": u.key,
                "identifier": u.identifier,
                "type": u.type,
                "file_path": u.file_path,
                "line_start": u.line_start,
            }
            for u in units
        ]
        kinds = ", ".join(sorted({u.type for u in units}))
        raise AmbiguousIdentifierError(
            f"{identifier!r} names {len(candidates)} units ({kinds}); pass type= to choose one", candidates
        )

    def lookup_all(
        self,
        identifier: str,
        *,
        type: str | None = None,  # noqa: A002 — the unit type, as everywhere in woods
        include_source: bool = True,
    ) -> list[UnitRecord]:
        """Every unit stored under `identifier`: the one unit of a storage key, or each typed
        variant of a public identifier, ordered by (type, key); `type` keeps one type; [] when
        nothing is stored under that exact name."""
        _validate_identifier(identifier)
        with self._use() as gen:
            if type is not None:
                _check_unit_types(gen.stores, [type])
            records = _records_named(gen.stores.metadata, identifier)
        if type is not None:
            records = [r for r in records if r.get("type") == type]
        return [UnitRecord.from_record(r, include_source=include_source) for r in records]

    def traverse(
        self,
        identifier: str,
        *,
        direction: str = "dependencies",
        depth: int = DEFAULT_GRAPH_DEPTH,
        via: str | Sequence[str] | None = None,
        types: Sequence[str] | None = None,
    ) -> GraphWalk:
        """Walk the dependency graph from `identifier` breadth-first up to `depth` hops.

        `direction` is "dependencies" (what it uses) or "dependents" (what uses it); `via` keeps
        only edges of that kind (or kinds); `types` keeps neighbours with a unit of those types.
        `identifier` may be a unit (identifier or storage key) or a graph node the index holds no
        unit for (a superclass from a gem); anything else raises UnitNotFoundError.
        """
        _validate_identifier(identifier)
        if direction not in GRAPH_DIRECTIONS:
            raise InputError(f"direction must be one of {', '.join(GRAPH_DIRECTIONS)}, got {direction!r}")
        depth = _validate_positive("depth", depth, MAX_GRAPH_DEPTH)
        kinds = _validate_via(via)
        wanted = _validate_names("types", types)
        with self._use() as gen:
            _check_unit_types(gen.stores, wanted)
            metadata, graph = gen.stores.metadata, gen.stores.graph
            records = _records_named(metadata, identifier)
            node = str(records[0]["identifier"]) if records else public_identifier(identifier)
            if not records and not metadata.find_by_identifier(node) and not graph.has_node(node):
                raise UnitNotFoundError(
                    f"{identifier!r} is not a unit or graph node of this index; resolve finds loose names"
                )
            found = graph.traverse(node, reverse=direction == "dependents", depth=depth, via=kinds)
            neighbors = [_neighbor(metadata, name, edge_via, hops) for name, edge_via, hops in found]
        if wanted:
            neighbors = [n for n in neighbors if set(wanted).intersection(n.types)]
        return GraphWalk(node, direction, depth, kinds, wanted, tuple(neighbors))

    def dependencies(
        self,
        identifier: str,
        depth: int = DEFAULT_GRAPH_DEPTH,
        via: str | Sequence[str] | None = None,
        *,
        types: Sequence[str] | None = None,
    ) -> list[GraphNeighbor]:
        """What `identifier` depends on, breadth-first up to `depth` hops (`via` keeps edge kinds)."""
        walk = self.traverse(identifier, direction="dependencies", depth=depth, via=via, types=types)
        return list(walk.neighbors)

    def dependents(
        self,
        identifier: str,
        depth: int = DEFAULT_GRAPH_DEPTH,
        via: str | Sequence[str] | None = None,
        *,
        types: Sequence[str] | None = None,
    ) -> list[GraphNeighbor]:
        """What depends on `identifier`, breadth-first up to `depth` hops."""
        walk = self.traverse(identifier, direction="dependents", depth=depth, via=via, types=types)
        return list(walk.neighbors)

    def pagerank(self, limit: int | None = DEFAULT_PAGERANK_LIMIT, types: Sequence[str] | None = None) -> list[RankedUnit]:
        """The most central units by PageRank (Ruby §1.9), optionally only of `types`; `limit=None`
        returns every unit."""
        if limit is not None:
            limit = _validate_positive("limit", limit, MAX_LIST_LIMIT)
        wanted = _validate_names("types", types)
        with self._use() as gen:
            ranked = gen.ranked_units()
        selected = [u for u in ranked if wanted is None or u.type in wanted]
        return selected if limit is None else selected[:limit]

    def display_source(self, unit: UnitRecord) -> str | None:
        """The unit's source for reading: the whole body dedented together. The stored text starts
        at the unit's first token, so its first line lost its indentation; it is read back from
        the enclosing unit's text (exact), else estimated (`woods.snippets.first_line_indent`)."""
        from woods.snippets import dedent_unit

        if unit.source_code is None:
            return None
        with self._use() as gen:
            indent = _indent_in_parents(gen.stores.metadata, unit)
        return dedent_unit(unit.source_code, indent)

    def structure_diagram(self, *, top: int = DEFAULT_PAGERANK_LIMIT) -> Diagram:
        """The repository's packages (or files, when they all fit) and the dependencies between
        them, the `top` most central (PageRank) drawn (`woods.diagram.module_diagram`)."""
        from woods.diagram import module_diagram

        top = _validate_positive("top", top, MAX_LIST_LIMIT)
        with self._use() as gen:
            entries = [e for group in gen.names().by_identifier.values() for e in group]
            pagerank = gen.stores.metadata.pagerank_scores()
            edges = [(source_key, target_key) for source_key, _s, _t, target_key, _via in gen.stores.metadata.edges()]
        return module_diagram(((e.key, e.identifier, e.file_path) for e in entries), pagerank, edges, top)

    def walk_diagram(self, walk: GraphWalk, *, limit: int = DEFAULT_PAGERANK_LIMIT) -> Diagram:
        """A graph walk (`traverse`) as a diagram: the start and its `limit - 1` nearest, most
        central neighbours, with the edges among them (`woods.diagram.walk_diagram`)."""
        from woods.diagram import walk_diagram

        limit = _validate_positive("limit", limit, MAX_LIST_LIMIT)
        nodes = [(n.identifier, n.depth, n.indexed) for n in walk.neighbors]
        kinds = None if walk.via is None else {walk.via} if isinstance(walk.via, str) else set(walk.via)
        depth_of = {walk.identifier: 0, **{n.identifier: n.depth for n in walk.neighbors}}
        # An arrow one hop along the walk: how each node was reached (a dependency points away from
        # the start, a dependent towards it), not every edge among the nodes.
        step = 1 if walk.direction == "dependencies" else -1
        with self._use() as gen:
            pagerank = gen.stores.metadata.pagerank_scores()
            edges = [
                (source, target, via)
                for source in sorted(depth_of)
                for target, via in gen.stores.graph.edges_from(source)
                if target in depth_of and depth_of[target] - depth_of[source] == step
                and (kinds is None or via in kinds)
            ]
        return walk_diagram(walk.identifier, nodes, pagerank, edges, walk.direction, limit)

    # -- the index itself ------------------------------------------------------------------
    def structure(self, detail: str = "summary", *, top: int = DEFAULT_PAGERANK_LIMIT) -> Structure:
        """Counts by unit type, language and edge kind and the `top` units by PageRank;
        `detail="full"` adds every indexed file."""
        if detail not in STRUCTURE_DETAILS:
            raise InputError(f"detail must be one of {', '.join(STRUCTURE_DETAILS)}, got {detail!r}")
        top = _validate_positive("top", top, MAX_LIST_LIMIT)
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
                top_pagerank=gen.ranked_units()[:top],
            )

    def status(self, *, globs: Sequence[str] | None = None, langs: Sequence[str] | None = None) -> Status:
        """The index's identity and contents, and which repository files changed since it was built.
        `globs` / `langs` (as in `search`) narrow `units_by_type`, `files_by_language` and
        `changes` to the files they select and add `filter` with what they selected."""
        from woods.freshness import changes_since_index, root_moved_warning

        files = _file_filter(globs, langs)
        with self._use() as gen:
            stores = gen.stores
            manifest = stores.manifest
            skipped = manifest.data.get("skipped") or {}
            vectors = self._vector_state(gen)
            moved = root_moved_warning(gen.root, manifest.root)
            changes = changes_since_index(stores, gen.root)
            units_by_type = stores.metadata.type_counts()
            files_by_language = stores.metadata.language_counts()
            selected: dict[str, Any] | None = None
            if files is not None:
                changes, units_by_type, files_by_language, selected = _filtered_contents(stores, files, changes, gen.names())
            return Status(
                vectors=vectors,
                store=str(stores.store_dir),
                generation=stores.generation.name,
                root=None if gen.root is None else str(gen.root),
                recorded_root=(manifest.root or None) if moved else None,
                warnings=(*moved, *self.background_warnings),
                created_at=manifest.data.get("created_at"),
                embedder=manifest.embedder,
                counts=manifest.counts,
                changes=changes,
                manifest=dict(manifest.data),
                units_by_type=units_by_type,
                files_by_language=files_by_language,
                skipped={str(reason): int(count) for reason, count in sorted(skipped.items())},
                repo=_repo_name(stores),
                filter=selected,
            )

    def vector_state(self) -> dict[str, Any]:
        """`status().vectors` without comparing the repository with the index (no file is read)."""
        with self._use() as gen:
            return self._vector_state(gen)

    def _vector_state(self, gen: _Generation) -> dict[str, Any]:
        from woods.indexing.resume import vector_state

        stores = gen.stores
        if isinstance(stores.store_dir, Path):
            vectors = vector_state(stores.store_dir, stores.generation.name, stores.manifest)
        else:  # another backend publishes the vectors with everything else
            chunks = int(stores.manifest.counts.get("chunks", 0))
            vectors = {"state": "complete", "embedded": chunks, "total": chunks}
        if self.vectors_in_background:  # this handle's own thread, maybe not yet at its first batch
            if vectors["state"] in ("pending", "interrupted"):
                vectors["state"] = "embedding"
            elif vectors.get("phase") == 1:
                vectors["contextual"] = {**vectors.get("contextual", {"embedded": None, "total": None}),
                                         "state": "embedding"}
        return vectors

    def evaluate(
        self, queryset: str | os.PathLike[str], *, budget: int | None = None, profile: str | None = None
    ) -> EvaluationReport:
        """Run a query set (Ruby woods format) through this index and score it (`woods evaluate`).
        `budget` overrides every query's own budget; `profile` the ranking (default: the handle's)."""
        from woods.evaluate.runner import run_evaluation

        if budget is not None:
            budget = _validate_positive("budget", budget, MAX_CONTEXT_BUDGET)
        with self._use() as gen:
            return run_evaluation(
                queryset, stores=gen.stores, budget=budget, embedder_factory=gen.embedder_factory,
                profile=profile or self.profile,
            )

    def update(
        self,
        *,
        wait: float = DEFAULT_LOCK_WAIT_SECONDS,
        provider_factory: Callable[[], EmbeddingProvider] | None = None,
        workers: int = 1,
        progress: Progress | None = None,
        background: bool = False,
        contextual_factory: Callable[[], EmbeddingProvider] | None = None,
    ) -> IndexSummary:
        """Re-index the repository this handle reads and switch to the new generation.

        Vectors of unchanged embedding texts are reused, so only changed code is embedded.
        Returns the builder's `IndexSummary` (`up_to_date` when nothing changed: then no new
        generation is written). The embedders are the index's own: its base embedder (the static
        model) and, when it holds contextual vectors — or where the contextual extra is installed,
        for an index on the default base — the contextual one (`_embedders_of`);
        `provider_factory` and `contextual_factory` override them (they must produce compatible
        vectors).

        `background=True` returns as soon as phase 1 is published and switched to (every call
        answers from it, hybrid with the base vectors); the contextual vectors are computed by a
        background thread and the handle switches again when they are published
        (`wait_for_vectors()`). A later `update()` or `close()` stops that thread between batches.
        """
        with self._update_lock:  # one update at a time; its own background thread stopped under it
            self._stop_background()
            with self._use() as gen:
                repo = _repo_name(gen.stores)
                if isinstance(self.store_dir, str) and repo is None:
                    raise InputError("this Index reads several repositories; open one (repo=NAME) to update it")
                manifest = gen.stores.manifest
                root = gen.root  # the given repository, never the recorded one of a copy's original
                base, second = _embedders_of(manifest.data)
                max_bytes = int(manifest.data.get("max_file_bytes") or DEFAULT_MAX_FILE_BYTES)
            if root is None:
                raise InputError("this index records no repository root (built from a corpus); it cannot be updated")
            factory = provider_factory or base
            contextual = contextual_factory or second
            summary = build_index(
                root, store=self.store_dir, repo=repo, max_file_bytes=max_bytes, wait=wait,
                provider_factory=factory or _default_base, contextual_factory=contextual, workers=workers,
                progress=progress, vectors=not background,
            )
            self._switch()
            if background and summary.vectors_pending and contextual is not None:
                self._start_background(summary.generation, wait, contextual)
            return summary

    def complete_vectors_in_background(
        self, *, contextual_factory: Callable[[], EmbeddingProvider] | None = None,
        wait: float = DEFAULT_LOCK_WAIT_SECONDS,
    ) -> bool:
        """Start computing the contextual vectors of a phase-1 generation in a background thread
        (True), or do nothing (False) when there is no contextual embedder to use (none given, and
        the extra not installed or the base not the default one), when the index already holds
        them, when another backend reads it, or when the thread already runs."""
        with self._use() as gen:
            manifest = gen.stores.manifest
            if not isinstance(gen.stores.store_dir, Path) or "base_embedder" in manifest.data.get("vectors", {}):
                return False  # another backend publishes every vector at once; or phase 2 is done
            generation = gen.stores.generation.name
            factory = contextual_factory or _embedders_of(manifest.data)[1]
        if factory is None:
            return False
        with self._update_lock:
            if self._background is not None and self._background.is_alive():
                return False
            return self._start_background(generation, wait, factory)

    def wait_for_vectors(self, timeout: float | None = None) -> bool:
        """Wait for a background phase 2 to finish; True when none is running (any more)."""
        thread = self._background
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    @property
    def background_warnings(self) -> list[str]:
        """What background phases reported (stopped, failed, could not switch), oldest first;
        `status()` shows them too."""
        with self._lock:
            return list(self._background_warnings)

    def _record_background(self, warning: str) -> None:
        with self._lock:
            self._background_warnings.append(warning)

    @property
    def vectors_in_background(self) -> bool:
        """True while a background thread computes this index's vectors."""
        thread = self._background
        return thread is not None and thread.is_alive()

    def _switch(self) -> None:
        """Point new calls at the published generation; retire the one they used."""
        fresh = self._open_generation()
        with self._lock:
            if self._closed:
                old = fresh
            else:
                old, self._current = self._current, fresh
        self._retire(old)

    def _start_background(self, generation: str, wait: float, factory: Callable[[], EmbeddingProvider]) -> bool:
        """Compute the vectors of the lexical generation `generation` (phase 2 alone, from its own
        extractions: edits made meanwhile wait for the next update) in a daemon thread; switch
        to the vector-complete generation when it is published. Called under `_update_lock`;
        a closed handle starts nothing (False)."""
        from woods.errors import EmbeddingCancelled
        from woods.indexing.pipeline import complete_vectors

        with self._lock:
            if self._closed:
                return False
        stop = threading.Event()
        self._background_stop = stop

        def run() -> None:
            try:
                complete_vectors(Path(self.store_dir), factory, generation, wait=wait, should_stop=stop.is_set)
                if not stop.is_set():
                    self._switch()
            except EmbeddingCancelled as exc:
                self._record_background(f"background embedding stopped: {exc}; the next update resumes it")
            except Exception as exc:  # a thread has no caller to raise to: recorded for status/MCP
                self._record_background(
                    f"background embedding failed: {type(exc).__name__}: {exc}; searches answer from the "
                    "previous generation until the next update"
                )

        thread = threading.Thread(target=run, name="woods-vectors", daemon=True)
        self._background = thread
        thread.start()
        return True

    def _stop_background(self) -> None:
        thread = self._background
        if thread is not None:
            self._background_stop.set()
            thread.join()
            self._background = None


__all__ = [
    "AmbiguousIdentifierError",
    "ContextSource",
    "GraphNeighbor",
    "GraphWalk",
    "Index",
    "IndexClosedError",
    "LocalizeResult",
    "RankedUnit",
    "Retrieval",
    "SearchHit",
    "SearchResult",
    "Status",
    "Structure",
    "UnitNotFoundError",
    "UnitRecord",
    "build_index",
]
