"""Search questions over one pinned generation: a ranked search, an issue text's localisation,
a token-budgeted context — with staleness, a moved root and names no unit has said in warnings.

Why here and not in the retrieval core: the core ranks; these add what only an open index on disk
knows (which files changed since it was built, the repository a PostgreSQL unit belongs to, the
lines of each unit that match) and shape the library's answers (`woods.api.answers`). `Index`
checks the arguments and pins the generation; every function here reads that generation only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from woods.api.answers import ContextSource, LocalizeResult, Retrieval, SearchHit, SearchResult

if TYPE_CHECKING:
    from woods.api.generations import WarmGeneration
    from woods.filters import FileFilter
    from woods.resolve import NameTable
    from woods.store.index import IndexStores
    from woods.store.metadata import SQLiteMetadataStore
    from woods.store.postgres import PostgresMetadataStore, PostgresStores

# How `search` reads its query: decide by its shape, a question, or an issue text (woods.localize).
READ_AS = ("auto", "query", "issue")


def looks_like_issue(text: object) -> bool:
    """Whether a query is a pasted issue, log or trace (woods.retrieval.evidence.looks_like_issue);
    anything that is not text is left to the search's own validation."""
    if not isinstance(text, str) or not might_be_issue(text):
        return False
    from woods.retrieval.evidence import looks_like_issue as reads_as_issue

    return reads_as_issue(text)


def might_be_issue(text: str) -> bool:
    """The cheap test before the evidence reader is imported (its regular expressions cost a cold
    search 60+ ms): a text reads as an issue only when it has several lines, a `:` (an error line,
    a frame, a test id) or a test runner's FAIL mark — a one-line question has none of them
    (tests/test_localize.py checks that every text this rejects, `looks_like_issue` rejects too)."""
    return "\n" in text or ":" in text or "FAIL" in text


def search(
    gen: WarmGeneration,
    query: str,
    *,
    limit: int,
    strategy: str | None,
    types: Sequence[str] | None,
    exclude_types: Sequence[str] | None,
    path_prefixes: Sequence[str] | None,
    mode: str | None,
    budget: int,
    profile: str | None,
    files: FileFilter | None,
) -> SearchResult:
    """Ranked units for `query` with their snippets, stale ones marked (`Index.search`)."""
    from woods.freshness import root_moved_warning, stale_files, stale_warning

    result = gen.retrieve(
        query,
        mode=mode,
        limit=limit,
        strategy=strategy,
        types=types,
        exclude_types=exclude_types,
        path_prefixes=path_prefixes,
        budget=budget,
        profile=profile,
        files=files,
        context_limit=limit,
    )
    hits = [_with_repo(gen.stores, SearchHit.from_entry(entry)) for entry in result.candidates]
    hits = _with_snippets(gen.stores.metadata, query, hits)
    stale = stale_files(gen.stores, gen.root, (h.file_path for h in hits if h.file_path))
    moved = root_moved_warning(gen.root, gen.stores.manifest.root)
    named = _missing_name_warnings(gen.stores, query, gen.names)
    return SearchResult(
        query=str(query),
        hits=tuple(replace(h, stale=True) if h.file_path in stale else h for h in hits),
        mode=result.mode,
        strategy=result.strategy,
        budget=int(result.budget),
        tokens_used=int(result.tokens_used),
        context=result.context,
        sources=tuple(ContextSource.from_attribution(s) for s in result.sources),
        classification=result.classification,
        type_rank_context=result.type_rank_context,
        applied_scope=result.applied_scope,
        warnings=(*named, *result.warnings, *moved, *stale_warning(stale)),
        trace=result.trace,
        result=result,
    )


def localize(gen: WarmGeneration, text: str, *, limit: int, mode: str) -> LocalizeResult:
    """Which files and units an issue text points at, with the evidence (`Index.localize`)."""
    from woods.freshness import root_moved_warning

    localized = gen.retriever(mode, "code").localize(text, limit=limit)
    moved = root_moved_warning(gen.root, gen.stores.manifest.root)
    found = localized.localization
    return LocalizeResult(str(text), found.files, found.units, dict(found.found), found.terms, tuple(moved))


def localized_search(
    gen: WarmGeneration, query: str, *, limit: int, budget: int, mode: str, warnings: tuple[str, ...]
) -> SearchResult:
    """`search` for an issue text: `localize`'s units as the hits, its files in `localization`."""
    from woods.freshness import root_moved_warning, stale_files, stale_warning

    localized = gen.retriever(mode, "code").localize(query, budget=budget, limit=limit)
    result = localized.result
    why = {u.key: u.evidence for u in localized.localization.units}
    hits = [
        replace(_with_repo(gen.stores, SearchHit.from_entry(entry)), evidence=why.get(entry.key, ()))
        for entry in result.candidates[:limit]
    ]
    stale = stale_files(gen.stores, gen.root, (h.file_path for h in hits if h.file_path))
    moved = root_moved_warning(gen.root, gen.stores.manifest.root)
    return SearchResult(
        query=str(query),
        hits=tuple(replace(h, stale=True) if h.file_path in stale else h for h in hits),
        mode=result.mode,
        strategy=result.strategy,
        budget=int(result.budget),
        tokens_used=int(result.tokens_used),
        context=result.context,
        sources=tuple(ContextSource.from_attribution(s) for s in result.sources),
        classification=result.classification,
        type_rank_context=None,
        applied_scope=None,
        warnings=(*warnings, *moved, *stale_warning(stale)),
        trace=result.trace,
        result=result,
        localization=localized.localization,
    )


def retrieve(
    gen: WarmGeneration,
    query: str,
    *,
    budget: int,
    types: Sequence[str] | None,
    exclude_types: Sequence[str] | None,
    profile: str | None,
    files: FileFilter | None,
) -> Retrieval:
    """The assembled, token-budgeted context for `query` (`Index.retrieve`)."""
    result = gen.retrieve(query, budget=budget, types=types, exclude_types=exclude_types, profile=profile, files=files)
    return Retrieval(
        query=str(query),
        context=result.context,
        sources=tuple(ContextSource.from_attribution(s) for s in result.sources),
        strategy=result.strategy,
        tokens_used=int(result.tokens_used),
        budget=int(result.budget),
        result=result,
    )


def _with_repo(stores: IndexStores | PostgresStores, hit: SearchHit) -> SearchHit:
    """The hit with the repository it comes from, for a PostgreSQL store."""
    repo = stores.repo_of(hit.key)
    return hit if repo is None else replace(hit, repo=repo)


def file_filter(globs: Sequence[str] | None, langs: Sequence[str] | None) -> FileFilter | None:
    """`woods.filters.file_filter`, imported only by a question that filters (None otherwise)."""
    if globs is None and langs is None:
        return None
    from woods.filters import file_filter as selected

    return selected(globs, langs)


def _with_snippets(
    metadata: SQLiteMetadataStore | PostgresMetadataStore, query: str, hits: list[SearchHit]
) -> list[SearchHit]:
    """The hits with their best-matching lines (one batch read of the units' stored text)."""
    from woods.snippets import snippet, snippet_terms

    if not hits:
        return hits
    records = metadata.find_batch(h.key for h in hits)
    terms = snippet_terms(query)
    shown = []
    for hit in hits:
        record = records.get(hit.key)
        source = None if record is None else record.get("source_code")
        start = hit.line_start if hit.line_start is not None else (1 if record is None else record.get("line_start", 1))
        lines = snippet(str(source), start, terms) if isinstance(source, str) and source else ()
        shown.append(replace(hit, snippet=lines))
    return shown


def _missing_name_warnings(
    stores: IndexStores | PostgresStores, query: str, names: Callable[[], NameTable]
) -> tuple[str, ...]:
    """`no unit named …; closest: …` for a query that is one name (a symbol) no unit has."""
    from woods.retrieval.query_analysis import analyze

    analysis = analyze(query)
    if not analysis.is_symbol or not analysis.names:
        return ()
    if stores.metadata.find_by_name(analysis.names[0], limit=1):
        return ()  # the common case, answered without loading resolve's name index
    from woods.resolve import missing_name_warning

    warning = missing_name_warning(stores, analysis.names[0], names)
    return () if warning is None else (warning,)


__all__ = ["READ_AS", "file_filter", "localize", "localized_search", "looks_like_issue", "might_be_issue",
           "retrieve", "search"]
