"""Helpers the per-language extraction tests share: extract a fixture file, find a fixture line,
list a unit's dependencies of one kind."""

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
