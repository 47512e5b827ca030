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
) -> None:
    """Poll `root`; after a change and `debounce_seconds` of quiet, call `reindex()`.

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
        reindex()
        known = current
        cycles += 1
