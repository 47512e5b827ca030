"""The on-disk index: generations, the CURRENT pointer, the manifest, publishing and the lock.

Layout under the store directory (default `<repo>/.woods/`):

    CURRENT                      JSON {"generation": "<name>"} — the commit point, replaced atomically
    generations/<name>/          one complete, immutable index:
        metadata.sqlite3         units, chunks, files, edges, FTS5 (source of truth)
        chunks.sqlite3           embedding chunks (text hashes, FAISS ids); vector-complete only
        vectors.faiss            IndexIDMap2(IndexFlatIP) keyed by chunks.vector_id; vector-complete only
        manifest.json            schema, versions, embedder, counts, vector state, timings
    building-<token>/            a generation being written (deleted or renamed, never read)
    embedding/                   the resume cache of phase 2 (see woods/indexing/resume.py)
    lock                         flock-held by the one running `woods index`

Two phases: an index run first publishes a *lexical* generation (units, lexical index, edges,
PageRank; manifest `vectors.state = "pending"`), searchable at once, then a *vector-complete*
generation that hard-links the lexical one's metadata.sqlite3 and adds chunks.sqlite3,
vectors.faiss and a manifest with `vectors.state = "complete"`.

Why generations: a new index is written aside and published by replacing CURRENT, so a reader
sees the old index or the new one, never a mix, and a crash at any moment leaves the previous
index intact (leftover `building-*` directories are removed by the next run).
Readers hold a shared flock on their generation's manifest, and cleanup never deletes a
generation a reader holds.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods.errors import CorruptIndexError, IndexNotFoundError, LockTimeoutError
from woods.errors import SchemaMismatchError as SchemaMismatchError
from woods.lazy import Lazy
from woods.store.sqlite_uri import sqlite_uri

if TYPE_CHECKING:
    import numpy as np

    from woods.store.metadata import ChunkRow, SQLiteMetadataStore
    from woods.store.vectors import FaissVectorStore

# Bump on every change to the on-disk layout or the SQLite schema: an index of another version is
# refused with "run `woods index --full`" instead of failing later on a missing column.
# 2: units.name, units.pagerank_percentile, chunks.plan_key, the extractions table.
# 3: the code-aware lexical index (`lexical` FTS5 table) replaces `units_fts`.
# 4: two-phase publish: chunks live in chunks.sqlite3 beside the vectors; manifest `vectors`.
SCHEMA_VERSION = 4
STORE_DIRNAME = ".woods"
CURRENT_FILE = "CURRENT"
GENERATIONS_DIR = "generations"
METADATA_FILE = "metadata.sqlite3"
CHUNKS_FILE = "chunks.sqlite3"
VECTORS_FILE = "vectors.faiss"
MANIFEST_FILE = "manifest.json"
LOCK_FILE = "lock"
# Opens of CURRENT's generation before giving up while writers keep replacing it: each retry means
# a writer published and cleaned up in the moment between reading CURRENT and locking the
# generation, so more than a few in a row is not a race but a broken store.
OPEN_ATTEMPTS = 5
BUILD_PREFIX = "building-"
# Generations kept besides the current one, so a reader that opened the previous index just before
# a publish can finish its query. The newest vector-complete generation is kept too (the vectors a
# resumed or incremental phase 2 reuses), whatever its age.
KEEP_PREVIOUS_GENERATIONS = 1
# Manifest `vectors.state` values: a lexical generation waits for its vectors, a complete one has them.
VECTORS_PENDING = "pending"
VECTORS_COMPLETE = "complete"


def store_dir_for(path: Path | None, store: Path | None) -> Path:
    """The store directory: `--store DIR` as given, else `<path>/.woods` (path defaults to cwd)."""
    if store is not None:
        return store
    return (path or Path.cwd()) / STORE_DIRNAME


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    """Temp file in the same directory, fsync, rename over, fsync the directory (Ruby AtomicFile)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a generation holds and how it was made; checked before any store is opened."""

    data: dict[str, Any]

    @property
    def schema_version(self) -> int:
        return int(self.data.get("schema_version", -1))

    @property
    def dimension(self) -> int:
        return int(self.data["embedder"]["dimension"])

    @property
    def embedder(self) -> dict[str, Any]:
        return dict(self.data["embedder"])

    @property
    def root(self) -> str:
        return str(self.data.get("root", ""))

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.data.get("counts", {}))

    @property
    def has_vectors(self) -> bool:
        """True for a vector-complete generation; False for a lexical one whose vectors are still
        being computed (phase 2). A manifest without the field predates two-phase publishing and
        always had its vectors."""
        vectors = self.data.get("vectors")
        return not isinstance(vectors, dict) or vectors.get("state", VECTORS_COMPLETE) == VECTORS_COMPLETE


def read_current(store_dir: Path) -> Path:
    """The published generation directory, or IndexNotFoundError / CorruptIndexError."""
    pointer = store_dir / CURRENT_FILE
    if not pointer.exists():
        raise IndexNotFoundError(f"no woods index at {store_dir}; run `woods index` first")
    try:
        name = json.loads(pointer.read_text(encoding="utf-8"))["generation"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{pointer} is unreadable ({exc.__class__.__name__}); run `woods index --full`") from exc
    if not isinstance(name, str) or "/" in name or name in {"", ".", ".."}:
        raise CorruptIndexError(f"{pointer} names an invalid generation; run `woods index --full`")
    generation = store_dir / GENERATIONS_DIR / name
    if not generation.is_dir():
        raise CorruptIndexError(f"{generation} (named by {pointer}) is missing; run `woods index --full`")
    return generation


def read_manifest(generation: Path, *, check_schema: bool = True) -> Manifest:
    """The generation's manifest; SchemaMismatchError when `check_schema` and its schema differs."""
    path = generation / MANIFEST_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not an object")
        manifest = Manifest(data)
        _ = manifest.dimension
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{path} is unreadable or incomplete; run `woods index --full`") from exc
    if check_schema and manifest.schema_version != SCHEMA_VERSION:
        raise SchemaMismatchError(
            f"{path} has index schema {manifest.schema_version}, this woods reads schema {SCHEMA_VERSION}; "
            "run `woods index --full`"
        )
    return manifest


class IndexStores:
    """An open, read-only published index of a `.woods/` directory (`OpenIndex`): the metadata,
    vector and graph stores and the manifest.

    Guarantees: opening checks the manifest's schema and the stores' agreement (row counts,
    dimension) and raises CorruptIndexError naming the file otherwise; nothing under the store
    directory is modified by opening, querying or closing. The vector store is opened lazily so
    keyword-only queries never load FAISS.
    """

    def __init__(self, store_dir: Path, generation: Path, manifest: Manifest) -> None:
        from woods.store.graph import DependencyGraph

        self.store_dir = store_dir
        self.generation = generation
        self.manifest = manifest
        self._vectors: Lazy[FaissVectorStore] = Lazy(self._open_vectors)
        self._reader_lock = _hold_generation(generation / MANIFEST_FILE)
        try:
            self.metadata = _open_checked_metadata(
                generation / METADATA_FILE, manifest, generation / CHUNKS_FILE if manifest.has_vectors else None
            )
        except BaseException:
            # A generation that fails its checks must not keep the reader's lock (a server that
            # retries on every call would otherwise leak a descriptor per call).
            self._release_reader_lock()
            raise
        self.graph = DependencyGraph(self.metadata)

    @classmethod
    def open(cls, store_dir: Path) -> IndexStores:
        """Open the published generation. A writer may publish a newer one and remove this one
        between reading CURRENT and taking the reader's lock; the open then starts over from the
        new CURRENT (a bounded number of times) instead of failing a reader of a healthy index."""
        if not store_dir.exists():
            raise IndexNotFoundError(f"no woods index at {store_dir}; run `woods index` first")
        for _attempt in range(OPEN_ATTEMPTS - 1):
            generation = read_current(store_dir)
            try:
                return cls(store_dir, generation, read_manifest(generation))
            except _GenerationGone:
                continue
            except CorruptIndexError:
                if read_current(store_dir) == generation:
                    raise  # no writer moved CURRENT: the generation itself is broken
        generation = read_current(store_dir)
        try:
            return cls(store_dir, generation, read_manifest(generation))
        except _GenerationGone as exc:
            raise CorruptIndexError(f"{generation} kept disappearing while it was opened; retry") from exc

    @property
    def has_vectors(self) -> bool:
        """False while this generation is lexical only (phase 2 has not published its vectors):
        vector and hybrid searches then answer from the lexical leg and say so."""
        return self.manifest.has_vectors

    @property
    def vectors(self) -> FaissVectorStore | None:
        """The FAISS store; None for a lexical generation (`has_vectors` False)."""
        if not self.has_vectors:
            return None
        return self._vectors.get()  # opened once, even when threads ask at once

    @property
    def repo(self) -> None:
        """None: a `.woods/` directory holds one repository and names none (`OpenIndex.repo`)."""
        return None

    def repo_of(self, key: str) -> None:
        """None: no unit of a `.woods/` directory belongs to a named repository."""
        return None

    def _open_vectors(self) -> FaissVectorStore:
        from woods.store.vectors import FaissVectorStore

        path = self.generation / VECTORS_FILE
        if not path.is_file():
            raise CorruptIndexError(f"{path} is missing; run `woods index --full`")
        try:
            store = FaissVectorStore(path, self.metadata.vector_meta, self.manifest.dimension, self.metadata.vector_keys)
        except (RuntimeError, ValueError) as exc:
            raise CorruptIndexError(f"{path} is not a readable FAISS index ({exc}); run `woods index --full`") from exc
        chunks = self.metadata.chunk_count()
        if store.count() != chunks:
            raise CorruptIndexError(
                f"{path} holds {store.count()} vectors but the metadata has {chunks} chunks; run `woods index --full`"
            )
        return store

    def chunks(self) -> list[ChunkRow]:
        """Every chunk row (the `VectorSource` view used to reuse vectors)."""
        return self.metadata.chunks()

    def vectors_for(self, vector_ids: list[int]) -> np.ndarray:
        vectors = self.vectors
        if vectors is None:
            raise CorruptIndexError(f"{self.generation} is a lexical generation: it holds no vectors to reuse")
        return vectors.vectors_for(vector_ids)

    def close(self) -> None:
        self.metadata.close()
        self._release_reader_lock()

    def _release_reader_lock(self) -> None:
        if self._reader_lock is not None:
            os.close(self._reader_lock)
            self._reader_lock = None

    def __enter__(self) -> IndexStores:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_checked_metadata(db_path: Path, manifest: Manifest, chunks_path: Path | None = None) -> SQLiteMetadataStore:
    """The generation's database (with its chunks database when the generation has vectors),
    checked against the manifest's counts; closed again (never leaked) when it is missing,
    unreadable or disagrees, which raises CorruptIndexError."""
    from woods.store.metadata import SQLiteMetadataStore

    for path in (db_path, chunks_path):
        if path is not None and not path.is_file():
            raise CorruptIndexError(f"{path} is missing; run `woods index --full`")
    try:
        store = SQLiteMetadataStore(db_path, chunks_path)
    except sqlite3.DatabaseError as exc:
        raise CorruptIndexError(f"{db_path} is not a readable woods database ({exc}); run `woods index --full`") from exc
    try:
        units = store.count()
        chunk_count = store.chunk_count()
        expected = manifest.counts
        if expected.get("units", units) != units or expected.get("chunks", chunk_count) != chunk_count:
            raise CorruptIndexError(
                f"{db_path} holds {units} units / {chunk_count} chunks, the manifest says "
                f"{expected.get('units')} / {expected.get('chunks')}; run `woods index --full`"
            )
        store.map_rows()
    except sqlite3.DatabaseError as exc:
        store.close()
        raise CorruptIndexError(f"{db_path} is not a readable woods database ({exc}); run `woods index --full`") from exc
    except BaseException:
        store.close()
        raise
    return store


class _GenerationGone(Exception):
    """The generation was removed (or is being removed) by a writer's cleanup while a reader
    opened it; the reader starts over from CURRENT."""


def _hold_generation(path: Path) -> int | None:
    """The reader's shared flock on a generation's manifest, taken so that cleanup (which deletes
    a generation only while holding an exclusive flock on the same file) cannot remove it under
    the reader. Raises _GenerationGone when the file is gone, is being deleted, or was replaced
    after it was opened; None where the filesystem has no flock (nothing to coordinate with)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError as exc:
        raise _GenerationGone(str(path)) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise _GenerationGone(str(path)) from exc
        return None
    try:
        still_there = os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        still_there = False
    if not still_there:
        os.close(fd)
        raise _GenerationGone(str(path))
    return fd


def _hold_shared(path: Path) -> int | None:
    """A shared flock on a generation file for the reader's lifetime (cleanup skips held generations)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


class ReusableVectors:
    """The vectors of a published generation of ANOTHER index schema, for reuse by the next build.

    Why: a woods upgrade that changes the index schema must rebuild the index, but the embedding
    texts and the model may be unchanged — re-embedding a large repository costs minutes. Only the
    `chunks` table's text hashes and plan keys and the FAISS file are read (both unchanged since
    schema 2); anything else about the old generation is ignored. Read-only, like every reader.
    """

    def __init__(self, generation: Path, manifest: Manifest) -> None:
        self.manifest = manifest
        self._generation = generation
        self._reader_lock = _hold_shared(generation / MANIFEST_FILE)
        # Schema 4 keeps chunks beside the vectors; earlier schemas in the metadata database.
        chunks = generation / CHUNKS_FILE
        database = chunks if chunks.is_file() else generation / METADATA_FILE
        self._conn = sqlite3.connect(sqlite_uri(database), uri=True)

    @classmethod
    def open(cls, store_dir: Path) -> ReusableVectors:
        generation = read_current(store_dir)
        return cls(generation, read_manifest(generation, check_schema=False))

    @property
    def has_vectors(self) -> bool:
        return self.manifest.has_vectors

    def chunks(self) -> list[ChunkRow]:
        from woods.store.metadata import ChunkRow

        try:
            rows = self._conn.execute(
                "SELECT embedding_id, vector_id, unit_key, chunk_index, chunk_type, line_start, line_end, "
                "text_sha256, plan_key FROM chunks ORDER BY vector_id"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise CorruptIndexError(f"{self._generation}: chunks unreadable ({exc})") from exc
        return [ChunkRow(*row) for row in rows]

    def vectors_for(self, vector_ids: list[int]) -> Any:
        from woods.store.vectors import FaissVectorStore

        path = self._generation / VECTORS_FILE
        try:
            store = FaissVectorStore(path, lambda _ids: {}, self.manifest.dimension)
        except (RuntimeError, ValueError) as exc:
            raise CorruptIndexError(f"{path} is not a readable FAISS index ({exc})") from exc
        try:
            return store.vectors_for(vector_ids)
        except KeyError as exc:  # chunk rows name vectors the file does not hold
            raise CorruptIndexError(f"{path} lacks vectors its chunks name ({exc})") from exc

    def close(self) -> None:
        self._conn.close()
        if self._reader_lock is not None:
            os.close(self._reader_lock)
            self._reader_lock = None


class StoreLock:
    """Exclusive lock of one store directory for a writer (`woods index`).

    flock is released by the kernel when the holder dies, so a lock left by a killed process is
    simply taken over; `wait` seconds of polling before LockTimeoutError.
    """

    POLL_SECONDS = 0.2

    def __init__(self, store_dir: Path, wait: float) -> None:
        self.path = store_dir / LOCK_FILE
        self.wait = wait
        self._fd: int | None = None

    def __enter__(self) -> StoreLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + max(self.wait, 0.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise LockTimeoutError(
                        f"another `woods index` is writing {self.path.parent} (waited {self.wait:g}s); "
                        "try again later or pass a longer --wait"
                    ) from None
                time.sleep(self.POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "locked_at": time.time()}).encode())
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def writer_running(store_dir: Path) -> bool:
    """True when a `woods index` holds the store lock right now (a non-blocking probe that writes
    nothing: a shared flock taken and released at once)."""
    try:
        fd = os.open(store_dir / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def new_build_dir(store_dir: Path) -> Path:
    """A fresh private directory to write the next generation into."""
    path = store_dir / f"{BUILD_PREFIX}{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    path.mkdir(parents=True)
    return path


def publish(store_dir: Path, build_dir: Path) -> Path:
    """Move a finished build into generations/ and point CURRENT at it (the commit point)."""
    for name in os.listdir(build_dir):
        with (build_dir / name).open("rb") as handle:
            os.fsync(handle.fileno())
    fsync_dir(build_dir)
    generations = store_dir / GENERATIONS_DIR
    generations.mkdir(exist_ok=True)
    name = build_dir.name[len(BUILD_PREFIX) :]
    target = generations / name
    os.replace(build_dir, target)
    fsync_dir(generations)
    atomic_write_text(store_dir / CURRENT_FILE, json.dumps({"generation": name}) + "\n")
    return target


def newest_vector_generation(store_dir: Path, fingerprint: str | None = None) -> Path | None:
    """The newest published generation that has vectors (of the embedder with `fingerprint`, when
    given; any schema), or None.

    Why: an incremental run reuses the vectors of unchanged texts, and only vectors of the very
    same embedder can be reused: after a phase 2 was interrupted, or when the current generation
    holds another embedder's vectors (the static base under a contextual one, or the reverse), the
    ones to reuse are in an older generation, which cleanup keeps. Generation names start with
    their build time, so the greatest name is the newest."""
    generations = store_dir / GENERATIONS_DIR
    if not generations.is_dir():
        return None
    for path in sorted((p for p in generations.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True):
        try:
            manifest = read_manifest(path, check_schema=False)
        except CorruptIndexError:
            continue
        if manifest.has_vectors and (fingerprint is None or manifest.embedder.get("fingerprint") == fingerprint):
            return path
    return None


def _newest_per_embedder(store_dir: Path) -> set[str]:
    """The newest vector-complete generation of each embedder (by fingerprint)."""
    newest: dict[str, str] = {}
    generations = store_dir / GENERATIONS_DIR
    for path in sorted((p for p in generations.iterdir() if p.is_dir()), key=lambda p: p.name):
        try:
            manifest = read_manifest(path, check_schema=False)
        except CorruptIndexError:
            continue
        if manifest.has_vectors:
            newest[str(manifest.embedder.get("fingerprint"))] = path.name
    return set(newest.values())


def cleanup(store_dir: Path) -> list[str]:
    """Remove abandoned builds and old generations no reader holds (call with the lock held).
    Kept: the current generation, the newest previous one, and the newest vector-complete one of
    each embedder (the static base's and the contextual one's vectors are reused separately)."""
    removed: list[str] = []
    for entry in sorted(store_dir.glob(f"{BUILD_PREFIX}*")):
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry.name)
    generations = store_dir / GENERATIONS_DIR
    if not generations.is_dir():
        return removed
    try:
        current = read_current(store_dir).name
    except (IndexNotFoundError, CorruptIndexError):
        current = None
    keep = {current, *_newest_per_embedder(store_dir)}
    older = sorted((p for p in generations.iterdir() if p.is_dir() and p.name not in keep), key=lambda p: p.name)
    for path in older[: max(0, len(older) - KEEP_PREVIOUS_GENERATIONS)]:
        held = _lock_for_removal(path / MANIFEST_FILE)
        if held is False:
            continue  # a reader holds it
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            if isinstance(held, int):
                os.close(held)
        removed.append(path.name)
    return removed


def _lock_for_removal(path: Path) -> int | bool:
    """An exclusive flock on a generation's manifest, held while the generation is deleted (a
    reader's shared flock then fails and the reader starts over from CURRENT). False when a reader
    holds the generation; True when there is no manifest to lock (nothing can be reading it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    return fd
