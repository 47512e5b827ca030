"""Freshness: which indexed files changed, appeared or vanished since the index was built.

Why: an index kept for months must never serve silently wrong results. The check is cheap first
(size + mtime from stat) and exact second (SHA-256 only when stat disagrees), and it never writes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods.limits import DEFAULT_MAX_FILE_BYTES

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


def file_is_stale(root: Path, row: FileRow) -> bool:
    """True when the file at `row.path` no longer has the indexed content (stat, then hash)."""
    path = root / row.path
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


def stale_files(stores: IndexStores | PostgresStores, paths: Iterable[str]) -> set[str]:
    """Which of `paths` changed on disk since indexing (for marking results stale)."""
    wanted = set(paths)
    root_text = stores.manifest.root
    if not root_text or not wanted:
        return set()
    root = Path(root_text)
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


def changes_since_index(stores: IndexStores | PostgresStores, *, include_added: bool = True) -> Changes:
    """Compare the index's file table with the repository on disk."""
    root_text = stores.manifest.root
    if not root_text:
        return Changes()
    root = Path(root_text)
    if not root.is_dir():
        return Changes(root_missing=True)
    rows = stores.metadata.files()
    changed, deleted = [], []
    for row in rows:
        if not (root / row.path).exists():
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


def mark_stale(stores: IndexStores | PostgresStores, results: list[dict[str, Any]]) -> list[str]:
    """Set `"stale": True` on result rows whose file changed since indexing; return the warnings."""
    stale = stale_files(stores, (str(r["file_path"]) for r in results if r.get("file_path")))
    for row in results:
        if row.get("file_path") in stale:
            row["stale"] = True
    return stale_warning(stale)
