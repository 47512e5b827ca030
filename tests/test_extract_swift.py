"""Swift extraction over the `Inventory` fixture package, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

from tests.extract_helpers import deps_by_via, extract_fixture, extract_tree, line_of, linked_edges
from woods.extract.swift import extract
from woods.store.identity import key_parts
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "swift_pkg"
SRC = "Sources/Inventory"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "swift")


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


def test_structs_enums_initializers_and_computed_properties() -> None:
    rel = f"{SRC}/Item.swift"
    units = _extract(rel)
    assert list(units) == ["Location", "Location.isAvailable", "Item", "Item.init", "Item.adjusted"]
    item = units["Item"]
    assert (item.type, item.parent, item.namespace) == ("struct", None, None)
    assert item.signature == "public struct Item: Hashable, Sendable"
    assert item.docstring == "One stock-keeping unit and how many of it are in stock."
    assert (item.line_start, item.line_end) == (_line_of(rel, "public struct Item"), 35)
    assert item.metadata == {"modifiers": ["public"], "implements": ["Hashable", "Sendable"]}
    assert item.dependencies[0].via == "import" and _deps(item, "implements") == {}  # standard-library protocols
    init = units["Item.init"]
    assert (init.type, init.parent, init.namespace) == ("constructor", "Item", "Item")
    assert (init.signature or "").startswith("public init(sku: String, name: String")
    adjusted = units["Item.adjusted"]
    assert adjusted.docstring == "A copy with `delta` more (or fewer) units, never below zero."
    assert (adjusted.line_start, adjusted.line_end) == (_line_of(rel, "public func adjusted"), _line_of(rel, "return copy") + 1)
    available = units["Location.isAvailable"]
    assert (available.type, available.signature) == ("property", "public var isAvailable: Bool")
    assert "Item.sku" not in units  # stored properties are fields
    assert units["Location"].type == "enum"


def test_protocols_classes_and_conformance() -> None:
    rel = f"{SRC}/Store.swift"
    units = _extract(rel)
    protocol = units["ItemStore"]
    assert (protocol.type, protocol.docstring) == ("protocol", "Anything that keeps items by SKU.")
    requirement = units["ItemStore.item"]
    assert (requirement.type, requirement.metadata["abstract"]) == ("method", True)
    assert "ItemStore.count" not in units  # a property requirement has no body
    store = units["MemoryStore"]
    assert store.signature == "public final class MemoryStore: ItemStore, @unchecked Sendable"
    assert store.metadata["implements"] == ["ItemStore", "Sendable"]  # a protocol of this file, not a superclass
    assert _deps(store, "implements") == {"ItemStore": ("MemoryStore.ItemStore", "ItemStore")}
    restock = units["MemoryStore.restock"]
    assert set(_deps(restock, "calls")) == {"MemoryStore.item", "MemoryStore.save"}
    assert units["MemoryStore.count"].type == "property"


def test_extensions_attach_to_the_extended_type() -> None:
    rel = f"{SRC}/Store+Search.swift"
    units = _extract(rel)
    assert list(units) == ["MemoryStore", "MemoryStore.search", "MemoryStore.allItems", "Item", "Item.description"]
    extension = units["MemoryStore"]
    assert (extension.type, extension.metadata["extension"]) == ("extension", True)
    assert (extension.line_start, extension.line_end) == (_line_of(rel, "extension MemoryStore {"), 13)
    search = units["MemoryStore.search"]
    assert (search.parent, search.metadata["extension"]) == ("MemoryStore", True)
    assert search.docstring == "Items whose name contains `text`, ignoring case."
    assert _deps(search, "calls") == {"MemoryStore.allItems": ("MemoryStore.allItems", "allItems")}
    conformance = units["Item"]
    assert conformance.type == "extension" and conformance.metadata["implements"] == ["CustomStringConvertible"]


def test_free_functions_type_aliases_and_package_manifest() -> None:
    rel = f"{SRC}/Report.swift"
    units = _extract(rel)
    assert list(units) == ["ItemFilter", "stockReport", "availableReport"]
    report = units["availableReport"]
    assert (report.type, report.parent) == ("function", None)
    assert report.signature == "public func availableReport(in store: MemoryStore) -> [String]"
    assert _deps(report, "calls") == {"stockReport": ("stockReport",)}
    assert units["ItemFilter"].signature == "public typealias ItemFilter = (Item) -> Bool"
    manifest = _extract("Package.swift")["Package.swift"]
    assert (manifest.type, manifest.line_start, manifest.line_end) == ("file", 1, 12)
    assert _deps(manifest, "import") == {"PackageDescription": ("PackageDescription",)}


def test_edges_resolve_across_files() -> None:
    edges = linked_edges([u for f in extract_tree(ROOT) for u in f.units])
    assert edges["MemoryStore"][("ItemStore", "implements")] == "ItemStore"
    assert edges["availableReport"][("stockReport", "calls")] == "stockReport"
    assert edges["MemoryStore.search"][("MemoryStore.allItems", "calls")] == "MemoryStore.allItems"
    # A type and its extensions share the identifier: the edge names it, and its key is one of them.
    assert key_parts(edges["ItemFilter"][("Item", "code_reference")] or "") == ("Item", "struct")
    assert key_parts(edges["availableReport"][("MemoryStore", "code_reference")] or "") in {
        ("MemoryStore", "class"), ("MemoryStore", "extension"),
    }
    assert edges["Item"][("Foundation", "import")] is None  # a system module: kept, unresolved


def test_actors_nested_types_and_class_inheritance() -> None:
    source = b"""class Base {}
final class Child: Base, Codable {
    struct Options { var verbose = false }
    subscript(index: Int) -> Int { index }
    deinit { Self.log() }
    static func log() {}
}
actor Counter { func inc() {} }
enum Config {
    @available(*, deprecated)
    public static func `default`() -> Int { 0 }
    @inlinable
    static func plain() -> Int { 1 }
    @discardableResult func bare() -> Int { 2 }
}
"""
    units = {u.identifier: u for u in extract("x.swift", source).units}
    child = units["Child"]
    assert (child.metadata["extends"], child.metadata["implements"]) == (["Base"], ["Codable"])
    assert _deps(child, "superclass") == {"Base": ("Child.Base", "Base")}
    assert units["Child.Options"].parent == "Child"
    assert units["Child.subscript"].type == "method"
    assert units["Child.deinit"].metadata["kind"] == "destructor"
    assert _deps(units["Child.deinit"], "calls") == {"Child.log": ("Child.log",)}
    assert (units["Counter"].type, units["Counter"].metadata["kind"]) == ("class", "actor")
    default = units["Config.default"]  # backticks escape a keyword; attributes are metadata
    assert (default.signature, default.metadata["attributes"]) == ("public static func `default`() -> Int",
                                                                  ["available(*, deprecated)"])
    assert default.line_start == source.decode().splitlines().index("    @available(*, deprecated)") + 1
    assert units["Config.plain"].signature == "static func plain() -> Int"
    assert units["Config.bare"].signature == "func bare() -> Int"  # only attributes before the keyword


def test_syntax_errors_keep_what_parses() -> None:
    source = b"func good() -> Int { 1 }\n\nfunc bad( {\n\nfunc later() {}\n"
    result = extract("x.swift", source)
    assert "good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = {u.identifier: u for u in extract("x.swift", b"/// caf\xe9 \xff\nfunc f() -> String { \"\xfe\" }\n").units}
    assert "\ufffd" in (units["f"].docstring or "")
    assert [u.type for u in extract("blob.swift", bytes(range(256)) * 8).units] == ["file"]
    assert [(u.identifier, u.type) for u in extract("e.swift", b"").units] == [("e.swift", "file")]


def test_deep_nesting_does_not_recurse() -> None:
    nested = "".join(f"struct S{i} {{\n" for i in range(200)) + "func m() {}\n" + "}\n" * 200
    units = [u.identifier for u in extract("deep.swift", nested.encode()).units]
    assert units[-1] == ".".join(f"S{i}" for i in range(200)) + ".m"
    depth = 2000
    source = f"func f() -> Int {{ {'(' * depth}g(){')' * depth} }}\nfunc g() -> Int {{ 1 }}\n".encode()
    by_id = {u.identifier: u for u in extract("d.swift", source).units}
    assert _deps(by_id["f"], "calls") == {"g": ("g",)}
