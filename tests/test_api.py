"""The Python API (`woods.api.Index`): typed answers, exact lookups, graph walks, concurrency,
generation switching on update, and the runnable examples of docs/api.md.

Every index here is a small Ruby + Python repository embedded with the Fake provider (fast,
deterministic); the query side picks Fake from the manifest.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers import SAMPLE_REPO, build_repo
from woods.api import (
    AmbiguousIdentifierError,
    Index,
    IndexClosedError,
    SearchHit,
    UnitNotFoundError,
    UnitRecord,
)
from woods.embedding.fake import FAKE_CONTEXTUAL_NAME, FakeContextualProvider, FakeEmbeddingProvider
from woods.errors import InputError

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_repo(tmp_path_factory.mktemp("api") / "repo")


@pytest.fixture()
def index(repo: Path):
    with Index.open(repo) as opened:
        yield opened


# -- opening -------------------------------------------------------------------------------------


def test_open_by_path_and_by_store_read_the_same_index(repo):
    with Index.open(repo) as by_path, Index.open(store=repo / ".woods") as by_store:
        assert by_path.generation == by_store.generation
        assert by_path.structure().counts == by_store.structure().counts


def test_open_from_a_subdirectory_reads_the_repository_index_as_the_cli_does(repo):
    below = next(p for p in sorted(repo.rglob("*")) if p.is_dir() and ".woods" not in p.parts)
    with Index.open(below) as from_below, Index.open(repo) as at_root:
        assert from_below.store_dir == at_root.store_dir == repo / ".woods"
        status = from_below.status()
        assert status.warnings == () and status.changes.fresh and status.root == str(repo)


def test_open_rejects_missing_index_and_both_locations(tmp_path, repo):
    with pytest.raises(InputError, match="no woods index"):
        Index.open(tmp_path)
    with pytest.raises(InputError, match="either path or store"):
        Index.open(repo, store=repo / ".woods")
    with pytest.raises(InputError, match="path not found"):
        Index.open(tmp_path / "missing")


def test_closed_index_refuses_calls_and_close_is_idempotent(repo):
    ix = Index.open(repo)
    ix.close()
    ix.close()
    with pytest.raises(IndexClosedError):
        ix.search("invoice")


# -- search and retrieve -------------------------------------------------------------------------


def test_search_returns_typed_hits_in_retriever_order(index, repo):
    from woods.embedding.select import query_embedder
    from woods.retrieval.retriever import Retriever
    from woods.store.index import IndexStores

    hits = index.search("invoice charge", limit=5)
    assert hits and all(isinstance(h, SearchHit) for h in hits)
    with IndexStores.open(repo / ".woods") as stores:
        expected = Retriever(stores, lambda: query_embedder(stores.manifest.embedder)).retrieve("invoice charge", limit=5)
    assert [h.identifier for h in hits] == [c.identifier for c in expected.candidates]
    assert [h.score for h in hits] == [c.score for c in expected.candidates]
    top = hits[0]
    assert top.file_path and top.line_start and top.line_end >= top.line_start
    assert top.to_dict()["identifier"] == top.identifier


def test_search_limit_types_and_strategy(index):
    assert len(index.search("charge", limit=2)) <= 2
    methods = index.search("charge amount", types=["method"])
    assert methods and {h.type for h in methods} == {"method"}
    keyword = index.search("Payment", strategy="keyword", limit=3)
    assert keyword and all("lexical" in h.sources for h in keyword)  # code profile: the lexical leg
    with pytest.raises(InputError):
        index.search("charge", limit=0)
    with pytest.raises(InputError):
        index.search("x" * 8193)


def test_retrieve_returns_budgeted_context_with_sources(index):
    small = index.retrieve("how is a payment captured", budget=200)
    large = index.retrieve("how is a payment captured", budget=8000)
    assert small.tokens_used <= 200 < large.tokens_used
    assert large.sources and all(s.identifier in large.context for s in large.sources)
    assert not large.stale
    assert large.to_dict()["context"] == large.context


def test_query_embedder_is_created_once_and_repeated_text_embedded_once(repo, monkeypatch):
    import woods.embedding.select as select

    made: list[object] = []
    embedded: list[str] = []

    class Counting(FakeEmbeddingProvider):
        def embed(self, text):  # type: ignore[override]
            embedded.append(text)
            return super().embed(text)

    def counting_query_embedder(description, one_shot=False):
        assert one_shot is False  # an API handle is long-lived: the encoder that answers fastest
        made.append(description)
        return Counting(dimensions=int(description["dimension"]))

    monkeypatch.setattr(select, "query_embedder", counting_query_embedder)
    with Index.open(repo) as ix:
        first = ix.search("payment capture", strategy="vector")
        again = ix.search("payment capture", strategy="vector")
        ix.retrieve("payment capture")
        ix.search("invoice total", strategy="vector")
    assert first == again
    assert len(made) == 1
    assert embedded.count("payment capture") == 1 and embedded.count("invoice total") == 1


# -- resolve -------------------------------------------------------------------------------------


def test_resolve_short_name_is_ambiguous_until_recent_names_one(index):
    plain = index.resolve("charge")
    assert plain.status.value == "ambiguous"
    assert {c.identifier for c in plain.candidates} == {"Billing::Invoice#charge", "Subscription#charge"}
    recent = index.resolve("charge", recent=["Subscription#charge"])
    assert recent.status.value == "resolved" and recent.identifier == "Subscription#charge"
    assert index.resolve("Billing::Invoice#charge").identifier == "Billing::Invoice#charge"


def test_results_from_changed_files_are_marked_stale(tmp_path):
    root = build_repo(tmp_path / "repo")
    with Index.open(root) as ix:
        assert not ix.resolve("Payment#capture").stale
        (root / "app/models/payment.rb").write_text(SAMPLE_REPO["app/models/payment.rb"] + "# edited\n")
        outcome = ix.resolve("Payment#capture")
        assert outcome.stale and outcome.to_dict()["stale"] is True
        assert any("app/models/payment.rb" in w for w in outcome.warnings)
        found = ix.search("Payment", strategy="keyword")
        stale = {h.identifier for h in found if h.stale}
        assert stale and all(h.file_path == "app/models/payment.rb" for h in found if h.stale)
        assert len(found.warnings) == 1 and found.warnings[0].startswith("stale: 1 file(s) changed")
        assert all(h.to_dict().get("stale") is True for h in found if h.stale)


def test_search_takes_every_cli_option_and_keeps_old_callers_working(index):
    result = index.search("charge", limit=3, path_prefixes=["app/models/billing"], mode="semantic", budget=300)
    assert isinstance(result, Sequence) and len(result) == len(list(result)) >= 1
    assert result[0] is result.hits[0] and result[:1] == result.hits[:1]
    assert all(h.file_path.startswith("app/models/billing/") for h in result)
    assert result.tokens_used <= 300 and result.applied_scope.source_paths == ("app/models/billing",)
    assert set(result.to_dict()) >= {"query", "mode", "strategy", "results", "classification", "trace", "warnings"}
    assert "context" not in result.to_dict(context=False)
    lexical = index.search("render report", mode="lexical")
    assert lexical.mode == lexical.strategy == "lexical" and lexical[0].identifier == "lib.report.render_report"
    with pytest.raises(InputError):
        index.search("charge", mode="psychic")
    with pytest.raises(InputError):
        index.search("charge", budget=200_001)
    with pytest.raises(InputError):
        index.search("charge", path_prefixes=["../outside"])


# -- lookup --------------------------------------------------------------------------------------


def test_lookup_by_identifier_with_and_without_source(index):
    unit = index.lookup("Billing::Invoice#charge")
    assert isinstance(unit, UnitRecord)
    assert (unit.type, unit.file_path, unit.line_start) == ("method", "app/models/billing/invoice.rb", 4)
    assert "Payment.new(amount)" in (unit.source_code or "")
    assert [d["target"] for d in unit.dependencies] == ["Payment"]
    assert index.lookup("Billing::Invoice#charge", include_source=False).source_code is None
    assert index.lookup("No::Such#thing") is None


def test_lookup_shared_identifier_is_ambiguous_unless_typed(index):
    with pytest.raises(AmbiguousIdentifierError) as caught:
        index.lookup("Shared")
    candidates = caught.value.candidates
    assert sorted(c["type"] for c in candidates) == ["lib", "poro"]
    lib = index.lookup("Shared", type="lib")
    assert lib is not None and lib.file_path == "lib/shared.rb"
    # The storage key of a typed variant finds exactly that variant.
    by_key = index.lookup(lib.key)
    assert by_key == lib
    assert index.lookup("Shared", type="model") is None


# -- the graph -----------------------------------------------------------------------------------


def test_dependencies_and_dependents_follow_the_graph_store(index, repo):
    from woods.store.index import IndexStores

    deps = index.dependencies("Subscription", depth=3)
    assert [(n.identifier, n.depth) for n in deps] == [("Billing::Invoice", 1), ("Payment", 2)]
    users = index.dependents("Payment", depth=2)
    with IndexStores.open(repo / ".woods") as stores:
        expected = stores.graph.traverse("Payment", reverse=True, depth=2)
    assert [(n.identifier, n.via, n.depth) for n in users] == expected
    assert all(n.indexed and n.file_path for n in users)
    assert index.dependencies("Subscription", depth=1, via="superclass") == []
    assert index.dependencies("Subscription", depth=1, via=["calls", "superclass"]) == deps[:1]


def test_graph_questions_validate_input(index):
    with pytest.raises(UnitNotFoundError):
        index.dependencies("No::Such")
    with pytest.raises(InputError):
        index.dependents("Payment", depth=0)
    with pytest.raises(InputError):
        index.dependents("Payment", via=[3])


def test_pagerank_is_sorted_and_filterable(index):
    ranked = index.pagerank(limit=50)
    assert [(-u.score, u.identifier) for u in ranked] == sorted((-u.score, u.identifier) for u in ranked)
    assert ranked[0].identifier == "Payment"  # the end of every call chain
    methods = index.pagerank(limit=50, types=["method"])
    assert methods and {u.type for u in methods} == {"method"}


# -- structure, status ---------------------------------------------------------------------------


def test_structure_and_status_describe_the_index(index, repo):
    summary = index.structure()
    assert summary.counts["units"] == sum(summary.units_by_type.values())
    assert summary.files_by_language == {"python": 1, "ruby": 5}
    assert summary.edges_by_via.get("calls", 0) >= 3
    full = index.structure("full")
    assert sorted(f["path"] for f in full.files) == sorted(SAMPLE_REPO)
    with pytest.raises(InputError):
        index.structure("everything")
    status = index.status()
    assert status.fresh and status.root == str(repo.resolve())
    assert status.to_dict()["changes"]["changed"] == []


# -- concurrency ---------------------------------------------------------------------------------

QUERIES = ("invoice charge", "payment capture", "render report rows", "Billing::Invoice", "recurring plan")


def _answers(ix: Index) -> list[tuple]:
    out: list[tuple] = []
    for query in QUERIES:
        out.append(tuple((h.identifier, h.score) for h in ix.search(query, limit=5)))
        out.append((ix.resolve("charge", recent=["Billing::Invoice#charge"]).identifier,))
    return out


def test_eight_threads_get_identical_answers_from_a_cold_index(repo):
    with Index.open(repo) as warm:
        expected = _answers(warm)
    with Index.open(repo) as cold, ThreadPoolExecutor(max_workers=8) as pool:
        start = threading.Barrier(8)

        def run() -> list[tuple]:
            start.wait()  # all eight hit the cold (lazily built) state at once
            return [item for _ in range(3) for item in _answers(cold)]

        results = [f.result() for f in [pool.submit(run) for _ in range(8)]]
    assert all(result == expected * 3 for result in results)


# -- update --------------------------------------------------------------------------------------


def test_update_switches_generation_and_reuses_vectors(tmp_path):
    root = build_repo(tmp_path / "repo")
    with Index.open(root) as ix:
        before = ix.generation
        assert ix.lookup("Refund#issue") is None
        (root / "app/models/refund.rb").write_text("class Refund\n  def issue\n    true\n  end\nend\n")
        assert not ix.status().fresh
        summary = ix.update()
        assert ix.generation != before
        assert summary.reused_vectors > 0 and summary.embedded >= 1
        assert ix.lookup("Refund#issue") is not None
        assert ix.status().fresh


def test_readers_during_update_see_one_whole_generation(tmp_path):
    root = build_repo(tmp_path / "repo")
    with Index.open(root) as ix:
        old = [h.identifier for h in ix.search("refund issue", limit=5)]
        (root / "app/models/refund.rb").write_text("class Refund\n  def issue\n    true\n  end\nend\n")
        errors: list[BaseException] = []
        seen: set[tuple[str, ...]] = set()
        stop = threading.Event()

        def reader() -> None:
            while not stop.is_set():
                try:
                    seen.add(tuple(h.identifier for h in ix.search("refund issue", limit=5)))
                except BaseException as exc:  # noqa: BLE001 — any failure is the finding
                    errors.append(exc)
                    return

        threads = [threading.Thread(target=reader) for _ in range(4)]
        for thread in threads:
            thread.start()
        ix.update()
        new = [h.identifier for h in ix.search("refund issue", limit=5)]
        stop.set()
        for thread in threads:
            thread.join()
    assert not errors
    assert new != old and "Refund" in new[:3]
    assert seen <= {tuple(old), tuple(new)}


# -- docs/api.md ---------------------------------------------------------------------------------

_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def test_docs_api_examples_run(tmp_path, monkeypatch):
    """Every ```python block of docs/api.md runs, in order, from inside a small indexed repository."""
    text = (REPO_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = _PYTHON_BLOCK.findall(text)
    assert len(blocks) >= 5
    root = build_repo(tmp_path / "repo")
    monkeypatch.chdir(root)
    namespace: dict[str, object] = {"__name__": "docs_api"}
    for number, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"docs/api.md block {number}", "exec"), namespace)  # noqa: S102
        except Exception as exc:  # pragma: no cover - the message is the point
            raise AssertionError(f"docs/api.md python block {number} failed: {exc!r}\n{block}") from exc


def test_background_update_answers_from_phase_one_then_switches_to_contextual_vectors(tmp_path):
    """update(background=True) returns once phase 1 is published; searches answer from it (with its
    own vectors, hybrid) until the background thread publishes the contextual vectors and the
    handle switches to them."""
    root = build_repo(tmp_path / "repo")
    release = threading.Event()

    class HeldFake(FakeContextualProvider):
        def embed_batch(self, texts):
            release.wait(30)  # phase 2 waits here until the test has searched
            return super().embed_batch(texts)

    with Index.open(root) as ix:
        (root / "app/models/refund.rb").write_text("class Refund\n  def issue\n    true\n  end\nend\n")
        summary = ix.update(background=True, provider_factory=FakeEmbeddingProvider, contextual_factory=HeldFake)
        assert summary.vectors_pending is True and summary.searchable_seconds is not None
        assert ix.lookup("Refund#issue") is not None  # phase 1 is current
        assert ix.vectors_in_background
        vectors = ix.status().vectors
        assert (vectors["state"], vectors["phase"], vectors["contextual"]["state"]) == ("complete", 1, "embedding")
        result = ix.search("refund issue", limit=5)
        assert "Refund" in [h.identifier for h in result][:3]
        assert result.warnings == () and "vector" in result.trace.legs
        release.set()
        assert ix.wait_for_vectors(60)
        assert not ix.vectors_in_background and ix.background_warnings == []
        vectors = ix.status().vectors
        assert (vectors["state"], vectors["phase"], vectors["embedder"]) == ("complete", 2, FAKE_CONTEXTUAL_NAME)
        after = ix.search("refund issue", limit=5)
        assert after.warnings == () and "Refund" in [h.identifier for h in after][:3]


def test_close_stops_a_background_update_and_the_next_run_resumes(tmp_path):
    root = build_repo(tmp_path / "repo", {**SAMPLE_REPO, **{
        f"lib/gen_{i}.rb": f"module Gen{i}\n  def self.value\n    {i}\n  end\nend\n" for i in range(150)}})
    started = threading.Event()

    class SlowFake(FakeContextualProvider):
        def embed_batch(self, texts):
            started.set()
            threading.Event().wait(0.2)
            return super().embed_batch(texts)

    for path in (root / "lib").glob("gen_*.rb"):
        path.write_text(path.read_text().replace("def self.value\n", "def self.value\n    # changed\n"))
    ix = Index.open(root)
    ix.update(background=True, provider_factory=FakeEmbeddingProvider, contextual_factory=SlowFake)
    assert started.wait(30)
    ix.close()  # stops after the current batch
    assert any("stopped" in w for w in ix.background_warnings)
    with Index.open(root) as again:
        assert again.status().vectors["contextual"]["state"] == "interrupted"
        summary = again.update(provider_factory=FakeEmbeddingProvider, contextual_factory=FakeContextualProvider)
        vectors = again.status().vectors
        assert summary.resumed_vectors > 0 and (vectors["state"], vectors["phase"]) == ("complete", 2)
