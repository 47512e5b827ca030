"""Code search (the default ranking profile): each signal's behaviour on small real indexes.

Indexes are built with the real stores (SQLite + FTS5 + FAISS) and the Fake embedder (a hashed
bag of words, named as the test double it is), so both legs run and results are deterministic.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from woods.embedding.fake import FakeEmbeddingProvider
from woods.errors import CorruptIndexError
from woods.indexing import build_index_from_units
from woods.paths import path_roles, roles_asked_for
from woods.retrieval import code_search as code_search_module
from woods.retrieval.code_search import CodeSearch, CodeSearchConfig
from woods.retrieval.query_analysis import NATURAL, PATH, SYMBOL, analyze
from woods.retrieval.retriever import Retriever
from woods.retrieval.signals import (
    best_per_group,
    diversify,
    minmax,
    name_match,
    path_word_match,
    rrf,
    scaled_to_max,
)
from woods.store.index import IndexStores
from woods.tokens import code_tokens, query_terms, split_identifier
from woods.units import Unit


def py(identifier: str, path: str, source: str, type_: str = "function", **kw: object) -> Unit:
    lines = source.count("\n") + 1
    return Unit(identifier=identifier, type=type_, language="python", file_path=path, line_start=1,
                line_end=lines, source_code=source, **kw)  # type: ignore[arg-type]


# Unrelated units around the ones a test is about: BM25's IDF is degenerate in a two-document
# collection (every word is in every document), so each index holds some ordinary code too.
FILLER = [
    py(f"util.misc{i}.helper{i}", f"util/misc{i}.py", f"def helper{i}(value):\n    return str(value) + '{word}'\n")
    for i, word in enumerate(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"])
]


def member_of(container: Unit, name: str, first: int, last: int) -> Unit:
    """A method of `container` on its lines `first`…`last` (1-based, inclusive)."""
    lines = container.source_code.splitlines()[first - 1 : last]
    return Unit(f"{container.identifier}.{name}", "method", container.language, container.file_path, first, last,
                "\n".join(lines) + "\n", parent=container.identifier)


def open_index(tmp_path: Path, units: list[Unit]) -> IndexStores:
    store = tmp_path / "store"
    build_index_from_units([*units, *FILLER], FakeEmbeddingProvider(), store, link=True, chunk=True)
    return IndexStores.open(store)


def engine(stores: IndexStores, config: CodeSearchConfig | None = None) -> CodeSearch:
    fake = FakeEmbeddingProvider()
    return CodeSearch(stores.metadata, lambda: stores.vectors, lambda: fake, config)


def ranked_files(stores: IndexStores, query: str, **kw: object) -> list[str]:
    result = engine(stores).search(query, **kw)  # type: ignore[arg-type]
    return [u.summary.file_path for u in result.units]


# -- signals, each on its own -----------------------------------------------------------------------


def test_a_test_file_ranks_below_the_code_it_tests_unless_the_question_asks_for_tests(tmp_path):
    stores = open_index(tmp_path, [
        py("lib.headers.parse_header_line", "lib/headers.py",
           "def parse_header_line(line):\n    name, value = line.split(':', 1)\n    return name, value\n"),
        py("tests.test_headers.test_parse_header_line", "tests/test_headers.py",
           "def test_parse_header_line():\n    # parse header line: parse a header line\n"
           "    assert parse_header_line('a: b') == ('a', ' b')\n"),
    ])
    assert ranked_files(stores, "parse a header line")[0] == "lib/headers.py"
    assert ranked_files(stores, "how is parsing a header line tested")[0] == "tests/test_headers.py"
    stores.close()


def test_the_definition_of_a_name_ranks_above_code_that_mentions_it(tmp_path):
    stores = open_index(tmp_path, [
        py("app.mailers.InvoiceMailer", "app/mailers.py", "class InvoiceMailer:\n    def deliver(self):\n        pass\n",
           type_="class"),
        py("app.jobs.send_all", "app/jobs.py",
           "def send_all(invoices):\n    for i in invoices:\n        InvoiceMailer().deliver()  # InvoiceMailer\n"
           "    return InvoiceMailer, InvoiceMailer\n"),
    ])
    result = engine(stores).search("InvoiceMailer")
    assert result.analysis.kind == SYMBOL
    assert result.units[0].summary.identifier == "app.mailers.InvoiceMailer"
    # a name inside a sentence counts too (at half strength)
    assert engine(stores).search("where is InvoiceMailer defined").units[0].summary.identifier == "app.mailers.InvoiceMailer"
    stores.close()


def test_a_file_named_after_the_question_words_ranks_first(tmp_path):
    body = "def handle(items):\n    for item in items:\n        match_path(item)\n    return items\n"
    stores = open_index(tmp_path, [
        py("pkg.helpers.handle", "pkg/helpers.py", body),
        py("pkg.router.handle", "pkg/router.py", body),
    ])
    assert ranked_files(stores, "how does the router match items")[0] == "pkg/router.py"
    # the signal without the lexical leg's path field
    no_path_field = CodeSearchConfig(lexical_weights=(8.0, 2.0, 0.0, 3.0, 1.0))
    assert [u.summary.file_path for u in engine(stores, no_path_field).search("how does the router match items").units][0] \
        == "pkg/router.py"
    stores.close()


def test_documents_rank_below_code_for_code_questions(tmp_path):
    stores = open_index(tmp_path, [
        py("cache.evict", "cache.py", "def evict(cache, key):\n    # evict a key from the cache\n    del cache[key]\n"),
        Unit("README.md#evicting-keys", "document", "markdown", "README.md", 1, 3,
             "## Evicting keys\nTo evict a key from the cache, evict it: the cache evicts keys.\n"),
    ])
    assert ranked_files(stores, "evict a key from the cache")[0] == "cache.py"
    assert ranked_files(stores, "where is evicting a key from the cache documented")[0] == "README.md"
    stores.close()


def test_migrations_are_demoted_unless_the_question_is_about_the_schema(tmp_path):
    stores = open_index(tmp_path, [
        py("app.models.issue.set_priority", "app/models/issue.py",
           "def set_priority(issue, priority):\n    issue.priority = priority\n"),
        py("db.migrate.add_priority", "db/migrate/003_add_priority.py",
           "def add_priority(schema):\n    schema.add_column('issues', 'priority')  # priority priority\n"),
    ])
    assert ranked_files(stores, "set the priority of an issue")[0] == "app/models/issue.py"
    assert ranked_files(stores, "which migration adds the priority column")[0] == "db/migrate/003_add_priority.py"
    stores.close()


def test_one_file_does_not_fill_the_list(tmp_path):
    units = [py(f"big.f{i}", "big.py", f"def f{i}():\n    # encode a token\n    return encode_token({i})\n") for i in range(4)]
    units.append(py("small.encode", "small.py", "def encode(text):\n    # encode a token\n    return text\n"))
    stores = open_index(tmp_path, units)
    top = ranked_files(stores, "encode a token", limit=3)
    assert "small.py" in top[:2]  # the second file shows before big.py's second unit
    no_diversity = CodeSearchConfig(diversity_decay=1.0, coherence=0.0)
    assert [u.summary.file_path for u in engine(stores, no_diversity).search("encode a token", limit=3).units].count(
        "big.py") >= 2
    stores.close()


def test_the_legs_alone_are_their_raw_rankings(tmp_path):
    stores = open_index(tmp_path, [
        py("a.alpha", "a.py", "def alpha():\n    return 'queue worker'\n"),
        py("b.beta", "b.py", "def beta():\n    return 'queue worker queue'\n"),
        py("c.gamma", "c.py", "def gamma():\n    return 'nothing here'\n"),
    ])
    search = engine(stores)
    lexical = search.search("queue worker", strategy="lexical")
    assert lexical.legs == ("lexical",) and [u.lexical for u in lexical.units] == sorted(
        (u.lexical for u in lexical.units), reverse=True)
    assert {u.summary.file_path for u in lexical.units} == {"a.py", "b.py"}  # no match, no result
    vector = search.search("queue worker", strategy="vector")
    assert vector.legs == ("vector",) and [u.semantic for u in vector.units] == sorted(
        (u.semantic for u in vector.units), reverse=True)
    hybrid = search.search("queue worker")
    assert hybrid.legs == ("lexical", "vector")
    stores.close()


def test_without_vectors_the_lexical_leg_answers_and_says_so(tmp_path):
    stores = open_index(tmp_path, [py("a.alpha", "a.py", "def alpha():\n    return 'queue worker'\n")])

    def no_vectors() -> None:
        raise CorruptIndexError("vectors.faiss is missing")

    fake = FakeEmbeddingProvider()
    result = CodeSearch(stores.metadata, no_vectors, lambda: fake).search("queue worker")
    assert result.legs == ("lexical",)
    assert result.units and result.units[0].summary.file_path == "a.py"
    assert any("vector leg skipped" in w for w in result.warnings)
    stores.close()


@pytest.mark.parametrize("parallel", [True, False])
def test_hybrid_gives_the_same_answer_with_its_legs_side_by_side_and_never_loses_a_leg_error(tmp_path, parallel):
    stores = open_index(tmp_path, [
        py("a.alpha", "a.py", "def alpha():\n    return 'queue worker'\n"),
        py("b.beta", "b.py", "def beta():\n    return 'worker pool'\n"),
    ])
    search = engine(stores)
    search._parallel_legs = parallel
    sequential = engine(stores)
    sequential._parallel_legs = False
    assert search.search("queue worker") == sequential.search("queue worker")

    class Broken:
        def __getattr__(self, name: str) -> object:
            return getattr(stores.metadata, name)

        def lexical_search(self, *_args: object) -> list[tuple[str, float]]:
            raise sqlite3.OperationalError("disk I/O error")

    fake = FakeEmbeddingProvider()
    broken = CodeSearch(Broken(), lambda: stores.vectors, lambda: fake)  # type: ignore[arg-type]
    broken._parallel_legs = parallel
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        broken.search("queue worker")
    stores.close()


def test_legs_run_side_by_side_only_with_a_second_usable_core(monkeypatch):
    monkeypatch.setattr(code_search_module.os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    assert code_search_module.usable_cpus() == 1
    assert CodeSearch(object(), lambda: None, None)._parallel_legs is False  # type: ignore[arg-type]
    monkeypatch.setattr(code_search_module.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    assert CodeSearch(object(), lambda: None, None)._parallel_legs is True  # type: ignore[arg-type]


def test_english_questions_take_both_legs_through_the_retriever(tmp_path):
    stores = open_index(tmp_path, [
        py("a.alpha", "a.py", "def alpha():\n    return 'queue worker'\n"),
        py("b.Beta", "b.py", "class Beta:\n    pass\n", type_="class"),
    ])
    fake = FakeEmbeddingProvider()
    retriever = Retriever(stores, lambda: fake)  # the default profile: code
    natural = retriever.retrieve("where is the queue worker started")
    assert natural.trace.profile == "code" and natural.strategy == "hybrid"
    assert natural.trace.legs == ("lexical", "vector") and natural.trace.query_kind == NATURAL
    assert retriever.retrieve("Beta").trace.query_kind == SYMBOL
    # the Ruby profile routes the same question by its words, as the gem does
    assert Retriever(stores, lambda: fake, profile="ruby").retrieve("where is the queue worker started").strategy == "keyword"
    lexical_only = Retriever(stores, lambda: fake, mode="lexical").retrieve("queue worker")
    assert lexical_only.trace.legs == ("lexical",)
    stores.close()


# -- the pure pieces ----------------------------------------------------------------------------------


def test_identifiers_yield_themselves_and_their_parts():
    assert split_identifier("HTTPAdapter") == ("httpadapter", "http", "adapter")
    assert split_identifier("full_dispatch_request") == ("full_dispatch_request", "full", "dispatch", "request")
    assert split_identifier("__init__") == ("__init__", "init")
    assert split_identifier("x" * 100) == ()
    assert code_tokens("getURL2(x)") == ["geturl2", "get", "url", "x"]
    assert query_terms("where does the app dispatch a request") == ["app", "dispatch", "request"]
    assert query_terms("where is it") == ["where", "is", "it"]  # nothing but stop words: kept


@pytest.mark.parametrize(("query", "kind", "names"), [
    ("ClientSession", SYMBOL, ("ClientSession",)),
    ("Sinatra::Base", SYMBOL, ("Base",)),
    ("dispatch_request", SYMBOL, ("dispatch_request",)),
    ("session", NATURAL, ("session",)),
    ("aiohttp/web_app.py", PATH, ()),
    ("how does safeParse handle a ZodError", NATURAL, ("safeParse", "ZodError")),
    ("how are chunked bodies parsed", NATURAL, ()),
])
def test_query_shapes(query, kind, names):
    analysis = analyze(query)
    assert (analysis.kind, analysis.names) == (kind, names)


def test_path_roles_follow_each_languages_conventions():
    assert path_roles("tests/test_app.py") == ("test",)
    assert path_roles("pkg/foo_test.go") == ("test",)
    assert path_roles("src/FooTest.java") == ("test",)
    assert path_roles("src/formatISO/test.js") == ("test",)  # a module's tests beside it (date-fns)
    assert path_roles("src/formatISO/index.js") == ()
    assert path_roles("src/latest.js") == ()  # only a file named exactly test.js
    assert path_roles("lib/bats-core/test_functions.bash") == ()  # a testing library is library code
    assert path_roles("examples/hello/main.go") == ("example",)
    assert path_roles("db/migrate/001_create.rb") == ("migration",)
    assert path_roles("vendor/lib/x.js") == ("vendored",)
    assert path_roles("aiohttp/client.py") == ()
    assert roles_asked_for({"how", "is", "it", "tested"}) == frozenset({"test"})


def test_signal_arithmetic():
    assert minmax({"a": 2.0, "b": 4.0}) == {"a": 0.0, "b": 1.0}
    assert minmax({"a": 3.0}) == {"a": 1.0}
    assert scaled_to_max({"a": 2.0, "b": 4.0}) == {"a": 0.5, "b": 1.0}
    assert rrf([["a", "b"], ["b"]], k=1.0) == {"a": 0.5, "b": 1.0 / 3 + 0.5}
    assert name_match("Request", ["Request"]) == 1.0
    assert name_match("request", ["Request"]) == 0.7
    assert name_match("dispatchRequest", ["dispatch_request"]) == 0.7
    assert name_match("other", ["Request"]) == 0.0
    assert name_match("Request", []) == 0.0 and name_match("", ["Request"]) == 0.0
    # Per file, its best unit; equal scores go to the smaller key, whatever the input order.
    scores = {"b.py#y": 2.0, "a.py#x": 1.0, "b.py#x": 2.0, "a.py#y": 3.0}
    assert best_per_group(scores, lambda key: key.split("#")[0]) == {"b.py": "b.py#x", "a.py": "a.py#y"}
    assert path_word_match("aiohttp/web_urldispatcher.py", frozenset({"dispatcher"})) == 0.0  # not a word of the stem
    assert path_word_match("src/routing/mod.rs", frozenset({"routing", "nest"})) == 0.5  # mod.rs: its directory
    assert path_word_match("lib/router.js", frozenset({"router", "routes"})) == 1.0  # word forms share a stem
    assert diversify([("a1", "a", 1.0), ("a2", "a", 0.9), ("b1", "b", 0.8)], 0.5) == [
        ("a1", 1.0), ("b1", 0.8), ("a2", 0.45)]


def test_a_question_about_behaviour_gets_the_method_before_its_class(tmp_path):
    source = (
        "class Ledger:\n"
        '    """A ledger: posted entries, and how a posted entry is reversed."""\n'
        "\n"
        "    def post(self, entry):\n"
        "        self.entries.append(entry)\n"
        "\n"
        "    def reverse_entry(self, entry):\n"
        "        return self.post(entry.opposite())\n"
    )
    container = Unit("ledger.Ledger", "class", "python", "ledger.py", 1, 8, source,
                     docstring="A ledger: posted entries, and how a posted entry is reversed.")
    method = member_of(container, "reverse_entry", 7, 8)
    other = member_of(container, "post", 4, 5)
    stores = open_index(tmp_path, [container, other, method])
    question = "how is a posted entry reversed"
    assert [u.summary.identifier for u in engine(stores).search(question).units[:2]] == [
        "ledger.Ledger.reverse_entry", "ledger.Ledger"]
    # without the signal the class, whose docstring says it all, leads: same file, other unit
    off = engine(stores, CodeSearchConfig(member_over_container=0.0)).search(question)
    assert [u.summary.identifier for u in off.units[:2]] == ["ledger.Ledger", "ledger.Ledger.reverse_entry"]
    stores.close()


def test_a_symbol_query_prefers_the_file_named_after_it_when_its_declaration_is_missing(tmp_path):
    # `channel.py` is named after the symbol but holds no unit called Channel (as when a grammar
    # cannot read the declaration); a lowercase `channel` property elsewhere only shares the word.
    stores = open_index(tmp_path, [
        py("lib.channel.SendChannel", "lib/channel.py",
           "class SendChannel:\n    def send(self, element):\n        pass\n", type_="class"),
        py("lib.buffered.Segment.channel", "lib/buffered.py",
           "def channel(self):\n    return self._channel\n", type_="method"),
    ])
    def first_file(boost: float) -> str:
        result = engine(stores, CodeSearchConfig(symbol_file_boost=boost)).search("Channel")
        return result.units[0].summary.file_path

    assert first_file(0.0) == "lib/buffered.py"  # the name match alone: what the signal corrects
    assert first_file(1.0) == "lib/channel.py"
    assert CodeSearchConfig().symbol_file_boost > 0.0
    stores.close()


def test_a_constructor_never_takes_its_class_place_at_the_head_of_a_file(tmp_path):
    source = (
        "class ChargeCustomer:\n"
        '    """Charge a customer for an invoice."""\n'
        "\n"
        "    def __init__(self, customer, invoice):\n"
        "        self.customer, self.invoice = customer, invoice\n"
    )
    container = Unit("billing.ChargeCustomer", "class", "python", "billing.py", 1, 5, source,
                     docstring="Charge a customer for an invoice.")
    init = member_of(container, "__init__", 4, 5)
    stores = open_index(tmp_path, [container, init])
    top = engine(stores).search("charge a customer for an invoice").units[0]
    assert top.summary.identifier == "billing.ChargeCustomer"
    stores.close()
