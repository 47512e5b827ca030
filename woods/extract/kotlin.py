"""Kotlin extraction: classes, interfaces, objects and companions, functions, properties, aliases.

Identifiers use the `package` header, not the path: `a.b.Invoice`, nested `a.b.Invoice.Line`,
members `a.b.Invoice.charge`, top-level functions `a.b.format`, companion objects
`a.b.Invoice.Companion` (or their own name), secondary constructors `a.b.Invoice.constructor`.
Extension functions and properties attach to the extended type: `fun Flow<T>.collect()` in
package `a.b` is `a.b.Flow.collect` (the receiver resolved through this file's declarations and
imports, else the package), with the receiver's identifier as `parent` and
`metadata["extension"]`. A repeated (identifier, type) in one file — overloads — gets `#2` ….

Units: `class` (data, sealed, open … in `metadata["modifiers"]`), `interface` (`fun interface`
and `annotation class` too, the latter with `metadata["annotation"]`, as in Java), `enum`,
`object` (companions with `metadata["companion"]`), `function`, `method` (abstract and interface
members too), `constructor`, `type_alias`, and `property` only for properties with a getter or
setter body — a stored property is a field, not code worth retrieving. Local functions, lambdas
and anonymous objects belong to the enclosing unit. A file with no unit (a `.kts` script, a file
of constants) gets one `file` unit with the path as identifier.

Dependencies: imports on the file's top-level units (`via: "import"`; a star import names its
package), supertypes (`superclass` for a constructor call `Base()`, and for every supertype of an
interface, as in Java; `implements` for the others), calls (`f()` on the enclosing classes and
their companions, explicit imports, the package and star imports; `Type.f()`; `this.f()`; a call
to a capitalised name is a constructor, recorded as a reference to the type) and type names
(`code_reference`), with candidates in Kotlin's lookup order. Type parameters and `kotlin.*`
basics are never edges.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field

from tree_sitter import Node, QueryCursor

from woods.extract import base, scan
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction, Unit

LANGUAGE = "kotlin"
GRAMMAR = "kotlin"

_COMMENTS = frozenset({"line_comment", "block_comment"})
# Implicitly imported `kotlin.*` names a reference never resolves to in project code.
_BUILTINS = frozenset(
    {
        "Any", "Nothing", "Unit", "Boolean", "Byte", "Short", "Int", "Long", "Float", "Double", "Char", "String",
        "Number", "Array", "List", "MutableList", "Set", "MutableSet", "Map", "MutableMap", "Collection",
        "Iterable", "Sequence", "Pair", "Triple", "Comparable", "Throwable", "Exception", "Error",
        "RuntimeException", "IllegalStateException", "IllegalArgumentException", "Lazy", "Result", "Function",
        "Suppress", "JvmStatic", "JvmField", "JvmName", "JvmOverloads", "Deprecated", "PublishedApi",
    }
)
# Unit types that can have supertypes (their references skip what is already a supertype edge).
_TYPE_UNITS = frozenset({"class", "interface", "enum", "object"})
# Children that are a declaration's body (its signature stops there).
_BODIES = frozenset({"function_body", "class_body", "enum_class_body"})
_START = operator.attrgetter("start_byte")
# A qualified name written without spaces, comments or backticks: split at its dots.
_PLAIN_DOTTED = re.compile(r"\w+(?:\.\w+)*")
# An import written plainly (`import a.b.C`, `import a.b.*`, `import a.b.C as D`): read from its
# text when the node holds no error; anything else (backticks, comments, `;`) takes its children.
_PLAIN_IMPORT = re.compile(
    rb"import[ \t]+([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:(\.\*)|[ \t]+as[ \t]+([A-Za-z_][A-Za-z0-9_]*))?"
)
_UNPARSED = ("", ())  # a `parsed` cache miss (None is a cached "no ref")
# A resolved reference: its edge and the edge's (target, via) de-duplication key.
_Edge = tuple[Dependency, tuple[str, str]]
_MISSING: _Edge = (Dependency("", ""), ("", ""))  # a `dependencies` cache miss (None is a cached "no edge")
_REFERENCES = """
(call_expression . (identifier) @ref)
(call_expression . (navigation_expression . [(identifier) (this_expression)] . (identifier) .) @ref)
(user_type) @ref
"""


# A declaration-level node waiting for the walk: (node, enclosing draft, its parent's children,
# its index among them).
_Open = tuple[Node, "_Draft | None", list[Node], int]


def _members(parent: Node, owner: _Draft | None) -> list[_Open]:
    """The named children of `parent` as walk entries, last first (the walk pops from the end)."""
    children = parent.children
    return [(children[i], owner, children, i) for i in range(len(children) - 1, -1, -1) if children[i].is_named]


@dataclass(slots=True)
class _Head:
    """What a declaration's children around its name say (see `_Extractor._head`)."""

    modifiers: list[str]
    annotations: list[str]
    type_params: frozenset[str]
    receiver: Node | None = None
    body: Node | None = None


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Kotlin unit under construction, with what its references are resolved against."""

    path: tuple[str, ...] = ()  # qualified name segments without the `#n` suffix
    classes: tuple[str, ...] = ()  # the enclosing classes' qualified names, innermost first
    type_params: frozenset[str] = frozenset()
    top: bool = False
    refs: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (kind, segments)


class _Extractor(base.FileExtractor[_Draft]):
    """One walk over the file and class bodies, then one reference scan (woods/extract/scan.py)."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.package: tuple[str, ...] = ()
        self.declared: set[str] = set()
        self.declared_types: dict[str, str] = {}  # simple name → qualified name (first wins)
        self.bindings: dict[str, str] = {}  # imported simple name (or alias) → qualified name
        self.stars: list[str] = []  # star-imported packages
        self.imports: list[Dependency] = []
        # One edge per enclosing classes, then reference (kind, segments), shared by the file's units.
        self.dependencies: dict[tuple[str, ...], dict[tuple[str, tuple[str, ...]], _Edge | None]] = {}
        # Set once the walk has seen the package and every import (`run`).
        self.package_prefix = ""  # "a.b." for package a.b
        self.star_prefixes: list[str] = []  # "a.b." per star import
        # The walk's current node among its parent's children (see `_leading_comment`).
        self.siblings: list[Node] = []
        self.position = 0

    def run(self) -> FileExtraction:
        tree, skipped = scan.parse_recovering(GRAMMAR, self.source)
        root = tree.root_node
        for child in root.named_children:
            if child.type == "package_header":
                name = next((c for c in child.named_children if c.type in ("qualified_identifier", "identifier")), None)
                self.package = self._dotted(name)
            elif child.type == "import":
                self._import(child)
        self._predeclare(root)
        stack: list[_Open] = _members(root, None)
        while stack:
            node, owner, self.siblings, self.position = stack.pop()
            kind = node.type
            if kind in ("class_declaration", "object_declaration", "companion_object"):
                self._class(node, owner, stack)
            elif kind == "function_declaration":
                self._function(node, owner)
            elif kind == "property_declaration":
                self._property(node, owner)
            elif kind == "secondary_constructor" and owner is not None:
                self._constructor(node, owner)
            elif kind == "type_alias":
                self._alias(node, owner)
            elif kind == "ERROR":
                stack.extend(_members(node, owner))
        if not self.drafts:
            self.drafts.append(_Draft(self.file_path, "file", root, whole_file=True, top=True))
        self.package_prefix = "".join(f"{p}." for p in self.package)
        self.star_prefixes = [f"{s}." for s in self.stars]
        self._scan_references(root)
        units = tuple(self._freeze(d) for d in self.drafts)
        return FileExtraction(self.file_path, LANGUAGE, units,
                              (*base.syntax_warnings(tree, self.file_path), *scan.skipped_warnings(self.file_path, skipped)))

    def _leading_comment(self, node: Node) -> str | None:
        """`base.leading_comment` for the node the walk is at, stepping back through the parent's
        children list the walk already holds instead of asking for each `prev_sibling`.

        A comment sibling right above a declaration ends on its line or the one before, so when
        neither holds `//` or `*/` (in the original source: blanked stretches hold no node)
        there is none and no sibling is asked for."""
        source = self.source
        start = node.start_byte
        above = source.rfind(b"\n", 0, max(source.rfind(b"\n", 0, start), 0)) + 1
        if source.find(b"*/", above, start) < 0 and source.find(b"//", above, start) < 0:
            return None
        return base.comment_block_before(self.siblings, self.position, node, source, _COMMENTS)

    def _predeclare(self, root: Node) -> None:
        """Top-level type names first, so an extension's receiver declared later in the file resolves."""
        for child in root.named_children:
            if child.type in ("class_declaration", "object_declaration", "type_alias"):
                name = child.child_by_field_name("name") or child.child_by_field_name("type")
                if name is not None:
                    simple = base.text(name, self.source)
                    self.declared_types.setdefault(simple, ".".join((*self.package, simple)))

    def _scan_references(self, root: Node) -> None:
        """Each call and type name to the innermost draft holding it (`scan.first_per_draft`).

        One capture name for all three patterns, so the cursor's single list, sorted stably by
        start byte, is the source order (`scan.captures` order: no two captures start together)."""
        source = self.source
        declared_types = self.declared_types
        found = QueryCursor(scan.compiled_query(GRAMMAR, _REFERENCES)).captures(root).get("ref", [])
        found.sort(key=_START)
        parsed: dict[tuple[str, bytes], tuple[str, tuple[str, ...]] | None] = {}  # per text, for every draft
        for draft, kind, spelled, node in scan.first_per_draft(self.drafts, found, source):
            key = (kind, spelled)
            ref = parsed.get(key, _UNPARSED)
            if ref is _UNPARSED:
                ref = parsed[key] = self._reference(node, kind, spelled)
            if ref is None:
                continue
            # What `_resolved` would drop anyway (type parameters, `kotlin.*` basics) never becomes a ref.
            head = ref[1][0]
            if head in draft.type_params or (head in _BUILTINS and head not in declared_types):
                continue
            draft.refs.append(ref)

    def _reference(self, node: Node, kind: str, spelled: bytes) -> tuple[str, tuple[str, ...]] | None:
        """The ref one captured name makes (or None), from its text: the same text makes the same
        ref anywhere in the file, so `_scan_references` asks once per text."""
        text = spelled.decode("utf-8", "replace")
        if kind == "user_type":  # `a.b.Name<Args>`
            segments = scan.dotted_type(spelled)
            return ("type", segments) if segments is not None else None
        if kind == "identifier":
            return ("type" if text[:1].isupper() else "call", (text,))
        if text[:1].isupper():  # `Type.member` (the query admits only `receiver.member`)
            receiver, member = node.named_child(0), node.named_child(1)
            if receiver is None or member is None or receiver.type != "identifier":
                return None
            return ("static", (base.text(receiver, self.source), base.text(member, self.source)))
        if text[:4] == "this":
            receiver, member = node.named_child(0), node.named_child(1)
            if receiver is None or member is None or receiver.type != "this_expression":
                return None
            return ("own", (base.text(member, self.source),))
        return None

    # -- declarations ----------------------------------------------------------------------

    def _dotted(self, node: Node | None) -> tuple[str, ...]:
        if node is None:
            return ()
        if node.type == "identifier":
            return (base.text(node, self.source),)
        spelled = base.text(node, self.source)
        if _PLAIN_DOTTED.fullmatch(spelled):  # `a.b.C`: its identifiers are the parts between the dots
            return tuple(spelled.split("."))
        return tuple(base.text(c, self.source) for c in node.named_children if c.type == "identifier")

    def _plain_import(self, node: Node) -> bool:
        """`_import` for an import written plainly, read from its text; False for any other."""
        plain = None if node.has_error else _PLAIN_IMPORT.fullmatch(self.source, node.start_byte, node.end_byte)
        if plain is None:
            return False
        path = plain[1].decode()
        if plain[2] is not None:
            self.stars.append(path)
        else:
            self.bindings[plain[3].decode() if plain[3] is not None else path.rpartition(".")[2]] = path
        self.imports.append(Dependency(path, "import", None, (path,)))
        return True

    def _import(self, node: Node) -> None:
        if self._plain_import(node):
            return
        children = node.children
        name = next((c for c in children if c.type in ("qualified_identifier", "identifier")), None)
        path = ".".join(self._dotted(name))
        if not path:
            return
        alias = children[-1] if len(children) > 2 and children[-2].type == "as" else None
        if any(c.type == "*" for c in children):
            self.stars.append(path)
        else:
            local = base.text(alias, self.source) if alias is not None else path.rpartition(".")[2]
            self.bindings[local] = path
        self.imports.append(Dependency(path, "import", None, (path,)))

    def _head(self, node: Node) -> _Head:
        """Modifiers, annotations, type parameters, the extension receiver and the body of a
        declaration, in one pass over its children."""
        head = _Head([], [], frozenset())
        before_name = True
        for child in node.children:
            kind = child.type
            if kind in _BODIES:
                head.body = child
            elif before_name and kind in ("user_type", "nullable_type"):
                head.receiver = child  # `fun Flow<T>.collect()`: a type before the name
            elif kind in ("identifier", "variable_declaration", "function_value_parameters"):
                before_name = False
            elif kind == "modifiers":
                for modifier in child.named_children:
                    if modifier.type == "annotation":
                        head.annotations.append(base.one_line(base.text(modifier, self.source)).lstrip("@"))
                    else:
                        head.modifiers.append(base.text(modifier, self.source))
            elif kind == "type_parameters":
                names = (next((c for c in p.named_children if c.type == "identifier"), None) for p in child.named_children)
                head.type_params = frozenset(base.text(n, self.source) for n in names if n is not None)
        return head

    def _new(self, path: tuple[str, ...], unit_type: str, node: Node, owner: _Draft | None,
             parent: str | None = None, head: _Head | None = None) -> _Draft:
        qualified = ".".join(path)
        identifier = self.unique(qualified, unit_type)
        draft = _Draft(identifier, unit_type, node, parent if parent is not None else (owner.identifier if owner else None),
                       ".".join(path[:-1]) or None)
        head = head or self._head(node)
        draft.path = path
        draft.top = owner is None
        draft.classes = owner.classes if owner is not None else ()
        draft.type_params = (owner.type_params | head.type_params) if owner is not None else head.type_params
        draft.docstring = base.clean_comment(self._leading_comment(node))
        draft.metadata = {"modifiers": head.modifiers}
        if head.annotations:
            draft.metadata["annotations"] = head.annotations
        self.declared.add(qualified)
        self.drafts.append(draft)
        return draft

    def _class(self, node: Node, owner: _Draft | None, stack: list[_Open]) -> None:
        kind = node.type
        name_node = node.child_by_field_name("name")
        head = self._head(node)
        words = head.modifiers
        if kind == "companion_object":
            name = base.text(name_node, self.source) if name_node is not None else "Companion"
            unit_type = "object"
        elif kind == "object_declaration":
            name, unit_type = base.text(name_node, self.source), "object"
        else:
            name = base.text(name_node, self.source)
            keyword = next((c.type for c in node.children if c.type in ("class", "interface")), "class")
            unit_type = "enum" if "enum" in words else "interface" if keyword == "interface" or "annotation" in words else "class"
        prefix = owner.path if owner is not None else self.package
        draft = self._new((*prefix, name), unit_type, node, owner, head=head)
        draft.classes = (".".join(draft.path), *draft.classes)
        if kind == "companion_object":
            draft.metadata["companion"] = True
        if "annotation" in words:
            draft.metadata["annotation"] = True
        if owner is None:
            self.declared_types.setdefault(name, ".".join(draft.path))
        body = head.body
        draft.signature = self._header(node, body)
        supertypes = next((c for c in node.children if c.type == "delegation_specifiers"), None)
        for spec in supertypes.named_children if supertypes is not None else ():
            self._supertype(spec, draft)
        if body is not None:
            stack.extend(_members(body, draft))

    def _supertype(self, spec: Node, draft: _Draft) -> None:
        inner = spec.named_children[0] if spec.named_child_count else None
        if inner is None:
            return
        called = inner.type == "constructor_invocation"
        type_node = inner.named_children[0] if inner.type in ("constructor_invocation", "explicit_delegation") and inner.named_child_count else inner
        if type_node.type != "user_type":
            return
        segments = tuple(base.text(c, self.source) for c in type_node.named_children if c.type == "identifier")
        via = "superclass" if called or draft.type == "interface" else "implements"
        draft.refs.append((via, segments))
        draft.metadata.setdefault("extends" if via == "superclass" else "implements", []).append(".".join(segments))

    def _extension_path(self, receiver: Node) -> tuple[str, ...]:
        type_node = receiver.named_children[0] if receiver.type == "nullable_type" and receiver.named_child_count else receiver
        segments = tuple(base.text(c, self.source) for c in type_node.named_children if c.type == "identifier")
        if not segments:
            return (*self.package, base.one_line(base.text(receiver, self.source)))
        head = segments[0]
        if head in self.declared_types:
            return (*self.declared_types[head].split("."), *segments[1:])
        if head in self.bindings:
            return (*self.bindings[head].split("."), *segments[1:])
        if head in _BUILTINS:
            return ("kotlin", *segments)
        return (*self.package, *segments)

    def _function(self, node: Node, owner: _Draft | None) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = base.text(name_node, self.source).strip("`")  # `is empty`() is the function "is empty"
        head = self._head(node)
        receiver, body = head.receiver, head.body
        if receiver is not None and owner is None:
            target = self._extension_path(receiver)
            draft = self._new((*target, name), "function", node, None, parent=".".join(target), head=head)
            draft.metadata["extension"] = True
            draft.metadata["receiver"] = base.one_line(base.text(receiver, self.source))
        else:
            prefix = owner.path if owner is not None else self.package
            draft = self._new((*prefix, name), "method" if owner is not None else "function", node, owner, head=head)
            if receiver is not None:
                draft.metadata["receiver"] = base.one_line(base.text(receiver, self.source))
        draft.signature = self._header(node, body)
        if body is None and owner is not None:
            draft.metadata["abstract"] = True

    def _property(self, node: Node, owner: _Draft | None) -> None:
        accessors = [c for c in node.children if c.type in ("getter", "setter")]
        if not any(any(g.type == "function_body" for g in a.children) for a in accessors):
            return  # a stored property
        declaration = next((c for c in node.children if c.type == "variable_declaration"), None)
        ident = next((c for c in declaration.named_children if c.type == "identifier"), None) if declaration else None
        if ident is None:
            return
        name = base.text(ident, self.source)
        head = self._head(node)
        receiver = head.receiver
        if receiver is not None and owner is None:
            target = self._extension_path(receiver)
            draft = self._new((*target, name), "property", node, None, parent=".".join(target), head=head)
            draft.metadata["extension"] = True
            draft.metadata["receiver"] = base.one_line(base.text(receiver, self.source))
        else:
            prefix = owner.path if owner is not None else self.package
            draft = self._new((*prefix, name), "property", node, owner, head=head)
        draft.signature = self._header(node, accessors[0])

    def _constructor(self, node: Node, owner: _Draft) -> None:
        draft = self._new((*owner.path, "constructor"), "constructor", node, owner)
        body = next((c for c in node.children if c.type == "block"), None)
        draft.signature = self._header(node, body)

    def _alias(self, node: Node, owner: _Draft | None) -> None:
        name_node = node.child_by_field_name("type")
        if name_node is None:
            return
        prefix = owner.path if owner is not None else self.package
        draft = self._new((*prefix, base.text(name_node, self.source)), "type_alias", node, owner)
        draft.signature = base.one_line(base.text(node, self.source))

    def _header(self, node: Node, stop_node: Node | None) -> str:
        """The declaration from its first modifier keyword (annotations are metadata) up to `stop_node`."""
        start = node.start_byte
        modifiers = node.child(0) if node.child_count else None
        if modifiers is not None and modifiers.type == "modifiers":
            start = modifiers.end_byte
            for index in range(modifiers.child_count):
                child = modifiers.child(index)
                if child is not None and child.type not in ("annotation", "line_comment", "block_comment"):
                    start = child.start_byte
                    break
        stop = stop_node.start_byte if stop_node is not None else node.end_byte
        return base.one_line(self.source[start:stop].decode("utf-8", "replace"))

    # -- references ------------------------------------------------------------------------

    def _type_target(self, segments: tuple[str, ...], classes: tuple[str, ...]) -> tuple[list[str], str]:
        """The candidates for a type name in Kotlin's lookup order (enclosing classes, declared
        here, imported, this package, star imports; duplicates kept: callers de-duplicate) and
        the target to record: a type declared here or imported, else one declared in this file,
        else the package's spelling (the linker still tries every candidate)."""
        head = segments[0]
        written = ".".join(segments)
        if head[:1].islower() and len(segments) > 1:  # already package-qualified (`kotlinx.coroutines.Job`)
            return [written], written
        found = [f"{c}.{written}" for c in classes if c.rpartition(".")[2] != head]
        tail = written[len(head) :]
        declared_prefix = self.declared_types.get(head)
        bound = self.bindings.get(head)
        if declared_prefix is not None:
            found.append(declared_prefix + tail)
        if bound is not None:
            found.append(bound + tail)
        packaged = self.package_prefix + written
        found.append(packaged)
        found += [s + written for s in self.star_prefixes]
        if declared_prefix is not None:
            return found, declared_prefix + tail
        if bound is not None:
            return found, bound + tail
        declared = self.declared
        for candidate in found:
            if candidate in declared:
                return found, candidate
        return found, packaged

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
        heritage = {s for via, s in draft.refs if via != "type"} if draft.type in _TYPE_UNITS else set()
        own = ".".join(draft.path)
        declared_types = self.declared_types
        classes = draft.classes
        dependencies = self.dependencies.get(classes)
        if dependencies is None:
            dependencies = self.dependencies[classes] = {}
        type_params = draft.type_params
        for ref in draft.refs:
            kind, segments = ref
            head = segments[0]
            if head in type_params or (head in _BUILTINS and head not in declared_types):
                continue
            if kind == "type" and segments in heritage:
                continue
            edge = dependencies.get(ref, _MISSING)
            if edge is _MISSING:
                found = self._dependency(kind, segments, classes)
                edge = dependencies[ref] = (found, (found.target, found.via)) if found is not None else None
            if edge is None:
                continue
            dep, key = edge
            if key in seen or (dep.via == "code_reference" and dep.target == own) or dep.target == identifier:
                continue
            seen.add(key)
            deps.append(dep)
        return tuple(deps)

    def _dependency(self, kind: str, segments: tuple[str, ...], classes: tuple[str, ...]) -> Dependency | None:
        """The edge for one reference: its candidates in Kotlin's lookup order (see the module doc)."""
        if kind in ("type", "superclass", "implements"):
            candidates, target = self._type_target(segments, classes)
            via = "code_reference" if kind == "type" else kind
        elif kind == "static":
            found, owner = self._type_target(segments[:1], classes)
            owners = list(dict.fromkeys(found))
            member = segments[1]
            candidates = [f"{o}.{member}" for o in owners] + [f"{o}.Companion.{member}" for o in owners]
            via, target = "calls", f"{owner}.{member}"
        else:
            name = segments[-1]
            candidates = [f"{c}.{name}" for c in classes] + [f"{c}.Companion.{name}" for c in classes] if classes else []
            if kind == "call":
                if name in self.bindings:
                    candidates.append(self.bindings[name])
                candidates.append(self.package_prefix + name)
                candidates += [s + name for s in self.star_prefixes]
            if not candidates:
                return None
            via = "calls"
            target = candidates[0]
            declared = self.declared
            for candidate in candidates:
                if candidate in declared:
                    target = candidate
                    break
        return Dependency(target, via, None, tuple(dict.fromkeys(candidates)))


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Kotlin file: declarations outermost first, members in source order."""
    try:
        return _Extractor(file_path, source, layout).run()
    except scan.ParseTimeoutError as error:
        return scan.parse_timeout(file_path, LANGUAGE, error)
