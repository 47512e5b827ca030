"""Snippets: the one to three lines of a unit a reader decides from, with the query's words marked.

Why: a ranked list of `path:start-end` and scores makes a developer open every file to see whether
it is the one; rg, semble and ck show the matching lines instead. A snippet is the best-matching
lines of the unit's stored text — the lines holding the most of the query's words — numbered as in
the file, dedented together, with the spans where those words occur (any interface highlights
them its own way). A unit the query's words do not occur in (found by meaning alone) shows its
first line, its definition.

Guarantees: pure functions of (text, first line number, query); at most `MAX_SNIPPET_LINES` lines,
in file order, never blank; a line is cut to `MAX_SNIPPET_COLUMNS` characters (spans inside the
cut); spans are sorted, disjoint, half-open character offsets into the line as returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from woods.tokens import query_terms

MAX_SNIPPET_LINES = 3
# Minified or generated lines can be thousands of characters; a terminal line is ~100–200.
MAX_SNIPPET_COLUMNS = 200
ELLIPSIS = "…"
# Lines closing a block sit at the opener's indentation (Ruby `end`, C-family `}`): what the first
# line of a stored unit (stored without its leading whitespace) was indented by.
_CLOSING_MARKS = ("}", "]", ")", "</")
_CLOSING_WORDS = ("end", "fi", "done", "esac")


class SnippetLine(NamedTuple):
    """One line of a snippet: its number in the file, its text, and the spans of query words.
    A NamedTuple (immutable, like a frozen dataclass): every cold `woods search` defines this
    class, and a tuple class is the cheapest to define and to build."""

    line: int
    text: str
    matches: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "text": self.text, "matches": [list(span) for span in self.matches]}


# Plural and verb endings dropped to find a query word's stem in code (`refunds` → `refund`,
# `charged` → `charge`), as the lexical index's stemmer matched it; a stem shorter than
# MIN_STEM_CHARS matches too much to mark anything.
STEM_SUFFIXES = ("ing", "es", "ed", "s")
MIN_STEM_CHARS = 4


def _stems(term: str) -> list[str]:
    if term.endswith("ss"):
        return []
    return [term[: -len(suffix)] for suffix in STEM_SUFFIXES
            if term.endswith(suffix) and len(term) - len(suffix) >= MIN_STEM_CHARS]


def snippet_terms(query: str) -> tuple[str, ...]:
    """The words of `query` a snippet marks: its lexical terms (code-aware, stop words dropped)
    and their stems, longest first so that `dispatch_request` is marked before `request`."""
    terms = query_terms(query)
    found = set(terms) | {stem for term in terms for stem in _stems(term)}
    return tuple(sorted(found, key=lambda term: (-len(term), term)))


def match_spans(text: str, terms: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """Where `terms` occur in `text`, case-insensitively, merged into sorted disjoint spans."""
    folded = text.lower()
    spans: list[tuple[int, int]] = []
    for term in terms:
        start = folded.find(term)
        while start != -1:
            spans.append((start, start + len(term)))
            start = folded.find(term, start + len(term))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _closes_a_block(text: str) -> bool:
    if text.startswith(_CLOSING_MARKS):
        return True
    word = text.split(None, 1)[0] if text else ""
    return word.rstrip(";") in _CLOSING_WORDS


def first_line_indent(lines: Sequence[str]) -> str:
    """The indentation the first line of a stored unit had in its file (units are stored from
    their first token, so the text has lost it), read from the lines after it: a decorator takes
    that of the definition it decorates; a block whose last line closes it (`end`, `}`) was opened
    at the closer's indentation; otherwise the body is one step deeper than the opener (the step:
    the smallest difference between the body's indentation levels, else 4 spaces or one tab)."""
    rest = [line for line in lines[1:] if line.strip()]
    if not lines or not rest:
        return ""
    indents = [_indent(line) for line in rest]
    shallowest = min(indents, key=len)
    if lines[0].lstrip().startswith("@"):
        return indents[0]
    if _closes_a_block(rest[-1].lstrip()) and len(indents[-1]) == len(shallowest):
        return shallowest
    levels = sorted({len(i) for i in indents})
    steps = [b - a for a, b in zip(levels, levels[1:], strict=False) if b > a]
    step = min(steps) if steps else (1 if shallowest.startswith("\t") else 4)
    return shallowest[: max(0, len(shallowest) - step)]


def dedent_unit(source: str, first_indent: str | None = None) -> str:
    """The unit's text with its common indentation removed, the first line placed at
    `first_indent` (else the estimate of `first_line_indent`) so the body keeps its shape."""
    lines = source.split("\n")
    if not lines:
        return source
    indent = first_line_indent(lines) if first_indent is None else first_indent
    full = [indent + lines[0].lstrip(), *lines[1:]]
    widths = [len(_indent(line)) for line in full if line.strip()]
    cut = min(widths) if widths else 0
    return "\n".join(line[cut:] if line.strip() else "" for line in full)


def _cut(text: str, spans: tuple[tuple[int, int], ...]) -> tuple[str, tuple[tuple[int, int], ...]]:
    if len(text) <= MAX_SNIPPET_COLUMNS:
        return text, spans
    limit = MAX_SNIPPET_COLUMNS - len(ELLIPSIS)
    kept = tuple((start, min(end, limit)) for start, end in spans if start < limit)
    return text[:limit] + ELLIPSIS, kept


def snippet(source: str, line_start: int, terms: Sequence[str], max_lines: int = MAX_SNIPPET_LINES) -> tuple[SnippetLine, ...]:
    """The lines of a unit (`source`, whose first line is line `line_start` of its file) that hold
    the most of `terms`: the best line, then the next best (more distinct words, then nearer the
    best, then earlier), up to `max_lines`, shown in file order; the first non-blank line when no
    term occurs. Lines are dedented together (see `dedent_unit`)."""
    lines = dedent_unit(source).split("\n")
    scored: list[tuple[int, int, tuple[tuple[int, int], ...]]] = []  # (distinct terms, index, spans)
    if terms:
        for index, text in enumerate(lines):
            if not text.strip():
                continue
            spans = match_spans(text, terms)
            if spans:
                folded = text.lower()
                scored.append((sum(1 for term in terms if term in folded), index, spans))
    if not scored:
        first = next((i for i, text in enumerate(lines) if text.strip()), None)
        if first is None:
            return ()
        text, _none = _cut(lines[first], ())
        return (SnippetLine(line_start + first, text),)
    best = max(scored, key=lambda row: (row[0], -row[1]))
    others = sorted(
        (row for row in scored if row is not best),
        key=lambda row: (-row[0], abs(row[1] - best[1]), row[1]),
    )
    chosen = sorted([best, *others[: max(0, max_lines - 1)]], key=lambda row: row[1])
    shown: list[SnippetLine] = []
    for _count, index, spans in chosen:
        text, kept = _cut(lines[index], spans)
        shown.append(SnippetLine(line_start + index, text, kept))
    # Dedent what is shown, together: the lines keep their shape relative to each other.
    widths = [len(_indent(line.text)) for line in shown]
    cut = min(widths) if widths else 0
    return tuple(
        SnippetLine(line.line, line.text[cut:], tuple((s - cut, e - cut) for s, e in line.matches if e > cut))
        for line in shown
    )


def best_line(lines: Sequence[SnippetLine]) -> int | None:
    """The line a `path:line` reference should point at: the snippet line with the most marked
    characters (the first of equals), else its first line."""
    if not lines:
        return None
    return max(lines, key=lambda line: (sum(e - s for s, e in line.matches), -line.line)).line


__all__ = [
    "MAX_SNIPPET_LINES",
    "SnippetLine",
    "best_line",
    "dedent_unit",
    "first_line_indent",
    "match_spans",
    "snippet",
    "snippet_terms",
]
