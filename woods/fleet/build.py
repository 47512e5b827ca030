"""`build_fleet`: many repositories indexed in parallel into one store, each published atomically.

Why: the PostgreSQL backend lets a team search many repositories as one index; building that
index one repository after another on one machine takes days for an organisation. A fleet run
hands each repository to a worker — a Ray task on a local Ray or a cluster, or a local process
without Ray (`woods.fleet.runners`) — which runs the single-repository pipeline on it
(`woods.fleet.job`): incremental, locked, published in one transaction. The driver only plans,
watches and reports.

Guarantees: every repository ends in exactly one state — published, up to date (its published
generation already matched the source: nothing written, nothing embedded), failed (the error says
why; the others go on) or interrupted (the run was stopped first); none is ever half-written or
published twice (`woods.fleet.job`). Re-running after an interruption resumes: finished
repositories come back up to date at the cost of a scan, and vectors already in a published
generation are reused.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from woods.errors import InputError
from woods.fleet.events import FleetEvent, FleetState
from woods.fleet.job import (
    FAILED,
    INTERRUPTED,
    PUBLISHED,
    UP_TO_DATE,
    FleetOptions,
    RepoOutcome,
    default_provider_factory,
)
from woods.fleet.plan import RepoSpec, largest_first, plan_fleet
from woods.fleet.runners import DEFAULT_MAX_RETRIES, make_runner

if TYPE_CHECKING:
    from woods.embedding.provider import EmbeddingProvider


class FleetProgress(Protocol):
    """Where a fleet run reports while it goes on (the CLI draws it on stderr; tests watch it)."""

    def update(self, state: FleetState) -> None: ...

    def finished(self, outcome: RepoOutcome, state: FleetState) -> None: ...


@dataclass
class FleetSummary:
    """What a fleet run did: one outcome per repository (in the order given), the runner, and
    totals. `exit_code` is 0 when every repository is published or up to date; else 130 when the
    run was interrupted, 2 when every failure was bad input, 1 otherwise."""

    store: str | None
    runner: str
    address: str | None
    workers: int
    repositories: list[RepoOutcome]
    seconds: float
    warnings: list[str] = field(default_factory=list)
    # The organisation's vector index refreshed after the run: generations added and removed,
    # rows added, seconds (`woods.store.pg_publish.refresh_org_vectors`); empty for local stores.
    org_index: dict[str, Any] = field(default_factory=dict)

    def count(self, status: str) -> int:
        return sum(1 for r in self.repositories if r.status == status)

    @property
    def exit_code(self) -> int:
        failed = [r for r in self.repositories if r.status == FAILED]
        if any(r.status == INTERRUPTED for r in self.repositories):
            return 130
        if not failed:
            return 0
        return 2 if all(r.exit_code == 2 for r in failed) else 1

    def totals(self) -> dict[str, Any]:
        done = [r for r in self.repositories if r.status in (PUBLISHED, UP_TO_DATE)]
        rows = sum(r.rows for r in done)
        publish = sum(r.publish_seconds for r in done)
        chunks = sum(r.chunks for r in done)
        written = sum(r.chunks for r in done if r.status == PUBLISHED)
        return {
            "repositories": len(self.repositories),
            PUBLISHED: self.count(PUBLISHED),
            UP_TO_DATE: self.count(UP_TO_DATE),
            FAILED: self.count(FAILED),
            INTERRUPTED: self.count(INTERRUPTED),
            "files": sum(r.files for r in done),
            "units": sum(r.units for r in done),
            "chunks": chunks,
            "embedded": sum(r.embedded for r in done),
            "rows": rows,
            "publish_seconds": round(publish, 3),
            # Rows per second of publishing (the COPY transactions), and the chunks of the
            # repositories published by this run over its wall time.
            "rows_per_publish_second": round(rows / publish, 1) if publish > 0 else None,
            "chunks_per_second": round(written / self.seconds, 1) if self.seconds > 0 else None,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "runner": self.runner,
            "ray_address": self.address,
            "workers": self.workers,
            "seconds": self.seconds,
            "totals": self.totals(),
            "org_index": self.org_index,
            "repositories": [r.to_dict() for r in self.repositories],
        }


class _Driver:
    """The sink a runner reports to: folds events into the state and tells `progress`."""

    def __init__(self, state: FleetState, progress: FleetProgress | None) -> None:
        self.state = state
        self.progress = progress

    def events(self, events: Sequence[FleetEvent]) -> None:
        for event in events:
            self.state.apply(event)
        if self.progress is not None:
            self.progress.update(self.state)

    def outcome(self, outcome: RepoOutcome) -> None:
        self.state.finish(outcome.name, outcome.status == FAILED, outcome.chunks, outcome.seconds)
        if self.progress is not None:
            self.progress.finished(outcome, self.state)


def build_fleet(
    repositories: Iterable[str | os.PathLike[str] | RepoSpec],
    *,
    store: str | None = None,
    workers: int | None = None,
    ray: bool | None = None,
    ray_address: str | None = None,
    full: bool = False,
    allow_purge: bool = False,
    max_file_bytes: int | None = None,
    wait: float | None = None,
    provider_factory: Callable[[], EmbeddingProvider] | None = None,
    contextual: bool | None = None,
    contextual_factory: Callable[[], EmbeddingProvider] | None = None,
    parse_workers: int = 1,
    checkouts: str | os.PathLike[str] | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    refresh_org_index: bool = True,
    progress: FleetProgress | None = None,
    should_stop: Callable[[], bool] | None = None,
    ray_temp_dir: str | None = None,
) -> FleetSummary:
    """Index `repositories` (`[NAME=]SOURCE` strings, paths or `RepoSpec`s: directories, or git
    URLs of mirrors that workers check out under `checkouts`) into `store` and publish each.

    `store` is a PostgreSQL URL — every repository a collection of that one store, named NAME
    (default: its directory's name) — or None: each repository into its own `.woods`.
    `workers` repositories run at once (default: one per CPU of the Ray cluster or machine).
    `ray` True runs on Ray (InputError when it is not installed), False in local processes,
    None (default) on Ray where it is installed; `ray_address` (else `RAY_ADDRESS`) joins a
    cluster instead of starting a local Ray. A worker that dies is retried up to `max_retries`
    times. `should_stop()` stops starting repositories (the running ones finish). After the run
    the store's organisation-wide vector index is brought up to the current generations (what a
    search over all repositories asks; `refresh_org_index=False` leaves it, and such a search then
    asks each repository not yet in it on its own).

    The other options are `build_index`'s, applied to every repository: incremental unless
    `full`; `provider_factory` / `contextual` / `contextual_factory` choose the embedders (the
    factories must be picklable: they run in the workers); `parse_workers` processes parse inside
    each job (and it takes that many CPUs of the cluster). Like any process pool, a script calling
    this without Ray needs the `if __name__ == "__main__":` guard.
    """
    from woods import limits
    from woods.embedding.select import contextual_factory as choose_contextual

    started = time.perf_counter()
    specs = plan_fleet(repositories)
    if store is not None and not _is_url(store):
        raise InputError("a fleet publishes into one PostgreSQL store (--store postgresql://…), or each repository "
                         "into its own .woods (no --store)")
    for name, value in (("workers", workers), ("parse_workers", parse_workers), ("max_file_bytes", max_file_bytes)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InputError(f"{name} must be a positive integer, got {value!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise InputError(f"max_retries must be an integer >= 0, got {max_retries!r}")
    wait = limits.DEFAULT_LOCK_WAIT_SECONDS if wait is None else wait
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
        raise InputError(f"wait must be a number of seconds >= 0, got {wait!r}")
    second = contextual_factory
    if second is None:
        second = choose_contextual(contextual, default_base=provider_factory is None)
    elif contextual is False:
        raise InputError("contextual=False and a contextual_factory contradict each other; pass one")
    sizes: dict[str, int] = {}
    if store is not None:
        sizes = _prepare_store(store, [s.name for s in specs])
    options = FleetOptions(
        store=store, provider_factory=provider_factory or default_provider_factory(), contextual_factory=second,
        full=full, allow_purge=allow_purge, max_file_bytes=max_file_bytes or limits.DEFAULT_MAX_FILE_BYTES,
        wait=float(wait), parse_workers=parse_workers, checkouts=None if checkouts is None else os.fspath(checkouts),
    )
    runner = make_runner(ray, workers, ray_address, max_retries=max_retries, ray_temp_dir=ray_temp_dir)
    try:
        ordered = largest_first(specs, sizes)
        driver = _Driver(FleetState.for_repos([s.name for s in ordered], runner.workers), progress)
        outcomes = runner.run(ordered, options, driver, should_stop or (lambda: False))
    finally:
        runner.close()
    org: dict[str, Any] = {}
    if store is not None and refresh_org_index:
        org = _refresh_org_index(store)
    by_name = {o.name: o for o in outcomes}
    final = []
    for spec in specs:
        outcome = by_name[spec.name]
        seen = driver.state.repos[spec.name].attempts
        final.append(replace(outcome, attempts=max(outcome.attempts, seen)) if seen else outcome)
    return FleetSummary(
        store=None if store is None else _redact(store), runner=runner.name, address=runner.address,
        workers=runner.workers, repositories=final, seconds=round(time.perf_counter() - started, 3), org_index=org,
    )


def _refresh_org_index(url: str) -> dict[str, Any]:
    """Bring the store's organisation-wide vector index up to the current generations (nothing
    to do when nothing was published: it is already up to date)."""
    from woods.store.pg_connect import connect
    from woods.store.pg_publish import refresh_org_vectors

    started = time.perf_counter()
    conn = connect(url)
    try:
        done: dict[str, Any] = dict(refresh_org_vectors(conn, url))
    finally:
        conn.close()
    done["seconds"] = round(time.perf_counter() - started, 3)
    return done


def _is_url(store: str) -> bool:
    from woods.store.pg_connect import is_server_url

    return is_server_url(store)


def _redact(url: str) -> str:
    from woods.store.pg_connect import redact

    return redact(url)


def _prepare_store(url: str, names: Sequence[str]) -> dict[str, int]:
    """Check the store once before any worker starts (a wrong URL or a missing extension is one
    error, not one per repository), create the woods tables, and return each already indexed
    repository's chunk count (the size `largest_first` orders by)."""
    from woods.store.pg_connect import SCHEMA, connect
    from woods.store.pg_publish import ensure_schema

    conn = connect(url)
    try:
        ensure_schema(conn, url)
        rows = conn.execute(
            f"SELECT r.name, g.chunks FROM {SCHEMA}.repos r JOIN {SCHEMA}.generations g ON g.id = r.current_generation "
            "WHERE r.name = ANY(%s)", (list(names),),
        ).fetchall()
    finally:
        conn.close()
    return {str(name): int(chunks) for name, chunks in rows}


__all__ = ["FleetProgress", "FleetSummary", "build_fleet"]
