"""The route table of config/routes.rb: one `route` unit per generated route (`VERB /path` → controller#action), resources, namespaces, scopes and mounts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from woods.extract import base
from woods.extract.rails.inflection import camelize, pluralize, singularize
from woods.extract.ruby import (
    LANGUAGE,
    RubyFile,
    block_statements,
    call_arguments,
    call_block,
    call_name,
    constant_path,
    hash_options,
    line_number,
    literal_list,
    option_value,
    string_value,
    symbol_names,
)
from woods.units import Dependency, Unit

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
    module = option_value(options, "module", source)
    path = option_value(options, "path", source)
    name = option_value(options, "as", source)
    controller = option_value(options, "controller", source)
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
    names = symbol_names([a for a in args if a.type not in ("pair", "hash")], source)
    only = set(literal_list(options.get("only"), source)) if "only" in options else None
    except_ = set(literal_list(options.get("except"), source))
    param = option_value(options, "param", source) or "id"
    path_option = option_value(options, "path", source)
    alias = option_value(options, "as", source)
    module = option_value(options, "module", source)
    controller_option = option_value(options, "controller", source)
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
    alias = option_value(options, "as", source)
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
    value = option_value(options, key, source)
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
            concern = string_value(args[0], source)
            if concern:
                ctx.concerns[concern] = block
        elif name == "concerns" and scope.resource is not None:
            for label in symbol_names(args, source):
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
            "line": line_number(route.node),
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


