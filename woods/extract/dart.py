"""Dart extraction: libraries, classes, mixins, extensions, enums, typedefs, functions, methods,
constructors, getters and setters.

A Dart library is a file, imported by its URI, so names start from the file's path without
`.dart` (`lib/src/invoice.dart` → `lib/src/invoice`) and a declaration is `<library>:<name>` in
Dart's own spelling: `lib/src/invoice:Invoice`, members `lib/src/invoice:Invoice.charge`, the
unnamed constructor `Invoice.new` and named ones `Invoice.empty` (how Dart tears them off), a
setter `Invoice.total=` (how Dart names setters), an operator `Invoice.operator==`, top-level
functions and accessors `lib/src/invoice:computeTax`. An unnamed extension is named after the type
it extends (`extension on String` → `<library>:String`, type "extension").

Unit types: "library" (the whole file; `metadata["name"]` of a `library` directive, `["part_of"]`
for a part), "class" (`metadata["modifiers"]`: abstract, sealed, base, final, interface, mixin),
"mixin", "extension" (`metadata["on"]`), "extension_type", "enum" (`metadata["values"]`),
"type_alias", "function", "method" (operators with `metadata["operator"]`), "constructor"
(`metadata["factory"]`, `["const"]`, `["redirects"]`), "getter", "setter". Members without a
body are units with `metadata["abstract"]` (or `["external"]`); fields and top-level variables
are not units (their initialisers belong to the enclosing unit). A unit spans its annotations,
signature and body (the grammar keeps them as siblings); its docstring is the `///`, `/** */` or
`//` block directly above.

Dependencies: the library `import`s every `import` and `export` URI and `include`s its `part`s,
each spelled as the library it names — a relative URI against the file's directory, a
`package:name/x.dart` as `lib/x` of this package, then `name/lib/x` and `packages/name/lib/x`
(the usual monorepo layouts), in that order as lookup candidates; `dart:` libraries are never
edges. A class's `extends` is `superclass` (as is a mixin's `on`), `with` is `include`,
`implements` is `implements`. Calls (`calls`): `f()` to a member of the enclosing class, then a
function of the library, then of each import that may provide it (`show`/`hide` respected);
`this.f()`, `super.f()` (the superclass), `Type.f()` (static members and named constructors) and
`prefix.f()` through an `import … as prefix`. A call of a capitalised name (`Invoice(…)`,
`Point.origin()` on an imported class aside) constructs a class: a `code_reference` to it, as are
type names in signatures and bodies. `dart:core` names and type parameters are never edges.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from tree_sitter import Node

from woods.extract import base, scan, scopes
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "dart"
GRAMMAR = "dart"

_REFERENCES = """
(type_identifier) @type
(type_parameter . (type_identifier) @type_param)
(_ (identifier) @call . (selector . (argument_part)))
(_ (selector (unconditional_assignable_selector (identifier) @member)) . (selector . (argument_part)))
(_ (super) . (unconditional_assignable_selector (identifier) @super_member) . (selector . (argument_part)))
[(comment) (documentation_comment)] @comment
"""
_CLASS_LIKE = {
    "class_definition": "class",
    "mixin_declaration": "mixin",
    "extension_declaration": "extension",
    "extension_type_declaration": "extension_type",
    "enum_declaration": "enum",
}
_BODIES = frozenset({"class_body", "extension_body", "enum_body"})
# Member signatures: the unit type each one makes (a function is a method inside a class body).
_SIGNATURES = {
    "function_signature": "function",
    "getter_signature": "getter",
    "setter_signature": "setter",
    "operator_signature": "method",
    "constructor_signature": "constructor",
    "constant_constructor_signature": "constructor",
    "factory_constructor_signature": "constructor",
    "redirecting_factory_constructor_signature": "constructor",
}
_CLASS_MODIFIERS = frozenset({"abstract", "sealed", "base", "final", "interface", "mixin"})
# Where a type name is a heritage clause (its own edge kind), not a code reference.
_HERITAGE_PARENTS = frozenset({"superclass", "mixins", "interfaces", "mixin_declaration", "extension_declaration"})
# The directories a Dart package keeps its code in (the package's own directory holds them).
_PACKAGE_DIRECTORIES = frozenset({"lib", "bin", "test", "tool", "example", "benchmark", "integration_test", "web"})
_PRELUDE = frozenset({
    "int", "double", "num", "bool", "String", "Object", "dynamic", "void", "Never", "Null", "List", "Map", "Set",
    "Iterable", "Iterator", "Future", "FutureOr", "Stream", "Function", "Type", "Symbol", "DateTime", "Duration",
    "Exception", "Error", "StateError", "ArgumentError", "RangeError", "UnimplementedError", "UnsupportedError",
    "FormatException", "StackTrace", "Uri", "RegExp", "Pattern", "Match", "Comparable", "Enum", "Record", "BigInt",
    "Sink", "StringBuffer", "Runes", "MapEntry", "Invocation", "Expando", "WeakReference", "Finalizer",
    "print", "identical", "identityHashCode",
})


def library_id(file_path: str) -> str:
    """The identifier of the library a file is: its path without `.dart`."""
    return file_path[:-5] if file_path.endswith(".dart") and len(file_path) > 5 else file_path


def uri_candidates(uri: str, file_path: str) -> tuple[str, ...]:
    """The libraries an import URI may name, most likely first; () for `dart:` and unreachable URIs."""
    if uri.startswith("dart:") or not uri.endswith(".dart"):
        return ()
    if uri.startswith("package:"):
        package, _, rest = uri[8:].partition("/")
        rest = rest[:-5]
        candidates = [f"lib/{rest}", f"{package}/lib/{rest}", f"packages/{package}/lib/{rest}"]
        root = _package_root(file_path)
        if root:  # a package in a subdirectory: its own directory, then a sibling package's
            siblings = posixpath.dirname(root)
            candidates.insert(0, f"{siblings}/{package}/lib/{rest}" if siblings else f"{package}/lib/{rest}")
            if posixpath.basename(root) == package:
                candidates.insert(0, f"{root}/lib/{rest}")
        return tuple(dict.fromkeys(candidates))
    if ":" in uri:  # another scheme (`http:`, `file:`)
        return ()
    path = posixpath.normpath(posixpath.join(posixpath.dirname(file_path), uri))
    return () if path.startswith("../") else (path[:-5],)


def _package_root(file_path: str) -> str:
    """The directory of the package a file belongs to, by Dart's layout (`lib/`, `bin/`, `test/` …
    directly inside it): `pkgs/shelf/lib/src/x.dart` → `pkgs/shelf`; "" at the repository root."""
    parts = file_path.split("/")[:-1]
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] in _PACKAGE_DIRECTORIES:
            return "/".join(parts[:index])
    return ""


@dataclass(slots=True)
class _Import:
    """Where names may come from: an import (its libraries' candidate spellings, prefix, `show`
    and `hide`), a part of this library or the library this part belongs to (`part`)."""

    libraries: tuple[str, ...]
    prefix: str | None
    show: frozenset[str] | None
    hide: frozenset[str]
    part: bool = False

    def provides(self, name: str) -> bool:
        return name not in self.hide and (self.show is None or name in self.show)


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Dart unit under construction: its enclosing class-like unit, a class-like's member
    names, written superclass and heritage clauses."""

    outer: _Draft | None = None
    members: set[str] = field(default_factory=set)
    superclass: str | None = None
    heritage: list[tuple[str, Node]] = field(default_factory=list)  # (via, type name) of its header


class _Extractor(base.FileExtractor[_Draft]):
    """Top level and class bodies walked in Python (never function bodies); references by one query."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.library = library_id(file_path)
        self.comments = scopes.Comments([], source)
        self.declared: dict[str, str] = {}  # top-level name → identifier (first declaration)
        self.types: set[str] = set()  # names of the file's classes, mixins, enums, typedefs …
        self.imports: list[_Import] = []  # parts and the library of a part first, then imports in order
        self.prefixes: set[str] = set()  # `import … as prefix` names (of `dart:` libraries too)
        self.type_params: set[str] = set()

    def run(self) -> FileExtraction:
        tree = scan.parse(GRAMMAR, self.source)
        root = tree.root_node
        found = scopes.captures_by_name(GRAMMAR, _REFERENCES, root)
        self.comments = scopes.Comments(found.get("comment", []), self.source)
        self.type_params = {base.text(n, self.source) for n in found.get("type_param", [])}
        library = _Draft(self.library, "library", root, whole_file=True, namespace=posixpath.dirname(self.library) or None)
        self.drafts.append(library)
        self._members(root.children, library)
        self._references(found)
        kept = self.drafts if self.source.strip() else []  # a blank file has nothing to retrieve
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in kept)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    # -- declarations ----------------------------------------------------------------------

    def _members(self, children: list[Node], owner: _Draft) -> None:
        """The declarations among `children` (the file's or a class body's), which the grammar
        keeps flat: annotations, then a signature, then its body or `;`."""
        annotations: Node | None = None  # the first of the annotations right before the current node
        for index, node in enumerate(children):
            kind = node.type
            if kind == "annotation":
                annotations = annotations or node
                continue
            first, annotations = annotations or node, None
            if kind in _CLASS_LIKE:
                self._class_like(node, owner)
            elif kind in ("method_signature", "declaration") or (kind in _SIGNATURES and owner.type == "library"):
                inner = node if kind in _SIGNATURES else next((c for c in node.named_children if c.type in _SIGNATURES), None)
                following = children[index + 1] if index + 1 < len(children) else None
                body = following if following is not None and following.type in ("function_body", ";") else None
                if inner is not None:
                    self._callable(node, inner, first, body, owner)
            elif kind == "type_alias":
                name_node = next((c for c in node.named_children if c.type in ("type_identifier", "identifier")), None)
                if name_node is not None:
                    name = base.text(name_node, self.source)
                    self._new(node, name, "type_alias", owner, first, None)
                    self.types.add(name)
            elif kind == "library_name":  # `library a.b;`, or `library;` to carry the library's docs
                if node.named_child_count:
                    owner.metadata["name"] = base.text(node.named_children[-1], self.source)
                owner.docstring = owner.docstring or self._docs(first)
            elif kind in ("import_or_export", "part_directive", "part_of_directive"):
                self._directive(node, owner)

    def _new(self, node: Node, name: str, unit_type: str, owner: _Draft, first: Node, last: Node | None) -> _Draft:
        if owner.type == "library":
            identifier = self.unique(f"{self.library}:{name}", unit_type)
            self.declared.setdefault(name, identifier)
        else:
            identifier = self.unique(f"{owner.identifier}.{name}", unit_type)
            owner.members.add(name)
        draft = _Draft(identifier, unit_type, node, owner.identifier, owner.identifier, first=first, last=last,
                       outer=owner if owner.type != "library" else None)
        stop = last.start_byte if last is not None and last.type == "function_body" else (last or node).end_byte
        draft.signature = base.one_line(self.source[node.start_byte : stop].decode("utf-8", "replace")).rstrip(";").rstrip()
        draft.docstring = self._docs(first)
        self.drafts.append(draft)
        return draft

    def _docs(self, node: Node) -> str | None:
        return base.clean_comment(self.comments.text_above(node.start_point[0]))

    def _class_like(self, node: Node, owner: _Draft) -> None:
        kind = node.type
        unit_type = _CLASS_LIKE[kind]
        name_node = node.child_by_field_name("name")
        if name_node is None and kind == "mixin_declaration":
            name_node = next((c for c in node.named_children if c.type == "identifier"), None)
        on = node.child_by_field_name("class") if kind == "extension_declaration" else None
        if name_node is not None:
            name = base.text(name_node, self.source)
        elif on is not None:  # `extension on String`: named after the type it extends
            name = base.text(on, self.source).partition("<")[0]
        else:
            return
        body = node.child_by_field_name("body") or next((c for c in node.named_children if c.type in _BODIES), None)
        header = next((c for c in node.children if c.type != "annotation"), node)
        draft = self._new(node, name, unit_type, owner, node, None)
        stop = body.start_byte if body is not None else node.end_byte
        draft.signature = base.one_line(self.source[header.start_byte : stop].decode("utf-8", "replace"))
        if name_node is not None:
            self.types.add(name)
        modifiers = [c.type for c in node.children if c.type in _CLASS_MODIFIERS] if kind == "class_definition" else []
        if modifiers:
            draft.metadata["modifiers"] = modifiers
        if on is not None:
            draft.metadata["on"] = base.text(on, self.source)
            draft.heritage.append(("code_reference", on))
        self._heritage(node, draft)
        if body is None:
            return
        if kind == "enum_declaration":
            draft.metadata["values"] = [
                base.text(c.child_by_field_name("name"), self.source) for c in body.named_children if c.type == "enum_constant"
            ]
        self._members(body.children, draft)

    def _heritage(self, node: Node, draft: _Draft) -> None:
        """`extends` (and a mixin's `on`) as superclass, `with` as include, `implements`."""
        clauses: list[tuple[str, Node]] = []
        for child in node.named_children:
            if child.type == "superclass":  # `extends A with M, N`
                clauses.extend(("superclass", c) for c in child.named_children if c.type == "type_identifier")
                for mixins in (c for c in child.named_children if c.type == "mixins"):
                    clauses.extend(("include", c) for c in mixins.named_children if c.type == "type_identifier")
            elif child.type == "mixins":
                clauses.extend(("include", c) for c in child.named_children if c.type == "type_identifier")
            elif child.type == "interfaces":
                clauses.extend(("implements", c) for c in child.named_children if c.type == "type_identifier")
            elif child.type == "type_identifier" and node.type == "mixin_declaration":
                clauses.append(("superclass", child))  # `mixin M on Base`
        for via, type_node in clauses:
            if via == "superclass" and draft.superclass is None:
                draft.superclass = base.text(type_node, self.source)
        draft.heritage.extend(clauses)  # resolved once every declaration of the file is known

    def _callable(self, node: Node, inner: Node, first: Node, body: Node | None, owner: _Draft) -> None:
        kind = inner.type
        unit_type = _SIGNATURES[kind]
        metadata: dict[str, object] = {}
        if unit_type == "constructor":
            names = [base.text(c, self.source) for c in inner.named_children if c.type == "identifier"]
            if not names or owner.type == "library":
                return
            name = names[1] if len(names) > 1 else "new"
            if kind == "factory_constructor_signature" or kind == "redirecting_factory_constructor_signature":
                metadata["factory"] = True
            if kind == "constant_constructor_signature":
                metadata["const"] = True
            if kind == "redirecting_factory_constructor_signature" or any(c.type == "redirection" for c in node.named_children):
                metadata["redirects"] = True
        elif kind == "operator_signature":
            start = next((c.end_byte for c in inner.children if c.type == "operator"), inner.start_byte)
            stop = next((c.start_byte for c in inner.children if c.type == "formal_parameter_list"), inner.end_byte)
            name = "operator" + "".join(self.source[start:stop].decode("utf-8", "replace").split())
            metadata["operator"] = True
        else:
            name = base.text(inner.child_by_field_name("name"), self.source)
            if not name:
                return
            if unit_type == "setter":
                name += "="
            if unit_type == "function" and owner.type != "library":
                unit_type = "method"
        children = {c.type for c in node.children} | {c.type for c in inner.children}
        if "static" in children:
            metadata["static"] = True
        if "external" in children:
            metadata["external"] = True
        elif (body is None or body.type == ";") and unit_type != "constructor" and owner.type != "library":
            metadata["abstract"] = True
        last = body if body is not None else node
        draft = self._new(node, name, unit_type, owner, first, last)
        draft.metadata = metadata

    def _directive(self, node: Node, library: _Draft) -> None:
        """An `import`, `export` or `part`: an edge of the library; an import, a part and the
        library a part belongs to are where the names the file uses may come from."""
        named = node.named_children
        if node.type == "part_of_directive" and named and named[-1].type != "uri":  # `part of a.b;`
            library.metadata["part_of"] = base.text(named[-1], self.source)
            return
        uri = next((n for n in base.walk(node) if n.type == "uri"), None)
        if uri is None:
            return
        written = base.text(uri, self.source).strip().strip("'\"")
        libraries = uri_candidates(written, self.file_path)
        if node.type != "import_or_export":  # a part, or the library of a part: the same library
            if node.type == "part_of_directive":
                library.metadata["part_of"] = written
            if libraries:
                self.imports.insert(0, _Import(libraries, None, None, frozenset(), part=True))
        spec = next((n for n in base.walk(node) if n.type == "import_specification"), None)
        if spec is not None:
            prefix = next((base.text(c, self.source) for c in spec.named_children if c.type == "identifier"), None)
            if prefix is not None:
                self.prefixes.add(prefix)
            show: set[str] | None = None
            hide: set[str] = set()
            for combinator in (c for c in spec.named_children if c.type == "combinator"):
                names = {base.text(c, self.source) for c in combinator.named_children if c.type == "identifier"}
                if combinator.child(0) is not None and combinator.children[0].type == "show":
                    show = names if show is None else show & names
                else:
                    hide |= names
            if libraries:
                self.imports.append(_Import(libraries, prefix, frozenset(show) if show is not None else None, frozenset(hide)))
        if libraries and node.type != "part_of_directive":
            via = "include" if node.type == "part_directive" else "import"
            library.deps.append(Dependency(libraries[0], via, lookup=libraries))

    # -- references ------------------------------------------------------------------------

    def _references(self, found: dict[str, list[Node]]) -> None:
        spans = scopes.Spans([
            (0, len(self.source)) if d.whole_file else ((d.first or d.node).start_byte, (d.last or d.node).end_byte)
            for d in self.drafts
        ])
        for draft in self.drafts:
            for via, type_node in draft.heritage:
                self._type_reference(type_node, draft, via)
        for kind in ("type", "call", "member", "super_member"):
            nodes = found.get(kind, [])
            for node, index in zip(nodes, spans.owners([n.start_byte for n in nodes]), strict=True):
                draft = self.drafts[index if index is not None else 0]
                if kind == "type":
                    parent = node.parent
                    if parent is None or parent.type in _HERITAGE_PARENTS or parent.type == "type_parameter" \
                            or (parent.type == "type_alias" and parent.named_child(0) == node):
                        continue
                    self._type_reference(node, draft)
                elif kind == "call":
                    self._call(base.text(node, self.source), draft)
                elif kind == "member":
                    selector = node.parent.parent if node.parent is not None else None
                    receiver = selector.prev_named_sibling if selector is not None else None
                    if receiver is not None and receiver.type in ("identifier", "this"):
                        self._member_call(base.text(receiver, self.source), base.text(node, self.source), draft)
                else:
                    self._member_call("super", base.text(node, self.source), draft)

    def _prefix_before(self, type_node: Node) -> str | None:
        """The import prefix written before a type name (`money.Money`), or None."""
        dot = type_node.prev_sibling
        before = dot.prev_sibling if dot is not None and dot.type == "." else None
        if before is None or before.type != "type_identifier":
            return None
        written = base.text(before, self.source)
        return written if written in self.prefixes else None

    def _imported(self, name: str, prefix: str | None) -> tuple[str, ...]:
        """`<library>:<name>` in each import that may provide `name` (through `prefix`, or unprefixed);
        a `_private` name is never imported, but a part shares it."""
        if name[:1] == "_":
            return tuple(f"{library}:{name}" for i in self.imports if i.part for library in i.libraries)
        return tuple(dict.fromkeys(
            f"{library}:{name}" for i in self.imports if i.prefix == prefix and i.provides(name.partition(".")[0])
            for library in i.libraries
        ))

    def _type_dependency(self, name: str, via: str, prefix: str | None) -> Dependency | None:
        if prefix is None and name in self.types:
            target = self.declared[name]
            return Dependency(target, via, lookup=(target,))
        if prefix is None and (name in _PRELUDE or name in self.type_params or name in self.prefixes):
            return None
        candidates = self._imported(name, prefix)
        return Dependency(candidates[0], via, lookup=candidates) if candidates else None

    def _type_reference(self, node: Node, draft: _Draft, via: str = "code_reference") -> None:
        name = base.text(node, self.source).partition("<")[0]
        dependency = self._type_dependency(name, via, self._prefix_before(node))
        if dependency is not None:
            draft.deps.append(dependency)

    def _classes(self, draft: _Draft | None) -> list[_Draft]:
        """The class-like units around a unit, innermost first."""
        found: list[_Draft] = []
        while draft is not None:
            if draft.type in _CLASS_LIKE.values():
                found.append(draft)
            draft = draft.outer
        return found

    def _call(self, name: str, draft: _Draft) -> None:
        for scope in self._classes(draft):
            if name in scope.members:
                target = f"{scope.identifier}.{name}"
                draft.deps.append(Dependency(target, "calls", lookup=(target,)))
                return
        if name[:1].isupper():  # a constructor: a reference to the class
            dependency = self._type_dependency(name, "code_reference", None)
        elif name in self.declared:
            target = self.declared[name]
            dependency = Dependency(target, "calls", lookup=(target,))
        elif name in _PRELUDE:
            return
        else:
            candidates = self._imported(name, None)
            dependency = Dependency(candidates[0], "calls", lookup=candidates) if candidates else None
        if dependency is not None:
            draft.deps.append(dependency)

    def _member_call(self, receiver: str, member: str, draft: _Draft) -> None:
        candidates: tuple[str, ...] = ()
        via = "calls"
        classes = self._classes(draft)
        if receiver == "this":
            candidates = (f"{classes[0].identifier}.{member}",) if classes else ()
        elif receiver == "super":
            written = classes[0].superclass if classes else None
            if written is not None and written in self.types:
                candidates = (f"{self.declared[written]}.{member}",)
            elif written is not None:
                candidates = self._imported(f"{written}.{member}", None)
        elif receiver in self.prefixes:  # `prefix.f()`, `prefix.Type()`
            via = "code_reference" if member[:1].isupper() else "calls"
            candidates = self._imported(member, receiver)
        elif receiver in self.types:
            candidates = (f"{self.declared[receiver]}.{member}",)
        elif receiver[:1].isupper() and receiver not in _PRELUDE and receiver not in self.type_params:
            candidates = self._imported(f"{receiver}.{member}", None)
        if candidates:
            draft.deps.append(Dependency(candidates[0], via, lookup=candidates))


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Dart file: the library first, then its declarations in source order."""
    try:
        return _Extractor(file_path, source, layout).run()
    except scan.ParseTimeoutError as error:
        return scan.parse_timeout(file_path, LANGUAGE, error)
