"""JavaScript / TypeScript / TSX extraction: modules, classes, interfaces, type aliases, enums, functions.

The grammar follows the extension: `.ts/.mts/.cts` → typescript, `.tsx` → tsx, anything else →
javascript (JSX parses with the javascript grammar). Units from `.ts*` files carry language
"typescript", the rest "javascript".

Identifiers: the module is the file path without its extension (`src/billing/invoice`; a `.d.ts`
declaration file drops `.d.ts`). Declarations are `<module>:<Name>`, members and nested functions
append `.name` (`src/billing/invoice:Invoice.charge`, `src/app:main.helper`); TS `namespace N {}`
adds `N.` without being a unit. Anonymous default exports are named `default`. A repeated
(identifier, type) in one file (a getter and its setter) gets `#2`, `#3` … in source order.

Dependencies: imports and re-exports resolve relative specifiers to module identifiers, with
`/index` variants as lookup candidates; bare package specifiers stay as written. Calls, `new`,
TS type references and JSX elements become edges only when the name is imported or declared in
the same file (anything else would be a local variable the linker cannot resolve).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node

from woods.extract import base
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction, Unit

# Extensions stripped from a file path (and from import specifiers) to get a module identifier.
# `.d.ts` variants come first so `types.d.ts` becomes `types`, not `types.d`.
_MODULE_EXTENSIONS = (
    ".d.ts", ".d.mts", ".d.cts", ".tsx", ".ts", ".mts", ".cts", ".jsx", ".js", ".mjs", ".cjs",
)
_TS_GRAMMARS = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}

# Node types that declare a unit (the grammars name anonymous functions and classes differently).
_CLASS_NODES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
_FUNCTION_NODES = frozenset(
    {"function_declaration", "generator_function_declaration", "function_expression", "function", "generator_function"}
)
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_TYPE_NODES = {"interface_declaration": "interface", "type_alias_declaration": "type_alias", "enum_declaration": "enum"}
_FIELD_NODES = frozenset({"public_field_definition", "field_definition"})


def module_identifier(file_path: str) -> str:
    """`src/billing/invoice.ts` → `src/billing/invoice`."""
    lowered = file_path.lower()
    for ext in _MODULE_EXTENSIONS:
        if lowered.endswith(ext) and len(file_path) > len(ext):
            return file_path[: -len(ext)]
    return file_path


def grammar_for(file_path: str) -> str:
    ext = posixpath.splitext(file_path)[1].lower()
    return _TS_GRAMMARS.get(ext, "javascript")


def resolve_specifier(file_path: str, specifier: str) -> tuple[str, ...]:
    """Module identifiers a relative import may mean, most likely first; () for a bare package."""
    if not specifier.startswith("."):
        return ()
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(file_path), specifier))
    stripped = module_identifier(joined)
    candidates = [stripped, f"{stripped}/index"]
    if stripped != joined:
        candidates.append(joined)
    return tuple(dict.fromkeys(c for c in candidates if c and not c.startswith("..")))


@dataclass(slots=True)
class _Binding:
    """A name an import statement introduces: where from, and which export it names."""

    modules: tuple[str, ...]  # candidate module identifiers; empty for a bare package
    package: str  # the specifier as written
    imported: str | None  # exported name; None for a namespace import (`* as ns`, require)
    default: bool = False


@dataclass(slots=True)
class _Ref:
    """A name used in a unit (`a.b.c`), resolved once the file's imports and declarations are known."""

    via: str
    chain: tuple[str, ...]
    kind: str = "name"  # name | this


@dataclass(slots=True)
class _Draft:
    """A unit under construction; frozen into a Unit after reference resolution."""

    identifier: str
    qual: str  # the part after `<module>:`; "" for the module unit
    type: str
    first: Node
    last: Node
    parent: _Draft | None
    namespace: str | None
    signature: str | None = None
    docstring: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    deps: list[Dependency] = field(default_factory=list)
    refs: list[_Ref] = field(default_factory=list)


def _name_chain(node: Node | None, source: bytes) -> tuple[str, ...] | None:
    """`a.b.c` (member expression or nested type name) → ('a', 'b', 'c'); `this.x` → ('this', 'x')."""
    parts: list[str] = []
    current = node
    while current is not None and current.type in ("member_expression", "nested_type_identifier", "nested_identifier"):
        if current.type == "member_expression":
            parts.append(base.text(current.child_by_field_name("property"), source))
            current = current.child_by_field_name("object")
        else:
            named = current.named_children
            if not named:
                return None
            parts.append(base.text(named[-1], source))
            current = named[0] if len(named) > 1 else None
    if current is None:
        return None
    if current.type in ("identifier", "type_identifier", "this"):
        parts.append(base.text(current, source))
    elif current.type in ("generic_type",):
        return _name_chain(current.child_by_field_name("name"), source)
    else:
        return None
    return tuple(reversed(parts))


def _string_value(node: Node | None, source: bytes) -> str | None:
    if node is None or node.type not in ("string", "template_string"):
        return None
    raw = base.text(node, source)
    return raw[1:-1] if len(raw) >= 2 else None


class _Extractor:
    """One iterative pass over one file's tree, then reference resolution."""

    def __init__(self, file_path: str, source: bytes) -> None:
        self.file_path = file_path
        self.source = source
        self.module = module_identifier(file_path)
        self.grammar = grammar_for(file_path)
        self.language = "javascript" if self.grammar == "javascript" else "typescript"
        self.bindings: dict[str, _Binding] = {}
        self.declared: set[str] = set()
        self.local_exports: set[str] = set()
        self.drafts: list[_Draft] = []
        self.seen_ids: dict[tuple[str, str], int] = {}
        self.identifiers: set[str] = set()

    def run(self) -> FileExtraction:
        tree = base.parse(self.grammar, self.source)
        root = tree.root_node
        module = _Draft(self.module, "", "module", root, root, None, posixpath.dirname(self.module) or None)
        first_comment = root.named_children[0] if root.named_child_count else None
        if first_comment is not None and first_comment.type == "comment":
            module.docstring = base.clean_comment(base.text(first_comment, self.source))
        self.drafts.append(module)
        stack: list[tuple[Node, _Draft, str]] = [(c, module, "") for c in reversed(root.children)]
        while stack:
            node, owner, prefix = stack.pop()
            kind = node.type
            draft = self._declaration(node, owner, prefix)
            if draft is not None:
                stack.extend((c, draft, draft.qual) for c in reversed(node.children))
                continue
            if kind in ("internal_module", "module") and node.child_by_field_name("name") is not None:
                name = base.text(node.child_by_field_name("name"), self.source)
                inner = f"{prefix}.{name}" if prefix else name
                stack.extend((c, owner, inner) for c in reversed(node.children))
                continue
            if kind == "import_statement":
                self._import(node, owner)
                continue
            if kind in ("class_heritage", "extends_type_clause"):
                continue  # recorded as superclass / implements by _heritage
            if kind == "export_statement":
                self._export(node, owner)
            elif kind == "call_expression":
                self._call(node, owner)
            elif kind == "new_expression":
                chain = _name_chain(node.child_by_field_name("constructor"), self.source)
                if chain:
                    owner.refs.append(_Ref("calls", chain))
            elif kind in ("type_identifier", "nested_type_identifier"):
                self._type_reference(node, owner)
                if kind == "nested_type_identifier":
                    continue
            elif kind in ("jsx_opening_element", "jsx_self_closing_element"):
                chain = _name_chain(node.child_by_field_name("name"), self.source)
                if chain and chain[0][:1].isupper():
                    owner.refs.append(_Ref("code_reference", chain))
            stack.extend((c, owner, prefix) for c in reversed(node.children))
        self.identifiers = {d.identifier for d in self.drafts}
        units = tuple(self._freeze(d) for d in self.drafts)
        return FileExtraction(self.file_path, self.language, units, base.syntax_warnings(tree, self.file_path))

    # -- declarations ----------------------------------------------------------------------

    def _declaration(self, node: Node, owner: _Draft, prefix: str) -> _Draft | None:
        kind = node.type
        value_of: Node | None = None  # the declarator / field a function value belongs to
        if kind in _CLASS_NODES:
            unit_type = "class"
            parent = node.parent
            if kind == "class" and parent is not None and parent.type == "variable_declarator":
                value_of = parent
        elif kind in _TYPE_NODES:
            unit_type = _TYPE_NODES[kind]
        elif kind in ("function_declaration", "generator_function_declaration"):
            unit_type = "method" if owner.type == "class" else "function"
        elif kind == "method_definition":
            if owner.type != "class" or node.parent is None or node.parent.type != "class_body":
                return None
            unit_type = "method"
        elif kind in _FUNCTION_VALUES or kind in _FUNCTION_NODES:
            parent = node.parent
            if parent is None:
                return None
            if parent.type == "variable_declarator" and parent.child_by_field_name("value") == node:
                value_of = parent
                unit_type = "function"
            elif parent.type in _FIELD_NODES and owner.type == "class":
                value_of = parent
                unit_type = "method"
            elif parent.type == "export_statement" and parent.child_by_field_name("value") == node:
                unit_type = "function"
            else:
                return None
        else:
            return None
        if kind == "class" and (node.parent is None or node.parent.type not in ("variable_declarator", "export_statement")):
            return None
        name = self._name(node, value_of)
        if name is None:
            return None
        qual = f"{prefix}.{name}" if prefix else name
        identifier = self._unique(f"{self.module}:{qual}", unit_type)
        if "#" in identifier:
            qual = identifier.split(":", 1)[1]
        first, last = self._span(node, value_of)
        draft = _Draft(identifier, qual, unit_type, first, last, owner, owner.identifier)
        self.declared.add(name)
        draft.signature = self._signature(first, node)
        draft.docstring = base.clean_comment(base.leading_comment(first, self.source))
        draft.metadata = self._metadata(node, first, value_of)
        self._heritage(node, draft)
        self.drafts.append(draft)
        return draft

    def _name(self, node: Node, value_of: Node | None) -> str | None:
        if value_of is not None:
            name_node = value_of.child_by_field_name("name") or value_of.child_by_field_name("property")
            if name_node is None or name_node.type not in (
                "identifier", "property_identifier", "private_property_identifier", "type_identifier"
            ):
                return None
            return base.text(name_node, self.source)
        name_node = node.child_by_field_name("name")
        if name_node is not None:
            return base.text(name_node, self.source)
        parent = node.parent
        if parent is not None and parent.type == "export_statement":
            return "default"
        return None

    def _span(self, node: Node, value_of: Node | None) -> tuple[Node, Node]:
        """First and last node of the whole declaration: export, `const`, decorators included."""
        outer = node
        if value_of is not None:
            outer = value_of
            holder = value_of.parent
            if (
                value_of.type == "variable_declarator"
                and holder is not None
                and holder.type in ("lexical_declaration", "variable_declaration")
                and sum(1 for c in holder.named_children if c.type == "variable_declarator") == 1
            ):
                outer = holder
        parent = outer.parent
        if parent is not None and parent.type == "export_statement":
            outer = parent
        first = outer
        previous = first.prev_named_sibling
        while previous is not None and previous.type == "decorator":
            first = previous
            previous = first.prev_named_sibling
        return first, outer

    def _signature(self, first: Node, node: Node) -> str:
        start = first
        while start.type == "decorator" and start.next_named_sibling is not None:
            start = start.next_named_sibling
        start_byte = start.start_byte
        for child in start.children if start.type == "export_statement" else ():
            if child.type != "decorator":
                start_byte = child.start_byte
                break
        body = node.child_by_field_name("body")
        if body is not None and node.type == "type_alias_declaration":
            body = None
        stop = body.start_byte if body is not None else node.end_byte
        if node.type == "arrow_function" and body is not None and body.type != "statement_block":
            stop = body.start_byte
        header = base.one_line(self.source[start_byte:stop].decode("utf-8", "replace"))
        return header.rstrip("{").rstrip()

    def _metadata(self, node: Node, first: Node, value_of: Node | None) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        wrapper = first
        while wrapper.type == "decorator" and wrapper.next_named_sibling is not None:
            wrapper = wrapper.next_named_sibling
        exported = wrapper.type == "export_statement"
        meta["exported"] = exported
        meta["default_export"] = exported and any(c.type == "default" for c in wrapper.children)
        tokens = {c.type for c in node.children if not c.is_named}
        if value_of is not None:
            tokens |= {c.type for c in value_of.children if not c.is_named}
            meta["arrow"] = node.type == "arrow_function"
        if node.type not in _CLASS_NODES and node.type not in _TYPE_NODES:
            meta["async"] = "async" in tokens
        if "static" in tokens:
            meta["static"] = True
        if "abstract" in tokens or node.type == "abstract_class_declaration":
            meta["abstract"] = True
        if "*" in tokens or "generator" in node.type:
            meta["generator"] = True
        for getter in ("get", "set"):
            if getter in tokens:
                meta["kind"] = "getter" if getter == "get" else "setter"
        name_node = node.child_by_field_name("name")
        if node.type == "method_definition" and name_node is not None and base.text(name_node, self.source) == "constructor":
            meta["kind"] = "constructor"
        holders = [node] + ([value_of] if value_of is not None else [])
        for holder in holders:
            for child in holder.children:
                if child.type == "accessibility_modifier":
                    meta["accessibility"] = base.text(child, self.source)
        decorators = [c for c in (first.parent.children if first.parent else []) if c.type == "decorator"]
        decorators = [d for d in decorators if first.start_byte <= d.start_byte < node.start_byte]
        decorators += [c for c in node.children if c.type == "decorator"]
        if wrapper.type == "export_statement":
            decorators += [c for c in wrapper.children if c.type == "decorator"]
        if decorators:
            meta["decorators"] = sorted(
                {base.one_line(base.text(d, self.source)).lstrip("@") for d in decorators}
            )
        return meta

    def _heritage(self, node: Node, draft: _Draft) -> None:
        for child in node.named_children:
            if child.type == "class_heritage":
                clauses = [c for c in child.named_children if c.type in ("extends_clause", "implements_clause")]
                if not clauses:  # javascript grammar: `extends <expression>` directly
                    for expr in child.named_children:
                        self._heritage_ref(expr, "superclass", draft)
                for clause in clauses:
                    via = "superclass" if clause.type == "extends_clause" else "implements"
                    for expr in clause.named_children:
                        if expr.type != "type_arguments":
                            self._heritage_ref(expr, via, draft)
            elif child.type == "extends_type_clause":
                for expr in child.named_children:
                    self._heritage_ref(expr, "superclass", draft)

    def _heritage_ref(self, expr: Node, via: str, draft: _Draft) -> None:
        chain = _name_chain(expr, self.source)
        if chain:
            draft.refs.append(_Ref(via, chain))
            draft.metadata.setdefault("extends" if via == "superclass" else "implements", []).append(".".join(chain))

    def _unique(self, identifier: str, unit_type: str) -> str:
        key = (identifier, unit_type)
        count = self.seen_ids.get(key, 0) + 1
        self.seen_ids[key] = count
        return identifier if count == 1 else f"{identifier}#{count}"

    # -- imports, exports and references ---------------------------------------------------

    def _module_dep(self, specifier: str, owner: _Draft, name: str | None = None, default_local: str | None = None) -> None:
        modules = resolve_specifier(self.file_path, specifier)
        if not modules:
            owner.deps.append(Dependency(specifier, "import"))
            return
        if name is None:
            owner.deps.append(Dependency(modules[0], "import", lookup=modules))
            return
        names = [default_local, "default"] if default_local else [name]
        lookup = [f"{m}:{n}" for m in modules for n in names if n] + list(modules)
        owner.deps.append(Dependency(lookup[0], "import", lookup=tuple(dict.fromkeys(lookup))))

    def _import(self, node: Node, owner: _Draft) -> None:
        specifier = _string_value(node.child_by_field_name("source"), self.source)
        require = next((c for c in node.named_children if c.type == "import_require_clause"), None)
        if require is not None:
            specifier = _string_value(require.child_by_field_name("source"), self.source)
            local_node = next((c for c in require.named_children if c.type == "identifier"), None)
            if specifier is not None and local_node is not None:
                self._bind(base.text(local_node, self.source), specifier, None)
                self._module_dep(specifier, owner)
            return
        if specifier is None:
            return
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if clause is None:
            self._module_dep(specifier, owner)
            return
        for part in clause.named_children:
            if part.type == "identifier":
                local = base.text(part, self.source)
                self._bind(local, specifier, "default", default=True)
                self._module_dep(specifier, owner, "default", default_local=local)
            elif part.type == "namespace_import":
                ident = next((c for c in part.named_children if c.type == "identifier"), None)
                if ident is not None:
                    self._bind(base.text(ident, self.source), specifier, None)
                self._module_dep(specifier, owner)
            elif part.type == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier":
                        continue
                    imported = base.text(spec.child_by_field_name("name"), self.source)
                    alias = spec.child_by_field_name("alias")
                    local = base.text(alias, self.source) if alias is not None else imported
                    self._bind(local, specifier, imported)
                    self._module_dep(specifier, owner, imported)

    def _bind(self, local: str, specifier: str, imported: str | None, default: bool = False) -> None:
        self.bindings[local] = _Binding(resolve_specifier(self.file_path, specifier), specifier, imported, default)

    def _export(self, node: Node, owner: _Draft) -> None:
        specifier = _string_value(node.child_by_field_name("source"), self.source)
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if specifier is None:
            if clause is not None:
                for spec in clause.named_children:
                    if spec.type == "export_specifier":
                        self.local_exports.add(base.text(spec.child_by_field_name("name"), self.source))
            value = node.child_by_field_name("value")
            if value is not None and value.type == "identifier":
                self.local_exports.add(base.text(value, self.source))
            return
        if clause is None:
            self._module_dep(specifier, owner)
            return
        for spec in clause.named_children:
            if spec.type == "export_specifier":
                self._module_dep(specifier, owner, base.text(spec.child_by_field_name("name"), self.source))

    def _call(self, node: Node, owner: _Draft) -> None:
        function = node.child_by_field_name("function")
        if function is None:
            return
        args = node.child_by_field_name("arguments")
        first_arg = args.named_children[0] if args is not None and args.named_child_count else None
        if function.type == "import" or (function.type == "identifier" and base.text(function, self.source) == "require"):
            specifier = _string_value(first_arg, self.source)
            if specifier is not None:
                self._module_dep(specifier, self._module_draft())
                self._bind_require(node, specifier)
            return
        chain = _name_chain(function, self.source)
        if chain:
            owner.refs.append(_Ref("calls", chain))

    def _bind_require(self, call: Node, specifier: str) -> None:
        declarator = call.parent
        if declarator is None or declarator.type != "variable_declarator":
            return
        pattern = declarator.child_by_field_name("name")
        if pattern is None:
            return
        if pattern.type == "identifier":
            self._bind(base.text(pattern, self.source), specifier, None)
        elif pattern.type == "object_pattern":
            for item in pattern.named_children:
                if item.type == "shorthand_property_identifier_pattern":
                    name = base.text(item, self.source)
                    self._bind(name, specifier, name)

    def _type_reference(self, node: Node, owner: _Draft) -> None:
        parent = node.parent
        if parent is not None and parent.child_by_field_name("name") == node and parent.type != "generic_type":
            return  # the declared name itself, not a reference
        chain = _name_chain(node, self.source)
        if chain:
            owner.refs.append(_Ref("code_reference", chain))

    def _module_draft(self) -> _Draft:
        return self.drafts[0]

    # -- resolution ------------------------------------------------------------------------

    def _resolve(self, ref: _Ref, draft: _Draft) -> Dependency | None:
        root, rest = ref.chain[0], ref.chain[1:]
        if root == "this":
            cls: _Draft | None = draft
            while cls is not None and cls.type != "class":
                cls = cls.parent
            if cls is None or len(rest) != 1:
                return None
            target = f"{cls.identifier}.{rest[0]}"
            return Dependency(target, ref.via, lookup=(target,))
        dotted = ".".join(ref.chain)
        candidates: list[str] = []
        scope: _Draft | None = draft if root in self.declared else None
        while scope is not None and scope.type != "module":
            nested = f"{self.module}:{scope.qual}.{dotted}"
            if scope.type in ("function", "method") and nested in self.identifiers:
                candidates.append(nested)
            scope = scope.parent
        binding = self.bindings.get(root)
        if binding is not None:
            candidates.extend(self._imported_candidates(binding, root, rest))
            if not binding.modules and ref.via in ("calls", "code_reference"):
                return None  # a package's export: never a unit of this index
        elif root in self.declared:
            candidates.append(f"{self.module}:{dotted}")
        else:
            return None  # a global or local variable: nothing this index could hold
        if binding is not None:
            target = next((c for c in candidates if not c.startswith(f"{self.module}:")), candidates[-1])
        else:
            target = candidates[-1]
        return Dependency(target, ref.via, lookup=tuple(dict.fromkeys(candidates)))

    def _imported_candidates(self, binding: _Binding, local: str, rest: tuple[str, ...]) -> list[str]:
        tail = ".".join(rest)
        modules = binding.modules or (binding.package,)
        out: list[str] = []
        for module in modules:
            if binding.imported is None:
                out.append(f"{module}:{tail}" if tail else module)
            else:
                names = [local, "default"] if binding.default else [binding.imported]
                out.extend(f"{module}:{n}" + (f".{tail}" if tail else "") for n in names)
        return out

    def _freeze(self, draft: _Draft) -> Unit:
        if draft.type == "module":
            start, end, code = base.file_span(self.source)
            draft.metadata["exports"] = sorted(self.local_exports)
        else:
            start, end, code = base.node_span(draft.first, draft.last, self.source)
            if draft.parent is not None and draft.parent.type == "module" and draft.qual in self.local_exports:
                draft.metadata["exported"] = True
        deps = list(draft.deps) + [self._resolve(r, draft) for r in draft.refs]
        return Unit(
            identifier=draft.identifier,
            type=draft.type,
            language=self.language,
            file_path=self.file_path,
            line_start=start,
            line_end=end,
            source_code=code,
            namespace=draft.namespace,
            signature=draft.signature,
            docstring=draft.docstring,
            parent=draft.parent.identifier if draft.parent is not None else None,
            metadata=draft.metadata,
            dependencies=base.dedupe_dependencies(d for d in deps if d is not None and d.target != draft.identifier),
        )


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one JS/TS/TSX file: the module first, then declarations in source order."""
    return _Extractor(file_path, source).run()
