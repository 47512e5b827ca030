"""The resume cache of phase 2: vectors written durably batch by batch, and the progress file.

Why: embedding is what an index run costs (minutes on a large repository). A phase 2 that is
interrupted — Ctrl-C, kill -9, a closed laptop, an MCP server that stops — must not lose the
vectors it already computed: the next run reads them back instead of embedding those texts again.

Guarantees:
- A batch is committed (SQLite WAL, one transaction per batch) before the run goes on, so every
  batch that finished survives the process being killed at any later moment.
- Entries are keyed by the SHA-256 of the embedding text, in a file named after (and checked
  against) the embedder's fingerprint: vectors of another model or precision are never read; a
  file of another fingerprint is deleted when a run opens the cache (garbage collection), and the
  whole cache is deleted once a vector-complete generation holding its vectors is published.
- Only the writer (holding the store lock) opens the database. Readers (`woods status`) read just
  the small progress file, which is replaced atomically.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from woods.store.index import Manifest, atomic_write_text, writer_running

CACHE_DIR = "embedding"
PROGRESS_FILE = "progress.json"
# The progress file is rewritten at most this often (it is fsynced: once a second is cheap next
# to batches that take a second or more, and `woods status` needs no finer grain).
PROGRESS_INTERVAL_SECONDS = 1.0
# SQLite limits host parameters per statement; stay far below it.
_LOOKUP_BATCH = 900


def cache_dir(store_dir: Path) -> Path:
    return store_dir / CACHE_DIR


def _cache_name(fingerprint: str) -> str:
    return f"vectors-{hashlib.sha256(fingerprint.encode()).hexdigest()[:16]}.sqlite3"


class ResumeCache:
    """Text hash → vector for one embedder fingerprint, durable per batch (see the module doc)."""

    def __init__(self, store_dir: Path, fingerprint: str, dimension: int) -> None:
        self.directory = cache_dir(store_dir)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.fingerprint = fingerprint
        self.dimension = dimension
        self.path = self.directory / _cache_name(fingerprint)
        self.removed_foreign = self._collect_garbage()
        self._conn = self._open()

    def _collect_garbage(self) -> list[str]:
        """Delete the caches of other embedders: their vectors can never be used by this one."""
        removed: list[str] = []
        for entry in sorted(self.directory.glob("vectors-*.sqlite3*")):
            if not entry.name.startswith(self.path.name):
                entry.unlink(missing_ok=True)
                removed.append(entry.name)
        return removed

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed batch survives the process dying (kill -9); only an
            # operating-system crash may lose the last batches, which are then embedded again.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute("CREATE TABLE IF NOT EXISTS vectors (text_sha256 TEXT PRIMARY KEY, vector BLOB NOT NULL)")
            stored = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            expected = {"fingerprint": self.fingerprint, "dimension": str(self.dimension)}
            if stored and stored != expected:  # a hash collision of names, or a hand-edited file
                conn.execute("DELETE FROM vectors")
                conn.execute("DELETE FROM meta")
                stored = {}
            if not stored:
                conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(expected.items()))
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def get_many(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among `hashes` (rows of the wrong size are ignored, never trusted)."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(wanted), _LOOKUP_BATCH):
            part = wanted[start : start + _LOOKUP_BATCH]
            rows = self._conn.execute(
                f"SELECT text_sha256, vector FROM vectors WHERE text_sha256 IN ({','.join('?' * len(part))})", part
            )
            for text_hash, blob in rows:
                vector = np.frombuffer(blob, dtype="<f4")
                if vector.shape == (self.dimension,):
                    found[str(text_hash)] = vector.astype(np.float32)
        return found

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store one finished batch and commit it before returning."""
        matrix = np.asarray(vectors, dtype="<f4")
        self._conn.executemany(
            "INSERT OR REPLACE INTO vectors(text_sha256, vector) VALUES (?, ?)",
            [(h, matrix[i].tobytes()) for i, h in enumerate(hashes)],
        )
        self._conn.commit()

    def clear(self) -> None:
        """Forget every cached vector (a `--full` run reuses nothing)."""
        self._conn.execute("DELETE FROM vectors")
        self._conn.commit()

    def close(self) -> None:
        self._conn.close()

    def discard(self) -> None:
        """Delete the cache (its vectors are now in a published generation)."""
        self._conn.close()
        for entry in sorted(self.directory.glob(f"{self.path.name}*")):
            entry.unlink(missing_ok=True)
        clear_progress(self.directory.parent)


class ProgressFile:
    """Writes `embedding/progress.json` — generation, embedded and total chunks — for `woods status`."""

    def __init__(self, store_dir: Path, generation: str, total: int) -> None:
        self.path = cache_dir(store_dir) / PROGRESS_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.generation = generation
        self.total = total
        self._written = 0.0

    def update(self, embedded: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._written < PROGRESS_INTERVAL_SECONDS:
            return
        self._written = now
        payload = {
            "generation": self.generation,
            "embedded": int(embedded),
            "total": int(self.total),
            "pid": os.getpid(),
            "updated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        atomic_write_text(self.path, json.dumps(payload, sort_keys=True) + "\n")


def clear_progress(store_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (cache_dir(store_dir) / PROGRESS_FILE).unlink()


def read_progress(store_dir: Path, generation: str) -> dict[str, Any] | None:
    """The phase 2 progress of `generation` (embedded, total chunks), or None when none was
    recorded for it. Read-only; an unreadable file reads as None (progress is advisory)."""
    path = cache_dir(store_dir) / PROGRESS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("generation") != generation:
        return None
    try:
        return {"embedded": int(data["embedded"]), "total": int(data["total"]), "updated_at": str(data["updated_at"])}
    except (KeyError, TypeError, ValueError):
        return None


def vector_state(store_dir: Path, generation: str, manifest: Manifest) -> dict[str, Any]:
    """The published generation's vector state for `woods status`, read-only.

    `state` is `complete` when the generation has vectors — `embedder` names whose, `phase` is 1
    (the base embedder's, published with the units) or 2 (the contextual embedder's) — and then
    `contextual` describes a phase 2 of this generation that is `embedding` (running now) or
    `interrupted` (stopped; the next `woods index` resumes it), when there is one. A generation of
    an earlier woods without vectors has `state` `embedding`, `interrupted` or `pending`.
    `embedded` / `total` are chunks, when known."""
    counts = manifest.counts
    progress = read_progress(store_dir, generation)
    running = writer_running(store_dir)
    if manifest.has_vectors:
        chunks = int(counts.get("chunks", 0))
        vectors = manifest.data.get("vectors")
        second = isinstance(vectors, dict) and "base_embedder" in vectors
        state: dict[str, Any] = {
            "state": "complete", "embedded": chunks, "total": chunks,
            "embedder": manifest.embedder.get("name"), "phase": 2 if second else 1,
        }
        if not second and progress is not None:
            state["contextual"] = {
                "state": "embedding" if running else "interrupted",
                "embedded": progress["embedded"], "total": progress["total"],
            }
        return state
    state_name = "embedding" if running else ("interrupted" if progress is not None else "pending")
    return {
        "state": state_name,
        "embedded": progress["embedded"] if progress else None,
        "total": progress["total"] if progress else None,
    }


def describe_vector_state(state: dict[str, Any]) -> str:
    """One line for people: `vectors: 12,016 / 12,016 by woods/woods-static-code-v1; contextual
    vectors: 4,120 / 12,016 embedded (phase 2 running)`."""
    line = "vectors: " + _amount(state) + _NOTES.get(str(state.get("state")), "")
    if state.get("state") == "complete" and state.get("embedder"):
        line = f"vectors: {_amount(state)} by {state['embedder']}"
    contextual = state.get("contextual")
    if isinstance(contextual, dict):
        line += "; contextual vectors: " + _amount(contextual) + _CONTEXTUAL_NOTES.get(str(contextual.get("state")), "")
    return line


def _amount(state: dict[str, Any]) -> str:
    embedded, total = state.get("embedded"), state.get("total")
    return f"{embedded:,} / {total:,} embedded" if embedded is not None and total is not None else "not embedded yet"


_NOTES = {
    "complete": "",
    "embedding": " (phase 2 running; searches answer lexically until it finishes)",
    "interrupted": " (phase 2 interrupted; `woods index` resumes it; searches answer lexically)",
    "pending": " (searches answer lexically until `woods index` embeds them)",
}
_CONTEXTUAL_NOTES = {
    "embedding": " (phase 2 running; searches use the base vectors until it finishes)",
    "interrupted": " (phase 2 interrupted; `woods index` resumes it; searches use the base vectors)",
}
