"""Progress display for long CLI work: a rich progress bar on a terminal, phase lines otherwise.

Why: indexing a large repository takes minutes; a person at a terminal wants the phase, counts,
rate and ETA, while a CI log wants a few plain lines, not control codes. Everything goes to stderr
so `--json` stdout stays clean.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class PlainProgress:
    """One line per phase on stderr with its duration and count (non-terminal stderr)."""

    def __init__(self) -> None:
        self._phase: str | None = None
        self._started = 0.0
        self._count = 0

    def phase(self, name: str, total: int | None) -> None:
        self._finish()
        self._phase, self._started, self._count = name, time.perf_counter(), 0
        sys.stderr.write(f"woods: {name}" + (f" ({total})" if total is not None else "") + " …\n")

    def advance(self, count: int = 1) -> None:
        self._count += count

    def note(self, message: str) -> None:
        sys.stderr.write(f"woods: {message}\n")

    def _finish(self) -> None:
        if self._phase is not None:
            elapsed = time.perf_counter() - self._started
            rate = f", {self._count / elapsed:.0f}/s" if self._count and elapsed > 0 else ""
            sys.stderr.write(f"woods: {self._phase} done in {elapsed:.1f}s{rate}\n")
            self._phase = None

    def close(self) -> None:
        self._finish()


class RichProgress:
    """A rich progress bar per phase: description, bar, count, rate, elapsed and ETA."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description:<9}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._progress.start()
        self._task: Any = None
        self._started = 0.0

    def phase(self, name: str, total: int | None) -> None:
        if self._task is not None:
            task = self._progress.tasks[self._task]
            self._progress.update(self._task, total=task.completed or 1, completed=task.completed or 1)
        self._task = self._progress.add_task(name, total=total, rate="")
        self._started = time.perf_counter()

    def advance(self, count: int = 1) -> None:
        if self._task is None:
            return
        self._progress.advance(self._task, count)
        elapsed = time.perf_counter() - self._started
        done = self._progress.tasks[self._task].completed
        if elapsed > 0:
            self._progress.update(self._task, rate=f"{done / elapsed:,.0f}/s")

    def note(self, message: str) -> None:
        self._progress.console.print(message)

    def close(self) -> None:
        if self._task is not None:
            task = self._progress.tasks[self._task]
            self._progress.update(self._task, total=task.completed or 1, completed=task.completed or 1)
        self._progress.stop()


class NullProgress:
    def phase(self, name: str, total: int | None) -> None:
        pass

    def advance(self, count: int = 1) -> None:
        pass

    def note(self, message: str) -> None:
        pass

    def close(self) -> None:
        pass


@contextmanager
def make_progress(enabled: bool) -> Iterator[Any]:
    """Rich on a terminal, plain lines on other stderr, nothing when disabled (`--json`)."""
    progress: Any
    if not enabled:
        progress = NullProgress()
    elif sys.stderr.isatty():
        progress = RichProgress()
    else:
        progress = PlainProgress()
    try:
        yield progress
    finally:
        progress.close()
