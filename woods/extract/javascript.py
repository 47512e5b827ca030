"""JavaScript / TypeScript / TSX extraction: modules, classes, interfaces, type aliases, enums, functions.

The grammar follows the extension: `.ts/.mts/.cts` → typescript, `.tsx` → tsx, anything else →
javascript (JSX parses with the javascript grammar). Units from `.ts*` files carry language
"typescript", the rest "javascript".

Identifiers: the module is the file path without its extension (`src/billing/invoice`; a `.d.ts`
declaration file drops `.d.ts`). Declarations are `<module>:<Name>`, members and nested functions
append `.name` (`src/billing/invoice:Invoice.charge`, `src/app:main.helper`); TS `namespace N {}`
adds `N.` without being a unit. Anonymous default exports are named `default`. A repeated
(identifier, type) in one file (a getter and its setter) gets `#2`, `#3` … in source order.

Dependencies: imports and re-exports resolve relative specifiers to module identifiers, with
`/index` variants as lookup candidates; bare package specifiers stay as written. Calls, `new`,
TS type references and JSX elements become edges only when the name is imported or declared in
the same file (anything else would be a local variable the linker cannot resolve).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tree_sitter import Node, Query, QueryCursor

from woods.extract import base
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction, Unit

# Extensions stripped from a file path (and from import specifiers) to get a module identifier.
# `.d.ts` variants come first so `types.d.ts` becomes `types`, not `types.d`.
_MODULE_EXTENSIONS = (
    ".d.ts", ".d.mts", ".d.cts", ".tsx", ".ts", ".mts", ".cts", ".jsx", ".js", ".mjs", ".cjs",
)
_TS_GRAMMARS = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}

# Node types that declare a unit (the grammars name anonymous functions and classes differently).
_CLASS_NODES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
_FUNCTION_NODES = frozenset(
    {"function_declaration", "generator_function_declaration", "function_expression", "function", "generator_function"}
)
_DECLARED_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_TYPE_NODES = {"interface_declaration": "interface", "type_alias_declaration": "type_alias", "enum_declaration": "enum"}
_FIELD_NODES = frozenset({"public_field_definition", "field_definition"})


def module_identifier(file_path: str) -> str:
    """`src/billing/invoice.ts` → `src/billing/invoice`."""
    lowered = file_path.lower()
    for ext in _MODULE_EXTENSIONS:
        if lowered.endswith(ext) and len(file_path) > len(ext):
            return file_path[: -len(ext)]
    return file_path


def grammar_for(file_path: str) -> str:
    ext = posixpath.splitext(file_path)[1].lower()
    return _TS_GRAMMARS.get(ext, "javascript")


def resolve_specifier(file_path: str, specifier: str) -> tuple[str, ...]:
    """Module identifiers a relative import may mean, most likely first; () for a bare package."""
    if not specifier.startswith("."):
        return ()
    return _resolve_relative(posixpath.dirname(file_path), specifier)


@functools.lru_cache(maxsize=4096)
def _resolve_relative(directory: str, specifier: str) -> tuple[str, ...]:
    # Cached: the files of a directory import the same few modules, each name several times.
    joined = posixpath.normpath(posixpath.join(directory, specifier))
    stripped = module_identifier(joined)
    candidates = [stripped, f"{stripped}/index"]
    if stripped != joined:
        candidates.append(joined)
    return tuple(dict.fromkeys(c for c in candidates if c and not c.startswith("..")))


@dataclass(slots=True)
class _Binding:
    """A name an import statement introduces: where from, and which export it names."""

    modules: tuple[str, ...]  # candidate module identifiers; empty for a bare package
    package: str  # the specifier as written
    imported: str | None  # exported name; None for a namespace import (`* as ns`, require)
    default: bool = False


@dataclass(slots=True)
class _Ref:
    """A name used in a unit (`a.b.c`), resolved once the file's imports and declarations are known."""

    via: str
    chain: tuple[str, ...]
    kind: str = "name"  # name | this


@dataclass(slots=True)
class _Draft(base.Draft):
    """A JS/TS unit under construction: its name inside the module, its enclosing unit (`outer`),
    and the references resolved once the file's imports and declarations are known."""

    qual: str = ""  # the part after `<module>:`; "" for the module unit
    outer: _Draft | None = None
    # In source order; (CALL | TYPE | NESTED_TYPE, node, start byte) is a reference looked at only
    # when it can resolve (`_Extractor._freeze`).
    refs: list[_Ref | tuple[int, Node, int]] = field(default_factory=list)


class _Fields(NamedTuple):
    """A grammar's ids of the fields the extractor reads: `child_by_field_id` skips the search of
    the field's name among all of them that `child_by_field_name` makes on every call (the ids
    differ between the javascript, typescript and tsx grammars)."""

    alias: int
    arguments: int
    body: int
    constructor: int
    function: int
    name: int
    object: int
    property: int
    source: int
    value: int


@functools.cache
def _fields(grammar: str) -> _Fields:
    lang = base.language(grammar)
    ids = [lang.field_id_for_name(name) for name in _Fields._fields]
    assert all(i is not None for i in ids), f"every field is one of the {grammar} grammar's"
    return _Fields(*(i for i in ids if i is not None))


def _name_chain(node: Node | None, source: bytes, f: _Fields) -> tuple[str, ...] | None:
    """`a.b.c` (member expression or nested type name) → ('a', 'b', 'c'); `this.x` → ('this', 'x')."""
    parts: list[str] = []
    current = node
    while current is not None and current.type in ("member_expression", "nested_type_identifier", "nested_identifier"):
        if current.type == "member_expression":
            parts.append(base.text(current.child_by_field_id(f.property), source))
            current = current.child_by_field_id(f.object)
        else:
            named = current.named_children
            if not named:
                return None
            parts.append(base.text(named[-1], source))
            current = named[0] if len(named) > 1 else None
    if current is None:
        return None
    if current.type in ("identifier", "type_identifier", "this"):
        parts.append(base.text(current, source))
    elif current.type in ("generic_type",):
        return _name_chain(current.child_by_field_id(f.name), source, f)
    else:
        return None
    return tuple(reversed(parts))


# A plain ASCII identifier that ends there: not followed by a `\\u` escape or a non-ASCII byte,
# either of which may continue it (possessive, so it never matches a shorter name instead).
_PLAIN_NAME = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*+(?![\\\x80-\xff])")
# `a.b.c` with nothing between the names: a chain of member expressions over an identifier.
_PLAIN_CHAIN = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")
# The same chain followed by its call's `(`.
_PLAIN_CALLEE = re.compile(rb"([A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*)[ \t\r\n]*\(")
# Both at once: group 1 is what `_PLAIN_CALLEE` matches, group 2 what `_PLAIN_NAME` does (each
# name of a chain takes all the name bytes there are, so neither regex can stop short of them).
_NAMED_CALLEE = re.compile(
    rb"(([A-Za-z_$][A-Za-z0-9_$]*+)(?![\\\x80-\xff])(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*)[ \t\r\n]*\("
)
# Words the grammars parse as something other than an identifier (`super`, `new.target`, …):
# a chain starting with one is left to `_name_chain`.
_NOT_IDENTIFIERS = frozenset(
    {"super", "undefined", "true", "false", "null", "new", "import", "yield", "await", "typeof", "void",
     "delete", "in", "instanceof", "of", "let", "async", "class", "function"}
)


def _string_value(node: Node | None, source: bytes) -> str | None:
    if node is None or node.type not in ("string", "template_string"):
        return None
    raw = base.text(node, source)
    return raw[1:-1] if len(raw) >= 2 else None


class _Scope:
    """The nodes under `node` belong to `owner` (None: nothing under it is looked at), with `prefix`
    as the qualified-name prefix of what they declare."""

    __slots__ = ("end", "node", "owner", "prefix")

    def __init__(self, node: Node, owner: _Draft | None, prefix: str) -> None:
        self.node = node
        self.owner = owner
        self.prefix = prefix
        self.end = node.end_byte

    def holds(self, node: Node, start: int) -> bool:
        """Whether `node`, which comes after this scope's node in pre-order, lies under it."""
        if start < self.end:
            return True
        if start > self.end or node.end_byte != start:
            return False
        # A zero-width (missing) node at the very end: under it only if it descends from it.
        ancestor = node.parent
        while ancestor is not None and ancestor != self.node:
            ancestor = ancestor.parent
        return ancestor is not None


# What `_Extractor._visit` looks at, by category; every other node only holds these. Kinds a
# grammar lacks (no TS types in javascript, no JSX in typescript) are left out of its query.
DECLARATION, NAMESPACE, IMPORT, HERITAGE, EXPORT, CALL, NEW, TYPE, NESTED_TYPE, JSX = range(10)
VISITED: dict[int, tuple[str, ...]] = {
    DECLARATION: (
        *sorted(_CLASS_NODES | _FUNCTION_NODES | _FUNCTION_VALUES | _TYPE_NODES.keys()), "method_definition"
    ),
    NAMESPACE: ("internal_module", "module"),
    IMPORT: ("import_statement",),
    HERITAGE: ("class_heritage", "extends_type_clause"),
    EXPORT: ("export_statement",),
    CALL: ("call_expression",),
    NEW: ("new_expression",),
    TYPE: ("type_identifier",),
    NESTED_TYPE: ("nested_type_identifier",),
    JSX: ("jsx_opening_element", "jsx_self_closing_element"),
}
# Function values and class expressions declare a unit only as the value of a declarator, a class
# field or an export (`_Extractor._declaration`); the query asks for them only there, so the many
# callbacks are never matched. `{values}` stands for the alternation of such kinds, `{field}` for
# each kind of class field.
_IN_CONTEXT = (
    "(variable_declarator value: [{values}] @node)",
    "({field} value: [{values}] @node)",
    "(export_statement value: [{values}] @node)",
    "(variable_declarator (class) @node)",
    "(export_statement (class) @node)",
)
_queries: dict[str, tuple[Query, tuple[int, ...]]] = {}


def _visited_query(grammar: str) -> tuple[Query, tuple[int, ...]]:
    """A query with patterns for each category of visited kinds, and the category of each pattern
    (built once per grammar). Matches of these patterns come in pre-order of their `@node`."""
    found = _queries.get(grammar)
    if found is None:
        lang = base.language(grammar)

        def present(kinds: Iterable[str]) -> list[str]:
            return [k for k in kinds if lang.id_for_node_kind(k, True) is not None]

        values = " ".join(f"({k})" for k in present(sorted(_FUNCTION_VALUES | _FUNCTION_NODES - _DECLARED_FUNCTIONS)))
        patterns: list[str] = []
        categories: list[int] = []
        for category, kinds in VISITED.items():
            if category == DECLARATION:
                kinds = tuple(k for k in kinds if k not in _FUNCTION_VALUES and k not in _FUNCTION_NODES and k != "class")
                kinds += tuple(_DECLARED_FUNCTIONS)
                for pattern in _IN_CONTEXT:
                    for field_kind in present(sorted(_FIELD_NODES)) if "{field}" in pattern else [""]:
                        patterns.append(pattern.format(values=values, field=field_kind))
                        categories.append(DECLARATION)
            kinds_present = present(kinds)
            if kinds_present:
                patterns.append("[" + " ".join(f"({k})" for k in kinds_present) + "] @node")
                categories.append(category)
        found = Query(lang, "\n".join(patterns)), tuple(categories)
        _queries[grammar] = found
    return found


_UNRESOLVED = Dependency("", "")  # not yet in `_Extractor.shared_deps`


class _Extractor(base.FileExtractor[_Draft]):
    """One iterative pass over one file's tree, then reference resolution."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.module = module_identifier(file_path)
        self.directory = posixpath.dirname(file_path)
        self.grammar = grammar_for(file_path)
        self.f = _fields(self.grammar)
        self.has_at = b"@" in source  # whether the file may hold a decorator
        self.language = "javascript" if self.grammar == "javascript" else "typescript"
        self.bindings: dict[str, _Binding] = {}
        self.declared: set[str] = set()
        self.local_exports: set[str] = set()
        self.identifiers: set[str] = set()
        self.resolvable: set[str] = set()  # first names a reference can resolve from
        self.resolvable_bytes: set[bytes] = set()  # the same, UTF-8 encoded
        # (via, chain) → what `_resolve` makes of a reference that names neither `this` nor a
        # declared name, or that is made outside every function and method: it depends on the
        # file's imports and declarations alone, not on the unit holding it (`_resolve` looks
        # at the enclosing units only for `this` and for names declared in a function).
        self.shared_deps: dict[tuple[str, tuple[str, ...]], Dependency | None] = {}

    def run(self) -> FileExtraction:
        tree = base.parse(self.grammar, self.source)
        root = tree.root_node
        module = _Draft(self.module, "module", root, namespace=posixpath.dirname(self.module) or None, whole_file=True)
        first_comment = root.named_child(0) if root.named_child_count else None
        if first_comment is not None and first_comment.type == "comment":
            module.docstring = base.clean_comment(base.text(first_comment, self.source))
        self.drafts.append(module)
        self._walk(root, module)
        self.identifiers = {d.identifier for d in self.drafts}
        self.resolvable = {"this", *self.bindings, *self.declared}
        self.resolvable_bytes = {name.encode("utf-8", "surrogatepass") for name in self.resolvable}
        units = tuple(self._freeze(d) for d in self.drafts)
        return FileExtraction(self.file_path, self.language, units, base.syntax_warnings(tree, self.file_path))

    def _walk(self, root: Node, module: _Draft) -> None:
        """`_visit` every named node of a kind in `VISITED`, in pre-order, as a walk over every node
        would; a `_Scope` returned for a node applies to the nodes under it (owner None: they are
        not visited).

        Why a query: tree-sitter finds the nodes worth a look in C, so Python never touches the
        identifiers, strings and punctuation that make up most of a tree. Matches come in
        pre-order of their `@node` (tests/test_extract_javascript_walk.py compares this walk with
        a plain one); a stack of scopes replaces the recursion (a node is under a scope while it
        starts before the scope's node ends). Ordinary calls and type names, most of the
        matches, are handled here as `_visit` would, without a call.
        """
        query, categories = _visited_query(self.grammar)
        source = self.source
        scopes = [_Scope(root, module, "")]
        scope = scopes[0]
        everything = len(source) + 1
        end = everything  # the root scope holds everything
        refs = module.refs
        for pattern, captures in QueryCursor(query).matches(root):
            node = captures["node"][0]
            start = node.start_byte
            if start >= end:
                while len(scopes) > 1 and not scopes[-1].holds(node, start):
                    scopes.pop()
                scope = scopes[-1]
                end = scope.end if len(scopes) > 1 else everything
                if scope.owner is not None:
                    refs = scope.owner.refs
            owner = scope.owner
            if owner is None:
                continue
            category = categories[pattern]
            if category == TYPE or (category == CALL and not source.startswith((b"require", b"import"), start)):
                refs.append((category, node, start))
                continue
            inner = self._visit(category, node, owner, scope.prefix)
            if inner is not None:
                scopes.append(inner)
                scope = inner
                end = inner.end
                if inner.owner is not None:
                    refs = inner.owner.refs

    def _visit(self, category: int, node: Node, owner: _Draft, prefix: str) -> _Scope | None:
        """Record what `node` declares or references; the scope of the nodes under it (None: the
        same as `node`'s)."""
        if category == CALL:
            start = node.start_byte
            if self.source.startswith((b"require", b"import"), start):
                self._call(node, owner)
            else:  # an ordinary call: its callee is looked at only if it can resolve (_freeze)
                owner.refs.append((CALL, node, start))
        elif category == TYPE:
            owner.refs.append((TYPE, node, node.start_byte))
        elif category == DECLARATION:
            draft = self._declaration(node, owner, prefix)
            if draft is not None:
                return _Scope(node, draft, draft.qual)
        elif category == EXPORT:
            self._export(node, owner)
        elif category == NEW:
            chain = _name_chain(node.child_by_field_id(self.f.constructor), self.source, self.f)
            if chain:
                owner.refs.append(_Ref("calls", chain))
        elif category == NESTED_TYPE:
            owner.refs.append((NESTED_TYPE, node, node.start_byte))
            return _Scope(node, None, prefix)
        elif category == JSX:
            chain = _name_chain(node.child_by_field_id(self.f.name), self.source, self.f)
            if chain and chain[0][:1].isupper():
                owner.refs.append(_Ref("code_reference", chain))
        elif category == IMPORT:
            self._import(node, owner)
            return _Scope(node, None, prefix)
        elif category == HERITAGE:
            return _Scope(node, None, prefix)  # recorded as superclass / implements by _heritage
        elif category == NAMESPACE:
            name_node = node.child_by_field_id(self.f.name)
            if name_node is not None:
                name = base.text(name_node, self.source)
                return _Scope(node, owner, f"{prefix}.{name}" if prefix else name)
        return None

    # -- declarations ----------------------------------------------------------------------

    def _declaration(self, node: Node, owner: _Draft, prefix: str) -> _Draft | None:
        kind = node.type
        value_of: Node | None = None  # the declarator / field a function value belongs to
        if kind in _CLASS_NODES:
            unit_type = "class"
            if kind == "class":
                parent = node.parent
                if parent is None or parent.type not in ("variable_declarator", "export_statement"):
                    return None
                if parent.type == "variable_declarator":
                    value_of = parent
        elif kind in _TYPE_NODES:
            unit_type = _TYPE_NODES[kind]
        elif kind in ("function_declaration", "generator_function_declaration"):
            unit_type = "method" if owner.type == "class" else "function"
        elif kind == "method_definition":
            if owner.type != "class":
                return None
            parent = node.parent
            if parent is None or parent.type != "class_body":
                return None
            unit_type = "method"
        elif kind in _FUNCTION_VALUES or kind in _FUNCTION_NODES:
            parent = node.parent
            if parent is None:
                return None
            parent_kind = parent.type
            if parent_kind == "variable_declarator" and parent.child_by_field_id(self.f.value) == node:
                value_of = parent
                unit_type = "function"
            elif parent_kind in _FIELD_NODES and owner.type == "class":
                value_of = parent
                unit_type = "method"
            elif parent_kind == "export_statement" and parent.child_by_field_id(self.f.value) == node:
                unit_type = "function"
            else:
                return None
        else:
            return None
        name_node = node.child_by_field_id(self.f.name)
        name = self._name(node, value_of, name_node)
        if name is None:
            return None
        qual = f"{prefix}.{name}" if prefix else name
        identifier = self.unique(f"{self.module}:{qual}", unit_type)
        if "#" in identifier:
            qual = identifier.split(":", 1)[1]
        first, last = self._span(node, value_of)
        draft = _Draft(identifier, unit_type, last, owner.identifier, owner.identifier, first=first, qual=qual, outer=owner)
        self.declared.add(name)
        children = node.children
        kinds = [c.type for c in children]
        first_kind = first.type
        draft.signature = self._signature(first, first_kind, node, kind)
        draft.docstring = self._leading_comment(first)
        draft.metadata = self._metadata(node, kind, children, kinds, name_node, first, first_kind, value_of)
        if "class_heritage" in kinds or "extends_type_clause" in kinds:
            self._heritage(children, kinds, draft)
        self.drafts.append(draft)
        return draft

    def _leading_comment(self, first: Node) -> str | None:
        """The cleaned `base.leading_comment` of `first`, which only takes a comment ending on the
        line above `first` or on its line: a `//` or `/* */` comment ending there puts a `/` there,
        so without one the tree need not be asked."""
        source = self.source
        start = first.start_byte
        row = source.rfind(b"\n", 0, start) + 1  # where the line of `first` starts
        above = source.rfind(b"\n", 0, row - 1) + 1 if row else 0
        if source.find(b"/", above, start) < 0:
            return None
        return base.clean_comment(base.leading_comment(first, source))

    def _name(self, node: Node, value_of: Node | None, name_node: Node | None) -> str | None:
        if value_of is not None:
            name_node = value_of.child_by_field_id(self.f.name) or value_of.child_by_field_id(self.f.property)
            if name_node is None or name_node.type not in (
                "identifier", "property_identifier", "private_property_identifier", "type_identifier"
            ):
                return None
            return base.text(name_node, self.source)
        if name_node is not None:
            return base.text(name_node, self.source)
        parent = node.parent
        if parent is not None and parent.type == "export_statement":
            return "default"
        return None

    def _span(self, node: Node, value_of: Node | None) -> tuple[Node, Node]:
        """First and last node of the whole declaration: export, `const`, decorators included."""
        outer = node
        if value_of is not None:
            outer = value_of
            holder = value_of.parent
            if (
                value_of.type == "variable_declarator"
                and holder is not None
                and holder.type in ("lexical_declaration", "variable_declaration")
                and (
                    holder.named_child_count == 1  # `value_of` alone
                    or sum(1 for c in holder.named_children if c.type == "variable_declarator") == 1
                )
            ):
                outer = holder
        parent = outer.parent
        if parent is not None and parent.type == "export_statement":
            outer = parent
        first = outer
        # (a decorator's text holds an `@`: without one in the file, no sibling need be asked)
        previous = first.prev_named_sibling if self.has_at else None
        while previous is not None and previous.type == "decorator":
            first = previous
            previous = first.prev_named_sibling
        return first, outer

    def _signature(self, first: Node, first_kind: str, node: Node, kind: str) -> str:
        start = first
        start_kind = first_kind
        while start_kind == "decorator" and start.next_named_sibling is not None:
            start = start.next_named_sibling
            start_kind = start.type
        start_byte = start.start_byte
        for child in start.children if start_kind == "export_statement" else ():
            if child.type != "decorator":
                start_byte = child.start_byte
                break
        body = node.child_by_field_id(self.f.body) if kind != "type_alias_declaration" else None
        stop = body.start_byte if body is not None else node.end_byte
        header = base.one_line(self.source[start_byte:stop].decode("utf-8", "replace"))
        return header.rstrip("{").rstrip()

    def _metadata(
        self,
        node: Node,
        kind: str,
        children: list[Node],
        kinds: list[str],
        name_node: Node | None,
        first: Node,
        first_kind: str,
        value_of: Node | None,
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        wrapper = first
        wrapper_kind = first_kind
        while wrapper_kind == "decorator" and wrapper.next_named_sibling is not None:
            wrapper = wrapper.next_named_sibling
            wrapper_kind = wrapper.type
        exported = wrapper_kind == "export_statement"
        wrapper_children = wrapper.children if exported else []
        meta["exported"] = exported
        meta["default_export"] = exported and any(c.type == "default" for c in wrapper_children)
        # The kinds of all children, named or not: the keywords looked for here (`async`, `static`,
        # `abstract`, `*`, `get`, `set`) are anonymous tokens, and no named kind of these grammars
        # is spelled like one.
        tokens = set(kinds)
        value_children = value_of.children if value_of is not None else []
        value_kinds = [c.type for c in value_children]
        if value_of is not None:
            tokens.update(value_kinds)
            meta["arrow"] = kind == "arrow_function"
        if kind not in _CLASS_NODES and kind not in _TYPE_NODES:
            meta["async"] = "async" in tokens
        if "static" in tokens:
            meta["static"] = True
        if "abstract" in tokens or kind == "abstract_class_declaration":
            meta["abstract"] = True
        if "*" in tokens or "generator" in kind:
            meta["generator"] = True
        for getter in ("get", "set"):
            if getter in tokens:
                meta["kind"] = "getter" if getter == "get" else "setter"
        if kind == "method_definition" and name_node is not None and base.text(name_node, self.source) == "constructor":
            meta["kind"] = "constructor"
        if "accessibility_modifier" in tokens:
            for holder_children, holder_kinds in ((children, kinds), (value_children, value_kinds)):
                for child, child_kind in zip(holder_children, holder_kinds, strict=True):
                    if child_kind == "accessibility_modifier":
                        meta["accessibility"] = base.text(child, self.source)
        # Decorators from `first` up to the declaration: siblings, not all of the parent's children.
        decorators: list[Node] = []
        if first_kind == "decorator":
            sibling: Node | None = first
            while sibling is not None and sibling.start_byte < node.start_byte:
                if sibling.type == "decorator":
                    decorators.append(sibling)
                sibling = sibling.next_sibling
        if "decorator" in tokens:
            decorators += [c for c, k in zip(children, kinds, strict=True) if k == "decorator"]
        decorators += [c for c in wrapper_children if c.type == "decorator"]
        if decorators:
            meta["decorators"] = sorted(
                {base.one_line(base.text(d, self.source)).lstrip("@") for d in decorators}
            )
        return meta

    def _heritage(self, children: list[Node], kinds: list[str], draft: _Draft) -> None:
        for child, kind in zip(children, kinds, strict=True):
            if kind == "class_heritage":
                clauses = [c for c in child.named_children if c.type in ("extends_clause", "implements_clause")]
                if not clauses:  # javascript grammar: `extends <expression>` directly
                    for expr in child.named_children:
                        self._heritage_ref(expr, "superclass", draft)
                for clause in clauses:
                    via = "superclass" if clause.type == "extends_clause" else "implements"
                    for expr in clause.named_children:
                        if expr.type != "type_arguments":
                            self._heritage_ref(expr, via, draft)
            elif kind == "extends_type_clause":
                for expr in child.named_children:
                    self._heritage_ref(expr, "superclass", draft)

    def _heritage_ref(self, expr: Node, via: str, draft: _Draft) -> None:
        chain = _name_chain(expr, self.source, self.f)
        if chain:
            draft.refs.append(_Ref(via, chain))
            draft.metadata.setdefault("extends" if via == "superclass" else "implements", []).append(".".join(chain))

    # -- imports, exports and references ---------------------------------------------------

    def _module_dep(
        self,
        specifier: str,
        owner: _Draft,
        name: str | None = None,
        default_local: str | None = None,
        modules: tuple[str, ...] | None = None,
    ) -> None:
        if modules is None:
            modules = self._specifier_modules(specifier)
        if not modules:
            owner.deps.append(Dependency(specifier, "import"))
            return
        if name is None:
            owner.deps.append(Dependency(modules[0], "import", lookup=modules))
            return
        names = [default_local, "default"] if default_local else [name]
        lookup = [f"{m}:{n}" for m in modules for n in names if n] + list(modules)
        owner.deps.append(Dependency(lookup[0], "import", lookup=tuple(dict.fromkeys(lookup))))

    def _import(self, node: Node, owner: _Draft) -> None:
        source = self.source
        named = node.named_children
        kinds = [c.type for c in named]
        if "import_require_clause" in kinds:
            require = named[kinds.index("import_require_clause")]
            specifier = _string_value(require.child_by_field_id(self.f.source), source)
            local_node = next((c for c in require.named_children if c.type == "identifier"), None)
            if specifier is not None and local_node is not None:
                self._bind(base.text(local_node, source), specifier, None)
                self._module_dep(specifier, owner)
            return
        specifier = _string_value(node.child_by_field_id(self.f.source), source)
        if specifier is None:
            return
        modules = self._specifier_modules(specifier)
        if "import_clause" not in kinds:
            self._module_dep(specifier, owner, modules=modules)
            return
        for part in named[kinds.index("import_clause")].named_children:
            part_kind = part.type
            if part_kind == "identifier":
                local = base.text(part, source)
                self.bindings[local] = _Binding(modules, specifier, "default", True)
                self._module_dep(specifier, owner, "default", default_local=local, modules=modules)
            elif part_kind == "namespace_import":
                ident = next((c for c in part.named_children if c.type == "identifier"), None)
                if ident is not None:
                    self.bindings[base.text(ident, source)] = _Binding(modules, specifier, None)
                self._module_dep(specifier, owner, modules=modules)
            elif part_kind == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier":
                        continue
                    imported = base.text(spec.child_by_field_id(self.f.name), source)
                    alias = spec.child_by_field_id(self.f.alias)
                    local = base.text(alias, source) if alias is not None else imported
                    self.bindings[local] = _Binding(modules, specifier, imported)
                    self._module_dep(specifier, owner, imported, modules=modules)

    def _specifier_modules(self, specifier: str) -> tuple[str, ...]:
        """`resolve_specifier` for this file (its directory computed once)."""
        if not specifier.startswith("."):
            return ()
        return _resolve_relative(self.directory, specifier)

    def _bind(self, local: str, specifier: str, imported: str | None, default: bool = False) -> None:
        self.bindings[local] = _Binding(self._specifier_modules(specifier), specifier, imported, default)

    def _export(self, node: Node, owner: _Draft) -> None:
        specifier = _string_value(node.child_by_field_id(self.f.source), self.source)
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if specifier is None:
            if clause is not None:
                for spec in clause.named_children:
                    if spec.type == "export_specifier":
                        self.local_exports.add(base.text(spec.child_by_field_id(self.f.name), self.source))
            value = node.child_by_field_id(self.f.value)
            if value is not None and value.type == "identifier":
                self.local_exports.add(base.text(value, self.source))
            return
        if clause is None:
            self._module_dep(specifier, owner)
            return
        for spec in clause.named_children:
            if spec.type == "export_specifier":
                self._module_dep(specifier, owner, base.text(spec.child_by_field_id(self.f.name), self.source))

    def _call(self, node: Node, owner: _Draft) -> None:
        function = node.child_by_field_id(self.f.function)
        if function is None:
            return
        args = node.child_by_field_id(self.f.arguments)
        first_arg = args.named_children[0] if args is not None and args.named_child_count else None
        if function.type == "import" or (function.type == "identifier" and base.text(function, self.source) == "require"):
            specifier = _string_value(first_arg, self.source)
            if specifier is not None:
                self._module_dep(specifier, self._module_draft())
                self._bind_require(node, specifier)
            return
        chain = _name_chain(function, self.source, self.f)
        if chain:
            owner.refs.append(_Ref("calls", chain))

    def _bind_require(self, call: Node, specifier: str) -> None:
        declarator = call.parent
        if declarator is None or declarator.type != "variable_declarator":
            return
        pattern = declarator.child_by_field_id(self.f.name)
        if pattern is None:
            return
        if pattern.type == "identifier":
            self._bind(base.text(pattern, self.source), specifier, None)
        elif pattern.type == "object_pattern":
            for item in pattern.named_children:
                if item.type == "shorthand_property_identifier_pattern":
                    name = base.text(item, self.source)
                    self._bind(name, specifier, name)

    def _type_ref(self, node: Node) -> _Ref | None:
        parent = node.parent
        if parent is not None and parent.child_by_field_id(self.f.name) == node and parent.type != "generic_type":
            return None  # the declared name itself, not a reference
        chain = _name_chain(node, self.source, self.f)
        return _Ref("code_reference", chain) if chain else None

    def _call_ref(self, node: Node, start: int, plain: bool) -> _Ref | None:
        """The reference an ordinary call makes (`plain`: an ASCII name starts it)."""
        function = node.child_by_field_id(self.f.function)
        if function is None:
            return None
        # Decided from the callee's source when nothing can make the tree say otherwise (a syntax
        # error, a comment, type arguments, a keyword such as `super`): the common `a.b.c(…)`,
        # and `a.b().c(…)` / `a[i](…)`, whose `(` or `[` no chain of names holds.
        if plain and not node.has_error and function.start_byte == start:
            end = function.end_byte
            dotted = _PLAIN_CHAIN.fullmatch(self.source, start, end)
            if dotted is not None:
                names = tuple(dotted.group().decode("ascii").split("."))
                if names[0] not in _NOT_IDENTIFIERS and function.type in ("identifier", "member_expression"):
                    return _Ref("calls", names)
            else:
                callee = self.source[start:end]
                if (b"(" in callee or b"[" in callee) and b"/" not in callee and b"<" not in callee:
                    return None
        chain = _name_chain(function, self.source, self.f)
        return _Ref("calls", chain) if chain else None

    def _module_draft(self) -> _Draft:
        return self.drafts[0]

    # -- resolution ------------------------------------------------------------------------

    def _resolve(self, ref: _Ref, draft: _Draft) -> Dependency | None:
        root, rest = ref.chain[0], ref.chain[1:]
        if root == "this":
            cls: _Draft | None = draft
            while cls is not None and cls.type != "class":
                cls = cls.outer
            if cls is None or len(rest) != 1:
                return None
            target = f"{cls.identifier}.{rest[0]}"
            return Dependency(target, ref.via, lookup=(target,))
        dotted = ".".join(ref.chain)
        candidates: list[str] = []
        scope: _Draft | None = draft if root in self.declared else None
        while scope is not None and scope.type != "module":
            nested = f"{self.module}:{scope.qual}.{dotted}"
            if scope.type in ("function", "method") and nested in self.identifiers:
                candidates.append(nested)
            scope = scope.outer
        binding = self.bindings.get(root)
        if binding is not None:
            candidates.extend(self._imported_candidates(binding, root, rest))
            if not binding.modules and ref.via in ("calls", "code_reference"):
                return None  # a package's export: never a unit of this index
        elif root in self.declared:
            candidates.append(f"{self.module}:{dotted}")
        else:
            return None  # a global or local variable: nothing this index could hold
        if binding is not None:
            target = next((c for c in candidates if not c.startswith(f"{self.module}:")), candidates[-1])
        else:
            target = candidates[-1]
        return Dependency(target, ref.via, lookup=tuple(dict.fromkeys(candidates)))

    def _imported_candidates(self, binding: _Binding, local: str, rest: tuple[str, ...]) -> list[str]:
        tail = ".".join(rest)
        modules = binding.modules or (binding.package,)
        out: list[str] = []
        for module in modules:
            if binding.imported is None:
                out.append(f"{module}:{tail}" if tail else module)
            else:
                names = [local, "default"] if binding.default else [binding.imported]
                out.extend(f"{module}:{n}" + (f".{tail}" if tail else "") for n in names)
        return out

    def _freeze(self, draft: _Draft) -> Unit:
        if draft.type == "module":
            draft.metadata["exports"] = sorted(self.local_exports)
        elif draft.outer is not None and draft.outer.type == "module" and draft.qual in self.local_exports:
            draft.metadata["exported"] = True
        deps: list[Dependency | None] = list(draft.deps)
        seen: set[tuple[str, tuple[str, ...]]] = set()
        # The chains of `seen`'s calls and code references spelled as source bytes (`a.b`), so a
        # repeat read from the source is known without building its key.
        seen_calls: set[bytes] = set()
        seen_types: set[bytes] = set()
        source = self.source
        resolvable = self.resolvable
        names = self.resolvable_bytes
        declared = self.declared
        shared = self.shared_deps
        in_function = False  # whether a function or method holds the draft (or is it)
        scope: _Draft | None = draft
        while scope is not None and not in_function:
            in_function = scope.type in ("function", "method")
            scope = scope.outer
        for ref in draft.refs:
            if type(ref) is tuple:
                # A reference's chain starts with the name at its first byte; when that name is
                # neither `this`, imported nor declared in the file, `_resolve` would drop it, so
                # the node is never looked at (most calls and type names are such).
                category, node, at = ref
                maybe: _Ref | None
                found: _Ref
                if category == CALL:
                    callee = _NAMED_CALLEE.match(source, at)
                    if callee is not None:
                        # `a.b(` calls `a.b` (or, as in `a.b(x).c(`, nothing); either way a
                        # repeat of a chain already kept adds nothing. The first name alone
                        # decides most calls.
                        if callee.group(1) in seen_calls or callee.group(2) not in names:
                            continue
                        maybe = self._call_ref(node, at, True)
                    else:
                        plain = _PLAIN_NAME.match(source, at)
                        if plain is not None and plain.group() not in names:
                            continue
                        maybe = self._call_ref(node, at, plain is not None)
                    if maybe is None:
                        continue
                    found = maybe
                    key = ("calls", found.chain)
                elif category == NESTED_TYPE:
                    plain = _PLAIN_NAME.match(source, at)
                    if plain is not None and plain.group() not in names:
                        continue
                    dotted = _PLAIN_CHAIN.fullmatch(source, at, node.end_byte)
                    if dotted is not None and dotted.group() in seen_types:
                        continue
                    maybe = self._type_ref(node)
                    if maybe is None:
                        continue
                    found = maybe
                    key = ("code_reference", found.chain)
                else:  # TYPE: a type name, `_type_ref` inlined (the most frequent reference)
                    text = source[at : node.end_byte]
                    if text in seen_types:
                        continue
                    if text not in names and (text.isascii() or text.decode("utf-8", "replace") not in resolvable):
                        continue
                    key = ("code_reference", (text.decode("utf-8", "replace"),))
                    if key in seen:
                        continue
                    parent = node.parent
                    if parent is not None and parent.child_by_field_id(self.f.name) == node and parent.type != "generic_type":
                        continue  # the declared name itself, not a reference
                    found = _Ref("code_reference", key[1])
            else:
                assert isinstance(ref, _Ref)
                found = ref
                key = (found.via, found.chain)
            if key in seen:  # a repeat resolves the same way, and only the first is kept
                continue
            seen.add(key)
            chain = key[1]
            spelled = ".".join(chain)
            if spelled.count(".") == len(chain) - 1:  # (no name of the chain holds a dot)
                if key[0] == "calls":
                    seen_calls.add(spelled.encode())
                elif key[0] == "code_reference":
                    seen_types.add(spelled.encode())
            root = chain[0]
            if root == "this" or (root in declared and in_function):
                deps.append(self._resolve(found, draft))
            else:  # the same in every unit of the file (see `shared_deps`)
                dep = shared.get(key, _UNRESOLVED)
                if dep is _UNRESOLVED:
                    dep = shared[key] = self._resolve(found, draft)
                deps.append(dep)
        dependencies = base.dedupe_dependencies(d for d in deps if d is not None and d.target != draft.identifier)
        return base.built(draft, self.file_path, self.language, self.source, dependencies)


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one JS/TS/TSX file: the module first, then declarations in source order."""
    return _Extractor(file_path, source, layout).run()
