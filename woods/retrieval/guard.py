"""Store failures during retrieval become `StoreError`, naming the store that failed.

Why: a query reads three stores, each of which can fail for reasons of its own (a truncated SQLite
file, an I/O error, a PostgreSQL server gone away). Interfaces must report a degraded index — the
MCP server's `degraded_index`, exit 1 with the store named — and never mistake that for a bug, nor
a bug for a broken store. `guarded(store, name)` wraps a store so that its own failures
(`store_failures`) are translated and everything else — a programming error — passes through
unchanged.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from typing import Any, TypeVar, cast

from woods.errors import StoreError

_S = TypeVar("_S")


def store_failures() -> tuple[type[BaseException], ...]:
    """The exceptions that mean a store failed (its file, its database, its server), as opposed to
    a bug: SQLite's errors, I/O errors and, once the PostgreSQL driver is loaded, its errors (a
    process that never loaded psycopg cannot receive one)."""
    failures: list[type[BaseException]] = [sqlite3.Error, OSError]
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        failures.append(psycopg.Error)
    return tuple(failures)


class _Guarded:
    """The facade `guarded` returns: every method call of the store, translated."""

    def __init__(self, store: object, name: str) -> None:
        self._store = store
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(self._store, attribute)
        if not callable(value):
            return value
        name = self._name

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return value(*args, **kwargs)
            except store_failures() as exc:
                raise StoreError(f"{name} store call {attribute} failed: {type(exc).__name__}: {exc}", store=name) from exc

        return call


def guarded(store: _S, name: str) -> _S:
    """`store` with its failures raised as StoreError(store=`name`); same methods, same answers."""
    return cast(_S, _Guarded(store, name))


def lazily(open_store: Callable[[], _S | None], missing: Callable[[], Exception]) -> _S:
    """A stand-in for the store `open_store()` returns, opened on its first use (FAISS loads only
    when a vector search actually runs); `missing()` is raised when it returns None."""
    return cast(_S, _Deferred(open_store, missing))


class _Deferred:
    def __init__(self, open_store: Callable[[], object | None], missing: Callable[[], Exception]) -> None:
        self._open = open_store
        self._missing = missing

    def __getattr__(self, attribute: str) -> Any:
        store = self._open()
        if store is None:
            raise self._missing()
        return getattr(store, attribute)


__all__ = ["guarded", "lazily", "store_failures"]
