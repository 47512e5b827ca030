"""Helpers the interface tests share: run the real `woods` entry point, copy a fixture project,
build a small indexed repository. Test modules import from here, never from each other.

Every `CliResult` remembers whether its exit code was read; conftest fails a test that ran the CLI
and never looked at an exit code (a command that crashed must not pass because its stdout parsed).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from woods.embedding.fake import FakeContextualProvider, FakeEmbeddingProvider

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
# The test-only switch the CLI entry point reads: index with the deterministic Fake embedder.
FAKE_EMBEDDER = {"WOODS_EMBEDDER": "fake"}
# Phase 1 with the Fake embedder and phase 2 with the Fake contextual one (the CLI's test switches).
FAKE_TWO_PHASE = {**FAKE_EMBEDDER, "WOODS_CONTEXTUAL": "fake"}

_RESULTS: list[CliResult] = []


class CliResult:
    """What one `python -m woods …` run produced. Reading `code` marks the result as checked."""

    def __init__(self, args: tuple[str, ...], code: int, stdout: str, stderr: str) -> None:
        self.args = args
        self._code = code
        self.stdout = stdout
        self.stderr = stderr
        self.checked = False

    @property
    def code(self) -> int:
        self.checked = True
        return self._code

    def json(self) -> Any:
        return json.loads(self.stdout)

    def __repr__(self) -> str:
        return f"CliResult(woods {' '.join(self.args)!s:.120} → {self._code}; stderr {self.stderr[-300:]!r})"


def run_cli(
    *args: str,
    cwd: Path | None = None,
    input_text: str | None = None,
    timeout: float = 600,
    env: Mapping[str, str] | None = None,
    expect: int | None = None,
) -> CliResult:
    """Run `python -m woods ARGS` in a subprocess (the real entry point, real exit codes).

    `env` adds variables (e.g. FAKE_EMBEDDER); `expect` asserts the exit code."""
    merged = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO), COLUMNS="200", **(env or {}))
    proc = subprocess.run(
        [sys.executable, "-m", "woods", *args],
        cwd=cwd or REPO,
        env=merged,
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    result = CliResult(tuple(args), proc.returncode, proc.stdout, proc.stderr)
    _RESULTS.append(result)
    if expect is not None:
        assert result.code == expect, result
    return result


def index_with_fake(root: Path, *args: str, expect: int | None = 0) -> CliResult:
    """`woods index ROOT ARGS` with the Fake embedder (fast, deterministic)."""
    return run_cli("index", str(root), *args, env=FAKE_EMBEDDER, expect=expect)


def reset_cli_results() -> None:
    _RESULTS.clear()


def unchecked_cli_results() -> list[CliResult]:
    """CLI runs since the last reset whose exit code nobody read."""
    return [r for r in _RESULTS if not r.checked]


def copy_fixture(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(FIXTURES / name, target, ignore=shutil.ignore_patterns(".woods"))
    return target


# Two `charge` methods in two classes, a call chain Subscription → Invoice → Payment, one
# identifier (`Shared`) under two unit types, and a Python module.
SAMPLE_REPO = {
    "app/models/billing/invoice.rb": (
        "module Billing\n"
        "  # An invoice a customer pays.\n"
        "  class Invoice\n"
        "    def charge(amount)\n"
        "      Payment.new(amount).capture\n"
        "    end\n"
        "\n"
        "    def total\n"
        "      42\n"
        "    end\n"
        "  end\n"
        "end\n"
    ),
    "app/models/subscription.rb": (
        "# A recurring plan.\nclass Subscription\n  def charge\n    Billing::Invoice.new.charge(10)\n  end\nend\n"
    ),
    "app/models/payment.rb": (
        "class Payment\n  def initialize(amount)\n    @amount = amount\n  end\n\n  def capture\n    true\n  end\nend\n"
    ),
    "app/models/shared.rb": "class Shared\n  def run\n    2\n  end\nend\n",
    "lib/shared.rb": "module Shared\n  def self.helper\n    1\n  end\nend\n",
    "lib/report.py": '"""Monthly report."""\n\n\ndef render_report(rows):\n    """Render rows as text."""\n    return "\\n".join(rows)\n',
}


def write_files(root: Path, files: Mapping[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def build_repo(root: Path, files: Mapping[str, str] = SAMPLE_REPO) -> Path:
    """Write `files` under `root` and index them with the Fake embedder into root/.woods."""
    from woods.api import build_index
    from woods.embedding.fake import FakeEmbeddingProvider

    write_files(root, files)
    build_index(root, provider_factory=FakeEmbeddingProvider, workers=1)
    return root


class Location:
    """Where an interface test reads its index: a repository's `.woods` directory (backend
    "local") or one repository of a PostgreSQL store (backend "postgres"). `args` are the CLI
    flags that select it, `store` what `woods.Index` / the MCP server take, `repo` the collection."""

    def __init__(self, backend: str, root: Path, store: str | Path, repo: str | None = None) -> None:
        self.backend = backend
        self.root = root
        self.store = store
        self.repo = repo

    @property
    def args(self) -> list[str]:
        if self.backend == "local":
            return ["--path", str(self.root)]
        return ["--store", str(self.store), *(["--repo", self.repo] if self.repo else [])]

    def __fspath__(self) -> str:  # the repository root, so `root / "x"`-style helpers keep working
        return str(self.root)

    def __truediv__(self, other: str) -> Path:
        return self.root / other

    def __str__(self) -> str:
        return str(self.root)


class CountingFake(FakeEmbeddingProvider):
    """The Fake provider, recording every text it is asked to embed (named as the test double it is)."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed_batch(self, texts):
        self.embedded.extend(texts)
        return super().embed_batch(texts)


class CountingContextual(FakeContextualProvider):
    """The Fake contextual provider (phase 2's stand-in), recording every text it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed_batch(self, texts):
        self.embedded.extend(texts)
        return super().embed_batch(texts)
