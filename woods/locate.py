"""Where the index of a working directory is: the nearest `.woods`, walking up as git and rg do.

Why: run from `src/flask`, a reading command must read the repository's index at its root — not
say there is none and suggest `woods index`, which would build a second index inside the
subdirectory. The walk goes from the starting directory towards the filesystem root and stops at
the first directory holding `.woods`, or at a repository root (a directory holding `.git`): an
index above the repository belongs to another project.

Guarantees: reads the file system only (`stat`), never writes; a missing index is an
`IndexNotFoundError` whose message names where it looked and the directory to index.
"""

from __future__ import annotations

from pathlib import Path

from woods.errors import IndexNotFoundError, InputError
from woods.store.index import STORE_DIRNAME

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


__all__ = ["find_store", "locate_store", "repository_root"]
