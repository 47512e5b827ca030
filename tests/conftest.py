"""Shared test fixtures: fixture repositories, CLI runners, and indexes built once per session.

The real-model index (packaged MiniLM, real SQLite/FAISS/graph stores) is built once per session
and shared read-only; tests that need to write build their own small index with the Fake provider.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        return json.loads(self.stdout)


def run_cli(*args: str, cwd: Path | None = None, input_text: str | None = None, timeout: float = 600) -> CliResult:
    """Run `python -m woods ARGS` in a subprocess (the real entry point, real exit codes)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO), COLUMNS="200")
    proc = subprocess.run(
        [sys.executable, "-m", "woods", *args],
        cwd=cwd or REPO,
        env=env,
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(scope="session")
def cli() -> Callable[..., CliResult]:
    return run_cli


def copy_fixture(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(FIXTURES / name, target, ignore=shutil.ignore_patterns(".woods"))
    return target


@pytest.fixture(scope="session")
def model_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of every fixture project in one tree, indexed once with the real model."""
    root = tmp_path_factory.mktemp("model") / "repo"
    root.mkdir()
    for child in sorted(FIXTURES.iterdir()):
        if child.is_dir():
            copy_fixture(child.name, root)
    result = run_cli("index", str(root), "--json")
    assert result.code == 0, result.stderr
    return root
