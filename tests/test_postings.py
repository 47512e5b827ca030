"""Term postings (`woods.store.postings`): the lexical leg scored with numpy must rank exactly as
FTS5 does — same rows, same scores to the last bit — and fall back to FTS5 where it cannot."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from woods.store.metadata import LexicalDocument, MetadataWriter, SQLiteMetadataStore
from woods.store.postings import POSTINGS_META_KEY, Postings

WEIGHTS = (8.0, 2.0, 4.0, 3.0, 1.0)

# Words whose FTS5 tokens differ from their spelling: stems, diacritics, hyphens and dots (one
# word, several tokens), underscores (kept inside a token), case, digits, a control character.
_VOCABULARY = [
    "dispatch", "dispatching", "dispatched", "request", "requests", "Request", "naïve", "café", "cafe",
    "foo-bar", "http.client", "full_dispatch_request", "parse", "parser", "parsing", "JSONDecoder", "json",
    "decode", "error", "errors", "x86", "utf8", "tab\x01bed", "数据", "über", "uber", "data", "value", "values",
]


def _write(path: Path, documents: list[tuple[str, ...]]) -> SQLiteMetadataStore:
    writer = MetadataWriter(path)
    for i, fields in enumerate(documents):
        record = {"identifier": f"U{i:03d}", "type": "class", "file_path": f"a/u{i:03d}.rb"}
        writer.add_unit(f"U{i:03d}", record, f"s{i}", 0.0, lexical=LexicalDocument(*fields))
    writer.commit_and_close()
    return SQLiteMetadataStore(path)


def _corpus(seed: int = 3, size: int = 160) -> list[tuple[str, ...]]:
    rng = random.Random(seed)

    def words(low: int, high: int) -> str:
        return " ".join(rng.choice(_VOCABULARY) for _ in range(rng.randint(low, high)))

    return [(words(1, 2), words(0, 3), words(1, 4), words(0, 6), words(0, 60)) for _ in range(size)]


def _fts5_only(metadata: SQLiteMetadataStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metadata, "_postings", lambda: None)


def test_postings_hold_exactly_what_fts5_indexed(tmp_path):
    """Every token's row count and per-column counts, and every row's length, are FTS5's own
    (read back through fts5vocab and FTS5's docsize table)."""
    metadata = _write(tmp_path / "m.sqlite3", _corpus())
    conn = sqlite3.connect(tmp_path / "m.sqlite3")
    conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'lexical', 'instance')")
    expected: dict[str, dict[int, list[int]]] = {}
    columns = {"name": 0, "qualifier": 1, "path": 2, "doc": 3, "body": 4}
    for term, doc, col in conn.execute("SELECT term, doc, col FROM temp.v"):
        expected.setdefault(term, {}).setdefault(doc, [0] * 5)[columns[col]] += 1
    postings = Postings.open(metadata._lexical_conn)
    assert postings is not None
    assert postings.rows == conn.execute("SELECT count(*) FROM lexical").fetchone()[0]
    assert postings.tokens == sum(sum(c) for rows in expected.values() for c in rows.values())
    stored = {term: (rows, wide) for term, rows, wide in conn.execute("SELECT term, rows, wide FROM lexical_postings")}
    assert set(stored) == set(expected)
    # Cut as FTS5 cuts: a hyphen and a dot separate tokens, diacritics go, stems replace words.
    assert {"foo", "bar", "http", "client", "full_dispatch_request"} <= set(stored)
    assert not {"foo-bar", "naïve", "dispatching"} & set(stored)
    for term, by_row in expected.items():
        posting = postings._postings([term])[term]
        assert posting.rows.tolist() == sorted(by_row)
        assert posting.tfs.tolist() == [by_row[r] for r in sorted(by_row)]
        assert stored[term] == (len(by_row), 0)
    conn.close()
    metadata.close()


@pytest.mark.parametrize("limit", [1, 5, 20, 200])
def test_postings_rank_exactly_as_fts5(tmp_path, monkeypatch, limit):
    """The same keys in the same order with bit-identical scores, for queries of one to six
    words — ties at the cut included (many rows share a score in this corpus)."""
    metadata = _write(tmp_path / "m.sqlite3", _corpus())
    rng = random.Random(11)
    queries = [[rng.choice(["dispatch", "requests", "naive", "cafe", "json", "errors", "values", "parsing", "x86",
                            "über", "数据", "full_dispatch_request", "decoder", "missing",
                            "request", "parse", "café"])  # two words, one token: two phrases to FTS5
                for _ in range(rng.randint(1, 6))] for _ in range(80)]
    used = []
    score = Postings.score

    def spying(self, tokens, idfs, weights):
        used.append(tokens)
        return score(self, tokens, idfs, weights)

    monkeypatch.setattr(Postings, "score", spying)
    with_postings = [metadata.lexical_search(q, limit, WEIGHTS) for q in queries]
    assert len(used) >= 70  # the postings answered (queries of only unknown words end before scoring)
    _fts5_only(metadata, monkeypatch)
    with_fts5 = [metadata.lexical_search(q, limit, WEIGHTS) for q in queries]
    assert with_postings == with_fts5
    assert sum(1 for h in with_postings if h) >= 70 and max(len(h) for h in with_postings) == min(limit, 160)
    metadata.close()


def test_a_term_fts5_cuts_into_a_phrase_is_answered_by_fts5(tmp_path, monkeypatch):
    """`foo-bar` is the phrase "foo bar" to FTS5 (matched by position, which postings do not
    hold): such a query goes to FTS5, and ranks as it always did."""
    metadata = _write(tmp_path / "m.sqlite3", [
        ("foo", "", "a", "", "foo bar"), ("bar", "", "b", "", "bar foo"), ("baz", "", "c", "", "foo-bar baz"),
        *[(f"w{i}", "", "d", "", "filler") for i in range(4)],
    ])
    monkeypatch.setattr(Postings, "score", lambda *a: pytest.fail("postings asked for a phrase"))
    mixed = metadata.lexical_search(["foo-bar", "baz"], 10, WEIGHTS)
    assert [k for k, _ in mixed][0] == "U002"  # the only row with the phrase in order, and baz
    assert [k for k, _ in metadata.lexical_search(["foo-bar"], 10, WEIGHTS)] == ["U000", "U002"]  # the shorter first
    metadata.close()


def test_a_column_count_past_the_narrow_layout_is_stored_wide(tmp_path, monkeypatch):
    """70,000 occurrences of one token in a row do not fit uint16: the term is stored wide and
    still scores as FTS5 scores it."""
    metadata = _write(tmp_path / "m.sqlite3", [
        ("many", "", "a", "", " ".join(["zebra"] * 70_000)), ("few", "", "b", "", "zebra horse"), ("no", "", "c", "", "horse"),
    ])
    conn = sqlite3.connect(tmp_path / "m.sqlite3")
    assert conn.execute("SELECT wide FROM lexical_postings WHERE term = 'zebra'").fetchone() == (1,)
    conn.close()
    fast = metadata.lexical_search(["zebra", "horse"], 5, WEIGHTS)
    _fts5_only(metadata, monkeypatch)
    assert fast == metadata.lexical_search(["zebra", "horse"], 5, WEIGHTS)
    metadata.close()


@pytest.mark.parametrize("value", [None, '{"format": "postings-0", "rows": 1, "tokens": 1}', "not json"])
def test_a_generation_without_readable_postings_is_searched_through_fts5(tmp_path, value):
    """Generations written before the postings (no meta entry) or by another format: FTS5 alone,
    the same list."""
    path = tmp_path / "m.sqlite3"
    expected = _write(path, _corpus(size=40))
    before = expected.lexical_search(["dispatch", "json"], 10, WEIGHTS)
    expected.close()
    conn = sqlite3.connect(path)
    if value is None:
        conn.execute("DELETE FROM meta WHERE key = ?", (POSTINGS_META_KEY,))
    else:
        conn.execute("UPDATE meta SET value = ? WHERE key = ?", (value, POSTINGS_META_KEY))
    conn.commit()
    conn.close()
    metadata = SQLiteMetadataStore(path)
    assert metadata._postings() is None
    assert metadata.lexical_search(["dispatch", "json"], 10, WEIGHTS) == before
    metadata.close()


def test_common_terms_read_from_postings_equal_fts5_counts(tmp_path, monkeypatch):
    metadata = _write(tmp_path / "m.sqlite3", _corpus())
    words = ["dispatch", "json", "values", "missing", "foo-bar"]
    fast = [metadata._term_rows([w]) for w in words]
    assert metadata.common_terms(words) == {w for w, n in zip(words, fast, strict=True) if 2 * n[0] >= 160}
    _fts5_only(metadata, monkeypatch)
    metadata._term_row_cache.clear()
    assert [metadata._term_rows([w]) for w in words] == fast
    metadata.close()


def test_the_writer_keeps_rows_in_rowid_order_across_batches(tmp_path, monkeypatch):
    """More rows than one tokenizing batch: postings stay ascending by rowid and complete."""
    monkeypatch.setattr("woods.store.postings._BATCH_UNITS", 7)
    metadata = _write(tmp_path / "m.sqlite3", _corpus(size=50))
    postings = Postings.open(metadata._lexical_conn)
    assert postings is not None
    posting = postings._postings(["json"])["json"]
    assert posting.rows.tolist() == sorted(posting.rows.tolist()) and len(posting.rows) == postings.count(["json"])[0]
    fast = metadata.lexical_search(["json", "parsing", "cafe"], 50, WEIGHTS)
    _fts5_only(metadata, monkeypatch)
    assert fast == metadata.lexical_search(["json", "parsing", "cafe"], 50, WEIGHTS)
    metadata.close()


def test_writing_the_postings_stays_inside_the_writers_transaction(tmp_path):
    """The postings are written in the writer's one transaction: an abort after them leaves no
    row behind (an `executescript` would have committed everything before it)."""
    path = tmp_path / "m.sqlite3"
    writer = MetadataWriter(path)
    for i, fields in enumerate(_corpus(size=5)):
        writer.add_unit(f"U{i}", {"identifier": f"U{i}", "type": "class"}, f"s{i}", 0.0, lexical=LexicalDocument(*fields))
    writer._postings.write(writer._conn)
    writer.abort()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM units").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'lexical_postings'").fetchone() == (0,)
    conn.close()


def test_rows_out_of_rowid_order_are_refused():
    from woods.store.postings import PostingsBuilder

    builder = PostingsBuilder()
    builder.add(2, ("a", "", "", "", ""))
    with pytest.raises(ValueError, match="ascending rowid"):
        builder.add(2, ("b", "", "", "", ""))


def test_a_process_without_numpy_asks_fts5_and_gets_the_same_list(tmp_path, monkeypatch):
    """A one-shot keyword search must not import numpy (60–110 ms) for a few ms of scoring: while
    numpy is not loaded the postings are not read, and FTS5 answers with the same list."""
    from woods.store import metadata as metadata_module

    metadata = _write(tmp_path / "m.sqlite3", _corpus())
    with_postings = metadata.lexical_search(["dispatch", "json", "cafe"], 20, WEIGHTS)
    assert metadata._postings() is not None
    monkeypatch.setattr(metadata_module, "_NUMPY", "a_module_nobody_loaded")
    assert metadata._postings() is None
    monkeypatch.setattr(Postings, "score", lambda *a: pytest.fail("postings read without numpy loaded"))
    assert metadata.lexical_search(["dispatch", "json", "cafe"], 20, WEIGHTS) == with_postings
    metadata.close()


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("UPDATE lexical_postings SET tfs = substr(tfs, 1, length(tfs) - 1)", "damaged"),
        ("UPDATE lexical_postings SET docs = CAST(x'ffffff7f' || substr(docs, 5) AS BLOB)", "past the index's last"),
        ("UPDATE lexical_postings SET docs = 'text, not a blob'", "damaged"),
        ("UPDATE lexical_lengths SET data = x'00'", "row lengths"),
    ],
)
def test_damaged_postings_are_one_line_and_exit_2(tmp_path, statement, message):
    """A damaged postings blob is a corrupt index: one line naming the fix, exit 2, no traceback."""
    from tests.helpers import copy_fixture, index_with_fake, run_cli
    from woods.store import index as layout

    root = copy_fixture("rails_app", tmp_path)
    index_with_fake(root)
    conn = sqlite3.connect(layout.read_current(root / ".woods") / layout.METADATA_FILE)
    conn.execute(statement)
    conn.commit()
    conn.close()
    result = run_cli("search", "charge invoice", "--path", str(root), "--strategy", "hybrid",
                     env={"WOODS_EMBEDDER": "fake"})
    assert result.code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "woods index --full" in lines[0], result.stderr
