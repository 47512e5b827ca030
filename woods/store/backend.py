"""Which backend a store spec names, and the two things every caller needs from one: open it for
reading (`open_stores`) and build into it (`target_for`).

Why: a store is a directory (`.woods/`, SQLite + FAISS) or a PostgreSQL URL
(`postgresql://…`, `woods.store.postgres`). Everything above the stores — retrieval, resolve,
freshness, `woods.Index`, the index builder — receives the opened stores or a build target and
never asks which backend it has; this module is the one place that decides. psycopg is imported
only when a URL is given.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from woods.errors import InputError
from woods.store import index as layout
from woods.store.pg_connect import check_repo_name, is_server_url

if TYPE_CHECKING:
    from woods.store.index import IndexStores, ReusableVectors
    from woods.store.postgres import PostgresStores

StoreSpec = str | os.PathLike[str]


def open_stores(spec: StoreSpec, repo: str | None = None, *, exact: bool = False) -> IndexStores | PostgresStores:
    """The published index `spec` names, opened read-only: `IndexStores` for a directory,
    `PostgresStores` for a PostgreSQL URL (`repo` selects one repository; None: the only one, or
    all of them together). `exact` makes PostgreSQL vector searches exact scans (the local
    backend always is)."""
    if is_server_url(spec):
        from woods.store.postgres import open_postgres

        return open_postgres(str(spec), repo, exact=exact)
    if repo is not None:
        raise InputError("--repo selects a repository of a PostgreSQL store; a .woods directory holds one repository")
    from woods.store.index import IndexStores

    return IndexStores.open(Path(spec))


class StoreTarget(Protocol):
    """Where the index builder writes: a private build directory, then a publish.

    Guarantees every implementation keeps: `lock` excludes every other writer of the same index
    (LockTimeoutError after `wait` seconds) and is released when the holder dies; `publish` is
    atomic (readers see the previous generation or the new one, never a mix); `cleanup` never
    removes the published generation, the newest previous one, or one a reader holds.
    """

    def describe(self) -> str: ...

    def prepare(self) -> None: ...

    def lock(self, wait: float) -> AbstractContextManager[object]: ...

    def cleanup(self) -> None: ...

    def open_previous(self) -> IndexStores | PostgresStores: ...

    def open_reusable(self) -> ReusableVectors: ...

    def new_build_dir(self) -> Path: ...

    def publish(self, build: Path) -> str: ...


class LocalTarget:
    """A `.woods/` directory as a build target (`woods.store.index`: flock, CURRENT, generations)."""

    def __init__(self, store_dir: Path) -> None:
        self.store_dir = store_dir

    def describe(self) -> str:
        return str(self.store_dir)

    def prepare(self) -> None:
        self.store_dir.mkdir(parents=True, exist_ok=True)

    def lock(self, wait: float) -> AbstractContextManager[object]:
        return layout.StoreLock(self.store_dir, wait)

    def cleanup(self) -> None:
        layout.cleanup(self.store_dir)

    def open_previous(self) -> IndexStores:
        return layout.IndexStores.open(self.store_dir)

    def open_reusable(self) -> ReusableVectors:
        return layout.ReusableVectors.open(self.store_dir)

    def new_build_dir(self) -> Path:
        return layout.new_build_dir(self.store_dir)

    def publish(self, build: Path) -> str:
        return layout.publish(self.store_dir, build).name


def target_for(spec: Path | StoreTarget, repo: str | None = None) -> StoreTarget:
    """A build target: a directory's `LocalTarget`, or the given target unchanged."""
    if isinstance(spec, Path):
        return LocalTarget(spec)
    return spec


def server_target(url: str, repo: str) -> StoreTarget:
    """The PostgreSQL build target of repository `repo` at `url`."""
    from woods.store.pg_publish import PostgresTarget

    return PostgresTarget(url, check_repo_name(repo))


__all__ = ["LocalTarget", "StoreSpec", "StoreTarget", "is_server_url", "open_stores", "server_target", "target_for"]
