"""Store behaviour: storage keys, the metadata search contract, FTS, vectors, PageRank, layout."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from woods.embedding.fake import FakeEmbeddingProvider
from woods.errors import CorruptIndexError, IndexNotFoundError, LockTimeoutError
from woods.indexing import build_index_from_units
from woods.retrieval.subjects import LexicalSubjects
from woods.store import index as layout
from woods.store import metadata as metadata_module
from woods.store.graph import compute_pagerank
from woods.store.identity import assign_keys, key_parts, public_identifier, strip_chunk, typed_key
from woods.store.index import IndexStores, StoreLock
from woods.store.lexical_query import (
    bound,
    first_split,
    informative_terms,
    next_split,
    phrase_order,
    proven,
    split_expressions,
)
from woods.tokens import query_terms
from woods.units import Dependency, Unit


def unit(identifier: str, type_: str = "class", source: str = "", path: str = "app/x.rb", **kw) -> Unit:
    return Unit(
        identifier=identifier,
        type=type_,
        language="ruby",
        file_path=path,
        line_start=kw.pop("line_start", 1),
        line_end=kw.pop("line_end", 3),
        source_code=source or f"class {identifier}\nend\n",
        **kw,
    )


def build(tmp_path: Path, units: list[Unit], link: bool = True) -> IndexStores:
    store = tmp_path / "store"
    build_index_from_units(units, FakeEmbeddingProvider(), store, link=link)
    return IndexStores.open(store)


# -- identity ---------------------------------------------------------------------------------------


def test_typed_key_round_trip_and_public_identifier():
    key = typed_key("Shared", "model")
    assert key.startswith("@woods-unit:") and "=" not in key
    assert key_parts(key) == ("Shared", "model")
    assert public_identifier(key) == "Shared"
    assert public_identifier("Billing::Invoice") == "Billing::Invoice"
    assert key_parts("@woods-unit:!!!") is None


def test_assign_keys_plain_typed_and_located():
    units = [
        unit("A"),
        unit("Shared", "lib"),
        unit("Shared", "model"),
        unit("Twice", path="a.rb"),
        unit("Twice", path="b.rb"),
    ]
    keys = assign_keys(units)
    assert keys[0] == "A"
    assert key_parts(keys[1]) == ("Shared", "lib") and key_parts(keys[2]) == ("Shared", "model")
    assert keys[3] != keys[4] and public_identifier(keys[3]) == public_identifier(keys[4]) == "Twice"
    assert len(set(keys)) == len(keys)


def test_strip_chunk_only_strips_trailing_chunk_suffix():
    assert strip_chunk("A::B#charge#chunk_12") == "A::B#charge"
    assert strip_chunk("A#chunk_x") == "A#chunk_x"
    assert strip_chunk("A#chunk_1#other") == "A#chunk_1#other"


# -- metadata search contract (Ruby MetadataStore#search) --------------------------------------------


def test_search_is_case_insensitive_substring_in_insertion_order(tmp_path):
    stores = build(tmp_path, [
        unit("Zeta", source="class Zeta\n  def refund_payment; end\nend\n"),
        unit("Alpha", source="class Alpha\n  # handles REFUNDS\nend\n"),
        unit("Beta", source="class Beta\nend\n"),
    ])
    hits = [r["identifier"] for r in stores.metadata.search("Refund")]
    assert hits == ["Zeta", "Alpha"]  # rowid order, not alphabetical
    assert stores.metadata.search("und_pay")[0]["identifier"] == "Zeta"  # substring, not word
    stores.close()


def test_search_treats_like_wildcards_literally_and_validates_fields(tmp_path):
    stores = build(tmp_path, [
        unit("Pct", source="class Pct\n  RATE = '50%_off'\nend\n"),
        unit("Plain", source="class Plain\n  RATE = '50 off'\nend\n"),
    ])
    assert [r["identifier"] for r in stores.metadata.search("50%_")] == ["Pct"]
    assert [r["identifier"] for r in stores.metadata.search("%")] == ["Pct"]
    assert [r["identifier"] for r in stores.metadata.search("pct", fields=["identifier"])] == ["Pct"]
    assert stores.metadata.search("class", fields=["identifier"]) == []
    with pytest.raises(ValueError):
        stores.metadata.search("x", fields=["identifier; drop table units"])
    stores.close()


def test_whole_record_search_matches_key_names_but_not_positions(tmp_path):
    stores = build(tmp_path, [unit("Alpha", line_start=4242, line_end=4300)])
    assert stores.metadata.search("namespace")  # a key name is part of the whole-record haystack
    assert stores.metadata.search("4242") == []  # positional bookkeeping is never matched
    stores.close()


def test_records_carry_storage_key_and_typed_duplicates_stay_apart(tmp_path):
    stores = build(tmp_path, [unit("Shared", "lib"), unit("Shared", "model", path="app/models/shared.rb")])
    records = stores.metadata.find_by_identifier("Shared")
    assert [r["type"] for r in records] == ["lib", "model"]
    assert all(key_parts(r["id"]) == ("Shared", r["type"]) for r in records)
    assert stores.metadata.find("Shared") is None
    assert set(stores.metadata.find_batch([r["id"] for r in records])) == {r["id"] for r in records}
    stores.close()


WEIGHTS = (8.0, 2.0, 4.0, 3.0, 1.0)


def test_lexical_index_ranks_name_hits_and_survives_syntax_characters(tmp_path):
    stores = build(tmp_path, [
        unit("InvoiceMailer", source="class InvoiceMailer\n  def notify; end\nend\n"),
        unit("Report", source="class Report\n  # mentions invoice once\nend\n"),
    ])
    hits = stores.metadata.lexical_search(query_terms("invoice"), 10, WEIGHTS)
    assert [k for k, _ in hits] == ["InvoiceMailer", "Report"]  # the name part outranks a comment
    for hostile in ['"', "AND OR NOT", "*", "a:b", "(", "NEAR(", "\x00", "é\u200b"]:
        stores.metadata.lexical_search([hostile, "invoice"], 5, WEIGHTS)  # never an FTS5 syntax error
    stores.close()


def test_lexical_index_splits_identifiers_and_stems(tmp_path):
    stores = build(tmp_path, [
        unit("Dispatcher", source="class Dispatcher\n  def full_dispatch_request; end\nend\n"),
        unit("Other", source="class Other\n  def render; end\nend\n"),
    ])
    # camelCase/snake_case parts and word forms (requests → request) meet
    assert [k for k, _ in stores.metadata.lexical_search(query_terms("dispatching requests"), 5, WEIGHTS)] == ["Dispatcher"]
    assert [k for k, _ in stores.metadata.lexical_search(query_terms("full_dispatch_request"), 5, WEIGHTS)] == ["Dispatcher"]
    stores.close()


def test_summaries_read_with_lexical_hits_equal_those_read_by_key(tmp_path):
    """The lexical search keeps its hits' summaries; asking for them later must give exactly what
    a reader that never searched reads by key (and keys it never saw are still read)."""
    stores = build(tmp_path, [
        unit("InvoiceMailer", source="class InvoiceMailer\n  def notify; end\nend\n"),
        unit("Report", source="class Report\n  def total; end\nend\n"),
    ])
    keys = [k for k, _ in stores.metadata.lexical_search(query_terms("invoice"), 10, WEIGHTS)]
    assert keys == ["InvoiceMailer"]
    kept = stores.metadata.unit_summaries(["InvoiceMailer", "Report", "Missing"])
    fresh = build(tmp_path / "again", [
        unit("InvoiceMailer", source="class InvoiceMailer\n  def notify; end\nend\n"),
        unit("Report", source="class Report\n  def total; end\nend\n"),
    ])
    assert kept == fresh.metadata.unit_summaries(["InvoiceMailer", "Report"])
    assert set(kept) == {"InvoiceMailer", "Report"}
    stores.close()
    fresh.close()


def test_informative_terms_drop_only_words_in_half_the_rows_when_another_word_ranks():
    assert informative_terms(["py", "parser"], [80, 3], 100) == ["parser"]
    assert informative_terms(["py", "self"], [80, 50], 100) == ["py", "self"]  # all common: as asked
    assert informative_terms(["py", "zzz"], [80, 0], 100) == ["py", "zzz"]  # the other matches nothing
    assert informative_terms(["a", "b"], [49, 1], 100) == ["a", "b"]  # under half: IDF above the floor


def test_a_word_in_half_the_units_neither_pads_the_lexical_list_nor_seeds_a_subject(tmp_path):
    units = [unit(f"W{i}", source=f"class W{i}\n  # widget\nend\n", path=f"app/w{i}.rb") for i in range(6)]
    units.append(unit("Gear", source="class Gear\n  # widget sprocket\nend\n", path="app/gear.rb"))
    stores = build(tmp_path, units)
    metadata = stores.metadata
    assert metadata.common_terms(["widget", "sprocket", "gear"]) == {"widget"}
    both = metadata.lexical_search(["widget", "sprocket"], 10, WEIGHTS)
    assert [k for k, _ in both] == [k for k, _ in metadata.lexical_search(["sprocket"], 10, WEIGHTS)] == ["Gear"]
    assert len(metadata.lexical_search(["widget"], 10, WEIGHTS)) == 7  # every term common: kept
    subjects = LexicalSubjects(metadata, WEIGHTS)
    assert subjects.records_for("widget") == []
    assert [r["id"] for r in subjects.records_for("sprocket")] == ["Gear"]
    stores.close()


def test_phrases_are_summed_rarest_first_and_split_into_disjoint_expressions():
    assert phrase_order([40, 3, 40, 0], 100) == [3, 1, 0, 2]  # ties keep query order
    assert phrase_order([70, 60, 2], 100) == [2, 0, 1]  # counted up to half the rows: 70 ties 60
    assert split_expressions(["rare", 'q"uote', "common"], 2) == (
        '("rare" OR "q""uote") AND ("common")',
        '("rare" OR "q""uote") NOT ("common")',
    )


def test_split_choice_and_its_proof():
    assert first_split([5, 30, 500], 21) == 2  # 35 rows reach the fetch; 500 ≥ 2 × 35 saves enough
    assert first_split([5, 30, 60], 21) == 3  # 60 < 2 × 35: one query over all
    assert first_split([5, 6], 21) == 2  # never reaches the fetch: all
    assert bound([1.0, 0.5]) > 2.2 * 1.5  # k1 + 1 per unit of IDF, with a margin
    assert proven([9.0, 8.0, 4.0], 3, 3.9) and not proven([9.0, 8.0, 4.0], 3, 4.0)
    assert not proven([9.0, 8.0], 3, 0.1)  # fewer rows than the limit: the rest could fill it
    # After a failed round, enough phrases move to E that the rest is bounded below the score reached
    idfs = [5.0, 2.0, 1.0, 0.5, 0.1]
    assert next_split(idfs, 1, [9.0, 3.0], 2) == 3  # bound([0.5, 0.1]) = 1.32 < 3.0; bound([1, .5, .1]) ≥ 3
    assert next_split(idfs, 1, [9.0], 2) == 2  # under the limit: one more


def _split_corpus() -> list[Unit]:
    """300 units: `data` in 100 short ones, `parse` once in 30 long ones (which therefore score
    below a short `data` unit), `tokenizer` in 9, `misc` in the other 200 (over half: dropped)."""
    units = []
    for i in range(300):
        words = ["data"] * (1 + i % 3) if i < 100 else ["misc"]
        if i % 10 == 0:
            words += ["parse", *["filler"] * 150]
        if i % 37 == 0:
            words.append("tokenizer")
        body = " ".join(words)
        units.append(unit(f"U{i:03d}", source=f"class U{i:03d}\n  # {body}\nend\n", path=f"app/u{i:03d}.rb"))
    return units


@pytest.mark.parametrize("limit", [1, 3, 5, 20, 40, 200])
def test_split_lexical_queries_rank_exactly_as_one_query_over_all_terms(tmp_path, monkeypatch, limit):
    """The MaxScore split (`E AND N`, `E NOT N`) must give the same keys and the same scores, bit
    for bit, as asking every term at once — whether it proves its top list, widens, or gives up."""
    stores = build(tmp_path, _split_corpus())
    metadata = stores.metadata
    monkeypatch.setattr(metadata, "_postings", lambda: None)  # FTS5's own plan (tests/test_postings.py: the postings)
    rounds: list[int] = []
    top_rows = metadata._top_rows

    def counting(expressions, limit_, columns):
        rounds.append(len(expressions))
        return top_rows(expressions, limit_, columns)

    monkeypatch.setattr(metadata, "_top_rows", counting)
    queries = [["tokenizer", "parse", "data"], ["data", "parse"], ["parse", "misc", "data"], ["tokenizer", "data"],
               ['"', "parse", "NEAR(", "data"], ["tokenizer", "\u2014", "parse", "data"]]  # FTS5 syntax, no token
    split = [metadata.lexical_search(q, limit, WEIGHTS) for q in queries]
    split_rounds = list(rounds)
    monkeypatch.setattr(metadata_module, "first_split", lambda rows, fetch: len(rows))  # one query, all terms
    whole = [metadata.lexical_search(q, limit, WEIGHTS) for q in queries]
    assert split == whole
    assert all(hits for hits in split)
    if limit <= 5:
        assert 2 in split_rounds  # the split ran (and proved its list) on this corpus
    stores.close()


def test_a_published_lexical_index_is_one_segment(tmp_path):
    """The writer merges FTS5's segments before publishing (`MetadataWriter.commit_and_close`):
    enough distinct words to make FTS5 flush several segments still end as one."""
    writer = metadata_module.MetadataWriter(tmp_path / "m.sqlite3")
    for i in range(3000):
        words = " ".join(f"w{i}x{j}" for j in range(60))
        record = {"identifier": f"U{i}", "type": "class", "file_path": f"a/u{i}.rb", "source_code": words}
        document = metadata_module.LexicalDocument(f"u{i}", "", f"a u{i} rb", "", words)
        writer.add_unit(f"U{i}", record, f"s{i}", 0.0, lexical=document)
    writer.commit_and_close()
    conn = sqlite3.connect(tmp_path / "m.sqlite3")
    assert conn.execute("SELECT count(DISTINCT segid) FROM lexical_idx").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM lexical WHERE lexical MATCH 'w2999x59'").fetchone()[0] == 1
    conn.close()


# -- vectors ------------------------------------------------------------------------------------------


def test_vector_search_orders_ties_by_embedding_id_and_filters_before_limit(tmp_path):
    same = "class Same\nend\n"
    units = [unit(f"T{i}", source=same.replace("Same", "Same"), path=f"t{i}.rb") for i in range(5)]
    units.append(unit("Job", "job", source="class Job\n  def perform; end\nend\n"))
    stores = build(tmp_path, units, link=False)
    # Identical sources but different identifiers → the prefix differs; query the shared body only.
    query = FakeEmbeddingProvider().embed("class same end")
    hits = stores.vectors.search(query, 3)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    for a, b in zip(hits, hits[1:], strict=False):
        if a.score == b.score:
            assert a.embedding_id < b.embedding_id
    only_jobs = stores.vectors.search(query, 3, types=["job"])
    assert [h.embedding_id for h in only_jobs] == ["Job"]
    assert stores.vectors.search(query, 2, keys=["T3"])[0].metadata["identifier"] == "T3"
    stores.close()


# -- pagerank -----------------------------------------------------------------------------------------


def _reference_pagerank(nodes, edges, d=0.85, iterations=20):
    n = len(nodes)
    rank = {x: 1 / n for x in nodes}
    out = {x: 0 for x in nodes}
    for s, t in edges:
        if s in out and t in out:
            out[s] += 1
    for _ in range(iterations):
        dangling = sum(rank[x] for x in nodes if out[x] == 0)
        new = {}
        for x in nodes:
            incoming = sum(rank[s] / out[s] for s, t in edges if t == x and s in out)
            new[x] = (1 - d) / n + d * (incoming + dangling / n)
        rank = new
    return rank


def test_pagerank_matches_the_ruby_formula_with_multiplicity_and_dangling_mass():
    nodes = ["a", "b", "c", "d"]
    edges = [("a", "b"), ("a", "b"), ("a", "c"), ("b", "c"), ("c", "a"), ("a", "external")]
    got = compute_pagerank(nodes, edges)
    want = _reference_pagerank(nodes, edges)
    assert got == pytest.approx(want, abs=1e-12)
    assert sum(got.values()) == pytest.approx(1.0)
    assert got["b"] > got["d"]  # two references from a beat none


# -- layout: publish, open, corruption ----------------------------------------------------------------


def test_missing_index_is_a_clear_error(tmp_path):
    with pytest.raises(IndexNotFoundError, match="woods index"):
        IndexStores.open(tmp_path / "nothing")


def test_republish_keeps_one_current_generation_and_reuses_vectors(tmp_path):
    store = tmp_path / "store"
    units = [unit("A"), unit("B", source="class B\n  def b; end\nend\n")]
    first = build_index_from_units(units, FakeEmbeddingProvider(), store)
    assert first.embedded == 2 and first.reused_vectors == 0
    second = build_index_from_units([*units, unit("C")], FakeEmbeddingProvider(), store)
    assert second.embedded == 1 and second.reused_vectors == 2
    assert second.generation != first.generation
    with IndexStores.open(store) as stores:
        assert stores.generation.name == second.generation
        assert stores.metadata.count() == 3
    assert not list(store.glob("building-*"))


def _corrupt_case(tmp_path: Path, damage) -> None:
    store = tmp_path / "store"
    build_index_from_units([unit("A"), unit("B")], FakeEmbeddingProvider(), store)
    generation = layout.read_current(store)
    damage(generation)
    with pytest.raises(CorruptIndexError, match="woods index --full"):
        stores = IndexStores.open(store)
        _ = stores.vectors


def test_truncated_sqlite_is_reported(tmp_path):
    def damage(gen: Path) -> None:
        db = gen / layout.METADATA_FILE
        db.write_bytes(db.read_bytes()[:300])

    _corrupt_case(tmp_path, damage)


def test_foreign_schema_is_reported(tmp_path):
    def damage(gen: Path) -> None:
        manifest = json.loads((gen / layout.MANIFEST_FILE).read_text())
        manifest["schema_version"] = 99
        (gen / layout.MANIFEST_FILE).write_text(json.dumps(manifest))

    _corrupt_case(tmp_path, damage)


def test_vector_count_mismatch_is_reported(tmp_path):
    def damage(gen: Path) -> None:
        from woods.store.vectors import write_vectors

        write_vectors(gen / layout.VECTORS_FILE, np.arange(1), np.ones((1, 128), np.float32), 128)

    _corrupt_case(tmp_path, damage)


def test_garbage_faiss_file_is_reported(tmp_path):
    _corrupt_case(tmp_path, lambda gen: (gen / layout.VECTORS_FILE).write_bytes(b"not faiss"))


def test_wrong_dimension_is_reported(tmp_path):
    def damage(gen: Path) -> None:
        manifest = json.loads((gen / layout.MANIFEST_FILE).read_text())
        manifest["embedder"]["dimension"] = 384
        (gen / layout.MANIFEST_FILE).write_text(json.dumps(manifest))

    _corrupt_case(tmp_path, damage)


def test_unreadable_current_pointer_is_reported(tmp_path):
    store = tmp_path / "store"
    build_index_from_units([unit("A")], FakeEmbeddingProvider(), store)
    (store / layout.CURRENT_FILE).write_text("{not json")
    with pytest.raises(CorruptIndexError):
        IndexStores.open(store)


def test_reading_never_writes(tmp_path):
    store = tmp_path / "store"
    build_index_from_units([unit("A"), unit("B")], FakeEmbeddingProvider(), store)

    def snapshot() -> dict[str, bytes]:
        return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}

    before = snapshot()
    with IndexStores.open(store) as stores:
        stores.metadata.search("a")
        stores.metadata.lexical_search(["a"], 5, WEIGHTS)
        stores.vectors.search(FakeEmbeddingProvider().embed("class a"), 5)
        stores.graph.dependencies_of("A")
    assert snapshot() == before


def test_lock_times_out_with_a_clear_error(tmp_path):
    # flock is per open file description: a second open in the same process conflicts.
    with StoreLock(tmp_path, wait=0), pytest.raises(LockTimeoutError, match="--wait"), StoreLock(tmp_path, wait=0.3):
        pass


def test_edges_keep_structural_targets_and_drop_unresolved_references(tmp_path):
    units = [
        unit("Billing::Invoice", dependencies=(
            Dependency("ApplicationRecord", "superclass"),
            Dependency("Missing", "code_reference"),
            Dependency("Tax", "code_reference", lookup=("Billing::Tax", "Tax")),
        )),
        unit("Billing::Tax"),
    ]
    stores = build(tmp_path, units)
    assert stores.graph.dependencies_of("Billing::Invoice") == ["ApplicationRecord", "Billing::Tax"]
    assert stores.graph.dependents_of("Billing::Tax") == ["Billing::Invoice"]
    record = stores.metadata.find("Billing::Tax")
    assert record["dependents"] == [{"type": "class", "identifier": "Billing::Invoice"}]
    assert sqlite3.sqlite_version
    stores.close()


def test_stored_pagerank_percentiles_equal_the_ranker_formula(tmp_path):
    from woods.store.graph import pagerank_percentiles

    units = [
        unit("A", dependencies=(Dependency("B", "calls"), Dependency("C", "calls"))),
        unit("B", dependencies=(Dependency("C", "calls"),)),
        unit("C"),
        unit("D"),
        unit("E"),
    ]
    stores = build(tmp_path, units)
    expected = pagerank_percentiles(stores.graph.pagerank())
    lookup = stores.graph.pagerank_percentiles()
    assert {k: lookup[k] for k in expected} == pytest.approx(expected)
    assert lookup.get("Nope") is None and len(lookup) == 5
    assert expected["C"] == 1.0  # most referenced ranks first; ties (D, E) by identifier
    assert expected["D"] > expected["E"]
    stores.close()


def test_vector_hits_read_only_their_own_metadata_rows(tmp_path):
    # Distinct scores (no tie group reaching past the fetched hits, which would force a full scan).
    units = [unit(f"U{i}", source=f"class U{i}\n" + "  step\n" * i + "end\n") for i in range(1, 41)]
    stores = build(tmp_path, units, link=False)
    calls: list[object] = []
    vectors = stores.vectors
    original = vectors._meta_for
    vectors._meta_for = lambda ids: (calls.append(ids), original(ids))[1]
    hits = vectors.search(FakeEmbeddingProvider().embed("step"), 3)
    assert len(hits) == 3 and calls and all(ids is not None and len(ids) <= 19 for ids in calls)
    stores.close()


@pytest.mark.parametrize("damage", ["truncated", "count_mismatch"])
def test_failed_opens_leak_no_descriptor_or_reader_lock(tmp_path, damage):
    """A server retries opening on every call: a corrupt generation must not leave an open file
    or a shared lock behind each time (50 failed opens, the same descriptors as before)."""
    import fcntl
    import os

    store = tmp_path / "store"
    build_index_from_units([unit("A"), unit("B")], FakeEmbeddingProvider(), store)
    generation = layout.read_current(store)
    db = generation / layout.METADATA_FILE
    if damage == "truncated":
        db.write_bytes(db.read_bytes()[:300])
    else:
        manifest = json.loads((generation / layout.MANIFEST_FILE).read_text())
        manifest["counts"]["units"] = 7
        (generation / layout.MANIFEST_FILE).write_text(json.dumps(manifest))
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        with pytest.raises(CorruptIndexError):
            IndexStores.open(store)
    assert len(os.listdir("/proc/self/fd")) == before
    # and no reader holds the generation: an exclusive probe succeeds
    fd = os.open(generation / layout.MANIFEST_FILE, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
