"""Incremental indexing that never loses the index: reuse, purge guard, crashes, locks, hostile trees.

In-process tests use a counting wrapper around the Fake provider (deterministic per text, so an
incremental result must equal a full rebuild exactly); the crash and concurrency tests run the
real CLI in subprocesses and kill it at announced points (WOODS_TEST_PAUSE).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import FAKE_EMBEDDER, FIXTURES, REPO, CountingFake, index_with_fake, run_cli
from woods.errors import InputError, LockTimeoutError
from woods.indexing import index_repository
from woods.store.index import IndexStores, StoreLock


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "python_pkg", root / "python_pkg")
    shutil.copytree(FIXTURES / "ruby_gem", root / "ruby_gem")
    return root


def _index(root: Path, store: Path, **kw) -> tuple:
    provider = CountingFake()
    summary = index_repository(root, store, lambda: provider, **kw)
    return summary, provider


def _state(store: Path) -> dict:
    with IndexStores.open(store) as stores:
        records = sorted((r["id"], json.dumps(r, sort_keys=True)) for r in stores.metadata.all_records())
        edges = sorted(stores.metadata.edges())
        chunks = {c.embedding_id: c for c in stores.metadata.chunks()}
        vectors = stores.vectors.vectors_for([c.vector_id for c in chunks.values()])
        by_id = {eid: vectors[i] for i, eid in enumerate(chunks)}
        files = [(f.path, f.sha256, f.size) for f in stores.metadata.files()]
    return {"records": records, "edges": edges, "vectors": by_id, "files": files,
            "chunks": sorted((c.embedding_id, c.unit_key, c.line_start, c.line_end, c.text_sha256) for c in chunks.values())}


def _assert_same(a: dict, b: dict) -> None:
    assert a["records"] == b["records"]
    assert a["edges"] == b["edges"]
    assert a["files"] == b["files"]
    assert a["chunks"] == b["chunks"]
    assert a["vectors"].keys() == b["vectors"].keys()
    for key, vector in a["vectors"].items():
        assert np.allclose(vector, b["vectors"][key], atol=1e-6), key


def test_edit_add_delete_rename_equals_full_rebuild_and_embeds_only_changes(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "incremental"
    _index(root, store)

    account = root / "python_pkg/ledger/models/account.py"
    account.write_text(account.read_text().replace("class Account", "class Account  # edited", 1))
    (root / "python_pkg/ledger/services/audit.py").write_text(
        '"""Audit trail."""\n\n\ndef audit_entry(entry):\n    """Record who posted an entry."""\n    return entry\n'
    )
    (root / "ruby_gem/lib/tinycache/version.rb").unlink()
    (root / "python_pkg/ledger/util/decorators.py").rename(root / "python_pkg/ledger/util/wrappers.py")

    summary, provider = _index(root, store)
    assert summary.reused_files > 0
    changed_texts = provider.embedded
    assert changed_texts, "the edit and the new file must be embedded"
    assert all(("audit" in t) or ("Account" in t) or ("wrappers" in t) or ("account" in t) for t in changed_texts)

    full_store = tmp_path / "full"
    _index(root, full_store, full=True)
    _assert_same(_state(store), _state(full_store))


def test_no_change_reindex_parses_and_embeds_nothing(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    first, _ = _index(root, store)
    second, provider = _index(root, store)
    assert provider.embedded == []
    assert second.reused_files == second.files == first.files
    assert second.units == first.units and second.chunks == first.chunks
    # Nothing changed: no new generation is written at all.
    assert second.up_to_date and second.generation == first.generation
    (root / "python_pkg/ledger/cli.py").touch()  # same content, new mtime: a new generation records it
    third, provider = _index(root, store)
    assert not third.up_to_date and provider.embedded == [] and third.generation != first.generation


def test_moved_file_costs_no_embedding_of_unchanged_text(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    (root / "ruby_gem/lib/tinycache/instrumentation.rb").rename(root / "ruby_gem/lib/tinycache/instruments.rb")
    _summary, provider = _index(root, store)
    # The units keep their identifiers; only the `file:` line of their embedding text changed.
    assert provider.embedded and all("instruments.rb" in t for t in provider.embedded)


def test_purge_guard_refuses_large_deletions_unless_allowed(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    shutil.rmtree(root / "python_pkg")
    with pytest.raises(InputError, match="--allow-purge"):
        _index(root, store)
    with IndexStores.open(store) as stores:  # untouched
        assert any(r["identifier"].startswith("ledger") for r in stores.metadata.all_records())
    summary, _ = _index(root, store, allow_purge=True)
    assert summary.removed_units > 0


def test_empty_tree_is_refused_on_an_existing_index(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no source files"):
        _index(empty, store)


def test_second_indexer_waits_then_fails_cleanly(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    with StoreLock(store, wait=0), pytest.raises(LockTimeoutError):
        index_repository(root, store, CountingFake, wait=0.2)
    index_with_fake(root, "--store", str(store), "--wait", "0")  # the lock is free again


def test_cli_lock_timeout_is_exit_2(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    holder = subprocess.Popen(
        [sys.executable, "-c", f"from woods.store.index import StoreLock\nfrom pathlib import Path\nimport time\n"
         f"with StoreLock(Path({str(store)!r}), 0):\n    print('held', flush=True)\n    time.sleep(30)\n"],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        result = index_with_fake(root, "--store", str(store), "--wait", "0.5", expect=None)
        assert result.code == 2
        assert "--wait" in result.stderr and "Traceback" not in result.stderr
    finally:
        holder.kill()
        holder.wait()
    # A lock left by a dead process is simply taken over.
    index_with_fake(root, "--store", str(store), "--wait", "0")


@pytest.mark.slow  # not in the quick loop: a whole-repository sweep or killed processes
@pytest.mark.parametrize("phase", ["discover", "parse", "write"])
def test_kill_at_any_phase_keeps_the_previous_index(tmp_path, phase):
    """Before phase 1 publishes, a kill leaves the previous index exactly as it was (a kill during
    phase 2 leaves phase 1 published: tests/test_two_phase.py)."""
    root = _repo(tmp_path)
    store = tmp_path / "s"
    index_with_fake(root, "--store", str(store))
    before = run_cli("search", "JournalCsvExporter", "--store", str(store), "--json")
    assert before.code == 0
    (root / "python_pkg/ledger/new_module.py").write_text("def brand_new():\n    return 1\n")

    env = dict(os.environ, WOODS_TEST_PAUSE=phase, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", **FAKE_EMBEDDER)
    proc = subprocess.Popen(
        [sys.executable, "-m", "woods", "index", str(root), "--store", str(store)],
        cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )
    deadline = time.monotonic() + 60
    for line in proc.stderr:
        if line.strip() == f"woods-test-paused:{phase}":
            break
        assert time.monotonic() < deadline
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    after = run_cli("search", "JournalCsvExporter", "--store", str(store), "--json")
    assert after.code == 0, after.stderr
    assert json.loads(after.stdout)["results"] == json.loads(before.stdout)["results"]
    index_with_fake(root, "--store", str(store), "--json")
    assert not list(store.glob("building-*"))
    assert run_cli("lookup", "ledger.new_module.brand_new", "--store", str(store)).code == 0


def test_reader_during_indexing_always_sees_a_complete_index(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    with IndexStores.open(store) as stores:
        initial_units = stores.metadata.count()
    stop = threading.Event()
    errors: list[str] = []
    seen: set[int] = set()

    def reader() -> None:
        while not stop.is_set():
            try:
                with IndexStores.open(store) as stores:
                    count = stores.metadata.count()
                    if stores.has_vectors:  # a lexical generation (phase 1) has none yet
                        assert stores.vectors.count() == stores.metadata.chunk_count()
                    else:
                        assert stores.vectors is None and stores.metadata.chunk_count() == 0
                    seen.add(count)
            except Exception as exc:  # any failure is a torn read
                errors.append(repr(exc))

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(3):
            (root / f"python_pkg/ledger/extra_{i}.py").write_text(f"def extra_{i}():\n    return {i}\n")
            _index(root, store)
    finally:
        stop.set()
        thread.join()
    assert errors == []
    assert seen and all(count >= initial_units for count in seen)


def test_hostile_tree_completes_and_reports_every_skip(tmp_path):
    root = tmp_path / "hostile"
    (root / "src").mkdir(parents=True)
    (root / "src/ok.py").write_text("def ok():\n    return 1\n")
    (root / "src/binary.py").write_bytes(b"\x00\x01binary\x00" * 10)
    (root / "src/latin1.py").write_bytes("def caf\xe9():\n    return 'd\xe9j\xe0'\n".encode("latin-1"))
    with (root / "src/huge.py").open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    deep = root / "src"
    for i in range(120):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "deep.rb").write_text("class Deep\n  def x; end\nend\n")
    (root / "src/loop").symlink_to(root / "src")
    (root / "src/outside").symlink_to(tmp_path)
    (root / "src/broken.py").symlink_to(root / "nowhere.py")
    (root / "node_modules/pkg").mkdir(parents=True)
    (root / "node_modules/pkg/index.js").write_text("module.exports = 1\n")
    summary, _ = _index(root, tmp_path / "s")
    assert summary.files == 3  # ok.py, latin1.py (decoded leniently), deep.rb
    assert summary.skipped["binary"] == 1
    assert summary.skipped["too_large"] == 1
    assert summary.skipped["broken_symlink"] == 1
    assert summary.skipped["symlink_outside"] == 1
    assert summary.skipped["symlink_loop"] == 1
    assert summary.skipped["ignored_dir"] >= 1
    with IndexStores.open(tmp_path / "s") as stores:
        names = {r["identifier"] for r in stores.metadata.all_records()}
    assert "Deep#x" in names and any(n.endswith(".ok") for n in names)


def test_file_vanishing_mid_run_is_counted(tmp_path, monkeypatch):
    import woods.indexing.parse as parse

    root = _repo(tmp_path)
    victim = root / "python_pkg/ledger/cli.py"
    original = parse.extract_one

    def vanish_then_extract(root_text, path, mtime_ns, layout):
        if path.endswith("ledger/cli.py") and victim.exists():
            victim.unlink()
        return original(root_text, path, mtime_ns, layout)

    monkeypatch.setattr(parse, "extract_one", vanish_then_extract)
    summary, _ = _index(root, tmp_path / "s")
    assert summary.skipped.get("vanished") == 1


@pytest.mark.slow  # not in the quick loop: a whole-repository sweep or killed processes
def test_a_killed_parse_worker_does_not_lose_the_run(tmp_path):
    """Parse workers are separate processes; one dying (OOM killer, a signal) must not abort indexing:
    the files it did not finish are parsed in-process and every file is indexed."""
    import psutil

    root = tmp_path / "many"
    files = 40  # the pool threshold is lowered below, so a small tree goes to the parse workers
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(150))
    for n in range(files):
        (root / f"pkg{n % 10}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{n % 10}" / f"mod{n}.py").write_text(body)
    killed: list[int] = []

    def kill_one_worker() -> None:
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            for child in psutil.Process().children(recursive=True):
                try:
                    if child.parent().pid != os.getpid():  # a grandchild: a worker of the forkserver
                        child.kill()
                        killed.append(child.pid)
                        return
                except psutil.Error:
                    continue
            time.sleep(0.01)

    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    summary, _ = _index(root, tmp_path / "s", workers=2, parallel_min_files=2)
    killer.join()
    assert killed, "no parse worker was seen"
    assert any("parse worker died" in w for w in summary.warnings)
    assert summary.files == files


def test_watch_reindexes_once_per_burst_of_changes(tmp_path):
    from woods.watch import watch

    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    runs: list[int] = []
    changes: list[int] = []

    def reindex() -> None:
        summary, _provider = _index(root, store)
        runs.append(summary.units)

    thread = threading.Thread(
        target=watch, args=(root, reindex),
        kwargs={"max_file_bytes": 1_000_000, "on_change": changes.append, "poll_seconds": 0.05,
                "debounce_seconds": 0.3, "max_cycles": 1},
    )
    thread.start()
    time.sleep(0.2)
    for i in range(3):  # a burst: three saves within the debounce window
        (root / f"python_pkg/ledger/burst_{i}.py").write_text(f"def burst_{i}():\n    return {i}\n")
        time.sleep(0.05)
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert changes == [3] and len(runs) == 1
    with IndexStores.open(store) as stores:
        assert {"ledger.burst_0.burst_0", "ledger.burst_2.burst_2"} <= stores.metadata.identifiers()


class LimitedCountingFake(CountingFake):
    """Fake vectors with a 64-token input limit, counting tokenizer calls (a test double)."""

    def __init__(self) -> None:
        super().__init__()
        self.max_input_tokens = 64
        self.token_counts = 0

    def count_tokens(self, text: str) -> int:
        self.token_counts += 1
        return len(text.split())


def test_unchanged_units_reuse_their_chunk_plan_without_tokenizing(tmp_path):
    root = _repo(tmp_path)
    store = tmp_path / "s"
    first = LimitedCountingFake()
    index_repository(root, store, lambda: first)
    assert first.token_counts > 100
    edited = root / "python_pkg/ledger/models/entry.py"
    edited.write_text(edited.read_text() + "\n\ndef appended_helper():\n    return 42\n")
    second = LimitedCountingFake()
    summary = index_repository(root, store, lambda: second)
    assert 0 < second.token_counts < first.token_counts / 5
    full_store = tmp_path / "full"
    index_repository(root, full_store, LimitedCountingFake, full=True)
    _assert_same(_state(store), _state(full_store))
    assert summary.embedded == len(second.embedded) > 0


def test_an_unreadable_previous_index_is_reported_not_silently_rebuilt(tmp_path):
    """A corrupt published generation makes the run a full build — and the summary says so."""
    from woods.store import index as layout

    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    db = layout.read_current(store) / layout.METADATA_FILE
    db.write_bytes(db.read_bytes()[:300])
    summary, provider = _index(root, store)
    assert summary.full is True
    assert summary.reused_files == 0 and summary.reused_vectors == 0
    assert any("could not be read" in w and "purge guard not applied" in w for w in summary.warnings)
    with IndexStores.open(store) as stores:  # and the new generation is whole
        assert stores.metadata.count() == summary.units


def test_unusable_previous_vectors_are_reported_and_everything_is_embedded(tmp_path):
    from woods.store import index as layout
    from woods.store.vectors import write_vectors

    root = _repo(tmp_path)
    store = tmp_path / "s"
    first, _ = _index(root, store)
    (root / "python_pkg/ledger/extra.py").write_text("def extra():\n    return 1\n")
    write_vectors(layout.read_current(store) / layout.VECTORS_FILE, np.arange(1), np.ones((1, 128), np.float32), 128)
    summary, provider = _index(root, store)
    assert summary.reused_vectors == 0 and summary.embedded == summary.chunks > first.chunks - 5
    assert any("vectors of the previous index are unusable" in w for w in summary.warnings)


def test_a_schema_change_rebuilds_but_reuses_the_vectors(tmp_path):
    """Upgrading woods to another index schema rebuilds the index — without re-embedding code whose
    embedding text and model are unchanged."""
    from woods.store import index as layout

    root = _repo(tmp_path)
    store = tmp_path / "s"
    first, _ = _index(root, store)
    manifest_path = layout.read_current(store) / layout.MANIFEST_FILE
    manifest = json.loads(manifest_path.read_text())
    manifest["schema_version"] = layout.SCHEMA_VERSION - 1
    manifest_path.write_text(json.dumps(manifest))
    summary, provider = _index(root, store)
    assert summary.full is True and any("another schema" in w for w in summary.warnings)
    assert summary.embedded == 0 and summary.reused_vectors == summary.chunks == first.chunks
    assert provider.embedded == []
    with IndexStores.open(store) as stores:
        assert stores.manifest.schema_version == layout.SCHEMA_VERSION


def test_full_reuses_nothing_even_after_a_schema_change(tmp_path):
    from woods.store import index as layout

    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    manifest_path = layout.read_current(store) / layout.MANIFEST_FILE
    manifest = json.loads(manifest_path.read_text())
    manifest["schema_version"] = layout.SCHEMA_VERSION - 1
    manifest_path.write_text(json.dumps(manifest))
    summary, provider = _index(root, store, full=True)
    assert summary.reused_vectors == 0 and provider.embedded


def _stale_copy(store: Path) -> Path:
    """A second generation beside CURRENT's, as an older one a writer is about to clean up."""
    from woods.store.index import read_current

    current = read_current(store)
    stale = current.parent / "00000000T000000-stale000"
    shutil.copytree(current, stale)
    return stale


def test_a_reader_starts_over_when_its_generation_is_removed_before_it_locks_it(tmp_path, monkeypatch):
    from woods.store import index as index_module

    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    stale = _stale_copy(store)
    real_current, real_manifest = index_module.read_current, index_module.read_manifest
    calls: list[str] = []

    def current_then_real(store_dir: Path) -> Path:
        calls.append("current")
        return stale if len(calls) == 1 else real_current(store_dir)  # CURRENT read just before a publish

    def manifest_then_cleanup(generation: Path, **kw):
        manifest = real_manifest(generation, **kw)
        if generation == stale:
            shutil.rmtree(stale)  # the writer's cleanup wins the race to the reader's lock
        return manifest

    monkeypatch.setattr(index_module, "read_current", current_then_real)
    monkeypatch.setattr(index_module, "read_manifest", manifest_then_cleanup)
    with IndexStores.open(store) as stores:
        assert stores.generation == real_current(store) and stores.metadata.count() > 0
    assert len(calls) == 2


def test_cleanup_never_removes_a_generation_a_reader_holds_and_a_reader_never_locks_one_being_removed(tmp_path):
    from woods.store import index as index_module

    root = _repo(tmp_path)
    store = tmp_path / "s"
    _index(root, store)
    stale = _stale_copy(store)
    manifest = stale / index_module.MANIFEST_FILE
    reader = index_module._hold_generation(manifest)
    assert index_module._lock_for_removal(manifest) is False  # held by a reader: cleanup skips it
    os.close(reader)
    remover = index_module._lock_for_removal(manifest)
    assert isinstance(remover, int)
    with pytest.raises(index_module._GenerationGone):
        index_module._hold_generation(manifest)  # being deleted: the reader starts over
    os.close(remover)
    shutil.rmtree(stale)
    with pytest.raises(index_module._GenerationGone):
        index_module._hold_generation(manifest)


def test_a_first_index_is_reported_as_full_not_incremental(tmp_path):
    summary, _provider = _index(_repo(tmp_path), tmp_path / "s")
    assert summary.full is True and summary.reused_files == 0


def test_a_broken_pools_workers_are_killed_so_its_shutdown_cannot_hang():
    """`_kill_workers` stops every worker a pool still holds (CPython 3.11 can leave a worker it
    started while breaking unterminated, and its shutdown would join it forever)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from woods.indexing.parse import _kill_workers

    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver"))
    try:
        pids = {f.result(timeout=60) for f in [pool.submit(os.getpid) for _ in range(4)]}
        processes = list(pool._processes.values())
        assert pids and all(p.is_alive() for p in processes)
        _kill_workers(pool)
        for process in processes:
            process.join(timeout=30)
        assert not any(p.is_alive() for p in processes)
        _kill_workers(pool)  # again, on processes already gone: nothing raised
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
