"""Which Rails unit type a Ruby file's main class takes: from its directory under `app/`, its superclass, its mixins and its class-body DSL."""

from __future__ import annotations

import re

from woods.extract.rails.inflection import camelize
from woods.extract.ruby import UnitDraft, call_name

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
ASSOCIATIONS = ("belongs_to", "has_many", "has_one", "has_and_belongs_to_many")
# Superclasses that make an app/models class something other than a model (exceptions, structs).
_NON_MODEL_SUPER = re.compile(r"(Error|Exception|Struct|Data)$")


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


def mixins(draft: UnitDraft, via: str) -> list[str]:
    return [dep.target for _, dep in draft.deps_at if dep.via == via]


def is_concern(draft: UnitDraft) -> bool:
    return draft.kind == "module" and "ActiveSupport::Concern" in mixins(draft, "extend")


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


def looks_like_middleware(draft: UnitDraft) -> bool:
    by_name = {m.name: m for m in draft.methods if not m.singleton}
    init, call = by_name.get("initialize"), by_name.get("call")
    if init is None or call is None:
        return False
    params = _parameters(init)
    return bool(params) and str(params[0]) == "app" and len(_parameters(call)) == 1


def _parameters(method: UnitDraft) -> list[str]:
    """A method's parameter names, as `ruby.parameter_names` stored them in its metadata ([] if absent)."""
    params = method.metadata.get("parameters")
    return params if isinstance(params, list) else []


def dsl_names(draft: UnitDraft, source: bytes) -> set[str]:
    return {call_name(call, source) or "" for call in draft.dsl_calls}


def classify(draft: UnitDraft, rel: str, source: bytes) -> str | None:
    """The Rails unit type of a file's main class/module, or None to keep `class`/`module`."""
    parts = rel.split("/")
    if "concerns" in parts[:-1] or is_concern(draft):
        return "concern"
    if draft.kind == "class" and JOB_MIXINS & set(mixins(draft, "include")):
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
        if "middleware" in parts or looks_like_middleware(draft):
            return "middleware"
        return "poro"
    if by_super is not None and parts[0] == "lib":
        return by_super
    if parts[0] == "lib":
        if "middleware" in parts or looks_like_middleware(draft):
            return "middleware"
        return "lib"
    if parts[0] == "config" and looks_like_middleware(draft):
        return "middleware"
    return None


def _model_or_poro(draft: UnitDraft, by_super: str | None, source: bytes) -> str:
    if by_super == "model":
        return "model"
    if draft.kind == "class" and draft.superclass and not _NON_MODEL_SUPER.search(draft.superclass):
        return "model"  # STI: `Admin < User` — a model subclass of another model
    if dsl_names(draft, source) & set(ASSOCIATIONS):
        return "model"
    return by_super or "poro"


