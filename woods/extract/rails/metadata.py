"""Rails metadata read from class bodies: associations, validations, callbacks, scopes, enums, controller actions and filters, jobs, mailers, migrations."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tree_sitter import Node

from woods.extract.rails.classification import ASSOCIATIONS, dsl_names, mixins
from woods.extract.rails.inflection import camelize, pluralize, singularize, underscore
from woods.extract.ruby import (
    UnitDraft,
    call_arguments,
    call_name,
    hash_options,
    lexical_candidates,
    line_number,
    literal,
    literal_list,
    node_text,
    option_value,
    spelled_receiverless_calls,
    string_value,
    symbol_names,
)
from woods.units import Dependency

# Model callbacks: before_/after_/around_ + these events (plus the *_commit shorthands).
_CALLBACK = re.compile(
    r"^(before|after|around)_(save|create|update|destroy|validation|commit|rollback|initialize|find|touch|create_commit|update_commit|destroy_commit|save_commit)$"
)
_FILTER = re.compile(r"^(prepend_|append_|skip_)?(before|after|around)_action$")
# Validation option keys that qualify a validation instead of naming a validator.
_VALIDATION_CONDITIONS = frozenset({"if", "unless", "on", "allow_nil", "allow_blank", "strict", "message"})
# Validators Rails ships; any other `validates … foo: …` key names a custom `FooValidator`.
_BUILTIN_VALIDATORS = frozenset(
    {
        "presence",
        "absence",
        "uniqueness",
        "length",
        "format",
        "inclusion",
        "exclusion",
        "numericality",
        "acceptance",
        "confirmation",
        "comparison",
        "associated",
    }
)
# Schema operations a migration records, and the bytes they begin with (where to look for them).
_MIGRATION_OPERATION = re.compile(
    r"^(create|drop|rename|change)_table$|^(add|remove|rename|change)_(column|index|reference|timestamps)"
)
_MIGRATION_OPERATION_SPELLING = re.compile(
    rb"(create|drop|rename|change)_table|(add|remove|rename|change)_(column|index|reference|timestamps)"
)
_RENDER = re.compile(rb"render")
# Per-action view candidates for implicit renders, most common first (the linker keeps what exists).
VIEW_SUFFIXES = (".html.erb", ".turbo_stream.erb", ".text.erb", ".json.jbuilder", ".erb")





def _association(
    call: Node, kind: str, draft: UnitDraft, source: bytes
) -> tuple[dict[str, object], Dependency | None]:
    args = call_arguments(call)
    names = symbol_names(args[:1], source)
    name = names[0] if names else ""
    options = hash_options(args, source)
    class_name = option_value(options, "class_name", source)
    polymorphic = option_value(options, "polymorphic", source) is True
    entry: dict[str, object] = {
        "type": kind,
        "name": name,
        "class_name": class_name,
        "through": option_value(options, "through", source),
        "polymorphic": polymorphic,
        "dependent": option_value(options, "dependent", source),
        "as": option_value(options, "as", source),
        "line": line_number(call),
    }
    if polymorphic or not name:
        return entry, None
    if isinstance(class_name, str) and class_name:
        target = class_name
    else:
        target = camelize(singularize(name) if kind in ("has_many", "has_and_belongs_to_many") else name)
    absolute = target.startswith("::")
    target = target.lstrip(":")
    entry["target"] = target
    lookup = lexical_candidates(target, absolute, draft.nesting)
    return entry, Dependency(target, kind, "model", lookup)


def _validations(
    call: Node, name: str, draft: UnitDraft, source: bytes
) -> tuple[list[dict[str, object]], list[Dependency]]:
    args = call_arguments(call)
    attributes = symbol_names([a for a in args if a.type != "pair" and a.type != "hash"], source)
    options = hash_options(args, source)
    conditions = {k: literal(v, source) for k, v in options.items() if k in _VALIDATION_CONDITIONS}
    entries: list[dict[str, object]] = []
    deps: list[Dependency] = []
    if name == "validate":
        for method in attributes:
            entries.append(
                {
                    "attributes": [],
                    "kind": "custom",
                    "method": method,
                    "options": conditions,
                    "line": line_number(call),
                }
            )
        return entries, deps
    if name.startswith("validates_") and name.endswith("_of"):
        kind = name[len("validates_") : -len("_of")]
        entries.append({"attributes": attributes, "kind": kind, "options": conditions, "line": line_number(call)})
        return entries, deps
    if name == "validates_with":
        return entries, deps
    for key, value in options.items():
        if key in _VALIDATION_CONDITIONS:
            continue
        entries.append(
            {
                "attributes": attributes,
                "kind": key,
                "options": literal(value, source),
                "conditions": conditions,
                "line": line_number(call),
            }
        )
        if key not in _BUILTIN_VALIDATORS:
            validator = camelize(key) + "Validator"
            deps.append(
                Dependency(
                    validator, "validates", "validator", lexical_candidates(validator, False, draft.nesting)
                )
            )
    return entries, deps


def _enum(call: Node, source: bytes) -> list[dict[str, object]]:
    args = call_arguments(call)
    found: list[dict[str, object]] = []
    if args and args[0].type == "simple_symbol":  # Rails 7: enum :status, { … }
        values = args[1] if len(args) > 1 else None
        found.append({"name": string_value(args[0], source), "values": _enum_values(values, source)})
        return found
    for key, value in hash_options(args, source).items():
        if key.startswith("_"):
            continue
        found.append({"name": key, "values": _enum_values(value, source)})
    return found


def _enum_values(node: Node | None, source: bytes) -> list[str]:
    if node is None:
        return []
    if node.type == "hash":
        return [
            str(string_value(p.child_by_field_name("key"), source) or "").rstrip(":")
            for p in node.named_children
            if p.type == "pair"
        ]
    return literal_list(node, source)


def model_metadata(draft: UnitDraft, source: bytes, *, is_model: bool = True) -> None:
    associations: list[dict[str, object]] = []
    validations: list[dict[str, object]] = []
    callbacks: list[dict[str, object]] = []
    scopes: list[str] = []
    enums: list[dict[str, object]] = []
    for call in draft.dsl_calls:
        name = call_name(call, source) or ""
        if name in ASSOCIATIONS:
            entry, dep = _association(call, name, draft, source)
            associations.append(entry)
            if dep is not None:
                draft.add_dep(call.start_byte, dep)
        elif name in ("validates", "validate", "validates_with") or (
            name.startswith("validates_") and name.endswith("_of")
        ):
            entries, deps = _validations(call, name, draft, source)
            validations.extend(entries)
            for dep in deps:
                draft.add_dep(call.start_byte, dep)
        elif _CALLBACK.match(name):
            callbacks.extend(_callbacks(call, name, source))
        elif name == "scope":
            scopes.extend(symbol_names(call_arguments(call)[:1], source))
        elif name == "enum":
            enums.extend(_enum(call, source))
    draft.metadata.update(
        associations=associations,
        validations=validations,
        callbacks=callbacks,
        scopes=scopes,
        enums=enums,
        concerns=mixins(draft, "include"),
    )
    if draft.superclass and draft.superclass not in ("ApplicationRecord", "ActiveRecord::Base"):
        draft.metadata["sti_parent"] = draft.superclass
    if is_model:
        draft.metadata["table_name"] = _table_name(draft, source)


def _table_name(draft: UnitDraft, source: bytes) -> str:
    if draft.body is not None:
        for node in draft.body.named_children:
            if (
                node.type == "assignment"
                and node_text(node.child_by_field_name("left"), source) == "self.table_name"
            ):
                value = string_value(node.child_by_field_name("right"), source)
                if value:
                    return value
    return pluralize(underscore(draft.identifier).replace("/", "_"))


def _callbacks(call: Node, name: str, source: bytes) -> list[dict[str, object]]:
    args = call_arguments(call)
    options = hash_options(args, source)
    methods = symbol_names([a for a in args if a.type not in ("pair", "hash")], source)
    common: dict[str, object] = {"kind": name, "line": line_number(call)}
    for key in ("if", "unless", "on", "only", "except", "prepend"):
        if key in options:
            common[key] = literal(options[key], source)
    if not methods:
        return [{**common, "method": None}]
    return [{**common, "method": method} for method in methods]


def controller_path(identifier: str) -> str:
    """`Admin::UsersController` → `admin/users` (the views directory and route controller)."""
    return underscore(identifier.removesuffix("Controller")).removesuffix("_")


def _public_actions(draft: UnitDraft) -> list[UnitDraft]:
    return [
        m for m in draft.methods if not m.singleton and m.visibility == "public" and m.name != "initialize"
    ]


def _view_dependency(folder: str, action: str) -> Dependency:
    candidates = tuple(f"app/views/{folder}/{action}{suffix}" for suffix in VIEW_SUFFIXES)
    return Dependency(candidates[0], "render", "view_template", candidates)


def _render_calls(actions: list[UnitDraft], source: bytes) -> list[Node]:
    """The receiver-less `render` calls of the actions' methods, in source order (one query)."""
    if not actions:
        return []
    root = actions[0].node
    while root.parent is not None:
        root = root.parent
    within = (min(a.node.start_byte for a in actions), max(a.node.end_byte for a in actions))
    return [node for node, name in spelled_receiverless_calls(root, source, _RENDER, within) if name == "render"]


def _explicit_renders(method: UnitDraft, folder: str, source: bytes, renders: list[Node]) -> None:
    """`render :edit` / `render "users/edit"` / `render template: …` in an action → view edges."""
    start, end = method.node.start_byte, method.node.end_byte
    for node in renders:
        if node.start_byte < start or node.end_byte > end:
            continue
        args = call_arguments(node)
        options = hash_options(args, source)
        value = string_value(args[0], source) if args and args[0].type != "pair" else None
        value = value or string_value(options.get("template") or options.get("action"), source)
        if not value:
            continue
        path = value if "/" in value else f"{folder}/{value}"
        method.add_dep(node.start_byte, _view_dependency(path.rsplit("/", 1)[0], path.rsplit("/", 1)[1]))


def controller_metadata(draft: UnitDraft, source: bytes) -> None:
    filters: list[dict[str, object]] = []
    for call in draft.dsl_calls:
        name = call_name(call, source) or ""
        if not _FILTER.match(name):
            continue
        args = call_arguments(call)
        options = hash_options(args, source)
        methods: Sequence[str | None] = symbol_names([a for a in args if a.type not in ("pair", "hash")], source) or [None]
        for method in methods:
            entry: dict[str, object] = {
                "kind": name,
                "method": method,
                "only": literal_list(options.get("only"), source),
                "except": literal_list(options.get("except"), source),
                "line": line_number(call),
            }
            for key in ("if", "unless"):
                if key in options:
                    entry[key] = literal(options[key], source)
            filters.append(entry)
    actions = _public_actions(draft)
    folder = controller_path(draft.identifier)
    renders = _render_calls(actions, source)
    for action in actions:
        action.metadata["action"] = True
        action.add_dep(action.node.start_byte, _view_dependency(folder, action.name))
        _explicit_renders(action, folder, source, renders)
    draft.metadata.update(actions=[a.name for a in actions], filters=filters, controller_path=folder)


def job_metadata(draft: UnitDraft, source: bytes) -> None:
    queue: object = None
    for call in draft.dsl_calls:
        name = call_name(call, source)
        args = call_arguments(call)
        if name == "queue_as" and args:
            queue = literal(args[0], source)
        elif name == "sidekiq_options":
            queue = option_value(hash_options(args, source), "queue", source) or queue
    perform = next((m for m in draft.methods if m.name == "perform" and not m.singleton), None)
    draft.metadata.update(queue=queue, perform_signature=perform.signature if perform else None)


def mailer_metadata(draft: UnitDraft, source: bytes) -> None:
    actions = _public_actions(draft)
    folder = underscore(draft.identifier)
    for action in actions:
        action.metadata["action"] = True
        action.add_dep(action.node.start_byte, _view_dependency(folder, action.name))
    defaults: dict[str, object] = {}
    for call in draft.dsl_calls:
        if call_name(call, source) == "default":
            defaults.update(
                {k: literal(v, source) for k, v in hash_options(call_arguments(call), source).items()}
            )
    draft.metadata.update(actions=[a.name for a in actions], defaults=defaults)


def _dsl_symbol_lists(draft: UnitDraft, source: bytes, wanted: str) -> list[str]:
    names: list[str] = []
    for call in draft.dsl_calls:
        if call_name(call, source) == wanted:
            names.extend(
                symbol_names(
                    call_arguments(call)[:1] if wanted in ("field", "argument") else call_arguments(call),
                    source,
                )
            )
    return names


def migration_metadata(draft: UnitDraft, rel: str, source: bytes) -> None:
    version = re.match(r"(\d+)_", rel.rsplit("/", 1)[-1])
    operations: list[dict[str, object]] = []
    for node, name in spelled_receiverless_calls(draft.node, source, _MIGRATION_OPERATION_SPELLING):
        if _MIGRATION_OPERATION.match(name):
            tables = symbol_names(call_arguments(node)[:1], source)
            operations.append(
                {"operation": name, "table": tables[0] if tables else None, "line": line_number(node)}
            )
    draft.metadata.update(version=version.group(1) if version else None, operations=operations)


def enrich_main(draft: UnitDraft, rails_type: str, rel: str, source: bytes) -> None:
    """Type the file's main class and add its type's metadata and edges."""
    draft.type = rails_type
    draft.metadata["public_methods"] = [m.identifier for m in draft.methods if m.visibility == "public"]
    if rails_type == "model":
        model_metadata(draft, source)
    elif rails_type == "controller":
        controller_metadata(draft, source)
    elif rails_type == "job":
        job_metadata(draft, source)
    elif rails_type == "mailer":
        mailer_metadata(draft, source)
    elif rails_type == "migration":
        migration_metadata(draft, rel, source)
    elif rails_type == "serializer":
        draft.metadata["attributes"] = _dsl_symbol_lists(draft, source, "attributes")
    elif rails_type.startswith("graphql"):
        draft.metadata["fields"] = _dsl_symbol_lists(draft, source, "field")
        draft.metadata["arguments"] = _dsl_symbol_lists(draft, source, "argument")
    elif rails_type == "concern":
        draft.metadata["included_block"] = any(call_name(c, source) == "included" for c in draft.dsl_calls)
        model_like = dsl_names(draft, source) & (set(ASSOCIATIONS) | {"scope", "validates"})
        if model_like:
            model_metadata(draft, source, is_model=False)


