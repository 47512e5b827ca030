"""Go extraction: functions, methods (value and pointer receivers), structs, interfaces, other types.

Package path: an extractor sees one file, not `go.mod`, so the package is named by the file's
directory (`internal/billing/invoice.go` → `internal/billing`); a file at the repository root uses
its `package` clause name. The linker may prefix the module path later. Identifiers are
`<package>.Func`, `<package>.Type`, `<package>.Type.Method` (interface methods too). Go allows
several `func init()` per package, so init functions are `<package>.init(<file name>)`; any other
repeat of (identifier, type) inside one file gets `#2`, `#3` ….

No package unit is emitted (one per file would collide across the package's files); a unit's
import edges are the imports it actually uses, given as import paths (`via: "import"`), next to
its calls (`via: "calls"`: same-package `Func()`, `pkg.Func()` of imports, `recv.M()` on its own
receiver) and type references (`via: "code_reference"`).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from woods.extract import base, preorder
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction, Unit

LANGUAGE = "go"

# Predeclared identifiers: calls and type names that are never project code.
_BUILTINS = frozenset(
    {
        "any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32", "float64", "int",
        "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64",
        "uintptr", "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make",
        "max", "min", "new", "panic", "print", "println", "real", "recover", "true", "false", "iota", "nil",
    }
)
# `/v2`-style major-version suffixes are not part of the package name.
_MAJOR_VERSION = re.compile(r"v\d+\Z")
# A gopkg.in-style `.v3` suffix is not part of it either.
_DOT_VERSION = re.compile(r"\.v\d+\Z")


# What the declaration walk (`_Extractor._replay`) needs, in one query; capture indexes follow the
# order of the names below (an enclosing kind first, for nodes that start together).
_WALK = """
[(function_declaration) (method_declaration)] @function
[(type_spec) (type_alias)] @type
(method_elem) @method_elem
[(import_declaration) (package_clause)] @hidden
(method_declaration receiver: (_) @hidden)
(qualified_type) @qualified
(call_expression function: (identifier) @call_name)
(selector_expression operand: (identifier) @selector_operand)
(type_identifier) @type_name
"""
_FUNCTION, _TYPE, _METHOD_ELEM, _HIDDEN_KIND, _QUALIFIED, _CALL_NAME, _SELECTOR_OPERAND, _TYPE_NAME = range(8)
# From `_QUALIFIED` on, captures are references (they belong to a unit; the rest open scopes).
# What a scope holds: code (every reference), an interface method's signature (type names only,
# qualified ones with their parts), or nothing that counts.
_BODY, _SIGNATURE, _HIDDEN = range(3)
# `.M` right after a selector's operand, and the byte after it (`_called_member`). After the bytes
# of `_UNDECIDED` (white space, a comment's `/`, type arguments' `[`, the end of the file) only the
# tree can tell whether `x.M` is called.
_MEMBER = re.compile(rb"\.([A-Za-z_][A-Za-z0-9_]*)([^A-Za-z0-9_\x80-\xff]|\Z)")
_UNDECIDED = frozenset({b" ", b"\t", b"\r", b"\n", b"/", b"[", b""})
_NO_END = 1 << 62  # the end of no scope
_NO_EDGE = Dependency("", "")  # a cache miss (None is a cached "no edge")
_NO_EDGES: tuple[Dependency, ...] = (_NO_EDGE,)  # a cache miss of `_qualified` (() is "no edges")
_COMMENT = frozenset({"comment"})


def package_path(file_path: str, package_clause: str) -> str:
    """The directory of the file, or the `package` clause name for a file at the root."""
    directory = posixpath.dirname(file_path)
    return directory or package_clause or "main"


def import_name(path: str) -> str:
    """The name an import is referred to by when it has no alias (`gopkg.in/yaml.v3` → `yaml`)."""
    segments = [s for s in path.split("/") if s]
    if len(segments) > 1 and _MAJOR_VERSION.match(segments[-1]):
        segments.pop()
    last = segments[-1] if segments else path
    last = _DOT_VERSION.sub("", last)
    if last.startswith("go-"):
        last = last[3:]
    return last.replace("-", "_").replace(".", "_")


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Go unit under construction: a method knows its receiver; generic code its type parameters."""

    receiver_name: str | None = None
    receiver_type: str | None = None
    type_params: set[str] = field(default_factory=set)


class _Extractor(base.FileExtractor[_Draft]):
    """One iterative walk over the file; every reference goes to the innermost unit."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.package = ""
        self.imports: dict[str, str] = {}  # local name → import path
        self.siblings = preorder.Siblings()
        # Dependencies by (target, via), made once per file (they are frozen).
        self.edges: dict[tuple[str, str], Dependency] = {}
        # The edges of a plainly written `pkg.Name` by (text, via): `_qualified`.
        self.qualified: dict[tuple[bytes, str], tuple[Dependency, ...]] = {}

    def run(self) -> FileExtraction:
        tree = base.parse("go", self.source)
        root = tree.root_node
        clause = next((c for c in root.named_children if c.type == "package_clause"), None)
        clause_name = base.text(clause.named_child(0), self.source) if clause is not None and clause.named_child_count else ""
        self.package = package_path(self.file_path, clause_name)
        for decl in root.named_children:
            if decl.type == "import_declaration":
                self._imports(decl)
        self._replay(root)
        units = tuple(self._freeze(d) for d in self.drafts)
        return FileExtraction(
            self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path), {"package": self.package}
        )

    def _replay(self, root: Node) -> None:
        """The declaration walk, replayed over one query's captures (`preorder`).

        Functions, methods and type specs (local ones too) are units and own what is inside them;
        a method of an interface unit is a unit whose own types are its references (qualified
        ones and their parts, no calls). Imports, the package clause, a method's receiver and the
        parts of a qualified type are hidden; calls, selectors, qualified types and type names go
        to the innermost unit.

        A call `x.M()` is read from the capture of `x` (as any selector's operand, which adds the
        import `x` names): `_called_member` says whether its selector is called.
        """
        # Open scopes, outermost first: (node, end byte, owning unit, mode). The innermost one's
        # values are kept in locals; `enter` is asked only when a capture is not plainly inside it.
        stack: list[tuple[Node, int, _Draft | None, int]] = []
        top_end, owner, mode = _NO_END, None, _BODY
        spec_name = -1  # start of the name of the last type spec (never a reference to itself)
        source = self.source
        imports = self.imports
        plain = not root.has_error  # whether a call may be told from the text after it (`_called_member`)
        # The edge of a written type name (with the name) and of a called plain name (None:
        # predeclared), made once per name.
        type_edges: dict[bytes, tuple[str, Dependency | None]] = {}
        call_edges: dict[bytes, Dependency | None] = {}
        for start, negative_end, kind, node in preorder.captures("go", _WALK, root):
            end = -negative_end
            if start >= top_end or start == end:
                index = preorder.enter(stack, node, start, end)
                top_end, owner, mode = stack[-1][1:] if stack else (_NO_END, None, _BODY)
                if index != len(stack) - 1:  # an empty node (a MISSING name) outside the innermost scope
                    _, _, node_owner, node_mode = stack[index] if index >= 0 else (node, 0, None, _BODY)
                    if kind == _TYPE_NAME and node_owner is not None and node_mode != _HIDDEN and start != spec_name:
                        self._type_reference(source[start:end].decode("utf-8", "replace"), node_owner)
                    continue
            if mode == _HIDDEN:
                continue
            if kind >= _QUALIFIED:  # a reference: the innermost unit's, if any
                if owner is None:
                    continue
                if kind == _SELECTOR_OPERAND:
                    if mode == _BODY:
                        operand = source[start:end].decode("utf-8", "replace")
                        path = imports.get(operand)
                        if path is not None:
                            owner.deps.append(self._edge(path, "import"))
                            member = self._called_member(node, end, plain)
                            if member is not None:
                                owner.deps.append(self._edge(f"{path}.{member}", "calls"))
                        elif owner.receiver_name and operand == owner.receiver_name:
                            member = self._called_member(node, end, plain)
                            if member is not None:
                                target = f"{self.package}.{owner.receiver_type}.{member}"
                                owner.deps.append(self._edge(target, "calls"))
                elif kind == _TYPE_NAME:
                    if start != spec_name:  # `_type_reference`, its edge kept per written name
                        written = source[start:end]
                        named = type_edges.get(written)
                        if named is None:
                            type_name = written.decode("utf-8", "replace")
                            named = type_edges[written] = (type_name, self._name_edge(type_name, "code_reference"))
                        if named[1] is not None and named[0] not in owner.type_params:
                            owner.deps.append(named[1])
                elif kind == _CALL_NAME:
                    if mode == _BODY:  # `_call_name`, its edge kept per written name
                        written = source[start:end]
                        edge = call_edges.get(written, _NO_EDGE)
                        if edge is _NO_EDGE:
                            edge = call_edges[written] = self._name_edge(written.decode("utf-8", "replace"), "calls")
                        if edge is not None:
                            owner.deps.append(edge)
                else:  # a qualified type
                    self._qualified(node, owner, "code_reference")
                    if mode == _BODY:  # an interface method's walk reads the parts too
                        stack.append((node, end, owner, _HIDDEN))
                        top_end, mode = end, _HIDDEN
            elif kind in (_FUNCTION, _TYPE):
                if mode != _BODY:
                    continue
                if kind == _FUNCTION:
                    owner = self._function(node)
                else:
                    owner = self._type(node)
                    name = node.child_by_field_name("name")
                    spec_name = name.start_byte if name is not None else -1
                stack.append((node, end, owner, _BODY))
                top_end, mode = end, _BODY
            elif kind == _METHOD_ELEM:
                if owner is not None and owner.type == "interface" and mode == _BODY:
                    owner = self._interface_method(node, owner)
                    stack.append((node, end, owner, _SIGNATURE))
                    top_end, mode = end, _SIGNATURE
            else:  # imports, the package clause, a method's receiver
                stack.append((node, end, owner, _HIDDEN))
                top_end, mode = end, _HIDDEN

    # -- declarations ----------------------------------------------------------------------

    def _imports(self, decl: Node) -> None:
        # The import specs in pre-order; nothing inside a spec is one (nor is an anonymous node).
        stack = [decl]
        while stack:
            spec = stack.pop()
            if spec.type != "import_spec":
                stack.extend(reversed(spec.named_children))
                continue
            path_node = spec.child_by_field_name("path")
            path = base.text(path_node, self.source).strip('"`')
            alias_node = spec.child_by_field_name("name")
            alias = base.text(alias_node, self.source) if alias_node is not None else import_name(path)
            if alias not in ("_", "."):
                self.imports[alias] = path

    def _function(self, node: Node) -> _Draft:
        name = base.text(node.child_by_field_name("name"), self.source)
        body = node.child_by_field_name("body")
        if node.type == "method_declaration":
            recv_name, recv_type, pointer = self._receiver(node)
            parent = f"{self.package}.{recv_type}"
            identifier = self.unique(f"{parent}.{name}", "method")
            draft = _Draft(identifier, "method", node, parent, parent)
            draft.receiver_name, draft.receiver_type = recv_name, recv_type
            draft.metadata["receiver"] = {"name": recv_name, "type": recv_type, "pointer": pointer}
        else:
            qualified = f"{self.package}.{name}"
            if name == "init":
                qualified = f"{qualified}({posixpath.basename(self.file_path)})"
            draft = _Draft(self.unique(qualified, "function"), "function", node, None, self.package)
        draft.signature = self._header(node, body)
        draft.docstring = base.clean_comment(self.siblings.leading_comment(node, self.source, _COMMENT))
        draft.metadata["exported"] = name[:1].isupper()
        draft.type_params = self._type_params(node)
        self.drafts.append(draft)
        return draft

    def _type_params(self, node: Node) -> set[str]:
        params = node.child_by_field_name("type_parameters")
        if params is None:
            return set()
        return {
            base.text(c.child_by_field_name("name"), self.source)
            for c in params.named_children
            if c.type == "type_parameter_declaration"
        }

    def _receiver(self, node: Node) -> tuple[str | None, str, bool]:
        receiver = node.child_by_field_name("receiver")
        param = next((c for c in receiver.named_children if c.type == "parameter_declaration"), None) if receiver else None
        if param is None:
            return None, "_", False
        name_node = param.child_by_field_name("name")
        type_node = param.child_by_field_name("type")
        pointer = False
        while type_node is not None and type_node.type in ("pointer_type", "parenthesized_type", "generic_type"):
            pointer = pointer or type_node.type == "pointer_type"
            inner = type_node.child_by_field_name("type") if type_node.type == "generic_type" else None
            type_node = inner or next((c for c in type_node.named_children), None)
        type_name = base.text(type_node, self.source) if type_node is not None else "_"
        return (base.text(name_node, self.source) if name_node is not None else None), type_name, pointer

    def _type(self, spec: Node) -> _Draft:
        name = base.text(spec.child_by_field_name("name"), self.source)
        type_node = spec.child_by_field_name("type")
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(type_node.type if type_node else "", "type")
        declaration = spec.parent
        single = declaration is not None and declaration.type == "type_declaration" and sum(
            1 for c in declaration.named_children if c.type in ("type_spec", "type_alias")
        ) == 1
        span = declaration if single and declaration is not None else spec
        draft = _Draft(self.unique(f"{self.package}.{name}", kind), kind, span, None, self.package)
        body = None
        if type_node is not None and type_node.type == "struct_type":
            body = next((c for c in type_node.children if c.type == "field_declaration_list"), None)
        elif type_node is not None and type_node.type == "interface_type":
            body = next((c for c in type_node.children if c.type == "{"), None)
        header = self._header(span, body)
        draft.signature = header if header.startswith("type") else f"type {header}"
        draft.docstring = base.clean_comment(self.siblings.leading_comment(span, self.source, _COMMENT))
        draft.metadata["exported"] = name[:1].isupper()
        if spec.type == "type_alias":
            draft.metadata["alias"] = True
        draft.type_params = self._type_params(spec)
        self.drafts.append(draft)
        return draft

    def _interface_method(self, node: Node, owner: _Draft) -> _Draft:
        name = base.text(node.child_by_field_name("name"), self.source)
        identifier = self.unique(f"{owner.identifier}.{name}", "method")
        draft = _Draft(identifier, "method", node, owner.identifier, owner.identifier)
        draft.signature = base.one_line(base.text(node, self.source))
        draft.docstring = base.clean_comment(self.siblings.leading_comment(node, self.source, _COMMENT))
        draft.metadata = {"exported": name[:1].isupper(), "abstract": True}
        self.drafts.append(draft)
        return draft  # its types are references of its own (`_replay`)

    def _header(self, node: Node, body: Node | None) -> str:
        stop = body.start_byte if body is not None else node.end_byte
        return base.one_line(self.source[node.start_byte : stop].decode("utf-8", "replace"))

    # -- references ------------------------------------------------------------------------

    def _edge(self, target: str, via: str) -> Dependency:
        """The dependency on `target` (one object per target and file: dependencies are frozen)."""
        found = self.edges.get((target, via))
        if found is None:
            found = self.edges[(target, via)] = Dependency(target, via, lookup=(target,))
        return found

    def _name_edge(self, name: str, via: str) -> Dependency | None:
        """The edge a plain type name or called name makes: a same-package one unless predeclared."""
        return None if name in _BUILTINS else self._edge(f"{self.package}.{name}", via)

    def _call_name(self, name: str, owner: _Draft) -> None:
        """A call of a plain name (`Func()`): a same-package function unless predeclared."""
        edge = self._name_edge(name, "calls")
        if edge is not None:
            owner.deps.append(edge)

    def _called_member(self, operand: Node, operand_end: int, plain: bool) -> str | None:
        """`M` when the selector `x.M` whose operand is `operand` is the function of a call, else None.

        In a tree without errors, `x.M(` (nothing in between) is a call and `x.M` followed by
        anything but a space, a comment, `(` or `[` is not; other cases ask the tree.
        """
        if plain:
            match = _MEMBER.match(self.source, operand_end)
            if match is not None:
                following = match[2]
                if following == b"(":
                    return match[1].decode()
                if following not in _UNDECIDED:
                    return None
        selector = operand.parent
        call = selector.parent if selector is not None else None
        if selector is None or call is None or call.type != "call_expression" or call.child_by_field_name("function") != selector:
            return None
        return base.text(selector.child_by_field_name("field"), self.source)

    def _qualified(self, node: Node, owner: _Draft, via: str) -> None:
        written = self.source[node.start_byte : node.end_byte]
        edges = self.qualified.get((written, via), _NO_EDGES)
        if edges is _NO_EDGES:
            # `pkg.Name` with nothing in between splits at its dot (its edges kept per text);
            # anything else asks the tree.
            package, _, name = written.decode("utf-8", "replace").partition(".")
            plain = package.isidentifier() and name.isidentifier()
            if not plain:
                package = base.text(node.child_by_field_name("package"), self.source)
                name = base.text(node.child_by_field_name("name"), self.source)
            path = self.imports.get(package)
            edges = (self._edge(path, "import"), self._edge(f"{path}.{name}", via)) if path is not None else ()
            if plain:
                self.qualified[(written, via)] = edges
        owner.deps.extend(edges)

    def _type_reference(self, name: str, owner: _Draft) -> None:
        """A type name (never a spec's own name: `_replay` leaves those out)."""
        if name not in _BUILTINS and name not in owner.type_params:
            owner.deps.append(self._edge(f"{self.package}.{name}", "code_reference"))

    def _freeze(self, draft: _Draft) -> Unit:
        # One object per (target, via) in a file (`_edge`): de-duplicating by identity keeps the
        # first of each, as `base.dedupe_dependencies` would.
        identifier = draft.identifier
        deps = tuple(d for d in {id(d): d for d in draft.deps}.values() if d.target != identifier)
        return base.built(draft, self.file_path, LANGUAGE, self.source, deps)


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Go file, in source order (a type before its interface methods)."""
    return _Extractor(file_path, source, layout).run()
