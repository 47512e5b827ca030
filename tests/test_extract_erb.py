"""ERB extraction: one view_template unit per file, edges from the embedded Ruby."""

from __future__ import annotations

from pathlib import Path

import pytest

from woods.extract import base, erb, extract_file
from woods.units import Dependency, Unit

REPO = Path(__file__).resolve().parents[1]
VIEWS = "fixtures/rails_app/app/views"


def view(rel: str) -> Unit:
    extraction = extract_file(f"{VIEWS}/{rel}", (REPO / VIEWS / rel).read_bytes())
    assert extraction.language == "erb"
    assert len(extraction.units) == 1
    return extraction.units[0]


def dep(unit: Unit, target: str, via: str) -> Dependency:
    matches = [d for d in unit.dependencies if d.target == target and d.via == via]
    assert matches, (
        f"{unit.identifier} has no {via} → {target}: {[(d.via, d.target) for d in unit.dependencies]}"
    )
    return matches[0]


def test_view_template_unit_shape():
    unit = view("users/show.html.erb")
    text = (REPO / VIEWS / "users/show.html.erb").read_text()
    assert unit.identifier == "app/views/users/show.html.erb"
    assert unit.type == "view_template"
    assert unit.file_path == f"{VIEWS}/users/show.html.erb"
    assert (unit.line_start, unit.line_end) == (1, len(text.splitlines()))
    assert unit.source_code == text
    assert unit.metadata["controller_path"] == "users"
    assert unit.metadata["format"] == "html"
    assert unit.metadata["instance_variables"] == ["@user", "@posts"]
    assert unit.metadata["route_helpers"] == ["edit_user_path", "post_path"]


def test_constant_calls_in_templates():
    unit = view("users/show.html.erb")
    assert dep(unit, "AvatarComponent.new", "calls").lookup == ("AvatarComponent.new", "AvatarComponent")
    assert dep(unit, "UsersHelper.excerpt", "calls")
    assert dep(view("users/index.html.erb"), "User.active", "calls")


@pytest.mark.parametrize(
    ("rel", "partial"),
    [
        ("users/edit.html.erb", "app/views/users/_form.html.erb"),  # render partial: "form"
        ("users/new.html.erb", "app/views/users/_form.html.erb"),  # render "form", user: …
        ("users/index.html.erb", "app/views/users/_user.html.erb"),  # render @users
        ("posts/index.html.erb", "app/views/posts/_summary.html.erb"),  # render "posts/summary"
        ("layouts/application.html.erb", "app/views/shared/_flash.html.erb"),
    ],
)
def test_render_edges_target_partial_templates(rel: str, partial: str):
    render = dep(view(rel), partial, "render")
    assert render.target_type == "view_template"
    assert render.lookup[0] == partial


def test_partials_and_layouts_are_marked():
    assert view("users/_form.html.erb").metadata["partial"] is True
    assert view("users/show.html.erb").metadata["partial"] is False
    assert view("layouts/application.html.erb").metadata["layout"] is True


def test_text_templates_render_text_partials():
    source = b'<%= render "footer" %>\n'
    unit = erb.extract("app/views/user_mailer/welcome.text.erb", source).units[0]
    assert unit.dependencies[0].target == "app/views/user_mailer/_footer.text.erb"


def test_blanked_ruby_keeps_offsets_and_lines():
    source = b"<h1>\n<%= Foo.bar %>\n</h1>\n<% if x %>\n  <%= Baz %>\n<% end %>\n"
    template = base.parse("embedded_template", source)
    code, root = erb.ruby_view(source, template.root_node)
    assert len(code) == len(source)
    assert code.count(b"\n") == source.count(b"\n")
    assert code[source.index(b"Foo") : source.index(b"Foo") + 7] == b"Foo.bar"
    assert not root.has_error  # `if … end` across directives parses as one statement
    constant = next(n for n in base.walk(root) if n.type == "constant" and base.text(n, code) == "Baz")
    assert constant.start_point[0] + 1 == 5


def test_identifier_outside_app_views_is_the_path():
    unit = erb.extract("lib/generators/templates/model.rb.erb", b"class <%= name %>\nend\n").units[0]
    assert unit.identifier == "lib/generators/templates/model.rb.erb"
    assert unit.metadata["view_path"] is None


def test_engine_views_use_the_app_relative_identifier():
    unit = erb.extract("engines/shop/app/views/carts/show.html.erb", b"<%= render 'line' %>").units[0]
    assert unit.identifier == "app/views/carts/show.html.erb"
    assert unit.dependencies[0].target == "app/views/carts/_line.html.erb"


def test_broken_template_and_invalid_utf8_do_not_raise():
    extraction = erb.extract("app/views/x/bad.html.erb", b"<h1>\xff\xfe</h1>\n<%= foo( %>\n<% if %>")
    unit = extraction.units[0]
    assert "\ufffd" in unit.source_code
    assert unit.line_end == 3
    empty = erb.extract("app/views/x/empty.html.erb", b"")
    assert empty.units[0].line_start == empty.units[0].line_end == 1


def test_empty_directives_hold_no_code():
    """`<%=%>` and `<% %>` in a template without syntax errors: no code to copy, the rest still read."""
    source = b"<%=%><% %><%= render 'row' %>\n<%= @user.name %>\n"
    template = base.parse("embedded_template", source)
    assert not template.root_node.has_error
    code, _root = erb.ruby_view(source, template.root_node)
    assert len(code) == len(source) and code.split() == [b";", b"render", b"'row'", b";", b"@user.name", b";"]
    unit = erb.extract("app/views/users/show.html.erb", source).units[0]
    assert unit.dependencies[0].target == "app/views/users/_row.html.erb"
    assert unit.metadata["instance_variables"] == ["@user"]
