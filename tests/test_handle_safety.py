"""What a long-lived `woods.Index` promises its threads and its host process, checked one defect at
a time: a failed background switch is recorded and shown, concurrent updates never orphan a
background thread, lazily built state is built once, nothing outlives `close`, a bug is reported
as a bug, and an index can never make a reader open a file outside its repository."""

from __future__ import annotations

import gc
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import build_repo
from woods.api import Index
from woods.embedding.fake import FakeContextualProvider, FakeEmbeddingProvider
from woods.entrypoint import BLAS_ENVIRONMENT, configure_process
from woods.errors import InputError
from woods.freshness import file_is_stale, inside_root
from woods.mcp_server import WoodsTools
from woods.resolve import NameTable
from woods.retrieval.candidates import StoreError
from woods.store.index import IndexStores
from woods.store.metadata import FileRow


def _edit(root: Path) -> None:
    (root / "app/models/refund.rb").write_text(f"class Refund\n  def issue\n    {time.time_ns()}\n  end\nend\n")


def test_a_failed_switch_after_background_vectors_is_recorded_and_shown(tmp_path, monkeypatch):
    root = build_repo(tmp_path / "repo")
    with Index.open(root) as ix:
        real_open = Index._open_generation
        calls = {"n": 0}

        def open_generation(self: Index) -> Any:
            calls["n"] += 1
            if threading.current_thread().name == "woods-vectors":
                raise sqlite3.OperationalError("disk I/O error")
            return real_open(self)

        monkeypatch.setattr(Index, "_open_generation", open_generation)
        _edit(root)
        ix.update(background=True, provider_factory=FakeEmbeddingProvider, contextual_factory=FakeContextualProvider)
        assert ix.wait_for_vectors(60)
        warnings = ix.background_warnings
        assert len(warnings) == 1 and "background embedding failed" in warnings[0] and "disk I/O" in warnings[0]
        status = ix.status()
        assert warnings[0] in status.warnings and warnings[0] in status.to_dict()["warnings"]
        assert ix.search("refund issue", mode="lexical").hits  # the handle still answers


def test_mcp_status_shows_background_failures(tmp_path, monkeypatch):
    from woods.indexing import pipeline

    root = build_repo(tmp_path / "repo")
    tools = WoodsTools(root / ".woods", root=root, provider_factory=FakeEmbeddingProvider,
                       contextual_factory=FakeContextualProvider)
    try:
        def broken(*_args: Any, **_kwargs: Any) -> Any:
            raise OSError("no space left on device")

        monkeypatch.setattr(pipeline, "complete_vectors", broken)
        _edit(root)
        _text, reindexed, is_error = tools.call("reindex", {})
        assert not is_error
        assert tools.index().wait_for_vectors(60)
        _text, status, is_error = tools.call("woods_status", {})
        assert not is_error and any("no space left" in w for w in status["warnings"])
    finally:
        tools.close()


def test_concurrent_updates_leave_no_thread_that_close_cannot_stop(tmp_path):
    root = build_repo(tmp_path / "repo")
    release = threading.Event()

    class HeldFake(FakeContextualProvider):
        def embed_batch(self, texts):  # type: ignore[no-untyped-def]
            release.wait(0.5)  # a batch long enough for the next update to start meanwhile
            return super().embed_batch(texts)

    before = {t.ident for t in threading.enumerate()}
    ix = Index.open(root)

    def update(_: int) -> None:
        _edit(root)
        ix.update(background=True, provider_factory=FakeEmbeddingProvider, contextual_factory=HeldFake)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(update, range(8)))
    ix.close()
    release.set()
    left = [t for t in threading.enumerate() if t.name == "woods-vectors" and t.ident not in before]
    assert left == [], left


def test_lazily_built_state_is_built_once_under_concurrent_first_use(tmp_path, monkeypatch):
    root = build_repo(tmp_path / "repo")
    opened = {"n": 0}
    real = IndexStores._open_vectors

    def slow_open(self: IndexStores) -> Any:
        opened["n"] += 1
        time.sleep(0.2)  # wide enough for every thread to arrive while it is being built
        return real(self)

    monkeypatch.setattr(IndexStores, "_open_vectors", slow_open)
    with Index.open(root) as ix:
        ix.search("invoice", strategy="keyword")  # a first call of another strategy warms nothing else
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda _: ix.search("charge the invoice", strategy="vector"), range(8)))
    assert opened["n"] == 1
    assert len({tuple(h.key for h in r) for r in results}) == 1


def test_resolve_state_does_not_outlive_close(tmp_path):
    root = build_repo(tmp_path / "repo")
    with Index.open(root) as ix:
        assert ix.resolve("Shared").status == "ambiguous"
        assert ix.resolve("Subscription").status == "resolved"
    del ix
    gc.collect()
    assert [o for o in gc.get_objects() if isinstance(o, NameTable)] == []


def test_recent_as_a_string_is_refused_not_split_into_letters(tmp_path):
    root = build_repo(tmp_path / "repo")
    with Index.open(root) as ix:
        with pytest.raises(InputError, match="recent"):
            ix.resolve("charge", recent="Billing::Invoice#charge")  # type: ignore[arg-type]
        assert ix.resolve("charge", recent=["Billing::Invoice#charge"]).identifier == "Billing::Invoice#charge"


def test_a_bug_inside_a_store_is_an_internal_error_not_a_degraded_index(tmp_path, monkeypatch):
    from woods.store.metadata import SQLiteMetadataStore

    root = build_repo(tmp_path / "repo")
    tools = WoodsTools(root / ".woods", root=root)
    try:
        def bug(*_args: Any, **_kwargs: Any) -> Any:
            raise TypeError("unsupported operand")

        def failure(*_args: Any, **_kwargs: Any) -> Any:
            raise sqlite3.DatabaseError("database disk image is malformed")

        monkeypatch.setattr(SQLiteMetadataStore, "lexical_search", bug)
        _text, body, is_error = tools.call("search", {"query": "invoice", "mode": "lexical"})
        assert is_error and body["error"]["code"] == "internal_error" and "TypeError" in body["error"]["message"]
        monkeypatch.setattr(SQLiteMetadataStore, "lexical_search", failure)
        _text, body, is_error = tools.call("search", {"query": "invoice", "mode": "lexical"})
        assert is_error and body["error"]["code"] == "degraded_index" and body["error"]["stores"] == ["metadata"]
    finally:
        tools.close()
    with Index.open(root) as ix, pytest.raises(StoreError):
        ix.search("invoice", mode="lexical")


def test_mcp_reindex_walks_the_repository_once(tmp_path, monkeypatch):
    import woods.discovery
    from woods.indexing import pipeline

    root = build_repo(tmp_path / "repo")
    walks = {"n": 0}
    real = woods.discovery.discover

    def counting(*args: Any, **kwargs: Any) -> Any:
        walks["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(woods.discovery, "discover", counting)
    monkeypatch.setattr(pipeline, "discover", counting)
    tools = WoodsTools(root / ".woods", root=root, provider_factory=FakeEmbeddingProvider)
    try:
        (root / "lib/extra.py").write_text("def extra():\n    return 1\n")
        _text, payload, is_error = tools.call("reindex", {"changed_files": ["lib/report.py"]})
        assert not is_error, payload
        assert payload["other_changes"] == ["lib/extra.py"]
        assert payload["changed_files_status"] == {"lib/report.py": "unchanged"}
        assert walks["n"] == 1
        assert tools.index().wait_for_vectors(60)
    finally:
        tools.close()


def test_an_indexed_path_never_leaves_the_repository(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("do not read")
    stat = outside.stat()
    for path in ("../secret.txt", str(outside), "a/../../secret.txt", "", "a\x00b"):
        assert inside_root(root, path) is None, path
        row = FileRow(path, "text", "0" * 64, stat.st_size, stat.st_mtime_ns, 0, ())
        assert file_is_stale(root, row) is True  # never compared, so never "fresh"
    assert inside_root(root, "lib/a.py") == root / "lib/a.py"


def test_entry_points_own_the_blas_thread_count_not_the_library(monkeypatch):
    for name in BLAS_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    configure_process()
    import os

    assert all(os.environ[name] == value for name, value in BLAS_ENVIRONMENT.items())
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    configure_process()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"  # the user's own setting wins

