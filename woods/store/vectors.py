"""FAISS vector store: `IndexIDMap2(IndexFlatIP)` over L2-normalised float32 vectors.

Why flat inner product: vectors are normalised, so inner product is cosine; a flat index is exact
(no recall loss to explain) and fast enough for the sizes woods indexes (≈50k chunks: one query is a
single 50k×384 matrix-vector product, well under 10 ms). The int ids FAISS needs map to embedding
ids through the `chunks` table in SQLite (`vector_id`), which stays the source of truth.

Guarantees: `search` returns hits ordered by (−score, embedding_id) — deterministic even where
identical texts give identical vectors; filters (`types`, `keys`) are applied before the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from woods.store.base import VectorHit

# FAISS may cut a run of equal scores at the limit arbitrarily; fetch this many extra hits so the
# explicit (−score, id) tie-break sees whole tie groups, and fall back to an exhaustive scan when a
# tie group still reaches the end of what was fetched.
_TIE_MARGIN = 16


# One query is one matrix-vector product; FAISS's OpenMP team costs more to wake than it saves
# (measured: warm p50 16 ms → 5 ms with one thread on the fixtures' index). Set only around a
# search and restored after: the OpenMP runtime is shared with torch in the same process.
_SEARCH_THREADS = 1


def _faiss() -> Any:  # imported lazily: `woods --help` and keyword-only searches never load it
    import faiss

    return faiss


class FaissVectorStore:
    """Read access to a generation's `vectors.faiss` (implements `VectorStore`).

    `meta_for(ids)` returns vector_id → (embedding_id, unit_key, identifier, type, file_path) for the
    given ids, or for every vector when ids is None. Hits look up only their own rows, so opening
    the store and an unfiltered search never read the whole chunk table; filtered searches load
    the full map once.
    """

    def __init__(
        self,
        path: Path,
        meta_for: Callable[[list[int] | None], dict[int, tuple[str, str, str, str, str]]],
        dimension: int,
    ) -> None:
        faiss = _faiss()
        self.path = path
        self.dimension = dimension
        self._index = faiss.read_index(str(path))
        if self._index.d != dimension:
            raise ValueError(f"{path}: vectors have dimension {self._index.d}, the manifest says {dimension}")
        self._meta_for = meta_for
        self._all_meta: dict[int, tuple[str, str, str, str, str]] | None = None
        self._matrix: np.ndarray | None = None
        self._ids: np.ndarray | None = None

    def _full_meta(self) -> dict[int, tuple[str, str, str, str, str]]:
        if self._all_meta is None:
            self._all_meta = self._meta_for(None)
        return self._all_meta

    def count(self) -> int:
        return int(self._index.ntotal)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """All vectors and their ids as numpy arrays (for filtered / exhaustive searches)."""
        if self._matrix is None or self._ids is None:
            faiss = _faiss()
            flat = faiss.downcast_index(self._index.index)
            n = int(self._index.ntotal)
            self._matrix = faiss.rev_swig_ptr(flat.get_xb(), n * self.dimension).reshape(n, self.dimension).copy()
            self._ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        return self._matrix, self._ids

    def vector_ids(self) -> list[int]:
        return sorted(self._full_meta())

    def vectors_for(self, vector_ids: list[int]) -> np.ndarray:
        """Stored vectors of the given ids (rows in the given order)."""
        matrix, ids = self._arrays()
        position = {int(v): i for i, v in enumerate(ids)}
        return matrix[[position[v] for v in vector_ids]] if vector_ids else np.zeros((0, self.dimension), np.float32)

    def reconstruct(self, vector_ids: Sequence[int]) -> np.ndarray:
        """The stored vectors of a few ids, read one by one (no copy of the whole matrix: the
        ranker scores a few hundred candidates per query)."""
        out = np.zeros((len(vector_ids), self.dimension), dtype=np.float32)
        for row, vector_id in enumerate(vector_ids):
            out[row] = self._index.reconstruct(int(vector_id))
        return out

    @staticmethod
    def _hit(meta: tuple[str, str, str, str, str], score: float) -> VectorHit:
        embedding_id, key, identifier, unit_type, file_path = meta
        return VectorHit(
            embedding_id=embedding_id,
            score=score,
            metadata={"type": unit_type, "identifier": identifier, "file_path": file_path, "key": key},
        )

    def _ordered(self, pairs: list[tuple[int, float]], limit: int) -> list[VectorHit]:
        meta = self._all_meta if self._all_meta is not None else self._meta_for([vid for vid, _s in pairs])
        hits = [self._hit(meta[vid], score) for vid, score in pairs if vid in meta]
        hits.sort(key=lambda h: (-h.score, h.embedding_id))
        return hits[:limit]

    def search(
        self,
        vector: np.ndarray,
        limit: int,
        types: Collection[str] | None = None,
        keys: Collection[str] | None = None,
    ) -> list[VectorHit]:
        if limit <= 0 or self.count() == 0:
            return []
        query = np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        if query.shape[1] != self.dimension:
            raise ValueError(f"query vector has dimension {query.shape[1]}, the index {self.dimension}")
        if types or keys:
            type_set = set(types) if types else None
            key_set = set(keys) if keys else None
            eligible = [
                vid
                for vid, (_eid, key, _ident, unit_type, _path) in self._full_meta().items()
                if (type_set is None or unit_type in type_set) and (key_set is None or key in key_set)
            ]
            return self._exhaustive(query[0], limit, eligible)
        fetch = min(self.count(), limit + _TIE_MARGIN)
        faiss = _faiss()
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(_SEARCH_THREADS)
        try:
            scores, ids = self._index.search(query, fetch)
        finally:
            faiss.omp_set_num_threads(threads)
        pairs = [(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
        if len(pairs) == fetch and fetch < self.count() and len(pairs) > limit and pairs[-1][1] == pairs[limit - 1][1]:
            # A tie group reaches past what FAISS returned: settle it exhaustively.
            return self._exhaustive(query[0], limit, None)
        return self._ordered(pairs, limit)

    def _exhaustive(self, query: np.ndarray, limit: int, eligible: list[int] | None) -> list[VectorHit]:
        matrix, ids = self._arrays()
        if eligible is not None:
            wanted = np.isin(ids, np.asarray(eligible, dtype=np.int64))
            matrix, ids = matrix[wanted], ids[wanted]
        if len(ids) == 0:
            return []
        scores = matrix @ query
        return self._ordered([(int(i), float(s)) for i, s in zip(ids, scores, strict=True)], limit)


def write_vectors(path: Path, vector_ids: np.ndarray, vectors: np.ndarray, dimension: int) -> None:
    """Write a new `IndexIDMap2(IndexFlatIP)` file (the caller publishes it atomically)."""
    faiss = _faiss()
    index = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
    if len(vector_ids):
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.shape[1] != dimension:
            raise ValueError(f"vectors have dimension {matrix.shape[1]}, expected {dimension}")
        index.add_with_ids(matrix, np.ascontiguousarray(vector_ids, dtype=np.int64))
    faiss.write_index(index, str(path))
