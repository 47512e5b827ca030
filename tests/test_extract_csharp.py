"""C# extraction over the `Shop` fixture service, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

from tests.extract_helpers import deps_by_via, extract_fixture, extract_tree, line_of, linked_edges
from woods.extract.csharp import clean_doc, extract
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "csharp_app"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "csharp")


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


def test_file_scoped_namespace_types_members_and_properties() -> None:
    rel = "src/Orders/Order.cs"
    units = _extract(rel)
    assert list(units) == [
        "Shop.Orders.OrderLine", "Shop.Orders.OrderLine.Total", "Shop.Orders.OrderStatus", "Shop.Orders.Order",
        "Shop.Orders.Order.Order", "Shop.Orders.Order.Total", "Shop.Orders.Order.AddLine",
        "Shop.Orders.Order.MarkPaid", "Shop.Orders.Order.EnsureOpen",
    ]
    order = units["Shop.Orders.Order"]
    assert (order.type, order.parent, order.namespace) == ("class", None, "Shop.Orders")
    assert order.docstring == "A customer's order; lines can be added until it is paid."
    last_line = len((ROOT / rel).read_text().splitlines())
    assert (order.line_start, order.line_end) == (_line_of(rel, "public class Order"), last_line)
    assert order.signature == "public class Order"
    record = units["Shop.Orders.OrderLine"]
    assert (record.type, record.signature) == ("record", "public record OrderLine(string Sku, int Quantity, decimal UnitPrice)")
    assert record.docstring == "One line of an order: a product and how many of it."
    constructor = units["Shop.Orders.Order.Order"]
    assert (constructor.type, constructor.parent) == ("constructor", "Shop.Orders.Order")
    assert constructor.signature == "public Order(Guid id, string customer)"
    total = units["Shop.Orders.Order.Total"]  # an accessor with a body
    assert (total.type, total.signature) == ("property", "public decimal Total")
    getter = _line_of(rel, "get { return _lines.Sum")
    assert (total.line_start, total.line_end) == (getter - 2, getter + 1)
    # Auto-properties, with or without an initialiser, are fields.
    assert {"Shop.Orders.Order.Id", "Shop.Orders.Order.Customer", "Shop.Orders.Order.Status"}.isdisjoint(units)
    assert units["Shop.Orders.OrderLine.Total"].signature == "public decimal Total"  # `=> …` is a body
    ensure = units["Shop.Orders.Order.EnsureOpen"]
    assert ensure.metadata == {"modifiers": ["private"]}
    assert _deps(units["Shop.Orders.Order.AddLine"], "calls") == {
        "Shop.Orders.Order.EnsureOpen": ("Shop.Orders.Order.EnsureOpen",)
    }


def test_interfaces_block_namespaces_and_implements() -> None:
    iface = _extract("src/Orders/IOrderRepository.cs")
    find = iface["Shop.Orders.IOrderRepository.Find"]
    assert (find.type, find.signature, find.metadata["abstract"]) == ("method", "Order? Find(Guid id)", True)
    assert iface["Shop.Orders.IOrderRepository"].docstring == "Where orders are kept between requests."
    memory = _extract("src/Orders/InMemoryOrderRepository.cs")
    repo = memory["Shop.Orders.InMemoryOrderRepository"]
    assert repo.namespace == "Shop.Orders"
    assert repo.metadata["implements"] == ["IOrderRepository"]
    assert "IOrderRepository" in _deps(repo, "implements")
    assert _deps(repo, "import") == {"System.Collections.Concurrent": ("System.Collections.Concurrent",)}
    assert memory["Shop.Orders.InMemoryOrderRepository.Save"].signature == "public void Save(Order order)"


def test_overloads_static_calls_nested_types_and_using_static() -> None:
    rel = "src/Orders/OrderService.cs"
    units = _extract(rel)
    assert [u for u in units if ".Pay" in u] == ["Shop.Orders.OrderService.Pay", "Shop.Orders.OrderService.Pay#2"]
    second = units["Shop.Orders.OrderService.Pay#2"]
    assert second.signature == "public void Pay(Guid id, decimal tip)"
    assert second.line_start == _line_of(rel, "public void Pay(Guid id, decimal tip)")
    calls = _deps(second, "calls")
    assert calls["Shop.Orders.OrderService.Pay"] == ("Shop.Orders.OrderService.Pay", "System.Math.Pay")
    assert calls["Shop.Orders.OrderService.Round"] == ("Shop.Orders.OrderService.Round", "System.Math.Round")
    receipt = units["Shop.Orders.OrderService.Receipt.Receipt"]
    assert receipt.parent == "Shop.Orders.OrderService.Receipt"
    assert _deps(receipt, "calls")["Shop.Orders.OrderService.Discount"][:2] == (
        "Shop.Orders.OrderService.Receipt.OrderService.Discount", "Shop.Orders.OrderService.Discount",
    )
    service = units["Shop.Orders.OrderService"]
    assert set(_deps(service, "import")) == {"Microsoft.Extensions.Logging", "System.Math"}
    assert _deps(units["Shop.Orders.OrderService.Place"], "code_reference")["Order"][:2] == (
        "Shop.Orders.OrderService.Order", "Shop.Orders.Order",
    )


def test_top_level_statements_get_a_file_unit() -> None:
    units = _extract("src/Program.cs")
    program = units["src/Program.cs"]
    assert (program.type, program.line_start, program.line_end) == ("file", 1, 4)
    assert _deps(program, "import") == {"Shop.Orders": ("Shop.Orders",)}
    assert "InMemoryOrderRepository" in _deps(program, "code_reference")


def test_edges_resolve_across_files() -> None:
    edges = linked_edges([u for f in extract_tree(ROOT) for u in f.units])
    assert edges["Shop.Orders.InMemoryOrderRepository"][("Shop.Orders.IOrderRepository", "implements")] == (
        "Shop.Orders.IOrderRepository"
    )
    assert edges["Shop.Orders.OrderService.Place"][("Shop.Orders.Order", "code_reference")] == "Shop.Orders.Order"
    assert edges["Shop.Orders.OrderService.Receipt.Receipt"][("Shop.Orders.OrderService.Discount", "calls")] == (
        "Shop.Orders.OrderService.Discount"
    )
    assert edges["src/Program.cs"][("Shop.Orders.InMemoryOrderRepository", "code_reference")] == (
        "Shop.Orders.InMemoryOrderRepository"
    )
    assert ("Shop.Orders.OrderService.Round", "calls") not in edges["Shop.Orders.OrderService.Discount"]


def test_members_kinds_and_heritage_rules() -> None:
    source = b"""namespace A.B
{
    public interface IShape : IComparable { double Area(); }
    public abstract class Base { protected abstract void Draw(); ~Base() { } }
    public class Square : Base, IShape
    {
        public double Area() => 1;
        protected override void Draw() { }
        public static Square operator +(Square a, Square b) => a;
        public int this[int i] { get { return i; } }
        public partial void Hook();
        [DllImport("x")] static extern int Native();
    }
    public struct Point : IEquatable<Point> { }
    public delegate void Changed(object sender);
}
"""
    units = {u.identifier: u for u in extract("x.cs", source).units}
    assert units["A.B.IShape"].metadata["extends"] == ["IComparable"]
    assert _deps(units["A.B.IShape"], "superclass")
    assert units["A.B.Base.~Base"].metadata["kind"] == "destructor"
    assert units["A.B.Base.Draw"].metadata["abstract"] is True
    square = units["A.B.Square"]
    assert (square.metadata["extends"], square.metadata["implements"]) == (["Base"], ["IShape"])
    assert units["A.B.Square.operator +"].type == "method"
    assert units["A.B.Square.this[]"].type == "property"
    assert "A.B.Square.Hook" not in units  # the declaring half of a partial method
    native = units["A.B.Square.Native"]
    assert (native.metadata["attributes"], native.signature) == (['DllImport("x")'], "static extern int Native()")
    assert units["A.B.Point"].metadata["implements"] == ["IEquatable"]
    assert (units["A.B.Changed"].type, units["A.B.Changed"].signature) == (
        "delegate", "public delegate void Changed(object sender)",
    )


def test_clean_doc_drops_summary_wrappers() -> None:
    assert clean_doc("/// <summary>\n/// Places orders.\n/// </summary>") == "Places orders."
    assert clean_doc("/// <summary>One.</summary>\n/// <param name=\"x\">X.</param>") == 'One.\n<param name="x">X.</param>'
    assert clean_doc(None) is None


def test_syntax_errors_keep_what_parses() -> None:
    source = b"namespace N;\nclass Good { void M() { } }\nclass Bad { void ( }\n"
    result = extract("x.cs", source)
    assert "N.Good.M" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = {u.identifier: u for u in extract("x.cs", b"/// caf\xe9 \xff\nclass C { string M() => \"\xfe\"; }\n").units}
    assert "\ufffd" in (units["C"].docstring or "")
    assert extract("blob.cs", bytes(range(256)) * 8).units[0].type == "file"
    assert [(u.identifier, u.type) for u in extract("e.cs", b"").units] == [("e.cs", "file")]


def test_deep_nesting_does_not_recurse() -> None:
    nested = "".join(f"class C{i} {{\n" for i in range(200)) + "void M() { }\n" + "}\n" * 200
    units = [u.identifier for u in extract("deep.cs", nested.encode()).units]
    assert units[-1] == ".".join(f"C{i}" for i in range(200)) + ".M"
    depth = 3000
    source = f"class D {{ int M() {{ return {'(' * depth}N(){')' * depth}; }} int N() => 1; }}\n".encode()
    units_by_id = {u.identifier: u for u in extract("d.cs", source).units}
    assert _deps(units_by_id["D.M"], "calls") == {"D.N": ("D.N",)}


def test_names_read_from_text_or_tree_alike() -> None:
    """Dotted and generic names come from the text when the tree has no error and from the tree
    otherwise (or when a comment or `global::` sits in them); both give the same edges."""
    source = b"""namespace N {
class A {
  void F() { this.M<int>(); Foo.Bar(); Foo . Baz(); x.Y(); A.B.C(); global::Z.Q(); this.G();
    List<Dictionary<K, V.W>> l; A . B<C.D<E>> z; P</*c*/Q> p; }
  void M<T>() {} void G() {}
}
}"""
    expected = [
        ("N.A.M", "calls"), ("N.A.Foo.Bar", "calls"), ("N.A.Foo.Baz", "calls"), ("N.A.G", "calls"),
        ("List", "code_reference"), ("Dictionary", "code_reference"), ("K", "code_reference"),
        ("V.W", "code_reference"), ("A.B", "code_reference"), ("C.D", "code_reference"), ("E", "code_reference"),
        ("P", "code_reference"), ("Q", "code_reference"),
    ]
    for name, text in (("a.cs", source), ("b.cs", source.replace(b"void G() {}", b"void G() { Foo.Bar( }"))):
        result = extract(name, text)
        assert bool(result.warnings) == (name == "b.cs")
        method = {u.identifier: u for u in result.units}["N.A.F"]
        assert [(d.target, d.via) for d in method.dependencies] == expected
