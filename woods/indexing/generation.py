"""Generations in up to two phases. Phase 1 links, ranks and writes the metadata database, chunks
every unit and embeds the chunks with the base embedder (woods's static model: seconds), and
publishes it all as one generation — the first thing a search sees already has vectors. Phase 2,
when a contextual embedder is asked for (MiniLM, the `contextual` extra), embeds the same chunks
with it and publishes a second generation that replaces the base vectors with those.

Guarantees: each generation is written whole into a private build directory and published by the
store's atomic CURRENT swap, so a failure or a kill at any point leaves the last published index
as it was (the build directory is removed, or removed by the next run). A generation holds the
vectors of exactly one embedder, recorded in its manifest: nothing reads mixed vectors. Phase 2
never rewrites phase 1's metadata database: it hard-links it (a copy only where the filesystem
cannot link) and adds chunks.sqlite3, vectors.faiss and a manifest naming the base generation and
its embedder. Every chunk's embedding text is hashed; a vector of a previous generation of the same
embedder, or of the resume cache, with the same text hash is copied, so only new texts reach the
model, and every finished batch of phase 2 is written to the resume cache first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import sqlite3
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from woods.embedding.provider import EmbeddingProvider
from woods.errors import CorruptIndexError, IndexingError, IndexNotFoundError, SchemaMismatchError
from woods.errors import EmbeddingCancelled as EmbeddingCancelled
from woods.indexing.collector import paused_collector
from woods.indexing.lexical import lexical_document
from woods.indexing.plan import PreparedText, children_by_parent, prepare_texts
from woods.indexing.resume import ProgressFile, ResumeCache
from woods.indexing.summary import IndexSummary, Progress, SilentProgress, timed
from woods.indexing.vector_cache import VectorCache, VectorSource, embedder_description
from woods.linking import LinkedEdge, LinkTargets, edges_of, link_unit
from woods.store import index as layout
from woods.store.backend import LocalTarget, StoreTarget, target_for
from woods.store.graph import compute_pagerank, pagerank_percentiles
from woods.store.identity import assign_keys
from woods.store.index import IndexStores, ReusableVectors
from woods.store.metadata import ChunkRow, ChunkWriter, FileRow, MetadataWriter
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
# Points: discover, parse, write (phase 1 before its publish), embed (phase 2 before the first
# batch), embed-batch (after the first batch reached the resume cache), vectors-write (phase 2
# before its publish).
_PAUSE_ENV = "WOODS_TEST_PAUSE"


def crash_test_pause(phase: str) -> None:
    """When WOODS_TEST_PAUSE names `phase`, announce it on stderr and wait to be killed (tests only)."""
    if os.environ.get(_PAUSE_ENV) == phase:
        sys.stderr.write(f"woods-test-paused:{phase}\n")
        sys.stderr.flush()
        time.sleep(float(os.environ.get("WOODS_TEST_PAUSE_SECONDS", "60")))


def open_previous(store_dir: Path | StoreTarget, summary: IndexSummary) -> IndexStores | PostgresStores | None:
    """The published generation to build on; None when there is none yet. An unreadable one is
    a recorded warning (and a full build: nothing can be reused, no purge guard can apply); one of
    another index schema is a full build too, reported as such (its vectors may still be reused,
    see `reusable_vectors`)."""
    previous, _vectors_reusable = open_previous_checked(store_dir, summary)
    return previous


def open_previous_checked(
    store_dir: Path | StoreTarget, summary: IndexSummary
) -> tuple[IndexStores | PostgresStores | None, bool]:
    """`open_previous`, and whether a previous generation's vectors may be reused (False only
    when the published index is unreadable: then nothing of it is trusted)."""
    try:
        return target_for(store_dir).open_previous(), True
    except IndexNotFoundError:
        summary.full = True  # a first index is built in full (never reported as "incremental")
        return None, True
    except SchemaMismatchError as exc:
        summary.full = True
        summary.warnings.append(f"the published index has another schema ({exc}); rebuilt in full")
        return None, True
    except CorruptIndexError as exc:
        summary.full = True
        summary.warnings.append(
            f"the published index could not be read ({exc}); built from scratch: nothing reused, purge guard not applied"
        )
        return None, False


def _text_of(prepared: PreparedText) -> str:
    """The text to embed; a reused plan has none, but its vector is always in the cache."""
    if prepared.text is None:
        raise IndexingError(f"no text and no cached vector for chunk {prepared.chunk_index} of {prepared.key}")
    return prepared.text


def reusable_vectors(
    store_dir: Path | StoreTarget, summary: IndexSummary, embedder: dict[str, Any]
) -> ReusableVectors | None:
    """The vectors of the newest generation with vectors of `embedder` (its fingerprint; any index
    schema; for another backend, what its target offers), when readable (else None, with a warning
    when something was there but could not be read)."""
    target = target_for(store_dir)
    try:
        if not isinstance(target, LocalTarget):
            return target.open_reusable()
        generation = layout.newest_vector_generation(target.store_dir, str(embedder.get("fingerprint")))
        if generation is None:
            return None
        return ReusableVectors(generation, layout.read_manifest(generation, check_schema=False))
    except IndexNotFoundError:
        return None
    except (CorruptIndexError, sqlite3.DatabaseError) as exc:
        summary.warnings.append(f"vectors of the previous index could not be reused ({exc})")
        return None


def stable_id(unit: Unit) -> str:
    """A content-independent id that survives re-indexing while the unit keeps its name and place."""
    return hashlib.sha256(f"{unit.type}\0{unit.identifier}\0{unit.file_path}".encode()).hexdigest()




@dataclass(frozen=True, slots=True)
class LinkedUnits:
    """Units with their storage keys and resolved edges, PageRank and members: what both phases
    write (computed once per run; cheap next to parsing and embedding)."""

    keyed: list[tuple[str, Unit]]
    edges: list[LinkedEdge]
    pagerank: dict[str, float]
    percentiles: dict[str, float]
    dependents: dict[str, list[dict[str, str]]]
    children: dict[tuple[str, str], list[Unit]]


def link_units(units: Sequence[Unit], *, link: bool, prefix_aliases: dict[str, str]) -> LinkedUnits:
    """Keys, edges (resolved when `link`), PageRank over public identifiers (as the Ruby gem computes it), dependents."""
    keys = assign_keys(units)
    names = LinkTargets.build(zip(keys, units, strict=True), prefix_aliases)
    keyed: list[tuple[str, Unit]] = []
    edges: list[LinkedEdge] = []
    for key, unit in zip(keys, units, strict=True):
        if link:
            unit, unit_edges = link_unit(key, unit, names)
        else:
            unit_edges = edges_of(key, unit, names)
        keyed.append((key, unit))
        edges.extend(unit_edges)
    identifiers = sorted({u.identifier for _k, u in keyed})
    pagerank = compute_pagerank(identifiers, ((e.source, e.target) for e in edges))
    dependents: dict[str, list[dict[str, str]]] = defaultdict(list)
    types_of: dict[str, str] = {}
    for _key, unit in keyed:
        types_of.setdefault(unit.identifier, unit.type)
    for edge in sorted({(e.target, e.source) for e in edges if e.target_key is not None}):
        dependents[edge[0]].append({"type": types_of.get(edge[1], ""), "identifier": edge[1]})
    return LinkedUnits(keyed, edges, pagerank, pagerank_percentiles(pagerank), dict(dependents),
                       children_by_parent([u for _k, u in keyed]))


def write_lexical_generation(
    build: Path,
    linked: LinkedUnits,
    embedder: dict[str, Any],
    *,
    root: Path | None,
    files: Sequence[FileRow],
    summary: IndexSummary,
    progress: Progress,
    extra_manifest: dict[str, Any],
    extractions: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """Phase 1: the metadata database (units, lexical index, files, extractions, edges, PageRank)
    and a manifest whose vectors are pending, into `build` (not published). Returns the manifest."""
    started = time.perf_counter()
    progress.phase("write", None)
    crash_test_pause("write")
    writer = MetadataWriter(build / layout.METADATA_FILE)
    try:
        for row in files:
            writer.add_file(row)
        for path, data in extractions.items():
            writer.add_extraction(path, data)
        for key, unit in linked.keyed:
            record = unit.to_dict()
            record["dependents"] = linked.dependents.get(unit.identifier, [])
            members = linked.children.get((unit.identifier, unit.file_path), ())
            writer.add_unit(
                key, record, stable_id(unit), linked.pagerank.get(unit.identifier, 0.0),
                linked.percentiles.get(unit.identifier, 0.0), lexical=lexical_document(unit, members),
            )
        writer.add_edges((e.source_key, e.source, e.target, e.target_key, e.via, e.ordinal) for e in linked.edges)
        counts = {
            "files": len(files),
            "units": len(linked.keyed),
            "chunks": 0,
            "edges": len(linked.edges),
            "resolved_edges": sum(1 for e in linked.edges if e.target_key is not None),
        }
        manifest = {
            "schema_version": layout.SCHEMA_VERSION,
            "woods_version": __version__,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "root": str(root) if root else None,
            "embedder": embedder,
            "counts": counts,
            "vectors": {"state": layout.VECTORS_PENDING},
            "python": platform.python_version(),
            **extra_manifest,
        }
        writer.set_meta({"schema_version": str(layout.SCHEMA_VERSION), "manifest": manifest})
        writer.commit_and_close()
    except BaseException:
        writer.abort()
        raise
    _write_manifest(build, manifest)
    timed(summary.seconds, "write", started)
    summary.units = len(linked.keyed)
    summary.units_by_type = dict(sorted(Counter(u.type for _k, u in linked.keyed).items()))
    summary.edges = counts["edges"]
    summary.resolved_edges = counts["resolved_edges"]
    return manifest


def _write_manifest(build: Path, manifest: dict[str, Any]) -> None:
    (build / layout.MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _link_or_copy(source: Path, target: Path) -> None:
    """Hard-link an immutable published file into a build (a copy where links are impossible)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


@dataclass(frozen=True, slots=True)
class VectorPhase:
    """What phase 2 reads besides the units: where vectors may be reused from, the resume cache,
    and how to stop between batches."""

    previous: VectorSource | None = None
    resume: ResumeCache | None = None
    should_stop: Callable[[], bool] | None = None


def prepare_provider(provider: EmbeddingProvider, summary: IndexSummary) -> dict[str, Any]:
    """Let a provider that exports or loads its model first (ONNX) do so — it may fall back to
    another encoder, with a warning — and return the embedder its vectors are keyed under."""
    prepare = getattr(provider, "prepare", None)
    if callable(prepare):
        prepare()
    summary.warnings.extend(w for w in getattr(provider, "warnings", ()) if w not in summary.warnings)
    return embedder_description(provider)


def write_vector_generation(
    build: Path,
    lexical: Path,
    lexical_manifest: dict[str, Any],
    linked: LinkedUnits,
    provider: EmbeddingProvider,
    *,
    chunk: bool,
    summary: IndexSummary,
    progress: Progress,
    phase: VectorPhase,
    store_dir: Path | None,
    consolidate: bool = False,
) -> dict[str, Any]:
    """Chunk every unit, take vectors from the previous generation and the resume cache, embed the
    rest (each batch committed to the resume cache before the next), then write chunks.sqlite3,
    vectors.faiss and the vector-complete manifest into `build`. `lexical` is the generation whose
    metadata database the vectors describe: `build` itself (phase 1: one build holds everything),
    or a published one (phase 2: its database is hard-linked, and the manifest names it and its
    embedder as `vectors.base_generation` / `vectors.base_embedder`). Returns the manifest.
    `store_dir` (a local store) gets the progress file; `consolidate` writes one self-contained
    database instead (a copy of the lexical one with the chunks in it), for backends that publish
    a single build."""
    started = time.perf_counter()
    embedder = embedder_description(provider)
    same_build = lexical.resolve() == build.resolve()
    # Crash tests stop phase 2 at these points (phase 1's embedding is part of its one build).
    pause = (lambda point: None) if same_build else crash_test_pause
    cache = VectorCache(phase.previous, embedder)
    if cache.warning:
        summary.warnings.append(cache.warning)
    progress.phase("chunk", len(linked.keyed))
    texts = prepare_texts(linked.keyed, provider, chunk, progress, cache.plans, cache.has, linked.children)
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
    resumed = phase.resume.get_many(missing) if phase.resume is not None and missing else {}
    for text_hash, vector in resumed.items():
        for i in missing.pop(text_hash):
            vectors[i] = vector
    summary.resumed_vectors = sum(1 for h in hashes if h in resumed)
    order = sorted(missing, key=lambda h: (len(texts[missing[h][0]].text or ""), h))
    report = ProgressFile(store_dir, lexical.name, len(texts)) if store_dir is not None else None
    done = len(texts) - sum(len(v) for v in missing.values())
    if report is not None:
        report.update(done, force=True)
    progress.phase("embed", len(order))
    pause("embed")
    model: Any = provider
    small_job = getattr(provider, "small_job_embedder", None)
    if callable(small_job) and 0 < len(order) <= SMALL_EMBED_JOB:
        model = small_job()
    try:
        for start in range(0, len(order), EMBED_BATCH):
            if phase.should_stop is not None and phase.should_stop():
                raise EmbeddingCancelled(f"embedding stopped after {start} of {len(order)} texts")
            batch = order[start : start + EMBED_BATCH]
            try:
                embedded = model.embed_batch([_text_of(texts[missing[h][0]]) for h in batch])
            except Exception as exc:
                raise IndexingError(f"embedding failed: {exc}") from exc
            if phase.resume is not None:
                phase.resume.add(batch, embedded)
            for text_hash, vector in zip(batch, embedded, strict=True):
                for i in missing[text_hash]:
                    vectors[i] = vector
                    done += 1
            progress.advance(len(batch))
            if report is not None:
                report.update(done, force=start == 0)  # exact at the first batch (where crash tests stop)
            if start == 0:
                pause("embed-batch")
    finally:
        if report is not None:
            report.update(done, force=True)
    summary.embedded = len(order)
    timed(summary.seconds, "embed", started)

    started = time.perf_counter()
    progress.phase("write", None)
    pause("vectors-write")
    from woods.store.vectors import write_vectors

    if consolidate and not same_build:
        shutil.copy2(lexical / layout.METADATA_FILE, build / layout.METADATA_FILE)
    elif not same_build:
        _link_or_copy(lexical / layout.METADATA_FILE, build / layout.METADATA_FILE)
    writer = ChunkWriter(build / (layout.METADATA_FILE if consolidate else layout.CHUNKS_FILE))
    try:
        chunk_counts = Counter(t.key for t in texts)
        for vector_id, (prepared, text_hash) in enumerate(zip(texts, hashes, strict=True)):
            multi = chunk_counts[prepared.key] > 1
            embedding_id = f"{prepared.key}#chunk_{prepared.chunk_index}" if multi else prepared.key
            writer.add_chunk(
                ChunkRow(embedding_id, vector_id, prepared.key, prepared.chunk_index, prepared.chunk_type,
                         prepared.line_start, prepared.line_end, text_hash, prepared.plan_key)
            )
        writer.commit_and_close()
    except BaseException:
        writer.abort()
        raise
    write_vectors(build / layout.VECTORS_FILE, np.arange(len(texts), dtype=np.int64), vectors, int(provider.dimension))
    manifest = dict(lexical_manifest)
    manifest["embedder"] = embedder
    manifest["counts"] = {**lexical_manifest["counts"], "chunks": len(texts)}
    manifest["vectors"] = {
        "state": layout.VECTORS_COMPLETE,
        "embedded": summary.embedded,
        "reused": summary.reused_vectors + summary.resumed_vectors,
    }
    if not same_build:  # phase 2: the base generation it was built on, and the base's embedder
        manifest["vectors"]["base_generation"] = lexical.name
        manifest["vectors"]["base_embedder"] = lexical_manifest["embedder"]
    if consolidate:  # the database carries its manifest too: make it the complete one
        with contextlib.closing(sqlite3.connect(build / layout.METADATA_FILE)) as conn, conn:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('manifest', ?)", (json.dumps(manifest),))
    _write_manifest(build, manifest)
    timed(summary.seconds, "write", started)
    summary.chunks = len(texts)
    return manifest


def _publish(target: StoreTarget, build: Path, summary: IndexSummary) -> str:
    started = time.perf_counter()
    published = target.publish(build)
    target.cleanup()
    timed(summary.seconds, "write", started)
    summary.generation = published
    return published


def build_index_from_units(
    units: Sequence[Unit],
    provider: EmbeddingProvider,
    store_dir: Path | StoreTarget,
    *,
    contextual: EmbeddingProvider | None = None,
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
    base: Path | None = None,
    vectors: bool = True,
    should_stop: Callable[[], bool] | None = None,
    on_searchable: Callable[[IndexSummary], None] | None = None,
    phase1_done: Callable[[], None] | None = None,
    run_started: float | None = None,
) -> IndexSummary:
    """Write and publish a complete index of already-extracted units.

    Phase 1 writes the metadata database and the chunks' vectors by `provider` (the base
    embedder) into one build and publishes it: searchable at once, with vectors
    (`on_searchable(summary)` is called right after). Phase 2 runs when `contextual` is given
    and `vectors` is true: it embeds the same chunks with `contextual` and publishes a generation
    holding those vectors instead (`vectors=False` leaves it to a later call — the background
    phase 2 of an API handle — and reports `vectors_pending`). `base` names an already published
    phase-1 generation of exactly these units (a resumed run): phase 1 is then skipped.
    `should_stop()` is asked between phase 2's batches and stops it with EmbeddingCancelled;
    finished batches stay in the store's resume cache. A backend without two publishes (PostgreSQL)
    gets one build with the final embedder's vectors.

    `link=True` resolves dependency candidates against the units (repository indexing);
    `link=False` keeps dependencies verbatim (pre-extracted corpora such as the Ruby bench).
    `chunk=True` splits units that exceed the provider's input limit. `lock=False` when the
    caller already holds the store lock. Vectors are reused from `previous` (a generation the
    caller already opened) or else from the store's newest generation of the same embedder;
    `reuse_vectors=False` embeds everything (the resume cache included).
    Python's cyclic collector is paused while phase 1 runs (`paused_collector`); a caller that
    paused it earlier (the repository pipeline, from discovery on) passes `phase1_done`, which is
    called once phase 1 is published or skipped.
    """
    progress = progress or SilentProgress()
    target = target_for(store_dir)
    summary = summary or IndexSummary(store_dir=target.describe(), generation="")
    target.prepare()
    # Two publishes only where a generation can be published and linked from (a local store);
    # another backend publishes once, with the final embedder's vectors.
    local = target.store_dir if isinstance(target, LocalTarget) else None
    first = provider if local is not None or contextual is None else contextual
    run_started = time.perf_counter() if run_started is None else run_started
    with target.lock(wait) if lock else contextlib.nullcontext():
        target.cleanup()
        with paused_collector():  # phase 1's objects all live until it is published
            linked = link_units(units, link=link, prefix_aliases=prefix_aliases or {})
            if base is None:
                _phase_one(target, local, linked, first, summary, progress, root=root, files=files,
                           extra_manifest=extra_manifest or {}, extractions=extractions or {}, chunk=chunk,
                           previous=previous, reuse_vectors=reuse_vectors)
                base = None if local is None else local / layout.GENERATIONS_DIR / summary.generation
            else:
                summary.generation = base.name
        if phase1_done is not None:  # the caller's own pause of phase 1 ends here too
            phase1_done()
        summary.searchable_seconds = round(time.perf_counter() - run_started, 3)
        second = contextual if local is not None and base is not None else None
        summary.vectors_pending = second is not None
        note = "; contextual vectors follow" if second is not None and vectors else ""
        progress.note(f"searchable after {summary.searchable_seconds:.1f}s{note}")
        if on_searchable is not None:
            on_searchable(summary)
        if second is None or base is None or not vectors:
            return summary
        base_manifest = layout.read_manifest(base).data
        _vector_phase(target, local, base, base_manifest, linked, second, summary, progress,
                      chunk=chunk, previous=None, reuse_vectors=reuse_vectors, should_stop=should_stop)
    return summary


def _phase_one(
    target: StoreTarget,
    local: Path | None,
    linked: LinkedUnits,
    provider: EmbeddingProvider,
    summary: IndexSummary,
    progress: Progress,
    *,
    root: Path | None,
    files: Sequence[FileRow],
    extra_manifest: dict[str, Any],
    extractions: dict[str, dict[str, Any]],
    chunk: bool,
    previous: VectorSource | None,
    reuse_vectors: bool,
) -> None:
    """The metadata database and the base vectors in one build, published (`summary.generation`).
    A backend that publishes one self-contained database (`local` None) gets the chunks in it."""
    embedder = prepare_provider(provider, summary)
    build = target.new_build_dir()
    opened: ReusableVectors | None = None
    try:
        manifest = write_lexical_generation(
            build, linked, embedder, root=root, files=files, summary=summary, progress=progress,
            extra_manifest=extra_manifest, extractions=extractions,
        )
        source: VectorSource | None = previous if reuse_vectors else None
        if reuse_vectors and source is None:
            opened = source = reusable_vectors(target, summary, embedder)
        write_vector_generation(
            build, build, manifest, linked, provider, chunk=chunk, summary=summary, progress=progress,
            phase=VectorPhase(source), store_dir=None, consolidate=local is None,
        )
        _publish(target, build, summary)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    finally:
        if opened is not None:
            opened.close()


def _vector_phase(
    target: StoreTarget,
    local: Path | None,
    lexical: Path,
    lexical_manifest: dict[str, Any],
    linked: LinkedUnits,
    provider: EmbeddingProvider,
    summary: IndexSummary,
    progress: Progress,
    *,
    chunk: bool,
    previous: VectorSource | None,
    reuse_vectors: bool,
    should_stop: Callable[[], bool] | None,
) -> None:
    """Phase 2 into a new build, published; the resume cache (local stores) is deleted after."""
    embedder = prepare_provider(provider, summary)
    source: VectorSource | None = previous if reuse_vectors else None
    opened: ReusableVectors | None = None
    if reuse_vectors and source is None:
        opened = source = reusable_vectors(target, summary, embedder)
    resume: ResumeCache | None = None
    if local is not None:
        resume = ResumeCache(local, str(embedder["fingerprint"]), int(embedder["dimension"]))
        if not reuse_vectors:
            resume.clear()  # --full: nothing computed before is used, but this run's batches are kept
    build = target.new_build_dir()
    try:
        write_vector_generation(
            build, lexical, lexical_manifest, linked, provider, chunk=chunk, summary=summary, progress=progress,
            phase=VectorPhase(source, resume, should_stop), store_dir=local, consolidate=local is None,
        )
        _publish(target, build, summary)
        summary.vectors_pending = False
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        if resume is not None:
            resume.close()
            resume = None
        raise
    finally:
        if opened is not None:
            opened.close()
    if resume is not None:
        resume.discard()
