"""Ranker: RRF fusion and normalisation, weights, signals, diversity, immutability (spec §2.5)."""

from __future__ import annotations

import random

import pytest

from tests.retrieval_fakes import InMemoryGraphStore, InMemoryMetadataStore, make_record
from woods.retrieval.candidates import Candidate, Classification
from woods.retrieval.ruby.ranker import WEIGHTS, Ranker, normalize, rrf_merge, ruby_sum
from woods.store.identity import typed_key

PLAIN = Classification("understand", "focused", None, False, ())


def ranker(records=None, graph=None, policy="unit") -> Ranker:
    return Ranker(InMemoryMetadataStore(records or {}), graph, rrf_policy=policy)


def test_the_signal_weights_share_one_whole() -> None:
    # A candidate's score is a weighted mean of signals in [0, 1]: the weights must add up to one
    # for the score to stay in [0, 1] (the exact values are pinned by the parity scores below).
    assert ruby_sum(w for _, w in WEIGHTS) == pytest.approx(1.0)


def test_lone_vector_candidate_scores_0_545() -> None:
    [ranked] = ranker().rank([Candidate("Ghost", 0.8, "vector")], PLAIN)
    assert ranked.score == pytest.approx(0.545)


def test_inputs_are_not_mutated_and_scores_are_rewritten() -> None:
    original = [Candidate("A", 0.9, "vector", {"type": "model"}), Candidate("A", 0.5, "keyword", {}, ("identifier",))]
    snapshot = list(original)
    ranked = ranker({"A": make_record("A")}).rank(original, PLAIN)
    assert original == snapshot
    assert ranked[0].score != 1.0 and ranked[0] is not original[0]


def test_single_source_skips_rrf_and_keeps_chunk_ids_scored_from_the_base_unit() -> None:
    records = {"A": make_record("A", metadata={"git": {"change_frequency": "hot"}})}
    r = ranker(records)
    [chunk] = r.rank([Candidate("A#chunk_2", 0.7, "vector")], PLAIN)
    [plain] = r.rank([Candidate("A", 0.7, "vector")], PLAIN)
    assert chunk.identifier == "A#chunk_2" and chunk.score == plain.score


def test_rrf_fuses_duplicates_and_boosts_consensus() -> None:
    cands = [
        Candidate("A", 0.9, "vector"),
        Candidate("B", 0.8, "vector"),
        Candidate("B", 1.0, "keyword", {}, ("identifier", "source_code")),
        Candidate("C", 0.75, "keyword", {}, ("source_code",)),
    ]
    merged = rrf_merge(cands)
    assert [c.identifier for c in merged] == ["B", "A", "C"]
    assert merged[0].score == 1.0 and merged[-1].score == 0.0
    assert merged[0].sources == ("vector", "keyword")
    assert merged[0].matched_fields == ("identifier", "source_code")


def test_rrf_normalisation_degenerate_case_is_one() -> None:
    assert normalize({"A": 0.3}) == {"A": 1.0}
    assert normalize({"A": 0.2, "B": 0.2}) == {"A": 1.0, "B": 1.0}
    assert normalize({"A": 0.1, "B": 0.3, "C": 0.2}) == pytest.approx({"A": 0.0, "B": 1.0, "C": 0.5})


def test_unit_level_rrf_extra_chunks_change_nothing() -> None:
    def with_chunks(n: int) -> list[str]:
        cands = [Candidate(f"A#chunk_{i}", 0.9 - i * 0.01, "vector") for i in range(n)]
        cands += [Candidate("B", 0.5, "vector"), Candidate("B", 1.0, "keyword"), Candidate("C", 0.9, "keyword")]
        return [(c.identifier, c.score) for c in rrf_merge(cands)]

    assert with_chunks(1) == with_chunks(3) == with_chunks(10)
    assert with_chunks(10)[0][0] == "B"  # chunks of one unit cannot outrank two-source agreement


def test_occurrence_policy_counts_every_occurrence() -> None:
    cands = [Candidate(f"A#chunk_{i}", 0.9, "vector") for i in range(3)] + [Candidate("B", 1.0, "keyword")]
    fused_unit = {c.identifier: c.score for c in rrf_merge(cands, "unit")}
    fused_occ = {c.identifier: c.score for c in rrf_merge(cands, "occurrence")}
    assert fused_unit == {"A": 1.0, "B": 1.0}  # one contribution each at rank 1
    assert fused_occ["A"] == 1.0 and fused_occ["B"] == 0.0  # 1/61+1/62+1/63 beats 1/61


def test_rrf_metadata_first_non_empty_and_graph_expansion_never_representative() -> None:
    cands = [
        Candidate("A", 0.5, "graph_expansion", {}),
        Candidate("A", 0.9, "vector", {"type": "model"}),
        Candidate("A", 0.4, "graph_expansion", {}),
    ]
    [merged] = rrf_merge(cands)
    assert merged.metadata == {"type": "model"}
    assert merged.source == "vector"


def test_typed_keys_stay_separate_units_through_rrf() -> None:
    lib, model = typed_key("Shared", "lib"), typed_key("Shared", "model")
    merged = rrf_merge([Candidate(lib, 0.9, "vector"), Candidate(model, 0.8, "vector"), Candidate(model, 1.0, "keyword")])
    assert {c.identifier for c in merged} == {lib, model}


def test_rrf_equal_scores_are_independent_of_input_order() -> None:
    cands = [Candidate(x, 0.5, "keyword") for x in "DCBA"] + [Candidate("C", 0.9, "vector")]
    outputs = set()
    for seed in range(6):
        shuffled = cands[:]
        random.Random(seed).shuffle(shuffled)
        outputs.add(tuple((c.identifier, c.score) for c in rrf_merge(shuffled)))
    assert len(outputs) == 1


def test_fused_consensus_beats_a_recency_advantage() -> None:
    records = {
        "Hot": make_record("Hot", metadata={"git": {"change_frequency": "hot"}}),
        "Both": make_record("Both", metadata={"git": {"change_frequency": "dormant"}}),
    }
    cands = [Candidate("Hot", 0.9, "vector"), Candidate("Both", 0.8, "vector"), Candidate("Both", 1.0, "keyword")]
    assert ranker(records).rank(cands, PLAIN)[0].identifier == "Both"


@pytest.mark.parametrize(
    ("frequency", "signal"), [("hot", 1.0), ("active", 0.8), ("new", 0.7), ("dormant", 0.3), ("stable", 0.5)]
)
def test_recency_mapping(frequency: str, signal: float) -> None:
    records = {"A": make_record("A", metadata={"git": {"change_frequency": frequency}})}
    [ranked] = ranker(records).rank([Candidate("A", 0.0, "vector")], PLAIN)
    # semantic 0, keyword 0, importance 0.5, type 0.5, diversity 1.0
    assert ranked.score == pytest.approx(0.15 * signal + 0.05 + 0.05 + 0.05)


def test_pagerank_percentiles_ordered_with_identifier_tie_break() -> None:
    graph = InMemoryGraphStore(ranks={"D": 0.1, "C": 0.2, "B": 0.2, "A": 0.3})
    r = ranker(graph=graph)
    assert r.pagerank_percentiles() == {"A": 1.0, "B": 0.75, "C": 0.5, "D": 0.25}
    ranked = r.rank([Candidate(x, 0.5, "vector") for x in "DCBA"], PLAIN)
    assert [(c.identifier, round(c.score, 3)) for c in ranked] == [
        ("A", 0.475), ("B", 0.45), ("C", 0.425), ("D", 0.4)
    ]
    r.rank([Candidate("A", 0.5, "vector")], PLAIN)
    assert graph.pagerank_calls == 1  # memoised
    r.invalidate_pagerank_cache()
    r.rank([Candidate("A", 0.5, "vector")], PLAIN)
    assert graph.pagerank_calls == 2


def test_importance_falls_back_to_buckets_when_pagerank_fails() -> None:
    records = {"A": make_record("A", metadata={"importance": "high"}), "B": make_record("B", metadata={"importance": "low"})}
    r = ranker(records, InMemoryGraphStore(ranks=None))  # pagerank raises NotImplementedError
    scores = {c.identifier: c.score for c in r.rank([Candidate("A", 0.5, "vector"), Candidate("B", 0.5, "vector")], PLAIN)}
    # importance high 1.0 vs low 0.3; B also pays the diversity penalty (same root namespace and type).
    assert scores["A"] - scores["B"] == pytest.approx(0.1 * (1.0 - 0.3) + 0.05 * 0.2)


def test_type_match_signal() -> None:
    records = {"A": make_record("A", "controller"), "B": make_record("B", "model")}
    cls = Classification("understand", "focused", "controller", False, ())
    scores = {c.identifier: c.score for c in ranker(records).rank([Candidate("A", 0.5, "vector"), Candidate("B", 0.5, "vector")], cls)}
    # A: type match 1.0, no penalty; B: mismatch 0.3 and one earlier unit of the same (root) namespace.
    assert scores["A"] - scores["B"] == pytest.approx(0.1 * 0.7 + 0.05 * 0.1)


def test_diversity_penalty_reorders_a_same_namespace_run_and_caps() -> None:
    records = {f"Billing::M{i}": make_record(f"Billing::M{i}", namespace="Billing") for i in range(8)}
    records["Other"] = make_record("Other", "service", namespace="Support")
    cands = [Candidate(f"Billing::M{i}", 0.80 - i * 0.001, "vector") for i in range(8)]
    cands.append(Candidate("Other", 0.795, "vector"))
    ranked = ranker(records).rank(cands, PLAIN)
    ids = [c.identifier for c in ranked]
    assert ids.index("Other") < ids.index("Billing::M1")  # a fresh namespace/type overtakes the run
    last = ranked[-1]
    # penalty is capped at 0.5 → at most 0.025 off the weighted score
    assert last.score == pytest.approx(0.4 * 0.793 + 0.075 + 0.05 + 0.05 + 0.05 - 0.025)


def test_missing_units_neither_pay_nor_count_diversity() -> None:
    records = {"A": make_record("A")}
    ranked = ranker(records).rank([Candidate("Ghost", 0.9, "vector"), Candidate("A", 0.85, "vector")], PLAIN)
    assert {c.identifier: c.score for c in ranked}["A"] == pytest.approx(0.4 * 0.85 + 0.075 + 0.05 + 0.05 + 0.05)


def test_chunk_lookups_use_one_batched_find_by_base_id() -> None:
    store = InMemoryMetadataStore({"A": make_record("A")})
    Ranker(store).rank([Candidate("A#chunk_0", 0.9, "vector"), Candidate("A#chunk_1", 0.8, "vector")], PLAIN)
    assert [c for c in store.calls if c[0] == "find_batch"] == [("find_batch", ["A"])]
    assert not [c for c in store.calls if c[0] == "find"]


def test_ruby_sum_is_compensated() -> None:
    values = [0.1] * 10
    assert ruby_sum(values) == 1.0 and sum(values) != 1.0
