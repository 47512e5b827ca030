"""SQLite metadata store: units, chunks, files, edges, an FTS5 index and its postings — the
index's source of truth.

Why SQLite: one file, transactional, a full-text engine (FTS5) built in, and readable without a
server. A published generation is never written again, so readers open it with `immutable=1`:
no lock files, no journal, and the bytes on disk stay exactly as they were (reading never writes).

Guarantees: records come back as dicts with string keys (`Unit.to_dict()` plus `"id"`, the
storage key); every list is returned in a documented order; `search` follows the Ruby
MetadataStore#search contract (case-insensitive substring, literal `%`/`_`, validated field names,
insertion order).
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods.store.base import Record, field_haystack, record_haystack, validate_search_fields
from woods.store.contracts import ChunkRow as ChunkRow
from woods.store.contracts import EdgeRow, NameRow
from woods.store.contracts import FileRow as FileRow
from woods.store.contracts import UnitSummary as UnitSummary
from woods.store.fts5_bm25 import idf
from woods.store.lexical_query import (
    LEXICAL_TOKENIZER,
    bound,
    clean_terms,
    first_split,
    fts5_tokens,
    informative_terms,
    match_expression,
    next_split,
    phrase_order,
    proven,
    split_expressions,
)
from woods.store.sqlite_uri import sqlite_uri

if TYPE_CHECKING:
    from woods.store.postings import Postings

# `_single_tokens`' mark for a term not cut yet (FTS5 never makes an empty token).
_UNCUT = ""
# The module whose presence in the process decides whether the postings are read (`_postings`).
_NUMPY = "numpy"
# SQLite limits host parameters per statement (32766 since 3.32); stay far below it.
_BATCH = 900

# Lexical hits fetched past the limit, so ties at the cut can be ordered by key.
_LEXICAL_TIE_MARGIN = 16
# The row reader maps the (immutable) database instead of reading it page by page through SQLite's
# small cache: a lookup of a few hundred rows by key then costs no system call per page (hybrid p50
# −2 ms at 115k chunks). The lexical connection does not: an FTS5 query walks long doclists once,
# and mapping them only grows the resident set (a cold keyword search: 29 → 168 MiB peak). SQLite
# caps the map at its compile-time limit (2 GiB in the usual builds); pages past it are read.
_MMAP_BYTES = 1 << 31
# Query terms whose row counts a reader keeps (a query has a handful; a long-lived server sees
# thousands of distinct words): cleared when full, ~100 bytes each.
_TERM_CACHE_SIZE = 8192
# Unit summaries a reader keeps (the lexical search reads its hits' summaries in the statement that
# maps FTS5 rowids to keys, so ranking them costs no second read): cleared when full, ~300 bytes each.
_SUMMARY_CACHE_SIZE = 65536
# The ranking columns of a unit, in `UnitSummary` field order.
_SUMMARY_COLUMNS = "key, identifier, name, type, language, file_path, line_start, line_end, parent, pagerank_percentile"


def _rows_in(conn: sqlite3.Connection, head: str, values: Sequence[object], tail: str = "") -> Iterator[Any]:
    """The rows of `{head} IN (…){tail}` for `values`, asked `_BATCH` parameters at a time (in
    their order), so no statement passes SQLite's parameter limit."""
    for start in range(0, len(values), _BATCH):
        part = values[start : start + _BATCH]
        yield from conn.execute(f"{head} IN ({','.join('?' * len(part))}){tail}", part)


# Files `file_links` relates at once: the ranking asks about its candidate files (a few hundred at
# most); the bound keeps the statement well under SQLite's parameter limit.
FILE_LINKS_PATHS = 1_000

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    language TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    unit_count INTEGER NOT NULL,
    warnings TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS units (
    rowid INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    identifier TEXT NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    language TEXT NOT NULL,
    file_path TEXT NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    parent TEXT,
    stable_id TEXT NOT NULL,
    source_hash TEXT NOT NULL,
    pagerank REAL NOT NULL DEFAULT 0,
    pagerank_percentile REAL NOT NULL DEFAULT 0,
    data TEXT NOT NULL,
    haystack TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS units_identifier ON units(identifier);
CREATE INDEX IF NOT EXISTS units_identifier_nocase ON units(identifier COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS units_name ON units(name);
CREATE INDEX IF NOT EXISTS units_type ON units(type);
CREATE INDEX IF NOT EXISTS units_file ON units(file_path, line_start);
CREATE INDEX IF NOT EXISTS units_stable ON units(stable_id);
CREATE TABLE IF NOT EXISTS edges (
    source_key TEXT NOT NULL,
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    target_key TEXT,
    via TEXT NOT NULL,
    ordinal INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_source ON edges(source);
CREATE INDEX IF NOT EXISTS edges_target ON edges(target);
CREATE TABLE IF NOT EXISTS extractions (path TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS lexical USING fts5(
    name, qualifier, path, doc, body,
    content='', tokenize={LEXICAL_TOKENIZER!r}
);
"""

# The embedding chunks. A lexical generation's metadata database holds the table empty; a
# vector-complete generation holds the rows in its own chunks.sqlite3 (written by phase 2).
_CHUNKS_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    embedding_id TEXT PRIMARY KEY,
    vector_id INTEGER NOT NULL UNIQUE,
    unit_key TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    chunk_type TEXT NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    text_sha256 TEXT NOT NULL,
    plan_key TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_unit ON chunks(unit_key);
"""
_SCHEMA += _CHUNKS_SCHEMA

_SEGMENT_SEPARATORS = re.compile(r"::|#|\.|:|/")


def unit_name(identifier: str) -> str:
    """The last segment of an identifier: `Billing::Invoice#charge` → `charge`, `a.b.C.m` → `m`,
    `pkg.Cls#m(int,String)` → `m` (Java overload suffix dropped), `GET /users/:id` → the whole."""
    if " " in identifier:
        return identifier
    head = identifier.split("(", 1)[0]
    return _SEGMENT_SEPARATORS.split(head)[-1] or head


# The lexical index's columns, in table order (`LexicalDocument` fields).
LEXICAL_COLUMNS = ("name", "qualifier", "path", "doc", "body")


@dataclass(frozen=True, slots=True)
class LexicalDocument:
    """One unit as the lexical index sees it: each field already cut into code-aware tokens
    (`woods.tokens`) and joined by spaces. `name` is the unit's own name, `qualifier` the rest of
    its identifier, `path` its file, `doc` its signature and doc comment, `body` its text."""

    name: str
    qualifier: str
    path: str
    doc: str
    body: str


def _summary(row: Sequence[Any]) -> UnitSummary:
    """A `UnitSummary` from the `_SUMMARY_COLUMNS` of one row."""
    return UnitSummary(
        str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), str(row[5]),
        int(row[6]), int(row[7]), row[8], float(row[9]),
    )


class SQLiteMetadataStore:
    """Read access to a generation's `metadata.sqlite3` (implements `IndexMetadata`, every
    capability of `woods.store.contracts`).

    Opened with `mode=ro&immutable=1`: safe for any number of concurrent readers and guaranteed
    not to modify the file. One connection per store; `check_same_thread=False` because readers
    only read an immutable file.
    """

    def __init__(self, path: Path, chunks_path: Path | None = None) -> None:
        self.path = path
        uri = sqlite_uri(path)
        self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        # A vector-complete generation keeps its chunks in their own file beside the vectors
        # (phase 2 adds it without rewriting this one); attached read-only and immutable too.
        self._chunks = "chunks"
        if chunks_path is not None:
            try:
                self._conn.execute("ATTACH DATABASE ? AS vec", (sqlite_uri(chunks_path),))
            except BaseException:
                self._conn.close()
                raise
            self._chunks = "vec.chunks"
        # The lexical index has a connection of its own: a hybrid search runs it beside the vector
        # leg, whose row reads would otherwise wait for the FTS5 query on the shared connection.
        try:
            self._lexical_conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except BaseException:
            self._conn.close()
            raise
        # Per-generation facts computed on first use (the file is immutable while open).
        self._lexical_row_count: int | None = None
        self._term_row_cache: dict[str, int] = {}
        self._token_cache: dict[str, str | None] = {}
        self._postings_state: tuple[Postings | None] | None = None
        self._summary_cache: dict[str, UnitSummary] = {}
        self._unit_count: int | None = None
        self._type_counts: dict[str, int] | None = None

    def map_rows(self) -> None:
        """Read rows through a memory map from now on (`_MMAP_BYTES`). Called once the open-time
        checks are done: their full counts would otherwise map every page of both tables."""
        self._conn.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")
        if self._chunks != "chunks":
            self._conn.execute(f"PRAGMA vec.mmap_size = {_MMAP_BYTES}")

    def close(self) -> None:
        self._lexical_conn.close()
        self._conn.close()

    # -- meta -------------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        return {row["key"]: row["value"] for row in self._conn.execute("SELECT key, value FROM meta")}

    # -- records ----------------------------------------------------------------------------
    @staticmethod
    def _record(row: sqlite3.Row) -> Record:
        record: Record = json.loads(row["data"])
        record["id"] = row["key"]
        return record

    def find(self, key: str) -> Record | None:
        row = self._conn.execute("SELECT key, data FROM units WHERE key = ?", (key,)).fetchone()
        return self._record(row) if row else None

    def find_batch(self, keys: Iterable[str]) -> dict[str, Record]:
        found: dict[str, Record] = {}
        for row in _rows_in(self._conn, "SELECT key, data FROM units WHERE key", list(dict.fromkeys(keys))):
            found[row["key"]] = self._record(row)
        return found

    def find_by_identifier(self, identifier: str) -> list[Record]:
        rows = self._conn.execute(
            "SELECT key, data FROM units WHERE identifier = ? ORDER BY type, key", (identifier,)
        )
        return [self._record(r) for r in rows]

    def find_by_name(self, name: str, limit: int = 50) -> list[Record]:
        """Records whose last identifier segment is `name`, ordered by (−pagerank, identifier, key)."""
        rows = self._conn.execute(
            "SELECT key, data FROM units WHERE name = ? ORDER BY pagerank DESC, identifier, key LIMIT ?",
            (name, limit),
        )
        return [self._record(r) for r in rows]

    def files_matching(self, path: str) -> list[str]:
        """Indexed file paths equal to `path` or ending in `/path`, sorted."""
        rows = self._conn.execute(
            "SELECT path FROM files WHERE path = ? OR substr(path, -?) = ? ORDER BY path",
            (path, len(path) + 1, "/" + path),
        )
        return [r[0] for r in rows]

    def find_by_type(self, unit_type: str) -> list[Record]:
        rows = self._conn.execute("SELECT key, data FROM units WHERE type = ? ORDER BY key", (unit_type,))
        return [self._record(r) for r in rows]

    def find_by_stable_prefix(self, prefix: str, limit: int = 21) -> list[Record]:
        rows = self._conn.execute(
            "SELECT key, data FROM units WHERE stable_id >= ? AND stable_id < ? ORDER BY stable_id LIMIT ?",
            (prefix, prefix + "g", limit),
        )
        return [self._record(r) for r in rows]

    def units_in_file(self, file_path: str) -> list[Record]:
        """Units of one file ordered by (line_start, -line_end, key): outermost first."""
        rows = self._conn.execute(
            "SELECT key, data FROM units WHERE file_path = ? ORDER BY line_start, line_end DESC, key",
            (file_path,),
        )
        return [self._record(r) for r in rows]

    def search(self, query: str, fields: Sequence[str] | None = None) -> list[Record]:
        needle = query.lower()
        if fields is None:
            rows = self._conn.execute(
                "SELECT key, data FROM units WHERE instr(haystack, ?) > 0 ORDER BY rowid", (needle,)
            )
            return [self._record(r) for r in rows]
        validate_search_fields(fields)
        results = []
        for row in self._conn.execute("SELECT key, data FROM units WHERE instr(haystack, ?) > 0 ORDER BY rowid", (needle,)):
            record = self._record(row)
            for name in fields:
                hay = field_haystack(record.get(name))
                if hay is not None and needle in hay:
                    results.append(record)
                    break
        return results

    # For each unit whose haystack contains the keyword, the top-level fields whose text contains
    # it, in record order — computed inside SQLite over the lowercased haystack (json_each), so a
    # keyword matching thousands of units decodes no record in Python. Booleans read as Ruby's
    # `to_s` ("true"/"false"); null never matches; containers match on their JSON text.
    _KEYWORD_FIELDS_SQL = (
        "SELECT u.key, (SELECT group_concat(j.key, char(31)) FROM json_each(u.haystack) j "
        "WHERE instr(CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE j.value END, ?1) > 0) "
        "FROM units u WHERE instr(u.haystack, ?1) > 0 ORDER BY u.rowid"
    )

    def keyword_fields(self, keyword: str) -> list[tuple[str, list[str]]]:
        """(key, matched top-level fields) of every unit `search(keyword)` returns, same order.

        Equivalent to `search` + a field-by-field substring check, without decoding records
        (the keyword strategy on a 70k-unit index spent ~1.2 s per keyword decoding them)."""
        needle = keyword.lower()
        rows = self._conn.execute(self._KEYWORD_FIELDS_SQL, (needle,))
        return [(r[0], r[1].split("\x1f") if r[1] else []) for r in rows]

    def lexical_search(self, terms: Sequence[str], limit: int, weights: Sequence[float]) -> list[tuple[str, float]]:
        """BM25 over the lexical index (`LEXICAL_COLUMNS`, one weight per column) for units
        matching any of `terms`: `(key, score)`, higher = better, ordered by (−score, key).
        Scored from the postings (`woods.store.postings`) when every kept term is one FTS5 token,
        else by FTS5 itself (`_fts5_rows`): the same list either way."""
        if limit <= 0:
            return []
        if len(weights) != len(LEXICAL_COLUMNS):
            raise ValueError(f"lexical_search needs {len(LEXICAL_COLUMNS)} column weights, got {len(weights)}")
        cleaned = clean_terms(terms)
        total = self._lexical_rows()
        counts = dict(zip(cleaned, self._term_rows(cleaned), strict=True))
        kept = informative_terms(cleaned, [counts[t] for t in cleaned], total)
        if not kept:
            return []
        # Rarest first: the order FTS5 sums phrases in, so every split below scores rows exactly
        # as one query over all of them (woods.store.lexical_query).
        kept = [kept[i] for i in phrase_order([counts[t] for t in kept], total)]
        rows_per_term = [counts[t] for t in kept]
        idfs = [idf(total, n) for n in rows_per_term]
        postings = self._postings()
        tokens = self._single_tokens(kept) if postings is not None else None
        if postings is not None and tokens is not None:
            rowids, scores = postings.top([tokens[t] for t in kept], idfs, weights, limit)
            rows = list(zip(rowids.tolist(), scores.tolist(), strict=True))
        else:
            rows = self._fts5_rows(kept, rows_per_term, idfs, limit, weights)
        keys = self._keys_of([int(r[0]) for r in rows])
        ranked = sorted(((keys[int(rowid)], float(score)) for rowid, score in rows), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:limit]

    def _fts5_rows(
        self, kept: Sequence[str], rows_per_term: Sequence[int], idfs: Sequence[float], limit: int,
        weights: Sequence[float],
    ) -> list[tuple[int, float]]:
        """The lexical hits as FTS5 ranks them: (rowid, score), at least `limit` of them when there
        are and never cut inside a tie, through the exact MaxScore split (`lexical_query`)."""
        columns = ", ".join(repr(float(w)) for w in weights)
        essential = first_split(rows_per_term, limit + _LEXICAL_TIE_MARGIN)
        while essential < len(kept):
            rows = self._top_rows(split_expressions(kept, essential), limit, columns)
            scores = [float(r[1]) for r in rows]
            if proven(scores, limit, bound(idfs[essential:])):
                return rows
            essential = next_split(idfs, essential, scores, limit)
        return self._top_rows((match_expression(kept),), limit, columns)

    def _postings(self) -> Postings | None:
        """The generation's term postings (`woods.store.postings`), or None when it was written
        without them (opened once) — or while this process has not loaded numpy: a one-shot
        keyword search then asks FTS5, because importing numpy (60–110 ms, measured) costs more
        than the postings save on one query (2–10 ms at 74k units). The list is the same."""
        if _NUMPY not in sys.modules:
            return None
        if self._postings_state is None:
            from woods.store.postings import Postings

            self._postings_state = (Postings.open(self._lexical_conn),)
        return self._postings_state[0]

    def _single_tokens(self, terms: Sequence[str]) -> dict[str, str] | None:
        """term → its one FTS5 token, or None when a term is no single token (a phrase: FTS5
        alone can match it). Cached per term, like `_term_rows`."""
        found = {t: self._token_cache.get(t, _UNCUT) for t in dict.fromkeys(terms)}
        unknown = [t for t, token in found.items() if token == _UNCUT]
        if unknown:
            cut = {t: p[0] if len(p) == 1 else None for t, p in zip(unknown, fts5_tokens(unknown), strict=True)}
            if len(self._token_cache) + len(cut) > _TERM_CACHE_SIZE:
                self._token_cache.clear()
            self._token_cache.update(cut)
            found.update(cut)
        singles = {t: token for t, token in found.items() if token is not None}
        return singles if len(singles) == len(found) else None

    def _top_rows(self, expressions: Sequence[str], limit: int, columns: str) -> list[tuple[int, float]]:
        """(rowid, score) of the best rows matching any of `expressions` (each ranked inside
        FTS5 alone: a join with `units` in the same statement made SQLite score and sort every
        match against the join, 4x slower), best first, at least `limit` of them when there are,
        and never cut inside a tie at `limit`: the fetch grows until the row after the cut scores
        lower than the cut's. `expressions` match disjoint rows (`split_expressions`); a round of
        several keeps the best `fetch` of their lists, each a top list of its own, so a row left
        out of one scores no higher than a row kept."""
        fetch = limit + _LEXICAL_TIE_MARGIN
        while True:
            rows: list[tuple[int, float]] = []
            for expression in expressions:
                rows += self._lexical_conn.execute(
                    f"SELECT rowid, -bm25(lexical, {columns}) FROM lexical WHERE lexical MATCH ? "
                    f"ORDER BY bm25(lexical, {columns}) LIMIT ?",
                    (expression, fetch),
                ).fetchall()
            if len(expressions) > 1:
                rows.sort(key=lambda r: (-r[1], r[0]))
                del rows[fetch:]
            if len(rows) < fetch or len(rows) <= limit or rows[-1][1] < rows[limit - 1][1]:
                return rows
            fetch *= 4

    def _lexical_rows(self) -> int:
        if self._lexical_row_count is None:
            self._lexical_row_count = int(self._lexical_conn.execute("SELECT count(*) FROM lexical").fetchone()[0])
        return self._lexical_row_count

    def _term_rows(self, terms: Sequence[str]) -> list[int]:
        """How many rows match each term, counted up to half the rows (all `informative_terms`
        needs; a count above half gives the same floored IDF as the true one); read from the
        postings when every term is one token, else counted by FTS5; cached per term: the
        generation is immutable."""
        half = (self._lexical_rows() + 1) // 2
        found = {t: n for t in terms if (n := self._term_row_cache.get(t)) is not None}
        missing = [t for t in dict.fromkeys(terms) if t not in found]
        if missing:
            postings = self._postings()
            tokens = self._single_tokens(missing) if postings is not None else None
            if postings is not None and tokens is not None:
                counted = postings.count([tokens[t] for t in missing])
            else:
                counted = [int(self._lexical_conn.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM lexical WHERE lexical MATCH ? LIMIT ?)",
                    (match_expression([term]), half),
                ).fetchone()[0]) for term in missing]
            if len(self._term_row_cache) + len(missing) > _TERM_CACHE_SIZE:
                self._term_row_cache.clear()
            for term, count in zip(missing, counted, strict=True):
                found[term] = self._term_row_cache[term] = min(count, half)
        return [found[t] for t in terms]

    def common_terms(self, terms: Sequence[str]) -> set[str]:
        """The terms matching at least half the units: BM25 floors their IDF, so they rank
        nothing (`informative_terms`)."""
        cleaned = clean_terms(terms)
        total = self._lexical_rows()
        return {term for term, n in zip(cleaned, self._term_rows(cleaned), strict=True) if total > 0 and 2 * n >= total}

    def _keys_of(self, rowids: Sequence[int]) -> dict[int, str]:
        """rowid → key of lexical hits; their summaries are read in the same statement and kept
        (`unit_summaries` then answers them from memory)."""
        found: dict[int, str] = {}
        for row in _rows_in(self._lexical_conn, f"SELECT rowid, {_SUMMARY_COLUMNS} FROM units WHERE rowid", rowids):
            summary = _summary(row[1:])
            found[int(row[0])] = summary.key
            self._keep_summary(summary)
        return found

    def _keep_summary(self, summary: UnitSummary) -> None:
        if len(self._summary_cache) >= _SUMMARY_CACHE_SIZE:
            self._summary_cache.clear()
        self._summary_cache[summary.key] = summary

    def unit_summaries(self, keys: Iterable[str]) -> dict[str, UnitSummary]:
        """The ranking-relevant columns of units by key (no source text is read). Summaries are
        immutable per generation: those read before are answered from memory."""
        found: dict[str, UnitSummary] = {}
        missing: list[str] = []
        for key in dict.fromkeys(keys):
            known = self._summary_cache.get(key)
            if known is None:
                missing.append(key)
            else:
                found[key] = known
        for r in _rows_in(self._conn, f"SELECT {_SUMMARY_COLUMNS} FROM units WHERE key", missing):
            summary = found[r[0]] = _summary(tuple(r))
            self._keep_summary(summary)
        return found

    def units_named(self, names: Iterable[str], limit: int = 200) -> list[UnitSummary]:
        """Units whose last-segment name is one of `names` (exact spelling), by (file, line, key)."""
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return []
        rows = self._conn.execute(
            f"SELECT key FROM units WHERE name IN ({','.join('?' * len(wanted))}) "
            "ORDER BY file_path, line_start, key LIMIT ?",
            (*wanted, limit),
        )
        found = self.unit_summaries(r["key"] for r in rows)
        return sorted(found.values(), key=lambda u: (u.file_path, u.line_start, u.key))

    def units_in_files(self, paths: Iterable[str]) -> list[UnitSummary]:
        """Every unit of the files `paths`, by (file, line, key)."""
        keys = [r[0] for r in _rows_in(self._conn, "SELECT key FROM units WHERE file_path", list(dict.fromkeys(paths)))]
        return sorted(self.unit_summaries(keys).values(), key=lambda u: (u.file_path, u.line_start, u.key))

    def file_paths(self) -> list[str]:
        """Every indexed file's repository-relative path, sorted."""
        return [str(r[0]) for r in self._conn.execute("SELECT path FROM files ORDER BY path")]

    def file_links(self, paths: Iterable[str]) -> set[tuple[str, str]]:
        """(source file, target file) of every resolved dependency edge from a unit of one of
        `paths` to a unit of another of them (at most FILE_LINKS_PATHS paths are read)."""
        wanted = list(dict.fromkeys(paths))[:FILE_LINKS_PATHS]
        if len(wanted) < 2:
            return set()
        marks = ",".join("?" * len(wanted))
        rows = self._conn.execute(
            "SELECT DISTINCT s.file_path, t.file_path FROM units s "
            "JOIN edges e ON e.source = s.identifier AND e.source_key = s.key "
            f"JOIN units t ON t.key = e.target_key WHERE s.file_path IN ({marks}) AND t.file_path IN ({marks}) "
            "AND t.file_path <> s.file_path",
            (*wanted, *wanted),
        )
        return {(str(r[0]), str(r[1])) for r in rows}

    def chunk_vector_ids(self, unit_keys: Iterable[str]) -> dict[str, list[int]]:
        """unit key → the FAISS ids of its chunks, in chunk order."""
        found: dict[str, list[int]] = {}
        for r in _rows_in(self._conn, f"SELECT unit_key, vector_id FROM {self._chunks} WHERE unit_key",
                          list(dict.fromkeys(unit_keys)), " ORDER BY unit_key, chunk_index"):
            found.setdefault(r["unit_key"], []).append(int(r["vector_id"]))
        return found

    def identifiers(self) -> set[str]:
        """The distinct public identifiers of the index."""
        return {r[0] for r in self._conn.execute("SELECT DISTINCT identifier FROM units")}

    def all_identifiers(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT key FROM units ORDER BY rowid")]

    def name_rows(self) -> list[NameRow]:
        """Every unit's `NameRow`, in insertion order (resolve's name table: no record decoded)."""
        rows = self._conn.execute(
            "SELECT key, identifier, type, file_path, line_start, line_end, parent FROM units ORDER BY rowid"
        )
        return [(r[0], r[1], r[2], r[3], int(r[4]), int(r[5]), r[6]) for r in rows]

    def all_records(self) -> list[Record]:
        return [self._record(r) for r in self._conn.execute("SELECT key, data FROM units ORDER BY rowid")]

    def count(self) -> int:
        if self._unit_count is None:
            self._unit_count = int(self._conn.execute("SELECT count(*) FROM units").fetchone()[0])
        return self._unit_count

    def type_counts(self) -> dict[str, int]:
        if self._type_counts is None:
            rows = self._conn.execute("SELECT type, count(*) FROM units GROUP BY type ORDER BY type")
            self._type_counts = {r[0]: int(r[1]) for r in rows}
        return dict(self._type_counts)

    def language_counts(self) -> dict[str, int]:
        rows = self._conn.execute("SELECT language, count(*) FROM files GROUP BY language ORDER BY language")
        return {r[0]: int(r[1]) for r in rows}

    def pagerank_percentile(self, identifier: str) -> float | None:
        """The identifier's PageRank percentile (1 − i/n by (−pagerank, identifier)), or None."""
        row = self._conn.execute(
            "SELECT pagerank_percentile FROM units WHERE identifier = ? LIMIT 1", (identifier,)
        ).fetchone()
        return None if row is None else float(row[0])

    def pagerank_scores(self) -> dict[str, float]:
        """PageRank per public identifier (the max over typed variants), computed at index time."""
        scores: dict[str, float] = {}
        for row in self._conn.execute("SELECT identifier, pagerank FROM units"):
            ident, value = row[0], float(row[1])
            if value > scores.get(ident, -1.0):
                scores[ident] = value
        return scores

    def top_pagerank(self, limit: int, types: Sequence[str] | None = None) -> list[tuple[str, str, float]]:
        """(identifier, type, pagerank) ordered by (−pagerank, identifier, type)."""
        sql = "SELECT identifier, type, pagerank FROM units"
        params: list[Any] = []
        if types:
            sql += f" WHERE type IN ({','.join('?' * len(types))})"
            params.extend(types)
        sql += " ORDER BY pagerank DESC, identifier, type LIMIT ?"
        params.append(limit)
        return [(r[0], r[1], float(r[2])) for r in self._conn.execute(sql, params)]

    # -- files, chunks, edges ---------------------------------------------------------------
    def files(self) -> list[FileRow]:
        rows = self._conn.execute(
            "SELECT path, language, sha256, size, mtime_ns, unit_count, warnings FROM files ORDER BY path"
        )
        return [
            FileRow(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), tuple(json.loads(r[6]))) for r in rows
        ]

    def file_rows(self, paths: Iterable[str]) -> dict[str, FileRow]:
        """`{path: row}` for the given paths that are indexed (read by primary key, not a scan:
        every search checks its results' files for staleness)."""
        found: dict[str, FileRow] = {}
        for r in _rows_in(self._conn, "SELECT path, language, sha256, size, mtime_ns, unit_count, warnings FROM files "
                          "WHERE path", sorted(set(paths))):
            found[r[0]] = FileRow(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), tuple(json.loads(r[6])))
        return found

    def extraction(self, path: str) -> dict[str, Any] | None:
        """The cached raw extraction of one file (units before linking), or None."""
        row = self._conn.execute("SELECT data FROM extractions WHERE path = ?", (path,)).fetchone()
        return json.loads(row[0]) if row else None

    def chunks(self) -> list[ChunkRow]:
        rows = self._conn.execute(
            "SELECT embedding_id, vector_id, unit_key, chunk_index, chunk_type, line_start, line_end, "
            f"text_sha256, plan_key FROM {self._chunks} ORDER BY vector_id"
        )
        return [ChunkRow(*r) for r in rows]

    def chunk_count(self) -> int:
        return int(self._conn.execute(f"SELECT count(*) FROM {self._chunks}").fetchone()[0])

    _VECTOR_META_SQL = (
        "SELECT c.vector_id, c.embedding_id, c.unit_key, u.identifier, u.type, u.file_path "
        "FROM {chunks} c JOIN units u ON u.key = c.unit_key"
    )

    def vector_meta(self, vector_ids: Iterable[int] | None = None) -> dict[int, tuple[str, str, str, str, str]]:
        """vector_id → (embedding_id, unit_key, identifier, type, file_path), for the given ids or all."""
        sql = self._VECTOR_META_SQL.format(chunks=self._chunks)
        rows = (
            self._conn.execute(sql) if vector_ids is None
            else _rows_in(self._conn, f"{sql} WHERE c.vector_id", list(dict.fromkeys(int(v) for v in vector_ids)))
        )
        return {int(vid): (eid, key, ident, unit_type, file_path) for vid, eid, key, ident, unit_type, file_path in rows}

    def vector_keys(self, vector_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
        """vector_id → (embedding_id, unit_key) of the given ids, from the chunk rows alone."""
        rows = _rows_in(self._conn, f"SELECT vector_id, embedding_id, unit_key FROM {self._chunks} WHERE vector_id",
                        list(dict.fromkeys(int(v) for v in vector_ids)))
        return {int(vid): (eid, key) for vid, eid, key in rows}

    def edges(self) -> list[EdgeRow]:
        """(source_key, source, target, target_key, via) in (source_key, ordinal) order."""
        rows = self._conn.execute(
            "SELECT source_key, source, target, target_key, via FROM edges ORDER BY source_key, ordinal"
        )
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    # -- the edge source graph traversal is built on (`woods.store.graph.DependencyGraph`) ---------
    def edge_neighbours(self, identifier: str, *, reverse: bool, via: str | None) -> list[str]:
        """The distinct targets of edges from `identifier` (sources of edges to it, `reverse`),
        of kind `via` when given, sorted."""
        near, far = ("target", "source") if reverse else ("source", "target")
        sql = f"SELECT DISTINCT {far} FROM edges WHERE {near} = ?"
        params: tuple[str, ...] = (identifier,)
        if via:
            sql += " AND via = ?"
            params += (via,)
        return sorted(r[0] for r in self._conn.execute(sql, params))

    def edges_from(self, identifier: str) -> list[tuple[str, str]]:
        """(target, via) pairs in extraction order."""
        rows = self._conn.execute("SELECT target, via FROM edges WHERE source = ? ORDER BY source_key, ordinal", (identifier,))
        return [(r[0], r[1]) for r in rows]

    def edges_to(self, identifier: str) -> list[tuple[str, str]]:
        """(source, via) pairs ordered by (source, via)."""
        rows = self._conn.execute("SELECT DISTINCT source, via FROM edges WHERE target = ? ORDER BY source, via", (identifier,))
        return [(r[0], r[1]) for r in rows]

    def has_edge_node(self, identifier: str) -> bool:
        """True when some edge starts or ends at `identifier`."""
        row = self._conn.execute(
            "SELECT 1 FROM edges WHERE source = ? UNION ALL SELECT 1 FROM edges WHERE target = ? LIMIT 1",
            (identifier, identifier),
        ).fetchone()
        return row is not None

    def edge_counts_by_via(self) -> dict[str, int]:
        rows = self._conn.execute("SELECT via, count(*) FROM edges GROUP BY via ORDER BY via")
        return {r[0]: int(r[1]) for r in rows}

class _GenerationWriter:
    """One private, not-yet-published SQLite file of a generation, written in one transaction:
    WAL journal while writing, checkpointed and truncated on close so the file stands alone."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path = path
        self._conn = sqlite3.connect(path)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(schema)
        self._conn.execute("BEGIN")

    def add_chunk(self, row: ChunkRow) -> None:
        _insert_chunk(self._conn, row)

    def commit_and_close(self) -> None:
        self._conn.commit()
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._conn.close()

    def abort(self) -> None:
        try:
            self._conn.rollback()
        finally:
            self._conn.close()


class MetadataWriter(_GenerationWriter):
    """Writes a new generation's metadata database in one transaction-heavy pass (used only by
    the index builder)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, _SCHEMA)
        from woods.store.postings import PostingsBuilder  # numpy: loaded only where postings are used

        self._postings = PostingsBuilder()

    def commit_and_close(self) -> None:
        self._postings.write(self._conn)
        # FTS5 builds its index as segments it merges now and then; merged into one before the
        # generation is published, a query reads each term's rows from one place. Measured on the
        # standard library (74k units): +0.5 s here, the lexical call −6–9 % (mean over 50 queries
        # at the code profile's depth, three rounds), the same ranked lists.
        self._conn.execute("INSERT INTO lexical(lexical) VALUES('optimize')")
        super().commit_and_close()

    def set_meta(self, values: dict[str, Any]) -> None:
        self._conn.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in values.items()],
        )

    def add_file(self, row: FileRow) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO files(path, language, sha256, size, mtime_ns, unit_count, warnings) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (row.path, row.language, row.sha256, row.size, row.mtime_ns, row.unit_count, json.dumps(list(row.warnings))),
        )

    def add_unit(
        self,
        key: str,
        record: Mapping[str, Any],
        stable_id: str,
        pagerank: float,
        percentile: float = 0.0,
        lexical: LexicalDocument | None = None,
    ) -> None:
        """One unit row, and its lexical-index row when `lexical` is given."""
        cursor = self._conn.execute(
            "INSERT INTO units(key, identifier, name, type, language, file_path, line_start, line_end, parent, "
            "stable_id, source_hash, pagerank, pagerank_percentile, data, haystack) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                key,
                record["identifier"],
                unit_name(str(record["identifier"])),
                record["type"],
                record.get("language") or "",
                record.get("file_path") or "",
                int(record.get("line_start") or 0),
                int(record.get("line_end") or 0),
                record.get("parent"),
                stable_id,
                record.get("source_hash") or "",
                pagerank,
                percentile,
                json.dumps(record, ensure_ascii=False),
                record_haystack(record),
            ),
        )
        if lexical is not None:
            rowid = int(cursor.lastrowid or 0)
            fields = (lexical.name, lexical.qualifier, lexical.path, lexical.doc, lexical.body)  # LEXICAL_COLUMNS
            self._conn.execute(
                "INSERT INTO lexical(rowid, name, qualifier, path, doc, body) VALUES (?, ?, ?, ?, ?, ?)", (rowid, *fields)
            )
            self._postings.add(rowid, fields)

    def add_extraction(self, path: str, data: dict[str, Any]) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO extractions(path, data) VALUES (?, ?)", (path, json.dumps(data, ensure_ascii=False))
        )

    def add_edges(self, rows: Iterable[tuple[str, str, str, str | None, str, int]]) -> None:
        self._conn.executemany(
            "INSERT INTO edges(source_key, source, target, target_key, via, ordinal) VALUES (?,?,?,?,?,?)", rows
        )


class ChunkWriter(_GenerationWriter):
    """Writes a vector-complete generation's `chunks.sqlite3` (private, not yet published): the
    chunk rows phase 2 adds beside the vectors, without touching the metadata database."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, _CHUNKS_SCHEMA)


def _insert_chunk(conn: sqlite3.Connection, row: ChunkRow) -> None:
    conn.execute(
        "INSERT INTO chunks(embedding_id, vector_id, unit_key, chunk_index, chunk_type, line_start, "
        "line_end, text_sha256, plan_key) VALUES (?,?,?,?,?,?,?,?,?)",
        (row.embedding_id, row.vector_id, row.unit_key, row.chunk_index, row.chunk_type, row.line_start,
         row.line_end, row.text_sha256, row.plan_key),
    )
