"""The keyword strategy's in-SQLite matched-field path equals the record-by-record path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import copy_fixture
from woods.embedding.fake import FakeEmbeddingProvider
from woods.indexing import index_repository
from woods.retrieval.ruby.executor import SearchExecutor, matched_fields_for
from woods.store.index import IndexStores


class RecordByRecord:
    """The metadata store answering `keyword_fields` with None (it computes no matched fields):
    forces the decode-every-record path."""

    def __init__(self, store) -> None:
        self._store = store

    def keyword_fields(self, keyword):
        return None

    def __getattr__(self, name):
        return getattr(self._store, name)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("kw") / "repo"
    root.mkdir()
    for name in ("rails_app", "python_pkg", "ts_project"):
        copy_fixture(name, root)
    index_repository(root, Path(root / ".woods"), FakeEmbeddingProvider)
    opened = IndexStores.open(root / ".woods")
    yield opened
    opened.close()


@pytest.mark.parametrize("keywords", [["invoice"], ["charge", "payment"], ["def", "end"], ["true"], ["zzz_nothing"],
                                      ["rate", "limiter", "tokens"], ["ledger", "account", "posting"]])
def test_store_path_equals_record_path(stores, keywords):
    fast = SearchExecutor(stores.metadata, None, stores.graph, None).keyword(keywords, 20)
    slow = SearchExecutor(RecordByRecord(stores.metadata), None, stores.graph, None).keyword(keywords, 20)
    assert [(c.identifier, c.score, c.matched_fields) for c in fast] == [
        (c.identifier, c.score, c.matched_fields) for c in slow
    ]
    assert all(c.metadata.get("id") == c.identifier for c in fast)


def test_keyword_fields_match_python_field_rules(stores):
    checked = 0
    for keyword in ("invoice", "billing", "class", "limit"):
        hits = stores.metadata.keyword_fields(keyword)
        assert [key for key, _ in hits] == [r["id"] for r in stores.metadata.search(keyword)]
        for key, fields in hits[:40]:
            assert fields == matched_fields_for(stores.metadata.find(key), keyword)
            checked += 1
    assert checked > 50
