"""C# extraction: classes, structs, records, interfaces, enums, delegates, and their members.

Identifiers follow the namespace declaration, block (`namespace A.B { … }`, nested blocks join
with `.`) or file-scoped (`namespace A.B;`): `A.B.Invoice`, nested types `A.B.Invoice.Line`,
members `A.B.Invoice.Charge`, constructors `A.B.Invoice.Invoice` (the class's name, as C# writes
them), destructors `A.B.Invoice.~Invoice`, operators `A.B.Money.operator +`, indexers
`A.B.Cache.this[]`. Generic arity is not part of a name (`Repo<T>` is `A.B.Repo`); a repeated
(identifier, type) in one file — overloads, a generic and a non-generic type of one name — gets
`#2`, `#3` … in source order.

Units: `class` `struct` `record` `interface` `enum` `delegate`, `method`, `constructor`,
`property` (only properties and indexers with an accessor body or an expression body: an
auto-property `{ get; set; }` is a field, not code worth retrieving). Members without a body are
units only when nothing else defines them (abstract, interface and `extern` members); the
declaring half of a `partial` method is not. Local functions and lambdas belong to their
enclosing member. A file with no unit (top-level statements, assembly attributes) gets one
`file` unit with the path as identifier, so every file is retrievable.

Dependencies: `using` directives on the file's top-level types (`via: "import"`), base types
(`superclass` for a class's first base unless it is an interface declared earlier in the file
or is named like one, `I` + capital;
`implements` for the others and for structs and records; an interface's bases are `superclass`,
as in Java), calls (`M()` on the enclosing types and `using static` classes, `this.M()`,
`Type.M()`) and type names (`code_reference`), with candidates in C#'s lookup order: nested types
of the enclosing types, the enclosing namespaces inside out, `using` namespaces and aliases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node, QueryCursor

from woods.extract import base, scan
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "csharp"
GRAMMAR = "c_sharp"

# Declaration node → unit type.
_TYPES = {
    "class_declaration": "class",
    "struct_declaration": "struct",
    "record_declaration": "record",
    "record_struct_declaration": "record",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
}
_TYPE_UNITS = frozenset(_TYPES.values())
_MEMBERS = frozenset(
    {
        "method_declaration", "constructor_declaration", "destructor_declaration", "operator_declaration",
        "conversion_operator_declaration", "property_declaration", "indexer_declaration",
    }
)
# Nodes whose children are declarations of the same scope.
_CONTAINERS = frozenset({"preproc_if", "preproc_else", "preproc_elif", "preproc_region", "ERROR"})
_COMMENTS = frozenset({"comment"})
# Type-name node types of the grammar (C# names types with plain identifiers).
_TYPE_NAMES = frozenset({"identifier", "generic_name", "qualified_name"})
_SPLIT_NAMES = frozenset({"generic_name", "qualified_name"})  # names `_segments` may read from the text
# Doc-comment XML wrappers dropped from docstrings (the prose inside is kept).
_XML_WRAPPERS = ("<summary>", "</summary>", "<remarks>", "</remarks>")

_REFERENCES = """
(invocation_expression function: [(identifier) (generic_name) (member_access_expression)] @call)
(_ type: [(identifier) (generic_name) (qualified_name)] @type)
(_ returns: [(identifier) (generic_name) (qualified_name)] @type)
(type_argument_list [(identifier) (generic_name) (qualified_name)] @type)
"""


# Names read from the source text when their node holds no error (ERROR or MISSING), where a type
# name's text is its ASCII identifiers (verbatim `@` allowed), dots, whitespace and `<…>` type
# arguments: `_plain_segments` splits it as `_segments` walks it. Anything else (comments,
# `global::`, non-ASCII) is walked.
_IDENTIFIER = rb"@?[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rb"[ \t\r\n]*%s(?:[ \t\r\n]*\.[ \t\r\n]*%s)*[ \t\r\n]*" % (_IDENTIFIER, _IDENTIFIER))
_TYPE_ARGUMENTS = re.compile(rb"<[^<>]*>")  # an innermost `<…>`: removed until none is left
# `this.M` / `X.M`, the function of a member call (`_call` reads the same from the tree).
_MEMBER_CALL = re.compile(rb"(%s)[ \t\r\n]*\.[ \t\r\n]*(%s)" % (_IDENTIFIER, _IDENTIFIER))
# First bytes of a member call's function that can start an edge's receiver: `this`, or a type
# name (`_call` wants its first segment capitalised; a non-ASCII first letter may be).
_RECEIVER_STARTS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZt" + bytes(range(0x80, 0x100)))


def _plain_segments(spelled: bytes) -> tuple[str, ...] | None:
    """`_segments` of a type name from its text (see `_DOTTED`); None when the text is not that plain."""
    while b"<" in spelled:
        stripped = _TYPE_ARGUMENTS.sub(b"", spelled)
        if len(stripped) == len(spelled):
            return None
        spelled = stripped
    if _DOTTED.fullmatch(spelled) is None:
        return None
    return tuple([part.strip().decode("ascii") for part in spelled.split(b".")])


# `_Extractor.dependencies` has no edge for a reference yet (None is an edge that resolves to nothing).
_UNRESOLVED = Dependency("", "")


@dataclass(slots=True)
class _Draft(base.Draft):
    """A C# unit under construction, with what its references are resolved against."""

    path: tuple[str, ...] = ()  # qualified name segments without the `#n` suffix
    ns: tuple[str, ...] = ()  # the enclosing namespace
    types: tuple[str, ...] = ()  # the enclosing types' qualified names, innermost first
    type_params: frozenset[str] = frozenset()
    refs: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # the base list's (via, segments)
    # The file's edges for this unit's (enclosing types, namespace): (kind, segments) → edge.
    known: dict[tuple[str, tuple[str, ...]], Dependency | None] = field(default_factory=dict)
    top: bool = False  # a type declared directly in a namespace (carries the file's `using`s)


@dataclass(slots=True)
class _Head:
    """What a declaration's children before its name say: modifiers, attributes, type parameters."""

    modifiers: list[str]
    attributes: list[str]
    type_params: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Ctx:
    """Where a declaration sits: its namespace and the enclosing type (None at namespace level)."""

    ns: tuple[str, ...]
    owner: _Draft | None = None


# A node the walk will visit: (node, its context, its parent's children, its index there), so the
# comment above a declaration is read by indexing rather than by `prev_sibling`.
_Entry = tuple[Node, _Ctx, list[Node] | None, int]


def clean_doc(raw: str | None) -> str | None:
    """A `///` or `/** */` comment's prose, `<summary>`-style wrappers removed."""
    cleaned = base.clean_comment(raw)
    if cleaned is None:
        return None
    for wrapper in _XML_WRAPPERS:
        cleaned = cleaned.replace(wrapper, "")
    lines = [line.rstrip() for line in cleaned.splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(line.strip() for line in lines) or None


class _Extractor(base.FileExtractor[_Draft]):
    """One walk over namespaces and type bodies, then one reference scan (woods/extract/scan.py)."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.declared: set[str] = set()  # qualified names (no `#n`) of this file's units
        self.declared_types: set[str] = set()
        self.usings: list[str] = []  # `using A.B;` namespaces
        self.statics: list[str] = []  # `using static A.B.C;` types
        self.aliases: dict[str, str] = {}  # `using X = A.B.C;`
        self.imports: list[Dependency] = []
        self.interfaces: set[str] = set()  # names of the interfaces declared so far in this file
        self.place: tuple[Node | None, list[Node] | None, int] = (None, None, 0)  # the node being walked
        self.plain = False  # the tree has no error, so no name's node holds one
        # One Dependency per (kind, name, enclosing types, namespace), shared by the file's units:
        # (enclosing types, namespace) → (kind, name) → edge.
        self.dependencies: dict[tuple[tuple[str, ...], tuple[str, ...]],
                                dict[tuple[str, tuple[str, ...]], Dependency | None]] = {}

    def run(self) -> FileExtraction:
        tree = scan.parse(GRAMMAR, self.source)
        root = tree.root_node
        self.plain = not root.has_error
        stack: list[_Entry] = []
        self._scope(root.children, _Ctx(()), stack)
        while stack:
            node, ctx, siblings, index = stack.pop()
            self.place = (node, siblings, index)
            kind = node.type
            if kind in _TYPES or kind == "delegate_declaration":
                self._type(node, ctx, stack)
            elif kind in _MEMBERS and ctx.owner is not None:
                self._member(node, ctx.owner)
            elif kind == "namespace_declaration":
                name = self._segments(node.child_by_field_name("name"))
                body = node.child_by_field_name("body")
                if body is not None:
                    self._scope(body.children, _Ctx(ctx.ns + name), stack)
            elif kind in _CONTAINERS:
                self._scope(node.children, ctx, stack)
            elif kind == "using_directive":
                self._using(node)
        if not self.drafts:
            self.drafts.append(_Draft(self.file_path, "file", root, whole_file=True, top=True))
        self._scan_references(root)
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in self.drafts)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    def _scope(self, children: list[Node], ctx: _Ctx, stack: list[_Entry]) -> None:
        """Queue a scope's children in order; a file-scoped namespace applies to the siblings after it."""
        queued: list[_Entry] = []
        for index, child in enumerate(children):
            if child.type == "file_scoped_namespace_declaration":
                ctx = _Ctx(ctx.ns + self._segments(child.child_by_field_name("name")), ctx.owner)
            else:
                queued.append((child, ctx, children, index))
        stack.extend(reversed(queued))

    def _scan_references(self, root: Node) -> None:
        """Resolve every call and type name into an edge of the innermost unit holding it, in
        source order (`scan.sweep`), after the unit's `using`s and bases. A type name in a base list
        is never captured (the grammar gives those no `type` field): bases are edges of their own."""
        for draft in self.drafts:
            draft.known = self.dependencies.setdefault((draft.types, draft.ns), {})
            draft.deps = list(self.imports) if draft.top else []
            for via, segments in dict.fromkeys(draft.refs):  # a name used twice is one edge
                self._refer(draft, via, segments)
        found = QueryCursor(scan.compiled_query(GRAMMAR, _REFERENCES)).captures(root)
        # (start, 0 for a call / 1 for a type, index, node): sorted, the order of `scan.captures`.
        decorated = [(n.start_byte, 0, i, n) for i, n in enumerate(found.get("call", ()))]
        decorated += [(n.start_byte, 1, i, n) for i, n in enumerate(found.get("type", ()))]
        decorated.sort()
        source = self.source
        plain = self.plain
        seen: set[tuple[int, int, bytes]] = set()  # (draft, capture, text): a repeated name is one edge
        for draft, position, kind, _, node in scan.sweep(scan.draft_spans(self.drafts), decorated):
            key = (id(draft), kind, source[position : node.end_byte])
            if key in seen:
                continue
            seen.add(key)
            if kind == 0:
                node_type = node.type
                if node_type == "identifier":
                    if key[2]:  # `M()`: `_call` of an identifier
                        self._refer(draft, "bare_call", (key[2].decode("utf-8", "replace"),))
                elif node_type == "member_access_expression" and (plain or not node.has_error):
                    # `_call` from the text: the receiver starts the function's text, and only
                    # `this` or a capitalised type name makes an edge.
                    if key[2][0] not in _RECEIVER_STARTS:
                        continue
                    member = _MEMBER_CALL.fullmatch(key[2])
                    if member is None:
                        self._call(node, draft)
                    elif member[1] == b"this":
                        self._refer(draft, "self_call", (member[2].decode("ascii"),))
                    elif member[1][:1].isupper():
                        self._refer(draft, "static_call", (member[1].decode("ascii"), member[2].decode("ascii")))
                else:
                    self._call(node, draft)
            elif node.type == "identifier":
                if key[2]:
                    self._refer(draft, "code_reference", (key[2].decode("utf-8", "replace"),))
            else:
                segments = self._segments(node)
                if segments:
                    self._refer(draft, "code_reference", segments)

    # -- declarations ----------------------------------------------------------------------

    def _using(self, node: Node) -> None:
        alias = node.child_by_field_name("name")
        target = next((c for c in node.named_children if c.type in ("identifier", "qualified_name") and c != alias), None)
        if target is None:
            return
        written = ".".join(self._segments(target))
        if alias is not None:
            self.aliases[base.text(alias, self.source)] = written
        elif any(c.type == "static" for c in node.children):
            self.statics.append(written)
        else:
            self.usings.append(written)
        self.imports.append(Dependency(written, "import", lookup=(written,)))

    def _new(self, path: tuple[str, ...], unit_type: str, node: Node, ctx: _Ctx, head: _Head) -> _Draft:
        qualified = ".".join(path)
        identifier = self.unique(qualified, unit_type)
        owner = ctx.owner
        draft = _Draft(identifier, unit_type, node, owner.identifier if owner is not None else None,
                       ".".join(path[:-1]) or None)
        draft.path = path
        draft.ns = ctx.ns
        draft.types = owner.types if owner is not None else ()
        draft.type_params = (owner.type_params | head.type_params) if owner is not None else head.type_params
        draft.docstring = clean_doc(self._leading_comment(node))
        draft.metadata = {"modifiers": head.modifiers}
        if head.attributes:
            draft.metadata["attributes"] = head.attributes
        self.declared.add(qualified)
        self.drafts.append(draft)
        return draft

    def _leading_comment(self, node: Node) -> str | None:
        """`base.leading_comment(node)`, read from the children list the walk found `node` in
        (tree-sitter answers `prev_sibling` by searching down from the root)."""
        if node is not self.place[0] or self.place[1] is None:
            return base.leading_comment(node, self.source, _COMMENTS)
        return base.comment_block_before(self.place[1], self.place[2], node, self.source, _COMMENTS)

    def _head(self, node: Node) -> _Head:
        """Modifiers, attributes and type parameters of a declaration, in one pass over its children."""
        head = _Head([], [], frozenset())
        for child in node.children:
            kind = child.type
            if kind == "modifier":
                head.modifiers.append(base.text(child, self.source))
            elif kind == "attribute_list":
                head.attributes.extend(base.one_line(base.text(a, self.source)) for a in child.named_children
                                       if a.type == "attribute")
            elif kind == "type_parameter_list":
                head.type_params = frozenset(base.text(p.child_by_field_name("name"), self.source)
                                             for p in child.named_children if p.type == "type_parameter")
        return head

    def _type(self, node: Node, ctx: _Ctx, stack: list[_Entry]) -> None:
        name = base.text(node.child_by_field_name("name"), self.source)
        prefix = ctx.owner.path if ctx.owner is not None else ctx.ns
        unit_type = _TYPES.get(node.type, "delegate")
        draft = self._new((*prefix, name), unit_type, node, ctx, self._head(node))
        draft.top = ctx.owner is None
        if unit_type == "interface":
            self.interfaces.add(name)
        self.declared_types.add(".".join(draft.path))
        draft.types = (".".join(draft.path), *draft.types)
        body = node.child_by_field_name("body")
        draft.signature = self._header(node, body)
        draft.signature = draft.signature.rstrip(";").rstrip()
        if unit_type == "delegate":
            return
        bases = next((c for c in node.children if c.type == "base_list"), None)
        if bases is not None and unit_type != "enum":
            self._bases(bases, draft)
        if body is not None:
            inner = _Ctx(ctx.ns, draft)
            children = body.children
            stack.extend((children[i], inner, children, i) for i in range(len(children) - 1, -1, -1)
                         if children[i].type not in _COMMENTS)

    def _bases(self, clause: Node, draft: _Draft) -> None:
        for index, child in enumerate(c for c in clause.named_children if c.type in (*_TYPE_NAMES, "primary_constructor_base_type")):
            name_node = child.named_children[0] if child.type == "primary_constructor_base_type" and child.named_child_count else child
            segments = self._segments(name_node)
            if not segments:
                continue
            last = segments[-1]
            interface_like = ".".join(segments) in self.interfaces or (len(last) > 1 and last[0] == "I" and last[1].isupper())
            first_class_base = draft.type == "class" and index == 0 and not interface_like
            via = "superclass" if draft.type == "interface" or first_class_base else "implements"
            draft.refs.append((via, segments))
            draft.metadata.setdefault("extends" if via == "superclass" else "implements", []).append(".".join(segments))

    def _member(self, node: Node, owner: _Draft) -> None:
        kind = node.type
        body = node.child_by_field_name("body")
        accessors = node.child_by_field_name("accessors")
        value = node.child_by_field_name("value")
        if value is not None and value.type != "arrow_expression_clause":
            value = None  # `{ get; set; } = initial`: an initialiser, not a body
        head = self._head(node)
        if kind in ("property_declaration", "indexer_declaration"):
            has_body = value is not None or body is not None or (accessors is not None and any(
                a.child_by_field_name("body") is not None for a in accessors.named_children
            ))
            if not has_body:
                return
            unit_type = "property"
            name = "this[]" if kind == "indexer_declaration" else base.text(node.child_by_field_name("name"), self.source)
            stop = accessors if accessors is not None else value
        else:
            if body is None and owner.type != "interface" and "abstract" not in head.modifiers and (
                "extern" not in head.modifiers
            ):
                return  # the declaring half of a partial method
            name = self._member_name(node, owner)
            unit_type = "constructor" if kind == "constructor_declaration" else "method"
            stop = body
        draft = self._new((*owner.path, name), unit_type, node, _Ctx(owner.ns, owner), head)
        header = self._header(node, stop)
        draft.signature = header.rstrip(";").rstrip()
        if body is None and value is None and unit_type != "property":
            draft.metadata["abstract"] = True
        if kind == "destructor_declaration":
            draft.metadata["kind"] = "destructor"
        if kind == "method_declaration" and "static" in head.modifiers:
            params = node.child_by_field_name("parameters")
            first = params.named_children[0] if params is not None and params.named_child_count else None
            if first is not None and any(c.type == "modifier" and base.text(c, self.source) == "this" for c in first.children):
                draft.metadata["extension"] = True

    def _member_name(self, node: Node, owner: _Draft) -> str:
        kind = node.type
        if kind == "destructor_declaration":
            return "~" + owner.path[-1]
        if kind == "operator_declaration":
            operator = node.child_by_field_name("operator")
            return "operator " + base.text(operator, self.source)
        if kind == "conversion_operator_declaration":
            return "operator " + base.one_line(base.text(node.child_by_field_name("type"), self.source))
        return base.text(node.child_by_field_name("name"), self.source)

    def _header(self, node: Node, stop_node: Node | None) -> str:
        """The declaration from its first modifier (`[Attributes]` are metadata) up to `stop_node`."""
        start = node.start_byte
        for index in range(node.child_count):
            child = node.child(index)
            if child is not None and child.type not in ("attribute_list", "comment"):
                start = child.start_byte
                break
        stop = stop_node.start_byte if stop_node is not None else node.end_byte
        return base.one_line(self.source[start:stop].decode("utf-8", "replace"))

    # -- names and references -------------------------------------------------------------

    def _segments(self, node: Node | None) -> tuple[str, ...]:
        """`A.B.C<T>` → (A, B, C); () for anything that is not a type or namespace name."""
        if node is not None and node.type in _SPLIT_NAMES and (self.plain or not node.has_error):
            found = _plain_segments(self.source[node.start_byte : node.end_byte])
            if found is not None:
                return found
        parts: list[str] = []
        current = node
        while current is not None:
            kind = current.type
            if kind == "qualified_name":
                last = self._segments(current.child_by_field_name("name"))
                if not last:
                    return ()
                parts.append(last[-1])
                current = current.child_by_field_name("qualifier")
            elif kind == "generic_name":
                parts.append(base.text(current.named_child(0), self.source))
                current = None
            elif kind == "identifier":
                parts.append(base.text(current, self.source))
                current = None
            else:
                return ()
        return tuple(reversed(parts)) if all(parts) else ()

    def _call(self, function: Node, draft: _Draft) -> None:
        if function.type == "member_access_expression":
            receiver = function.child_by_field_name("expression")
            if receiver is None or receiver.type != "this" and receiver.type not in _TYPE_NAMES:
                return  # `a.b().C()`, `x[0].C()` …: no edge
            name = self._segments(function.child_by_field_name("name"))
            if not name:
                return
            if receiver.type == "this":
                self._refer(draft, "self_call", name)
            elif receiver.type in _TYPE_NAMES:
                segments = self._segments(receiver)
                if segments and segments[0][:1].isupper():
                    self._refer(draft, "static_call", (*segments, *name))
            return
        name = self._segments(function)
        if name:
            self._refer(draft, "bare_call", name)

    def _type_candidates(self, segments: tuple[str, ...], draft: _Draft) -> list[str]:
        head = segments[0]
        written = ".".join(segments)
        if head in self.aliases:
            return [".".join((self.aliases[head], *segments[1:]))]
        # Inside type `X`, `X` is the type itself (not a member `X.X`, which is its constructor).
        found = [f"{t}.{written}" for t in draft.types if t.rpartition(".")[2] != head]
        found += [".".join((*draft.ns[:n], *segments)) for n in range(len(draft.ns), 0, -1)]
        found += [f"{u}.{written}" for u in self.usings]
        found.append(written)
        return list(dict.fromkeys(found))

    def _refer(self, draft: _Draft, via: str, segments: tuple[str, ...]) -> None:
        """Add the edge for one reference to `draft.deps`, unless it names a type parameter,
        repeats a base type as a type name, resolves to nothing, or is a type naming itself. A
        reference made twice adds its edge twice; `base.freeze` keeps the first."""
        if segments[0] in draft.type_params:
            return
        if via == "code_reference" and draft.refs and any(segments == written for _, written in draft.refs):
            return
        ref = (via, segments)
        dep = draft.known.get(ref, _UNRESOLVED)
        if dep is _UNRESOLVED:
            dep = draft.known[ref] = self._dependency(via, segments, draft)
        if dep is None:
            return
        if dep.via == "code_reference" and draft.type in _TYPE_UNITS and dep.target == ".".join(draft.path):
            return
        draft.deps.append(dep)

    def _dependency(self, via: str, segments: tuple[str, ...], draft: _Draft) -> Dependency | None:
        """The edge for one reference: its candidates in C#'s lookup order (see the module doc)."""
        if via in ("bare_call", "self_call"):
            candidates = [f"{t}.{segments[-1]}" for t in draft.types]
            if via == "bare_call":
                candidates += [f"{s}.{segments[-1]}" for s in self.statics]
            via = "calls"
        elif via == "static_call":
            candidates = [f"{c}.{segments[-1]}" for c in self._type_candidates(segments[:-1], draft)]
            via = "calls"
        else:
            candidates = self._type_candidates(segments, draft)
        if not candidates:
            return None
        known = self.declared if via == "calls" else self.declared_types
        target = next((c for c in candidates if c in known), candidates[-1] if via != "calls" else candidates[0])
        return Dependency(target, via, lookup=tuple(candidates))


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one C# file: types outermost first, members in source order."""
    try:
        return _Extractor(file_path, source, layout).run()
    except scan.ParseTimeoutError as error:
        return scan.parse_timeout(file_path, LANGUAGE, error)
