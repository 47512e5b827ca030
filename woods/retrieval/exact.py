"""Exact matches for queries that *are* a name or a path — woods going beyond the Ruby gem.

Why: the Ruby classifier sends a bare `TokenBucketLimiter` or `app/models/invoice.rb` to the
vector strategy (no intent word matches), and a vector of one identifier or path is a poor probe:
on the fixtures the named unit often ranked below its neighbours. When the whole query is one
identifier-shaped or path-shaped token that names units of the index, those units lead the result
list (source `exact`), and the classified strategy fills the rest. Queries with spaces — every
query of the Ruby bench — never take this path, so parity is untouched.
"""

from __future__ import annotations

import re
from typing import Protocol

from woods.store.contracts import UnitLookup, UnitReader
from woods.store.contracts import UnitRow as Record

# A query of one token made of identifier and path characters (no spaces).
_TOKEN = re.compile(r"[\w$@!?=<>+*%&|^~\[\]-]+(?:(?:::|#|\.|/|:)[\w$@!?=<>+*%&|^~\[\]-]+)*[/]?", re.UNICODE)
# A name shared by more units than this says little about which one is meant: leave it to ranking.
MAX_EXACT = 5


class ExactLookup(UnitReader, UnitLookup, Protocol):
    """What exact-name promotion reads: units by identifier, last-segment name and file."""


def exact_matches(metadata: ExactLookup, query: str, *, by_name: bool = True) -> list[Record]:
    """Records the query names exactly: a file path (its outermost units), a full identifier, or
    (`by_name`) the last segment of identifiers (at most MAX_EXACT, by PageRank). Empty when none
    or too many. Code search ranks last-segment names itself (`by_name=False`)."""
    text = query.strip()
    if not text or not _TOKEN.fullmatch(text):
        return []
    if "/" in text and not text.startswith("/"):
        records = _file_units(metadata, text)
        if records:
            return records
    named: list[Record] = metadata.find_by_identifier(text)
    if named:
        return named[:MAX_EXACT]
    if not by_name or any(sep in text for sep in ("::", "#", ".", "/")):
        return []
    same_name: list[Record] = metadata.find_by_name(text, limit=MAX_EXACT + 1)
    return same_name if len(same_name) <= MAX_EXACT else []


def _file_units(metadata: ExactLookup, path: str) -> list[Record]:
    """The file's units by nesting depth, then line: a namespace wrapper, then what it wraps."""
    files = metadata.files_matching(path.rstrip("/"))
    if len(files) != 1:
        return []
    units = metadata.units_in_file(files[0])  # ordered by (line_start, -line_end): containers first

    def depth(record: Record) -> int:
        return sum(
            1
            for other in units
            if other is not record
            and other["line_start"] <= record["line_start"]
            and record["line_end"] <= other["line_end"]
            and (other["line_start"], -other["line_end"]) < (record["line_start"], -record["line_end"])
        )

    ordered = sorted(units, key=lambda r: (depth(r), r["line_start"], r["id"]))
    return ordered[:MAX_EXACT]
