"""The contract every embedding provider keeps, and the errors it raises.

Why a Protocol: the index builder, the retriever and the tests swap providers freely (the packaged
MiniLM through sentence-transformers at index time, the numpy encoder at query time, the Fake and
Replay providers in tests). They only need the same small surface and the same guarantees.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from woods.errors import InputTooLongError as InputTooLongError

# Read files in 1 MiB blocks when fingerprinting: large enough to be I/O bound, small in memory.
_FINGERPRINT_BLOCK_BYTES = 1 << 20


class QueryEmbedder(Protocol):
    """What retrieval asks of an embedder at query time: one text's vector (the shape and
    normalisation of `EmbeddingProvider.embed`)."""

    def embed(self, text: str) -> np.ndarray: ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    """What woods needs from an embedder.

    Guarantees: `embed_batch` returns float32 of shape (len(texts), dimension) in input order with
    L2-normalised rows (an all-zero row stays zero); `embed` returns one such row of shape
    (dimension,). `max_input_tokens` is the most tokens one text may have as counted by
    `count_tokens` (None: no limit, never chunk); a longer text raises InputTooLongError — except
    from a model without an input limit (the static model, woods/embedding/static.py), for which
    `max_input_tokens` only sizes the chunks and every length is embedded whole.
    `name` is the model id the index records to detect a model change.
    """

    name: str
    dimension: int
    max_input_tokens: int | None

    def count_tokens(self, text: str) -> int: ...

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed(self, text: str) -> np.ndarray: ...


def l2_normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """float32 copy of `matrix` with unit-length rows; all-zero rows stay zero (no NaN)."""
    out = np.asarray(matrix, dtype=np.float32).copy()
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {out.shape}")
    norms = np.linalg.norm(out.astype(np.float64), axis=1)
    nonzero = norms > 0.0
    out[nonzero] = (out[nonzero].astype(np.float64) / norms[nonzero, None]).astype(np.float32)
    return out


# Environment override for the embedding thread count (e.g. WOODS_THREADS=1 on a machine shared
# with other heavy work, where thread pools stall waiting for descheduled threads).
THREADS_ENV = "WOODS_THREADS"


def configured_threads() -> int | None:
    """WOODS_THREADS as a positive int, or None when unset or invalid."""
    configured = os.environ.get(THREADS_ENV, "").strip()
    return int(configured) if configured.isdigit() and int(configured) > 0 else None


def embedding_threads() -> int:
    """Threads for torch / BLAS when embedding: WOODS_THREADS if set, else every CPU this process
    may use.

    Not the load average: it lags by a minute and counts woods' own parse workers, so right after
    parsing it told the model to use 1 of 2 cores (measured: the model ran 1.44x slower inside
    `woods index` than alone on the same batches).
    """
    configured = configured_threads()
    if configured is not None:
        return configured
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def ensure_fits(count: int, limit: int | None, text: str) -> None:
    """Raise InputTooLongError when `count` exceeds `limit` (None = unlimited)."""
    if limit is not None and count > limit:
        raise InputTooLongError(count, limit, text)


def file_fingerprint(path: str | os.PathLike[str]) -> str:
    """SHA-256 hex of a file's bytes, computed once per (path, size, mtime) in this process.

    The index stores it next to the vectors so a changed model file (same name, new weights) is
    detected and forces a re-embed.
    """
    resolved = Path(path).resolve()
    stat = resolved.stat()
    return _fingerprint_cached(str(resolved), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=16)
def _fingerprint_cached(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_FINGERPRINT_BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()


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
