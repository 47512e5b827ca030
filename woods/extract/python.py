"""Python extraction: modules, classes, methods and functions, with imports, bases, decorators, calls.

Identifiers are dotted Python paths derived from the file path: a leading `src/` is dropped,
`pkg/__init__.py` is the module `pkg`, and a file outside any package still gets its dotted path
(`scripts/tool.py` → `scripts.tool`). Classes, methods and nested definitions append their names
(`pkg.mod.Outer.Inner.m`). When one file defines the same (identifier, type) twice — a property
and its setter, a conditional redefinition — the later ones get `#2`, `#3` … so every unit keeps
its own storage key.

Dependencies name absolute dotted targets: relative imports are resolved against the module's
package, base classes and decorators through the file's import table, and calls get `lookup`
candidates (`<this module>.f`, the imported name's full path, `<Class>.m` for `self.m()`) for the
linker to resolve against the whole index.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import operator
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, NamedTuple

from tree_sitter import Node, Query, QueryCursor

from woods.extract import base
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction, Unit

LANGUAGE = "python"

# Builtin names are never project code: a call to `len()` or a `@property` decorator would only
# produce edges the linker drops (or dangling nodes), so they are left out of dependencies.
_BUILTINS = frozenset(dir(builtins))

# Receivers that mean "this class" inside a method body.
_SELF_NAMES = frozenset({"self", "cls"})

# Decorators that change what kind of method a `def` is; recorded as metadata["kind"].
_METHOD_KINDS = {"staticmethod": "staticmethod", "classmethod": "classmethod", "property": "property"}


class _Ref(NamedTuple):
    """A reference seen while walking, resolved once the whole file's imports are known.

    Equal references of one unit resolve to equal dependencies, so only the first is resolved."""

    via: str
    chain: tuple[str, ...] = ()
    kind: str = "name"  # name | self | super | import
    target: str = ""
    lookup: tuple[str, ...] = ()


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Python unit under construction: its enclosing unit (`outer`), and the references,
    bases and callees resolved once the whole file's imports are known."""

    outer: _Draft | None = None
    # The innermost class at or around the draft (self and super calls); a class draft's is
    # itself, a reference cycle `_Extractor.run` breaks once the units are frozen (the cyclic
    # collector is paused while an index is built, and would keep every file's drafts alive).
    cls: _Draft | None = None
    refs: list[_Ref] = field(default_factory=list)
    bases: list[tuple[str, ...]] = field(default_factory=list)
    base_targets: list[str] | None = None  # the bases resolved (classes; on first use)
    callees: set[bytes] = field(default_factory=set)  # texts of the callees seen (`_scan`)


def _parts(file_path: str) -> list[str]:
    """`PurePosixPath(file_path).parts` without building the path object (once per file)."""
    if file_path.startswith("/"):  # absolute: the root is a part of its own
        return list(PurePosixPath(file_path).parts)
    return [part for part in file_path.split("/") if part and part != "."]


def _directory(parts: list[str], depth: int) -> str:
    """The posix spelling of the directory `parts[:depth]` ("" for none)."""
    if parts[0] == "/" and depth:
        return "/" + "/".join(parts[1:depth])
    return "/".join(parts[:depth])


def _import_root(parts: list[str], package_dirs: frozenset[str] | None) -> int:
    """How many leading `parts` of a file's path lie above its top-level package (0 if unknown)."""
    if package_dirs is None:
        return 0
    depth = len(parts) - 1  # the file's directory is parts[:depth]
    if _directory(parts, depth) not in package_dirs:
        return 0
    while depth and _directory(parts, depth) in package_dirs:
        depth -= 1
        if depth == 0 and "" in package_dirs:
            return 0
    return depth


def module_name(file_path: str, package_dirs: frozenset[str] | None = None) -> tuple[str, bool]:
    """(dotted module name, is_package) for a repository-relative `.py`/`.pyi` path.

    Inside a package (`package_dirs`, from the repository layout), the name starts at the top-level package;
    otherwise it is the dotted path from the repository root, a leading `src/` dropped.
    """
    parts = _parts(file_path)
    skip = _import_root(parts, package_dirs) if parts else 0
    if skip:
        parts = parts[skip:]
    elif len(parts) > 1 and parts[0] == "src":
        parts = parts[1:]
    if not parts:
        return "__main__", False
    stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1] else parts[-1]
    parts[-1] = stem
    is_package = stem == "__init__"
    if is_package and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts), is_package


def resolve_relative(module: str, is_package: bool, level: int, name: str) -> str:
    """The absolute dotted name of `from <level dots><name> import …` inside `module`."""
    if level == 0:
        return name
    if is_package and module == "__init__":  # the repository root is the package: `.x` is `x`
        package: list[str] = []
    else:
        package = module.split(".") if is_package else module.split(".")[:-1]
    keep = max(0, len(package) - (level - 1))
    parts = package[:keep] + ([name] if name else [])
    return ".".join(p for p in parts if p)


class _Fields(NamedTuple):
    """The grammar's ids of the fields the extractor reads: `child_by_field_id` skips the search
    of the field's name among all of them that `child_by_field_name` makes on every call."""

    alias: int
    attribute: int
    body: int
    definition: int
    function: int
    module_name: int
    name: int
    object: int
    superclasses: int
    value: int


@functools.cache
def _fields() -> _Fields:
    lang = base.language("python")
    ids = [lang.field_id_for_name(name) for name in _Fields._fields]
    assert all(i is not None for i in ids), "every field is one of the python grammar's"
    return _Fields(*(i for i in ids if i is not None))


def _chain(node: Node | None, source: bytes) -> tuple[str, ...] | None:
    """`a.b.c` → ('a', 'b', 'c'); `super().m` → ('super()', 'm'); anything else → None."""
    f = _fields()
    parts: list[str] = []
    current = node
    while current is not None and current.type == "attribute":
        parts.append(base.text(current.child_by_field_id(f.attribute), source))
        current = current.child_by_field_id(f.object)
    if current is None:
        return None
    if current.type == "identifier":
        parts.append(base.text(current, source))
    elif current.type == "call" and base.text(current.child_by_field_id(f.function), source) == "super":
        parts.append("super()")
    else:
        return None
    return tuple(reversed(parts))


# A callee spelled as plain ASCII names and dots: its parts are its text split at the dots.
_DOTTED = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# Constants look like names but are not identifiers in the tree (`None.__class__()` is no chain).
_CONSTANTS = frozenset({"None", "True", "False"})


def _dotted_chain(text: bytes) -> tuple[str, ...] | None:
    """`_chain` of a call's function read from its text (`text`, in an error-free tree) when that
    is a plain dotted name (most calls), so equal texts have equal chains; None otherwise (then
    the nodes tell)."""
    if _DOTTED.fullmatch(text) is not None:
        parts = tuple(text.decode("ascii").split("."))
        if parts[0] not in _CONSTANTS:
            return parts
    return None


def _call_ref(chain: tuple[str, ...] | None) -> _Ref | None:
    """The reference a call of `chain` (the callee's dotted parts) makes, if any."""
    if not chain:
        return None
    if chain[0] == "super()":
        return _Ref("calls", chain[1:], kind="super") if len(chain) == 2 else None
    if chain[0] in _SELF_NAMES:
        return _Ref("calls", chain[1:], kind="self") if len(chain) == 2 else None
    return _Ref("calls", chain)


def _strip_call(node: Node | None) -> Node | None:
    """`dec(args)` → `dec`; `Generic[T]` → `Generic`; other nodes unchanged."""
    f = _fields()
    while node is not None and node.type in ("call", "subscript", "generic_type"):
        node = node.child_by_field_id(f.function) or node.child_by_field_id(f.value) or node.named_child(0)
    return node


def _docstring(body: Node | None, source: bytes) -> str | None:
    """The cleaned docstring when the block's first statement is a string literal."""
    if body is None:
        return None
    # The block starts with its first statement (or a comment): a string opens with a quote
    # within its first three bytes (`"`, `r"`, `rb"`); without one, the tree need not be asked.
    head = source[body.start_byte : body.start_byte + 3]
    if b'"' not in head and b"'" not in head and b"#" not in head:
        return None
    for index in range(body.named_child_count):  # one node at a time: bodies are long
        first = body.named_child(index)
        if first is None:
            return None
        kind = first.type
        if kind != "comment":
            break
    else:
        return None
    if kind != "expression_statement" or first.named_child_count != 1:
        return None
    literal = first.named_child(0)
    if literal is None or literal.type != "string":
        return None
    start = next((c for c in literal.children if c.type == "string_start"), None)
    end = next((c for c in literal.children if c.type == "string_end"), None)
    if start is None or end is None:
        return None
    raw = source[start.end_byte : end.start_byte].decode("utf-8", "replace")
    return inspect.cleandoc(raw) or None


def _leading_comment(node: Node, source: bytes) -> str | None:
    """`base.leading_comment(node, source)`, which only finds a comment that ends on the line
    above `node` or on its own line: without a `#` there, none is asked of the tree."""
    start = node.start_byte
    row = source.rfind(b"\n", 0, start) + 1  # where the node's line starts
    above = source.rfind(b"\n", 0, row - 1) + 1 if row else 0
    if source.find(b"#", above, start) < 0:
        return None
    return base.leading_comment(node, source)


def _header(node: Node, body: Node | None, source: bytes) -> str:
    """The declaration up to its body, on one line, without the trailing colon."""
    stop = body.start_byte if body is not None else node.end_byte
    header = base.one_line(source[node.start_byte : stop].decode("utf-8", "replace"))
    return header[:-1].rstrip() if header.endswith(":") else header


# What `_Extractor._scan` visits: definitions, the callees a chain can be read from, imports.
_QUERY_SOURCE = """
[(decorated_definition) (function_definition) (class_definition)] @definition
(call function: [(identifier) (attribute)] @callee)
[(import_statement) (import_from_statement)] @import
"""
_DEFINITION, _CALLEE, _IMPORT = 0, 1, 2
_UNRESOLVED: Any = object()  # not resolved yet (None is "resolves to nothing")
_UNSEEN = _Ref("")  # a callee text not met yet (None is "makes no reference")
_PREORDER = operator.itemgetter(0, 1)


@functools.cache
def _query() -> Query:
    return Query(base.language("python"), _QUERY_SOURCE)


class _Extractor(base.FileExtractor[_Draft]):
    """One pass over one file's tree (iterative, so nesting depth is bounded only by memory)."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.module, self.is_package = module_name(file_path, layout.python_package_dirs)
        self.bindings: dict[str, str] = {}
        self.top_level: set[str] = set()
        self.identifiers: set[str] = set()
        self.prefixes: set[str] = set()  # every identifier cut at each of its dots
        # A reference's dependency and its (target, via), or None (see `_dependencies`).
        self.resolved: dict[object, tuple[Dependency, tuple[str, str]] | None] = {}
        self.overloads = False  # whether any definition is an `@overload` stub
        self.error_free = True

    # -- walking ---------------------------------------------------------------------------

    def run(self) -> FileExtraction:
        tree = base.parse("python", self.source)
        root = tree.root_node
        namespace = self.module.rpartition(".")[0] or None
        module = _Draft(self.module, "module", root, namespace=namespace, whole_file=True)
        module.docstring = _docstring(root, self.source)
        module.metadata["package"] = self.is_package
        self.drafts.append(module)
        if root.has_error:
            self.error_free = False
            self._walk(root, module)
        else:
            self._scan(root, module)
        self._implementations_own_their_names()
        self.identifiers = {d.identifier for d in self.drafts}
        for identifier in self.identifiers:
            end = identifier.rfind(".")
            while end > 0 and identifier[:end] not in self.prefixes:  # shorter ones are in already
                self.prefixes.add(identifier[:end])
                end = identifier.rfind(".", 0, end)
        units = tuple(self._freeze(d) for d in self.drafts)
        for draft in self.drafts:  # a class draft is its own `cls`: break that cycle (see `_Draft`)
            draft.cls = None
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    def _walk(self, root: Node, module: _Draft) -> None:
        """Every node in pre-order, each owned by the innermost definition around it.

        The reference for `_scan`, and what a tree with syntax errors takes: there, byte ranges
        may not tell nesting (a zero-width MISSING node sits at the edge of two definitions)."""
        stack: list[tuple[Node, _Draft]] = [(child, module) for child in reversed(root.children)]
        while stack:
            node, owner = stack.pop()
            kind = node.type
            if kind in ("decorated_definition", "function_definition", "class_definition"):
                found = self._definition(node, owner)
                if found is not None:
                    draft, definition = found
                    stack.extend((child, draft) for child in reversed(definition.children))
                    continue
            elif kind == "call":
                ref = _call_ref(_chain(node.child_by_field_name("function"), self.source))
                if ref is not None:
                    owner.refs.append(ref)
            elif kind in ("import_statement", "import_from_statement"):
                self._import(node, owner)
                continue
            # Leaves hold no definition, call or import: only inner nodes go on the stack.
            stack.extend((child, owner) for child in reversed(node.children) if child.child_count)

    def _scan(self, root: Node, module: _Draft) -> None:
        """What `_walk` does, over the nodes one query finds instead of every node.

        The captures are visited in pre-order (by start, the longer first); the definitions that
        enclose a capture are the open spans on a stack, so its owner is the innermost one. A
        decorated definition's decorators are a span that owns nothing (the walk never enters
        them), and so is an import statement."""
        source = self.source
        found = QueryCursor(_query()).captures(root)
        items = [
            (node.start_byte, -node.end_byte, kind, node)
            for kind, name in ((_DEFINITION, "definition"), (_CALLEE, "callee"), (_IMPORT, "import"))
            for node in found.get(name, ())
        ]
        items.sort(key=_PREORDER)
        # (end byte, owner) of the open spans, innermost last; None owns nothing.
        spans: list[tuple[int, _Draft | None]] = [(len(source) + 1, module)]
        wrapped = -1  # start byte of the definition inside the last decorated definition
        # The reference of each plain dotted callee text of the file (see `_dotted_chain`).
        call_refs: dict[bytes, _Ref | None] = {}
        for start, negative_end, kind, node in items:
            while start >= spans[-1][0]:
                spans.pop()
            owner = spans[-1][1]
            if owner is None:
                continue
            if kind == _CALLEE:
                # A callee's text decides its chain, and a repeated reference adds nothing.
                text = source[start:-negative_end]
                if text not in owner.callees:
                    owner.callees.add(text)
                    ref = call_refs.get(text, _UNSEEN)
                    if ref is _UNSEEN:
                        chain = _dotted_chain(text)
                        if chain is not None:
                            ref = call_refs[text] = _call_ref(chain)
                        else:
                            ref = _call_ref(_chain(node, source))
                    if ref is not None:
                        owner.refs.append(ref)
            elif kind == _IMPORT:
                self._import(node, owner)
                spans.append((-negative_end, None))
            elif start != wrapped:  # the definition a decorated one wraps was handled with it
                definition_found = self._definition(node, owner)
                if definition_found is not None:
                    draft, definition = definition_found
                    spans.append((definition.end_byte, draft))
                    if definition is not node:  # the decorators
                        wrapped = definition.start_byte
                        spans.append((wrapped, None))

    def _implementations_own_their_names(self) -> None:
        """`@typing.overload` stubs come before the implementation, which the numbering would call
        `f#3`: the one definition of a name that is not an overload takes the plain name, and the
        stubs are `f#overload1`, `f#overload2` … in source order. A name defined twice without
        overloads keeps the numbering (the first definition owns the name)."""
        if not self.overloads:
            return
        groups: dict[tuple[str, str], list[_Draft]] = {}
        for draft in self.drafts:
            if draft.type in ("function", "method"):
                # `f`, `f#2`, `f#3` are one name; `f#3.inner` (a definition nested in one) is not
                head, marker, suffix = draft.identifier.rpartition("#")
                if marker and not suffix.isdigit():
                    continue
                groups.setdefault((head if marker else draft.identifier, draft.type), []).append(draft)
        renames: dict[str, str] = {}
        for (plain, _unit_type), drafts in groups.items():
            stubs = [d for d in drafts if d.metadata.get("overload")]
            bodies = [d for d in drafts if not d.metadata.get("overload")]
            if not stubs or len(bodies) != 1:
                continue
            renames[bodies[0].identifier] = plain
            for number, stub in enumerate(stubs, start=1):
                renames[stub.identifier] = f"{plain}#overload{number}"
        if not renames:
            return
        for draft in self.drafts:
            new = renames.get(draft.identifier)
            if new is not None:
                draft.identifier = new
                continue
            # descendants of a renamed definition follow it (their identifiers extend the owner's)
            for old, renamed in renames.items():
                if draft.identifier.startswith(old + "."):
                    draft.identifier = renamed + draft.identifier[len(old):]
                    if draft.namespace is not None and draft.namespace.startswith(old):
                        draft.namespace = renamed + draft.namespace[len(old):]
                    break

    def _definition(self, node: Node, owner: _Draft) -> tuple[_Draft, Node] | None:
        """The draft of a (decorated) definition and the definition node itself, or None when it
        has no name (syntax errors)."""
        source = self.source
        f = _fields()
        decorators: list[Node] = []
        definition = node
        if node.type == "decorated_definition":
            decorators = [c for c in node.children if c.type == "decorator"]
            found = node.child_by_field_id(f.definition)
            if found is None:
                return None
            definition = found
        definition_type = definition.type
        if definition_type != "function_definition" and definition_type != "class_definition":
            return None
        name_node = definition.child_by_field_id(f.name)
        if name_node is None:
            return None
        name = source[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace")
        is_class = definition_type == "class_definition"
        owner_type = owner.type
        unit_type = "class" if is_class else ("method" if owner_type == "class" else "function")
        identifier = self.unique(f"{owner.identifier}.{name}", unit_type)
        if owner_type == "module":
            self.top_level.add(name)
        body = definition.child_by_field_id(f.body)
        metadata: dict[str, Any] = {
            "decorators": [base.one_line(base.text(d, source))[1:].strip() for d in decorators]
        }
        draft = _Draft(
            identifier,
            unit_type,
            node,
            owner.identifier,
            owner.identifier,
            signature=_header(definition, body, source),
            docstring=_docstring(body, source) or base.clean_comment(_leading_comment(node, source)),
            metadata=metadata,
            outer=owner,
        )
        draft.cls = draft if is_class else owner.cls
        chains = [_chain(_strip_call(decorator.named_child(0)), source) for decorator in decorators]
        for chain in chains:
            if chain:
                draft.refs.append(_Ref("decorator", chain))
                if not is_class and chain[-1] in _METHOD_KINDS:
                    metadata["kind"] = _METHOD_KINDS[chain[-1]]
                if not is_class and chain[-1] == "overload":
                    metadata["overload"] = True
                    self.overloads = True
        if is_class:
            self._bases(definition, draft)
            metadata["dataclass"] = any(chain is not None and chain[-1] == "dataclass" for chain in chains)
        elif self.error_free:  # `async` can only be the first token
            metadata["async"] = source.startswith(b"async", definition.start_byte)
        else:
            metadata["async"] = any(c.type == "async" for c in definition.children)
        self.drafts.append(draft)
        return draft, definition

    def _bases(self, definition: Node, draft: _Draft) -> None:
        arguments = definition.child_by_field_id(_fields().superclasses)
        texts: list[str] = []
        if arguments is not None:
            for arg in arguments.named_children:
                if arg.type in ("keyword_argument", "comment", "list_splat", "dictionary_splat"):
                    continue
                texts.append(base.one_line(base.text(arg, self.source)))
                chain = _chain(_strip_call(arg), self.source)
                if chain and chain[0] != "super()":
                    draft.bases.append(chain)
                    draft.refs.append(_Ref("superclass", chain))
        draft.metadata["bases"] = texts

    def _import(self, node: Node, owner: _Draft) -> None:
        f = _fields()
        if node.type == "import_statement":
            for item in node.named_children:
                if item.type == "dotted_name":
                    dotted = base.text(item, self.source)
                    self.bindings.setdefault(dotted.split(".")[0], dotted.split(".")[0])
                elif item.type == "aliased_import":
                    dotted = base.text(item.child_by_field_id(f.name), self.source)
                    self.bindings[base.text(item.child_by_field_id(f.alias), self.source)] = dotted
                else:
                    continue
                parts = dotted.split(".")
                lookup = tuple(".".join(parts[:i]) for i in range(len(parts), 0, -1))
                owner.refs.append(_Ref("import", kind="import", target=dotted, lookup=lookup))
            return
        module_node = node.child_by_field_id(f.module_name)
        if module_node is None:
            return
        if module_node.type == "relative_import":
            prefix = next((c for c in module_node.children if c.type == "import_prefix"), None)
            level = base.text(prefix, self.source).count(".") if prefix is not None else 0
            dotted_node = next((c for c in module_node.children if c.type == "dotted_name"), None)
            absolute = resolve_relative(self.module, self.is_package, level, base.text(dotted_node, self.source))
        else:
            absolute = base.text(module_node, self.source)
        if absolute == "__future__":
            return
        names = node.children_by_field_id(f.name)
        # (the grammar has either names or `*`: only a tree with errors needs to look for both)
        if not names or (not self.error_free and any(c.type == "wildcard_import" for c in node.children)):
            if absolute:
                owner.refs.append(_Ref("import", kind="import", target=absolute, lookup=(absolute,)))
            return
        for item in names:
            if item.type == "aliased_import":
                imported = base.text(item.child_by_field_id(f.name), self.source)
                local = base.text(item.child_by_field_id(f.alias), self.source)
            else:
                imported = base.text(item, self.source)
                local = imported.split(".")[0]
            full = f"{absolute}.{imported}" if absolute else imported
            self.bindings[local] = full
            # A package's `__init__` re-exports what it imports: the edge keeps the imported name
            # (`pkg.services.PostingService`, even when `pkg.services` itself re-exports it) instead
            # of falling back to the module, so `resolve` can follow the chain to the definition.
            reexport = self.is_package and owner.outer is None and local == imported.split(".")[-1]
            lookup = (full, absolute) if absolute and not reexport else (full,)
            owner.refs.append(_Ref("import", kind="import", target=full, lookup=lookup))

    # -- resolving -------------------------------------------------------------------------

    def _resolve(self, ref: _Ref, draft: _Draft) -> tuple[str, tuple[str, ...]] | None:
        """(target, lookup) of a reference made inside `draft`, or None when it names nothing of
        the project (builtins, attributes of local objects)."""
        if ref.kind == "import":
            return ref.target, ref.lookup
        if ref.kind in ("self", "super"):
            return self._resolve_member(ref, draft)
        chain = ref.chain
        root = chain[0]
        bound = self.bindings.get(root)
        if bound is None and root not in self.top_level:
            if root in _BUILTINS:
                return None
            if ref.via == "decorator":
                return None  # `@x.setter`, `@app.route`: a local object, not a unit anywhere
        dotted = ".".join(chain)
        candidates: list[str] = []
        # Decorators and base classes are evaluated in the scope around the definition.
        scope = draft.outer if ref.via in ("decorator", "superclass") else draft
        while scope is not None and scope.type in ("function", "method"):
            if f"{scope.identifier}.{dotted}" in self.identifiers:
                candidates.append(f"{scope.identifier}.{dotted}")
            scope = scope.outer
        candidates.append(f"{self.module}.{dotted}")
        if bound is not None:  # the imported name is the target
            candidates.append(".".join((bound, *chain[1:])))
        target = candidates[-1]
        return target, (target,) if len(candidates) == 1 else tuple(dict.fromkeys(candidates))

    def _resolve_member(self, ref: _Ref, draft: _Draft) -> tuple[str, tuple[str, ...]] | None:
        cls = draft.cls
        if cls is None:
            return None
        name = ref.chain[0]
        candidates = [f"{cls.identifier}.{name}"] if ref.kind == "self" else []
        if cls.base_targets is None:
            resolved = (self._resolve(_Ref("superclass", chain), cls) for chain in cls.bases)
            cls.base_targets = [found[0] for found in resolved if found is not None]
        candidates.extend(f"{target}.{name}" for target in cls.base_targets)
        if not candidates:
            return None
        return candidates[0], tuple(dict.fromkeys(candidates))

    def _dependencies(self, draft: _Draft) -> tuple[Dependency, ...]:
        """The draft's references resolved (`_resolve`), one dependency per (target, via), the
        first kept, in source order (what `base.dedupe_dependencies` keeps).

        Each reference is resolved once per file and context: a member call depends on the class
        around it, a name on nothing of the unit unless an enclosing function defines something
        under it (then it is resolved each time)."""
        refs = draft.refs
        if not refs:
            return ()
        local: bool | None = None  # `_local_scope` of the draft and of its parent, when needed
        outer_local: bool | None = None
        resolved = self.resolved
        kept: dict[tuple[str, str], Dependency] = {}
        for ref in refs:  # (equal references resolve alike: `kept` holds the first)
            key: object = ref
            kind = ref.kind
            if kind == "name":
                if ref.via == "decorator" or ref.via == "superclass":  # the scope around
                    if outer_local is None:
                        outer_local = self._local_scope(draft.outer)
                    if outer_local:
                        key = None
                else:
                    if local is None:
                        local = self._local_scope(draft)
                    if local:
                        key = None
            elif kind != "import":  # self, super
                key = (ref, id(draft.cls))
            entry = resolved.get(key, _UNRESOLVED) if key is not None else _UNRESOLVED
            if entry is _UNRESOLVED:
                found = self._resolve(ref, draft)
                if found is not None:
                    dependency = Dependency(found[0], ref.via, lookup=found[1])
                    entry = (dependency, (dependency.target, dependency.via))
                else:
                    entry = None
                if key is not None:
                    resolved[key] = entry
            if entry is not None:
                kept.setdefault(entry[1], entry[0])
        return tuple(kept.values())

    def _local_scope(self, scope: _Draft | None) -> bool:
        """Whether a function around (or at) `scope` may define what a name means (an identifier
        extends the function's); the chain `_resolve` looks names up in."""
        while scope is not None and scope.type in ("function", "method"):
            if scope.identifier in self.prefixes:
                return True
            scope = scope.outer
        return False

    def _freeze(self, draft: _Draft) -> Unit:
        outer = draft.outer  # read now: overload stubs may have renamed it (`_implementations_own_their_names`)
        draft.parent = outer.identifier if outer is not None else None
        return base.built(draft, self.file_path, LANGUAGE, self.source, self._dependencies(draft))


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Python file (module first, then its definitions in source order)."""
    return _Extractor(file_path, source, layout).run()
