"""Scala extraction over the shop fixture (Scala 2 braces and Scala 3 indentation), plus broken,
binary and deeply nested input."""

from __future__ import annotations

from pathlib import Path

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from tests.linking_helpers import link_fixture, resolved
from woods.extract import extract_file, language_for
from woods.extract.scala import extract
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "scala_app"
SRC = "src/main/scala/com/acme/shop"
PKG = "com.acme.shop"


def _extract(rel: str) -> dict[str, Unit]:
    units: dict[str, Unit] = {}
    for unit in extract(f"{SRC}/{rel}", (ROOT / SRC / rel).read_bytes()).units:
        units.setdefault(f"{unit.identifier}@{unit.type}", unit)
    assert extract_fixture(extract, ROOT, f"{SRC}/{rel}", "scala")  # parses without warnings
    return units


def _line(rel: str, needle: str) -> int:
    return line_of(ROOT, f"{SRC}/{rel}", needle)


def test_registered_for_scala_files() -> None:
    assert language_for("a/B.scala") == "scala" and language_for("build/worksheet.sc") == "scala"
    assert extract_file(f"{SRC}/Main.scala", (ROOT / SRC / "Main.scala").read_bytes()).language == "scala"


def test_chained_package_clauses_case_class_and_companion_object() -> None:
    rel = "model/Money.scala"
    units = _extract(rel)
    money = units[f"{PKG}.model.Money@class"]
    assert (money.parent, money.namespace, money.metadata["case"]) == (None, f"{PKG}.model", True)
    assert money.signature == "final case class Money(minor: Long, currency: Currency) extends Ordered[Money]"
    assert money.docstring == "An amount of money in minor units, never a floating point number.\n\n@param minor amount in the currency's minor unit"
    assert money.metadata["modifiers"] == ["final"] and money.metadata["extends"] == ["Ordered"]
    assert (money.line_start, money.line_end) == (_line(rel, "final case class Money"), _line(rel, "cannot mix") + 1)
    companion = units[f"{PKG}.model.Money@object"]
    assert (companion.line_start, companion.line_end) == (_line(rel, "object Money {"), _line(rel, "object Money {") + 13)
    plus = units[f"{PKG}.model.Money.+@method"]
    assert (plus.parent, plus.signature, plus.docstring) == (money.identifier, "def +(other: Money): Money", "Adds two amounts of the same currency.")
    assert deps_by_via(plus, "calls") == {f"{PKG}.model.Money.requireSameCurrency": (f"{PKG}.model.Money.requireSameCurrency", f"{PKG}.model.requireSameCurrency")}
    assert units[f"{PKG}.model.Money.Zero@value"].metadata == {"mutable": False}
    # Scala 3 indentation: the enum ends at its last case, not at the Scaladoc of the next class.
    currency = units[f"{PKG}.model.Currency@enum"]
    assert (currency.line_start, currency.line_end) == (_line(rel, "enum Currency"), _line(rel, "case JPY"))
    assert currency.docstring == "A currency with its ISO code and the number of minor units (cents) it uses."
    parse = units[f"{PKG}.model.Money.parse@method"]
    assert (parse.line_start, parse.line_end) == (_line(rel, "def parse"), _line(rel, "case _ => None") + 1)


def test_traits_abstract_members_and_every_parent_is_a_superclass() -> None:
    rel = "model/Product.scala"
    units = _extract(rel)
    priced = units[f"{PKG}.model.Priced@trait"]
    assert priced.docstring == "Anything with a unit price."
    assert units[f"{PKG}.model.Priced.unitPrice@method"].metadata == {"abstract": True}
    assert "abstract" not in units[f"{PKG}.model.Priced.describe@method"].metadata
    weighed = units[f"{PKG}.model.WeighedProduct@class"]
    assert weighed.metadata["extends"] == ["Product"] and weighed.metadata["with"] == ["Taxable"]
    assert list(deps_by_via(weighed, "superclass")) == [f"{PKG}.model.Product", f"{PKG}.model.Taxable"]
    assert weighed.signature == (
        "class WeighedProduct(sku: String, name: String, pricePerKg: Money, val grams: Int) "
        "extends Product(sku, name, pricePerKg) with Taxable"
    )
    assert (weighed.line_start, weighed.line_end) == (_line(rel, "class WeighedProduct"), _line(rel, "class WeighedProduct") + 4)


def test_imports_renames_wildcards_and_calls_through_objects() -> None:
    units = _extract("pricing/Discounts.scala")
    rule = units[f"{PKG}.pricing.DiscountRule@trait"]
    assert list(deps_by_via(rule, "import")) == [f"{PKG}.model.Money", f"{PKG}.model.Product", f"{PKG}.cart"]
    discount = units[f"{PKG}.pricing.DiscountRule.discount@method"]
    # `Cart` comes from the wildcard import: the package's spelling first, the wildcard's next.
    assert deps_by_via(discount, "code_reference")[f"{PKG}.pricing.Cart"] == (f"{PKG}.pricing.Cart", f"{PKG}.cart.Cart")
    describe = units[f"{PKG}.pricing.Discounts.describe@method"]
    assert f"{PKG}.model.Product" in deps_by_via(describe, "code_reference")  # `Item` is the renamed Product
    standard = units[f"{PKG}.pricing.Discounts.standard@value"]
    assert standard.docstring == "The rules applied at checkout, in order."
    assert f"{PKG}.pricing.BuyNPayLess" in deps_by_via(standard, "code_reference")  # `new BuyNPayLess(3)`


def test_scala3_top_level_given_extension_and_main() -> None:
    rel = "Main.scala"
    units = _extract(rel)
    assert set(units) == {f"{PKG}.moneyOrdering@given", f"{PKG}.show@function", f"{PKG}.demo@function"}
    show = units[f"{PKG}.show@function"]
    assert (show.metadata, show.docstring, show.line_start) == ({"extension": "Money"}, '"12.34 EUR"', _line(rel, "def show"))
    demo = units[f"{PKG}.demo@function"]
    assert demo.signature == "@main def demo(): Unit" and demo.metadata == {"annotations": ["@main"]}
    assert (demo.line_start, demo.line_end) == (_line(rel, "@main def demo"), _line(rel, "println(cart"))
    assert f"{PKG}.cart.Cart" in deps_by_via(demo, "code_reference")


def test_edges_resolve_across_the_project() -> None:
    _units, edges = link_fixture(extract, ROOT, ("*.scala",))
    assert resolved(edges, f"{PKG}.cart.Cart.checkout", "calls") == {f"{PKG}.pricing.Discounts.best"}
    assert resolved(edges, f"{PKG}.pricing.DiscountRule.discount", "code_reference") == {f"{PKG}.cart.Cart", f"{PKG}.model.Money"}
    assert resolved(edges, f"{PKG}.model.WeighedProduct", "superclass") == {f"{PKG}.model.Product", f"{PKG}.model.Taxable"}
    assert f"{PKG}.model.Money" in resolved(edges, f"{PKG}.pricing.DiscountRule", "import")
    # Calls nothing declares (`copy` of a case class) are dropped by the linker.
    assert not any(e.via == "calls" for e in edges[f"{PKG}.model.Money.times"])


def test_package_blocks_package_objects_and_nested_types() -> None:
    source = b"package a {\n  package object util {\n    def now(): Long = 1L\n  }\n  object Outer {\n    class Inner { def f = now() }\n  }\n}\n"
    units = {u.identifier: u for u in extract("x.scala", source).units}
    assert units["a.util"].type == "package_object"
    assert units["a.util.now"].type == "function"
    assert units["a.Outer.Inner.f"].parent == "a.Outer.Inner"
    assert deps_by_via(units["a.Outer.Inner.f"], "calls") == {"a.now": ("a.now",)}


def test_overloads_get_numbered_and_local_definitions_are_not_units() -> None:
    source = b"object O {\n  def f(x: Int) = { def local = 1; local }\n  def f(x: String) = 2\n}\n"
    ids = [u.identifier for u in extract("o.scala", source).units]
    assert ids == ["O", "O.f", "O.f#2"]


def test_syntax_errors_keep_what_parses() -> None:
    source = b"package p\n\nclass Good { def ok = 1 }\n\nclass Bad { def = = }\n\nobject Later\n"
    result = extract("p/x.scala", source)
    assert {"p.Good", "p.Good.ok"} <= {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    unit = extract("x.scala", b"/** caf\xe9 */\nobject X { val s = \"\xff\" }\n").units[0]
    assert unit.identifier == "X" and "\ufffd" in unit.docstring
    assert extract("bin.scala", bytes(range(256)) * 8).units is not None
    assert extract("empty.scala", b"").units == ()


def test_deep_nesting_does_not_recurse() -> None:
    depth = 3000
    source = f"object D {{ def f = {'(' * depth}1{')' * depth} }}\n".encode()
    assert [u.identifier for u in extract("d.scala", source).units] == ["D", "D.f"]
    nested = "".join(f"object N{i} {{\n" for i in range(300)) + "def g = 1\n" + "}\n" * 300
    units = extract("n.scala", nested.encode()).units
    assert len(units) == 301 and units[-1].identifier.endswith(".N299.g")


def test_innermost_spans_nest_and_leave_gaps_unowned() -> None:
    from woods.extract.scopes import Spans, innermost

    spans = [(0, 100), (10, 50), (20, 30), (60, 70), (10, 15)]
    assert innermost(spans, [5, 12, 25, 35, 65, 99, 100]) == [0, 4, 2, 1, 3, 0, None]
    assert Spans([(5, 9)]).owners([9, 4, 5]) == [None, None, 0]  # positions in any order


def test_a_worksheet_without_definitions_is_one_unit() -> None:
    units = extract("scripts/try.sc", b'println("hello")\nval xs = List(1, 2)\n').units
    assert [(u.identifier, u.type) for u in units] == [("xs", "value")]
    units = extract("scripts/run.sc", b'println("hello")\n').units
    assert [(u.identifier, u.type, u.line_start, u.line_end) for u in units] == [("scripts/run.sc", "script", 1, 1)]
