"""Naive baselines a retriever must beat (Ruby baseline_runner.rb).

`grep`: identifiers containing any query keyword, in index order (no keywords → the first
`limit`); `random`: a seeded sample; `file_level`: identifiers ranked by how many keywords they
contain, ties by index order (stable; Ruby's sort is unstable there). Identifiers are public
(typed storage keys mapped back) and de-duplicated.
"""

from __future__ import annotations

import random as _random
import re
from collections.abc import Sequence

DEFAULT_LIMIT = 10  # Ruby EVAL_BASELINE_LIMIT default
DEFAULT_SEED = 42  # any fixed seed: the point is repeatability
# The baseline runner's own 31-word stop list (smaller than the classifier's).
BASELINE_STOP_WORDS = frozenset(
    ["the", "a", "an", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "do", "does", "did", "will", "would", "could", "should", "in", "on", "at", "to", "for", "of", "and", "or", "how", "what", "where"]
)
_TOKEN = re.compile(r"[a-z0-9_]+")
BASELINES = ("grep", "random", "file_level")


def baseline_keywords(query: str) -> list[str]:
    tokens = [t for t in _TOKEN.findall(query.lower()) if t not in BASELINE_STOP_WORDS and len(t) >= 2]
    return list(dict.fromkeys(tokens))


def grep(identifiers: Sequence[str], query: str, limit: int = DEFAULT_LIMIT) -> list[str]:
    keywords = baseline_keywords(query)
    if not keywords:
        return list(identifiers[:limit])
    return [i for i in identifiers if any(k in i.lower() for k in keywords)][:limit]


def random_sample(identifiers: Sequence[str], limit: int = DEFAULT_LIMIT, seed: int = DEFAULT_SEED) -> list[str]:
    return _random.Random(seed).sample(list(identifiers), min(limit, len(identifiers)))


def file_level(identifiers: Sequence[str], query: str, limit: int = DEFAULT_LIMIT) -> list[str]:
    keywords = baseline_keywords(query)
    counted = [(sum(1 for k in keywords if k in i.lower()), i) for i in identifiers]
    ranked = sorted((c for c in counted if c[0] > 0), key=lambda c: -c[0])
    return [i for _, i in ranked[:limit]]


def run_baseline(name: str, identifiers: Sequence[str], query: str, limit: int = DEFAULT_LIMIT) -> list[str]:
    if name == "grep":
        return grep(identifiers, query, limit)
    if name == "random":
        return random_sample(identifiers, limit)
    if name == "file_level":
        return file_level(identifiers, query, limit)
    raise ValueError(f"unknown baseline {name!r} (expected one of {', '.join(BASELINES)})")
