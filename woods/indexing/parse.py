"""Parsing: read, hash and extract every discovered file — in a process pool for large
repositories — or reuse the previous generation's extraction of a file that did not change.

Guarantees: one file's failure is a recorded warning, never a lost run; a dead worker's files are
parsed in-process; outcomes come back in discovery (path) order; extractors receive the run's
`RepositoryLayout` as an argument (workers share no state with this process).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from woods.discovery import DiscoveredFile
from woods.extract import extract_file
from woods.extract.layout import RepositoryLayout
from woods.indexing.summary import IndexSummary, Progress
from woods.store.metadata import FileRow
from woods.units import Unit

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from woods.store.index import IndexStores
    from woods.store.postgres import PostgresStores

@dataclass(frozen=True, slots=True)
class FileOutcome:
    """What reading and extracting one file produced (picklable: it crosses process boundaries)."""

    path: str
    units: tuple[Unit, ...] = ()
    row: FileRow | None = None
    skip_reason: str | None = None
    failure: str | None = None
    warnings: tuple[str, ...] = ()


def extract_one(root: str, path: str, mtime_ns: int, layout: RepositoryLayout) -> FileOutcome:
    """Read and extract one file (runs in parse workers too: everything it needs is an argument)."""
    try:
        data = Path(root, path).read_bytes()
    except FileNotFoundError:
        return FileOutcome(path, skip_reason="vanished")
    except OSError as exc:
        return FileOutcome(path, skip_reason="unreadable", warnings=(f"{path}: unreadable ({exc.strerror or exc})",))
    try:
        extraction = extract_file(path, data, layout)
    except Exception as exc:  # an extractor bug must not lose the whole index
        return FileOutcome(path, failure=f"{path}: extraction failed ({exc.__class__.__name__}: {exc})")
    row = FileRow(
        path=path,
        language=extraction.language,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        mtime_ns=mtime_ns,
        unit_count=len(extraction.units),
        warnings=tuple(extraction.warnings),
    )
    return FileOutcome(path, tuple(extraction.units), row, warnings=tuple(extraction.warnings))


# Parsing is CPU-bound Python + C; below this many files a process pool costs more than it saves
# (a forkserver worker takes ~0.3 s to start and import the extractors).
PARALLEL_PARSE_MIN_FILES = 200


def parse_workers() -> int:
    """Parse processes for this machine: one per core this process may run on. Phase 1 (time to
    first search) is parsing, so every core parses; WOODS_THREADS caps it like the embedder."""
    from woods.embedding.provider import embedding_threads

    return max(1, embedding_threads())


def extract_files(
    root: Path,
    discovered: Sequence[DiscoveredFile],
    progress: Progress,
    summary: IndexSummary,
    workers: int | None = None,
    cached: Callable[[DiscoveredFile], FileOutcome | None] | None = None,
    layout: RepositoryLayout | None = None,
    parallel_min_files: int = PARALLEL_PARSE_MIN_FILES,
) -> tuple[list[Unit], list[FileRow]]:
    """Read, hash and extract every discovered file, in discovery (path) order.

    A file that fails is reported (warning, `parse_failures`), never fatal; a file that vanished or
    became unreadable since discovery is counted under that skip reason. Large repositories are
    parsed in a process pool (forkserver: no inherited threads or locks). `cached(file)` may return
    the previous run's outcome for an unchanged file, which is then not read or parsed at all.
    `layout` defaults to the one computed from `discovered` (only the whole file list tells a Rails
    app's lib/ and spec/ from a plain gem's).
    """
    if layout is None:
        layout = RepositoryLayout.from_paths(item.path for item in discovered)
    workers = workers or 1
    progress.phase("parse", len(discovered))
    reused: dict[str, FileOutcome] = {}
    for item in discovered:
        outcome = cached(item) if cached is not None else None
        if outcome is not None:
            reused[item.path] = outcome
    summary.reused_files = len(reused)
    all_jobs = [(str(root), item.path, item.mtime_ns) for item in discovered]
    jobs = [job for job in all_jobs if job[1] not in reused]
    fresh = _parse_all(jobs, workers, layout, progress, summary, parallel_min_files)
    units: list[Unit] = []
    rows: list[FileRow] = []
    for job in all_jobs:
        outcome = reused.get(job[1]) or fresh[job[1]]
        if job[1] in reused:
            progress.advance()
        summary.warnings.extend(outcome.warnings)
        if outcome.skip_reason:
            summary.skipped[outcome.skip_reason] = summary.skipped.get(outcome.skip_reason, 0) + 1
        elif outcome.failure:
            summary.parse_failures += 1
            summary.warnings.append(outcome.failure)
        elif outcome.row is not None:
            units.extend(outcome.units)
            rows.append(outcome.row)
    return units, rows


def _parse_all(
    jobs: Sequence[tuple[str, str, int]],
    workers: int,
    layout: RepositoryLayout,
    progress: Progress,
    summary: IndexSummary,
    parallel_min_files: int,
) -> dict[str, FileOutcome]:
    """Parse `jobs` (in a process pool for large repositories); path → outcome.

    If a pool worker dies (killed, out of memory), the files it had not finished are parsed here
    in-process and the run goes on — one lost worker never loses the index.
    """
    fresh: dict[str, FileOutcome] = {}
    if workers > 1 and len(jobs) >= parallel_min_files:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"))
        try:
            roots, paths, mtimes = zip(*jobs, strict=True)
            layouts = [layout] * len(jobs)
            for outcome in pool.map(extract_one, roots, paths, mtimes, layouts, chunksize=16):
                fresh[outcome.path] = outcome
                progress.advance()
        except BrokenProcessPool:
            summary.warnings.append(
                f"a parse worker died after {len(fresh)} of {len(jobs)} files; parsed the rest in-process"
            )
            _kill_workers(pool)
        finally:
            pool.shutdown(cancel_futures=True)
    for job in jobs:
        if job[1] not in fresh:
            fresh[job[1]] = extract_one(*job, layout)
            progress.advance()
    return fresh


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kill every worker process a broken pool still has, so its shutdown cannot wait forever.

    Why: CPython 3.11's pool terminates the workers it knows of when one dies, then joins them
    all; a worker it starts while it is breaking (workers start on demand, from the submitting
    thread) is never terminated, and the join — then `shutdown` — waits on it forever (seen once
    in the suite: the parent idle in `shutdown`, one idle worker left). Killing an already
    finished process does nothing. The pool's process table is a private attribute; without it
    nothing is killed and the pool behaves as before."""
    processes = getattr(pool, "_processes", None)
    for process in list(processes.values()) if isinstance(processes, dict) else []:
        try:
            process.kill()
        except (OSError, ValueError):  # exited meanwhile, or already closed
            continue


def cache_lookup(
    root: Path, previous: IndexStores | PostgresStores | None, layout_key: str
) -> Callable[[DiscoveredFile], FileOutcome | None] | None:
    """`file → outcome` from the previous generation for files that did not change."""
    if previous is None or previous.manifest.data.get("layout_key") != layout_key:
        return None
    rows = {row.path: row for row in previous.metadata.files()}

    def lookup(item: DiscoveredFile) -> FileOutcome | None:
        row = rows.get(item.path)
        if row is None or row.size != item.size:
            return None
        if row.mtime_ns != item.mtime_ns:
            try:
                digest = hashlib.sha256((root / item.path).read_bytes()).hexdigest()
            except OSError:
                return None
            if digest != row.sha256:
                return None
        data = previous.metadata.extraction(item.path)
        if data is None:
            return None
        units = tuple(Unit.from_raw(u) for u in data["units"])
        fresh_row = FileRow(row.path, row.language, row.sha256, row.size, item.mtime_ns, row.unit_count, row.warnings)
        return FileOutcome(item.path, units, fresh_row, warnings=tuple(data.get("warnings", ())))

    return lookup
