"""Swift extraction: classes, structs, enums, actors, protocols, extensions, and their members.

Identifiers are Swift's own spelling without a module (a file does not say which module it is
built into): types `Application`, nested `Application.Storage`, members `Application.boot`,
initializers `Application.init`, deinitializers `Application.deinit`, subscripts
`Application.subscript`, top-level functions `routes`. An `extension Application { … }` is a unit
of type `extension` whose identifier is the extended type's (`Application`, or
`Application.Storage` for a nested one) with `metadata["extension"]`; its members attach to the
extended type (`Application.shutdown`) and have the extension unit as parent. A repeated
(identifier, type) in one file — overloads, several extensions of one type — gets `#2`, `#3` ….

Units: `class` (actors too, `metadata["kind"] = "actor"`), `struct`, `enum`, `protocol`,
`extension`, `method` (protocol requirements too, with `metadata["abstract"]`), `function`,
`constructor` (`init`), `type_alias`, and `property` only for computed properties (a getter or
`get`/`set` body) — a stored property is a field, not code worth retrieving. Nested functions and
closures belong to the enclosing unit. A file with no unit (`Package.swift`, a script of
top-level statements) gets one `file` unit with the path as identifier.

Dependencies: imports on the file's top-level units (`via: "import"`, module names), inherited
types (`superclass` for a class's first inherited type unless this file declares it as a protocol,
and for every type a protocol inherits,
as in Java; `implements` for the others and for structs, enums, actors and extensions), calls
(`f()` on the enclosing types, then top-level `f`; `self.f()`, `Self.f()`, `Type.f()`; a call to a
capitalised name is an initializer, recorded as a reference to the type) and type names
(`code_reference`), nested types of the enclosing types first. Standard-library names and generic
parameters are never edges.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node, QueryCursor

from woods.extract import base, scan
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction, Unit

LANGUAGE = "swift"
GRAMMAR = "swift"

_COMMENTS = frozenset({"comment", "multiline_comment"})
# `declaration_kind` of a class_declaration → unit type.
_KINDS = {"class": "class", "struct": "struct", "enum": "enum", "actor": "class", "extension": "extension"}
_MEMBERS = frozenset(
    {
        "function_declaration", "init_declaration", "deinit_declaration", "subscript_declaration",
        "protocol_function_declaration", "property_declaration", "typealias_declaration",
    }
)
# Standard-library names a reference never resolves to in project code.
_BUILTINS = frozenset(
    {
        "Self", "Any", "AnyObject", "Void", "Never", "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt",
        "UInt8", "UInt16", "UInt32", "UInt64", "Float", "Double", "Character", "String", "Substring", "Array",
        "Dictionary", "Set", "Optional", "Result", "Error", "Sendable", "Equatable", "Hashable", "Codable",
        "Encodable", "Decodable", "Comparable", "Identifiable", "CustomStringConvertible", "Sequence",
        "Collection",
    }
)
_START = operator.attrgetter("start_byte")
# A resolved reference: its edge and the edge's (target, via) de-duplication key.
_Edge = tuple[Dependency, tuple[str, str]]
_MISSING: _Edge = (Dependency("", ""), ("", ""))  # a `dependencies` cache miss (None is a cached "no edge")
_REFERENCES = """
(call_expression . (simple_identifier) @ref)
(call_expression
  . (navigation_expression
      target: [(self_expression) (simple_identifier)]
      suffix: (navigation_suffix suffix: (simple_identifier))) @ref)
(user_type) @ref
"""


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Swift unit under construction, with what its references are resolved against."""

    path: tuple[str, ...] = ()  # qualified name segments without the `#n` suffix
    types: tuple[str, ...] = ()  # the enclosing types' names, innermost first
    type_params: frozenset[str] = frozenset()
    top: bool = False
    refs: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (kind, segments)


class _Extractor(base.FileExtractor[_Draft]):
    """One walk over the file and type bodies, then one reference scan (woods/extract/scan.py)."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.declared: set[str] = set()
        self.imports: list[Dependency] = []
        self.protocols: set[str] = set()  # protocols declared at the top of this file
        # One edge per enclosing types, then reference (kind, segments), shared by the file's units.
        self.dependencies: dict[tuple[str, ...], dict[tuple[str, tuple[str, ...]], _Edge | None]] = {}

    def run(self) -> FileExtraction:
        tree, skipped = scan.parse_recovering(GRAMMAR, self.source)
        root = tree.root_node
        self.protocols = {base.text(c.child_by_field_name("name"), self.source) for c in root.named_children
                          if c.type == "protocol_declaration"}
        stack: list[tuple[Node, _Draft | None]] = [(c, None) for c in reversed(root.named_children)]
        while stack:
            node, owner = stack.pop()
            kind = node.type
            if kind in ("class_declaration", "protocol_declaration"):
                self._type(node, owner, stack)
            elif kind in _MEMBERS:
                self._member(node, owner)
            elif kind == "import_declaration":
                name = next((c for c in node.named_children if c.type == "identifier"), None)
                if name is not None:
                    module = base.text(name, self.source)
                    self.imports.append(Dependency(module, "import", lookup=(module,)))
            elif kind == "ERROR":
                stack.extend((c, owner) for c in reversed(node.named_children))
        if not self.drafts:
            self.drafts.append(_Draft(self.file_path, "file", root, whole_file=True, top=True))
        self._scan_references(root)
        units = tuple(self._freeze(d) for d in self.drafts)
        return FileExtraction(self.file_path, LANGUAGE, units,
                              (*base.syntax_warnings(tree, self.file_path), *scan.skipped_warnings(self.file_path, skipped)))

    def _scan_references(self, root: Node) -> None:
        """Each call and type name to the innermost draft holding it (`scan.first_per_draft`).

        One capture name for all three patterns, so the cursor's single list, sorted stably by
        start byte, is the source order (`scan.captures` order: no two captures start together)."""
        source = self.source
        found = QueryCursor(scan.compiled_query(GRAMMAR, _REFERENCES)).captures(root).get("ref", [])
        found.sort(key=_START)
        for draft, kind, spelled, node in scan.first_per_draft(self.drafts, found, source):
            if kind == "user_type":
                parent = node.parent
                if parent is not None and parent.type == "attribute":
                    continue  # `@available`, `@MainActor`: attributes, not types the code uses
                segments = scan.dotted_type(spelled)  # `Outer.Inner<T>`
                if segments is None:
                    continue
                ref = ("type", segments)
            elif kind == "simple_identifier":
                called = spelled.decode("utf-8", "replace")
                ref = ("type" if called[:1].isupper() else "call", (called,))
            else:  # `receiver.member` (the query admits only a name or `self` as the receiver)
                target = node.child_by_field_name("target")
                suffix = node.child_by_field_name("suffix")
                member = suffix.child_by_field_name("suffix") if suffix is not None else None
                if target is None or member is None:
                    continue
                name_text = base.text(member, source)
                if target.type == "self_expression":
                    ref = ("own", (name_text,))
                else:
                    receiver = base.text(target, source)
                    if receiver == "Self":
                        ref = ("own", (name_text,))
                    elif receiver[:1].isupper():
                        ref = ("static", (receiver, name_text))
                    else:
                        continue
            # What `_resolved` would drop anyway (type parameters, standard-library names) never becomes a ref.
            head = ref[1][0]
            if head in draft.type_params or head in _BUILTINS:
                continue
            draft.refs.append(ref)

    # -- declarations ----------------------------------------------------------------------

    def _type_segments(self, node: Node | None) -> tuple[str, ...]:
        if node is None:
            return ()
        if node.type == "type_identifier":
            return (base.text(node, self.source),)
        return tuple(base.text(c, self.source) for c in node.named_children if c.type == "type_identifier")

    def _head(self, node: Node) -> tuple[dict[str, Any], frozenset[str]]:
        """Metadata (modifiers, attributes) and generic parameters, in one pass over the children."""
        words: list[str] = []
        attributes: list[str] = []
        params: frozenset[str] = frozenset()
        for child in node.children:
            kind = child.type
            if kind == "modifiers":
                for modifier in child.named_children:
                    if modifier.type == "attribute":
                        attributes.append(base.one_line(base.text(modifier, self.source)).lstrip("@"))
                    else:
                        words.append(base.text(modifier, self.source))
            elif kind == "type_parameters":
                names = (next((c for c in p.named_children if c.type == "type_identifier"), None)
                         for p in child.named_children)
                params = frozenset(base.text(n, self.source) for n in names if n is not None)
        meta: dict[str, Any] = {"modifiers": words}
        if attributes:
            meta["attributes"] = attributes
        return meta, params

    def _new(self, path: tuple[str, ...], unit_type: str, node: Node, owner: _Draft | None) -> _Draft:
        qualified = ".".join(path)
        draft = _Draft(self.unique(qualified, unit_type), unit_type, node, owner.identifier if owner else None,
                       ".".join(path[:-1]) or None)
        draft.path = path
        draft.top = owner is None
        draft.types = owner.types if owner is not None else ()
        metadata, params = self._head(node)
        draft.type_params = (owner.type_params | params) if owner is not None else params
        draft.docstring = base.clean_comment(self._leading_comment(node))
        draft.metadata = metadata
        self.declared.add(qualified)
        self.drafts.append(draft)
        return draft

    def _leading_comment(self, node: Node) -> str | None:
        """`base.leading_comment`: the comment block directly above `node`, or None.

        A comment sibling right above a declaration ends on its line or the one before, so when
        neither holds `//` or `*/` (in the original source: blanked stretches hold no node)
        there is none, and no `prev_sibling` is asked for (each one searches the parent's
        children again)."""
        source = self.source
        start = node.start_byte
        above = source.rfind(b"\n", 0, max(source.rfind(b"\n", 0, start), 0)) + 1
        if source.find(b"*/", above, start) < 0 and source.find(b"//", above, start) < 0:
            return None
        return base.leading_comment(node, source, _COMMENTS)

    def _type(self, node: Node, owner: _Draft | None, stack: list[tuple[Node, _Draft | None]]) -> None:
        keyword = node.child_by_field_name("declaration_kind")
        word = base.text(keyword, self.source) if keyword is not None else "class"
        unit_type = "protocol" if node.type == "protocol_declaration" else _KINDS.get(word, "class")
        name = self._type_segments(node.child_by_field_name("name"))
        if not name:
            return
        prefix = owner.path if owner is not None else ()
        path = name if unit_type == "extension" else (*prefix, *name)
        draft = self._new(path, unit_type, node, owner)
        draft.types = (".".join(path), *draft.types)
        if word == "actor":
            draft.metadata["kind"] = "actor"
        if unit_type == "extension":
            draft.metadata["extension"] = True
        body = node.child_by_field_name("body")
        draft.signature = self._header(node, body)
        inherited = [c for c in node.children if c.type == "inheritance_specifier"]
        for index, spec in enumerate(inherited):
            segments = self._type_segments(spec.child_by_field_name("inherits_from"))
            if not segments:
                continue
            first_of_class = unit_type == "class" and word == "class" and index == 0 and segments[-1] not in self.protocols
            via = "superclass" if unit_type == "protocol" or first_of_class else "implements"
            draft.refs.append((via, segments))
            draft.metadata.setdefault("extends" if via == "superclass" else "implements", []).append(".".join(segments))
        if body is not None:
            stack.extend((c, draft) for c in reversed(body.named_children))

    def _member(self, node: Node, owner: _Draft | None) -> None:
        kind = node.type
        body = node.child_by_field_name("body")
        if kind == "property_declaration":
            body = node.child_by_field_name("computed_value")
            if body is None:
                return  # a stored property
            bound = node.child_by_field_name("name")
            ident = bound.child_by_field_name("bound_identifier") if bound is not None else None
            if ident is None:
                return
            name, unit_type = base.text(ident, self.source), "property"
        elif kind == "typealias_declaration":
            name_node = node.child_by_field_name("name")
            name, unit_type = base.text(name_node, self.source), "type_alias"
        elif kind == "init_declaration":
            name, unit_type = "init", "constructor"
        elif kind == "deinit_declaration":
            name, unit_type = "deinit", "method"
        elif kind == "subscript_declaration":
            name, unit_type = "subscript", "method"
            body = next((c for c in node.children if c.type == "computed_property"), None)
        else:
            name_node = node.child_by_field_name("name")
            if name_node is None:
                return
            name = base.text(name_node, self.source).strip("`")  # `default` escapes a keyword: the name is default
            unit_type = "method" if owner is not None else "function"
        prefix = owner.path if owner is not None else ()
        draft = self._new((*prefix, name), unit_type, node, owner)
        if kind == "typealias_declaration":
            draft.signature = base.one_line(base.text(node, self.source))
            return
        draft.signature = self._header(node, body)
        if kind == "deinit_declaration":
            draft.metadata["kind"] = "destructor"
        if body is None and unit_type != "type_alias":
            draft.metadata["abstract"] = True
        if owner is not None and owner.type == "extension":
            draft.metadata["extension"] = True

    def _header(self, node: Node, stop_node: Node | None) -> str:
        """The declaration from its first modifier keyword (annotations are metadata) up to `stop_node`."""
        start = node.start_byte
        modifiers = node.child(0) if node.child_count else None
        if modifiers is not None and modifiers.type == "modifiers":
            start = modifiers.end_byte
            for index in range(modifiers.child_count):
                child = modifiers.child(index)
                if child is not None and child.type not in ("attribute", "comment", "multiline_comment"):
                    start = child.start_byte
                    break
        stop = stop_node.start_byte if stop_node is not None else node.end_byte
        return base.one_line(self.source[start:stop].decode("utf-8", "replace"))

    # -- references ------------------------------------------------------------------------

    def _type_candidates(self, segments: tuple[str, ...], types: tuple[str, ...]) -> list[str]:
        written = ".".join(segments)
        head = segments[0]
        found = [f"{t}.{written}" for t in types if t.rpartition(".")[2] != head]
        found.append(written)
        return list(dict.fromkeys(found))

    def _freeze(self, draft: _Draft) -> Unit:
        """`base.freeze` over `_resolved`'s edges, which come de-duplicated already."""
        return base.built(draft, self.file_path, LANGUAGE, self.source, self._resolved(draft))

    def _resolved(self, draft: _Draft) -> tuple[Dependency, ...]:
        """The unit's edges: imports on top-level units, then its references', without its own
        identifier, one per (target, via), the first kept (`base.freeze`'s rules)."""
        identifier = draft.identifier
        seen: set[tuple[str, str]] = set()
        deps: list[Dependency] = []
        if draft.top:
            base.keep_new_edges(self.imports, identifier, seen, deps)
        heritage = {s for via, s in draft.refs if via in ("superclass", "implements")}
        own = ".".join(draft.path)
        types = draft.types
        dependencies = self.dependencies.get(types)
        if dependencies is None:
            dependencies = self.dependencies[types] = {}
        type_params = draft.type_params
        not_method = draft.type != "method"
        for ref in dict.fromkeys(draft.refs):
            kind, segments = ref
            head = segments[0]
            if head in type_params or head in _BUILTINS:
                continue
            if kind == "type" and segments in heritage:
                continue
            edge = dependencies.get(ref, _MISSING)
            if edge is _MISSING:
                found = self._dependency(kind, segments, types)
                edge = dependencies[ref] = (found, (found.target, found.via)) if found is not None else None
            if edge is None:
                continue
            dep, key = edge
            if dep.via == "code_reference" and not_method and own in dep.lookup:
                continue  # a type's (or extension's) own name
            if key in seen or dep.target == identifier:
                continue
            seen.add(key)
            deps.append(dep)
        return tuple(deps)

    def _dependency(self, kind: str, segments: tuple[str, ...], types: tuple[str, ...]) -> Dependency | None:
        """The edge for one reference: nested types of the enclosing types first (see the module doc)."""
        if kind in ("type", "superclass", "implements"):
            candidates = self._type_candidates(segments, types)
            via = "code_reference" if kind == "type" else kind
        elif kind == "static":
            candidates = [f"{c}.{segments[1]}" for c in self._type_candidates(segments[:1], types)]
            via = "calls"
        else:
            name = segments[-1]
            candidates = [f"{t}.{name}" for t in types]
            if kind == "call":
                candidates.append(name)
            via = "calls"
        if not candidates:
            return None
        target = candidates[-1] if via != "calls" else candidates[0]
        declared = self.declared
        for candidate in candidates:
            if candidate in declared:
                target = candidate
                break
        return Dependency(target, via, None, tuple(candidates))

def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Swift file: declarations outermost first, members in source order."""
    try:
        return _Extractor(file_path, source, layout).run()
    except scan.ParseTimeoutError as error:
        return scan.parse_timeout(file_path, LANGUAGE, error)
