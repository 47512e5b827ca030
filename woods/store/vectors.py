"""FAISS vector store: `IndexIDMap2(IndexFlatIP)` over L2-normalised float32 vectors, plus an
8-bit copy (`vectors.sq8.faiss`) that large stores scan first.

Why flat inner product: vectors are normalised, so inner product is cosine; a flat index is exact
(no recall loss to explain). One query is one n×384 matrix-vector product: ≈ 2 ms at 32k vectors,
≈ 8–15 ms at 115k on one core, bound by reading the float32 matrix. From `COARSE_MIN_VECTORS` on,
the writer also stores the vectors with one byte per component (a quarter of the bytes), each
rounded to a multiple of one scale for the whole store and kept as a signed byte that FAISS
multiplies in without decoding (`COARSE_FILE`). A search scans that copy, rescores its best
candidates from the float32 rows and widens the candidate set until no vector outside it can reach
the result (`CoarseCopy` bounds the quantisation error for each query) — so the hits and scores
are exactly those of the float32 scan. The int ids FAISS needs map to embedding ids through the
`chunks` table in SQLite (`vector_id`), which stays the source of truth.

Both files are memory-mapped, not read: a cold search on a 115k-vector store opens them in
milliseconds instead of reading 176 MB first.

Guarantees: `search` returns hits ordered by (−score, embedding_id) — deterministic even where
identical texts give identical vectors; filters (`types`, `keys`) are applied before the limit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from woods.store.base import VectorHit, unit_scores

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
# The coarse copy: one signed byte per component, r = round(x / scale), one scale for the whole
# store (its largest |component| maps to 127). The query is rounded the same way on its own scale
# (k = round(q / qscale)), so FAISS's scan is a dot product of bytes (`QT_8bit_direct_signed`: SIMD
# integer arithmetic, exact in float32 up to 2^24) and score ≈ scale · qscale · Σ k_i r_i. Measured
# at 114,827 vectors on one core of an AVX2 EPYC: 6.9 ms, against 12.0 ms for FAISS's
# `QT_8bit_uniform` (it decodes every byte to a float; the copy of generations written on
# 2026-12-02) and 12.0 ms for float16 (the copy before it) — both still read.
COARSE_FILE = "vectors.sq8.faiss"
# The byte copy's scale and the largest code and rounding norms of a stored vector (its error bound).
COARSE_SCALE_FILE = "vectors.sq8.json"
# Generations written before the 8-bit copy hold a float16 one; it is still read.
LEGACY_COARSE_FILE = "vectors.f16.faiss"
# Version of the byte copy's parameters file; a reader refuses others (and scans float32 instead).
_COARSE_FORMAT = "int8-direct-1"
# The byte a vector's (or a query's) largest |component| is rounded to: the whole signed range, kept
# symmetric so that no code is clipped.
_SQ8_LEVEL = 127.0
# The byte scan's sums are whole numbers, exact in float32 while below 2^24: every partial sum is
# at most 127·127·d, so the copy is written only up to this dimension (1,040; MiniLM has 384).
# Wider vectors are scanned in float32.
COARSE_MAX_DIMENSION = int(2**24 // (_SQ8_LEVEL * _SQ8_LEVEL))
# |float16 score − float32 score| for unit vectors: each stored component is rounded by at most
# 2^-11 of itself, so the dot product with a unit query moves by at most 2^-11·Σ|q_i·x_i| ≤ 2^-11
# (Cauchy–Schwarz); twice that for margin.
_FLOAT16_ERROR = 2.0**-10
# `QT_8bit_uniform`: a code c of a component x decodes to vmin + (c + 0.5)/255·vdiff with
# c = ⌊255·(x−vmin)/vdiff⌋, off by at most vdiff/510, so a score is off by at most vdiff/510·Σ|q_i|.
_SQ8_UNIFORM_HALF_STEP = 1.0 / 510.0
# Float32 rounding of a scan or of the final product moves a score by ~1e-5 of the bound (measured
# 1.00001×): bounds are widened by 1 % and an absolute 1e-5 for margin.
_SQ8_MARGIN = 1.01
_SQ8_ABSOLUTE = 1e-5
# Candidates the coarse scan returns first per hit wanted, then widened ×4 until the bound holds: on
# the 115k-vector bench index, the byte copy's bound needed 424 candidates for 116 hits at the
# median and 537 at worst (of 50 queries); a wider first scan costs less than a second one.
_COARSE_FIRST = 6
_COARSE_WIDEN = 4


def coarse_path(path: Path) -> Path:
    """Where the coarse copy of the vectors in `path` is written."""
    return path.with_name(COARSE_FILE)


class CoarseCopy:
    """A quantised copy of every stored vector, scanned before the float32 rows.

    Why: a scan of one byte (or two) per component costs a quarter (a half) of the float32 scan's
    memory traffic. `scan(query, k)` returns the copy's best `k` rows as (coarse scores, storage
    rows) together with `error`: no stored vector's float32 score is above its coarse score +
    `error` — the bound that lets a search prove its rescored candidates are the exact answer.
    """

    def __init__(self, index: Any, prepare: Callable[[np.ndarray], tuple[np.ndarray, float, float]]) -> None:
        self.index = index
        self._prepare = prepare  # query → (vector the copy scans with, score multiplier, error)

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    def scan(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
        scanned, multiplier, error = self._prepare(query)
        scores, rows = self.index.search(scanned.reshape(1, -1), k)
        return scores[0] * np.float32(multiplier), rows[0], error


def _rounded(values: np.ndarray) -> tuple[np.ndarray, float]:
    """`values` as whole numbers on one scale (their largest |value| becomes `_SQ8_LEVEL`), as
    float32 (FAISS stores ⌊v⌋ + 128 of a direct value v, so whole numbers are kept exactly), and
    the scale."""
    peak = float(np.abs(values).max()) if values.size else 0.0
    scale = (peak if peak > 0 else 1.0) / _SQ8_LEVEL
    return np.round(values / np.float32(scale)).astype(np.float32), scale


def _bytes_prepare(params: dict[str, Any], dimension: int) -> Callable[[np.ndarray], tuple[np.ndarray, float, float]]:
    """For the byte copy: the query rounded on its own scale, the product of both scales, and the
    bound. With x_i = scale·(r_i + e_i) and q_i = qscale·(k_i + f_i), |e_i|, |f_i| ≤ ½,
    q·x / (scale·qscale) − Σk_i·r_i = Σk_i·e_i + Σf_i·r_i + Σf_i·e_i; each sum is bounded by the
    smaller of its term-wise bound (½Σ|k_i|, ½·max Σ|r_i|, d/4) and Cauchy–Schwarz with the
    largest ‖r‖ and ‖e‖ of a stored vector (on real queries the second is ~25 % tighter)."""
    scale = float(params["scale"])
    max_l1, max_l2, max_error = (float(params[k]) for k in ("max_code_l1", "max_code_l2", "max_error_l2"))

    def prepare(query: np.ndarray) -> tuple[np.ndarray, float, float]:
        codes, qscale = _rounded(query)
        code_norm = float(np.linalg.norm(codes))
        rounding = float(np.linalg.norm(query / np.float32(qscale) - codes))
        slack = (
            min(0.5 * float(np.abs(codes).sum()), code_norm * max_error)
            + min(0.5 * max_l1, rounding * max_l2)
            + min(dimension / 4, rounding * max_error)
        )
        unit = scale * qscale
        return codes, unit, _SQ8_MARGIN * unit * slack + _SQ8_ABSOLUTE

    return prepare


def read_coarse(path: Path, dimension: int) -> CoarseCopy | None:
    """The coarse copy beside the float32 file `path` (today's byte copy, or an older generation's
    FAISS 8-bit or float16 copy), or None when there is none or of a kind this reader does not
    know (searches then scan the float32 rows)."""
    faiss = _faiss()
    found = [c for c in (coarse_path(path), path.with_name(LEGACY_COARSE_FILE)) if c.is_file()]
    if not found:
        return None
    index = _read_mapped(found[0])
    if index.d != dimension:
        raise ValueError(f"{found[0]} holds vectors of {index.d}, not {dimension}")
    sq = faiss.downcast_index(index)
    if not isinstance(sq, faiss.IndexScalarQuantizer):
        return None
    qtype = sq.sq.qtype
    if qtype == faiss.ScalarQuantizer.QT_8bit_direct_signed:
        scale_file = path.with_name(COARSE_SCALE_FILE)
        try:
            params = json.loads(scale_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{scale_file} cannot be read ({exc})") from exc
        if not isinstance(params, dict) or params.get("format") != _COARSE_FORMAT:
            return None
        try:
            return CoarseCopy(index, _bytes_prepare(params, dimension))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{scale_file} does not describe the coarse copy ({exc!r})") from exc
    if qtype == faiss.ScalarQuantizer.QT_8bit_uniform:
        step = _SQ8_MARGIN * _SQ8_UNIFORM_HALF_STEP * float(faiss.vector_to_array(sq.sq.trained)[1])  # [vmin, vdiff]
        return CoarseCopy(index, lambda q: (q, 1.0, step * float(np.abs(q).sum()) + _SQ8_ABSOLUTE))
    if qtype == faiss.ScalarQuantizer.QT_fp16:
        return CoarseCopy(index, lambda q: (q, 1.0, _FLOAT16_ERROR))
    return None


def write_coarse(path: Path, matrix: np.ndarray) -> None:
    """Write the byte copy of `matrix` (rows in storage order) beside the float32 file `path`."""
    faiss = _faiss()
    codes, scale = _rounded(matrix)
    copy = faiss.IndexScalarQuantizer(matrix.shape[1], faiss.ScalarQuantizer.QT_8bit_direct_signed, faiss.METRIC_INNER_PRODUCT)
    copy.add(codes)
    faiss.write_index(copy, str(coarse_path(path)))
    errors = matrix / np.float32(scale) - codes
    params = {
        "format": _COARSE_FORMAT,
        "scale": scale,
        "max_code_l1": float(np.abs(codes).sum(axis=1).max(initial=0.0)),
        "max_code_l2": float(np.sqrt((codes * codes).sum(axis=1)).max(initial=0.0)),
        "max_error_l2": float(np.sqrt((errors * errors).sum(axis=1)).max(initial=0.0)),
    }
    path.with_name(COARSE_SCALE_FILE).write_text(json.dumps(params), encoding="utf-8")


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
    the full map once. `keys_for(ids)` (optional) returns vector_id → (embedding_id, unit_key) of
    the given ids from the chunk rows alone: `search_units` reads no more than that.
    """

    def __init__(
        self,
        path: Path,
        meta_for: Callable[[list[int] | None], dict[int, tuple[str, str, str, str, str]]],
        dimension: int,
        keys_for: Callable[[list[int]], dict[int, tuple[str, str]]] | None = None,
    ) -> None:
        self.path = path
        self.dimension = dimension
        self._index = _read_mapped(path)
        if self._index.d != dimension:
            raise ValueError(f"{path}: vectors have dimension {self._index.d}, the manifest says {dimension}")
        self._coarse = read_coarse(path, dimension)
        if self._coarse is not None and self._coarse.ntotal != self._index.ntotal:
            raise ValueError(f"the coarse copy of {path.name} does not match it ({self._coarse.ntotal} vectors, "
                             f"not {self._index.ntotal})")
        self._meta_for = meta_for
        self._keys_for = keys_for
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
        query = self._query(vector)
        if types or keys:
            type_set = set(types) if types else None
            key_set = set(keys) if keys else None
            eligible = [
                vid
                for vid, (_eid, key, _ident, unit_type, _path) in self._full_meta().items()
                if (type_set is None or unit_type in type_set) and (key_set is None or key in key_set)
            ]
            return self._exhaustive(query[0], limit, eligible)
        pairs = self._nearest(query, limit)
        return self._exhaustive(query[0], limit, None) if pairs is None else self._ordered(pairs, limit)

    def search_units(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """(unit key, score) of each hit `search(vector, limit)` returns, in its order, read from
        the chunk rows alone (no unit columns, no hit objects): what code search needs of the
        vector leg. Measured on the stdlib (114,827 chunks): 0.4 ms for 130 hits' keys against
        1.0–1.7 ms for their full metadata; vector p50 14.6 → 13.6 ms and hybrid 20.2 → 19.6 ms
        (6 interleaved pairs)."""
        if limit <= 0 or self.count() == 0:
            return []
        query = self._query(vector)
        pairs = self._nearest(query, limit)
        if pairs is not None and self._keys_for is not None and self._all_meta is None:
            found = self._keys_for([vid for vid, _score in pairs])
            rows = [(score, *found[vid]) for vid, score in pairs if vid in found]
            rows.sort(key=lambda row: (-row[0], row[1]))  # `_ordered`'s order: (−score, embedding id)
            return [(key or embedding_id, score) for score, embedding_id, key in rows[:limit]]
        hits = self._exhaustive(query[0], limit, None) if pairs is None else self._ordered(pairs, limit)
        return unit_scores(hits)

    def _query(self, vector: np.ndarray) -> np.ndarray:
        query = np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        if query.shape[1] != self.dimension:
            raise ValueError(f"query vector has dimension {query.shape[1]}, the index {self.dimension}")
        return query

    def _nearest(self, query: np.ndarray, limit: int) -> list[tuple[int, float]] | None:
        """The unfiltered search's (vector id, score) candidates, or None when a tie group reaches
        past what FAISS returned (the caller then settles it exhaustively)."""
        fetch = min(self.count(), limit + _TIE_MARGIN)
        faiss = _faiss()
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(_SEARCH_THREADS)
        try:
            if self._coarse is not None:
                pairs = self._rescored(self._coarse, query, fetch)
            else:
                scores, ids = self._index.search(query, fetch)
                pairs = [(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
        finally:
            faiss.omp_set_num_threads(threads)
        if len(pairs) == fetch and fetch < self.count() and len(pairs) > limit and pairs[-1][1] == pairs[limit - 1][1]:
            return None  # a tie group reaches past what FAISS returned
        return pairs

    def _rescored(self, coarse: CoarseCopy, query: np.ndarray, fetch: int) -> list[tuple[int, float]]:
        """The float32 scan's best `fetch` (id, score) pairs, found through the coarse copy: its
        best candidates are rescored in float32; a vector outside them scores at most the last
        candidate's coarse score + the copy's error bound, so once the `fetch`-th rescored score is
        above that, nothing outside can enter the result (else the candidates widen)."""
        faiss = _faiss()
        flat = faiss.downcast_index(self._index.index)
        _matrix, ids = self._arrays()
        total = len(ids)
        wanted = min(total, fetch * _COARSE_FIRST)
        while True:
            coarse_scores, positions, error = coarse.scan(query[0], wanted)
            found = np.ascontiguousarray(positions[positions >= 0], dtype=np.int64)
            # FAISS's own inner product over the chosen rows: the very floats a full scan returns.
            exact = np.empty(len(found), dtype=np.float32)
            flat.compute_distance_subset(1, faiss.swig_ptr(query), len(found), faiss.swig_ptr(exact), faiss.swig_ptr(found))
            order = np.argsort(-exact, kind="stable")[:fetch]  # ties at the cut: the caller settles them
            top = [(int(ids[found[i]]), float(exact[i])) for i in order]
            if wanted >= total or (len(top) == fetch and top[-1][1] > float(coarse_scores[len(found) - 1]) + error):
                return top
            wanted = min(total, wanted * _COARSE_WIDEN)

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
    `coarse_min` vectors on (of at most `COARSE_MAX_DIMENSION` components), rows in the same order
    (the caller publishes both atomically)."""
    faiss = _faiss()
    index = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
    matrix = np.zeros((0, dimension), dtype=np.float32)
    if len(vector_ids):
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.shape[1] != dimension:
            raise ValueError(f"vectors have dimension {matrix.shape[1]}, expected {dimension}")
        index.add_with_ids(matrix, np.ascontiguousarray(vector_ids, dtype=np.int64))
    faiss.write_index(index, str(path))
    if len(matrix) >= coarse_min and dimension <= COARSE_MAX_DIMENSION:
        write_coarse(path, matrix)
