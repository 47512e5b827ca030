"""OCaml extraction: modules (nested ones and functors), `let` bindings, types, exceptions, module
types and signatures, classes, externals — in `.ml` implementations and `.mli` interfaces.

A file is a module named after it (`billing.ml` → `Billing`, `http_client.mli` → `Http_client`),
and everything in it is named by OCaml's own dotted paths: `Billing.rate`, `Billing.Invoice.create`,
`Billing.Make` (a functor) and its members `Billing.Make.show`, a module type `Billing.PRINTABLE`
and its specifications `Billing.PRINTABLE.print`, a type `Billing.invoice`, an exception
`Billing.Invalid_amount`, an operator `Billing.( +. )`, a class `Billing.counter` and its methods
`Billing.counter#incr` (OCaml's method call). A library that wraps its modules (dune's
`Mylib.Billing`) cannot be seen from one file; its modules keep their own names.

Unit types: "module" (the `.ml` file, whole; a nested module; `metadata["alias"]` for `module M =
N`, `["applies"]` naming the functor of `module M = F (…)`), "interface" (the `.mli` file, whole), "functor" (`metadata
["parameters"]`), "module_type", "function" (a `let` with parameters or a `fun`/`function`
body; `metadata["rec"]`), "value" (any other named `let`), "val" (a `val` specification in a
signature or interface), "external", "type" (`metadata["kind"]`: variant with
`["constructors"]`, record with `["fields"]`, alias, abstract …), "exception", "class",
"method". Only bindings of structures and signatures are units (a file's, a module's, a functor's,
a module type's); `let () = …`, `let _ = …` and tuple patterns have no name, and what they hold
belongs to the enclosing module. Each `and` binding is a unit of its own. The docstring is the
`(** … *)` comment directly above an item; a file's is its first doc comment when a blank line
separates it from the first item.

Dependencies: `open M` is an `import` and `include M` an `include` of the module as written
(`M`, or `Billing.M` when this file declares `M`), on the module whose structure holds them (a
local `let open M in` / `M.(…)` on the unit it is in). Qualified references (`Invoice.create`,
`M.N.f`, `Foo.t`, `Map.Make (String)`) are `calls` when applied and `code_reference`s otherwise,
with lookup candidates in OCaml's scoping order: a module of an enclosing structure of this file,
then through each structure-level `open`, then the path as written (another file's module), then
without its first module (`Shop.Invoice.add` from outside a library dune wraps as `Shop`). A
functor parameter's members resolve through its module type when the file declares it
(`P.print` in `Make (P : PRINTABLE)` → `Billing.PRINTABLE.print`). An unqualified name resolves
to a binding of an enclosing structure, and — when applied — through each `open`. Standard
library modules, `Stdlib` values and built-in types are never edges.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from woods.extract import base, registry, scan, scopes
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "ocaml"

_REFERENCES = """
(value_path) @value
(application_expression function: (value_path) @call)
(type_constructor_path) @type
(module_application functor: (_) @module)
(parenthesized_module_expression (module_path) @module)
(module_binding body: (module_path) @module)
(module_type_path) @module
(open_module module: (_) @open)
(local_open_expression . (module_path) @open)
(comment) @comment
"""
# Containers whose items are units: the file, a module's structure, a module type's signature.
_ITEMS_IN = frozenset({"compilation_unit", "structure", "signature"})
_UNRESOLVED = Dependency("", "")  # a cache miss (`_Extractor._references`; None is "no edge")
_PLAIN_PATH = re.compile(r"[A-Za-z_][\w']*(?:\.[A-Za-z_][\w']*)*")
_STDLIB_MODULES = frozenset({
    "Stdlib", "List", "Array", "String", "Bytes", "Char", "Printf", "Format", "Scanf", "Hashtbl", "Map", "Set",
    "Option", "Result", "Seq", "Buffer", "Int", "Int32", "Int64", "Nativeint", "Float", "Bool", "Fun", "Sys",
    "Unix", "Lazy", "Queue", "Stack", "Filename", "In_channel", "Out_channel", "Printexc", "Random", "Lexing",
    "Parsing", "Obj", "Gc", "Arg", "Uchar", "Either", "Atomic", "Domain", "Mutex", "Condition", "Thread",
    "Weak", "Ephemeron", "Complex", "Bigarray", "StringLabels", "ListLabels", "ArrayLabels", "MoreLabels",
    "BytesLabels", "StdLabels", "Oo", "Callback", "Marshal", "Digest", "Type", "Effect", "Dynarray",
})
_STDLIB_VALUES = frozenset({
    "print_endline", "print_string", "print_int", "print_float", "print_char", "print_newline", "prerr_endline",
    "prerr_string", "ignore", "fst", "snd", "not", "ref", "raise", "raise_notrace", "failwith", "invalid_arg",
    "string_of_int", "int_of_string", "float_of_int", "int_of_float", "string_of_float", "float_of_string",
    "incr", "decr", "min", "max", "compare", "succ", "pred", "abs", "exit", "fun", "id",
})
_BUILTIN_TYPES = frozenset({
    "int", "float", "string", "bool", "unit", "char", "list", "array", "option", "result", "ref", "exn", "bytes",
    "int32", "int64", "nativeint", "format", "format4", "format6", "lazy_t", "seq", "in_channel", "out_channel",
})


def module_name(file_path: str) -> str:
    """The module a file is: its base name without `.ml`/`.mli`, capitalised (`http_client` → `Http_client`)."""
    stem = posixpath.basename(file_path).rsplit(".", 1)[0]
    return stem[:1].upper() + stem[1:] if stem else "Main"


def _clean_doc(raw: str | None) -> str | None:
    """The text of a `(** … *)` comment, dedented; None for any other comment."""
    if raw is None or not raw.startswith("(**") or raw.startswith("(***"):
        return None
    body = raw[3:-2] if raw.endswith("*)") else raw[3:]
    lines = body.split("\n")
    rest = [line for line in lines[1:] if line.strip()]
    indent = min((len(line) - len(line.lstrip()) for line in rest), default=0)
    cleaned = [lines[0].strip(), *(line[indent:].rstrip() for line in lines[1:])]
    while cleaned and not cleaned[0]:
        cleaned.pop(0)
    while cleaned and not cleaned[-1]:
        cleaned.pop()
    return "\n".join(cleaned) or None


@dataclass(slots=True)
class _Draft(base.Draft):
    """An OCaml unit under construction: a module-like unit knows its names (values, types,
    modules), its structure-level opens and, for a functor, its parameters' module types."""

    outer: _Draft | None = None
    names: set[str] = field(default_factory=set)
    opens: list[str] = field(default_factory=list)
    parameters: dict[str, str | None] = field(default_factory=dict)  # parameter → written module type


class _Extractor(base.FileExtractor[_Draft]):
    """Structures and signatures walked in Python (never expressions); references by one query."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.module = module_name(file_path)
        self.grammar = registry.BY_NAME[LANGUAGE].grammar_for(file_path)  # `.mli`: the interface grammar
        self.interface = self.grammar == "ocaml_interface"
        self.comments = scopes.Comments([], source)
        self.chains: dict[int, list[_Draft]] = {}  # `_scopes` of each structure's unit, by id
        self.module_paths: dict[tuple[int, str], list[str]] = {}  # `_module_candidates` by structure and path

    def run(self) -> FileExtraction:
        tree = scan.parse(self.grammar, self.source)
        root = tree.root_node
        found = scopes.captures_by_name(self.grammar, _REFERENCES, root)
        self.comments = scopes.Comments(found.get("comment", []), self.source)
        unit_type = "interface" if self.interface else "module"
        module = _Draft(self.module, unit_type, root, whole_file=True)
        module.docstring = self._file_docs(root, found.get("comment", []))
        self.drafts.append(module)
        self._items(root, module)
        self._references(found)
        kept = self.drafts if self.source.strip() else []  # a blank file has nothing to retrieve
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in kept)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    # -- declarations ----------------------------------------------------------------------

    def _file_docs(self, root: Node, comments: list[Node]) -> str | None:
        """The first doc comment, when it comes before every item and a blank line follows it."""
        first_item = next((c for c in root.named_children if c.type != "comment"), None)
        first = comments[0] if comments else None
        if first is None or (first_item is not None and first.start_byte > first_item.start_byte):
            return None
        if first_item is not None and first_item.start_point[0] <= first.end_point[0] + 1:
            return None  # directly above the first item: its docstring
        return _clean_doc(base.text(first, self.source))

    def _items(self, container: Node, owner: _Draft) -> None:
        """The items of a file, structure or signature: units, and the names, opens and includes
        of `owner` (its structure)."""
        stack = [(c, owner) for c in reversed(container.named_children)]
        while stack:
            node, scope = stack.pop()
            kind = node.type
            if kind == "value_definition":
                self._let(node, scope)
            elif kind in ("module_definition", "module_type_definition"):
                for child, body in self._modules(node, scope):
                    stack.extend((c, child) for c in reversed(body.named_children))
            elif kind == "type_definition":
                self._types(node, scope)
            elif kind == "exception_definition":
                declaration = next((c for c in node.named_children if c.type == "constructor_declaration"), None)
                if declaration is not None and declaration.named_child_count:
                    self._new(node, base.text(declaration.named_children[0], self.source), "exception", scope, node, node)
            elif kind in ("value_specification", "external"):
                name = next((c for c in node.named_children if c.type in ("value_name", "parenthesized_operator")), None)
                if name is not None:
                    self._new(node, self._value_name(name), "val" if kind == "value_specification" else "external",
                              scope, node, node)
            elif kind in ("open_module", "open_module_signature"):
                target = node.child_by_field_name("module")
                if target is not None:
                    written = "".join(base.text(target, self.source).split())
                    self._structure_edge(self._module_edge(written, "import", scope), scope)  # before it opens anything
                    scope.opens.append(written)
            elif kind in ("include_module", "include_module_type"):
                target = node.child_by_field_name("module") or node.child_by_field_name("module_type")
                if target is not None:
                    text = "".join(base.text(target, self.source).split())
                    self._structure_edge(self._module_edge(text, "include", scope), scope)
            elif kind == "class_definition":
                self._classes(node, scope)

    def _structure_edge(self, dependency: Dependency | None, scope: _Draft) -> None:
        if dependency is not None:
            scope.deps.append(dependency)

    def _value_name(self, node: Node) -> str:
        """`name`, or an operator spelled as OCaml writes it bound: `( +. )`."""
        if node.type == "parenthesized_operator":
            return f"( {base.text(node, self.source)[1:-1].strip()} )"
        return base.text(node, self.source)

    def _new(self, node: Node, name: str, unit_type: str, scope: _Draft, first: Node, last: Node,
             separator: str = ".") -> _Draft:
        identifier = self.unique(f"{scope.identifier}{separator}{name}", unit_type)
        scope.names.add(name)
        draft = _Draft(identifier, unit_type, node, scope.identifier, scope.identifier, first=first, last=last, outer=scope)
        draft.docstring = _clean_doc(self.comments.text_above(first.start_point[0]))
        draft.signature = base.one_line(self.source[first.start_byte : last.end_byte].decode("utf-8", "replace"))
        self.drafts.append(draft)
        return draft

    def _header(self, draft: _Draft, first: Node, body: Node | None) -> None:
        """The signature up to the body (`let add x y`, `type t`, `module Make (P : S)`)."""
        if body is not None:
            text = self.source[first.start_byte : body.start_byte].decode("utf-8", "replace")
            draft.signature = base.one_line(text).rstrip("=").rstrip()

    def _let(self, node: Node, scope: _Draft) -> None:
        bindings = [c for c in node.named_children if c.type == "let_binding"]
        first: Node = node
        for index, binding in enumerate(bindings):
            if index:  # `and g …`: from its `and`
                previous = binding.prev_sibling
                first = previous if previous is not None and previous.type == "and" else binding
            pattern = binding.child_by_field_name("pattern")
            if pattern is None or pattern.type not in ("value_name", "parenthesized_operator"):
                continue
            body = binding.child_by_field_name("body")
            function = any(c.type == "parameter" for c in binding.named_children) or (
                body is not None and body.type in ("fun_expression", "function_expression"))
            last = node if index == len(bindings) - 1 else binding
            draft = self._new(binding, self._value_name(pattern), "function" if function else "value", scope, first, last)
            if any(c.type == "rec" for c in node.children):
                draft.metadata["rec"] = True
            self._header(draft, first, body)

    def _modules(self, node: Node, scope: _Draft) -> list[tuple[_Draft, Node]]:
        """The units of `module …`, `module rec … and …` and `module type …`, with the structure
        or signature whose items are theirs."""
        walked: list[tuple[_Draft, Node]] = []
        if node.type == "module_type_definition":
            name = next((c for c in node.named_children if c.type == "module_type_name"), None)
            body = node.child_by_field_name("body")
            if name is not None:
                draft = self._new(node, base.text(name, self.source), "module_type", scope, node, node)
                self._header(draft, node, body)
                if body is not None and body.type == "signature":
                    walked.append((draft, body))
            return walked
        bindings = [c for c in node.named_children if c.type == "module_binding"]
        first: Node = node
        for index, binding in enumerate(bindings):
            if index:
                previous = binding.prev_sibling
                first = previous if previous is not None and previous.type == "and" else binding
            name = next((c for c in binding.named_children if c.type == "module_name"), None)
            if name is None:
                continue
            body = binding.child_by_field_name("body")
            parameters = [c for c in binding.named_children if c.type == "module_parameter"]
            while body is not None and body.type == "functor":  # `module F = functor (X : S) -> …`
                parameters += [c for c in body.named_children if c.type == "module_parameter"]
                body = body.child_by_field_name("body")
            last = node if index == len(bindings) - 1 else binding
            draft = self._new(binding, base.text(name, self.source), "functor" if parameters else "module", scope, first, last)
            self._header(draft, first, body)
            if parameters:
                draft.metadata["parameters"] = [base.one_line(base.text(p, self.source))[1:-1] for p in parameters]
                for parameter in parameters:
                    parameter_name = next((c for c in parameter.named_children if c.type == "module_name"), None)
                    module_type = parameter.child_by_field_name("module_type")
                    if parameter_name is not None:
                        draft.parameters[base.text(parameter_name, self.source)] = (
                            base.text(module_type, self.source) if module_type is not None else None)
            signature = binding.child_by_field_name("module_type")
            if body is not None and body.type == "structure":
                walked.append((draft, body))
            elif body is not None and body.type == "module_path":
                draft.metadata["alias"] = base.text(body, self.source)
            elif body is not None and body.type == "module_application":
                functor = body.child_by_field_name("functor")
                draft.metadata["applies"] = base.one_line(base.text(functor, self.source))
            elif body is None and signature is not None and signature.type == "signature":  # a spec in a signature
                walked.append((draft, signature))
        return walked

    def _types(self, node: Node, scope: _Draft) -> None:
        bindings = [c for c in node.named_children if c.type == "type_binding"]
        first: Node = node
        for index, binding in enumerate(bindings):
            if index:
                previous = binding.prev_sibling
                first = previous if previous is not None and previous.type == "and" else binding
            name = binding.child_by_field_name("name")
            if name is None:
                continue
            last = node if index == len(bindings) - 1 else binding
            draft = self._new(binding, base.text(name, self.source), "type", scope, first, last)
            body = binding.child_by_field_name("body")
            self._header(draft, first, body)
            draft.metadata["kind"] = self._type_kind(body, draft)

    def _type_kind(self, body: Node | None, draft: _Draft) -> str:
        if body is None:
            return "abstract"
        if body.type == "variant_declaration":
            draft.metadata["constructors"] = [
                base.text(c.named_children[0], self.source)
                for c in body.named_children if c.type == "constructor_declaration" and c.named_child_count
            ]
            return "variant"
        if body.type == "record_declaration":
            draft.metadata["fields"] = [
                base.text(c.named_children[0], self.source)
                for c in body.named_children if c.type == "field_declaration" and c.named_child_count
            ]
            return "record"
        return "extensible" if body.type == ".." else "alias"

    def _classes(self, node: Node, scope: _Draft) -> None:
        for binding in (c for c in node.named_children if c.type == "class_binding"):
            name = next((c for c in binding.named_children if c.type == "class_name"), None)
            if name is None:
                continue
            draft = self._new(binding, base.text(name, self.source), "class", scope, node, binding)
            body = binding.child_by_field_name("body")
            self._header(draft, node, body)
            for method in (c for c in body.named_children if c.type == "method_definition") if body is not None else ():
                method_name = next((c for c in method.named_children if c.type == "method_name"), None)
                if method_name is not None:
                    self._new(method, base.text(method_name, self.source), "method", draft, method, method, "#")

    # -- references ------------------------------------------------------------------------

    def _references(self, found: dict[str, list[Node]]) -> None:
        spans = scopes.Spans([
            (0, len(self.source)) if d.whole_file else ((d.first or d.node).start_byte, (d.last or d.node).end_byte)
            for d in self.drafts
        ])
        calls = {n.start_byte for n in found.get("call", [])}
        source = self.source
        # What a reference resolves to depends on its text, kind and the structure it is in, not
        # on the unit: each is resolved once per structure.
        resolved: dict[tuple[int, str, bytes], Dependency | None] = {}
        # Most value paths are local variables: a plain name the file never binds resolves to
        # nothing, unless it is applied and an `open` may provide it.
        bound = {name.encode("utf-8", "surrogatepass") for d in self.drafts for name in d.names}
        opens = any(d.opens for d in self.drafts)
        for kind in ("open", "module", "type", "value"):
            nodes = found.get(kind, [])
            if kind == "value":
                nodes = [n for n in nodes if (n.start_byte in calls and opens)
                         or b"." in (raw := source[n.start_byte : n.end_byte]) or raw in bound]
            for node, index in zip(nodes, spans.owners([n.start_byte for n in nodes]), strict=True):
                draft = self.drafts[index if index is not None else 0]
                if kind == "open" and node.parent is not None and node.parent.type == "open_module" \
                        and self._structure_level(node.parent):
                    continue  # a structure's own `open`: an edge of its module already
                if kind == "module" and node.parent is not None and node.parent.type == "include_module_type":
                    continue  # `include S` in a signature: its module's `include` edge already
                via = kind if kind != "value" else "calls" if node.start_byte in calls else "code_reference"
                scope = self._scope(draft)
                key = (id(scope), via, source[node.start_byte : node.end_byte])
                dependency = resolved.get(key, _UNRESOLVED)
                if dependency is _UNRESOLVED:
                    text = "".join(key[2].decode("utf-8", "replace").split())
                    if kind in ("open", "module"):
                        dependency = self._module_edge(text, "import" if kind == "open" else "code_reference", scope)
                    else:
                        dependency = self._path_reference(text, "code_reference" if kind == "type" else via, scope,
                                                          types=kind == "type")
                    resolved[key] = dependency
                if dependency is not None:
                    draft.deps.append(dependency)

    def _structure_level(self, node: Node) -> bool:
        parent = node.parent
        return parent is not None and parent.type in _ITEMS_IN

    def _scope(self, draft: _Draft | None) -> _Draft:
        """The innermost module-like unit at or around `draft` (whose structure it is in)."""
        while draft is not None and draft.type not in ("module", "interface", "functor", "module_type"):
            draft = draft.outer
        return draft if draft is not None else self.drafts[0]

    def _scopes(self, draft: _Draft) -> list[_Draft]:
        """The module-like units around `draft`, innermost first (listed once per structure: the
        walk is done when references are resolved)."""
        innermost = self._scope(draft)
        chain = self.chains.get(id(innermost))
        if chain is None:
            chain = self.chains[id(innermost)] = []
            scope: _Draft | None = innermost
            while scope is not None:
                chain.append(scope)
                scope = self._scope(scope.outer) if scope.outer is not None else None
        return chain

    def _module_candidates(self, segments: list[str], draft: _Draft) -> list[str]:
        """Where a module path `A.B…` may point, in OCaml's order: a module of an enclosing
        structure, a functor parameter's module type, each `open`, then as written (once per
        structure and path)."""
        key = (id(self._scope(draft)), ".".join(segments))
        found = self.module_paths.get(key)
        if found is None:
            found = self.module_paths[key] = self._find_module(segments, draft)
        return found

    def _find_module(self, segments: list[str], draft: _Draft) -> list[str]:
        head, rest = segments[0], segments[1:]
        candidates: list[str] = []
        scopes_ = self._scopes(draft)
        for scope in scopes_:
            if head in scope.parameters:  # a functor's parameter: what its module type declares
                module_type = scope.parameters[head]
                if module_type is None or not _PLAIN_PATH.fullmatch(module_type):
                    return []
                # The module type is written outside the functor: look it up from there.
                around = self._scope(scope.outer) if scope.outer is not None else scope
                if around is scope:
                    return []
                return [".".join((c, *rest)) for c in self._module_candidates(module_type.split("."), around)]
            if head in scope.names:
                candidates.append(".".join((scope.identifier, *segments)))
                break
        if not candidates and head in _STDLIB_MODULES:
            return []
        for scope in scopes_:
            for opened in reversed(scope.opens):  # (`M.x` after `open M` is M's own `x`, not `M.M.x`)
                if opened.split(".")[0] not in _STDLIB_MODULES and opened.rpartition(".")[2] != head:
                    candidates.append(".".join((opened, *segments)))
        candidates.append(".".join(segments))
        if rest:  # `Shop.Invoice` from outside a wrapped library (dune): its module is `Invoice`
            candidates.append(".".join(rest))
        return list(dict.fromkeys(candidates))

    def _module_edge(self, text: str, via: str, scope: _Draft) -> Dependency | None:
        """The edge a module path written in `scope`'s structure makes, or None."""
        if not _PLAIN_PATH.fullmatch(text):
            return None
        candidates = self._module_candidates(text.split("."), scope)
        return Dependency(candidates[0], via, lookup=tuple(candidates)) if candidates else None

    def _path_reference(self, text: str, via: str, scope: _Draft, types: bool = False) -> Dependency | None:
        """The edge a value or type path (`x`, `M.x`, `M.N.t`) written in `scope`'s structure makes, or None."""
        if not _PLAIN_PATH.fullmatch(text):
            return None
        *path, name = text.split(".")
        scopes_ = self._scopes(scope)
        if path:
            candidates = [f"{c}.{name}" for c in self._module_candidates(path, scope)]
        elif types and name in _BUILTIN_TYPES:
            return None
        else:
            candidates = [f"{s.identifier}.{name}" for s in scopes_ if name in s.names]
            if not candidates and not types and name in _STDLIB_VALUES:
                return None
            if via == "calls":  # an applied name: also through each `open`
                candidates += [f"{opened}.{name}" for s in scopes_ for opened in reversed(s.opens)
                               if opened.split(".")[0] not in _STDLIB_MODULES]
        if not candidates:
            return None
        unique = tuple(dict.fromkeys(candidates))
        return Dependency(unique[0], via, lookup=unique)


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one OCaml `.ml` or `.mli` file: the file's module first, then its items in source order."""
    try:
        return _Extractor(file_path, source, layout).run()
    except scan.ParseTimeoutError as error:
        return scan.parse_timeout(file_path, LANGUAGE, error)
