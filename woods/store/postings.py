"""Term postings beside the FTS5 lexical index: each token's rows and per-column frequencies,
scored with numpy.

Why: FTS5 ranks a MATCH by calling its `bm25()` auxiliary function once per matching row (2–3 µs
a row through the xInst API), and a question's ordinary words match thousands of units. The
postings hold, for every token FTS5 indexed, the rows it occurs in and its count in each column,
so a query reads a few blobs and scores every matching row in a handful of vector operations.
Measured on the standard library's bench index (74k lexical rows, 50 questions): see
`bench/README.md`, "query_bench.py".

Exactness: the postings are FTS5's own tokens. A document's fields are cut at whitespace (every
character Python splits on is a separator to `unicode61`, so no token spans two words) after
control characters become spaces (separators too); each distinct word is then tokenized by FTS5
itself (`lexical_query.fts5_tokens`, the index's tokenizer). Row and token counts are FTS5's
(`rows`, total `tokens`, each row's length), and `score` evaluates `fts5_bm25`'s expression with
FTS5's operations in FTS5's order, phrases summed in the order given. With whole-number column
weights (the code profile's) each row's weighted frequency is an exact integer, so every score
equals FTS5's `bm25()` to the last bit; the reader answers only queries whose every phrase is one
token (FTS5 matches a longer phrase by position, which postings do not hold) and the caller asks
FTS5 for the rest.

Format: table `lexical_postings` (term, rows, wide, docs, tfs): `docs` the rowids ascending
(int32), `tfs` the five column counts per row (uint16, or uint32 when `wide`); table
`lexical_lengths` holds every row's token count as one int32 blob indexed by rowid; the `meta` key
`lexical_postings` names the format with the row and token totals. A generation without them
(written before) is read through FTS5 alone.
"""

from __future__ import annotations

import json
import re
import sqlite3
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from woods.errors import CorruptIndexError
from woods.store.fts5_bm25 import BM25_B, BM25_K1
from woods.store.lexical_query import fts5_tokens

POSTINGS_FORMAT = "postings-1"
POSTINGS_META_KEY = "lexical_postings"
# Created by `PostingsBuilder.write` inside the writer's transaction (statement by statement:
# `executescript` would commit it first).
POSTINGS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS lexical_postings (term TEXT PRIMARY KEY, rows INTEGER NOT NULL, "
    "wide INTEGER NOT NULL, docs BLOB NOT NULL, tfs BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lexical_lengths (id INTEGER PRIMARY KEY, data BLOB NOT NULL)",
)
# Columns of a posting's frequencies (the lexical table's five fields).
COLUMNS = 5
# Documents buffered before their new words are tokenized by FTS5 in one pass: one in-memory FTS5
# table per batch, instead of one per document.
_BATCH_UNITS = 2048
# A column count above this does not fit the narrow layout; the term is stored wide (uint32).
_NARROW_MAX = np.iinfo(np.uint16).max
# Control characters are separators to FTS5's unicode61; made spaces so `str.split` cuts there too.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class PostingsBuilder:
    """Collects each lexical row's tokens while a generation is written, then writes the postings
    into the same database (`write`). Rows must be added in ascending rowid order, as the metadata
    writer inserts them.

    Counting is vectorised per batch: every word occurrence becomes a word id (dict lookups in C),
    word ids expand to token ids, and one `np.unique` over (token, row, column) keys counts them —
    Python touches each distinct word once, not each occurrence."""

    def __init__(self) -> None:
        self._pending: list[tuple[int, Sequence[str]]] = []
        self._last_rowid = 0  # SQLite rowids start at 1
        self._word_id: dict[str, int] = {}
        self._word_first = array("i")  # per word: where its tokens start in `_word_tokens`
        self._word_count = array("i")  # per word: how many tokens it has
        self._word_tokens = array("i")  # token ids, word after word
        self._token_id: dict[str, int] = {}
        # Per batch: (token ids, rowids, (n × COLUMNS) counts) of its postings, sorted by
        # (token, rowid); and (rowids, lengths) of its rows.
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._sizes: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, rowid: int, fields: Sequence[str]) -> None:
        """One lexical row: its `COLUMNS` field texts, in the table's column order."""
        if len(fields) != COLUMNS:
            raise ValueError(f"a lexical row has {COLUMNS} fields, got {len(fields)}")
        if rowid <= self._last_rowid:
            raise ValueError(f"lexical rows must come in ascending rowid order ({rowid} after {self._last_rowid})")
        self._last_rowid = rowid
        self._pending.append((rowid, fields))
        if len(self._pending) >= _BATCH_UNITS:
            self._flush()

    def _learn(self, words: set[str]) -> None:
        """Give each new word an id and its FTS5 tokens ids (FTS5 tokenizes them in one pass)."""
        fresh = sorted(words.difference(self._word_id))
        for word, tokens in zip(fresh, fts5_tokens(fresh), strict=True):
            self._word_id[word] = len(self._word_id)
            self._word_first.append(len(self._word_tokens))
            self._word_count.append(len(tokens))
            for token in tokens:
                ident = self._token_id.get(token)
                if ident is None:
                    ident = self._token_id[token] = len(self._token_id)
                self._word_tokens.append(ident)

    def _flush(self) -> None:
        if not self._pending:
            return
        rowids = np.asarray([rowid for rowid, _fields in self._pending], dtype=np.int64)
        texts = [_CONTROL.sub(" ", text).split() for _rowid, fields in self._pending for text in fields]
        self._pending = []
        words = list(chain.from_iterable(texts))
        self._learn(set(words))
        occurrences = np.fromiter(map(self._word_id.__getitem__, words), dtype=np.int64, count=len(words))
        per_field = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        fields = np.repeat(np.arange(len(texts), dtype=np.int64), per_field)  # local row × COLUMNS + column
        counts = np.frombuffer(self._word_count, dtype=np.int32)[occurrences]
        firsts = np.frombuffer(self._word_first, dtype=np.int32)[occurrences]
        # Token k of an occurrence sits at its word's first token + k.
        within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        tokens = np.frombuffer(self._word_tokens, dtype=np.int32)[np.repeat(firsts, counts) + within].astype(np.int64)
        fields = np.repeat(fields, counts)
        slots = len(texts)
        keys, tallies = np.unique(tokens * slots + fields, return_counts=True)  # by (token, row, column)
        token_of, field_of = np.divmod(keys, slots)
        row_of, column_of = np.divmod(field_of, COLUMNS)
        pairs, first_of_pair, pair_of = np.unique(token_of * len(rowids) + row_of, return_index=True,
                                                  return_inverse=True)
        tfs = np.zeros((len(pairs), COLUMNS), dtype=np.uint32)
        tfs[pair_of, column_of] = tallies
        self._parts.append((token_of[first_of_pair], rowids[row_of[first_of_pair]], tfs))
        lengths = np.bincount(fields // COLUMNS, minlength=len(rowids))
        self._sizes.append((rowids, lengths))

    def write(self, conn: sqlite3.Connection) -> None:
        """Write the postings, the row lengths and the meta entry into `conn` (in its open
        transaction)."""
        self._flush()
        for statement in POSTINGS_SCHEMA:
            conn.execute(statement)
        terms = np.concatenate([p[0] for p in self._parts]) if self._parts else np.zeros(0, dtype=np.int64)
        rows = np.concatenate([p[1] for p in self._parts]) if self._parts else np.zeros(0, dtype=np.int64)
        tfs = np.concatenate([p[2] for p in self._parts]) if self._parts else np.zeros((0, COLUMNS), dtype=np.uint32)
        order = np.argsort(terms, kind="stable")  # batches in rowid order: rows stay ascending
        terms, rows, tfs = terms[order], rows[order].astype(np.int32), tfs[order]
        bounds = np.searchsorted(terms, np.arange(len(self._token_id) + 1))
        conn.executemany(
            "INSERT INTO lexical_postings(term, rows, wide, docs, tfs) VALUES (?, ?, ?, ?, ?)",
            (_posting(name, rows[bounds[i] : bounds[i + 1]], tfs[bounds[i] : bounds[i + 1]])
             for name, i in self._token_id.items() if bounds[i + 1] > bounds[i]),
        )
        size = max((int(r[-1]) for r, _n in self._sizes if len(r)), default=0) + 1
        lengths = np.zeros(size, dtype=np.int32)
        for rowids, counted in self._sizes:
            lengths[rowids] = counted
        conn.execute("INSERT INTO lexical_lengths(id, data) VALUES (0, ?)", (lengths.tobytes(),))
        rows_total = sum(len(r) for r, _n in self._sizes)
        meta = {"format": POSTINGS_FORMAT, "rows": rows_total, "tokens": int(lengths.sum(dtype=np.int64))}
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (POSTINGS_META_KEY, json.dumps(meta)))


def _posting(term: str, rows: np.ndarray, tfs: np.ndarray) -> tuple[str, int, int, bytes, bytes]:
    wide = bool(len(tfs)) and int(tfs.max()) > _NARROW_MAX
    return term, len(rows), int(wide), rows.tobytes(), tfs.astype(np.uint32 if wide else np.uint16).tobytes()


@dataclass(frozen=True, slots=True)
class Posting:
    """One token's rows (ascending) and their (rows × `COLUMNS`) column counts."""

    rows: np.ndarray
    tfs: np.ndarray


class Postings:
    """Read access to a generation's postings (see the module docstring).

    `count(tokens)` gives each token's row count; `score(...)` the FTS5 BM25 of every row matching
    any of the tokens. Postings read are kept (the generation is immutable), up to `_CACHE_ROWS`
    rows' worth."""

    # Rows of postings a reader keeps between queries: a long-lived server meets the same words
    # again; ~14 bytes a row, so about 28 MB at most.
    _CACHE_ROWS = 2_000_000

    def __init__(self, conn: sqlite3.Connection, rows: int, tokens: int) -> None:
        self._conn = conn
        self.rows = rows
        self.tokens = tokens
        self._lengths: np.ndarray | None = None
        self._cache: dict[str, Posting] = {}
        self._cached_rows = 0

    @classmethod
    def open(cls, conn: sqlite3.Connection) -> Postings | None:
        """The postings of the database behind `conn`, or None when it has none of this format."""
        try:
            found = conn.execute("SELECT value FROM meta WHERE key = ?", (POSTINGS_META_KEY,)).fetchone()
        except sqlite3.OperationalError:
            return None
        if found is None:
            return None
        try:
            meta = json.loads(found[0])
            if meta.get("format") != POSTINGS_FORMAT:
                return None
            return cls(conn, int(meta["rows"]), int(meta["tokens"]))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None

    def count(self, tokens: Sequence[str]) -> list[int]:
        """How many rows each token occurs in (0 for a token FTS5 never indexed)."""
        wanted = list(dict.fromkeys(tokens))
        marks = ",".join("?" * len(wanted))
        found = dict.fromkeys(wanted, 0)
        for term, rows in self._conn.execute(f"SELECT term, rows FROM lexical_postings WHERE term IN ({marks})", wanted):
            found[str(term)] = int(rows)
        return [found[t] for t in tokens]

    def _postings(self, tokens: Sequence[str]) -> dict[str, Posting]:
        found = {t: p for t in tokens if (p := self._cache.get(t)) is not None}
        missing = [t for t in dict.fromkeys(tokens) if t not in found]
        if missing:
            marks = ",".join("?" * len(missing))
            size = len(self.row_lengths())
            for term, wide, docs, tfs in _rows(
                self._conn, f"SELECT term, wide, docs, tfs FROM lexical_postings WHERE term IN ({marks})", missing
            ):
                posting = _decoded(str(term), wide, docs, tfs, size)
                found[str(term)] = posting
                if self._cached_rows + len(posting.rows) > self._CACHE_ROWS:
                    self._cache.clear()
                    self._cached_rows = 0
                self._cache[str(term)] = posting
                self._cached_rows += len(posting.rows)
        return found

    def row_lengths(self) -> np.ndarray:
        """Every row's token count, indexed by rowid (read once)."""
        if self._lengths is None:
            found = self._conn.execute("SELECT data FROM lexical_lengths WHERE id = 0").fetchone()
            self._lengths = decode_lengths(None if found is None else found[0])
        return self._lengths

    def entries(self) -> Iterator[tuple[Any, ...]]:
        """(term, rowid, tf0 … tf4) of every posting, term by term: the rows the PostgreSQL
        backend publishes as its term statistics."""
        size = len(self.row_lengths())
        for term, wide, docs, tfs in _rows(self._conn, "SELECT term, wide, docs, tfs FROM lexical_postings"):
            posting = _decoded(str(term), wide, docs, tfs, size)
            for rowid, row in zip(posting.rows.tolist(), posting.tfs.tolist(), strict=True):
                yield (str(term), rowid, *row)

    def score(self, tokens: Sequence[str], idfs: Sequence[float], weights: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """(rowids ascending, scores) of every row holding any of `tokens`: FTS5's BM25 (positive,
        higher = better) with `idfs[i]` the IDF of `tokens[i]`, phrases summed in the given order."""
        postings = self._postings(tokens)
        return bm25_scores([postings.get(t) for t in tokens], idfs, weights, self.row_lengths(), self.rows, self.tokens)

    def top(self, tokens: Sequence[str], idfs: Sequence[float], weights: Sequence[float],
            limit: int) -> tuple[np.ndarray, np.ndarray]:
        """`top_rows` of `score`: the rows a lexical search of `limit` hits needs."""
        rowids, scores = self.score(tokens, idfs, weights)
        return top_rows(rowids, scores, limit)


def _rows(conn: sqlite3.Connection, sql: str, params: Sequence[str] = ()) -> Iterator[Any]:
    """The rows of a postings query; a value SQLite cannot hand back (a blob stored as text that
    is not UTF-8) is a damaged index, not an unexpected error."""
    try:
        yield from conn.execute(sql, params)
    except sqlite3.DatabaseError as exc:
        raise CorruptIndexError(f"the lexical postings cannot be read ({exc}); run `woods index --full`") from exc


def bm25_scores(postings: Sequence[Posting | None], idfs: Sequence[float], weights: Sequence[float],
                lengths: np.ndarray, rows: int, tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """(rowids ascending, scores) of every row of `lengths` (each row's token count, by rowid)
    holding any of the `postings`: FTS5's BM25 with `idfs[i]` the IDF of `postings[i]` and `rows`,
    `tokens` the index's row and token totals (for `avgdl`), phrases summed in the given order.
    One function for both backends: the PostgreSQL reader scores the postings it reads with it,
    so its lexical lists are the local ones by construction."""
    total = np.zeros(len(lengths), dtype=np.float64)
    matched = np.zeros(len(lengths), dtype=bool)
    column_weights = np.asarray(weights, dtype=np.float64)
    avgdl = float(tokens) / float(rows) if rows else 1.0
    for posting, weight in zip(postings, idfs, strict=True):
        if posting is None or not len(posting.rows):
            continue
        found = posting.rows
        freq = posting.tfs @ column_weights  # whole numbers for whole weights: exact
        size = lengths[found].astype(np.float64)
        # fts5_bm25.bm25's expression, operation for operation (FTS5's order).
        norm = BM25_K1 * ((1 - BM25_B) + (BM25_B * size) / avgdl)
        total[found] += weight * ((freq * (BM25_K1 + 1.0)) / (freq + norm))
        matched[found] = True
    hits = np.flatnonzero(matched)
    return hits, total[hits]


def decode_posting(term: str, wide: object, docs: object, tfs: object, size: int) -> Posting:
    """A stored posting (`lexical_postings` row, here or as the PostgreSQL backend copied it) as
    arrays; CorruptIndexError when its blobs do not fit one another or name a row outside the
    `size` rows of the index."""
    return _decoded(term, wide, docs, tfs, size)


def decode_lengths(data: object) -> np.ndarray:
    """The `lexical_lengths` blob as each row's token count (CorruptIndexError when damaged)."""
    if not isinstance(data, bytes) or len(data) % 4:
        raise CorruptIndexError("the lexical index's row lengths are missing or damaged; run `woods index --full`")
    return np.frombuffer(data, dtype=np.int32)


def _decoded(term: str, wide: object, docs: object, tfs: object, size: int) -> Posting:
    """A stored posting as arrays, or CorruptIndexError when its blobs do not fit one another or
    name a row outside the `size` rows of the index."""
    counts_type = np.uint32 if wide else np.uint16
    if (not isinstance(docs, bytes) or not isinstance(tfs, bytes) or len(docs) % 4
            or len(tfs) != len(docs) // 4 * COLUMNS * np.dtype(counts_type).itemsize):
        raise CorruptIndexError(f"the lexical postings of {term!r} are damaged; run `woods index --full`")
    rows = np.frombuffer(docs, dtype=np.int32)
    if len(rows) and (int(rows.min()) < 0 or int(rows.max()) >= size):
        raise CorruptIndexError(f"the lexical postings of {term!r} name a row past the index's last; "
                                "run `woods index --full`")
    return Posting(rows, np.frombuffer(tfs, dtype=counts_type).reshape(-1, COLUMNS))


def top_rows(rowids: np.ndarray, scores: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows scoring at least the `limit`-th best score (a tie group at the cut is kept whole),
    in rowid order: what a caller needs to order them by (−score, key) and cut at `limit`."""
    if len(scores) <= limit:
        return rowids, scores
    cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
    keep = scores >= cut
    return rowids[keep], scores[keep]
