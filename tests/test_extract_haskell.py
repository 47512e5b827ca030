"""Haskell extraction over the lending-library fixture package, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from tests.linking_helpers import link_fixture, resolved
from woods.extract import language_for
from woods.extract.haskell import extract, module_from_path
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "haskell_pkg"
TYPES = "src/Library/Types.hs"
LOANS = "src/Library/Loans.hs"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "haskell")


def _line(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


def test_registered_for_hs_only() -> None:
    assert language_for("src/A/B.hs") == "haskell"
    assert language_for("docs/Literate.lhs") is None  # the grammar does not parse literate Haskell


def test_module_names_come_from_the_header_else_the_path() -> None:
    assert module_from_path("src/XMonad/Core.hs") == "XMonad.Core"
    assert module_from_path("tests/Properties.hs") == "Properties"
    assert module_from_path("scripts/build.hs") == "build"
    units = extract("scripts/Setup.hs", b"import Distribution.Simple\nmain = defaultMain\n").units
    assert [u.identifier for u in units] == ["Setup", "Setup.main"]


def test_module_unit_docs_and_imports() -> None:
    units = _extract(TYPES)
    module = units["Library.Types"]
    assert (module.type, module.line_start, module.line_end, module.parent) == ("module", 1, _line(TYPES, 'byline names = '), None)
    assert module.docstring == (
        "Module      : Library.Types\nDescription : The nouns of the lending library.\n\n"
        "Books, members and the identifiers that tie them together."
    )
    assert deps_by_via(module, "import") == {"Data.List": ("Data.List",)}
    loans = _extract(LOANS)["Library.Loans"]
    assert loans.docstring == "Lending books out and taking them back."
    assert list(deps_by_via(loans, "import")) == ["Data.Map.Strict", "Library.Types"]


def test_data_newtype_records_and_synonyms() -> None:
    units = _extract(TYPES)
    book = units["Library.Types.Book"]
    assert (book.type, book.signature, book.docstring) == ("data", "data Book", "A book in the catalogue.")
    assert (book.line_start, book.line_end) == (_line(TYPES, "data Book = Book"), _line(TYPES, "data Book = Book") + 6)
    assert book.metadata == {"constructors": ["Book"], "fields": ["bookId", "title", "authors", "genre"],
                             "deriving": ["deriving (Show)"]}
    assert set(deps_by_via(book, "code_reference")) == {"Library.Types.BookId", "Library.Types.Genre"}
    genre = units["Library.Types.Genre"]
    assert genre.metadata["constructors"] == ["Fiction", "Reference", "Periodical"]
    book_id = units["Library.Types.BookId"]
    assert (book_id.type, book_id.line_start, book_id.line_end) == ("newtype", _line(TYPES, "newtype BookId"), _line(TYPES, "deriving stock"))
    assert units["Library.Types.Shelf"].type == "type_alias"


def test_class_methods_defaults_and_instances() -> None:
    units = _extract(TYPES)
    describe_class = units["Library.Types.Describe"]
    assert (describe_class.type, describe_class.signature) == ("class", "class Describe a")
    describe = units["Library.Types.describe"]
    assert (describe.type, describe.parent, describe.metadata) == ("method", describe_class.identifier, {"class": describe_class.identifier})
    # The class method's unit is its signature plus its default equation.
    assert (describe.line_start, describe.line_end) == (_line(TYPES, "describe :: a"), _line(TYPES, 'describe _ = "<nothing'))
    assert describe.docstring == "One line, no trailing newline."
    assert deps_by_via(units["Library.Types.details"], "calls") == {"Library.Types.describe": ("Library.Types.describe",)}
    instance = units["Library.Types.Describe(Member)"]
    assert (instance.type, instance.signature) == ("instance", "instance Describe Member")
    assert instance.metadata == {"class": "Describe", "types": ["Member"]}
    assert deps_by_via(instance, "implements") == {"Library.Types.Describe": ("Library.Types.Describe",)}
    details = units["Library.Types.Describe(Member).details"]
    assert (details.type, details.parent, details.line_start) == ("method", instance.identifier, _line(TYPES, "details m = "))
    book_describe = units["Library.Types.Describe(Book).describe"]
    assert deps_by_via(book_describe, "calls") == {"Library.Types.byline": ("Library.Types.byline",)}


def test_functions_join_signature_and_equations() -> None:
    units = _extract(LOANS)
    lend = units["Library.Loans.lend"]
    assert lend.signature == "lend :: Member -> Book -> Int -> Ledger -> Either LoanError Ledger"
    assert (lend.line_start, lend.line_end) == (_line(LOANS, "lend :: Member"), _line(LOANS, "| otherwise"))
    assert lend.docstring == "Lend a book unless it is already out or the member is at their limit."
    calls = deps_by_via(lend, "calls")
    assert calls["Library.Loans.loansOf"] == ("Library.Loans.loansOf",)
    assert calls["Data.Map.Strict.insert"] == ("Data.Map.Strict.insert",)  # through `qualified … as Map`
    refs = deps_by_via(lend, "code_reference")
    assert refs["Library.Types.Member"] == ("Library.Types.Member",) and "Library.Loans.Ledger" in refs
    overdue = units["Library.Loans.overdue"]
    assert overdue.line_end == _line(LOANS, "late loan = today")  # the `where` clause belongs to it
    assert units["Library.Loans.loansOf"].docstring is None
    types = [units[i].type for i in ("Library.Loans.Loan", "Library.Loans.LoanError", "Library.Loans.Ledger")]
    assert types == ["data", "data", "type_alias"]


def test_edges_resolve_across_modules() -> None:
    _units, edges = link_fixture(extract, ROOT, ("*.hs",))
    assert resolved(edges, "Main.main", "calls") == {"Library.Loans.lend", "Library.Loans.overdue"}
    assert resolved(edges, "Library.Loans.Describe(Loan)", "implements") == {"Library.Types.Describe"}
    assert resolved(edges, "Library.Loans", "import") == {"Library.Types"}
    assert resolved(edges, "Library.Loans.lend", "code_reference") >= {"Library.Types.Member", "Library.Types.Book"}
    # Names from libraries outside the package (Data.Map) are not edges of calls.
    assert not any(e.target.startswith("Data.Map") for e in edges["Library.Loans.lend"] if e.via == "calls")


def test_operators_multi_name_signatures_and_infix_definitions() -> None:
    source = b"module Ops where\n(<+>) :: Int -> Int -> Int\na <+> b = a + b\n{-# INLINE f #-}\nf, g :: Int\nf = 1\ng = f <+> 2\n"
    units = {u.identifier: u for u in extract("Ops.hs", source).units}
    assert (units["Ops.<+>"].line_start, units["Ops.<+>"].line_end) == (2, 3)
    assert units["Ops.<+>"].signature == "(<+>) :: Int -> Int -> Int"
    assert (units["Ops.f"].line_start, units["Ops.f"].signature) == (5, "f :: Int")
    assert (units["Ops.g"].line_start, units["Ops.g"].signature) == (7, "g :: Int")
    assert set(deps_by_via(units["Ops.g"], "calls")) == {"Ops.f", "Ops.<+>"}


def test_syntax_errors_keep_what_parses() -> None:
    source = b"module Broken where\n\ngood :: Int\ngood = 1\n\nbad = = (\n\nlater = 2\n"
    result = extract("Broken.hs", source)
    assert {"Broken", "Broken.good"} <= {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = extract("X.hs", b"module X where\n-- | caf\xe9\nx = \"\xff\"\n").units
    assert units[1].identifier == "X.x" and "\ufffd" in units[1].docstring
    assert extract("Bin.hs", bytes(range(256)) * 8).units[0].type == "module"
    assert extract("Empty.hs", b"").units == ()


def test_deep_nesting_does_not_recurse() -> None:
    nested = f"module D where\nf = {'(' * 100}1{')' * 100}\n".encode()
    assert [u.identifier for u in extract("D.hs", nested).units] == ["D", "D.f"]
    # The grammar's layout scanner gives up on very deep nesting: still no exception, a warning.
    deep = extract("D.hs", f"module D where\nf = {'(' * 3000}1{')' * 3000}\n".encode())
    assert deep.units[0].identifier == "D" and len(deep.warnings) == 1
