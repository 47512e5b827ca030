"""Retrieval quality metrics (Ruby lib/woods/evaluation/metrics.rb, newest semantics).

Why these: precision says how much of what we returned is wanted, recall how much of what is
wanted we returned, MRR how soon the first wanted unit appears. Guarantee: precision@k divides
by the size of the top-k slice actually returned (the captured Ruby reports do: 2 retrieved, 1
hit → 0.5), not by k.
"""

from __future__ import annotations

from collections.abc import Sequence


def precision_at_k(retrieved: Sequence[str], relevant: Sequence[str], k: int = 5) -> float:
    if not retrieved or not relevant:
        return 0.0
    top = list(retrieved[:k])
    wanted = set(relevant)
    return sum(1 for r in top if r in wanted) / len(top)


def recall(retrieved: Sequence[str], relevant: Sequence[str]) -> float:
    if not relevant:
        return 0.0
    found = set(retrieved)
    return sum(1 for r in set(relevant) if r in found) / len(set(relevant))


def mrr(retrieved: Sequence[str], relevant: Sequence[str]) -> float:
    wanted = set(relevant)
    for position, identifier in enumerate(retrieved, start=1):
        if identifier in wanted:
            return 1.0 / position
    return 0.0


def context_completeness(retrieved: Sequence[str], required: Sequence[str]) -> float:
    if not required:
        return 1.0
    found = set(retrieved)
    return sum(1 for r in set(required) if r in found) / len(set(required))


def token_efficiency(retrieved: Sequence[str], relevant: Sequence[str], tokens_used: int) -> float:
    """≈ share of the context spent on relevant units: ceil(tokens × relevant ratio) / tokens."""
    if tokens_used <= 0:
        return 0.0
    wanted = set(relevant)
    ratio = sum(1 for r in retrieved if r in wanted) / max(len(retrieved), 1)
    relevant_tokens = -(-tokens_used * ratio // 1)
    return min(relevant_tokens / tokens_used, 1.0)
