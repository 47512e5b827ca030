"""Dart extraction over the shop fixture (a library with exports, classes, a mixin, an extension,
a part, prefixed and filtered imports, a command-line entry point), plus broken, binary and deep
input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from tests.linking_helpers import link_fixture, resolved
from woods.extract import language_for
from woods.extract.dart import extract, library_id, uri_candidates
from woods.units import Unit

# A dependency of woods (pyproject.toml), missing only from an install older than the language.
pytest.importorskip("tree_sitter_dart")

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "dart_app"
INVOICE = "lib/src/invoice.dart"
MONEY = "lib/src/money.dart"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "dart")


def _line(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


def test_registered_for_dart() -> None:
    assert language_for("lib/main.dart") == "dart"
    assert library_id("lib/src/invoice.dart") == "lib/src/invoice"


@pytest.mark.parametrize(
    ("uri", "file_path", "candidates"),
    [
        ("money.dart", "lib/src/tax.dart", ("lib/src/money",)),
        ("../shop.dart", "lib/src/tax.dart", ("lib/shop",)),
        ("package:shop/src/money.dart", "bin/main.dart", ("lib/src/money", "shop/lib/src/money", "packages/shop/lib/src/money")),
        # In a package of a monorepo: its own directory when the name matches, then a sibling package.
        ("package:shop/a.dart", "packages/shop/lib/b.dart", ("packages/shop/lib/a", "lib/a", "shop/lib/a")),
        ("package:shelf/shelf.dart", "pkgs/shelf_router/lib/src/router.dart",
         ("pkgs/shelf/lib/shelf", "lib/shelf", "shelf/lib/shelf", "packages/shelf/lib/shelf")),
        ("dart:async", "lib/a.dart", ()),
        ("../../outside.dart", "lib/a.dart", ()),
        ("https://example.com/x.dart", "lib/a.dart", ()),
    ],
)
def test_import_uris_name_libraries(uri: str, file_path: str, candidates: tuple[str, ...]) -> None:
    assert uri_candidates(uri, file_path) == candidates


def test_library_unit_imports_and_exports() -> None:
    units = _extract("lib/shop.dart")
    shop = units["lib/shop"]
    assert (shop.type, shop.line_start, shop.line_end, shop.parent) == ("library", 1, 5, None)
    assert shop.docstring == "The shop library: invoices, money and taxes."
    assert shop.metadata == {"name": "shop"}
    assert list(deps_by_via(shop, "import")) == ["lib/src/invoice", "lib/src/money"]  # exports are edges too


def test_classes_constructors_operators_and_accessors() -> None:
    units = _extract(MONEY)
    money = units["lib/src/money:Money"]
    assert (money.type, money.parent, money.signature) == ("class", "lib/src/money", "class Money implements Comparable<Money>")
    assert money.docstring == "An amount of money in cents."
    assert (money.line_start, money.line_end) == (_line(MONEY, "class Money"), _line(MONEY, "String format") - 3)
    unnamed = units["lib/src/money:Money.new"]
    assert (unnamed.type, unnamed.metadata, unnamed.signature) == ("constructor", {"const": True}, "const Money(this.cents)")
    zero = units["lib/src/money:Money.zero"]
    assert (zero.docstring, zero.metadata) == ("No money at all.", {"const": True})
    parse = units["lib/src/money:Money.parse"]
    assert parse.metadata == {"factory": True}
    assert deps_by_via(parse, "code_reference") == {"lib/src/money:Money": ("lib/src/money:Money",)}
    assert units["lib/src/money:Money.operator+"].metadata == {"operator": True}
    assert units["lib/src/money:Money.isZero"].type == "getter"
    compare = units["lib/src/money:Money.compareTo"]
    assert (compare.type, compare.line_start) == ("method", _line(MONEY, "@override"))  # its annotation included
    assert "cents" not in {u.identifier.rpartition(".")[2] for u in units.values()}  # fields are not units
    fmt = units["lib/src/money:format"]
    assert (fmt.type, fmt.parent, fmt.docstring) == ("function", "lib/src/money", "Formats [money] with a currency sign.")


def test_mixins_extensions_and_abstract_members() -> None:
    units = _extract("lib/src/tax.dart")
    billable = units["lib/src/tax:Billable"]
    assert billable.metadata == {"modifiers": ["abstract", "interface"]}
    assert units["lib/src/tax:Billable.describe"].metadata == {"abstract": True}
    assert units["lib/src/tax:Priced.price"].metadata == {"abstract": True}
    taxable = units["lib/src/tax:Taxable"]
    assert (taxable.type, taxable.signature) == ("mixin", "mixin Taxable on Priced")
    assert deps_by_via(taxable, "superclass") == {"lib/src/tax:Priced": ("lib/src/tax:Priced",)}  # `on Priced`
    extension = units["lib/src/tax:MoneyTax"]
    assert (extension.type, extension.metadata) == ("extension", {"on": "Money"})
    assert deps_by_via(extension, "code_reference") == {"lib/src/money:Money": ("lib/src/money:Money",)}
    with_tax = units["lib/src/tax:MoneyTax.withTax"]
    assert (with_tax.type, with_tax.parent, with_tax.docstring) == ("method", extension.identifier, "This amount with [rate] added.")


def test_heritage_through_a_prefixed_import_and_member_calls() -> None:
    units = _extract(INVOICE)
    library = units["lib/src/invoice"]
    assert deps_by_via(library, "import") == {
        "lib/src/money": ("lib/src/money", "shop/lib/src/money", "packages/shop/lib/src/money"),
        "lib/src/tax": ("lib/src/tax",),
    }  # `dart:math` is no edge
    assert deps_by_via(library, "include") == {"lib/src/invoice_status": ("lib/src/invoice_status",)}
    invoice = units["lib/src/invoice:Invoice"]
    assert deps_by_via(invoice, "superclass") == {"lib/src/tax:Priced": ("lib/src/tax:Priced",)}
    assert deps_by_via(invoice, "include") == {"lib/src/tax:Taxable": ("lib/src/tax:Taxable",)}
    assert deps_by_via(invoice, "implements") == {"lib/src/tax:Billable": ("lib/src/tax:Billable",)}  # Comparable: core
    # A name the file does not declare: the part first (the same library), then each import.
    status = deps_by_via(invoice, "code_reference")["lib/src/invoice_status:InvoiceStatus"]
    assert status[:2] == ("lib/src/invoice_status:InvoiceStatus", "lib/src/money:InvoiceStatus")
    assert units["lib/src/invoice:Invoice.new"].docstring == "An invoice with no lines."
    assert units["lib/src/invoice:Invoice.lines="].type == "setter"
    assert deps_by_via(units["lib/src/invoice:Invoice.add"], "calls") == {
        "lib/src/invoice:Invoice._check": ("lib/src/invoice:Invoice._check",)
    }
    check = deps_by_via(units["lib/src/invoice:Invoice._check"], "calls")
    assert list(check) == ["lib/src/invoice_status:format"] and "lib/src/money:format" in check["lib/src/invoice_status:format"]
    assert units["lib/src/invoice:Invoice.empty"].metadata == {"static": True}


def test_a_part_names_its_library() -> None:
    units = _extract("lib/src/invoice_status.dart")
    assert units["lib/src/invoice_status"].metadata == {"part_of": "invoice.dart"}
    status = units["lib/src/invoice_status:InvoiceStatus"]
    assert (status.type, status.metadata) == ("enum", {"values": ["draft", "sent", "paid"]})
    assert status.docstring == "Where an invoice is in its life."
    assert units["lib/src/invoice_status:InvoiceStatus.isOpen"].parent == status.identifier


def test_edges_resolve_across_the_package() -> None:
    _units, edges = link_fixture(extract, ROOT, ("*.dart",))
    assert resolved(edges, "bin/main", "import") == {"lib/src/invoice", "lib/src/money"}
    assert resolved(edges, "bin/main:main", "calls") == {
        "lib/src/invoice:grandTotal", "lib/src/invoice:Invoice.empty", "lib/src/money:Money.parse"
    }
    assert resolved(edges, "lib/src/invoice:Invoice", "superclass") == {"lib/src/tax:Priced"}
    assert resolved(edges, "lib/src/invoice:Invoice", "code_reference") == {
        "lib/src/money:Money", "lib/src/invoice_status:InvoiceStatus"
    }
    assert resolved(edges, "lib/src/invoice:Invoice._check", "calls") == {"lib/src/money:format"}
    assert resolved(edges, "lib/src/tax:Taxable", "superclass") == {"lib/src/tax:Priced"}


def test_show_hide_prefixes_and_names_without_a_home() -> None:
    source = (
        b"import 'a.dart' show A;\nimport 'b.dart' hide f;\nimport 'c.dart' as c;\nimport 'dart:math' as math;\n"
        b"void g() { f(); h(); c.k(); c.K(); math.max(1, 2); print(1); A.make(); }\n"
        b"math.Random r() => math.Random();\nvoid p() { _helper(); }\n"
    )
    units = {u.identifier: u for u in extract("lib/g.dart", source).units}
    g = units["lib/g:g"]
    assert deps_by_via(g, "calls") == {  # `f` is hidden from b and not shown by a: no edge
        "lib/b:h": ("lib/b:h",), "lib/c:k": ("lib/c:k",), "lib/a:A.make": ("lib/a:A.make", "lib/b:A.make")
    }
    assert deps_by_via(g, "code_reference") == {"lib/c:K": ("lib/c:K",)}  # `c.K()` constructs a class
    assert deps_by_via(units["lib/g:p"], "calls") == {}  # a `_private` name is never imported
    assert units["lib/g:r"].dependencies == ()  # `dart:` names are never edges


def test_unnamed_extensions_extension_types_typedefs_and_top_level_accessors() -> None:
    source = (
        b"extension on String { int get twice => length * 2; }\n"
        b"extension type UserId(int id) { bool get valid => id > 0; }\n"
        b"typedef Handler = void Function(UserId);\n"
        b"int get answer => 42;\nset answer(int v) {}\n"
        b"class P { P.origin() : this(0); factory P.of(int x) = Q; external void native(); }\n"
    )
    units = {u.identifier: u for u in extract("lib/x.dart", source).units}
    assert units["lib/x:String"].type == "extension" and units["lib/x:String.twice"].type == "getter"
    assert units["lib/x:UserId"].type == "extension_type" and "lib/x:UserId.valid" in units
    assert deps_by_via(units["lib/x:Handler"], "code_reference") == {"lib/x:UserId": ("lib/x:UserId",)}
    assert (units["lib/x:answer"].type, units["lib/x:answer="].type) == ("getter", "setter")
    assert units["lib/x:P.origin"].metadata == {"redirects": True}
    assert units["lib/x:P.of"].metadata == {"factory": True, "redirects": True}
    assert units["lib/x:P.native"].metadata == {"external": True}


def test_syntax_errors_keep_what_parses() -> None:
    source = b"void good() {}\n\nclass Broken {\n  void bad( {\n}\n\nvoid later() {}\n"
    result = extract("lib/x.dart", source)
    assert "lib/x:good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1 and result.warnings[0].startswith("lib/x.dart: syntax errors (at ")


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = extract("lib/x.dart", b"/// caf\xe9\nvoid f() { print('\xff'); }\n").units
    assert units[1].identifier == "lib/x:f" and "\ufffd" in (units[1].docstring or "")
    assert extract("lib/bin.dart", bytes(range(256)) * 8).units[0].type == "library"
    assert extract("lib/empty.dart", b"").units == ()
    assert extract("lib/blank.dart", b"\n\n").units == ()


def test_deep_nesting_does_not_recurse() -> None:
    depth = 2000
    source = f"int f() => {'(' * depth}1{')' * depth};\n".encode()
    assert [u.identifier for u in extract("lib/d.dart", source).units] == ["lib/d", "lib/d:f"]
    body = "void g() {\n" + "{\n" * 400 + "h();\n" + "}\n" * 400 + "}\nvoid h() {}\n"
    units = {u.identifier: u for u in extract("lib/g.dart", body.encode()).units}
    assert deps_by_via(units["lib/g:g"], "calls") == {"lib/g:h": ("lib/g:h",)}
