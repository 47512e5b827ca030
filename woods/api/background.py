"""Phase 2 in the background: a handle's contextual vectors computed by a daemon thread while
every call answers from the published phase-1 generation.

Why a thread of the handle's own: `Index.update(background=True)` and the MCP server's `reindex`
return as soon as the index is searchable; the vectors follow and the handle switches to them when
they are published. A thread has no caller to raise to, so whatever stops or fails it is recorded
as a warning (`warnings`, shown by `status()` and the MCP server), never lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from woods.errors import EmbeddingCancelled

if TYPE_CHECKING:
    from woods.embedding.provider import EmbeddingProvider


class BackgroundVectors:
    """At most one phase-2 thread per handle, how to stop it, and what it reported.

    Guarantees: `stop()` asks the thread to stop between batches and waits for it (finished
    batches stay in the resume cache for the next run); a cancelled or failed phase 2 becomes one
    warning; `on_published` (the handle's switch to the new generation) runs only when the thread
    finished without being asked to stop.
    """

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._warnings: list[str] = []
        self._lock = threading.Lock()  # guards _warnings

    @property
    def running(self) -> bool:
        """True while the thread computes this handle's vectors."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    @property
    def warnings(self) -> list[str]:
        """What background phases reported (stopped, failed, could not switch), oldest first."""
        with self._lock:
            return list(self._warnings)

    def record(self, warning: str) -> None:
        with self._lock:
            self._warnings.append(warning)

    def start(
        self,
        store_dir: Path,
        generation: str,
        wait: float,
        factory: Callable[[], EmbeddingProvider],
        on_published: Callable[[], None],
    ) -> None:
        """Compute the vectors of the lexical generation `generation` (phase 2 alone, from its own
        extractions: edits made meanwhile wait for the next update) in a daemon thread."""
        from woods.indexing.pipeline import complete_vectors

        stop = threading.Event()
        self._stop = stop

        def run() -> None:
            try:
                complete_vectors(store_dir, factory, generation, wait=wait, should_stop=stop.is_set)
                if not stop.is_set():
                    on_published()
            except EmbeddingCancelled as exc:
                self.record(f"background embedding stopped: {exc}; the next update resumes it")
            except Exception as exc:  # a thread has no caller to raise to: recorded for status/MCP
                self.record(
                    f"background embedding failed: {type(exc).__name__}: {exc}; searches answer from the "
                    "previous generation until the next update"
                )

        thread = threading.Thread(target=run, name="woods-vectors", daemon=True)
        self._thread = thread
        thread.start()

    def stop(self) -> None:
        """Stop the thread between batches and wait for it (nothing when none runs)."""
        thread = self._thread
        if thread is not None:
            self._stop.set()
            thread.join()
            self._thread = None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the thread to finish; True when none is running (any more)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True


__all__ = ["BackgroundVectors"]
