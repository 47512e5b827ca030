"""Java extraction over the inventory fixture app, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from woods.extract.java import extract
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "java_app"
SRC = "src/main/java/com/acme/inventory"
PKG = "com.acme.inventory"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "java")


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


def test_classes_nested_types_and_overloads() -> None:
    rel = f"{SRC}/service/InventoryService.java"
    units = _extract(rel)
    service = units[f"{PKG}.service.InventoryService"]
    assert (service.type, service.parent, service.namespace) == ("class", None, f"{PKG}.service")
    assert service.docstring == "Receives and ships stock, and produces purchase orders for products that run low."
    assert service.signature == "public class InventoryService"
    # Overloaded names carry their parameter types; single names stay short.
    assert f"{PKG}.service.InventoryService#receive(String,int)" in units
    assert f"{PKG}.service.InventoryService#receive(List<PurchaseOrder.Line>)" in units
    ship = units[f"{PKG}.service.InventoryService#ship"]
    assert (ship.type, ship.parent, ship.namespace) == ("method", service.identifier, service.identifier)
    assert ship.signature == "public void ship(String sku, int quantity)"
    assert ship.docstring == "Removes shipped stock, refusing to go below zero."
    assert ship.line_start == _line_of(rel, "public void ship(")
    assert ship.line_end == ship.line_start + 6
    constructors = [u for u in units.values() if u.type == "constructor" and u.parent == service.identifier]
    assert [c.identifier.split("#")[1] for c in constructors] == [
        "InventoryService(ProductRepository)",
        "InventoryService(ProductRepository,ReorderPolicy)",
    ]
    order = units[f"{PKG}.service.InventoryService.PurchaseOrder"]
    assert (order.type, order.parent) == ("class", service.identifier)
    line = units[f"{PKG}.service.InventoryService.PurchaseOrder.Line"]
    assert (line.type, line.parent) == ("record", order.identifier)
    assert units[f"{PKG}.service.InventoryService#requirePositive"].metadata["modifiers"] == ["private", "static"]


def test_imports_type_references_and_calls() -> None:
    units = _extract(f"{SRC}/service/InventoryService.java")
    service = units[f"{PKG}.service.InventoryService"]
    assert f"{PKG}.repository.ProductRepository" in _deps(service, "import")
    refs = _deps(service, "code_reference")
    assert refs[f"{PKG}.repository.ProductRepository"][0] == f"{PKG}.repository.ProductRepository"
    # A same-package class that is not imported is looked up in the file's package.
    assert refs[f"{PKG}.service.ReorderPolicy"] == (f"{PKG}.service.ReorderPolicy",)
    level = units[f"{PKG}.service.InventoryService#level"]
    assert f"{PKG}.model.StockLevel#of" in _deps(level, "calls")
    assert not any("String" in t or "Math" in t for t in _deps(level, "code_reference"))
    delivery = units[f"{PKG}.service.InventoryService#receive(List<PurchaseOrder.Line>)"]
    calls = _deps(delivery, "calls")
    # A call to an overloaded name lists every overload for the linker.
    assert calls[f"{PKG}.service.InventoryService#receive(String,int)"] == (
        f"{PKG}.service.InventoryService#receive(String,int)",
        f"{PKG}.service.InventoryService#receive(List<PurchaseOrder.Line>)",
    )
    assert f"{PKG}.service.InventoryService.PurchaseOrder.Line" in _deps(delivery, "code_reference")


def test_interfaces_implements_enums_and_records() -> None:
    policy = _extract(f"{SRC}/service/ThresholdReorderPolicy.java")[f"{PKG}.service.ThresholdReorderPolicy"]
    assert _deps(policy, "implements") == {f"{PKG}.service.ReorderPolicy": (f"{PKG}.service.ReorderPolicy",)}
    assert policy.docstring.splitlines()[0].startswith("Orders the product's fixed reorder quantity")
    repo = _extract(f"{SRC}/repository/ProductRepository.java")
    assert repo[f"{PKG}.repository.ProductRepository"].type == "interface"
    find = repo[f"{PKG}.repository.ProductRepository#findBySku"]
    assert find.metadata["abstract"] is True and find.signature == "Optional<Product> findBySku(String sku)"
    memory = _extract(f"{SRC}/repository/InMemoryProductRepository.java")
    find_impl = memory[f"{PKG}.repository.InMemoryProductRepository#findBySku"]
    assert find_impl.metadata["annotations"] == ["Override"]
    assert find_impl.line_start == _line_of(f"{SRC}/repository/InMemoryProductRepository.java", "@Override")
    level = _extract(f"{SRC}/model/StockLevel.java")
    assert level[f"{PKG}.model.StockLevel"].type == "enum"
    assert level[f"{PKG}.model.StockLevel#of"].metadata["modifiers"] == ["public", "static"]
    product = _extract(f"{SRC}/model/Product.java")
    assert product[f"{PKG}.model.Product"].type == "record"
    compact = product[f"{PKG}.model.Product#Product"]
    assert compact.type == "constructor" and compact.metadata["parameters"] == ["String", "String", "int", "int"]


def test_default_package_anonymous_classes_and_interface_extends() -> None:
    source = b"""import java.util.function.Supplier;
interface Named extends Comparable<Named>, Supplier<String> {}
class Task {
    void run() {
        new Thread(new Runnable() { public void run() { helper(); } }).start();
    }
    void helper() {}
}
"""
    units = {u.identifier: u for u in extract("Task.java", source).units}
    assert set(units) == {"Named", "Task", "Task#run", "Task#helper"}
    assert "java.util.function.Supplier" in _deps(units["Named"], "superclass")
    assert _deps(units["Task#run"], "calls") == {"Task#helper": ("Task#helper",)}


def test_syntax_errors_keep_what_parses() -> None:
    source = b"package a;\nclass Ok { void fine() {} }\nclass Broken { void m( { }\n"
    result = extract("a/Ok.java", source)
    assert {"a.Ok", "a.Ok#fine"} <= {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_never_raises() -> None:
    source = b"package a;\n/** caf\xe9 \xff */\nclass C { String s = \"\xfe\"; }\n"
    unit = extract("a/C.java", source).units[0]
    assert unit.identifier == "a.C" and "\ufffd" in unit.docstring


def test_deep_nesting_does_not_recurse() -> None:
    depth = 2000
    expression = "(" * depth + "1" + ")" * depth
    units = extract("D.java", f"class D {{ int x = {expression}; }}\n".encode()).units
    assert [u.identifier for u in units] == ["D"]
    nested = "".join(f"class N{i} {{\n" for i in range(300)) + "}\n" * 300
    units = extract("p/N0.java", b"package p;\n" + nested.encode()).units
    assert len(units) == 300
    assert units[-1].identifier == "p." + ".".join(f"N{i}" for i in range(300))
    assert units[-1].parent == units[-2].identifier and units[-1].line_start == 301
