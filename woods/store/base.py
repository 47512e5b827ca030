"""The three store interfaces retrieval reads through (the Ruby gem keeps them equally small).

Why: SQLite + FTS5, FAISS and networkx are today's backends; others will follow. Retrieval code
depends only on these protocols, never on a backend module.

Records: the metadata store returns plain dicts with string keys — `Unit.to_dict()` plus `"id"`
(the storage key, see `woods.store.identity`). Every list a store returns is in a documented,
deterministic order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np


Record = dict[str, Any]

# Top-level record fields that keyword search never matches. Ruby skips `id` and `updated_at`; the
# positional fields are ours alone (Ruby records have no such keys), so leaving them out keeps
# matched-field scores identical to Ruby's on the same units. `source_hash` stays searchable, as in Ruby.
UNSEARCHED_FIELDS = frozenset({"id", "updated_at", "language", "line_start", "line_end"})
# What a `search(query, fields=…)` field name may look like (a record key, never an expression).
_FIELD_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")


def validate_search_fields(fields: Sequence[str] | None) -> None:
    """Raise ValueError for a field name `MetadataStore.search` must not accept."""
    for name in fields or ():
        if not isinstance(name, str) or not _FIELD_NAME.match(name):
            raise ValueError(f"invalid search field: {name!r}")


def record_haystack(record: Record) -> str:
    """The Ruby whole-record haystack: the record as JSON text, lowercased, bookkeeping fields left out."""
    visible = {k: v for k, v in record.items() if k not in UNSEARCHED_FIELDS}
    return json.dumps(visible, ensure_ascii=False, sort_keys=False).lower()


def field_haystack(value: Any) -> str | None:
    """Ruby STO-8 field rule: strings raw, hashes/arrays as JSON text, others `str`, None never matches."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.lower()
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False).lower()
    return str(value).lower()


class MetadataStore(Protocol):
    def find(self, key: str) -> Record | None:
        """The record stored under `key` (a plain identifier or a typed key), or None."""

    def find_batch(self, keys: Iterable[str]) -> dict[str, Record]:
        """`{key: record}` for the keys that exist (one query, any number of keys)."""

    def find_by_identifier(self, identifier: str) -> list[Record]:
        """Every record whose public identifier is `identifier` (one per type), ordered by type."""

    def find_by_type(self, unit_type: str) -> list[Record]:
        """Every record of a type, ordered by key."""

    def search(self, query: str, fields: Sequence[str] | None = None) -> list[Record]:
        """Case-insensitive substring search (Ruby MetadataStore#search contract).

        `fields=None` matches against the whole record serialised as JSON (keys included);
        otherwise against the named top-level fields. `%`, `_` and `\\` match literally.
        Ordered by insertion (rowid). Field names must match `[A-Za-z_][A-Za-z0-9_]*`.
        """

    def all_identifiers(self) -> list[str]:
        """Every storage key, in insertion order."""

    def count(self) -> int: ...

    def type_counts(self) -> dict[str, int]: ...


class KeywordFieldsStore(MetadataStore, Protocol):
    """A metadata store that computes keyword matched fields itself (SQLite does; simpler stores,
    such as the in-memory test store, leave it to `search` plus a field-by-field check)."""

    def keyword_fields(self, keyword: str) -> list[tuple[str, list[str]]]:
        """(key, matched top-level fields) of every unit `search(keyword)` returns, same order."""


@dataclass(frozen=True, slots=True)
class VectorHit:
    """One nearest-neighbour hit: the embedding id (`X` or `X#chunk_i`), cosine, and metadata.

    `metadata` is `{"type", "identifier", "file_path", "key"}` of the unit the vector belongs to.
    """

    embedding_id: str
    score: float
    metadata: dict[str, Any]


def unit_scores(hits: Iterable[VectorHit]) -> list[tuple[str, float]]:
    """(unit key, score) of each hit, in order (the embedding id where a hit has no key): what
    code search's vector leg reads of a `search` (`search_units`)."""
    return [(str(h.metadata.get("key") or h.embedding_id), h.score) for h in hits]


class VectorStore(Protocol):
    dimension: int

    def search(
        self,
        vector: np.ndarray,
        limit: int,
        types: Collection[str] | None = None,
        keys: Collection[str] | None = None,
    ) -> list[VectorHit]:
        """Top `limit` hits by cosine, ordered by (−score, embedding_id).

        `types` keeps only vectors of units of those types; `keys` only vectors of those unit
        storage keys. Both filters apply before the limit (exhaustive over the eligible set).
        """

    def count(self) -> int: ...


class GraphStore(Protocol):
    def dependencies_of(self, identifier: str, via: str | None = None) -> list[str]:
        """Public identifiers `identifier` depends on (union over its typed variants), sorted."""

    def dependents_of(self, identifier: str, via: str | None = None) -> list[str]:
        """Public identifiers that depend on `identifier`, sorted."""

    def pagerank(self) -> dict[str, float]:
        """PageRank per public identifier (d 0.85, 20 iterations, Ruby §1.9)."""
