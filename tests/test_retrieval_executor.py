"""SearchExecutor: vector filters, keyword scoring, graph seeding, hybrid bounding, direct lookups."""

from __future__ import annotations

import random

import pytest

from tests.retrieval_fakes import (
    CountingFactory,
    InMemoryGraphStore,
    InMemoryMetadataStore,
    build_fake_index,
    make_record,
)
from woods.retrieval.candidates import Candidate
from woods.retrieval.ruby.classifier import QueryClassifier
from woods.retrieval.ruby.executor import SearchExecutor, bound_candidates, camelize, hybrid_order
from woods.store.identity import typed_key

classify = QueryClassifier().classify

RECORDS = {
    "Billing::Invoice": make_record("Billing::Invoice", namespace="Billing", source_code="class Billing::Invoice\n  has_many :payments\nend\n"),
    "Billing::Payment": make_record("Billing::Payment", namespace="Billing", source_code="class Billing::Payment\n  belongs_to :invoice\n  # idempotency_key\nend\n"),
    "Invoice": make_record("Invoice", source_code="class Invoice\nend\n"),
    "ReviewAssignment": make_record("ReviewAssignment", source_code="class ReviewAssignment\n  # settlement of reviews\nend\n"),
    "Author": make_record("Author"),
    "ChargeJob": make_record("ChargeJob", "job", source_code="class ChargeJob\n  def perform(invoice) end\nend\n"),
}
EDGES = [
    ("Billing::Invoice", "Billing::Payment"),
    ("Billing::Payment", "Billing::Invoice"),
    ("ChargeJob", "Billing::Invoice"),
    ("ReviewAssignment", "Author"),
]


def executor(records=RECORDS, edges=EDGES):
    stores, embedder = build_fake_index(records, edges)
    factory = CountingFactory(embedder)
    return SearchExecutor(stores.metadata, stores.vectors, stores.graph, factory), stores, factory


def test_vector_passes_no_filter_from_the_classifier_and_a_hard_explicit_one() -> None:
    ex, stores, _ = executor()
    ex.execute("explain the controller invoice flow", classify("explain the controller invoice flow"))
    assert stores.vectors.searches[-1]["types"] is None  # target_type controller is never a filter (#184)
    ex.execute("explain invoice", classify("explain invoice"), type_filter=["job"], strategy="vector")
    assert stores.vectors.searches[-1]["types"] == ["job"]
    ex.execute("explain invoice", classify("explain invoice"), type_filter=[], strategy="vector")
    assert stores.vectors.searches[-1]["types"] is None


def test_non_vector_strategies_never_create_the_embedder() -> None:
    ex, _, factory = executor()
    for query in ("find invoice", "trace Billing::Invoice", "find exactly invoice"):
        ex.execute(query, classify(query))
    assert factory.created == 0
    ex.execute("explain invoice", classify("explain invoice"))
    assert factory.created == 1


def test_keyword_scores_by_matched_fields_never_id_and_ties_by_identifier() -> None:
    ex, _, _ = executor()
    candidates = ex.keyword(("invoice",), 20)
    by_id = {c.identifier: c for c in candidates}
    assert "id" not in by_id["Billing::Invoice"].matched_fields
    assert set(by_id["Billing::Invoice"].matched_fields) >= {"identifier", "file_path", "source_code"}
    assert by_id["Billing::Invoice"].score == min(0.25 * len(by_id["Billing::Invoice"].matched_fields), 1.0)
    assert all(0 < c.score <= 1.0 for c in candidates)
    order = [(-c.score, c.identifier) for c in candidates]
    assert order == sorted(order)


def test_keyword_score_is_independent_of_store_row_order() -> None:
    items = list(RECORDS.items())
    results = set()
    for seed in range(5):
        random.Random(seed).shuffle(items)
        ex = SearchExecutor(InMemoryMetadataStore(dict(items)), None, None, None)
        results.add(tuple((c.identifier, c.score) for c in ex.keyword(("invoice", "payment"), 20)))
    assert len(results) == 1


def test_keyword_record_matched_only_by_a_key_name_scores_the_floor() -> None:
    store = InMemoryMetadataStore({"A": make_record("A", source_code="x")})
    ex = SearchExecutor(store, None, None, None)
    [candidate] = ex.keyword(("namespace",), 20)  # only the JSON key "namespace" matches
    assert candidate.score == 0.25 and candidate.matched_fields is None


def test_keyword_strategy_searches_each_keyword_separately() -> None:
    ex, stores, _ = executor()
    ex.execute("find invoice payment", classify("find invoice payment"))
    searched = [q for op, q in stores.metadata.calls if op == "search"]
    assert searched == ["find", "invoice", "payment"]


def test_camelize_rules() -> None:
    assert camelize("review_assignment") == "ReviewAssignment"
    assert camelize("billing::invoice") == "Billing::Invoice"


@pytest.mark.parametrize(
    ("query", "seeds"),
    [
        ("trace Billing::Invoice", ["Billing::Invoice"]),
        ("trace review_assignment", ["ReviewAssignment"]),
        ("trace billing::invoice", ["Billing::Invoice"]),
        ("trace Invoice", ["Invoice"]),  # exact unqualified identifier beats suffix matches
        ("trace Billing::Nope", []),  # unknown qualified id never seeds another namespace
        ("trace settlement", ["ReviewAssignment"]),  # subject found only via metadata search
        ("Trace unknown", []),  # capitalised instruction words need an exact identifier
    ],
)
def test_graph_seeds(query: str, seeds: list[str]) -> None:
    ex, _, _ = executor()
    assert ex.graph_seeds(query) == seeds


def test_ambiguous_unqualified_term_keeps_both_namespaces() -> None:
    records = {k: v for k, v in RECORDS.items() if k != "Invoice"}
    records["Support::Invoice"] = make_record("Support::Invoice", namespace="Support")
    ex, _, _ = executor(records)
    assert ex.graph_seeds("trace invoice") == ["Billing::Invoice", "Support::Invoice"]


def test_graph_scores_seed_dependencies_and_dependents() -> None:
    ex, _, _ = executor()
    result = ex.execute("trace Billing::Invoice", classify("trace Billing::Invoice"))
    scores = {c.identifier: c.score for c in result.candidates}
    # Billing::Payment is both a dependency (0.8) and a dependent (0.7): the max survives.
    assert scores == {"Billing::Invoice": 1.0, "Billing::Payment": 0.8, "ChargeJob": 0.7}
    assert [c.identifier for c in result.candidates][0] == "Billing::Invoice"


def test_graph_candidates_expand_to_typed_keys() -> None:
    shared_lib, shared_model = typed_key("Shared", "lib"), typed_key("Shared", "model")
    records = {
        "User": make_record("User"),
        shared_lib: make_record("Shared", "lib"),
        shared_model: make_record("Shared", "model"),
    }
    ex = SearchExecutor(InMemoryMetadataStore(records), None, InMemoryGraphStore([("User", "Shared")]), None)
    result = ex.execute("trace User", classify("trace User"))
    assert {c.identifier for c in result.candidates} == {"User", shared_lib, shared_model}
    assert {c.metadata["type"] for c in result.candidates if c.identifier != "User"} == {"lib", "model"}


def test_direct_tries_variants_and_falls_back_to_keyword() -> None:
    ex, _, _ = executor()
    found = ex.execute("find exactly review_assignment", classify("find exactly review_assignment"))
    assert [(c.identifier, c.score, c.source) for c in found.candidates] == [("ReviewAssignment", 1.0, "direct")]
    missed = ex.execute("find exactly idempotency", classify("find exactly idempotency"))
    assert missed.strategy == "direct" and {c.source for c in missed.candidates} == {"keyword"}


def test_hybrid_fetches_three_times_limit_and_keeps_duplicates() -> None:
    ex, stores, _ = executor()
    result = ex.execute("explain all invoice payment", classify("explain all invoice payment"), limit=4)
    assert stores.vectors.searches[-1]["limit"] == 12
    sources_by_unit: dict[str, set[str]] = {}
    for c in result.candidates:
        sources_by_unit.setdefault(c.identifier, set()).add(c.source)
    assert any(len(s) > 1 for s in sources_by_unit.values())  # not pre-deduplicated
    assert len(sources_by_unit) <= 4
    order = [(-c.score, c.identifier, c.source) for c in result.candidates]
    assert order == sorted(order)


def test_hybrid_bounding_counts_unique_units_and_keeps_extra_occurrences() -> None:
    cands = [
        Candidate("A", 0.9, "vector"),
        Candidate("B#chunk_0", 0.8, "vector"),
        Candidate("A", 0.5, "keyword"),
        Candidate("B", 0.4, "keyword"),
        Candidate("C", 0.3, "keyword"),
    ]
    assert [c.identifier for c in bound_candidates(cands, 1, "hybrid")] == ["A", "A"]
    assert [c.identifier for c in bound_candidates(cands, 2, "hybrid")] == ["A", "B#chunk_0", "A", "B"]
    assert [c.identifier for c in bound_candidates(cands, 2, "vector")] == ["A", "B#chunk_0"]


def test_hybrid_order_is_independent_of_input_order() -> None:
    cands = [Candidate("B", 0.5, "keyword"), Candidate("A", 0.5, "vector"), Candidate("A", 0.5, "keyword")]
    expected = [("A", "keyword"), ("A", "vector"), ("B", "keyword")]
    for seed in range(4):
        shuffled = cands[:]
        random.Random(seed).shuffle(shuffled)
        assert [(c.identifier, c.source) for c in hybrid_order(shuffled)] == expected
