"""Haskell extraction: modules, functions, data types, newtypes, synonyms, type classes, instances.

Identifiers are `Module.name` in Haskell's own qualification: the module comes from the
`module X.Y where` header; a file without a header is named from its path (the trailing
capitalised segments: `app/Main.hs` → `Main`, `tests/Properties.hs` → `Properties`), since every
headerless file would otherwise be `Main`. Functions, operators (`XMonad.ManageHook.<+>`), data
types, newtypes, type synonyms, type families and type classes sit directly under the module; so do
class methods (`XMonad.Core.runLayout`, parent the class), because Haskell exports them as module
names. An instance has no name of its own: it is `Module.Class(Type)` — the class and its type
arguments as written (outer parentheses dropped, several joined by ", "), e.g.
`XMonad.Core.LayoutClass(Full)`, `XMonad.Core.Show(Tree a)` — and its methods are
`Module.Class(Type).method`.

Units: "module" (the whole file), "function" (a top-level binding: its type signature and all its
equations form one unit when they are adjacent; pragmas and comments between them do not split
it), "data", "newtype" (`metadata["constructors"]`, and `metadata["fields"]` for record syntax),
"type_alias", "type_family", "class" (its method signatures and defaults are "method" units),
"instance" (its method equations are "method" units). Repeats of (identifier, type) get `#2` ….
Docstrings are the Haddock (`-- |`, `{- | -}`) or plain comment block right above a declaration
(above the type signature for functions); a module's is the block above its header.

Dependencies: the module unit imports every imported module (`via: "import"`); an instance
implements its class (`implements`); functions and methods call (`calls`) this module's top-level
functions, explicitly imported names, qualified names (`M.lookup` through `import qualified
Data.Map as M`) and — for a name in function position — the same name in each open import, in
that order; type names in signatures and bodies are `code_reference`s with the same candidates.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from tree_sitter import Node, QueryCursor

from woods.extract import base, scopes
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "haskell"
_COMMENTS = frozenset({"comment", "haddock", "pragma"})
_TYPES = {
    "data_type": "data",
    "newtype": "newtype",
    "type_synonym": "type_alias",
    "type_family": "type_family",
    "data_family": "type_family",
}
_EQUATIONS = frozenset({"function", "bind"})
# Prelude names: references to them never name project code (a candidate per open import for each
# would only be dropped by the linker).
_PRELUDE = frozenset(
    {
        "map", "filter", "foldr", "foldl", "foldl'", "mapM", "mapM_", "forM", "forM_", "return", "pure", "fmap",
        "show", "print", "putStrLn", "error", "undefined", "id", "const", "flip", "not", "fst", "snd", "maybe",
        "either", "concat", "concatMap", "length", "null", "head", "tail", "zip", "zipWith", "elem", "lookup",
        "when", "unless", "sequence", "sequence_", "otherwise", "fromIntegral", "toEnum", "fromEnum", "seq",
        "Int", "Integer", "Bool", "Char", "String", "Double", "Float", "IO", "Maybe", "Either", "Just", "Nothing",
        "Left", "Right", "True", "False", "Show", "Eq", "Ord", "Functor", "Monad", "Applicative", "Monoid",
        "Semigroup", "Read", "Enum", "Bounded", "Num", "Integral", "Foldable", "Traversable",
    }
)
_ORDERED = ("var", "operator", "qualified", "type", "comment")  # the capture names read in order
_START = operator.attrgetter("start_byte")
_MISSING = Dependency("", "")  # a cache miss (None is a cached "no edge")
# One query for every reference and comment. `decl` marks names that are no reference (a
# definition's own name, parameters, the parts of a qualified name); `call` marks the variables in
# function position.
_REFERENCES = """
(function name: (variable) @decl)
(bind name: (variable) @decl)
(signature name: (variable) @decl)
(patterns (variable) @decl)
(binding_list (variable) @decl)
(instance name: (name) @decl)
(qualified id: (_) @decl)
(apply function: (variable) @call)
(variable) @var
(qualified) @qualified
(operator) @operator
(name) @type
(comment) @comment
(haddock) @comment
"""


# A data declaration's constructor names and record fields (`_type`), read in C, not by a walk.
_CONSTRUCTOR_PARTS = """
(constructor) @constructor
(field_name) @field
"""


def module_from_path(file_path: str) -> str:
    """`src/XMonad/Core.hs` → `XMonad.Core`: the trailing path segments that start upper-case."""
    parts = [p for p in file_path.split("/") if p]
    if parts:
        parts[-1] = parts[-1].rsplit(".", 1)[0]
    kept: list[str] = []
    for part in reversed(parts):
        if not part[:1].isupper():
            break
        kept.append(part)
    return ".".join(reversed(kept)) or (parts[-1] if parts else "Main")


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Haskell unit under construction; `scope` is the module or instance its names live in."""

    outer: _Draft | None = None
    added: set[int] = field(default_factory=set)  # ids of the shared Dependency objects in deps


@dataclass(slots=True)
class _Imports:
    """What each imported name may mean: qualified aliases, explicit names, open modules."""

    aliases: dict[str, list[str]] = field(default_factory=dict)  # `M` → [Data.Map, …]
    names: dict[str, list[str]] = field(default_factory=dict)  # `lookup` → [Data.Map, …]
    open: list[str] = field(default_factory=list)  # modules imported without a list or `qualified`


class _Extractor(base.FileExtractor[_Draft]):
    """Declaration skeleton in one pass over the module's declarations; references by query."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.module = module_from_path(file_path)
        self.imports = _Imports()
        self.functions: set[str] = set()  # top-level value names of this module (incl. class methods)
        self.types: set[str] = set()  # type and class names of this module
        self.comments = scopes.Comments([], source)

    def run(self) -> FileExtraction:
        tree = base.parse("haskell", self.source)
        root = tree.root_node
        # `scopes.captures_by_name`, except that `decl` and `call` only ever become sets: unsorted.
        found = QueryCursor(scopes.compiled("haskell", _REFERENCES)).captures(root)
        for name in _ORDERED:
            if name in found:
                found[name].sort(key=_START)
        self.comments = scopes.Comments(found.get("comment", []), self.source)
        header = next((c for c in root.children if c.type == "header"), None)
        if header is not None and header.child_by_field_name("module") is not None:
            self.module = self._module_name(header.child_by_field_name("module"))
        module = _Draft(self.module, "module", root, whole_file=True, namespace=self.module.rpartition(".")[0] or None)
        if header is not None:
            module.docstring = self._module_docs(header)
        self.drafts.append(module)
        for child in root.children:
            if child.type == "imports":
                for item in child.named_children:
                    if item.type == "import":
                        self._import(item, module)
        declarations = next((c for c in root.children if c.type == "declarations"), None)
        if declarations is not None:
            self._declarations(declarations.named_children, module, self.module)
        self._references(found)
        # A blank file has nothing to retrieve: no unit with empty source for it.
        kept = self.drafts if self.source.strip() else []
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in kept)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    def _module_name(self, node: Node | None) -> str:
        """`Data.Map` (a qualified name's module part is written with its trailing dot); "" without a node."""
        return "".join(base.text(node, self.source).split()).rstrip(".")

    def _docs(self, node: Node) -> str | None:
        block = self.comments.above(node.start_point[0])
        if not block:
            return None
        first = base.text(block[0], self.source)
        if first.lstrip("-{ ").startswith("^"):
            return None  # `-- ^` documents the declaration before, not this one
        return _clean(block, self.source)

    def _module_docs(self, header: Node) -> str | None:
        """The first Haddock block above the header (blank lines and pragmas may separate them);
        a decorated comment (`-----` rules around `-- |`) counts from its `|` line."""
        above = sorted((c for c in self.comments.by_end_row.values() if c.end_byte <= header.start_byte),
                       key=lambda c: c.start_byte)
        for index, comment in enumerate(above):
            raw = base.text(comment, self.source)
            lines = raw.splitlines()
            start = next((i for i, line in enumerate(lines)
                          if line.strip().lstrip("-").lstrip().startswith("|") or line.lstrip().startswith("{-|")), None)
            if start is None:
                continue
            block = [comment]
            for following in above[index + 1 :]:
                if following.start_point[0] != block[-1].end_point[0] + 1:
                    break
                block.append(following)
            text = "\n".join([*lines[start:], *(base.text(c, self.source) for c in block[1:])])
            return _clean_text(text)
        return self._docs(header)

    # -- declarations ----------------------------------------------------------------------

    def _new(self, first: Node, last: Node, name: str, unit_type: str, owner: _Draft, prefix: str) -> _Draft:
        identifier = self.unique(f"{prefix}.{name}", unit_type)
        end = scopes.last_token(last, _COMMENTS)
        parent = owner.identifier if owner.type != "module" else self.module
        draft = _Draft(identifier, unit_type, end, parent=parent, namespace=prefix, first=first, outer=owner)
        draft.docstring = self._docs(first)
        self.drafts.append(draft)
        return draft

    def _declarations(self, nodes: list[Node], owner: _Draft, prefix: str) -> None:
        """Top-level, class or instance declarations: a signature and the adjacent equations of
        its name form one unit; pragmas, fixity declarations and comments between them do not
        split it."""
        signatures: dict[str, Node] = {}
        for node in nodes:
            if node.type == "signature":
                for signed in self._signature_names(node):
                    signatures.setdefault(signed, node)
        pending: Node | None = None  # a signature waiting for its equations
        group: tuple[str, Node, Node] | None = None  # (name, first node, last node)
        for node in nodes:
            kind = node.type
            if kind in _COMMENTS or kind == "fixity":
                continue
            if kind in _EQUATIONS:
                name = self._equation_name(node)
                if name is None:
                    continue
                if group is not None and group[0] == name:
                    group = (name, group[1], node)
                    continue
                self._flush(group, signatures, owner, prefix)
                first = node
                if pending is not None and name in self._signature_names(pending):
                    first = pending
                    self._signature_only(pending, owner, skip=name)
                else:
                    self._signature_only(pending, owner, skip=None)
                group, pending = (name, first, node), None
                continue
            self._flush(group, signatures, owner, prefix)
            self._signature_only(pending, owner, skip=None)
            group, pending = None, None
            if kind == "signature":
                pending = node
            elif owner.type == "module":
                self._declaration(node, owner)
        self._flush(group, signatures, owner, prefix)
        self._signature_only(pending, owner, skip=None)

    def _flush(self, group: tuple[str, Node, Node] | None, signatures: dict[str, Node], owner: _Draft,
               prefix: str) -> None:
        """The unit of one name's equations (with its signature when that came right before)."""
        if group is None:
            return
        name, first, last = group
        if owner.type == "class" and first.type != "signature":
            return  # a default away from its signature: its references belong to the class
        draft = self._new(first, last, name, "function" if owner.type == "module" else "method", owner, prefix)
        signature = signatures.get(name)
        if signature is not None:
            draft.signature = self._signature_text(signature, name)
        else:
            draft.signature = self._head_text(first, (b"=", b"|"))
        if owner.type == "class":
            draft.metadata["class"] = owner.identifier
        if owner.type in ("module", "class"):
            self.functions.add(name)

    def _signature_only(self, node: Node | None, owner: _Draft, skip: str | None) -> None:
        """Class methods declared by a signature without an adjacent default: one unit per name."""
        if node is None or owner.type != "class":
            return
        for name in self._signature_names(node):
            if name == skip:
                continue
            draft = self._new(node, node, name, "method", owner, self.module)
            draft.signature = self._signature_text(node, name)
            draft.metadata["class"] = owner.identifier
            self.functions.add(name)

    def _signature_names(self, node: Node) -> list[str]:
        names = node.child_by_field_name("names")
        if names is not None:
            return [base.text(c, self.source).strip("()") for c in names.named_children]
        single = node.child_by_field_name("name")
        return [base.text(single, self.source).strip("()")] if single is not None else []

    def _signature_text(self, node: Node, name: str) -> str:
        if node.child_by_field_name("names") is None:
            return base.one_line(base.text(node, self.source))
        type_node = node.child_by_field_name("type")
        return base.one_line(f"{name} :: {base.text(type_node, self.source)}")

    def _equation_name(self, node: Node) -> str | None:
        name = node.child_by_field_name("name")
        if name is not None:
            return base.text(name, self.source).strip("()")
        infix = next((c for c in node.children if c.type == "infix"), None)
        operator = infix.child_by_field_name("operator") if infix is not None else None
        if operator is None:
            return None
        return base.text(operator, self.source).strip("`")

    def _declaration(self, node: Node, module: _Draft) -> None:
        kind = node.type
        if kind in _TYPES:
            self._type(node, module)
        elif kind == "class":
            name = base.text(node.child_by_field_name("name"), self.source)
            draft = self._new(node, node, name, "class", module, self.module)
            draft.signature = self._header(node)
            self.types.add(name)
            body = node.child_by_field_name("declarations")
            if body is not None:
                self._declarations(body.named_children, draft, self.module)
                self._defaults(body.named_children)
        elif kind == "instance":
            self._instance(node, module)
        elif kind == "foreign_import":
            signature = node.child_by_field_name("signature")
            names = self._signature_names(signature) if signature is not None else []
            if names:
                draft = self._new(node, node, names[0], "function", module, self.module)
                draft.signature = base.one_line(base.text(node, self.source))
                draft.metadata["foreign"] = True
                self.functions.add(names[0])

    def _defaults(self, nodes: list[Node]) -> None:
        """Class method names bound only by defaults still count as this module's functions."""
        for node in nodes:
            if node.type in _EQUATIONS:
                name = self._equation_name(node)
                if name is not None:
                    self.functions.add(name)

    def _header(self, node: Node) -> str:
        return self._head_text(node, (b" where",))

    def _head_text(self, node: Node, stops: tuple[bytes, ...]) -> str:
        """The node's text up to the first of `stops` (`=`, ` where` …), on one line; only that
        prefix is decoded, never a whole large declaration."""
        end = node.end_byte
        for stop in stops:
            found = self.source.find(stop, node.start_byte, end)
            if found != -1:
                end = found
        return base.one_line(self.source[node.start_byte : end].decode("utf-8", "replace")).rstrip()

    def _type(self, node: Node, module: _Draft) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = base.text(name_node, self.source)
        draft = self._new(node, node, name, _TYPES[node.type], module, self.module)
        self.types.add(name)
        draft.signature = self._head_text(node, (b"=", b" where"))
        constructors: list[str] = []
        fields: list[str] = []
        holder = node.child_by_field_name("constructors") or node.child_by_field_name("constructor")
        if holder is not None:  # neither kind nests in itself: by start byte is the walk's order
            parts = scopes.captures_by_name("haskell", _CONSTRUCTOR_PARTS, holder)
            for child in parts.get("constructor", ()):
                if child.parent is not None and child.parent.child_by_field_name("name") == child:
                    constructors.append(base.text(child, self.source))
            fields = [base.text(child, self.source) for child in parts.get("field", ())]
        if constructors:
            draft.metadata["constructors"] = constructors
        if fields:
            draft.metadata["fields"] = fields
        deriving = [base.one_line(base.text(c, self.source)) for c in node.children if c.type == "deriving"]
        if deriving:
            draft.metadata["deriving"] = deriving

    def _instance(self, node: Node, module: _Draft) -> None:
        class_node = node.child_by_field_name("name")
        if class_node is None:
            return
        class_name = base.text(class_node, self.source)
        patterns = node.child_by_field_name("patterns")
        arguments = [_strip_parens(base.one_line(base.text(c, self.source))) for c in patterns.named_children] if patterns else []
        name = f"{class_name}({', '.join(arguments)})"
        draft = self._new(node, node, name, "instance", module, self.module)
        draft.signature = self._header(node)
        draft.metadata = {"class": class_name, "types": arguments}
        candidates = self._candidates(class_name, types=True)
        if candidates:
            draft.deps.append(Dependency(candidates[0], "implements", lookup=tuple(candidates)))
        body = node.child_by_field_name("declarations")
        if body is not None:
            self._declarations(body.named_children, draft, draft.identifier)

    def _import(self, node: Node, module: _Draft) -> None:
        target = self._module_name(node.child_by_field_name("module"))
        if not target:
            return
        module.deps.append(Dependency(target, "import", lookup=(target,)))
        qualified = any(c.type == "qualified" for c in node.children)
        alias = node.child_by_field_name("alias")
        names = node.child_by_field_name("names")
        hiding = any(c.type == "hiding" for c in node.children)
        self.imports.aliases.setdefault(self._module_name(alias) if alias is not None else target, []).append(target)
        if qualified:
            return
        if names is None or hiding:
            self.imports.open.append(target)
            return
        for item in names.named_children:
            if item.type == "import_name":
                written = base.text(item.named_child(0), self.source).strip("()") if item.named_child_count else ""
                if written:
                    self.imports.names.setdefault(written, []).append(target)

    # -- references ------------------------------------------------------------------------

    def _references(self, found: dict[str, list[Node]]) -> None:
        """Each reference's edge from its text (cached per distinct text), then, only for those
        that make one, the innermost draft holding it: most names (locals, parameters) make none."""
        spans = scopes.Spans([((d.first or d.node).start_byte, d.node.end_byte) for d in self.drafts])
        declared = {n.start_byte for n in found.get("decl", ())}
        applied = {n.start_byte for n in found.get("call", ())}
        source = self.source
        drafts = self.drafts
        for kind in ("var", "operator", "qualified", "type"):
            # One Dependency per distinct written reference of this kind, in and out of function
            # position (a module mentions the same names often).
            cache: tuple[dict[bytes, Dependency | None], dict[bytes, Dependency | None]] = ({}, {})
            positions: list[int] = []
            deps: list[Dependency] = []
            for node in found.get(kind, ()):
                start = node.start_byte
                if start in declared:
                    continue
                called = start in applied
                written = source[start : node.end_byte]
                dep = cache[called].get(written, _MISSING)
                if dep is _MISSING:
                    dep = cache[called][written] = self._reference(kind, node, called)
                if dep is not None:
                    positions.append(start)
                    deps.append(dep)
            for dep, index in zip(deps, spans.owners(positions), strict=True):
                if index is None:
                    continue
                draft = drafts[index]
                if draft.type == "module":
                    continue  # imports and exports are not references of the module's code
                if id(dep) not in draft.added:
                    draft.added.add(id(dep))
                    draft.deps.append(dep)

    def _reference(self, kind: str, node: Node, applied: bool) -> Dependency | None:
        """The edge one written reference makes (see the module docstring), or None."""
        if kind == "qualified":
            return self._qualified(node)
        written = base.text(node, self.source)
        if kind == "type":
            if written in _PRELUDE and written not in self.types:
                return None
            return self._dependency(written, "code_reference", types=True)
        written = written.strip("`()")
        if written in self.functions or written in self.imports.names or (
            kind == "var" and applied and written not in _PRELUDE and len(written) > 1
        ):
            return self._dependency(written, "calls", types=False)
        return None

    def _qualified(self, node: Node) -> Dependency | None:
        module_node = node.child_by_field_name("module")
        ident = node.child_by_field_name("id")
        if module_node is None or ident is None:
            return None
        alias = self._module_name(module_node)
        member = base.text(ident, self.source).strip("()")
        modules = self.imports.aliases.get(alias, [alias])
        candidates = tuple(dict.fromkeys(f"{m}.{member}" for m in modules))
        via = "code_reference" if member[:1].isupper() else "calls"
        return Dependency(candidates[0], via, lookup=candidates)

    def _candidates(self, name: str, types: bool) -> list[str]:
        if "." in name:  # a qualified class or type name in an instance head
            alias, _, member = name.rpartition(".")
            return [f"{m}.{member}" for m in self.imports.aliases.get(alias, [alias])]
        local = self.types if types else self.functions
        out = [f"{self.module}.{name}"] if name in local else []
        out += [f"{m}.{name}" for m in self.imports.names.get(name, ())]
        if name not in local and name not in _PRELUDE:
            out += [f"{m}.{name}" for m in self.imports.open]
        return list(dict.fromkeys(out))

    def _dependency(self, name: str, via: str, types: bool) -> Dependency | None:
        candidates = self._candidates(name, types)
        return Dependency(candidates[0], via, lookup=tuple(candidates)) if candidates else None


def _strip_parens(text: str) -> str:
    return text[1:-1].strip() if text.startswith("(") and text.endswith(")") else text


def _clean(block: list[Node], source: bytes) -> str | None:
    """Haddock/comment prose of a comment block (see `_clean_text`)."""
    return _clean_text("\n".join(base.text(node, source) for node in block))


def _clean_text(text: str) -> str | None:
    """Haddock/comment prose: `--`, `-- |`, `{- | … -}` markers removed, lines dedented together."""
    lines: list[str] = []
    chunks: list[str] = []
    open_block = False
    for line in text.splitlines():  # a block comment is one chunk, a line comment one line
        if open_block:
            chunks[-1] += "\n" + line
            open_block = not line.rstrip().endswith("-}")
        else:
            chunks.append(line.lstrip())
            open_block = chunks[-1].startswith("{-") and not line.rstrip().endswith("-}")
    for raw in chunks:
        if raw.startswith("{-"):
            raw = raw[2:-2] if raw.endswith("-}") else raw[2:]
            body = raw.lstrip()
            first, *rest = (body[1:] if body[:1] in ("|", "^", "$") else body).splitlines() or [""]
            indent = min((len(r) - len(r.lstrip()) for r in rest if r.strip()), default=0)
            lines.extend([first.strip(), *(r[indent:] for r in rest)])
            continue
        for line in raw.splitlines():
            stripped = line.strip().lstrip("-")
            if not lines and stripped.lstrip()[:1] in ("|", "^", "$"):
                stripped = stripped.lstrip()[1:]
            lines.append(stripped)
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    cleaned = [line[indent:].rstrip() for line in lines]
    while cleaned and not cleaned[0].strip():
        cleaned.pop(0)
    while cleaned and not cleaned[-1].strip():
        cleaned.pop()
    return "\n".join(cleaned) or None


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Haskell file: the module first, then declarations in source order."""
    return _Extractor(file_path, source, layout).run()
