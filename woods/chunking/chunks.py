"""The chunk: one embedding text of a unit, and the names chunking gives its pieces.

Why its own module: the chunkers (`splitter.py`, `semantic.py`) and the orchestration in
`woods.chunking` all produce `Chunk`s; keeping the value here lets them depend on it without
depending on each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from woods.embedding.text import embedding_text
from woods.units import Unit

CHUNK_WHOLE = "whole"  # the unit fits: one chunk, embedding id = the unit id
CHUNK_PART = "part"  # one of several pieces of a unit too long for the embedder
CHUNK_SKELETON = "skeleton"  # a piece of a container embedded with its members' bodies elided

TokenCounter = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One embedding text of a unit and where its content sits in the file.

    Guarantees: every chunk's `text` (== prefix + "\\n" + `content`) fits the embedder's input;
    `line_start`/`line_end` are 1-based and absolute in the file; `embedding_id` is the unit id for
    a single chunk, else `<id>#chunk_<i>`. Packed chunks (`part`) concatenate to the unit's
    source_code and touch (the next starts on the line after, or on the same line when a long line
    was cut). Semantic sections of Ruby units (`summary`, `associations`, `action_show` …) cover
    every non-blank line of the source but may gather non-contiguous lines, so their line range
    can span other sections' lines.
    """

    embedding_id: str
    unit_identifier: str
    unit_type: str
    index: int
    chunk_type: str
    content: str
    line_start: int
    line_end: int
    text: str


def chunk_id(base_id: str, index: int) -> str:
    """Embedding id of the index-th (0-based) chunk of a multi-chunk unit (Ruby indexer rule)."""
    return f"{base_id}#chunk_{index}"


def make_chunk(unit: Unit, embedding_id: str, index: int, chunk_type: str, prefix: str,
                line_start: int, content: str) -> Chunk:
    line_end = line_start + content.count("\n", 0, max(len(content) - 1, 0))
    return Chunk(embedding_id=embedding_id, unit_identifier=unit.identifier, unit_type=unit.type,
                 index=index, chunk_type=chunk_type, content=content, line_start=line_start,
                 line_end=line_end, text=embedding_text(prefix, content))
