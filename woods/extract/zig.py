"""Zig extraction: files as structs, containers (struct, enum, union, opaque, error set), functions,
methods and tests.

A Zig file is itself a struct, so identifiers are dotted paths from the file path: `.zig` dropped,
a leading `src/` or `lib/` dropped, `/` → `.` (`clap/args.zig` → `clap.args`, `src/main.zig` →
`main`). Declarations append their names: `clap.args.SliceIterator`, its method
`clap.args.SliceIterator.next`, a file-level function `clap.parse`, a nested container
`clap.Help.Options`. Tests follow the names Zig's test runner prints: `test "parse flags"` in
`clap.zig` is `clap.test.parse flags`, `test helper` is `clap.test.helper`, an anonymous
`test {}` is `clap.test`.

Unit types: "module" (the whole file; `metadata["fields"]` when it has top-level fields, i.e. the
file is used as a struct type — its functions are then "method"s), "struct", "enum", "union", "opaque", "error_set" (a `const X =
struct/enum/union/opaque/error {…}` declaration), "function" (a file-level `fn`), "method" (a
`fn` inside a container), "test". A generic type — a function returning `type` whose body
returns a container (`fn List(comptime T: type) type { return struct { … }; }`) — is a
"function" unit with `metadata["generic"]` naming the container kind, and the container's
members sit under it like a struct's (`std.List.append`). Docstrings are `///` comments above a
declaration; a module's and a container's are its leading `//!` comments (the file's first
`///`/`//!` block for the module).

Dependencies: `@import("x.zig")` is an `import` of the module the path names (relative to the
importing file; `@import("std")` names the package) from the unit that contains it; names bound
at the top of a file (`const args = @import("args.zig")`, `const Param = @import("x.zig").Param`,
`const mem = std.mem`) are followed. Calls (`calls`): `f()` to a function of an enclosing
container or the file, `X.f()` on a container of the file or through an import binding,
`self.f()` and `Self.f()` inside a container's methods. Parameter, return and pointer types naming
a container of the file or an imported one are `code_reference`s.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from tree_sitter import Node

from woods.extract import base, scopes
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "zig"
_CONTAINERS = {
    "struct_declaration": "struct",
    "enum_declaration": "enum",
    "union_declaration": "union",
    "opaque_declaration": "opaque",
    "error_set_declaration": "error_set",
}
# Leading path segments that are a source root, not part of a file's name.
_SOURCE_ROOTS = frozenset({"src", "lib"})

_REFERENCES = """
(call_expression function: (identifier) @bare)
(call_expression function: (field_expression object: (identifier) member: (identifier)) @member)
((builtin_function (builtin_identifier) @import_name) @import (#eq? @import_name "@import"))
(parameter type: (identifier) @type)
(parameter type: (pointer_type (identifier) @type))
(function_declaration type: (identifier) @type)
(function_declaration type: (error_union_type (identifier) @type))
(comment) @comment
"""


def module_name(file_path: str) -> str:
    """The dotted name of a repository-relative `.zig` file (see the module docstring)."""
    parts = list(posixpath.normpath(file_path).split("/"))
    if len(parts) > 1 and parts[0] in _SOURCE_ROOTS:
        parts = parts[1:]
    parts[-1] = parts[-1].removesuffix(".zig")
    return ".".join(p for p in parts if p) or "root"


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Zig unit under construction: containers know their member names; methods know the name
    their receiver parameter goes by."""

    members: set[str] = field(default_factory=set)
    outer: _Draft | None = None
    receiver: str | None = None  # the first parameter's name when its type is the container
    self_aliases: set[str] = field(default_factory=set)  # `const Self = @This();`


class _Extractor(base.FileExtractor[_Draft]):
    """Containers walked in Python (never into function bodies); references by one query."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.directory = posixpath.dirname(file_path)
        self.module = module_name(file_path)
        self.comments: scopes.Comments  # (set by `run`, with the comments its query finds)
        self.scope_chains: dict[int, list[_Draft]] = {}  # `_scopes` of each draft (by id), once known
        self.bindings: dict[str, str] = {}  # top-level name → what it stands for (module or path)
        self.containers: dict[str, str] = {}  # container name → identifier (first declaration)

    def run(self) -> FileExtraction:
        tree = base.parse("zig", self.source)
        root = tree.root_node
        found = scopes.captures_by_name("zig", _REFERENCES, root)
        self.comments = scopes.Comments(found.get("comment", []), self.source)
        module = _Draft(self.module, "module", root, whole_file=True, namespace=self.module.rpartition(".")[0] or None)
        module.docstring = self._inner_docs(root) or self._first_docs(found.get("comment", []))
        self.drafts.append(module)
        fields = [c for c in root.named_children if c.type == "container_field"]
        if fields:  # a file with fields is a struct type (`Crc32.zig`): its functions are methods
            module.metadata["fields"] = [base.text(f.child_by_field_name("name"), self.source) for f in fields]
        self._walk(root, module)
        self._references(found)
        # A blank file has nothing to retrieve: no unit with empty source for it.
        kept = self.drafts if self.source.strip() else []
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in kept)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    # -- declarations ----------------------------------------------------------------------

    def _inner_docs(self, container: Node) -> str | None:
        lines: list[str] = []
        for child in container.children:
            if child.type == "comment":
                text = base.text(child, self.source)
                if text.startswith("//!"):
                    lines.append(text)
                    continue
            if child.type in ("comment", "{", "struct", "enum", "union", "opaque", "packed", "extern", "(", ")"):
                continue
            if lines:
                break
            if child.is_named:
                break
        return base.clean_comment("\n".join(lines)) if lines else None

    def _first_docs(self, comments: list[Node]) -> str | None:
        lines = [base.text(c, self.source) for c in comments[:1] if base.text(c, self.source).startswith("//!")]
        return base.clean_comment("\n".join(lines)) if lines else None

    def _docs(self, node: Node) -> str | None:
        block = [base.text(c, self.source) for c in self.comments.above(node.start_point[0])]
        docs = [line for line in block if line.startswith("///") and not line.startswith("////")]
        return base.clean_comment("\n".join(docs)) if docs else None

    def _walk(self, root: Node, module: _Draft) -> None:
        stack: list[tuple[Node, _Draft]] = [(c, module) for c in reversed(root.named_children)]
        while stack:
            node, owner = stack.pop()
            kind = node.type
            if kind == "variable_declaration":
                container = self._declaration(node, owner)
                if container is not None:
                    draft, body = container
                    stack.extend((c, draft) for c in reversed(body.named_children))
            elif kind == "function_declaration":
                function = self._function(node, owner)
                returned = self._returned_container(node) if function is not None else None
                if function is not None and returned is not None:
                    function.metadata["generic"] = _CONTAINERS[returned.type]  # `fn List(T) type { return struct … }`
                    stack.extend((c, function) for c in reversed(returned.named_children))
            elif kind == "test_declaration":
                self._test(node, owner)

    def _value(self, node: Node) -> Node | None:
        named = [c for c in node.named_children if c.type != "comment"]
        return named[-1] if len(named) > 1 else None

    def _declaration(self, node: Node, owner: _Draft) -> tuple[_Draft, Node] | None:
        name_node = next((c for c in node.named_children if c.type == "identifier"), None)
        value = self._value(node)
        if name_node is None or value is None:
            return None
        name = base.text(name_node, self.source)
        if value.type in _CONTAINERS:
            draft = self._new(node, name, _CONTAINERS[value.type], owner, value)
            draft.docstring = draft.docstring or self._inner_docs(value)
            self.containers.setdefault(name, draft.identifier)
            owner.members.add(name)
            return draft, value
        if value.type == "builtin_function" and base.text(value.named_child(0), self.source) == "@This":
            owner.self_aliases.add(name)  # `const Self = @This();`
        elif owner.type == "module":
            target = self._binding(value)
            if target is not None:
                self.bindings.setdefault(name, target)
        return None

    def _binding(self, value: Node) -> str | None:
        """What `@import("x.zig").A.B` or `std.mem` stands for, as a dotted name."""
        members: list[str] = []
        current = value
        while current.type == "field_expression":
            members.append(base.text(current.child_by_field_name("member"), self.source))
            obj = current.child_by_field_name("object")
            if obj is None:
                return None
            current = obj
        if current.type == "builtin_function":
            head = self._import_target(current)
        elif current.type == "identifier":
            written = base.text(current, self.source)
            head = self.bindings.get(written) or self.containers.get(written)
        else:
            head = None
        if head is None:
            return None
        return ".".join((head, *reversed(members)))

    def _import_target(self, builtin: Node) -> str | None:
        """The module an `@import("…")` names, or None for any other builtin."""
        if base.text(builtin.named_child(0), self.source) != "@import":
            return None
        arguments = next((c for c in builtin.named_children if c.type == "arguments"), None)
        string = arguments.named_child(0) if arguments is not None and arguments.named_child_count else None
        content = next((c for c in string.named_children if c.type == "string_content"), None) if string else None
        if content is None:
            return None
        written = base.text(content, self.source)
        if not written.endswith(".zig"):
            return written  # a package: `std`, `builtin`, `clap`
        path = posixpath.normpath(posixpath.join(self.directory, written))
        return None if path.startswith("../") else module_name(path)

    def _new(self, node: Node, name: str, unit_type: str, owner: _Draft, body: Node | None) -> _Draft:
        identifier = self.unique(f"{owner.identifier}.{name}", unit_type)
        draft = _Draft(identifier, unit_type, node, parent=owner.identifier, namespace=owner.identifier, outer=owner)
        stop = body.start_byte if body is not None else node.end_byte
        if body is not None and body.type in _CONTAINERS:  # `const X = struct(…) {`: up to the brace
            brace = self.source.find(b"{", body.start_byte, body.end_byte)
            stop = brace if brace != -1 else body.start_byte
        header = base.one_line(self.source[node.start_byte : stop].decode("utf-8", "replace"))
        draft.signature = header.rstrip(";{ ").rstrip()
        draft.docstring = self._docs(node)
        draft.metadata = {"pub": any(c.type == "pub" for c in node.children)}
        self.drafts.append(draft)
        return draft

    def _returned_container(self, node: Node) -> Node | None:
        """The container a type-returning function builds: `return struct { … };` in its body."""
        body = node.child_by_field_name("body")
        return_type = node.child_by_field_name("type")
        if body is None or return_type is None or base.text(return_type, self.source) != "type":
            return None
        for statement in body.named_children:
            returned = statement.named_child(0) if statement.type == "expression_statement" else None
            value = returned.named_child(0) if returned is not None and returned.type == "return_expression" else None
            if value is not None and value.type in _CONTAINERS:
                return value
        return None

    def _function(self, node: Node, owner: _Draft) -> _Draft | None:
        name = base.text(node.child_by_field_name("name"), self.source)
        if not name:
            return None
        unit_type = "function" if owner.type == "module" and "fields" not in owner.metadata else "method"
        if owner.type == "method":
            return None  # a function of a container a method builds: part of that method
        draft = self._new(node, name, unit_type, owner, node.child_by_field_name("body"))
        if any(c.type == "extern" for c in node.children):
            draft.metadata["extern"] = True
        owner.members.add(name)
        if unit_type == "method":
            draft.receiver = self._receiver(node, owner)
        return draft

    def _receiver(self, node: Node, owner: _Draft) -> str | None:
        """The first parameter's name when its type is the container (`self: *Self`)."""
        params = next((c for c in node.named_children if c.type == "parameters"), None)
        first = params.named_child(0) if params is not None and params.named_child_count else None
        if first is None or first.type != "parameter":
            return None
        type_text = base.text(first.child_by_field_name("type"), self.source).replace("const", "")
        type_name = type_text.strip().lstrip("*?").strip()
        container = owner.identifier.rpartition(".")[2]
        if type_name in (container, "@This()") or type_name in owner.self_aliases:
            return base.text(first.child_by_field_name("name"), self.source)
        return None

    def _test(self, node: Node, owner: _Draft) -> None:
        label = next((c for c in node.named_children if c.type in ("string", "identifier")), None)
        if label is None:
            name = "test"
        elif label.type == "string":
            content = next((c for c in label.named_children if c.type == "string_content"), None)
            name = f"test.{base.text(content, self.source)}" if content is not None else "test"
        else:
            name = f"test.{base.text(label, self.source)}"
        block = next((c for c in node.named_children if c.type == "block"), None)
        draft = self._new(node, name, "test", owner, block)
        draft.metadata = {}

    # -- references ------------------------------------------------------------------------

    def _references(self, found: dict[str, list[Node]]) -> None:
        spans = scopes.Spans([(d.node.start_byte, d.node.end_byte) for d in self.drafts])
        for kind in ("bare", "member", "import", "type"):
            nodes = found.get(kind, [])
            for node, index in zip(nodes, spans.owners([n.start_byte for n in nodes]), strict=True):
                draft = self.drafts[index if index is not None else 0]
                if kind == "bare":
                    self._bare_call(base.text(node, self.source), draft)
                elif kind == "member":
                    obj = base.text(node.child_by_field_name("object"), self.source)
                    self._member_call(obj, base.text(node.child_by_field_name("member"), self.source), draft)
                elif kind == "import":
                    target = self._import_target(node)
                    if target is not None:
                        draft.deps.append(Dependency(target, "import", lookup=(target,)))
                else:
                    self._type_reference(base.text(node, self.source), draft)

    def _scopes(self, draft: _Draft | None) -> list[_Draft]:
        """The containers around a unit, innermost first, the module last (asked once the walk is
        done, so each draft's chain is listed once)."""
        key = id(draft)
        found = self.scope_chains.get(key)
        if found is not None:
            return found
        chain: list[_Draft] = []
        self.scope_chains[key] = chain
        while draft is not None:
            if draft.type not in ("function", "method", "test") or "generic" in draft.metadata:
                chain.append(draft)
            draft = draft.outer
        return chain

    def _bare_call(self, name: str, draft: _Draft) -> None:
        for scope in self._scopes(draft):
            if name in scope.members:
                target = f"{scope.identifier}.{name}"
                draft.deps.append(Dependency(target, "calls", lookup=(target,)))
                return

    def _resolve_name(self, name: str, draft: _Draft) -> str | None:
        """A written container or binding name as a dotted target, or None."""
        for scope in self._scopes(draft):
            if name in scope.self_aliases:
                return scope.identifier
            if name in scope.members and scope.type != "module":
                return f"{scope.identifier}.{name}"
        if name in self.containers:
            return self.containers[name]
        return self.bindings.get(name)

    def _member_call(self, obj: str, member: str, draft: _Draft) -> None:
        target: str | None = None
        if draft.receiver is not None and obj == draft.receiver and draft.outer is not None:
            target = draft.outer.identifier
        else:
            target = self._resolve_name(obj, draft)
        if target is not None:
            call = f"{target}.{member}"
            draft.deps.append(Dependency(call, "calls", lookup=(call,)))

    def _type_reference(self, name: str, draft: _Draft) -> None:
        target = self._resolve_name(name, draft)
        if target is not None:
            draft.deps.append(Dependency(target, "code_reference", lookup=(target,)))


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Zig file: the file's module first, then its declarations in source order."""
    return _Extractor(file_path, source, layout).run()
