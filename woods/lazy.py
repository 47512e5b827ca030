"""A value built on first use, exactly once, whatever the number of threads asking.

Why: a warm `woods.Index` is shared by threads (an MCP server, an editor plugin), and much of its
state is built only when a question first needs it — the query embedder, the FAISS store, a
retriever's pipeline. Two threads asking at once must not build it twice (a model loaded twice, a
FAISS file mapped twice) nor see it half-built. `Lazy` is that one pattern, written once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class Lazy(Generic[T]):
    """Holds `factory()`'s value once built. Guarantees: the factory runs at most once at a time
    and, once it has returned, never again; a factory that raises leaves nothing built (the next
    `get` tries again, so a transient failure is not remembered forever)."""

    __slots__ = ("_factory", "_lock", "_value", "_built")

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._value: T | None = None
        self._built = False

    def get(self) -> T:
        if self._built:  # published only after the value is assigned
            return cast(T, self._value)
        with self._lock:
            if self._built:  # another thread built it while this one waited
                return cast(T, self._value)
            value = self._factory()
            self._value = value
            self._built = True
            return value

    @property
    def built(self) -> bool:
        """True once the value exists (it is never built by asking this)."""
        return self._built

    def peek(self) -> T | None:
        """The value when built, else None (never builds it)."""
        return self._value if self._built else None
