"""Argument checks every question of the library shares: the same bad input gets the same
`InputError` (exit 2, a message saying what to pass) on every interface — the CLI, the MCP server
and Python callers all reach these through `woods.Index` and `build_index`.
"""

from __future__ import annotations

from collections.abc import Sequence

from woods.errors import InputError


def validate_positive(name: str, value: object, maximum: int | None = None) -> int:
    """`value` as a positive int of at most `maximum` (when given)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    if maximum is not None and value > maximum:
        raise InputError(f"{name} must be at most {maximum}, got {value}")
    return value


def validate_identifier(identifier: object) -> str:
    """`identifier` as a non-blank string."""
    if not isinstance(identifier, str) or not identifier.strip():
        raise InputError(f"identifier must be a non-blank string, got {identifier!r}")
    return identifier


def validate_names(name: str, values: object) -> tuple[str, ...] | None:
    """A list of non-blank strings (unit types, edge kinds), or None."""
    if values is None:
        return None
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, Sequence | set | frozenset):
        raise InputError(f"{name} must be a list of names, got {values!r}")
    checked = tuple(values)
    if not all(isinstance(v, str) and v.strip() for v in checked):
        raise InputError(f"{name} must be a list of non-blank names, got {values!r}")
    return checked


def validate_via(via: object) -> str | tuple[str, ...] | None:
    """One edge kind or a list of them, as given (a string stays a string)."""
    if via is None:
        return None
    if isinstance(via, str):
        if not via.strip():
            raise InputError("via must be an edge kind (e.g. calls) or a list of them, got ''")
        return via
    try:
        return validate_names("via", via)
    except InputError:
        raise InputError(f"via must be an edge kind (e.g. calls) or a list of them, got {via!r}") from None


__all__ = ["validate_identifier", "validate_names", "validate_positive", "validate_via"]
