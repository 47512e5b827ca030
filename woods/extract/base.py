"""Shared tree-sitter plumbing for the per-language extractors.

Why: every extractor needs the same few things — a parser for its grammar, a node's text and
1-based line range, the comment block above a declaration, and a warning when the file has syntax
errors. Keeping them here means each language module holds only its language's rules.

Grammars come from the official per-language wheels (tree-sitter-ruby, -python, …), which ship
compiled grammars inside the wheel, so nothing is downloaded at run time; `registry.py` names
each language's wheel.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from tree_sitter import Language, Node, Parser, Tree

from woods.extract import registry
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction, Unit


def _load_grammar(name: str) -> object:
    """The language pointer of a registered grammar (`registry.LANGUAGES`), its wheel imported on
    first use so `woods --help` never pays for grammars it does not use."""
    grammar = registry.grammar(name)
    module = importlib.import_module(grammar.wheel)
    return getattr(module, grammar.function)()


_languages: dict[str, Language] = {}
_languages_lock = threading.Lock()
# A Parser is not safe to share between threads; one per thread per grammar.
_local = threading.local()


def language(grammar: str) -> Language:
    """The tree-sitter Language for a grammar name (ruby, python, typescript, tsx, …)."""
    with _languages_lock:
        lang = _languages.get(grammar)
        if lang is None:
            lang = Language(_load_grammar(grammar))
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
    return start, last_line(node, start)


def last_line(node: Node, start: int) -> int:
    """The 1-based line `node` ends on (the line before when it ends at column 0), at least `start`."""
    end_row, end_col = node.end_point
    if end_col > 0 or end_row == node.start_point[0]:
        end_row += 1
    return end_row if end_row > start else start


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
    # Pre-order like `walk`, but only into subtrees that hold an error: a file with one late
    # error costs a path to it, not a walk over every node.
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            positions.append(f"{node.start_point[0] + 1}:{node.start_point[1] + 1}")
            if len(positions) >= limit:
                break
        if node.is_error:  # inside an ERROR node, `has_error` is not reliable: look at everything
            stack.extend(reversed(node.children))
        else:
            stack.extend(c for c in reversed(node.children) if c.has_error or c.is_error or c.is_missing)
    where = ", ".join(positions) if positions else "unknown position"
    return (f"{file_path}: syntax errors (at {where}); extracted what parses",)


def leading_comment(node: Node, source: bytes, comment_types: frozenset[str] = frozenset({"comment"})) -> str | None:
    """The contiguous comment block directly above `node` (no blank line between), or None."""
    current = node.prev_sibling
    if current is None or current.type not in comment_types:  # most declarations: no comment
        return None
    lines: list[str] = []
    expected_row = node.start_point[0]
    while current is not None and current.type in comment_types and current.end_point[0] >= expected_row - 1:
        lines.append(source[current.start_byte : current.end_byte].decode("utf-8", "replace"))
        expected_row = current.start_point[0]
        current = current.prev_sibling
    lines.reverse()
    return "\n".join(lines) if lines else None


def comment_block_before(siblings: Sequence[Node], index: int, node: Node, source: bytes,
                         comment_types: frozenset[str] = frozenset({"comment"})) -> str | None:
    """`leading_comment` of `node`, which is `siblings[index]`: read from a children list the caller
    already holds, as tree-sitter answers each `prev_sibling` by searching down from the parent."""
    if index == 0 or siblings[index - 1].type not in comment_types:  # most declarations: no comment
        return None
    lines: list[str] = []
    expected_row = node.start_point[0]
    for position in range(index - 1, -1, -1):
        current = siblings[position]
        if current.type not in comment_types or current.end_point[0] < expected_row - 1:
            break
        lines.append(source[current.start_byte : current.end_byte].decode("utf-8", "replace"))
        expected_row = current.start_point[0]
    lines.reverse()
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
    # Slices instead of startswith: this runs over every line of every doc comment of a repository.
    for line in raw.splitlines():
        stripped = line.strip()
        if stripped[:2] == "/*":
            stripped = stripped[3:] if stripped[2:3] == "*" else stripped[2:]
        if stripped[-2:] == "*/":
            stripped = stripped[:-2]
        first = stripped[:1]
        if first == "/":  # `//!`, `///`, `//` (_LINE_COMMENT_PREFIXES, longest first)
            if stripped[:3] in ("//!", "///"):
                stripped = stripped[3:]
            elif stripped[:2] == "//":
                stripped = stripped[2:]
        elif first in ("#", "*"):
            stripped = stripped[1:]
        lines.append(stripped[1:] if stripped[:1] == " " else stripped)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(line.rstrip() for line in lines) or None


def dedupe_dependencies(dependencies: Iterable[Dependency]) -> tuple[Dependency, ...]:
    """One dependency per (target, via), the first occurrence kept, source order preserved."""
    kept: dict[tuple[str, str], Dependency] = {}
    for dep in dependencies:
        kept.setdefault((dep.target, dep.via), dep)  # one dict operation per edge; first one stays
    return tuple(kept.values())


def file_span(source: bytes) -> tuple[int, int, str]:
    """(1, last line, text) of a whole file: the span of a file-level module unit."""
    lines = source.count(b"\n") + (0 if source.endswith(b"\n") else 1)
    return 1, max(1, lines), source.decode("utf-8", "replace")


def node_span(first: Node, last: Node, source: bytes) -> tuple[int, int, str]:
    """(line_start, line_end, text) from the start of `first` to the end of `last` (1-based lines;
    `first` may be a decorator or comment that belongs to the declaration `last` ends)."""
    start = first.start_point[0] + 1
    return start, last_line(last, start), source[first.start_byte : last.end_byte].decode("utf-8", "replace")


# --- Drafts: what every extractor builds before it knows a unit's final dependencies. ---------


@dataclass(slots=True)
class Draft:
    """A unit under construction; `freeze` (or `built`) turns it into a `Unit` once its references
    are resolved. Every extractor builds these: it is the one draft type.

    `node` is the declaration; the unit's text runs from `first` (a decorator, attribute, export
    or annotation that belongs to it; default `node`) to the end of `last` (where a unit the
    grammar cut short ends; default `node`), or over the whole file when `whole_file` is set
    (module and file units). `parent` is the enclosing unit's identifier. A language that needs
    more state while walking (its enclosing draft, references to resolve at the end) subclasses
    it with fields of its own; what becomes the `Unit` is only what is here.
    """

    identifier: str
    type: str
    node: Node
    parent: str | None = None
    namespace: str | None = None
    first: Node | None = None
    last: Node | None = None
    whole_file: bool = False
    signature: str | None = None
    docstring: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    deps: list[Dependency] = field(default_factory=list)


DraftT = TypeVar("DraftT", bound=Draft)


class FileExtractor(Generic[DraftT]):
    """The state every extractor's walk over one file starts from, written once.

    A language's extractor subclasses it (`class _Extractor(base.FileExtractor[_Draft])`), adds
    its own state in its `__init__` after `super().__init__(…)`, and implements `run`; its
    module's `extract` (the registry's `Extractor` protocol) is `_Extractor(path, source,
    layout).run()`. One instance serves one file and is dropped with it: nothing outlives the
    call. `drafts` are the file's units in the order they will be emitted; `unique` numbers
    repeats of an (identifier, type) in the file.
    """

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        self.file_path = file_path
        self.source = source
        self.layout = layout
        self.drafts: list[DraftT] = []
        self.unique = UniqueIdentifiers()

    def run(self) -> FileExtraction:
        """Parse the file, walk it into `drafts`, resolve their references and freeze them."""
        raise NotImplementedError


def freeze(
    draft: Draft, file_path: str, language: str, source: bytes, extra_deps: Iterable[Dependency | None] = ()
) -> Unit:
    """The finished unit: exact span and text, dependencies de-duplicated (first occurrence kept),
    self-references and unresolvable (None) references dropped."""
    identifier = draft.identifier
    # `dedupe_dependencies` over both lists, written out: one loop, no generator step per edge.
    kept: dict[tuple[str, str], Dependency] = {}
    for group in (draft.deps, extra_deps):
        for dep in group:
            if dep is not None and dep.target != identifier:
                kept.setdefault((dep.target, dep.via), dep)
    return built(draft, file_path, language, source, tuple(kept.values()))


def keep_new_edges(
    edges: Iterable[Dependency], identifier: str, seen: set[tuple[str, str]], out: list[Dependency]
) -> None:
    """Append to `out` each of `edges` that is not to `identifier` and whose (target, via) is not
    in `seen` yet (`freeze`'s rules, for extractors that de-duplicate while resolving)."""
    for dep in edges:
        key = (dep.target, dep.via)
        if key not in seen and dep.target != identifier:
            seen.add(key)
            out.append(dep)


def built(draft: Draft, file_path: str, language: str, source: bytes, dependencies: tuple[Dependency, ...]) -> Unit:
    """The unit of `draft` with its exact span and text and `dependencies` as given (an extractor
    that de-duplicates while resolving passes them here instead of through `freeze`)."""
    if draft.whole_file:
        start, end, code = file_span(source)
    else:  # `node_span(first, last, source)`, written out: this runs once per unit of every file
        node = draft.node
        first = draft.first or node
        last = draft.last or node
        start = first.start_point[0] + 1
        end_row, end_col = last.end_point
        if end_col > 0 or end_row == last.start_point[0]:
            end_row += 1
        end = end_row if end_row > start else start
        code = source[first.start_byte : last.end_byte].decode("utf-8", "replace")
    return Unit(
        identifier=draft.identifier,
        type=draft.type,
        language=language,
        file_path=file_path,
        line_start=start,
        line_end=end,
        source_code=code,
        namespace=draft.namespace,
        signature=draft.signature,
        docstring=draft.docstring,
        parent=draft.parent,
        metadata=draft.metadata,
        dependencies=dependencies,
    )


class UniqueIdentifiers:
    """Repeats of one (identifier, type) inside a file get `#2`, `#3` … in source order, so every
    unit of a file keeps a distinct identifier (overloads, redefinitions, several `init`s)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], int] = {}

    def __call__(self, identifier: str, unit_type: str) -> str:
        key = (identifier, unit_type)
        count = self._seen.get(key, 0) + 1
        self._seen[key] = count
        return identifier if count == 1 else f"{identifier}#{count}"
