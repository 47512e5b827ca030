"""The float16 copy large vector stores scan first must give exactly the float32 scan's answer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from woods.store.vectors import COARSE_FILE, FaissVectorStore, coarse_path, write_vectors

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


def _unit_rows(rng: np.random.Generator, count: int) -> np.ndarray:
    rows = rng.standard_normal((count, DIMENSION)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_float16_copy_is_written_only_for_large_stores(tmp_path: Path) -> None:
    rows = _unit_rows(np.random.default_rng(1), 50)
    small = _store(tmp_path, "small", rows, coarse_min=51)
    large = _store(tmp_path, "large", rows, coarse_min=50)
    assert not coarse_path(small.path).exists()
    assert coarse_path(large.path).name == COARSE_FILE and coarse_path(large.path).is_file()


def test_search_through_the_float16_copy_equals_the_float32_scan(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    # Clustered rows (near neighbours differ in the 3rd-4th decimal, where float16 rounds) plus
    # exact duplicates (tie groups at the cut).
    centres = _unit_rows(rng, 12)
    rows = centres[rng.integers(0, 12, 3000)] + 0.02 * rng.standard_normal((3000, DIMENSION)).astype(np.float32)
    rows[2000:2040] = rows[100]
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    exact = _store(tmp_path, "exact", rows, coarse_min=10**9)
    coarse = _store(tmp_path, "coarse", rows, coarse_min=1)
    assert coarse._coarse is not None and exact._coarse is None
    queries = [*_unit_rows(rng, 40), rows[100], rows[5]]
    for limit in (1, 10, 200):
        for query in queries:
            want = [(h.embedding_id, h.score) for h in exact.search(query, limit)]
            got = [(h.embedding_id, h.score) for h in coarse.search(query, limit)]
            assert got == want


def test_a_float16_copy_of_another_size_is_refused(tmp_path: Path) -> None:
    rows = _unit_rows(np.random.default_rng(3), 40)
    store = _store(tmp_path, "a", rows, coarse_min=1)
    other = tmp_path / "b" / "vectors.faiss"
    other.parent.mkdir()
    write_vectors(other, np.arange(20, dtype=np.int64), rows[:20], DIMENSION, coarse_min=1)
    coarse_path(store.path).write_bytes(coarse_path(other).read_bytes())
    with pytest.raises(ValueError, match="does not match"):
        FaissVectorStore(store.path, lambda ids: _meta(ids, 40), DIMENSION)
