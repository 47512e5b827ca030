"""Freshness: which indexed files changed, appeared or vanished since the index was built.

Why: an index kept for months must never serve silently wrong results. The check is cheap first
(size + mtime from stat) and exact second (SHA-256 only when stat disagrees), and it never writes.

Which repository is compared is the caller's `root` — the directory a command or server was given
(`index_root`), never blindly the root the manifest recorded: a repository copied or moved with its
`.woods/` must be compared with its own files, not with the original's. An indexed path is read
only when it stays inside that root (`inside_root`): a damaged or foreign index cannot make a
reader open files elsewhere.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from woods.limits import DEFAULT_MAX_FILE_BYTES
from woods.store.index import STORE_DIRNAME

if TYPE_CHECKING:
    from woods.store.index import IndexStores
    from woods.store.metadata import FileRow
    from woods.store.postgres import PostgresStores

# Stale paths named in the warning; the count says how many more there are.
STALE_PATHS_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Changes:
    """Paths (repository-relative, sorted) that differ from the indexed state."""

    changed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    root_missing: bool = False

    @property
    def fresh(self) -> bool:
        return not (self.changed or self.added or self.deleted or self.root_missing)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fresh": self.fresh,
            "changed": self.changed,
            "added": self.added,
            "deleted": self.deleted,
            "root_missing": self.root_missing,
        }


def index_root(store_dir: Path | str, given: Path | None, recorded: str | None) -> Path | None:
    """The repository an open index describes: the root a command or server was given; else, for a
    local store named `.woods`, the directory holding it (a copied repository carries its index);
    else the root the manifest recorded (an index kept outside its repository, or a PostgreSQL
    store, knows no other). None when none is known (an index built from a corpus)."""
    if given is not None:
        return Path(os.path.abspath(given))
    if isinstance(store_dir, Path) and store_dir.name == STORE_DIRNAME:
        return Path(os.path.abspath(store_dir)).parent
    return Path(recorded) if recorded else None


def root_moved_warning(root: Path | None, recorded: str | None) -> list[str]:
    """The one warning that says the index was built from another directory (a copy, a move, a
    restored cache): its files are read from `root`, and the next `woods index` re-roots it."""
    if root is None or not recorded or _same_directory(root, Path(recorded)):
        return []
    return [
        f"this index was built from {recorded}, not {root} (a copied or moved repository); files are "
        f"compared with {root}; run `woods index` to re-root it"
    ]


def _same_directory(a: Path, b: Path) -> bool:
    if os.path.abspath(a) == os.path.abspath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def inside_root(root: Path, relative: str) -> Path | None:
    """`root / relative` when `relative` is a plain repository-relative path (no absolute path, no
    `..`, no NUL), else None: an indexed path never names a file outside the repository."""
    if not relative or "\x00" in relative:
        return None
    candidate = PurePosixPath(relative)
    if candidate.is_absolute() or ".." in candidate.parts or candidate.parts[:1] == ("~",):
        return None
    return root / candidate


def file_is_stale(root: Path, row: FileRow) -> bool:
    """True when the file at `row.path` no longer has the indexed content (stat, then hash); a
    path that is not a plain repository-relative path counts as stale (it is never opened)."""
    path = inside_root(root, row.path)
    if path is None:
        return True
    try:
        stat = path.stat()
    except OSError:
        return True
    if stat.st_size == row.size and stat.st_mtime_ns == row.mtime_ns:
        return False
    if stat.st_size != row.size:
        return True
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() != row.sha256
    except OSError:
        return True


def stale_files(stores: IndexStores | PostgresStores, root: Path | None, paths: Iterable[str]) -> set[str]:
    """Which of `paths` changed under `root` since indexing (for marking results stale)."""
    wanted = set(paths)
    if root is None or not wanted:
        return set()
    if not root.is_dir():
        # The repository is not checked out here (a server index read on another machine, or a
        # moved checkout): nothing can be compared, so nothing is marked; `status` says the root is gone.
        return set()
    rows = stores.metadata.file_rows(wanted)
    return {p for p, row in rows.items() if file_is_stale(root, row)}


def stale_warning(stale: Collection[str]) -> list[str]:
    """The one warning that says results come from changed files (none when nothing is stale)."""
    if not stale:
        return []
    shown = sorted(stale)[:STALE_PATHS_SHOWN]
    more = ", …" if len(stale) > STALE_PATHS_SHOWN else ""
    return [
        f"stale: {len(stale)} file(s) changed since indexing ({', '.join(shown)}{more}); "
        "run `woods index` to refresh"
    ]


def changes_since_index(
    stores: IndexStores | PostgresStores, root: Path | None, *, include_added: bool = True
) -> Changes:
    """Compare the index's file table with the repository at `root`."""
    if root is None:
        return Changes()
    if not root.is_dir():
        return Changes(root_missing=True)
    rows = stores.metadata.files()
    changed, deleted = [], []
    for row in rows:
        path = inside_root(root, row.path)
        if path is None or not path.exists():
            deleted.append(row.path)
        elif file_is_stale(root, row):
            changed.append(row.path)
    added: list[str] = []
    if include_added:
        from woods.discovery import discover

        indexed = {row.path for row in rows}
        max_bytes = int(stores.manifest.data.get("max_file_bytes") or DEFAULT_MAX_FILE_BYTES)
        added = sorted(f.path for f in discover(root, max_file_bytes=max_bytes).files if f.path not in indexed)
    return Changes(sorted(changed), added, sorted(deleted))
