"""What an index run reports: the progress protocol the builder calls, and the run's summary.

Why its own module: every stage of the builder reports into these two, and interfaces render them
(the CLI with rich, the MCP server as JSON, tests not at all).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol


class Progress(Protocol):
    """Where the builder reports phases; the CLI renders it with rich, tests ignore it."""

    def phase(self, name: str, total: int | None) -> None: ...

    def advance(self, count: int = 1) -> None: ...

    def note(self, message: str) -> None: ...


class SilentProgress:
    def phase(self, name: str, total: int | None) -> None:
        pass

    def advance(self, count: int = 1) -> None:
        pass

    def note(self, message: str) -> None:
        pass


@dataclass
class IndexSummary:
    """What a run did: counts by language/type/reason, seconds per phase, where it published."""

    store_dir: str
    generation: str
    files: int = 0
    files_by_language: dict[str, int] = field(default_factory=dict)
    units: int = 0
    units_by_type: dict[str, int] = field(default_factory=dict)
    chunks: int = 0
    embedded: int = 0
    reused_vectors: int = 0
    # Vectors read back from the resume cache (computed by an interrupted earlier run).
    resumed_vectors: int = 0
    # Seconds from the start of the run until the lexical generation was published (searchable).
    searchable_seconds: float | None = None
    # True while only the lexical generation is published (phase 2 not finished).
    vectors_pending: bool = False
    edges: int = 0
    resolved_edges: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    parse_failures: int = 0
    reused_files: int = 0
    # Repository-relative paths this run found different from the previous generation (content
    # changed, new, gone); on a first build every indexed file is added.
    changed_files: list[str] = field(default_factory=list)
    added_files: list[str] = field(default_factory=list)
    deleted_files: list[str] = field(default_factory=list)
    removed_units: int = 0
    up_to_date: bool = False
    full: bool = False
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def timed(seconds: dict[str, float], name: str, started: float) -> None:
    """Add the time since `started` to `seconds[name]` (a phase may run in several steps)."""
    seconds[name] = round(seconds.get(name, 0.0) + time.perf_counter() - started, 3)
