"""Lua extraction: one module unit per file, its functions and methods, `require` edges and calls.

Module names follow `require`: the file path below the last `lua/` directory (Neovim's runtime
path: `lua/telescope/builtin/init.lua` → `telescope.builtin`), else below a leading `src/` or
`lib/` (LuaRocks layouts), else from the repository root; `init.lua` names its directory, and
`/` becomes `.` (`telescope/actions/state.lua` → `telescope.actions.state`).

The table a file returns (`return M`, `return setmetatable(M, …)`) is the module itself:
`function M.find_files()` is `telescope.builtin.find_files`, `function M:close()` is
`telescope.builtin:close` (Lua's own `:` for methods), a field of a returned table constructor
(`return { setup = function() … end }`) is `module.setup`. Anything else keeps its written path
under the module: `function Picker:find()` with a local `Picker` table is
`telescope.pickers.Picker:find`, `Picker.new = function` is `telescope.pickers.Picker.new`,
`local function helper` and a global `function helper` are `module.helper`
(`metadata["local"]` tells them apart). Only top-level definitions (and the functions in
top-level table constructors) are units; functions inside function bodies belong to them.

Unit types: "module", "function" (dot or plain names), "method" (`:` names). Docstrings are the
`--`/`---` comment block above a definition (LuaCATS `---@param` lines kept, markers removed); a
module's is the comment block that opens the file.

Dependencies: `require("a.b")` is an `import` of module `a.b` from the unit that runs it (a
lazy require inside a function belongs to that function); since a repository may be indexed from
inside its `lua/<plugin>/` directory, the spelling without the first segment (`b`) is the second
candidate. Calls (`calls`) are resolved through those requires (`local utils =
require("telescope.utils")` … `utils.get()` → `telescope.utils.get`, also
`require("x").f()`), through the module table and local tables of the file, `self:m()` inside a
method of a table, and plain `f()` of a function defined in the file. Calls of globals (`vim.api…`,
`print`) are never edges.
"""

from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass

from tree_sitter import Node, QueryCursor

from woods.extract import base, scopes
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "lua"
# The plain name a callee's text starts with, when a `.` or `:` follows it directly.
_HEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?=[.:])")
_UNSEEN = Dependency("", "")  # a callee not met yet (None is "no edge")
_START = operator.attrgetter("start_byte")


# Directories a module path starts below when there is no `lua/` directory (LuaRocks layouts).
_SOURCE_ROOTS = frozenset({"src", "lib"})

# One query for every call (its callee) and comment. `require("…")` calls are among the callees
# (`_requires` reads their module strings and the names they are bound to from the tree): asking
# the query for them too would cost a pattern match at every call and assignment of the file.
_REFERENCES = """
(function_call name: (_) @callee)
(comment) @comment
"""


@functools.cache
def _field_ids() -> tuple[int, int, int, int]:
    """The grammar's ids of the `arguments`, `table`, `field` and `method` fields: reading a field
    by id skips the search of its name among all of the grammar's that reading it by name makes."""
    lang = base.language("lua")
    ids = tuple(lang.field_id_for_name(name) for name in ("arguments", "table", "field", "method"))
    assert all(i is not None for i in ids)
    arguments, table, field, method = (i for i in ids if i is not None)
    return arguments, table, field, method


def module_name(file_path: str) -> str:
    """The `require` name of a repository-relative Lua file (see the module docstring)."""
    parts = [p for p in file_path.split("/") if p and p != "."]
    if not parts:
        return "init"
    directories = parts[:-1]
    if "lua" in directories:
        cut = len(directories) - 1 - directories[::-1].index("lua")
        parts = parts[cut + 1 :]
    elif len(parts) > 1 and parts[0] in _SOURCE_ROOTS:
        parts = parts[1:]
    stem = parts[-1][:-4] if parts[-1].endswith(".lua") else parts[-1]
    parts[-1] = stem
    if stem == "init" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _require_candidates(name: str) -> tuple[str, ...]:
    """`a.b.c` and, for an index rooted inside `lua/a/`, `b.c`."""
    _head, dot, rest = name.partition(".")
    return (name, rest) if dot and rest else (name,)


@dataclass(slots=True)
class _Draft(base.Draft):
    """A Lua unit under construction; `receiver` is the identifier of the table it is defined on
    (what `self` means inside it)."""

    receiver: str | None = None


class _Extractor(base.FileExtractor[_Draft]):
    """Top-level statements walked in Python; calls and requires by one query."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.module = module_name(file_path)
        self.comments: scopes.Comments  # (set by `run`, with the comments its query finds)
        self.module_table: str | None = None  # the local the file returns
        self.tables: set[str] = set()  # local tables of the file (`local Picker = {}`)
        self.functions: dict[str, str] = {}  # plain name → identifier (`local function f`)
        self.requires: dict[str, str] = {}  # local name → required module
        self.required_at: dict[int, str] = {}  # start byte of a `require("m")` call → "m"

    def run(self) -> FileExtraction:
        tree = base.parse("lua", self.source)
        root = tree.root_node
        found = QueryCursor(scopes.compiled("lua", _REFERENCES)).captures(root)
        self.comments = scopes.Comments(sorted(found.get("comment", ()), key=_START), self.source)
        # In pre-order: `a.f():close()` calls `a.f():close` before `a.f` (both start at `a`).
        # The query hands back equal starts in no fixed order, and callees decide the order of
        # a unit's dependencies.
        callees = sorted(found.get("callee", ()), key=scopes.preorder_key)
        statements = root.named_children
        module = _Draft(self.module, "module", root, whole_file=True,
                        namespace=self.module.rpartition(".")[0] or None)
        module.docstring = self._file_docs(statements)
        self.drafts.append(module)
        returned = self._returned(statements)
        for statement in statements:
            self._statement(statement, returned)
        self._references(callees)
        # A blank file has nothing to retrieve: no unit with empty source for it.
        kept = self.drafts if self.source.strip() else []
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in kept)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    # -- declarations ----------------------------------------------------------------------

    def _file_docs(self, statements: list[Node]) -> str | None:
        lines: list[str] = []
        for node in statements:
            if node.type != "comment":
                break
            text = base.text(node, self.source)
            if lines or not text.startswith("#!"):
                lines.append(text)
        return _clean(lines)

    def _returned(self, statements: list[Node]) -> Node | None:
        """What the chunk's final `return` hands back; sets the module table's local name."""
        last = next((s for s in reversed(statements) if s.type != "comment"), None)
        if last is None or last.type != "return_statement":
            return None
        values = next((c for c in last.named_children if c.type == "expression_list"), None)
        value = values.named_child(0) if values is not None and values.named_child_count else None
        if value is not None and value.type == "function_call":  # `return setmetatable(M, …)`
            arguments = value.child_by_field_name("arguments")
            first = arguments.named_child(0) if arguments is not None and arguments.named_child_count else None
            value = first if first is not None and first.type == "identifier" else value
        if value is not None and value.type == "identifier":
            self.module_table = base.text(value, self.source)
        return value

    def _statement(self, node: Node, returned: Node | None) -> None:
        kind = node.type
        if kind == "function_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                self._function(node, node, name, local=any(c.type == "local" for c in node.children))
        elif kind in ("variable_declaration", "assignment_statement"):
            assignment = node if kind == "assignment_statement" else next(
                (c for c in node.named_children if c.type == "assignment_statement"), None
            )
            if assignment is not None:
                self._assignment(node, assignment, local=kind == "variable_declaration")
        elif kind == "return_statement" and returned is not None and returned.type == "table_constructor":
            self._table_fields(returned, None)

    def _assignment(self, statement: Node, assignment: Node, local: bool) -> None:
        names = next((c for c in assignment.named_children if c.type == "variable_list"), None)
        values = next((c for c in assignment.named_children if c.type == "expression_list"), None)
        if names is None or values is None:
            return
        for target, value in zip(names.named_children, values.named_children, strict=False):
            kind = value.type
            if kind not in ("function_definition", "table_constructor", "function_call"):
                continue  # (before `_path`: no other value makes anything of its target)
            path = self._path(target)
            if path is None:
                continue
            if kind == "function_definition":
                self._function(statement, value, target, local=local)
            elif kind == "table_constructor":
                if len(path) == 1:
                    self.tables.add(path[0])
                self._table_fields(value, path)
            elif kind == "function_call" and len(path) == 1:
                required = self._required(value)
                if required is not None:
                    self.requires.setdefault(path[0], required)
                elif base.text(value.child_by_field_name("name"), self.source) == "setmetatable":
                    self.tables.add(path[0])

    def _table_fields(self, table: Node, path: tuple[str, ...] | None) -> None:
        """Functions in a top-level table constructor: `{ setup = function() … end }`."""
        for field in table.named_children:
            if field.type != "field":
                continue
            key = field.child_by_field_name("name")
            value = field.child_by_field_name("value")
            if key is None or value is None or key.type != "identifier" or value.type != "function_definition":
                continue
            name = base.text(key, self.source)
            written = (*path, name) if path is not None else None
            self._new_function(field, value, written, name, local=False, method=False)

    def _path(self, node: Node) -> tuple[str, ...] | None:
        """`a.b.c` → ("a", "b", "c"); `a:b` → ("a", ":b"); anything else None."""
        if node.type in ("identifier", "dot_index_expression", "method_index_expression"):
            # The common case, read from the text: plain names joined by `.` and a final `:`.
            head, colon, method = base.text(node, self.source).partition(":")
            names = head.split(".")
            if all(n.isidentifier() for n in names) and (not colon or method.isidentifier()):
                return (*names, f":{method}") if colon else tuple(names)
        parts: list[str] = []
        current: Node | None = node
        while current is not None:
            if current.type == "identifier":
                parts.append(base.text(current, self.source))
                return tuple(reversed(parts))
            if current.type == "dot_index_expression":
                parts.append(base.text(current.child_by_field_name("field"), self.source))
            elif current.type == "method_index_expression":
                parts.append(":" + base.text(current.child_by_field_name("method"), self.source))
            else:
                return None
            current = current.child_by_field_name("table")
        return None

    def _identifier(self, path: tuple[str, ...]) -> str:
        """The unit identifier of a written function path (see the module docstring)."""
        head, rest = path[0], path[1:]
        parts = list(rest) if head == self.module_table else list(path)
        text = self.module
        for part in parts:
            text += part if part.startswith(":") else f".{part}"
        return text

    def _function(self, statement: Node, function: Node, name_node: Node, local: bool) -> None:
        path = self._path(name_node)
        if path is None:
            return
        method = path[-1].startswith(":")
        self._new_function(statement, function, path, path[-1].lstrip(":"), local=local, method=method)

    def _new_function(self, statement: Node, function: Node, path: tuple[str, ...] | None, name: str,
                      local: bool, method: bool) -> None:
        identifier = self._identifier(path) if path is not None else f"{self.module}.{name}"
        unit_type = "method" if method else "function"
        draft = _Draft(self.unique(identifier, unit_type), unit_type, statement, parent=self.module,
                       namespace=self.module)
        if path is None:
            draft.receiver = self.module  # a field of the returned table constructor
        elif len(path) > 1:
            draft.receiver = self._identifier(path[:-1])
        body = function.child_by_field_name("body")
        stop = body.start_byte if body is not None else function.end_byte
        header = self.source[statement.start_byte : stop].decode("utf-8", "replace")
        draft.signature = base.one_line(header.removesuffix("end") if body is None else header)
        draft.docstring = _clean(
            [base.text(c, self.source) for c in self.comments.above(statement.start_point[0])]
        )
        draft.metadata = {"local": local}
        if path is not None and len(path) == 1:
            self.functions.setdefault(path[0], draft.identifier)
        self.drafts.append(draft)

    def _required(self, call: Node) -> str | None:
        """The module name of `require("a.b")` / `require "a.b"`, else None."""
        name = call.child_by_field_name("name")
        if name is None or name.type != "identifier" or base.text(name, self.source) != "require":
            return None
        arguments = call.child_by_field_name("arguments")
        argument = arguments.named_child(0) if arguments is not None and arguments.named_child_count else None
        if argument is None or argument.type != "string":
            return None
        content = next((c for c in argument.named_children if c.type == "string_content"), None)
        return base.text(content, self.source) if content is not None else None

    # -- references ------------------------------------------------------------------------

    def _requires(self, callees: list[Node]) -> tuple[list[Node], list[Node], list[Node], list[Node]]:
        """What the query patterns

            ((function_call name: (identifier) @name arguments: (arguments (string (string_content) @module)))
             @require (#eq? @name "require"))
            (assignment_statement
              (variable_list . name: (identifier) @bound)
              (expression_list . value: (function_call name: (identifier) @name
                                                       arguments: (arguments (string (string_content) @module))))
              (#eq? @name "require"))

        capture, read from the callees (the `name` of every call): the `require` calls, their
        module strings, the names bound to a require, and those requires' module strings, each
        list by start byte with every node once (as `scopes.captures_by_name` would give them)."""
        source = self.source
        requires: list[Node] = []
        modules: list[Node] = []
        bound: list[Node] = []
        bound_modules: list[Node] = []
        arguments_field = _field_ids()[0]
        for callee in callees:
            if source[callee.start_byte : callee.end_byte] != b"require" or callee.type != "identifier":
                continue
            call = callee.parent
            arguments = call.child_by_field_id(arguments_field) if call is not None else None
            if call is None or arguments is None or arguments.type != "arguments":
                continue
            contents = [
                content
                for string in arguments.named_children if string.type == "string"
                for content in string.named_children if content.type == "string_content"
            ]
            if not contents:
                continue
            requires.append(call)
            modules.extend(contents)
            values = call.parent  # `. value: (function_call …)`: the list's first named node
            if (
                values is None
                or values.type != "expression_list"
                or values.named_child(0) != call
                or values.field_name_for_named_child(0) != "value"
            ):
                continue
            assignment = values.parent
            if assignment is None or assignment.type != "assignment_statement":
                continue
            for names in assignment.named_children:
                if names.start_byte >= values.start_byte:
                    break
                if names.type != "variable_list" or not names.named_child_count:
                    continue
                first = names.named_child(0)  # `. name: (identifier)`
                if first is not None and first.type == "identifier" and names.field_name_for_named_child(0) == "name":
                    if first not in bound:
                        bound.append(first)
                    bound_modules.extend(contents)
        for found in (requires, modules, bound, bound_modules):
            found.sort(key=_START)
        return requires, modules, bound, bound_modules

    def _references(self, callees: list[Node]) -> None:
        requires, modules_found, bound, bound_modules = self._requires(callees)
        # Each bound name takes the first module string after it: its own call's first argument
        # (`local b = require("p", "q")` binds b to p; a second argument is loader data).
        after = iter(bound_modules)
        bound_module = next(after, None)
        for name in bound:
            while bound_module is not None and bound_module.start_byte < name.end_byte:
                bound_module = next(after, None)
            if bound_module is None:
                break
            self.requires.setdefault(base.text(name, self.source), base.text(bound_module, self.source))
        spans = scopes.Spans([(d.node.start_byte, d.node.end_byte) for d in self.drafts])
        # `require("m")` calls: each call with the module string inside it (two sorted lists).
        modules = iter(modules_found)
        required_at: dict[int, str] = {}
        for call in requires:
            module = next(modules, None)
            while module is not None and module.start_byte < call.start_byte:
                module = next(modules, None)
            if module is not None and module.end_byte <= call.end_byte:
                required_at[call.start_byte] = base.text(module, self.source)
        for call, index in zip(requires, spans.owners([c.start_byte for c in requires]), strict=True):
            required = required_at.get(call.start_byte)
            if index is not None and required is not None:
                self.drafts[index].deps.append(Dependency(required, "import", lookup=_require_candidates(required)))
        self.required_at = required_at
        # One Dependency per distinct written callee (and receiver, which `self` depends on).
        cache: dict[tuple[bytes, str | None], Dependency | None] = {}
        source = self.source
        drafts = self.drafts
        starts = [c.start_byte for c in callees]
        for callee, start, index in zip(callees, starts, spans.owners(starts), strict=True):
            if index is None:
                continue
            draft = drafts[index]
            key = (source[start : callee.end_byte], draft.receiver)
            dep = cache.get(key, _UNSEEN)
            if dep is _UNSEEN:
                dep = cache[key] = self._call(callee, key[0].decode("utf-8", "replace"), draft)
            if dep is not None:
                draft.deps.append(dep)

    def _call(self, callee: Node, text: str, draft: _Draft) -> Dependency | None:
        """The call edge of a callee (`f`, `a.b.f`, `a:m`, `require("x").f`), or None."""
        kind = callee.type
        if kind == "identifier":
            identifier = self.functions.get(text)
            return Dependency(identifier, "calls", lookup=(identifier,)) if identifier is not None else None
        if kind not in ("dot_index_expression", "method_index_expression"):
            return None
        # A receiver that starts with a plain name the file knows nothing of (`vim.api.f`, a
        # parameter) names no target: the nodes need not be asked (`_table_targets` finds none).
        head = _HEAD.match(text)
        if head is not None:
            name = head.group()
            if name != "self" and name != self.module_table and name not in self.requires and name not in self.tables:
                return None
        _arguments, table_field, field_field, method_field = _field_ids()
        table = callee.child_by_field_id(table_field)
        member_node = callee.child_by_field_id(field_field if kind == "dot_index_expression" else method_field)
        if table is None or member_node is None:
            return None
        member = base.text(member_node, self.source)
        separators = (".", ":") if kind == "dot_index_expression" else (":", ".")
        prefixes = self._table_targets(table, draft)
        if not prefixes:
            return None
        candidates = tuple(dict.fromkeys(f"{p}{sep}{member}" for p in prefixes for sep in separators))
        return Dependency(candidates[0], "calls", lookup=candidates)

    def _table_targets(self, table: Node, draft: _Draft) -> list[str]:
        """What a call's receiver names: module spellings to put the member after."""
        if table.type == "function_call":  # require("x").f()
            required = self.required_at.get(table.start_byte)
            return list(_require_candidates(required)) if required is not None else []
        path = self._path(table)
        if path is None or any(p.startswith(":") for p in path):
            return []
        head, rest = path[0], path[1:]
        tail = "".join(f".{p}" for p in rest)
        if head == "self":
            return [f"{draft.receiver}{tail}"] if draft.receiver is not None else []
        if head in self.requires:
            return [f"{c}{tail}" for c in _require_candidates(self.requires[head])]
        if head == self.module_table or head in self.tables:
            return [self._identifier(path)]
        return []


def _clean(lines: list[str]) -> str | None:
    """Comment prose: `--`, `---`, `--[[ ]]` markers and one following space removed per line."""
    if not lines:
        return None
    out: list[str] = []
    for raw in lines:
        for line in raw.splitlines():
            stripped = line.strip()
            if stripped.startswith(("--[[", "--[=[")):
                stripped = stripped.split("[", 2)[-1]
            stripped = stripped.lstrip("-")
            if stripped.endswith("]]"):
                stripped = stripped[:-2]
            out.append(stripped[1:].rstrip() if stripped.startswith(" ") else stripped.rstrip())
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) or None


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Lua file: the module first, then its top-level functions in source order."""
    return _Extractor(file_path, source, layout).run()
