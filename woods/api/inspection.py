"""Questions about the index itself over one pinned generation: what it holds (`structure`), how
it stands against the repository (`status`: changes on disk, a moved root, the vector state), and
what a `--glob` / `--lang` filter selects of it.

Why here: these read the manifest, the metadata and the repository's files (`woods.freshness`)
and shape the library's answers (`woods.api.reports`); `Index` checks the arguments and pins the
generation.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods.api.reports import Status, Structure

if TYPE_CHECKING:
    from woods.api.background import BackgroundVectors
    from woods.api.generations import WarmGeneration
    from woods.filters import FileFilter
    from woods.freshness import Changes
    from woods.resolve import NameTable
    from woods.store.index import IndexStores
    from woods.store.postgres import PostgresStores

STRUCTURE_DETAILS = ("summary", "full")


def structure(gen: WarmGeneration, detail: str, top: int) -> Structure:
    """Counts by unit type, language and edge kind and the `top` units by PageRank
    (`Index.structure`)."""
    stores = gen.stores
    manifest = stores.manifest
    files: tuple[dict[str, Any], ...] = ()
    if detail == "full":
        files = tuple(
            {"path": f.path, "language": f.language, "units": f.unit_count} for f in stores.metadata.files()
        )
    return Structure(
        generation=stores.generation.name,
        root=manifest.root or None,
        created_at=manifest.data.get("created_at"),
        embedder=manifest.embedder,
        counts=manifest.counts,
        units_by_type=stores.metadata.type_counts(),
        files_by_language=stores.metadata.language_counts(),
        edges_by_via=stores.metadata.edge_counts_by_via(),
        files=files,
        top_pagerank=gen.ranked_units()[:top],
    )


def status(gen: WarmGeneration, files: FileFilter | None, background: BackgroundVectors) -> Status:
    """The index's identity and contents, and which repository files changed since it was built
    (`Index.status`); `background` is the handle's phase-2 thread (its state and warnings)."""
    from woods.freshness import changes_since_index, root_moved_warning

    stores = gen.stores
    manifest = stores.manifest
    skipped = manifest.data.get("skipped") or {}
    vectors = vector_state(gen, background)
    moved = root_moved_warning(gen.root, manifest.root)
    changes = changes_since_index(stores, gen.root)
    units_by_type = stores.metadata.type_counts()
    files_by_language = stores.metadata.language_counts()
    selected: dict[str, Any] | None = None
    if files is not None:
        changes, units_by_type, files_by_language, selected = filtered_contents(stores, files, changes, gen.names())
    return Status(
        vectors=vectors,
        store=str(stores.store_dir),
        generation=stores.generation.name,
        root=None if gen.root is None else str(gen.root),
        recorded_root=(manifest.root or None) if moved else None,
        warnings=(*moved, *background.warnings),
        created_at=manifest.data.get("created_at"),
        embedder=manifest.embedder,
        counts=manifest.counts,
        changes=changes,
        manifest=dict(manifest.data),
        units_by_type=units_by_type,
        files_by_language=files_by_language,
        skipped={str(reason): int(count) for reason, count in sorted(skipped.items())},
        repo=repo_name(stores),
        filter=selected,
    )


def vector_state(gen: WarmGeneration, background: BackgroundVectors) -> dict[str, Any]:
    """The vector state of the generation (`woods.indexing.resume.vector_state`), with a phase 2
    this handle's own thread is running shown as embedding (`Index.vector_state`)."""
    from woods.indexing.resume import vector_state as recorded_state

    stores = gen.stores
    if isinstance(stores.store_dir, Path):
        vectors = recorded_state(stores.store_dir, stores.generation.name, stores.manifest)
    else:  # another backend publishes the vectors with everything else
        chunks = int(stores.manifest.counts.get("chunks", 0))
        vectors = {"state": "complete", "embedded": chunks, "total": chunks}
    if background.running:  # this handle's own thread, maybe not yet at its first batch
        if vectors["state"] in ("pending", "interrupted"):
            vectors["state"] = "embedding"
        elif vectors.get("phase") == 1:
            vectors["contextual"] = {**vectors.get("contextual", {"embedded": None, "total": None}),
                                     "state": "embedding"}
    return vectors


def repo_name(stores: IndexStores | PostgresStores) -> str | None:
    """The one repository a PostgreSQL view reads (None: a `.woods` directory, or several)."""
    return stores.repo


def filtered_contents(
    stores: IndexStores | PostgresStores, files: FileFilter, changes: Changes, names: NameTable
) -> tuple[Changes, dict[str, int], dict[str, int], dict[str, Any]]:
    """What `status` shows under a file filter: the changes, units by type and files by language
    of the selected files, and the filter with how many files and units it selected."""
    from woods.freshness import Changes as ChangesType

    rows = stores.metadata.files()
    language_of = {row.path: row.language for row in rows}
    chosen = {row.path for row in rows if files.matches(row.path, row.language)}
    by_language: dict[str, int] = {}
    for row in rows:
        if row.path in chosen:
            by_language[row.language] = by_language.get(row.language, 0) + 1
    by_type: dict[str, int] = {}
    units = 0
    for entries in names.by_identifier.values():
        for entry in entries:
            if entry.file_path in chosen:
                by_type[entry.type] = by_type.get(entry.type, 0) + 1
                units += 1

    def keep(paths: Sequence[str]) -> list[str]:
        return [p for p in paths if files.matches(p, language_of.get(p))]

    narrowed = ChangesType(keep(changes.changed), keep(changes.added), keep(changes.deleted), changes.root_missing)
    selected = {**files.to_dict(), "files": len(chosen), "units": units}
    return narrowed, dict(sorted(by_type.items())), dict(sorted(by_language.items())), selected


__all__ = ["STRUCTURE_DETAILS", "filtered_contents", "repo_name", "status", "structure", "vector_state"]
