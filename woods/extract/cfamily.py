"""The C and C++ walk: one extractor for both grammars (C++'s node types are a superset of C's).

Units:
- `file` — every file: identifier = its repository-relative path, the whole file. It is what an
  `#include` names, so include edges (`via: "import"`) hang off it and resolve to it; top-level
  units have it as `parent`.
- `function` (free functions, C++ functions defined inside a namespace), `method` (member functions
  defined in a class body or out of line as `void Foo::bar() {}`, destructors with
  `metadata["kind"] = "destructor"`, pure virtual declarations with `metadata["abstract"]`),
  `constructor`, `class`, `struct`, `union`, `enum`, `type_alias` (`typedef`, `using X = …`),
  `macro` (`#define NAME …` and `#define NAME(args) …`; a define without a value is an include
  guard or a flag, not a definition worth retrieving, and is skipped).
- Declarations without a body are not units: a prototype in a header would otherwise shadow the
  definition in the `.c`/`.cpp` file (both would answer to one name); the header's `file` unit
  holds the prototype's text. Pure virtual functions are the exception — nothing else defines them.
- Function bodies are never units' containers: local classes, lambdas and nested blocks belong to
  the enclosing function.

Identifiers: C `name` (file-static functions too — the store tells same-named units of two files
apart); C++ `ns::Class::method` in the language's own spelling. Inline namespaces are transparent
(`fmt::v11::format` is `fmt::format`, as callers write it), anonymous namespaces add nothing,
template arguments are dropped from names (`formatter<int>` is a `formatter` with
`metadata["specialization"]`). A repeated (identifier, type) in one file — overloads,
specializations, `#ifdef` alternatives — gets `#2`, `#3` … in source order. Members of the n-th
specialization are named from the template's name (`fmt::formatter::parse#2`) and have that
specialization's unit as parent. An out-of-line definition `void Foo::bar() {}` attaches to the
class `Foo` declared in this file when there is one (through the enclosing namespaces), else to
`<enclosing namespace>::Foo::bar`; its qualifier names a namespace, and it is a function, only when
that name is a namespace opened or `using`-ed in this file.

Dependencies: `#include` → the file unit (`via: "import"`; lookups: the path next to the including
file, then below each ancestor directory and its `include/`), base classes (`superclass`),
calls (`f()`, `ns::f()`, `Type::f()`, `this->f()`) and type names (`code_reference`), each with
lookup candidates from the innermost scope outwards, as C++ name lookup tries them. `std::` names
and template parameters are never edges.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from tree_sitter import Node, QueryCursor

from woods.extract import base, scan
from woods.units import Dependency, FileExtraction

# Extensions of header files (`.h` is decided by content for the grammar, see woods/extract/c.py).
HEADER_EXTENSIONS = frozenset({".h", ".hh", ".hpp", ".hxx", ".h++", ".inl", ".ipp", ".tpp"})

# Nodes whose children are declarations of the same scope: the walk descends into them.
_CONTAINERS = frozenset(
    {
        "translation_unit", "declaration_list", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
        "preproc_elifdef", "ERROR", "linkage_specification", "friend_declaration", "export_declaration",
        "labeled_statement",  # `public: int f() {…}` inside a class body the grammar misread
    }
)
# Type specifiers that declare a unit when they have a body.
_TYPE_SPECIFIERS = {
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "class_specifier": "class",
}
_TYPE_UNITS = frozenset(_TYPE_SPECIFIERS.values())
# Declarators that wrap the one naming a function (`*f()`, `&f()`, `(f)()`, `[[attr]] f()`).
_DECLARATOR_WRAPPERS = frozenset(
    {"pointer_declarator", "reference_declarator", "parenthesized_declarator", "attributed_declarator"}
)
# Simple-name node types of both grammars.
_NAME_NODES = frozenset({"identifier", "field_identifier", "type_identifier", "namespace_identifier"})
# Function specifiers recorded in metadata["specifiers"].
_SPECIFIERS = frozenset({"static", "inline", "virtual", "explicit", "constexpr", "consteval", "extern"})
_SPECIFIER_NODES = frozenset({"storage_class_specifier", "virtual", "explicit_function_specifier"})
# Children of a function where its header (signature) ends.
_HEADER_ENDS = frozenset(
    {"compound_statement", "field_initializer_list", "try_statement", "default_method_clause", "delete_method_clause",
     "number_literal"}
)
_COMMENTS = frozenset({"comment"})
# Every node type the walk acts on; anything else (comments, statements, punctuation) is passed over.
_WALKED = _CONTAINERS | frozenset(_TYPE_SPECIFIERS) | {
    "namespace_definition", "template_declaration", "function_definition", "declaration", "field_declaration",
    "type_definition", "alias_declaration", "preproc_def", "preproc_function_def", "preproc_include",
    "using_declaration",
}
# Namespaces whose names are never project code (and their spellings, to skip them before parsing).
_FOREIGN_ROOTS = frozenset({"std", "boost"})
_FOREIGN_PREFIXES = tuple(f"{p}{root}::".encode() for root in sorted(_FOREIGN_ROOTS) for p in ("", "::"))

# One query per grammar finds every call and type name; each goes to the innermost unit holding it.
# Besides `@call` and `@type`, marker captures say what a type name's parent makes of it, so the
# scan never asks a node for its parent (tree-sitter finds a parent by descending from the root):
# `@declared` — the name a declaration introduces (`struct x {…}`, `using x = …`, `struct x<T> {…}`),
# never a reference; `@typedef` — a `typedef`'s declarator, declared only when it is the first one
# (checked on the tree, they are few); `@named` — the name of a `ns::Name` or `Name<T>`, which
# stands for the full spelling. Of member calls only `this->f()` can be an edge: only those are captured.
_C_REFERENCES = """
(call_expression function: (identifier) @call)
(type_identifier) @type
(struct_specifier name: (type_identifier) @declared body: (_))
(union_specifier name: (type_identifier) @declared body: (_))
(enum_specifier name: (type_identifier) @declared body: (_))
(type_definition declarator: (type_identifier) @typedef)
"""
_CPP_REFERENCES = """
(call_expression function: [(identifier) (qualified_identifier) (template_function)] @call)
(call_expression function: (field_expression argument: (this)) @call)
(type_identifier) @type
(struct_specifier name: (type_identifier) @declared body: (_))
(union_specifier name: (type_identifier) @declared body: (_))
(enum_specifier name: (type_identifier) @declared body: (_))
(class_specifier name: (type_identifier) @declared body: (_))
(struct_specifier name: (template_type name: (type_identifier) @declared) body: (_))
(union_specifier name: (template_type name: (type_identifier) @declared) body: (_))
(enum_specifier name: (template_type name: (type_identifier) @declared) body: (_))
(class_specifier name: (template_type name: (type_identifier) @declared) body: (_))
(alias_declaration name: (type_identifier) @declared)
(type_definition declarator: (type_identifier) @typedef)
(type_definition declarator: (template_type name: (type_identifier) @typedef))
(template_type name: (type_identifier) @named)
(qualified_identifier name: (type_identifier) @named)
"""
# A qualified name spelled with nothing but identifiers and `::` (`ns::detail::f`, `::g`): when its
# node holds no error (ERROR or MISSING), its segments are its text split at `::` (what `_spelled`
# finds by walking it). Almost every C++ tree has an error somewhere (a macro the grammar cannot
# see past), so this is asked of the name's own node (`has_error`), not of the tree.
_PLAIN_QUALIFIED = re.compile(rb"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")
# Units whose references are not collected: the file's are its units', a macro's are text.
_NO_REFERENCES = frozenset({"file", "macro"})


def _split_plain(text: bytes) -> tuple[tuple[str, ...], bool]:
    """`_spelled` of a name matching `_PLAIN_QUALIFIED`: its segments, and whether it starts with `::`."""
    rooted = text[:2] == b"::"
    return tuple(text.decode("ascii").split("::")[1:] if rooted else text.decode("ascii").split("::")), rooted


def include_candidates(file_path: str, written: str, prefixes: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Repository paths `#include "written"` in `file_path` may name, most likely first: next to
    the including file, then below each ancestor directory (nearest first) and its `include/`.
    `prefixes` is `include_prefixes(file_path)`, computed once per file by the extractor."""
    if prefixes is None:
        prefixes = include_prefixes(file_path)
    if written[:1] not in ("/", ".") and "./" not in written:  # nothing to normalise or drop
        return tuple(prefix + written for prefix in prefixes)
    found = [posixpath.normpath(prefix + written) for prefix in prefixes] if (
        "./" in written or written.startswith(".")  # `../x.h`, `./x.h`: only then normalise
    ) else [prefix + written for prefix in prefixes]
    return tuple(dict.fromkeys(p for p in found if p != ".." and not p.startswith("../") and not p.startswith("/")))


def include_prefixes(file_path: str) -> tuple[str, ...]:
    """The directories (`dir/`, or `` for the root) `include_candidates` tries, in order, once each."""
    directory = posixpath.dirname(file_path)
    parts = directory.split("/") if directory else []
    found = [f"{directory}/" if directory else ""]
    for depth in range(len(parts), -1, -1):
        ancestor = "/".join(parts[:depth])
        found.append(f"{ancestor}/" if ancestor else "")
        if ancestor != "include" and not ancestor.endswith("/include"):
            found.append(f"{ancestor}/include/" if ancestor else "include/")
    return tuple(dict.fromkeys(found))


@dataclass(slots=True)
class _Draft(base.Draft):
    """A C/C++ unit under construction, with what its references are resolved against."""

    path: tuple[str, ...] = ()  # qualified name segments without the `#n` suffix
    scopes: tuple[str, ...] = ("",)  # prefixes unqualified names are tried with, innermost first
    cls: str | None = None  # the class whose members a method body sees (`this->f()`)
    type_params: frozenset[str] = frozenset()
    refs: list[tuple[str, tuple[str, ...], bool]] = field(default_factory=list)  # the walk's (via, segments, global)


# A node the walk will visit: (node, its context, its parent's children, its index there). The
# children list lets the comment above a declaration be read by indexing rather than by
# `prev_sibling`, which tree-sitter answers by searching down from the root; None when unknown.
_Entry = tuple[Node, "_Ctx", list[Node] | None, int]


def _queue(stack: list[_Entry], children: list[Node], ctx: _Ctx) -> None:
    """Push `children` so that they pop in source order."""
    stack.extend(zip(reversed(children), repeat(ctx), repeat(children), range(len(children) - 1, -1, -1)))


@dataclass(frozen=True, slots=True)
class _Ctx:
    """Where a declaration sits: its enclosing scope, unit, class, template and access."""

    prefix: tuple[str, ...]
    owner: _Draft
    cls: _Draft | None = None
    first: Node | None = None  # the `template <…>` the declaration belongs to
    type_params: frozenset[str] = frozenset()
    access: str | None = None
    first_place: tuple[list[Node], int] | None = None  # `first` among its siblings (see `_Entry`)


def _strip_operator(name: str) -> str:
    """`operator ==` → `operator==`; `operator new` and `operator bool` keep their space."""
    if name.startswith("operator ") and not name[9:10].isalnum() and name[9:10] != "_":
        return "operator" + name[9:]
    return name


class CFamilyExtractor(base.FileExtractor[_Draft]):
    """One walk over the declaration levels of a file, then one reference scan (woods/extract/scan.py)."""

    def __init__(self, file_path: str, source: bytes, grammar: str, language: str) -> None:
        super().__init__(file_path, source)
        self.grammar = grammar
        self.language = language
        self.cpp = grammar == "cpp"
        self.declared: set[str] = set()  # qualified names (no `#n`) of this file's units
        self.declared_types: set[str] = set()
        self.classes: dict[str, list[str]] = {}  # simple class name → qualified names
        self.class_units: dict[str, str] = {}  # qualified class name → identifier of its last unit
        self.scope_lists: dict[tuple[str, ...], tuple[str, ...]] = {}  # `_scopes`, once per prefix
        self.include_prefixes: tuple[str, ...] | None = None  # `include_prefixes` of this file
        self.place: tuple[Node | None, list[Node] | None, int] = (None, None, 0)  # the node being walked
        self.plain = False  # the tree has no error, so `_PLAIN_QUALIFIED` holds for every name in it
        self.namespaces: set[str] = set()  # simple names of namespaces opened or used here
        # One Dependency per (via, name, rooted, scopes): units of a file share their edges' objects.
        self.dependencies: dict[tuple[str, tuple[str, ...], bool, tuple[str, ...]], Dependency] = {}

    # -- the walk ---------------------------------------------------------------------------

    def run(self) -> FileExtraction:
        tree = scan.parse(self.grammar, self.source)
        root = tree.root_node
        self.plain = not root.has_error
        header = posixpath.splitext(self.file_path)[1].lower() in HEADER_EXTENSIONS
        file_unit = _Draft(self.file_path, "file", root, whole_file=True, metadata={"header": header})
        self.drafts.append(file_unit)
        stack: list[_Entry] = []
        _queue(stack, root.children, _Ctx((), file_unit))
        while stack:
            node, ctx, siblings, index = stack.pop()
            kind = node.type
            if kind not in _WALKED:
                continue
            self.place = (node, siblings, index)
            if kind in _CONTAINERS:
                body = node.child_by_field_name("body") if kind == "linkage_specification" else None
                if body is not None and body.type != "declaration_list":
                    stack.append((body, ctx, None, 0))
                else:
                    _queue(stack, (body or node).children, ctx)
            elif kind == "namespace_definition":
                self._namespace(node, ctx, stack)
            elif kind == "template_declaration":
                inner = _Ctx(ctx.prefix, ctx.owner, ctx.cls, ctx.first or node,
                             ctx.type_params | self._template_params(node), ctx.access,
                             ctx.first_place if ctx.first is not None else (siblings, index) if siblings is not None else None)
                stack.extend((c, inner, None, 0) for c in reversed(node.named_children) if c.type != "template_parameter_list")
            elif kind == "function_definition":
                self._function_definition(node, ctx, stack)
            elif kind in _TYPE_SPECIFIERS:
                if node.child_by_field_name("body") is not None:
                    self._type(node, ctx, stack, ctx.first or node)
            elif kind in ("declaration", "field_declaration"):
                self._declaration(node, ctx, stack)
            elif kind == "type_definition":
                self._typedef(node, ctx, stack)
            elif kind == "alias_declaration":
                self._alias(node, ctx)
            elif kind in ("preproc_def", "preproc_function_def"):
                self._macro(node, ctx)
            elif kind == "preproc_include":
                self._include(node, file_unit)
            elif kind == "using_declaration":
                self._using(node)
        self._scan_references(root)
        units = tuple(base.freeze(d, self.file_path, self.language, self.source) for d in self.drafts)
        return FileExtraction(self.file_path, self.language, units, base.syntax_warnings(tree, self.file_path))

    def _scan_references(self, root: Node) -> None:
        """Resolve every call and type name into an edge of the innermost unit holding it, in
        source order (`scan.sweep`), after the edges the walk found (includes, base classes)."""
        drafts = self.drafts
        for draft in drafts:
            for via, segments, rooted in dict.fromkeys(draft.refs):  # a name used twice is one edge
                self._refer(draft, via, segments, rooted)
        order = sorted(range(len(drafts)), key=lambda i: (drafts[i].node.start_byte, -drafts[i].node.end_byte, i))
        spans: list[tuple[int, int, _Draft | None]] = []
        outermost: list[Node] = []  # the units no other unit holds, file and macros aside
        reach = -1
        for i in order:
            unit, node = drafts[i], drafts[i].node
            start, end = node.start_byte, node.end_byte
            if unit.type in _NO_REFERENCES:
                spans.append((start, end, None))
                continue
            spans.append((start, end, unit))
            if start >= reach:
                outermost.append(node)
                reach = end
        # Only captures inside those units can matter, so the query runs over their subtrees alone
        # (about half of a C file is prototypes, globals and comments). Exact when the tree has no
        # error: a capture inside a unit's bytes is then inside its subtree. A tree with errors may
        # hold a zero-width (MISSING) name at a unit's first byte outside it; it is queried whole.
        cursor = QueryCursor(scan.compiled_query(self.grammar, _CPP_REFERENCES if self.cpp else _C_REFERENCES))
        parts = [cursor.captures(node) for node in outermost] if not root.has_error else [cursor.captures(root)]
        declared = {n.id for found in parts for n in found.get("declared", ())}
        typedefs = {n.id for found in parts for n in found.get("typedef", ())}
        named = {n.id for found in parts for n in found.get("named", ())}
        # (start, 0 for a call / 1 for a type, index, node): sorted, the order of `scan.captures`
        # (source order; at one position calls first, then the query's own order).
        calls = [n for found in parts for n in found.get("call", ())]
        types = [n for found in parts for n in found.get("type", ())]
        decorated = [(n.start_byte, 0, i, n) for i, n in enumerate(calls)]
        decorated += [(n.start_byte, 1, i, n) for i, n in enumerate(types)]
        decorated.sort()
        source = self.source
        seen: set[tuple[int, int, bytes]] = set()  # (draft, capture, text): a repeated name is one edge
        plain = self.plain
        for draft, position, kind, _, node in scan.sweep(spans, decorated):
            key = (id(draft), kind, source[position : node.end_byte])
            if key in seen or key[2].startswith(_FOREIGN_PREFIXES):
                continue
            if kind == 0:
                seen.add(key)
                if node.type == "identifier":
                    self._refer(draft, "calls", (key[2].decode("utf-8", "replace"),), False)
                elif _PLAIN_QUALIFIED.fullmatch(key[2]) and (plain or not node.has_error):  # `ns::f()`
                    self._refer(draft, "calls", *_split_plain(key[2]))
                else:
                    self._call(node, draft)
                continue
            node_id = node.id
            if node_id in declared or node_id in typedefs and self._is_declared_name(node, node.parent):
                continue
            if node_id in named:  # part of `ns::Name<T>`: one edge per full spelling
                top = self._climb(node)
                full = (id(draft), kind, source[top.start_byte : top.end_byte])
                if full in seen or full[2].startswith(_FOREIGN_PREFIXES):
                    continue
                seen.add(full)
                holder = top.parent
                while holder is not None and holder.type == "qualified_identifier":
                    holder = holder.parent
                if holder is not None and holder.type == "function_declarator":
                    continue  # the class qualifying an out-of-line definition (`buffer<T>::push`)
                segments, rooted = _split_plain(full[2]) if _PLAIN_QUALIFIED.fullmatch(full[2]) and (
                    plain or not top.has_error
                ) else self._spelled(top)
                if segments:
                    self._refer(draft, "code_reference", segments, rooted)
                continue
            seen.add(key)
            self._refer(draft, "code_reference", (key[2].decode("utf-8", "replace"),), False)

    # -- declarations ----------------------------------------------------------------------

    def _new(self, path: tuple[str, ...], unit_type: str, node: Node, ctx: _Ctx, first: Node | None) -> _Draft:
        qualified = "::".join(path)
        identifier = self.unique(qualified, unit_type)
        namespace = "::".join(path[:-1]) or None
        draft = _Draft(identifier, unit_type, node, ctx.owner.identifier, namespace, first=first)
        draft.path = path
        draft.docstring = base.clean_comment(self._leading_comment(first or node, ctx))
        draft.type_params = ctx.type_params
        self.declared.add(qualified)
        self.drafts.append(draft)
        return draft

    def _leading_comment(self, node: Node, ctx: _Ctx) -> str | None:
        """`base.leading_comment(node)`, read from the children list the walk found `node` in."""
        siblings: list[Node] | None = None
        index = 0
        if node is self.place[0]:
            siblings, index = self.place[1], self.place[2]
        elif node is ctx.first and ctx.first_place is not None:
            siblings, index = ctx.first_place
        if siblings is None:
            return base.leading_comment(node, self.source, _COMMENTS)
        return base.comment_block_before(siblings, index, node, self.source, _COMMENTS)

    def _scopes(self, prefix: tuple[str, ...]) -> tuple[str, ...]:
        found = self.scope_lists.get(prefix)
        if found is None:
            found = self.scope_lists[prefix] = tuple("::".join(prefix[:n]) for n in range(len(prefix), -1, -1))
        return found

    def _namespace(self, node: Node, ctx: _Ctx, stack: list[_Entry]) -> None:
        name = node.child_by_field_name("name")
        segments: tuple[str, ...] = ()
        if name is not None and not any(c.type == "inline" for c in node.children):
            segments = tuple(base.text(c, self.source) for c in name.named_children) if name.named_child_count else (
                base.text(name, self.source),
            )
            self.namespaces.update(segments)
        body = node.child_by_field_name("body")
        if body is not None:
            _queue(stack, body.children, _Ctx(ctx.prefix + segments, ctx.owner))

    def _template_params(self, node: Node) -> frozenset[str]:
        params = node.child_by_field_name("parameters")
        names: set[str] = set()
        for param in params.named_children if params is not None else ():
            named = param.child_by_field_name("name")
            if named is None:
                named = next((c for c in param.named_children if c.type in ("type_identifier", "identifier")), None)
            if named is None:
                declarator = param.child_by_field_name("declarator")
                named = declarator if declarator is not None and declarator.type == "identifier" else None
            if named is not None:
                names.add(base.text(named, self.source))
        return frozenset(names)

    def _type(self, node: Node, ctx: _Ctx, stack: list[_Entry], first: Node, name: str | None = None,
              body: Node | None = None, unit_type: str | None = None) -> _Draft | None:
        unit_type = unit_type or _TYPE_SPECIFIERS.get(node.type, "class")
        name_node = node.child_by_field_name("name")
        metadata: dict[str, Any] = {}
        segments: tuple[str, ...] = ()
        if name is not None:
            segments = (name,)
        elif name_node is not None:
            if name_node.type == "template_type":
                metadata["specialization"] = base.one_line(base.text(name_node.child_by_field_name("arguments"), self.source))
            segments, _ = self._spelled(name_node)
        if not segments:
            return None  # an anonymous struct or union: its fields belong to the enclosing unit
        path = ctx.prefix + segments
        draft = self._new(path, unit_type, node, ctx, first)
        body = body if body is not None else node.child_by_field_name("body")
        draft.signature = self._header(first, body)
        draft.scopes = self._scopes(path) if self.cpp else ("",)  # C has one scope for type names
        draft.cls = "::".join(path)
        if ctx.first is not None:
            metadata["template"] = True
        if ctx.access is not None:
            metadata["access"] = ctx.access
        draft.metadata = metadata
        self.declared_types.add(draft.cls)
        self.classes.setdefault(segments[-1], []).append(draft.cls)
        self.class_units[draft.cls] = draft.identifier
        for clause in node.children:
            if clause.type == "base_class_clause":
                self._bases(clause, draft)
        if body is not None and unit_type != "enum":
            # C has one tag namespace: a struct declared inside another is still `name`.
            scope = path if self.cpp else ctx.prefix
            default = ("private" if unit_type == "class" else "public") if self.cpp else None
            inner = _Ctx(scope, draft, draft, None, ctx.type_params, default)
            members: list[_Entry] = []
            children = body.children
            for index, child in enumerate(children):
                if child.type == "access_specifier":
                    access = base.text(child, self.source).strip().rstrip(":").strip()
                    inner = _Ctx(scope, draft, draft, None, ctx.type_params, access)
                else:
                    members.append((child, inner, children, index))
            stack.extend(reversed(members))
        return draft

    def _bases(self, clause: Node, draft: _Draft) -> None:
        for child in clause.named_children:
            if child.type in ("type_identifier", "qualified_identifier", "template_type"):
                segments, rooted = self._spelled(child)
                if segments and segments[0] not in _FOREIGN_ROOTS:
                    draft.refs.append(("superclass", segments, rooted))
                draft.metadata.setdefault("bases", []).append(base.one_line(base.text(child, self.source)))

    def _declaration(self, node: Node, ctx: _Ctx, stack: list[_Entry]) -> None:
        type_node = node.child_by_field_name("type")
        if type_node is not None and type_node.type in _TYPE_SPECIFIERS and type_node.child_by_field_name("body"):
            self._type(type_node, ctx, stack, ctx.first or node)
            return
        if node.type != "field_declaration" or ctx.cls is None:
            return
        default = node.child_by_field_name("default_value")
        if default is not None and base.text(default, self.source) == "0":
            declarator = self._function_declarator(node)
            if declarator is not None:  # `virtual void f() = 0;`: the only definition there is
                draft = self._callable(node, declarator, ctx)
                if draft is not None:
                    draft.metadata["abstract"] = True

    def _typedef(self, node: Node, ctx: _Ctx, stack: list[_Entry]) -> None:
        declarator = node.child_by_field_name("declarator")
        name_node = declarator
        while name_node is not None and name_node.type not in ("type_identifier", "primitive_type"):
            inner = name_node.child_by_field_name("declarator")
            name_node = inner if inner is not None else next(
                (c for c in reversed(name_node.named_children) if c.type.endswith("declarator") or c.type == "type_identifier"),
                None,
            )
        type_node = node.child_by_field_name("type")
        if node.has_error and type_node is not None and type_node.type == "macro_type_specifier":
            # `typedef RET (CALLCONV* NAME)(args);` reads as a macro call `RET(CALLCONV* NAME)`:
            # the name is the last type inside it, not whatever the declarator salvaged.
            named = type_node.child_by_field_name("type")
            name_node = named.child_by_field_name("type") if named is not None else None
        if name_node is None or name_node.type not in ("type_identifier", "primitive_type"):
            return
        name = base.text(name_node, self.source)
        first = ctx.first or node
        if type_node is not None and type_node.type in _TYPE_SPECIFIERS and type_node.child_by_field_name("body"):
            tag = type_node.child_by_field_name("name")
            draft = self._type(type_node, ctx, stack, first, name=name)
            if draft is not None:
                draft.node = node
                draft.metadata["typedef"] = True
                if tag is not None:
                    draft.metadata["tag"] = base.text(tag, self.source)
            return
        draft = self._new(ctx.prefix + (name,), "type_alias", node, ctx, first)
        draft.signature = self._statement(first, node)
        draft.scopes = self._scopes(ctx.prefix)
        self.declared_types.add("::".join(draft.path))

    def _alias(self, node: Node, ctx: _Ctx) -> None:
        name = base.text(node.child_by_field_name("name"), self.source)
        first = ctx.first or node
        draft = self._new(ctx.prefix + (name,), "type_alias", node, ctx, first)
        draft.signature = self._statement(first, node)
        draft.scopes = self._scopes(ctx.prefix)
        if ctx.access is not None:
            draft.metadata["access"] = ctx.access
        self.declared_types.add("::".join(draft.path))

    def _macro(self, node: Node, ctx: _Ctx) -> None:
        value = node.child_by_field_name("value")
        function_like = node.type == "preproc_function_def"
        if value is None and not function_like:
            return  # include guards and flags
        name = base.text(node.child_by_field_name("name"), self.source)
        draft = self._new((name,), "macro", node, ctx, None)
        stop = value.start_byte if value is not None else node.end_byte
        draft.signature = base.one_line(self.source[node.start_byte : stop].decode("utf-8", "replace"))
        draft.metadata = {"function_like": function_like}

    def _include(self, node: Node, file_unit: _Draft) -> None:
        path_node = node.child_by_field_name("path")
        if path_node is None:
            return
        raw = base.text(path_node, self.source).strip()
        if raw[:1] not in ('"', "<") or len(raw) < 3:
            return  # `#include MACRO`
        written = raw[1:-1].strip()
        if self.include_prefixes is None:
            self.include_prefixes = include_prefixes(self.file_path)
        file_unit.deps.append(Dependency(written, "import", lookup=include_candidates(self.file_path, written,
                                                                                      self.include_prefixes)))

    def _using(self, node: Node) -> None:
        if any(c.type == "namespace" for c in node.children):
            for child in node.named_children:
                segments, _ = self._spelled(child)
                self.namespaces.update(segments)

    # -- functions -------------------------------------------------------------------------

    def _function_declarator(self, node: Node) -> Node | None:
        current = node.child_by_field_name("declarator")
        while current is not None:
            if current.type in ("function_declarator", "operator_cast"):
                return current
            if current.type not in _DECLARATOR_WRAPPERS:
                return None
            inner = current.child_by_field_name("declarator")
            current = inner if inner is not None else (current.named_children[-1] if current.named_child_count else None)
        return None

    def _function_definition(self, node: Node, ctx: _Ctx, stack: list[_Entry]) -> None:
        body = node.child_by_field_name("body")
        declarator = self._function_declarator(node)
        if declarator is None:
            self._misparsed(node, ctx, stack)
            return
        if body is None:
            return  # `= default` / `= delete`
        self._callable(node, declarator, ctx)

    def _callable(self, node: Node, declarator: Node, ctx: _Ctx) -> _Draft | None:
        if declarator.type == "operator_cast":
            segments: tuple[str, ...] = ("operator " + base.one_line(base.text(declarator.child_by_field_name("type"), self.source)),)
            rooted = False
        else:
            named = declarator.child_by_field_name("declarator")
            text = self.source[named.start_byte : named.end_byte] if named is not None and (
                self.plain or not named.has_error
            ) else b""
            segments, rooted = _split_plain(text) if _PLAIN_QUALIFIED.fullmatch(text) else self._spelled(named)
        if not segments:
            return None
        name = segments[-1]
        qualifier = segments[:-1]
        metadata: dict[str, Any] = {}
        if qualifier:
            owner_path = self._qualifier_path(qualifier, () if rooted else ctx.prefix)
            is_class = qualifier[-1] in self.classes or qualifier[-1] not in self.namespaces
            cls = "::".join(owner_path) if is_class else None
            path = owner_path + (name,)
            parent = self._class_identifier(cls) if cls is not None else ctx.owner.identifier
        elif ctx.cls is not None:
            cls = ctx.cls.cls
            path = ctx.cls.path + (name,)
            parent = ctx.cls.identifier
        else:
            cls = None
            path = ctx.prefix + (name,)
            parent = ctx.owner.identifier
        class_name = cls.rpartition("::")[2] if cls is not None else None
        if cls is None:
            unit_type = "function"
        elif name == class_name:
            unit_type = "constructor"
        else:
            unit_type = "method"
            if name.startswith("~"):
                metadata["kind"] = "destructor"
        first = ctx.first or node
        draft = self._new(path, unit_type, node, ctx, first)
        draft.parent = parent
        draft.cls = cls
        draft.scopes = self._scopes(path[:-1])  # a body sees its class, then the enclosing namespaces
        # One pass over the children: the specifiers, and where the header stops (the body, a
        # constructor's initialiser list, `= default`, `= 0` …).
        specifiers: list[str] = []
        stop = node.end_byte
        for child in node.children:
            kind = child.type
            if kind in _HEADER_ENDS:
                stop = child.start_byte
                break
            if kind in _SPECIFIER_NODES:
                word = base.text(child, self.source)
                if word in _SPECIFIERS:
                    specifiers.append(word)
        header = base.one_line(self.source[first.start_byte : stop].decode("utf-8", "replace")).rstrip(";").rstrip()
        draft.signature = header[:-1].rstrip() if header.endswith("=") else header
        if specifiers:
            metadata["specifiers"] = specifiers
        if "static" in specifiers:
            metadata["static"] = True
        if ctx.first is not None:
            metadata["template"] = True
        if ctx.access is not None:
            metadata["access"] = ctx.access
        draft.metadata = metadata
        return draft

    def _class_identifier(self, qualified: str) -> str:
        """The identifier of the last unit declared as class `qualified` in this file, else the name."""
        return self.class_units.get(qualified, qualified)

    def _qualifier_path(self, qualifier: tuple[str, ...], prefix: tuple[str, ...]) -> tuple[str, ...]:
        """The class or namespace an out-of-line definition's qualifier names (see module doc)."""
        written = "::".join(qualifier)
        for n in range(len(prefix), -1, -1):
            candidate = "::".join(prefix[:n] + qualifier)
            if candidate in self.declared_types:
                return prefix[:n] + qualifier
        for known in self.classes.get(qualifier[-1], ()):
            if known == written or known.endswith("::" + written):
                return tuple(known.split("::"))
        return prefix + qualifier

    def _misparsed(self, node: Node, ctx: _Ctx, stack: list[_Entry]) -> None:
        """A "function" without a function declarator is a macro the grammar could not see past.

        `class EXPORT_MACRO Name : Base {…}` parses as a function `Name` returning `class
        EXPORT_MACRO`: the class is recovered (name, bases, members); so is `MACRO template <…>
        class Name {…}` after a class, which parses as that class's "function". `BEGIN_MACRO namespace x {…}`
        parses as a function `namespace` returning `BEGIN_MACRO`: its body is walked as namespace
        `x`. Any other body is walked as declarations of the current scope, so what it defines
        is not lost."""
        type_node = node.child_by_field_name("type")
        body = node.child_by_field_name("body")
        if body is None or type_node is None:
            return
        error = next((c for c in node.children if c.type == "ERROR"), None)
        # Inside an error the keyword may be a token (`class`) or an identifier spelled `class`.
        keyword = next((kw for c in error.children if (kw := base.text(c, self.source)) in ("class", "struct", "union")),
                       None) if error is not None else None
        if type_node.type in _TYPE_SPECIFIERS and type_node.child_by_field_name("body") is not None:
            # A real type, then `MACRO template <…> class Name {`: both are recovered.
            self._type(type_node, ctx, stack, ctx.first or node)
            name_node = next((c for c in reversed(error.named_children) if c.type in _NAME_NODES), None) if (
                error is not None and keyword is not None
            ) else None
            if name_node is not None and error is not None:
                declarator = node.child_by_field_name("declarator")
                first = declarator if declarator is not None and declarator.start_byte < error.start_byte else error
                draft = self._type(error, ctx, stack, first, name=base.text(name_node, self.source), body=body,
                                   unit_type=_TYPE_SPECIFIERS[f"{keyword}_specifier"])
                if draft is not None:
                    draft.node = body
                    draft.signature = self._header(first, body)
                return
        if type_node.type not in _TYPE_SPECIFIERS or type_node.child_by_field_name("body") is not None:
            declarator = node.child_by_field_name("declarator")
            prefix = ctx.prefix
            if declarator is not None and base.text(declarator, self.source) == "namespace":
                error = next((c for c in node.children if c.type == "ERROR"), None)
                name = next((c for c in error.named_children if c.type == "identifier"), None) if error else None
                if name is not None:
                    prefix = (*prefix, base.text(name, self.source))
                    self.namespaces.add(prefix[-1])
            _queue(stack, body.children, _Ctx(prefix, ctx.owner, ctx.cls, None, ctx.type_params, ctx.access))
            return
        declarator = node.child_by_field_name("declarator")
        bases: list[Node] = []
        if error is not None and declarator is not None and error.start_byte < declarator.start_byte:
            # `class API Name : public ns::Base {`: the name is in the error, the base is the declarator.
            name_node = next((c for c in error.named_children if c.type == "identifier"), None)
            bases = [declarator]
        else:
            # `class API Name : public Base {`: the name is the declarator, the bases are in the error.
            name_node = declarator
            bases = [c for c in error.named_children if c.type in _NAME_NODES or c.type == "qualified_identifier"] if (
                error is not None
            ) else []
        if name_node is None or name_node.type not in _NAME_NODES:
            return
        draft = self._type(type_node, ctx, stack, ctx.first or node, name=base.text(name_node, self.source), body=body)
        if draft is None:
            return
        draft.node = node
        draft.signature = self._header(ctx.first or node, body)
        draft.metadata["export_macro"] = base.text(type_node.child_by_field_name("name"), self.source)
        for base_node in bases:
            segments, rooted = self._spelled(base_node)
            if segments and segments[0] not in _FOREIGN_ROOTS:
                draft.refs.append(("superclass", segments, rooted))

    # -- names -----------------------------------------------------------------------------

    @staticmethod
    def _climb(node: Node) -> Node:
        """The full qualified name a name node is the last part of (`detail::buffer<T>` from `buffer`)."""
        parent = node.parent
        while parent is not None and parent.type in ("template_type", "qualified_identifier") and (
            parent.child_by_field_name("name") == node
        ):
            node = parent
            parent = node.parent
        return node

    def _spelled(self, node: Node | None) -> tuple[tuple[str, ...], bool]:
        """Segments of a (qualified) name without template arguments, and whether it starts at
        the global scope (`::f`)."""
        if node is None:
            return (), False
        segments: list[str] = []
        rooted = False
        current: Node | None = node
        while current is not None:
            kind = current.type
            if kind == "qualified_identifier":
                scope = current.child_by_field_name("scope")
                if scope is None:
                    rooted = not segments
                else:
                    inner, _ = self._spelled(scope)
                    if not inner:
                        return (), False
                    segments.extend(inner)
                current = current.child_by_field_name("name")
            elif kind in ("template_type", "template_function", "template_method"):
                current = current.child_by_field_name("name")
            elif kind in _NAME_NODES:
                segments.append(base.text(current, self.source))
                current = None
            elif kind == "destructor_name":
                segments.append("~" + base.text(current.named_children[-1], self.source) if current.named_child_count else "~")
                current = None
            elif kind == "operator_name":
                segments.append(_strip_operator(base.one_line(base.text(current, self.source))))
                current = None
            else:
                return (), False
        return tuple(segments), rooted

    def _is_declared_name(self, node: Node, parent: Node | None) -> bool:
        """Whether a type name node is the name a declaration introduces (not a reference)."""
        if parent is not None and parent.type == "template_type" and parent.child_by_field_name("name") == node:
            node, parent = parent, parent.parent
        if parent is None:
            return False
        if parent.type in _TYPE_SPECIFIERS:  # `struct x;` and `struct x *p` refer; `struct x {…}` declares
            return parent.child_by_field_name("name") == node and parent.child_by_field_name("body") is not None
        if parent.type == "alias_declaration":
            return parent.child_by_field_name("name") == node
        return parent.type == "type_definition" and parent.child_by_field_name("declarator") == node

    # -- references ------------------------------------------------------------------------

    def _call(self, function: Node, draft: _Draft) -> None:
        if function.type == "field_expression":
            argument = function.child_by_field_name("argument")
            member = function.child_by_field_name("field")
            if argument is not None and argument.type == "this" and draft.cls is not None and member is not None:
                segments, _ = self._spelled(member)
                if segments:
                    self._refer(draft, "calls", (*draft.cls.split("::"), *segments), True)
            return
        segments, rooted = self._spelled(function)
        if segments:
            self._refer(draft, "calls", segments, rooted)

    def _refer(self, draft: _Draft, via: str, segments: tuple[str, ...], rooted: bool) -> None:
        """Add the edge for one reference to `draft.deps`, unless it names nothing of the project
        (`std::`, a template parameter) or repeats a base class as a type name. A reference made
        twice adds its edge twice; `base.freeze` keeps the first."""
        if segments[0] in _FOREIGN_ROOTS or segments[0] in draft.type_params:
            return
        if via == "code_reference" and draft.refs and draft.type in _TYPE_UNITS and any(
            kind == "superclass" and segments == written for kind, written, _ in draft.refs
        ):
            return
        key = (via, segments, rooted, draft.scopes)
        found = self.dependencies.get(key)
        if found is None:
            found = self.dependencies[key] = self._new_dependency(via, segments, rooted, draft.scopes)
        draft.deps.append(found)

    def _new_dependency(self, via: str, segments: tuple[str, ...], rooted: bool, scopes: tuple[str, ...]) -> Dependency:
        written = "::".join(segments)
        if rooted or len(scopes) == 1:  # `::f`, or C (one scope: the file): the name as written
            return Dependency(written, via, lookup=(written,))
        # A class's own name inside it means the class (the injected class name), not its constructor.
        head, tail = segments[0], "::" + segments[0]
        candidates = list(dict.fromkeys(f"{s}::{written}" if s else written for s in scopes
                                        if via == "calls" or not s.endswith(tail) and s != head))
        known = self.declared_types if via != "calls" else self.declared
        target = next((c for c in candidates if c in known), written)
        return Dependency(target, via, lookup=tuple(candidates))

    # -- text ------------------------------------------------------------------------------

    def _header(self, first: Node, body: Node | None) -> str:
        stop = body.start_byte if body is not None else first.end_byte
        return base.one_line(self.source[first.start_byte : stop].decode("utf-8", "replace"))

    def _statement(self, first: Node, node: Node) -> str:
        return base.one_line(self.source[first.start_byte : node.end_byte].decode("utf-8", "replace")).rstrip(";").rstrip()


def extract(file_path: str, source: bytes, grammar: str, language: str) -> FileExtraction:
    """Units of one C or C++ file (see the module docstring)."""
    try:
        return CFamilyExtractor(file_path, source, grammar, language).run()
    except scan.ParseTimeoutError as error:
        return scan.parse_timeout(file_path, language, error)
