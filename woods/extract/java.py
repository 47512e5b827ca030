"""Java extraction: classes, interfaces, enums, records, annotation types, methods and constructors.

Identifiers use the `package` declaration, not the path: `com.acme.billing.Invoice`, nested
`com.acme.billing.Invoice.Line`, methods `com.acme.billing.Invoice#charge`, constructors
`com.acme.billing.Invoice#Invoice`. When a type declares several methods (or constructors) with
one name, each of them gets its parameter types appended — `#charge(int,String...)`,
`#charge(List<Line>)` — written as in the source with whitespace removed; a name declared once
keeps the short form. Annotation types (`@interface`) are units of type "interface" with
`metadata["annotation"] = True`. Methods of anonymous classes are not units; their references
belong to the enclosing method. Any other repeated (identifier, type) in one file gets `#2` ….

Dependencies: imports (`via: "import"`, a wildcard import names its package), `extends`
(`superclass`) and `implements`, type references (`code_reference`) and calls, with candidates
built from nested types of the file, single-type imports, the file's package and wildcard imports,
in Java's own lookup order. `java.lang` names and type parameters are never edges.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node

from woods.extract import base, preorder
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction, Unit

LANGUAGE = "java"
# Comment node types of the grammar (Javadoc is a block comment).
_COMMENTS = frozenset({"block_comment", "line_comment"})

# java.lang (implicitly imported) and boxed types: references to them never name project code.
_JAVA_LANG = frozenset(
    {
        "Object", "String", "StringBuilder", "StringBuffer", "Integer", "Long", "Short", "Byte", "Double",
        "Float", "Boolean", "Character", "Number", "Math", "Void", "System", "Thread", "Runnable",
        "Iterable", "Comparable", "CharSequence", "Class", "Enum", "Record", "Exception", "RuntimeException",
        "Error", "Throwable", "IllegalArgumentException", "IllegalStateException", "NullPointerException",
        "UnsupportedOperationException", "IndexOutOfBoundsException", "ArithmeticException", "Override",
        "Deprecated", "SuppressWarnings", "FunctionalInterface", "SafeVarargs", "AutoCloseable", "Cloneable",
        "InterruptedException", "CloneNotSupportedException",
    }
)
# Declaration node → unit type; annotation types (`@interface`) are interfaces with a flag.
_TYPE_DECLARATIONS = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "annotation_type_declaration": "interface",
}
_CALLABLES = frozenset({"method_declaration", "constructor_declaration", "compact_constructor_declaration"})
_TYPE_UNITS = frozenset(_TYPE_DECLARATIONS.values())

# What the declaration walk (`_Extractor._replay`) needs, in one query; capture indexes follow the
# order of the names below (an enclosing kind first, for nodes that start together).
_WALK = """
[(class_declaration) (interface_declaration) (enum_declaration) (record_declaration)
 (annotation_type_declaration)] @type
[(method_declaration) (constructor_declaration) (compact_constructor_declaration)] @callable
[(package_declaration) (import_declaration) (superclass) (super_interfaces) (extends_interfaces)] @skip
(scoped_type_identifier) @scoped_type_name
(type_identifier) @type_name
(method_invocation) @call
"""
_TYPE, _CALLABLE, _SKIP, _SCOPED_TYPE_NAME, _TYPE_NAME, _CALL = range(6)
_NO_END = 1 << 62  # the end of no scope
_NO_NAMES: frozenset[str] = frozenset()

# Fast paths for files that parse without errors, where the grammar's shapes hold (a declaration's
# `modifiers` is its first child, a call without an object starts with its name …): they read
# names and words from the source bytes instead of asking for child nodes, and fall back to the
# node-by-node reading whenever the text is not plainly what they expect. A file with syntax
# errors always takes the node-by-node reading.
# The keyword children of the grammar's `modifiers` rule (its other children are annotations).
_MODIFIER_WORDS = frozenset(
    {
        "public", "protected", "private", "abstract", "static", "final", "strictfp", "default", "synchronized",
        "native", "transient", "volatile", "sealed", "non-sealed",
    }
)
# A marker annotation written without spaces or comments (`@Override`, `@a.b.Marker`).
_MARKER = re.compile(r"@(?:[^\W\d]|\$)[\w$]*(?:\.(?:[^\W\d]|\$)[\w$]*)*")
# A parameter's name, with C-style dimensions glued to it (`a`, `rows[]`).
_PARAMETER_NAME = re.compile(r"(?:[^\W\d]|\$)[\w$]*(?:\[\])*")
# What a parameter list read from its text may not hold: annotations, comments, unicode escapes
# and parentheses (annotation arguments) need the nodes.
_PARAMETER_UNPLAIN = re.compile(rb"[@/\\(]")
# `import a.b.C;`, `import static a.b.C.m;`, `import a.b.*;` with no comment inside.
_PLAIN_IMPORT = re.compile(rb"import\s+(static\s+)?([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(\.\*)?\s*;")


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Java unit under construction: its enclosing type (`outer`), and what resolving its
    references needs — type parameters, overloaded member names, members by name, the references
    themselves and the chain of enclosing types."""

    outer: _Draft | None = None
    type_params: frozenset[str] = _NO_NAMES
    overloaded: Set[str] = _NO_NAMES  # member names declared more than once
    members: dict[str, list[str]] = field(default_factory=dict)  # method name → identifiers
    refs: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, via, dotted or name)
    chain: tuple[str, ...] = ()  # a type's identifier, then its enclosing types', innermost first


def _members(body: Node | None) -> list[Node]:
    if body is None:
        return []
    found: list[Node] = []
    for child in body.named_children:
        if child.type == "enum_body_declarations":
            found.extend(child.named_children)
        else:
            found.append(child)
    return found


class _Extractor(base.FileExtractor[_Draft]):
    """One iterative walk; type references and calls go to the innermost unit."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.package: str | None = None
        self.single_imports: dict[str, str] = {}  # simple name → qualified type
        self.static_imports: dict[str, str] = {}  # member name → qualified owner type
        self.wildcards: list[str] = []
        self.import_deps: list[Dependency] = []
        self.declared: dict[str, list[str]] = {}  # simple type name → qualified names in this file
        self.identifiers: set[str] = set()
        # Resolved references by the id of their enclosing type, then (kind, via, spelling):
        # `_resolve`'s answer, which depends on nothing else (type parameters aside), with the
        # dependency's (target, via) de-duplication key.
        self.resolved: dict[int, dict[tuple[str, str, str], tuple[Dependency | None, str | None, tuple[str, str]]]] = {}
        self.siblings = preorder.Siblings()
        # Whether the tree has no syntax error, so the fast paths may rely on the grammar's shapes.
        self.clean = False
        # Start byte of each declaration in a type body (or at the top) → (its parent's children,
        # its index among them, its name when it is a callable): its docstring is read from that
        # list and its name read once. Only filled for clean trees, where no two declarations
        # start together.
        self.places: dict[int, tuple[list[Node], int, str]] = {}

    def run(self) -> FileExtraction:
        tree = base.parse("java", self.source)
        root = tree.root_node
        self.clean = not root.has_error
        children = root.children
        for index, child in enumerate(children):
            kind = child.type
            if kind == "package_declaration":
                name = next((c for c in child.named_children if c.type in ("scoped_identifier", "identifier")), None)
                self.package = base.text(name, self.source) if name is not None else None
            elif kind == "import_declaration":
                self._import(child)
            elif kind in _TYPE_DECLARATIONS and self.clean:
                self.places[child.start_byte] = (children, index, "")
        self._replay(root)
        self.identifiers = {d.identifier for d in self.drafts}
        units = tuple(self._freeze(d) for d in self.drafts)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    def _replay(self, root: Node) -> None:
        """The declaration walk, replayed over one query's captures (`preorder`).

        It is the pre-order walk every unit and reference comes from: skipped subtrees (package,
        imports, heritage clauses, which `_heritage` reads) hide everything inside them; type
        declarations are units wherever they are; a callable is one when the innermost unit around
        it is a type (methods of anonymous classes in a method belong to that method); type names
        (a scoped one hiding its parts) and method calls go to the innermost unit.
        """
        # Open scopes, outermost first: (node, end byte, the unit owning what is inside, whether
        # what is inside is hidden). The innermost one's values are kept in locals, and `enter` is
        # only asked when a capture is not plainly inside it.
        stack: list[tuple[Node, int, _Draft | None, bool]] = []
        top_end, owner, hidden = _NO_END, None, False
        source = self.source
        clean = self.clean
        for start, negative_end, kind, node in preorder.captures("java", _WALK, root):
            end = -negative_end
            if start >= top_end or start == end:
                index = preorder.enter(stack, node, start, end)
                top_end, owner, hidden = (stack[-1][1], stack[-1][2], stack[-1][3]) if stack else (_NO_END, None, False)
                if index != len(stack) - 1:  # an empty node outside the innermost scope
                    if index >= 0 and stack[index][3] or kind != _TYPE_NAME:
                        continue
                    node_owner = stack[index][2] if index >= 0 else None
                    if node_owner is not None:
                        node_owner.refs.append(("type", "code_reference", ""))
                    continue
            if hidden:
                continue
            if kind == _TYPE_NAME:
                if owner is not None:
                    owner.refs.append(("type", "code_reference", source[start:end].decode("utf-8", "replace")))
            elif kind == _CALL:
                if owner is None:
                    continue
                if clean:  # `_call`'s answer for the common shapes, read without the object node
                    name_node = node.child_by_field_name("name")
                    if name_node is not None:
                        name_start = name_node.start_byte
                        if name_start == start:  # no object: the name comes first
                            owner.refs.append(
                                ("bare_call", "calls", source[name_start : name_node.end_byte].decode("utf-8", "replace"))
                            )
                            continue
                        # The object comes first, and only `this` and a name starting with a
                        # capital make a reference: one starting with any other ASCII byte makes none.
                        first = source[start]
                        if first < 0x80 and first != 0x74 and not 0x41 <= first <= 0x5A:  # t, A-Z
                            continue
                self._call(node, owner)
            elif kind == _TYPE:
                owner = self._type(node, owner)
                stack.append((node, end, owner, False))
                top_end = end
            elif kind == _CALLABLE:
                if owner is not None and owner.type in _TYPE_UNITS:
                    owner = self._callable(node, owner)
                    stack.append((node, end, owner, False))
                    top_end = end
            else:  # a hidden subtree, or a scoped type name, whose parts are hidden
                if kind == _SCOPED_TYPE_NAME and owner is not None:
                    owner.refs.append(("type", "code_reference", "".join(base.text(node, source).split())))
                stack.append((node, end, owner, True))
                top_end, hidden = end, True

    # -- declarations ----------------------------------------------------------------------

    def _import(self, node: Node) -> None:
        plain = _PLAIN_IMPORT.fullmatch(self.source, node.start_byte, node.end_byte) if self.clean else None
        if plain is not None:
            name = plain[2].decode()
            is_static = plain[1] is not None
            wildcard = plain[3] is not None
        else:
            name_node = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
            if name_node is None:
                return
            name = base.text(name_node, self.source)
            kinds = {c.type for c in node.children}
            is_static = "static" in kinds
            wildcard = "asterisk" in kinds
        if wildcard:
            if not is_static:
                self.wildcards.append(name)
            target = name
        elif is_static:
            owner, _, member = name.rpartition(".")
            self.static_imports[member] = owner
            target = owner
        else:
            self.single_imports[name.rpartition(".")[2]] = name
            target = name
        self.import_deps.append(Dependency(target, "import", lookup=(target,)))

    def _enclosing_type(self, owner: _Draft | None) -> _Draft | None:
        while owner is not None and owner.type not in _TYPE_DECLARATIONS.values():
            owner = owner.outer
        return owner

    def _type(self, node: Node, owner: _Draft | None) -> _Draft:
        name = base.text(node.child_by_field_name("name"), self.source)
        outer = self._enclosing_type(owner)
        prefix = outer.identifier if outer is not None else self.package
        unit_type = _TYPE_DECLARATIONS[node.type]
        identifier = self.unique(f"{prefix}.{name}" if prefix else name, unit_type)
        self.declared.setdefault(name, []).append(identifier)
        draft = _Draft(identifier, unit_type, node, outer.identifier if outer is not None else None, prefix, outer=outer)
        draft.chain = (identifier, *outer.chain) if outer is not None else (identifier,)
        body = node.child_by_field_name("body")
        draft.signature = self._header(node, body)
        draft.docstring = self._docstring(node)
        draft.metadata = self._modifiers(node)
        if node.type == "annotation_type_declaration":
            draft.metadata["annotation"] = True
        draft.type_params = self._type_params(node, outer.type_params if outer is not None else _NO_NAMES)
        if outer is None:
            draft.deps = self.import_deps  # read, never changed
        counts: dict[str, int] = {}
        if self.clean:
            for member_name in self._register(body.children if body is not None else []):
                counts[member_name] = counts.get(member_name, 0) + 1
        else:
            for member in _members(body):
                if member.type in _CALLABLES:
                    member_name = base.text(member.child_by_field_name("name"), self.source)
                    counts[member_name] = counts.get(member_name, 0) + 1
        draft.overloaded = {n for n, c in counts.items() if c > 1}
        self._heritage(node, draft)
        self.drafts.append(draft)
        return draft

    def _register(self, children: list[Node]) -> list[str]:
        """The names of the callables among a type body's `children` (an enum's declarations
        included), each declaration's place noted in `places` (clean trees only)."""
        names: list[str] = []
        places = self.places
        for index, child in enumerate(children):
            kind = child.type
            if kind in _CALLABLES:
                name = base.text(child.child_by_field_name("name"), self.source)
                names.append(name)
                places[child.start_byte] = (children, index, name)
            elif kind in _TYPE_DECLARATIONS:
                places[child.start_byte] = (children, index, "")
            elif kind == "enum_body_declarations":
                names += self._register(child.children)
        return names

    def _docstring(self, node: Node) -> str | None:
        """The cleaned comment block directly above `node` (`base.leading_comment`), or None.

        In a clean tree, a comment sibling right above a declaration ends on its line or the one
        before, so when neither holds `//` or `*/` there is none and no node is asked for."""
        source = self.source
        if self.clean:
            start = node.start_byte
            above = source.rfind(b"\n", 0, max(source.rfind(b"\n", 0, start), 0)) + 1
            if source.find(b"*/", above, start) < 0 and source.find(b"//", above, start) < 0:
                return None
            place = self.places.get(start)
            if place is not None:
                return base.clean_comment(base.comment_block_before(place[0], place[1], node, source, _COMMENTS))
        return base.clean_comment(self.siblings.leading_comment(node, source, _COMMENTS))

    def _heritage(self, node: Node, draft: _Draft) -> None:
        superclass = node.child_by_field_name("superclass")
        interfaces = node.child_by_field_name("interfaces")
        # Only interfaces have `extends_interfaces` (in a clean tree).
        extends = next((c for c in node.named_children if c.type == "extends_interfaces"), None) if (
            not self.clean or node.type == "interface_declaration"
        ) else None
        for holder, via in ((superclass, "superclass"), (interfaces, "implements"), (extends, "superclass")):
            if holder is None:
                continue
            for ref in base.walk(holder):
                if ref.type in ("type_identifier", "scoped_type_identifier") and (
                    ref.parent is None or ref.parent.type != "scoped_type_identifier"
                ):
                    draft.refs.append(("type", via, "".join(base.text(ref, self.source).split())))
                    key = "extends" if via == "superclass" else "implements"
                    draft.metadata.setdefault(key, []).append(base.text(ref, self.source))

    def _callable(self, node: Node, owner: _Draft) -> _Draft:
        place = self.places.get(node.start_byte) if self.clean else None
        name = place[2] if place is not None else base.text(node.child_by_field_name("name"), self.source)
        unit_type = "method" if node.type == "method_declaration" else "constructor"
        suffix = ""
        parameters = self._parameter_types(node, owner)
        if name in owner.overloaded:
            suffix = f"({','.join(parameters)})"
        identifier = self.unique(f"{owner.identifier}#{name}{suffix}", unit_type)
        owner.members.setdefault(name, []).append(identifier)
        draft = _Draft(identifier, unit_type, node, owner.identifier, owner.identifier, outer=owner)
        body = node.child_by_field_name("body")
        header = self._header(node, body)
        draft.signature = header[:-1].rstrip() if header.endswith(";") else header
        draft.docstring = self._docstring(node)
        draft.metadata = self._modifiers(node)
        draft.metadata["parameters"] = parameters
        return_type = node.child_by_field_name("type")
        if return_type is not None:
            draft.metadata["return_type"] = "".join(base.text(return_type, self.source).split())
        if body is None and unit_type == "method":
            draft.metadata["abstract"] = True
        draft.type_params = self._type_params(node, owner.type_params)
        self.drafts.append(draft)
        return draft

    def _parameter_types(self, node: Node, owner: _Draft) -> list[str]:
        params = node.child_by_field_name("parameters")
        if params is None and node.type == "compact_constructor_declaration":
            params = owner.node.child_by_field_name("parameters")
        if self.clean and params is not None:
            plain = _plain_parameter_types(self.source[params.start_byte + 1 : params.end_byte - 1])
            if plain is not None:
                return plain
        types: list[str] = []
        for param in params.named_children if params is not None else ():
            if param.type == "formal_parameter":
                types.append("".join(base.text(param.child_by_field_name("type"), self.source).split()))
            elif param.type == "spread_parameter":
                type_node = next((c for c in param.named_children if c.type not in ("modifiers", "variable_declarator")), None)
                types.append("".join(base.text(type_node, self.source).split()) + "...")
        return types

    def _type_params(self, node: Node, enclosing: frozenset[str]) -> frozenset[str]:
        """The type parameters `node` declares and those of the declarations around it."""
        params = node.child_by_field_name("type_parameters")
        if params is None:
            return enclosing
        names: set[str] = set(enclosing)
        for param in params.named_children:
            ident = next((c for c in param.named_children if c.type in ("type_identifier", "identifier")), None)
            if ident is not None:
                names.add(base.text(ident, self.source))
        return frozenset(names)

    def _modifiers(self, node: Node) -> dict[str, Any]:
        modifiers: Node | None
        if self.clean:  # `modifiers` can only be the first child
            modifiers = node.child(0)
            if modifiers is None or modifiers.type != "modifiers":
                return {"modifiers": [], "annotations": []}
            plain = _plain_modifiers(self.source[modifiers.start_byte : modifiers.end_byte])
            if plain is not None:
                return plain
        else:
            modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        words: list[str] = []
        annotations: list[str] = []
        for child in modifiers.children if modifiers is not None else ():
            if child.type in ("marker_annotation", "annotation"):
                annotations.append(base.one_line(base.text(child, self.source)).lstrip("@"))
            elif not child.is_named or child.type in ("public", "private", "protected", "static", "final"):
                words.append(base.text(child, self.source))
        return {"modifiers": words, "annotations": annotations}

    def _header(self, node: Node, body: Node | None) -> str:
        stop = body.start_byte if body is not None else node.end_byte
        return base.one_line(self.source[node.start_byte : stop].decode("utf-8", "replace"))

    # -- references ------------------------------------------------------------------------

    def _candidates(self, dotted: str, scope: _Draft | None) -> list[str]:
        """Qualified names a written type name may mean inside the type `scope`, in Java's lookup order."""
        root, _, rest = dotted.partition(".")
        if rest and root[:1].islower():
            return [dotted]  # already fully qualified (`java.io.Serializable`)
        tail = f".{rest}" if rest else ""
        out: list[str] = []
        identifiers = self.identifiers
        for enclosing in scope.chain if scope is not None else ():  # member types of enclosing types first
            nested = f"{enclosing}.{dotted}"
            if nested in identifiers:  # (when this file has them)
                out.append(nested)
        out.extend(f"{q}{tail}" for q in self.declared.get(root, ()))
        if root in self.single_imports:
            out.append(self.single_imports[root] + tail)
        out.append(f"{self.package}.{dotted}" if self.package else dotted)
        out.extend(f"{w}.{dotted}" for w in self.wildcards)
        return list(dict.fromkeys(out))

    def _preferred(self, dotted: str, candidates: list[str]) -> str:
        root, _, rest = dotted.partition(".")
        tail = f".{rest}" if rest else ""
        if root in self.declared:
            return self.declared[root][0] + tail
        if root in self.single_imports:
            return self.single_imports[root] + tail
        if rest and root[:1].islower():
            return dotted
        return f"{self.package}.{dotted}" if self.package else candidates[-1]

    def _call(self, node: Node, owner: _Draft) -> None:
        name = base.text(node.child_by_field_name("name"), self.source)
        obj = node.child_by_field_name("object")
        if obj is None:
            owner.refs.append(("bare_call", "calls", name))
            return
        kind = obj.type
        if kind == "this":
            owner.refs.append(("own_call", "calls", name))
        elif kind in ("identifier", "field_access", "scoped_identifier"):
            written = base.text(obj, self.source)  # starts with no whitespace: `dotted` starts alike
            if written[:1].isupper():  # else a variable or a field, never a type (`_resolve`)
                dotted = "".join(written.split())
                owner.refs.append(("static_call", "calls", dotted + "#" + name))

    def _resolve(self, kind: str, via: str, spelled: str, scope: _Draft | None) -> tuple[Dependency | None, str | None]:
        """The dependency a reference inside the type `scope` means (None when it names no
        project code), and the name that would make it a type parameter's instead (None when
        none can): what a reference means depends on nothing else once every unit is known."""
        if kind == "type":
            if "<" in spelled or "@" in spelled:
                return None, None
            root = spelled.partition(".")[0]
            if root in _JAVA_LANG and root not in self.declared:
                return None, None
            candidates = self._candidates(spelled, scope)
            return Dependency(self._preferred(spelled, candidates), via, lookup=tuple(candidates)), root
        if kind == "static_call":
            dotted, _, name = spelled.partition("#")
            root = dotted.partition(".")[0]
            if not root[:1].isupper() or root in _JAVA_LANG:
                return None, None  # a variable or a field, not a type
            candidates = [f"{c}#{name}" for c in self._candidates(dotted, scope)]
            return Dependency(f"{self._preferred(dotted, candidates)}#{name}", via, lookup=tuple(candidates)), root
        if kind == "bare_call" and spelled in self.static_imports:
            target = f"{self.static_imports[spelled]}#{spelled}"
            return Dependency(target, via, lookup=(target,)), None
        if scope is None:
            return None, None
        known = scope.members.get(spelled) or [f"{scope.identifier}#{spelled}"]
        return Dependency(known[0], via, lookup=tuple(known)), None

    def _freeze(self, draft: _Draft) -> Unit:
        scope = draft if draft.type in _TYPE_UNITS else draft.outer  # a callable's owner is a type
        resolved = self.resolved.get(id(scope))
        if resolved is None:
            resolved = self.resolved[id(scope)] = {}
        type_params = draft.type_params
        identifier = draft.identifier
        seen: set[tuple[str, str]] = set()
        deps: list[Dependency] = []
        for dep in draft.deps:
            key = (dep.target, dep.via)
            if key not in seen and dep.target != identifier:
                seen.add(key)
                deps.append(dep)
        # A repeated reference resolves to the same dependency, which de-duplication drops anyway.
        for ref in dict.fromkeys(draft.refs):
            found = resolved.get(ref)
            if found is None:
                resolved_dep, root = self._resolve(*ref, scope)
                key = (resolved_dep.target, resolved_dep.via) if resolved_dep is not None else ("", "")
                found = resolved[ref] = (resolved_dep, root, key)
            resolved_dep, root, key = found
            if resolved_dep is None or (root is not None and root in type_params):
                continue
            if key not in seen and key[0] != identifier:
                seen.add(key)
                deps.append(resolved_dep)
        return base.built(draft, self.file_path, LANGUAGE, self.source, tuple(deps))


def _plain_modifiers(spelled: bytes) -> dict[str, Any] | None:
    """`_Extractor._modifiers` read from the text of a clean `modifiers` node holding only
    keywords and marker annotations; None when it holds anything else (arguments, comments)."""
    if b"(" in spelled or b"/" in spelled:
        return None
    words: list[str] = []
    annotations: list[str] = []
    for token in spelled.decode("utf-8", "replace").split():
        if token in _MODIFIER_WORDS:
            words.append(token)
        elif token[:1] == "@" and _MARKER.fullmatch(token):
            annotations.append(token[1:])
        else:
            return None
    return {"modifiers": words, "annotations": annotations}


def _plain_parameter_types(inside: bytes) -> list[str] | None:
    """`_Extractor._parameter_types` read from the text between a clean parameter list's
    parentheses: each parameter is `final`s, its type, then its name, with whitespace between;
    None for anything else (annotations, comments, other modifiers, a receiver `this`, a name
    glued to its type), which the node-by-node reading handles."""
    if _PARAMETER_UNPLAIN.search(inside):
        return None
    text = inside.decode("utf-8", "replace")
    if not text.strip():
        return []
    types: list[str] = []
    pending: str | None = None  # a parameter cut at a comma inside type arguments
    for piece in text.split(","):
        pending = piece if pending is None else f"{pending},{piece}"
        if pending.count("<") != pending.count(">"):
            continue
        tokens = pending.split()
        pending = None
        if len(tokens) < 2 or tokens[-1] == "this" or not _PARAMETER_NAME.fullmatch(tokens[-1]):
            return None
        first = 0
        while first < len(tokens) - 1 and tokens[first] == "final":
            first += 1
        written = tokens[first:-1]
        if not written or any(token in _MODIFIER_WORDS for token in written):
            return None
        types.append("".join(written))
    return types if pending is None else None


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Java file: types outermost first, members in source order."""
    return _Extractor(file_path, source, layout).run()
