"""The index builder: discovery → extraction → linking → chunking → embedding → stores → publish.

Why one place: extraction never imports stores and stores never import extraction; this module is
where the stages meet. It writes a complete new generation aside and publishes it atomically, so a
failure or a kill at any point leaves the previous index exactly as it was.

Re-indexing reuses vectors: every chunk's embedding text is hashed (SHA-256) and looked up in the
previous generation (same model fingerprint), so unchanged, moved or renamed code costs no
embedding. Only new texts reach the model.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from woods import __version__
from woods.errors import IndexingError, InputError
from woods.extract.layout import RepositoryLayout
from woods.linking import LinkedEdge, NameIndex, edges_of, link_unit
from woods.store import index as layout
from woods.store.graph import compute_pagerank, pagerank_percentiles
from woods.store.identity import assign_keys
from woods.store.metadata import ChunkRow, FileRow, MetadataWriter
from woods.units import Unit, sha256_hex

# Texts embedded per model call. Sorting by length first keeps padding waste low.
EMBED_BATCH = 64
# Up to this many new texts (an edit or two), a provider's light twin embeds them when it has one:
# loading torch costs ~8 s, the numpy encoder ~0.4 s, and 64 texts take it ~1-2 s.
SMALL_EMBED_JOB = 64


class Progress(Protocol):
    """Where the builder reports phases; the CLI renders it with rich, tests ignore it."""

    def phase(self, name: str, total: int | None) -> None: ...

    def advance(self, count: int = 1) -> None: ...

    def note(self, message: str) -> None: ...


class SilentProgress:
    def phase(self, name: str, total: int | None) -> None:
        pass

    def advance(self, count: int = 1) -> None:
        pass

    def note(self, message: str) -> None:
        pass


@dataclass
class IndexSummary:
    """What a run did: counts by language/type/reason, seconds per phase, where it published."""

    store_dir: str
    generation: str
    files: int = 0
    files_by_language: dict[str, int] = field(default_factory=dict)
    units: int = 0
    units_by_type: dict[str, int] = field(default_factory=dict)
    chunks: int = 0
    embedded: int = 0
    reused_vectors: int = 0
    edges: int = 0
    resolved_edges: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    parse_failures: int = 0
    reused_files: int = 0
    removed_units: int = 0
    up_to_date: bool = False
    full: bool = False
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True, slots=True)
class _PreparedText:
    """One embedding text of a unit. `text` is None when the chunk plan was reused from the previous
    generation: its vector is found by `text_sha256`, so the text itself is never needed."""

    key: str
    chunk_index: int
    chunk_type: str
    line_start: int
    line_end: int
    text: str | None
    text_sha256: str
    plan_key: str


def _timed(seconds: dict[str, float], name: str, started: float) -> None:
    seconds[name] = round(seconds.get(name, 0.0) + time.perf_counter() - started, 3)


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


def _stable_id(unit: Unit) -> str:
    """A content-independent id that survives re-indexing while the unit keeps its name and place."""
    return hashlib.sha256(f"{unit.type}\0{unit.identifier}\0{unit.file_path}".encode()).hexdigest()


def _children_by_parent(units: Sequence[Unit]) -> dict[tuple[str, str], list[Unit]]:
    children: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for unit in units:
        if unit.parent:
            children[(unit.parent, unit.file_path)].append(unit)
    return children


# Bump when chunking changes what it produces for the same input: old plans are then not reused.
CHUNK_PLAN_VERSION = 1


def _plan_key(prefix: str, unit: Unit, kids: Sequence[Unit], limit: int | None) -> str:
    """What a unit's chunks depend on: its header, source, members' spans, the input limit."""
    spans = [(k.line_start, k.line_end, k.identifier) for k in kids]
    material = json.dumps(
        [CHUNK_PLAN_VERSION, unit.type, unit.language, unit.line_start, prefix, unit.source_code, spans, limit],
        ensure_ascii=False,
    )
    return sha256_hex(material)


def _prepare_texts(
    keyed: Sequence[tuple[str, Unit]],
    provider: Any,
    chunk: bool,
    progress: Progress,
    plans: dict[str, list[tuple[int, str, int, int, str]]],
    cached_vector: Callable[[str], bool],
) -> list[_PreparedText]:
    """Every unit's embedding texts. A unit whose plan key (header, source, members, limit) is
    in `plans` and whose chunk vectors all exist reuses that plan without tokenizing anything:
    chunking (tokenizer calls) was 80 % of a 1-file re-index of the standard library."""
    from woods.embedding.text import bounded_prefix, embedding_text, unit_embedding_prefix

    children = _children_by_parent([u for _k, u in keyed])
    limit = provider.max_input_tokens if chunk else None
    prepared: list[_PreparedText] = []
    for key, unit in keyed:
        progress.advance()
        if not chunk:
            text = embedding_text(unit_embedding_prefix(unit), unit.source_code)
            if text.strip():
                prepared.append(
                    _PreparedText(key, 0, "whole", unit.line_start, unit.line_end, text, sha256_hex(text), "")
                )
            continue
        kids = children.get((unit.identifier, unit.file_path), [])
        plan_key = _plan_key(unit_embedding_prefix(unit), unit, kids, limit)
        plan = plans.get(plan_key)
        if plan is not None and all(cached_vector(row[4]) for row in plan):
            prepared.extend(_PreparedText(key, *row[:4], None, row[4], plan_key) for row in plan)
            continue
        from woods.chunking import chunk_unit

        prefix = bounded_prefix(unit, provider.count_tokens, limit)
        for piece in chunk_unit(unit, provider.count_tokens, limit, kids, prefix=prefix):
            prepared.append(
                _PreparedText(key, piece.index, piece.chunk_type, piece.line_start, piece.line_end, piece.text,
                              sha256_hex(piece.text), plan_key)
            )
    return prepared


class _VectorCache:
    """Vectors of the previous generation keyed by SHA-256 of their embedding text (same model only)."""

    def __init__(self, store_dir: Path | None, embedder: dict[str, Any]) -> None:
        self._by_hash: dict[str, np.ndarray] = {}
        # plan key → [(chunk_index, chunk_type, line_start, line_end, text_sha256)] in index order
        self.plans: dict[str, list[tuple[int, str, int, int, str]]] = {}
        if store_dir is None:  # --full: embed everything again
            return
        try:
            stores = layout.IndexStores.open(store_dir)
        except Exception:  # no previous index, or an unusable one: simply nothing to reuse
            return
        try:
            if stores.manifest.embedder.get("fingerprint") != embedder.get("fingerprint") or stores.manifest.dimension != embedder.get("dimension"):
                return
            rows = stores.metadata.chunks()
            if not rows:
                return
            matrix = stores.vectors.vectors_for([r.vector_id for r in rows])
            for row, vector in zip(rows, matrix, strict=True):
                self._by_hash.setdefault(row.text_sha256, vector)
            for row in sorted(rows, key=lambda r: (r.plan_key, r.unit_key, r.chunk_index)):
                if row.plan_key:
                    plan = self.plans.setdefault(row.plan_key, [])
                    if not plan or plan[-1][0] < row.chunk_index:  # one plan per key (first unit)
                        plan.append((row.chunk_index, row.chunk_type, row.line_start, row.line_end, row.text_sha256))
        except Exception:
            self._by_hash, self.plans = {}, {}
        finally:
            stores.close()

    def get(self, text_hash: str) -> np.ndarray | None:
        return self._by_hash.get(text_hash)

    def has(self, text_hash: str) -> bool:
        return text_hash in self._by_hash


def embedder_description(provider: Any) -> dict[str, Any]:
    """The manifest's record of the embedder. `fingerprint` — the weights' SHA-256 and the numeric
    precision when the provider exposes them — decides whether a previous generation's vectors may
    be reused: a changed model file or a switch between bf16 and fp32 re-embeds everything."""
    weights = getattr(provider, "weights_fingerprint", None)
    if callable(weights):
        weights = weights()
    precision = getattr(provider, "precision", None)
    fingerprint = f"{weights or provider.name}:{precision or 'fp32'}"
    return {
        "name": provider.name,
        "dimension": int(provider.dimension),
        "max_input_tokens": provider.max_input_tokens,
        "precision": precision,
        "fingerprint": fingerprint,
    }


def build_index_from_units(
    units: Sequence[Unit],
    provider: Any,
    store_dir: Path,
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
) -> IndexSummary:
    """Write and publish a complete index of already-extracted units.

    `link=True` resolves dependency candidates against the units (repository indexing);
    `link=False` keeps dependencies verbatim (pre-extracted corpora such as the Ruby bench).
    `chunk=True` splits units that exceed the provider's input limit. `lock=False` when the
    caller already holds the store lock.
    """
    progress = progress or SilentProgress()
    summary = summary or IndexSummary(store_dir=str(store_dir), generation="")
    store_dir.mkdir(parents=True, exist_ok=True)
    with layout.StoreLock(store_dir, wait) if lock else contextlib.nullcontext():
        layout.cleanup(store_dir)
        build = layout.new_build_dir(store_dir)
        try:
            generation = _write_generation(
                build, units, provider, store_dir, link=link, chunk=chunk, root=root, files=files,
                summary=summary, progress=progress, prefix_aliases=prefix_aliases or {},
                extra_manifest=extra_manifest or {}, extractions=extractions or {}, reuse_vectors=reuse_vectors,
            )
            started = time.perf_counter()
            published = layout.publish(store_dir, build)
            layout.cleanup(store_dir)
            _timed(summary.seconds, "write", started)
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise
    summary.generation = published.name
    del generation
    return summary


def _write_generation(
    build: Path,
    units: Sequence[Unit],
    provider: Any,
    store_dir: Path,
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
    reuse_vectors: bool,
) -> str:
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
    cache = _VectorCache(store_dir if reuse_vectors else None, embedder)
    progress.phase("chunk", len(keyed))
    texts = _prepare_texts(keyed, provider, chunk, progress, cache.plans, cache.has)
    _timed(summary.seconds, "chunk", started)

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
            embedded = model.embed_batch([texts[missing[h][0]].text for h in batch])
        except Exception as exc:
            raise IndexingError(f"embedding failed: {exc}") from exc
        for text_hash, vector in zip(batch, embedded, strict=True):
            for i in missing[text_hash]:
                vectors[i] = vector
        progress.advance(len(batch))
    summary.embedded = len(order)
    _timed(summary.seconds, "embed", started)

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
            writer.add_unit(
                key, record, _stable_id(unit), pagerank.get(unit.identifier, 0.0), percentiles.get(unit.identifier, 0.0)
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
    _timed(summary.seconds, "write", started)

    summary.units = len(keyed)
    summary.units_by_type = dict(sorted(Counter(u.type for _k, u in keyed).items()))
    summary.chunks = len(texts)
    summary.edges = counts["edges"]
    summary.resolved_edges = counts["resolved_edges"]
    return build.name


@dataclass(frozen=True, slots=True)
class _FileOutcome:
    """What reading and extracting one file produced (picklable: it crosses process boundaries)."""

    path: str
    units: tuple[Unit, ...] = ()
    row: FileRow | None = None
    skip_reason: str | None = None
    failure: str | None = None
    warnings: tuple[str, ...] = ()


def _extract_one(root: str, path: str, mtime_ns: int, layout: RepositoryLayout) -> _FileOutcome:
    from woods.extract import extract_file

    try:
        data = Path(root, path).read_bytes()
    except FileNotFoundError:
        return _FileOutcome(path, skip_reason="vanished")
    except OSError as exc:
        return _FileOutcome(path, skip_reason="unreadable", warnings=(f"{path}: unreadable ({exc.strerror or exc})",))
    try:
        extraction = extract_file(path, data, layout)
    except Exception as exc:  # an extractor bug must not lose the whole index
        return _FileOutcome(path, failure=f"{path}: extraction failed ({exc.__class__.__name__}: {exc})")
    row = FileRow(
        path=path,
        language=extraction.language,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        mtime_ns=mtime_ns,
        unit_count=len(extraction.units),
        warnings=tuple(extraction.warnings),
    )
    return _FileOutcome(path, tuple(extraction.units), row, warnings=tuple(extraction.warnings))


# Parsing is CPU-bound Python + C; below this many files a process pool costs more than it saves.
PARALLEL_PARSE_MIN_FILES = 200
# More parse processes than this mostly add memory: extraction is quick next to embedding.
MAX_PARSE_WORKERS = 4


def parse_workers() -> int:
    """Parse processes for this machine (its CPU count, at most MAX_PARSE_WORKERS)."""
    return max(1, min(os.cpu_count() or 1, MAX_PARSE_WORKERS))


def extract_files(
    root: Path,
    discovered: Sequence[Any],
    progress: Progress,
    summary: IndexSummary,
    workers: int | None = None,
    cached: Callable[[Any], _FileOutcome | None] | None = None,
    layout: RepositoryLayout | None = None,
) -> tuple[list[Unit], list[FileRow]]:
    """Read, hash and extract every discovered file, in discovery (path) order.

    A file that fails is reported (warning, `parse_failures`), never fatal; a file that vanished or
    became unreadable since discovery is counted under that skip reason. Large repositories are
    parsed in a process pool (forkserver: no inherited threads or locks). `cached(file)` may return
    the previous run's outcome for an unchanged file, which is then not read or parsed at all.
    `layout` defaults to the one computed from `discovered` (only the whole file list tells a Rails
    app's lib/ and spec/ from a plain gem's).
    """
    if layout is None:
        layout = RepositoryLayout.from_paths(item.path for item in discovered)
    workers = workers or 1
    progress.phase("parse", len(discovered))
    reused: dict[str, _FileOutcome] = {}
    for item in discovered:
        outcome = cached(item) if cached is not None else None
        if outcome is not None:
            reused[item.path] = outcome
    summary.reused_files = len(reused)
    all_jobs = [(str(root), item.path, item.mtime_ns) for item in discovered]
    jobs = [job for job in all_jobs if job[1] not in reused]
    fresh = _parse_all(jobs, workers, layout, progress, summary)
    units: list[Unit] = []
    rows: list[FileRow] = []
    for job in all_jobs:
        outcome = reused.get(job[1]) or fresh[job[1]]
        if job[1] in reused:
            progress.advance()
        summary.warnings.extend(outcome.warnings)
        if outcome.skip_reason:
            summary.skipped[outcome.skip_reason] = summary.skipped.get(outcome.skip_reason, 0) + 1
        elif outcome.failure:
            summary.parse_failures += 1
            summary.warnings.append(outcome.failure)
        elif outcome.row is not None:
            units.extend(outcome.units)
            rows.append(outcome.row)
    return units, rows


def _parse_all(
    jobs: Sequence[tuple[str, str, int]],
    workers: int,
    layout: RepositoryLayout,
    progress: Progress,
    summary: IndexSummary,
) -> dict[str, _FileOutcome]:
    """Parse `jobs` (in a process pool for large repositories); path → outcome.

    If a pool worker dies (killed, out of memory), the files it had not finished are parsed here
    in-process and the run goes on — one lost worker never loses the index.
    """
    fresh: dict[str, _FileOutcome] = {}
    if workers > 1 and len(jobs) >= PARALLEL_PARSE_MIN_FILES:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"))
        try:
            roots, paths, mtimes = zip(*jobs, strict=True)
            layouts = [layout] * len(jobs)
            for outcome in pool.map(_extract_one, roots, paths, mtimes, layouts, chunksize=16):
                fresh[outcome.path] = outcome
                progress.advance()
        except BrokenProcessPool:
            summary.warnings.append(
                f"a parse worker died after {len(fresh)} of {len(jobs)} files; parsed the rest in-process"
            )
        finally:
            pool.shutdown(cancel_futures=True)
    for job in jobs:
        if job[1] not in fresh:
            fresh[job[1]] = _extract_one(*job, layout)
            progress.advance()
    return fresh


# An incremental run that would remove more than this share of the indexed units is refused unless
# the caller allows it (Ruby WOODS_ALLOW_PURGE): a wrong path or a half-checked-out tree should not
# silently wipe an index people rely on.
PURGE_GUARD_SHARE = 0.30

# Crash tests set WOODS_TEST_PAUSE=<phase> to stop the indexer at a known point and kill it there.
_PAUSE_ENV = "WOODS_TEST_PAUSE"


def crash_test_pause(phase: str) -> None:
    """When WOODS_TEST_PAUSE names `phase`, announce it on stderr and wait to be killed (tests only)."""
    if os.environ.get(_PAUSE_ENV) == phase:
        import sys

        sys.stderr.write(f"woods-test-paused:{phase}\n")
        sys.stderr.flush()
        time.sleep(float(os.environ.get("WOODS_TEST_PAUSE_SECONDS", "60")))


def index_repository(
    root: Path,
    store_dir: Path,
    provider_factory: Callable[[], Any],
    *,
    max_file_bytes: int = 1_000_000,
    progress: Progress | None = None,
    wait: float = 30.0,
    full: bool = False,
    allow_purge: bool = False,
    workers: int = 1,
) -> IndexSummary:
    """Index the repository at `root` into `store_dir` and publish it.

    `workers > 1` parses large repositories in a process pool (`parse_workers()` picks a count for
    the machine). The pool's workers re-import the calling program's main module, so a script
    that passes workers > 1 needs the usual `if __name__ == "__main__":` guard; the CLI and the
    MCP server do.

    Incremental by default: files whose size and mtime (or, failing that, content hash) match the
    previous generation are not read or parsed again, and embedding texts seen before are not
    embedded again. `full=True` rebuilds everything from scratch.
    """
    if not root.exists():
        raise InputError(f"path not found: {root}")
    if not root.is_dir():
        raise InputError(f"not a directory: {root}; pass a repository directory")
    progress = progress or SilentProgress()
    summary = IndexSummary(store_dir=str(store_dir), generation="", full=full)
    # The lock covers the whole run: a second indexer waits instead of parsing and embedding in vain.
    with layout.StoreLock(store_dir, wait):
        layout.cleanup(store_dir)
        previous = None if full else _open_previous(store_dir)
        try:
            return _index_locked(root, store_dir, provider_factory, max_file_bytes, progress, summary,
                                 previous, allow_purge, workers)
        finally:
            if previous is not None:
                previous.close()


def _open_previous(store_dir: Path) -> Any:
    """The published generation to build on, or None (none yet, or unusable: then a full build)."""
    try:
        return layout.IndexStores.open(store_dir)
    except Exception:
        return None


def _cache_lookup(root: Path, previous: Any, layout_key: str) -> Callable[[Any], _FileOutcome | None] | None:
    """`file → outcome` from the previous generation for files that did not change."""
    if previous is None or previous.manifest.data.get("layout_key") != layout_key:
        return None
    rows = {row.path: row for row in previous.metadata.files()}

    def lookup(item: Any) -> _FileOutcome | None:
        row = rows.get(item.path)
        if row is None or row.size != item.size:
            return None
        if row.mtime_ns != item.mtime_ns:
            try:
                digest = hashlib.sha256((root / item.path).read_bytes()).hexdigest()
            except OSError:
                return None
            if digest != row.sha256:
                return None
        data = previous.metadata.extraction(item.path)
        if data is None:
            return None
        units = tuple(Unit.from_raw(u) for u in data["units"])
        fresh_row = FileRow(row.path, row.language, row.sha256, row.size, item.mtime_ns, row.unit_count, row.warnings)
        return _FileOutcome(item.path, units, fresh_row, warnings=tuple(data.get("warnings", ())))

    return lookup


def _up_to_date(
    previous: Any,
    rows: Sequence[FileRow],
    summary: IndexSummary,
    provider: Any,
    layout_key: str,
    max_file_bytes: int,
    aliases: dict[str, str],
) -> bool:
    """True when the published generation already is what this run would write: every file reused
    unchanged (same set, same content), same extraction layout, options, woods version and embedder.
    Then no new generation is written at all (the Ruby gem: "nothing processed, nothing vanished
    writes no dump")."""
    if previous is None or summary.full or summary.reused_files != len(rows):
        return False
    manifest = previous.manifest.data
    same_files = len(rows) == manifest.get("counts", {}).get("files")
    return (
        same_files
        and manifest.get("layout_key") == layout_key
        and manifest.get("max_file_bytes") == max_file_bytes
        and manifest.get("prefix_aliases", {}) == aliases
        and manifest.get("woods_version") == __version__
        and manifest.get("embedder") == embedder_description(provider)
        and all(row.mtime_ns == old.mtime_ns for row, old in zip(rows, previous.metadata.files(), strict=False))
    )


def _index_locked(
    root: Path,
    store_dir: Path,
    provider_factory: Callable[[], Any],
    max_file_bytes: int,
    progress: Progress,
    summary: IndexSummary,
    previous: Any,
    allow_purge: bool,
    workers: int,
) -> IndexSummary:
    from woods.discovery import discover

    started = time.perf_counter()
    progress.phase("discover", None)
    crash_test_pause("discover")
    found = discover(root, max_file_bytes=max_file_bytes)
    summary.skipped = dict(sorted(found.skipped.items()))
    summary.skipped_examples = {k: list(v) for k, v in sorted(found.skipped_examples.items())}
    summary.warnings.extend(found.warnings)
    _timed(summary.seconds, "discover", started)
    if previous is not None and not found.files and not allow_purge:
        raise InputError(
            f"no source files found under {root}, the index there holds {previous.metadata.count()} units; "
            "refusing to empty it (check the path, or pass --allow-purge)"
        )

    started = time.perf_counter()
    repo_layout = RepositoryLayout.from_paths(f.path for f in found.files)
    layout_key = repo_layout.key(__version__)
    crash_test_pause("parse")
    units, rows = extract_files(
        root, found.files, progress, summary, workers=workers, cached=_cache_lookup(root, previous, layout_key),
        layout=repo_layout,
    )
    summary.files = len(rows)
    summary.files_by_language = dict(sorted(Counter(r.language for r in rows).items()))
    _timed(summary.seconds, "parse", started)

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

    extractions = {
        row.path: {"language": row.language, "warnings": list(row.warnings), "units": []} for row in rows
    }
    for unit in units:
        extractions[unit.file_path]["units"].append(unit.to_raw())

    # go.mod is not source (discovery skips it); look where Go modules conventionally live.
    go_mods = [p.relative_to(root).as_posix() for p in [root / "go.mod", *root.glob("*/go.mod")] if p.is_file()]
    aliases = go_module_aliases(root, go_mods)
    provider = provider_factory()  # cheap: models load on the first text to embed
    if _up_to_date(previous, rows, summary, provider, layout_key, max_file_bytes, aliases):
        summary.up_to_date = True
        summary.generation = previous.generation.name
        summary.units = previous.metadata.count()
        summary.units_by_type = previous.metadata.type_counts()
        summary.chunks = previous.metadata.chunk_count()
        summary.reused_vectors = summary.chunks
        counts = previous.manifest.counts
        summary.edges, summary.resolved_edges = counts.get("edges", 0), counts.get("resolved_edges", 0)
        return summary
    return build_index_from_units(
        units,
        provider,
        store_dir,
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
            "max_file_bytes": max_file_bytes,
            "layout_key": layout_key,
            "prefix_aliases": aliases,
        },
        extractions=extractions,
        reuse_vectors=not summary.full,
    )

