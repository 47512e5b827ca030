"""Vectors of the previous generation, reused by the SHA-256 of their embedding text.

Why: embedding is what an index run costs; unchanged, moved or renamed code has the same text and
needs no model call. Reuse is only sound with the very same model and numeric precision, so the
embedder's fingerprint must match.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["VectorCache", "VectorSource", "embedder_description"]

import numpy as np

from woods.embedding.provider import embedder_description
from woods.errors import CorruptIndexError
from woods.indexing.plan import PlanRow
from woods.store.index import Manifest
from woods.store.metadata import ChunkRow


class VectorSource(Protocol):
    """A previous generation's chunks and vectors: an open index of this schema (`IndexStores`:
    its `.metadata.chunks()` and `.vectors`) or one of another schema (`ReusableVectors`)."""

    manifest: Manifest

    def chunks(self) -> list[ChunkRow]: ...

    def vectors_for(self, vector_ids: list[int]) -> np.ndarray: ...

    def close(self) -> None: ...


class VectorCache:
    """Text hash → vector, and plan key → chunk plan, from a previous generation (same model only).

    Guarantees: empty when there is no previous generation or it was built by another embedder;
    when the previous generation's vectors cannot be read, empty too and `warning` says why (the
    run then embeds everything — slower, never wrong). Never raises for an unusable cache.
    """

    def __init__(self, previous: VectorSource | None, embedder: dict[str, Any]) -> None:
        self._by_hash: dict[str, np.ndarray] = {}
        self.plans: dict[str, list[PlanRow]] = {}
        self.warning: str | None = None
        if previous is None:
            return
        manifest = previous.manifest
        if manifest.embedder.get("fingerprint") != embedder.get("fingerprint") or manifest.dimension != embedder.get("dimension"):
            return
        try:
            rows = previous.chunks()
            if not rows:
                return
            matrix = previous.vectors_for([r.vector_id for r in rows])
        except CorruptIndexError as exc:
            self.warning = f"vectors of the previous index are unusable ({exc}); every text was embedded again"
            return
        for row, vector in zip(rows, matrix, strict=True):
            self._by_hash.setdefault(row.text_sha256, vector)
        for row in sorted(rows, key=lambda r: (r.plan_key, r.unit_key, r.chunk_index)):
            if row.plan_key:
                plan = self.plans.setdefault(row.plan_key, [])
                if not plan or plan[-1][0] < row.chunk_index:  # one plan per key (first unit)
                    plan.append((row.chunk_index, row.chunk_type, row.line_start, row.line_end, row.text_sha256))

    def get(self, text_hash: str) -> np.ndarray | None:
        return self._by_hash.get(text_hash)

    def has(self, text_hash: str) -> bool:
        return text_hash in self._by_hash
