"""Greedy packing of a source into spans that each fit the embedder's input, never cutting a line
unless a single line alone does not fit (then at character boundaries, the only exception).

Why: providers refuse over-long input instead of truncating, so every text must fit; packing
whole members and whole lines keeps each vector about contiguous code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from woods.chunking.chunks import TokenCounter
from woods.embedding.text import embedding_text
from woods.errors import InputTooLongError
from woods.units import Unit

# First guess of a slice's length when cutting a long line: code averages 3-4 characters per
# word piece, so 4 per token of budget usually fits at once and galloping rarely needs more probes.
_FIRST_PROBE_CHARS_PER_TOKEN = 4

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


class Splitter:
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
        for line_start, line_end in line_spans(self.source, start, end):
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


def line_spans(source: str, start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) cut after each "\\n" (only "\\n" ends a line, as in tree-sitter positions)."""
    spans = []
    position = start
    while position < end:
        newline = source.find("\n", position, end)
        line_end = end if newline < 0 else newline + 1
        spans.append((position, line_end))
        position = line_end
    return spans


def member_line_ranges(unit: Unit, children: Sequence[Unit], line_count: int) -> list[tuple[int, int]]:
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


def segment_pieces(splitter: Splitter, unit: Unit, children: Sequence[Unit]) -> list[_Piece]:
    """The source as member segments (a child's lines) and gap segments (lines between them).
    Each line is counted once; a segment's cost is the sum of its lines'."""
    lines = splitter.line_pieces(0, len(splitter.source))
    members = member_line_ranges(unit, children, len(lines))
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
