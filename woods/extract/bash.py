"""Bash (and POSIX sh, bats) extraction: one script unit per file, its functions and bats tests.

Identifiers are path based, because a shell function has no namespace and the same names
(`main`, `usage`, `setup`) recur in every script: the script unit is the file's repository path
(`lib/bats-core/common.bash`, `libexec/bats-core/bats` for an extension-less executable), a
function is `path:name` (`lib/bats-core/common.bash:bats_trim`), a bats test is
`path:@test "description"`. Functions defined at the top level — also inside top-level `if`/
`case`/loop blocks — are units; a function defined inside another function belongs to it.

Unit types: "script" (the whole file; its docstring is the comment block that opens the file,
after the `#!` line), "function" (`name() { … }`, `function name { … }`, `function name() ( … )`),
"test" (a bats `@test "…" { … }` block). Docstrings are the `#` comment block right above a
function; `# shellcheck` directives are not prose.

Dependencies: `source FILE` and `. FILE` are `import` edges of the unit that runs them, spelled
as repository paths: relative to the script's directory, and — when the path starts with a
variable such as `$ROOT/lib/x.sh` — the literal rest from the repository root as well (first
when the variable is not the script's own directory, i.e. not `$(dirname "$0")` or
`${BASH_SOURCE%/*}`); a bats `load helper` tries `helper.bash` and `helper` next to the test
file. A command naming a function of the same file calls it (`calls`: `path:name`); any other
non-builtin command is tried as a function of each sourced file, and bats `run fn …` calls
`fn`. Shell builtins and common utilities are never edges.
"""

from __future__ import annotations

import functools
import posixpath

from tree_sitter import Node

from woods.extract import base, scopes
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import Dependency, FileExtraction

LANGUAGE = "bash"

# Top-level compound statements whose bodies may define functions (never a function's own body).
_BLOCKS = frozenset(
    {"if_statement", "elif_clause", "else_clause", "compound_statement", "case_statement", "case_item",
     "while_statement", "for_statement", "c_style_for_statement", "do_group", "list", "redirected_statement"}
)
# Builtins, keywords and everyday utilities: a command with one of these names is never a call of
# project code (unless the file defines a function of that name).
_BUILTINS = frozenset(
    {
        "echo", "printf", "read", "cd", "pwd", "pushd", "popd", "export", "local", "declare", "typeset",
        "readonly", "unset", "set", "shift", "return", "exit", "eval", "exec", "trap", "test", "[", "[[",
        "true", "false", ":", "source", ".", "command", "builtin", "type", "hash", "wait", "kill", "jobs",
        "break", "continue", "time", "coproc", "select", "function",
        "bg", "fg", "let", "getopts", "shopt", "alias", "unalias", "ulimit", "umask", "mapfile",
        "readarray", "compgen", "complete", "caller", "disown", "times", "printenv", "env", "cat", "grep",
        "egrep", "sed", "awk", "cut", "tr", "sort", "uniq", "head", "tail", "wc", "ls", "cp", "mv", "rm",
        "mkdir", "rmdir", "touch", "chmod", "chown", "ln", "find", "xargs", "basename", "dirname", "date",
        "sleep", "tee", "mktemp", "readlink", "realpath", "git", "curl", "wget", "tar", "gzip", "diff",
        "sh", "bash", "seq", "expr", "uname", "whoami", "id", "ps", "stat", "du", "df", "which", "tput",
        "stty", "python", "python3", "perl", "jq", "make", "docker", "sudo", "npm", "node", "go",
    }
)
# A variable at the start of a sourced path that stands for the script's own directory.
_SCRIPT_DIR_MARKERS = ("BASH_SOURCE", "dirname", "$0", "${0")
_DOC_SKIP = ("shellcheck ",)  # comment lines that are directives, not prose
# Commands whose arguments `_Extractor._references` reads (sourcing, bats `load` and `run`).
_READS_ARGUMENTS = frozenset({"source", ".", "load", "run"})



@functools.cache
def _field_ids() -> tuple[int, int]:
    """The grammar's ids of the `name` and `argument` fields of a command: reading a field by id
    skips the search of its name among all of the grammar's that reading it by name makes."""
    lang = base.language("bash")
    name, argument = lang.field_id_for_name("name"), lang.field_id_for_name("argument")
    assert name is not None and argument is not None
    return name, argument


_REFERENCES = """
(command name: (command_name) @name) @command
(comment) @comment
"""


class _Extractor(base.FileExtractor[base.Draft]):
    """Top-level statements walked in Python (skipping function bodies); commands by query."""

    def __init__(self, file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> None:
        super().__init__(file_path, source, layout)
        self.directory = posixpath.dirname(file_path)
        self.comments = scopes.Comments([], source)
        self.functions: dict[str, str] = {}  # name → identifier
        self.sourced: list[tuple[str, ...]] = []  # candidate paths of every sourced file
        self.bats = file_path.endswith(".bats")

    def run(self) -> FileExtraction:
        tree = base.parse("bash", self.source)
        root = tree.root_node
        found = scopes.captures_by_name("bash", _REFERENCES, root)
        comments = found.get("comment", [])
        self.comments = scopes.Comments(comments, self.source)
        script = base.Draft(self.file_path, "script", root, whole_file=True, namespace=self.directory or None)
        script.docstring = self._file_docs(root)
        self.drafts.append(script)
        self._walk(root)
        self._references(found.get("command", []))
        # A blank file has nothing to retrieve: no unit with empty source for it.
        kept = self.drafts if self.source.strip() else []
        units = tuple(base.freeze(d, self.file_path, LANGUAGE, self.source) for d in kept)
        return FileExtraction(self.file_path, LANGUAGE, units, base.syntax_warnings(tree, self.file_path))

    # -- declarations ----------------------------------------------------------------------

    def _file_docs(self, root: Node) -> str | None:
        lines: list[str] = []
        for node in root.children:
            if node.type != "comment":
                break
            text = base.text(node, self.source)
            if not lines and node.start_point[0] == 0 and text.startswith("#!"):
                continue
            lines.append(text)
        return _clean(lines)

    def _walk(self, root: Node) -> None:
        stack: list[Node] = list(reversed(root.named_children))
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "function_definition":
                self._function(node)
            elif kind == "command" and self.source.find(b"@test", node.start_byte, node.end_byte) >= 0 and self._test_header(node):
                self._test(node)
            elif kind in _BLOCKS:
                stack.extend(reversed(node.named_children))

    def _function(self, node: Node) -> None:
        name = base.text(node.child_by_field_name("name"), self.source)
        if not name:
            return
        identifier = self.unique(f"{self.file_path}:{name}", "function")
        draft = base.Draft(identifier, "function", node, parent=self.file_path, namespace=self.file_path)
        body = node.child_by_field_name("body")
        stop = body.start_byte if body is not None else node.end_byte
        draft.signature = base.one_line(self.source[node.start_byte : stop].decode("utf-8", "replace"))
        draft.docstring = self._docs(node)
        self.functions.setdefault(name, identifier)
        self.drafts.append(draft)

    def _docs(self, node: Node) -> str | None:
        block = self.comments.above(node.start_point[0])
        texts = [base.text(c, self.source) for c in block if not (c.start_point[0] == 0 and base.text(c, self.source).startswith("#!"))]
        return _clean(texts)

    def _test_header(self, node: Node) -> bool:
        """`@test "description" {` — bats syntax, which the grammar reads as a command."""
        name = node.child_by_field_name("name")
        if name is None or base.text(name, self.source) != "@test":
            return False
        arguments = node.children_by_field_name("argument")
        return bool(arguments) and base.text(arguments[-1], self.source) == "{"

    def _test(self, node: Node) -> None:
        closing = node.next_named_sibling
        depth = 1
        while closing is not None:
            if closing.type == "command":
                name = base.text(closing.child_by_field_name("name"), self.source)
                if name == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif name == "@test":
                    return  # an unclosed test: the next one starts before this one ends
            closing = closing.next_named_sibling
        if closing is None:
            return
        arguments = node.children_by_field_name("argument")
        description = base.text(arguments[0], self.source) if len(arguments) > 1 else '""'
        if description[:1] not in ("'", '"'):
            description = f'"{description}"'
        identifier = self.unique(f'{self.file_path}:@test {description}', "test")
        draft = base.Draft(identifier, "test", closing, parent=self.file_path, namespace=self.file_path, first=node)
        draft.signature = base.one_line(base.text(node, self.source)).removesuffix("{").rstrip()
        draft.docstring = self._docs(node)
        self.drafts.append(draft)

    # -- references ------------------------------------------------------------------------

    def _references(self, commands: list[Node]) -> None:
        spans = [((d.first or d.node).start_byte, d.node.end_byte) for d in self.drafts]
        owners = scopes.innermost(spans, [c.start_byte for c in commands])
        calls: list[tuple[base.Draft, str]] = []
        name_field, argument_field = _field_ids()
        for command, index in zip(commands, owners, strict=True):
            draft = self.drafts[index if index is not None else 0]
            name = base.text(command.child_by_field_id(name_field), self.source)
            if name in _READS_ARGUMENTS:  # (the arguments of any other command are never read)
                arguments = command.children_by_field_id(argument_field)
                if name in ("source", ".") and arguments:
                    self._source(arguments[0], draft)
                    continue
                if name == "load" and self.bats and arguments:
                    self._load(arguments[0], draft)
                    continue
                if name == "run" and self.bats:
                    target = next((a for a in arguments if not base.text(a, self.source).startswith(("-", "!"))), None)
                    if target is not None and target.type == "word":
                        calls.append((draft, base.text(target, self.source)))
                    continue
            if name and name not in ("}", "@test"):
                calls.append((draft, name))
        for draft, name in calls:
            self._call(name, draft)

    def _source(self, argument: Node, draft: base.Draft) -> None:
        candidates = self._path_candidates(base.text(argument, self.source))
        if candidates:
            self.sourced.append(candidates)
            draft.deps.append(Dependency(candidates[0], "import", lookup=candidates))

    def _load(self, argument: Node, draft: base.Draft) -> None:
        written = _unquote(base.text(argument, self.source))
        if "$" in written or not written:
            return
        candidates: list[str] = []
        for name in (f"{written}.bash", written):
            candidates.extend(self._path_candidates(name))
        unique = tuple(dict.fromkeys(candidates))
        if unique:
            self.sourced.append(unique)
            draft.deps.append(Dependency(unique[0], "import", lookup=unique))

    def _path_candidates(self, written: str) -> tuple[str, ...]:
        """Repository paths a sourced file may be (see the module docstring)."""
        path = _unquote(written)
        if not path or path.startswith("/") and "$" not in path:
            return ()
        if "$" not in path:
            out = [posixpath.normpath(posixpath.join(self.directory, path)), posixpath.normpath(path)]
        else:
            head, tail = _split_expansion(path)
            if "$" in tail or not tail.startswith("/"):
                return ()
            rest = tail.lstrip("/")
            local = posixpath.normpath(posixpath.join(self.directory, rest))
            from_root = posixpath.normpath(rest)
            relative = any(marker in head for marker in _SCRIPT_DIR_MARKERS)
            out = [local, from_root] if relative else [from_root, local]
        kept = [p for p in dict.fromkeys(out) if p and p != "." and not p.startswith("../")]
        return tuple(kept)

    def _call(self, name: str, draft: base.Draft) -> None:
        local = self.functions.get(name)
        if local is not None:
            draft.deps.append(Dependency(local, "calls", lookup=(local,)))
            return
        if name in _BUILTINS or not self.sourced or "$" in name or "/" in name or "=" in name:
            return
        candidates = tuple(dict.fromkeys(f"{path}:{name}" for paths in self.sourced for path in paths))
        draft.deps.append(Dependency(candidates[0], "calls", lookup=candidates))


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in ("'", '"'):
        return text[1:-1]
    return text.replace('"', "")


def _split_expansion(path: str) -> tuple[str, str]:
    """(everything up to the end of the last expansion, the literal rest) of `$X/lib/a.sh`-like
    paths; `$(…)` and `${…}` are skipped as a whole, quotes and nesting included."""
    index = 0
    last_end = 0
    while index < len(path):
        if path[index] != "$":
            index += 1
            continue
        end = index + 1
        if end < len(path) and path[end] in "{(":
            depth = 0
            while end < len(path):
                if path[end] in "{(":
                    depth += 1
                elif path[end] in "})":
                    depth -= 1
                    if depth == 0:
                        end += 1
                        break
                end += 1
        else:
            while end < len(path) and (path[end].isalnum() or path[end] in "_@#?*!-"):
                end += 1
        index = last_end = end
    return path[:last_end], path[last_end:].replace('"', "").replace("'", "")


def _clean(lines: list[str]) -> str | None:
    """`#` comment prose: markers and directive lines removed, lines dedented together."""
    out: list[str] = []
    for raw in lines:
        stripped = raw.strip().lstrip("#")
        stripped = stripped[1:] if stripped.startswith(" ") else stripped
        if stripped.startswith(_DOC_SKIP):
            continue
        out.append(stripped.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out) or None


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one shell script: the script first, then its functions and tests in source order."""
    return _Extractor(file_path, source, layout).run()
