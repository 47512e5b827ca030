"""The answers to search questions: ranked hits, the assembled context, an issue's localisation.

Why frozen dataclasses with `to_dict()`: every interface renders the same answer — `woods search
--json`, the MCP tools and Python callers read these objects, and the dicts are exactly what the
JSON outputs hold (without `schema_version`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from woods.store.identity import strip_chunk

if TYPE_CHECKING:
    from woods.retrieval.candidates import (
        AppliedScope,
        Classification,
        RankedEntry,
        RetrievalResult,
        RetrievalTrace,
        SourceAttribution,
        TypeRankEntry,
    )
    from woods.retrieval.localize import Localization, LocalizedFile, LocalizedUnit
    from woods.snippets import SnippetLine


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked search result: the unit's public identifier, its storage key and where it lives.

    `key` is the unit's storage key (what `lookup` takes); `chunk` is the embedding id when a chunk
    of a long unit ranked (`<key>#chunk_N`), else None. `source` is the representative strategy,
    `sources` every strategy that found it (vector, keyword, graph, direct, exact, lexical, …).
    `stale` is True when the unit's file changed on disk since indexing. `repo` names the
    repository of a PostgreSQL store the unit belongs to (None for a `.woods` directory).
    `snippet` holds the one to three lines of the unit that match the query best, numbered as in
    the file, with the spans of the query's words (`woods.snippets`); `line` is the line a
    `path:line` reference points at (the best-matching one, else the unit's first line).
    """

    identifier: str
    key: str
    type: str
    score: float
    file_path: str | None
    line_start: int | None
    line_end: int | None
    sources: tuple[str, ...]
    matched_fields: tuple[str, ...] | None = None
    source: str = ""
    chunk: str | None = None
    stale: bool = False
    repo: str | None = None
    # Why an issue localisation put the unit here (the frame, name, message … that matched).
    evidence: tuple[str, ...] = ()
    snippet: tuple[SnippetLine, ...] = ()

    @property
    def line(self) -> int | None:
        from woods.snippets import best_line

        return best_line(self.snippet) or self.line_start

    @classmethod
    def from_entry(cls, entry: RankedEntry) -> SearchHit:
        key = strip_chunk(entry.key)
        return cls(
            identifier=entry.identifier,
            key=key,
            type=entry.type,
            score=float(entry.score),
            file_path=entry.file_path,
            line_start=entry.line_start,
            line_end=entry.line_end,
            sources=tuple(entry.sources),
            matched_fields=entry.matched_fields,
            source=entry.source,
            chunk=entry.key if entry.key != key else None,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "identifier": self.identifier,
            "key": self.key,
            "chunk": self.chunk,
            "type": self.type,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "score": self.score,
            "source": self.source,
            "sources": list(self.sources),
            "snippet": [line.to_dict() for line in self.snippet],
        }
        if self.matched_fields is not None:
            data["matched_fields"] = list(self.matched_fields)
        if self.stale:
            data["stale"] = True
        if self.repo is not None:
            data["repo"] = self.repo
        if self.evidence:
            data["evidence"] = list(self.evidence)
        return data


@dataclass(frozen=True, slots=True)
class ContextSource:
    """A unit whose text is in an assembled context, in context order.

    `truncated` is True when its block was cut to fit the budget; `matched_fields` are the fields
    a lexical search matched (None otherwise).
    """

    identifier: str
    type: str | None
    score: float
    file_path: str | None
    truncated: bool = False
    matched_fields: tuple[str, ...] | None = None

    @classmethod
    def from_attribution(cls, source: SourceAttribution) -> ContextSource:
        return cls(
            source.identifier, source.type, float(source.score), source.file_path, bool(source.truncated),
            source.matched_fields,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "identifier": self.identifier,
            "type": self.type,
            "score": self.score,
            "file_path": self.file_path,
            "truncated": self.truncated,
        }
        if self.matched_fields is not None:
            data["matched_fields"] = list(self.matched_fields)
        return data


@dataclass(frozen=True, slots=True)
class SearchResult(Sequence[SearchHit]):
    """The answer to a search: the ranked hits — this object *is* that sequence (iterate it, take
    `len`, index it) — plus everything an interface prints about how they were found.

    Why both: `woods search` shows the strategy, classification, trace, warnings and the assembled
    context next to the list; keeping them on the result means the CLI, the MCP server and Python
    callers read one answer instead of re-running pipeline stages. `warnings` includes the
    staleness warning when hits come from files changed since indexing. `to_dict()` is the JSON
    object `woods search --json` prints (without `schema_version`). Equality ignores the trace
    (it carries timings).
    """

    query: str
    hits: tuple[SearchHit, ...]
    mode: str
    strategy: str
    budget: int
    tokens_used: int
    context: str = field(repr=False)
    sources: tuple[ContextSource, ...]
    classification: Classification
    type_rank_context: Mapping[str, TypeRankEntry] | None
    applied_scope: AppliedScope | None
    warnings: tuple[str, ...]
    trace: RetrievalTrace = field(compare=False)
    result: RetrievalResult = field(repr=False, compare=False)
    # Set when the query was read as an issue text (a trace, a log, a bug report): its files with
    # the evidence behind them (`Index.localize`); the hits are then its units.
    localization: Localization | None = None

    @overload
    def __getitem__(self, index: int) -> SearchHit: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[SearchHit, ...]: ...

    def __getitem__(self, index: int | slice) -> SearchHit | tuple[SearchHit, ...]:
        return self.hits[index]

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.hits)

    def to_dict(self, *, context: bool = True) -> dict[str, Any]:
        """The search as JSON; `context=False` leaves the assembled context out."""
        data: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "strategy": self.strategy,
            "budget": self.budget,
            "tokens_used": self.tokens_used,
        }
        if context:
            data["context"] = self.context
        data.update(
            {
                "sources": [s.to_dict() for s in self.sources],
                "results": [h.to_dict() for h in self.hits],
                "classification": self.classification.to_dict(),
                "trace": self.trace.to_dict(),
                "type_rank_context": (
                    None
                    if self.type_rank_context is None
                    else {t: e.to_dict() for t, e in self.type_rank_context.items()}
                ),
                "applied_scope": None if self.applied_scope is None else self.applied_scope.to_dict(),
                "warnings": list(self.warnings),
            }
        )
        if self.localization is not None:
            data["localization"] = self.localization.to_dict()
        return data


@dataclass(frozen=True, slots=True)
class Retrieval:
    """A token-budgeted context for a question, ready to paste into a prompt.

    `stale` is the Ruby gem's stale-index signal: units were ranked but none of them could be
    read back (the metadata lost them), so the context is empty for a reason other than "no
    match". `result` is the retrieval core's full `RetrievalResult` (trace, candidates, …).
    """

    query: str
    context: str
    sources: tuple[ContextSource, ...]
    strategy: str
    tokens_used: int
    budget: int
    result: RetrievalResult = field(repr=False, compare=False)

    @property
    def stale(self) -> bool:
        trace = self.result.trace
        return trace.ranked_count > 0 and trace.skipped_missing_metadata > 0 and not self.sources

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "context": self.context,
            "sources": [s.to_dict() for s in self.sources],
            "strategy": self.strategy,
            "tokens_used": self.tokens_used,
            "budget": self.budget,
        }


@dataclass(frozen=True, slots=True)
class LocalizeResult:
    """Where an issue text points: files (best first) with their units and the evidence behind
    each (`Index.localize`, the MCP `localize` tool, `woods search --as issue`). `found` counts
    what was read out of the text by kind; `terms` are the words the search leg asked with.
    `to_dict()` is the JSON the interfaces emit."""

    query: str
    files: tuple[LocalizedFile, ...]
    units: tuple[LocalizedUnit, ...]
    found: dict[str, int]
    terms: tuple[str, ...]
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query, "files": [f.to_dict() for f in self.files], "found": dict(self.found),
            "terms": list(self.terms), "warnings": list(self.warnings),
        }


__all__ = ["ContextSource", "LocalizeResult", "Retrieval", "SearchHit", "SearchResult"]
