"""Resolve properties (hypothesis): own identifiers come back; no input string crashes it."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from woods.embedding.fake import FakeEmbeddingProvider
from woods.errors import InputError
from woods.indexing import build_index_from_units
from woods.resolve import Candidate, ResolveOutcome, ResolveStatus, resolve, split_segments
from woods.resolve_parse import StructuredRef, parse_reference
from woods.store.index import IndexStores
from woods.units import Unit

TYPES = ("class", "method", "module", "function")
SEPARATORS = ("::", "#", ".")

segment = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True)
identifier = st.builds(
    lambda first, rest: first + "".join(sep + part for sep, part in rest),
    segment,
    st.lists(st.tuples(st.sampled_from(SEPARATORS), segment), max_size=3),
)
# Identifiers that are also passthrough-shaped (hex, path, path:line, chunk id): a literal
# identifier must still win over the shape.
SHAPED = ("deadbee1", "abc12345", "lib/a.rb", "lib/a.rb:3", "Foo#chunk_2", "0123abcdef")
unit_spec = st.tuples(st.one_of(identifier, st.sampled_from(SHAPED)), st.sampled_from(TYPES), st.integers(min_value=0, max_value=3))


def make_units(specs: list[tuple[str, str, int]]) -> list[Unit]:
    units = []
    for number, (name, unit_type, file_no) in enumerate(specs):
        units.append(
            Unit(
                identifier=name,
                type=unit_type,
                language="ruby",
                file_path=f"lib/f{file_no}.rb",
                line_start=number + 1,
                line_end=number + 1,
                source_code=f"{name}\n",
            )
        )
    return units


def where(unit: Unit) -> tuple[str, str, str, int]:
    return (unit.identifier, unit.type, unit.file_path, unit.line_start)


def found(outcome: ResolveOutcome) -> list[tuple[str, str, str, int]]:
    """Candidates and the alternatives set aside for a resolved unit (a reopened Ruby class)."""
    return [(c.identifier, c.type, c.file_path, c.line_start) for c in (*outcome.candidates, *outcome.alternatives)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(unit_spec, min_size=1, max_size=8))
def test_own_identifier_resolves_to_its_unit(specs):
    units = make_units(specs)
    per_identifier = Counter(u.identifier for u in units)
    per_typed = Counter((u.identifier, u.type) for u in units)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        build_index_from_units(units, FakeEmbeddingProvider(), store, link=True)
        with IndexStores.open(store) as stores:
            for unit in units:
                out = resolve(stores, unit.identifier)
                assert where(unit) in found(out)
                if per_identifier[unit.identifier] == 1:
                    assert out.status is ResolveStatus.RESOLVED
                    assert (out.identifier, out.type, out.file_path) == (unit.identifier, unit.type, unit.file_path)
                    assert out.confidence is not None and out.confidence >= 0.98
                elif out.status is ResolveStatus.RESOLVED:  # same definition, two spellings: collapsed
                    assert out.identifier == unit.identifier and out.alternatives
                else:
                    assert out.status is ResolveStatus.AMBIGUOUS
                    typed = resolve(stores, unit.identifier, type=unit.type)
                    assert where(unit) in found(typed)
                    if per_typed[(unit.identifier, unit.type)] == 1:
                        assert typed.status is ResolveStatus.RESOLVED and typed.confidence >= 0.98


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(unit_spec, min_size=1, max_size=8))
def test_own_member_phrased_in_english_is_found(specs):
    """"Owner's name" and "name of Owner" for a unit `…Owner<sep>name` parse and find that unit."""
    units = make_units(specs)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        build_index_from_units(units, FakeEmbeddingProvider(), store, link=True)
        with IndexStores.open(store) as stores:
            for unit in units:
                segments = split_segments(unit.identifier)
                if len(segments) < 2:
                    continue
                for phrase in (f"{segments[-2]}'s {segments[-1]}", f"{segments[-1]} of {segments[-2]}"):
                    if parse_reference(phrase) is None:  # an article or a preposition as a name
                        continue
                    assert where(unit) in found(resolve(stores, phrase)), phrase


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80), st.lists(st.sampled_from(
    ["the", "a", "of", "in", "on", "from", "defined", "method", "class", "module", "file", "'s", "Foo", "x.py",
     "Foo's", "bar", "`baz()`", "empty?", "lib/a.rb", "::", "#", ".", "’s", "type"]), max_size=8).map(" ".join)))
def test_the_phrase_parser_is_total(text):
    parsed = parse_reference(text)
    assert parsed is None or (isinstance(parsed, StructuredRef) and parsed.name)


SHARED_UNITS = [
    *make_units([("Billing::Invoice", "class", 0), ("Billing::Invoice#charge", "method", 0),
                 ("Shop::Cart#charge", "method", 1), ("pkg.mod.parse_query", "function", 2),
                 ("Shared", "class", 3), ("Shared", "module", 1)]),
]


@pytest.fixture(scope="module")
def shared_index(tmp_path_factory):
    store = tmp_path_factory.mktemp("props") / "store"
    build_index_from_units(SHARED_UNITS, FakeEmbeddingProvider(), store, link=True)
    stores = IndexStores.open(store)
    yield stores
    stores.close()


def echo_searcher(query: str, depth: int) -> list[Candidate]:
    """A searcher that returns something for any query (exercises the search stage on every input)."""
    return [Candidate(query[:40], "class", "lib/f0.rb", 1, 1, float(len(query) % 7)),
            Candidate("Shop::Cart#charge", "method", "lib/f1.rb", 3, 3, 1.0)][: 1 + depth % 2]


awkward_text = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=50),
    st.text(alphabet=st.sampled_from(list(":#./\\0123456789abcdef@-_ \t\n\r\x01\x1f\x7f(")), max_size=40),
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=3), st.integers(min_value=1000, max_value=5000)),
    st.sampled_from(["\x00", "", " ", "a" * 8193, "lib/f0.rb:999999999", "@woods-unit:!!", "x#chunk_99999",
                     "ffffffff", "lib/f0.rb", "charge", "SHARED", "((((", "::", "#", "é" * 3000]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ref=awkward_text, strict=st.booleans(), use_searcher=st.booleans(),
       recent=st.one_of(st.none(), st.lists(st.text(max_size=20), max_size=3)))
def test_arbitrary_strings_yield_an_outcome_or_input_error(shared_index, ref, strict, use_searcher, recent):
    try:
        out = resolve(shared_index, ref, strict=strict, recent=recent,
                      searcher=echo_searcher if use_searcher else None)
    except InputError:
        return
    assert isinstance(out, ResolveOutcome)
    assert out.exit_code == (0 if out.status is ResolveStatus.RESOLVED else 3)
    assert len(out.candidates) <= 20
    assert list(out.candidates) == sorted(out.candidates, key=Candidate.sort_key)
    data = out.to_dict()
    assert data["status"] == out.status.value and isinstance(data["warnings"], list)
    assert out.format_human()
    if out.status is ResolveStatus.RESOLVED:
        assert out.identifier is not None and out.confidence is not None
    if strict and out.status is ResolveStatus.RESOLVED:
        assert out.method.value != "search"
    # deterministic: the same call answers the same
    assert resolve(shared_index, ref, strict=strict, recent=recent,
                   searcher=echo_searcher if use_searcher else None) == out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(unit_type=st.text(max_size=12))
def test_arbitrary_type_values_yield_an_outcome_or_input_error(shared_index, unit_type):
    try:
        out = resolve(shared_index, "charge", type=unit_type)
    except InputError:
        assert unit_type not in {"class", "method", "module", "function"}
        return
    assert all(c.type == unit_type for c in out.candidates)
