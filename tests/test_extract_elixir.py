"""Elixir extraction over the Mix-style shipping fixture, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from tests.linking_helpers import link_fixture, resolved
from woods.extract import language_for
from woods.extract.elixir import extract
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "elixir_app"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "elixir")


def _line(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


def test_registered_for_ex_and_exs() -> None:
    assert language_for("lib/a.ex") == "elixir" and language_for("test/a_test.exs") == "elixir"


def test_modules_moduledoc_aliases_and_directives() -> None:
    rel = "lib/shipping.ex"
    units = _extract(rel)
    module = units["Shipping"]
    assert (module.type, module.line_start, module.line_end, module.signature) == ("module", 1, (ROOT / rel).read_text().count("\n"), "defmodule Shipping")
    assert module.docstring == (
        "Quotes and books parcel shipments with whichever carrier is cheapest.\n\n"
        "    iex> Shipping.cheapest(%Shipping.Parcel{weight_grams: 500})"
    )
    assert list(deps_by_via(module, "import")) == ["Shipping.Label", "Shipping.Parcel", "Shipping.Carriers.Post"]
    post = _extract("lib/shipping/carriers/post.ex")["Shipping.Carriers.Post"]
    assert deps_by_via(post, "include") == {"Shipping.Carrier": ("Shipping.Carrier",)}  # `use`
    courier = _extract("lib/shipping/carriers/post.ex")["Shipping.Carriers.Courier"]
    assert deps_by_via(courier, "implements") == {"Shipping.Carrier": ("Shipping.Carrier",)}  # @behaviour


def test_function_clauses_join_and_span_their_doc_and_spec() -> None:
    rel = "lib/shipping/parcel.ex"
    units = _extract(rel)
    billable = units["Shipping.Parcel.billable_weight/1"]
    assert (billable.type, billable.parent, billable.namespace) == ("function", "Shipping.Parcel", "Shipping.Parcel")
    assert (billable.line_start, billable.line_end) == (_line(rel, '@doc "The weight a carrier'), _line(rel, "def billable_weight(%__MODULE__{} = parcel)"))
    assert billable.signature == "def billable_weight(%__MODULE__{weight_grams: grams} = parcel) when grams > 0"
    assert billable.docstring == "The weight a carrier bills: the larger of actual and volumetric weight."
    assert billable.metadata == {"arity": 1, "private": False, "kind": "def", "clauses": 2}
    assert deps_by_via(billable, "calls") == {"Shipping.Parcel.volumetric_weight/1": ("Shipping.Parcel.volumetric_weight/1",)}
    new = units["Shipping.Parcel.new/2"]
    assert new.metadata["arities"] == [1, 2] and new.docstring is None
    private = _extract("lib/shipping/carriers/post.ex")["Shipping.Carriers.Post.price/1"]
    assert private.metadata["private"] is True and private.metadata["clauses"] == 2


def test_structs_types_nested_modules_and_callbacks() -> None:
    rel = "lib/shipping/parcel.ex"
    units = _extract(rel)
    struct = units["Shipping.Parcel.__struct__"]
    assert struct.type == "struct" and struct.metadata == {"fields": ["weight_grams", "dimensions_cm", "destination"], "exception": False}
    assert struct.line_start == struct.line_end == _line(rel, "defstruct weight_grams")
    assert units["Shipping.Parcel.t/0"].type == "type"
    assert (units["Shipping.Parcel.t/0"].line_start, units["Shipping.Parcel.t/0"].line_end) == (_line(rel, "@type t ::"), _line(rel, "        }"))
    nested = units["Shipping.Parcel.Quote"]
    assert (nested.parent, nested.docstring) == ("Shipping.Parcel", "A carrier's price for one parcel.")
    assert units["Shipping.Parcel.Quote.__struct__"].metadata["fields"] == ["carrier", "price_cents", "days"]
    carrier = _extract("lib/shipping/carrier.ex")
    callback = carrier["Shipping.Carrier.quote/1"]
    assert (callback.type, callback.docstring) == ("callback", "Prices a parcel, or explains why the carrier will not take it.")
    assert carrier["Shipping.Carrier.__using__/1"].type == "macro"
    assert deps_by_via(carrier["Shipping.Carrier.__using__/1"], "calls") == {}  # `@behaviour` in quote is no call


def test_protocols_and_implementations() -> None:
    rel = "lib/shipping/label.ex"
    units = _extract(rel)
    protocol = units["Shipping.Label"]
    assert (protocol.type, protocol.docstring) == ("protocol", "Renders the address label printed on a shipment.")
    assert units["Shipping.Label.render/1"].docstring == "The label text, one line per address line."
    impl = units["Shipping.Label.Shipping.Parcel"]
    assert (impl.type, impl.metadata) == ("impl", {"protocol": "Shipping.Label", "for": ["Shipping.Parcel"]})
    assert deps_by_via(impl, "implements") == {"Shipping.Label": ("Shipping.Label",)}
    render = units["Shipping.Label.Shipping.Parcel.render/1"]
    assert (render.parent, render.line_start, render.line_end) == (impl.identifier, _line(rel, "def render(%{destination: nil})"), _line(rel, "def render(parcel)"))


def test_calls_through_aliases_imports_pipes_and_defaults() -> None:
    units = _extract("lib/shipping.ex")
    cheapest = units["Shipping.cheapest/1"]
    calls = deps_by_via(cheapest, "calls")
    assert calls["Shipping.pick_lowest/1"] == ("Shipping.pick_lowest/1",)  # `|> pick_lowest()` is arity 1
    assert deps_by_via(cheapest, "code_reference") == {"Shipping.Parcel": ("Shipping.Parcel",)}  # `%Parcel{}`
    book = units["Shipping.book/3"]
    assert book.docstring == "Books the parcel with the given carrier module."
    assert deps_by_via(book, "calls")["Shipping.Label.render/1"] == ("Shipping.Label.render/1", "Shipping.Label.render/2", "Shipping.Label.render/3")
    quote = _extract("lib/shipping/carriers/post.ex")["Shipping.Carriers.Post.quote/1"]
    assert deps_by_via(quote, "calls")["Shipping.Carriers.Post.billable_weight/1"] == (
        "Shipping.Carriers.Post.billable_weight/1", "Shipping.Parcel.billable_weight/1"
    )


def test_edges_resolve_across_the_project() -> None:
    _units, edges = link_fixture(extract, ROOT, ("*.ex", "*.exs"))
    assert resolved(edges, "Shipping.book/3", "calls") == {"Shipping.Label.render/1"}
    assert resolved(edges, "Shipping.Carriers.Post.quote/1", "calls") == {
        "Shipping.Parcel.billable_weight/1", "Shipping.Carriers.Post.price/1"
    }
    assert resolved(edges, "Shipping.Carriers.Courier", "implements") == {"Shipping.Carrier"}
    assert resolved(edges, "Shipping.Label.Shipping.Parcel", "implements") == {"Shipping.Label"}
    assert resolved(edges, "Shipping.Carriers.Post", "include") == {"Shipping.Carrier"}
    assert not any(e.target.startswith("Enum.") for e in edges["Shipping.cheapest/1"])  # outside the project


def test_repeated_clauses_after_other_definitions_are_a_new_unit() -> None:
    source = b"defmodule M do\n  def f(0), do: 0\n  def g, do: 1\n  def f(n), do: n\nend\n"
    ids = [u.identifier for u in extract("m.ex", source).units]
    assert ids == ["M", "M.f/1", "M.g/0", "M.f/1#2"]


def test_syntax_errors_keep_what_parses() -> None:
    source = b"defmodule Ok do\n  def good, do: 1\nend\n\ndefmodule Bad do\n  def broken( do\nend\n"
    result = extract("x.ex", source)
    assert {"Ok", "Ok.good/0"} <= {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = extract("x.ex", b"defmodule X do\n  @doc \"caf\xe9\"\n  def f, do: \"\xff\"\nend\n").units
    assert units[1].identifier == "X.f/0" and "\ufffd" in units[1].docstring
    assert extract("bin.ex", bytes(range(256)) * 8).units is not None
    assert extract("empty.ex", b"").units == ()


def test_deep_nesting_does_not_recurse() -> None:
    depth = 3000
    source = f"defmodule D do\n  def f, do: {'[' * depth}1{']' * depth}\nend\n".encode()
    assert [u.identifier for u in extract("d.ex", source).units] == ["D", "D.f/0"]
    nested = "".join(f"defmodule N{i} do\n" for i in range(300)) + "def g, do: 1\n" + "end\n" * 300
    units = extract("n.ex", nested.encode()).units
    assert len(units) == 301 and units[-1].identifier.endswith(".N299.g/0")


def test_resolve_reads_the_arity_as_no_part_of_the_name() -> None:
    from woods.resolve import normalized_segments, without_arity

    assert without_arity("Plug.Conn.send_resp/3") == "Plug.Conn.send_resp"
    assert without_arity("src/errors/404") == "src/errors/404"  # a path keeps its last segment
    assert normalized_segments("Shipping.Parcel.new/2") == normalized_segments("Shipping.Parcel.new")


def test_a_script_without_modules_is_one_unit() -> None:
    source = b'import Config\n\nconfig :shipping, carriers: [:post]\n'
    units = extract("config/config.exs", source).units
    assert [(u.identifier, u.type, u.line_start, u.line_end) for u in units] == [("config/config.exs", "script", 1, 3)]
