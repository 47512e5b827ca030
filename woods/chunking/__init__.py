"""Chunking: split a unit into texts that each fit the embedder's token limit.

Why: providers refuse over-long input instead of truncating (a truncated text would be stored
under a vector that does not describe it), so every text handed to a provider must fit. A unit
that fits is one chunk whose embedding id is the unit's own id; a larger container is embedded
as its skeleton; a large Ruby class-like unit is split along its sections (`semantic.py`); any
other unit is packed at member boundaries (its children's line ranges, e.g. the methods of a
class), else at line boundaries, and a single over-long line at character boundaries
(`splitter.py`) — nothing is ever dropped. A unit without members (a long function, a document
section, a plain-text file) is therefore cut into windows of whole lines; the one exception is a
single line longer than the model input, which alone is cut inside (its pieces share that line
number). A document with sections (type `document`) is always embedded as its outline.

Every chunk's text is the Ruby TextPreparer format: the unit's prefix + "\n" + the chunk content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from woods.chunking.chunks import (
    CHUNK_PART,
    CHUNK_SKELETON,
    CHUNK_WHOLE,
    Chunk,
    TokenCounter,
    chunk_id,
    make_chunk,
)
from woods.chunking.semantic import SEMANTIC_UNIT_TYPES, semantic_unit_chunks
from woods.chunking.splitter import Splitter, member_line_ranges, segment_pieces
from woods.embedding.text import embedding_text, unit_embedding_prefix
from woods.errors import InputTooLongError
from woods.units import DOCUMENT_TYPE, Unit

__all__ = ["CHUNK_PART", "CHUNK_SKELETON", "CHUNK_WHOLE", "Chunk", "TokenCounter", "chunk_id", "chunk_unit",
           "skeleton_source"]


def chunk_unit(
    unit: Unit,
    provider_count_tokens: TokenCounter | None,
    max_tokens: int | None,
    children: Sequence[Unit] = (),
    *,
    base_id: str | None = None,
    prefix: str | None = None,
    skeleton: bool = True,
) -> list[Chunk]:
    """The unit's embedding texts, each within `max_tokens` as counted by `provider_count_tokens`.

    A unit whose source is empty or whitespace yields no chunks (the Ruby indexer drops such
    texts). `max_tokens` None means no limit: one whole chunk. `base_id` overrides the id chunk
    ids are built from (e.g. a typed storage key); default the unit identifier. `prefix`
    overrides the unit's TextPreparer prefix (the index builder passes `bounded_prefix`).
    `skeleton=False` packs a too-long container's full source (members kept whole) instead of
    embedding its skeleton. Raises
    InputTooLongError when even the prefix plus one character does not fit.
    """
    source = unit.source_code or ""
    if not source.strip():
        return []
    base = base_id if base_id is not None else unit.identifier
    if max_tokens is not None and provider_count_tokens is None:
        raise ValueError("max_tokens needs a token counter")
    prefix = unit_embedding_prefix(unit) if prefix is None else prefix
    whole = embedding_text(prefix, source)
    # A document with sections is embedded as its outline even when it fits: its sections embed
    # their own text, so the document's vectors say what it alone says (title, introduction,
    # headings) and a README's words do not come back once per nesting level.
    if skeleton and children and unit.type == DOCUMENT_TYPE:
        outline = skeleton_source(unit, children)
        if outline != source:
            if max_tokens is None or provider_count_tokens is None:
                chunk = make_chunk(unit, chunk_id(base, 0), 0, CHUNK_SKELETON, prefix, unit.line_start, outline)
                return [replace(chunk, line_start=unit.line_start, line_end=unit.line_end)]
            return _pack(unit, outline, prefix, provider_count_tokens, max_tokens, base, (), CHUNK_SKELETON)
    if max_tokens is None or provider_count_tokens is None or provider_count_tokens(whole) <= max_tokens:
        return [make_chunk(unit, base, 0, CHUNK_WHOLE, prefix, unit.line_start, source)]
    # --- container skeletons ------------------------------------------------------------------
    # A class or module that does not fit, and whose members are units of their own, is embedded
    # as its skeleton: its own lines with each member's body replaced by the member's first line.
    # The bodies are not lost — each member embeds its full source under its own id — and the
    # container's vectors then describe what the container itself says instead of repeating its
    # members (on the Python standard library this cut the embedded texts from 187k to ~90k).
    if skeleton and children and not _semantic_candidate(unit):
        outline = skeleton_source(unit, children)
        if outline != source:
            return _pack(unit, outline, prefix, provider_count_tokens, max_tokens, base, (), CHUNK_SKELETON)
    # A Ruby model/controller/class-like unit that must be split is split along its sections
    # (summary, associations, action_show, method_call …) instead of line windows (the Ruby gem's). Its
    # chunks cover the source but need not concatenate to it (a section gathers non-contiguous
    # lines). Its methods' line ranges come from the member units (no second parse).
    semantic = semantic_unit_chunks(
        unit, provider_count_tokens, max_tokens, base_id=base, prefix=prefix, members=children or None
    )
    if semantic is not None:
        return semantic
    return _pack(unit, source, prefix, provider_count_tokens, max_tokens, base, children, CHUNK_PART)


def _pack(unit: Unit, source: str, prefix: str, count: TokenCounter, max_tokens: int, base: str,
          children: Sequence[Unit], chunk_type: str) -> list[Chunk]:
    """Greedy packing of `source` (members kept whole where they fit) into chunks that fit."""
    splitter = Splitter(source, prefix, count, max_tokens)
    if splitter.budget <= 0:
        text = embedding_text(prefix, source[:1])
        raise InputTooLongError(count(text), max_tokens, text)
    chunks = []
    line = unit.line_start
    for index, (start, end) in enumerate(splitter.pack(segment_pieces(splitter, unit, children))):
        content = source[start:end]
        chunk = make_chunk(unit, chunk_id(base, index), index, chunk_type, prefix, line, content)
        if chunk_type == CHUNK_SKELETON:  # skeleton lines do not map 1:1 to file lines
            chunk = replace(chunk, line_start=unit.line_start, line_end=unit.line_end)
        chunks.append(chunk)
        line += content.count("\n")  # the next chunk starts where this one's content ends
    return chunks


def _semantic_candidate(unit: Unit) -> bool:
    """Ruby units the semantic chunker splits into sections (it needs the member bodies)."""
    return unit.language == "ruby" and unit.type in SEMANTIC_UNIT_TYPES


def skeleton_source(unit: Unit, children: Sequence[Unit]) -> str:
    """The unit's source with every member's body (lines after its first) replaced by one line
    `<indent>… N lines: <member identifier>`; members are the `children` inside the unit's lines."""
    lines = unit.source_code.splitlines(keepends=True)
    ranges = member_line_ranges(unit, children, len(lines))
    by_start = {first: last for first, last in ranges}
    names = {max(c.line_start - unit.line_start, 0): c.identifier for c in children}
    out: list[str] = []
    index = 0
    while index < len(lines):
        last = by_start.get(index)
        if last is None or last == index:
            out.append(lines[index])
            index += 1
            continue
        out.append(lines[index] if lines[index].endswith("\n") else lines[index] + "\n")
        body = lines[index + 1 : last + 1]
        indent = next((b[: len(b) - len(b.lstrip())] for b in body if b.strip()), "    ")
        ending = "\n" if lines[last].endswith("\n") else ""
        out.append(f"{indent}… {len(body)} lines: {names.get(index, '')}{ending}")
        index = last + 1
    return "".join(out)
