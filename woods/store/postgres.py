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
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
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
from woods.store.postings import Posting, bm25_scores, decode_lengths, decode_posting, top_rows

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
# Generations asked in one statement (UNION ALL of one SELECT per generation): one round trip for
# a combined view of many repositories instead of one per repository, in statements PostgreSQL
# still plans in a millisecond or two.
UNION_PARTS = 200
# Rows of postings a reader keeps between queries (as the local reader: ~14 bytes a row).
POSTINGS_CACHE_ROWS = 2_000_000
# Tokens whose row counts a reader keeps (a few dozen bytes each).
TOKEN_COUNT_CACHE = 100_000


def lock_key(repo: str) -> int:
    """The repository's advisory lock key: a stable signed 32-bit hash of its name (FNV-1a)."""
    value = 0x811C9DC5
    for byte in repo.encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value - (1 << 32) if value >= (1 << 31) else value


def table(generation_id: int, name: str) -> str:
    return f"{SCHEMA}.g{int(generation_id)}_{name}"


# The organisation's vector index: the vectors of the repositories' current generations in one
# table per dimension with one HNSW index, refreshed after a fleet run
# (`pg_publish.refresh_org_vectors`), and the generations it covers. A search over every
# repository asks it once instead of each repository's own table — one approximate query
# instead of one per repository, whose cost grows with their number (bench/README.md, "Fleet").
# Derived data: rebuilt from the generations' own tables, never read for a single repository.
ORG_GENERATIONS = "org_generations"


def org_table(dimension: int) -> str:
    return f"org_vectors_d{int(dimension)}"


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
    postings: bool = False  # the lexical index is postings blobs (else per-term rows, scored in SQL)
    org: bool = False  # the organisation's vector index holds its vectors

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
        # Postings and row lengths read so far (the generations are immutable), as the local reader.
        self._cache_lock = threading.Lock()
        self._postings_cache: dict[tuple[tuple[int, ...], str], Posting] = {}
        self._cached_rows = 0
        self._lengths: dict[int, np.ndarray] = {}
        self._layouts: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._token_counts: dict[str, int] = {}
        self._count_cache: dict[str, dict[str, int]] = {}

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

    def _by_parts(self, groups: dict[int, tuple[Part, list[Any]]], arm: Callable[[Part, str], str],
                  binary: bool = False) -> list[Any]:
        """Rows of `arm(part, param)` for each part of `groups` (part → its values, bound to the
        placeholder `param` names), in statements of UNION_PARTS parts and BATCH values a part."""
        rows: list[Any] = []
        pending = [(part, values[i : i + BATCH]) for part, values in groups.values() for i in range(0, len(values), BATCH)]
        while pending:
            round_, pending = pending[:UNION_PARTS], pending[UNION_PARTS:]
            sql = " UNION ALL ".join(f"({arm(part, f'%(v{n})s')})" for n, (part, _v) in enumerate(round_))
            params = {f"v{n}": values for n, (_part, values) in enumerate(round_)}
            if binary:
                with self._db.cursor(binary=True) as cursor:
                    cursor.execute(sql, params)
                    rows.extend(cursor.fetchall())
            else:
                rows.extend(self._rows(sql, params))
        return rows

    def find_batch(self, keys: Iterable[str]) -> dict[str, Record]:
        found: dict[str, Record] = {}
        rows = self._by_parts(
            self._group(keys), lambda p, v: f"SELECT {p.index}, key, data FROM {p.t('units')} WHERE key = ANY({v})"
        )
        for index, key, data in rows:
            part = self.parts[int(index)]
            found[part.outer(key)] = self._record(part, key, data)
        return found

    def find_by_identifier(self, identifier: str) -> list[Record]:
        found: list[tuple[str, str, Record]] = []
        for index, k, d, t in self._union(
            self.parts, lambda p: f"SELECT {p.index}, key, data, type FROM {p.t('units')} WHERE identifier = %(i)s",
            {"i": identifier},
        ):
            part = self.parts[int(index)]
            found.append((str(t), part.outer(k), self._record(part, k, d)))
        return [r for _t, _k, r in sorted(found, key=lambda x: (x[0], x[1]))]

    def find_by_name(self, name: str, limit: int = 50) -> list[Record]:
        """Records whose last identifier segment is `name`, ordered by (−pagerank, identifier, key)."""
        found: list[tuple[float, str, str, Record]] = []
        for index, k, d, pr, i in self._union(
            self.parts,
            lambda p: (f"SELECT {p.index}, key, data, pagerank, identifier FROM {p.t('units')} WHERE name = %(n)s "
                       "ORDER BY pagerank DESC, identifier, key LIMIT %(l)s"),
            {"n": name, "l": limit},
        ):
            part = self.parts[int(index)]
            found.append((-float(pr), str(i), part.outer(k), self._record(part, k, d)))
        return [r for *_sort, r in sorted(found, key=lambda x: (x[0], x[1], x[2]))][:limit]

    def files_matching(self, path: str) -> list[str]:
        rows = self._union(
            self.parts,
            lambda p: f"SELECT {p.index}, path FROM {p.t('files')} WHERE path = %(p)s OR right(path, %(n)s) = %(s)s",
            {"p": path, "n": len(path) + 1, "s": "/" + path},
        )
        return sorted({str(r[1]) for r in rows})

    def find_by_type(self, unit_type: str) -> list[Record]:
        found: list[tuple[str, Record]] = []
        for part in self.parts:
            rows = self._rows(f"SELECT key, data FROM {part.t('units')} WHERE type = %s", (unit_type,))
            found.extend((part.outer(k), self._record(part, k, d)) for k, d in rows)
        return [r for _k, r in sorted(found, key=lambda x: x[0])]

    def find_by_stable_prefix(self, prefix: str, limit: int = 21) -> list[Record]:
        found: list[tuple[str, int, int, Record]] = []
        for index, k, d, sid, r in self._union(
            self.parts,
            lambda p: (f"SELECT {p.index}, key, data, stable_id, rowid FROM {p.t('units')} "
                       "WHERE stable_id >= %(a)s AND stable_id < %(b)s ORDER BY stable_id, rowid LIMIT %(l)s"),
            {"a": prefix, "b": prefix + "g", "l": limit},
        ):
            part = self.parts[int(index)]
            found.append((str(sid), part.index, int(r), self._record(part, k, d)))
        return [r for *_sort, r in sorted(found, key=lambda x: (x[0], x[1], x[2]))][:limit]

    def units_in_file(self, file_path: str) -> list[Record]:
        """Units of one file ordered by (line_start, -line_end, key): outermost first."""
        found: list[tuple[int, int, str, Record]] = []
        for index, k, d, st, e in self._union(
            self.parts,
            lambda p: f"SELECT {p.index}, key, data, line_start, line_end FROM {p.t('units')} WHERE file_path = %(f)s",
            {"f": file_path},
        ):
            part = self.parts[int(index)]
            found.append((int(st), -int(e), part.outer(k), self._record(part, k, d)))
        return [r for *_sort, r in sorted(found, key=lambda x: (x[0], x[1], x[2]))]

    def _haystack_rows(self, needle: str, columns: str) -> Iterator[tuple[Part, Any]]:
        """Units whose haystack contains `needle`, in (repository, rowid) order. PostgreSQL text
        holds no NUL and a haystack is JSON text (NUL escaped), so a needle with NUL matches nothing."""
        if "\x00" in needle:
            return
        rows = self._union(
            self.parts,
            lambda p: f"SELECT {p.index}, rowid, {columns} FROM {p.t('units')} WHERE strpos(haystack, %(n)s) > 0",
            {"n": needle},
        )
        for row in sorted(rows, key=lambda r: (int(r[0]), int(r[1]))):
            yield self.parts[int(row[0])], row[2:]

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

    def _union(self, parts: Sequence[Part], arm: Callable[[Part], str], params: dict[str, Any]) -> list[Any]:
        """Rows of `arm(part)` (a SELECT whose first column is the part's index) over `parts`,
        UNION_PARTS generations per statement."""
        rows: list[Any] = []
        for start in range(0, len(parts), UNION_PARTS):
            group = parts[start : start + UNION_PARTS]
            if group:
                rows.extend(self._rows(" UNION ALL ".join(f"({arm(p)})" for p in group), params))
        return rows

    def _token_rows(self, tokens: Sequence[str]) -> list[int]:
        """How many units hold each (already stemmed) token, over every part: a postings
        generation says so in one row per token, an older one counts its term rows."""
        with self._cache_lock:
            known = {t: n for t in set(tokens) if (n := self._token_counts.get(t)) is not None}
        wanted = sorted(set(tokens) - set(known))
        if not wanted:
            return [known[token] for token in tokens]
        found: dict[str, int] = dict.fromkeys(wanted, 0)

        def arm(part: Part) -> str:
            if part.postings:
                return f"SELECT {part.index}, term, rows FROM {part.t('postings')} WHERE term = ANY(%(t)s)"
            return f"SELECT {part.index}, term, count(*)::int FROM {part.t('terms')} WHERE term = ANY(%(t)s) GROUP BY term"

        for _part, term, count in self._union(self.parts, arm, {"t": wanted}):
            found[str(term)] = found.get(str(term), 0) + int(count)
        with self._cache_lock:  # the view's generations never change: a count is asked once
            if len(self._token_counts) + len(found) > TOKEN_COUNT_CACHE:
                self._token_counts.clear()
            self._token_counts.update(found)
        found.update(known)
        return [found.get(token, 0) for token in tokens]

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
        found = self._postings_search([p for p in self.parts if p.postings], words, idfs, weights, limit, rows, tokens)
        found.extend(self._sql_search([p for p in self.parts if not p.postings], indexes, words, idfs, weights, limit,
                                      rows, tokens))
        found.sort()
        return [(key, -neg) for neg, key in found[:limit]]

    def _postings_search(self, parts: Sequence[Part], words: Sequence[str], idfs: Sequence[float],
                         weights: Sequence[float], limit: int, rows: int, tokens: int) -> list[tuple[float, str]]:
        """(−score, key) of the view's best rows (a tie at the cut kept whole), scored from the
        parts' postings by the local backend's own function with the view's totals.

        The parts are scored as one index: part i's rows are numbered after those of the parts
        before it (`_layout`), a word's postings of every part concatenated in that order. A row's
        phrases are summed in the same order either way, so the scores are those of each part
        scored alone, to the last bit — in one pass over the view, whatever its number of parts."""
        if not parts:
            return []
        offsets, lengths = self._layout(parts)
        postings = self._global_postings(parts, offsets, words, len(lengths))
        rowids, scores = bm25_scores([postings.get(w) for w in words], idfs, weights, lengths, rows, tokens)
        rowids, scores = top_rows(rowids, scores, limit)
        if not len(rowids):
            return []
        which = np.searchsorted(offsets, rowids, side="right") - 1
        local = rowids - offsets[which]
        wanted: dict[int, list[int]] = {}
        for position, rowid in zip(which.tolist(), local.tolist(), strict=True):
            wanted.setdefault(parts[position].index, []).append(rowid)
        keys = self._keys_of_rows([p for p in parts if p.index in wanted], wanted)
        return [(-score, parts[position].outer(keys[(parts[position].index, rowid)]))
                for position, rowid, score in zip(which.tolist(), local.tolist(), scores.tolist(), strict=True)]

    def _layout(self, parts: Sequence[Part]) -> tuple[np.ndarray, np.ndarray]:
        """Where each part's rows start in the view's numbering, and every row's length in it
        (read once per view: the generations are immutable)."""
        key = tuple(p.index for p in parts)
        with self._cache_lock:
            cached = self._layouts.get(key)
        if cached is not None:
            return cached
        lengths = self._read_lengths(parts)
        sizes = [len(lengths[p.index]) for p in parts]
        offsets = np.concatenate([[0], np.cumsum(sizes[:-1], dtype=np.int64)]).astype(np.int64)
        joined = np.concatenate([lengths[p.index] for p in parts]) if parts else np.zeros(0, dtype=np.int32)
        with self._cache_lock:
            self._layouts[key] = (offsets, joined)
        return offsets, joined

    def _global_postings(self, parts: Sequence[Part], offsets: np.ndarray, words: Sequence[str],
                         size: int) -> dict[str, Posting]:
        """Each word's postings over the parts, rows in the view's numbering (cached between
        queries, up to POSTINGS_CACHE_ROWS rows)."""
        key = tuple(p.index for p in parts)
        wanted = sorted(set(words))
        with self._cache_lock:
            found = {w: hit for w in wanted if (hit := self._postings_cache.get((key, w))) is not None}
        missing = [w for w in wanted if w not in found]
        if not missing:
            return found
        lengths = self._read_lengths(parts)
        position = {p.index: i for i, p in enumerate(parts)}
        pieces: dict[str, list[tuple[int, Posting]]] = {w: [] for w in missing}
        for index, term, wide, docs, tfs in self._union(
            parts, lambda p: f"SELECT {p.index}, term, wide, docs, tfs FROM {p.t('postings')} WHERE term = ANY(%(t)s)",
            {"t": missing},
        ):
            posting = decode_posting(str(term), wide, _bytes(docs), _bytes(tfs), len(lengths[int(index)]))
            pieces[str(term)].append((position[int(index)], posting))
        with self._cache_lock:
            for word, parts_of_word in pieces.items():
                if not parts_of_word:
                    continue
                parts_of_word.sort(key=lambda item: item[0])
                posting = Posting(
                    np.concatenate([p.rows.astype(np.int64) + offsets[i] for i, p in parts_of_word]),
                    np.concatenate([p.tfs.astype(np.uint32) for _i, p in parts_of_word]),
                )
                if int(posting.rows.max(initial=-1)) >= size:
                    raise CorruptIndexError(f"the lexical postings of {word!r} name a row past the index's last")
                found[word] = posting
                if self._cached_rows + len(posting.rows) > POSTINGS_CACHE_ROWS:
                    self._postings_cache.clear()
                    self._cached_rows = 0
                self._postings_cache[(key, word)] = posting
                self._cached_rows += len(posting.rows)
        return found

    def _read_lengths(self, parts: Sequence[Part]) -> dict[int, np.ndarray]:
        """Each part's row lengths (read once per view)."""
        missing = [p for p in parts if p.index not in self._lengths]
        if missing:
            for index, data in self._union(missing, lambda p: f"SELECT {p.index}, data FROM {p.t('lengths')} WHERE id = 0", {}):
                self._lengths[int(index)] = decode_lengths(_bytes(data))
            for part in missing:
                if part.index not in self._lengths:
                    raise CorruptIndexError(f"the lexical row lengths of {part.repo!r} are missing; run `woods index --full`")
        return {p.index: self._lengths[p.index] for p in parts}

    def _keys_of_rows(self, parts: Sequence[Part], rowids: dict[int, list[int]]) -> dict[tuple[int, int], str]:
        """(part index, rowid) → unit key, one statement per UNION_PARTS parts."""
        asked = [p for p in parts if rowids.get(p.index)]
        if not asked:
            return {}
        keys: dict[tuple[int, int], str] = {}
        params = {f"r{p.index}": rowids[p.index] for p in asked}
        for index, rowid, key in self._union(
            asked, lambda p: f"SELECT {p.index}, rowid, key FROM {p.t('units')} WHERE rowid = ANY(%(r{p.index})s)", params
        ):
            keys[(int(index), int(rowid))] = str(key)
        return keys

    def _sql_search(self, parts: Sequence[Part], indexes: Sequence[int], words: Sequence[str], idfs: Sequence[float],
                    weights: Sequence[float], limit: int, rows: int, tokens: int) -> list[tuple[float, str]]:
        """(−score, key) of each part's best `limit` rows, scored in SQL from its term rows (a
        generation published before the postings)."""
        avgdl = float(tokens) / float(rows)
        w = [float(x) for x in weights]
        found: list[tuple[float, str]] = []
        for part in parts:
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
        return found

    _SUMMARY_COLUMNS = "key, identifier, name, type, language, file_path, line_start, line_end, parent, pagerank_percentile"

    def _summaries(self, part: Part, where: str, params: Sequence[Any]) -> list[UnitSummary]:
        """UnitSummary rows of one part matching `where` (per-part reads; a view's many parts
        are read with `_by_parts` / `_union`)."""
        rows = self._rows(f"SELECT {part.index}, {self._SUMMARY_COLUMNS} FROM {part.t('units')} WHERE {where}", params)
        return [self._summary(r) for r in rows]

    def _summary(self, row: Sequence[Any]) -> UnitSummary:
        """A UnitSummary from (part index, `_SUMMARY_COLUMNS`…)."""
        part = self.parts[int(row[0])]
        r = row[1:]
        return UnitSummary(part.outer(r[0]), r[1], r[2], r[3], r[4], r[5], int(r[6]), int(r[7]), r[8], float(r[9]))

    def unit_summaries(self, keys: Iterable[str]) -> dict[str, UnitSummary]:
        rows = self._by_parts(
            self._group(keys),
            lambda p, v: f"SELECT {p.index}, {self._SUMMARY_COLUMNS} FROM {p.t('units')} WHERE key = ANY({v})",
        )
        return {summary.key: summary for summary in map(self._summary, rows)}

    def units_named(self, names: Iterable[str], limit: int = 200) -> list[UnitSummary]:
        """Units whose last-segment name is one of `names` (exact spelling), by (file, line, key)."""
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return []
        rows = self._union(
            self.parts,
            lambda p: (f"SELECT {p.index}, {self._SUMMARY_COLUMNS} FROM {p.t('units')} WHERE name = ANY(%(n)s) "
                       "ORDER BY file_path, line_start, key LIMIT %(l)s"),
            {"n": wanted, "l": limit},
        )
        found = [self._summary(r) for r in rows]
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
        rows = self._by_parts(
            self._group(unit_keys),
            lambda p, v: f"SELECT {p.index}, unit_key, chunk_index, vector_id FROM {p.t('chunks')} WHERE unit_key = ANY({v})",
        )
        found: dict[str, list[int]] = {}
        for index, key, _chunk, vid in sorted(rows, key=lambda r: (int(r[0]), str(r[1]), int(r[2]))):
            part = self.parts[int(index)]
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
        return sum(self._counts("SELECT 'units', count(*) FROM {t[units]}").values())

    def _counts(self, sql: str) -> dict[str, int]:
        """`sql` (name, count) summed over the parts; kept for the view's life (its generations
        never change), so a banner every search prints costs nothing after the first."""
        with self._cache_lock:
            cached = self._count_cache.get(sql)
        if cached is not None:
            return dict(cached)
        def arm(part: Part) -> str:
            tables = {name: part.t(name) for name in ("units", "files", "edges")}
            return f"SELECT {part.index}, * FROM ({sql.format(t=tables)}) s"

        counts: dict[str, int] = {}
        for _index, name, n in self._union(self.parts, arm, {}):
            counts[str(name)] = counts.get(str(name), 0) + int(n)
        found = dict(sorted(counts.items()))
        with self._cache_lock:
            self._count_cache[sql] = found
        return dict(found)

    def type_counts(self) -> dict[str, int]:
        return self._counts("SELECT type, count(*) FROM {t[units]} GROUP BY type")

    def language_counts(self) -> dict[str, int]:
        return self._counts("SELECT language, count(*) FROM {t[files]} GROUP BY language")

    def edge_counts_by_via(self) -> dict[str, int]:
        return self._counts("SELECT via, count(*) FROM {t[edges]} GROUP BY via")

    def pagerank_percentile(self, identifier: str) -> float | None:
        """The percentile of the first unit named `identifier` (in repository, then row order)."""
        rows = self._union(
            self.parts,
            lambda p: (f"SELECT {p.index}, pagerank_percentile FROM {p.t('units')} WHERE identifier = %(i)s "
                       "ORDER BY rowid LIMIT 1"),
            {"i": identifier},
        )
        return float(min(rows, key=lambda r: int(r[0]))[1]) if rows else None

    def pagerank_scores(self) -> dict[str, float]:
        scores: dict[str, float] = {}
        for part in self.parts:
            for ident, value in self._rows(f"SELECT identifier, max(pagerank) FROM {part.t('units')} GROUP BY identifier"):
                if float(value) > scores.get(ident, -1.0):
                    scores[str(ident)] = float(value)
        return scores

    def top_pagerank(self, limit: int, types: Sequence[str] | None = None) -> list[tuple[str, str, float]]:
        """(identifier, type, pagerank) ordered by (−pagerank, identifier, type)."""
        where = "WHERE type = ANY(%(t)s) " if types else ""
        rows = self._union(
            self.parts,
            lambda p: (f"SELECT {p.index}, identifier, type, pagerank FROM {p.t('units')} {where}"
                       "ORDER BY pagerank DESC, identifier, type LIMIT %(l)s"),
            {"t": list(types or ()), "l": limit},
        )
        found = [(str(i), str(t), float(pr)) for _index, i, t, pr in rows]
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
        condition = " AND via = %(v)s" if via else ""
        rows = self._union(
            self.parts, lambda p: f"SELECT DISTINCT {p.index}, {far} FROM {p.t('edges')} WHERE {near} = %(i)s{condition}",
            {"i": identifier, "v": via},
        )
        return sorted({str(r[1]) for r in rows})

    def edges_from(self, identifier: str) -> list[tuple[str, str]]:
        rows = self._union(
            self.parts,
            lambda p: f"SELECT {p.index}, source_key, ordinal, target, via FROM {p.t('edges')} WHERE source = %(i)s",
            {"i": identifier},
        )
        return [(str(t), str(v)) for _i, _k, _o, t, v in sorted(rows, key=lambda r: (int(r[0]), str(r[1]), int(r[2])))]

    def edges_to(self, identifier: str) -> list[tuple[str, str]]:
        rows = self._union(
            self.parts, lambda p: f"SELECT DISTINCT {p.index}, source, via FROM {p.t('edges')} WHERE target = %(i)s",
            {"i": identifier},
        )
        return sorted({(str(src), str(v)) for _i, src, v in rows})

    def has_edge_node(self, identifier: str) -> bool:
        return bool(self._union(
            self.parts,
            lambda p: (f"SELECT {p.index} FROM {p.t('edges')} WHERE source = %(i)s UNION ALL "
                       f"SELECT {p.index} FROM {p.t('edges')} WHERE target = %(i)s LIMIT 1"),
            {"i": identifier},
        ))


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
        self._session_ef: int | None = None  # hnsw.ef_search this reader's session has (org searches)

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
        parts = list(self._meta.parts)
        if self._org_search(types, keys):
            covered = [p for p in parts if p.org]
            hits.extend(self._search_org(covered, query, limit))
            parts = [p for p in parts if not p.org]
        for part in parts:
            if by_part is not None and part.index not in by_part:
                continue
            local_keys = None if by_part is None else by_part[part.index]
            hits.extend(self._search_part(part, query, limit, list(types) if types else None, local_keys))
        hits.sort(key=lambda h: (-h.score, h.embedding_id))
        return hits[:limit]

    def _org_search(self, types: Collection[str] | None, keys: Collection[str] | None) -> bool:
        """Whether the organisation's vector index answers for the parts it covers: a combined
        view, unfiltered, not exact, larger than an exact scan (below that every part is scanned
        exactly, as the local backend answers)."""
        meta = self._meta
        return (meta.combined and not self.exact and not types and not keys
                and meta.chunk_count() > EXACT_SEARCH_MAX_CHUNKS and any(p.org for p in meta.parts))

    def _search_org(self, parts: Sequence[Part], query: np.ndarray, limit: int) -> list[VectorHit]:
        """The best `limit` hits of `parts` from the organisation's vector index: its HNSW index
        picks `limit + TIE_MARGIN` candidates among the parts' generations (an iterative scan, so
        a filter that skips other generations still fills the list), scored with FAISS's kernel."""
        fetch = limit + TIE_MARGIN
        by_gen = {p.generation.id: p for p in parts}
        ef_search = max(HNSW_EF_SEARCH, fetch)
        if self._session_ef != ef_search:
            # For this reader's session (its own connection; nothing is written): one statement
            # once, instead of a transaction with SET LOCAL around every search.
            self._db.execute("SELECT set_config('hnsw.ef_search', %s, false), "
                             "set_config('hnsw.iterative_scan', 'relaxed_order', false)", (str(ef_search),))
            self._session_ef = ef_search
        with self._db.cursor(binary=True) as cursor:
            cursor.execute(
                f"SELECT gen, vector_id, embedding FROM {SCHEMA}.{org_table(self.dimension)} WHERE gen = ANY(%(g)s) "
                "ORDER BY embedding <#> %(q)b LIMIT %(fetch)s",
                {"g": list(by_gen), "q": query, "fetch": fetch},
            )
            rows = cursor.fetchall()
        if not rows:
            return []
        wanted: dict[int, list[int]] = {}
        for gen, vid, _embedding in rows:
            wanted.setdefault(by_gen[int(gen)].index, []).append(int(vid))
        asked = [p for p in parts if p.index in wanted]
        meta = {
            (int(index), int(vid)): (eid, key, identifier, unit_type, path)
            for index, vid, eid, key, identifier, unit_type, path in self._meta._union(
                asked,
                lambda p: (f"SELECT {p.index}, c.vector_id, c.embedding_id, c.unit_key, u.identifier, u.type, u.file_path "
                           f"FROM {p.t('chunks')} c JOIN {p.t('units')} u ON u.key = c.unit_key "
                           f"WHERE c.vector_id = ANY(%(v{p.index})s)"),
                {f"v{index}": vids for index, vids in wanted.items()},
            )
        }
        scores = rescore(np.stack([r[2] for r in rows]), query)
        hits = []
        for (gen, vid, _embedding), score in zip(rows, scores, strict=True):
            part = by_gen[int(gen)]
            found = meta.get((part.index, int(vid)))
            if found is not None:
                hits.append(self._hit(part, found, float(score)))
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
        rows = self._meta._by_parts(
            wanted, lambda p, v: f"SELECT {p.index}::int4, vector_id, embedding FROM {p.t('chunks')} WHERE vector_id = ANY({v})",
            binary=True,
        )
        for index, vid, embedding in rows:
            found[self._meta._vid(self._meta.parts[int(index)], int(vid))] = embedding
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


def _bytes(value: Any) -> Any:
    """A bytea value as bytes (psycopg may hand back a memoryview)."""
    return bytes(value) if isinstance(value, memoryview) else value


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
            with_postings = _with_postings(conn, [gen for _name, gen in chosen])
            in_org = _in_org_index(conn, [gen for _name, gen in chosen]) if len(chosen) > 1 else set()
            parts = []
            for index, (name, gen) in enumerate(chosen):
                r = by_id[gen]
                manifest = _manifest(url, name, r[3])
                prefix = f"{name}:" if len(chosen) > 1 else ""
                parts.append(
                    Part(index, name, GenerationRef(str(r[2]), name, gen), manifest, int(r[4]), int(r[5]), int(r[6]),
                         bool(r[7]), prefix, gen in with_postings, gen in in_org)
                )
            return parts
        for _name, gen in chosen:  # dropped between pointer and pin: let go and read the pointers again
            conn.execute("SELECT pg_advisory_unlock_shared(%s, %s)", (GENERATION_LOCK_CLASS, gen))
    raise CorruptIndexError(f"the generations at {redact(url)} kept changing while opening; try again")


def _with_postings(conn: Any, generations: Sequence[int]) -> set[int]:
    """The generations among `generations` whose lexical index is postings blobs."""
    names = {f"g{gen}_postings": gen for gen in generations}
    rows = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = ANY(%s)", (SCHEMA, list(names)),
    ).fetchall()
    return {names[str(r[0])] for r in rows}


def _in_org_index(conn: Any, generations: Sequence[int]) -> set[int]:
    """The generations among `generations` the organisation's vector index covers."""
    row = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.{ORG_GENERATIONS}",)).fetchone()
    if row is None or row[0] is None:
        return set()
    rows = conn.execute(f"SELECT gen FROM {SCHEMA}.{ORG_GENERATIONS} WHERE gen = ANY(%s)", (list(generations),)).fetchall()
    return {int(r[0]) for r in rows}


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
    "ORG_GENERATIONS",
    "PG_LAYOUT_VERSION",
    "REPO_LOCK_CLASS",
    "GenerationRef",
    "Part",
    "PostgresMetadataStore",
    "PostgresStores",
    "PostgresVectorStore",
    "lock_key",
    "open_postgres",
    "org_table",
    "repositories",
    "table",
]

