"""PostgreSQL backend, read side: one shared server index that many readers query.

Why: one developer indexes into `.woods/`; a team or an organisation needs one index on a server
that many assistants query while indexers write. The readers here implement the same methods as
the local stores (`SQLiteMetadataStore`, `FaissVectorStore`, `DependencyGraph`, `IndexStores`),
so retrieval, resolve, freshness and `woods.Index` run unchanged on either backend.

Layout (schema `woods`; `docs/postgres.md` has the whole story):

    woods.meta                   layout version
    woods.repos                  one row per repository (collection): name, current_generation
    woods.generations            one row per published generation: repo, name, manifest, statistics
    woods.g<id>_units, _chunks (pgvector `vector(d)` column, HNSW for large generations), _files,
    _edges, _extractions, _terms (the lexical index: per unit and FTS5 token, a frequency per field)

A generation's tables are written in one transaction together with the flip of its repository's
`current_generation` pointer, and never changed afterwards. A reader reads the pointer once,
pins that generation with a shared advisory lock (cleanup never drops a pinned generation, the
analogue of the local backend's shared flock) and then reads immutable tables: it sees the old
index or the new one, never a mix, and never waits for an indexer.

Reading never writes: no table is created, no row changed; a database without the woods schema
is `IndexNotFoundError`.

Several repositories at once (no `--repo` on a store that holds more than one): the selected
generations act as one index. Unit keys become `<repo>:<key>` (a repository name has no `:`),
vector ids `<part> << 40 | id`; lists keep each method's documented order with the repository
name as the first tie-break where the local order is by row (insertion) order. BM25 statistics
(rows, tokens, document frequencies) are summed over the repositories, so the lexical scores
are those of one index holding all of them; the vector leg merges each repository's exact top
hits. Freshness is not checked for such a combined view (the repositories' roots differ).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from woods.errors import CorruptIndexError, IndexNotFoundError, InputError
from woods.lazy import Lazy
from woods.store.base import Record, VectorHit, field_haystack, unit_scores, validate_search_fields
from woods.store.fts5_bm25 import BM25_B, BM25_K1, idf
from woods.store.graph import DependencyGraph
from woods.store.index import SCHEMA_VERSION, Manifest
from woods.store.lexical_query import clean_terms, fts5_phrases, informative_terms, phrase_order
from woods.store.metadata import FILE_LINKS_PATHS, LEXICAL_COLUMNS, ChunkRow, FileRow, UnitSummary
from woods.store.pg_connect import (
    SCHEMA,
    check_repo_name,
    connect,
    first_line,
    missing_pgvector,
    redact,
    register_vectors,
    vector_oid,
)

# Bump on every change to the PostgreSQL tables: a database of another layout is refused with the fix.
PG_LAYOUT_VERSION = 1
# Advisory lock classes (the first key of PostgreSQL's two-int advisory locks): "wood" and "wooe".
# Writers hold (REPO_LOCK_CLASS, hash(repo)) exclusively for a whole index run; readers hold
# (GENERATION_LOCK_CLASS, generation id) shared while they read a generation.
REPO_LOCK_CLASS = 0x776F6F64
GENERATION_LOCK_CLASS = 0x776F6F65
# Up to this many chunks a generation is searched exactly (a sequential scan ordered by inner
# product — the same answer as FAISS's flat index); above it through its HNSW index. A scan of
# 20k 384-d vectors takes ~15 ms (bench/README.md), the latency of an HNSW query at 1M.
EXACT_SEARCH_MAX_CHUNKS = 20_000
# hnsw.ef_search is at least this, and at least the number of hits asked for (pgvector returns at
# most ef_search rows per index scan). 200 keeps recall@10 ≥ 0.99 at 1M chunks (bench/README.md).
HNSW_EF_SEARCH = 200
# Extra hits fetched so that (−score, embedding id) ties at the limit are settled like FAISS's.
TIE_MARGIN = 16
# Bits of a combined-view vector id that hold the generation's own vector id (2^40 chunks).
PART_SHIFT = 40
# Units read per batch in `find_batch`-like lookups (one round trip each).
BATCH = 5_000


def lock_key(repo: str) -> int:
    """The repository's advisory lock key: a stable signed 32-bit hash of its name (FNV-1a)."""
    value = 0x811C9DC5
    for byte in repo.encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value - (1 << 32) if value >= (1 << 31) else value


def table(generation_id: int, name: str) -> str:
    return f"{SCHEMA}.g{int(generation_id)}_{name}"


@dataclass(frozen=True, slots=True)
class GenerationRef:
    """A published generation as readers name it (`.name` like a local generation directory's)."""

    name: str
    repo: str
    id: int


@dataclass(frozen=True, slots=True)
class Part:
    """One repository's pinned generation inside a (possibly combined) view."""

    index: int
    repo: str
    generation: GenerationRef
    manifest: Manifest
    rows: int  # lexical rows (FTS5's N)
    tokens: int  # lexical tokens over all rows
    chunks: int
    hnsw: bool
    prefix: str  # "" for a single repository, "<repo>:" in a combined view

    def t(self, name: str) -> str:
        return table(self.generation.id, name)

    def outer(self, key: str) -> str:
        return self.prefix + key


def schema_present(conn: Any) -> bool:
    row = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.repos",)).fetchone()
    return row is not None and row[0] is not None


def check_layout(conn: Any, url: str) -> None:
    row = conn.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'layout_version'").fetchone()
    version = None if row is None else int(row[0])
    if version != PG_LAYOUT_VERSION:
        raise CorruptIndexError(
            f"the woods tables at {redact(url)} have layout {version}, this woods reads layout {PG_LAYOUT_VERSION}; "
            "drop the schema (`DROP SCHEMA woods CASCADE`) and index again"
        )


def repositories(conn: Any) -> list[tuple[str, int]]:
    rows = conn.execute(
        f"SELECT name, current_generation FROM {SCHEMA}.repos WHERE current_generation IS NOT NULL ORDER BY name"
    ).fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


class PostgresMetadataStore:
    """The `SQLiteMetadataStore` methods over one or several pinned PostgreSQL generations.

    Same records (the stored JSON plus `"id"`), same orders, same search semantics (collation "C"
    is byte order, SQLite's BINARY); the lexical leg's BM25 is computed from stored FTS5 term
    statistics and equals FTS5's `bm25()` (see `woods.store.fts5_bm25`).
    """

    def __init__(self, conn: Any, parts: Sequence[Part]) -> None:
        self._db = conn
        self.parts = tuple(parts)
        self._by_repo = {p.repo: p for p in self.parts}
        self.combined = len(self.parts) > 1

    def close(self) -> None:
        self._db.close()

    # -- keys ------------------------------------------------------------------------------
    def _split(self, key: str) -> tuple[Part, str] | None:
        if not self.combined:
            return self.parts[0], key
        repo, sep, local = key.partition(":")
        part = self._by_repo.get(repo) if sep else None
        return None if part is None else (part, local)

    def _group(self, keys: Iterable[str]) -> dict[int, tuple[Part, list[str]]]:
        groups: dict[int, tuple[Part, list[str]]] = {}
        for key in dict.fromkeys(keys):
            split = self._split(key)
            if split is not None:
                groups.setdefault(split[0].index, (split[0], []))[1].append(split[1])
        return groups

    def repo_of(self, key: str) -> str | None:
        split = self._split(key)
        return None if split is None else split[0].repo

    def _rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        return list(self._db.execute(sql, params).fetchall())

    def _record(self, part: Part, key: str, data: str) -> Record:
        record: Record = json.loads(data)
        record["id"] = part.outer(key)
        return record

    # -- meta ------------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        return {"schema_version": str(SCHEMA_VERSION), "manifest": json.dumps(self.parts[0].manifest.data)}

    # -- records ---------------------------------------------------------------------------
    def find(self, key: str) -> Record | None:
        split = self._split(key)
        if split is None:
            return None
        part, local = split
        rows = self._rows(f"SELECT key, data FROM {part.t('units')} WHERE key = %s", (local,))
        return self._record(part, rows[0][0], rows[0][1]) if rows else None

    def find_batch(self, keys: Iterable[str]) -> dict[str, Record]:
        found: dict[str, Record] = {}
        for part, local in self._group(keys).values():
            for start in range(0, len(local), BATCH):
                rows = self._rows(f"SELECT key, data FROM {part.t('units')} WHERE key = ANY(%s)", (local[start : start + BATCH],))
                for key, data in rows:
                    found[part.outer(key)] = self._record(part, key, data)
        return found

    def find_by_identifier(self, identifier: str) -> list[Record]:
        found: list[tuple[str, str, Record]] = []
        for part in self.parts:
            rows = self._rows(f"SELECT key, data, type FROM {part.t('units')} WHERE identifier = %s", (identifier,))
            found.extend((str(t), part.outer(k), self._record(part, k, d)) for k, d, t in rows)
        return [r for _t, _k, r in sorted(found, key=lambda x: (x[0], x[1]))]

    def find_by_name(self, name: str, limit: int = 50) -> list[Record]:
        """Records whose last identifier segment is `name`, ordered by (−pagerank, identifier, key)."""
        found: list[tuple[float, str, str, Record]] = []
        for part in self.parts:
            rows = self._rows(
                f"SELECT key, data, pagerank, identifier FROM {part.t('units')} WHERE name = %s "
                "ORDER BY pagerank DESC, identifier, key LIMIT %s",
                (name, limit),
            )
            found.extend((-float(p), str(i), part.outer(k), self._record(part, k, d)) for k, d, p, i in rows)
        return [r for *_sort, r in sorted(found, key=lambda x: (x[0], x[1], x[2]))][:limit]

    def files_matching(self, path: str) -> list[str]:
        found: set[str] = set()
        for part in self.parts:
            rows = self._rows(
                f"SELECT path FROM {part.t('files')} WHERE path = %s OR right(path, %s) = %s",
                (path, len(path) + 1, "/" + path),
            )
            found.update(str(r[0]) for r in rows)
        return sorted(found)

    def find_by_type(self, unit_type: str) -> list[Record]:
        found: list[tuple[str, Record]] = []
        for part in self.parts:
            rows = self._rows(f"SELECT key, data FROM {part.t('units')} WHERE type = %s", (unit_type,))
            found.extend((part.outer(k), self._record(part, k, d)) for k, d in rows)
        return [r for _k, r in sorted(found, key=lambda x: x[0])]

    def find_by_stable_prefix(self, prefix: str, limit: int = 21) -> list[Record]:
        found: list[tuple[str, int, int, Record]] = []
        for part in self.parts:
            rows = self._rows(
                f"SELECT key, data, stable_id, rowid FROM {part.t('units')} WHERE stable_id >= %s AND stable_id < %s "
                "ORDER BY stable_id, rowid LIMIT %s",
                (prefix, prefix + "g", limit),
            )
            found.extend((str(s), part.index, int(r), self._record(part, k, d)) for k, d, s, r in rows)
        return [r for *_sort, r in sorted(found, key=lambda x: (x[0], x[1], x[2]))][:limit]

    def units_in_file(self, file_path: str) -> list[Record]:
        """Units of one file ordered by (line_start, -line_end, key): outermost first."""
        found: list[tuple[int, int, str, Record]] = []
        for part in self.parts:
            rows = self._rows(
                f"SELECT key, data, line_start, line_end FROM {part.t('units')} WHERE file_path = %s", (file_path,)
            )
            found.extend((int(s), -int(e), part.outer(k), self._record(part, k, d)) for k, d, s, e in rows)
        return [r for *_sort, r in sorted(found, key=lambda x: (x[0], x[1], x[2]))]

    def _haystack_rows(self, needle: str, columns: str) -> Iterator[tuple[Part, Any]]:
        """Units whose haystack contains `needle`, in (repository, rowid) order. PostgreSQL text
        holds no NUL and a haystack is JSON text (NUL escaped), so a needle with NUL matches nothing."""
        if "\x00" in needle:
            return
        for part in self.parts:
            for row in self._rows(
                f"SELECT {columns} FROM {part.t('units')} WHERE strpos(haystack, %s) > 0 ORDER BY rowid", (needle,)
            ):
                yield part, row

    def search(self, query: str, fields: Sequence[str] | None = None) -> list[Record]:
        needle = query.lower()
        validate_search_fields(fields)
        results = []
        for part, (key, data) in self._haystack_rows(needle, "key, data"):
            record = self._record(part, key, data)
            if fields is None:
                results.append(record)
                continue
            for name in fields:
                hay = field_haystack(record.get(name))
                if hay is not None and needle in hay:
                    results.append(record)
                    break
        return results

    def keyword_fields(self, keyword: str) -> list[tuple[str, list[str]]]:
        """(key, matched top-level fields) of every unit `search(keyword)` returns, same order.

        Each unit's top-level fields are stored as SQLite's `json_each` read them at publish time
        (`fields`), so the matches are those of `SQLiteMetadataStore.keyword_fields` exactly."""
        needle = keyword.lower()
        out = []
        for part, (key, fields) in self._haystack_rows(needle, "key, fields"):
            pairs = json.loads(fields)
            out.append((part.outer(key), [name for name, text in pairs if text is not None and needle in text]))
        return out

    def _token_rows(self, tokens: Sequence[str]) -> list[int]:
        """How many units hold each (already stemmed) token, over every part."""
        hits = [0] * len(tokens)
        for part in self.parts:
            for i, count in self._rows(
                f"SELECT q.i, count(*) FROM unnest(%s::int[], %s::text[]) AS q(i, token) "
                f"JOIN {part.t('terms')} t ON t.term = q.token GROUP BY q.i",
                (list(range(len(tokens))), list(tokens)),
            ):
                hits[int(i)] += int(count)
        return hits

    def common_terms(self, terms: Sequence[str]) -> set[str]:
        """The terms matching at least half the units (`SQLiteMetadataStore.common_terms`)."""
        rows = sum(p.rows for p in self.parts)
        cleaned = clean_terms(terms)
        single = [(term, p[0]) for term, p in zip(cleaned, fts5_phrases(cleaned), strict=True) if len(p) == 1]
        counts = self._token_rows([token for _term, token in single])
        return {term for (term, _token), n in zip(single, counts, strict=True) if rows > 0 and 2 * n >= rows}

    def lexical_search(self, terms: Sequence[str], limit: int, weights: Sequence[float]) -> list[tuple[str, float]]:
        """FTS5's BM25 over the stored term statistics: `(key, score)` ordered by (−score, key),
        the same list `SQLiteMetadataStore.lexical_search` returns for the same generation.

        A term FTS5 would cut into several tokens (a phrase) matches nothing here: woods' query
        terms are word characters, which FTS5 keeps whole (docs/postgres.md)."""
        cleaned = clean_terms(terms)
        if not cleaned or limit <= 0:
            return []
        if len(weights) != len(LEXICAL_COLUMNS):
            raise ValueError(f"lexical_search needs {len(LEXICAL_COLUMNS)} column weights, got {len(weights)}")
        phrases = [(i, p[0]) for i, p in enumerate(fts5_phrases(cleaned)) if len(p) == 1]
        if not phrases:
            return []
        rows = sum(p.rows for p in self.parts)
        tokens = sum(p.tokens for p in self.parts)
        if rows == 0:
            return []
        indexes = [i for i, _t in phrases]
        words = [t for _i, t in phrases]
        hits = dict(zip(indexes, self._token_rows(words), strict=True))
        kept = informative_terms(words, [hits[i] for i in indexes], rows)
        if len(kept) < len(words):
            indexes = [i for i, word in zip(indexes, words, strict=True) if word in kept]
            words = [word for word in words if word in kept]
        # Summed in the order FTS5 sums them for the local index (rarest first, `phrase_order`).
        order = phrase_order([hits[i] for i in indexes], rows)
        indexes = [indexes[j] for j in order]
        words = [words[j] for j in order]
        idfs = [idf(rows, hits[i]) for i in indexes]
        avgdl = float(tokens) / float(rows)
        w = [float(x) for x in weights]
        found: list[tuple[float, str]] = []
        for part in self.parts:
            sql = (
                f"SELECT u.key, sum(s.idf * ((s.f * (%(k1)s::float8 + 1.0::float8)) / (s.f + %(k1)s::float8 * "
                f"(1::float8 - %(b)s::float8 + %(b)s::float8 * u.lexical_length::float8 / %(avgdl)s::float8))) ORDER BY s.i) "
                "AS score FROM ("
                "SELECT t.unit_row, q.i, q.idf, (t.tf0 * %(w0)s::float8 + t.tf1 * %(w1)s::float8 + t.tf2 * %(w2)s::float8 "
                "+ t.tf3 * %(w3)s::float8 + t.tf4 * %(w4)s::float8) AS f "
                "FROM unnest(%(i)s::int[], %(t)s::text[], %(idf)s::float8[]) AS q(i, token, idf) "
                f"JOIN {part.t('terms')} t ON t.term = q.token) s "
                f"JOIN {part.t('units')} u ON u.rowid = s.unit_row GROUP BY u.rowid, u.key "
                "ORDER BY score DESC, u.key LIMIT %(limit)s"
            )
            params = {
                "k1": BM25_K1, "b": BM25_B, "avgdl": avgdl, "i": list(range(len(indexes))), "t": words, "idf": idfs, "limit": limit,
                "w0": w[0], "w1": w[1], "w2": w[2], "w3": w[3], "w4": w[4],
            }
            found.extend((-float(score), part.outer(key)) for key, score in self._rows(sql, params))
        found.sort()
        return [(key, -neg) for neg, key in found[:limit]]

    def _summaries(self, part: Part, where: str, params: Sequence[Any]) -> list[UnitSummary]:
        rows = self._rows(
            "SELECT key, identifier, name, type, language, file_path, line_start, line_end, parent, "
            f"pagerank_percentile FROM {part.t('units')} WHERE {where}",
            params,
        )
        return [
            UnitSummary(part.outer(r[0]), r[1], r[2], r[3], r[4], r[5], int(r[6]), int(r[7]), r[8], float(r[9]))
            for r in rows
        ]

    def unit_summaries(self, keys: Iterable[str]) -> dict[str, UnitSummary]:
        found: dict[str, UnitSummary] = {}
        for part, local in self._group(keys).values():
            for start in range(0, len(local), BATCH):
                for summary in self._summaries(part, "key = ANY(%s)", (local[start : start + BATCH],)):
                    found[summary.key] = summary
        return found

    def units_named(self, names: Iterable[str], limit: int = 200) -> list[UnitSummary]:
        """Units whose last-segment name is one of `names` (exact spelling), by (file, line, key)."""
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return []
        found: list[UnitSummary] = []
        for part in self.parts:
            found.extend(
                self._summaries(part, "name = ANY(%s) ORDER BY file_path, line_start, key LIMIT %s", (wanted, limit))
            )
        return sorted(found, key=lambda u: (u.file_path, u.line_start, u.key))[:limit]

    def _vid(self, part: Part, vector_id: int) -> int:
        return (part.index << PART_SHIFT) | vector_id if self.combined else vector_id

    def _unvid(self, vid: int) -> tuple[Part, int] | None:
        if not self.combined:
            return self.parts[0], vid
        index = vid >> PART_SHIFT
        if index >= len(self.parts):
            return None
        return self.parts[index], vid & ((1 << PART_SHIFT) - 1)

    def chunk_vector_ids(self, unit_keys: Iterable[str]) -> dict[str, list[int]]:
        """unit key → the vector ids of its chunks, in chunk order."""
        found: dict[str, list[int]] = {}
        for part, local in self._group(unit_keys).values():
            rows = self._rows(
                f"SELECT unit_key, vector_id FROM {part.t('chunks')} WHERE unit_key = ANY(%s) ORDER BY unit_key, chunk_index",
                (local,),
            )
            for key, vid in rows:
                found.setdefault(part.outer(key), []).append(self._vid(part, int(vid)))
        return found

    def identifiers(self) -> set[str]:
        found: set[str] = set()
        for part in self.parts:
            found.update(str(r[0]) for r in self._rows(f"SELECT DISTINCT identifier FROM {part.t('units')}"))
        return found

    def all_identifiers(self) -> list[str]:
        return [
            part.outer(str(r[0])) for part in self.parts for r in self._rows(f"SELECT key FROM {part.t('units')} ORDER BY rowid")
        ]

    def name_rows(self) -> list[tuple[str, str, str, str, int, int, str | None]]:
        """(key, identifier, type, file_path, line_start, line_end, parent) of every unit in row
        order: what resolve's name index is built from (no record JSON decoded)."""
        return [
            (part.outer(r[0]), r[1], r[2], r[3], int(r[4]), int(r[5]), r[6])
            for part in self.parts
            for r in self._rows(
                f"SELECT key, identifier, type, file_path, line_start, line_end, parent FROM {part.t('units')} ORDER BY rowid"
            )
        ]

    def all_records(self) -> list[Record]:
        return [
            self._record(part, k, d)
            for part in self.parts
            for k, d in self._rows(f"SELECT key, data FROM {part.t('units')} ORDER BY rowid")
        ]

    def count(self) -> int:
        return sum(int(self._rows(f"SELECT count(*) FROM {p.t('units')}")[0][0]) for p in self.parts)

    def _counts(self, sql: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for part in self.parts:
            tables = {name: part.t(name) for name in ("units", "files", "edges")}
            for name, n in self._rows(sql.format(t=tables)):
                counts[str(name)] = counts.get(str(name), 0) + int(n)
        return dict(sorted(counts.items()))

    def type_counts(self) -> dict[str, int]:
        return self._counts("SELECT type, count(*) FROM {t[units]} GROUP BY type")

    def language_counts(self) -> dict[str, int]:
        return self._counts("SELECT language, count(*) FROM {t[files]} GROUP BY language")

    def edge_counts_by_via(self) -> dict[str, int]:
        return self._counts("SELECT via, count(*) FROM {t[edges]} GROUP BY via")

    def pagerank_percentile(self, identifier: str) -> float | None:
        for part in self.parts:
            rows = self._rows(
                f"SELECT pagerank_percentile FROM {part.t('units')} WHERE identifier = %s ORDER BY rowid LIMIT 1",
                (identifier,),
            )
            if rows:
                return float(rows[0][0])
        return None

    def pagerank_scores(self) -> dict[str, float]:
        scores: dict[str, float] = {}
        for part in self.parts:
            for ident, value in self._rows(f"SELECT identifier, max(pagerank) FROM {part.t('units')} GROUP BY identifier"):
                if float(value) > scores.get(ident, -1.0):
                    scores[str(ident)] = float(value)
        return scores

    def top_pagerank(self, limit: int, types: Sequence[str] | None = None) -> list[tuple[str, str, float]]:
        """(identifier, type, pagerank) ordered by (−pagerank, identifier, type)."""
        found: list[tuple[str, str, float]] = []
        for part in self.parts:
            where = "WHERE type = ANY(%s) " if types else ""
            params: list[Any] = [list(types)] if types else []
            rows = self._rows(
                f"SELECT identifier, type, pagerank FROM {part.t('units')} {where}"
                "ORDER BY pagerank DESC, identifier, type LIMIT %s",
                [*params, limit],
            )
            found.extend((str(i), str(t), float(p)) for i, t, p in rows)
        return sorted(found, key=lambda r: (-r[2], r[0], r[1]))[:limit]

    # -- files, chunks, edges ----------------------------------------------------------------
    @staticmethod
    def _file_row(r: Sequence[Any]) -> FileRow:
        return FileRow(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), tuple(json.loads(r[6])))

    _FILE_COLUMNS = "path, language, sha256, size, mtime_ns, unit_count, warnings"

    def files(self) -> list[FileRow]:
        rows = [self._file_row(r) for p in self.parts for r in self._rows(f"SELECT {self._FILE_COLUMNS} FROM {p.t('files')}")]
        return sorted(rows, key=lambda r: r.path)

    def file_rows(self, paths: Iterable[str]) -> dict[str, FileRow]:
        wanted = sorted(set(paths))
        found: dict[str, FileRow] = {}
        for part in reversed(self.parts):  # the first repository wins a path several hold
            for r in self._rows(f"SELECT {self._FILE_COLUMNS} FROM {part.t('files')} WHERE path = ANY(%s)", (wanted,)):
                found[str(r[0])] = self._file_row(r)
        return found

    def extraction(self, path: str) -> dict[str, Any] | None:
        for part in self.parts:
            rows = self._rows(f"SELECT data FROM {part.t('extractions')} WHERE path = %s", (path,))
            if rows:
                data: dict[str, Any] = json.loads(rows[0][0])
                return data
        return None

    def chunks(self) -> list[ChunkRow]:
        out: list[ChunkRow] = []
        for part in self.parts:
            rows = self._rows(
                "SELECT embedding_id, vector_id, unit_key, chunk_index, chunk_type, line_start, line_end, text_sha256, "
                f"plan_key FROM {part.t('chunks')} ORDER BY vector_id"
            )
            out.extend(
                ChunkRow(part.outer(r[0]), self._vid(part, int(r[1])), part.outer(r[2]), *r[3:]) for r in rows
            )
        return out

    def chunk_count(self) -> int:
        return sum(p.chunks for p in self.parts)

    def vector_meta(self, vector_ids: Iterable[int] | None = None) -> dict[int, tuple[str, str, str, str, str]]:
        """vector_id → (embedding_id, unit_key, identifier, type, file_path), for the given ids or all."""
        found: dict[int, tuple[str, str, str, str, str]] = {}
        wanted: dict[int, list[int]] | None = None
        if vector_ids is not None:
            wanted = {}
            for vid in vector_ids:
                split = self._unvid(int(vid))
                if split is not None:
                    wanted.setdefault(split[0].index, []).append(split[1])
        for part in self.parts:
            sql = (
                "SELECT c.vector_id, c.embedding_id, c.unit_key, u.identifier, u.type, u.file_path "
                f"FROM {part.t('chunks')} c JOIN {part.t('units')} u ON u.key = c.unit_key"
            )
            params: tuple[Any, ...] = ()
            if wanted is not None:
                if part.index not in wanted:
                    continue
                sql += " WHERE c.vector_id = ANY(%s)"
                params = (wanted[part.index],)
            for vid, eid, key, ident, unit_type, path in self._rows(sql, params):
                found[self._vid(part, int(vid))] = (part.outer(eid), part.outer(key), ident, unit_type, path)
        return found

    def edges(self) -> list[tuple[str, str, str, str | None, str]]:
        """(source_key, source, target, target_key, via) in (source_key, ordinal) order."""
        out: list[tuple[str, str, str, str | None, str]] = []
        for part in self.parts:
            rows = self._rows(
                f"SELECT source_key, source, target, target_key, via FROM {part.t('edges')} ORDER BY source_key, ordinal"
            )
            out.extend(
                (part.outer(sk), s, t, None if tk is None else part.outer(tk), v) for sk, s, t, tk, v in rows
            )
        return out

    def units_in_files(self, paths: Iterable[str]) -> list[UnitSummary]:
        """Every unit of the files `paths` (in each repository of the view), by (file, line, key)."""
        wanted = list(dict.fromkeys(paths))
        found: list[UnitSummary] = []
        for part in self.parts:
            found.extend(self._summaries(part, "file_path = ANY(%s)", (wanted,)))
        return sorted(found, key=lambda u: (u.file_path, u.line_start, u.key))

    def file_paths(self) -> list[str]:
        """Every indexed file's repository-relative path (of every repository of the view), sorted."""
        found: set[str] = set()
        for part in self.parts:
            found.update(str(r[0]) for r in self._rows(f"SELECT path FROM {part.t('files')}"))
        return sorted(found)

    def file_links(self, paths: Iterable[str]) -> set[tuple[str, str]]:
        """As `SQLiteMetadataStore.file_links`, within each repository of the view."""
        wanted = list(dict.fromkeys(paths))[:FILE_LINKS_PATHS]
        if len(wanted) < 2:
            return set()
        found: set[tuple[str, str]] = set()
        for part in self.parts:
            units, edges = part.t("units"), part.t("edges")
            sql = (
                f"SELECT DISTINCT s.file_path, t.file_path FROM {units} s "
                f"JOIN {edges} e ON e.source = s.identifier AND e.source_key = s.key "
                f"JOIN {units} t ON t.key = e.target_key WHERE s.file_path = ANY(%s) AND t.file_path = ANY(%s) "
                "AND t.file_path <> s.file_path"
            )
            found.update((str(r[0]), str(r[1])) for r in self._rows(sql, (wanted, wanted)))
        return found

    # -- the edge source graph traversal is built on (`woods.store.graph.DependencyGraph`) ----
    def edge_neighbours(self, identifier: str, *, reverse: bool, via: str | None) -> list[str]:
        near, far = ("target", "source") if reverse else ("source", "target")
        found: set[str] = set()
        for part in self.parts:
            sql = f"SELECT DISTINCT {far} FROM {part.t('edges')} WHERE {near} = %s"
            params: tuple[str, ...] = (identifier,)
            if via:
                sql += " AND via = %s"
                params += (via,)
            found.update(str(r[0]) for r in self._rows(sql, params))
        return sorted(found)

    def edges_from(self, identifier: str) -> list[tuple[str, str]]:
        return [
            (str(t), str(v))
            for part in self.parts
            for t, v in self._rows(
                f"SELECT target, via FROM {part.t('edges')} WHERE source = %s ORDER BY source_key, ordinal", (identifier,)
            )
        ]

    def edges_to(self, identifier: str) -> list[tuple[str, str]]:
        found = {
            (str(s), str(v))
            for part in self.parts
            for s, v in self._rows(f"SELECT DISTINCT source, via FROM {part.t('edges')} WHERE target = %s", (identifier,))
        }
        return sorted(found)

    def has_edge_node(self, identifier: str) -> bool:
        return any(
            self._rows(
                f"SELECT 1 FROM {p.t('edges')} WHERE source = %s UNION ALL SELECT 1 FROM {p.t('edges')} WHERE target = %s LIMIT 1",
                (identifier, identifier),
            )
            for p in self.parts
        )


class PostgresVectorStore:
    """pgvector search with the `FaissVectorStore` contract: hits by (−cosine, embedding id),
    filters before the limit, `reconstruct` of stored vectors.

    Vectors are L2-normalised, so the negative inner product `<#>` orders by cosine. A generation
    of at most EXACT_SEARCH_MAX_CHUNKS chunks (or any, when `exact`) is searched by a sequential
    scan — exact, like FAISS's flat index; a larger one through its HNSW index (`vector_ip_ops`),
    whose recall bench/README.md reports. Filtered searches are always exact.
    """

    def __init__(self, metadata: PostgresMetadataStore, exact: bool = False) -> None:
        self._meta = metadata
        self._db = metadata._db
        self.exact = exact
        dims = {p.manifest.dimension for p in metadata.parts}
        if len(dims) != 1:
            raise InputError("the repositories were embedded with different dimensions; pass --repo to search one")
        self.dimension = dims.pop()

    def count(self) -> int:
        return self._meta.chunk_count()

    def _query(self, vector: np.ndarray) -> np.ndarray:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dimension:
            raise ValueError(f"query vector has dimension {query.shape[0]}, the index {self.dimension}")
        return query

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
        by_part: dict[int, list[str]] | None = None
        if keys:
            by_part = {p.index: local for p, local in self._meta._group(keys).values()}
        hits: list[VectorHit] = []
        for part in self._meta.parts:
            if by_part is not None and part.index not in by_part:
                continue
            local_keys = None if by_part is None else by_part[part.index]
            hits.extend(self._search_part(part, query, limit, list(types) if types else None, local_keys))
        hits.sort(key=lambda h: (-h.score, h.embedding_id))
        return hits[:limit]

    def search_units(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """(unit key, score) of each hit `search(vector, limit)` returns, in its order (code
        search's vector leg; `FaissVectorStore.search_units`)."""
        return unit_scores(self.search(vector, limit))

    def _search_part(
        self, part: Part, query: np.ndarray, limit: int, types: list[str] | None, keys: list[str] | None
    ) -> list[VectorHit]:
        """The part's best `limit` hits: PostgreSQL picks `limit + TIE_MARGIN` candidates by `<#>`,
        then they are scored with FAISS's inner-product kernel (`rescore`), so scores and the
        (−score, embedding id) order are bit for bit those of the local backend."""
        fetch = limit + TIE_MARGIN
        columns = "c.embedding_id, c.unit_key, u.identifier, u.type, u.file_path, c.embedding"
        params: dict[str, Any] = {"q": query, "fetch": fetch}
        with self._db.transaction(), self._db.cursor(binary=True) as cursor:
            if types or keys or self.exact or not part.hnsw:
                conditions = []
                if types:
                    conditions.append("u.type = ANY(%(types)s)")
                    params["types"] = types
                if keys:
                    conditions.append("c.unit_key = ANY(%(keys)s)")
                    params["keys"] = keys
                where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
                cursor.execute(
                    f"SELECT {columns} FROM {part.t('chunks')} c JOIN {part.t('units')} u ON u.key = c.unit_key{where} "
                    # `+ 0`: an expression the HNSW index cannot serve, so the planner never answers an
                    # exact search from the approximate index (with an incremental sort on top).
                    "ORDER BY (c.embedding <#> %(q)b) + 0, c.embedding_id LIMIT %(fetch)s",
                    params,
                )
            else:
                cursor.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, fetch)}")
                cursor.execute(
                    f"SELECT {columns} FROM (SELECT embedding_id, unit_key, embedding FROM {part.t('chunks')} "
                    "ORDER BY embedding <#> %(q)b LIMIT %(fetch)s) c "
                    f"JOIN {part.t('units')} u ON u.key = c.unit_key",
                    params,
                )
            rows = cursor.fetchall()
        if not rows:
            return []
        matrix = np.stack([r[5] for r in rows])
        # Unfiltered: FAISS's kernel, the local scores bit for bit. Filtered: FaissVectorStore
        # multiplies the whole eligible matrix with numpy, whose rounding depends on the matrix
        # shape; the candidates' product agrees to ~1e-7 and in order (docs/postgres.md).
        scores = matrix @ query if (types or keys) else rescore(matrix, query)
        hits = [self._hit(part, r, float(score)) for r, score in zip(rows, scores, strict=True)]
        hits.sort(key=lambda h: (-h.score, h.embedding_id))
        return hits[:limit]

    @staticmethod
    def _hit(part: Part, row: Sequence[Any], score: float) -> VectorHit:
        eid, key, identifier, unit_type, file_path = row[:5]
        return VectorHit(
            embedding_id=part.outer(eid),
            score=score,
            metadata={"type": unit_type, "identifier": identifier, "file_path": file_path, "key": part.outer(key)},
        )

    def _vectors(self, vector_ids: Sequence[int]) -> dict[int, np.ndarray]:
        wanted: dict[int, tuple[Part, list[int]]] = {}
        for vid in vector_ids:
            split = self._meta._unvid(int(vid))
            if split is not None:
                wanted.setdefault(split[0].index, (split[0], []))[1].append(split[1])
        found: dict[int, np.ndarray] = {}
        for part, local in wanted.values():
            for start in range(0, len(local), BATCH):
                with self._db.cursor(binary=True) as cursor:
                    cursor.execute(
                        f"SELECT vector_id, embedding FROM {part.t('chunks')} WHERE vector_id = ANY(%s)",
                        (local[start : start + BATCH],),
                    )
                    for vid, embedding in cursor.fetchall():
                        found[self._meta._vid(part, int(vid))] = embedding
        return found

    def reconstruct(self, vector_ids: Sequence[int]) -> np.ndarray:
        """The stored vectors of the given ids, in that order (zeros for an unknown id)."""
        found = self._vectors(vector_ids)
        out = np.zeros((len(vector_ids), self.dimension), dtype=np.float32)
        for row, vid in enumerate(vector_ids):
            vector = found.get(int(vid))
            if vector is not None:
                out[row] = vector
        return out

    def vectors_for(self, vector_ids: list[int]) -> np.ndarray:
        found = self._vectors(vector_ids)
        missing = [v for v in vector_ids if int(v) not in found]
        if missing:
            raise CorruptIndexError(f"vectors {missing[:5]} are missing from the PostgreSQL index; run `woods index --full`")
        if not vector_ids:
            return np.zeros((0, self.dimension), np.float32)
        return np.stack([found[int(v)] for v in vector_ids])

    def vector_ids(self) -> list[int]:
        return sorted(self._meta.vector_meta())


class PostgresStores:
    """An open, read-only view of one repository's published generation (or, without `repo` on a
    store holding several, of all of them): the `IndexStores` attributes over PostgreSQL.

    Guarantees: each generation is pinned by a shared advisory lock for the view's lifetime and
    checked (layout, index schema, counts) on open; nothing is written; `close()` ends the session,
    which releases the pins.
    """

    def __init__(self, url: str, conn: Any, parts: Sequence[Part], exact: bool) -> None:
        self.url = url
        self.store_dir = redact(url)
        self._conn = conn
        self.metadata = PostgresMetadataStore(conn, parts)
        self.graph = DependencyGraph(self.metadata)
        self.repos = tuple(p.repo for p in parts)
        self.repo = self.repos[0] if len(self.repos) == 1 else None
        self.exact = exact
        if len(parts) == 1:
            self.generation = parts[0].generation
            self.manifest = parts[0].manifest
        else:
            self.generation = GenerationRef(",".join(f"{p.repo}@{p.generation.name}" for p in parts), "", 0)
            self.manifest = _combined_manifest(parts)
        self._vectors: Lazy[PostgresVectorStore] = Lazy(lambda: PostgresVectorStore(self.metadata, self.exact))

    @classmethod
    def open(cls, url: str, repo: str | None = None, *, exact: bool = False) -> PostgresStores:
        conn = connect(url)
        try:
            parts = _pin(conn, url, repo)
            oid = vector_oid(conn)
            if oid is None:
                raise missing_pgvector(url)
            register_vectors(conn, oid)
            return cls(url, conn, parts, exact)
        except BaseException:
            conn.close()
            raise

    @property
    def vectors(self) -> PostgresVectorStore:
        return self._vectors.get()

    @property
    def has_vectors(self) -> bool:
        """Always True: a PostgreSQL generation is published with its vectors (`OpenIndex`)."""
        return True

    def repo_of(self, key: str) -> str | None:
        return self.metadata.repo_of(key)

    def chunks(self) -> list[ChunkRow]:
        return self.metadata.chunks()

    def vectors_for(self, vector_ids: list[int]) -> np.ndarray:
        return self.vectors.vectors_for(vector_ids)

    def close(self) -> None:
        if not self._conn.closed:
            self._conn.close()

    def __enter__(self) -> PostgresStores:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rescore(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Inner products of `query` with each row, computed by FAISS's flat-index kernel — the scores
    `FaissVectorStore.search` reports for the same vectors, to the last bit."""
    import faiss

    from woods.store.vectors import _SEARCH_THREADS

    index = faiss.IndexFlatIP(matrix.shape[1])
    index.add(np.ascontiguousarray(matrix, dtype=np.float32))
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(_SEARCH_THREADS)
    try:
        scores, ids = index.search(np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), matrix.shape[0])
    finally:
        faiss.omp_set_num_threads(threads)
    out = np.zeros(matrix.shape[0], dtype=np.float32)
    out[ids[0]] = scores[0]
    return out


def _combined_manifest(parts: Sequence[Part]) -> Manifest:
    embedders = {json.dumps(p.manifest.embedder, sort_keys=True) for p in parts}
    if len(embedders) != 1:
        names = ", ".join(p.repo for p in parts)
        raise InputError(f"the repositories {names} were built with different embedders; pass --repo to search one")
    counts: dict[str, int] = {}
    for part in parts:
        for name, value in part.manifest.counts.items():
            counts[name] = counts.get(name, 0) + int(value)
    first = parts[0].manifest.data
    data = {
        "schema_version": first.get("schema_version"),
        "woods_version": first.get("woods_version"),
        "created_at": max(str(p.manifest.data.get("created_at") or "") for p in parts),
        "root": None,  # several roots: no freshness check for a combined view
        "embedder": first["embedder"],
        "counts": counts,
        "repositories": {p.repo: p.generation.name for p in parts},
    }
    return Manifest(data)


def _pin(conn: Any, url: str, repo: str | None) -> list[Part]:
    """Read the repositories' pointers and pin each generation (shared advisory lock, then a
    re-check that cleanup did not drop it in between)."""
    if not schema_present(conn):
        raise IndexNotFoundError(f"no woods index at {redact(url)}; run `woods index PATH --store {redact(url)}` first")
    check_layout(conn, url)
    if repo is not None:
        check_repo_name(repo)
    for _attempt in range(5):
        available = repositories(conn)
        if not available:
            raise IndexNotFoundError(f"no woods index at {redact(url)}; run `woods index PATH --store {redact(url)}` first")
        chosen = available
        if repo is not None:
            chosen = [(name, gen) for name, gen in available if name == repo]
            if not chosen:
                names = ", ".join(name for name, _gen in available)
                raise IndexNotFoundError(
                    f"no repository {repo!r} at {redact(url)} (indexed: {names}); run `woods index PATH --repo {repo} "
                    f"--store {redact(url)}`"
                )
        for _name, gen in chosen:
            conn.execute("SELECT pg_advisory_lock_shared(%s, %s)", (GENERATION_LOCK_CLASS, gen))
        rows = conn.execute(
            f"SELECT id, repo, name, manifest, lexical_rows, lexical_tokens, chunks, hnsw FROM {SCHEMA}.generations "
            "WHERE id = ANY(%s)",
            ([gen for _name, gen in chosen],),
        ).fetchall()
        if len(rows) == len(chosen):
            by_id = {int(r[0]): r for r in rows}
            parts = []
            for index, (name, gen) in enumerate(chosen):
                r = by_id[gen]
                manifest = _manifest(url, name, r[3])
                prefix = f"{name}:" if len(chosen) > 1 else ""
                parts.append(
                    Part(index, name, GenerationRef(str(r[2]), name, gen), manifest, int(r[4]), int(r[5]), int(r[6]),
                         bool(r[7]), prefix)
                )
            return parts
        for _name, gen in chosen:  # dropped between pointer and pin: let go and read the pointers again
            conn.execute("SELECT pg_advisory_unlock_shared(%s, %s)", (GENERATION_LOCK_CLASS, gen))
    raise CorruptIndexError(f"the generations at {redact(url)} kept changing while opening; try again")


def _manifest(url: str, repo: str, text: str) -> Manifest:
    from woods.errors import SchemaMismatchError

    try:
        data = json.loads(text)
        manifest = Manifest(data)
        _ = manifest.dimension
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"the manifest of {repo!r} at {redact(url)} is unreadable ({first_line(exc)})") from exc
    if manifest.schema_version != SCHEMA_VERSION:
        raise SchemaMismatchError(
            f"{repo!r} at {redact(url)} has index schema {manifest.schema_version}, this woods reads schema "
            f"{SCHEMA_VERSION}; run `woods index --full`"
        )
    return manifest


def open_postgres(url: str, repo: str | None = None, *, exact: bool = False) -> PostgresStores:
    """Open the PostgreSQL store at `url` (one repository, or all of them when `repo` is None)."""
    return PostgresStores.open(url, repo, exact=exact)


__all__ = [
    "EXACT_SEARCH_MAX_CHUNKS",
    "GENERATION_LOCK_CLASS",
    "PG_LAYOUT_VERSION",
    "REPO_LOCK_CLASS",
    "GenerationRef",
    "Part",
    "PostgresMetadataStore",
    "PostgresStores",
    "PostgresVectorStore",
    "lock_key",
    "open_postgres",
    "repositories",
    "table",
]

