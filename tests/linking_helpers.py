"""Link a whole fixture project the way the index does, without stores: every file extracted,
every dependency resolved against all units (`woods.linking`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from woods.extract.layout import RepositoryLayout
from woods.linking import LinkedEdge, LinkTargets, link_unit
from woods.units import FileExtraction, Unit


def link_fixture(
    extract: Callable[[str, bytes, RepositoryLayout], FileExtraction], root: Path, patterns: tuple[str, ...]
) -> tuple[dict[str, Unit], dict[str, list[LinkedEdge]]]:
    """(linked units by identifier, edges by source identifier) of the fixture files matching `patterns`."""
    paths = sorted({p for pattern in patterns for p in root.rglob(pattern) if p.is_file()})
    rels = [p.relative_to(root).as_posix() for p in paths]
    layout = RepositoryLayout.from_paths(rels)
    units = [u for rel, p in zip(rels, paths, strict=True) for u in extract(rel, p.read_bytes(), layout).units]
    keys = [f"{u.identifier}@{u.type}@{u.file_path}:{u.line_start}" for u in units]
    names = LinkTargets.build(zip(keys, units, strict=True))
    linked: dict[str, Unit] = {}
    edges: dict[str, list[LinkedEdge]] = {}
    for key, unit in zip(keys, units, strict=True):
        done, unit_edges = link_unit(key, unit, names)
        linked.setdefault(done.identifier, done)
        edges.setdefault(done.identifier, []).extend(unit_edges)
    return linked, edges


def resolved(edges: dict[str, list[LinkedEdge]], source: str, via: str) -> set[str]:
    """Targets of `source`'s edges of kind `via` that are units of the fixture (target_key set)."""
    return {e.target for e in edges.get(source, ()) if e.via == via and e.target_key is not None}
