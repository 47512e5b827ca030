"""C++ extraction over the `geo` fixture library, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

from tests.extract_helpers import deps_by_via, extract_tree, line_of, linked_edges
from woods.extract import extract_file
from woods.extract.cpp import extract
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "cpp_lib"


def _extract(rel: str) -> dict[str, Unit]:
    """Through `extract_file`, so `.h` headers take the path the indexer takes."""
    result = extract_file(rel, (ROOT / rel).read_bytes())
    assert result.warnings == ()
    assert result.language == "cpp" and all(u.language == "cpp" and u.file_path == rel for u in result.units)
    return {u.identifier: u for u in result.units}


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


def test_namespaces_classes_and_in_class_members() -> None:
    rel = "include/geo/shape.h"
    units = _extract(rel)
    assert list(units) == [
        rel, "geo::Kind", "geo::Shape", "geo::Shape::area", "geo::Shape::Shape", "geo::Circle", "geo::Circle::radius",
        "geo::ShapePtr", "geo::Registry", "geo::Registry::add", "geo::Registry::size",
    ]
    shape = units["geo::Shape"]
    assert (shape.type, shape.parent, shape.namespace) == ("class", rel, "geo")
    assert shape.docstring == "A plane figure: knows its area and how to describe itself."
    assert (shape.line_start, shape.line_end) == (_line_of(rel, "class Shape {"), _line_of(rel, "Kind kind_;") + 1)
    area = units["geo::Shape::area"]
    assert (area.type, area.parent, area.namespace) == ("method", "geo::Shape", "geo::Shape")
    assert area.signature == "virtual double area() const"
    assert area.docstring == "Area in square units."
    assert area.metadata == {"specifiers": ["virtual"], "access": "public", "abstract": True}
    constructor = units["geo::Shape::Shape"]
    assert (constructor.type, constructor.metadata["access"]) == ("constructor", "protected")
    assert constructor.signature == "explicit Shape(Kind kind)"
    assert units["geo::Kind"].signature == "enum class Kind"
    alias = units["geo::ShapePtr"]
    assert (alias.type, alias.signature) == ("type_alias", "using ShapePtr = std::unique_ptr<Shape>")
    assert _deps(alias, "code_reference") == {"geo::Shape": ("geo::Shape", "Shape")}


def test_templates_span_from_the_template_line() -> None:
    rel = "include/geo/shape.h"
    registry = _extract(rel)["geo::Registry"]
    assert registry.line_start == _line_of(rel, "template <typename T>")
    assert registry.line_end == _line_of(rel, "std::vector<T> items_;") + 1
    assert registry.signature == "template <typename T> class Registry"
    assert registry.docstring == "Shapes kept by name, in insertion order."
    assert registry.metadata == {"template": True}
    add = _extract(rel)["geo::Registry::add"]
    assert add.dependencies == ()  # `T` is a template parameter and `std::` is never an edge


def test_base_classes_are_superclass_edges() -> None:
    circle = _extract("include/geo/shape.h")["geo::Circle"]
    assert _deps(circle, "superclass") == {"geo::Shape": ("geo::Circle::Shape", "geo::Shape", "Shape")}
    assert circle.metadata == {"bases": ["Shape"]}
    assert "geo::Shape" not in _deps(circle, "code_reference")
    rect = _extract("include/geo/rect.hpp")["geo::Rect"]
    assert _deps(rect, "superclass") == {"Shape": ("geo::Rect::Shape", "geo::Shape", "Shape")}  # declared elsewhere


def test_out_of_line_definitions_attach_to_their_class() -> None:
    rel = "src/shape.cpp"
    units = _extract(rel)
    assert list(units) == [
        rel, "geo::square", "geo::Shape::describe", "geo::Circle::Circle", "geo::Circle::area", "geo::total_area",
    ]
    describe = units["geo::Shape::describe"]
    assert (describe.type, describe.parent, describe.namespace) == ("method", "geo::Shape", "geo::Shape")
    assert describe.signature == "std::string Shape::describe() const"
    assert (describe.line_start, describe.line_end) == (_line_of(rel, "Shape::describe()"), _line_of(rel, "Shape::describe()") + 2)
    assert _deps(describe, "calls") == {"area": ("geo::Shape::area", "geo::area", "area")}
    constructor = units["geo::Circle::Circle"]
    assert (constructor.type, constructor.signature) == ("constructor", "Circle::Circle(double radius)")
    assert _deps(units["geo::Circle::area"], "calls") == {"geo::square": ("geo::Circle::square", "geo::square", "square")}
    total = units["geo::total_area"]
    assert (total.type, total.parent) == ("function", rel)
    assert total.docstring == "Sum of the areas of all shapes."
    assert units["geo::square"].type == "function"  # an anonymous namespace adds nothing to the name


def test_overloads_get_numbered_and_free_operators_are_functions() -> None:
    rel = "src/rect.cpp"
    units = _extract(rel)
    assert list(units) == [rel, "geo::Rect::Rect", "geo::Rect::area", "geo::Rect::scale", "geo::Rect::scale#2",
                           "geo::operator=="]
    second = units["geo::Rect::scale#2"]
    assert (second.signature, second.parent) == ("void Rect::scale(double fx, double fy)", "geo::Rect")
    assert second.line_start == _line_of(rel, "void Rect::scale(double fx, double fy)")
    assert units["geo::operator=="].type == "function"


def test_edges_resolve_across_files() -> None:
    edges = linked_edges([u for f in extract_tree(ROOT) for u in f.units])
    assert edges["geo::Circle"][("geo::Shape", "superclass")] == "geo::Shape"
    assert edges["geo::Rect"][("geo::Shape", "superclass")] == "geo::Shape"
    assert edges["geo::Shape::describe"][("geo::Shape::area", "calls")] == "geo::Shape::area"
    assert edges["main"][("geo::total_area", "calls")] == "geo::total_area"
    assert edges["main"][("geo::Circle", "code_reference")] == "geo::Circle"
    assert edges["src/main.cc"][("include/geo/rect.hpp", "import")] == "include/geo/rect.hpp"
    assert edges["include/geo/rect.hpp"][("include/geo/shape.h", "import")] == "include/geo/shape.h"
    assert edges["src/main.cc"][("iostream", "import")] is None
    assert not any(via == "calls" for _target, via in edges["main"] if _target == "static_cast")


def test_misparsed_export_macro_class_is_recovered() -> None:
    source = b"class API_EXPORT Buffer : public Base {\n public:\n  int size() const { return n_; }\n};\n"
    units = {u.identifier: u for u in extract("buffer.hpp", source).units}
    buffer = units["Buffer"]
    assert (buffer.type, buffer.line_start, buffer.line_end) == ("class", 1, 4)
    assert buffer.metadata["export_macro"] == "API_EXPORT"
    assert _deps(buffer, "superclass") == {"Base": ("Buffer::Base", "Base")}
    qualified_base = b"class API_EXPORT Buffer : public io::Base {\n public:\n  int size() const { return 0; }\n};\n"
    recovered = {u.identifier: u for u in extract("b.hpp", qualified_base).units}["Buffer"]
    assert _deps(recovered, "superclass") == {"io::Base": ("Buffer::io::Base", "io::Base")}


def test_qualified_namespace_definitions_and_using_namespace() -> None:
    source = (
        b"namespace a::b { int f() { return 0; } }\n"
        b"namespace util { int g(); }\n"
        b"int util::g() { return a::b::f(); }\n"
        b"inline namespace v2 { void h() {} }\n"
    )
    units = {u.identifier: u for u in extract("x.cpp", source).units}
    assert units["a::b::f"].namespace == "a::b"
    assert units["util::g"].type == "function"  # `util` is a namespace opened in this file
    assert _deps(units["util::g"], "calls") == {"a::b::f": ("util::a::b::f", "a::b::f")}
    assert units["h"].type == "function"  # inline namespaces are transparent


def test_syntax_errors_keep_what_parses() -> None:
    source = b"namespace n {\nint good() { return 1; }\n}\nint bad( { \n\nint later() { return 2; }\n"
    result = extract("x.cpp", source)
    assert "n::good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = {u.identifier: u for u in extract("x.cpp", b"/// caf\xe9 \xff\nint f() { return '\xfe'; }\n").units}
    assert "\ufffd" in (units["f"].docstring or "")
    assert extract("blob.cpp", bytes(range(256)) * 8).units[0].type == "file"
    assert [u.type for u in extract("e.hpp", b"").units] == ["file"]


def test_deep_nesting_does_not_recurse() -> None:
    nested = "".join(f"namespace n{i} {{\n" for i in range(300)) + "int f() { return 0; }\n" + "}\n" * 300
    units = [u.identifier for u in extract("deep.cpp", nested.encode()).units]
    assert units[-1] == "::".join(f"n{i}" for i in range(300)) + "::f"
    depth = 3000
    source = f"int g() {{ return {'(' * depth}h(){')' * depth}; }}\n".encode()
    assert [u.identifier for u in extract("g.cpp", source).units] == ["g.cpp", "g"]


def test_qualified_template_names_in_a_file_with_errors() -> None:
    """Most C++ trees hold an error somewhere; a qualified template name elsewhere in the file is
    still one edge per full spelling, the class qualifying an out-of-line definition is none,
    and a `template` dependent name stops at its template."""
    source = b"""namespace ns { namespace detail { template <class T> struct buffer { void push(); }; } }
namespace ns {
template <class T> void detail::buffer<T>::push() { detail::buffer<T> b; typename detail::buffer<T>::value_type v; }
void use() { detail::buffer<char> d; ns::detail::buffer<long> e = ; outer::template inner<int> f; }
}
"""
    result = extract("a.cpp", source)
    assert result.warnings
    units = {u.identifier: u for u in result.units}
    assert [(d.target, d.via) for d in units["ns::detail::buffer::push"].dependencies] == [
        ("ns::detail::buffer", "code_reference"), ("detail::buffer::value_type", "code_reference"),
    ]
    assert [(d.target, d.lookup) for d in units["ns::use"].dependencies] == [
        ("ns::detail::buffer", ("ns::detail::buffer", "detail::buffer")), ("inner", ("ns::inner", "inner")),
    ]
