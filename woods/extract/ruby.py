"""Ruby extraction: classes, modules and methods as units, with Ruby-lexical dependency candidates.

Why: Ruby resolves a constant through the lexical nesting of the reference (`Module.nesting`), so an
extractor that sees `Payment` inside `module Billing; class Invoice` cannot know the one true target
— but it can list the spellings Ruby would try, in Ruby's order, and let the index's linker keep the
first one that exists. This module walks one file's tree-sitter tree and produces:

* a unit per `class` / `module` (also `Foo = Struct.new(...)` / `Class.new` / `Data.define`), with the
  identifier in Ruby spelling including the full lexical nesting (`Billing::Invoice`);
* a unit per method: `Billing::Invoice#charge` (instance), `Billing::Invoice.due` (`def self.due`,
  `class << self`, and — a documented choice — methods inside a concern's `class_methods do` block);
* for methods defined outside any class or module the identifier is `<file_path>#name`: Ruby would
  spell them `Object#name`, but that collides across every script of a repository, whereas the path
  spelling says where the method lives and stays unique (metadata `owner` still says `Object`);
* dependencies: `superclass`, `include`/`extend`/`prepend`, `require` (target = the path as
  written; lookup = the repository paths it may name), `code_reference` for constants and `calls` for
  `Const.method(...)`, de-duplicated per unit on (target, via) in first-occurrence order.

A class reopened in several files (or twice in one file) yields one unit per occurrence: same
identifier, different `file_path`/lines. Merging them is the index's business, not the extractor's.

Rails knowledge (unit types, model/controller metadata, routes, rake tasks) lives in `rails/`,
which post-processes the drafts built here (and is the entry point for every Ruby file); `erb.py` reuses `collect_references` on the Ruby code
embedded in templates.

Speed: `RubyScan` runs one tree-sitter query per file and derives from its captures what the plain
walks find node by node — every unit's references, the file's top-level requires, and which
subtrees the declaration walk may skip — so Python touches a few node kinds instead of every node.
`collect_references` stays the reference walk: the scan answers "use the walk" whenever it cannot
place a node by byte ranges, and tests/test_extract_ruby_scan.py holds the two equal. Where the
nodes wanted are few and spelled by known bytes (a template's Ruby, `render` calls, migration
operations), looking up the leaf at each spelling replaces a query's
traversal (`spelled_reference_captures`, `spelled_receiverless_calls`; held equal by the same tests).
"""

from __future__ import annotations

import functools
import posixpath
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from tree_sitter import Node, Query, QueryCursor

from woods.extract import base
from woods.units import Dependency, FileExtraction, Unit

LANGUAGE = "ruby"

# Node types that spell a constant path (`Foo`, `Foo::Bar`, `::Foo`).
CONSTANT_NODES = frozenset({"constant", "scope_resolution"})
# Mixin calls and the `via` each one records.
MIXIN_VIAS: dict[str, str] = {"include": "include", "extend": "extend", "prepend": "prepend"}
# Calls that load another file; all recorded with via "require" (the brief's single kind).
REQUIRE_CALLS = frozenset({"require", "require_relative", "require_dependency"})
# Bare calls that switch the default visibility of the following `def`s in a class body.
VISIBILITY_CALLS = frozenset({"private", "protected", "public"})
# `X = Struct.new(...)`-style constant assignments that create a class: receiver → factory methods.
CLASS_FACTORIES: dict[str, frozenset[str]] = {
    "Struct": frozenset({"new"}),
    "Class": frozenset({"new"}),
    "Data": frozenset({"define"}),
    "Module": frozenset({"new"}),
}
# Class-method calls that really run an instance method of the receiver (jobs, Sidekiq workers):
# the instance spelling is offered to the linker right after the class-method spelling.
INSTANCE_DISPATCH: dict[str, str] = {
    "perform_later": "perform",
    "perform_now": "perform",
    "perform_async": "perform",
    "perform_in": "perform",
    "perform_at": "perform",
    "perform_inline": "perform",
}
# Blocks whose statements still belong to the class body (Rails concerns, option groups).
DSL_BLOCKS = frozenset({"included", "with_options", "class_methods", "concerning", "prepended"})
# Magic comments are not documentation even when they sit right above a declaration.
_MAGIC_COMMENT = re.compile(
    r"^#\s*(-\*-.*-\*-|frozen_string_literal:|encoding:|coding:|warn_indent:|typed:|rubocop:|shareable_constant_value:|!)"
)
_COMMENT_QUERY_SOURCE = "(comment) @comment"


@dataclass(slots=True)
class UnitDraft(base.Draft):
    """A Ruby unit under construction: the walk fills it, `rails/` may retype and enrich it.

    Kept mutable (unlike `Unit`) because Rails post-processing decides the type, metadata and extra
    edges after the generic Ruby walk has seen the whole file. Its dependencies are collected with
    their start bytes (`deps_at`) and ordered by them when frozen (`dedup_dependencies`); `last`
    is set for namespaces recovered from a syntax error (the unit ends there).
    """

    kind: str = field(kw_only=True)  # "class" | "module" | "method"
    name: str = field(kw_only=True)
    nesting: tuple[str, ...] = field(kw_only=True)  # lexical nesting in force inside the unit, innermost first
    body: Node | None = None  # a class or module body (a method's references are read from its node)
    superclass: str | None = None  # the superclass constant path as written (no leading ::)
    superclass_lookup: tuple[str, ...] = ()
    singleton: bool = False
    visibility: str = "public"
    owner: UnitDraft | None = None
    deps_at: list[tuple[int, Dependency]] = field(default_factory=list)  # (start byte, dependency)
    dsl_calls: list[Node] = field(default_factory=list)  # receiver-less calls of the class body
    methods: list[UnitDraft] = field(default_factory=list)
    explicit_visibility: dict[str, str] = field(default_factory=dict)  # `private :foo`

    def add_dep(self, position: int, dep: Dependency) -> None:
        self.deps_at.append((position, dep))


@dataclass
class _Scope:
    nesting: tuple[str, ...]
    owner: UnitDraft | None
    singleton: bool
    visibility: list[str]  # one-element box shared by the statements of one body


@dataclass
class RubyFile:
    """Everything the Rails layer needs about one parsed Ruby file."""

    file_path: str
    source: bytes
    root: Node
    drafts: list[UnitDraft]
    file_requires: list[tuple[int, Dependency]]
    scan: RubyScan | None = None

    def release(self) -> None:
        """Break the drafts' reference cycles (a class's `methods` list its method drafts, whose
        `owner` is the class) once the file's units are built, so reference counting frees the
        drafts, their nodes and the tree at once: the cyclic collector is paused while an index
        is built, and it would otherwise keep every Ruby file's drafts until phase 1 ends."""
        for draft in self.drafts:
            draft.owner = None
            draft.methods = []

    def references(self, root: Node, nesting: tuple[str, ...]) -> list[tuple[int, Dependency]]:
        """`collect_references(root, …)` for a unit root or the file's root, from the scan when it can tell."""
        found = self.scan.references(root, nesting) if self.scan is not None else None
        if found is None:
            found = collect_references(root, self.source, nesting, self.file_path)
        return found


# ----------------------------------------------------------------------------- small helpers


def node_text(node: Node | None, source: bytes) -> str:
    """`base.text`, inlined (the hottest helper of the Ruby passes)."""
    if node is None:
        return ""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def constant_path(node: Node | None, source: bytes) -> tuple[str, bool] | None:
    """(`A::B`, absolute?) for a constant / scope_resolution node; None when the scope is dynamic."""
    if node is None:
        return None
    kind = node.type
    if kind == "constant":
        return source[node.start_byte : node.end_byte].decode("utf-8", "replace"), False
    if kind != "scope_resolution":
        return None
    name = node.child_by_field_name("name")
    if name is None or name.type != "constant":
        return None
    scope = node.child_by_field_name("scope")
    if scope is None:
        return source[name.start_byte : name.end_byte].decode("utf-8", "replace"), True
    inner = constant_path(scope, source)
    if inner is None:
        return None
    return f"{inner[0]}::{source[name.start_byte : name.end_byte].decode('utf-8', 'replace')}", inner[1]


def _dedup(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))  # first occurrences, in order


def lexical_candidates(path: str, absolute: bool, nesting: tuple[str, ...]) -> tuple[str, ...]:
    """Spellings Ruby tries for constant `path` written inside `nesting` (innermost first).

    `::Foo` → (`Foo`,). Otherwise each nesting entry prefixed, then the top level; after those come
    the parents of compact-style nesting entries (`class A::B` does not put `A` in Ruby's nesting, but
    authors of such code usually mean `A::Foo`), so the linker still finds the likely target when the
    strictly Ruby spellings do not exist.
    """
    if absolute or not nesting:
        return (path,)
    strict = [f"{entry}::{path}" for entry in nesting] + [path]
    extras: list[str] = []
    for entry in nesting:
        if "::" not in entry:
            continue  # a top-level name: no parents
        parts = entry.split("::")
        for cut in range(len(parts) - 1, 0, -1):
            prefix = "::".join(parts[:cut])
            if prefix not in nesting:
                extras.append(f"{prefix}::{path}")
    return _dedup(strict + extras)


def collapse_whitespace(value: str) -> str:
    return " ".join(value.split())


def signature_of(node: Node, source: bytes, until: Node | None) -> str:
    """The declaration head: from the node start to the end of `until` (params, superclass, name)."""
    if until is None:
        first = node_text(node, source).split("\n", 1)[0]
        return first.rstrip()
    head = source[node.start_byte : until.end_byte].decode("utf-8", "replace")
    return collapse_whitespace(head)


def string_value(node: Node | None, source: bytes) -> str | None:
    """The literal text of a plain string or symbol node (no interpolation), else None."""
    if node is None:
        return None
    if node.type in ("simple_symbol", "hash_key_symbol"):
        raw = node_text(node, source)
        return raw[1:] if raw.startswith(":") else raw
    if node.type == "delimited_symbol" or node.type == "string":
        parts = [c for c in node.named_children]
        if any(c.type != "string_content" for c in parts):
            return None
        return "".join(node_text(c, source) for c in parts)
    if node.type == "identifier" or node.type == "constant":
        return node_text(node, source)
    return None


def call_name(node: Node, source: bytes) -> str | None:
    method = node.child_by_field_name("method")
    return node_text(method, source) if method is not None else None


def call_arguments(node: Node) -> list[Node]:
    args = node.child_by_field_name("arguments")
    if args is None:
        return []
    return [c for c in args.named_children if c.type != "comment"]


def call_block(node: Node) -> Node | None:
    return node.child_by_field_name("block")


def block_statements(block: Node | None) -> list[Node]:
    """The statements of a `do … end` / `{ … }` block (empty when there is none)."""
    if block is None:
        return []
    for child in block.named_children:
        if child.type in ("body_statement", "block_body"):
            return [c for c in child.named_children if c.type != "comment"]
    return []


def body_statements(body: Node | None) -> list[Node]:
    if body is None:
        return []
    return [c for c in body.named_children if c.type != "comment"]


def hash_options(args: list[Node], source: bytes) -> dict[str, Node]:
    """Keyword options (`key: value`, `:key => value`) from call arguments, key → value node."""
    options: dict[str, Node] = {}
    for arg in args:
        pairs = [arg] if arg.type == "pair" else (arg.named_children if arg.type == "hash" else [])
        for pair in pairs:
            if pair.type != "pair":
                continue
            key = string_value(pair.child_by_field_name("key"), source)
            value = pair.child_by_field_name("value")
            if key is not None and value is not None:
                options[key.rstrip(":")] = value
    return options


def literal(node: Node | None, source: bytes) -> object:
    """A plain-data view of a literal: strings/symbols → str, arrays → list, true/false/nil, else text."""
    if node is None:
        return None
    if node.type == "array":
        return [literal(c, source) for c in node.named_children if c.type != "comment"]
    if node.type in ("true", "false"):
        return node.type == "true"
    if node.type == "nil":
        return None
    if node.type == "integer":
        try:
            return int(node_text(node, source).replace("_", ""))
        except ValueError:
            return node_text(node, source)
    if node.type in ("string_array", "symbol_array"):
        return [node_text(c, source) for c in node.named_children]
    value = string_value(node, source)
    return value if value is not None else node_text(node, source)


def literal_list(node: Node | None, source: bytes) -> list[str]:
    value = literal(node, source)
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


# ----------------------------------------------------------------------------- references


def calls_lookup(path: str, absolute: bool, method: str, nesting: tuple[str, ...]) -> tuple[str, ...]:
    """Candidates for `Path.method`: class-method spellings, instance dispatch, then the class."""
    classes = lexical_candidates(path, absolute, nesting)
    spellings = [f"{c}.{method}" for c in classes]
    instance = INSTANCE_DISPATCH.get(method)
    if instance is None and path.endswith("Mailer"):
        instance = method  # mailer actions are instance methods called on the class
    if instance is not None:
        spellings += [f"{c}#{instance}" for c in classes]
    # Distinct already: `classes` are, and a constant path holds neither `.` nor `#`.
    return (*spellings, *classes)


def require_lookup(kind: str, required: str, file_path: str) -> tuple[str, ...]:
    """Repository paths a `require`/`require_relative` may name (the linker keeps what exists)."""
    target = required if required.endswith(".rb") else f"{required}.rb"
    if kind == "require_relative":
        directory = posixpath.dirname(file_path)
        return (posixpath.normpath(posixpath.join(directory, target)),)
    return _dedup([f"lib/{target}", target, f"app/{target}"])


def collect_references(
    root: Node,
    source: bytes,
    nesting: tuple[str, ...],
    file_path: str,
    *,
    include_root: bool = False,
    known: dict[tuple[int, tuple[str, ...]], list[tuple[int, Dependency]]] | None = None,
) -> list[tuple[int, Dependency]]:
    """Constant references, calls on constants, mixins and requires under `root`, in source order.

    Nested `class`/`module` bodies are skipped (they are units of their own). `include_root`
    makes `root` itself eligible (used for single expressions such as a superclass call).
    `known` maps (method node id, nesting) to that method's references, already collected with
    the same nesting: a method inside `root` contributes them instead of being walked again (the
    walk of a subtree is contiguous, so the result is the same list).
    """
    found: list[tuple[int, Dependency]] = []
    stack: list[Node] = [root] if include_root else list(reversed(root.children))
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in ("class", "module", "comment"):
            continue
        if known is not None and kind in ("method", "singleton_method"):
            cached = known.get((node.id, nesting))
            if cached is not None:
                found.extend(cached)
                continue
        if kind in CONSTANT_NODES:
            resolved = constant_path(node, source)
            if resolved is None:
                stack.extend(reversed(node.children))
                continue
            path, absolute = resolved
            lookup = lexical_candidates(path, absolute, nesting)
            found.append((node.start_byte, Dependency(path, "code_reference", None, lookup)))
            continue
        if kind == "assignment":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if left is not None and left.type in CONSTANT_NODES:
                if right is not None:
                    stack.append(right)
                continue
        if kind == "call":
            _call_references(node, source, nesting, file_path, found, stack)
            continue
        stack.extend(reversed(node.children))
    found.sort(key=lambda item: item[0])
    return found


def _call_references(
    node: Node,
    source: bytes,
    nesting: tuple[str, ...],
    file_path: str,
    found: list[tuple[int, Dependency]],
    stack: list[Node],
) -> None:
    receiver = node.child_by_field_name("receiver")
    method = node.child_by_field_name("method")
    name = node_text(method, source) if method is not None else ""
    args = node.child_by_field_name("arguments")
    block = node.child_by_field_name("block")
    rest = [c for c in (args, block) if c is not None]
    if receiver is None and name in MIXIN_VIAS:
        for arg in call_arguments(node):
            resolved = constant_path(arg, source)
            if resolved is None:
                stack.append(arg)
                continue
            path, absolute = resolved
            lookup = lexical_candidates(path, absolute, nesting)
            found.append((arg.start_byte, Dependency(path, MIXIN_VIAS[name], "module", lookup)))
        if block is not None:
            stack.append(block)
        return
    if receiver is None and name in REQUIRE_CALLS:
        arguments = call_arguments(node)
        required = string_value(arguments[0], source) if arguments else None
        if required is not None:
            lookup = require_lookup(name, required, file_path)
            found.append((node.start_byte, Dependency(required, "require", None, lookup)))
            return
    if receiver is not None and receiver.type in CONSTANT_NODES and method is not None:
        resolved = constant_path(receiver, source)
        if resolved is not None:
            path, absolute = resolved
            lookup = calls_lookup(path, absolute, name, nesting)
            found.append((receiver.start_byte, Dependency(f"{path}.{name}", "calls", None, lookup)))
            stack.extend(reversed(rest))
            return
    # Plain call: walk receiver, arguments and block, never the method name itself (`Integer(x)`).
    children = [c for c in node.children if method is None or c.id != method.id]
    stack.extend(reversed(children))


def _position(item: tuple[int, Dependency]) -> int:
    return item[0]


def dedup_dependencies(items: list[tuple[int, Dependency]]) -> tuple[Dependency, ...]:
    """First occurrence of each (target, via), ordered by source position (stable)."""
    if len(items) < 2:  # most methods: nothing to order or drop
        return (items[0][1],) if items else ()
    ordered = sorted(items, key=_position)  # a stable sort: ties keep their order
    seen: set[tuple[str, str]] = set()
    result: list[Dependency] = []
    for _, dep in ordered:
        key = (dep.target, dep.via)
        if key in seen:
            continue
        seen.add(key)
        result.append(dep)
    return tuple(result)


# ----------------------------------------------------------------------------- the scan: one query per file
#
# Walking every node of a tree in Python costs several times the parse (each `.children`,
# `.type` or field access makes Python objects). One query instead lets tree-sitter find, in C,
# the few node kinds the extractor looks at; `RubyScan` turns them into the same references the
# plain walk (`collect_references`) finds, for every unit at once, and tells the declaration
# walk which subtrees can hold anything it records (the rest it skips).

# What the references need (the whole scan of a template's Ruby, `erb.py`).
_REFERENCE_NODE_PATTERNS = """
(constant) @constant
(scope_resolution) @scope_resolution
(call method: (constant) @method_constant)
(call receiver: [(constant) (scope_resolution)]) @constant_call
(assignment left: [(constant) (scope_resolution)]) @constant_assignment
[(class) (module)] @namespace
"""
REFERENCE_PATTERNS = _REFERENCE_NODE_PATTERNS + """
(call !receiver method: (identifier) @_special_name
  (#any-of? @_special_name "include" "extend" "prepend" "require" "require_relative" "require_dependency")) @special
"""
# Plus what a Ruby file's declaration walk and file-level requires need. Receiver-less calls
# need no pattern: the walk records them only where `_is_class_level` holds, in statements of
# a class/module body (which it visits all of) or of a `DSL_BLOCKS` block (which it enters
# itself, `_Walker._dsl_block`; a query pattern reaching into blocks costs more than it saves).
# Every pattern costs a query's traversal a few percent of a parse however little it matches, so
# the `@special` calls and the visibility calls (`private :x`) share one pattern, `@receiverless`,
# which `_split_receiverless` divides by name.
_SCAN_QUERY_SOURCE = _REFERENCE_NODE_PATTERNS + """
[(method) (singleton_method) (singleton_class)] @definition
(call !receiver method: (identifier) @_receiverless_name
  (#any-of? @_receiverless_name "include" "extend" "prepend" "require" "require_relative" "require_dependency"
    "private" "protected" "public" "private_class_method" "public_class_method")) @receiverless
(body_statement (identifier) @word (#any-of? @word "private" "protected" "public" "module_function"))
(ERROR) @error
"""
# The calls of `@receiverless` that are `@special` (`REFERENCE_PATTERNS`); the others are the
# visibility calls (`@visibility_call`).
_SPECIAL_CALLS = frozenset(MIXIN_VIAS) | REQUIRE_CALLS
# Captures whose subtrees the declaration walk (`_Walker`) must enter: everything it records
# (declarations, visibility words and calls, factories, error recovery).
_WALKER_CAPTURES = (
    "namespace",
    "definition",
    "constant_assignment",
    "visibility_call",
    "word",
    "error",
)
_RECEIVERLESS_CALL_QUERY_SOURCE = "(call !receiver method: (identifier) @name) @call"

# Event kinds of the scan (what a reference becomes once a unit's nesting is known).
_CONSTANT, _CALLS, _MIXIN, _REQUIRE = range(4)
# How a node of the scan sweep lets the walk into its children: all, or none of them.
_ALL: None = None
_NONE: tuple[tuple[int, int], ...] = ()


@functools.cache
def scan_query(source: str = _SCAN_QUERY_SOURCE) -> Query:
    """The scan's query; a caller that needs only references (`REFERENCE_PATTERNS`) plus facts of
    its own from the same traversal passes its own source (ERB)."""
    return Query(base.language(LANGUAGE), source)


@functools.cache
def _receiverless_call_query() -> Query:
    return Query(base.language(LANGUAGE), _RECEIVERLESS_CALL_QUERY_SOURCE)


def receiverless_calls(node: Node, source: bytes, within: tuple[int, int] | None = None) -> list[tuple[Node, str]]:
    """Every call without a receiver whose method is an identifier, under `node` (itself included),
    with its method name, in pre-order — what `base.walk` + `call_name` would list, found in C.
    `within` narrows that to the calls inside a byte range (several subtrees of `node` at once)."""
    cursor = QueryCursor(_receiverless_call_query())
    cursor.set_containing_byte_range(*(within or (node.start_byte, node.end_byte)))
    found: list[tuple[int, Node, str]] = []
    for _pattern, captured in cursor.matches(node):
        call = captured["call"][0]
        name = captured["name"][0]
        found.append((call.start_byte, call, source[name.start_byte : name.end_byte].decode("utf-8", "replace")))
    found.sort(key=lambda item: item[0])  # receiver-less calls never share a start byte
    return [(call, name) for _start, call, name in found]


def spelled_receiverless_calls(
    node: Node, source: bytes, spelling: re.Pattern[bytes], within: tuple[int, int] | None = None
) -> list[tuple[Node, str]]:
    """`receiverless_calls(node, source, within)` restricted to the calls whose method name begins
    with a match of `spelling` — for callers that keep only such names (`render`, migration
    operations). Instead of a traversal of the subtree, the leaf at each match (overlapping
    matches included) is looked up and kept when it is the identifier method of a receiver-less
    call inside the range. Matches come in byte order, so the calls do too (pre-order)."""
    low, high = within or (node.start_byte, node.end_byte)
    found: list[tuple[Node, str]] = []
    match = spelling.search(source, low, high)
    while match is not None:
        start = match.start()
        leaf = node.descendant_for_byte_range(start, match.end())
        call = leaf.parent if leaf is not None and leaf.type == "identifier" and leaf.start_byte == start else None
        if (
            leaf is not None
            and call is not None
            and call.type == "call"
            and call.end_byte <= high
            and call.child_by_field_name("receiver") is None
            and call.child_by_field_name("method") == leaf
        ):
            found.append((call, source[start : leaf.end_byte].decode("utf-8", "replace")))
        match = spelling.search(source, start + 1, high)
    return found


# Byte spellings of what `REFERENCE_PATTERNS` capture (`spelled_reference_captures`): a constant
# begins with an uppercase letter (a non-ASCII lead byte too, to be safe) right after no letter,
# digit, `_`, `@` or `$` (a byte that would make it part of the token before), a scope resolution
# holds `::`, a class or module begins with its keyword, a mixin or require call with its name.
_CONSTANT_SPELLING = re.compile(rb"[A-Z\xc0-\xff](?<![A-Za-z0-9_@$].)")  # the lookbehind after the class: ~2x faster
_SCOPE_SPELLING = (b"::",)
# Plain words are looked for with `bytes.find` (a regex alternation scans ~10x slower).
_NAMESPACE_SPELLING = (b"class", b"module")
_SPECIAL_SPELLING = (b"include", b"extend", b"prepend", b"require")


def _spelled_leaves(root: Node, source: bytes, spelling: re.Pattern[bytes] | tuple[bytes, ...]) -> list[Node]:
    """The leaf starting at each match of `spelling` (words: every occurrence, overlapping ones
    too; a pattern: a character class), in byte order."""
    spans: list[tuple[int, int]] = []
    if isinstance(spelling, tuple):
        for word in spelling:
            start = source.find(word)
            while start != -1:
                spans.append((start, start + len(word)))
                start = source.find(word, start + 1)
        spans.sort()
    else:  # a character class: its matches cannot overlap
        spans = [match.span() for match in spelling.finditer(source)]
    found: list[Node] = []
    for start, end in spans:
        leaf = root.descendant_for_byte_range(start, end)
        if leaf is not None and leaf.start_byte == start:
            found.append(leaf)
    return found


def _spelled_special_calls(root: Node, source: bytes) -> list[Node]:
    """The receiver-less `include`/`extend`/`prepend`/`require`-family calls (the `@special`
    pattern), found at the spellings of their names (a tree without syntax errors)."""
    found: list[Node] = []
    for leaf in _spelled_leaves(root, source, _SPECIAL_SPELLING):
        call = leaf.parent
        if (
            leaf.type == "identifier"
            and call is not None
            and call.type == "call"
            and source[leaf.start_byte : leaf.end_byte].decode("utf-8", "replace") in _SPECIAL_CALLS
            and call.child_by_field_name("receiver") is None
            and call.child_by_field_name("method") == leaf
        ):
            found.append(call)
    return found


def spelled_reference_captures(root: Node, source: bytes) -> dict[str, list[Node]] | None:
    """What `QueryCursor(scan_query(REFERENCE_PATTERNS)).captures(root)` returns (as lists in
    byte order; `RubyScan` sorts them anyway), found by looking up the leaf at each byte spelling
    of a captured node and checking the pattern around it — cheaper than the query's traversal
    when spellings are few (the Ruby of a template). None for a tree with syntax errors (error
    recovery and missing nodes: the query decides)."""
    if root.has_error:
        return None
    constants = [leaf for leaf in _spelled_leaves(root, source, _CONSTANT_SPELLING) if leaf.type == "constant"]
    scopes = [
        leaf.parent
        for leaf in _spelled_leaves(root, source, _SCOPE_SPELLING)
        if leaf.type == "::" and leaf.parent is not None and leaf.parent.type == "scope_resolution"
    ]
    captures: dict[str, list[Node]] = {
        "constant": constants,
        "scope_resolution": [node for node in scopes if node is not None],
        "method_constant": [],
        "constant_call": [],
        "constant_assignment": [],
        "special": [],
        "namespace": [],
    }
    for node in (*constants, *captures["scope_resolution"]):
        parent = node.parent
        if parent is None:
            continue
        if parent.type == "call":
            if node.type == "constant" and parent.child_by_field_name("method") == node:
                captures["method_constant"].append(node)
            if parent.child_by_field_name("receiver") == node:
                captures["constant_call"].append(parent)
        elif parent.type == "assignment" and parent.child_by_field_name("left") == node:
            captures["constant_assignment"].append(parent)
    captures["special"] = _spelled_special_calls(root, source)
    for leaf in _spelled_leaves(root, source, _NAMESPACE_SPELLING):
        namespace = leaf.parent
        if leaf.type in ("class", "module") and namespace is not None and namespace.type == leaf.type:
            captures["namespace"].append(namespace)
    return captures


def _split_receiverless(captures: dict[str, list[Node]], source: bytes) -> None:
    """`@receiverless` (`_SCAN_QUERY_SOURCE`) as the captures of the two patterns it stands for:
    `@special` (`include`/`extend`/`prepend`/`require`-family) and `@visibility_call`."""
    special: list[Node] = []
    visibility: list[Node] = []
    for call in captures.pop("receiverless"):
        method = call.child_by_field_name("method")
        name = source[method.start_byte : method.end_byte].decode("utf-8", "replace") if method is not None else ""
        (special if name in _SPECIAL_CALLS else visibility).append(call)
    captures["special"] = special
    captures["visibility_call"] = visibility


class _Open(NamedTuple):
    """A node of the sweep whose subtree is still being read (the innermost is on top)."""

    end: int
    reach: bool  # the reference walk gets here
    top: bool  # the file-level require walk gets here (outside classes, modules and methods)
    namespace: int  # start byte of the innermost class/module around (-1: none)
    kept: tuple[tuple[int, int], ...] | None  # child ranges the walk enters (None: all of them)


class RubyScan:
    """One file's references (what `collect_references` finds under any unit root), computed in one
    sweep over one query's captures; `None` from `references` means "use the plain walk" (a file
    with zero-width candidate nodes, or a root the file-level walk never reaches). A query of
    `REFERENCE_PATTERNS` only serves `references(root_node, …)` (no declarations, no file requires)."""

    def __init__(
        self,
        root: Node,
        source: bytes,
        file_path: str,
        query: Query | None = None,
        captures: dict[str, list[Node]] | None = None,
    ) -> None:
        """`captures`, when given, stand for the query's (those of `REFERENCE_PATTERNS`, found
        another way: `spelled_reference_captures`)."""
        self.source = source
        self.file_path = file_path
        if captures is None:
            captures = QueryCursor(query or scan_query()).captures(root)
        if "receiverless" in captures:  # the Ruby file query: one pattern for two kinds of calls
            _split_receiverless(captures, source)
        self.captures = captures
        marks = [n.start_byte for name in _WALKER_CAPTURES for n in captures.get(name, ())]
        marks.sort()
        self.walker_marks = marks
        self.exact = True
        # (position, namespace start, kind, payload): reachable references in source order.
        self.events: list[tuple[int, int, int, tuple[object, ...]]] = []
        self.positions: list[int] = []
        self.reach: dict[tuple[int, int], bool] = {}
        self.file_requires: list[tuple[int, Dependency]] = []
        self._dependencies: dict[tuple[int, tuple[object, ...], tuple[str, ...]], Dependency] = {}
        self._sweep(captures)

    def holds_walker_nodes(self, node: Node) -> bool:
        """Whether `node`'s subtree holds a node the declaration walk records."""
        marks = self.walker_marks
        index = bisect_left(marks, node.start_byte)
        return index < len(marks) and marks[index] < node.end_byte

    def _sweep(self, captures: dict[str, list[Node]]) -> None:
        """Place every captured node the way the reference walk meets it. The nodes with parts
        (declarations, calls, scope resolutions …) are swept in pre-order with a stack of the open
        ones; each leaf constant is placed afterwards by two bisections: the parts of reached nodes
        the walk skips (`closed`, disjoint ranges) and the innermost class or module around it."""
        items: list[tuple[int, int, int, int, Node]] = []
        append = items.append
        for order, name in enumerate(
            ("namespace", "definition", "constant_assignment", "constant_call", "special", "scope_resolution")
        ):
            for node in captures.get(name, ()):
                start, end = node.start_byte, node.end_byte
                if start == end:
                    self.exact = False  # zero-width (missing) nodes: ranges cannot place them
                    return
                append((start, -end, order, len(items), node))
        constants: list[tuple[int, int]] = []
        for node in captures.get("constant", ()):
            start, end = node.start_byte, node.end_byte
            if start == end:
                self.exact = False
                return
            constants.append((start, end))
        items.sort()  # pre-order: by start, the enclosing node first (the index breaks no real tie)
        source, events, reach_of = self.source, self.events, self.reach
        parent = _Open(len(source) + 1, True, True, -1, _ALL)
        stack: list[_Open] = [parent]
        closed: list[tuple[int, int]] = []  # what reached nodes keep the walk out of
        for start, negative_end, order, _index, node in items:
            if parent.end <= start:
                stack.pop()
                while stack[-1].end <= start:
                    stack.pop()
                parent = stack[-1]
            reach = parent.reach
            kept = parent.kept
            if reach and kept is not None:
                reach = False
                for low, high in kept:
                    if low <= start < high:
                        reach = True
                        break
            top = parent.top
            namespace = parent.namespace
            end = -negative_end
            if order == 5:  # scope_resolution
                # Below a node the walk does not reach nothing is reached: no need to resolve.
                resolved = constant_path(node, source) if reach else None
                if resolved is not None:
                    events.append((start, namespace, _CONSTANT, resolved))
                parent = _Open(end, reach, top, namespace, _ALL if resolved is None else _NONE)
            elif order == 0:  # class / module: references below belong to its units
                reach_of[(start, end)] = reach
                parent = _Open(end, reach, False, start, _ALL)
            elif order == 1:  # method / singleton_method / singleton_class
                reach_of[(start, end)] = reach
                parent = _Open(end, reach, False, namespace, _ALL)
            elif order == 2:  # `Const = …`: only the right side is walked
                reach_of[(start, end)] = reach
                right = node.child_by_field_name("right")
                kept = ((right.start_byte, right.end_byte),) if right is not None else _NONE
                parent = _Open(end, reach, top, namespace, kept)
            elif order == 3:  # `Const.method(…)`
                if reach:
                    parent = self._constant_call(node, start, end, reach, top, namespace)
                else:  # nothing below is reached either: its parts need not be told apart
                    parent = _Open(end, reach, top, namespace, _NONE)
            else:
                parent = self._special(node, start, end, reach, top, namespace)
            stack.append(parent)
            kept = parent.kept
            if reach and kept is not None:  # kept ranges: in order, disjoint, children of the node
                low = start
                for begin, finish in kept:
                    if begin > low:
                        closed.append((low, begin))
                    low = max(low, finish)
                if low < end:
                    closed.append((low, end))
        if constants:
            self._place_constants(constants, captures, closed)
        events.sort(key=_first)
        positions = [event[0] for event in events]
        if len(set(positions)) != len(positions):
            self.exact = False  # two references at one byte: keep the walk's own order
            return
        self.positions = positions

    def _place_constants(
        self, constants: list[tuple[int, int]], captures: dict[str, list[Node]], closed: list[tuple[int, int]]
    ) -> None:
        """The events of the leaf constants the walk reaches (`_sweep`): a constant is reached
        unless a reached node keeps the walk out of where it starts (`closed`; a node the walk
        does not reach lies in such a range itself), and it is not a call's method name."""
        closed.sort()
        closed_starts = [low for low, _high in closed]
        # Where each innermost class or module begins (-1: none), from the boundaries on.
        bounds, owners = [0], [-1]
        open_namespaces: list[tuple[int, int]] = []  # (end, start), the innermost last
        for node in sorted(captures.get("namespace", ()), key=_span_order):
            start, end = node.start_byte, node.end_byte
            while open_namespaces and open_namespaces[-1][0] <= start:
                bounds.append(open_namespaces.pop()[0])
                owners.append(open_namespaces[-1][1] if open_namespaces else -1)
            open_namespaces.append((end, start))
            bounds.append(start)
            owners.append(start)
        while open_namespaces:
            bounds.append(open_namespaces.pop()[0])
            owners.append(open_namespaces[-1][1] if open_namespaces else -1)
        method_constants = {n.start_byte for n in captures.get("method_constant", ())}
        source, events = self.source, self.events
        for start, end in constants:
            index = bisect_right(closed_starts, start) - 1
            if index >= 0 and start < closed[index][1]:
                continue
            if start in method_constants:
                continue
            name = source[start:end].decode("utf-8", "replace")
            events.append((start, owners[bisect_right(bounds, start) - 1], _CONSTANT, (name, False)))

    def _constant_call(self, node: Node, start: int, end: int, reach: bool, top: bool, namespace: int) -> _Open:
        receiver = node.child_by_field_name("receiver")
        method = node.child_by_field_name("method")
        resolved = constant_path(receiver, self.source)
        if method is None or receiver is None or resolved is None:  # a plain call: everything but the method name
            return _plain_call(method, end, reach, top, namespace)
        if reach:
            name = node_text(method, self.source)
            self.events.append((receiver.start_byte, namespace, _CALLS, (*resolved, name)))
        arguments = node.child_by_field_name("arguments")
        block = node.child_by_field_name("block")
        if arguments is None:
            kept = ((block.start_byte, block.end_byte),) if block is not None else _NONE
        elif block is None:
            kept = ((arguments.start_byte, arguments.end_byte),)
        else:
            kept = ((arguments.start_byte, arguments.end_byte), (block.start_byte, block.end_byte))
        return _Open(end, reach, top, namespace, kept)

    def _special(self, node: Node, start: int, end: int, reach: bool, top: bool, namespace: int) -> _Open:
        """Receiver-less `include`/`extend`/`prepend` and `require`-family calls."""
        source = self.source
        method = node.child_by_field_name("method")
        name = node_text(method, source)
        if name in MIXIN_VIAS:
            kept: list[tuple[int, int]] = []
            for arg in call_arguments(node):
                resolved = constant_path(arg, source)
                if resolved is None:
                    kept.append((arg.start_byte, arg.end_byte))
                elif reach:
                    self.events.append((arg.start_byte, namespace, _MIXIN, (*resolved, MIXIN_VIAS[name])))
            block = node.child_by_field_name("block")
            if block is not None:
                kept.append((block.start_byte, block.end_byte))
            kept.sort()
            return _Open(end, reach, top, namespace, tuple(kept))
        arguments = call_arguments(node)
        required = string_value(arguments[0], source) if arguments else None
        if required is None:
            return _plain_call(method, end, reach, top, namespace)
        dependency = Dependency(required, "require", None, require_lookup(name, required, self.file_path))
        if reach:
            self.events.append((start, namespace, _REQUIRE, (dependency,)))
        if top:
            self.file_requires.append((start, dependency))
        return _Open(end, reach, False, namespace, _NONE)

    def references(self, root: Node, nesting: tuple[str, ...]) -> list[tuple[int, Dependency]] | None:
        """What `collect_references(root, source, nesting, file_path)` returns, or None when the
        scan cannot tell (the caller walks then). `root` is a method, a class/module body, a block
        of a class factory, or the file's root node."""
        if not self.exact:
            return None
        return self._references(root.start_byte, root.end_byte, nesting)

    def method_references(self, method: Node, nesting: tuple[str, ...]) -> list[tuple[int, Dependency]] | None:
        """`references(method, nesting)` when the scan `reaches` the method, else None."""
        start, end = method.start_byte, method.end_byte
        if not self.exact or not self.reach.get((start, end), False):
            return None
        return self._references(start, end, nesting)

    def _references(self, start: int, end: int, nesting: tuple[str, ...]) -> list[tuple[int, Dependency]]:
        low = bisect_left(self.positions, start)
        high = bisect_left(self.positions, end)
        found: list[tuple[int, Dependency]] = []
        made = self._dependencies  # a class body and its methods share a nesting: build each once
        for position, namespace, kind, payload in self.events[low:high]:
            if namespace < start:  # else inside a class or module below the root: a unit of its own
                key = (kind, payload, nesting)
                dependency = made.get(key)
                if dependency is None:
                    dependency = made[key] = _event_dependency(kind, payload, nesting)
                found.append((position, dependency))
        return found

    def reaches(self, node: Node) -> bool:
        """Whether the reference walk from the file's root gets to `node` (a captured class,
        module, method or constant assignment); a unit root it does not reach is walked plainly."""
        return self.exact and self.reach.get((node.start_byte, node.end_byte), False)


def _first(event: tuple[int, int, int, tuple[object, ...]]) -> int:
    return event[0]


def _span_order(node: Node) -> tuple[int, int]:
    """Pre-order of nodes: by start, the enclosing one first."""
    return node.start_byte, -node.end_byte


def _plain_call(method: Node | None, end: int, reach: bool, top: bool, namespace: int) -> _Open:
    """A call the walk enters everywhere but its method name (`Integer(x)` names no constant)."""
    if method is None:
        return _Open(end, reach, top, namespace, _ALL)
    # The method name is a leaf: every other child lies before or after it.
    return _Open(end, reach, top, namespace, ((0, method.start_byte), (method.end_byte, end)))


def _event_dependency(kind: int, payload: tuple[object, ...], nesting: tuple[str, ...]) -> Dependency:
    if kind == _CONSTANT:
        path, absolute = payload
        assert isinstance(path, str) and isinstance(absolute, bool)
        return Dependency(path, "code_reference", None, lexical_candidates(path, absolute, nesting))
    if kind == _CALLS:
        path, absolute, name = payload
        assert isinstance(path, str) and isinstance(absolute, bool) and isinstance(name, str)
        return Dependency(f"{path}.{name}", "calls", None, calls_lookup(path, absolute, name, nesting))
    if kind == _MIXIN:
        path, absolute, via = payload
        assert isinstance(path, str) and isinstance(absolute, bool) and isinstance(via, str)
        return Dependency(path, via, "module", lexical_candidates(path, absolute, nesting))
    dependency = payload[0]
    assert isinstance(dependency, Dependency)
    return dependency



# ----------------------------------------------------------------------------- comments


@functools.cache
def _comment_query() -> Query:
    # Compiling a query costs ~10 ms; it is immutable, so one per process is shared by all threads.
    return Query(base.language(LANGUAGE), _COMMENT_QUERY_SOURCE)


def comment_rows(root: Node, source: bytes) -> dict[int, str]:
    """Row → text of every `#` comment that stands alone on its line."""
    query = _comment_query()
    rows: dict[int, str] = {}
    for node in QueryCursor(query).captures(root).get("comment", []):
        row = node.start_point[0]
        raw = node_text(node, source)
        if not raw.startswith("#"):
            continue  # =begin … =end blocks are not doc comments here
        line_begin = node.start_byte - node.start_point[1]
        prefix = source[line_begin : node.start_byte]
        if prefix.strip():
            continue
        rows[row] = raw
    return rows


class CommentLines:
    """`comment_rows` computed lazily, row by row: only the rows above declarations are ever asked
    for, so the whole-file comment query (a traversal of every node) is not needed. A row holds a
    comment when its first non-blank byte is `#` and the smallest node there is a comment starting
    at that byte — exactly the rows `comment_rows` keeps."""

    def __init__(self, root: Node, source: bytes) -> None:
        self.root = root
        self.source = source
        self._line_starts: dict[int, int] = {}  # row → byte where the row begins (rows asked so far)
        self._rows: dict[int, str | None] = {}

    def anchor(self, node: Node) -> int:
        """Remember where `node`'s row begins (so the rows above it can be found); its row."""
        row, column = node.start_point
        self._line_starts[row] = node.start_byte - column
        return row

    def _line_start(self, row: int) -> int | None:
        known = self._line_starts.get(row)
        if known is not None:
            return known
        below = self._line_starts.get(row + 1)
        if below is None or below == 0:
            return None
        begin = self.source.rfind(b"\n", 0, below - 1) + 1
        self._line_starts[row] = begin
        return begin

    def get(self, row: int) -> str | None:
        rows = self._rows
        if row in rows:
            return rows[row]
        found: str | None = None
        begin = self._line_start(row) if row >= 0 else None
        if begin is None:
            return None  # the row below is not known yet: nothing to cache
        source = self.source
        end = source.find(b"\n", begin)
        line = source[begin : end if end != -1 else len(source)]
        stripped = line.lstrip()
        if stripped[:1] == b"#":
            offset = begin + len(line) - len(stripped)
            node = self.root.descendant_for_byte_range(offset, offset + 1)
            if node is not None and node.type == "comment" and node.start_byte == offset:
                found = node_text(node, source)
        rows[row] = found
        return found


def _unmarked(line: str) -> str:
    """The line without its comment marker (`^#+ ?`: the leading `#`s and one space after them),
    cut without a regex."""
    body = line.lstrip("#")
    if len(body) != len(line) and body[:1] == " ":
        return body[1:]
    return body


def docstring_above(row: int, comments: dict[int, str] | CommentLines) -> str | None:
    """The contiguous `#` block ending on the line above `row`, markers stripped; magic comments dropped."""
    lines: list[str] = []
    current = row - 1
    line = comments.get(current)
    while line is not None:
        lines.append(line)
        current -= 1
        line = comments.get(current)
    if not lines:
        return None
    lines.reverse()
    cleaned = [line for line in lines if not _MAGIC_COMMENT.match(line)]
    if not cleaned:
        return None
    stripped = [_unmarked(line).rstrip() for line in cleaned]
    return "\n".join(stripped).strip("\n") or None


# ----------------------------------------------------------------------------- the walk


class _Walker:
    def __init__(self, file_path: str, source: bytes, root: Node, scan: RubyScan | None = None) -> None:
        self.file_path = file_path
        self.source = source
        self.root = root
        self.comments = CommentLines(root, source)
        self.scan = scan
        self.drafts: list[UnitDraft] = []

    def _docstring(self, node: Node) -> str | None:
        return docstring_above(self.comments.anchor(node), self.comments)

    def _children(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]]:
        """`node`'s children to walk next (reversed); with a scan, only those holding a node the
        walk records — skipping the others changes nothing but the time spent."""
        scan = self.scan
        if scan is None:
            return [(c, scope) for c in reversed(node.children)]
        marks = scan.walker_marks
        index = bisect_left(marks, node.start_byte)
        if index == len(marks) or marks[index] >= node.end_byte:
            return []  # nothing below (most statements of a class body): no child list to make
        return [(c, scope) for c in reversed(node.children) if scan.holds_walker_nodes(c)]

    def run(self) -> None:
        top = _Scope(nesting=(), owner=None, singleton=False, visibility=["public"])
        stack: list[tuple[Node, _Scope]] = [(self.root, top)]
        while stack:
            node, scope = stack.pop()
            stack.extend(self._visit(node, scope))

    # Each visitor returns the (node, scope) pairs to walk next, in source order reversed.
    def _visit(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]]:
        kind = node.type
        if kind in ("class", "module"):
            return self._visit_namespace(node, scope)
        if kind == "singleton_class":
            value = node.child_by_field_name("value")
            inner = _Scope(scope.nesting, scope.owner, value is not None and value.type == "self", ["public"])
            return [(c, inner) for c in reversed(body_statements(node.child_by_field_name("body")))]
        if kind in ("method", "singleton_method"):
            self._visit_method(node, scope)
            return []
        if kind == "identifier" and node.parent is not None and node.parent.type == "body_statement":
            word = node_text(node, self.source)
            if word in VISIBILITY_CALLS:
                scope.visibility[0] = word
            elif word == "module_function" and scope.owner is not None:
                scope.owner.metadata["module_function"] = True
            return []
        if kind == "assignment":
            made = self._visit_class_factory(node, scope)
            if made is not None:
                return made
        if kind == "call":
            return self._visit_call(node, scope)
        if kind == "ERROR":
            return self._visit_error(node, scope)
        return self._children(node, scope)

    def _visit_error(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]]:
        """Recover `class X`/`module X` headers whose `end` the parser lost inside an ERROR node.

        The recovered namespace spans from its keyword to the end of the ERROR node and becomes the
        scope of the siblings after it, so methods that did parse keep their owner.
        """
        pending: list[tuple[Node, _Scope]] = []
        children = node.children
        skip: set[int] = set()
        for index, child in enumerate(children):
            if index in skip:
                continue
            header = children[index + 1] if index + 1 < len(children) else None
            if not child.is_named and child.type in ("class", "module") and header is not None:
                resolved = constant_path(header, self.source)
                if resolved is not None:
                    skip.add(index + 1)
                    superclass = children[index + 2] if index + 2 < len(children) else None
                    if child.type == "class" and superclass is not None and superclass.type == "superclass":
                        skip.add(index + 2)
                    else:
                        superclass = None
                    scope = self._recovered_namespace(child, header, superclass, node, resolved, scope)
                    continue
            pending.append((child, scope))
        return list(reversed(pending))

    def _recovered_namespace(
        self,
        keyword: Node,
        header: Node,
        superclass: Node | None,
        error: Node,
        resolved: tuple[str, bool],
        scope: _Scope,
    ) -> _Scope:
        identifier = self._namespace_identifier(resolved[0], resolved[1], scope)
        draft = UnitDraft(
            identifier=identifier,
            type=keyword.type,
            kind=keyword.type,
            name=identifier.rsplit("::", 1)[-1],
            node=keyword,
            nesting=(identifier, *scope.nesting),
            namespace=identifier.rsplit("::", 1)[0] if "::" in identifier else None,
            parent=scope.owner.identifier if scope.owner is not None else None,
            signature=collapse_whitespace(
                self.source[keyword.start_byte : (superclass or header).end_byte].decode("utf-8", "replace")
            ),
            docstring=self._docstring(keyword),
            owner=scope.owner,
            last=error,
        )
        draft.metadata["recovered"] = True
        if superclass is not None:
            self._record_superclass(draft, superclass, scope.nesting)
        self.drafts.append(draft)
        return _Scope(draft.nesting, draft, False, ["public"])

    def _visit_call(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]]:
        name = call_name(node, self.source)
        receiver = node.child_by_field_name("receiver")
        class_level = False
        if receiver is None and scope.owner is not None and node.parent is not None:
            class_level = _is_class_level(node, self.source)
            if class_level:
                scope.owner.dsl_calls.append(node)
            if name in VISIBILITY_CALLS or name in ("private_class_method", "public_class_method"):
                for arg in call_arguments(node):
                    symbol = string_value(arg, self.source) if arg.type != "method" else None
                    if symbol is not None:
                        label = name.removesuffix("_class_method")
                        prefix = "." if name.endswith("_class_method") else ""
                        scope.owner.explicit_visibility[prefix + symbol] = label
        block = call_block(node)
        if class_level and name in DSL_BLOCKS and block is not None and self.scan is not None:
            return self._dsl_block(node, name, block, scope)
        if receiver is None and name == "class_methods" and block is not None:
            inner = _Scope(scope.nesting, scope.owner, True, ["public"])
            return [(block, inner)]
        if receiver is None and name in VISIBILITY_CALLS:
            wrapped = _Scope(scope.nesting, scope.owner, scope.singleton, [name])
            return [(c, wrapped) for c in reversed(call_arguments(node))]
        return self._children(node, scope)

    def _dsl_block(self, node: Node, name: str | None, block: Node, scope: _Scope) -> list[tuple[Node, _Scope]]:
        """What the walk visits below a class-level `DSL_BLOCKS` call when the scan skips subtrees:
        what `_children` keeps (only the block for `class_methods`, with its scope), except that
        every statement of the block is visited — they are class-level statements the scan does
        not mark (`_SCAN_QUERY_SOURCE`)."""
        scan = self.scan
        assert scan is not None
        pending: list[tuple[Node, _Scope]] = []
        if name == "class_methods":
            children, inner = [block], _Scope(scope.nesting, scope.owner, True, ["public"])
        else:
            children, inner = node.children, scope
        for child in children:
            if child != block:
                if scan.holds_walker_nodes(child):
                    pending.append((child, scope))
                continue
            for part in block.children:
                if part.type in ("body_statement", "block_body"):
                    pending.extend((statement, inner) for statement in part.children)
                elif scan.holds_walker_nodes(part):
                    pending.append((part, inner))
        pending.reverse()
        return pending

    def _namespace_identifier(self, written: str, absolute: bool, scope: _Scope) -> str:
        if absolute or not scope.nesting:
            return written
        return f"{scope.nesting[0]}::{written}"

    def _visit_namespace(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]]:
        name_node = node.child_by_field_name("name")
        resolved = constant_path(name_node, self.source)
        body = node.child_by_field_name("body")
        if resolved is None:
            return [(c, scope) for c in reversed(body_statements(body))]
        written, absolute = resolved
        identifier = self._namespace_identifier(written, absolute, scope)
        superclass_node = node.child_by_field_name("superclass") if node.type == "class" else None
        draft = UnitDraft(
            identifier=identifier,
            type=node.type,
            kind=node.type,
            name=identifier.rsplit("::", 1)[-1],
            node=node,
            nesting=(identifier, *scope.nesting),
            namespace=identifier.rsplit("::", 1)[0] if "::" in identifier else None,
            parent=scope.owner.identifier if scope.owner is not None else None,
            signature=signature_of(node, self.source, superclass_node or name_node),
            docstring=self._docstring(node),
            body=body,
            owner=scope.owner,
        )
        if superclass_node is not None:
            self._record_superclass(draft, superclass_node, scope.nesting)
        self.drafts.append(draft)
        inner = _Scope(draft.nesting, draft, False, ["public"])
        return [(c, inner) for c in reversed(body_statements(body))]

    def _record_superclass(self, draft: UnitDraft, superclass_node: Node, outer: tuple[str, ...]) -> None:
        expression = next((c for c in superclass_node.named_children if c.type != "comment"), None)
        resolved = constant_path(expression, self.source)
        if resolved is not None:
            path, absolute = resolved
            draft.superclass = path
            draft.superclass_lookup = lexical_candidates(path, absolute, outer)
            dep = Dependency(path, "superclass", None, draft.superclass_lookup)
            draft.add_dep(superclass_node.start_byte, dep)
            draft.metadata["superclass"] = path
        elif expression is not None:
            draft.metadata["superclass"] = node_text(expression, self.source)
            draft.deps_at.extend(
                collect_references(expression, self.source, outer, self.file_path, include_root=True)
            )

    def _visit_class_factory(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]] | None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if left is None or right is None or left.type not in CONSTANT_NODES or right.type != "call":
            return None
        receiver = right.child_by_field_name("receiver")
        factory = constant_path(receiver, self.source)
        method = call_name(right, self.source)
        if factory is None or method not in CLASS_FACTORIES.get(factory[0], frozenset()):
            return None
        resolved = constant_path(left, self.source)
        if resolved is None:
            return None
        written, absolute = resolved
        identifier = self._namespace_identifier(written, absolute, scope)
        kind = "module" if factory[0] == "Module" else "class"
        draft = UnitDraft(
            identifier=identifier,
            type=kind,
            kind=kind,
            name=identifier.rsplit("::", 1)[-1],
            node=node,
            nesting=scope.nesting,  # a block opens no lexical scope: constants resolve outside
            namespace=identifier.rsplit("::", 1)[0] if "::" in identifier else None,
            parent=scope.owner.identifier if scope.owner is not None else None,
            signature=node_text(node, self.source).split("\n", 1)[0].rstrip(),
            docstring=self._docstring(node),
            body=call_block(right),
            owner=scope.owner,
        )
        draft.metadata["factory"] = f"{factory[0]}.{method}"
        if factory[0] == "Class":
            args = call_arguments(right)
            parent_class = constant_path(args[0], self.source) if args else None
            if parent_class is not None:
                draft.superclass = parent_class[0]
                draft.superclass_lookup = lexical_candidates(parent_class[0], parent_class[1], scope.nesting)
                draft.add_dep(
                    args[0].start_byte,
                    Dependency(parent_class[0], "superclass", None, draft.superclass_lookup),
                )
                draft.metadata["superclass"] = parent_class[0]
        self.drafts.append(draft)
        inner = _Scope(draft.nesting, draft, False, ["public"])
        block = call_block(right)
        return [(block, inner)] if block is not None else []

    def _visit_method(self, node: Node, scope: _Scope) -> None:
        source = self.source
        name_node = node.child_by_field_name("name")
        name = source[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace") if name_node is not None else ""
        singleton = scope.singleton
        owner = scope.owner
        owner_spelling = owner.identifier if owner is not None else None
        if node.type == "singleton_method":
            obj = node.child_by_field_name("object")
            singleton = True
            resolved = constant_path(obj, source)
            if resolved is not None and (owner is None or resolved[0] not in (owner.name, owner.identifier)):
                owner_spelling = resolved[0]
        params = node.child_by_field_name("parameters")
        separator = "." if singleton else "#"
        identifier = f"{owner_spelling}{separator}{name}" if owner_spelling else f"{self.file_path}#{name}"
        visibility = scope.visibility[0]
        draft = UnitDraft(
            identifier,
            "method",
            node,
            owner.identifier if owner is not None else None,
            owner.identifier if owner is not None else None,
            signature=signature_of(node, source, params or name_node),
            docstring=self._docstring(node),
            kind="method",
            name=name,
            nesting=owner.nesting if owner is not None else scope.nesting,
            singleton=singleton,
            visibility=visibility,
            owner=owner,
        )
        draft.metadata = {
            "visibility": visibility,
            "scope": "class" if singleton else "instance",
            "parameters": parameter_names(params, source),
        }
        if owner is None:
            draft.metadata["owner"] = "Object"
        else:
            owner.methods.append(draft)
        self.drafts.append(draft)


def _is_class_level(node: Node, source: bytes) -> bool:
    """A statement of a class/module body, or of a DSL block (`included do`, `with_options do`) in one."""
    parent = node.parent
    if parent is None or parent.type not in ("body_statement", "block_body"):
        return False
    holder = parent.parent
    if holder is None:
        return False
    if holder.type in ("class", "module"):
        return True
    if holder.type in ("do_block", "block") and holder.parent is not None and holder.parent.type == "call":
        return call_name(holder.parent, source) in DSL_BLOCKS and _is_class_level(holder.parent, source)
    return False


# The sigil each kind of parameter is spelled with.
_PARAMETER_SIGILS = {"splat_parameter": "*", "hash_splat_parameter": "**", "block_parameter": "&"}


def parameter_names(params: Node | None, source: bytes) -> list[str]:
    """Parameter names with their Ruby sigils (`a`, `b = …` → `b`, `*rest`, `k:`, `**opts`, `&blk`)."""
    if params is None:
        return []
    names: list[str] = []
    sigils = _PARAMETER_SIGILS
    for child in params.named_children:
        kind = child.type
        if kind == "identifier":
            names.append(source[child.start_byte : child.end_byte].decode("utf-8", "replace"))
            continue
        inner = child.child_by_field_name("name") or child
        label = source[inner.start_byte : inner.end_byte].decode("utf-8", "replace")
        if kind == "keyword_parameter":
            label += ":"
        names.append(sigils.get(kind, "") + label)
    return names


# ----------------------------------------------------------------------------- assembly


def _finish_dependencies(walked: RubyFile) -> None:
    """Each draft's references. Methods first: a class or module body reuses its methods' lists
    (same nesting) instead of walking every method body a second time."""
    source, path, scan = walked.source, walked.file_path, walked.scan
    if scan is not None:  # every unit's references from the one scan (roots it reaches)
        for draft in walked.drafts:
            if draft.kind == "method":
                found = scan.method_references(draft.node, draft.nesting)
                draft.deps_at.extend(found if found is not None else collect_references(draft.node, source, draft.nesting, path))
        for draft in walked.drafts:
            if draft.kind != "method" and draft.body is not None:
                found = scan.references(draft.body, draft.nesting) if scan.reaches(draft.node) else None
                if found is None:
                    found = collect_references(draft.body, source, draft.nesting, path)
                draft.deps_at.extend(found)
            if draft.owner is None and draft.kind != "method":
                draft.deps_at.extend(walked.file_requires)
        return
    known: dict[tuple[int, tuple[str, ...]], list[tuple[int, Dependency]]] = {}
    for draft in walked.drafts:
        if draft.kind == "method":
            references = collect_references(draft.node, source, draft.nesting, path)
            known[(draft.node.id, draft.nesting)] = references
            draft.deps_at.extend(references)
    for draft in walked.drafts:
        if draft.kind != "method" and draft.body is not None:
            draft.deps_at.extend(collect_references(draft.body, source, draft.nesting, path, known=known))
        if draft.owner is None and draft.kind != "method":
            draft.deps_at.extend(walked.file_requires)


def _apply_explicit_visibility(drafts: list[UnitDraft]) -> None:
    for draft in drafts:
        owner = draft.owner
        if draft.kind != "method" or owner is None:
            continue
        key = ("." if draft.singleton else "") + draft.name
        if key in owner.explicit_visibility:
            draft.visibility = owner.explicit_visibility[key]
            draft.metadata["visibility"] = draft.visibility


def _file_requires(root: Node, source: bytes, file_path: str) -> list[tuple[int, Dependency]]:
    """`require`s outside every class, module and method: they serve the file's top-level units."""
    found: list[tuple[int, Dependency]] = []
    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        if node.type in ("class", "module", "method", "singleton_method", "singleton_class"):
            continue
        if node.type == "call" and node.child_by_field_name("receiver") is None:
            name = call_name(node, source)
            args = call_arguments(node)
            required = string_value(args[0], source) if args else None
            if name in REQUIRE_CALLS and required is not None:
                found.append(
                    (
                        node.start_byte,
                        Dependency(required, "require", None, require_lookup(name, required, file_path)),
                    )
                )
                continue
        stack.extend(reversed(node.children))
    return found


def walk_file(file_path: str, source: bytes, *, scan: bool = True) -> tuple[RubyFile, tuple[str, ...]]:
    """Parse and walk one Ruby file into drafts (generic Ruby only) plus syntax warnings.

    With `scan` (the default) one query finds the nodes the walks need (`RubyScan`); without, every
    walk visits the tree node by node — the reference the scan is tested against."""
    tree = base.parse(LANGUAGE, source)
    root = tree.root_node
    scanned = RubyScan(root, source, file_path) if scan else None
    if scanned is not None and not scanned.exact:
        scanned = None
    walker = _Walker(file_path, source, root, scanned)
    walker.run()
    file_requires = scanned.file_requires if scanned is not None else _file_requires(root, source, file_path)
    walked = RubyFile(file_path, source, root, walker.drafts, file_requires, scanned)
    _apply_explicit_visibility(walked.drafts)
    _finish_dependencies(walked)
    return walked, base.syntax_warnings(tree, file_path)


def draft_to_unit(draft: UnitDraft, file_path: str, source: bytes) -> Unit:
    return base.built(draft, file_path, LANGUAGE, source, dedup_dependencies(draft.deps_at))


def is_namespace_wrapper(draft: UnitDraft) -> bool:
    """`module Billing` whose body holds only classes and modules (and comments): it names a
    namespace, it is not code. Such wrappers are not units — otherwise every file of a namespaced
    app yields one more `Billing` whose source repeats the file, crowding search results and making
    `path` references resolve to the wrapper instead of the class the file defines. The Ruby gem
    (which extracts classes by role) has no such units either."""
    if draft.kind != "module" or draft.type != "module" or draft.body is None:
        return False
    members = [c for c in draft.body.named_children if c.type != "comment"]
    return bool(members) and all(c.type in ("class", "module") for c in members)


def _reparent(unit: Unit, wrappers: dict[str, str | None], file_requires: tuple[Dependency, ...]) -> Unit:
    """A unit whose parent is a dropped namespace wrapper gets the nearest enclosing real unit
    (None at top level; its `namespace` still names the full lexical nesting). Promoted to top level,
    it also takes the file's top-level requires, which the wrapper would have carried."""
    parent = unit.parent
    while parent is not None and parent in wrappers:
        parent = wrappers[parent]
    if parent == unit.parent:
        return unit
    dependencies = unit.dependencies
    if parent is None and unit.type != "method":
        dependencies = base.dedupe_dependencies([*file_requires, *unit.dependencies])
    return replace(unit, parent=parent, dependencies=dependencies)


def symbol_names(args: list[Node], source: bytes) -> list[str]:
    names = []
    for arg in args:
        if arg.type in ("simple_symbol", "string", "delimited_symbol"):
            value = string_value(arg, source)
            if value is not None:
                names.append(value)
        elif arg.type in ("array", "symbol_array", "string_array"):
            names.extend(literal_list(arg, source))
    return names


def option_value(options: dict[str, Node], key: str, source: bytes) -> object:
    return literal(options.get(key), source) if key in options else None


def line_number(node: Node) -> int:
    return node.start_point[0] + 1


def unit_order(unit: Unit) -> tuple[int, int, str, str]:
    """Outermost first in source order: by start line, longer span first, then identifier, type."""
    return (unit.line_start, -unit.line_end, unit.identifier, unit.type)


def assemble(
    walked: RubyFile, warnings: tuple[str, ...], extra_units: Sequence[Unit] = (), metadata: dict[str, object] | None = None
) -> FileExtraction:
    """The file's units from its walk (namespace wrappers dropped, file requires on top-level units)
    plus units a layer on top added (`extra_units`, e.g. Rails routes), outermost first."""
    kept = [d for d in walked.drafts if d.kind == "method" or not is_namespace_wrapper(d)]
    wrappers = {d.identifier: d.parent for d in walked.drafts if d.kind != "method" and is_namespace_wrapper(d)}
    file_requires = tuple(dep for _byte, dep in sorted(walked.file_requires, key=lambda item: item[0]))
    path, source = walked.file_path, walked.source
    units = [draft_to_unit(d, path, source) for d in kept]
    if wrappers:
        units = [_reparent(unit, wrappers, file_requires) for unit in units]
    units.extend(extra_units)
    units.sort(key=unit_order)
    return FileExtraction(
        file_path=walked.file_path,
        language=LANGUAGE,
        units=tuple(units),
        warnings=warnings,
        metadata=dict(metadata or {}),
    )
