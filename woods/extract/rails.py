"""Rails awareness on top of the Ruby walk: unit types, Rails metadata, routes, rake tasks.

Why: a Rails app's meaning lives in conventions — where a file sits (`app/models/…`), what a class
inherits (`< ApplicationRecord`) and which class-body DSL it calls (`has_many`, `before_action`).
The Ruby gem learns these by booting the app; this port reads them statically from the tree.

Guarantees:
* Rails types apply only to files of a Rails app. The app root is the longest registered root
  (`set_rails_roots` / `rails_roots`, fed by `detect_rails_roots` over the repository's file list:
  directories holding `config/application.rb` or an `app/` dir) or, without one, the prefix in front
  of an unmistakable Rails path segment (`app/<dir>/`, `config/routes.rb`, `config/initializers/`,
  `db/migrate/` …). `lib/`, `spec/` and `test/` files are Rails files only under a registered root,
  because a plain gem has the same directories.
* Rake tasks become `rake_task` units in every `.rake` file and `Rakefile` (a gem's tasks are tasks
  too): identifier = the namespaced task name (`billing:charge`).
* Only the file's main class (the one whose name matches the path, else the first class) takes the
  Rails type; nested classes stay `class`/`module`, methods stay `method`.
* File-profile units (`configuration`, `test_mapping`) and views use the path relative to the app
  root as identifier (`config/initializers/money.rb`), as the Ruby gem does.
* Routes: one `route` unit per generated route, identifier `VERB /path` (a repeated one gets `#2`,
  `#3` …), plus the route table in `FileExtraction.metadata["routes"]`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from woods.extract import base
from woods.extract.ruby import (
    LANGUAGE,
    RubyFile,
    UnitDraft,
    block_statements,
    call_arguments,
    call_block,
    call_name,
    collect_references,
    constant_path,
    dedup_dependencies,
    docstring_above,
    hash_options,
    lexical_candidates,
    literal,
    literal_list,
    node_text,
    string_value,
)
from woods.units import Dependency, Unit

# ----------------------------------------------------------------------------- inflection

# Irregular nouns Rails apps meet in table and association names (singular → plural).
_IRREGULAR: dict[str, str] = {
    "person": "people",
    "man": "men",
    "woman": "women",
    "child": "children",
    "mouse": "mice",
    "goose": "geese",
    "foot": "feet",
    "tooth": "teeth",
    "ox": "oxen",
    "datum": "data",
    "criterion": "criteria",
    "medium": "media",
}
_IRREGULAR_PLURAL = {plural: singular for singular, plural in _IRREGULAR.items()}
# Words whose singular and plural agree (ActiveSupport's uncountables, the common ones).
_UNCOUNTABLE = frozenset(
    {
        "equipment",
        "information",
        "rice",
        "money",
        "species",
        "series",
        "fish",
        "sheep",
        "jeans",
        "police",
        "news",
        "metadata",
        "feedback",
        "staff",
    }
)
# Ordered (pattern, replacement) singularization rules; the first that matches wins.
_SINGULAR_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"(quiz)zes$", r"\1"),
        (r"(matr)ices$", r"\1ix"),
        (r"(vert|ind)ices$", r"\1ex"),
        (r"(alias|status|campus|virus|bus)(es)?$", r"\1"),
        (r"(octop)(us|i)$", r"\1us"),
        (r"(cris|ax|test)es$", r"\1is"),
        (r"(analy|diagno|progno|synop|parenthe|the)ses$", r"\1sis"),
        (r"(shoe|canoe)s$", r"\1"),
        (r"(o)es$", r"\1"),
        (r"([ml])ice$", r"\1ouse"),
        (r"(x|ch|ss|sh|zz)es$", r"\1"),
        (r"(m)ovies$", r"\1ovie"),
        (r"([^aeiouy]|qu)ies$", r"\1y"),
        (r"([lr])ves$", r"\1f"),
        (r"(hive|tive)s$", r"\1"),
        (r"([^f])ves$", r"\1fe"),
        (r"(ss)$", r"\1"),
        (r"us$", "us"),
        (r"s$", ""),
    )
)


def singularize(word: str) -> str:
    """English singular of a lower/snake-case word (`categories` → `category`, `people` → `person`)."""
    head, _, last = word.rpartition("_")
    prefix = f"{head}_" if head else ""
    if last in _UNCOUNTABLE:
        return word
    if last in _IRREGULAR_PLURAL:
        return prefix + _IRREGULAR_PLURAL[last]
    for pattern, replacement in _SINGULAR_RULES:
        if pattern.search(last):
            return prefix + pattern.sub(replacement, last, count=1)
    return word


def pluralize(word: str) -> str:
    """English plural of a snake-case word (`profile` → `profiles`, `company` → `companies`)."""
    head, _, last = word.rpartition("_")
    prefix = f"{head}_" if head else ""
    if last in _UNCOUNTABLE:
        return word
    if last in _IRREGULAR:
        return prefix + _IRREGULAR[last]
    if re.search(r"[^aeiouy]y$", last):
        return prefix + last[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", last):
        return prefix + last + "es"
    return prefix + last + "s"


def camelize(path: str) -> str:
    """`billing/line_item` → `Billing::LineItem` (no acronym table: `api` → `Api`)."""
    segments = [s for s in path.strip("/").split("/") if s]
    return "::".join(
        "".join(part[:1].upper() + part[1:] for part in seg.split("_") if part) for seg in segments
    )


def underscore(constant: str) -> str:
    """`Admin::UsersController` → `admin/users_controller`."""
    parts = []
    for segment in constant.split("::"):
        spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", segment)
        spaced = re.sub(r"([a-z\d])([A-Z])", r"\1_\2", spaced)
        parts.append(spaced.lower())
    return "/".join(parts)


# ----------------------------------------------------------------------------- app roots

_roots_lock = threading.Lock()
_registered_roots: tuple[str, ...] = ()  # longest first, each "" or ending in "/"

# Path segments that only a Rails app has: they locate the app root without a registered root.
_RAILS_MARKER = re.compile(
    r"(?:^|/)(?=(?:app/[^/]+/|config/(?:routes\.rb$|routes/|application\.rb$|environments/|initializers/)|db/(?:migrate/|schema\.rb$|seeds\.rb$)))"
)


def _normalize_root(root: str) -> str:
    root = root.strip().strip("/")
    return f"{root}/" if root and root != "." else ""


def detect_rails_roots(paths: Iterable[str]) -> frozenset[str]:
    """Rails app roots among repository-relative `paths`: dirs holding config/application.rb or an
    `app/` dir with Ruby in it. Feed the result to `set_rails_roots` before extracting."""
    roots: set[str] = set()
    for path in paths:
        # An `app/` dir counts only when it holds Ruby (a JS project's `src/app/` is no Rails app).
        markers = (
            ("config/application.rb", "app/")
            if path.endswith((".rb", ".erb"))
            else ("config/application.rb",)
        )
        for marker in markers:
            index = path.find(marker)
            while index != -1:
                if index == 0 or path[index - 1] == "/":
                    roots.add(_normalize_root(path[:index]))
                index = path.find(marker, index + 1)
    return frozenset(roots)


def set_rails_roots(roots: Iterable[str] | None) -> None:
    """Tell the extractor which directories are Rails app roots (process-wide; None clears)."""
    global _registered_roots
    normalized = sorted({_normalize_root(r) for r in roots or ()}, key=lambda r: (-len(r), r))
    with _roots_lock:
        _registered_roots = tuple(normalized)


def registered_roots() -> tuple[str, ...]:
    """The roots `set_rails_roots` registered (to restore them later)."""
    return _registered_roots


@contextmanager
def rails_roots(roots: Iterable[str] | None) -> Iterator[None]:
    """`set_rails_roots` for the duration of a `with` block, restoring the previous roots after."""
    previous = _registered_roots
    set_rails_roots(roots)
    try:
        yield
    finally:
        set_rails_roots(previous)


@dataclass(frozen=True)
class RailsPath:
    """Where a file sits in its Rails app: `root` ("" or "dir/") and `rel` (path below the root)."""

    root: str
    rel: str


def locate(file_path: str) -> RailsPath | None:
    """The Rails app a file belongs to, or None when it is not in one."""
    for root in _registered_roots:
        if file_path.startswith(root):
            return RailsPath(root, file_path[len(root) :])
    match = _RAILS_MARKER.search(file_path)
    if match is None:
        return None
    root = file_path[: match.end()]
    return RailsPath(root, file_path[len(root) :])


def is_rake_file(file_path: str) -> bool:
    name = file_path.rsplit("/", 1)[-1]
    return name.endswith(".rake") or name in ("Rakefile", "rakefile", "Rakefile.rb")


# ----------------------------------------------------------------------------- classification

# app/<dir>/ → the unit type of that directory's main class (before superclass/DSL overrides).
APP_DIR_TYPES: dict[str, str] = {
    "models": "model",
    "controllers": "controller",
    "jobs": "job",
    "workers": "job",
    "sidekiq": "job",
    "mailers": "mailer",
    "services": "service",
    "serializers": "serializer",
    "policies": "policy",
    "validators": "validator",
    "helpers": "helper",
    "channels": "action_cable_channel",
    "components": "view_component",
    "middleware": "middleware",
    "middlewares": "middleware",
}
# app/graphql/<dir>/ → GraphQL unit type.
GRAPHQL_DIR_TYPES: dict[str, str] = {
    "types": "graphql_type",
    "mutations": "graphql_mutation",
    "resolvers": "graphql_resolver",
    "queries": "graphql_query",
}
# Superclass → type, checked before the directory (an ApplicationJob anywhere is a job).
SUPERCLASS_TYPES: dict[str, str] = {
    "ApplicationRecord": "model",
    "ActiveRecord::Base": "model",
    "ApplicationJob": "job",
    "ActiveJob::Base": "job",
    "ApplicationMailer": "mailer",
    "ActionMailer::Base": "mailer",
    "ActionController::Base": "controller",
    "ActionController::API": "controller",
    "ApplicationController": "controller",
    "ActiveModel::EachValidator": "validator",
    "ActiveModel::Validator": "validator",
    "ApplicationCable::Channel": "action_cable_channel",
    "ActionCable::Channel::Base": "action_cable_channel",
    "ApplicationCable::Connection": "action_cable_channel",
    "ActionCable::Connection::Base": "action_cable_channel",
    "ViewComponent::Base": "view_component",
    "ApplicationPolicy": "pundit_policy",
    "ActiveModel::Serializer": "serializer",
    "ActiveRecord::Migration": "migration",
    "GraphQL::Schema::Object": "graphql_type",
    "GraphQL::Schema::Mutation": "graphql_mutation",
    "GraphQL::Schema::RelayClassicMutation": "graphql_mutation",
    "GraphQL::Schema::Resolver": "graphql_resolver",
}
# Mixins that make a class a background job wherever it lives.
JOB_MIXINS = frozenset({"Sidekiq::Job", "Sidekiq::Worker"})
# Pundit's conventional predicate methods: a policy defining them is a Pundit policy.
PUNDIT_PREDICATES = frozenset({"index?", "show?", "create?", "new?", "update?", "edit?", "destroy?"})
# Superclasses that make an app/models class something other than a model (exceptions, structs).
_NON_MODEL_SUPER = re.compile(r"(Error|Exception|Struct|Data)$")
ASSOCIATIONS = ("belongs_to", "has_many", "has_one", "has_and_belongs_to_many")
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
# Per-action view candidates for implicit renders, most common first (the linker keeps what exists).
VIEW_SUFFIXES = (".html.erb", ".turbo_stream.erb", ".text.erb", ".json.jbuilder", ".erb")


def expected_constant(rel: str) -> str | None:
    """The constant Zeitwerk expects a file to define (`app/models/billing/invoice.rb` → `Billing::Invoice`)."""
    if not rel.endswith(".rb"):
        return None
    stem = rel[:-3]
    parts = stem.split("/")
    if parts[0] == "app" and len(parts) > 2:
        parts = parts[2:]
        if parts and parts[0] == "concerns" and len(parts) > 1:
            parts = parts[1:]
    elif parts[0] == "lib" and len(parts) > 1:
        parts = parts[1:]
    elif parts[0] == "db" and len(parts) > 2 and parts[1] == "migrate":
        parts = [re.sub(r"^\d+_", "", parts[-1])]
    else:
        return None
    return camelize("/".join(parts)) or None


def primary_draft(drafts: list[UnitDraft], rel: str) -> UnitDraft | None:
    """The class (or module) a Rails file is about: the path's constant, else the first class."""
    namespaces = [d for d in drafts if d.kind != "method"]
    expected = expected_constant(rel)
    for draft in namespaces:
        if draft.identifier == expected:
            return draft
    for draft in namespaces:
        if draft.kind == "class":
            return draft
    for draft in namespaces:
        if draft.methods or draft.dsl_calls:
            return draft
    return None


def _mixins(draft: UnitDraft, via: str) -> list[str]:
    return [dep.target for _, dep in draft.deps if dep.via == via]


def is_concern(draft: UnitDraft) -> bool:
    return draft.kind == "module" and "ActiveSupport::Concern" in _mixins(draft, "extend")


def _superclass_type(draft: UnitDraft) -> str | None:
    superclass = draft.superclass or ""
    if superclass in SUPERCLASS_TYPES:
        return SUPERCLASS_TYPES[superclass]
    if superclass.startswith("ActiveRecord::Migration"):
        return "migration"
    if superclass.startswith("Phlex::"):
        return "component"
    if superclass.startswith("GraphQL::Schema::"):
        return "graphql_type"
    return None


def _policy_type(draft: UnitDraft) -> str:
    names = {m.name for m in draft.methods}
    if (
        draft.superclass == "ApplicationPolicy"
        or draft.identifier == "ApplicationPolicy"
        or names & PUNDIT_PREDICATES
    ):
        return "pundit_policy"
    return "policy"


def _looks_like_middleware(draft: UnitDraft) -> bool:
    by_name = {m.name: m for m in draft.methods if not m.singleton}
    init, call = by_name.get("initialize"), by_name.get("call")
    if init is None or call is None:
        return False
    params = init.metadata.get("parameters") or []
    return bool(params) and str(params[0]) == "app" and len(call.metadata.get("parameters") or []) == 1


def _dsl_names(draft: UnitDraft, source: bytes) -> set[str]:
    return {call_name(call, source) or "" for call in draft.dsl_calls}


def classify(draft: UnitDraft, rel: str, source: bytes) -> str | None:
    """The Rails unit type of a file's main class/module, or None to keep `class`/`module`."""
    parts = rel.split("/")
    if "concerns" in parts[:-1] or is_concern(draft):
        return "concern"
    if draft.kind == "class" and JOB_MIXINS & set(_mixins(draft, "include")):
        return "job"
    by_super = _superclass_type(draft)
    if parts[0] == "db" and len(parts) > 2 and parts[1] == "migrate":
        return "migration"
    if parts[0] == "app" and len(parts) > 2:
        directory = parts[1]
        if directory == "graphql":
            if len(parts) > 3 and parts[2] in GRAPHQL_DIR_TYPES:
                return GRAPHQL_DIR_TYPES[parts[2]]
            return by_super if by_super and by_super.startswith("graphql") else "graphql_type"
        if directory == "policies":
            return _policy_type(draft)
        if directory == "models":
            return _model_or_poro(draft, by_super, source)
        if directory == "components":
            return by_super if by_super in ("component", "view_component") else "view_component"
        if by_super is not None:
            return by_super
        if directory in APP_DIR_TYPES:
            return APP_DIR_TYPES[directory]
        if "middleware" in parts or _looks_like_middleware(draft):
            return "middleware"
        return "poro"
    if by_super is not None and parts[0] == "lib":
        return by_super
    if parts[0] == "lib":
        if "middleware" in parts or _looks_like_middleware(draft):
            return "middleware"
        return "lib"
    if parts[0] == "config" and _looks_like_middleware(draft):
        return "middleware"
    return None


def _model_or_poro(draft: UnitDraft, by_super: str | None, source: bytes) -> str:
    if by_super == "model":
        return "model"
    if draft.kind == "class" and draft.superclass and not _NON_MODEL_SUPER.search(draft.superclass):
        return "model"  # STI: `Admin < User` — a model subclass of another model
    if _dsl_names(draft, source) & set(ASSOCIATIONS):
        return "model"
    return by_super or "poro"


# ----------------------------------------------------------------------------- metadata


def _symbols(args: list[Node], source: bytes) -> list[str]:
    names = []
    for arg in args:
        if arg.type in ("simple_symbol", "string", "delimited_symbol"):
            value = string_value(arg, source)
            if value is not None:
                names.append(value)
        elif arg.type in ("array", "symbol_array", "string_array"):
            names.extend(literal_list(arg, source))
    return names


def _option(options: dict[str, Node], key: str, source: bytes) -> object:
    return literal(options.get(key), source) if key in options else None


def _line(node: Node) -> int:
    return node.start_point[0] + 1


def _association(
    call: Node, kind: str, draft: UnitDraft, source: bytes
) -> tuple[dict[str, object], Dependency | None]:
    args = call_arguments(call)
    names = _symbols(args[:1], source)
    name = names[0] if names else ""
    options = hash_options(args, source)
    class_name = _option(options, "class_name", source)
    polymorphic = _option(options, "polymorphic", source) is True
    entry: dict[str, object] = {
        "type": kind,
        "name": name,
        "class_name": class_name,
        "through": _option(options, "through", source),
        "polymorphic": polymorphic,
        "dependent": _option(options, "dependent", source),
        "as": _option(options, "as", source),
        "line": _line(call),
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
    attributes = _symbols([a for a in args if a.type != "pair" and a.type != "hash"], source)
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
                    "line": _line(call),
                }
            )
        return entries, deps
    if name.startswith("validates_") and name.endswith("_of"):
        kind = name[len("validates_") : -len("_of")]
        entries.append({"attributes": attributes, "kind": kind, "options": conditions, "line": _line(call)})
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
                "line": _line(call),
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
            scopes.extend(_symbols(call_arguments(call)[:1], source))
        elif name == "enum":
            enums.extend(_enum(call, source))
    draft.metadata.update(
        associations=associations,
        validations=validations,
        callbacks=callbacks,
        scopes=scopes,
        enums=enums,
        concerns=_mixins(draft, "include"),
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
    methods = _symbols([a for a in args if a.type not in ("pair", "hash")], source)
    common: dict[str, object] = {"kind": name, "line": _line(call)}
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


def _explicit_renders(method: UnitDraft, folder: str, source: bytes) -> None:
    """`render :edit` / `render "users/edit"` / `render template: …` in an action → view edges."""
    for node in base.walk(method.node):
        if node.type != "call" or node.child_by_field_name("receiver") is not None:
            continue
        if call_name(node, source) != "render":
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
        methods = _symbols([a for a in args if a.type not in ("pair", "hash")], source) or [None]
        for method in methods:
            entry: dict[str, object] = {
                "kind": name,
                "method": method,
                "only": literal_list(options.get("only"), source),
                "except": literal_list(options.get("except"), source),
                "line": _line(call),
            }
            for key in ("if", "unless"):
                if key in options:
                    entry[key] = literal(options[key], source)
            filters.append(entry)
    actions = _public_actions(draft)
    folder = controller_path(draft.identifier)
    for action in actions:
        action.metadata["action"] = True
        action.add_dep(action.node.start_byte, _view_dependency(folder, action.name))
        _explicit_renders(action, folder, source)
    draft.metadata.update(actions=[a.name for a in actions], filters=filters, controller_path=folder)


def job_metadata(draft: UnitDraft, source: bytes) -> None:
    queue: object = None
    for call in draft.dsl_calls:
        name = call_name(call, source)
        args = call_arguments(call)
        if name == "queue_as" and args:
            queue = literal(args[0], source)
        elif name == "sidekiq_options":
            queue = _option(hash_options(args, source), "queue", source) or queue
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
                _symbols(
                    call_arguments(call)[:1] if wanted in ("field", "argument") else call_arguments(call),
                    source,
                )
            )
    return names


def migration_metadata(draft: UnitDraft, rel: str, source: bytes) -> None:
    version = re.match(r"(\d+)_", rel.rsplit("/", 1)[-1])
    operations: list[dict[str, object]] = []
    for node in base.walk(draft.node):
        if node.type != "call" or node.child_by_field_name("receiver") is not None:
            continue
        name = call_name(node, source) or ""
        if re.match(
            r"^(create|drop|rename|change)_table$|^(add|remove|rename|change)_(column|index|reference|timestamps)",
            name,
        ):
            tables = _symbols(call_arguments(node)[:1], source)
            operations.append(
                {"operation": name, "table": tables[0] if tables else None, "line": _line(node)}
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
        model_like = _dsl_names(draft, source) & (set(ASSOCIATIONS) | {"scope", "validates"})
        if model_like:
            model_metadata(draft, source, is_model=False)


# ----------------------------------------------------------------------------- file-level units


def _file_unit(
    walked: RubyFile,
    identifier: str,
    unit_type: str,
    metadata: dict[str, object],
    extra: tuple[Dependency, ...] = (),
) -> Unit:
    source = walked.source
    text = source.decode("utf-8", "replace")
    deps = collect_references(walked.root, source, (), walked.file_path)
    deps += [(0, d) for d in extra]
    first_code = next((c for c in walked.root.named_children if c.type != "comment"), None)
    docstring = docstring_above(first_code.start_point[0], _top_comments(walked)) if first_code else None
    line_end = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    return Unit(
        identifier=identifier,
        type=unit_type,
        language=LANGUAGE,
        file_path=walked.file_path,
        line_start=1,
        line_end=line_end,
        source_code=text,
        namespace=None,
        signature=None,
        docstring=docstring,
        parent=None,
        metadata=metadata,
        dependencies=dedup_dependencies(deps),
    )


def _top_comments(walked: RubyFile) -> dict[int, str]:
    rows: dict[int, str] = {}
    for child in walked.root.children:
        if child.type == "comment" and child.start_point[1] == 0:
            rows[child.start_point[0]] = node_text(child, walked.source)
    return rows


def configuration_unit(walked: RubyFile, rel: str) -> Unit:
    settings: list[str] = []
    for node in base.walk(walked.root):
        if node.type in ("assignment", "operator_assignment"):
            left = node_text(node.child_by_field_name("left"), walked.source)
            at = 0 if left.startswith("config.") else left.find(".config.") + 1
            setting = left[at:] if at >= 0 and left[at:].startswith("config.") else None
            if setting and setting not in settings:
                settings.append(setting)
    kind = rel.split("/")[1] if rel.count("/") >= 2 else "application"
    return _file_unit(walked, rel, "configuration", {"config_kind": kind, "settings": settings})


# Spec/test directories whose files test controllers (request/system specs name the resource).
_CONTROLLER_TEST_DIRS = frozenset({"requests", "request", "controllers", "system", "features", "integration"})


def guess_tested_unit(rel: str) -> str | None:
    """`spec/models/billing/invoice_spec.rb` → `Billing::Invoice`; request specs → `…Controller`."""
    match = re.match(r"^(?:spec|test)/(?:(\w+)/)?(.*?)(?:_spec|_test)\.rb$", rel)
    if match is None:
        return None
    directory, rest = match.group(1), match.group(2)
    if directory in (None, "lib", "unit"):
        return camelize(rest) or None
    if directory in _CONTROLLER_TEST_DIRS:
        name = camelize(rest)
        return name if name.endswith("Controller") else f"{name}Controller"
    return camelize(rest) or None


def _described_constant(walked: RubyFile) -> str | None:
    """The constant of the first top-level `describe Foo` / `RSpec.describe Foo`, if any."""
    for node in walked.root.named_children:
        if node.type == "call" and call_name(node, walked.source) == "describe":
            args = call_arguments(node)
            resolved = constant_path(args[0], walked.source) if args else None
            if resolved is not None:
                return resolved[0]
    for draft in walked.drafts:
        if draft.kind == "class" and draft.superclass:
            stem = draft.identifier.removesuffix("Test")
            if stem != draft.identifier:
                return stem
    return None


def test_mapping_unit(walked: RubyFile, rel: str) -> Unit:
    tested = _described_constant(walked) or guess_tested_unit(rel)
    extra: list[Dependency] = []
    if tested:
        extra.append(Dependency(tested, "tests", None, (tested,)))
    framework = "rspec" if rel.startswith("spec/") else "minitest"
    return _file_unit(walked, rel, "test_mapping", {"tests": tested, "framework": framework}, tuple(extra))


def schema_units(walked: RubyFile) -> list[Unit]:
    """db/schema.rb: one `database_table` unit per `create_table`, with its columns."""
    units: list[Unit] = []
    source = walked.source
    for node in base.walk(walked.root):
        if node.type != "call" or call_name(node, source) != "create_table":
            continue
        tables = _symbols(call_arguments(node)[:1], source)
        if not tables:
            continue
        columns: list[dict[str, object]] = []
        for statement in block_statements(call_block(node)):
            if statement.type == "call" and statement.child_by_field_name("receiver") is not None:
                kind = call_name(statement, source)
                names = _symbols(call_arguments(statement)[:1], source)
                if kind and kind != "index" and names:
                    columns.append({"name": names[0], "type": kind})
        start, end = base.line_range(node)
        model = camelize(singularize(tables[0]))
        units.append(
            Unit(
                identifier=tables[0],
                type="database_table",
                language=LANGUAGE,
                file_path=walked.file_path,
                line_start=start,
                line_end=end,
                source_code=node_text(node, source),
                signature=node_text(node, source).split("\n", 1)[0].strip(),
                metadata={"columns": columns, "model": model},
                dependencies=(Dependency(model, "table_of", "model", (model,)),),
            )
        )
    return units


# ----------------------------------------------------------------------------- rake tasks


def _task_name_and_prereqs(args: list[Node], source: bytes) -> tuple[str | None, list[str], list[str]]:
    """(name, prerequisites, arguments) of `task :x`, `task x: :dep`, `task :x, [:a] => :dep`."""
    if not args:
        return None, [], []
    first = args[0]
    pairs = [first] if first.type == "pair" else (first.named_children if first.type == "hash" else [])
    if pairs and pairs[0].type == "pair":
        key = string_value(pairs[0].child_by_field_name("key"), source)
        return (
            (key.rstrip(":") if key else None),
            literal_list(pairs[0].child_by_field_name("value"), source),
            [],
        )
    name = string_value(first, source)
    task_args: list[str] = []
    prereqs: list[str] = []
    for arg in args[1:]:
        if arg.type == "array":
            task_args = literal_list(arg, source)
        inner = [arg] if arg.type == "pair" else (arg.named_children if arg.type == "hash" else [])
        for pair in inner:
            if pair.type == "pair":
                task_args = literal_list(pair.child_by_field_name("key"), source)
                prereqs = literal_list(pair.child_by_field_name("value"), source)
    return name, prereqs, task_args


def rake_task_units(walked: RubyFile) -> list[Unit]:
    units: list[Unit] = []
    source = walked.source

    def visit(statements: list[Node], namespace: list[str]) -> None:
        description: str | None = None
        for node in statements:
            if node.type != "call" or node.child_by_field_name("receiver") is not None:
                if node.type != "comment":
                    description = None  # a `desc` describes only the task right after it
                continue
            name = call_name(node, source)
            args = call_arguments(node)
            if name == "desc":
                description = string_value(args[0], source) if args else None
                continue
            if name == "namespace":
                label = string_value(args[0], source) if args else None
                visit(block_statements(call_block(node)), [*namespace, label] if label else namespace)
            elif name in ("task", "multitask"):
                task, prereqs, task_args = _task_name_and_prereqs(args, source)
                if task:
                    units.append(
                        _task_unit(
                            walked,
                            node,
                            ":".join([*namespace, task]),
                            namespace,
                            description,
                            prereqs,
                            task_args,
                        )
                    )
            elif call_block(node) is not None:
                visit(block_statements(call_block(node)), namespace)
            description = None

    visit([c for c in walked.root.named_children], [])
    return units


def _task_unit(
    walked: RubyFile,
    node: Node,
    identifier: str,
    namespace: list[str],
    description: str | None,
    prereqs: list[str],
    task_args: list[str],
) -> Unit:
    source = walked.source
    start, end = base.line_range(node)
    deps: list[tuple[int, Dependency]] = []
    for prereq in prereqs:
        scoped = ":".join([*namespace, prereq]) if namespace and ":" not in prereq else prereq
        deps.append(
            (
                node.start_byte,
                Dependency(prereq, "prerequisite", "rake_task", tuple(dict.fromkeys([scoped, prereq]))),
            )
        )
    block = call_block(node)
    if block is not None:
        deps += collect_references(block, source, (), walked.file_path)
    return Unit(
        identifier=identifier,
        type="rake_task",
        language=LANGUAGE,
        file_path=walked.file_path,
        line_start=start,
        line_end=end,
        source_code=node_text(node, source),
        namespace=":".join(namespace) or None,
        signature=node_text(node, source).split("\n", 1)[0].strip(),
        docstring=description,
        parent=None,
        metadata={
            "task_name": identifier,
            "description": description,
            "prerequisites": prereqs,
            "arguments": task_args,
        },
        dependencies=dedup_dependencies(deps),
    )


# ----------------------------------------------------------------------------- routes

# The seven resourceful actions, in the order `rails routes` lists them: (action, verb, suffix).
# suffix: "" collection path, "/new", ":member" the member path, ":member/edit".
_PLURAL_ACTIONS = (
    ("index", "GET", ""),
    ("create", "POST", ""),
    ("new", "GET", "/new"),
    ("edit", "GET", ":member/edit"),
    ("show", "GET", ":member"),
    ("update", "PATCH", ":member"),
    ("update", "PUT", ":member"),
    ("destroy", "DELETE", ":member"),
)
_SINGULAR_ACTIONS = (
    ("new", "GET", "/new"),
    ("edit", "GET", "/edit"),
    ("show", "GET", ""),
    ("update", "PATCH", ""),
    ("update", "PUT", ""),
    ("destroy", "DELETE", ""),
    ("create", "POST", ""),
)
HTTP_VERBS = {
    "get": "GET",
    "post": "POST",
    "patch": "PATCH",
    "put": "PUT",
    "delete": "DELETE",
    "options": "OPTIONS",
    "head": "HEAD",
}


@dataclass(frozen=True)
class _Resource:
    controller: str  # relative to the scope module, e.g. "users"
    collection_path: str  # "/users"
    member_path: str  # "/users/:id"
    nested_path: str  # "/users/:user_id"
    collection_name: str  # "users" (with name prefix)
    member_name: str  # "user"


@dataclass(frozen=True)
class _RouteScope:
    path: str = ""
    module: str = ""
    name: str = ""
    controller: str | None = None
    resource: _Resource | None = None
    mode: str | None = None  # "member" | "collection" | None (nested)


@dataclass
class _Route:
    verb: str
    path: str
    controller: str | None
    action: str | None
    name: str | None
    node: Node
    target: str | None = None  # a mounted app's constant


@dataclass
class _RouteContext:
    source: bytes
    routes: list[_Route] = field(default_factory=list)
    concerns: dict[str, Node] = field(default_factory=dict)


def _join_path(prefix: str, segment: str) -> str:
    segment = segment.strip("/")
    if not segment:
        return prefix or "/"
    return f"{prefix.rstrip('/')}/{segment}"


def _join_name(*parts: str | None) -> str | None:
    cleaned = [p.strip("_") for p in parts if p]
    joined = "_".join(p for p in cleaned if p)
    return joined or None


def _qualified_controller(scope: _RouteScope, controller: str | None) -> str | None:
    if controller is None:
        return None
    if controller.startswith("/"):
        return controller.strip("/")
    return f"{scope.module}/{controller}" if scope.module else controller


def _target(value: str | None) -> tuple[str | None, str | None]:
    if value and "#" in value:
        controller, action = value.split("#", 1)
        return controller or None, action or None
    return None, None


def _scope_for_options(scope: _RouteScope, options: dict[str, Node], source: bytes) -> _RouteScope:
    module = _option(options, "module", source)
    path = _option(options, "path", source)
    name = _option(options, "as", source)
    controller = _option(options, "controller", source)
    return replace(
        scope,
        path=_join_path(scope.path, str(path)) if isinstance(path, str) else scope.path,
        module=f"{scope.module}/{module}".strip("/") if isinstance(module, str) else scope.module,
        name=_join_name(scope.name, name) or "" if isinstance(name, str) else scope.name,
        controller=controller if isinstance(controller, str) else scope.controller,
    )


def _resource_base(scope: _RouteScope) -> tuple[str, str]:
    """(path prefix, name prefix) for a resource declared in `scope` (nested under its parent)."""
    parent = scope.resource
    if parent is None:
        return scope.path, scope.name
    if scope.mode == "member":
        return parent.member_path, _join_name(parent.member_name) or ""
    if scope.mode == "collection":
        return parent.collection_path, parent.collection_name
    return parent.nested_path, parent.member_name


def _resources(call: Node, scope: _RouteScope, ctx: _RouteContext, singular: bool) -> None:
    source = ctx.source
    args = call_arguments(call)
    options = hash_options(args, source)
    names = _symbols([a for a in args if a.type not in ("pair", "hash")], source)
    only = set(literal_list(options.get("only"), source)) if "only" in options else None
    except_ = set(literal_list(options.get("except"), source))
    param = _option(options, "param", source) or "id"
    path_option = _option(options, "path", source)
    alias = _option(options, "as", source)
    module = _option(options, "module", source)
    controller_option = _option(options, "controller", source)
    base_path, base_name = _resource_base(scope)
    inner_scope = scope
    if isinstance(module, str):
        inner_scope = replace(scope, module=f"{scope.module}/{module}".strip("/"))
    for name in names:
        plural_name = name if not singular else pluralize(name)
        controller = str(controller_option) if isinstance(controller_option, str) else plural_name
        segment = str(path_option) if isinstance(path_option, str) else name
        route_name = str(alias) if isinstance(alias, str) else name
        collection_path = _join_path(base_path, segment)
        member_name = _join_name(base_name, route_name if singular else singularize(route_name)) or ""
        collection_name = _join_name(base_name, route_name) or ""
        if singular:
            member_path = collection_path
            nested_path = collection_path
        else:
            member_path = f"{collection_path}/:{param}"
            nested_path = f"{collection_path}/:{singularize(name)}_{param}"
        resource = _Resource(
            controller, collection_path, member_path, nested_path, collection_name, member_name
        )
        qualified = _qualified_controller(inner_scope, controller)
        table = _SINGULAR_ACTIONS if singular else _PLURAL_ACTIONS
        for action, verb, suffix in table:
            if (only is not None and action not in only) or action in except_:
                continue
            path, route_name_for = _standard_route(resource, suffix, action, singular)
            ctx.routes.append(_Route(verb, path, qualified, action, route_name_for, call))
        resource_scope = replace(inner_scope, resource=resource, mode=None, controller=None)
        for concern in literal_list(options.get("concerns"), source):
            if concern in ctx.concerns:
                _interpret(block_statements(ctx.concerns[concern]), resource_scope, ctx)
        block = call_block(call)
        if block is not None:
            _interpret(block_statements(block), resource_scope, ctx)


def _standard_route(resource: _Resource, suffix: str, action: str, singular: bool) -> tuple[str, str | None]:
    if suffix.startswith(":member"):
        path = resource.member_path + suffix[len(":member") :]
    else:
        path = resource.collection_path + suffix
    if action == "new":
        name = _join_name("new", resource.member_name)
    elif action == "edit":
        name = _join_name("edit", resource.member_name)
    elif singular or suffix.startswith(":member"):
        name = resource.member_name
    else:
        name = resource.collection_name
    # Only the first route of each path carries the name (as `rails routes` prints it).
    if action in ("create", "update", "destroy"):
        name = None
    return path, name


def _verb_route(call: Node, verbs: list[str], scope: _RouteScope, ctx: _RouteContext) -> None:
    source = ctx.source
    args = call_arguments(call)
    options = hash_options(args, source)
    path_value: str | None = None
    to_value: str | None = None
    for arg in args:
        if arg.type == "pair":
            key = arg.child_by_field_name("key")
            if key is not None and key.type in ("string", "simple_symbol") and path_value is None:
                path_value = string_value(key, source)  # `get "/login" => "sessions#new"`
                to_value = string_value(arg.child_by_field_name("value"), source)
        elif path_value is None:
            path_value = string_value(arg, source)
    to_option = options.get("to")
    if to_value is None and to_option is not None:
        to_value = string_value(to_option, source)
    controller, action = _target(to_value)
    controller = controller or _option_str(options, "controller", source)
    action = action or _option_str(options, "action", source)
    resource = scope.resource
    on = _option_str(options, "on", source)
    if resource is not None and on in ("member", "collection"):
        scope = replace(scope, mode=on)  # `post :pay, on: :member`
    is_symbol = bool(args) and args[0].type == "simple_symbol"
    segment = path_value or ""
    if resource is not None and scope.mode is not None:
        base_path = resource.member_path if scope.mode == "member" else resource.collection_path
        owner_name = resource.member_name if scope.mode == "member" else resource.collection_name
        path = _join_path(base_path, segment)
        default_name = _join_name(segment, owner_name) if segment and ":" not in segment else None
        controller = controller or scope.controller or resource.controller
    elif resource is not None:
        path = _join_path(resource.nested_path, segment)
        default_name = _join_name(resource.member_name, segment) if segment and ":" not in segment else None
        controller = controller or scope.controller or resource.controller
    else:
        path = _join_path(scope.path, segment)
        clean = re.sub(r"[^a-zA-Z0-9]+", "_", segment).strip("_")
        default_name = (
            _join_name(scope.name, clean) if segment and ":" not in segment and "*" not in segment else None
        )
        controller = controller or scope.controller
        if controller is None and to_option is None and "/" in segment.strip("/") and ":" not in segment:
            controller, _, action_guess = segment.strip("/").rpartition("/")
            action = action or action_guess
    if action is None and (is_symbol or (segment and "/" not in segment.strip("/"))):
        action = re.sub(r"[^a-zA-Z0-9_]", "", segment.strip("/")) or None
    alias = _option(options, "as", source)
    name = (
        _join_name(scope.name if resource is None else None, str(alias))
        if isinstance(alias, str)
        else default_name
    )
    if resource is not None and isinstance(alias, str):
        name = _join_name(
            resource.member_name if scope.mode != "collection" else resource.collection_name, str(alias)
        )
    qualified = _qualified_controller(scope, controller)
    for verb in verbs:
        ctx.routes.append(_Route(verb, path, qualified, action, name, call))
        name = None


def _option_str(options: dict[str, Node], key: str, source: bytes) -> str | None:
    value = _option(options, key, source)
    return value if isinstance(value, str) else None


def _root_route(call: Node, scope: _RouteScope, ctx: _RouteContext) -> None:
    source = ctx.source
    args = call_arguments(call)
    options = hash_options(args, source)
    value = string_value(args[0], source) if args and args[0].type == "string" else None
    value = value or _option_str(options, "to", source)
    controller, action = _target(value)
    controller = controller or _option_str(options, "controller", source)
    action = action or _option_str(options, "action", source)
    path = scope.path or "/"
    name = _join_name(scope.name, "root")
    ctx.routes.append(_Route("GET", path, _qualified_controller(scope, controller), action, name, call))


def _mount_route(call: Node, scope: _RouteScope, ctx: _RouteContext) -> None:
    source = ctx.source
    args = call_arguments(call)
    options = hash_options(args, source)
    target_node: Node | None = None
    at: str | None = _option_str(options, "at", source)
    for arg in args:
        if arg.type == "pair" and arg.child_by_field_name("key") is not None:
            key = arg.child_by_field_name("key")
            if key is not None and key.type not in ("hash_key_symbol", "simple_symbol"):
                target_node = key
                at = string_value(arg.child_by_field_name("value"), source) or at
        elif target_node is None and arg.type not in ("pair", "hash"):
            target_node = arg
    target = _mounted_constant(target_node, source)
    name = _option_str(options, "as", source)
    path = _join_path(scope.path, at or "")
    ctx.routes.append(_Route("MOUNT", path, None, None, name, call, target))


def _mounted_constant(node: Node | None, source: bytes) -> str | None:
    current = node
    while current is not None and current.type == "call":
        current = current.child_by_field_name("receiver")
    resolved = constant_path(current, source)
    return resolved[0] if resolved else None


def _interpret(statements: list[Node], scope: _RouteScope, ctx: _RouteContext) -> None:
    source = ctx.source
    for node in statements:
        if node.type != "call":
            continue
        name = call_name(node, source) or ""
        args = call_arguments(node)
        options = hash_options(args, source)
        block = call_block(node)
        if name in ("resources", "resource"):
            _resources(node, scope, ctx, singular=name == "resource")
        elif name in HTTP_VERBS:
            _verb_route(node, [HTTP_VERBS[name]], scope, ctx)
        elif name == "match":
            verbs = [v.upper() for v in literal_list(options.get("via"), source)] or ["GET"]
            verbs = ["GET", "POST", "PATCH", "PUT", "DELETE"] if verbs == ["ALL"] else verbs
            _verb_route(node, verbs, scope, ctx)
        elif name == "root":
            _root_route(node, scope, ctx)
        elif name == "mount":
            _mount_route(node, scope, ctx)
        elif name == "namespace" and args:
            label = string_value(args[0], source) or ""
            inner = replace(
                scope,
                path=_join_path(scope.path, label),
                module=f"{scope.module}/{label}".strip("/"),
                name=_join_name(scope.name, label) or "",
                resource=None,
                mode=None,
            )
            inner = _scope_for_options(inner, options, source) if options else inner
            _interpret(block_statements(block), inner, ctx)
        elif name == "scope":
            inner = scope
            positional = [a for a in args if a.type not in ("pair", "hash")]
            if positional:
                segment = string_value(positional[0], source)
                inner = replace(inner, path=_join_path(inner.path, segment or ""))
            inner = _scope_for_options(inner, options, source)
            _interpret(block_statements(block), inner, ctx)
        elif name == "controller" and args:
            inner = replace(scope, controller=string_value(args[0], source))
            _interpret(block_statements(block), inner, ctx)
        elif name in ("member", "collection") and scope.resource is not None:
            _interpret(block_statements(block), replace(scope, mode=name), ctx)
        elif name == "concern" and args and block is not None:
            label = string_value(args[0], source)
            if label:
                ctx.concerns[label] = block
        elif name == "concerns" and scope.resource is not None:
            for label in _symbols(args, source):
                if label in ctx.concerns:
                    _interpret(block_statements(ctx.concerns[label]), scope, ctx)
        elif block is not None:
            _interpret(block_statements(block), scope, ctx)  # constraints, defaults, draw blocks …


def _route_statements(walked: RubyFile) -> list[Node]:
    for node in base.walk(walked.root):
        if node.type == "call" and call_name(node, walked.source) == "draw" and call_block(node) is not None:
            return block_statements(call_block(node))
    return [c for c in walked.root.named_children if c.type != "comment"]


def controller_class(controller: str) -> str:
    return camelize(controller) + "Controller"


def route_units(walked: RubyFile) -> tuple[list[Unit], list[dict[str, object]]]:
    """Interpret config/routes.rb statically: route units plus the route table."""
    ctx = _RouteContext(walked.source)
    _interpret(_route_statements(walked), _RouteScope(), ctx)
    units: list[Unit] = []
    table: list[dict[str, object]] = []
    seen: dict[str, int] = {}
    for route in ctx.routes:
        base_identifier = f"{route.verb} {route.path}"
        seen[base_identifier] = seen.get(base_identifier, 0) + 1
        identifier = (
            base_identifier if seen[base_identifier] == 1 else f"{base_identifier}#{seen[base_identifier]}"
        )
        klass = controller_class(route.controller) if route.controller else None
        entry: dict[str, object] = {
            "verb": route.verb,
            "path": route.path,
            "controller": route.controller,
            "action": route.action,
            "name": route.name,
            "controller_class": klass,
            "line": _line(route.node),
        }
        deps: list[Dependency] = []
        if klass and route.action:
            deps.append(
                Dependency(f"{klass}#{route.action}", "route", None, (f"{klass}#{route.action}", klass))
            )
        elif klass:
            deps.append(Dependency(klass, "route", "controller", (klass,)))
        if route.target:
            entry["mounted"] = route.target
            deps.append(Dependency(route.target, "mount", None, (route.target,)))
        table.append({**entry, "identifier": identifier})
        units.append(_route_unit(walked, route, identifier, entry, tuple(deps)))
    return units, table


def _route_unit(
    walked: RubyFile, route: _Route, identifier: str, entry: dict[str, object], deps: tuple[Dependency, ...]
) -> Unit:
    source = walked.source
    node = route.node
    block = call_block(node)
    end_byte = block.start_byte if block is not None else node.end_byte
    text = source[node.start_byte : end_byte].decode("utf-8", "replace").rstrip()
    start = node.start_point[0] + 1
    namespace = (
        camelize(route.controller.rpartition("/")[0])
        if route.controller and "/" in route.controller
        else None
    )
    return Unit(
        identifier=identifier,
        type="route",
        language=LANGUAGE,
        file_path=walked.file_path,
        line_start=start,
        line_end=start + text.count("\n"),
        source_code=text,
        namespace=namespace,
        signature=text.split("\n", 1)[0].strip(),
        docstring=None,
        parent=None,
        metadata=dict(entry),
        dependencies=deps,
    )


# ----------------------------------------------------------------------------- entry point


def enrich(walked: RubyFile) -> tuple[list[Unit], dict[str, object]]:
    """Apply Rails conventions to a walked Ruby file: retype drafts, return extra units + file metadata."""
    extra: list[Unit] = []
    metadata: dict[str, object] = {}
    if is_rake_file(walked.file_path):
        extra.extend(rake_task_units(walked))
    location = locate(walked.file_path)
    if location is None:
        return extra, metadata
    rel = location.rel
    metadata["rails_root"] = location.root
    if rel == "config/routes.rb" or rel.startswith("config/routes/"):
        units, table = route_units(walked)
        metadata["routes"] = table
        return extra + units, metadata
    if rel == "db/schema.rb":
        return extra + schema_units(walked), metadata
    if rel.startswith(("config/initializers/", "config/environments/")) or rel == "config/application.rb":
        extra.append(configuration_unit(walked, rel))
    if rel.startswith(("spec/", "test/")) and rel.endswith(".rb"):
        extra.append(test_mapping_unit(walked, rel))
        return extra, metadata
    for draft in walked.drafts:
        if draft.kind == "module" and is_concern(draft):
            enrich_main(draft, "concern", rel, walked.source)
    main = primary_draft(walked.drafts, rel)
    if main is not None and main.type == "concern":
        pass
    elif main is not None and not rel.startswith("config/"):
        rails_type = classify(main, rel, walked.source)
        if rails_type is not None:
            enrich_main(main, rails_type, rel, walked.source)
    elif main is not None and _looks_like_middleware(main):
        enrich_main(main, "middleware", rel, walked.source)
    return extra, metadata
