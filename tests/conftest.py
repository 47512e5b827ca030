"""Shared test fixtures: fixture repositories, CLI runners, and indexes built once per session.

The real-model index (packaged MiniLM, real SQLite/FAISS/graph stores) is built once per session
and shared read-only; tests that need to write build their own small index with the Fake provider.
Plain helpers live in tests/helpers.py (re-exported here for older imports).
"""

from __future__ import annotations

import os
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


@pytest.fixture(scope="session")
def model_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of every fixture project in one tree, indexed once with the real model."""
    root = tmp_path_factory.mktemp("model") / "repo"
    root.mkdir()
    for child in sorted(FIXTURES.iterdir()):
        if child.is_dir():
            copy_fixture(child.name, root)
    run_cli("index", str(root), "--json", expect=0)
    return root
