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
class _Draft:
    """A unit under construction; frozen into a Unit after dependency resolution."""

    identifier: str
    type: str
    node: Node
    parent: _Draft | None
    namespace: str | None
    signature: str | None = None
    docstring: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    refs: list[_Ref] = field(default_factory=list)
    bases: list[tuple[str, ...]] = field(default_factory=list)
    base_targets: list[str] | None = None  # the bases resolved (classes; on first use)
    callees: set[bytes] = field(default_factory=set)  # texts of the callees seen (`_scan`)


def _import_root(file_path: str, package_dirs: frozenset[str] | None) -> int:
    """How many leading path parts lie above the top-level package of `file_path` (0 if unknown)."""
    if package_dirs is None:
        return 0
    parent = PurePosixPath(file_path).parent
    directory = "" if str(parent) == "." else parent.as_posix()
    if directory not in package_dirs:
        return 0
    while directory and directory in package_dirs:
        up = PurePosixPath(directory).parent
        directory = "" if str(up) == "." else up.as_posix()
        if directory == "" and "" in package_dirs:
            return 0
    return len(PurePosixPath(directory).parts) if directory else 0


def module_name(file_path: str, package_dirs: frozenset[str] | None = None) -> tuple[str, bool]:
    """(dotted module name, is_package) for a repository-relative `.py`/`.pyi` path.

    Inside a package (`package_dirs`, from the repository layout), the name starts at the top-level package;
    otherwise it is the dotted path from the repository root, a leading `src/` dropped.
    """
    parts = list(PurePosixPath(file_path).parts)
    skip = _import_root(file_path, package_dirs)
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


def _chain(node: Node | None, source: bytes) -> tuple[str, ...] | None:
    """`a.b.c` → ('a', 'b', 'c'); `super().m` → ('super()', 'm'); anything else → None."""
    parts: list[str] = []
    current = node
    while current is not None and current.type == "attribute":
        parts.append(base.text(current.child_by_field_name("attribute"), source))
        current = current.child_by_field_name("object")
    if current is None:
        return None
    if current.type == "identifier":
        parts.append(base.text(current, source))
    elif current.type == "call" and base.text(current.child_by_field_name("function"), source) == "super":
        parts.append("super()")
    else:
        return None
    return tuple(reversed(parts))


# A callee spelled as plain ASCII names and dots: its parts are its text split at the dots.
_DOTTED = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# Constants look like names but are not identifiers in the tree (`None.__class__()` is no chain).
_CONSTANTS = frozenset({"None", "True", "False"})


def _callee_chain(node: Node, text: bytes, source: bytes) -> tuple[str, ...] | None:
    """`_chain` of a call's function (an identifier or attribute; `text` is its source) in an
    error-free tree, read from its text when that is a plain dotted name (most calls), from its
    nodes otherwise."""
    if _DOTTED.fullmatch(text) is not None:
        parts = tuple(text.decode("ascii").split("."))
        if parts[0] not in _CONSTANTS:
            return parts
    return _chain(node, source)


def _strip_call(node: Node | None) -> Node | None:
    """`dec(args)` → `dec`; `Generic[T]` → `Generic`; other nodes unchanged."""
    while node is not None and node.type in ("call", "subscript", "generic_type"):
        node = node.child_by_field_name("function") or node.child_by_field_name("value") or node.named_child(0)
    return node


def _docstring(body: Node | None, source: bytes) -> str | None:
    """The cleaned docstring when the block's first statement is a string literal."""
    if body is None:
        return None
    first = None
    for index in range(body.named_child_count):  # one node at a time: bodies are long
        first = body.named_child(index)
        if first is not None and first.type != "comment":
            break
    else:
        first = None
    if first is None or first.type != "expression_statement" or first.named_child_count != 1:
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
_UNRESOLVED = Dependency("", "")  # not resolved yet (None is "resolves to nothing")
_PREORDER = operator.itemgetter(0, 1)


@functools.cache
def _query() -> Query:
    return Query(base.language("python"), _QUERY_SOURCE)


class _Extractor:
    """One pass over one file's tree (iterative, so nesting depth is bounded only by memory)."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout) -> None:
        self.file_path = file_path
        self.source = source
        self.module, self.is_package = module_name(file_path, layout.python_package_dirs)
        self.bindings: dict[str, str] = {}
        self.drafts: list[_Draft] = []
        self.seen_ids: dict[tuple[str, str], int] = {}
        self.top_level: set[str] = set()
        self.identifiers: set[str] = set()
        self.prefixes: set[str] = set()  # every identifier cut at each of its dots
        self.resolved: dict[object, Dependency | None] = {}  # see `_dependencies`

    # -- walking ---------------------------------------------------------------------------

    def run(self) -> FileExtraction:
        tree = base.parse("python", self.source)
        root = tree.root_node
        namespace = self.module.rpartition(".")[0] or None
        module = _Draft(self.module, "module", root, None, namespace)
        module.docstring = _docstring(root, self.source)
        module.metadata["package"] = self.is_package
        self.drafts.append(module)
        if root.has_error:
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
                self._call(_chain(node.child_by_field_name("function"), self.source), owner)
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
                    self._call(_callee_chain(node, text, source), owner)
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
        groups: dict[tuple[str, str], list[_Draft]] = {}
        for draft in self.drafts:
            if draft.type in ("function", "method"):
                groups.setdefault((draft.identifier.split("#", 1)[0], draft.type), []).append(draft)
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

    def _unique(self, identifier: str, unit_type: str) -> str:
        key = (identifier, unit_type)
        count = self.seen_ids.get(key, 0) + 1
        self.seen_ids[key] = count
        return identifier if count == 1 else f"{identifier}#{count}"

    def _definition(self, node: Node, owner: _Draft) -> tuple[_Draft, Node] | None:
        """The draft of a (decorated) definition and the definition node itself, or None when it
        has no name (syntax errors)."""
        decorators: list[Node] = []
        definition = node
        if node.type == "decorated_definition":
            decorators = [c for c in node.children if c.type == "decorator"]
            found = node.child_by_field_name("definition")
            if found is None:
                return None
            definition = found
        name_node = definition.child_by_field_name("name")
        if name_node is None or definition.type not in ("function_definition", "class_definition"):
            return None
        name = base.text(name_node, self.source)
        is_class = definition.type == "class_definition"
        unit_type = "class" if is_class else ("method" if owner.type == "class" else "function")
        identifier = self._unique(f"{owner.identifier}.{name}", unit_type)
        if owner.type == "module":
            self.top_level.add(name)
        body = definition.child_by_field_name("body")
        draft = _Draft(identifier, unit_type, node, owner, owner.identifier)
        draft.signature = _header(definition, body, self.source)
        draft.docstring = _docstring(body, self.source) or base.clean_comment(base.leading_comment(node, self.source))
        draft.metadata["decorators"] = [base.one_line(base.text(d, self.source))[1:].strip() for d in decorators]
        for decorator in decorators:
            chain = _chain(_strip_call(decorator.named_child(0)), self.source)
            if chain:
                draft.refs.append(_Ref("decorator", chain))
                if not is_class and chain[-1] in _METHOD_KINDS:
                    draft.metadata["kind"] = _METHOD_KINDS[chain[-1]]
                if not is_class and chain[-1] == "overload":
                    draft.metadata["overload"] = True
        if is_class:
            self._bases(definition, draft)
            draft.metadata["dataclass"] = any(
                (ch := _chain(_strip_call(d.named_child(0)), self.source)) is not None and ch[-1] == "dataclass"
                for d in decorators
            )
        else:
            draft.metadata["async"] = any(c.type == "async" for c in definition.children)
        self.drafts.append(draft)
        return draft, definition

    def _bases(self, definition: Node, draft: _Draft) -> None:
        arguments = definition.child_by_field_name("superclasses")
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

    def _call(self, chain: tuple[str, ...] | None, owner: _Draft) -> None:
        """A call of `chain` (the callee's dotted parts) inside `owner`."""
        if not chain:
            return
        if chain[0] == "super()":
            if len(chain) == 2:
                owner.refs.append(_Ref("calls", chain[1:], kind="super"))
        elif chain[0] in _SELF_NAMES and len(chain) == 2:
            owner.refs.append(_Ref("calls", chain[1:], kind="self"))
        elif chain[0] not in _SELF_NAMES:
            owner.refs.append(_Ref("calls", chain))

    def _import(self, node: Node, owner: _Draft) -> None:
        if node.type == "import_statement":
            for item in node.named_children:
                if item.type == "dotted_name":
                    dotted = base.text(item, self.source)
                    self.bindings.setdefault(dotted.split(".")[0], dotted.split(".")[0])
                elif item.type == "aliased_import":
                    dotted = base.text(item.child_by_field_name("name"), self.source)
                    self.bindings[base.text(item.child_by_field_name("alias"), self.source)] = dotted
                else:
                    continue
                parts = dotted.split(".")
                lookup = tuple(".".join(parts[:i]) for i in range(len(parts), 0, -1))
                owner.refs.append(_Ref("import", kind="import", target=dotted, lookup=lookup))
            return
        module_node = node.child_by_field_name("module_name")
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
        names = [c for c in node.children_by_field_name("name")]
        if not names or any(c.type == "wildcard_import" for c in node.children):
            if absolute:
                owner.refs.append(_Ref("import", kind="import", target=absolute, lookup=(absolute,)))
            return
        for item in names:
            if item.type == "aliased_import":
                imported = base.text(item.child_by_field_name("name"), self.source)
                local = base.text(item.child_by_field_name("alias"), self.source)
            else:
                imported = base.text(item, self.source)
                local = imported.split(".")[0]
            full = f"{absolute}.{imported}" if absolute else imported
            self.bindings[local] = full
            # A package's `__init__` re-exports what it imports: the edge keeps the imported name
            # (`pkg.services.PostingService`, even when `pkg.services` itself re-exports it) instead
            # of falling back to the module, so `resolve` can follow the chain to the definition.
            reexport = self.is_package and owner.parent is None and local == imported.split(".")[-1]
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
        root, rest = ref.chain[0], ref.chain[1:]
        dotted = ".".join(ref.chain)
        candidates: list[str] = []
        # Decorators and base classes are evaluated in the scope around the definition.
        scope = draft.parent if ref.via in ("decorator", "superclass") else draft
        while scope is not None and scope.type in ("function", "method"):
            if f"{scope.identifier}.{dotted}" in self.identifiers:
                candidates.append(f"{scope.identifier}.{dotted}")
            scope = scope.parent
        candidates.append(f"{self.module}.{dotted}")
        imported = None
        if root in self.bindings:
            imported = ".".join((self.bindings[root], *rest))
            candidates.append(imported)
        elif root in _BUILTINS and root not in self.top_level:
            return None
        elif ref.via == "decorator" and root not in self.top_level:
            return None  # `@x.setter`, `@app.route`: a local object, not a unit anywhere
        target = imported or candidates[-1]
        return target, tuple(dict.fromkeys(candidates))

    def _resolve_member(self, ref: _Ref, draft: _Draft) -> tuple[str, tuple[str, ...]] | None:
        cls: _Draft | None = draft
        while cls is not None and cls.type != "class":
            cls = cls.parent
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
        cls: _Draft | None = draft
        while cls is not None and cls.type != "class":
            cls = cls.parent
        local = self._local_scope(draft)
        outer_local = self._local_scope(draft.parent)  # decorators and bases: the scope around
        resolved = self.resolved
        seen: set[tuple[str, str]] = set()
        kept: list[Dependency] = []
        for ref in dict.fromkeys(draft.refs):  # equal references resolve alike
            key: object = ref
            if ref.kind == "self" or ref.kind == "super":
                key = (ref, id(cls))
            elif ref.kind == "name" and (outer_local if ref.via in ("decorator", "superclass") else local):
                key = None
            dependency = resolved.get(key, _UNRESOLVED) if key is not None else _UNRESOLVED
            if dependency is _UNRESOLVED:
                found = self._resolve(ref, draft)
                dependency = Dependency(found[0], ref.via, lookup=found[1]) if found is not None else None
                if key is not None:
                    resolved[key] = dependency
            if dependency is not None and (dependency.target, dependency.via) not in seen:
                seen.add((dependency.target, dependency.via))
                kept.append(dependency)
        return tuple(kept)

    def _local_scope(self, scope: _Draft | None) -> bool:
        """Whether a function around (or at) `scope` may define what a name means (an identifier
        extends the function's); the chain `_resolve` looks names up in."""
        while scope is not None and scope.type in ("function", "method"):
            if scope.identifier in self.prefixes:
                return True
            scope = scope.parent
        return False

    def _freeze(self, draft: _Draft) -> Unit:
        if draft.type == "module":
            start, end, code = base.file_span(self.source)
        else:
            start, end, code = base.node_span(draft.node, draft.node, self.source)
        return Unit(
            identifier=draft.identifier,
            type=draft.type,
            language=LANGUAGE,
            file_path=self.file_path,
            line_start=start,
            line_end=end,
            source_code=code,
            namespace=draft.namespace,
            signature=draft.signature,
            docstring=draft.docstring,
            parent=draft.parent.identifier if draft.parent is not None else None,
            metadata=draft.metadata,
            dependencies=self._dependencies(draft),
        )


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Python file (module first, then its definitions in source order)."""
    return _Extractor(file_path, source, layout).run()
