"""One repository of a fleet, indexed inside a worker (a Ray task or a local process).

Why its own module: the unit of work every runner executes is the same function,
`index_repository_job`, whatever runs it — so Ray, the process pool and a test calling it directly
publish the same way. It is the single-repository pipeline (`woods.indexing.index_repository`,
incremental, with its lock and atomic publish) on the repository's own target, plus what a fleet
adds: git checkouts, progress events, the time and rows of the publish, and a failure turned into
a reported outcome instead of an exception that would stop the fleet.

Exactly once: a repository's publish is one transaction under its advisory lock (or the local
CURRENT swap). A worker killed before the commit leaves nothing, and the retry builds again; one
killed after the commit leaves a published generation whose source matches, and the retry finds it
up to date and writes nothing. No repository is ever published twice for one run, and none half.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods.errors import InputError, WoodsError
from woods.fleet.events import EventChannel, WorkerProgress
from woods.fleet.plan import RepoSpec

if TYPE_CHECKING:
    from woods.embedding.provider import EmbeddingProvider
    from woods.indexing.summary import IndexSummary
    from woods.store.backend import StoreTarget
    from woods.store.index import IndexStores, ReusableVectors
    from woods.store.postgres import PostgresStores

# Outcome states.
PUBLISHED = "published"  # a new generation was published
UP_TO_DATE = "up_to_date"  # the published generation already matched the source: nothing written
FAILED = "failed"  # the repository could not be indexed (the error says why); others went on
INTERRUPTED = "interrupted"  # the run was stopped before this repository finished
# Tables whose rows a publish copies into PostgreSQL (the build's SQLite tables of the same names).
_PUBLISHED_TABLES = ("files", "extractions", "units", "chunks", "edges", "lexical_postings")
# Seconds a git clone or fetch of one repository may take before it counts as failed.
GIT_TIMEOUT_SECONDS = 1800


@dataclass(frozen=True, slots=True)
class FleetOptions:
    """Everything a worker needs besides the repository (picklable: it crosses processes).

    `store` is a PostgreSQL URL (one store for the fleet) or None (each repository's own
    `.woods`). The factories must be picklable (a class, a module-level function, a
    `functools.partial` of one): they are called inside the worker."""

    store: str | None
    provider_factory: Callable[[], EmbeddingProvider]
    contextual_factory: Callable[[], EmbeddingProvider] | None = None
    full: bool = False
    allow_purge: bool = False
    max_file_bytes: int = 1_000_000
    wait: float = 30.0
    parse_workers: int = 1
    checkouts: str | None = None


@dataclass(frozen=True, slots=True)
class RepoOutcome:
    """What became of one repository: its state, what was written, how long it took, and for a
    failure the one-line error and the exit code it maps to (2 bad input, 1 unexpected)."""

    name: str
    source: str
    status: str
    generation: str = ""
    files: int = 0
    units: int = 0
    chunks: int = 0
    embedded: int = 0
    reused_vectors: int = 0
    resumed_vectors: int = 0
    reused_files: int = 0
    rows: int = 0
    seconds: float = 0.0
    publish_seconds: float = 0.0
    attempts: int = 1
    worker: str = ""
    error: str | None = None
    exit_code: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["warnings"] = list(self.warnings)
        return data


def default_provider_factory() -> Callable[[], EmbeddingProvider]:
    """The base embedder (woods's static model), as a picklable factory."""
    from woods.embedding.select import STATIC_EMBEDDER, index_provider

    return partial(index_provider, STATIC_EMBEDDER)


def checkouts_dir(configured: str | None) -> Path:
    """Where git sources are checked out: the configured directory, else the user cache
    (`$XDG_CACHE_HOME/woods/checkouts`, `~/.cache/woods/checkouts`)."""
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "woods" / "checkouts"


def checkout(spec: RepoSpec, base: Path) -> Path:
    """A work tree of the git source's default branch, newest commit: cloned (shallow) on first
    use, fetched and reset after. Files git does not rewrite keep their mtime, so the incremental
    run reuses their parses. InputError when git cannot read the source."""
    digest = hashlib.sha256(spec.source.encode()).hexdigest()[:12]
    dest = base / f"{spec.name}-{digest}"
    source = spec.source
    if "://" not in source and Path(source).exists():
        source = Path(source).resolve().as_uri()  # a shallow clone needs a URL for a local mirror
    try:
        if (dest / ".git").is_dir():
            _git(["git", "-C", str(dest), "fetch", "--quiet", "--depth", "1", "origin", "HEAD"])
            _git(["git", "-C", str(dest), "reset", "--quiet", "--hard", "FETCH_HEAD"])
            return dest
        base.mkdir(parents=True, exist_ok=True)
        partial_dest = dest.with_name(dest.name + f".clone-{os.getpid()}")
        shutil.rmtree(partial_dest, ignore_errors=True)
        _git(["git", "clone", "--quiet", "--depth", "1", source, str(partial_dest)])
        shutil.rmtree(dest, ignore_errors=True)
        partial_dest.rename(dest)
        return dest
    except FileNotFoundError:
        raise InputError("git is not installed; a git source needs it (or pass the checked-out directory)") from None


def _git(command: list[str]) -> None:
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=GIT_TIMEOUT_SECONDS,
                       env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or "").strip().splitlines()
        raise InputError(f"{' '.join(command[:4])} failed: {detail[-1] if detail else exc.returncode}") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"{' '.join(command[:4])} took over {GIT_TIMEOUT_SECONDS}s") from None


class MeasuredTarget:
    """A build target that times its publishes and counts the rows each copies: the fleet's
    "rows per second into PostgreSQL". Everything else is the wrapped target's."""

    def __init__(self, inner: StoreTarget) -> None:
        self.inner = inner
        self.publish_seconds = 0.0
        self.rows = 0

    def describe(self) -> str:
        return self.inner.describe()

    def prepare(self) -> None:
        self.inner.prepare()

    def lock(self, wait: float) -> contextlib.AbstractContextManager[object]:
        return self.inner.lock(wait)

    def cleanup(self) -> None:
        self.inner.cleanup()

    def open_previous(self) -> IndexStores | PostgresStores:
        return self.inner.open_previous()

    def open_reusable(self) -> ReusableVectors:
        return self.inner.open_reusable()

    def new_build_dir(self) -> Path:
        return self.inner.new_build_dir()

    def publish(self, build: Path) -> str:
        rows = _build_rows(build)
        started = time.perf_counter()
        name = self.inner.publish(build)
        self.publish_seconds += time.perf_counter() - started
        self.rows += rows
        return name


def _build_rows(build: Path) -> int:
    """Rows of the tables a publish copies, counted in the build's database."""
    from woods.store import index as layout

    total = 0
    with contextlib.closing(sqlite3.connect(build / layout.METADATA_FILE)) as conn:
        present = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for name in _PUBLISHED_TABLES:
            if name in present:
                total += int(conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0])
    return total


@contextlib.contextmanager
def _reporting(channel: EventChannel | None, name: str) -> Iterator[WorkerProgress]:
    progress = WorkerProgress(channel, name)
    progress.started()
    try:
        yield progress
    finally:
        progress.flush()


class LoadedModels:
    """The embedding providers a long-lived worker (a Ray actor) builds once and lends to every
    repository it indexes: a model is loaded on its first batch and then stays loaded, instead of
    once per repository (bench/README.md, "Fleet": 1.4 s a load on this machine)."""

    def __init__(self, options: FleetOptions) -> None:
        self.base = options.provider_factory()
        self.contextual = options.contextual_factory() if options.contextual_factory is not None else None

    def base_factory(self) -> EmbeddingProvider:
        return self.base

    def contextual_factory(self) -> EmbeddingProvider:
        if self.contextual is None:
            raise ValueError("this worker was built without a contextual embedder")
        return self.contextual


def index_repository_job(spec: RepoSpec, options: FleetOptions, channel: EventChannel | None = None,
                         models: LoadedModels | None = None) -> RepoOutcome:
    """Index one repository of the fleet and publish it (see the module docstring), with the
    worker's `models` when it keeps them (else the options' factories, called for this run). A
    failure of this repository is returned as a FAILED outcome; only process-level events (a
    kill, an interrupt) leave this function otherwise."""
    from woods.fleet.resume import ResumingProvider
    from woods.indexing import index_repository
    from woods.store.backend import server_target
    from woods.store.index import store_dir_for

    started = time.perf_counter()
    worker = f"{socket.gethostname()}:{os.getpid()}"
    base = options.provider_factory if models is None else models.base_factory
    contextual = options.contextual_factory
    if models is not None and contextual is not None:
        contextual = models.contextual_factory
    # A PostgreSQL store publishes once, with the contextual vectors: their batches are kept on the
    # server until the publish, so a retry or the next run embeds only what is missing.
    resumer: list[ResumingProvider] = []
    if options.store and contextual is not None:
        inner, url = contextual, options.store

        def contextual(inner: Callable[[], EmbeddingProvider] = inner) -> EmbeddingProvider:
            resumer.append(ResumingProvider(inner(), url, spec.name))
            return resumer[-1]

    with _reporting(channel, spec.name) as progress:
        try:
            root = checkout(spec, checkouts_dir(options.checkouts)) if spec.git else spec.path
            # A local store is passed as its directory: the builder's two phases depend on seeing
            # one (only PostgreSQL publishes are measured).
            target = MeasuredTarget(server_target(options.store, spec.name)) if options.store else None
            summary = index_repository(
                root, target if target is not None else store_dir_for(root, None), base, contextual_factory=contextual,
                max_file_bytes=options.max_file_bytes, progress=progress, wait=options.wait, full=options.full,
                allow_purge=options.allow_purge, workers=options.parse_workers,
            )
        except WoodsError as exc:
            return _failed(spec, exc, exc.exit_code, started, worker)
        except Exception as exc:  # one repository's bug must not stop the fleet: reported, with its type
            return _failed(spec, exc, 1, started, worker, unexpected=True)
        finally:
            for provider in resumer:
                provider.close()
    resumed = sum(p.resumed for p in resumer)
    if resumer and not summary.up_to_date:
        try:
            resumer[-1].discard()  # published: the kept batches are in the generation now
        except WoodsError as exc:  # the index is published; only the clean-up is left for later
            summary.warnings.append(f"the kept contextual vectors were not removed ({exc}); the next run removes them")
    outcome = _outcome(spec, summary, target, started, worker)
    return replace(outcome, embedded=outcome.embedded - resumed, resumed_vectors=outcome.resumed_vectors + resumed)


def _failed(spec: RepoSpec, exc: BaseException, code: int, started: float, worker: str, *,
            unexpected: bool = False) -> RepoOutcome:
    text = (str(exc) or exc.__class__.__name__).splitlines()[0]
    if unexpected:
        text = f"unexpected {exc.__class__.__name__}: {text}"
    return RepoOutcome(spec.name, spec.source, FAILED, seconds=round(time.perf_counter() - started, 3),
                       worker=worker, error=text, exit_code=code)


def _outcome(spec: RepoSpec, summary: IndexSummary, target: MeasuredTarget | None, started: float,
             worker: str) -> RepoOutcome:
    return RepoOutcome(
        spec.name, spec.source, UP_TO_DATE if summary.up_to_date else PUBLISHED, generation=summary.generation,
        files=summary.files, units=summary.units, chunks=summary.chunks, embedded=summary.embedded,
        reused_vectors=summary.reused_vectors, resumed_vectors=summary.resumed_vectors,
        reused_files=summary.reused_files, rows=0 if target is None else target.rows,
        seconds=round(time.perf_counter() - started, 3),
        publish_seconds=0.0 if target is None else round(target.publish_seconds, 3), worker=worker, warnings=tuple(summary.warnings),
    )


def interrupted(spec: RepoSpec, attempts: int = 0) -> RepoOutcome:
    """The outcome of a repository the run stopped before it finished (nothing of it published
    by this run; the next run picks it up)."""
    return RepoOutcome(spec.name, spec.source, INTERRUPTED, attempts=attempts,
                       error="the run was stopped before this repository finished", exit_code=130)


def failed_unexpectedly(spec: RepoSpec, reason: str) -> RepoOutcome:
    """The outcome of a repository whose job raised past its own handling (a bug)."""
    return RepoOutcome(spec.name, spec.source, FAILED, error=reason, exit_code=1)


def lost(spec: RepoSpec, attempts: int, reason: str) -> RepoOutcome:
    """The outcome of a repository whose workers kept dying (every retry used)."""
    return RepoOutcome(spec.name, spec.source, FAILED, attempts=attempts,
                       error=f"its worker died {attempts} time(s); last: {reason}", exit_code=1)


__all__ = [
    "FAILED",
    "INTERRUPTED",
    "PUBLISHED",
    "UP_TO_DATE",
    "FleetOptions",
    "LoadedModels",
    "MeasuredTarget",
    "RepoOutcome",
    "checkout",
    "checkouts_dir",
    "default_provider_factory",
    "failed_unexpectedly",
    "index_repository_job",
    "interrupted",
    "lost",
]
