"""The coarse copy large vector stores scan first (8-bit signed bytes on one scale; FAISS's 8-bit
uniform codes and float16 in older generations) must give exactly the float32 scan's answer."""

from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np
import pytest

from woods.store.vectors import (
    COARSE_FILE,
    COARSE_MAX_DIMENSION,
    COARSE_SCALE_FILE,
    LEGACY_COARSE_FILE,
    FaissVectorStore,
    coarse_path,
    write_vectors,
)

DIMENSION = 32


def _meta(ids: list[int] | None, total: int) -> dict[int, tuple[str, str, str, str, str]]:
    wanted = range(total) if ids is None else ids
    return {i: (f"e{i:05d}", f"k{i:05d}", f"I{i}", "method" if i % 3 else "class", f"f{i % 7}.py") for i in wanted}


def _store(tmp_path: Path, name: str, vectors: np.ndarray, coarse_min: int) -> FaissVectorStore:
    path = tmp_path / name / "vectors.faiss"
    path.parent.mkdir()
    write_vectors(path, np.arange(len(vectors), dtype=np.int64), vectors, DIMENSION, coarse_min=coarse_min)
    total = len(vectors)
    return FaissVectorStore(path, lambda ids: _meta(ids, total), DIMENSION)


def _hits(store: FaissVectorStore, query: np.ndarray, limit: int) -> list[tuple[str, float]]:
    return [(h.embedding_id, h.score) for h in store.search(query, limit)]


def _unit_rows(rng: np.random.Generator, count: int) -> np.ndarray:
    rows = rng.standard_normal((count, DIMENSION)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_coarse_copy_is_written_only_for_large_stores(tmp_path: Path) -> None:
    rows = _unit_rows(np.random.default_rng(1), 50)
    small = _store(tmp_path, "small", rows, coarse_min=51)
    large = _store(tmp_path, "large", rows, coarse_min=50)
    assert not coarse_path(small.path).exists()
    assert coarse_path(large.path).name == COARSE_FILE and coarse_path(large.path).is_file()


def _clustered(rng: np.random.Generator) -> np.ndarray:
    """Clustered rows (near neighbours differ in the 3rd-4th decimal, below the coarse copies'
    rounding) plus exact duplicates (tie groups at the cut)."""
    centres = _unit_rows(rng, 12)
    rows = centres[rng.integers(0, 12, 3000)] + 0.02 * rng.standard_normal((3000, DIMENSION)).astype(np.float32)
    rows[2000:2040] = rows[100]
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


# The copies older generations hold instead of today's: FAISS's own 8-bit codes, float16 before.
OLDER_COPIES = {
    "8-bit uniform": (faiss.ScalarQuantizer.QT_8bit_uniform, COARSE_FILE),
    "float16": (faiss.ScalarQuantizer.QT_fp16, LEGACY_COARSE_FILE),
}


def _coarse_store(tmp_path: Path, name: str, rows: np.ndarray, kind: str) -> FaissVectorStore:
    store = _store(tmp_path, name, rows, coarse_min=1)
    if kind in OLDER_COPIES:
        qtype, file_name = OLDER_COPIES[kind]
        coarse_path(store.path).unlink()
        store.path.with_name(COARSE_SCALE_FILE).unlink()
        older = faiss.IndexScalarQuantizer(DIMENSION, qtype, faiss.METRIC_INNER_PRODUCT)
        older.train(rows)
        older.add(rows)
        faiss.write_index(older, str(store.path.with_name(file_name)))
        store = FaissVectorStore(store.path, lambda ids: _meta(ids, len(rows)), DIMENSION)
    assert store._coarse is not None
    return store


def _quantizer(store: FaissVectorStore) -> int:
    assert store._coarse is not None
    return int(faiss.downcast_index(store._coarse.index).sq.qtype)


@pytest.mark.parametrize("kind", ["8-bit", *OLDER_COPIES])
def test_search_through_the_coarse_copy_equals_the_float32_scan(tmp_path: Path, kind: str) -> None:
    rng = np.random.default_rng(7)
    rows = _clustered(rng)
    exact = _store(tmp_path, "exact", rows, coarse_min=10**9)
    coarse = _coarse_store(tmp_path, "coarse", rows, kind)
    assert exact._coarse is None
    assert _quantizer(coarse) == (
        OLDER_COPIES[kind][0] if kind in OLDER_COPIES else faiss.ScalarQuantizer.QT_8bit_direct_signed
    )
    queries = [*_unit_rows(rng, 40), rows[100], rows[5]]
    for limit in (1, 10, 200):
        for query in queries:
            want = [(h.embedding_id, h.score) for h in exact.search(query, limit)]
            got = [(h.embedding_id, h.score) for h in coarse.search(query, limit)]
            assert got == want


@pytest.mark.parametrize("kind", ["8-bit", "8-bit uniform"])
def test_the_8bit_error_bound_holds_for_every_stored_vector(tmp_path: Path, kind: str) -> None:
    rng = np.random.default_rng(11)
    # Components of very different sizes: the scale is set by the widest one.
    rows = _clustered(rng) * np.linspace(0.2, 3.0, DIMENSION, dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    store = _coarse_store(tmp_path, "bound", rows, kind)
    coarse = store._coarse
    assert coarse is not None
    for query in [*_unit_rows(rng, 30), rows[7]]:
        scores, positions, error = coarse.scan(query, len(rows))
        exact = rows[positions] @ query
        worst = float(np.abs(scores - exact).max())
        assert 0 < worst <= error
        assert error < 0.1  # loose enough to be safe, tight enough to prune


def test_a_coarse_copy_of_another_size_is_refused(tmp_path: Path) -> None:
    rows = _unit_rows(np.random.default_rng(3), 40)
    store = _store(tmp_path, "a", rows, coarse_min=1)
    other = tmp_path / "b" / "vectors.faiss"
    other.parent.mkdir()
    write_vectors(other, np.arange(20, dtype=np.int64), rows[:20], DIMENSION, coarse_min=1)
    coarse_path(store.path).write_bytes(coarse_path(other).read_bytes())
    with pytest.raises(ValueError, match="does not match"):
        FaissVectorStore(store.path, lambda ids: _meta(ids, 40), DIMENSION)


@pytest.mark.parametrize("text", ["{not json", '{"format": "int8-direct-1", "scale": 0.01}'])
def test_a_damaged_scale_file_is_refused_in_one_line(tmp_path: Path, text: str) -> None:
    rows = _unit_rows(np.random.default_rng(2), 40)
    store = _store(tmp_path, "a", rows, coarse_min=1)
    store.path.with_name(COARSE_SCALE_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=COARSE_SCALE_FILE.replace(".", r"\.")):
        FaissVectorStore(store.path, lambda ids: _meta(ids, 40), DIMENSION)


def test_a_scale_file_of_another_format_is_ignored_and_the_float32_rows_answer(tmp_path: Path) -> None:
    rows = _unit_rows(np.random.default_rng(2), 400)
    exact = _store(tmp_path, "exact", rows, coarse_min=10**9)
    store = _store(tmp_path, "a", rows, coarse_min=1)
    store.path.with_name(COARSE_SCALE_FILE).write_text('{"format": "int4-direct-9"}', encoding="utf-8")
    reopened = FaissVectorStore(store.path, lambda ids: _meta(ids, 400), DIMENSION)
    assert reopened._coarse is None
    assert _hits(reopened, rows[3], 10) == _hits(exact, rows[3], 10)


def test_vectors_too_wide_for_exact_byte_sums_get_no_coarse_copy(tmp_path: Path) -> None:
    wide = COARSE_MAX_DIMENSION + 1
    rows = np.random.default_rng(5).standard_normal((64, wide)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    path = tmp_path / "wide" / "vectors.faiss"
    path.parent.mkdir()
    write_vectors(path, np.arange(len(rows), dtype=np.int64), rows, wide, coarse_min=1)
    assert not coarse_path(path).exists()
    store = FaissVectorStore(path, lambda ids: _meta(ids, len(rows)), wide)
    assert store._coarse is None
    assert [h.embedding_id for h in store.search(rows[9], 3)][0] == "e00009"


def _reversed_meta(ids: list[int] | None, total: int) -> dict[int, tuple[str, str, str, str, str]]:
    """`_meta` with unit keys in the opposite order to embedding ids, so an order by key and one by
    embedding id differ on every tie."""
    return {i: (e, f"k{total - i:05d}", *rest) for i, (e, _k, *rest) in _meta(ids, total).items()}


def _keys(ids: list[int], total: int, asked: list[list[int]]) -> dict[int, tuple[str, str]]:
    asked.append(list(ids))
    return {i: (e, k) for i, (e, k, *_rest) in _reversed_meta([i for i in ids if i < total], total).items()}


@pytest.mark.parametrize("limit", [1, 7, 40, 120])
def test_search_units_gives_search_hits_keys_and_scores_reading_only_keys(tmp_path: Path, limit: int) -> None:
    """Code search's vector leg: the same (key, score) list, in the same order, as `search` —
    with tie groups at the cut (40 duplicated rows) — while reading the chunk keys of the
    candidates only, never the units' metadata."""
    rows = _clustered(np.random.default_rng(7))
    path = tmp_path / "v" / "vectors.faiss"
    path.parent.mkdir()
    write_vectors(path, np.arange(len(rows), dtype=np.int64), rows, DIMENSION, coarse_min=100)
    asked: list[list[int]] = []
    metadata_reads: list[object] = []

    def meta(ids: list[int] | None) -> dict[int, tuple[str, str, str, str, str]]:
        metadata_reads.append(ids)
        return _reversed_meta(ids, len(rows))

    store = FaissVectorStore(path, meta, DIMENSION, lambda ids: _keys(ids, len(rows), asked))
    reference = FaissVectorStore(path, lambda ids: _reversed_meta(ids, len(rows)), DIMENSION)
    rng = np.random.default_rng(8)
    for query in [rows[100], rows[5], *_unit_rows(rng, 6)]:
        want = [(h.metadata["key"], h.score) for h in reference.search(query, limit)]
        metadata_reads.clear()
        got = store.search_units(query, limit)
        assert got == want
        tie_settled_exhaustively = bool(metadata_reads)  # a tie past FAISS's fetch reads `search`'s way
        assert tie_settled_exhaustively or len(asked[-1]) <= limit + 40
    assert asked  # the keys path ran


def test_search_units_without_a_key_reader_falls_back_to_search(tmp_path: Path) -> None:
    rows = _unit_rows(np.random.default_rng(3), 60)
    store = _store(tmp_path, "plain", rows, coarse_min=1000)
    query = rows[4]
    assert store.search_units(query, 5) == [(h.metadata["key"], h.score) for h in store.search(query, 5)]
    assert store.search_units(query, 0) == []
