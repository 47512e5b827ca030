"""Shared tree-sitter plumbing for the per-language extractors.

Why: every extractor needs the same few things — a parser for its grammar, a node's text and
1-based line range, the comment block above a declaration, and a warning when the file has syntax
errors. Keeping them here means each language module holds only its language's rules.

Grammars come from the official per-language wheels (tree-sitter-ruby, -python, …), which ship
compiled grammars inside the wheel, so nothing is downloaded at run time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator

from tree_sitter import Language, Node, Parser, Tree

from woods.units import Dependency


def _grammar_loaders() -> dict[str, Callable[[], object]]:
    # Imported lazily per language so `woods --help` never pays for grammars it does not use.
    def ruby() -> object:
        import tree_sitter_ruby

        return tree_sitter_ruby.language()

    def python() -> object:
        import tree_sitter_python

        return tree_sitter_python.language()

    def javascript() -> object:
        import tree_sitter_javascript

        return tree_sitter_javascript.language()

    def typescript() -> object:
        import tree_sitter_typescript

        return tree_sitter_typescript.language_typescript()

    def tsx() -> object:
        import tree_sitter_typescript

        return tree_sitter_typescript.language_tsx()

    def go() -> object:
        import tree_sitter_go

        return tree_sitter_go.language()

    def java() -> object:
        import tree_sitter_java

        return tree_sitter_java.language()

    def rust() -> object:
        import tree_sitter_rust

        return tree_sitter_rust.language()

    def embedded_template() -> object:
        import tree_sitter_embedded_template

        return tree_sitter_embedded_template.language()

    return {
        "ruby": ruby,
        "python": python,
        "javascript": javascript,
        "typescript": typescript,
        "tsx": tsx,
        "go": go,
        "java": java,
        "rust": rust,
        "embedded_template": embedded_template,
    }


_LOADERS = _grammar_loaders()
_languages: dict[str, Language] = {}
_languages_lock = threading.Lock()
# A Parser is not safe to share between threads; one per thread per grammar.
_local = threading.local()


def language(grammar: str) -> Language:
    """The tree-sitter Language for a grammar name (ruby, python, typescript, tsx, …)."""
    with _languages_lock:
        lang = _languages.get(grammar)
        if lang is None:
            lang = Language(_LOADERS[grammar]())
            _languages[grammar] = lang
        return lang


def parser(grammar: str) -> Parser:
    """A parser for `grammar`, cached per thread."""
    cache: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = {}
        _local.parsers = cache
    found = cache.get(grammar)
    if found is None:
        found = Parser(language(grammar))
        cache[grammar] = found
    return found


def parse(grammar: str, source: bytes) -> Tree:
    return parser(grammar).parse(source)


def text(node: Node | None, source: bytes) -> str:
    """The node's source text, decoded leniently (invalid UTF-8 becomes U+FFFD, never an error)."""
    if node is None:
        return ""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def line_range(node: Node) -> tuple[int, int]:
    """1-based inclusive (line_start, line_end). A node ending at column 0 ends on the line before."""
    start = node.start_point[0] + 1
    end_row, end_col = node.end_point
    end = end_row + 1 if end_col > 0 or end_row == node.start_point[0] else end_row
    return start, max(start, end)


def walk(node: Node) -> Iterator[Node]:
    """Pre-order traversal without recursion (deeply nested files must not blow the stack)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def syntax_warnings(tree: Tree, file_path: str, limit: int = 3) -> tuple[str, ...]:
    """One warning naming the first error positions when the tree has syntax errors."""
    root = tree.root_node
    if not root.has_error:
        return ()
    positions: list[str] = []
    for node in walk(root):
        if node.is_error or node.is_missing:
            positions.append(f"{node.start_point[0] + 1}:{node.start_point[1] + 1}")
            if len(positions) >= limit:
                break
    where = ", ".join(positions) if positions else "unknown position"
    return (f"{file_path}: syntax errors (at {where}); extracted what parses",)


def leading_comment(node: Node, source: bytes, comment_types: frozenset[str] = frozenset({"comment"})) -> str | None:
    """The contiguous comment block directly above `node` (no blank line between), or None."""
    lines: list[str] = []
    current = node.prev_sibling
    expected_row = node.start_point[0]
    while current is not None and current.type in comment_types and current.end_point[0] >= expected_row - 1:
        lines.insert(0, text(current, source))
        expected_row = current.start_point[0]
        current = current.prev_sibling
    return "\n".join(lines) if lines else None


# --- Helpers shared by the C-family and Python extractors (added with python/js/go/java/rust). ---

# Comment line prefixes, longest first so `///` is not read as `//` + `/`.
_LINE_COMMENT_PREFIXES = ("//!", "///", "//", "#")


def one_line(value: str) -> str:
    """A header spread over several lines, as one line with single spaces (signatures)."""
    return " ".join(value.split())


def clean_comment(raw: str | None) -> str | None:
    """The prose of a comment block: `/** */`, `/* */`, `///`, `//!`, `//` and `#` markers removed.

    Lines are dedented together and blank edge lines dropped; None when nothing is left.
    """
    if not raw:
        return None
    lines: list[str] = []
    for line in raw.splitlines():
        stripped = line.strip()
        if stripped.startswith("/*"):
            stripped = stripped[3:] if stripped.startswith("/**") else stripped[2:]
        if stripped.endswith("*/"):
            stripped = stripped[:-2]
        for prefix in _LINE_COMMENT_PREFIXES:
            if stripped.startswith(prefix):
                stripped = stripped[len(prefix) :]
                break
        else:
            if stripped.startswith("*"):
                stripped = stripped[1:]
        lines.append(stripped[1:] if stripped.startswith(" ") else stripped)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(line.rstrip() for line in lines) or None


def dedupe_dependencies(dependencies: Iterable[Dependency]) -> tuple[Dependency, ...]:
    """One dependency per (target, via), the first occurrence kept, source order preserved."""
    seen: set[tuple[str, str]] = set()
    kept: list[Dependency] = []
    for dep in dependencies:
        key = (dep.target, dep.via)
        if key not in seen:
            seen.add(key)
            kept.append(dep)
    return tuple(kept)


def file_span(source: bytes) -> tuple[int, int, str]:
    """(1, last line, text) of a whole file: the span of a file-level module unit."""
    lines = source.count(b"\n") + (0 if source.endswith(b"\n") else 1)
    return 1, max(1, lines), source.decode("utf-8", "replace")


def node_span(first: Node, last: Node, source: bytes) -> tuple[int, int, str]:
    """(line_start, line_end, text) from the start of `first` to the end of `last` (1-based lines;
    `first` may be a decorator or comment that belongs to the declaration `last` ends)."""
    start = first.start_point[0] + 1
    end = max(start, line_range(last)[1])
    return start, end, source[first.start_byte : last.end_byte].decode("utf-8", "replace")
