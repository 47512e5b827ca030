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

from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node

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
_RELATIVE = frozenset({"self", "static"})

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


@dataclass(slots=True)
class _Draft(base.Draft):
    """A PHP unit under construction, with what its references are resolved against."""

    ns: str = ""  # the namespace (no leading or trailing `\\`)
    cls: str | None = None  # the class a method belongs to (for `$this`, `self::`, `static::`)
    superclass: str | None = None  # the resolved `extends` of the class (for `parent::`)
    traits: tuple[str, ...] = ()  # the resolved traits the class uses (for `$this->m()` they define)
    top: bool = False  # a file-level unit (carries the file's `use` imports)
    refs: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, via, spelled)


class _Extractor:
    """One walk over namespaces and type bodies, then one reference scan (woods/extract/scan.py)."""

    def __init__(self, file_path: str, source: bytes) -> None:
        self.file_path = file_path
        self.source = source
        self.drafts: list[_Draft] = []
        self.unique = base.UniqueIdentifiers()
        self.declared: set[str] = set()
        self.aliases: dict[str, dict[str, str]] = {}  # namespace → alias → class name
        self.functions: dict[str, dict[str, str]] = {}  # namespace → alias → function name
        self.imports: dict[str, list[Dependency]] = {}  # namespace → its `use` imports

    def run(self) -> FileExtraction:
        tree = scan.parse(GRAMMAR, self.source)
        root = tree.root_node
        stack: list[tuple[Node, str, _Draft | None]] = []
        self._scope(root.children, "", stack)
        while stack:
            node, ns, owner = stack.pop()
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
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source, self._resolved(d)) for d in self.drafts)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    def _scope(self, children: list[Node], ns: str, stack: list[tuple[Node, str, _Draft | None]]) -> None:
        """Queue a scope's children in order; `namespace X;` applies to the siblings after it."""
        queued: list[tuple[Node, str, _Draft | None]] = []
        for child in children:
            if child.type == "namespace_definition" and child.child_by_field_name("body") is None:
                name = child.child_by_field_name("name")
                ns = base.text(name, self.source) if name is not None else ""
            else:
                queued.append((child, ns, None))
        stack.extend(reversed(queued))

    def _scan_references(self, root: Node) -> None:
        source = self.source
        seen: set[tuple[int, str, bytes]] = set()  # (draft, capture, text): a repeated name is one edge
        for draft, node, name in scan.innermost(self.drafts, scan.captures(GRAMMAR, _REFERENCES, root)):
            if name == "object":  # `$x->m()`: only `$this->m()` names a method we can find
                parent = node.parent
                if source[node.start_byte : node.end_byte] != b"$this" or parent is None:
                    continue
                member = parent.child_by_field_name("name")
                key = (id(draft), "this_call", source[member.start_byte : member.end_byte] if member else b"")
                if member is None or key in seen:
                    continue
                seen.add(key)
                draft.refs.append(("own", "calls", key[2].decode("utf-8", "replace")))
                continue
            key = (id(draft), name, source[node.start_byte : node.end_byte])
            if key in seen:
                continue
            seen.add(key)
            if name == "call":
                draft.refs.append(("function", "calls", base.text(node, self.source)))
            elif name == "scoped":
                scope = node.child_by_field_name("scope")
                method = base.text(node.child_by_field_name("name"), self.source)
                if scope is None:
                    continue
                if scope.type == "relative_scope":
                    word = base.text(scope, self.source).lower()
                    draft.refs.append(("parent" if word == "parent" else "own", "calls", method))
                elif scope.type in _NAMES:
                    draft.refs.append(("static", "calls", f"{base.text(scope, self.source)}::{method}"))
            else:
                spelled = base.text(node, self.source)
                if spelled.lower() not in ("self", "static", "parent"):
                    draft.refs.append(("class", "code_reference", spelled))

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
        draft.docstring = base.clean_comment(base.leading_comment(node, self.source, _COMMENTS))
        draft.metadata = self._modifiers(node)
        self.declared.add(identifier)
        self.drafts.append(draft)
        return draft

    def _type(self, node: Node, ns: str, stack: list[tuple[Node, str, _Draft | None]]) -> None:
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
                        draft.refs.append(("class", "superclass", spelled))
                        draft.metadata.setdefault("extends", []).append(spelled)
                        draft.superclass = draft.superclass or self._class_name(spelled, ns)
            elif clause.type == "class_interface_clause":
                for ref in clause.named_children:
                    if ref.type in _NAMES:
                        draft.refs.append(("class", "implements", base.text(ref, self.source)))
                        draft.metadata.setdefault("implements", []).append(base.text(ref, self.source))
        methods: list[Node] = []
        for member in body.named_children if body is not None else ():
            if member.type == "use_declaration":
                for ref in member.named_children:
                    if ref.type in _NAMES:
                        draft.refs.append(("class", "include", base.text(ref, self.source)))
                        draft.metadata.setdefault("traits", []).append(base.text(ref, self.source))
                        draft.traits = (*draft.traits, self._class_name(base.text(ref, self.source), ns))
            elif member.type == "method_declaration":
                methods.append(member)
        stack.extend((m, ns, draft) for m in reversed(methods))

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

    def _resolved(self, draft: _Draft) -> list[Dependency | None]:
        deps: list[Dependency | None] = list(self.imports.get(draft.ns, ())) if draft.top else []
        heritage = {s for kind, via, s in draft.refs if via in ("superclass", "implements", "include")}
        for kind, via, spelled in draft.refs:
            if kind == "class":
                if via == "code_reference" and spelled in heritage:
                    continue
                target = self._class_name(spelled, draft.ns)
                candidates = [target]
            elif kind == "function":
                candidates = self._function_candidates(spelled, draft.ns)
                target = next((c for c in candidates if c in self.declared), candidates[0])
            elif kind == "own":  # the class's own method, else one of the traits it uses
                if draft.cls is None:
                    continue
                target = f"{draft.cls}::{spelled}"
                candidates = [target, *(f"{t}::{spelled}" for t in draft.traits)]
            elif kind == "parent":
                if draft.superclass is None:
                    continue
                target = f"{draft.superclass}::{spelled}"
                candidates = [target]
            else:  # static: `X::m`
                owner, _, method = spelled.rpartition("::")
                target = f"{self._class_name(owner, draft.ns)}::{method}"
                candidates = [target]
            deps.append(Dependency(target, via, lookup=tuple(candidates)))
        return deps


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one PHP file: types and functions in source order, each type before its methods."""
    try:
        return _Extractor(file_path, source).run()
    except scan.ParseTimeoutError as error:
        return scan.parse_timeout(file_path, LANGUAGE, error)
