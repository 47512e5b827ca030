"""Rails-aware extraction over fixtures/rails_app: unit types, model/controller metadata, routes."""

from __future__ import annotations

from pathlib import Path

import pytest

from woods.extract import extract_file
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout, detect_rails_roots
from woods.extract.rails.files import guess_tested_unit
from woods.extract.rails.inflection import camelize, pluralize, singularize, underscore
from woods.extract.rails.metadata import controller_path
from woods.extract.rails.roots import locate
from woods.units import Dependency, FileExtraction, Unit

REPO = Path(__file__).resolve().parents[1]
APP = "fixtures/rails_app"
# What the index builder computes from the whole file list; lib/ and spec/ need the app root.
LAYOUT = RepositoryLayout.from_paths(str(p.relative_to(REPO)) for p in (REPO / APP).rglob("*") if p.is_file())


def extract_app(rel: str, layout: RepositoryLayout = LAYOUT) -> FileExtraction:
    return extract_file(f"{APP}/{rel}", (REPO / APP / rel).read_bytes(), layout)


def units_of(rel: str, layout: RepositoryLayout = LAYOUT) -> dict[str, Unit]:
    return {u.identifier: u for u in extract_app(rel, layout).units}


def dep(unit: Unit, target: str, via: str) -> Dependency:
    matches = [d for d in unit.dependencies if d.target == target and d.via == via]
    assert matches, (
        f"{unit.identifier} has no {via} → {target}: {[(d.via, d.target) for d in unit.dependencies]}"
    )
    return matches[0]


def test_detected_root_is_the_app_directory():
    paths = [str(p.relative_to(REPO)) for p in (REPO / APP).rglob("*") if p.is_file()]
    assert detect_rails_roots(paths) == frozenset({f"{APP}/"})
    assert detect_rails_roots(["Gemfile", "app/models/user.rb"]) == frozenset({""})
    assert detect_rails_roots(["web/src/app/page.tsx", "web/lib/x.rb"]) == frozenset()


@pytest.mark.parametrize(
    ("rel", "identifier", "unit_type"),
    [
        ("app/models/user.rb", "User", "model"),
        ("app/models/admin.rb", "Admin", "model"),  # STI subclass of a model
        ("app/models/application_record.rb", "ApplicationRecord", "model"),
        ("app/models/billing/invoice.rb", "Billing::Invoice", "model"),
        ("app/models/billing/payment.rb", "Billing::Payment", "model"),
        ("app/models/concerns/trackable.rb", "Trackable", "concern"),
        ("app/controllers/concerns/paginated.rb", "Paginated", "concern"),
        ("app/controllers/users_controller.rb", "UsersController", "controller"),
        ("app/controllers/admin/users_controller.rb", "Admin::UsersController", "controller"),
        ("app/jobs/billing/charge_invoice_job.rb", "Billing::ChargeInvoiceJob", "job"),
        ("app/mailers/user_mailer.rb", "UserMailer", "mailer"),
        ("app/services/billing/charge_customer.rb", "Billing::ChargeCustomer", "service"),
        ("app/policies/post_policy.rb", "PostPolicy", "pundit_policy"),
        ("app/serializers/user_serializer.rb", "UserSerializer", "serializer"),
        ("app/helpers/users_helper.rb", "UsersHelper", "helper"),
        ("app/channels/notifications_channel.rb", "NotificationsChannel", "action_cable_channel"),
        ("app/components/avatar_component.rb", "AvatarComponent", "view_component"),
        ("app/validators/email_validator.rb", "EmailValidator", "validator"),
        ("app/graphql/types/user_type.rb", "Types::UserType", "graphql_type"),
        ("app/graphql/mutations/create_post.rb", "Mutations::CreatePost", "graphql_mutation"),
        ("app/middleware/request_timer.rb", "RequestTimer", "middleware"),
        ("db/migrate/20240101120000_create_invoices.rb", "CreateInvoices", "migration"),
        ("lib/money_formatter.rb", "MoneyFormatter", "lib"),
        ("lib/tasks/billing.rake", "billing:charge", "rake_task"),
        ("config/initializers/money.rb", "config/initializers/money.rb", "configuration"),
        ("config/environments/production.rb", "config/environments/production.rb", "configuration"),
        ("config/application.rb", "config/application.rb", "configuration"),
        ("spec/models/user_spec.rb", "spec/models/user_spec.rb", "test_mapping"),
        ("db/schema.rb", "billing_invoices", "database_table"),
    ],
)
def test_rails_unit_types(rel: str, identifier: str, unit_type: str):
    units = units_of(rel)
    assert identifier in units, sorted(units)
    assert units[identifier].type == unit_type


def test_only_the_main_class_takes_the_rails_type():
    units = units_of("app/models/billing/invoice.rb")
    assert "Billing" not in units  # a namespace wrapper is not a unit
    assert units["Billing::Invoice"].type == "model"
    assert units["Billing::Invoice#charge"].type == "method"
    assert units["Billing::Invoice.due"].type == "method"


def test_outside_a_rails_app_lib_files_stay_plain():
    units = units_of("lib/money_formatter.rb", UNKNOWN_LAYOUT)
    assert units["MoneyFormatter"].type == "class"
    # app/ paths are recognised without a known root
    assert units_of("app/models/user.rb", UNKNOWN_LAYOUT)["User"].type == "model"
    assert locate("fixtures/ruby_gem/lib/tinycache.rb") is None


def test_user_model_metadata():
    user = units_of("app/models/user.rb")["User"]
    meta = user.metadata
    associations = {a["name"]: a for a in meta["associations"]}
    assert associations["posts"]["type"] == "has_many" and associations["posts"]["dependent"] == "destroy"
    assert associations["comments"]["as"] == "commentable"
    assert associations["invoices"]["class_name"] == "Billing::Invoice"
    assert associations["payments"]["through"] == "invoices"
    assert associations["profile"]["type"] == "has_one"
    kinds = {(tuple(v["attributes"]), v["kind"]) for v in meta["validations"]}
    assert {
        (("email",), "presence"),
        (("email",), "uniqueness"),
        (("email",), "email"),
        (("name",), "length"),
    } <= kinds
    assert {"kind": "before_save", "method": "normalize_email"} in [
        {k: c[k] for k in ("kind", "method")} for c in meta["callbacks"]
    ]
    assert [c["kind"] for c in meta["callbacks"]] == ["before_save", "after_create_commit"]
    assert meta["scopes"] == ["active", "recent"]
    assert meta["enums"] == [{"name": "role", "values": ["member", "editor", "owner"]}]
    assert meta["concerns"] == ["Trackable"]
    assert meta["table_name"] == "users"


def test_association_edges_singularize_and_use_class_name():
    user = units_of("app/models/user.rb")["User"]
    assert dep(user, "Post", "has_many").lookup == ("User::Post", "Post")
    assert dep(user, "Billing::Invoice", "has_many").target_type == "model"
    assert dep(user, "Payment", "has_many")  # through association, singularized
    assert dep(user, "Profile", "has_one")
    assert dep(user, "EmailValidator", "validates")  # custom `email: true` validator
    invoice = units_of("app/models/billing/invoice.rb")["Billing::Invoice"]
    assert dep(invoice, "User", "belongs_to").lookup == ("Billing::Invoice::User", "Billing::User", "User")
    assert dep(invoice, "Payment", "has_many").lookup[1] == "Billing::Payment"
    assert invoice.metadata["table_name"] == "billing_invoices"


def test_polymorphic_sti_and_habtm():
    comment = units_of("app/models/comment.rb")["Comment"]
    commentable = next(a for a in comment.metadata["associations"] if a["name"] == "commentable")
    assert commentable["polymorphic"] is True
    assert not [d for d in comment.dependencies if d.via == "belongs_to" and d.target == "Commentable"]
    assert dep(comment, "User", "belongs_to")  # class_name: "User"
    admin = units_of("app/models/admin.rb")["Admin"]
    assert admin.metadata["sti_parent"] == "User"
    assert dep(admin, "User", "superclass")
    post = units_of("app/models/post.rb")["Post"]
    assert dep(post, "Category", "has_and_belongs_to_many")
    assert dep(post, "Tag", "has_many")
    assert post.metadata["enums"][0]["name"] == "state"


def test_concern_metadata_from_included_block():
    trackable = units_of("app/models/concerns/trackable.rb")
    concern = trackable["Trackable"]
    assert concern.metadata["included_block"] is True
    assert concern.metadata["callbacks"][0]["method"] == "record_change"
    assert "Trackable.recently_changed" in trackable


def test_controller_actions_and_filters():
    controller = units_of("app/controllers/users_controller.rb")["UsersController"]
    meta = controller.metadata
    assert meta["actions"] == [
        "index",
        "show",
        "new",
        "create",
        "edit",
        "update",
        "destroy",
        "activate",
        "search",
    ]
    filters = {f["method"]: f for f in meta["filters"]}
    assert filters["set_user"]["kind"] == "before_action"
    assert filters["set_user"]["only"] == ["show", "edit", "update", "destroy"]
    assert filters["track_visit"]["except"] == ["index"]
    assert filters["authenticate_user!"]["kind"] == "skip_before_action"
    assert filters["authenticate_user!"]["only"] == ["new", "create"]


def test_namespaced_controller_excludes_protected_and_private_methods():
    units = units_of("app/controllers/admin/users_controller.rb")
    controller = units["Admin::UsersController"]
    assert controller.metadata["actions"] == ["index", "show", "destroy"]
    assert controller.metadata["controller_path"] == "admin/users"
    assert units["Admin::UsersController#require_admin"].metadata["visibility"] == "protected"
    assert dep(controller, "Admin", "code_reference").lookup == ("Admin",)  # `::Admin`


def test_controller_actions_render_their_views():
    units = units_of("app/controllers/users_controller.rb")
    show = units["UsersController#show"]
    assert dep(show, "app/views/users/show.html.erb", "render").target_type == "view_template"
    search = units["UsersController#search"]
    assert dep(search, "app/views/users/index.html.erb", "render")  # `render :index`


def test_job_mailer_and_migration_metadata():
    job = units_of("app/jobs/billing/charge_invoice_job.rb")["Billing::ChargeInvoiceJob"]
    assert job.metadata["queue"] == "billing"
    assert job.metadata["perform_signature"] == "def perform(invoice_id, attempt: 1)"
    mailer = units_of("app/mailers/user_mailer.rb")
    assert mailer["UserMailer"].metadata["actions"] == ["welcome", "receipt"]
    assert dep(mailer["UserMailer#welcome"], "app/views/user_mailer/welcome.html.erb", "render")
    migration = units_of("db/migrate/20240101120000_create_invoices.rb")["CreateInvoices"]
    assert migration.metadata["version"] == "20240101120000"
    assert migration.metadata["operations"][0] == {
        "operation": "create_table",
        "table": "billing_invoices",
        "line": 6,
    }


def test_rails_calls_reach_jobs_and_mailers():
    publish = units_of("app/models/post.rb")["Post#publish!"]
    job = dep(publish, "PublishPostJob.perform_later", "calls")
    assert "PublishPostJob" in job.lookup
    welcome = units_of("app/models/user.rb")["User#send_welcome_mail"]
    assert dep(welcome, "UserMailer.welcome", "calls").lookup[:2] == (
        "User::UserMailer.welcome",
        "UserMailer.welcome",
    )


def test_graphql_serializer_and_test_mapping_metadata():
    assert units_of("app/graphql/types/user_type.rb")["Types::UserType"].metadata["fields"] == [
        "id",
        "name",
        "posts",
    ]
    assert units_of("app/graphql/mutations/create_post.rb")["Mutations::CreatePost"].metadata[
        "arguments"
    ] == ["title", "body"]
    assert units_of("app/serializers/user_serializer.rb")["UserSerializer"].metadata["attributes"] == [
        "id",
        "name",
        "email",
        "display_name",
    ]
    spec = units_of("spec/models/user_spec.rb")["spec/models/user_spec.rb"]
    assert spec.metadata["tests"] == "User"
    assert dep(spec, "User", "tests")


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("spec/models/user_spec.rb", "User"),
        ("spec/models/billing/invoice_spec.rb", "Billing::Invoice"),
        ("spec/controllers/users_controller_spec.rb", "UsersController"),
        ("spec/requests/admin/users_spec.rb", "Admin::UsersController"),
        ("test/models/user_test.rb", "User"),
        ("spec/spec_helper.rb", None),
    ],
)
def test_guess_tested_unit(rel: str, expected: str | None):
    assert guess_tested_unit(rel) == expected


def test_configuration_settings():
    config = units_of("config/environments/production.rb")["config/environments/production.rb"]
    assert "config.force_ssl" in config.metadata["settings"]
    assert config.line_start == 1 and config.line_end == 13
    initializer = units_of("config/initializers/money.rb")["config/initializers/money.rb"]
    assert initializer.docstring is not None and initializer.docstring.startswith("Currency defaults")
    assert "config.x.default_currency" in initializer.metadata["settings"]
    assert dep(initializer, "MoneyFormatter.default_locale", "calls").lookup[-1] == "MoneyFormatter"


def test_rake_tasks():
    units = units_of("lib/tasks/billing.rake")
    charge = units["billing:charge"]
    assert charge.docstring == "Charge every overdue invoice"
    assert charge.metadata["prerequisites"] == ["environment"]
    assert charge.namespace == "billing"
    assert dep(charge, "Billing::ChargeInvoiceJob.perform_later", "calls")
    balance = units["billing:reports:balance"]
    assert balance.metadata["arguments"] == ["currency"]
    assert units["cleanup_sessions"].namespace is None
    text = (REPO / APP / "lib/tasks/billing.rake").read_text().splitlines()
    assert text[charge.line_start - 1].strip().startswith("task charge:")


# ----------------------------------------------------------------------------- routes


def route_table() -> dict[str, dict[str, object]]:
    extraction = extract_app("config/routes.rb")
    return {str(r["identifier"]): r for r in extraction.metadata["routes"]}


def target(route: dict[str, object]) -> str:
    return f"{route['controller']}#{route['action']}"


@pytest.mark.parametrize(
    ("identifier", "expected", "name"),
    [
        ("GET /", "home#index", "root"),
        ("GET /users", "users#index", "users"),
        ("POST /users", "users#create", None),
        ("GET /users/:id/edit", "users#edit", "edit_user"),
        ("PATCH /users/:id", "users#update", None),
        ("DELETE /users/:id", "users#destroy", None),
        ("POST /users/:id/activate", "users#activate", "activate_user"),  # member
        ("GET /users/search", "users#search", "search_users"),  # collection
        ("GET /users/:user_id/posts/new", "posts#new", "new_user_post"),  # nested
        ("GET /posts/:post_id/comments", "comments#index", "post_comments"),  # concern
        ("GET /posts/:post_id/preview", "posts#preview", "post_preview"),
        ("GET /profile", "profiles#show", "profile"),  # singular resource
        ("GET /admin/users/:id", "admin/users#show", "admin_user"),  # namespace
        ("GET /admin", "admin/dashboard#show", "admin_root"),
        ("POST /billing/invoices/:id/pay", "billing/invoices#pay", "pay_billing_invoice"),  # on: :member
        ("GET /api/v1/posts/:id", "api/posts#show", "api_v1_post"),  # scope module/path/as
        ("GET /legal/terms", "pages#terms", "terms"),  # scope path
        ("GET /login", "sessions#new", "login"),  # "path" => "c#a"
        ("PUT /webhooks/stripe", "webhooks#stripe", None),  # match via:
    ],
)
def test_route_table(identifier: str, expected: str, name: str | None):
    routes = route_table()
    assert identifier in routes, sorted(routes)
    assert target(routes[identifier]) == expected
    assert routes[identifier]["name"] == name


def test_route_only_except_are_respected():
    routes = route_table()
    assert "DELETE /posts/:id" not in routes  # except: [:destroy]
    assert "GET /admin/users/:id/edit" not in routes  # only: [...]
    assert "POST /profile" not in routes
    assert "DELETE /admin/users/:id" in routes


def test_mounts_are_routes_with_mount_edges():
    routes = route_table()
    assert routes["MOUNT /sidekiq"]["mounted"] == "Sidekiq::Web"
    assert routes["MOUNT /cable"]["mounted"] == "ActionCable"


def test_route_units_point_at_controller_actions():
    extraction = extract_app("config/routes.rb")
    units = {u.identifier: u for u in extraction.units}
    assert len(units) == len(extraction.units)  # identifiers are unique
    show = units["GET /admin/users/:id"]
    assert show.type == "route"
    assert show.metadata["verb"] == "GET" and show.metadata["path"] == "/admin/users/:id"
    assert show.namespace == "Admin"
    route = dep(show, "Admin::UsersController#show", "route")
    assert route.lookup == ("Admin::UsersController#show", "Admin::UsersController")
    lines = (REPO / APP / "config/routes.rb").read_text().splitlines()
    assert (
        lines[show.line_start - 1].strip()
        == show.source_code
        == "resources :users, only: [:index, :show, :destroy]"
    )


def test_repeated_routes_get_numbered_identifiers():
    source = b'Rails.application.routes.draw do\n  get "/a", to: "x#a"\n  get "/a", to: "x#b"\nend\n'
    extraction = extract_file("config/routes.rb", source)
    assert [u.identifier for u in extraction.units] == ["GET /a", "GET /a#2"]
    assert extraction.units[1].dependencies[0].target == "XController#b"


@pytest.mark.parametrize(
    ("plural", "singular"),
    [
        ("users", "user"),
        ("categories", "category"),
        ("addresses", "address"),
        ("statuses", "status"),
        ("people", "person"),
        ("line_items", "line_item"),
        ("boxes", "box"),
        ("wolves", "wolf"),
        ("news", "news"),
        ("analyses", "analysis"),
    ],
)
def test_singularize(plural: str, singular: str):
    assert singularize(plural) == singular


def test_inflection_helpers():
    assert pluralize("profile") == "profiles"
    assert pluralize("company") == "companies"
    assert pluralize("person") == "people"
    assert camelize("billing/line_item") == "Billing::LineItem"
    assert underscore("Admin::UsersController") == "admin/users_controller"
    assert controller_path("Admin::UsersController") == "admin/users"
