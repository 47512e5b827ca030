"""One generation: link, rank, chunk, embed and write every store of a complete index aside, then
publish it atomically.

Guarantees: a generation is written whole into a private build directory and published by the
store's atomic CURRENT swap, so a failure or a kill at any point leaves the previous index as it
was (the build directory is removed, or removed by the next run). Every chunk's embedding text is
hashed; a vector of the previous generation with the same text hash and embedder is copied, so only
new texts reach the model.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from woods.embedding.provider import EmbeddingProvider
from woods.errors import CorruptIndexError, IndexingError, IndexNotFoundError
from woods.indexing.lexical import lexical_document
from woods.indexing.plan import PreparedText, children_by_parent, prepare_texts
from woods.indexing.summary import IndexSummary, Progress, SilentProgress, timed
from woods.indexing.vector_cache import VectorCache, VectorSource, embedder_description
from woods.linking import LinkedEdge, NameIndex, edges_of, link_unit
from woods.store import index as layout
from woods.store.backend import StoreTarget, target_for
from woods.store.graph import compute_pagerank, pagerank_percentiles
from woods.store.identity import assign_keys
from woods.store.index import IndexStores, ReusableVectors, SchemaMismatchError
from woods.store.metadata import ChunkRow, FileRow, MetadataWriter
from woods.units import Unit
from woods.version import __version__

if TYPE_CHECKING:
    from woods.store.postgres import PostgresStores

# Texts embedded per model call. Sorting by length first keeps padding waste low.
EMBED_BATCH = 64
# Up to this many new texts (an edit or two), a provider's light twin embeds them when it has one:
# loading torch costs ~8 s, the numpy encoder ~0.4 s, and 64 texts take it ~1-2 s.
SMALL_EMBED_JOB = 64



# Crash tests set WOODS_TEST_PAUSE=<phase> to stop the indexer at a known point and kill it there.
_PAUSE_ENV = "WOODS_TEST_PAUSE"


def crash_test_pause(phase: str) -> None:
    """When WOODS_TEST_PAUSE names `phase`, announce it on stderr and wait to be killed (tests only)."""
    if os.environ.get(_PAUSE_ENV) == phase:
        sys.stderr.write(f"woods-test-paused:{phase}\n")
        sys.stderr.flush()
        time.sleep(float(os.environ.get("WOODS_TEST_PAUSE_SECONDS", "60")))


def open_previous(store: Path | StoreTarget, summary: IndexSummary) -> IndexStores | PostgresStores | None:
    """The published generation to build on; None when there is none yet. An unreadable one is
    a recorded warning (and a full build: nothing can be reused, no purge guard can apply); one of
    another index schema is a full build too, reported as such (its vectors may still be reused,
    see `reusable_vectors`)."""
    try:
        return target_for(store).open_previous()
    except IndexNotFoundError:
        return None
    except SchemaMismatchError as exc:
        summary.full = True
        summary.warnings.append(f"the published index has another schema ({exc}); rebuilt in full")
        return None
    except CorruptIndexError as exc:
        summary.full = True
        summary.warnings.append(
            f"the published index could not be read ({exc}); built from scratch: nothing reused, purge guard not applied"
        )
        return None


def _text_of(prepared: PreparedText) -> str:
    """The text to embed; a reused plan has none, but its vector is always in the cache."""
    if prepared.text is None:
        raise IndexingError(f"no text and no cached vector for chunk {prepared.chunk_index} of {prepared.key}")
    return prepared.text


def reusable_vectors(store: Path | StoreTarget, summary: IndexSummary) -> ReusableVectors | None:
    """The vectors of a published generation of another index schema, when readable (else None,
    with a warning when something was there but could not be read)."""
    try:
        return target_for(store).open_reusable()
    except IndexNotFoundError:
        return None
    except CorruptIndexError as exc:
        summary.warnings.append(f"vectors of the previous index could not be reused ({exc})")
        return None


def stable_id(unit: Unit) -> str:
    """A content-independent id that survives re-indexing while the unit keeps its name and place."""
    return hashlib.sha256(f"{unit.type}\0{unit.identifier}\0{unit.file_path}".encode()).hexdigest()




def build_index_from_units(
    units: Sequence[Unit],
    provider: EmbeddingProvider,
    store_dir: Path | StoreTarget,
    *,
    link: bool = False,
    chunk: bool = False,
    root: Path | None = None,
    files: Sequence[FileRow] = (),
    summary: IndexSummary | None = None,
    progress: Progress | None = None,
    prefix_aliases: dict[str, str] | None = None,
    wait: float = 30.0,
    lock: bool = True,
    extra_manifest: dict[str, Any] | None = None,
    extractions: dict[str, dict[str, Any]] | None = None,
    reuse_vectors: bool = True,
    previous: VectorSource | None = None,
) -> IndexSummary:
    """Write and publish a complete index of already-extracted units.

    `link=True` resolves dependency candidates against the units (repository indexing);
    `link=False` keeps dependencies verbatim (pre-extracted corpora such as the Ruby bench).
    `chunk=True` splits units that exceed the provider's input limit. `lock=False` when the
    caller already holds the store lock. Vectors are reused from `previous` (the published
    generation the caller already opened) or, when not given, from the store's published
    generation; `reuse_vectors=False` embeds everything.
    """
    progress = progress or SilentProgress()
    target = target_for(store_dir)
    summary = summary or IndexSummary(store_dir=target.describe(), generation="")
    target.prepare()
    with target.lock(wait) if lock else contextlib.nullcontext():
        target.cleanup()
        opened = open_previous(target, summary) if reuse_vectors and previous is None else None
        foreign = reusable_vectors(target, summary) if reuse_vectors and previous is None and opened is None else None
        build = target.new_build_dir()
        try:
            cache_source: VectorSource | None = (previous or opened or foreign) if reuse_vectors else None
            generation = write_generation(
                build, units, provider, cache_source, link=link, chunk=chunk, root=root, files=files,
                summary=summary, progress=progress, prefix_aliases=prefix_aliases or {},
                extra_manifest=extra_manifest or {}, extractions=extractions or {},
            )
            started = time.perf_counter()
            published = target.publish(build)
            target.cleanup()
            timed(summary.seconds, "write", started)
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise
        finally:
            for reader in (opened, foreign):
                if reader is not None:
                    reader.close()
    summary.generation = published
    del generation
    return summary


def write_generation(
    build: Path,
    units: Sequence[Unit],
    provider: EmbeddingProvider,
    previous: VectorSource | None,
    *,
    link: bool,
    chunk: bool,
    root: Path | None,
    files: Sequence[FileRow],
    summary: IndexSummary,
    progress: Progress,
    prefix_aliases: dict[str, str],
    extra_manifest: dict[str, Any],
    extractions: dict[str, dict[str, Any]],
) -> str:
    """Link, rank, chunk, embed and write one complete generation into `build` (not published)."""
    keys = assign_keys(units)
    names = NameIndex.build(zip(keys, units, strict=True), prefix_aliases)
    keyed: list[tuple[str, Unit]] = []
    edges: list[LinkedEdge] = []
    for key, unit in zip(keys, units, strict=True):
        if link:
            unit, unit_edges = link_unit(key, unit, names)
        else:
            unit_edges = edges_of(key, unit, names)
        keyed.append((key, unit))
        edges.extend(unit_edges)

    # PageRank over public identifiers, Ruby §1.9.
    identifiers = sorted({u.identifier for _k, u in keyed})
    pagerank = compute_pagerank(identifiers, ((e.source, e.target) for e in edges))
    percentiles = pagerank_percentiles(pagerank)
    dependents: dict[str, list[dict[str, str]]] = defaultdict(list)
    types_of: dict[str, str] = {}
    for _key, unit in keyed:
        types_of.setdefault(unit.identifier, unit.type)
    for edge in sorted({(e.target, e.source) for e in edges if e.target_key is not None}):
        dependents[edge[0]].append({"type": types_of.get(edge[1], ""), "identifier": edge[1]})

    # Embedding texts, then vectors (reused from the previous generation where the text is unchanged).
    embedder = embedder_description(provider)
    started = time.perf_counter()
    cache = VectorCache(previous, embedder)
    if cache.warning:
        summary.warnings.append(cache.warning)
    progress.phase("chunk", len(keyed))
    children = children_by_parent([u for _k, u in keyed])
    texts = prepare_texts(keyed, provider, chunk, progress, cache.plans, cache.has, children)
    timed(summary.seconds, "chunk", started)

    started = time.perf_counter()
    hashes = [t.text_sha256 for t in texts]
    vectors = np.zeros((len(texts), int(provider.dimension)), dtype=np.float32)
    missing: dict[str, list[int]] = defaultdict(list)
    for i, text_hash in enumerate(hashes):
        cached = cache.get(text_hash)
        if cached is not None:
            vectors[i] = cached
        else:
            missing[text_hash].append(i)
    summary.reused_vectors = len(texts) - sum(len(v) for v in missing.values())
    order = sorted(missing, key=lambda h: (len(texts[missing[h][0]].text or ""), h))
    progress.phase("embed", len(order))
    crash_test_pause("embed")
    model = provider
    small_job = getattr(provider, "small_job_embedder", None)
    if callable(small_job) and 0 < len(order) <= SMALL_EMBED_JOB:
        model = small_job()
    for start in range(0, len(order), EMBED_BATCH):
        batch = order[start : start + EMBED_BATCH]
        try:
            embedded = model.embed_batch([_text_of(texts[missing[h][0]]) for h in batch])
        except Exception as exc:
            raise IndexingError(f"embedding failed: {exc}") from exc
        for text_hash, vector in zip(batch, embedded, strict=True):
            for i in missing[text_hash]:
                vectors[i] = vector
        progress.advance(len(batch))
    summary.embedded = len(order)
    timed(summary.seconds, "embed", started)

    # Stores.
    started = time.perf_counter()
    progress.phase("write", None)
    crash_test_pause("write")
    from woods.store.vectors import write_vectors

    writer = MetadataWriter(build / layout.METADATA_FILE)
    try:
        for row in files:
            writer.add_file(row)
        for path, data in extractions.items():
            writer.add_extraction(path, data)
        for key, unit in keyed:
            record = unit.to_dict()
            record["dependents"] = dependents.get(unit.identifier, [])
            members = children.get((unit.identifier, unit.file_path), ())
            writer.add_unit(
                key, record, stable_id(unit), pagerank.get(unit.identifier, 0.0), percentiles.get(unit.identifier, 0.0),
                lexical=lexical_document(unit, members),
            )
        chunk_counts = Counter(t.key for t in texts)
        for vector_id, (prepared, text_hash) in enumerate(zip(texts, hashes, strict=True)):
            multi = chunk_counts[prepared.key] > 1
            embedding_id = f"{prepared.key}#chunk_{prepared.chunk_index}" if multi else prepared.key
            writer.add_chunk(
                ChunkRow(embedding_id, vector_id, prepared.key, prepared.chunk_index, prepared.chunk_type,
                         prepared.line_start, prepared.line_end, text_hash, prepared.plan_key)
            )
        writer.add_edges((e.source_key, e.source, e.target, e.target_key, e.via, e.ordinal) for e in edges)
        counts = {
            "files": len(files),
            "units": len(keyed),
            "chunks": len(texts),
            "edges": len(edges),
            "resolved_edges": sum(1 for e in edges if e.target_key is not None),
        }
        manifest = {
            "schema_version": layout.SCHEMA_VERSION,
            "woods_version": __version__,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "root": str(root) if root else None,
            "embedder": embedder,
            "counts": counts,
            "python": platform.python_version(),
            **extra_manifest,
        }
        writer.set_meta({"schema_version": str(layout.SCHEMA_VERSION), "manifest": manifest})
        writer.commit_and_close()
    except BaseException:
        writer.abort()
        raise
    write_vectors(build / layout.VECTORS_FILE, np.arange(len(texts), dtype=np.int64), vectors, int(provider.dimension))
    (build / layout.MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    timed(summary.seconds, "write", started)

    summary.units = len(keyed)
    summary.units_by_type = dict(sorted(Counter(u.type for _k, u in keyed).items()))
    summary.chunks = len(texts)
    summary.edges = counts["edges"]
    summary.resolved_edges = counts["resolved_edges"]
    return build.name


