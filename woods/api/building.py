"""Building an index: `build_index`, the one way an index is built (what `woods index`, the MCP
server's `reindex` and `Index.update()` run), and the embedders that rebuild an index as it is.

Why here, above the index builder (`woods.indexing`): the builder takes a build target and
embedding providers; this module turns what a caller says (a repository path, a store directory
or a PostgreSQL URL, options) into those, checks it first (bad input never damages an existing
index), and adds what only a repository build knows (the store's `.gitignore`, why an index is
empty).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods.api.validation import validate_positive
from woods.errors import InputError
from woods.limits import DEFAULT_LOCK_WAIT_SECONDS, DEFAULT_MAX_FILE_BYTES

if TYPE_CHECKING:
    from woods.embedding.provider import EmbeddingProvider
    from woods.indexing import IndexSummary, Progress


def build_index(
    path: str | os.PathLike[str],
    *,
    store: str | os.PathLike[str] | None = None,
    repo: str | None = None,
    full: bool = False,
    allow_purge: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    wait: float = DEFAULT_LOCK_WAIT_SECONDS,
    progress: Progress | None = None,
    workers: int | None = None,
    provider_factory: Callable[[], EmbeddingProvider] | None = None,
    contextual: bool | None = None,
    contextual_factory: Callable[[], EmbeddingProvider] | None = None,
    vectors: bool = True,
    should_stop: Callable[[], bool] | None = None,
    on_searchable: Callable[[IndexSummary], None] | None = None,
) -> IndexSummary:
    """Index the repository at `path` into `store` (default `path/.woods`) and publish it.

    Phase 1 publishes the units with the base embedder's vectors (`provider_factory`, default
    woods's static model) and calls `on_searchable(summary)`: searchable, hybrid, in seconds.
    Phase 2 adds contextual vectors (MiniLM) and switches the index to them: `contextual` True asks
    for it (the `contextual` extra must be installed), False leaves it out, None (default) runs it
    where the extra is installed and the base embedder is the default one
    (`woods.embedding.select.contextual_factory`); `contextual_factory` supplies another
    contextual embedder (tests). `vectors=False` leaves phase 2 for later (a later run, or
    `Index.update(background=True)`); `should_stop()` is asked between its batches
    (EmbeddingCancelled; finished batches are kept for the next run).

    `store` may be a PostgreSQL URL (`postgresql://…`): the repository is then published there as
    the collection `repo` (default: the name of the repository's directory).

    Incremental unless `full`: unchanged files are not parsed again and unchanged code is not
    embedded again. `allow_purge` lets a run remove over 30% of the indexed units. `wait` is how
    long to wait for another indexer's lock. `workers` parse processes (None: one per CPU, at most
    4; a script passing more than 1 needs the `if __name__ == "__main__":` guard).
    This is what `woods index`, the MCP server's `reindex` and `Index.update()` run.
    """
    from woods.embedding.select import contextual_factory as choose_contextual
    from woods.embedding.select import index_provider
    from woods.indexing import index_repository, parse_workers
    from woods.store.backend import StoreTarget, is_server_url, server_target
    from woods.store.index import store_dir_for

    root = Path(path)
    if not root.exists():
        raise InputError(f"path not found: {root}")
    if not root.is_dir():
        raise InputError(f"not a directory: {root}; pass a repository directory")
    max_file_bytes = validate_positive("max_file_bytes", max_file_bytes)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
        raise InputError(f"wait must be a number of seconds >= 0, got {wait!r}")
    count = parse_workers() if workers is None else validate_positive("workers", workers)
    factory = provider_factory if provider_factory is not None else index_provider
    second = contextual_factory
    if second is None:
        second = choose_contextual(contextual, default_base=provider_factory is None)
    elif contextual is False:
        raise InputError("contextual=False and a contextual_factory contradict each other; pass one")
    target: Path | StoreTarget
    if is_server_url(store):
        target = server_target(str(store), repo if repo is not None else root.resolve().name)
    elif repo is not None:
        raise InputError("--repo names a repository of a PostgreSQL store; pass --store postgresql://…")
    else:
        target = store_dir_for(root, None if store is None else Path(store))
    notes = ignore_store_in_git(target) if isinstance(target, Path) else []
    summary = index_repository(
        root, target, factory, contextual_factory=second, max_file_bytes=max_file_bytes, progress=progress,
        wait=float(wait),
        full=full, allow_purge=allow_purge, workers=count, vectors=vectors, should_stop=should_stop,
        on_searchable=on_searchable,
    )
    empty = empty_index_warning(root, summary)
    summary.warnings.extend([*notes, *([empty] if empty else [])])
    return summary


# What `.woods/.gitignore` holds: everything in the store is woods' own output, never a commit.
STORE_GITIGNORE = "# woods' index: generated, never committed\n*\n"


def ignore_store_in_git(store_dir: Path) -> list[str]:
    """Make git ignore the store: `STORE/.gitignore` holding `*` (written once, left alone after).
    A store woods cannot write is reported by the build itself; here it is only a warning."""
    marker = store_dir / ".gitignore"
    try:
        store_dir.mkdir(parents=True, exist_ok=True)
        if not marker.exists():
            marker.write_text(STORE_GITIGNORE, encoding="utf-8")
    except OSError as exc:
        return [f"could not write {marker}: {exc.strerror or exc}; add {store_dir.name}/ to .gitignore yourself"]
    return []


def empty_index_warning(root: Path, summary: IndexSummary) -> str | None:
    """Why an index holds no file, or None when it holds some: an empty directory, or what every
    entry was skipped for (unsupported, gitignored, binary …, largest first)."""
    if summary.files:
        return None
    if not summary.skipped:
        return f"indexed nothing: {root} holds no files"
    total = sum(summary.skipped.values())
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(summary.skipped.items(),
                                                                          key=lambda item: (-item[1], item[0])))
    return (
        f"indexed nothing: no source or document file woods reads under {root}; all {total} entries were "
        f"skipped ({reasons}) — docs/cli.md#woods-index says what each reason means"
    )


def default_base() -> EmbeddingProvider:
    """The default base embedder (`woods.embedding.select.index_provider`), built when asked."""
    from woods.embedding.select import index_provider

    return index_provider()


def embedders_of(
    manifest: Mapping[str, Any],
) -> tuple[Callable[[], EmbeddingProvider] | None, Callable[[], EmbeddingProvider] | None]:
    """(base, contextual) provider factories that rebuild an index as it is: the base embedder is
    the one phase 1 used (a phase-2 generation records it as `vectors.base_embedder`; None means
    the default, also for an index of an earlier woods whose only vectors were MiniLM's); the
    contextual one is the embedder of a phase-2 generation, else the automatic choice
    (`woods.embedding.select.contextual_factory`) for an index on the default base."""
    from woods.embedding.select import (
        MINILM_MARKER,
        contextual_factory,
        is_default_base,
        provider_factory_for,
    )

    embedder = dict(manifest.get("embedder") or {})
    vectors = manifest.get("vectors") or {}
    recorded_base = vectors.get("base_embedder") if isinstance(vectors, Mapping) else None
    if recorded_base is not None:
        base_description = dict(recorded_base)
        second = provider_factory_for(embedder)
    else:
        base_description = {} if MINILM_MARKER in str(embedder.get("name", "")) else embedder
        second = None
    default = not base_description or is_default_base(base_description)
    base = None if default else provider_factory_for(base_description)
    if second is None:
        second = contextual_factory(None, default_base=default)
    return base, second


__all__ = ["STORE_GITIGNORE", "build_index", "default_base", "embedders_of", "empty_index_warning",
           "ignore_store_in_git"]
