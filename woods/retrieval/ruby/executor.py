"""SearchExecutor: runs the strategy a classification selects and returns candidates.

Why: each strategy (vector, keyword, graph, direct, hybrid) reads the stores differently; the
executor owns those reads so the ranker and assembler only ever see candidates. Guarantees
(Ruby search_executor.rb parity): the classifier's target type never becomes a vector filter
(#184); keyword scores depend on match quality, not store row order; graph seeds come from the
raw query (B-190); hybrid keeps every source occurrence for RRF and bounds to `limit` unique units;
every ordering has an explicit tie-break. Only vector and hybrid call the embedder, which is
created on first use through the zero-argument factory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from woods.errors import InvalidOptionError
from woods.retrieval.candidates import Candidate, Classification, ExecutionResult
from woods.retrieval.ruby.classifier import STOP_WORDS, select_strategy
from woods.store.base import UNSEARCHED_FIELDS
from woods.store.contracts import GraphReader, RecordStore, VectorSearch
from woods.store.contracts import UnitRow as Record
from woods.store.identity import public_identifier, strip_chunk

if TYPE_CHECKING:
    import numpy as np

    from woods.embedding.provider import QueryEmbedder


class SubjectLookup(Protocol):
    """Where graph seeds and direct's fallback come from (woods/retrieval/subjects.py)."""

    def records_for(self, term: str) -> list[Record]: ...

    def keyword_candidates(self, keywords: Sequence[str], limit: int) -> list[Candidate]: ...


DEFAULT_LIMIT = 20  # Ruby executor default; the retriever never passes another limit.

# Hybrid fetches this many times `limit` from each source so a unit found by two sources near
# either source's cutoff keeps both hits for RRF (fetching only `limit` starved the overlap),
# bounded so one hybrid query is not three full-index scans.
HYBRID_PER_SOURCE_LIMIT_MULTIPLIER = 3
HYBRID_EXPANSION_SEEDS = 3  # graph expansion follows only the top vector hits: strongest evidence.

# Graph scores: the seed itself is the answer, what it uses is closer than what uses it, and
# hybrid expansion is incidental context.
GRAPH_SEED_SCORE = 1.0
GRAPH_DEPENDENCY_SCORE = 0.8
GRAPH_DEPENDENT_SCORE = 0.7
GRAPH_EXPANSION_SCORE = 0.5
GRAPH_FALLBACK_SEEDS = 3  # no exact subject: at most 3 metadata mentions, sorted, seed the walk.
GRAPH_SUFFIX_SEEDS = 3  # an unqualified term matches at most 3 namespaced suffixes, sorted by key.

# Keyword score per matched field, mirroring the ranker's 0.25-per-field table; a hit with no
# matched field (the store matched a key name or bookkeeping text) still scores the floor so every
# keyword score stays in (0, 1].
KEYWORD_FIELD_SCORE = 0.25
KEYWORD_SCORE_CAP = 1.0
# Store bookkeeping and positional fields never count as a match: Ruby skips id/updated_at, and its
# records have no language/line fields (the same set the whole-record haystack leaves out).
KEYWORD_MATCH_SKIPPED_FIELDS = UNSEARCHED_FIELDS

DIRECT_SCORE = 1.0

# Words that tell the graph strategy what to do rather than what to look at.
GRAPH_INTENT_WORDS = frozenset(
    ["trace", "follow", "track", "call", "calls", "called", "depends", "used", "find", "locate", "search", "look"]
)
_GRAPH_TERM = re.compile(r"\w+(?:::\w+)*", re.ASCII)
_UPPERCASE = re.compile(r"[A-Z]")

STRATEGIES = ("vector", "keyword", "graph", "hybrid", "direct")


def ruby_capitalize(word: str) -> str:
    """Ruby `String#capitalize`: first character upper-cased, the rest lower-cased."""
    return word[:1].upper() + word[1:].lower()


def camelize(term: str) -> str:
    """`review_assignment` → `ReviewAssignment`; `billing::invoice` → `Billing::Invoice`."""
    return "::".join("".join(ruby_capitalize(p) for p in part.split("_")) for part in term.split("::"))


def field_text(value: Any) -> str:
    """A record field as text for keyword matching (Ruby `to_s`; nil → '', containers as JSON)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def matched_fields_for(record: Record, keyword: str) -> list[str]:
    """Top-level fields (except id/updated_at) whose text contains the keyword, case-insensitively."""
    needle = keyword.lower()
    if not needle:
        return []
    return [
        name
        for name, value in record.items()
        if name not in KEYWORD_MATCH_SKIPPED_FIELDS and needle in field_text(value).lower()
    ]


def keyword_match_score(matched_fields: Sequence[str]) -> float:
    if not matched_fields:
        return KEYWORD_FIELD_SCORE
    return min(len(matched_fields) * KEYWORD_FIELD_SCORE, KEYWORD_SCORE_CAP)


def hybrid_order(candidates: Iterable[Candidate]) -> list[Candidate]:
    """(−score, identifier, source): insertion order never chooses seeds or retained units (B-192)."""
    return sorted(candidates, key=lambda c: (-c.score, c.identifier, c.source))


def bound_candidates(candidates: Sequence[Candidate], limit: int, strategy: str) -> list[Candidate]:
    """First `limit` candidates; for hybrid `limit` counts unique base units and further
    occurrences of an already-kept unit ride along (RRF needs every source's entry)."""
    if strategy != "hybrid":
        return list(candidates[:limit])
    kept: set[str] = set()
    bounded: list[Candidate] = []
    for candidate in candidates:
        base = candidate.base_identifier
        if base not in kept and len(kept) < limit:
            kept.add(base)
        if base in kept:
            bounded.append(candidate)
    return bounded


class SearchExecutor:
    """Maps a classification to a strategy and runs it against the three stores."""

    def __init__(
        self,
        metadata: RecordStore,
        vectors: VectorSearch | None,
        graph: GraphReader | None,
        embedder_factory: Callable[[], QueryEmbedder] | None,
        subjects: SubjectLookup | None = None,
    ) -> None:
        self._metadata = metadata
        # None: the Ruby gem's substring scan of every record (parity); the code profile passes
        # an index-backed lookup (woods/retrieval/subjects.py).
        self._subjects = subjects
        self._vectors = vectors
        self._graph = graph
        self._embedder_factory = embedder_factory
        self._embedder: QueryEmbedder | None = None
        self._query_vectors: dict[str, np.ndarray] = {}

    # -- entry point -----------------------------------------------------------------------
    def execute(
        self,
        query: str,
        classification: Classification,
        *,
        limit: int = DEFAULT_LIMIT,
        type_filter: Sequence[str] | None = None,
        strategy: str | None = None,
    ) -> ExecutionResult:
        chosen = strategy or select_strategy(classification)
        if chosen not in STRATEGIES:
            raise InvalidOptionError(f"unknown strategy {chosen!r} (expected one of {', '.join(STRATEGIES)})")
        candidates = self._run(chosen, query, classification, limit, type_filter)
        candidates = self._expand_graph_candidates(candidates)
        if chosen == "hybrid":
            candidates = hybrid_order(candidates)
        return ExecutionResult(tuple(bound_candidates(candidates, limit, chosen)), chosen, query)

    def _run(
        self,
        strategy: str,
        query: str,
        classification: Classification,
        limit: int,
        type_filter: Sequence[str] | None,
    ) -> list[Candidate]:
        if strategy == "vector":
            return self.vector(query, limit, type_filter)
        if strategy == "keyword":
            return self.keyword(classification.keywords, limit)
        if strategy == "graph":
            return self.graph(query, limit)
        if strategy == "hybrid":
            return self.hybrid(query, classification, limit, type_filter)
        return self.direct(classification.keywords, limit)

    # -- vector ----------------------------------------------------------------------------
    def _embed(self, query: str) -> np.ndarray:
        """The query vector, embedded at most once per executor and query (scoped calls reuse it)."""
        cached = self._query_vectors.get(query)
        if cached is not None:
            return cached
        if self._embedder is None:
            if self._embedder_factory is None:
                raise InvalidOptionError("this retriever has no embedding provider (vector search unavailable)")
            self._embedder = self._embedder_factory()
        import numpy as np  # here, not at import: keyword-only processes never load numpy

        vector = np.asarray(self._embedder.embed(query))
        self._query_vectors = {query: vector}
        return vector

    def vector(self, query: str, limit: int, type_filter: Sequence[str] | None = None) -> list[Candidate]:
        """Embed the raw query; only an explicit, non-empty `type_filter` filters (#184)."""
        if self._vectors is None:
            raise InvalidOptionError("this retriever has no vector store (vector search unavailable)")
        types = [str(t) for t in type_filter] if type_filter else None
        hits = self._vectors.search(self._embed(query), limit, types=types)
        return [
            Candidate(hit.embedding_id, float(hit.score), "vector", dict(hit.metadata)) for hit in hits
        ]

    # -- keyword ---------------------------------------------------------------------------
    def keyword(self, keywords: Sequence[str], limit: int) -> list[Candidate]:
        """Each keyword searched separately over the whole record; merged by key; scored by the
        number of matched fields; ordered by (−score, key)."""
        if not keywords:
            return []
        in_store = self._keyword_in_store(keywords, limit)
        if in_store is not None:
            return in_store
        merged: dict[str, tuple[Record, list[str]]] = {}
        for keyword in keywords:
            for record in self._metadata.search(keyword):
                key = str(record["id"])
                fields = matched_fields_for(record, keyword)
                if key not in merged:
                    merged[key] = (record, fields)
                else:
                    known = merged[key][1]
                    known.extend(f for f in fields if f not in known)
        candidates = [
            Candidate(
                key,
                keyword_match_score(fields),
                "keyword",
                record,
                tuple(fields) if fields else None,
            )
            for key, (record, fields) in merged.items()
        ]
        candidates.sort(key=lambda c: (-c.score, c.identifier))
        return candidates[:limit]

    def _keyword_in_store(self, keywords: Sequence[str], limit: int) -> list[Candidate] | None:
        """The same scoring with matched fields computed by the store; only the kept candidates'
        records are read. None when the store does not compute matched fields (`keyword_fields`
        answers None: an in-memory view), so the caller derives them from `search`."""
        merged: dict[str, list[str]] = {}
        for keyword in keywords:
            found = self._metadata.keyword_fields(keyword)
            if found is None:
                return None
            for key, fields in found:
                known = merged.setdefault(key, [])
                known.extend(f for f in fields if f not in known and f not in KEYWORD_MATCH_SKIPPED_FIELDS)
        ranked = sorted(merged.items(), key=lambda item: (-keyword_match_score(item[1]), item[0]))[:limit]
        records = self._metadata.find_batch([key for key, _fields in ranked])
        return [
            Candidate(key, keyword_match_score(fields), "keyword", records.get(key, {}), tuple(fields) if fields else None)
            for key, fields in ranked
        ]

    # -- graph -----------------------------------------------------------------------------
    def graph(self, query: str, limit: int) -> list[Candidate]:
        """Seed 1.0, its dependencies 0.8, its dependents 0.7; max score per identifier; ordered
        by (−score, first-seen position) — Ruby leaves equal scores to an unstable sort."""
        if self._graph is None:
            return []
        seeds = self.graph_seeds(query)
        found: list[Candidate] = []
        for seed in seeds:
            subject = public_identifier(seed)
            found.extend(
                Candidate(dep, GRAPH_DEPENDENCY_SCORE, "graph") for dep in self._graph.dependencies_of(subject)
            )
            found.extend(
                Candidate(dep, GRAPH_DEPENDENT_SCORE, "graph") for dep in self._graph.dependents_of(subject)
            )
            found.append(Candidate(seed, GRAPH_SEED_SCORE, "graph"))
        return deduplicate(found)[:limit]

    def graph_seeds(self, query: str) -> list[str]:
        """Storage keys of the query's subjects (the Ruby gem's graph seed resolution)."""
        records_by_term = self._graph_query_records(query)
        exact: list[Record] = []
        for term, records in records_by_term.items():
            exact.extend(self._graph_identifier_matches(records, term))
        if exact:
            return sorted({str(r["id"]) for r in exact})
        mentions = [str(r["id"]) for term, records in records_by_term.items() if "::" not in term for r in records]
        if self._subjects is not None:  # ranked by the lexical index: its best mentions, in order
            return list(dict.fromkeys(mentions))[:GRAPH_FALLBACK_SEEDS]
        return sorted(set(mentions))[:GRAPH_FALLBACK_SEEDS]

    def _graph_query_records(self, query: str) -> dict[str, list[Record]]:
        result: dict[str, list[Record]] = {}
        for term in dict.fromkeys(_GRAPH_TERM.findall(query)):
            lowered = term.lower()
            instruction = lowered in STOP_WORDS or lowered in GRAPH_INTENT_WORDS
            if instruction and not _UPPERCASE.search(term):
                continue
            records = self._graph_subject_records(term)
            if instruction:
                records = [r for r in records if record_identifier(r) == term]
            result[term] = records
        return result

    def _graph_subject_records(self, term: str) -> list[Record]:
        direct = self._metadata.find(term)
        if direct is not None:
            return [{**direct, "id": term}]
        records = self._term_records(term)
        exact = [r for r in records if record_identifier(r) == term]
        if exact:
            return exact
        camelized = camelize(term)
        if camelized == term:
            return records
        inferred = self._metadata.find(camelized)
        if inferred is not None:
            return [{**inferred, "id": camelized}]
        union: dict[str, Record] = {}
        for record in [*records, *self._term_records(camelized)]:
            union.setdefault(str(record["id"]), record)
        return list(union.values())

    def _term_records(self, term: str) -> list[Record]:
        if self._subjects is not None:
            return self._subjects.records_for(term)
        return self._metadata.search(term)

    @staticmethod
    def _graph_identifier_matches(records: list[Record], term: str) -> list[Record]:
        literal = [r for r in records if record_identifier(r) == term]
        if literal:
            return literal
        folded = term.replace("_", "").casefold()
        loose = [r for r in records if record_identifier(r).replace("_", "").casefold() == folded]
        if loose or "::" in term:
            return loose
        suffix = [
            r for r in records if record_identifier(r).split("::")[-1].replace("_", "").casefold() == folded
        ]
        return sorted(suffix, key=lambda r: str(r["id"]))[:GRAPH_SUFFIX_SEEDS]

    # -- hybrid ----------------------------------------------------------------------------
    def hybrid(
        self, query: str, classification: Classification, limit: int, type_filter: Sequence[str] | None
    ) -> list[Candidate]:
        """Vector + keyword (limit × 3 each) + forward dependencies of the top-3 vector hits at 0.5.
        No de-duplication: RRF in the ranker is where cross-source agreement is computed."""
        per_source = limit * HYBRID_PER_SOURCE_LIMIT_MULTIPLIER
        vector_hits = self.vector(query, per_source, type_filter)
        keyword_hits = self.keyword(classification.keywords, per_source)
        expansion: list[Candidate] = []
        if self._graph is not None:
            for hit in hybrid_order(vector_hits)[:HYBRID_EXPANSION_SEEDS]:
                subject = public_identifier(strip_chunk(hit.identifier))
                expansion.extend(
                    Candidate(dep, GRAPH_EXPANSION_SCORE, "graph_expansion")
                    for dep in self._graph.dependencies_of(subject)
                )
        return [*vector_hits, *keyword_hits, *expansion]

    # -- direct ----------------------------------------------------------------------------
    def direct(self, keywords: Sequence[str], limit: int) -> list[Candidate]:
        """Exact lookups of each keyword as-is, Capitalized and CamelCased (first hit wins);
        falls back to the keyword strategy when nothing is found."""
        if not keywords:
            return []
        found: list[Candidate] = []
        for keyword in keywords:
            variants = dict.fromkeys([keyword, ruby_capitalize(keyword), camelize_word(keyword)])
            for variant in variants:
                record = self._metadata.find(variant)
                if record is not None:
                    found.append(Candidate(variant, DIRECT_SCORE, "direct", record))
                    break
        if not found:
            if self._subjects is not None:
                return self._subjects.keyword_candidates(keywords, limit)
            return self.keyword(keywords, limit)
        return found[:limit]

    # -- typed graph identities ------------------------------------------------------------
    def _expand_graph_candidates(self, candidates: list[Candidate]) -> list[Candidate]:
        """A graph candidate whose identifier is no storage key becomes one candidate per unit
        with that public identifier (typed keys, #225); unknown targets stay as they are."""
        expanded: list[Candidate] = []
        for candidate in candidates:
            if candidate.source not in ("graph", "graph_expansion") or self._metadata.find(candidate.identifier):
                expanded.append(candidate)
                continue
            matches = self._metadata.find_by_identifier(candidate.identifier)
            if not matches:
                expanded.append(candidate)
                continue
            expanded.extend(
                Candidate(str(record["id"]), candidate.score, candidate.source, record) for record in matches
            )
        return expanded


def camelize_word(keyword: str) -> str:
    """`editorial_workflow` → `EditorialWorkflow` (Ruby `split('_').map(&:capitalize).join`)."""
    return "".join(ruby_capitalize(part) for part in keyword.split("_"))


def record_identifier(record: Record) -> str:
    return str(record.get("identifier") or public_identifier(str(record["id"])))


def deduplicate(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Highest score per identifier (first seen wins ties), ordered by −score then first-seen
    position (a stable sort; Ruby's sort here is unstable)."""
    best: dict[str, Candidate] = {}
    for candidate in candidates:
        known = best.get(candidate.identifier)
        if known is None or candidate.score > known.score:
            best[candidate.identifier] = candidate
    return sorted(best.values(), key=lambda c: -c.score)
