"""Query captures in the order a pre-order walk would meet them, for extractors that used to walk
every node in Python.

Why: the Go, Java and Rust extractors need only a few node types (declarations, calls, type
names) out of every file, but a Python loop over all nodes costs several times the parse itself.
One compiled tree-sitter query finds those nodes in C; sorting its captures by (start byte,
longer first) restores the walk's pre-order, so an extractor can replay its walk over them with
a stack of open scopes (`outside` says when a scope has ended) and produce the same units in the
same order.

Guarantees: captures come back as (start byte, -end byte, capture index, node) in pre-order: by
start, an enclosing node before the nodes inside it, and a node captured under several names
(or equal spans) in the order the capture names first appear in the pattern. Queries are
compiled once per (grammar, pattern) (`scopes.compiled`) and never hold extraction results.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, TypeVar

from tree_sitter import Node, QueryCursor

from woods.extract import base, scopes

# (start byte, minus the end byte, capture index, node): sorted, these are in pre-order.
Capture = tuple[int, int, int, Node]

# An open scope: (scope node, its end byte, whatever the extractor keeps with it …).
S = TypeVar("S", bound=tuple[Any, ...])

_ORDER = operator.itemgetter(0, 1, 2)


@functools.cache
def capture_indexes(grammar: str, pattern: str) -> dict[str, int]:
    """Capture name → its index in `pattern` (the order names first appear)."""
    query = scopes.compiled(grammar, pattern)
    return {query.capture_name(i): i for i in range(query.capture_count)}


def captures(grammar: str, pattern: str, node: Node) -> list[Capture]:
    """Every capture of `pattern` under `node`, in pre-order (see the module docstring)."""
    indexes = capture_indexes(grammar, pattern)
    found = QueryCursor(scopes.compiled(grammar, pattern)).captures(node)
    decorated: list[Capture] = []
    for name, nodes in found.items():
        index = indexes[name]
        decorated += [(n.start_byte, -n.end_byte, index, n) for n in nodes]
    try:
        # Plain tuples sort without a key tuple per capture; two different nodes with the same
        # span under one capture name would compare the nodes themselves, which raises.
        decorated.sort()
    except TypeError:
        return _sorted_by_position(found, indexes)
    return decorated


def _sorted_by_position(found: dict[str, list[Node]], indexes: dict[str, int]) -> list[Capture]:
    """`captures`' order when nodes tie on (start, end, capture index): a stable sort on those
    three alone keeps such nodes in the order the query returned them."""
    decorated = [(n.start_byte, -n.end_byte, indexes[name], n) for name, nodes in found.items() for n in nodes]
    decorated.sort(key=_ORDER)
    return decorated


def enter(stack: list[S], node: Node, start: int, end: int) -> int:
    """Close the scopes of `stack` (scope node, its end byte, payload; outermost first) that the
    capture `node` comes after, and return the index of the innermost scope holding it, or -1.

    Positions decide, except for an empty node (a MISSING token) on a scope's edge, which may be
    that scope's last child or the next node's first: there the tree decides, and scopes are only
    closed once a node with a width has passed them.
    """
    if start != end:
        while stack and stack[-1][1] <= start:
            stack.pop()
        return len(stack) - 1
    while stack and stack[-1][1] < start:
        stack.pop()
    index = len(stack) - 1
    while index >= 0:
        scope: Node = stack[index][0]
        scope_end: int = stack[index][1]
        if scope.start_byte < start < scope_end or _descends(node, scope):
            break
        index -= 1
    return index


def _descends(node: Node, scope: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent == scope:
            return True
        parent = parent.parent
    return False


class Siblings:
    """Each parent's children, listed once per file, so stepping back from a declaration over
    the comments and attributes above it is list indexing rather than one `prev_sibling` call
    per step (tree-sitter answers that by scanning the parent's children again).

    `place(node)` gives the list and the index: the nodes before it are exactly those
    `prev_sibling` would return one after another (named and anonymous alike).
    """

    def __init__(self) -> None:
        self._by_parent: dict[int, tuple[list[Node], dict[int, int]]] = {}

    def place(self, node: Node) -> tuple[list[Node], int]:
        """The children of `node`'s parent (`[node]` at the root) and `node`'s index among them."""
        parent = node.parent
        if parent is None:
            return [node], 0
        entry = self._by_parent.get(parent.id)
        if entry is None:
            children = parent.children
            entry = (children, {child.id: index for index, child in enumerate(children)})
            self._by_parent[parent.id] = entry
        return entry[0], entry[1][node.id]

    def leading_comment(self, node: Node, source: bytes, comment_types: frozenset[str]) -> str | None:
        """`base.leading_comment`: the contiguous comment block directly above `node`, or None."""
        children, index = self.place(node)
        return base.comment_block_before(children, index, node, source, comment_types)
