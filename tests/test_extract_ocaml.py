"""OCaml extraction over the shop fixture (an interface and its implementation, a module type and
a functor, nested modules, `open`, a dune-wrapped library used from an executable), plus broken,
binary and deep input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from tests.linking_helpers import link_fixture, resolved
from woods.extract import language_for, registry
from woods.extract.ocaml import extract, module_name
from woods.units import Unit

# A dependency of woods (pyproject.toml), missing only from an install older than the language.
pytest.importorskip("tree_sitter_ocaml")

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "ocaml_lib"
INVOICE = "lib/invoice.ml"
TAX = "lib/tax.ml"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "ocaml")


def _line(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


@pytest.mark.parametrize(
    ("path", "name"), [("lib/money.ml", "Money"), ("src/http_client.mli", "Http_client"), ("main.ml", "Main")]
)
def test_a_file_is_the_module_named_after_it(path: str, name: str) -> None:
    assert module_name(path) == name


def test_registered_for_implementations_and_interfaces() -> None:
    assert language_for("lib/money.ml") == "ocaml" and language_for("lib/money.mli") == "ocaml"
    ocaml = registry.BY_NAME["ocaml"]
    assert (ocaml.grammar_for("lib/money.ml"), ocaml.grammar_for("lib/money.mli")) == ("ocaml", "ocaml_interface")


def test_an_interface_and_its_specifications() -> None:
    units = _extract("lib/money.mli")
    money = units["Money"]
    assert (money.type, money.line_start, money.line_end) == ("interface", 1, _line("lib/money.mli", "exception"))
    assert money.docstring == "Amounts of money, in cents."
    zero = units["Money.zero"]
    assert (zero.type, zero.signature, zero.docstring) == ("val", "val zero : t", "No money at all.")
    assert deps_by_via(zero, "code_reference") == {"Money.t": ("Money.t",)}
    assert units["Money.add"].docstring == "[add a b] is the sum of [a] and [b]."
    assert units["Money.( + )"].type == "val"
    assert (units["Money.t"].type, units["Money.t"].metadata) == ("type", {"kind": "abstract"})
    assert units["Money.Negative"].type == "exception"


def test_lets_types_and_operators_of_an_implementation() -> None:
    units = _extract("lib/money.ml")
    assert (units["Money"].type, units["Money"].docstring) == ("module", "Amounts of money, in cents.")
    assert units["Money.t"].metadata == {"kind": "record", "fields": ["cents"]}
    assert units["Money.zero"].type == "value"
    add = units["Money.add"]
    assert (add.type, add.signature, add.docstring) == ("function", "let add a b", "[add a b] is the sum of [a] and [b].")
    assert deps_by_via(add, "calls") == {"Money.of_cents": ("Money.of_cents",)}
    plus = units["Money.( + )"]
    assert (plus.type, plus.signature) == ("value", "let ( + )")
    assert deps_by_via(plus, "code_reference") == {"Money.add": ("Money.add",)}  # a function named, not applied
    assert deps_by_via(units["Money.to_string"], "calls") == {}  # Printf is the standard library


def test_module_types_functors_and_functor_parameters() -> None:
    units = _extract(TAX)
    rated = units["Tax.RATED"]
    assert (rated.type, rated.docstring) == ("module_type", "What a tax rule needs to know about an amount.")
    assert (units["Tax.RATED.cents"].type, units["Tax.RATED.cents"].parent) == ("val", "Tax.RATED")
    assert deps_by_via(units["Tax.RATED.cents"], "code_reference") == {"Tax.RATED.amount": ("Tax.RATED.amount",)}
    make = units["Tax.Make"]
    assert (make.type, make.metadata, make.signature) == ("functor", {"parameters": ["R : RATED"]}, "module Make (R : RATED)")
    assert (make.line_start, make.line_end) == (_line(TAX, "module Make"), _line(TAX, "module Make") + 4)
    due = units["Tax.Make.due"]
    assert due.parent == "Tax.Make"
    # `R.cents` is what the parameter's module type declares.
    assert deps_by_via(due, "calls") == {"Tax.RATED.cents": ("Tax.RATED.cents", "RATED.cents")}
    assert deps_by_via(due, "code_reference") == {"Tax.RATED.rate": ("Tax.RATED.rate", "RATED.rate")}
    assert deps_by_via(units["Tax.Make.describe"], "calls") == {"Tax.Make.due": ("Tax.Make.due",)}
    standard = units["Tax.Standard"]
    assert (standard.type, standard.metadata) == ("module", {"applies": "Make"})
    assert "Tax.Make" in deps_by_via(standard, "code_reference")


def test_opens_and_rec_and_bindings_and_nested_modules() -> None:
    units = _extract(INVOICE)
    module = units["Invoice"]
    assert deps_by_via(module, "import") == {"Money": ("Money",)}
    assert units["Invoice.status"].metadata == {"kind": "variant", "constructors": ["Draft", "Sent", "Paid"]}
    line, record = units["Invoice.line"], units["Invoice.t"]
    assert (line.signature, record.signature) == ("type line", "and t")
    assert (record.line_start, record.line_end) == (_line(INVOICE, "and t ="), _line(INVOICE, "and t ="))
    assert deps_by_via(line, "code_reference") == {"Money.t": ("Money.t",)}  # not `Money.Money.t`
    total, count = units["Invoice.total"], units["Invoice.count"]
    assert (total.metadata, count.metadata, count.signature) == ({"rec": True}, {"rec": True}, "and count lines")
    assert (total.line_start, total.line_end) == (_line(INVOICE, "let rec total"), _line(INVOICE, "line :: rest"))
    assert units["Invoice.empty"].docstring == "An invoice with no lines."
    printer = units["Invoice.Printer.print"]
    assert printer.parent == "Invoice.Printer"
    # A name of the enclosing structure first, then through `open Money`.
    assert deps_by_via(printer, "calls") == {
        "Invoice.Printer.line_to_string": ("Invoice.Printer.line_to_string", "Money.line_to_string")
    }
    assert deps_by_via(units["Invoice.Printer.line_to_string"], "calls") == {"Money.to_string": ("Money.to_string",)}
    tax = deps_by_via(units["Invoice.tax"], "calls")  # `open Money` may hold a `Tax`, so it is tried first
    assert tax["Money.Tax.Standard.due"] == ("Money.Tax.Standard.due", "Tax.Standard.due", "Standard.due")
    assert "Invoice.total" in tax


def test_edges_resolve_across_the_library_and_through_its_wrapper() -> None:
    _units, edges = link_fixture(extract, ROOT, ("*.ml", "*.mli"))
    assert resolved(edges, "Invoice", "import") == {"Money"}
    assert resolved(edges, "Invoice.line", "code_reference") == {"Money.t"}
    assert resolved(edges, "Invoice.Printer.line_to_string", "calls") == {"Money.to_string"}
    # bin/main.ml reaches the library through dune's wrapper module `Shop`.
    assert resolved(edges, "Main", "calls") == {"Money.of_cents", "Invoice.add_line", "Invoice.Printer.print", "Invoice.tax"}
    assert resolved(edges, "Main.usage", "code_reference") == {"Invoice.empty"}


def test_classes_externals_includes_local_opens_and_unnamed_bindings() -> None:
    source = (
        b"include Base.Helpers\n"
        b"external now : unit -> float = \"caml_now\"\n"
        b"class counter = object\n  val mutable n = 0\n  method incr = n <- n + 1\nend\n"
        b"let () = print_endline \"side effect\"\n"
        b"let x, y = 1, 2\n"
        b"let run () = let open Clock in tick (); Timer.(start ())\n"
        b"module Alias = Base.Helpers\n"
    )
    units = {u.identifier: u for u in extract("lib/app.ml", source).units}
    assert deps_by_via(units["App"], "include") == {"Base.Helpers": ("Base.Helpers", "Helpers")}
    assert units["App.now"].type == "external"
    assert (units["App.counter"].type, units["App.counter#incr"].type) == ("class", "method")
    assert units["App.counter#incr"].parent == "App.counter"
    assert {"App.x", "App.y"}.isdisjoint(units)  # no unit for a pattern
    run = units["App.run"]
    assert deps_by_via(run, "import") == {"Clock": ("Clock",), "Timer": ("Timer",)}  # local opens
    assert units["App.Alias"].metadata == {"alias": "Base.Helpers"}


def test_syntax_errors_keep_what_parses() -> None:
    source = b"let good x = x\n\nlet bad = (\n\nlet later y = y\n"
    result = extract("lib/x.ml", source)
    assert "X.good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1 and result.warnings[0].startswith("lib/x.ml: syntax errors (at ")


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = extract("lib/x.ml", b"(** caf\xe9 *)\nlet f () = \"\xff\"\n").units
    assert units[1].identifier == "X.f" and "\ufffd" in (units[1].docstring or "")
    assert extract("lib/bin.ml", bytes(range(256)) * 8).units[0].type == "module"
    assert extract("lib/empty.ml", b"").units == ()
    assert extract("lib/blank.mli", b"\n\n").units == ()


def test_deep_nesting_does_not_recurse() -> None:
    depth = 2000
    source = f"let f () = {'(' * depth}1{')' * depth}\n".encode()
    assert [u.identifier for u in extract("lib/d.ml", source).units] == ["D", "D.f"]
    nested = "".join(f"module M{i} = struct\n" for i in range(200)) + "let g () = ()\n" + "end\n" * 200
    units = extract("lib/n.ml", nested.encode()).units
    assert len(units) == 202 and units[-1].identifier.endswith(".M199.g")
