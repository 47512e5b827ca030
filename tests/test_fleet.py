"""Fleet indexing (`woods.build_fleet`, `woods index A B …`): many repositories into one
PostgreSQL store on a real local Ray (one per module: num_cpus 2, no dashboard) and a real server
(tests/conftest.py `pg_server`), or in local processes.

The Ray tests are marked `slow` (Ray takes seconds to start): `pytest -m 'not slow'` skips them in
a quick local loop; CI runs them.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers import copy_fixture, run_cli
from woods.api import Index, build_index
from woods.embedding.fake import FakeContextualProvider, FakeEmbeddingProvider
from woods.errors import InputError
from woods.fleet import FleetState, RepoOutcome, build_fleet, parse_source, read_repo_list
from woods.fleet.plan import largest_first, plan_fleet

FIXTURE_REPOS = ("python_pkg", "rails_app", "go_module")
QUERIES = ["invoice charge", "where is the payment captured", "parse config file", "struct", "test helper"]
STRATEGIES = [None, "vector", "keyword", "graph", "direct"]


class SlowFakeProvider(FakeEmbeddingProvider):
    """The Fake embedder, slowed to a second per batch (the same vectors): a repository then takes
    seconds, so a test can kill its worker while it runs."""

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(1.0)
        return super().embed_batch(texts)


class CrashingContextualProvider(FakeContextualProvider):
    """The Fake contextual embedder that fails on its second batch (a worker lost mid-embedding)."""

    calls = 0

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        CrashingContextualProvider.calls += 1
        if CrashingContextualProvider.calls > 1:
            raise RuntimeError("worker lost")
        return super().embed_batch(texts)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray for the module (started as `build_fleet` would not: it uses a running one)."""
    ray = pytest.importorskip("ray")
    cloudpickle = pytest.importorskip("ray.cloudpickle")

    temp = tempfile.mkdtemp(prefix="woods-ray-")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=temp, logging_level="ERROR")
    # Workers import woods from the installed package; this module's classes travel by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        yield
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture
def repos(tmp_path: Path) -> list[Path]:
    return [copy_fixture(name, tmp_path) for name in FIXTURE_REPOS]


def _hits(result: Any) -> list[dict[str, Any]]:
    rows = []
    for hit in result:
        row = hit.to_dict()
        row.pop("repo", None)
        rows.append(row)
    return rows


def _same_as_alone(url: str, roots: Sequence[Path]) -> None:
    """Each repository of the fleet's store answers as its own local index (built alone here)."""
    for root in roots:
        build_index(root, provider_factory=FakeEmbeddingProvider, contextual=False, workers=1)
        with Index(url, repo=root.name) as fleet, Index.open(root) as alone:
            for query in QUERIES:
                for strategy in STRATEGIES:
                    a = alone.search(query, limit=10, strategy=strategy)
                    b = fleet.search(query, limit=10, strategy=strategy)
                    assert _hits(a) == _hits(b), (root.name, query, strategy)


def _published_once(url: str, names: Sequence[str]) -> None:
    """One generation per repository, current, and no table of any other generation left."""
    import psycopg

    with psycopg.connect(url) as conn:
        generations = conn.execute("SELECT repo, id FROM woods.generations ORDER BY repo").fetchall()
        current = dict(conn.execute("SELECT name, current_generation FROM woods.repos").fetchall())
        tables = {r[0].split("_", 1)[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'woods'")
                  if r[0][0] == "g" and r[0][1].isdigit()}
    assert sorted(repo for repo, _id in generations) == sorted(names)
    assert {repo: gen for repo, gen in generations} == current
    assert tables == {f"g{gen}" for _repo, gen in generations}


@pytest.mark.slow
def test_a_fleet_on_ray_answers_as_each_repository_indexed_alone(local_ray, repos, pg_database):
    url = pg_database()
    summary = build_fleet(repos, store=url, ray=True, workers=2, provider_factory=FakeEmbeddingProvider,
                          contextual=False)
    assert summary.runner == "ray" and summary.exit_code == 0
    assert [r.status for r in summary.repositories] == ["published"] * 3
    assert all(r.rows > 0 and r.publish_seconds > 0 and r.attempts == 1 for r in summary.repositories)
    _published_once(url, [r.name for r in repos])
    _same_as_alone(url, repos)
    again = build_fleet(repos, store=url, ray=True, workers=2, provider_factory=FakeEmbeddingProvider, contextual=False)
    assert [r.status for r in again.repositories] == ["up_to_date"] * 3  # incremental: nothing rewritten
    assert [r.generation for r in again.repositories] == [r.generation for r in summary.repositories]


class _KillOnce:
    """A FleetProgress that kills the first worker it sees running a repository (by pid)."""

    def __init__(self) -> None:
        self.killed: tuple[str, int] | None = None
        self.outcomes: list[RepoOutcome] = []

    def update(self, state: FleetState) -> None:
        if self.killed is not None:
            return
        for repo in state.repos.values():
            if repo.state == "running" and repo.pid and repo.pid != os.getpid():
                os.kill(repo.pid, signal.SIGKILL)
                self.killed = (repo.name, repo.pid)
                return

    def finished(self, outcome: RepoOutcome, state: FleetState) -> None:
        self.outcomes.append(outcome)


@pytest.mark.slow
def test_a_killed_worker_is_retried_and_every_repository_published_once(local_ray, repos, pg_database):
    url = pg_database()
    progress = _KillOnce()
    summary = build_fleet(repos, store=url, ray=True, workers=2, provider_factory=SlowFakeProvider,
                          contextual=False, progress=progress)
    assert progress.killed is not None, "no worker was seen running"
    killed = next(r for r in summary.repositories if r.name == progress.killed[0])
    assert killed.attempts == 2 and not killed.worker.endswith(f":{progress.killed[1]}")  # the retry's worker
    assert [r.status for r in summary.repositories] == ["published"] * 3, summary.repositories
    _published_once(url, [r.name for r in repos])
    _same_as_alone(url, repos)


@pytest.mark.slow
def test_an_interrupted_run_resumes_without_embedding_a_finished_repository_again(local_ray, repos, pg_database):
    url = pg_database()
    finished: list[RepoOutcome] = []

    class StopAfterOne:
        def update(self, state: FleetState) -> None:
            pass

        def finished(self, outcome: RepoOutcome, state: FleetState) -> None:
            finished.append(outcome)

    first = build_fleet(repos, store=url, ray=True, workers=1, provider_factory=FakeEmbeddingProvider,
                        contextual=False, progress=StopAfterOne(), should_stop=lambda: len(finished) >= 1)
    assert [r.status for r in first.repositories] == ["published", "interrupted", "interrupted"]
    assert first.exit_code == 130
    resumed = build_fleet(repos, store=url, ray=True, workers=1, provider_factory=FakeEmbeddingProvider,
                          contextual=False)
    done, *rest = resumed.repositories
    assert done.status == "up_to_date" and done.embedded == 0 and done.generation == first.repositories[0].generation
    assert [r.status for r in rest] == ["published", "published"] and all(r.embedded > 0 for r in rest)
    _published_once(url, [r.name for r in repos])


def test_local_processes_run_the_same_plan_and_report_a_failing_repository(repos, pg_database, tmp_path):
    """Without Ray: a repository that cannot be read is reported; the others are published."""
    url = pg_database()
    broken = f"broken=file://{tmp_path}/no-such-mirror.git"
    summary = build_fleet([*map(str, repos), broken], store=url, ray=False, workers=2,
                          provider_factory=FakeEmbeddingProvider, contextual=False, checkouts=tmp_path / "checkouts")
    assert summary.runner == "processes"
    statuses = {r.name: r.status for r in summary.repositories}
    assert statuses == {"python_pkg": "published", "rails_app": "published", "go_module": "published", "broken": "failed"}
    failure = summary.repositories[-1]
    assert failure.exit_code == 2 and "git clone" in (failure.error or "")
    assert summary.exit_code == 2
    _published_once(url, [r.name for r in repos])
    with Index(url) as combined:  # one index of the three
        assert {h.to_dict()["repo"] for h in combined.search("invoice config struct", limit=30)} >= {"rails_app"}


def test_local_processes_run_a_killed_workers_repository_again(repos, pg_database):
    url = pg_database()
    progress = _KillOnce()
    summary = build_fleet(repos[:2], store=url, ray=False, workers=2, provider_factory=SlowFakeProvider,
                          contextual=False, progress=progress)
    assert progress.killed is not None, "no worker was seen running"
    assert [r.status for r in summary.repositories] == ["published"] * 2, summary.repositories
    assert max(r.attempts for r in summary.repositories) == 2  # the broken pool's repositories ran again
    _published_once(url, [r.name for r in repos[:2]])


def test_a_git_mirror_is_checked_out_and_indexed(tmp_path, pg_database):
    import subprocess

    source = copy_fixture("python_pkg", tmp_path)
    for command in (["git", "init", "-q"], ["git", "add", "-A"],
                    ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(command, cwd=source, check=True)
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(mirror)], check=True)
    url = pg_database()
    summary = build_fleet([str(mirror)], store=url, ray=False, workers=1, provider_factory=FakeEmbeddingProvider,
                          contextual=False, checkouts=tmp_path / "checkouts")
    assert [(r.name, r.status) for r in summary.repositories] == [("mirror", "published")]
    again = build_fleet([f"pkg={mirror}"], store=url, ray=False, workers=1, provider_factory=FakeEmbeddingProvider,
                        contextual=False, checkouts=tmp_path / "checkouts")
    assert again.repositories[0].status == "published" and again.repositories[0].files > 0


def test_sources_names_and_lists(tmp_path):
    a = tmp_path / "svc-a"
    a.mkdir()
    (tmp_path / "nested").mkdir()
    (tmp_path / "repos.txt").write_text(f"# fleet\n\nsvc-a\nother=nested\nmirror=file:///srv/x.git\n{a}\n")
    sources = read_repo_list(tmp_path / "repos.txt")
    assert sources[:3] == [str(tmp_path / "svc-a"), f"other={tmp_path / 'nested'}", "mirror=file:///srv/x.git"]
    assert parse_source("git@host:team/api.git").name == "api" and parse_source("git@host:team/api.git").git
    assert parse_source(str(a)).name == "svc-a" and not parse_source(str(a)).git
    with pytest.raises(InputError, match="two repositories are named 'svc-a'"):
        plan_fleet(sources)
    with pytest.raises(InputError, match="path not found"):
        plan_fleet([str(tmp_path / "missing")])
    (tmp_path / "has space").mkdir()
    with pytest.raises(InputError, match="NAME="):
        plan_fleet([str(tmp_path / "has space")])
    assert plan_fleet([f"ok={tmp_path / 'has space'}"])[0].name == "ok"
    specs = plan_fleet(sources[:3])
    assert [s.name for s in largest_first(specs, {"mirror": 10, "other": 99})] == ["other", "mirror", "svc-a"]


def test_the_fleet_command_prints_one_json_object(repos, pg_database):
    url = pg_database()
    result = run_cli("index", *map(str, repos), "--store", url, "--processes", "--workers", "2", "--no-contextual",
                     "--json", env={"WOODS_EMBEDDER": "fake"})
    assert result.code == 0, result
    payload = result.json()
    assert payload["schema_version"] == 1 and payload["fleet"]["runner"] == "processes"
    assert [r["status"] for r in payload["fleet"]["repositories"]] == ["published"] * 3
    assert payload["fleet"]["totals"]["published"] == 3 and payload["fleet"]["totals"]["rows"] > 0
    human = run_cli("index", *map(str, repos), "--store", url, "--processes", "--no-contextual",
                    env={"WOODS_EMBEDDER": "fake"})
    assert human.code == 0 and "up to date 3" in human.stderr and human.stdout == ""
    bad = run_cli("index", *map(str, repos), "--store", url, "--repo", "x", "--processes")
    assert bad.code == 2 and "NAME=PATH" in bad.stderr


def test_contextual_batches_survive_a_failed_run_on_the_server(tmp_path, pg_database):
    """Phase-2 work resumes: the contextual batches a failed run embedded are kept on the server
    and the next run embeds only the rest; once published, the kept batches are dropped."""
    import psycopg

    from woods.fleet.job import FleetOptions, index_repository_job

    url = pg_database()
    spec = parse_source(str(copy_fixture("rails_app", tmp_path)))
    failed = index_repository_job(spec, FleetOptions(url, FakeEmbeddingProvider, CrashingContextualProvider))
    assert failed.status == "failed" and "embedding failed" in (failed.error or "")
    with psycopg.connect(url) as conn:
        kept = conn.execute("SELECT count(*) FROM woods.fleet_resume WHERE repo = 'rails_app'").fetchone()[0]
        assert kept == 64 and conn.execute("SELECT count(*) FROM woods.repos").fetchone()[0] == 0
    done = index_repository_job(spec, FleetOptions(url, FakeEmbeddingProvider, FakeContextualProvider))
    assert done.status == "published" and done.resumed_vectors == 64 and done.embedded == done.chunks - 64
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM woods.fleet_resume").fetchone()[0] == 0
    with Index(url, repo="rails_app") as index:
        assert index.status().to_dict()["embedder"]["name"] == FakeContextualProvider().name
