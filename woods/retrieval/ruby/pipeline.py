"""The Ruby gem woods 2.0's retrieval pipeline over one set of stores (`--profile ruby`).

classify (done by the caller) → execute the selected strategy → fuse and rank → type filter (with
the gem's within-type fallback and its type-rank table) → exact-name promotion (woods's own, for
a query that is a name) → assemble within the budget → `RetrievalResult` with a trace. And the
gem's lexical mode (`--mode lexical --profile ruby`): BM25F over an in-memory snapshot.

Why a package of its own: this is a port kept to parity with the gem (docs/parity.md; the parity
test replays the gem's bench), and it must stay so while the default code profile evolves beside
it. The code profile borrows two of its strategies (graph, direct), through `RubyPipeline` with an
index-backed subject lookup.

Guarantees (the gem's retriever): `test_mapping` is excluded unless `types` asks for it (the caller
passes the exclusions); when `types` filters everything away the query is re-run as a hard-filtered
vector search; `tokens_used` is the estimate of the final context, type-rank table included.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from woods.retrieval.assembler import ContextAssembler
from woods.retrieval.candidates import (
    Candidate,
    Classification,
    RetrievalResult,
    RetrievalTrace,
    TypeRankEntry,
)
from woods.retrieval.exact import ExactLookup
from woods.retrieval.results import (
    applied_scope,
    candidate_type,
    filter_by_type,
    first_units,
    promote_exact,
    ranked_entries,
    structural_banner,
)
from woods.retrieval.ruby.executor import SearchExecutor, SubjectLookup
from woods.retrieval.ruby.lexical import BM25FSnapshot, LexicalAssembler
from woods.retrieval.ruby.ranker import Ranker
from woods.retrieval.scope import Scope, ScopedGraphStore, ScopedVectorStore
from woods.store.contracts import GraphReader, RecordStore, VectorSearch

if TYPE_CHECKING:
    from woods.embedding.provider import QueryEmbedder

TYPE_RANK_HEADER = "| Type | Source | Rank in unfiltered top-K | Global K | Total in index |"
TYPE_RANK_RULE = "|------|--------|--------------------------|----------|----------------|"


class RubyPipeline:
    """The gem's stages wired to one set of stores (the whole index, or a scope's views).

    `subjects` is where graph seeds and direct's fallback come from: None for the gem's substring
    scan (parity), an index-backed lookup for the code profile's graph and direct strategies.
    """

    def __init__(
        self,
        metadata: RecordStore,
        vectors: VectorSearch | None,
        graph: GraphReader | None,
        embedder: Callable[[], QueryEmbedder] | None,
        *,
        subjects: SubjectLookup | None = None,
        rrf_policy: str = "unit",
        chars_per_token: float,
    ) -> None:
        self.metadata = metadata
        self.vectors = vectors
        self.graph = graph
        self._embedder = embedder
        self._rrf_policy = rrf_policy
        self._chars_per_token = chars_per_token
        self.executor = SearchExecutor(metadata, vectors, graph, embedder, subjects=subjects)
        self.ranker = Ranker(metadata, graph, rrf_policy=rrf_policy)
        self.assembler = ContextAssembler(metadata, chars_per_token=chars_per_token)

    def scoped(self, scope: Scope) -> RubyPipeline:
        """The same stages over a scope's views of the stores (the gem's substring scan finds
        subjects: a scope's in-memory view has no lexical index, and its records are few)."""
        return RubyPipeline(
            scope.metadata,
            ScopedVectorStore(self.vectors, scope) if self.vectors is not None else None,
            ScopedGraphStore(self.graph, scope) if self.graph is not None else None,
            self._embedder,
            rrf_policy=self._rrf_policy,
            chars_per_token=self._chars_per_token,
        )

    def retrieve(
        self,
        query: str,
        classification: Classification,
        *,
        budget: int,
        type_list: tuple[str, ...],
        excluded: tuple[str, ...],
        strategy: str | None,
        scope: Scope | None,
        limit: int,
        started: float,
        context_limit: int | None = None,
        exact: ExactLookup | None = None,
    ) -> RetrievalResult:
        """One query through the stages. `exact` is where exact-name promotion looks names up
        (None: no promotion); it applies only to a classified (no forced strategy), unscoped query."""
        execution = self.executor.execute(query, classification, strategy=strategy)
        ranked = self.ranker.rank(execution.candidates, classification)
        filtered = filter_by_type(self.metadata, ranked, type_list, excluded)
        if strategy is None and scope is None and exact is not None:
            filtered = promote_exact(exact, query, filtered, type_list, excluded)
        fallback_ran = False
        if type_list and not filtered:
            fallback_ran = True
            filtered = self._within_type_fallback(query, classification, type_list, excluded)
        type_rank_context = None
        if type_list and scope is None:
            type_rank_context = self._type_rank_context(ranked, type_list, filtered, fallback_ran)

        assembled = self.assembler.assemble(
            first_units(filtered, context_limit),
            classification,
            structural_context=structural_banner(self.metadata),
            budget=budget,
        )
        context = assembled.context
        if type_rank_context:
            context = append_type_rank_table(context, type_rank_context)
        tokens_used = self.assembler.estimate_tokens(context)
        trace = RetrievalTrace(
            classification=classification,
            strategy=execution.strategy,
            candidate_count=len(execution.candidates),
            ranked_count=len(filtered),
            tokens_used=tokens_used,
            elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
            skipped_missing_metadata=assembled.skipped_missing_metadata,
        )
        return RetrievalResult(
            context=context,
            sources=assembled.sources,
            candidates=ranked_entries(self.metadata, filtered, limit),
            classification=classification,
            strategy=execution.strategy,
            tokens_used=tokens_used,
            budget=budget,
            trace=trace,
            type_rank_context=type_rank_context,
            applied_scope=applied_scope(scope, trace, assembled),
            mode="semantic",
            assembled_tokens=assembled.tokens_used,
        )

    def _within_type_fallback(
        self, query: str, classification: Classification, type_list: tuple[str, ...], excluded: tuple[str, ...]
    ) -> list[Candidate]:
        counts = self.metadata.type_counts()
        if all(counts.get(t, 0) == 0 for t in type_list):
            return []
        fallback = self.executor.execute(query, classification, type_filter=list(type_list), strategy="vector")
        ranked = self.ranker.rank(fallback.candidates, classification)
        return filter_by_type(self.metadata, ranked, type_list, excluded)

    def _type_rank_context(
        self,
        ranked: Sequence[Candidate],
        type_list: tuple[str, ...],
        filtered: Sequence[Candidate],
        fallback_ran: bool,
    ) -> dict[str, TypeRankEntry]:
        counts = self.metadata.type_counts()
        ranked_types = [candidate_type(self.metadata, c) for c in ranked]
        filtered_types = {candidate_type(self.metadata, c) for c in filtered} if fallback_ran else set()
        context: dict[str, TypeRankEntry] = {}
        for unit_type in type_list:
            rank = ranked_types.index(unit_type) + 1 if unit_type in ranked_types else None
            total = counts.get(unit_type, 0)
            if rank is not None:
                source = "in_top_k"
            elif total == 0:
                source = "absent"
            elif unit_type in filtered_types:
                source = "within_type_fallback"
            else:
                source = "outside_top_k"
            context[unit_type] = TypeRankEntry(source, rank, len(ranked), total)
        return context


def retrieve_lexical(
    snapshot: BM25FSnapshot,
    query: str,
    classification: Classification,
    *,
    budget: int,
    type_list: tuple[str, ...],
    excluded: tuple[str, ...],
    scope: Scope | None,
    limit: int,
    started: float,
    context_limit: int | None = None,
) -> RetrievalResult:
    """The gem's lexical mode: BM25F over the snapshot, eligibility before the limit, its own
    plain-text assembler."""
    execution = snapshot.execute(
        query, types=type_list or None, exclude_types=excluded, keys=scope.keys if scope is not None else None
    )
    assembled = LexicalAssembler().assemble(first_units(execution.candidates, context_limit), budget)
    trace = RetrievalTrace(
        classification=classification,
        strategy="lexical",
        candidate_count=len(execution.candidates),
        ranked_count=len(execution.candidates),
        tokens_used=assembled.tokens_used,
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
        skipped_missing_metadata=0,
    )
    return RetrievalResult(
        context=assembled.context,
        sources=assembled.sources,
        candidates=ranked_entries(None, list(execution.candidates), limit),
        classification=classification,
        strategy="lexical",
        tokens_used=assembled.tokens_used,
        budget=budget,
        trace=trace,
        applied_scope=applied_scope(scope, trace, assembled),
        mode="lexical",
        assembled_tokens=assembled.tokens_used,
    )


def append_type_rank_table(context: str, type_rank_context: dict[str, TypeRankEntry]) -> str:
    """The gem's `### Type rank context` table under the context."""
    lines = ["", "### Type rank context", "", TYPE_RANK_HEADER, TYPE_RANK_RULE]
    for unit_type, entry in type_rank_context.items():
        rank = "—" if entry.top_of_type_global_rank is None else str(entry.top_of_type_global_rank)
        total = "?" if entry.total_of_type is None else str(entry.total_of_type)
        lines.append(f"| {unit_type} | {entry.source} | {rank} | {entry.global_k} | {total} |")
    return context + "\n" + "\n".join(lines) + "\n"


__all__ = ["RubyPipeline", "append_type_rank_table", "retrieve_lexical"]
