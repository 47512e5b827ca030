"""References without a Python walk of every node: tree-sitter queries plus innermost-span look-ups.

Why: a Python loop over every node of a tree costs about as much as tree-sitter's parse itself,
which would make extraction several times slower than parsing. The extractors of Scala, Haskell,
Elixir, Lua, Bash and Zig therefore walk only the declaration skeleton in Python (skipping bodies)
and collect references (calls, type names …) with one compiled tree-sitter query, which runs in C.
Each captured node then goes to the innermost unit whose span contains it.

Guarantees: `captures_by_name` returns each capture name's nodes by start byte; `innermost` and
`Spans.owners` give every position the index of the smallest span containing it (spans must nest
or be disjoint, as declarations do), or None. Compiled queries are cached per
(grammar, pattern): the cache holds only immutable compiled queries, never extraction results.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence

from tree_sitter import Node, Query, QueryCursor

from woods.extract import base


@functools.cache
def compiled(grammar: str, pattern: str) -> Query:
    """The compiled query `pattern` for `grammar` (compiled once per process)."""
    return Query(base.language(grammar), pattern)


def captures_by_name(grammar: str, pattern: str, node: Node) -> dict[str, list[Node]]:
    """The nodes of each capture name of `pattern` under `node`, each list in pre-order: by start
    byte, an enclosing node before the nodes that start with it (nodes of equal span keep the
    query's order). One traversal of the tree, in C.

    The end byte is part of the order because the cursor's own order for captures that start at
    the same byte is not fixed (`a.f():close()`: both callees start at `a`); it followed memory
    layout, so the same file could yield its dependencies in another order from run to run."""
    found = QueryCursor(compiled(grammar, pattern)).captures(node)
    return {name: sorted(nodes, key=preorder_key) for name, nodes in found.items()}


def preorder_key(node: Node) -> tuple[int, int]:
    """Sort key of nodes in pre-order: by start byte, an enclosing node before those inside it."""
    return node.start_byte, -node.end_byte


def innermost(spans: Sequence[tuple[int, int]], positions: Sequence[int]) -> list[int | None]:
    """For each position, the index of the innermost span [start, end) holding it, or None."""
    return Spans(spans).owners(positions)


class Spans:
    """Unit spans prepared once for several `owners` look-ups (one per kind of reference).

    Spans are kept in (start, longer first, index) order with each one's enclosing span; a
    position's owner is the last span starting at or before it (binary search), or the nearest
    enclosing span of that one that still contains it. Spans must nest or be disjoint, as
    declarations do.
    """

    def __init__(self, spans: Sequence[tuple[int, int]]) -> None:
        self.order = sorted(range(len(spans)), key=lambda i: (spans[i][0], -spans[i][1], i))
        self.starts = [spans[i][0] for i in self.order]
        self.ends = [spans[i][1] for i in self.order]
        self.parents: list[int] = []
        stack: list[int] = []
        for rank, start in enumerate(self.starts):
            while stack and self.ends[stack[-1]] <= start:
                stack.pop()
            self.parents.append(stack[-1] if stack else -1)
            stack.append(rank)

    def owners(self, positions: Sequence[int]) -> list[int | None]:
        """For each position, the index (into the spans given) of the innermost span [start, end)
        holding it, or None."""
        starts, ends, parents, order = self.starts, self.ends, self.parents, self.order
        result: list[int | None] = []
        for position in positions:
            rank = bisect.bisect_right(starts, position) - 1
            while rank >= 0 and ends[rank] <= position:
                rank = parents[rank]
            result.append(order[rank] if rank >= 0 else None)
        return result


def last_token(node: Node, skip: frozenset[str]) -> Node:
    """The last non-empty leaf of `node` that is not of a `skip` type (comments).

    Layout-sensitive grammars (Scala 3, Haskell) let a declaration's node run over the blank lines
    and comments that follow it; a unit ends at its last real token instead.
    """
    current = node
    while True:
        index = current.child_count - 1
        child = current.child(index) if index >= 0 else None
        while child is not None and (child.type in skip or child.end_byte == child.start_byte):
            index -= 1
            child = current.child(index) if index >= 0 else None
        if child is None:
            return current
        current = child


class Comments:
    """The comments of a file by the row they end on, for finding the block above a declaration.

    Grammars attach comments wherever the parser happens to be (inside the previous declaration's
    node, inside an import list …), so the block above a declaration is found by rows, not by
    siblings. Only comments that start their line count: a trailing `x = 1 -- note` never
    documents the next line.
    """

    def __init__(self, nodes: Sequence[Node], source: bytes) -> None:
        self.source = source
        self.by_end_row: dict[int, Node] = {}
        for node in nodes:
            start = node.start_byte
            line_start = source.rfind(b"\n", 0, start) + 1
            if line_start == start or not source[line_start:start].strip():
                end_row, end_column = node.end_point
                # A comment token that swallows its newline ends at column 0 of the next row.
                self.by_end_row[end_row - 1 if end_column == 0 and end_row > node.start_point[0] else end_row] = node

    def above(self, row: int) -> list[Node]:
        """The contiguous comments ending on the rows right above 0-based `row`, top first."""
        block: list[Node] = []
        current = self.by_end_row.get(row - 1)
        while current is not None and (not block or current.start_byte < block[-1].start_byte):
            block.append(current)
            current = self.by_end_row.get(current.start_point[0] - 1)
        block.reverse()
        return block

    def text_above(self, row: int) -> str | None:
        """The raw text of the block above `row` (one comment per line), or None."""
        block = self.above(row)
        return "\n".join(base.text(c, self.source) for c in block) if block else None
