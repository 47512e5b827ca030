r"""PHP extraction: classes, interfaces, traits, enums, their methods, and functions.

The grammar is tree-sitter-php's `php` variant, which reads `<?php … ?>` mixed with HTML, so
`.php` and `.phtml` files both parse. Identifiers are PHP's own fully qualified names from the
`namespace` declaration (`namespace A\B;` or `namespace A\B { … }`): classes `A\B\Invoice`,
methods `A\B\Invoice::charge` (static or not), constructors `A\B\Invoice::__construct` (type
`constructor`), functions `A\B\format_money`; code outside any namespace has no prefix. A repeated
(identifier, type) in one file — a function declared in both branches of an `if` — gets `#2` ….

Units: `class`, `interface`, `trait`, `enum`, `method` (abstract and interface methods too, with
`metadata["abstract"]`), `constructor`, `function` (also inside a top-level `if`, the
`function_exists` idiom). Closures and anonymous classes belong to the enclosing unit. A file with
no unit (a template, a config array, a script) gets one `file` unit with the path as identifier.

Dependencies, resolved with PHP's rules (a leading `\` is absolute; a first segment matching a
`use` alias is replaced; anything else is relative to the current namespace; unqualified function
calls fall back to the global function): `use` imports on the file's top-level units
(`via: "import"`), `extends` (`superclass`; an interface's `extends` too, as in Java),
`implements`, trait `use` inside a class (`include`, the mixin edge Ruby modules use), calls
(`f()`, `$this->m()` — on the class, then on the traits it uses —, `self::m()`, `static::m()`,
`parent::m()`, `X::m()`) and type names in
signatures, `new`, `instanceof`, `catch` and `X::CONST` (`code_reference`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node, QueryCursor

from woods.extract import base, scan
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "php"
GRAMMAR = "php"

_TYPES = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "trait_declaration": "trait",
    "enum_declaration": "enum",
}
# File-level statements that may hold declarations (`if (!function_exists('f')) { function f() {} }`).
_FILE_CONTAINERS = frozenset({"if_statement", "compound_statement", "else_clause", "else_if_clause", "colon_block"})
_COMMENTS = frozenset({"comment"})
_NAMES = frozenset({"name", "qualified_name"})
# Type names that stand for the class itself or its parent (`new static`, `self::X`): never an edge.
_RELATIVE = frozenset({"self", "static", "parent"})

_REFERENCES = """
(function_call_expression function: [(name) (qualified_name)] @call)
(scoped_call_expression scope: (_) name: (name)) @scoped
(member_call_expression object: (variable_name) @object)
(object_creation_expression [(name) (qualified_name)] @type)
(named_type [(name) (qualified_name)] @type)
(class_constant_access_expression . [(name) (qualified_name)] @type)
(scoped_property_access_expression scope: [(name) (qualified_name)] @type)
(binary_expression operator: "instanceof" right: [(name) (qualified_name)] @type)
"""
# Capture names in sorted order, ranked: the scan sorts (start, rank) as `scan.captures` sorts
# (start, name), so captures at one position keep that order.
_CAPTURE_RANKS = (("call", 0), ("object", 1), ("scoped", 2), ("type", 3))
_CALL, _OBJECT, _SCOPED, _TYPE = 0, 1, 2, 3
_THIS_CALL_KEY = -1  # the dedupe key's capture slot for a `$this->m()` method name
# What follows the `$this` of `$this->m()`: `->` and an ASCII name (the member call's `name` field,
# in a tree without errors). Anything else — a comment, `$this->$m()`, `$this->{…}()`, a non-ASCII
# name — is read from the tree instead.
_THIS_CALL = re.compile(rb"[ \t\r\n]*->[ \t\r\n]*([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_\x80-\xff])")


# A node the walk will visit: (node, its namespace, the type it is a member of, its parent's
# children, its index there); the children list lets the comment above it be read by indexing.
_Entry = tuple[Node, str, "_Draft | None", list[Node], int]


@dataclass(slots=True)
class _Draft(base.Draft):
    """A PHP unit under construction, with what its references are resolved against."""

    ns: str = ""  # the namespace (no leading or trailing `\\`)
    cls: str | None = None  # the class a method belongs to (for `$this`, `self::`, `static::`)
    superclass: str | None = None  # the resolved `extends` of the class (for `parent::`)
    traits: tuple[str, ...] = ()  # the resolved traits the class uses (for `$this->m()` they define)
    top: bool = False  # a file-level unit (carries the file's `use` imports)
    heritage: list[tuple[str, str]] = field(default_factory=list)  # (via, spelled) of `extends` … `use`


class _Extractor(base.FileExtractor[_Draft]):
    """One walk over namespaces and type bodies, then one reference scan (woods/extract/scan.py)."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.declared: set[str] = set()
        self.aliases: dict[str, dict[str, str]] = {}  # namespace → alias → class name
        self.functions: dict[str, dict[str, str]] = {}  # namespace → alias → function name
        self.imports: dict[str, list[Dependency]] = {}  # namespace → its `use` imports
        self.place: tuple[Node | None, list[Node], int] = (None, [], 0)  # the node being walked (see `_Entry`)

    def run(self) -> FileExtraction:
        tree = scan.parse(GRAMMAR, self.source)
        root = tree.root_node
        stack: list[_Entry] = []
        self._scope(root.children, "", stack)
        while stack:
            node, ns, owner, siblings, index = stack.pop()
            self.place = (node, siblings, index)
            kind = node.type
            if kind in _TYPES and owner is None:
                self._type(node, ns, stack)
            elif kind == "method_declaration" and owner is not None:
                self._method(node, owner)
            elif kind == "function_definition" and owner is None:
                self._function(node, ns)
            elif kind == "namespace_definition":
                name = node.child_by_field_name("name")
                body = node.child_by_field_name("body")
                if body is not None:
                    self._scope(body.children, base.text(name, self.source) if name is not None else "", stack)
            elif kind in _FILE_CONTAINERS and owner is None:
                self._scope(node.children, ns, stack)
            elif kind == "namespace_use_declaration":
                self._use(node, ns)
        if not self.drafts:
            self.drafts.append(_Draft(self.file_path, "file", root, whole_file=True, top=True))
        self._scan_references(root)
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in self.drafts)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    def _scope(self, children: list[Node], ns: str, stack: list[_Entry]) -> None:
        """Queue a scope's children in order; `namespace X;` applies to the siblings after it."""
        queued: list[_Entry] = []
        for index, child in enumerate(children):
            if child.type == "namespace_definition" and child.child_by_field_name("body") is None:
                name = child.child_by_field_name("name")
                ns = base.text(name, self.source) if name is not None else ""
            else:
                queued.append((child, ns, None, children, index))
        stack.extend(reversed(queued))

    def _scan_references(self, root: Node) -> None:
        """Resolve every call and type name into an edge of the innermost unit holding it, in
        source order, during the one pass over the query's captures (`scan.sweep`); a unit's
        `use` imports and heritage edges come first, as the walk recorded them."""
        for draft in self.drafts:
            draft.deps = list(self.imports.get(draft.ns, ())) if draft.top else []
            for via, spelled in draft.heritage:  # `extends`, `implements`, trait `use`
                target = self._class_name(spelled, draft.ns)
                draft.deps.append(Dependency(target, via, lookup=(target,)))
        found = QueryCursor(scan.compiled_query(GRAMMAR, _REFERENCES)).captures(root)
        # (start, capture, index, node) sorted: `scan.captures`' order (capture names rank as sorted).
        decorated = [(n.start_byte, rank, i, n) for name, rank in _CAPTURE_RANKS for i, n in enumerate(found.get(name, ()))]
        decorated.sort()
        source = self.source
        plain = not root.has_error
        seen: set[tuple[int, int, bytes]] = set()  # (draft, capture, text): a repeated name is one edge
        known: dict[tuple[str, str, str], Dependency] = {}  # (kind, spelled, namespace) → its edge
        for draft, position, rank, _, node in scan.sweep(scan.draft_spans(self.drafts), decorated):
            if rank == _OBJECT:  # `$x->m()`: only `$this->m()` names a method we can find
                if source[position : node.end_byte] != b"$this":
                    continue
                member = _THIS_CALL.match(source, node.end_byte) if plain else None
                if member is not None:
                    spelled_bytes = member[1]
                else:
                    parent = node.parent
                    name_node = parent.child_by_field_name("name") if parent is not None else None
                    if name_node is None:
                        continue
                    spelled_bytes = source[name_node.start_byte : name_node.end_byte]
                key = (id(draft), _THIS_CALL_KEY, spelled_bytes)
                if key in seen:
                    continue
                seen.add(key)
                if draft.cls is not None:
                    draft.deps.append(self._own(spelled_bytes.decode("utf-8", "replace"), draft))
                continue
            key = (id(draft), rank, source[position : node.end_byte])
            if key in seen:
                continue
            seen.add(key)
            if rank == _TYPE:
                spelled = key[2].decode("utf-8", "replace")
                if spelled.lower() in _RELATIVE or any(spelled == h for _, h in draft.heritage):
                    continue
                cache_key = ("class", spelled, draft.ns)
                dep = known.get(cache_key)
                if dep is None:
                    target = self._class_name(spelled, draft.ns)
                    dep = known[cache_key] = Dependency(target, "code_reference", lookup=(target,))
                draft.deps.append(dep)
            elif rank == _CALL:
                spelled = key[2].decode("utf-8", "replace")
                cache_key = ("function", spelled, draft.ns)
                dep = known.get(cache_key)
                if dep is None:
                    candidates = self._function_candidates(spelled, draft.ns)
                    target = next((c for c in candidates if c in self.declared), candidates[0])
                    dep = known[cache_key] = Dependency(target, "calls", lookup=tuple(candidates))
                draft.deps.append(dep)
            else:  # `X::m()`, `self::m()`, `static::m()`, `parent::m()`
                scope = node.child_by_field_name("scope")
                if scope is None:
                    continue
                method = base.text(node.child_by_field_name("name"), source)
                if scope.type == "relative_scope":
                    if base.text(scope, source).lower() != "parent":
                        if draft.cls is not None:
                            draft.deps.append(self._own(method, draft))
                    elif draft.superclass is not None:
                        target = f"{draft.superclass}::{method}"
                        draft.deps.append(Dependency(target, "calls", lookup=(target,)))
                elif scope.type in _NAMES:
                    spelled = base.text(scope, source)
                    cache_key = ("static", f"{spelled}::{method}", draft.ns)
                    dep = known.get(cache_key)
                    if dep is None:
                        target = f"{self._class_name(spelled, draft.ns)}::{method}"
                        dep = known[cache_key] = Dependency(target, "calls", lookup=(target,))
                    draft.deps.append(dep)

    @staticmethod
    def _own(method: str, draft: _Draft) -> Dependency:
        """`$this->m()`, `self::m()`, `static::m()`: the class's own method, else one of its traits'."""
        target = f"{draft.cls}::{method}"
        return Dependency(target, "calls", lookup=(target, *(f"{t}::{method}" for t in draft.traits)))

    # -- declarations ----------------------------------------------------------------------

    def _use(self, node: Node, ns: str) -> None:
        """`use A\\B;`, `use A\\B as C;`, `use function A\\f;`, `use A\\{B, C as D};` — read from the
        statement's text (a handful of string operations instead of a walk over its nodes)."""
        body = " ".join(base.text(node, self.source).split())
        body = body[3:].rstrip(";").strip() if body.startswith("use") else body
        kind, body = self._use_kind(body, "")
        prefix, brace, rest = body.partition("{")
        if brace:
            prefix = prefix.strip().strip("\\")
            prefix = prefix + "\\" if prefix else ""
            items = rest.rstrip("} ").split(",")
        else:
            prefix, items = "", body.split(",")
        for item in items:
            item_kind, item = self._use_kind(item.strip(), kind)
            name, _, alias = item.partition(" as ")
            full = prefix + name.strip().strip("\\")
            if not full:
                continue
            local = alias.strip() or full.rpartition("\\")[2]
            (self.functions if item_kind == "function" else self.aliases).setdefault(ns, {})[local] = full
            self.imports.setdefault(ns, []).append(Dependency(full, "import", lookup=(full,)))

    @staticmethod
    def _use_kind(text: str, default: str) -> tuple[str, str]:
        """(`function` / `const` / `default`, the text after that keyword)."""
        for word in ("function ", "const "):
            if text.startswith(word):
                return word.strip(), text[len(word) :].strip()
        return default, text

    def _qualified(self, ns: str, name: str) -> str:
        return f"{ns}\\{name}" if ns else name

    def _new(self, identifier: str, unit_type: str, node: Node, ns: str, parent: _Draft | None) -> _Draft:
        draft = _Draft(self.unique(identifier, unit_type), unit_type, node, parent.identifier if parent else None,
                       (parent.identifier if parent else ns) or None)
        draft.ns = ns
        # The comment block above: read from the children list the walk found `node` in, as
        # tree-sitter answers each `prev_sibling` by searching down from the parent.
        _, siblings, index = self.place
        draft.docstring = base.clean_comment(base.comment_block_before(siblings, index, node, self.source, _COMMENTS)
                                             if node is self.place[0] else base.leading_comment(node, self.source, _COMMENTS))
        draft.metadata = self._modifiers(node)
        self.declared.add(identifier)
        self.drafts.append(draft)
        return draft

    def _type(self, node: Node, ns: str, stack: list[_Entry]) -> None:
        name = base.text(node.child_by_field_name("name"), self.source)
        draft = self._new(self._qualified(ns, name), _TYPES[node.type], node, ns, None)
        draft.top = True
        draft.cls = draft.identifier
        body = node.child_by_field_name("body")
        draft.signature = self._header(node, body)
        for clause in node.children:
            if clause.type == "base_clause":
                for ref in clause.named_children:
                    if ref.type in _NAMES:
                        spelled = base.text(ref, self.source)
                        draft.heritage.append(("superclass", spelled))
                        draft.metadata.setdefault("extends", []).append(spelled)
                        draft.superclass = draft.superclass or self._class_name(spelled, ns)
            elif clause.type == "class_interface_clause":
                for ref in clause.named_children:
                    if ref.type in _NAMES:
                        draft.heritage.append(("implements", base.text(ref, self.source)))
                        draft.metadata.setdefault("implements", []).append(base.text(ref, self.source))
        methods: list[int] = []  # indexes in `children`, which the comment above a method is read from
        children = body.children if body is not None else []
        for index, member in enumerate(children):
            if member.type == "use_declaration":
                for ref in member.named_children:
                    if ref.type in _NAMES:
                        draft.heritage.append(("include", base.text(ref, self.source)))
                        draft.metadata.setdefault("traits", []).append(base.text(ref, self.source))
                        draft.traits = (*draft.traits, self._class_name(base.text(ref, self.source), ns))
            elif member.type == "method_declaration":
                methods.append(index)
        stack.extend((children[i], ns, draft, children, i) for i in reversed(methods))

    def _method(self, node: Node, owner: _Draft) -> None:
        name = base.text(node.child_by_field_name("name"), self.source)
        unit_type = "constructor" if name.lower() == "__construct" else "method"
        draft = self._new(f"{owner.identifier}::{name}", unit_type, node, owner.ns, owner)
        draft.cls = owner.identifier
        draft.superclass = owner.superclass
        draft.traits = owner.traits
        body = node.child_by_field_name("body")
        draft.signature = self._header(node, body).rstrip(";").rstrip()
        if body is None:
            draft.metadata["abstract"] = True

    def _function(self, node: Node, ns: str) -> None:
        name = base.text(node.child_by_field_name("name"), self.source)
        draft = self._new(self._qualified(ns, name), "function", node, ns, None)
        draft.top = True
        draft.signature = self._header(node, node.child_by_field_name("body"))

    def _modifiers(self, node: Node) -> dict[str, Any]:
        """Modifier keywords and `#[…]` attributes, in one pass over the declaration's children."""
        meta: dict[str, Any] = {"modifiers": []}
        for child in node.children:
            kind = child.type
            if kind.endswith("_modifier"):
                meta["modifiers"].append(base.text(child, self.source))
            elif kind == "attribute_list":
                meta["attributes"] = [base.one_line(base.text(a, self.source)) for g in child.named_children
                                      for a in g.named_children if a.type == "attribute"]
        return meta

    def _header(self, node: Node, body: Node | None) -> str:
        start = node.start_byte
        attributes = node.child_by_field_name("attributes")
        if attributes is not None:  # `#[Attr]` lines are metadata, not the header
            start = attributes.end_byte
        stop = body.start_byte if body is not None else node.end_byte
        return base.one_line(self.source[start:stop].decode("utf-8", "replace"))

    # -- name resolution ---------------------------------------------------------------------

    def _class_name(self, spelled: str, ns: str) -> str:
        """PHP's class-name resolution (see the module docstring)."""
        if spelled.startswith("\\"):
            return spelled[1:]
        head, sep, rest = spelled.partition("\\")
        if head.lower() == "namespace" and sep:
            return self._qualified(ns, rest)
        alias = self.aliases.get(ns, {}).get(head)
        if alias is not None:
            return f"{alias}{sep}{rest}"
        return self._qualified(ns, spelled)

    def _function_candidates(self, spelled: str, ns: str) -> list[str]:
        if spelled.startswith("\\"):
            return [spelled[1:]]
        if "\\" in spelled:
            return [self._class_name(spelled, ns)]
        alias = self.functions.get(ns, {}).get(spelled)
        if alias is not None:
            return [alias]
        return list(dict.fromkeys([self._qualified(ns, spelled), spelled]))


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one PHP file: types and functions in source order, each type before its methods."""
    try:
        return _Extractor(file_path, source, layout).run()
    except scan.ParseTimeoutError as error:
        return scan.parse_timeout(file_path, LANGUAGE, error)
