"""PostgreSQL backend, write side: the writer's lock, publishing a built generation, cleanup.

Why "build locally, publish to the server": the index builder stays one code path. A PostgreSQL
run builds the generation exactly as a local run does, into a private staging directory (SQLite
with its FTS5 index, FAISS, the manifest), then `publish` copies it into the server:

1. in ONE transaction: register the generation, create its tables (`woods.g<id>_*`), COPY every
   row (vectors in binary), copy the generation's lexical postings as they are (FTS5's own counts,
   `woods.store.postings`; a generation written before them gets per-term rows grouped from
   `fts5vocab`, scored in SQL), build the
   indexes (HNSW for generations above `EXACT_SEARCH_MAX_CHUNKS`), ANALYZE, and move the
   repository's `current_generation` pointer;
2. COMMIT — the commit point. Readers read through the pointer (MVCC), so they see the old
   generation or the new one, never a mix, and a crash or kill before the commit leaves nothing
   behind (DDL is transactional: the half-written tables vanish with the transaction).

Generations get tables of their own rather than rows tagged with a generation id in shared tables:
dropping an old generation is then a catalog operation (DROP TABLE, instant, no dead tuples to
vacuum) instead of a DELETE of every row, and each generation's HNSW index covers exactly its
vectors.

The writer's lock is `pg_advisory_lock` on the repository (`REPO_LOCK_CLASS`, hash of the name),
held by the writer's session for the whole run: a second indexer of the same repository waits up
to `--wait` seconds, then LockTimeoutError; writers of other repositories and all readers are
never blocked; a killed indexer's session ends and the server releases the lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from woods.errors import IndexingError, IndexNotFoundError, InputError, LockTimeoutError
from woods.store import index as layout
from woods.store.index import KEEP_PREVIOUS_GENERATIONS, ReusableVectors
from woods.store.pg_connect import (
    SCHEMA,
    connect,
    first_line,
    missing_pgvector,
    redact,
    register_vectors,
    vector_oid,
)
from woods.store.postgres import (
    EXACT_SEARCH_MAX_CHUNKS,
    GENERATION_LOCK_CLASS,
    ORG_GENERATIONS,
    PG_LAYOUT_VERSION,
    REPO_LOCK_CLASS,
    PostgresStores,
    check_layout,
    lock_key,
    org_table,
    schema_present,
    table,
)
from woods.store.sqlite_uri import sqlite_uri

# Serialises creating the shared woods tables (two first indexers at once): a transaction-level
# advisory lock with a key no repository hash can take (class REPO_LOCK_CLASS + 1).
DDL_LOCK = (REPO_LOCK_CLASS + 2, 0)
# Seconds between attempts to take a repository's writer lock (as the local flock poll).
LOCK_POLL_SECONDS = 0.2
# pgvector's HNSW defaults (m 16, ef_construction 64): the recall bench/README.md measures.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
# Memory an HNSW build may use: 1M 384-d vectors need ~2 GB to build in memory (the graph does
# not fit otherwise and pgvector warns and slows down); the server caps it by its own settings.
HNSW_BUILD_MEMORY = "2GB"
# Where PostgreSQL runs stage their local build (removed after publishing; a killed run's
# directory is removed by the next run, found by its dead process id).
STAGING_DIRNAME = "woods-pg-staging"

_SHARED_SCHEMA = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
CREATE TABLE IF NOT EXISTS {SCHEMA}.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {SCHEMA}.repos (
    name text COLLATE "C" PRIMARY KEY,
    current_generation bigint,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.generations (
    id bigserial PRIMARY KEY,
    repo text COLLATE "C" NOT NULL,
    name text NOT NULL,
    manifest text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    lexical_rows bigint NOT NULL DEFAULT 0,
    lexical_tokens bigint NOT NULL DEFAULT 0,
    units bigint NOT NULL DEFAULT 0,
    chunks bigint NOT NULL DEFAULT 0,
    hnsw boolean NOT NULL DEFAULT false
);
INSERT INTO {SCHEMA}.meta(key, value) VALUES ('layout_version', '{PG_LAYOUT_VERSION}') ON CONFLICT (key) DO NOTHING;
"""

# One generation's tables; {p} is `woods.g<id>_`, {dim} the embedder's dimension. Text compared or
# sorted is COLLATE "C" (byte order), as SQLite's BINARY: the same orders on both backends.
_GENERATION_TABLES = """
CREATE TABLE {p}files (
    path text COLLATE "C" PRIMARY KEY, language text COLLATE "C" NOT NULL, sha256 text NOT NULL, size bigint NOT NULL,
    mtime_ns bigint NOT NULL, unit_count integer NOT NULL, warnings text NOT NULL
);
CREATE TABLE {p}extractions (path text COLLATE "C" PRIMARY KEY, data text NOT NULL);
CREATE TABLE {p}units (
    rowid integer PRIMARY KEY, key text COLLATE "C" NOT NULL, identifier text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL, type text COLLATE "C" NOT NULL, language text COLLATE "C" NOT NULL,
    file_path text COLLATE "C" NOT NULL, line_start integer NOT NULL, line_end integer NOT NULL,
    parent text COLLATE "C", stable_id text COLLATE "C" NOT NULL, source_hash text NOT NULL,
    pagerank double precision NOT NULL, pagerank_percentile double precision NOT NULL, data text NOT NULL,
    haystack text NOT NULL, fields text NOT NULL, lexical_length integer NOT NULL
);
CREATE TABLE {p}chunks (
    vector_id integer PRIMARY KEY, embedding_id text COLLATE "C" NOT NULL, unit_key text COLLATE "C" NOT NULL,
    chunk_index integer NOT NULL, chunk_type text NOT NULL, line_start integer NOT NULL, line_end integer NOT NULL,
    text_sha256 text NOT NULL, plan_key text NOT NULL, embedding vector({dim}) NOT NULL
);
CREATE TABLE {p}edges (
    source_key text COLLATE "C" NOT NULL, source text COLLATE "C" NOT NULL, target text COLLATE "C" NOT NULL,
    target_key text COLLATE "C", via text COLLATE "C" NOT NULL, ordinal integer NOT NULL
);
"""
# The lexical index of a generation written with postings (every generation woods writes now):
# the local index's postings as they are (`woods.store.postings`: per token its rows and per-column
# counts as two blobs) and every row's length. A reader scores them with the local backend's own
# function (`postings.bm25_scores`): same lists by construction, and a query reads a few blobs
# instead of joining every row of its words. Blobs are stored uncompressed (EXTERNAL): they are
# dense integers, and a reader should not pay for decompression.
_POSTINGS_TABLES = """
CREATE TABLE {p}postings (
    term text COLLATE "C" PRIMARY KEY, rows integer NOT NULL, wide boolean NOT NULL, docs bytea NOT NULL,
    tfs bytea NOT NULL
);
ALTER TABLE {p}postings ALTER COLUMN docs SET STORAGE EXTERNAL, ALTER COLUMN tfs SET STORAGE EXTERNAL;
CREATE TABLE {p}lengths (id integer PRIMARY KEY, data bytea NOT NULL);
ALTER TABLE {p}lengths ALTER COLUMN data SET STORAGE EXTERNAL;
"""
# A generation written before the postings (a local build of an older woods) gets the term
# statistics one row per (term, unit), scored in SQL as before.
_TERMS_TABLE = """
CREATE TABLE {p}terms (
    term text COLLATE "C" NOT NULL, unit_row integer NOT NULL,
    tf0 integer NOT NULL, tf1 integer NOT NULL, tf2 integer NOT NULL, tf3 integer NOT NULL, tf4 integer NOT NULL
);
"""

_GENERATION_INDEXES = """
CREATE UNIQUE INDEX ON {p}units (key);
CREATE INDEX ON {p}units (identifier);
CREATE INDEX ON {p}units (name);
CREATE INDEX ON {p}units (type);
CREATE INDEX ON {p}units (file_path, line_start);
CREATE INDEX ON {p}units (stable_id);
CREATE UNIQUE INDEX ON {p}chunks (embedding_id);
CREATE INDEX ON {p}chunks (unit_key, chunk_index);
CREATE INDEX ON {p}edges (source);
CREATE INDEX ON {p}edges (target);
"""
_TERMS_INDEX = """CREATE INDEX ON {p}terms (term);"""

# Every table a generation may have (dropped together; IF EXISTS: a generation has postings or terms).
_GENERATION_TABLE_NAMES = ("files", "extractions", "units", "chunks", "edges", "terms", "postings", "lengths")


def _crash_test_pause(phase: str) -> None:
    """Crash tests set WOODS_TEST_PAUSE=publish to stop a publish inside its transaction (rows
    copied, pointer not moved) and kill the process there (the indexing side's
    `crash_test_pause`, which the store layer may not import)."""
    if os.environ.get("WOODS_TEST_PAUSE") == phase:
        sys.stderr.write(f"woods-test-paused:{phase}\n")
        sys.stderr.flush()
        time.sleep(float(os.environ.get("WOODS_TEST_PAUSE_SECONDS", "60")))


def ensure_schema(conn: Any, url: str) -> None:
    """Create the extension and the shared woods tables when missing (writers only)."""
    psycopg = __import__("psycopg")
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", DDL_LOCK)
            if vector_oid(conn) is None:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            if not schema_present(conn):
                conn.execute(_SHARED_SCHEMA)
    except psycopg.errors.InsufficientPrivilege as exc:
        if vector_oid(conn) is None:
            raise missing_pgvector(url) from None
        raise InputError(
            f"the role at {redact(url)} may not create the woods tables ({first_line(exc)}); "
            "grant it CREATE on the database or create the schema `woods` for it"
        ) from None
    except psycopg.errors.FeatureNotSupported as exc:
        raise missing_pgvector(url) from exc
    except psycopg.errors.UndefinedFile:
        raise missing_pgvector(url) from None
    check_layout(conn, url)


class PostgresLock:
    """The writer's lock of one repository: a session-level `pg_advisory_lock`, polled every
    LOCK_POLL_SECONDS for up to `wait` seconds, then LockTimeoutError (the local `--wait`)."""

    def __init__(self, conn: Any, repo: str, wait: float) -> None:
        self._conn = conn
        self.repo = repo
        self.wait = wait
        self._held = False

    def __enter__(self) -> PostgresLock:
        deadline = time.monotonic() + max(self.wait, 0.0)
        key = (REPO_LOCK_CLASS, lock_key(self.repo))
        while not self._conn.execute("SELECT pg_try_advisory_lock(%s, %s)", key).fetchone()[0]:
            if time.monotonic() >= deadline:
                raise LockTimeoutError(
                    f"another `woods index` is writing repository {self.repo!r} (waited {self.wait:g}s); "
                    "try again later or pass a longer --wait"
                )
            time.sleep(LOCK_POLL_SECONDS)
        self._held = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._held and not self._conn.closed:
            self._conn.execute("SELECT pg_advisory_unlock(%s, %s)", (REPO_LOCK_CLASS, lock_key(self.repo)))
        self._held = False


class PostgresTarget:
    """A repository of a PostgreSQL store as a build target (see the module docstring).

    One connection per run: it holds the repository's advisory lock and runs the publish
    transaction. The generation is built in a private staging directory and removed after it is
    published (or by the next run, when this one was killed).
    """

    def __init__(self, url: str, repo: str) -> None:
        self.url = url
        self.repo = repo
        self._conn: Any = None
        self._staging: Path | None = None

    def describe(self) -> str:
        return f"{redact(self.url)} (repo {self.repo})"

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._conn = connect(self.url)
        return self._conn

    def prepare(self) -> None:
        ensure_schema(self._connection(), self.url)

    @contextlib.contextmanager
    def lock(self, wait: float) -> Iterator[object]:
        conn = self._connection()
        ensure_schema(conn, self.url)
        try:
            with PostgresLock(conn, self.repo, wait) as held:
                yield held
        finally:
            self._close()

    def _close(self) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None
        if self._conn is not None and not self._conn.closed:
            self._conn.close()
        self._conn = None

    def open_previous(self) -> PostgresStores:
        return PostgresStores.open(self.url, self.repo)

    def open_reusable(self) -> ReusableVectors:
        # A PostgreSQL generation of another layout is not read for vectors: `woods index` then
        # embeds everything once (said in docs/postgres.md).
        raise IndexNotFoundError(f"no reusable vectors for {self.repo!r} at {redact(self.url)}")

    def new_build_dir(self) -> Path:
        if self._staging is None:
            root = Path(tempfile.gettempdir()) / STAGING_DIRNAME
            root.mkdir(parents=True, exist_ok=True)
            self._staging = root / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
            self._staging.mkdir()
        return layout.new_build_dir(self._staging)

    def publish(self, build: Path) -> str:
        try:
            return publish_generation(self._connection(), self.url, self.repo, build)
        finally:
            shutil.rmtree(build, ignore_errors=True)

    def cleanup(self) -> None:
        _sweep_staging()
        conn = self._connection()
        if schema_present(conn):
            drop_old_generations(conn, self.repo)


def _sweep_staging() -> None:
    """Remove staging directories of runs whose process is gone (a killed indexer's)."""
    root = Path(tempfile.gettempdir()) / STAGING_DIRNAME
    if not root.is_dir():
        return
    for entry in sorted(root.iterdir()):
        pid_text = entry.name.split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            shutil.rmtree(entry, ignore_errors=True)
        except PermissionError:
            continue  # another user's live process


def drop_old_generations(conn: Any, repo: str) -> list[int]:
    """Drop the repository's generations other than the current one and the KEEP_PREVIOUS newest
    previous ones, skipping any a reader holds (its shared advisory lock makes our exclusive
    try-lock fail). Returns the ids dropped."""
    row = conn.execute(f"SELECT current_generation FROM {SCHEMA}.repos WHERE name = %s", (repo,)).fetchone()
    current = None if row is None else row[0]
    ids = [
        int(r[0])
        for r in conn.execute(
            f"SELECT id FROM {SCHEMA}.generations WHERE repo = %s AND id IS DISTINCT FROM %s ORDER BY id", (repo, current)
        ).fetchall()
    ]
    dropped = []
    for gen in ids[: max(0, len(ids) - KEEP_PREVIOUS_GENERATIONS)]:
        if not conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (GENERATION_LOCK_CLASS, gen)).fetchone()[0]:
            continue
        try:
            with conn.transaction():
                for name in _GENERATION_TABLE_NAMES:
                    conn.execute(f"DROP TABLE IF EXISTS {table(gen, name)}")
                conn.execute(f"DELETE FROM {SCHEMA}.generations WHERE id = %s", (gen,))
            dropped.append(gen)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", (GENERATION_LOCK_CLASS, gen))
    return dropped


# One refresher of the organisation's vector index at a time (a transaction-level advisory lock
# with a key no repository hash takes: class REPO_LOCK_CLASS + 3).
_ORG_LOCK = (REPO_LOCK_CLASS + 3, 0)
# Above this share of the index's rows new, the HNSW index is dropped and built again in bulk
# (pgvector builds 2-3x faster than it inserts one row at a time).
ORG_REBUILD_SHARE = 0.3


def refresh_org_vectors(conn: Any, url: str) -> dict[str, int]:
    """Bring the organisation's vector index (`woods.org_vectors_d<dim>`, see
    `woods.store.postgres`) up to the repositories' current generations: add the vectors of
    generations it does not cover yet and remove those of generations no longer current and not
    pinned by a reader. In one transaction: readers see the index before or after. Returns the
    generations added and removed and the rows added."""
    psycopg = __import__("psycopg")
    added = removed = rows = 0
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", _ORG_LOCK)
            conn.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.{ORG_GENERATIONS} (gen bigint PRIMARY KEY, "
                         "dimension integer NOT NULL, chunks bigint NOT NULL)")
            current: dict[int, tuple[int, int]] = {}
            for gen, manifest, chunks in conn.execute(
                f"SELECT g.id, g.manifest, g.chunks FROM {SCHEMA}.repos r JOIN {SCHEMA}.generations g "
                "ON g.id = r.current_generation WHERE g.chunks > 0"
            ).fetchall():
                current[int(gen)] = (int(json.loads(manifest)["embedder"]["dimension"]), int(chunks))
            covered = {int(g): int(d) for g, d in conn.execute(
                f"SELECT gen, dimension FROM {SCHEMA}.{ORG_GENERATIONS}").fetchall()}
            for gen, dimension in sorted(covered.items()):
                if gen in current:
                    continue
                # A reader pinning the generation holds a shared lock on it: keep its vectors.
                if not conn.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", (GENERATION_LOCK_CLASS, gen)).fetchone()[0]:
                    continue
                conn.execute(f"DELETE FROM {SCHEMA}.{org_table(dimension)} WHERE gen = %s", (gen,))
                conn.execute(f"DELETE FROM {SCHEMA}.{ORG_GENERATIONS} WHERE gen = %s", (gen,))
                removed += 1
            fresh = {gen: value for gen, value in current.items() if gen not in covered}
            for dimension in sorted({d for d, _n in fresh.values()}):
                gens = sorted(g for g, (d, _n) in fresh.items() if d == dimension)
                name = org_table(dimension)
                conn.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.{name} (gen bigint NOT NULL, vector_id integer NOT NULL, "
                             f"embedding vector({dimension}) NOT NULL)")
                conn.execute(f"CREATE INDEX IF NOT EXISTS {name}_gen ON {SCHEMA}.{name} (gen)")
                present = int(conn.execute(f"SELECT count(*) FROM {SCHEMA}.{name}").fetchone()[0])
                new_rows = sum(fresh[g][1] for g in gens)
                rebuild = new_rows > ORG_REBUILD_SHARE * (present + new_rows)
                if rebuild:
                    conn.execute(f"DROP INDEX IF EXISTS {SCHEMA}.{name}_hnsw")
                for gen in gens:
                    conn.execute(f"INSERT INTO {SCHEMA}.{name} (gen, vector_id, embedding) "
                                 f"SELECT %s, vector_id, embedding FROM {table(gen, 'chunks')}", (gen,))
                    conn.execute(f"INSERT INTO {SCHEMA}.{ORG_GENERATIONS} (gen, dimension, chunks) VALUES (%s, %s, %s)",
                                 (gen, dimension, fresh[gen][1]))
                conn.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
                conn.execute(f"CREATE INDEX IF NOT EXISTS {name}_hnsw ON {SCHEMA}.{name} USING hnsw (embedding vector_ip_ops) "
                             f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})")
                conn.execute(f"ANALYZE {SCHEMA}.{name}")
                added += len(gens)
                rows += new_rows
    except psycopg.Error as exc:
        raise IndexingError(f"refreshing the organisation's vector index at {redact(url)} failed: {first_line(exc)}") from exc
    return {"added": added, "removed": removed, "rows": rows}


def publish_generation(conn: Any, url: str, repo: str, build: Path) -> str:
    """Copy the finished local generation in `build` into the server and make it the
    repository's current generation, in one transaction (see the module docstring)."""
    psycopg = __import__("psycopg")
    manifest_text = (build / layout.MANIFEST_FILE).read_text(encoding="utf-8")
    manifest = json.loads(manifest_text)
    name = build.name[len(layout.BUILD_PREFIX) :] if build.name.startswith(layout.BUILD_PREFIX) else build.name
    dimension = int(manifest["embedder"]["dimension"])
    oid = vector_oid(conn)
    if oid is None:
        raise missing_pgvector(url)
    register_vectors(conn, oid)
    source = sqlite3.connect(sqlite_uri(build / layout.METADATA_FILE, immutable=False), uri=True)
    try:
        with conn.transaction():
            gen = int(
                conn.execute(
                    f"INSERT INTO {SCHEMA}.generations(repo, name, manifest) VALUES (%s, %s, %s) RETURNING id",
                    (repo, name, manifest_text),
                ).fetchone()[0]
            )
            prefix = table(gen, "")
            conn.execute(_GENERATION_TABLES.format(p=prefix, dim=dimension))
            stats = _copy_generation(conn, source, build, gen, dimension, oid)
            _crash_test_pause("publish")
            conn.execute(_GENERATION_INDEXES.format(p=prefix))
            if not stats["postings"]:
                conn.execute(_TERMS_INDEX.format(p=prefix))
            hnsw = stats["chunks"] > EXACT_SEARCH_MAX_CHUNKS
            if hnsw:
                conn.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
                conn.execute(
                    f"CREATE INDEX ON {table(gen, 'chunks')} USING hnsw (embedding vector_ip_ops) "
                    f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
                )
            for table_name in _GENERATION_TABLE_NAMES:
                if table_name not in ("terms", "postings", "lengths") or (table_name == "terms") != bool(stats["postings"]):
                    conn.execute(f"ANALYZE {table(gen, table_name)}")
            conn.execute(
                f"UPDATE {SCHEMA}.generations SET lexical_rows = %s, lexical_tokens = %s, units = %s, chunks = %s, "
                "hnsw = %s WHERE id = %s",
                (stats["rows"], stats["tokens"], stats["units"], stats["chunks"], hnsw, gen),
            )
            conn.execute(
                f"INSERT INTO {SCHEMA}.repos(name, current_generation) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE "
                "SET current_generation = EXCLUDED.current_generation, updated_at = now()",
                (repo, gen),
            )
    except psycopg.Error as exc:
        raise IndexingError(f"publishing to PostgreSQL at {redact(url)} failed: {first_line(exc)}") from exc
    finally:
        source.close()
    return name


def _copy_generation(
    conn: Any, source: sqlite3.Connection, build: Path, gen: int, dimension: int, vector_type: int
) -> dict[str, int]:
    """COPY the generation's rows from the local build; returns its counts and lexical statistics."""
    from woods.store.postings import Postings  # numpy: only a publishing process loads it

    def copy_rows(name: str, columns: str, rows: Any) -> None:
        with conn.cursor().copy(f"COPY {table(gen, name)} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    copy_rows("files", "path, language, sha256, size, mtime_ns, unit_count, warnings",
              source.execute("SELECT path, language, sha256, size, mtime_ns, unit_count, warnings FROM files"))
    copy_rows("extractions", "path, data", source.execute("SELECT path, data FROM extractions"))
    copy_rows("edges", "source_key, source, target, target_key, via, ordinal",
              source.execute("SELECT source_key, source, target, target_key, via, ordinal FROM edges"))

    postings = Postings.open(source)
    if postings is not None:  # the writer's postings (FTS5's own counts): copied as they are
        conn.execute(_POSTINGS_TABLES.format(p=table(gen, "")))
        with conn.cursor().copy(
            f"COPY {table(gen, 'postings')} (term, rows, wide, docs, tfs) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "int4", "bool", "bytea", "bytea"])
            for term, rows, wide, docs, tfs in source.execute("SELECT term, rows, wide, docs, tfs FROM lexical_postings"):
                copy.write_row((term, rows, bool(wide), docs, tfs))
        row_lengths = postings.row_lengths()
        conn.execute(f"INSERT INTO {table(gen, 'lengths')} (id, data) VALUES (0, %s)", (row_lengths.tobytes(),))
        sizes = {rowid: n for rowid, n in enumerate(row_lengths.tolist()) if n}
        stats = _copy_units_and_chunks(conn, source, build, gen, dimension, vector_type, postings.rows,
                                       postings.tokens, sizes, copy_rows)
        return {**stats, "postings": 1}
    # A generation written before the postings: the lexical index as FTS5 holds it, every token
    # instance (stemmed, per column), grouped here.
    conn.execute(_TERMS_TABLE.format(p=table(gen, "")))
    source.execute("CREATE VIRTUAL TABLE temp.lexical_instances USING fts5vocab(main, 'lexical', 'instance')")
    columns = {"name": 0, "qualifier": 1, "path": 2, "doc": 3, "body": 4}
    lengths: dict[int, int] = {}
    tokens = 0

    def term_rows() -> Iterator[tuple[Any, ...]]:
        nonlocal tokens
        current: tuple[str, int] | None = None
        tf = [0, 0, 0, 0, 0]
        for term, doc, col, count in source.execute(
            "SELECT term, doc, col, count(*) FROM temp.lexical_instances GROUP BY term, doc, col ORDER BY term, doc"
        ):
            key = (str(term), int(doc))
            if key != current:
                if current is not None:
                    yield (current[0], current[1], *tf)
                current, tf = key, [0, 0, 0, 0, 0]
            tf[columns[str(col)]] += int(count)
            lengths[key[1]] = lengths.get(key[1], 0) + int(count)
            tokens += int(count)
        if current is not None:
            yield (current[0], current[1], *tf)

    copy_rows("terms", "term, unit_row, tf0, tf1, tf2, tf3, tf4", term_rows())
    rows = int(source.execute("SELECT count(*) FROM lexical_docsize").fetchone()[0])
    stats = _copy_units_and_chunks(conn, source, build, gen, dimension, vector_type, rows, tokens, lengths, copy_rows)
    return {**stats, "postings": 0}


def _copy_units_and_chunks(
    conn: Any, source: sqlite3.Connection, build: Path, gen: int, dimension: int, vector_type: int, rows: int,
    tokens: int, lengths: dict[int, int], copy_rows: Callable[[str, str, Any], None],
) -> dict[str, int]:
    """COPY the units (with each row's lexical length) and the chunks with their vectors."""
    from woods.store.vectors import FaissVectorStore

    # Each unit's top-level fields as SQLite's json_each reads them (what keyword matching sees).
    fields: dict[int, list[tuple[str, str | None]]] = {}
    for rowid, key, text in source.execute(
        "SELECT u.rowid, j.key, CAST(CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE j.value END AS TEXT) "
        "FROM units u, json_each(u.haystack) j ORDER BY u.rowid, j.id"
    ):
        fields.setdefault(int(rowid), []).append((str(key), text))
    units = 0

    def unit_rows() -> Iterator[tuple[Any, ...]]:
        nonlocal units
        for row in source.execute(
            "SELECT rowid, key, identifier, name, type, language, file_path, line_start, line_end, parent, stable_id, "
            "source_hash, pagerank, pagerank_percentile, data, haystack FROM units ORDER BY rowid"
        ):
            units += 1
            rowid = int(row[0])
            yield (*row, json.dumps(fields.get(rowid, []), ensure_ascii=False), lengths.get(rowid, 0))

    copy_rows(
        "units",
        "rowid, key, identifier, name, type, language, file_path, line_start, line_end, parent, stable_id, "
        "source_hash, pagerank, pagerank_percentile, data, haystack, fields, lexical_length",
        unit_rows(),
    )

    chunk_rows = source.execute(
        "SELECT vector_id, embedding_id, unit_key, chunk_index, chunk_type, line_start, line_end, text_sha256, plan_key "
        "FROM chunks ORDER BY vector_id"
    ).fetchall()
    vectors = FaissVectorStore(build / layout.VECTORS_FILE, lambda _ids: {}, dimension)
    matrix = vectors.vectors_for([int(r[0]) for r in chunk_rows])
    with conn.cursor().copy(
        f"COPY {table(gen, 'chunks')} (vector_id, embedding_id, unit_key, chunk_index, chunk_type, line_start, "
        "line_end, text_sha256, plan_key, embedding) FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["int4", "text", "text", "int4", "text", "int4", "int4", "text", "text", vector_type])
        for row, vector in zip(chunk_rows, matrix, strict=True):
            copy.write_row((*row, vector))
    return {"rows": rows, "tokens": tokens, "units": units, "chunks": len(chunk_rows)}


__all__ = [
    "PostgresLock",
    "PostgresTarget",
    "drop_old_generations",
    "ensure_schema",
    "publish_generation",
    "refresh_org_vectors",
]
