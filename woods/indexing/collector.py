"""Pausing Python's cyclic garbage collector while phase 1 builds its long-lived objects.

Why: collecting a repository's extractions, linking them and writing the lexical generation
creates millions of container objects that all stay alive until the generation is published.
Each time the survivors grow by a quarter the collector runs a full collection over all of them,
so the full collections grow with the heap: on the standard library (74k units) 13 of them took
3.8 s of a 20 s phase 1, the last ones 0.5–0.6 s each. Reference counting frees everything phase 1
discards; nothing it builds forms reference cycles that must be found before the run ends.

The collector belongs to the process: a thread running beside phase 1 (an MCP server answering
queries while it re-indexes) goes without it for those seconds too; what such a thread discards is
still freed by reference counting, and a cycle it leaves waits for the collector's next run.

Guarantees: `paused_collector()` disables the collector for its block and afterwards leaves it as
it found it (enabled only if it was enabled: an application that turned the collector off keeps
it off). Overlapping pauses from several threads never leave it disabled when every caller found
it enabled; a nested pause inside another only resumes with the outer one.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_collector() -> Iterator[None]:
    """Disable the cyclic garbage collector for the block; restore its previous state after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
