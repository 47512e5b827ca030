"""Where an index is: the one resolver every interface uses (`locate_index`) — a `--store`
directory or PostgreSQL URL as given, else the nearest `.woods` at or above a directory, walking
up as git and rg do.

Why one: the CLI's reading commands, `woods mcp` and `python -m woods.mcp_server` must find the
same index for the same arguments and refuse the same bad ones with the same message. Run from
`src/flask`, a reading command must read the repository's index at its root — not say there is
none and suggest `woods index`, which would build a second index inside the subdirectory. The walk
goes from the starting directory towards the filesystem root and stops at the first directory
holding `.woods`, or at a repository root (a directory holding `.git`): an index above the
repository belongs to another project.

Guarantees: reads the file system only (`stat`), never writes; a missing index is an
`IndexNotFoundError` whose message names where it looked and the directory to index.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from woods.errors import IndexNotFoundError, InputError

REPOSITORY_MARKER = ".git"  # a directory or, in a worktree or submodule, a file


def _start(path: Path | None) -> Path:
    start = Path.cwd() if path is None else path
    if not start.exists():
        raise InputError(f"path not found: {start}")
    if not start.is_dir():
        raise InputError(
            f"--path takes the repository directory, not a file: {start} (to search within some "
            "files, pass --glob PATTERN)"
        )
    return start.resolve()


def find_store(path: Path | None = None) -> Path | None:
    """The nearest `.woods` directory at or above `path` (default: the working directory),
    stopping at a repository root; None when there is none."""
    from woods.store.index import STORE_DIRNAME

    for directory in (start := _start(path), *start.parents):
        candidate = directory / STORE_DIRNAME
        if candidate.is_dir():
            return candidate
        if (directory / REPOSITORY_MARKER).exists():
            return None
    return None


def repository_root(path: Path | None = None) -> Path | None:
    """The nearest directory at or above `path` holding `.git`, or None."""
    for directory in (start := _start(path), *start.parents):
        if (directory / REPOSITORY_MARKER).exists():
            return directory
    return None


def locate_store(path: Path | None = None) -> Path:
    """`find_store`, or IndexNotFoundError saying where it looked and what to index."""
    found = find_store(path)
    if found is not None:
        return found
    start = _start(path)
    root = repository_root(path)
    if root is None:
        where, target = f"{start} or any directory above it", start
    elif root == start:
        where, target = str(start), start
    else:
        where, target = f"{start} or above it up to the repository root {root}", root
    shown = "." if target == Path.cwd().resolve() else str(target)
    raise IndexNotFoundError(f"no woods index in {where}; run `woods index {shown}` first")


@dataclass(frozen=True, slots=True)
class IndexLocation:
    """An index as the arguments name it: `store` is its directory (a `Path`) or a PostgreSQL URL
    (a `str`); `root` the repository it was found from (the directory holding the `.woods`; the
    directory given when none exists yet), None when the store was named (`--store`)."""

    store: Path | str
    root: Path | None


def locate_index(
    path: Path | None = None, store: str | Path | None = None, repo: str | None = None, *, must_exist: bool = True
) -> IndexLocation:
    """The index `--path` / `--store` / `--repo` name: `store` (a directory or a PostgreSQL URL;
    `repo` only with a URL), else the nearest `.woods` at or above `path` (default: the working
    directory), up to the repository root (`find_store`). Without one: IndexNotFoundError naming
    the directory to index, or (`must_exist=False`: a server whose `reindex` builds it)
    `path/.woods`."""
    if path is not None and store is not None:
        raise InputError("pass either --path or --store, not both")
    if is_server_url(store):
        return IndexLocation(str(store), None)
    if repo is not None:
        raise InputError("--repo selects a repository of a PostgreSQL store; pass --store postgresql://…")
    if store is not None:
        return IndexLocation(Path(store), None)
    if must_exist:
        found = locate_store(path)
    else:
        from woods.store.index import store_dir_for

        found = find_store(path) or store_dir_for(path, None)
    return IndexLocation(found, found.parent)


def is_server_url(spec: object) -> bool:
    """True when a `--store` value names a PostgreSQL database rather than a directory."""
    from woods.store.pg_connect import is_server_url as names_server

    return names_server(spec)


def store_spec(store: str | os.PathLike[str]) -> Path | str:
    """A store as the library holds it: a PostgreSQL URL stays a `str`, anything else is a `Path`."""
    return str(store) if is_server_url(store) else Path(store)


def store_label(store: Path | str) -> str:
    """How a store is named in messages and status: a directory as given, a PostgreSQL URL
    without its password."""
    if isinstance(store, Path):
        return str(store)
    from woods.store.pg_connect import redact

    return redact(store)


__all__ = [
    "REPOSITORY_MARKER",
    "IndexLocation",
    "find_store",
    "is_server_url",
    "locate_index",
    "locate_store",
    "repository_root",
    "store_label",
    "store_spec",
]
