"""The code profile's graph and direct strategies find their subjects through the lexical index:
no substring scan of every record (what the Ruby profile keeps for parity), same subjects."""

from __future__ import annotations

from pathlib import Path

import pytest

from woods.embedding.fake import FakeEmbeddingProvider
from woods.indexing import index_repository
from woods.retrieval.retriever import Retriever
from woods.store.index import IndexStores
from woods.store.metadata import SQLiteMetadataStore

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    store = tmp_path_factory.mktemp("subjects") / "store"
    index_repository(REPO / "fixtures" / "python_pkg", store, FakeEmbeddingProvider)
    opened = IndexStores.open(store)
    yield opened
    opened.close()


@pytest.fixture
def no_scans(monkeypatch):
    """Any whole-record substring scan fails the test."""

    def scan(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a full scan of the units table")

    monkeypatch.setattr(SQLiteMetadataStore, "search", scan)
    monkeypatch.setattr(SQLiteMetadataStore, "keyword_fields", scan)


def identifiers(stores: IndexStores, query: str, strategy: str, profile: str = "code") -> list[str]:
    fake = FakeEmbeddingProvider()
    result = Retriever(stores, lambda: fake, profile=profile).retrieve(query, strategy=strategy)
    assert result.strategy == strategy
    return [c.identifier for c in result.candidates]


def test_graph_seeds_a_named_class_and_walks_to_its_users_without_a_scan(stores, no_scans):
    found = identifiers(stores, "who uses PostingService", "graph")
    assert found[0] == "ledger.services.posting.PostingService"
    assert {"ledger.cli.build_service", "ledger.services.reconcile.Reconciler.__init__"} <= set(found)


def test_direct_falls_back_to_the_lexical_leg_without_a_scan(stores, no_scans):
    assert identifiers(stores, "journal entries", "direct")[0] == "ledger.models.entry.JournalEntry"


def test_the_ruby_profile_keeps_the_scan(stores, no_scans):
    with pytest.raises(AssertionError, match="full scan"):  # a bug is not a store failure
        identifiers(stores, "who uses PostingService", "graph", profile="ruby")
