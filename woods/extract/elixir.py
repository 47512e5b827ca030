"""Elixir extraction: modules, protocols, implementations, functions, macros, structs, callbacks, types.

Identifiers are Elixir's own: modules by their full alias (`defmodule Plug.Conn`, a nested
`defmodule Adapter` inside it is `Plug.Conn.Adapter`, `__MODULE__.X` is expanded), functions and
macros as `Module.name/arity` (`Plug.Conn.send_resp/3`), an implementation as Elixir names its
module, `Protocol.Type` (`defimpl String.Chars, for: Money` → `String.Chars.Money`), a struct as
`Module.__struct__` (the function `defstruct` defines), callbacks and types as `Module.name/arity`.

One unit per function: every clause of one name and arity that follows the previous clause
directly (only `@doc`, `@spec`, `@impl` … and comments between them) joins that unit, which
spans from the first clause's attributes to the last clause. A clause of the same name and arity
that comes back after other definitions is a new unit (`#2`), as Elixir itself warns about it.
With default arguments (`def f(a, b \\\\ 1)`) the arity is the full one (`f/2`);
`metadata["arities"]` lists every arity the head defines.

Unit types: "script" (a file without any module: `config/config.exs`; identified by its path),
"module", "protocol", "impl", "function" (`def`/`defp`; `metadata["private"]`,
`defdelegate` too with `metadata["delegate"]`), "macro" (`defmacro`/`defmacrop`/`defguard`/
`defguardp`), "struct" (`defstruct`/`defexception`; `metadata["fields"]`), "callback"
(`@callback`/`@macrocallback`), "type" (`@type`/`@typep`/`@opaque`). Docstrings are `@moduledoc`
and `@doc` strings (heredocs and `~S` sigils dedented; `false` means none), else the `#` comment
block above the definition.

Dependencies: `alias`, `import` and `require` are `import` edges, `use` is `include`, and
`@behaviour` and `defimpl … for:` are `implements` (of the behaviour, of the protocol). Calls
(`calls`): a local `f(x)` is `Current.f/1` (or an imported module's `f/1`), `Alias.f(x)` goes
through the file's aliases (`alias A.B`, `alias A.B, as: C`, `alias A.{B, C}`, nested modules),
a pipe adds the piped argument (`x |> f(y)` is `f/2`), captures `&f/1` and `&A.f/1` count, and
candidates with one or two more arguments follow (default arguments). Struct literals and other
module names used in code are `code_reference`s. Erlang modules, variables' functions and
Kernel macros are never edges.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from tree_sitter import Node

from woods.extract import base, scopes
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "elixir"

_MODULES = {"defmodule": "module", "defprotocol": "protocol", "defimpl": "impl"}
_FUNCTIONS = {
    "def": "function",
    "defp": "function",
    "defdelegate": "function",
    "defmacro": "macro",
    "defmacrop": "macro",
    "defguard": "macro",
    "defguardp": "macro",
}
_PRIVATE = frozenset({"defp", "defmacrop", "defguardp"})
_STRUCTS = frozenset({"defstruct", "defexception"})
_DIRECTIVES = {"alias": "import", "import": "import", "require": "import", "use": "include"}
# Module attributes that belong to the definition right below them (part of its span).
_LEADING_ATTRIBUTES = frozenset({"doc", "spec", "impl", "deprecated", "since", "dialyzer", "decorate"})
_TYPE_ATTRIBUTES = frozenset({"type", "typep", "opaque"})
_CALLBACK_ATTRIBUTES = frozenset({"callback", "macrocallback"})
# Special forms and Kernel macros/functions: never project code, never an edge.
_KERNEL = frozenset(
    {
        "def", "defp", "defmacro", "defmacrop", "defmodule", "defprotocol", "defimpl", "defstruct",
        "defexception", "defdelegate", "defguard", "defguardp", "defoverridable", "alias", "import", "require",
        "use", "if", "unless", "case", "cond", "with", "for", "fn", "quote", "unquote", "unquote_splicing",
        "receive", "try", "raise", "reraise", "throw", "send", "spawn", "spawn_link", "super", "is_nil",
        "is_atom", "is_binary", "is_list", "is_map", "is_integer", "is_function", "is_tuple", "is_boolean",
        "is_number", "is_float", "is_pid", "is_struct", "is_map_key", "is_exception", "elem", "put_elem",
        "length", "map_size", "tuple_size", "byte_size", "hd", "tl", "not", "and", "or", "in", "inspect",
        "to_string", "apply", "match?", "binding", "self", "node", "make_ref", "struct", "struct!",
        "get_in", "put_in", "update_in", "pop_in", "then", "tap", "dbg", "sigil_r", "sigil_s", "abs", "div",
        "rem", "round", "trunc", "max", "min", "exit", "function_exported?", "__MODULE__", "__ENV__",
        "__CALLER__", "__DIR__", "__STACKTRACE__", "var!", "alias!", "to_charlist", "is_reference",
    }
)
_KERNEL_BYTES = frozenset(name.encode() for name in _KERNEL)  # as written in the source
# Arguments a call may omit when the definition has defaults: extra arity candidates to try.
_DEFAULT_ARITY_SLACK = 2

_REFERENCES = """
(call target: (identifier) @local_name (arguments))
(call target: (dot left: (alias) @remote_module right: (identifier) @remote_name) (arguments) @remote_args)
(unary_operator operator: "&" operand: (binary_operator operator: "/")) @capture
(struct (alias) @struct)
(binary_operator operator: "|>" right: (call) @piped)
(unary_operator operator: "@" operand: (call) @attribute)
(comment) @comment
"""


@dataclass(slots=True)
class _Draft(base.Draft):
    """An Elixir unit under construction. Modules carry their alias and import tables; a
    function knows its name and arities (for merging clauses and resolving local calls)."""

    module: str = ""
    name: str = ""
    arities: tuple[int, ...] = ()
    aliases: dict[str, str] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)
    outer: _Draft | None = None
    node_start: int = 0  # where the definition itself starts, after its @doc/@spec attributes
    added: set[int] = field(default_factory=set)  # ids of the shared Dependency objects already in deps

    def add(self, dep: Dependency) -> None:
        """Append a shared (cached) dependency once: a function calls the same thing many times."""
        if id(dep) not in self.added:
            self.added.add(id(dep))
            self.deps.append(dep)


def _call_name(node: Node, source: bytes) -> str | None:
    """The identifier a `call` node invokes (`def`, `alias` …), or None (its target comes first)."""
    target = node.child(0)
    return base.text(target, source) if target is not None and target.type == "identifier" else None


def _arguments_node(call: Node) -> Node | None:
    """The `arguments` child of a call (second named child when there is a target)."""
    count = call.named_child_count
    second = call.named_child(1) if count > 1 else None
    if second is not None and second.type == "arguments":
        return second
    first = call.named_child(0) if count else None
    return first if first is not None and first.type == "arguments" else None


def _call_arguments(target: Node) -> Node:
    """The `arguments` after a call's target: the node the query's `(call target: (identifier)
    (arguments))` matched (the next named sibling, unless a comment sits between them)."""
    following = target.next_named_sibling
    while following is not None and following.type != "arguments":
        following = following.next_named_sibling
    assert following is not None, "the query only matches calls with arguments"
    return following


def _arguments(node: Node) -> list[Node]:
    """The arguments of a call (a trailing keyword list is one argument)."""
    holder = _arguments_node(node)
    return [c for c in holder.named_children if c.type != "comment"] if holder is not None else []


def _attribute(node: Node, source: bytes) -> tuple[str, Node] | None:
    """(name, call) of a module attribute `@name …`, or None."""
    if node.type != "unary_operator":
        return None
    operator = node.child(0)
    if operator is None or operator.type != "@":
        return None
    operand = node.child_by_field_name("operand")
    if operand is None:
        return None
    if operand.type == "call":
        name = _call_name(operand, source)
        return (name, operand) if name is not None else None
    if operand.type == "identifier":
        return base.text(operand, source), operand
    return None


def _string(node: Node | None, source: bytes) -> str | None:
    """The text of a string, heredoc or sigil literal, dedented; None for anything else."""
    if node is None or node.type not in ("string", "sigil", "charlist"):
        return None
    parts = [base.text(c, source) for c in node.children if c.type in ("quoted_content", "escape_sequence", "interpolation")]
    return _dedent("".join(parts)) or None


def _owned(spans: list[tuple[int, int, int]], nodes: list[Node]) -> list[tuple[int, int]]:
    """(position in `nodes`, owner) of each node that starts inside a span, in the order of
    `nodes` (sorted by start byte); the owner is the span's index (its third item) of the
    innermost span [start, end) holding the node's start. `spans` nest or are disjoint and come
    outermost first (by start, the longer first, then by index), so a later span holding a node
    is inside the earlier one and replaces it."""
    if not nodes:
        return []
    starts = [n.start_byte for n in nodes]
    owners: dict[int, int] = {}
    for start, end, index in spans:
        for position in range(bisect.bisect_left(starts, start), bisect.bisect_left(starts, end)):
            owners[position] = index
    return sorted(owners.items())


def _dedent(text: str) -> str:
    """The text with the indentation its non-blank lines share removed, blank edges stripped."""
    lines = text.strip("\n").splitlines()
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:].rstrip() for line in lines).strip()


class _Extractor(base.FileExtractor[_Draft]):
    """Definitions in one iterative walk over module bodies; calls by query, per innermost unit."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.comments = scopes.Comments([], source)
        self.functions: dict[str, dict[str, list[_Draft]]] = {}  # module → name → function drafts
        # One Dependency per distinct call (a module calls the same function many times).
        self.local_deps: dict[tuple[str, str, int], Dependency] = {}
        self.remote_deps: dict[tuple[str, str, int], Dependency] = {}

    def run(self) -> FileExtraction:
        tree = base.parse("elixir", self.source)
        root = tree.root_node
        found = scopes.captures_by_name("elixir", _REFERENCES, root)
        self.comments = scopes.Comments(found.get("comment", []), self.source)
        self._body(root.named_children, None)
        self._references(found)
        if not self.drafts and self.source.strip():
            # A script without modules (`config/config.exs`, `test/test_helper.exs`) is one unit.
            self.drafts.append(_Draft(self.file_path, "script", root, whole_file=True))
        # Nested module bodies are walked after their parent's: units go out in source order.
        ordered = sorted(self.drafts, key=lambda d: ((d.first or d.node).start_byte, -d.node.end_byte, d.identifier))
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in ordered)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    # -- walking ---------------------------------------------------------------------------

    def _body(self, nodes: list[Node], module: _Draft | None) -> None:
        """The statements of a file or module body: definitions, directives and attributes.

        Iterative: a nested module's body is queued, never recursed into.
        """
        work: list[tuple[list[Node], _Draft | None]] = [(nodes, module)]
        while work:
            statements, owner = work.pop()
            pending: list[Node] = []  # @doc/@spec/… waiting for the definition below them
            previous: _Draft | None = None  # the last function unit, for joining clauses
            for node in statements:
                kind = node.type
                if kind == "comment":
                    continue
                attribute = _attribute(node, self.source) if kind == "unary_operator" else None
                if attribute is not None:
                    if owner is not None:
                        self._module_attribute(attribute, node, owner, pending)
                        if attribute[0] not in _LEADING_ATTRIBUTES:
                            previous = None
                    continue
                if kind != "call":
                    pending, previous = [], None
                    continue
                name = _call_name(node, self.source)
                if name in _MODULES:
                    draft = self._module(node, name, owner, pending)
                    if draft is not None:
                        block = next((c for c in node.children if c.type == "do_block"), None)
                        if block is not None:
                            work.append((block.named_children, draft))
                    previous = None
                elif name in _FUNCTIONS and owner is not None:
                    previous = self._function(node, name, owner, pending, previous)
                elif name in _STRUCTS and owner is not None:
                    self._struct(node, name, owner, pending)
                    previous = None
                elif name in _DIRECTIVES and owner is not None:
                    self._directive(node, name, owner)
                else:
                    previous = None
                    # `if Code.ensure_loaded?(X) do defmodule …` and similar wrappers.
                    for block in (c for c in node.children if c.type == "do_block"):
                        work.append((block.named_children, owner))
                pending = []

    def _first(self, node: Node, pending: list[Node]) -> Node:
        return pending[0] if pending else node

    def _docs(self, first: Node, pending: list[Node], key: str) -> str | None:
        for attribute_node in pending:
            found = _attribute(attribute_node, self.source)
            if found is not None and found[0] == key:
                arguments = _arguments(found[1])
                return _string(arguments[0], self.source) if arguments else None
        return base.clean_comment(self.comments.text_above(first.start_point[0]))

    def _module_attribute(self, attribute: tuple[str, Node], node: Node, owner: _Draft, pending: list[Node]) -> None:
        name, call = attribute
        arguments = _arguments(call)
        if name in _LEADING_ATTRIBUTES:
            pending.append(node)
        elif name == "moduledoc":
            owner.docstring = _string(arguments[0], self.source) if arguments else None
            pending.clear()
        elif name == "behaviour" and arguments:
            target = self._expand(base.text(arguments[0], self.source), owner)
            owner.deps.append(Dependency(target, "implements", lookup=(target,)))
            pending.clear()
        elif name in _TYPE_ATTRIBUTES | _CALLBACK_ATTRIBUTES and arguments:
            self._typespec(node, name, arguments[0], owner, pending)
            pending.clear()
        else:
            pending.clear()

    def _module(self, node: Node, keyword: str, owner: _Draft | None, pending: list[Node]) -> _Draft | None:
        arguments = _arguments(node)
        if not arguments:
            return None
        written = base.text(arguments[0], self.source)
        unit_type = _MODULES[keyword]
        metadata: dict[str, object] = {}
        deps: list[Dependency] = []
        if keyword == "defimpl":
            protocol = self._expand(written, owner) if arguments[0].type == "alias" else written
            targets = self._impl_targets(arguments[1:], owner)
            metadata = {"protocol": protocol, "for": targets}
            name = f"{protocol}.{targets[0]}" if targets else protocol
            deps.append(Dependency(protocol, "implements", lookup=(protocol,)))
        elif arguments[0].type == "alias":
            name = self._nested_name(written, owner)
        else:
            return None  # `defmodule unquote(name)`: a name only known when the macro runs
        first = self._first(node, pending)
        identifier = self.unique(name, unit_type)
        draft = _Draft(identifier, unit_type, node, parent=owner.identifier if owner is not None else None,
                       namespace=name.rpartition(".")[0] or None, first=first, module=name, outer=owner)
        draft.metadata = metadata
        draft.deps.extend(deps)
        draft.signature = base.one_line(base.text(node, self.source).split(" do", 1)[0])
        draft.docstring = base.clean_comment(self.comments.text_above(first.start_point[0]))
        if owner is not None:
            draft.aliases = dict(owner.aliases)
            draft.imports = list(owner.imports)
            if keyword == "defmodule" and "." not in written:
                owner.aliases[written] = name  # a nested module is aliased in its parent
        self.drafts.append(draft)
        return draft

    def _nested_name(self, written: str, owner: _Draft | None) -> str:
        if written.startswith("__MODULE__"):
            return (owner.module if owner is not None else "") + written[len("__MODULE__") :]
        return f"{owner.module}.{written}" if owner is not None and owner.module else written

    def _impl_targets(self, rest: list[Node], owner: _Draft | None) -> list[str]:
        for holder in rest:
            if holder.type != "keywords":
                continue
            for pair in holder.named_children:
                key = base.text(pair.child_by_field_name("key"), self.source).rstrip(": ").strip()
                value = pair.child_by_field_name("value")
                if key != "for" or value is None:
                    continue
                items = value.named_children if value.type == "list" else [value]
                return [self._expand(base.text(i, self.source), owner) for i in items if i.type == "alias"]
        return [owner.module] if owner is not None else []

    def _head(self, node: Node) -> tuple[str, Node | None] | None:
        """(name, parameter list node) of a `def` head: `f(a, b)`, `f(a) when …`, `f`, or None."""
        holder = _arguments_node(node)
        head = holder.named_child(0) if holder is not None and holder.named_child_count else None
        if head is None:
            return None
        if head.type == "binary_operator" and base.text(head.child_by_field_name("operator"), self.source) == "when":
            head = head.child_by_field_name("left") or head
        if head.type == "identifier":
            return base.text(head, self.source), None
        if head.type == "call":
            name = _call_name(head, self.source)
            if name is None:
                return None  # `def unquote(name)(…)`
            return name, _arguments_node(head)
        return None

    def _function(self, node: Node, keyword: str, owner: _Draft, pending: list[Node],
                  previous: _Draft | None) -> _Draft | None:
        head = self._head(node)
        if head is None:
            return None
        name, params = head
        arity = params.named_child_count if params is not None else 0
        defaults = 0
        if params is not None and self.source.find(b"\\\\", params.start_byte, params.end_byte) != -1:
            defaults = sum(
                1 for p in params.named_children
                if p.type == "binary_operator" and base.text(p.child_by_field_name("operator"), self.source) == "\\\\"
            )
        unit_type = _FUNCTIONS[keyword]
        if previous is not None and previous.name == name and arity in previous.arities and previous.type == unit_type:
            previous.node = node  # one more clause of the same function
            previous.metadata["clauses"] = previous.metadata.get("clauses", 1) + 1
            return previous
        first = self._first(node, pending)
        identifier = self.unique(f"{owner.module}.{name}/{arity}", unit_type)
        draft = _Draft(identifier, unit_type, node, parent=owner.identifier, namespace=owner.module, first=first,
                       module=owner.module, name=name, arities=tuple(range(arity - defaults, arity + 1)), outer=owner)
        draft.node_start = node.start_byte
        draft.signature = self._signature(node)
        draft.docstring = self._docs(first, pending, "doc")
        draft.metadata = {"arity": arity, "private": keyword in _PRIVATE, "kind": keyword}
        if defaults:
            draft.metadata["arities"] = list(draft.arities)
        if any((a := _attribute(p, self.source)) is not None and a[0] == "doc" and self._doc_false(a[1]) for p in pending):
            draft.metadata["doc"] = False
        if keyword == "defdelegate":
            self._delegate(node, draft, name, arity, owner)
        self.functions.setdefault(owner.module, {}).setdefault(name, []).append(draft)
        self.drafts.append(draft)
        return draft

    def _doc_false(self, call: Node) -> bool:
        arguments = _arguments(call)
        return bool(arguments) and base.text(arguments[0], self.source) == "false"

    def _signature(self, node: Node) -> str:
        """The head of a definition: up to its `do` block or its `, do:` keyword (one line)."""
        last = node.child(node.child_count - 1)
        if last is not None and last.type == "do_block":
            return base.one_line(self.source[node.start_byte : last.start_byte].decode("utf-8", "replace"))
        holder = _arguments_node(node)
        head = holder.named_child(0) if holder is not None and holder.named_child_count else None
        end = head.end_byte if head is not None else node.end_byte
        return base.one_line(self.source[node.start_byte : end].decode("utf-8", "replace"))

    def _delegate(self, node: Node, draft: _Draft, name: str, arity: int, owner: _Draft) -> None:
        target_module: str | None = None
        target_name = name
        for holder in _arguments(node)[1:]:
            for pair in holder.named_children if holder.type == "keywords" else ():
                key = base.text(pair.child_by_field_name("key"), self.source).rstrip(": ").strip()
                value = pair.child_by_field_name("value")
                if key == "to" and value is not None:
                    target_module = self._expand(base.text(value, self.source), owner)
                elif key == "as" and value is not None:
                    target_name = base.text(value, self.source).lstrip(":")
        if target_module is not None:
            target = f"{target_module}.{target_name}/{arity}"
            draft.metadata["delegate"] = target
            draft.deps.append(Dependency(target, "calls", lookup=(target,)))

    def _struct(self, node: Node, keyword: str, owner: _Draft, pending: list[Node]) -> None:
        first = self._first(node, pending)
        identifier = self.unique(f"{owner.module}.__struct__", "struct")
        draft = _Draft(identifier, "struct", node, parent=owner.identifier, namespace=owner.module, first=first,
                       module=owner.module, outer=owner)
        draft.signature = base.one_line(base.text(node, self.source))[:200]
        draft.docstring = self._docs(first, pending, "doc")
        fields: list[str] = []
        for argument in _arguments(node)[:1]:
            items = argument.named_children if argument.type == "list" else [argument]
            for item in items:
                if item.type == "atom":
                    fields.append(base.text(item, self.source).lstrip(":"))
                elif item.type == "keywords":
                    fields.extend(
                        base.text(p.child_by_field_name("key"), self.source).rstrip(": ").strip() for p in item.named_children
                    )
        draft.metadata = {"fields": fields, "exception": keyword == "defexception"}
        self.drafts.append(draft)

    def _typespec(self, node: Node, kind: str, spec: Node, owner: _Draft, pending: list[Node]) -> None:
        head = spec.child_by_field_name("left") if spec.type == "binary_operator" else spec
        if head is not None and head.type == "binary_operator":  # `@callback f(x) :: t when …`
            head = head.child_by_field_name("left")
        if head is None:
            return
        if head.type == "call":
            name = _call_name(head, self.source)
            arity = len(_arguments(head))
        elif head.type == "identifier":
            name, arity = base.text(head, self.source), 0
        else:
            return
        if name is None:
            return
        unit_type = "callback" if kind in _CALLBACK_ATTRIBUTES else "type"
        first = self._first(node, pending)
        identifier = self.unique(f"{owner.module}.{name}/{arity}", unit_type)
        draft = _Draft(identifier, unit_type, node, parent=owner.identifier, namespace=owner.module, first=first,
                       module=owner.module, name=name, arities=(arity,), outer=owner)
        draft.signature = base.one_line(base.text(node, self.source))[:300]
        draft.docstring = self._docs(first, pending, "doc" if unit_type == "callback" else "typedoc")
        draft.metadata = {"arity": arity, "kind": kind}
        self.drafts.append(draft)

    def _directive(self, node: Node, keyword: str, owner: _Draft) -> None:
        arguments = _arguments(node)
        if not arguments:
            return
        via = _DIRECTIVES[keyword]
        first = arguments[0]
        targets: list[tuple[str, str]] = []  # (full name, alias it binds)
        if first.type == "alias":
            full = self._expand(base.text(first, self.source), owner)
            targets.append((full, full.rpartition(".")[2]))
        elif first.type == "dot" and (right := first.child_by_field_name("right")) is not None and right.type == "tuple":
            prefix = self._expand(base.text(first.child_by_field_name("left"), self.source), owner)
            for item in right.named_children:
                if item.type == "alias":
                    written = base.text(item, self.source)
                    targets.append((f"{prefix}.{written}", written.rpartition(".")[2]))
        elif first.type == "identifier" and base.text(first, self.source) == "__MODULE__":
            targets.append((owner.module, owner.module.rpartition(".")[2]))
        else:
            return  # `alias :erlang_mod` and computed names
        renamed = self._as_option(arguments[1:])
        for full, short in targets:
            owner.deps.append(Dependency(full, via, lookup=(full,)))
            if keyword == "alias" or (keyword == "require" and renamed is not None):
                owner.aliases[renamed or short] = full
            elif keyword == "import":
                owner.imports.append(full)

    def _as_option(self, rest: list[Node]) -> str | None:
        for holder in rest:
            for pair in holder.named_children if holder.type == "keywords" else ():
                key = base.text(pair.child_by_field_name("key"), self.source).rstrip(": ").strip()
                if key == "as":
                    return base.text(pair.child_by_field_name("value"), self.source)
        return None

    def _expand(self, written: str, owner: _Draft | None) -> str:
        """A written alias as a full module name, through the aliases in scope."""
        if owner is None:
            return written
        if written.startswith("__MODULE__"):
            return owner.module + written[len("__MODULE__") :]
        head, dot, rest = written.partition(".")
        if head in owner.aliases:
            return owner.aliases[head] + (dot + rest if dot else "")
        return written

    # -- references ------------------------------------------------------------------------

    def _references(self, found: dict[str, list[Node]]) -> None:
        """Calls and struct literals inside functions and macros (module bodies are the walk's).

        The query's per-name lists line up: each remote call contributes one `remote_module`, one
        `remote_name` and one `remote_args`, in document order (a call's target starts it, its
        arguments follow); a local call's arguments are read from its target (`_call_arguments`)."""
        modules = found.get("remote_module", [])
        remote_names = found.get("remote_name", [])
        remote_args = found.get("remote_args", [])
        if not len(modules) == len(remote_names) == len(remote_args):
            for _ in zip(modules, remote_names, remote_args, modules, strict=True):  # raises
                pass
        code = [d for d in self.drafts if d.type in ("function", "macro") and d.outer is not None]
        if not code:
            return  # nothing owns a reference (scripts, tests made of `test … do` blocks)
        # Spans outermost first (by start, the longer first); `_owned` gives each node the last
        # span that holds it, the innermost (`scopes.Spans.owners`, without a look-up per node:
        # most captures of a file lie outside every function, in module bodies and test blocks).
        spans = sorted(
            ((d.node_start, d.node.end_byte, index) for index, d in enumerate(code)), key=lambda s: (s[0], -s[1], s[2])
        )
        piped = {n.start_byte for n in found.get("piped", ())}
        attributes = {n.start_byte for n in found.get("attribute", ())}  # `@behaviour X` is no call
        source = self.source
        names = found.get("local_name", [])
        for position, index in _owned(spans, names):
            name_node = names[position]
            start = name_node.start_byte
            if start in attributes:
                continue
            written = source[start : name_node.end_byte]
            if written in _KERNEL_BYTES:  # `def`, `alias`, `if` …
                continue
            arguments = _call_arguments(name_node)
            arity = arguments.named_child_count + (1 if start in piped else 0)
            draft = code[index]
            assert draft.outer is not None  # only drafts with an enclosing module are in `code`
            self._local_call(written.decode("utf-8", "replace"), arity, draft, draft.outer)
        for position, index in _owned(spans, modules):
            module_node = modules[position]
            draft = code[index]
            assert draft.outer is not None
            module = self._expand(base.text(module_node, self.source), draft.outer)
            arity = remote_args[position].named_child_count + (1 if module_node.start_byte in piped else 0)
            self._remote_call(module, base.text(remote_names[position], self.source), arity, draft)
        for kind in ("capture", "struct"):
            nodes = found.get(kind, [])
            for position, index in _owned(spans, nodes):
                node = nodes[position]
                draft = code[index]
                assert draft.outer is not None
                if kind == "capture":
                    self._capture(node, draft, draft.outer)
                else:
                    module = self._expand(base.text(node, self.source), draft.outer)
                    draft.deps.append(Dependency(module, "code_reference", lookup=(module,)))

    def _local_call(self, name: str, arity: int, draft: _Draft, scope: _Draft) -> None:
        key = (scope.identifier, name, arity)
        dep = self.local_deps.get(key)
        if dep is None:
            candidates = [d.identifier for d in self.functions.get(scope.module, {}).get(name, ()) if arity in d.arities]
            candidates.append(f"{scope.module}.{name}/{arity}")
            candidates.extend(f"{m}.{name}/{arity}" for m in scope.imports)
            candidates = list(dict.fromkeys(candidates))
            dep = self.local_deps[key] = Dependency(candidates[0], "calls", lookup=tuple(candidates))
        draft.add(dep)

    def _remote_call(self, module: str, name: str, arity: int, draft: _Draft) -> None:
        key = (module, name, arity)
        dep = self.remote_deps.get(key)
        if dep is None:
            candidates = tuple(f"{module}.{name}/{arity + extra}" for extra in range(_DEFAULT_ARITY_SLACK + 1))
            dep = self.remote_deps[key] = Dependency(candidates[0], "calls", lookup=candidates)
        draft.add(dep)

    def _capture(self, node: Node, draft: _Draft, scope: _Draft) -> None:
        operand = node.child_by_field_name("operand")
        left = operand.child_by_field_name("left") if operand is not None else None
        right = operand.child_by_field_name("right") if operand is not None else None
        if left is None or right is None or right.type != "integer":
            return
        arity = int(base.text(right, self.source))
        if left.type == "identifier":
            name = base.text(left, self.source)
            if name not in _KERNEL:
                self._local_call(name, arity, draft, scope)
        elif left.type == "call":
            target = left.child_by_field_name("target")
            if target is not None and target.type == "dot":
                module_node = target.child_by_field_name("left")
                if module_node is not None and module_node.type == "alias":
                    module = self._expand(base.text(module_node, self.source), scope)
                    self._remote_call(module, base.text(target.child_by_field_name("right"), self.source), arity, draft)


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Elixir file: modules outermost first, definitions in source order."""
    return _Extractor(file_path, source, layout).run()
