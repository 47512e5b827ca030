"""Every error woods raises on purpose, in one place, each carrying the exit code the CLI maps it to.

Why: interfaces render errors, the core raises them; a typed error is how the core says *what
kind* of failure happened without printing anything. Exit codes (the conventions every interface
keeps): 2 bad input (the message says what to do), 1 unexpected; 3 is reserved for clarification
outcomes, which are results, not errors. The modules that used to define some of these re-export
them under their old names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any


class WoodsError(Exception):
    """Base of every error woods raises on purpose; `exit_code` is what the CLI exits with."""

    exit_code = 1


class InputError(WoodsError):
    """Bad input from the caller: a missing path, a blank query, an invalid option value …"""

    exit_code = 2


# -- the index as a whole ---------------------------------------------------------------------------


class IndexNotFoundError(InputError):
    """No published index where one was expected."""


class CorruptIndexError(InputError):
    """An index exists but cannot be used: corrupt, truncated, foreign schema or embedding dimension.

    The message names the offending file and the fix (`woods index --full`).
    """


class SchemaMismatchError(CorruptIndexError):
    """The generation was written by a woods with another index schema (readable by that woods)."""


class LockTimeoutError(InputError):
    """Another `woods index` holds the store's lock for longer than `--wait` allowed."""


class IndexingError(WoodsError):
    """Indexing failed; the previously published index is untouched."""


class IndexClosedError(WoodsError):
    """The `Index` was closed; open a new one."""


class EmbeddingCancelled(Exception):  # noqa: N818 — a requested stop, not a failure
    """Phase 2 stopped between batches because the caller asked it to (`should_stop`); the
    batches already finished are in the resume cache and the base generation stays published."""


# -- questions about units --------------------------------------------------------------------------


class UnitNotFoundError(InputError, LookupError):
    """The identifier names no unit of this index (and no graph node, for graph questions)."""


class AmbiguousIdentifierError(InputError):
    """A public identifier names several units of different types; pass `type=` to choose one.

    `candidates` lists each variant as `{"key", "identifier", "type", "file_path", "line_start"}`,
    ordered by (type, key).
    """

    def __init__(self, message: str, candidates: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


# -- retrieval --------------------------------------------------------------------------------------


class InvalidQueryError(InputError, ValueError):
    """The query is not a string, is blank after strip, or is over 8192 UTF-8 bytes."""


class InvalidScopeError(InputError, ValueError):
    """A scope list is malformed, a source path escapes the root, or a package is unknown."""


class InvalidTypeError(InputError, ValueError):
    """A requested or excluded unit type is malformed or unknown to this index and to woods."""


class InvalidOptionError(InputError, ValueError):
    """A retrieval option (mode, strategy, budget, limit) has a value retrieval cannot honour."""


class UnknownLanguageError(InputError):
    """A `--lang` value names no language woods indexes."""


class StoreError(WoodsError):
    """A store call failed during retrieval; `store` names which one (vector, metadata, graph)."""

    def __init__(self, message: str, store: str = "metadata") -> None:
        super().__init__(message)
        self.store = store


# -- evaluation -------------------------------------------------------------------------------------


class QuerySetError(InputError):
    """The query-set file is missing or malformed."""


class CorpusError(InputError):
    """A corpus file is missing or not in the corpus.json shape."""


# -- internal failures a caller handles (never shown to a user as such) -----------------------------


class ParseTimeoutError(Exception):
    """tree-sitter did not finish parsing a file within its time budget (woods.extract.scan)."""


class InputTooLongError(ValueError):
    """A text has more tokens than the embedding provider accepts.

    Providers never truncate silently: a truncated text would be stored under a vector that does not
    describe it. The chunker keeps every text within `max_input_tokens`, so this only fires on a bug
    or on a caller that skipped chunking.
    """

    def __init__(self, tokens: int, limit: int, text: str = "") -> None:
        self.tokens = tokens
        self.limit = limit
        preview = text[:60].replace("\n", "\\n")
        super().__init__(f"input has {tokens} tokens, the limit is {limit}: {preview!r}")


class ReplayMissError(LookupError):
    """No captured vector exists for a text (the text differs from what was captured)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.sha256 = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        preview = text[:60]
        super().__init__(f"no replay vector for text sha256={self.sha256} starting {preview!r}")


__all__ = [
    "AmbiguousIdentifierError",
    "CorpusError",
    "CorruptIndexError",
    "EmbeddingCancelled",
    "IndexClosedError",
    "IndexNotFoundError",
    "IndexingError",
    "InputError",
    "InputTooLongError",
    "InvalidOptionError",
    "InvalidQueryError",
    "InvalidScopeError",
    "InvalidTypeError",
    "LockTimeoutError",
    "ParseTimeoutError",
    "QuerySetError",
    "ReplayMissError",
    "SchemaMismatchError",
    "StoreError",
    "UnitNotFoundError",
    "UnknownLanguageError",
    "WoodsError",
]
