"""The nouns the retrieval stages hand each other: candidates, classifications, results, errors.

Why one module: the classifier, executor, ranker, assembler and retriever each read what the
previous stage produced. Keeping every value object here (frozen dataclasses) means no stage can
change what an earlier stage decided, and every stage speaks the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

# The retrieval errors live in woods.errors; re-exported here under their old home.
from woods.errors import InvalidOptionError as InvalidOptionError
from woods.errors import InvalidQueryError as InvalidQueryError
from woods.errors import InvalidScopeError as InvalidScopeError
from woods.errors import InvalidTypeError as InvalidTypeError
from woods.errors import StoreError as StoreError
from woods.store.identity import strip_chunk


@dataclass(frozen=True, slots=True)
class Classification:
    """What the QueryClassifier decided about a query (Ruby QueryClassifier::Classification)."""

    intent: str
    scope: str
    target_type: str | None
    framework_context: bool
    keywords: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "scope": self.scope,
            "target_type": self.target_type,
            "framework_context": self.framework_context,
            "keywords": list(self.keywords),
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """One search hit with provenance (Ruby SearchExecutor::Candidate).

    `identifier` is a storage key, possibly chunk-suffixed (`X#chunk_2`). `source` is the strategy
    that produced it (vector, keyword, graph, graph_expansion, direct, lexical, rrf).
    `matched_fields` is None unless a keyword-style strategy recorded which fields matched.
    `sources` lists every strategy that found the unit (filled by the ranker's RRF merge).
    """

    identifier: str
    score: float
    source: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    matched_fields: tuple[str, ...] | None = None
    sources: tuple[str, ...] = ()

    @property
    def base_identifier(self) -> str:
        return strip_chunk(self.identifier)

    def with_score(self, score: float) -> Candidate:
        return replace(self, score=score)

    def found_by(self) -> tuple[str, ...]:
        """The strategies that found this candidate (its own source when no merge happened)."""
        return self.sources or (self.source,)


@dataclass(frozen=True, slots=True)
class ExecutionResult:
    """What the SearchExecutor returns: candidates in strategy order plus the strategy used."""

    candidates: tuple[Candidate, ...]
    strategy: str
    query: str


@dataclass(frozen=True, slots=True)
class SourceAttribution:
    """One unit that made it into the context (Ruby assembler `sources` entry)."""

    identifier: str
    type: str | None
    score: float
    file_path: str | None
    truncated: bool = False
    matched_fields: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "identifier": self.identifier,
            "type": self.type,
            "score": self.score,
            "file_path": self.file_path,
        }
        if self.truncated:
            data["truncated"] = True
        if self.matched_fields is not None:
            data["matched_fields"] = list(self.matched_fields)
        return data


@dataclass(frozen=True, slots=True)
class AssembledContext:
    """The assembler's output: the context text, its token estimate and attributions."""

    context: str
    tokens_used: int
    budget: int
    sources: tuple[SourceAttribution, ...]
    sections: tuple[str, ...]
    skipped_missing_metadata: int = 0


@dataclass(frozen=True, slots=True)
class TypeRankEntry:
    """Where one requested type landed (Ruby `type_rank_context` value)."""

    source: str  # in_top_k | within_type_fallback | outside_top_k | absent
    top_of_type_global_rank: int | None
    global_k: int
    total_of_type: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "top_of_type_global_rank": self.top_of_type_global_rank,
            "global_k": self.global_k,
            "total_of_type": self.total_of_type,
        }


@dataclass(frozen=True, slots=True)
class AppliedScope:
    """The scope a scoped retrieval honoured and what it found (Ruby `applied_scope`)."""

    packages: tuple[str, ...]
    source_paths: tuple[str, ...]
    eligible_units: int
    outcome: str  # matched | no_match | empty_scope
    candidate_count: int
    returned_units: int
    # `--glob` / `--lang` (woods.filters): emitted only when given, so the Ruby shape is unchanged.
    globs: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "packages": list(self.packages),
            "source_paths": list(self.source_paths),
            "eligible_units": self.eligible_units,
            "outcome": self.outcome,
            "candidate_count": self.candidate_count,
            "returned_units": self.returned_units,
        }
        if self.globs or self.langs:
            data.update({"globs": list(self.globs), "langs": list(self.langs)})
        return data


@dataclass(frozen=True, slots=True)
class RetrievalTrace:
    """Diagnostics of one retrieval (Ruby RetrievalTrace)."""

    classification: Classification
    strategy: str
    candidate_count: int
    ranked_count: int
    tokens_used: int
    elapsed_ms: float
    skipped_missing_metadata: int
    # The ranking profile ("code" or "ruby"), the evidence legs that ran (code profile) and the
    # query's shape as code search read it (symbol, path, natural).
    profile: str = "ruby"
    legs: tuple[str, ...] = ()
    query_kind: str | None = None
    # The strategy the query asked for (or was classified to) when another one answered it: a
    # vector or hybrid search on an index whose vectors are still being computed answers lexically.
    fallback_from: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "classification": self.classification.to_dict(),
            "strategy": self.strategy,
            "candidate_count": self.candidate_count,
            "ranked_count": self.ranked_count,
            "tokens_used": self.tokens_used,
            "elapsed_ms": self.elapsed_ms,
            "skipped_missing_metadata": self.skipped_missing_metadata,
            "profile": self.profile,
        }
        if self.legs:
            data["legs"] = list(self.legs)
        if self.query_kind is not None:
            data["query_kind"] = self.query_kind
        if self.fallback_from is not None:
            data["fallback_from"] = self.fallback_from
        return data


@dataclass(frozen=True, slots=True)
class RankedEntry:
    """A ranked candidate as shown to a user: public identifier, storage key, type, sources."""

    identifier: str
    key: str
    type: str
    score: float
    source: str
    sources: tuple[str, ...]
    matched_fields: tuple[str, ...] | None = None
    file_path: str | None = None
    line_start: int | None = None
    line_end: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "identifier": self.identifier,
            "key": self.key,
            "type": self.type,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "score": self.score,
            "source": self.source,
            "sources": list(self.sources),
        }
        if self.matched_fields is not None:
            data["matched_fields"] = list(self.matched_fields)
        return data


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """Everything one `Retriever.retrieve` call produced; interfaces render it, never recompute.

    `sources` are the units in the context, in context order. `candidates` is the ranked list
    after type filtering (trimmed to the caller's `limit`), each with the strategies that found it.
    """

    context: str
    sources: tuple[SourceAttribution, ...]
    candidates: tuple[RankedEntry, ...]
    classification: Classification
    strategy: str
    tokens_used: int
    budget: int
    trace: RetrievalTrace
    type_rank_context: dict[str, TypeRankEntry] | None = None
    applied_scope: AppliedScope | None = None
    mode: str = "semantic"
    # The assembler's estimate before the type-rank table is appended: what `tokens_used` meant in
    # the Ruby gem before 165a3736 (the version that captured the bench).
    assembled_tokens: int = 0
    # What the caller should know about how the answer was made (a leg that could not run …).
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "warnings": list(self.warnings),
            "mode": self.mode,
            "strategy": self.strategy,
            "budget": self.budget,
            "tokens_used": self.tokens_used,
            "context": self.context,
            "sources": [s.to_dict() for s in self.sources],
            "results": [c.to_dict() for c in self.candidates],
            "classification": self.classification.to_dict(),
            "trace": self.trace.to_dict(),
            "type_rank_context": (
                None
                if self.type_rank_context is None
                else {t: e.to_dict() for t, e in self.type_rank_context.items()}
            ),
            "applied_scope": None if self.applied_scope is None else self.applied_scope.to_dict(),
        }
