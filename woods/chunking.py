"""Chunking: split a unit into texts that each fit the embedder's token limit.

Why: providers refuse over-long input instead of truncating (a truncated text would be stored
under a vector that does not describe it), so every text handed to a provider must fit. A unit
that fits is one chunk whose embedding id is the unit's own id; a larger one is split at member
boundaries (its children's line ranges, e.g. the methods of a class), else at line boundaries,
and a single over-long line at character boundaries — nothing is ever dropped.

Every chunk's text is the Ruby TextPreparer format: the unit's prefix + "\\n" + the chunk content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from woods.embedding.provider import InputTooLongError
from woods.embedding.text import embedding_text, unit_embedding_prefix
from woods.units import Unit

CHUNK_WHOLE = "whole"  # the unit fits: one chunk, embedding id = the unit id
CHUNK_PART = "part"  # one of several pieces of a unit too long for the embedder
CHUNK_SKELETON = "skeleton"  # a piece of a container embedded with its members' bodies elided

# First guess of a slice's length when cutting a long line: code averages 3-4 characters per
# word piece, so 4 per token of budget usually fits at once and galloping rarely needs more probes.
_FIRST_PROBE_CHARS_PER_TOKEN = 4

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


@dataclass(frozen=True, slots=True)
class _Piece:
    """A span [start, end) of the source with its estimated token cost (excluding specials).

    `level` says how it may be refined when a chunk holding it alone does not fit:
    0 = member/gap segment → lines, 1 = line → character slices, 2 = slice → halves.
    """

    start: int
    end: int
    cost: int
    level: int
    lines: tuple[_Piece, ...] = ()  # a segment's line pieces (already counted)


class _Splitter:
    """The state of splitting one unit: its source, prefix, budget and token counter."""

    def __init__(self, source: str, prefix: str, count: TokenCounter, max_tokens: int) -> None:
        self.source = source
        self.prefix = prefix
        self.count = count
        self.max_tokens = max_tokens
        # A text's count includes the model's special tokens ([CLS]/[SEP] for BERT) once; a
        # piece's cost is its count minus them, so costs of whitespace-separated pieces add up.
        self.special_tokens = count("")
        self.budget = max_tokens - count(prefix + "\n")

    def cost(self, start: int, end: int) -> int:
        return max(0, self.count(self.source[start:end]) - self.special_tokens)

    def fits(self, start: int, end: int) -> bool:
        return self.count(embedding_text(self.prefix, self.source[start:end])) <= self.max_tokens

    def line_pieces(self, start: int, end: int) -> list[_Piece]:
        pieces = []
        for line_start, line_end in _line_spans(self.source, start, end):
            pieces.append(_Piece(line_start, line_end, self.cost(line_start, line_end), 1))
        return pieces

    def slice_pieces(self, start: int, end: int) -> list[_Piece]:
        """Greedy character slices of [start, end), each a longest-found prefix that fits alone."""
        pieces = []
        while start < end:
            length = self._fitting_length(start, end)
            if length == 0:
                text = embedding_text(self.prefix, self.source[start : start + 1])
                raise InputTooLongError(self.count(text), self.max_tokens, text)
            pieces.append(_Piece(start, start + length, self.cost(start, start + length), 2))
            start += length
        return pieces

    def _fitting_length(self, start: int, end: int) -> int:
        """A long prefix length of source[start:end] whose cost fits the budget (0: none does).

        Galloping then bisection, so a very long line costs O(log) counts per slice of about the
        slice's size. `low` is always a length verified to fit, so a counter that is not monotone
        in the length can only make slices shorter, never too long.
        """
        limit = end - start
        low, high = 0, min(limit, max(1, self.budget) * _FIRST_PROBE_CHARS_PER_TOKEN)
        while self.cost(start, start + high) <= self.budget:
            low = high
            if high == limit:
                return limit
            high = min(limit, high * 2)
        while high - low > 1:  # low fits, high does not
            middle = (low + high) // 2
            if self.cost(start, start + middle) <= self.budget:
                low = middle
            else:
                high = middle
        return low

    def refine(self, piece: _Piece) -> list[_Piece]:
        """Smaller pieces covering the same span (a single character cannot be refined)."""
        if piece.level == 0:
            return list(piece.lines) or self.line_pieces(piece.start, piece.end)
        if piece.level == 1:
            return self.slice_pieces(piece.start, piece.end)
        if piece.end - piece.start <= 1:
            text = embedding_text(self.prefix, self.source[piece.start : piece.end])
            raise InputTooLongError(self.count(text), self.max_tokens, text)
        middle = (piece.start + piece.end) // 2
        return [_Piece(piece.start, middle, self.cost(piece.start, middle), 2),
                _Piece(middle, piece.end, self.cost(middle, piece.end), 2)]

    def admissible(self, pieces: list[_Piece]) -> list[_Piece]:
        """Refine every piece whose estimate alone exceeds the budget until none does."""
        out: list[_Piece] = []
        for piece in pieces:
            if piece.cost <= self.budget:
                out.append(piece)
            else:
                out.extend(self.admissible(self.refine(piece)))
        return out

    def pack(self, pieces: list[_Piece]) -> list[tuple[int, int]]:
        """Greedy packing of consecutive pieces by estimate, then each span checked with one
        real count; a span that is over (token counts need not add up) is split again."""
        groups: list[list[_Piece]] = []
        total = 0
        for piece in self.admissible(pieces):
            if groups and total + piece.cost <= self.budget:
                groups[-1].append(piece)
                total += piece.cost
            else:
                groups.append([piece])
                total = piece.cost
        spans: list[tuple[int, int]] = []
        for group in groups:
            start, end = group[0].start, group[-1].end
            if self.fits(start, end):
                spans.append((start, end))
            elif len(group) > 1:
                half = len(group) // 2
                spans.extend(self.pack(group[:half]))
                spans.extend(self.pack(group[half:]))
            else:
                spans.extend(self.pack(self.refine(group[0])))
        return spans


def _line_spans(source: str, start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) cut after each "\\n" (only "\\n" ends a line, as in tree-sitter positions)."""
    spans = []
    position = start
    while position < end:
        newline = source.find("\n", position, end)
        line_end = end if newline < 0 else newline + 1
        spans.append((position, line_end))
        position = line_end
    return spans


def _member_line_ranges(unit: Unit, children: Sequence[Unit], line_count: int) -> list[tuple[int, int]]:
    """Children's line ranges as 0-based inclusive line indexes of the unit's source: outermost
    first, overlapping or out-of-range ones dropped, sorted by start."""
    ranges = []
    for child in children:
        first = max(child.line_start - unit.line_start, 0)
        last = min(child.line_end - unit.line_start, line_count - 1)
        if first <= last:
            ranges.append((first, last))
    kept: list[tuple[int, int]] = []
    for first, last in sorted(ranges, key=lambda r: (r[0], -r[1])):
        if not kept or first > kept[-1][1]:
            kept.append((first, last))
    return kept


def _segment_pieces(splitter: _Splitter, unit: Unit, children: Sequence[Unit]) -> list[_Piece]:
    """The source as member segments (a child's lines) and gap segments (lines between them).
    Each line is counted once; a segment's cost is the sum of its lines'."""
    lines = splitter.line_pieces(0, len(splitter.source))
    members = _member_line_ranges(unit, children, len(lines))
    boundaries = sorted({0, len(lines)} | {first for first, _ in members} | {last + 1 for _, last in members})
    pieces = []
    for first, after in zip(boundaries, boundaries[1:], strict=False):
        segment = lines[first:after]
        if len(segment) == 1:
            pieces.append(segment[0])
        else:
            cost = sum(piece.cost for piece in segment)
            pieces.append(_Piece(segment[0].start, segment[-1].end, cost, 0, tuple(segment)))
    return pieces


def _make_chunk(unit: Unit, embedding_id: str, index: int, chunk_type: str, prefix: str,
                line_start: int, content: str) -> Chunk:
    line_end = line_start + content.count("\n", 0, max(len(content) - 1, 0))
    return Chunk(embedding_id=embedding_id, unit_identifier=unit.identifier, unit_type=unit.type,
                 index=index, chunk_type=chunk_type, content=content, line_start=line_start,
                 line_end=line_end, text=embedding_text(prefix, content))


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
    if max_tokens is None or provider_count_tokens is None or provider_count_tokens(whole) <= max_tokens:
        return [_make_chunk(unit, base, 0, CHUNK_WHOLE, prefix, unit.line_start, source)]
    # --- container skeletons ------------------------------------------------------------------
    # A class or module that does not fit, and whose members are units of their own, is embedded
    # as its skeleton: its own lines with each member's body replaced by the member's first line.
    # The bodies are not lost — each member embeds its full source under its own id — and the
    # container's vectors then describe what the container itself says instead of repeating its
    # members (on the Python standard library this cut the embedded texts from 187k to ~90k).
    if skeleton and children and not _semantic_candidate(unit):
        skeleton = skeleton_source(unit, children)
        if skeleton != source:
            return _pack(unit, skeleton, prefix, provider_count_tokens, max_tokens, base, (), CHUNK_SKELETON)
    # --- semantic integration (woods.semantic_chunking, spec §1.5) ---------------------------
    # A Ruby model/controller/class-like unit that must be split is split along its sections
    # (summary, associations, action_show, method_call …) instead of line windows. Its chunks
    # cover the source but need not concatenate to it (a section gathers non-contiguous lines).
    from woods.semantic_chunking import semantic_unit_chunks  # lazy: that module imports this one

    semantic = semantic_unit_chunks(unit, provider_count_tokens, max_tokens, base_id=base, prefix=prefix)
    if semantic is not None:
        return semantic
    # --- end of semantic integration ----------------------------------------------------------
    return _pack(unit, source, prefix, provider_count_tokens, max_tokens, base, children, CHUNK_PART)


def _pack(unit: Unit, source: str, prefix: str, count: TokenCounter, max_tokens: int, base: str,
          children: Sequence[Unit], chunk_type: str) -> list[Chunk]:
    """Greedy packing of `source` (members kept whole where they fit) into chunks that fit."""
    splitter = _Splitter(source, prefix, count, max_tokens)
    if splitter.budget <= 0:
        text = embedding_text(prefix, source[:1])
        raise InputTooLongError(count(text), max_tokens, text)
    chunks = []
    line = unit.line_start
    for index, (start, end) in enumerate(splitter.pack(_segment_pieces(splitter, unit, children))):
        content = source[start:end]
        chunk = _make_chunk(unit, chunk_id(base, index), index, chunk_type, prefix, line, content)
        if chunk_type == CHUNK_SKELETON:  # skeleton lines do not map 1:1 to file lines
            chunk = replace(chunk, line_start=unit.line_start, line_end=unit.line_end)
        chunks.append(chunk)
        line += content.count("\n")  # the next chunk starts where this one's content ends
    return chunks


def _semantic_candidate(unit: Unit) -> bool:
    """Ruby units the semantic chunker splits into sections (it needs the member bodies)."""
    from woods.semantic_chunking import SEMANTIC_UNIT_TYPES

    return unit.language == "ruby" and unit.type in SEMANTIC_UNIT_TYPES


def skeleton_source(unit: Unit, children: Sequence[Unit]) -> str:
    """The unit's source with every member's body (lines after its first) replaced by one line
    `<indent>… N lines: <member identifier>`; members are the `children` inside the unit's lines."""
    lines = unit.source_code.splitlines(keepends=True)
    ranges = _member_line_ranges(unit, children, len(lines))
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
