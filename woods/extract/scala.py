"""Scala extraction (Scala 2 and 3): classes, case classes, traits, objects, enums, defs, vals, givens.

Identifiers are dotted Scala paths from the `package` clauses (chained clauses and package blocks
nest): `com.acme.billing.Invoice`, members `com.acme.billing.Invoice.total`, nested types
`com.acme.billing.Invoice.Line`, top-level (Scala 3) definitions `com.acme.billing.helper`, a
package object's members `com.acme.util.now` (the package object itself is `com.acme.util`, type
"package_object"). A class and its companion object share one identifier; their unit types differ
("class" / "object"), and their members both sit under it. A file without a package clause names
from the root (`Main`). No unit is emitted per package clause: every file of a package repeats it.

Unit types: "class" (`metadata["case"]` for case classes), "trait", "object", "enum",
"package_object", "method" (a def inside a class, trait, object or enum), "function" (a top-level
or package-object def, or an extension method: `metadata["extension"]` names the receiver type),
"value" (a val/var directly in a template or at top level; `metadata["mutable"]` for var),
"type_alias", "given" (named givens only), "script" (a file without any definition, such as a
worksheet of statements, identified by its path). Local definitions inside a def body are not units; their
references belong to the enclosing def. Repeats of (identifier, type) in one file (overloads) get
`#2`, `#3` ….

Dependencies: imports (`via: "import"`; a wildcard import names its package), every parent in an
`extends … with …` clause (`via: "superclass"`: Scala linearises all of them into the type, and
their members are inherited), calls (`calls`: a bare `f()` is tried on each enclosing template,
then the package, then an explicit import; `Obj.m()` on a known object or imported name) and type
references (`code_reference`: `new T`, `T(…)`, type annotations), each with `lookup` candidates in
Scala's scoping order: members of enclosing templates, types declared in this file, explicit
imports, the file's package, wildcard imports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from woods.extract import base, scopes
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "scala"
_COMMENTS = frozenset({"comment", "block_comment"})

# Definition node → unit type for templates (their bodies hold members).
_TEMPLATES = {
    "class_definition": "class",
    "trait_definition": "trait",
    "object_definition": "object",
    "enum_definition": "enum",
    "package_object": "package_object",
}
_FUNCTIONS = frozenset({"function_definition", "function_declaration"})
_VALUES = frozenset({"val_definition", "var_definition", "val_declaration", "var_declaration"})
# Node types whose children may declare units; anything else (bodies, expressions) is left to the
# reference query.
_CONTAINERS = frozenset({"compilation_unit", "template_body", "enum_body", "with_template_body"})

# Names from scala.*, java.lang and Predef: references to them never name project code.
_STANDARD = frozenset(
    {
        "Any", "AnyRef", "AnyVal", "Nothing", "Null", "Unit", "Boolean", "Byte", "Short", "Int", "Long",
        "Float", "Double", "Char", "String", "Option", "Some", "None", "List", "Nil", "Seq", "Vector", "Map",
        "Set", "Array", "Either", "Left", "Right", "Try", "Success", "Failure", "Future", "Iterable",
        "Iterator", "BigInt", "BigDecimal", "Ordering", "Ordered", "Product", "Serializable", "Throwable",
        "Exception", "RuntimeException", "IllegalArgumentException", "IllegalStateException", "Enum",
        "App", "Object", "StringBuilder", "PartialFunction", "Function1", "Tuple2", "println", "print",
        "require", "assert", "implicitly", "summon", "identity", "classOf", "apply",
    }
)

# Captures of the reference query: calls by name, calls on a named receiver, objects used through
# a member (`Money.Zero`), type names (`new T` included), the type names that are no reference
# (parents are recorded as superclass, a type's own name, annotations, qualified paths' parts),
# and comments (for docstrings).
_REFERENCES = """
(call_expression function: (identifier) @call)
(call_expression function: (generic_function function: (identifier) @call))
(call_expression function: (field_expression value: (identifier) field: (identifier)) @selector)
(field_expression value: (identifier) @object)
(type_identifier) @type
(extends_clause type: (type_identifier) @not_reference)
(extends_clause type: (generic_type type: (type_identifier) @not_reference))
(annotation name: (type_identifier) @not_reference)
(stable_type_identifier (type_identifier) @not_reference)
(type_definition name: (type_identifier) @not_reference)
(comment) @comment
(block_comment) @comment
"""


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Scala unit under construction: `members` are the names its template body declares."""

    members: set[str] = field(default_factory=set)
    outer: _Draft | None = None
    package: str = ""


@dataclass(slots=True)
class _Imports:
    """The file's import table: simple name → qualified name, plus wildcard prefixes."""

    names: dict[str, str] = field(default_factory=dict)
    wildcards: list[str] = field(default_factory=list)


class _Extractor(base.FileExtractor[_Draft]):
    """Declaration skeleton in one iterative walk; references from one query, per innermost unit."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.imports = _Imports()
        self.declared: dict[str, list[str]] = {}  # simple type/object name → identifiers in this file
        self.file_imports: list[Dependency] = []  # imports outside any template: on every top-level unit
        self.declared_ids: set[str] = set()
        self.comments = scopes.Comments([], source)
        self.not_references: set[int] = set()  # start bytes of type names that are no reference

    def run(self) -> FileExtraction:
        tree = base.parse("scala", self.source)
        root = tree.root_node
        found = scopes.captures_by_name("scala", _REFERENCES, root)
        self.comments = scopes.Comments(found.get("comment", []), self.source)
        self.not_references = {n.start_byte for n in found.get("not_reference", ())}
        # A bodiless `package a` clause puts the rest of the file inside `a` (clauses chain).
        top: list[tuple[Node, _Draft | None, str]] = []
        package = ""
        for child in root.named_children:
            if child.type == "package_clause" and child.child_by_field_name("body") is None:
                name = base.text(child.child_by_field_name("name"), self.source)
                package = f"{package}.{name}" if package else name
            else:
                top.append((child, None, package))
        stack = list(reversed(top))
        while stack:
            node, owner, package = stack.pop()
            kind = node.type
            if kind in _CONTAINERS:
                stack.extend((c, owner, package) for c in reversed(node.named_children))
            elif kind == "package_clause":
                name = base.text(node.child_by_field_name("name"), self.source)
                body = node.child_by_field_name("body")
                if body is not None:
                    stack.append((body, owner, f"{package}.{name}" if package else name))
            elif kind == "import_declaration":
                self._import(node, owner)
            elif kind in _TEMPLATES:
                draft = self._template(node, owner, package)
                body = node.child_by_field_name("body")
                if body is not None:
                    stack.append((body, draft, package))
            elif kind in _FUNCTIONS:
                self._function(node, owner, package, None)
            elif kind == "extension_definition":
                self._extension(node, owner, package)
            elif kind in _VALUES:
                self._value(node, owner, package)
            elif kind == "type_definition":
                self._simple(node, owner, package, "type_alias", node.child_by_field_name("type"))
            elif kind == "given_definition" and node.child_by_field_name("name") is not None:
                body = node.child_by_field_name("body")
                draft = self._simple(node, owner, package, "given", body)
                if body is not None and body.type == "with_template_body":
                    stack.append((body, draft, package))
        self.declared_ids = {i for ids in self.declared.values() for i in ids}
        self._references(found)
        for draft in self.drafts:
            if draft.outer is None:
                draft.deps[:0] = self.file_imports
        if not self.drafts and self.source.strip():
            # A script or worksheet without definitions (`build.sc`, top-level statements) is one unit.
            self.drafts.append(_Draft(self.file_path, "script", root, whole_file=True))
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in self.drafts)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    # -- declarations ----------------------------------------------------------------------

    def _new(self, node: Node, name: str, unit_type: str, owner: _Draft | None, package: str,
             body: Node | None) -> _Draft:
        prefix = owner.identifier if owner is not None else package
        identifier = self.unique(f"{prefix}.{name}" if prefix else name, unit_type)
        # Scala 3 indentation lets a node run over the comments and blank lines after it.
        end = scopes.last_token(node, _COMMENTS)
        draft = _Draft(identifier, unit_type, end, parent=owner.identifier if owner is not None else None,
                       namespace=prefix or None, first=node, outer=owner, package=package)
        draft.signature = self._header(node, body)
        draft.docstring = base.clean_comment(self.comments.text_above(node.start_point[0]))
        draft.metadata = self._modifiers(node)
        if owner is not None:
            owner.members.add(name)
        self.drafts.append(draft)
        return draft

    def _header(self, node: Node, body: Node | None) -> str:
        stop = body.start_byte if body is not None else node.end_byte
        header = base.one_line(self.source[node.start_byte : stop].decode("utf-8", "replace"))
        return header.rstrip("=:{ ").rstrip() if body is not None else header

    def _modifiers(self, node: Node) -> dict[str, object]:
        meta: dict[str, object] = {}
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        if modifiers is not None:
            meta["modifiers"] = base.text(modifiers, self.source).split()
        annotations = [base.one_line(base.text(c, self.source)) for c in node.children if c.type == "annotation"]
        if annotations:
            meta["annotations"] = annotations
        return meta

    def _template(self, node: Node, owner: _Draft | None, package: str) -> _Draft:
        name = base.text(node.child_by_field_name("name"), self.source)
        unit_type = _TEMPLATES[node.type]
        if unit_type == "package_object":
            # `package object util` inside package `a` is the package `a.util`; members sit under it.
            draft = self._new(node, name, unit_type, owner, package, node.child_by_field_name("body"))
        else:
            draft = self._new(node, name, unit_type, owner, package, node.child_by_field_name("body"))
            self.declared.setdefault(name, []).append(draft.identifier)
        if node.type == "class_definition":
            draft.metadata["case"] = any(c.type == "case" for c in node.children)
        self._parents(node, draft)
        return draft

    def _parents(self, node: Node, draft: _Draft) -> None:
        clause = node.child_by_field_name("extend")
        if clause is None:
            return
        written: list[str] = []
        mixins: list[str] = []
        after_with = False
        for child in clause.children:
            if child.type == "with" or child.type == ",":
                after_with = after_with or child.type == "with"
                continue
            if child.type not in ("type_identifier", "generic_type", "stable_type_identifier"):
                continue
            target = child.child_by_field_name("type") if child.type == "generic_type" else child
            dotted = "".join(base.text(target, self.source).split())
            (mixins if after_with else written).append(dotted)
            dep = self._type_dependency(dotted, draft.outer, draft.package, "superclass")
            if dep is not None:
                draft.deps.append(dep)
        draft.metadata["extends"] = written
        if mixins:
            draft.metadata["with"] = mixins

    def _function(self, node: Node, owner: _Draft | None, package: str, extension: str | None) -> _Draft:
        name = base.text(node.child_by_field_name("name"), self.source)
        in_template = owner is not None and owner.type not in ("package_object",)
        unit_type = "method" if in_template and extension is None else "function"
        draft = self._new(node, name, unit_type, owner, package, node.child_by_field_name("body"))
        if node.type == "function_declaration":
            draft.metadata["abstract"] = True
        if extension is not None:
            draft.metadata["extension"] = extension
        return draft

    def _extension(self, node: Node, owner: _Draft | None, package: str) -> None:
        params = node.child_by_field_name("parameters")
        receiver = ""
        if params is not None:
            param = next((c for c in params.named_children if c.type == "parameter"), None)
            receiver = base.one_line(base.text(param.child_by_field_name("type"), self.source)) if param else ""
        body = node.child_by_field_name("body")
        members = [body] if body is not None and body.type in _FUNCTIONS else (
            [c for c in body.named_children if c.type in _FUNCTIONS] if body is not None else []
        )
        for member in members:
            self._function(member, owner, package, receiver)

    def _value(self, node: Node, owner: _Draft | None, package: str) -> None:
        if owner is not None and owner.type in ("method", "function"):
            return
        pattern = node.child_by_field_name("pattern") or node.child_by_field_name("name")
        if pattern is None or pattern.type != "identifier":
            return  # tuple and other pattern definitions bind several names: left to the template
        draft = self._new(node, base.text(pattern, self.source), "value", owner, package,
                          node.child_by_field_name("value"))
        draft.metadata["mutable"] = node.type.startswith("var")
        if node.type.endswith("declaration"):
            draft.metadata["abstract"] = True

    def _simple(self, node: Node, owner: _Draft | None, package: str, unit_type: str, body: Node | None) -> _Draft:
        name = base.text(node.child_by_field_name("name"), self.source)
        draft = self._new(node, name, unit_type, owner, package, body)
        if unit_type == "type_alias":
            self.declared.setdefault(name, []).append(draft.identifier)
        return draft

    def _import(self, node: Node, owner: _Draft | None) -> None:
        path: list[str] = []
        deps: list[Dependency] = []

        def finish(target: str) -> None:
            deps.append(Dependency(target, "import", lookup=(target,)))

        for child in node.children:
            kind = child.type
            if kind == "identifier":
                path.append(base.text(child, self.source))
                continue
            if kind == "as_renamed_identifier":
                name = base.text(child.child_by_field_name("name"), self.source)
                alias = base.text(child.child_by_field_name("alias"), self.source)
                full = ".".join((*path, name))
                if alias != "_":
                    self.imports.names[alias] = full
                finish(full)
                path = []
            elif kind == "namespace_wildcard":
                self.imports.wildcards.append(".".join(path))
                finish(".".join(path))
                path = []
            elif kind == "namespace_selectors":
                prefix = ".".join(path)
                for selector in child.named_children:
                    if selector.type == "identifier":
                        name = base.text(selector, self.source)
                        self.imports.names[name] = f"{prefix}.{name}"
                        finish(f"{prefix}.{name}")
                    elif selector.type in ("arrow_renamed_identifier", "as_renamed_identifier"):
                        name = base.text(selector.child_by_field_name("name"), self.source)
                        alias = base.text(selector.child_by_field_name("alias"), self.source)
                        if alias != "_":
                            self.imports.names[alias] = f"{prefix}.{name}"
                        finish(f"{prefix}.{name}")
                    elif selector.type == "namespace_wildcard":
                        self.imports.wildcards.append(prefix)
                        finish(prefix)
                path = []
            elif kind == "," and path:
                full = ".".join(path)
                self.imports.names[path[-1]] = full
                finish(full)
                path = []
        if path:
            full = ".".join(path)
            self.imports.names[path[-1]] = full
            finish(full)
        if owner is None:
            self.file_imports.extend(deps)
        else:
            owner.deps.extend(deps)

    # -- references ------------------------------------------------------------------------

    def _references(self, found: dict[str, list[Node]]) -> None:
        spans = scopes.Spans([((d.first or d.node).start_byte, d.node.end_byte) for d in self.drafts])
        for name in ("call", "selector", "object", "type"):
            nodes = found.get(name, [])
            for node, index in zip(nodes, spans.owners([n.start_byte for n in nodes]), strict=True):
                if index is None:
                    continue
                draft = self.drafts[index]
                if name == "selector":
                    receiver = base.text(node.child_by_field_name("value"), self.source)
                    self._member_call(receiver, base.text(node.child_by_field_name("field"), self.source), draft)
                elif name == "call":
                    self._call(base.text(node, self.source), draft)
                elif name == "object":
                    written = base.text(node, self.source)
                    dep = self._type_dependency(written, draft, draft.package, "code_reference") if (
                        written[:1].isupper()) else None
                    if dep is not None:
                        draft.deps.append(dep)
                elif node.start_byte not in self.not_references:
                    dep = self._type_dependency(base.text(node, self.source), draft, draft.package, "code_reference")
                    if dep is not None:
                        draft.deps.append(dep)

    def _enclosing(self, draft: _Draft | None) -> list[_Draft]:
        chain: list[_Draft] = []
        while draft is not None:
            if draft.type in ("class", "trait", "object", "enum", "package_object", "given"):
                chain.append(draft)
            draft = draft.outer
        return chain

    def _call(self, name: str, draft: _Draft) -> None:
        if name[:1].isupper():  # `Invoice(…)`: a companion apply or case-class constructor
            dep = self._type_dependency(name, draft, draft.package, "code_reference")
            if dep is not None:
                draft.deps.append(dep)
            return
        candidates = [f"{t.identifier}.{name}" for t in self._enclosing(draft) if name in t.members]
        if name in self.imports.names:
            candidates.append(self.imports.names[name])
        candidates.append(f"{draft.package}.{name}" if draft.package else name)
        if name in _STANDARD and len(candidates) == 1:
            return
        candidates = list(dict.fromkeys(candidates))
        draft.deps.append(Dependency(candidates[0], "calls", lookup=tuple(candidates)))

    def _member_call(self, receiver: str, member: str, draft: _Draft) -> None:
        if receiver in ("this", "self"):
            enclosing = self._enclosing(draft)
            if enclosing:
                target = f"{enclosing[0].identifier}.{member}"
                draft.deps.append(Dependency(target, "calls", lookup=(target,)))
            return
        if not receiver[:1].isupper() and receiver not in self.imports.names:
            return  # a local value: its type is unknown without type inference
        owner = self._type_dependency(receiver, draft, draft.package, "code_reference")
        if owner is None:
            return
        lookup = tuple(f"{c}.{member}" for c in owner.lookup)
        draft.deps.append(Dependency(f"{owner.target}.{member}", "calls", lookup=lookup))

    def _type_candidates(self, dotted: str, scope: _Draft | None, package: str) -> list[str]:
        head, _, rest = dotted.partition(".")
        tail = f".{rest}" if rest else ""
        out: list[str] = []
        for template in self._enclosing(scope):
            nested = f"{template.identifier}.{dotted}"
            if nested in self.declared_ids:
                out.append(nested)
        out.extend(f"{i}{tail}" for i in self.declared.get(head, ()))
        if head in self.imports.names:
            out.append(self.imports.names[head] + tail)
        out.append(f"{package}.{dotted}" if package else dotted)
        out.extend(f"{w}.{dotted}" for w in self.imports.wildcards if w)
        if rest and head[:1].islower():
            out.append(dotted)  # already qualified (`scala.collection.mutable.Map`)
        return list(dict.fromkeys(out))

    def _type_dependency(self, dotted: str, scope: _Draft | None, package: str, via: str) -> Dependency | None:
        head = dotted.partition(".")[0]
        if not head or (len(head) == 1 and head.isupper()):
            return None  # a type parameter by convention (`T`, `A`)
        if head in _STANDARD and head not in self.declared and head not in self.imports.names:
            return None
        candidates = self._type_candidates(dotted, scope, package)
        preferred = candidates[0] if head in self.declared or head in self.imports.names else (
            f"{package}.{dotted}" if package else dotted
        )
        return Dependency(preferred, via, lookup=tuple(candidates))


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Scala file: definitions outermost first, in source order."""
    return _Extractor(file_path, source, layout).run()
