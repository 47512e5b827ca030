"""Ranker: fuses multi-source candidates (unit-level RRF) and scores them with weighted signals.

Why: strategies return scores on different scales (cosine, matched-field counts, graph
distance); the ranker turns them into one order. Guarantees (Ruby ranker.rb + ranker_spec):
RRF only when more than one source is present, one contribution per unit per source, min–max
normalised; weights .40/.20/.15/.10/.10/.05; PageRank-percentile importance with identifier
tie-break; diversity penalty in weighted order; inputs are never mutated (new candidates
carry the final weighted score); every sort has an explicit tie-break (documented inline).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from woods.retrieval.candidates import Candidate, Classification
from woods.store.contracts import GraphReader, UnitReader
from woods.store.contracts import UnitRow as Record

# Signal weights (sum 1.0): semantic evidence first, keyword evidence second, then the
# repository-shape signals that only break near-ties.
WEIGHTS: tuple[tuple[str, float], ...] = (
    ("semantic", 0.40),
    ("keyword", 0.20),
    ("recency", 0.15),
    ("importance", 0.10),
    ("type_match", 0.10),
    ("diversity", 0.05),
)
RRF_K = 60  # Cormack et al. (2009): balances rank position against absolute score; 1-based ranks.
# "unit" (default): the chunks of one unit count once per source, at the best chunk's rank, and
# ranks count what is left — one source returning 3 or 10 chunks of a unit gives the same output
# as 1 chunk, so chunk floods cannot outrank two-source agreement (ranker_spec @16cf04be).
# Repeated un-chunked occurrences are distinct evidence and each count: hybrid expansion of the
# same dependency from two different top vector hits is two paths, not one chunked text.
# "occurrence": every occurrence counts at its position (ranker.rb @2b4d2c56, the bench capture).
RRF_POLICIES = ("unit", "occurrence")

KEYWORD_FIELD_WEIGHT = 0.25  # per matched field, capped at 1.0 (four fields = full keyword signal)
RECENCY = {"hot": 1.0, "active": 0.8, "new": 0.7, "dormant": 0.3}  # anything else (stable) 0.5
IMPORTANCE_BUCKETS = {"high": 1.0, "medium": 0.6, "low": 0.3}  # anything else 0.5
NEUTRAL = 0.5  # the signal value when there is no evidence either way
TYPE_MATCH, TYPE_MISMATCH = 1.0, 0.3
DIVERSITY_STEP, DIVERSITY_CAP = 0.1, 0.5  # per earlier unit sharing namespace/type; at most 0.5


def ruby_sum(values: Iterable[float]) -> float:
    """Kahan–Babuška compensated sum, as Ruby's `Array#sum`/`Enumerable#sum` computes floats.

    Matching Ruby's summation keeps scores bit-identical with the gem, so near-ties order alike.
    """
    total = 0.0
    compensation = 0.0
    for value in values:
        x = float(value)
        t = total + x
        if abs(total) >= abs(x):
            compensation += (total - t) + x
        else:
            compensation += (x - t) + total
        total = t
    return total + compensation


def dig(unit: Mapping[str, Any] | None, *keys: str) -> Any:
    """`unit.metadata.<keys>` first; for a single key fall back to the top-level field."""
    if not isinstance(unit, Mapping):
        return None
    value: Any = unit.get("metadata")
    for key in keys:
        if not isinstance(value, Mapping):
            value = None
            break
        value = value.get(key)
    if value is not None:
        return value
    return unit.get(keys[0]) if len(keys) == 1 else None


@dataclass(frozen=True, slots=True)
class Signals:
    semantic: float
    keyword: float
    recency: float
    importance: float
    type_match: float
    diversity: float = 1.0

    def weighted(self) -> float:
        return ruby_sum(getattr(self, name) * weight for name, weight in WEIGHTS)


def normalize(scores: dict[str, float]) -> dict[str, float]:
    """Min–max to [0, 1]; all equal (including one unit) → every score 1.0."""
    low, high = min(scores.values()), max(scores.values())
    spread = high - low
    if spread == 0:
        return {key: 1.0 for key in scores}
    return {key: (score - low) / spread for key, score in scores.items()}


def rrf_merge(candidates: Sequence[Candidate], policy: str = "unit") -> list[Candidate]:
    """Reciprocal Rank Fusion over the candidates' sources (unit-level by default).

    Within a source, candidates are ordered by (−score, identifier) — explicit, so equal scores
    never depend on input order. Policy "unit": chunk-suffixed occurrences of one unit contribute
    once (at the best chunk's rank) and ranks count contributing occurrences; policy
    "occurrence": every occurrence adds 1/(k + its position). Merged candidate:
    base identifier; metadata = first non-empty; matched_fields = union; representative source =
    last occurrence, except that graph_expansion never replaces another source; `sources` lists
    every source that found the unit. Output by (−fused score, first-contribution position).
    """
    by_source: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_source.setdefault(candidate.source, []).append(candidate)

    fused: dict[str, float] = {}
    metadata: dict[str, Mapping[str, Any]] = {}
    matched: dict[str, list[str]] = {}
    found_by: dict[str, list[str]] = {}
    for source, group in by_source.items():
        chunked_seen: set[str] = set()
        counted = 0  # contributing occurrences so far in this source (the "unit" policy's rank)
        for position, candidate in enumerate(sorted(group, key=lambda c: (-c.score, c.identifier)), start=1):
            base = candidate.base_identifier
            is_chunk = candidate.identifier != base
            contributes = policy == "occurrence" or not (is_chunk and base in chunked_seen)
            if is_chunk:
                chunked_seen.add(base)
            if contributes:
                counted += 1
                rank = position if policy == "occurrence" else counted
                fused[base] = fused.get(base, 0.0) + 1.0 / (RRF_K + rank)
            if source not in found_by.setdefault(base, []):
                found_by[base].append(source)
            if not metadata.get(base):
                metadata[base] = candidate.metadata
            if candidate.matched_fields is not None:
                known = matched.setdefault(base, [])
                known.extend(f for f in candidate.matched_fields if f not in known)

    representative: dict[str, Candidate] = {}
    for candidate in candidates:
        base = candidate.base_identifier
        kept = representative.get(base)
        if kept is not None and kept.source != "graph_expansion" and candidate.source == "graph_expansion":
            continue
        representative[base] = candidate

    normalized = normalize(fused)
    order = sorted(normalized, key=lambda base: -normalized[base])  # stable: first contribution wins ties
    return [
        Candidate(
            identifier=base,
            score=normalized[base],
            source=representative[base].source if base in representative else "rrf",
            metadata=metadata.get(base) or {},
            matched_fields=tuple(matched[base]) if base in matched else None,
            sources=tuple(found_by[base]),
        )
        for base in order
    ]


class Ranker:
    """Scores candidates and orders them best first; memoises the PageRank percentile map."""

    def __init__(self, metadata: UnitReader, graph: GraphReader | None = None, *, rrf_policy: str = "unit") -> None:
        if rrf_policy not in RRF_POLICIES:
            raise ValueError(f"unknown RRF policy {rrf_policy!r}")
        self._rrf_policy = rrf_policy
        self._metadata = metadata
        self._graph = graph
        self._percentiles: Mapping[str, float] | None = None

    def invalidate_pagerank_cache(self) -> None:
        self._percentiles = None

    def rank(self, candidates: Sequence[Candidate], classification: Classification) -> list[Candidate]:
        if not candidates:
            return []
        working = list(candidates)
        if len({c.source for c in working}) > 1:
            working = rrf_merge(working, self._rrf_policy)
        else:
            working = [c if c.sources else replace(c, sources=(c.source,)) for c in working]

        bases = list(dict.fromkeys(c.base_identifier for c in working))
        units = self._metadata.find_batch(bases)
        scored = [self._score(c, units.get(c.base_identifier), classification) for c in working]
        # Weighted order; ties by identifier so equal scores never depend on input order.
        scored.sort(key=lambda item: (-item[2], item[0].identifier))
        rescored = self._apply_diversity(scored)
        rescored.sort(key=lambda item: (-item[2], item[0].identifier))
        return [item[0].with_score(item[2]) for item in rescored]

    # -- signals ---------------------------------------------------------------------------
    def _score(
        self, candidate: Candidate, unit: Record | None, classification: Classification
    ) -> tuple[Candidate, Record | None, float]:
        signals = Signals(
            semantic=float(candidate.score),
            keyword=keyword_signal(candidate),
            recency=recency_signal(unit),
            importance=self._importance(unit, candidate.base_identifier),
            type_match=type_match_signal(unit, classification),
        )
        return candidate, unit, signals.weighted()

    def _importance(self, unit: Record | None, base_identifier: str) -> float:
        lookup = (unit.get("identifier") if unit else None) or base_identifier
        percentile = self.pagerank_percentiles().get(str(lookup))
        if percentile is not None:
            return percentile
        if unit is None:
            return NEUTRAL
        level = dig(unit, "importance")
        return IMPORTANCE_BUCKETS.get(str(level), NEUTRAL) if level is not None else NEUTRAL

    def pagerank_percentiles(self) -> Mapping[str, float]:
        """1 − i/n over identifiers ordered by (−pagerank, identifier); {} when unavailable."""
        if self._percentiles is None:
            self._percentiles = compute_percentiles(self._graph)
        return self._percentiles

    @staticmethod
    def _apply_diversity(
        scored: list[tuple[Candidate, Record | None, float]],
    ) -> list[tuple[Candidate, Record | None, float]]:
        """Walk in weighted order; a unit sharing namespace/type with earlier units loses
        min((ns + type count) × 0.1, 0.5) × 0.05. Unitless candidates neither pay nor count."""
        seen_namespaces: dict[str, int] = {}
        seen_types: dict[str, int] = {}
        diversity_weight = dict(WEIGHTS)["diversity"]
        result = []
        for candidate, unit, weighted in scored:
            if unit is not None:
                namespace = dig(unit, "namespace")
                namespace = "root" if namespace is None else str(namespace)
                unit_type = dig(unit, "type")
                unit_type = "unknown" if unit_type is None else str(unit_type)
                seen = seen_namespaces.get(namespace, 0) + seen_types.get(unit_type, 0)
                penalty = min(seen * DIVERSITY_STEP, DIVERSITY_CAP)
                seen_namespaces[namespace] = seen_namespaces.get(namespace, 0) + 1
                seen_types[unit_type] = seen_types.get(unit_type, 0) + 1
                weighted -= penalty * diversity_weight
            result.append((candidate, unit, weighted))
        return result


def compute_percentiles(graph: GraphReader | None) -> Mapping[str, float]:
    """PageRank percentiles per identifier (1.0 = most central): the graph's own, stored at index
    time (same formula), else computed from `pagerank()`. A graph store that does not compute
    PageRank (`NotImplementedError`) means "no PageRank" (the gem's rule: the signal is then
    neutral); any other failure is a store failure and propagates as the store's error."""
    if graph is None:
        return {}
    stored = graph.pagerank_percentiles()
    if stored is not None:
        return stored
    try:
        scores = graph.pagerank()
    except NotImplementedError:
        return {}
    if not scores:
        return {}
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    total = float(len(ranked))
    return {identifier: 1.0 - (index / total) for index, (identifier, _) in enumerate(ranked)}


def keyword_signal(candidate: Candidate) -> float:
    if candidate.matched_fields is None:
        return 0.0
    return min(len(candidate.matched_fields) * KEYWORD_FIELD_WEIGHT, 1.0)


def recency_signal(unit: Record | None) -> float:
    if unit is None:
        return NEUTRAL
    frequency = dig(unit, "git", "change_frequency")
    return RECENCY.get(str(frequency), NEUTRAL) if frequency is not None else NEUTRAL


def type_match_signal(unit: Record | None, classification: Classification) -> float:
    if unit is None or not classification.target_type:
        return NEUTRAL
    unit_type = dig(unit, "type")
    return TYPE_MATCH if unit_type is not None and str(unit_type) == classification.target_type else TYPE_MISMATCH
