"""Rust extraction: modules, structs, enums, traits, type aliases, functions and methods.

Module paths come from the file path below `src/`: `src/lib.rs` and `src/main.rs` are `crate`,
`src/billing/mod.rs` is `crate::billing`, `src/billing/invoice.rs` is `crate::billing::invoice`;
a file outside `src/` (tests, examples, build.rs) maps its whole path the same way. Inline
`mod x { … }` nests (`crate::billing::x`). Items are `<module>::Name`; methods of `impl Type` are
`<Type path>::method` (the type resolved through `use`, else the current module), trait methods
`<module>::Trait::method`; `impl` blocks are not units. A repeated (identifier, type) in one file —
`fmt` of a `Display` and a `Debug` impl — gets `#2`, `#3` ….

Dependencies: `use` trees flattened to absolute paths (`crate::`, `super::`, `self::` resolved;
other paths kept as written with `crate::`-relative lookup candidates), `impl Trait for Type`
(`implements`, on the type's unit when it is in this file, else on the module unit), calls to
paths and to `self.m()` / `Self::m()`, and references to types that are `use`d or declared here.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from tree_sitter import Node, Point, Tree

from woods.extract import base, preorder
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction, Unit

LANGUAGE = "rust"
# Comment node types of the grammar (`///` and `//!` doc comments are line comments).
_COMMENTS = frozenset({"line_comment", "block_comment"})
# Item node → unit type; unions are structs for retrieval purposes.
_ITEM_TYPES = {
    "struct_item": "struct",
    "union_item": "struct",
    "enum_item": "enum",
    "trait_item": "trait",
    "type_item": "type_alias",
    "macro_definition": "macro",
}
# Words an item may start with: a macro invocation at item level whose `{ … }` body starts with one
# of these wraps items (`cfg_rt! { pub fn spawn_blocking … }`, tokio's conditional compilation).
_ITEM_STARTS = frozenset(
    {"pub", "fn", "impl", "struct", "enum", "trait", "mod", "use", "type", "const", "static", "async", "unsafe",
     "extern", "union", "macro_rules", "#", "///", "//!", "/*", "//"}
)
# Wrapping macros can nest (`cfg_rt! { cfg_fs! { … } }`); unwrapping stops after this many levels.
_MAX_UNWRAP_DEPTH = 4
# A tree edit that blanks bytes: (start byte, end byte, start point, end point).
Edit = tuple[int, int, Point, Point]


def unwrap_item_macros(source: bytes, root: Node) -> bytes | None:
    """The source with every item-level `name! { items }` wrapper blanked (its `name! {` and closing
    `}` become spaces, newlines kept), so the wrapped items parse as items at their own byte
    positions — or None when there is none. Byte offsets never move, so line ranges and texts read
    from the original source stay exact."""
    edits = item_macro_wrappers(source, root)
    return blank(source, edits) if edits else None


def item_macro_wrappers(source: bytes, root: Node) -> list[Edit]:
    """The parts `unwrap_item_macros` blanks, as tree edits: each wrapper's `name! {` and its
    closing `}` (with a trailing `;`). Blanking keeps every byte offset and row/column."""
    edits: list[Edit] = []
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        for child in node.named_children:
            if child.type == "macro_invocation" and _wraps_items(child, source):
                tree = child.child_by_field_name("token_tree") or next(
                    (c for c in child.named_children if c.type == "token_tree"), None
                )
                if tree is not None:
                    row, column = tree.start_point  # `{` and `}` are one byte each
                    edits.append((child.start_byte, tree.start_byte + 1, child.start_point, Point(row, column + 1)))
                    row, column = tree.end_point
                    edits.append((tree.end_byte - 1, child.end_byte, Point(row, column - 1), child.end_point))
            elif child.type in ("declaration_list", "mod_item"):
                stack.append(child)
    return edits


def blank(source: bytes, edits: list[Edit]) -> bytes:
    """`source` with the bytes of every edit replaced by spaces, line breaks kept."""
    out = bytearray(source)
    for start, end, _start_point, _end_point in edits:
        for index in range(start, end):
            if out[index] not in (0x0A, 0x0D):
                out[index] = 0x20
    return bytes(out)


def reparse_unwrapped(source: bytes, tree: Tree) -> tuple[bytes, Tree]:
    """The source with item-wrapping macros unwrapped (up to `_MAX_UNWRAP_DEPTH` nested levels)
    and its tree; (source, tree) unchanged when there are none.

    A tree without syntax errors is reparsed incrementally (the blanked bytes as edits, so
    tree-sitter reuses everything outside the wrappers); one with errors is parsed afresh, where
    error recovery could otherwise depend on what was reused.
    """
    parsed = source
    for _level in range(_MAX_UNWRAP_DEPTH):  # items inside `cfg_x! { … }` wrappers are items too
        edits = item_macro_wrappers(parsed, tree.root_node)
        if not edits:
            break
        parsed = blank(parsed, edits)
        if tree.root_node.has_error:
            tree = base.parse("rust", parsed)
            continue
        for start, end, start_point, end_point in edits:
            tree.edit(start, end, end, start_point, end_point, end_point)
        tree = base.parser("rust").parse(parsed, tree)
    return parsed, tree


def _wraps_items(node: Node, source: bytes) -> bool:
    name = node.child_by_field_name("macro")
    if name is None or base.text(name, source) == "macro_rules":
        return False
    tree = next((c for c in node.named_children if c.type == "token_tree"), None)
    if tree is None or source[tree.start_byte : tree.start_byte + 1] != b"{":
        return False
    inner = source[tree.start_byte + 1 : tree.end_byte - 1].lstrip()
    return any(inner.startswith(word.encode()) for word in _ITEM_STARTS)
# What the declaration walk (`_Extractor._replay`) needs, in one query; capture indexes follow the
# order of the names below (an enclosing kind first, for nodes that start together). `named` is
# every type name a declaration (or a struct expression) gives, which is never a reference.
_WALK = """
[(function_item) (function_signature_item)] @function
[(struct_item) (union_item) (enum_item) (trait_item) (type_item) (macro_definition)] @item
(mod_item) @mod
(impl_item) @impl
(mod_item body: (_) @body)
(impl_item body: (_) @body)
(use_declaration) @use
(attribute_item) @hidden
(_ name: [(type_identifier) (scoped_type_identifier)] @named)
(call_expression) @call
(scoped_type_identifier) @scoped_type_name
(type_identifier) @type_name
"""
_FUNCTION, _ITEM, _MOD, _IMPL, _BODY, _USE, _HIDDEN_KIND, _NAMED, _CALL, _SCOPED_TYPE_NAME, _TYPE_NAME = range(11)
# What a scope holds: code (every reference), nothing that counts, or nothing but the body of its
# `impl` or `mod` (which is code again).
_CODE, _HIDDEN, _OPENS_BODY = range(3)
_NO_END = 1 << 62  # the end of no scope
_UNRESOLVED = Dependency("", "")  # a cache miss (`_Extractor._freeze`)
# Prelude names (enum variants, std constructors) a call never resolves to in project code.
_PRELUDE = frozenset({"Ok", "Err", "Some", "None", "Box", "Vec", "String", "drop", "Default", "Option"})
# First path segments that name the standard library, kept as written.
_STD_CRATES = frozenset({"std", "core", "alloc"})
_CRATE_OR_STD = _STD_CRATES | {"crate"}  # imports from these are absolute already


def _separators(identifier: str) -> list[int]:
    """Where each `::` of `identifier` starts."""
    found: list[int] = []
    index = identifier.find("::")
    while index >= 0:
        found.append(index)
        index = identifier.find("::", index + 2)
    return found


def module_path(file_path: str) -> str:
    """`src/billing/invoice.rs` → `crate::billing::invoice` (see the module docstring)."""
    parts = list(PurePosixPath(file_path).parts)
    if "src" in parts:
        parts = parts[parts.index("src") + 1 :]
    if not parts:
        return "crate"
    stem = parts[-1][:-3] if parts[-1].endswith(".rs") else parts[-1]
    if stem == "mod" or (len(parts) == 1 and stem in ("lib", "main")):
        parts = parts[:-1]
    else:
        parts[-1] = stem
    return "::".join(["crate", *parts])


@dataclass(slots=True)
class _Ctx:
    """Where a node sits: its module, and the impl/trait whose `Self` it sees."""

    module: str
    self_type: str | None = None
    trait: str | None = None


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Rust unit under construction: where it sits (`ctx`), its enclosing unit (`outer`), and
    the paths it refers to, resolved once every `use` of the file is known."""

    ctx: _Ctx = field(kw_only=True)
    outer: _Draft | None = None
    refs: list[tuple[str, tuple[str, ...], _Ctx]] = field(default_factory=list)


# A path written plainly — ASCII identifiers joined by `::`, no whitespace, comment, generic or
# `$metavariable` — whose segments are its text split at `::` (`_path_segments`).
_PLAIN_PATH = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*")
# Node types whose segments are exactly their leaves' texts when the tree under them has no error:
# a path's children are its path, `::` and its name, so a plainly written one is read from the text.
_PLAIN_PATH_TYPES = frozenset(
    {"scoped_identifier", "scoped_type_identifier", "identifier", "type_identifier", "crate", "super", "self"}
)


def _path_segments(node: Node | None, source: bytes) -> tuple[str, ...] | None:
    """`a::b::c` (scoped identifier or scoped type) → ('a', 'b', 'c'); a generic's base path."""
    if node is None:
        return None
    kind = node.type
    while kind in ("generic_type", "generic_function"):
        inner = node.child_by_field_name("type") or node.child_by_field_name("function")
        if inner is None:
            return None
        node, kind = inner, inner.type
    if kind in _PLAIN_PATH_TYPES and not node.has_error:
        raw = source[node.start_byte : node.end_byte]
        if _PLAIN_PATH.fullmatch(raw):  # the tree's segments, read from the text
            return tuple(raw.decode("ascii").split("::"))
    return _walk_path(node, source)


def _walk_path(node: Node | None, source: bytes) -> tuple[str, ...] | None:
    """`_path_segments` read node by node: for paths not plainly written, or under an error."""
    parts: list[str] = []
    current = node
    while current is not None:
        kind = current.type
        if kind in ("scoped_identifier", "scoped_type_identifier"):
            parts.append(base.text(current.child_by_field_name("name"), source))
            current = current.child_by_field_name("path")
            if current is None:
                break
        elif kind in ("generic_type", "generic_function"):
            current = current.child_by_field_name("type") or current.child_by_field_name("function")
        elif kind in ("identifier", "type_identifier", "crate", "super", "self", "metavariable"):
            parts.append(base.text(current, source))
            break
        else:
            return None
    return tuple(reversed(parts)) if parts else None


def _leading_docs(siblings: list[Node], index: int, source: bytes) -> str | None:
    """Comments directly above the item `siblings[index]`, across its `#[…]` attributes."""
    lines: list[str] = []  # bottom up
    expected: int | None = None  # the start row of the node below `current` (read once needed)
    for position in range(index - 1, -1, -1):
        current = siblings[position]
        kind = current.type
        comment = kind == "line_comment" or kind == "block_comment"  # _COMMENTS
        if not comment and kind != "attribute_item":
            break
        if expected is None:
            expected = siblings[index].start_point[0]
        if current.end_point[0] < expected - 1:
            break
        if comment:
            raw = source[current.start_byte : current.end_byte]
            if raw[:3] in (b"//!", b"/*!"):  # an inner doc comment documents the enclosing module
                break
            lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
        expected = current.start_point[0]
    lines.reverse()
    return base.clean_comment("\n".join(lines)) if lines else None


class _Extractor(base.FileExtractor[_Draft]):
    """One iterative walk; paths are resolved at the end, when every `use` is known."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.root_module = module_path(file_path)
        self.bindings: dict[str, str] = {}  # local name → absolute path
        self.declared: dict[str, str] = {}  # item name → identifier (first declaration wins)
        self.by_id: dict[str, _Draft] = {}
        self.impls: list[tuple[str, tuple[str, ...], _Ctx, _Draft]] = []
        self.child_mods: dict[str, set[str]] = {}  # module path → names of its `mod x` items
        self.siblings = preorder.Siblings()
        self.sorted_ids: list[str] = []  # every unit identifier, sorted (`_continued`)
        self.enclosing: set[str] | None = None  # only for a file path with a colon (`_continued`)
        self.use_leaves: dict[int, list[tuple[tuple[str, ...], str | None]]] = {}  # by start byte
        # Resolved references by (via, path, module, `Self`, unit id or None): see `_freeze`.
        self.resolved: dict[tuple[str, tuple[str, ...], str, str | None, int | None], Dependency | None] = {}

    def run(self) -> FileExtraction:
        tree = base.parse("rust", self.source)
        warnings = base.syntax_warnings(tree, self.file_path)
        _parsed, tree = reparse_unwrapped(self.source, tree)
        root = tree.root_node
        ctx = _Ctx(self.root_module)
        module = _Draft(self.root_module, "module", root, namespace=self._parent_module(self.root_module), whole_file=True, ctx=ctx)
        module.docstring = self._inner_docs(root)
        self.drafts.append(module)
        top_level = root.named_children
        for child in top_level:
            if child.type == "mod_item":
                self.child_mods.setdefault(ctx.module, set()).add(
                    base.text(child.child_by_field_name("name"), self.source)
                )
        for child in top_level:
            if child.type == "use_declaration":
                self._use(child, ctx, module, record=False)
        self._replay(root, module, ctx)
        self._attach_impls()
        self.sorted_ids = sorted(self.by_id)
        if ":" in self.file_path:  # module segments with a colon: see `_continued`
            self.enclosing = {identifier[:i] for identifier in self.by_id for i in _separators(identifier)}
        units = tuple(self._freeze(d) for d in self.drafts)
        return FileExtraction(self.file_path, LANGUAGE, units, warnings)

    def _replay(self, root: Node, module: _Draft, root_ctx: _Ctx) -> None:
        """The declaration walk, replayed over one query's captures (`preorder`).

        Items, functions and inline modules are units and own what is inside them; an `impl`
        block's body sees the impl's `Self` and a trait's items the trait's, while the rest of an
        `impl` (its type, trait and bounds) and of a `mod` is hidden, as are attributes and `use`
        declarations (read by `_use`). Calls and, inside units other than modules, type names (a
        scoped one hiding its parts; never the name a declaration gives) go to the innermost unit.
        """
        # Open scopes, outermost first: (node, end byte, owning unit, its context, mode). The
        # innermost one's values are kept in locals; `enter` is asked only when a capture is not
        # plainly inside it.
        stack: list[tuple[Node, int, _Draft, _Ctx, int]] = []
        outermost = (root, _NO_END, module, root_ctx, _CODE)  # the file's own scope
        _, top_end, owner, ctx, mode = outermost
        named = -1  # start of the last node a declaration names (never a reference)
        source, bindings, declared = self.source, self.bindings, self.declared
        for start, negative_end, kind, node in preorder.captures("rust", _WALK, root):
            end = -negative_end
            if start >= top_end or start == end:
                index = preorder.enter(stack, node, start, end)
                _, top_end, owner, ctx, mode = stack[-1] if stack else outermost
                if index != len(stack) - 1:  # an empty node (a MISSING name) outside the innermost scope
                    _, _, node_owner, node_ctx, node_mode = stack[index] if index >= 0 else outermost
                    if kind == _TYPE_NAME and node_mode == _CODE and node_owner.type != "module" and start != named:
                        self._type_ref(node, node_owner, node_ctx)
                    continue
            if mode != _CODE:
                if kind == _BODY and mode == _OPENS_BODY:  # the body of the impl or mod
                    stack.append((node, end, owner, ctx, _CODE))
                    top_end, mode = end, _CODE
                continue
            if kind == _TYPE_NAME:  # `_type_ref` of a plain name
                if owner.type != "module" and start != named:
                    name = source[start:end].decode("utf-8", "replace")
                    if name in bindings or name in declared:
                        owner.refs.append(("code_reference", (name,), ctx))
            elif kind == _CALL:
                self._call(node, owner, ctx)
            elif kind == _NAMED:
                named = start
            elif kind == _SCOPED_TYPE_NAME:
                if owner.type != "module":
                    if start != named:
                        self._type_ref(node, owner, ctx)
                    stack.append((node, end, owner, ctx, _HIDDEN))
                    top_end, mode = end, _HIDDEN
            elif kind in (_FUNCTION, _ITEM):
                if kind == _FUNCTION:
                    owner = self._function(node, owner, ctx)
                else:
                    owner = self._item(node, owner, ctx)
                    if node.type == "trait_item":
                        ctx = _Ctx(ctx.module, owner.identifier, owner.identifier)
                stack.append((node, end, owner, ctx, _CODE))
                top_end = end
            elif kind == _MOD:
                body = node.child_by_field_name("body")
                name = base.text(node.child_by_field_name("name"), self.source)
                self.child_mods.setdefault(ctx.module, set()).add(name)
                if body is not None:
                    owner = self._mod(node, owner, ctx)
                    ctx = _Ctx(owner.identifier)
                stack.append((node, end, owner, ctx, _OPENS_BODY))
                top_end, mode = end, _OPENS_BODY
            elif kind == _IMPL:
                ctx = self._impl(node, owner, ctx)
                stack.append((node, end, owner, ctx, _OPENS_BODY))
                top_end, mode = end, _OPENS_BODY
            elif kind == _USE:
                self._use(node, ctx, owner, record=True)
                stack.append((node, end, owner, ctx, _HIDDEN))
                top_end, mode = end, _HIDDEN
            elif kind == _HIDDEN_KIND:  # attributes
                stack.append((node, end, owner, ctx, _HIDDEN))
                top_end, mode = end, _HIDDEN

    # -- declarations ----------------------------------------------------------------------

    @staticmethod
    def _parent_module(path: str) -> str | None:
        head, sep, _ = path.rpartition("::")
        return head if sep else None

    def _inner_docs(self, body: Node) -> str | None:
        lines: list[str] = []
        # Child by child: only the leading ones are read, never the list of a whole file's items.
        for index in range(body.child_count):
            child = body.child(index)
            if child is None:
                break
            if child.type not in _COMMENTS:
                if child.type in ("{",):
                    continue
                break
            raw = base.text(child, self.source)
            if raw.startswith("//!") or raw.startswith("/*!"):
                lines.append(raw.replace("/*!", "/*", 1).rstrip("\n"))
        return base.clean_comment("\n".join(lines)) if lines else None

    def _new(self, node: Node, name: str, unit_type: str, owner: _Draft, ctx: _Ctx, prefix: str) -> _Draft:
        identifier = self.unique(f"{prefix}::{name}", unit_type)
        siblings, index = self.siblings.place(node)
        first = index  # the item's first node, its `#[…]` attributes included
        for position in range(index - 1, -1, -1):
            previous = siblings[position]
            if previous.is_named:
                if previous.type != "attribute_item":
                    break
                first = position
        draft = _Draft(identifier, unit_type, node, prefix, prefix, first=siblings[first], ctx=ctx, outer=owner)
        body = node.child_by_field_name("body")
        stop = body.start_byte if body is not None else node.end_byte
        header = base.one_line(self.source[node.start_byte : stop].decode("utf-8", "replace"))
        draft.signature = header[:-1].rstrip() if header.endswith(";") else header
        draft.docstring = _leading_docs(siblings, index, self.source)
        # The attributes: every named node from the first to the item.
        draft.metadata = self._metadata(node, [s for s in siblings[first:index] if s.is_named])
        self.drafts.append(draft)
        self.by_id.setdefault(identifier, draft)
        return draft

    def _metadata(self, node: Node, attribute_items: list[Node]) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        visibility = modifiers = None  # the first of each among the item's children
        for child in node.children:
            kind = child.type
            if kind == "visibility_modifier" and visibility is None:
                visibility = child
            elif kind == "function_modifiers" and modifiers is None:
                modifiers = child
        meta["visibility"] = base.text(visibility, self.source) if visibility is not None else "private"
        meta["attributes"] = [base.one_line(base.text(item, self.source)) for item in attribute_items]
        if modifiers is not None:
            meta["modifiers"] = base.text(modifiers, self.source).split()
        return meta

    def _mod(self, node: Node, owner: _Draft, ctx: _Ctx) -> _Draft:
        name = base.text(node.child_by_field_name("name"), self.source)
        draft = self._new(node, name, "module", owner, ctx, ctx.module)
        body = node.child_by_field_name("body")
        if body is not None:
            draft.docstring = draft.docstring or self._inner_docs(body)
        self.declared.setdefault(name, draft.identifier)
        return draft

    def _item(self, node: Node, owner: _Draft, ctx: _Ctx) -> _Draft:
        name = base.text(node.child_by_field_name("name"), self.source)
        prefix = owner.identifier if owner.type in ("function", "method") else ctx.module
        draft = self._new(node, name, _ITEM_TYPES[node.type], owner, ctx, prefix)
        self.declared.setdefault(name, draft.identifier)
        return draft

    def _function(self, node: Node, owner: _Draft, ctx: _Ctx) -> _Draft:
        name = base.text(node.child_by_field_name("name"), self.source)
        if owner.type in ("function", "method"):
            prefix, unit_type = owner.identifier, "function"
        elif ctx.self_type is not None and owner.type in ("module", "trait"):
            prefix, unit_type = ctx.self_type, "method"
        else:
            prefix, unit_type = ctx.module, "function"
        draft = self._new(node, name, unit_type, owner, ctx, prefix)  # contexts are never changed
        if node.type == "function_signature_item":
            draft.metadata["abstract"] = True
        if ctx.trait is not None and unit_type == "method":
            draft.metadata["trait"] = ctx.trait
        if unit_type == "function" and owner.type == "module":
            self.declared.setdefault(name, draft.identifier)
        return draft

    def _impl(self, node: Node, owner: _Draft, ctx: _Ctx) -> _Ctx:
        type_segments = _path_segments(node.child_by_field_name("type"), self.source)
        self_type = self._resolve_now(type_segments, ctx) if type_segments else f"{ctx.module}::_"
        trait_segments = _path_segments(node.child_by_field_name("trait"), self.source)
        trait = None
        if trait_segments:
            trait = "::".join(trait_segments)
            self.impls.append((self_type, trait_segments, ctx, owner))
        return _Ctx(ctx.module, self_type, trait)

    # -- use trees -------------------------------------------------------------------------

    def _absolute(self, segments: tuple[str, ...], ctx: _Ctx) -> tuple[str, ...]:
        """`super::x` / `self::x` → `crate::…::x`; anything else unchanged."""
        head = segments[0] if segments else None
        if head != "self" and head != "super":
            return segments
        module = ctx.module.split("::")
        if head == "self":
            return (*module, *segments[1:])
        count = 0
        while count < len(segments) and segments[count] == "super":
            count += 1
        kept = module[: max(1, len(module) - count)]
        return (*kept, *segments[count:])

    def _use(self, node: Node, ctx: _Ctx, owner: _Draft, record: bool) -> None:
        for path, alias in self._use_leaves(node):
            self._use_leaf(path, alias, ctx, owner, record)

    def _use_leaves(self, node: Node) -> list[tuple[tuple[str, ...], str | None]]:
        """The (path, alias) leaves of a `use` tree in source order, read from the tree once: a
        file-level `use` is read before the walk (for bindings) and again by it (to record)."""
        cached = self.use_leaves.get(node.start_byte)
        if cached is not None:
            return cached
        leaves: list[tuple[tuple[str, ...], str | None]] = []
        self.use_leaves[node.start_byte] = leaves
        argument = node.child_by_field_name("argument")
        work: list[tuple[tuple[str, ...], Node]] = [((), argument)] if argument is not None else []
        while work:
            prefix, item = work.pop()
            kind = item.type
            if kind == "use_as_clause":
                path = _path_segments(item.child_by_field_name("path"), self.source) or ()
                alias = base.text(item.child_by_field_name("alias"), self.source)
                leaves.append(((*prefix, *path), alias))
            elif kind == "scoped_use_list":
                path = _path_segments(item.child_by_field_name("path"), self.source) or ()
                listing = item.child_by_field_name("list")
                if listing is not None:
                    work.extend(((*prefix, *path), c) for c in reversed(listing.named_children))
            elif kind == "use_list":
                work.extend((prefix, c) for c in reversed(item.named_children))
            elif kind == "use_wildcard":
                inner = next((c for c in item.named_children), None)
                path = _path_segments(inner, self.source) or ()
                leaves.append(((*prefix, *path), None))
            else:
                segments = _path_segments(item, self.source)
                if segments:
                    full = (*prefix, *segments)
                    if full[-1] == "self":
                        full = full[:-1]
                    leaves.append((full, full[-1] if full else None))
        return leaves

    def _use_leaf(self, path: tuple[str, ...], alias: str | None, ctx: _Ctx, owner: _Draft, record: bool) -> None:
        if not path:
            return
        absolute = self._absolute(path, ctx)
        if absolute[0] in self.child_mods.get(ctx.module, ()):
            absolute = (*ctx.module.split("::"), *absolute)  # `use child::X` of a declared `mod child`
        written = "::".join(absolute)
        if alias and alias != "_" and alias not in self.bindings:
            self.bindings[alias] = written
        if not record:
            return
        candidates = [written]
        if absolute[0] not in _CRATE_OR_STD:
            candidates = [f"{ctx.module}::{written}", f"crate::{written}", written]
        owner.deps.append(Dependency(candidates[0] if absolute[0] == "crate" else written, "import",
                                     lookup=tuple(dict.fromkeys(candidates))))

    # -- references ------------------------------------------------------------------------

    def _call(self, node: Node, owner: _Draft, ctx: _Ctx) -> None:
        function = node.child_by_field_name("function")
        if function is None:
            return
        kind = function.type
        if kind == "identifier":  # `f()`: `_path_segments` of a plain name
            name = base.text(function, self.source)
            if name not in _PRELUDE:
                owner.refs.append(("calls", (name,), ctx))
            return
        if kind == "field_expression":  # `self.m()` only: its text starts with its receiver's
            if ctx.self_type is None or not self.source.startswith(b"self", function.start_byte):
                return
            receiver = function.child_by_field_name("value")
            if receiver is not None and receiver.type == "self":
                name = base.text(function.child_by_field_name("field"), self.source)
                owner.refs.append(("calls", ("Self", name), ctx))
            return
        segments = _path_segments(function, self.source)
        if segments and segments[0] not in _PRELUDE:
            owner.refs.append(("calls", segments, ctx))

    def _type_ref(self, node: Node, owner: _Draft, ctx: _Ctx) -> None:
        """A type name (never one a declaration gives: `_replay` leaves those out)."""
        segments = _path_segments(node, self.source)
        if segments and (segments[0] in self.bindings or segments[0] in self.declared):
            owner.refs.append(("code_reference", segments, ctx))

    def _candidates(self, segments: tuple[str, ...], ctx: _Ctx, scope: _Draft | None) -> list[str]:
        head, rest = segments[0], segments[1:]
        if head == "Self":
            return ["::".join((ctx.self_type, *rest))] if ctx.self_type else []
        if head in ("crate", "self", "super"):
            return ["::".join(self._absolute(segments, ctx))]
        if head in _STD_CRATES:
            return ["::".join(segments)]
        out: list[str] = []
        while scope is not None and scope.type in ("function", "method"):
            nested = "::".join((scope.identifier, *segments))
            if nested in self.by_id:  # an item declared inside the function
                out.append(nested)
            scope = scope.outer
        if head in self.bindings:
            out.append("::".join((self.bindings[head], *rest)))
        out.append("::".join((ctx.module, *segments)))
        if head in self.declared:
            out.append("::".join((self.declared[head], *rest)))
        if len(segments) > 1:
            out.append("::".join(("crate", *segments)))
        return list(dict.fromkeys(out))

    def _resolve_now(self, segments: tuple[str, ...], ctx: _Ctx) -> str:
        """A type path for naming methods: the `use`d path, a path from `crate`, or module::Name."""
        head, rest = segments[0], segments[1:]
        if head in ("crate", "self", "super"):
            return "::".join(self._absolute(segments, ctx))
        if head in self.bindings:
            return "::".join((self.bindings[head], *rest))
        return "::".join((ctx.module, *segments))

    def _preferred(self, segments: tuple[str, ...], candidates: list[str], ctx: _Ctx) -> str:
        """The target to record: a candidate declared in this file, else the `use`d path, else
        the current module's spelling (the linker still tries every candidate)."""
        head = segments[0]
        for candidate in candidates:
            if candidate in self.by_id:
                return candidate
        if head in self.bindings and head not in ("Self", "crate", "self", "super"):
            return "::".join((self.bindings[head], *segments[1:]))
        if head in _STD_CRATES or head in ("Self", "crate", "self", "super"):
            return candidates[-1]
        local = "::".join((ctx.module, *segments))
        return local if local in candidates else candidates[0]

    def _attach_impls(self) -> None:
        for self_type, trait_segments, ctx, owner in self.impls:
            candidates = self._candidates(trait_segments, ctx, None)
            if not candidates:
                continue
            dep = Dependency(self._preferred(trait_segments, candidates, ctx), "implements",
                             lookup=tuple(candidates))
            holder = self.by_id.get(self_type)
            (holder if holder is not None and holder.type != "module" else owner).deps.append(dep)

    def _continued(self, identifier: str) -> bool:
        """Whether some unit's identifier continues `identifier` (`crate::f::Item` continues
        `crate::f`): the first identifier sorted at or after `identifier::` starts with it.

        Names hold no colon, so in identifiers every run of colons is a `::` separator or several;
        only a module path made from a file path with a colon (`src/a:/b.rs`) can put an odd run
        such as `:::` there, and then the separators found one by one decide, as they always did.
        """
        if self.enclosing is not None:
            return identifier in self.enclosing
        prefix = identifier + "::"
        ids = self.sorted_ids
        index = bisect.bisect_left(ids, prefix)
        return index < len(ids) and ids[index].startswith(prefix)

    def _freeze(self, draft: _Draft) -> Unit:
        deps = draft.deps  # the draft is done with: its own list takes the references too
        # What a reference resolves to depends on its context's module and `Self`, and on the unit
        # only when a function around it (the unit included) declares items: resolve each once.
        unit_key = None
        scope: _Draft | None = draft if draft.refs else None
        while scope is not None and scope.type in ("function", "method"):
            if self._continued(scope.identifier):
                unit_key = id(draft)
                break
            scope = scope.outer
        resolved = self.resolved
        for via, segments, ctx in draft.refs:
            key = (via, segments, ctx.module, ctx.self_type, unit_key)
            found = resolved.get(key, _UNRESOLVED)
            if found is _UNRESOLVED:
                # Without a function around that declares items there is no nested candidate
                # (`_continued`; its colon case keeps the walk).
                nested = unit_key is not None or self.enclosing is not None
                candidates = self._candidates(segments, ctx, draft if nested else None)
                found = resolved[key] = (
                    Dependency(self._preferred(segments, candidates, ctx), via, lookup=tuple(candidates))
                    if candidates
                    else None
                )
            if found is not None:
                deps.append(found)
        dependencies = base.dedupe_dependencies([d for d in deps if d.target != draft.identifier]) if deps else ()
        return base.built(draft, self.file_path, LANGUAGE, self.source, dependencies)


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Rust file: the file's module first, then items in source order."""
    return _Extractor(file_path, source, layout).run()
