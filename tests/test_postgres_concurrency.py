"""One process re-indexes repository A while another searches A and B in a loop, against a real
PostgreSQL server: no reader error, never a mixed generation, nothing lost when the indexer is
killed in the middle of its publish transaction (tests/conftest.py `pg_server`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.helpers import FAKE_EMBEDDER, REPO, copy_fixture, index_with_fake, run_cli

# Bounded: the reader stops after this many rounds or when told to, whichever comes first.
READER_ROUNDS = 400
READER = textwrap.dedent(
    """
    import os, sys, time
    from woods.api import Index
    url, stop = sys.argv[1], sys.argv[2]
    rounds = seen_versions = 0
    for _ in range(int(sys.argv[3])):
        if os.path.exists(stop):
            break
        with Index(url, repo="a") as a:
            hits = a.search("marker", limit=50, mode="lexical")
            names = [h.identifier.rsplit(".", 1)[-1] for h in hits]
            versions = {n.split("_")[1] for n in names if n.startswith("marker_v")}
            if len(versions) != 1:
                print(f"MIXED {sorted(versions)} in {a.generation}", flush=True)
                sys.exit(1)
        with Index(url, repo="b") as b:
            if not b.search("invoice charge").hits:
                print("B EMPTY", flush=True)
                sys.exit(1)
        rounds += 1
    print(f"OK {rounds}", flush=True)
    """
)


def _markers(payload: dict) -> set[str]:
    names = {r["identifier"].rsplit(".", 1)[-1] for r in payload["results"]}
    return {n for n in names if n.startswith("marker_v")}


def _write_version(root: Path, n: int) -> None:
    # Two files that must always be seen together: a reader seeing v1 in one and v2 in the other
    # would be reading a mix of generations.
    (root / "marker_one.py").write_text(f"def marker_v{n}_one():\n    return {n}\n")
    (root / "marker_two.py").write_text(f"def marker_v{n}_two():\n    return {n}\n")


def test_reindexing_a_while_reading_a_and_b(tmp_path, pg_database):
    url = pg_database()
    a = tmp_path / "a"
    a.mkdir()
    copy_fixture("python_pkg", a)
    _write_version(a, 0)
    b = copy_fixture("rails_app", tmp_path)
    index_with_fake(a, "--store", url, "--repo", "a", "--json")
    index_with_fake(b, "--store", url, "--repo", "b", "--json")

    stop = tmp_path / "stop"
    env = dict(os.environ, PYTHONPATH=str(REPO), **FAKE_EMBEDDER)
    reader = subprocess.Popen([sys.executable, "-c", READER, url, str(stop), str(READER_ROUNDS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        for n in range(1, 4):
            _write_version(a, n)
            index_with_fake(a, "--store", url, "--repo", "a", "--json")
        # Kill an indexer inside its publish transaction: rows copied, pointer not moved.
        _write_version(a, 9)
        killed = subprocess.Popen(
            [sys.executable, "-m", "woods", "index", str(a), "--store", url, "--repo", "a"],
            stderr=subprocess.PIPE, text=True, env={**env, "WOODS_TEST_PAUSE": "publish"}, cwd=REPO,
        )
        assert killed.stderr is not None
        deadline = time.monotonic() + 300
        while "woods-test-paused:publish" not in killed.stderr.readline():
            assert time.monotonic() < deadline and killed.poll() is None, "the indexer never reached its publish"
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        time.sleep(1.0)  # the reader keeps reading across the kill
    finally:
        stop.write_text("stop")
        out, err = reader.communicate(timeout=600)
    assert reader.returncode == 0 and out.startswith("OK"), (out, err)
    assert int(out.split()[1]) > 0

    # Nothing lost: A still answers from version 3, B untouched; the killed run's lock is gone.
    after = run_cli("search", "marker", "--store", url, "--repo", "a", "--mode", "lexical", "--json", expect=0).json()
    assert _markers(after) == {"marker_v3_one", "marker_v3_two"}
    index_with_fake(a, "--store", url, "--repo", "a", "--wait", "5", "--json")
    again = run_cli("search", "marker", "--store", url, "--repo", "a", "--mode", "lexical", "--json", expect=0).json()
    assert _markers(again) == {"marker_v9_one", "marker_v9_two"}
