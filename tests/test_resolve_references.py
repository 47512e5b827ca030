"""Resolve on references as people type them (issue 14): English phrasings, letter case, library
code over tests, inheritance and re-exports, one definition spelled twice — on the fixture
repositories and on small repositories written here, in every language that has the construct."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from woods.embedding.fake import FakeEmbeddingProvider
from woods.indexing import index_repository
from woods.resolve import ResolveMethod, ResolveOutcome, ResolveStatus, resolve
from woods.resolve_parse import CALLABLE, CLASS_LIKE, MODULE, ContainerKind, StructuredRef, parse_reference
from woods.store.index import IndexStores

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
RESOLVED, AMBIGUOUS = ResolveStatus.RESOLVED, ResolveStatus.AMBIGUOUS


def open_index(root: Path, store: Path) -> IndexStores:
    index_repository(root, store, FakeEmbeddingProvider)
    return IndexStores.open(store)


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    """One index per fixture repository, opened lazily."""
    opened: dict[str, IndexStores] = {}

    def get(name: str) -> IndexStores:
        if name not in opened:
            opened[name] = open_index(FIXTURES / name, tmp_path_factory.mktemp(name) / "store")
        return opened[name]

    yield get
    for stores in opened.values():
        stores.close()


def write_repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def resolved_to(outcome: ResolveOutcome, identifier: str) -> None:
    assert outcome.status is RESOLVED, outcome.to_dict()
    assert outcome.identifier == identifier, outcome.to_dict()


# -- the parser ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the json method of ClientResponse", StructuredRef("json", CALLABLE, "ClientResponse", ContainerKind.OWNER)),
        ("the APIRouter class", StructuredRef("APIRouter", CLASS_LIKE)),
        ("the jsonable_encoder function in fastapi.encoders",
         StructuredRef("jsonable_encoder", CALLABLE, "fastapi.encoders", ContainerKind.ANY)),
        ("ClientResponse's json", StructuredRef("json", None, "ClientResponse", ContainerKind.OWNER)),
        ("ClientResponse’s json method", StructuredRef("json", CALLABLE, "ClientResponse", ContainerKind.OWNER)),
        ("json in client_reqrep.py", StructuredRef("json", None, "client_reqrep.py", ContainerKind.FILE)),
        ("json defined in lib/x.rb", StructuredRef("json", None, "lib/x.rb", ContainerKind.FILE)),
        ("json in the ClientResponse class", StructuredRef("json", None, "ClientResponse", ContainerKind.OWNER)),
        ("the parse function in module pkg.query", StructuredRef("parse", CALLABLE, "pkg.query", ContainerKind.MODULE)),
        ("function `parse_query()`", StructuredRef("parse_query", CALLABLE)),
        ("the empty? method of Cache", StructuredRef("empty?", CALLABLE, "Cache", ContainerKind.OWNER)),
        ("the Paginated module", StructuredRef("Paginated", MODULE)),
        ("PathRouter's route", StructuredRef("route", None, "PathRouter", ContainerKind.OWNER)),
        ("the Billing::Invoice#charge method", StructuredRef("Billing::Invoice#charge", CALLABLE)),
    ],
)
def test_phrases_parse_into_name_kind_and_container(text, expected):
    assert parse_reference(text) == expected


@pytest.mark.parametrize(
    "text",
    ["json", "parse query", "how does routing work in the app", "the class",
     "explain invoice.rb", "Foo's", "'s json", "the of json", "in x.py", "a b c d e f g h i j k l m n"],
)
def test_free_text_is_not_a_phrase(text):
    assert parse_reference(text) is None


# -- English phrasings on the fixtures -------------------------------------------------------------

PHRASES = [
    ("python_pkg", "the apply method of Account", "ledger.models.account.Account.apply"),
    ("python_pkg", "Account's signed", "ledger.models.account.Account.signed"),
    ("python_pkg", "post in posting.py", "ledger.services.posting.PostingService.post"),
    ("python_pkg", "the format_amount function in ledger.export.csv_exporter", "ledger.export.csv_exporter.format_amount"),
    ("python_pkg", "the Reconciler class", "ledger.services.reconcile.Reconciler"),
    ("ts_project", "the tryAcquire method of TokenBucketLimiter", "src/limiter/TokenBucketLimiter:TokenBucketLimiter.tryAcquire"),
    ("ts_project", "SlidingWindowLimiter's prune", "src/limiter/SlidingWindowLimiter:SlidingWindowLimiter.prune"),
    ("ts_project", "the Clock interface", "src/limiter/types:Clock"),
    ("ts_project", "rateLimit in middleware.ts", "src/http/middleware:rateLimit"),
    ("ruby_gem", "the fetch method of Cache", "Tinycache::Cache#fetch"),
    ("ruby_gem", "MemoryStore's shared", "Tinycache::Stores::MemoryStore.shared"),
    ("ruby_gem", "the Naming module", "Tinycache::Naming"),
    ("ruby_gem", "delete in memory_store.rb", "Tinycache::Stores::MemoryStore#delete"),
    ("rails_app", "the Paginated module", "Paginated"),
    ("rails_app", "the activate action of UsersController", "UsersController#activate"),
]


@pytest.mark.parametrize(("fixture", "ref", "identifier"), PHRASES)
def test_english_phrasings_resolve_deterministically(fixtures, fixture, ref, identifier):
    out = resolve(fixtures(fixture), ref)
    resolved_to(out, identifier)
    assert out.method is ResolveMethod.PHRASE and out.confidence == 0.85


def test_a_phrase_naming_several_units_is_ambiguous_with_them(fixtures):
    out = resolve(fixtures("ruby_gem"), "the delete method")
    assert out.status is AMBIGUOUS and out.method is ResolveMethod.PHRASE
    assert [c.identifier for c in out.candidates] == ["Tinycache::Cache#delete", "Tinycache::Stores::MemoryStore#delete"]


def test_a_phrase_that_matches_nothing_goes_to_search(fixtures):
    calls: list[str] = []

    def searcher(query, depth):
        calls.append(query)
        return []

    out = resolve(fixtures("python_pkg"), "the apply method of Money", searcher=searcher)
    assert out.status is ResolveStatus.NOT_FOUND and calls == ["the apply method of Money"]


def test_the_kind_word_narrows(fixtures):
    stores = fixtures("ts_project")
    # `QuotaBadge` is a module (the file) and a function in it: "function" picks the function
    resolved_to(resolve(stores, "the QuotaBadge function"), "src/components/QuotaBadge:QuotaBadge")
    assert resolve(stores, "the QuotaBadge class").status is ResolveStatus.NOT_FOUND


# -- letter case -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cased(tmp_path_factory):
    root = write_repo(tmp_path_factory.mktemp("cased_repo"), {
        "web/__init__.py": "",
        "web/request.py": "class Request:\n    pass\n\n\ndef request(url):\n    return Request()\n",
        "web/reader.py": "def read_chunk():\n    pass\n\n\ndef readchunk():\n    pass\n",
        "src/view.js": "class View {\n  render() {}\n}\nmodule.exports = View;\n",
        "src/next.ts": "export function next(): void {}\nexport class Next {}\n",
        "lib/route.rb": "class Route\nend\n\nmodule Helpers\n  def route\n  end\nend\n",
        "mux/mux.go": "package mux\n\ntype Handler struct{}\n\nfunc handler() {}\n",
    })
    stores = open_index(root, tmp_path_factory.mktemp("cased") / "store")
    yield stores
    stores.close()


@pytest.mark.parametrize(
    ("ref", "identifier"),
    [
        ("Request", "web.request.Request"),
        ("request", "web.request.request"),
        ("read_chunk", "web.reader.read_chunk"),
        ("readchunk", "web.reader.readchunk"),
        ("View", "src/view:View"),
        ("Next", "src/next:Next"),
        ("next", "src/next:next"),
        ("Route", "Route"),
        ("route", "Helpers#route"),
        ("Handler", "mux.Handler"),
        ("handler", "mux.handler"),
    ],
)
def test_the_exact_spelling_wins_over_case_folding(cased, ref, identifier):
    resolved_to(resolve(cased, ref), identifier)


def test_case_folding_still_applies_when_nothing_is_spelled_so(cased):
    out = resolve(cased, "REQUEST")  # the class, the function and the module `web.request`
    assert out.status is AMBIGUOUS
    assert [c.identifier for c in out.candidates] == ["web.request", "web.request.Request", "web.request.request"]
    assert resolve(cased, "ReadChunk").status is AMBIGUOUS  # read_chunk and readchunk fold alike


# -- library code over tests -----------------------------------------------------------------------

LIBRARY_VS_TESTS = {
    "python": ({
        "pkg/__init__.py": "",
        "pkg/client.py": "class Session:\n    def close(self):\n        pass\n",
        "tests/test_client.py": "def test_close():\n    class Session:\n        def close(self):\n            pass\n",
    }, "Session", "pkg.client.Session"),
    "ruby": ({
        "lib/shop/cart.rb": "module Shop\n  class Cart\n    def total\n    end\n  end\nend\n",
        "spec/cart_spec.rb": "RSpec.describe 'cart' do\n  class Cart\n    def total\n    end\n  end\nend\n",
        "spec/fixtures/cart.rb": "class Cart\nend\n",
    }, "Cart", "Shop::Cart"),
    "typescript": ({
        "src/queue.ts": "export class Queue {\n  push(): void {}\n}\n",
        "src/__tests__/queue.test.ts": "class Queue {\n  push(): void {}\n}\n",
        "examples/demo.ts": "class Queue {}\n",
    }, "Queue", "src/queue:Queue"),
    "go": ({
        "pool/pool.go": "package pool\n\ntype Pool struct{}\n",
        "pool/pool_test.go": "package pool\n\ntype fakePool struct{}\n\nfunc Pool2() {}\n",
        "testdata/pool.go": "package testdata\n\ntype Pool struct{}\n",
    }, "Pool", "pool.Pool"),
    "rust": ({
        "src/lib.rs": "pub struct Pool;\n\n#[cfg(test)]\nmod tests {\n    struct Pool;\n}\n",
    }, "Pool", "crate::Pool"),
    "java": ({
        "src/main/java/com/acme/Pool.java": "package com.acme;\n\npublic class Pool {}\n",
        "src/test/java/com/acme/PoolTest.java": "package com.acme.fake;\n\nclass Pool {}\n",
    }, "Pool", "com.acme.Pool"),
}


@pytest.mark.parametrize("language", sorted(LIBRARY_VS_TESTS))
def test_library_code_is_preferred_over_tests_examples_and_fixtures(tmp_path, language):
    files, ref, identifier = LIBRARY_VS_TESTS[language]
    with open_index(write_repo(tmp_path / "repo", files), tmp_path / "store") as stores:
        out = resolve(stores, ref)
        resolved_to(out, identifier)
        assert out.confidence == 0.8
        assert out.alternatives and all(a.identifier != identifier or a.file_path != out.file_path for a in out.alternatives)
        data = out.to_dict()
        assert data["alternatives"] == [a.to_dict() for a in out.alternatives]
        assert "also:" in out.format_human()


def test_a_reference_that_names_tests_still_reaches_them(tmp_path):
    files, _ref, _identifier = LIBRARY_VS_TESTS["python"]
    with open_index(write_repo(tmp_path / "repo", files), tmp_path / "store") as stores:
        resolved_to(resolve(stores, "tests.test_client.test_close.Session"), "tests.test_client.test_close.Session")
        resolved_to(resolve(stores, "Session in tests/test_client.py"), "tests.test_client.test_close.Session")
        resolved_to(resolve(stores, "test_close.Session"), "tests.test_client.test_close.Session")
        # two library definitions stay ambiguous: the preference never picks among library code
        out = resolve(stores, "close")
        assert out.status is RESOLVED and out.identifier == "pkg.client.Session.close"


def test_resolved_outcomes_without_alternatives_keep_the_v1_shape(fixtures):
    data = resolve(fixtures("python_pkg"), "ledger.models.account.Account").to_dict()
    assert "alternatives" not in data
    json.dumps(data)


# -- inheritance and re-exports --------------------------------------------------------------------


def test_inherited_members_through_bases_in_another_module(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "class Base:\n    def json(self):\n        pass\n",
        "pkg/response.py": "from .base import Base\n\n\nclass Response(Base):\n    pass\n",
    }
    with open_index(write_repo(tmp_path / "repo", files), tmp_path / "store") as stores:
        resolved_to(resolve(stores, "Response.json"), "pkg.base.Base.json")
        resolved_to(resolve(stores, "the json method of Response"), "pkg.base.Base.json")
        resolved_to(resolve(stores, "Response's json"), "pkg.base.Base.json")


def test_python_inheritance_on_the_fixture(fixtures):
    resolved_to(resolve(fixtures("python_pkg"), "AssetAccount.apply"), "ledger.models.account.Account.apply")
    resolved_to(resolve(fixtures("python_pkg"), "the apply method of AssetAccount"), "ledger.models.account.Account.apply")


def test_ruby_include_makes_module_methods_members(fixtures):
    stores = fixtures("ruby_gem")
    resolved_to(resolve(stores, "Tinycache::Cache#hits"), "Tinycache::Instrumentation#hits")
    resolved_to(resolve(stores, "the hit_ratio method of Cache"), "Tinycache::Instrumentation#hit_ratio")


def test_rails_inheritance_and_concerns(fixtures):
    stores = fixtures("rails_app")
    resolved_to(resolve(stores, "PostsController#current_user"), "ApplicationController#current_user")
    resolved_to(resolve(stores, "UsersController's forbidden"), "ApplicationController#forbidden")


def test_python_package_reexports(fixtures):
    stores = fixtures("python_pkg")
    resolved_to(resolve(stores, "ledger.PostingService"), "ledger.services.posting.PostingService")
    resolved_to(resolve(stores, "ledger.services.PostingService"), "ledger.services.posting.PostingService")


def test_python_reexport_chains_through_an_intermediate_package(tmp_path):
    files = {
        "app/__init__.py": "from .api import Client\n",
        "app/api/__init__.py": "from .client import Client\n",
        "app/api/client.py": "class Client:\n    pass\n",
        "other/client.py": "class Client:\n    pass\n",
    }
    with open_index(write_repo(tmp_path / "repo", files), tmp_path / "store") as stores:
        assert resolve(stores, "Client").status is AMBIGUOUS
        resolved_to(resolve(stores, "app.Client"), "app.api.client.Client")
        resolved_to(resolve(stores, "the Client class in app"), "app.api.client.Client")


def test_package_rooted_index_resolves_relative_reexports(tmp_path):
    """An index of the package directory itself (`aiohttp/`): `from .client import X` in the root
    `__init__.py` names `client.X`, not `__init__.client.X`."""
    files = {
        "__init__.py": "from .client import Session\n",
        "client.py": "from .reqrep import Session\n",
        "reqrep.py": "class Session:\n    pass\n",
        "other.py": "class Session:\n    pass\n",
    }
    with open_index(write_repo(tmp_path / "repo", files), tmp_path / "store") as stores:
        assert ("client.Session", "import") in stores.graph.edges_from("__init__")
        resolved_to(resolve(stores, "Session in __init__.py"), "reqrep.Session")


def test_typescript_export_from(fixtures):
    stores = fixtures("ts_project")
    resolved_to(resolve(stores, "index.TokenBucketLimiter"), "src/limiter/TokenBucketLimiter:TokenBucketLimiter")
    resolved_to(resolve(stores, "rateLimit in index.ts"), "src/http/middleware:rateLimit")


# -- one definition, two spellings -----------------------------------------------------------------


def test_a_reopened_ruby_module_collapses_to_its_home_file(fixtures):
    out = resolve(fixtures("ruby_gem"), "Tinycache")
    resolved_to(out, "Tinycache")
    assert out.file_path == "lib/tinycache.rb" and out.confidence == 0.98
    assert [(a.identifier, a.file_path) for a in out.alternatives] == [("Tinycache", "lib/tinycache/version.rb")]


def test_a_reopened_ruby_class_without_a_home_file_stays_ambiguous(tmp_path):
    files = {"lib/a.rb": "class Widget\nend\n", "lib/b.rb": "class Widget\n  def x\n  end\nend\n"}
    with open_index(write_repo(tmp_path / "repo", files), tmp_path / "store") as stores:
        assert resolve(stores, "Widget").status is AMBIGUOUS


def test_a_file_named_after_its_class_is_one_definition(fixtures):
    out = resolve(fixtures("ts_project"), "TokenBucketLimiter")
    resolved_to(out, "src/limiter/TokenBucketLimiter:TokenBucketLimiter")
    assert [a.identifier for a in out.alternatives] == ["src/limiter/TokenBucketLimiter"]
