"""Two phases: phase 1 publishes the units with the base embedder's vectors (searchable, hybrid);
phase 2 adds the contextual embedder's vectors and switches to them; an interrupted phase 2 resumes
from the vectors it already computed; status shows the progress.

The Fake provider stands in for the base embedder (the static model) and the Fake contextual one
for MiniLM. In-process tests hold phase 2 with a Progress that searches when its embedding starts;
the kill tests run the real CLI in a subprocess and SIGKILL it at an announced point
(WOODS_TEST_PAUSE).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import FIXTURES, REPO, run_cli
from tests.helpers import FAKE_TWO_PHASE, CountingContextual, CountingFake
from woods.embedding.fake import (
    FAKE_CONTEXTUAL_NAME,
    FAKE_MODEL_NAME,
    FakeContextualProvider,
    FakeEmbeddingProvider,
)
from woods.errors import InputError
from woods.indexing import index_repository
from woods.indexing.collector import paused_collector
from woods.indexing.generation import EMBED_BATCH, EmbeddingCancelled
from woods.indexing.resume import ResumeCache, read_progress
from woods.indexing.summary import SilentProgress
from woods.retrieval.retriever import Retriever
from woods.store import index as layout
from woods.store.index import IndexStores

# Functions in the generated module: enough texts for several embedding batches.
GENERATED_FUNCTIONS = 3 * EMBED_BATCH


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "python_pkg", root / "python_pkg")
    shutil.copytree(FIXTURES / "ruby_gem", root / "ruby_gem")
    body = "\n\n".join(
        f"def generated_helper_{i}(value):\n    \"\"\"Helper number {i}.\"\"\"\n    return value * {i} + {i * 7}\n"
        for i in range(GENERATED_FUNCTIONS)
    )
    (root / "python_pkg" / "ledger" / "generated_helpers.py").write_text(body + "\n")
    return root


class SearchWhenEmbedding:
    """A Progress that runs `probe()` once, when phase 2 starts embedding (phase 1 is published;
    phase 1 embeds too, so the probe waits for the second "embed")."""

    def __init__(self, probe) -> None:
        self.probe = probe
        self.results: list = []
        self.notes: list[str] = []
        self.embeds = 0

    def phase(self, name: str, total: int | None) -> None:
        if name == "embed":
            self.embeds += 1
            if self.embeds == 2 and not self.results:
                self.results.append(self.probe())

    def advance(self, count: int = 1) -> None:
        pass

    def note(self, message: str) -> None:
        self.notes.append(message)


def _search_all_profiles(store: Path) -> dict:
    with IndexStores.open(store) as stores:
        assert stores.has_vectors is True and stores.manifest.embedder["name"] == FAKE_MODEL_NAME
        assert stores.vectors.count() == stores.metadata.chunk_count() > GENERATED_FUNCTIONS
        code = Retriever(stores, FakeEmbeddingProvider, profile="code")
        ruby = Retriever(stores, FakeEmbeddingProvider, profile="ruby")
        return {
            "code_hybrid": code.retrieve("JournalCsvExporter"),
            "code_vector": code.retrieve("export journal entries to csv", strategy="vector"),
            "ruby_vector": ruby.retrieve("export journal entries to csv", strategy="vector"),
            "ruby_hybrid": ruby.retrieve("JournalCsvExporter", strategy="hybrid"),
            "ruby_keyword": ruby.retrieve("JournalCsvExporter", strategy="keyword"),
        }


def test_search_works_between_the_phases_in_both_profiles(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    progress = SearchWhenEmbedding(lambda: _search_all_profiles(store))
    summary = index_repository(root, store, CountingFake, contextual_factory=CountingContextual, progress=progress,
                               workers=1)
    found = progress.results[0]
    for name, result in found.items():  # phase 1 answers every strategy with its own vectors
        assert result.candidates, name
        assert result.warnings == () and result.trace.fallback_from is None, name
    assert any("JournalCsvExporter" in c.identifier for c in found["code_hybrid"].candidates)
    assert found["ruby_vector"].strategy == "vector"
    assert found["code_vector"].trace.legs == ("vector",)
    assert any("searchable after" in note and "contextual vectors follow" in note for note in progress.notes)
    assert summary.searchable_seconds is not None and summary.vectors_pending is False

    # After phase 2 the index holds the contextual vectors (only those) and searches use them.
    with IndexStores.open(store) as stores:
        assert stores.has_vectors is True and stores.manifest.embedder["name"] == FAKE_CONTEXTUAL_NAME
        assert stores.vectors.count() == stores.metadata.chunk_count() == summary.chunks > GENERATED_FUNCTIONS
        assert stores.vectors.dimension == FakeContextualProvider().dimension
        for profile in ("code", "ruby"):
            result = Retriever(stores, FakeContextualProvider, profile=profile).retrieve(
                "export journal entries to csv", strategy="vector")
            assert result.warnings == () and result.trace.fallback_from is None
            assert result.candidates


def test_without_a_contextual_embedder_one_generation_has_everything(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    searchable: list[str] = []
    summary = index_repository(root, store, CountingFake, workers=1, on_searchable=lambda s: searchable.append(s.generation))
    assert searchable == [summary.generation] == [layout.read_current(store).name]
    assert len(list((store / layout.GENERATIONS_DIR).iterdir())) == 1
    with IndexStores.open(store) as stores:
        assert stores.has_vectors and stores.vectors.count() == summary.chunks > GENERATED_FUNCTIONS
        assert stores.manifest.data["vectors"]["state"] == "complete"
        assert "base_generation" not in stores.manifest.data["vectors"]


def test_phase_two_hard_links_the_lexical_database(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    lexical: list[str] = []
    index_repository(root, store, CountingFake, contextual_factory=CountingContextual, workers=1,
                     on_searchable=lambda s: lexical.append(s.generation))
    complete = layout.read_current(store)
    first = store / layout.GENERATIONS_DIR / lexical[0]
    assert complete.name != lexical[0] and first.is_dir()
    assert os.path.samefile(first / layout.METADATA_FILE, complete / layout.METADATA_FILE)
    assert (first / layout.VECTORS_FILE).exists() and (first / layout.CHUNKS_FILE).exists()  # the base vectors
    manifest = json.loads((complete / layout.MANIFEST_FILE).read_text())
    assert manifest["vectors"]["state"] == "complete" and manifest["vectors"]["base_generation"] == lexical[0]
    assert manifest["vectors"]["base_embedder"]["name"] == FAKE_MODEL_NAME
    assert manifest["embedder"]["name"] == FAKE_CONTEXTUAL_NAME
    assert not list((store / "embedding").glob("vectors-*")), "the resume cache is deleted once published"


def test_cancelled_phase_two_resumes_without_re_embedding(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    provider = CountingContextual()
    batches = iter(range(10_000))
    with pytest.raises(EmbeddingCancelled):
        index_repository(root, store, CountingFake, contextual_factory=lambda: provider, workers=1,
                         should_stop=lambda: next(batches) >= 2)
    done = len(provider.embedded)
    assert done == 2 * EMBED_BATCH
    with IndexStores.open(store) as stores:  # phase 1 stays published and searchable
        assert stores.manifest.embedder["name"] == FAKE_MODEL_NAME and stores.metadata.count() > GENERATED_FUNCTIONS
        progress = read_progress(store, stores.generation.name)
        assert progress is not None and progress["embedded"] == done and progress["total"] > done
    base = CountingFake()
    again = CountingContextual()
    summary = index_repository(root, store, lambda: base, contextual_factory=lambda: again, workers=1)
    assert base.embedded == [], "phase 1 is not redone"
    assert summary.resumed_vectors == done
    assert len(again.embedded) == summary.embedded == summary.chunks - done
    assert not set(again.embedded) & set(provider.embedded)
    # The result equals a build that never stopped.
    fresh = tmp_path / "fresh"
    reference = index_repository(root, fresh, CountingFake, contextual_factory=CountingContextual, workers=1)
    with IndexStores.open(store) as a, IndexStores.open(fresh) as b:
        ca = {c.embedding_id: c for c in a.metadata.chunks()}
        cb = {c.embedding_id: c for c in b.metadata.chunks()}
        assert ca.keys() == cb.keys() and len(ca) == reference.chunks
        va = a.vectors.vectors_for([c.vector_id for c in ca.values()])
        vb = b.vectors.vectors_for([cb[k].vector_id for k in ca])
        assert np.allclose(va, vb, atol=1e-6)


def test_nothing_left_to_embed_finishes_phase_two_at_once(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    first = index_repository(root, store, CountingFake, contextual_factory=CountingContextual, workers=1, vectors=False)
    assert first.vectors_pending is True
    with IndexStores.open(store) as stores:
        assert stores.has_vectors is True and stores.manifest.embedder["name"] == FAKE_MODEL_NAME
    later = index_repository(root, store, CountingFake, contextual_factory=CountingContextual, workers=1, vectors=False)
    assert later.up_to_date is True and later.vectors_pending is True  # phase 2 left for later again
    second = index_repository(root, store, CountingFake, contextual_factory=CountingContextual, workers=1)
    assert second.embedded == second.chunks and second.vectors_pending is False
    third_provider = CountingContextual()
    third = index_repository(root, store, CountingFake, contextual_factory=lambda: third_provider, workers=1)
    assert third.up_to_date is True and third_provider.embedded == []


def test_resume_cache_is_never_trusted_across_models(tmp_path):
    store = tmp_path / "s"
    cache = ResumeCache(store, "model-a:fp32", 4)
    cache.add(["h1"], np.ones((1, 4), np.float32))
    cache.close()
    other = ResumeCache(store, "model-b:fp32", 4)
    assert other.get_many(["h1"]) == {}
    assert any(name.startswith("vectors-") for name in other.removed_foreign)
    other.close()
    again = ResumeCache(store, "model-a:fp32", 4)  # model A's cache was garbage-collected
    assert again.get_many(["h1"]) == {}
    again.close()


def _kill_at(phase: str, root: Path, store: Path) -> None:
    env = dict(os.environ, WOODS_TEST_PAUSE=phase, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", **FAKE_TWO_PHASE)
    proc = subprocess.Popen(
        [sys.executable, "-m", "woods", "index", str(root), "--store", str(store)],
        cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )
    deadline = time.monotonic() + 120
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.strip() == f"woods-test-paused:{phase}":
            break
        assert time.monotonic() < deadline
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_kill_9_during_phase_two_keeps_phase_one_and_resumes(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    _kill_at("embed-batch", root, store)

    # Phase 1 is published: search answers with its vectors; status shows phase 2's progress.
    found = run_cli("search", "generated_helper_7", "--store", str(store), "--json")
    assert found.code == 0, found.stderr
    payload = json.loads(found.stdout)
    assert any("generated_helper_7" in r["identifier"] for r in payload["results"])
    assert payload["warnings"] == []
    status = run_cli("status", "--store", str(store), "--json")
    assert status.code == 0, status.stderr
    vectors = json.loads(status.stdout)["vectors"]
    assert (vectors["state"], vectors["phase"], vectors["embedder"]) == ("complete", 1, FAKE_MODEL_NAME)
    contextual = vectors["contextual"]
    assert contextual["state"] == "interrupted"
    assert contextual["embedded"] == EMBED_BATCH and contextual["total"] > GENERATED_FUNCTIONS
    text = run_cli("status", "--store", str(store), expect=0)
    assert f"contextual vectors: {EMBED_BATCH:,} / {contextual['total']:,} embedded" in text.stdout

    again = run_cli("index", str(root), "--store", str(store), "--json", env=FAKE_TWO_PHASE)
    assert again.code == 0, again.stderr
    summary = json.loads(again.stdout)["summary"]
    assert summary["resumed_vectors"] == EMBED_BATCH
    assert summary["embedded"] == summary["chunks"] - EMBED_BATCH
    assert summary["reused_files"] == summary["files"], "phase 1 is not redone"
    done = json.loads(run_cli("status", "--store", str(store), "--json", expect=0).stdout)["vectors"]
    assert done == {"state": "complete", "embedded": summary["chunks"], "total": summary["chunks"],
                    "embedder": FAKE_CONTEXTUAL_NAME, "phase": 2}
    assert not list(store.glob("building-*"))


def test_kill_9_before_phase_two_publishes_embeds_nothing_again(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    _kill_at("vectors-write", root, store)
    again = run_cli("index", str(root), "--store", str(store), "--json", env=FAKE_TWO_PHASE)
    assert again.code == 0, again.stderr
    summary = json.loads(again.stdout)["summary"]
    assert summary["embedded"] == 0 and summary["resumed_vectors"] == summary["chunks"]


def test_vendored_code_gets_no_vectors_but_stays_searchable(tmp_path):
    """(Generated files such as *_pb2.py are skipped by discovery already; a generated path that
    discovery keeps, like types/*.d.ts, is declined by the same rule.)"""
    from woods.indexing.plan import wants_vector

    root = _repo(tmp_path)
    (root / "vendor" / "acme").mkdir(parents=True)
    (root / "vendor" / "acme" / "tinylib.py").write_text("def vendored_helper_zeta():\n    return 'zeta'\n")
    store = tmp_path / "s"
    index_repository(root, store, CountingFake, workers=1)
    with IndexStores.open(store) as stores:
        chunked = {c.unit_key for c in stores.metadata.chunks()}
        units = {r["identifier"]: r for r in stores.metadata.all_records()}
        skipped = [r for r in units.values() if r["file_path"].startswith("vendor/")]
        assert skipped and not any(r["id"] in chunked for r in skipped)
        assert any(r["id"] in chunked for r in units.values() if r["file_path"].startswith("python_pkg/ledger/"))
        for name in ("vendored_helper_zeta",):
            result = Retriever(stores, FakeEmbeddingProvider).retrieve(name)
            assert any(name in c.identifier for c in result.candidates), name
            assert result.warnings == ()
    assert not wants_vector(next(u for u in _units_of(root, "vendor/acme/tinylib.py")))


def _units_of(root: Path, path: str):
    from woods.extract import extract_file

    return extract_file(path, (root / path).read_bytes()).units


def test_watch_stops_embedding_when_the_tree_changes_again(tmp_path):
    """--watch: a re-index whose embedding phase sees a newer change stops (its batches kept) and
    the newer change is indexed next, lexical generation first."""
    from woods.watch import watch

    root = _repo(tmp_path)
    store = tmp_path / "s"
    index_repository(root, store, CountingFake, contextual_factory=CountingContextual, workers=1)
    runs: list[str] = []

    class EditsWhileEmbedding(CountingContextual):
        def embed_batch(self, texts):
            if len(runs) == 1:  # the first re-index: a newer edit lands while it embeds
                (root / "python_pkg" / "ledger" / "late.py").write_text("def late_arrival():\n    return 2\n")
                time.sleep(0.05)
            return super().embed_batch(texts)

    outcomes: list[str] = []

    def interruptible(stop):
        runs.append("run")
        try:
            summary = index_repository(root, store, CountingFake, contextual_factory=EditsWhileEmbedding, workers=1,
                                       should_stop=stop)
        except EmbeddingCancelled:
            outcomes.append("stopped")
            raise
        outcomes.append("embedded" if summary.embedded else "nothing")
        return summary

    watcher = __import__("threading").Thread(
        target=watch, args=(root, lambda: None),
        kwargs={"max_file_bytes": 1_000_000, "on_change": lambda n: None, "poll_seconds": 0.05,
                "debounce_seconds": 0.1, "max_cycles": 2, "interruptible": interruptible},
    )
    watcher.start()
    time.sleep(0.5)  # the watcher has taken its first snapshot
    (root / "python_pkg" / "ledger" / "early.py").write_text(
        "\n\n".join(f"def early_{i}():\n    return {i}\n" for i in range(3 * EMBED_BATCH)) + "\n")
    watcher.join(120)
    assert not watcher.is_alive() and len(runs) == 2
    assert outcomes == ["stopped", "embedded"]  # the first run gave way to the newer change
    with IndexStores.open(store) as stores:
        assert stores.has_vectors
        names = {r["identifier"] for r in stores.metadata.all_records()}
        assert "ledger.late.late_arrival" in names and "ledger.early.early_0" in names


class _CollectorStates(SilentProgress):
    """Records whether Python's cyclic collector ran at each phase the indexer announces."""

    def __init__(self) -> None:
        self.states: list[tuple[str, bool]] = []

    def phase(self, name: str, total: int | None) -> None:
        self.states.append((name, gc.isenabled()))


def test_phase_one_runs_with_the_collector_paused_and_phase_two_with_it_back(tmp_path):
    root = _repo(tmp_path)
    progress = _CollectorStates()
    assert gc.isenabled()
    index_repository(root, tmp_path / "s", CountingFake, contextual_factory=CountingContextual, progress=progress,
                     workers=1)
    states: dict[str, list[bool]] = {}
    for name, enabled in progress.states:
        states.setdefault(name, []).append(enabled)  # each announcement ("write", "embed" recur in phase 2)
    assert states["parse"][0] is False and states["write"][0] is False and states["embed"][0] is False  # phase 1
    assert states["embed"][-1] is True  # phase 2: collected again
    assert gc.isenabled()


def test_the_pause_restores_the_collector_as_it_found_it(tmp_path):
    with paused_collector():
        assert not gc.isenabled()
        with paused_collector():  # nested: resumes only with the outer one
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_collector():
            pass
        assert not gc.isenabled()  # an application that turned it off keeps it off
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), paused_collector():
        raise RuntimeError("boom")
    assert gc.isenabled()
    # A failed run resumes it too: a path that is not a directory fails before phase 1 ends.
    with pytest.raises(InputError):
        index_repository(tmp_path / "missing", tmp_path / "s", CountingFake, workers=1)
    assert gc.isenabled()


def test_an_index_of_another_embedder_is_re_embedded_and_never_mixed(tmp_path):
    # An index written with one embedder (here the Fake one, standing in for an older woods's
    # MiniLM-only index) is re-embedded whole when the default changes: no vector of the old
    # model is reused, the new generation names the new embedder, and a search embeds its query
    # with the embedder the generation names.
    from woods.api import Index
    from woods.embedding.static import StaticEmbeddingProvider
    from woods.store.index import IndexStores

    repo = shutil.copytree(FIXTURES / "rails_app", tmp_path / "app")
    store = tmp_path / "store"
    first = index_repository(repo, store, FakeEmbeddingProvider, workers=1)
    second = index_repository(repo, store, StaticEmbeddingProvider, workers=1)
    assert first.embedded == first.chunks and second.embedded == second.chunks  # chunked for the new model too
    with IndexStores.open(store) as stores:
        assert "static" in str(stores.manifest.embedder["name"])
        assert stores.vectors.count() == second.chunks
    with Index.open(store=store) as index:
        result = index.search("charge a customer's invoice", limit=3)
        assert result.hits and "vector" in {s for h in result.hits for s in h.sources}
