"""The answers to questions about the index itself: what it holds (`Structure`) and how it
stands against the repository (`Status`).

Why frozen dataclasses with `to_dict()`: `woods structure|status --json`, the MCP tools and Python
callers read the same objects under the same field names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from woods.api.records import RankedUnit
    from woods.freshness import Changes


@dataclass(frozen=True, slots=True)
class Structure:
    """What the index holds: counts by type, language and edge kind, the most central units (and,
    in full detail, every file). Every mapping is keyed in name order."""

    generation: str
    root: str | None
    created_at: str | None
    embedder: dict[str, Any]
    counts: dict[str, int]
    units_by_type: dict[str, int]
    files_by_language: dict[str, int]
    edges_by_via: dict[str, int]
    files: tuple[dict[str, Any], ...] = ()
    top_pagerank: tuple[RankedUnit, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "generation": self.generation,
            "root": self.root,
            "created_at": self.created_at,
            "embedder": dict(self.embedder),
            "counts": dict(self.counts),
            "units_by_type": dict(self.units_by_type),
            "files_by_language": dict(self.files_by_language),
            "edges_by_via": dict(self.edges_by_via),
            "top_pagerank": [u.to_dict() for u in self.top_pagerank],
        }
        if self.files:
            data["files"] = [dict(f) for f in self.files]
        return data


@dataclass(frozen=True, slots=True)
class Status:
    """Where the index is, what built it and what it holds (units by type, files by language,
    discovery skips by reason, the whole manifest), and which files changed on disk since."""

    store: str
    generation: str
    root: str | None
    created_at: str | None
    embedder: dict[str, Any]
    counts: dict[str, int]
    changes: Changes
    manifest: dict[str, Any] = field(default_factory=dict)
    units_by_type: dict[str, int] = field(default_factory=dict)
    files_by_language: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    repo: str | None = None
    # The vector state (woods.indexing.resume.vector_state): `state` complete / embedding /
    # interrupted / pending, `embedded` and `total` chunks when known.
    vectors: dict[str, Any] = field(default_factory=dict)
    # The root the manifest recorded, when it differs from `root` (a copied or moved repository).
    recorded_root: str | None = None
    # What the user must know about this index: a moved root, a background phase 2 that stopped
    # or failed (the handle's own thread has no caller to raise to).
    warnings: tuple[str, ...] = ()
    # `--glob` / `--lang` as applied, with the files and units they select (None: no filter; then
    # `units_by_type`, `files_by_language` and `changes` cover the whole index, else those files).
    filter: dict[str, Any] | None = None

    @property
    def fresh(self) -> bool:
        return bool(self.changes.fresh)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {} if self.repo is None else {"repo": self.repo}
        return data | {
            "store": self.store,
            "generation": self.generation,
            "root": self.root,
            "created_at": self.created_at,
            "embedder": dict(self.embedder),
            "counts": dict(self.counts),
            "units_by_type": dict(self.units_by_type),
            "files_by_language": dict(self.files_by_language),
            "skipped": dict(self.skipped),
            "manifest": dict(self.manifest),
            "fresh": self.fresh,
            "changes": self.changes.to_dict(),
            "vectors": dict(self.vectors),
            "recorded_root": self.recorded_root,
            "warnings": list(self.warnings),
        } | ({} if self.filter is None else {"filter": dict(self.filter)})


__all__ = ["Structure", "Status"]
