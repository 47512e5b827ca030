"""`woods index --watch`: keep an index live while people edit.

Why polling: it needs no platform file-event API or extra dependency, works the same in
containers and network mounts, and discovery over a whole repository is cheap (≈0.1 s for the
Python standard library). Changes are debounced — a burst of saves becomes one re-index — and
each re-index is the ordinary incremental run, so only changed files are parsed and only new
texts embedded. The embedding model stays loaded between runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# How often the tree is polled, and how long it must stay quiet before re-indexing: long enough
# to swallow an editor's save-rename-chmod burst, short enough to feel live.
POLL_SECONDS = 1.0
DEBOUNCE_SECONDS = 0.5


def snapshot(root: Path, max_file_bytes: int) -> dict[str, tuple[int, int]]:
    """path → (size, mtime_ns) of every file discovery would index."""
    from woods.discovery import discover

    return {f.path: (f.size, f.mtime_ns) for f in discover(root, max_file_bytes=max_file_bytes).files}


def watch(
    root: Path,
    reindex: Callable[[], Any],
    *,
    max_file_bytes: int,
    on_change: Callable[[int], None],
    poll_seconds: float = POLL_SECONDS,
    debounce_seconds: float = DEBOUNCE_SECONDS,
    max_cycles: int | None = None,
    interruptible: Callable[[Callable[[], bool]], Any] | None = None,
) -> None:
    """Poll `root`; after a change and `debounce_seconds` of quiet, call `reindex()`.

    With `interruptible`, re-index by `interruptible(should_stop)` instead: `should_stop()` is
    True once the tree changed again (polled at most every `poll_seconds`), so a long embedding
    phase stops between batches (EmbeddingCancelled; its batches are kept) and the new change is
    indexed — the lexical generation of every change is published without waiting for vectors.

    Runs until interrupted (or `max_cycles` re-indexes, for tests). `on_change(n)` is told how many
    files changed before each re-index.
    """
    known = snapshot(root, max_file_bytes)
    cycles = 0
    while max_cycles is None or cycles < max_cycles:
        time.sleep(poll_seconds)
        current = snapshot(root, max_file_bytes)
        if current == known:
            continue
        while True:  # debounce: wait until the tree stops changing
            time.sleep(debounce_seconds)
            settled = snapshot(root, max_file_bytes)
            if settled == current:
                break
            current = settled
        changed = {p for p in current.keys() | known.keys() if current.get(p) != known.get(p)}
        on_change(len(changed))
        if interruptible is None:
            reindex()
        elif not _run_interruptible(interruptible, root, current, max_file_bytes, poll_seconds):
            known = current  # the run stopped for a newer change: the next poll sees it
            cycles += 1
            continue
        known = current
        cycles += 1


def _run_interruptible(
    run: Callable[[Callable[[], bool]], Any], root: Path, indexed: dict[str, tuple[int, int]],
    max_file_bytes: int, poll_seconds: float,
) -> bool:
    """Run one re-index that stops when the tree changes from `indexed`; False when it stopped."""
    from woods.errors import EmbeddingCancelled

    last_poll = [time.monotonic()]

    def changed_again() -> bool:
        if time.monotonic() - last_poll[0] < poll_seconds:
            return False
        last_poll[0] = time.monotonic()
        return snapshot(root, max_file_bytes) != indexed

    try:
        run(changed_again)
    except EmbeddingCancelled:
        return False
    return True
