"""Indexing a repository: discover → parse → (purge guard) → one generation → publish.

Why one entry point: every interface (CLI, MCP server, Python API) indexes through
`index_repository`, so locking, incremental reuse, the purge guard and the summary are the same
whichever asked. The store lock is held for the whole run: a second indexer waits instead of
parsing and embedding in vain.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from woods.discovery import discover
from woods.embedding.provider import EmbeddingProvider
from woods.errors import InputError
from woods.extract.layout import RepositoryLayout
from woods.indexing.collector import paused_collector
from woods.indexing.generation import (
    build_index_from_units,
    crash_test_pause,
    open_previous_checked,
)
from woods.indexing.parse import PARALLEL_PARSE_MIN_FILES, cache_lookup, extract_files, parse_workers
from woods.indexing.summary import IndexSummary, Progress, SilentProgress, timed
from woods.indexing.vector_cache import VectorSource, embedder_description
from woods.store import index as layout
from woods.store.backend import LocalTarget, StoreTarget, target_for
from woods.store.index import IndexStores
from woods.store.metadata import FileRow
from woods.units import Unit
from woods.version import __version__

if TYPE_CHECKING:
    from woods.store.postgres import PostgresStores


def go_module_aliases(root: Path, go_mod_paths: Sequence[str]) -> dict[str, str]:
    """Go module path → repository directory, from every discovered go.mod (import path linking)."""
    aliases: dict[str, str] = {}
    for rel in go_mod_paths:
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "module":
                directory = os.path.dirname(rel)
                aliases[parts[1].strip('"')] = directory
                break
    return aliases




# An incremental run that would remove more than this share of the indexed units is refused unless
# the caller allows it (Ruby WOODS_ALLOW_PURGE): a wrong path or a half-checked-out tree should not
# silently wipe an index people rely on.
PURGE_GUARD_SHARE = 0.30

def index_repository(
    root: Path,
    store_dir: Path | StoreTarget,
    provider_factory: Callable[[], EmbeddingProvider],
    *,
    contextual_factory: Callable[[], EmbeddingProvider] | None = None,
    max_file_bytes: int = 1_000_000,
    progress: Progress | None = None,
    wait: float = 30.0,
    full: bool = False,
    allow_purge: bool = False,
    workers: int | None = None,
    parallel_min_files: int = PARALLEL_PARSE_MIN_FILES,
    vectors: bool = True,
    should_stop: Callable[[], bool] | None = None,
    on_searchable: Callable[[IndexSummary], None] | None = None,
) -> IndexSummary:
    """Index the repository at `root` into `store_dir` (a `.woods` directory, or a `StoreTarget`
    such as a PostgreSQL repository) and publish it.

    Phase 1 publishes the metadata and the chunks' vectors by `provider_factory()` (the base
    embedder: woods's static model) as one generation, and calls `on_searchable(summary)`: the
    first searchable generation is hybrid. With `contextual_factory`, phase 2 embeds the same
    chunks with that provider (MiniLM) and publishes a generation holding its vectors instead
    (another backend publishes once, with the contextual vectors). `vectors=False` leaves phase 2
    for later; `should_stop()` is asked between its batches (EmbeddingCancelled). An interrupted
    phase 2 resumes on the next run from the vectors already computed (the resume cache), and a
    run with nothing left to embed finishes at once.

    `workers` parse processes for large repositories (None: one per core, `parse_workers()`;
    1: in-process). The pool's workers re-import the calling program's main module, so a script
    that parses in parallel needs the usual `if __name__ == "__main__":` guard; the CLI and the
    MCP server have it.

    Incremental by default: files whose size and mtime (or, failing that, content hash) match the
    previous generation are not read or parsed again, and embedding texts seen before are not
    embedded again. `full=True` rebuilds everything from scratch.
    """
    if not root.exists():
        raise InputError(f"path not found: {root}")
    if not root.is_dir():
        raise InputError(f"not a directory: {root}; pass a repository directory")
    progress = progress or SilentProgress()
    target = target_for(store_dir)
    summary = IndexSummary(store_dir=target.describe(), generation="", full=full)
    options = _RunOptions(
        contextual_factory=contextual_factory, max_file_bytes=max_file_bytes, allow_purge=allow_purge, workers=parse_workers() if workers is None else workers,
        parallel_min_files=parallel_min_files, full=full, vectors=vectors, should_stop=should_stop,
        on_searchable=on_searchable, started=time.perf_counter(),
    )
    # The lock covers the whole run: a second indexer waits instead of parsing and embedding in vain.
    target.prepare()
    with target.lock(wait):
        target.cleanup()
        previous, vectors_trusted = (None, False) if full else open_previous_checked(target, summary)
        try:
            # Phase 1's objects (files, units, their raw form, links, documents) all live until
            # it is published: the collector is paused until then and resumes for phase 2.
            with contextlib.ExitStack() as phase1:
                phase1.enter_context(paused_collector())
                return _index_locked(root, target, provider_factory, progress, summary, previous,
                                     options, vectors_trusted, phase1.close)
        finally:
            if previous is not None:
                previous.close()


@dataclass(frozen=True, slots=True)
class _RunOptions:
    contextual_factory: Callable[[], EmbeddingProvider] | None
    max_file_bytes: int
    allow_purge: bool
    workers: int
    parallel_min_files: int
    full: bool
    vectors: bool
    should_stop: Callable[[], bool] | None
    on_searchable: Callable[[IndexSummary], None] | None
    started: float


def _same_content(
    previous: IndexStores | PostgresStores,
    root: Path,
    rows: Sequence[FileRow],
    summary: IndexSummary,
    layout_key: str,
    max_file_bytes: int,
    aliases: dict[str, str],
) -> bool:
    """True when the published generation holds what this run would write, vectors aside: every
    file reused unchanged (same set, same content), same repository root (a copied or restored
    index is re-rooted even when its files match), same extraction layout, options and woods
    version. Then no metadata is written again (the Ruby gem: "nothing processed, nothing vanished
    writes no dump"); whether vectors are missing the caller decides by the embedder."""
    if summary.full or summary.reused_files != len(rows):
        return False
    manifest = previous.manifest.data
    same_files = len(rows) == manifest.get("counts", {}).get("files")
    return (
        same_files
        and manifest.get("root") == str(root.resolve())
        and manifest.get("layout_key") == layout_key
        and manifest.get("max_file_bytes") == max_file_bytes
        and manifest.get("prefix_aliases", {}) == aliases
        and manifest.get("woods_version") == __version__
        and all(row.mtime_ns == old.mtime_ns for row, old in zip(rows, previous.metadata.files(), strict=False))
    )


def _record_file_changes(
    summary: IndexSummary, previous: IndexStores | PostgresStores | None, rows: Sequence[FileRow]
) -> None:
    """Which files differ from the previous generation, by content hash (what `reindex` reports
    without scanning the repository a second time)."""
    now = {row.path: row.sha256 for row in rows}
    before = {} if previous is None else {row.path: row.sha256 for row in previous.metadata.files()}
    summary.changed_files = sorted(path for path, digest in now.items() if path in before and before[path] != digest)
    summary.added_files = sorted(path for path in now if path not in before)
    summary.deleted_files = sorted(path for path in before if path not in now)


def _index_locked(
    root: Path,
    store_dir: StoreTarget,
    provider_factory: Callable[[], EmbeddingProvider],
    progress: Progress,
    summary: IndexSummary,
    previous: IndexStores | PostgresStores | None,
    options: _RunOptions,
    vectors_trusted: bool,
    phase1_done: Callable[[], None],
) -> IndexSummary:
    max_file_bytes, allow_purge = options.max_file_bytes, options.allow_purge
    started = time.perf_counter()
    progress.phase("discover", None)
    crash_test_pause("discover")
    found = discover(root, max_file_bytes=max_file_bytes)
    summary.skipped = dict(sorted(found.skipped.items()))
    summary.skipped_examples = {k: list(v) for k, v in sorted(found.skipped_examples.items())}
    summary.warnings.extend(found.warnings)
    timed(summary.seconds, "discover", started)
    if previous is not None and not found.files and not allow_purge and previous.metadata.count():
        raise InputError(
            f"no source files found under {root}, the index there holds {previous.metadata.count()} units; "
            "refusing to empty it (check the path, or pass --allow-purge)"
        )

    started = time.perf_counter()
    repo_layout = RepositoryLayout.from_paths(f.path for f in found.files)
    layout_key = repo_layout.key(__version__)
    crash_test_pause("parse")
    units, rows = extract_files(
        root, found.files, progress, summary, workers=options.workers, cached=cache_lookup(root, previous, layout_key),
        layout=repo_layout, parallel_min_files=options.parallel_min_files,
    )
    summary.files = len(rows)
    summary.files_by_language = dict(sorted(Counter(r.language for r in rows).items()))
    _record_file_changes(summary, previous, rows)
    timed(summary.seconds, "parse", started)

    if previous is not None:
        before = previous.metadata.identifiers()
        after = {u.identifier for u in units}
        removed = len(before - after)
        summary.removed_units = removed
        if before and removed / len(before) > PURGE_GUARD_SHARE and not allow_purge:
            raise InputError(
                f"this run would remove {removed} of {len(before)} indexed units ({removed / len(before):.0%}, "
                f"over the {PURGE_GUARD_SHARE:.0%} guard); pass --allow-purge if that is intended"
            )

    raw_units: dict[str, list[dict[str, object]]] = {row.path: [] for row in rows}
    for unit in units:
        raw_units[unit.file_path].append(unit.to_raw())
    extractions: dict[str, dict[str, object]] = {
        row.path: {"language": row.language, "warnings": list(row.warnings), "units": raw_units[row.path]}
        for row in rows
    }

    # Module paths come from go.mod where Go modules conventionally live (the root and one level
    # down), whether or not discovery indexed it as a document.
    go_mods = [p.relative_to(root).as_posix() for p in [root / "go.mod", *root.glob("*/go.mod")] if p.is_file()]
    aliases = go_module_aliases(root, go_mods)
    provider = provider_factory()  # cheap: models load on the first text to embed
    contextual = options.contextual_factory() if options.contextual_factory is not None else None
    wanted = embedder_description(contextual if contextual is not None else provider)
    base: Path | None = None
    if previous is not None and _same_content(previous, root, rows, summary, layout_key, max_file_bytes, aliases):
        embedder = previous.manifest.embedder
        if previous.has_vectors and embedder == wanted:  # exactly what this run would write
            return _nothing_to_do(previous, summary, options)
        if (isinstance(store_dir, LocalTarget) and previous.has_vectors and contextual is not None
                and embedder == embedder_description(provider)):
            # The published generation is this run's phase 1 (two phases exist only in a local
            # store): only the contextual vectors are missing (an interrupted phase 2, or one left
            # for later). Resume phase 2 — or, when this run leaves it for later too, there is
            # nothing to do at all.
            if not options.vectors:
                done = _nothing_to_do(previous, summary, options)
                done.vectors_pending = True
                return done
            base = store_dir.store_dir / layout.GENERATIONS_DIR / previous.generation.name
    # Vectors come from the newest generation of the same embedder (the published one, or after an
    # interrupted phase 2 or a schema change an older one); `--full` and an unreadable published
    # index reuse nothing.
    # The published generation is phase 1's vector source when it holds the vectors phase 1 makes
    # (the base embedder's; another backend's single build, the final embedder's).
    first = contextual if contextual is not None and not isinstance(store_dir, LocalTarget) else provider
    source = previous if previous is not None and previous.has_vectors else None
    if source is not None and source.manifest.embedder != embedder_description(first):
        source = None
    return _build(units, provider, contextual, store_dir, root, rows, summary, progress, aliases, layout_key,
                  extractions, source, base, options, reuse=not options.full and vectors_trusted,
                  phase1_done=phase1_done)


def _nothing_to_do(previous: IndexStores | PostgresStores, summary: IndexSummary, options: _RunOptions) -> IndexSummary:
    """The published generation already is what this run would write: report it, write nothing."""
    summary.generation = previous.generation.name
    summary.units = previous.metadata.count()
    summary.units_by_type = previous.metadata.type_counts()
    counts = previous.manifest.counts
    summary.edges, summary.resolved_edges = counts.get("edges", 0), counts.get("resolved_edges", 0)
    summary.up_to_date = True
    summary.chunks = previous.metadata.chunk_count() if previous.has_vectors else 0
    summary.reused_vectors = summary.chunks
    summary.searchable_seconds = round(time.perf_counter() - options.started, 3)
    return summary



def _build(
    units: list[Unit],
    provider: EmbeddingProvider,
    contextual: EmbeddingProvider | None,
    store_dir: StoreTarget,
    root: Path,
    rows: list[FileRow],
    summary: IndexSummary,
    progress: Progress,
    aliases: dict[str, str],
    layout_key: str,
    extractions: dict[str, dict[str, object]],
    vector_source: VectorSource | None,
    base: Path | None,
    options: _RunOptions,
    *,
    reuse: bool,
    phase1_done: Callable[[], None],
) -> IndexSummary:
    return build_index_from_units(
        units,
        provider,
        store_dir,
        contextual=contextual,
        link=True,
        chunk=True,
        root=root.resolve(),
        files=rows,
        summary=summary,
        progress=progress,
        prefix_aliases=aliases,
        lock=False,
        extra_manifest={
            "skipped": summary.skipped,
            "max_file_bytes": options.max_file_bytes,
            "layout_key": layout_key,
            "prefix_aliases": aliases,
        },
        extractions=extractions,
        reuse_vectors=reuse,
        previous=vector_source,
        base=base,
        vectors=options.vectors,
        should_stop=options.should_stop,
        on_searchable=options.on_searchable,
        run_started=options.started,
        phase1_done=phase1_done,
    )


def complete_vectors(
    store_dir: Path,
    contextual_factory: Callable[[], EmbeddingProvider],
    generation: str,
    *,
    progress: Progress | None = None,
    wait: float = 30.0,
    should_stop: Callable[[], bool] | None = None,
) -> IndexSummary | None:
    """Phase 2 alone for the published phase-1 generation `generation`: the contextual vectors of
    its own units, read from its own extractions (nothing is discovered or parsed again, so the
    vectors describe exactly what it holds). None when `generation` is no longer current or
    already holds that embedder's vectors."""
    progress = progress or SilentProgress()
    summary = IndexSummary(store_dir=str(store_dir), generation=generation)
    started = time.perf_counter()
    contextual = contextual_factory()
    with layout.StoreLock(store_dir, wait):
        current = IndexStores.open(store_dir)
        try:
            if current.generation.name != generation or current.manifest.embedder == embedder_description(contextual):
                return None
            units: list[Unit] = []
            for row in current.metadata.files():
                data = current.metadata.extraction(row.path)
                if data is not None:
                    units.extend(Unit.from_raw(u) for u in data["units"])
            aliases = dict(current.manifest.data.get("prefix_aliases") or {})
            root = current.manifest.root
            return build_index_from_units(
                units, contextual, store_dir, contextual=contextual, link=True, chunk=True,
                root=Path(root) if root else None, summary=summary, progress=progress, prefix_aliases=aliases,
                lock=False, base=current.generation, should_stop=should_stop, run_started=started,
            )
        finally:
            current.close()
