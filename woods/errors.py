"""Typed errors, each carrying the exit code the CLI maps it to (DEVELOPERS.md conventions).

Why: interfaces render errors, the core raises them; a typed error is how the core says *what
kind* of failure happened without printing anything. Exit codes: 2 bad input (the message says
what to do), 1 unexpected; 3 is reserved for clarification outcomes, which are results, not errors.
"""

from __future__ import annotations


class WoodsError(Exception):
    """Base of every error woods raises on purpose; `exit_code` is what the CLI exits with."""

    exit_code = 1


class InputError(WoodsError):
    """Bad input from the caller: a missing path, a blank query, an invalid option value …"""

    exit_code = 2


class IndexNotFoundError(InputError):
    """No published index where one was expected."""


class CorruptIndexError(InputError):
    """An index exists but cannot be used: corrupt, truncated, foreign schema or embedding dimension.

    The message names the offending file and the fix (`woods index --full`).
    """


class LockTimeoutError(InputError):
    """Another `woods index` holds the store's lock for longer than `--wait` allowed."""


class IndexingError(WoodsError):
    """Indexing failed; the previously published index is untouched."""
