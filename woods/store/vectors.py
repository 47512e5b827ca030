"""FAISS vector store: `IndexIDMap2(IndexFlatIP)` over L2-normalised float32 vectors, plus an
8-bit copy (`vectors.sq8.faiss`) that large stores scan first.

Why flat inner product: vectors are normalised, so inner product is cosine; a flat index is exact
(no recall loss to explain). One query is one n×384 matrix-vector product: ≈ 2 ms at 32k vectors,
≈ 8–13 ms at 115k on one core, bound by reading the float32 matrix. From `COARSE_MIN_VECTORS` on,
the writer also stores the vectors with one byte per component (a quarter of the bytes: ≈ 4 ms at
115k where the float16 copy of earlier generations takes ≈ 8 ms); a search scans that, then
rescores its best candidates from the float32 rows and widens the candidate set until no vector
outside it can reach the result (`coarse_error` bounds the quantisation error for each query) — so
the hits and scores are exactly those of the float32 scan. The int ids FAISS needs map to
embedding ids through the `chunks` table in SQLite (`vector_id`), which stays the source of truth.

Both files are memory-mapped, not read: a cold search on a 115k-vector store opens them in
milliseconds instead of reading 176 MB first.

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

# The coarse copy is written from this many vectors on: below it a float32 scan costs ≤ ~2.5 ms
# and a second file is not worth its disk and write time.
COARSE_MIN_VECTORS = 32_768
# The coarse copy: one byte per component on one scale for all components (FAISS
# `QT_8bit_uniform`, trained on the very vectors it holds, so none is clipped). Measured at 114,827
# vectors on one core: scan 4.3 ms, against 8.3 ms for float16 and 6.3 ms for a per-dimension scale.
COARSE_FILE = "vectors.sq8.faiss"
# Generations written before the 8-bit copy hold a float16 one; it is still read.
LEGACY_COARSE_FILE = "vectors.f16.faiss"
# |float16 score − float32 score| for unit vectors: each stored component is rounded by at most
# 2^-11 of itself, so the dot product with a unit query moves by at most 2^-11·Σ|q_i·x_i| ≤ 2^-11
# (Cauchy–Schwarz); twice that for margin.
_FLOAT16_ERROR = 2.0**-10
# An 8-bit code c of a component x decodes to vmin + (c + 0.5)/255·vdiff, with c = ⌊255·(x−vmin)/vdiff⌋:
# off by at most vdiff/510. Float32 rounding of the scan moves that by ~1e-5 of itself (measured
# 1.00001×): the bound is widened by 1 % and an absolute 1e-5 for margin.
_SQ8_HALF_STEP = 1.0 / 510.0
_SQ8_MARGIN = 1.01
_SQ8_ABSOLUTE = 1e-5
# Candidates the coarse scan returns per hit wanted (widened ×4 until the bound holds).
_COARSE_FACTOR = 4


def coarse_path(path: Path) -> Path:
    """Where the coarse copy of the vectors in `path` is written."""
    return path.with_name(COARSE_FILE)


def coarse_bound(coarse: Any) -> Callable[[np.ndarray], float] | None:
    """For a coarse index: query → an upper bound of |coarse score − float32 score| over every
    stored vector; None for a kind this reader does not know (searches then scan the float32 rows)."""
    faiss = _faiss()
    sq = faiss.downcast_index(coarse).sq
    if sq.qtype == faiss.ScalarQuantizer.QT_fp16:
        return lambda _query: _FLOAT16_ERROR
    if sq.qtype == faiss.ScalarQuantizer.QT_8bit_uniform:
        scale = _SQ8_MARGIN * _SQ8_HALF_STEP * float(faiss.vector_to_array(sq.trained)[1])  # [vmin, vdiff]
        return lambda query: scale * float(np.abs(query).sum()) + _SQ8_ABSOLUTE
    return None


def _read_mapped(path: Path) -> Any:
    """`faiss.read_index` with the codes memory-mapped where this FAISS supports it."""
    faiss = _faiss()
    return faiss.read_index(str(path), getattr(faiss, "IO_FLAG_MMAP_IFC", 0))


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
        self.path = path
        self.dimension = dimension
        self._index = _read_mapped(path)
        if self._index.d != dimension:
            raise ValueError(f"{path}: vectors have dimension {self._index.d}, the manifest says {dimension}")
        self._coarse: Any = None
        for coarse in (coarse_path(path), path.with_name(LEGACY_COARSE_FILE)):
            if coarse.is_file():
                self._coarse = _read_mapped(coarse)
                if self._coarse.d != dimension or self._coarse.ntotal != self._index.ntotal:
                    raise ValueError(f"{coarse} does not match {path.name} ({self._coarse.ntotal} vectors "
                                     f"of {self._coarse.d}, not {self._index.ntotal} of {dimension})")
                break
        self._coarse_bound = coarse_bound(self._coarse) if self._coarse is not None else None
        self._meta_for = meta_for
        self._all_meta: dict[int, tuple[str, str, str, str, str]] | None = None
        self._matrix: np.ndarray | None = None
        self._ids: np.ndarray | None = None
        self._row_of: dict[int, int] | None = None
        self._identity = False

    def _full_meta(self) -> dict[int, tuple[str, str, str, str, str]]:
        if self._all_meta is None:
            self._all_meta = self._meta_for(None)
        return self._all_meta

    def count(self) -> int:
        return int(self._index.ntotal)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """All vectors (a read-only view of the index's own rows, no copy) and their ids, in
        storage order (for filtered, exhaustive and rescoring searches)."""
        if self._matrix is None or self._ids is None:
            faiss = _faiss()
            flat = faiss.downcast_index(self._index.index)
            n = int(self._index.ntotal)
            matrix = faiss.rev_swig_ptr(flat.get_xb(), n * self.dimension).reshape(n, self.dimension)
            matrix.flags.writeable = False
            self._matrix = matrix
            self._ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        return self._matrix, self._ids

    def vector_ids(self) -> list[int]:
        return sorted(self._full_meta())

    def _positions(self, vector_ids: Sequence[int]) -> np.ndarray:
        """Storage rows of the given ids (KeyError for an unknown id). The writer numbers
        vectors 0…n−1 in storage order, so the map is usually the identity and costs nothing."""
        _matrix, ids = self._arrays()
        if self._row_of is None:
            identity = bool(np.array_equal(ids, np.arange(len(ids), dtype=np.int64)))
            self._row_of = {} if identity else {int(v): i for i, v in enumerate(ids)}
            self._identity = identity
        if self._identity:
            wanted = np.asarray(vector_ids, dtype=np.int64)
            if len(wanted) and (wanted.min() < 0 or wanted.max() >= len(ids)):
                raise KeyError(f"no vector with id {int(wanted[(wanted < 0) | (wanted >= len(ids))][0])}")
            return wanted
        return np.asarray([self._row_of[int(v)] for v in vector_ids], dtype=np.int64)

    def vectors_for(self, vector_ids: list[int]) -> np.ndarray:
        """Stored vectors of the given ids (rows in the given order)."""
        matrix, _ids = self._arrays()
        return matrix[self._positions(vector_ids)] if vector_ids else np.zeros((0, self.dimension), np.float32)

    def reconstruct(self, vector_ids: Sequence[int]) -> np.ndarray:
        """The stored vectors of a few ids (the ranker rescores a few hundred candidates per
        query): rows gathered from the mapped matrix, which is never copied whole."""
        return self.vectors_for(list(vector_ids))

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
            if self._coarse_bound is not None:
                pairs = self._rescored(query, fetch, self._coarse_bound(query[0]))
            else:
                scores, ids = self._index.search(query, fetch)
                pairs = [(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
        finally:
            faiss.omp_set_num_threads(threads)
        if len(pairs) == fetch and fetch < self.count() and len(pairs) > limit and pairs[-1][1] == pairs[limit - 1][1]:
            # A tie group reaches past what FAISS returned: settle it exhaustively.
            return self._exhaustive(query[0], limit, None)
        return self._ordered(pairs, limit)

    def _rescored(self, query: np.ndarray, fetch: int, error: float) -> list[tuple[int, float]]:
        """The float32 scan's best `fetch` (id, score) pairs, found through the coarse copy: its
        best candidates are rescored in float32; a vector outside them scores at most the last
        candidate's coarse score + `error`, so once the `fetch`-th rescored score is above that,
        nothing outside can enter the result (else the candidates widen)."""
        faiss = _faiss()
        flat = faiss.downcast_index(self._index.index)
        _matrix, ids = self._arrays()
        total = len(ids)
        wanted = min(total, fetch * _COARSE_FACTOR)
        while True:
            coarse_scores, positions = self._coarse.search(query, wanted)
            found = np.ascontiguousarray(positions[0][positions[0] >= 0], dtype=np.int64)
            # FAISS's own inner product over the chosen rows: the very floats a full scan returns.
            exact = np.empty(len(found), dtype=np.float32)
            flat.compute_distance_subset(1, faiss.swig_ptr(query), len(found), faiss.swig_ptr(exact), faiss.swig_ptr(found))
            order = np.argsort(-exact, kind="stable")[:fetch]  # ties at the cut: the caller settles them
            top = [(int(ids[found[i]]), float(exact[i])) for i in order]
            if wanted >= total or (len(top) == fetch and top[-1][1] > float(coarse_scores[0][len(found) - 1]) + error):
                return top
            wanted = min(total, wanted * _COARSE_FACTOR)

    def _exhaustive(self, query: np.ndarray, limit: int, eligible: list[int] | None) -> list[VectorHit]:
        matrix, ids = self._arrays()
        if eligible is not None:
            wanted = np.isin(ids, np.asarray(eligible, dtype=np.int64))
            matrix, ids = matrix[wanted], ids[wanted]
        if len(ids) == 0:
            return []
        scores = matrix @ query
        return self._ordered([(int(i), float(s)) for i, s in zip(ids, scores, strict=True)], limit)


def write_vectors(path: Path, vector_ids: np.ndarray, vectors: np.ndarray, dimension: int,
                  coarse_min: int = COARSE_MIN_VECTORS) -> None:
    """Write a new `IndexIDMap2(IndexFlatIP)` file, and its 8-bit copy (`coarse_path`) from
    `coarse_min` vectors on, rows in the same order (the caller publishes both atomically)."""
    faiss = _faiss()
    index = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
    matrix = np.zeros((0, dimension), dtype=np.float32)
    if len(vector_ids):
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.shape[1] != dimension:
            raise ValueError(f"vectors have dimension {matrix.shape[1]}, expected {dimension}")
        index.add_with_ids(matrix, np.ascontiguousarray(vector_ids, dtype=np.int64))
    faiss.write_index(index, str(path))
    if len(matrix) >= coarse_min:
        coarse = faiss.IndexScalarQuantizer(dimension, faiss.ScalarQuantizer.QT_8bit_uniform, faiss.METRIC_INNER_PRODUCT)
        coarse.train(matrix)
        coarse.add(matrix)
        faiss.write_index(coarse, str(coarse_path(path)))
