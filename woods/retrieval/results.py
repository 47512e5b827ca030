"""What every ranking profile's answer is made of: the validated query, the user-facing list of
ranked units, the structural banner, exact-name promotion, type filtering and the applied scope.

Why one module: the code profile (`woods.retrieval.retriever`) and the Ruby-parity profile
(`woods.retrieval.ruby`) rank differently but answer in one shape (`RetrievalResult`), so an
interface renders either without knowing which ran. These are small pure functions over the
candidates and the unit records they read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from woods import limits
from woods.errors import InvalidQueryError
from woods.retrieval.candidates import AppliedScope, AssembledContext, Candidate, RankedEntry, RetrievalTrace
from woods.retrieval.exact import ExactLookup, exact_matches
from woods.retrieval.scope import Scope
from woods.store.contracts import UnitReader, UnitRow
from woods.store.identity import public_identifier, strip_chunk

MAX_QUERY_BYTES = limits.MAX_QUERY_BYTES  # the bound every interface shares (rationale in woods.limits)
# Types the structural banner counts, in this order: the Rails application's building blocks.
STRUCTURAL_TYPES = ("model", "controller", "service", "job", "mailer", "component", "graphql")
# What an entry shows of its unit: a candidate carrying all of them needs no record read.
_ENTRY_FIELDS = ("identifier", "type", "file_path", "line_start", "line_end")


def validate_query(query: object) -> str:
    """The query as a non-blank string of at most MAX_QUERY_BYTES UTF-8 bytes, else InvalidQueryError."""
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise InvalidQueryError("query cannot be blank")
    size = len(query.encode("utf-8", "surrogatepass"))
    if size > MAX_QUERY_BYTES:
        raise InvalidQueryError(f"query exceeds max size of {MAX_QUERY_BYTES} bytes (got {size})")
    return query


def structural_banner(metadata: UnitReader) -> str | None:
    """`Codebase: N searchable entries (…)` or None for an empty store. The parenthesis lists the
    structural types present (Rails models, controllers …); a codebase with none of them gets no
    parenthesis rather than an empty one."""
    total = metadata.count()
    if total == 0:
        return None
    counts = metadata.type_counts()
    parts = [f"{counts[t]} {t} entries" for t in STRUCTURAL_TYPES if counts.get(t, 0) > 0]
    listed = f" ({', '.join(parts)})" if parts else ""
    return (
        f"Codebase: {total} searchable entries{listed}. "
        "Entries include per-chunk rows for chunked units; see `structure` for canonical unit counts."
    )


_C = TypeVar("_C", bound=Candidate)


def first_units(candidates: Sequence[_C], limit: int | None) -> list[_C]:
    """The candidates of the first `limit` distinct units in rank order (a unit's chunks stay with
    it); all of them when `limit` is None."""
    if limit is None:
        return list(candidates)
    kept: list[_C] = []
    seen: set[str] = set()
    for candidate in candidates:
        unit = strip_chunk(candidate.identifier)
        if unit not in seen:
            if len(seen) >= limit:
                continue
            seen.add(unit)
        kept.append(candidate)
    return kept


def candidate_type(metadata: UnitReader, candidate: Candidate) -> str:
    """The unit type a candidate carries, else the one its record says ('' when neither does)."""
    inline = candidate.metadata.get("type") if candidate.metadata else None
    if inline is not None:
        return str(inline)
    record = metadata.find(strip_chunk(candidate.identifier))
    value = record.get("type") if record else None
    return "" if value is None else str(value)


def filter_by_type(
    metadata: UnitReader, candidates: Sequence[Candidate], type_list: tuple[str, ...], excluded: tuple[str, ...]
) -> list[Candidate]:
    """The candidates of the `type_list` types (when given), else of every type not `excluded`."""
    if type_list:
        return [c for c in candidates if candidate_type(metadata, c) in type_list]
    return [c for c in candidates if candidate_type(metadata, c) not in excluded]


def promote_exact(
    metadata: ExactLookup,
    query: str,
    ranked: list[Candidate],
    type_list: tuple[str, ...],
    excluded: tuple[str, ...],
    by_name: bool = True,
) -> list[Candidate]:
    """Units the query names exactly lead the list (see woods.retrieval.exact); the ranked
    candidates follow without those units. Scores stay comparable: exact hits score 1.0,
    the ceiling of the Ruby ranker's weighted score (code search scores above it keep theirs)."""
    ceiling = max([1.0, *(c.score for c in ranked)])
    exact = [
        Candidate(identifier=str(r["id"]), score=ceiling, source="exact", metadata=r)
        for r in exact_matches(metadata, query, by_name=by_name)
    ]
    exact = filter_by_type(metadata, exact, type_list, excluded)
    if not exact:
        return ranked
    keys = {c.identifier for c in exact}
    return [*exact, *(c for c in ranked if strip_chunk(c.identifier) not in keys)]


def ranked_entries(metadata: UnitReader | None, candidates: Iterable[Candidate], limit: int) -> tuple[RankedEntry, ...]:
    """The user-facing list: one entry per unit (its best-ranked chunk; the list is already in
    rank order), at most `limit`. Chunks collapse here exactly as the assembler collapses them.
    A candidate lacking a shown field has its record read from `metadata` (when given)."""
    entries: list[RankedEntry] = []
    seen: set[str] = set()
    for candidate in candidates:
        base = strip_chunk(candidate.identifier)
        if base in seen:
            continue
        seen.add(base)
        if len(entries) >= limit:
            break
        record: dict[str, object] | None = dict(candidate.metadata) if candidate.metadata else None
        if (record is None or any(name not in record for name in _ENTRY_FIELDS)) and metadata is not None:
            stored: UnitRow | None = metadata.find(strip_chunk(candidate.identifier))
            record = dict(stored) if stored is not None else record
        shown = record or {}
        identifier = shown.get("identifier") or public_identifier(strip_chunk(candidate.identifier))
        unit_type = shown.get("type")
        entries.append(
            RankedEntry(
                identifier=str(identifier),
                key=candidate.identifier,
                type="" if unit_type is None else str(unit_type),
                score=candidate.score,
                source=candidate.source,
                sources=candidate.found_by(),
                matched_fields=candidate.matched_fields,
                file_path=_optional_str(shown.get("file_path")),
                line_start=_optional_int(shown.get("line_start")),
                line_end=_optional_int(shown.get("line_end")),
            )
        )
    return tuple(entries)


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


def _optional_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def applied_scope(scope: Scope | None, trace: RetrievalTrace, assembled: AssembledContext) -> AppliedScope | None:
    """What a scoped request applied and how it went (None without a scope)."""
    if scope is None:
        return None
    if not scope.keys:
        outcome = "empty_scope"
    elif trace.ranked_count == 0:
        outcome = "no_match"
    else:
        outcome = "matched"
    return AppliedScope(
        packages=scope.packages,
        source_paths=scope.source_paths,
        eligible_units=len(scope.keys),
        outcome=outcome,
        candidate_count=trace.candidate_count,
        returned_units=len(assembled.sources),
        globs=scope.files.globs if scope.files is not None else (),
        langs=scope.files.langs if scope.files is not None else (),
    )


__all__ = [
    "MAX_QUERY_BYTES",
    "STRUCTURAL_TYPES",
    "ExactLookup",
    "applied_scope",
    "candidate_type",
    "filter_by_type",
    "first_units",
    "promote_exact",
    "ranked_entries",
    "structural_banner",
    "validate_query",
]
