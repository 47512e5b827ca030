"""FTS5's BM25, outside SQLite: the score, operation for operation.

Why: the PostgreSQL backend must rank the lexical leg exactly as the local index's FTS5 `bm25()`
does, so both backends return the same ranked list (`docs/postgres.md` has the measurement that
chose this over `ts_rank_cd`). FTS5 scores a row as

    score = Σ_phrases idf_i · (f_i · (k1 + 1)) / (f_i + k1 · (1 − b + b · D / avgdl))

with `f_i` the phrase's column-weighted frequency in the row, `D` the row's token count over all
columns, `avgdl` tokens per row, and `idf_i = ln((N − n_i + 0.5) / (n_i + 0.5))` floored at 1e-6
(`sqlite/ext/fts5/fts5_aux.c`, fts5Bm25Function). The published term statistics give every
input; the arithmetic below keeps FTS5's order of operations so scores agree to the last bit.

Query terms are cut with FTS5's own tokenizer (`woods.store.lexical_query.fts5_phrases`), so
stemming and case folding are those of the index; phrases are summed in the order FTS5 sums them
(`lexical_query.phrase_order`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# fts5_aux.c constants.
BM25_K1 = 1.2
BM25_B = 0.75
IDF_FLOOR = 1e-6


def idf(rows: int, hits: int) -> float:
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return IDF_FLOOR if value <= 0.0 else value


def bm25(idfs: Sequence[float], frequencies: Sequence[float], length: float, avgdl: float) -> float:
    """The FTS5 score of one row (positive: FTS5's `bm25()` is its negation)."""
    score = 0.0
    for weight, freq in zip(idfs, frequencies, strict=True):
        score += weight * ((freq * (BM25_K1 + 1.0)) / (freq + BM25_K1 * (1 - BM25_B + BM25_B * length / avgdl)))
    return score
