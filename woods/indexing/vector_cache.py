"""Vectors of the previous generation, reused by the SHA-256 of their embedding text.

Why: embedding is what an index run costs; unchanged, moved or renamed code has the same text and
needs no model call. Reuse is only sound with the very same model and numeric precision, so the
embedder's fingerprint must match.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from woods.embedding.provider import EmbeddingProvider
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


def embedder_description(provider: EmbeddingProvider) -> dict[str, Any]:
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
