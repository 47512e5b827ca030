"""The Ruby gem's keyword-search rules over unit records: which fields are searched, how a
record or a field reads as a haystack, which field names a search accepts.

Why here: both backends and the in-memory views (a scope's, the parity bench's) must match a
keyword exactly alike, so the rules live once, beside the store contract
(`woods.store.contracts`, where the protocols and rows are; their old names are re-exported here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from woods.store.contracts import GraphReader, RecordStore, UnitRow, VectorSearch
from woods.store.contracts import VectorHit as VectorHit
from woods.store.contracts import unit_scores as unit_scores

# A unit's stored record (the typed row of `woods.store.contracts`), under its old name.
Record = UnitRow

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


def record_haystack(record: Mapping[str, Any]) -> str:
    """The Ruby whole-record haystack: the record as JSON text, lowercased, bookkeeping fields left out."""
    visible = {k: v for k, v in record.items() if k not in UNSEARCHED_FIELDS}
    return json.dumps(visible, ensure_ascii=False, sort_keys=False).lower()


def field_haystack(value: Any) -> str | None:
    """The Ruby gem's field rule: strings raw, hashes/arrays as JSON text, others `str`, None never matches."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.lower()
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False).lower()
    return str(value).lower()


# The protocols and rows this module used to define live in woods.store.contracts; the names below
# are kept for callers of this module (the Ruby gem's three store interfaces).
MetadataStore = RecordStore
VectorStore = VectorSearch
GraphStore = GraphReader

__all__ = [
    "UNSEARCHED_FIELDS",
    "GraphStore",
    "MetadataStore",
    "Record",
    "VectorHit",
    "VectorStore",
    "field_haystack",
    "record_haystack",
    "unit_scores",
    "validate_search_fields",
]
