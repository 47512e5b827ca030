"""Contextual vectors a fleet worker already computed, kept in the store until its publish.

Why: a PostgreSQL store publishes a repository once, with the contextual embedder's vectors
(MiniLM: minutes for a large repository). A worker killed in the middle — a lost node, a Ctrl-C,
an out-of-memory kill — would lose every batch it embedded, and its retry (on any machine of the
cluster) would start over. `ResumingProvider` wraps the contextual provider: each batch's vectors
are written to `woods.fleet_resume` (keyed by repository, embedder fingerprint and the SHA-256 of
the text) before the batch is returned, and a text found there is not embedded again. The rows of
a repository are deleted once its generation is published. The local backend has its own resume
cache (`woods.indexing.resume`); this is its counterpart on the server, visible to every worker.

Guarantees: the vectors returned are the wrapped provider's (the same embedder description, so
the index records the same embedder); a vector is only reused under the same fingerprint and
dimension; a failure to reach the table is an IndexingError, never a silently different vector.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from woods.embedding.provider import EmbeddingProvider, embedder_description
from woods.errors import IndexingError

RESUME_TABLE = "fleet_resume"


class ResumingProvider:
    """`inner` with its finished batches kept in the store (see the module docstring)."""

    def __init__(self, inner: EmbeddingProvider, url: str, repo: str) -> None:
        from woods.store.pg_connect import SCHEMA

        self._inner = inner
        self._url = url
        self._repo = repo
        self._table = f"{SCHEMA}.{RESUME_TABLE}"
        description = embedder_description(inner)
        self.name = inner.name
        self.dimension = int(inner.dimension)
        self.max_input_tokens = inner.max_input_tokens
        self.precision = description["precision"]
        self._fingerprint = str(description["fingerprint"])
        self._weights = self._fingerprint.rsplit(":", 1)[0]
        self._conn: Any = None
        self.resumed = 0  # texts answered from the table instead of the model

    # -- what the index builder reads of a provider --------------------------------------------
    def weights_fingerprint(self) -> str:
        return self._weights

    @property
    def warnings(self) -> list[str]:
        # The wrapped provider's own warnings (an encoder fallback), as the builder collects them.
        found = getattr(self._inner, "warnings", ())
        return list(found) if isinstance(found, (list, tuple)) else []

    def prepare(self) -> None:
        prepare = getattr(self._inner, "prepare", None)  # optional, as the builder treats providers
        if callable(prepare):
            prepare()

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def embed(self, text: str) -> np.ndarray:
        vectors: np.ndarray = self.embed_batch([text])[0]
        return vectors

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        hashes = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts]
        known = self._lookup(sorted(set(hashes)))
        missing = [i for i, h in enumerate(hashes) if h not in known]
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if missing:
            fresh = np.asarray(self._inner.embed_batch([texts[i] for i in missing]), dtype=np.float32)
            self._store({hashes[i]: fresh[n] for n, i in enumerate(missing)})
            for n, i in enumerate(missing):
                out[i] = fresh[n]
        for i, digest in enumerate(hashes):
            if digest in known:
                out[i] = known[digest]
        self.resumed += len(texts) - len(missing)
        return out

    # -- the table ---------------------------------------------------------------------------
    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed:
            from woods.store.pg_connect import connect
            from woods.store.pg_publish import DDL_LOCK

            self._conn = connect(self._url)
            # Two workers may create it at once: CREATE TABLE IF NOT EXISTS alone races in PostgreSQL.
            with self._conn.transaction():
                self._run("SELECT pg_advisory_xact_lock(%s, %s)", DDL_LOCK)
                self._run(f"CREATE TABLE IF NOT EXISTS {self._table} (repo text NOT NULL, fingerprint text NOT NULL, "
                          "text_sha256 text NOT NULL, vector bytea NOT NULL, PRIMARY KEY (repo, fingerprint, text_sha256))")
        return self._conn

    def _run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        psycopg = __import__("psycopg")
        try:
            cursor = (self._conn or self._connection()).execute(sql, params)
            return list(cursor.fetchall()) if cursor.description else []
        except psycopg.Error as exc:
            raise IndexingError(f"the fleet's resume table is unreadable ({exc})") from exc

    def _lookup(self, hashes: list[str]) -> dict[str, np.ndarray]:
        self._connection()
        rows = self._run(
            f"SELECT text_sha256, vector FROM {self._table} WHERE repo = %s AND fingerprint = %s AND text_sha256 = ANY(%s)",
            (self._repo, self._fingerprint, hashes),
        )
        found = {}
        for digest, blob in rows:
            vector = np.frombuffer(bytes(blob), dtype=np.float32)
            if vector.shape[0] == self.dimension:
                found[str(digest)] = vector
        return found

    def _store(self, vectors: dict[str, np.ndarray]) -> None:
        self._connection()
        self._run(
            f"INSERT INTO {self._table} (repo, fingerprint, text_sha256, vector) "
            "SELECT %s, %s, h, v FROM unnest(%s::text[], %s::bytea[]) AS t(h, v) ON CONFLICT DO NOTHING",
            (self._repo, self._fingerprint, list(vectors), [np.asarray(v, dtype=np.float32).tobytes() for v in vectors.values()]),
        )

    def discard(self) -> None:
        """Forget this repository's kept vectors (its generation is published) and disconnect."""
        self._connection()
        self._run(f"DELETE FROM {self._table} WHERE repo = %s", (self._repo,))
        self.close()

    def close(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.close()
        self._conn = None


def resuming(factory: Callable[[], EmbeddingProvider], url: str, repo: str) -> ResumingProvider:
    return ResumingProvider(factory(), url, repo)


__all__ = ["RESUME_TABLE", "ResumingProvider", "resuming"]
