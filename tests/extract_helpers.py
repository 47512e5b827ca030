"""Helpers the per-language extraction tests share: extract a fixture file or tree, find a fixture
line, list a unit's dependencies of one kind, link a tree's units the way the index does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from woods.units import FileExtraction, Unit

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def extract_fixture(
    extract: Callable[[str, bytes], FileExtraction], root: Path, rel: str, language: str | None = None
) -> dict[str, Unit]:
    """Units of fixture file `root/rel` by identifier; the file must parse without warnings."""
    result = extract(rel, (root / rel).read_bytes())
    assert result.warnings == ()
    if language is not None:
        assert all(u.language == language and u.file_path == rel for u in result.units)
    return {u.identifier: u for u in result.units}


def line_of(root: Path, rel: str, needle: str) -> int:
    """1-based line of the first line of `root/rel` containing `needle`."""
    for number, line in enumerate((root / rel).read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {rel}")


def deps_by_via(unit: Unit, via: str) -> dict[str, tuple[str, ...]]:
    """target → lookup candidates of the unit's dependencies of kind `via`."""
    return {d.target: d.lookup for d in unit.dependencies if d.via == via}


def extract_tree(root: Path) -> list[FileExtraction]:
    """Every indexable file under `root`, extracted as the indexer would (`extract_file`), by path."""
    from woods.extract import extract_file, language_for

    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if language_for(rel) is not None:
            found.append(extract_file(rel, path.read_bytes()))
    return found


def linked_edges(units: list[Unit]) -> dict[str, dict[tuple[str, str], str | None]]:
    """Source identifier → {(target, via): target_key} once `units` are linked together, as the
    index links them (keys from `assign_keys`, candidates through `woods.linking`)."""
    from woods.linking import LinkTargets, link_unit
    from woods.store.identity import assign_keys

    keys = assign_keys(units)
    names = LinkTargets.build(zip(keys, units, strict=True))
    edges: dict[str, dict[tuple[str, str], str | None]] = {}
    for key, unit in zip(keys, units, strict=True):
        _linked, unit_edges = link_unit(key, unit, names)
        found = edges.setdefault(unit.identifier, {})
        for edge in unit_edges:
            found[(edge.target, edge.via)] = edge.target_key
    return edges
