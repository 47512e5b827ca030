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

import posixpath
import re

from tree_sitter import Node

from woods.extract import base
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.extract.rails.inflection import singularize
from woods.extract.ruby import (
    call_arguments,
    call_name,
    collect_references,
    dedup_dependencies,
    hash_options,
    string_value,
)
from woods.units import Dependency, FileExtraction, Unit

LANGUAGE = "erb"
UNIT_TYPE = "view_template"
# Directive node types whose `code` child is Ruby (comments `<%# %>` are not).
_CODE_DIRECTIVES = frozenset({"directive", "output_directive"})
# Route helpers seen in link_to/button_to/redirect arguments: `user_path`, `edit_user_url`.
_ROUTE_HELPER = re.compile(r"^\w+_(path|url)$")
_NOT_NEWLINE = re.compile(rb"[^\n]")


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
    buffer = bytearray(_NOT_NEWLINE.sub(b" ", source))
    for node in base.walk(template):
        if node.type not in _CODE_DIRECTIVES:
            continue
        for child in node.named_children:
            if child.type == "code":
                buffer[child.start_byte : child.end_byte] = source[child.start_byte : child.end_byte]
                if child.end_byte < len(buffer) and buffer[child.end_byte] != 0x0A:
                    buffer[child.end_byte] = ord(";")
    blanked = bytes(buffer)
    return blanked, base.parse("ruby", blanked).root_node


# The node types the template's facts come from, collected in one pre-order walk.
_FACT_NODES = frozenset({"call", "identifier", "instance_variable"})


def _fact_nodes(root: Node) -> dict[str, list[Node]]:
    """Every call, identifier and instance variable of the Ruby view, in source (pre-)order:
    one walk instead of one per fact."""
    found: dict[str, list[Node]] = {kind: [] for kind in _FACT_NODES}
    for node in base.walk(root):
        kind = node.type
        if kind in _FACT_NODES:
            found[kind].append(node)
    return found


def _render_targets(
    calls: list[Node], code: bytes, view_rel: str | None, suffix: str
) -> list[tuple[int, Dependency]]:
    found: list[tuple[int, Dependency]] = []
    for node in calls:
        if node.child_by_field_name("receiver") is not None:
            continue
        if call_name(node, code) != "render":
            continue
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
        if _ROUTE_HELPER.match(
            code[node.start_byte : node.end_byte].decode("utf-8", "replace")
        ):
            name = code[node.start_byte : node.end_byte].decode("utf-8", "replace")
            if name not in helpers:
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
    facts = _fact_nodes(root)
    deps = collect_references(root, code, (), file_path)
    deps += _render_targets(facts["call"], code, view_rel, suffix)
    text = source.decode("utf-8", "replace")
    line_end = max(1, text.count("\n") + (0 if text.endswith("\n") or not text else 1))
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
    unit = Unit(
        identifier=identifier,
        type=UNIT_TYPE,
        language=LANGUAGE,
        file_path=file_path,
        line_start=1,
        line_end=line_end,
        source_code=text,
        namespace=None,
        signature=None,
        docstring=None,
        parent=None,
        metadata=metadata,
        dependencies=dedup_dependencies(deps),
    )
    warnings = base.syntax_warnings(template, file_path)
    return FileExtraction(file_path=file_path, language=LANGUAGE, units=(unit,), warnings=warnings)
