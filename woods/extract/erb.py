"""ERB extraction: one `view_template` unit per template, with the edges of its embedded Ruby.

Why: a view is retrieved as a whole (people ask for "the users show page"), but its value for the
dependency graph lies in the Ruby inside `<% %>` / `<%= %>`: the partials it renders, the constants
and helpers it touches. tree-sitter-embedded-template finds the `code` ranges; the Ruby grammar then
parses a copy of the template in which every byte outside those ranges is blanked (newlines kept, a
`;` where each directive closes). Byte offsets and line numbers therefore stay those of the template,
and `if … %> … <% end` spans across directives parse as the Ruby they are.

Guarantees: the identifier is the path relative to the Rails app root when the file lies under
`app/views/` (`app/views/users/show.html.erb`, also what `render` edges target), otherwise the
repository-relative path. Partials (`_form.html.erb`) are units too, `metadata["partial"]` says so.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable

from tree_sitter import Node, Query, QueryCursor

from woods.extract import base
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.extract.rails.inflection import singularize
from woods.extract.ruby import (
    REFERENCE_PATTERNS,
    RubyScan,
    call_arguments,
    collect_references,
    dedup_dependencies,
    hash_options,
    scan_query,
    spelled_reference_captures,
    string_value,
)
from woods.units import Dependency, FileExtraction

LANGUAGE = "erb"
UNIT_TYPE = "view_template"
# Directive node types whose `code` child is Ruby (comments `<%# %>` are not).
_CODE_DIRECTIVES = frozenset({"directive", "output_directive"})
# Route helpers seen in link_to/button_to/redirect arguments: `user_path`, `edit_user_url`.
_ROUTE_HELPER = re.compile(r"^\w+_(path|url)$")


def view_identifier(file_path: str) -> tuple[str, str | None]:
    """(identifier, view path below app/views or None) for a template path."""
    marker = "app/views/"
    index = file_path.find(marker)
    while index > 0 and file_path[index - 1] != "/":
        index = file_path.find(marker, index + 1)
    if index == -1:
        return file_path, None
    rel = file_path[index:]
    return rel, rel[len(marker) :]


def _handler_suffix(name: str) -> str:
    """`show.html.erb` → `.html.erb`; `welcome.text.erb` → `.text.erb`; `x.erb` → `.erb`."""
    parts = name.split(".")
    return "." + ".".join(parts[1:]) if len(parts) > 1 else ".html.erb"


def partial_path(reference: str, view_rel: str | None, suffix: str) -> str:
    """`render "form"` from `users/show` → `app/views/users/_form.html.erb`."""
    directory, _, name = reference.rpartition("/")
    if not directory:
        directory = posixpath.dirname(view_rel) if view_rel else ""
    location = f"{directory}/_{name}" if directory else f"_{name}"
    return f"app/views/{location}{suffix}"


def ruby_view(source: bytes, template: Node) -> tuple[bytes, Node]:
    """The template with everything but Ruby code blanked (same length, same newlines), and its tree."""
    buffer = bytearray(source.translate(_BLANK))
    for child in _code_nodes(template):
        buffer[child.start_byte : child.end_byte] = source[child.start_byte : child.end_byte]
        if child.end_byte < len(buffer) and buffer[child.end_byte] != 0x0A:
            buffer[child.end_byte] = ord(";")
    blanked = bytes(buffer)
    return blanked, base.parse("ruby", blanked).root_node


def _code_nodes(template: Node) -> list[Node]:
    """The `code` of every `<% %>` / `<%= %>` directive, in source order. A template without
    syntax errors is flat (directives are children of the root), so its children are read
    directly; otherwise the query finds directives wherever error recovery put them."""
    if template.has_error:
        return sorted(QueryCursor(_code_query()).captures(template).get("code", []), key=_start_byte)
    # A directive's one named child, when it has any, is its code (`<%`, code?, `%>`).
    found: list[Node] = []
    for child in template.children:
        if child.type in _CODE_DIRECTIVES and child.named_child_count:  # `<%=%>` has none
            code = child.named_child(0)
            if code is not None and code.type == "code":
                found.append(code)
    return found


# Every byte but a newline becomes a space (what `_NOT_NEWLINE.sub(b" ", …)` does, in one C pass).
_BLANK = bytes(0x0A if byte == 0x0A else 0x20 for byte in range(256))
# The Ruby `code` of `<% %>` and `<%= %>` directives (not comments `<%# %>`).
CODE_QUERY_SOURCE = "(directive (code) @code) (output_directive (code) @code)"
# The template's facts, found by the same traversal as the references (`RubyScan`): `render`
# calls without a receiver, identifiers that may be route helpers (`_ROUTE_HELPER` decides; the
# query only skips those that cannot end in `_path`/`_url`) and instance variables.
_FACT_QUERY_SOURCE = """
(call !receiver method: (identifier) @_render_name (#eq? @_render_name "render")) @render_call
((identifier) @identifier (#match? @identifier "_(path|url)$"))
(instance_variable) @instance_variable
"""


def _start_byte(node: Node) -> int:
    return node.start_byte


@functools.cache
def _code_query() -> Query:
    return Query(base.language("embedded_template"), CODE_QUERY_SOURCE)


def _fact_nodes(root: Node, code: bytes, file_path: str) -> tuple[dict[str, list[Node]], list[tuple[int, Dependency]]]:
    """The view's `render` calls, route-helper-like identifiers and instance variables (source
    order), and its references (`collect_references` from the root).

    When the Ruby view has syntax errors, one query over it finds everything. Otherwise the
    code's bytes do: every node the query patterns match (`REFERENCE_PATTERNS`,
    `_FACT_QUERY_SOURCE`) holds a spelling the bytes show (`@`, `_path`/`_url` at its end,
    `render`, an uppercase letter, `::` …), and a lookup of the leaf at each spelling keeps exactly
    those nodes (`spelled_reference_captures`) — a few lookups instead of a traversal of the view."""
    if root.has_error:  # missing (zero-width) nodes and error recovery: let the query decide
        scan = RubyScan(root, code, file_path, scan_query(REFERENCE_PATTERNS + _FACT_QUERY_SOURCE))
        captures = scan.captures
        # A query lists captures by match, not strictly by position: sort (no two share a start byte).
        facts = {
            kind: sorted(captures.get(kind, []), key=_start_byte)
            for kind in ("render_call", "identifier", "instance_variable")
        }
    else:
        scan = RubyScan(root, code, file_path, scan_query(REFERENCE_PATTERNS), spelled_reference_captures(root, code))
        facts = {
            "render_call": _leaf_facts(root, code, _RENDER_SPELLING, _render_call),
            "identifier": _leaf_facts(root, code, _ROUTE_HELPER_SPELLING, _route_helper_identifier),
            "instance_variable": _leaf_facts(root, code, _IVAR_SPELLING, _instance_variable),
        }
    references = scan.references(root, ())
    if references is None:
        references = collect_references(root, code, (), file_path)
    return facts, references


# Byte spellings of the facts (`_leaf_facts`): a fact's leaf holds one, and the check beside it
# says whether the leaf found there is the node the query pattern would capture.
_RENDER_SPELLING = re.compile(rb"render")
_ROUTE_HELPER_SPELLING = re.compile(rb"_(?:path|url)")
_IVAR_SPELLING = re.compile(rb"@")


def _leaf_facts(
    root: Node, code: bytes, spelling: re.Pattern[bytes], check: Callable[[Node, int, int], Node | None]
) -> list[Node]:
    """The nodes `check` accepts at each match of `spelling` (the smallest node around it), in
    source order. Leaves do not overlap, so matches in byte order give nodes in start order."""
    found: list[Node] = []
    for match in spelling.finditer(code):
        start, end = match.span()
        leaf = root.descendant_for_byte_range(start, end)
        if leaf is not None:
            node = check(leaf, start, end)
            if node is not None:
                found.append(node)
    return found


def _render_call(leaf: Node, start: int, end: int) -> Node | None:
    """`(call !receiver method: (identifier) "render")`: the call whose method is this leaf."""
    if leaf.type != "identifier" or leaf.start_byte != start or leaf.end_byte != end:
        return None
    call = leaf.parent
    if call is None or call.type != "call" or call.child_by_field_name("receiver") is not None:
        return None
    return call if call.child_by_field_name("method") == leaf else None


def _route_helper_identifier(leaf: Node, start: int, end: int) -> Node | None:
    """`((identifier) (#match? "_(path|url)$"))`: an identifier ending with this spelling."""
    if leaf.type == "identifier" and leaf.end_byte == end and leaf.start_byte <= start:
        return leaf
    return None


def _instance_variable(leaf: Node, start: int, end: int) -> Node | None:
    """`(instance_variable)`: the one starting at this `@` (not a class variable's `@@`)."""
    return leaf if leaf.type == "instance_variable" and leaf.start_byte == start else None


def _render_targets(
    calls: list[Node], code: bytes, view_rel: str | None, suffix: str
) -> list[tuple[int, Dependency]]:
    found: list[tuple[int, Dependency]] = []
    for node in calls:  # receiver-less `render` calls
        args = call_arguments(node)
        options = hash_options(args, code)
        reference = string_value(args[0], code) if args and args[0].type == "string" else None
        reference = reference or string_value(options.get("partial"), code)
        collection = options.get("collection")
        if reference is None and args and args[0].type == "instance_variable":
            collection = args[0]
        if reference is None and collection is not None and collection.type == "instance_variable":
            reference = _singular_partial(collection, code)
        if reference is None:
            continue
        target = partial_path(reference, view_rel, suffix)
        alternatives = tuple(
            dict.fromkeys(
                [
                    target,
                    partial_path(reference, view_rel, ".html.erb"),
                    partial_path(reference, view_rel, ".erb"),
                ]
            )
        )
        found.append((node.start_byte, Dependency(target, "render", UNIT_TYPE, alternatives)))
    return found


def _singular_partial(ivar: Node, code: bytes) -> str:
    """`render @users` → `users/user` (Rails renders each record with its model's partial)."""
    name = code[ivar.start_byte : ivar.end_byte].decode("utf-8", "replace").lstrip("@")
    return f"{name}/{singularize(name)}"


def _route_helpers(identifiers: list[Node], code: bytes) -> list[str]:
    helpers: list[str] = []
    for node in identifiers:
        name = code[node.start_byte : node.end_byte].decode("utf-8", "replace")
        if _ROUTE_HELPER.match(name) and name not in helpers:
            helpers.append(name)
    return helpers


def _instance_variables(variables: list[Node], code: bytes) -> list[str]:
    names: list[str] = []
    for node in variables:
        name = code[node.start_byte : node.end_byte].decode("utf-8", "replace")
        if name not in names:
            names.append(name)
    return names


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """The one `view_template` unit of an ERB file, with render/constant/call edges."""
    identifier, view_rel = view_identifier(file_path)
    name = file_path.rsplit("/", 1)[-1]
    suffix = _handler_suffix(name)
    template = base.parse("embedded_template", source)
    code, root = ruby_view(source, template.root_node)
    facts, deps = _fact_nodes(root, code, file_path)
    deps += _render_targets(facts["render_call"], code, view_rel, suffix)
    metadata: dict[str, object] = {
        "partial": name.startswith("_"),
        "layout": bool(view_rel and view_rel.startswith("layouts/")),
        "view_path": view_rel,
        "format": suffix.split(".")[1] if suffix.count(".") >= 2 else None,
        "instance_variables": _instance_variables(facts["instance_variable"], code),
        "route_helpers": _route_helpers(facts["identifier"], code),
    }
    if view_rel and "/" in view_rel:
        metadata["controller_path"] = posixpath.dirname(view_rel)
    draft = base.Draft(identifier, UNIT_TYPE, template.root_node, whole_file=True, metadata=metadata)
    unit = base.built(draft, file_path, LANGUAGE, source, dedup_dependencies(deps))
    warnings = base.syntax_warnings(template, file_path)
    return FileExtraction(file_path=file_path, language=LANGUAGE, units=(unit,), warnings=warnings)
