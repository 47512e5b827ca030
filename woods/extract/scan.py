"""Reference scanning: one tree-sitter query pass finds a file's calls and type names, and each
capture goes to the innermost unit that contains it; and a parse with a time budget.

Why: walking every node of a file in Python costs about as much as parsing it, and most nodes
(literals, operators, punctuation) never matter. The C, C++, C#, PHP, Kotlin and Swift extractors
therefore walk only the declaration levels of a tree themselves (files, namespaces, type bodies —
never function bodies) and let one compiled query collect the references inside bodies; the query
runs in tree-sitter's C code over the tree that was already parsed (no re-parsing).

Guarantees: queries are compiled once per (grammar, pattern) and shared read-only between threads
(each scan uses its own cursor); captures come back in source order, ties broken by capture name,
then by the query's own order, so every run assigns them identically.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from typing import Protocol, TypeVar

from tree_sitter import Node, Query, QueryCursor, Tree

from woods.errors import ParseTimeoutError as ParseTimeoutError
from woods.extract import base
from woods.units import FileExtraction

_queries: dict[tuple[str, str], Query] = {}
_queries_lock = threading.Lock()


# A parse is abandoned after this much CPU time: tree-sitter reads real source at 1 MB/s or more (most
# grammars 5-20 MB/s), but an external scanner can loop forever on corrupt input —
# tree-sitter-kotlin 1.1.0 never returns on a 4 KB file with 20 random bytes inserted. The budget
# grows with the file so no honest file is ever cut short.
PARSE_SECONDS = 5.0
PARSE_SECONDS_PER_MB = 5.0
# tree-sitter calls the progress callback every ~110 bytes of source (5,209 calls on 591 KB of fmtlib
# headers); the budget is checked on one call in this many (~2 KB of parsing between checks).
PROGRESS_CHECK_EVERY = 16


def parse(grammar: str, source: bytes) -> Tree:
    """`base.parse` with a time budget; raises ParseTimeoutError when the grammar does not finish.

    The budget needs the binding's read-callback form, whose trees carry no source text: read
    node text with `base.text(node, source)`, never `node.text`, and use no text predicates
    (`#eq?`, `#match?`) in queries over these trees."""
    found = base.parser(grammar)
    budget = PARSE_SECONDS + PARSE_SECONDS_PER_MB * len(source) / 1_000_000
    # CPU time of this thread, not wall time: on a loaded machine (CI, several indexers) an honest
    # file is never cut short, and the same file always parses the same way.
    deadline = time.thread_time() + budget
    calls = itertools.count()
    view = memoryview(source)

    def cancel(_offset: int, _has_error: bool) -> bool:
        # The clock is read every PROGRESS_CHECK_EVERY-th call (the first included): reading it
        # costs ~0.5 µs, and a 600 KB C++ header makes ~5,200 calls.
        return next(calls) % PROGRESS_CHECK_EVERY == 0 and time.thread_time() > deadline

    try:
        return found.parse(lambda offset, _point: view[offset:], progress_callback=cancel)
    except ValueError as exc:  # the binding's "Parsing failed": the progress callback cancelled it
        found.reset()  # a cancelled parse would otherwise resume on the next call
        raise ParseTimeoutError(f"{grammar} parser gave up after {budget:.0f} s of CPU time") from exc


# An ERROR at the top of a tree that spans at least this many lines is a grammar that gave up on
# the rest of the file (tree-sitter-kotlin on a `value class` whose annotated constructor sits on
# the next line swallowed 715 lines of kotlinx's Channel.kt, `interface Channel` included); a
# shorter one is local damage the grammar already recovered from.
RESYNC_MIN_LINES = 20
# Only for grammars of languages whose bodies are indented by convention (Kotlin, Swift), so a line
# at column 0 really starts a top-level declaration. Not for C and C++: their namespace bodies and
# preprocessor lines sit at column 0, and blanking from an error to such a line cut
# `namespace detail {` and `#ifndef` guards out of fmtlib's format.h (measured: its `formatter`
# query fell from 1.0 to 0.36).
# Each round blanks one swallowed stretch and parses again; a file needing more is left as parsed.
RESYNC_ROUNDS = 8
# A line that can start a top-level declaration again: at column 0, not a closing bracket.
_RESYNC_LINE_START = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_@#/[")


def parse_recovering(grammar: str, source: bytes) -> tuple[Tree, list[tuple[int, int]]]:
    """`parse`, then, while the tree's top level holds an ERROR that swallowed many lines, blank
    that stretch from the error up to the next line that can start a declaration (spaces, every
    newline kept, so positions and line numbers do not move) and parse again: the declarations
    after a construct the grammar cannot read become units instead of disappearing. Returns the
    tree and the 1-based inclusive line ranges that were skipped (the caller warns about them).
    Read node text from the original source: blanked bytes hold no node."""
    tree = parse(grammar, source)
    skipped: list[tuple[int, int]] = []
    working = source
    floor = 0
    for _round in range(RESYNC_ROUNDS):
        gap = _swallowed(tree.root_node, working, floor)
        if gap is None:
            break
        start, end = gap
        blanked = bytearray(working)
        for index in range(start, end):
            if blanked[index] not in (0x0A, 0x0D):
                blanked[index] = 0x20
        working = bytes(blanked)
        skipped.append((working.count(b"\n", 0, start) + 1, working.count(b"\n", 0, end)))
        floor = end
        tree = parse(grammar, working)
    return tree, skipped


def _swallowed(root: Node, source: bytes, floor: int) -> tuple[int, int] | None:
    """(start, end) bytes of the first top-level ERROR at or after `floor` spanning at least
    RESYNC_MIN_LINES lines, cut at the next line inside it that can start a declaration; None
    when there is none or no such line."""
    for child in root.children:
        if not child.is_error or child.start_byte < floor:
            continue
        if child.end_point[0] - child.start_point[0] + 1 < RESYNC_MIN_LINES:
            continue
        line = source.find(b"\n", child.start_byte)
        while 0 <= line < child.end_byte:
            begin = line + 1
            if begin < len(source) and source[begin] in _RESYNC_LINE_START:
                return child.start_byte, begin
            line = source.find(b"\n", begin)
    return None


def skipped_warnings(file_path: str, skipped: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """One warning per stretch `parse_recovering` had to skip."""
    return tuple(
        f"{file_path}: {f'line {first}' if first == last else f'lines {first}-{last}'} skipped: "
        "the grammar could not parse them"
        for first, last in skipped
    )


def parse_timeout(file_path: str, language: str, error: ParseTimeoutError) -> FileExtraction:
    """What a file whose parse was abandoned yields: no units, one warning saying so."""
    return FileExtraction(file_path, language, (), (f"{file_path}: {error}; no units extracted",))


def compiled_query(grammar: str, pattern: str) -> Query:
    """The compiled query `pattern` for `grammar` (compiled on first use, then reused)."""
    key = (grammar, pattern)
    with _queries_lock:
        found = _queries.get(key)
        if found is None:
            found = Query(base.language(grammar), pattern)
            _queries[key] = found
        return found


def captures(grammar: str, pattern: str, root: Node) -> list[tuple[Node, str]]:
    """Every (node, capture name) of `pattern` under `root`, in source order (see module doc)."""
    found = QueryCursor(compiled_query(grammar, pattern)).captures(root)
    # Decorated tuples sort in C: by start, an enclosing node first (the cursor's order for nodes
    # that start together is not fixed run to run), then (capture name, index): a total order.
    decorated = [
        (node.start_byte, -node.end_byte, name, index, node) for name, nodes in found.items() for index, node in enumerate(nodes)
    ]
    decorated.sort()
    return [(item[4], item[2]) for item in decorated]


class Spanned(Protocol):
    """Anything with a declaration node: the extractors' drafts."""

    @property
    def node(self) -> Node: ...


T = TypeVar("T", bound=Spanned)


def innermost(drafts: Sequence[T], found: Sequence[tuple[Node, str]]) -> list[tuple[T, Node, str]]:
    """(innermost draft containing the capture, node, capture name) for every capture inside a draft,
    in the order of `found` (source order, as `captures` returns it).

    Drafts must nest properly (a draft's node inside another's, or disjoint), as declarations do.
    Captures outside every draft are skipped. One sweep: O((drafts + captures) · depth)."""
    owners = _owners(draft_spans(drafts), [node.start_byte for node, _name in found])
    return [(owner, node, name) for owner, (node, name) in zip(owners, found, strict=True) if owner is not None]


_PAST_ANY_FILE = 1 << 62  # a start byte no capture reaches


def first_per_draft(drafts: Sequence[T], found: Sequence[Node], source: bytes) -> list[tuple[T, str, bytes, Node]]:
    """(innermost draft containing the capture, node type, text, node) for the captures `found`
    (sorted by start byte), keeping only the first of each (type, text) per draft: a name used
    twice in one unit is one edge. Captures outside every draft are skipped.

    The sweep of `innermost`, written as one loop that returns a list: a generator step per
    capture cost Kotlin and Swift extraction several per cent of a parse."""
    spans: list[tuple[int, int, T | None]] = list(draft_spans(drafts))
    spans.append((_PAST_ANY_FILE, _PAST_ANY_FILE, None))  # a sentinel that never opens
    out: list[tuple[T, str, bytes, Node]] = []
    stack: list[tuple[int, int, T | None]] = []
    index = 0
    next_start = spans[0][0]
    end = -1  # where the innermost open draft ends (-1: none open)
    draft: T | None = None
    seen_by_draft: dict[int, set[tuple[str, bytes]]] = {}
    seen: set[tuple[str, bytes]] = set()
    for node in found:
        position = node.start_byte
        if position >= next_start or position >= end:
            while next_start <= position:
                while stack and stack[-1][1] <= next_start:
                    stack.pop()
                stack.append(spans[index])
                index += 1
                next_start = spans[index][0]
            while stack and stack[-1][1] <= position:
                stack.pop()
            if not stack:
                end = -1
                continue
            end = stack[-1][1]
            if stack[-1][2] is not draft:
                draft = stack[-1][2]
                seen = seen_by_draft.setdefault(id(draft), set())
        if draft is None:
            continue
        kind = node.type
        spelled = source[position : node.end_byte]
        key = (kind, spelled)
        if key in seen:
            continue
        seen.add(key)
        out.append((draft, kind, spelled, node))
    return out


def dotted_type(spelled: bytes) -> tuple[str, ...] | None:
    """The segments of a type written `a.b.Name<Args>` (arguments dropped), read from its text —
    cheaper than its child nodes; None when a segment is empty."""
    text = spelled.decode("utf-8", "replace")
    if "." in text or "<" in text:
        segments = tuple([part.strip() for part in text.partition("<")[0].split(".")])
        return segments if all(segments) else None
    text = text.strip()
    return (text,) if text else None


def draft_spans(drafts: Sequence[T]) -> list[tuple[int, int, T]]:
    """(start byte, end byte, draft) of every draft, outer before inner: the sweeps' input."""
    order = sorted(range(len(drafts)), key=lambda i: (drafts[i].node.start_byte, -drafts[i].node.end_byte, i))
    return [(drafts[i].node.start_byte, drafts[i].node.end_byte, drafts[i]) for i in order]


D = TypeVar("D")


def sweep(spans: Sequence[tuple[int, int, D | None]],
          decorated: Sequence[tuple[int, int, int, Node]]) -> list[tuple[D, int, int, int, Node]]:
    """(innermost draft, start, kind, index, node) for captures decorated as sorted (start, kind, index,
    node) tuples, given `draft_spans`-ordered spans; a capture outside every span, or whose
    innermost span carries None (a unit that takes no references), is dropped."""
    owners = _owners(spans, [item[0] for item in decorated])
    return [
        (owner, item[0], item[1], item[2], item[3])
        for owner, item in zip(owners, decorated, strict=True)
        if owner is not None
    ]


def _owners(spans: Sequence[tuple[int, int, D | None]], positions: Sequence[int]) -> list[D | None]:
    """For each of the sorted `positions`, the payload of the innermost of the `draft_spans`-ordered
    `spans` holding it, or None: one sweep with a stack of open spans, written as one loop that
    returns a list (a generator step per capture costs more than the loop's body)."""
    out: list[D | None] = []
    count = len(spans)
    stack: list[tuple[int, int, D | None]] = []
    index = 0
    for position in positions:
        while index < count and spans[index][0] <= position:
            opened = spans[index][0]
            while stack and stack[-1][1] <= opened:
                stack.pop()
            stack.append(spans[index])
            index += 1
        while stack and stack[-1][1] <= position:
            stack.pop()
        out.append(stack[-1][2] if stack else None)
    return out

