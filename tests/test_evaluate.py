"""Evaluation: metrics, query-set loading, baselines, report JSON, stores mode."""

from __future__ import annotations

import json

import pytest

from tests.retrieval_fakes import CountingFactory, build_fake_index, make_record
from woods.evaluate import metrics, run_evaluation
from woods.evaluate.baselines import baseline_keywords, file_level, grep, random_sample
from woods.evaluate.queryset import QuerySetError, load_query_set
from woods.evaluate.runner import format_report


def test_precision_divides_by_the_returned_slice() -> None:
    assert metrics.precision_at_k(["A", "B"], ["A", "X"], 5) == 0.5
    assert metrics.precision_at_k(["A", "B", "C", "D", "E", "F"], ["A", "C", "F"], 5) == 0.4
    assert metrics.precision_at_k([], ["A"], 5) == 0.0
    assert metrics.precision_at_k(["A"], [], 5) == 0.0


def test_recall_mrr_completeness() -> None:
    assert metrics.recall(["A", "B"], ["B", "C"]) == 0.5
    assert metrics.recall(["A"], []) == 0.0
    assert metrics.mrr(["X", "Y", "B"], ["B"]) == pytest.approx(1 / 3)
    assert metrics.mrr(["X"], ["B"]) == 0.0
    assert metrics.context_completeness(["A"], []) == 1.0
    assert metrics.context_completeness(["A"], ["A", "B"]) == 0.5
    assert metrics.token_efficiency(["A", "B"], ["A"], 100) == 0.5
    assert metrics.token_efficiency(["A"], ["A"], 0) == 0.0


def test_query_set_loading_and_errors(tmp_path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"queries": [{"query": "find x", "expected_units": ["X"], "types": ["job"], "budget": 900}]}))
    [q] = load_query_set(path)
    assert (q.id, q.types, q.budget, q.strategy) == ("q1", ("job",), 900, None)
    for bad in ({"queries": [{"query": ""}]}, {"queries": [{"query": "x", "budget": -1}]}, {"nope": []},
                {"queries": [{"query": "x", "expected_units": "X"}]}):
        path.write_text(json.dumps(bad))
        with pytest.raises(QuerySetError):
            load_query_set(path)


def test_baselines() -> None:
    ids = ["Billing::Invoice", "Billing::Payment", "Support::Ticket", "Author"]
    # the baseline stop list is its own 31 words: "which" stays, "how"/"are"/"the" go
    assert baseline_keywords("how are the which invoice payments") == ["which", "invoice", "payments"]
    assert grep(ids, "invoice") == ["Billing::Invoice"]
    assert grep(ids, "the of") == ids  # no keywords → first `limit`
    assert file_level(ids, "billing invoice") == ["Billing::Invoice", "Billing::Payment"]
    assert random_sample(ids, 2) == random_sample(ids, 2) and len(random_sample(ids, 2)) == 2


def test_run_evaluation_with_stores_and_report_json(tmp_path) -> None:
    records = {
        "Billing::Invoice": make_record("Billing::Invoice", source_code="class Billing::Invoice\n# invoice\nend\n"),
        "Author": make_record("Author"),
        "ChargeJob": make_record("ChargeJob", "job", source_code="class ChargeJob\n# charge invoice\nend\n"),
    }
    stores, embedder = build_fake_index(records)
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"queries": [
        {"id": "k1", "strategy": "keyword", "query": "find invoice", "expected_units": ["Billing::Invoice"]},
        {"id": "f1", "strategy": "fallback", "query": "find exactly Author", "expected_units": ["ChargeJob"], "types": ["job"]},
    ]}))
    report = run_evaluation(path, stores=stores, embedder_factory=CountingFactory(embedder), budget=2000, profile="ruby")
    data = json.loads(json.dumps(report.to_dict()))
    assert data["schema_version"] == 1
    first, second = data["queries"]
    assert first["retrieved"][0] == "Billing::Invoice" and first["metrics"]["mrr"] == 1.0
    assert second["actual_strategy"] == "fallback" and second["retrieved"] == ["ChargeJob"]
    assert set(data["aggregates"]["by_strategy"]) == {"keyword", "fallback"}
    assert data["aggregates"]["overall"]["total_queries"] == 2
    assert set(data["baselines"]) == {"grep", "random", "file_level"}
    text = format_report(report)
    assert text.splitlines()[0].startswith("k1") and "fallback" in text and "baseline grep" in text
