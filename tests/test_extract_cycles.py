"""Extraction leaves no reference cycles behind: what it builds for a file is freed by reference
counting the moment the file's units are returned.

Why it matters: the cyclic collector is paused while phase 1 of an index is built
(woods/indexing/collector.py), so a cycle left per file extracted in the indexing process stays in
memory until phase 1 ends — the Ruby drafts' owner ↔ methods links and Python's class drafts (their own `cls`)
kept 760 MB of the standard library's extraction alive that way.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from woods.discovery import discover
from woods.extract import SHEBANG_BYTES, extract_file, language_for
from woods.extract.layout import RepositoryLayout
from woods.indexing.collector import paused_collector

# Slow (the quick loop leaves it out): every fixture repository extracted under the cycle collector's watch.
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# fixtures/evidence holds pasted-text samples (tests/test_evidence.py), not a repository.
REPOSITORIES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "evidence")


def _sources(repository: str) -> tuple[RepositoryLayout, list[tuple[str, bytes]]]:
    root = FIXTURES / repository
    found = discover(root)
    layout = RepositoryLayout.from_paths(item.path for item in found.files)
    sources = [(item.path, (root / item.path).read_bytes()) for item in found.files]
    return layout, [(path, data) for path, data in sources if language_for(path, data[:SHEBANG_BYTES])]


def _cyclic_garbage_left(layout: RepositoryLayout, sources: list[tuple[str, bytes]]) -> int:
    """Objects only the cyclic collector could free after extracting every file once more."""
    for path, data in sources:  # first use: caches, compiled queries, lazily built tables
        extract_file(path, data, layout)
    gc.collect()
    with paused_collector():
        for path, data in sources:
            extract_file(path, data, layout)
        return gc.collect()


@pytest.mark.parametrize("repository", REPOSITORIES)
def test_extraction_leaves_no_reference_cycles(repository: str) -> None:
    layout, sources = _sources(repository)
    assert sources, f"{repository}: no source files found"
    assert _cyclic_garbage_left(layout, sources) == 0


def test_the_fixtures_hold_the_shapes_that_made_cycles() -> None:
    """The cases above include what used to leave cycles: Ruby classes with methods, a Rake file
    with nested namespaces (a closure calling itself) and Python classes."""
    rails = dict(_sources("rails_app")[1])
    assert any(path.endswith(".rake") and b"namespace" in data for path, data in rails.items())
    assert any(path.endswith(".rb") and b"class " in data and b"def " in data for path, data in rails.items())
    python = dict(_sources("python_pkg")[1])
    assert any(path.endswith(".py") and b"\nclass " in data for path, data in python.items())
