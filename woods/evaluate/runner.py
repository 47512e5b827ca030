"""run_evaluation: replay a query set through the retriever and score it.

Why: retrieval changes must be measured, and against the Ruby gem's own bench. Two ways in:
`stores=` (an open index plus, for vector strategies, `embedder_factory=`), or corpus mode
(`corpus_path=` + `vectors_path=`, or a query-set file that is itself a corpus.json) which indexes
the pre-extracted units into real stores in a temporary directory and replays captured vectors.
Guarantees: `retrieved` is the context's source identifiers in order (what the Ruby harness
records); `actual_strategy` is `fallback` when the within-type fallback produced a type; aggregates
are means overall and per `strategy` tag; the JSON carries a `schema_version`.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods.errors import QuerySetError
from woods.evaluate import baselines as baseline_mod
from woods.evaluate import metrics
from woods.evaluate.corpus import BenchStores, build_corpus_index, load_corpus, replay_factory
from woods.evaluate.queryset import EvalQuery, load_query_set, parse_query
from woods.retrieval.assembler import DEFAULT_BUDGET
from woods.retrieval.retriever import Retriever
from woods.store.identity import public_identifier

if TYPE_CHECKING:
    from woods.embedding.provider import QueryEmbedder
    from woods.store.contracts import OpenIndex, SearchableIndex

SCHEMA_VERSION = 1
METRIC_NAMES = (
    "precision_at5",
    "precision_at10",
    "recall",
    "mrr",
    "context_completeness",
    "token_efficiency",
)


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """One query's result: what was retrieved, how, at what cost, and its metrics."""

    id: str
    query: str
    strategy: str | None
    actual_strategy: str
    retrieved: tuple[str, ...]
    expected: tuple[str, ...]
    metrics: dict[str, float]
    estimated_context_tokens: int
    assembled_tokens: int
    context_sha256: str
    elapsed_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "query": self.query,
            "strategy": self.strategy,
            "actual_strategy": self.actual_strategy,
            "retrieved": list(self.retrieved),
            "expected": list(self.expected),
            "metrics": dict(self.metrics),
            "estimated_context_tokens": self.estimated_context_tokens,
            "assembled_tokens": self.assembled_tokens,
            "context_sha256": self.context_sha256,
            "elapsed_ms": self.elapsed_ms,
        }


@dataclass(frozen=True, slots=True)
class EvaluationReport:
    """Per-query outcomes plus aggregates (overall, per strategy tag, baselines)."""

    queries: tuple[QueryOutcome, ...]
    aggregates: dict[str, Any]
    baselines: dict[str, dict[str, float]] = field(default_factory=dict)
    corpus: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "corpus": self.corpus,
            "queries": [q.to_dict() for q in self.queries],
            "aggregates": self.aggregates,
            "baselines": self.baselines,
        }


def score(retrieved: Sequence[str], expected: Sequence[str], tokens_used: int) -> dict[str, float]:
    return {
        "precision_at5": metrics.precision_at_k(retrieved, expected, 5),
        "precision_at10": metrics.precision_at_k(retrieved, expected, 10),
        "recall": metrics.recall(retrieved, expected),
        "mrr": metrics.mrr(retrieved, expected),
        "context_completeness": metrics.context_completeness(retrieved, expected),
        "token_efficiency": metrics.token_efficiency(retrieved, expected, tokens_used),
    }


def _means(outcomes: Sequence[QueryOutcome]) -> dict[str, float]:
    count = len(outcomes)
    means = {f"mean_{name}": sum(o.metrics[name] for o in outcomes) / count for name in METRIC_NAMES}
    means["mean_tokens_used"] = sum(o.estimated_context_tokens for o in outcomes) / count
    means["total_queries"] = count
    return means


def aggregate(outcomes: Sequence[QueryOutcome]) -> dict[str, Any]:
    """Means overall and per strategy tag (tags in first-appearance order; untagged queries only overall)."""
    if not outcomes:
        return {"overall": {"total_queries": 0}, "by_strategy": {}}
    tags = list(dict.fromkeys(o.strategy for o in outcomes if o.strategy))
    return {
        "overall": _means(outcomes),
        "by_strategy": {tag: _means([o for o in outcomes if o.strategy == tag]) for tag in tags},
    }


def evaluate_query(retriever: Retriever, query: EvalQuery, budget: int | None) -> QueryOutcome:
    # --budget overrides every query's own budget (the query set's value is the default).
    effective = budget or query.budget or DEFAULT_BUDGET
    result = retriever.retrieve(query.query, budget=effective, types=list(query.types) if query.types else None)
    retrieved = tuple(s.identifier for s in result.sources)
    actual = result.strategy
    if result.type_rank_context and any(
        e.source == "within_type_fallback" for e in result.type_rank_context.values()
    ):
        actual = "fallback"
    return QueryOutcome(
        id=query.id,
        query=query.query,
        strategy=query.strategy,
        actual_strategy=actual,
        retrieved=retrieved,
        expected=query.expected_units,
        metrics=score(retrieved, query.expected_units, result.tokens_used),
        estimated_context_tokens=result.tokens_used,
        assembled_tokens=result.assembled_tokens,
        context_sha256=hashlib.sha256(result.context.encode("utf-8")).hexdigest(),
        elapsed_ms=result.trace.elapsed_ms,
    )


def run_baselines(identifiers: Sequence[str], queries: Sequence[EvalQuery]) -> dict[str, dict[str, float]]:
    """Mean MRR and recall of each naive baseline over the query set."""
    public = list(dict.fromkeys(public_identifier(i) for i in identifiers))
    report: dict[str, dict[str, float]] = {}
    for name in baseline_mod.BASELINES:
        runs = [baseline_mod.run_baseline(name, public, q.query) for q in queries]
        count = max(len(queries), 1)
        report[name] = {
            "mean_mrr": sum(metrics.mrr(r, q.expected_units) for r, q in zip(runs, queries, strict=True)) / count,
            "mean_recall": sum(metrics.recall(r, q.expected_units) for r, q in zip(runs, queries, strict=True))
            / count,
        }
    return report


def _load_queries(path: str | os.PathLike[str]) -> tuple[EvalQuery, ...]:
    return load_query_set(path)


def run_evaluation(
    queryset_path: str | os.PathLike[str],
    *,
    stores: OpenIndex | None = None,
    corpus_path: str | os.PathLike[str] | None = None,
    vectors_path: str | os.PathLike[str] | None = None,
    budget: int | None = None,
    embedder_factory: Callable[[], QueryEmbedder] | None = None,
    rrf_policy: str = "unit",
    with_baselines: bool = True,
    profile: str | None = None,
) -> EvaluationReport:
    """Evaluate a query set against `stores`, or against a corpus indexed on the fly.

    `profile` is the ranking profile; by default "ruby" for a corpus (the Ruby gem's bench format,
    where parity is what is measured) and "code" (woods' default ranking) for an index."""
    queries = _load_queries(queryset_path)
    if stores is not None:
        retriever = Retriever(
            stores, embedder_factory or _index_embedder(stores), rrf_policy=rrf_policy, profile=profile or "code"
        )
        return _run(retriever, queries, budget, stores, None, with_baselines)

    corpus_file = corpus_path or queryset_path
    corpus = load_corpus(corpus_file)
    if vectors_path is None:
        raise QuerySetError("corpus mode needs vectors_path (captured vectors keyed by SHA-256 of each text)")
    with tempfile.TemporaryDirectory(prefix="woods-eval-") as tmp:
        raw = build_corpus_index(corpus, vectors_path, Path(tmp) / "index")
        try:
            bench = BenchStores(raw)
            retriever = Retriever(
                bench, embedder_factory or replay_factory(vectors_path), rrf_policy=rrf_policy, profile=profile or "ruby"
            )
            return _run(retriever, queries, budget, bench, corpus.name, with_baselines)
        finally:
            raw.close()


def _index_embedder(stores: OpenIndex) -> Callable[[], QueryEmbedder]:
    """The query embedder matching the index's manifest, created only if a query needs vectors."""
    embedder = stores.manifest.embedder

    def factory() -> QueryEmbedder:
        from woods.embedding.select import query_embedder

        return query_embedder(embedder)

    return factory


def format_report(report: EvaluationReport) -> str:
    """A plain-text summary: one line per query, then means per strategy tag and overall."""
    lines = []
    for q in report.queries:
        m = q.metrics
        lines.append(
            f"{q.id:<14} {q.actual_strategy:<9} P@5 {m['precision_at5']:.4f}  R {m['recall']:.4f}  "
            f"MRR {m['mrr']:.4f}  tokens {q.estimated_context_tokens}"
        )
    groups = [*report.aggregates.get("by_strategy", {}).items(), ("overall", report.aggregates.get("overall", {}))]
    lines.append("")
    for name, means in groups:
        if not means.get("total_queries"):
            continue
        lines.append(
            f"{name:<14} n={means['total_queries']:<3} P@5 {means['mean_precision_at5']:.4f}  "
            f"R {means['mean_recall']:.4f}  MRR {means['mean_mrr']:.4f}  "
            f"completeness {means['mean_context_completeness']:.4f}"
        )
    for name, values in report.baselines.items():
        lines.append(f"baseline {name:<10} MRR {values['mean_mrr']:.4f}  R {values['mean_recall']:.4f}")
    return "\n".join(lines) + "\n"


def _run(
    retriever: Retriever,
    queries: Sequence[EvalQuery],
    budget: int | None,
    stores: SearchableIndex,
    corpus_name: str | None,
    with_baselines: bool,
) -> EvaluationReport:
    outcomes = tuple(evaluate_query(retriever, q, budget) for q in queries)
    baseline_report = run_baselines(stores.metadata.all_identifiers(), queries) if with_baselines else {}
    return EvaluationReport(outcomes, aggregate(outcomes), baseline_report, corpus_name)


__all__ = ["EvaluationReport", "QueryOutcome", "format_report", "parse_query", "run_evaluation"]
