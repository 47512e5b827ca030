"""SubjectLookup: how the graph and direct strategies find the units a query term may name.

Why: the Ruby gem finds a graph seed, and direct's fallback, by a substring scan of every record
(`MetadataStore.search`) — kept as is in the Ruby profile for parity, but a full scan per term
costs seconds at 100k units. The code profile asks the lexical index instead: a term's candidates
are the units its code-aware tokens rank highest by BM25 (the `name` column weighs most, so a unit
named by the term is among them), read in one batch. Guarantees: no full scan; the same order for
the same index and term (BM25 score, then key); at most `depth` records per term.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from woods.retrieval.candidates import Candidate
from woods.store.contracts import LexicalSearch, UnitReader
from woods.store.contracts import UnitRow as Record
from woods.tokens import query_terms

# Units per term read for seed resolution: enough that a unit named by the term is among them even
# when its tokens are common (BM25's name column dominates), small enough to read in one batch.
SUBJECT_DEPTH = 50
# Subject lookups a LexicalSubjects keeps (each ≤ SUBJECT_DEPTH records): cleared when full.
_RECORD_CACHE_SIZE = 256


class LexicalMetadata(LexicalSearch, UnitReader, Protocol):
    """What subject lookup reads: the lexical index and the records it names."""


class LexicalSubjects:
    """Subject lookup over the lexical index (the code profile's graph seeds and direct fallback)."""

    def __init__(self, metadata: LexicalMetadata, weights: tuple[float, ...], depth: int = SUBJECT_DEPTH) -> None:
        self._metadata = metadata
        self._weights = weights
        self._depth = depth
        # Lookups by token tuple: a graph query asks for `word` and `Word` (the same tokens), and
        # the generation behind the store never changes while it is open.
        self._records: dict[tuple[str, ...], list[Record]] = {}

    def _ranked(self, words: Sequence[str], limit: int) -> list[tuple[str, float]]:
        terms = list(dict.fromkeys(t for word in words for t in query_terms(word)))
        if not terms:
            return []
        return self._metadata.lexical_search(terms, limit, self._weights)

    def records_for(self, term: str) -> list[Record]:
        """The units `term` most likely names, best first, each with its storage key as `id`.

        None for a term whose every token is in at least half the units (`py` in a Python
        repository): it names no unit in particular, and asking would score every row."""
        tokens = tuple(query_terms(term))
        cached = self._records.get(tokens)
        if cached is None:
            cached = self._lookup(tokens)
            if len(self._records) >= _RECORD_CACHE_SIZE:
                self._records.clear()
            self._records[tokens] = cached
        return [record.copy() for record in cached]

    def _lookup(self, tokens: tuple[str, ...]) -> list[Record]:
        if not tokens or self._metadata.common_terms(tokens) >= set(tokens):
            return []
        ranked = self._metadata.lexical_search(list(tokens), self._depth, self._weights)
        found = self._metadata.find_batch([key for key, _score in ranked])
        return [_with_id(found[key], key) for key, _score in ranked if key in found]

    def keyword_candidates(self, keywords: Sequence[str], limit: int) -> list[Candidate]:
        """Direct's fallback: the lexical leg for the keywords, scores scaled to (0, 1] by the best."""
        ranked = self._ranked(keywords, limit)
        if not ranked:
            return []
        best = ranked[0][1]
        found = self._metadata.find_batch([key for key, _score in ranked])
        return [
            Candidate(key, score / best if best > 0 else 1.0, "keyword", found.get(key, {}))
            for key, score in ranked
        ]


def _with_id(record: Record, key: str) -> Record:
    """A copy of `record` whose `"id"` is `key`."""
    copy = record.copy()
    copy["id"] = key
    return copy
