"""Only entry points configure the process: the library loads the model offline without touching
the host's environment or log levels, and the test-embedder switch is read by entry points only."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import REPO
from woods.embedding.fake import FakeEmbeddingProvider
from woods.entrypoint import (
    EMBEDDER_ENV,
    OFFLINE_ENVIRONMENT,
    QUIET_ENVIRONMENT,
    configure_process,
    provider_factory_from_environment,
)
from woods.errors import InputError


def test_configure_process_forces_offline_and_defaults_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*OFFLINE_ENVIRONMENT, *QUIET_ENVIRONMENT):
        monkeypatch.delenv(name, raising=False)  # restored after the test
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_VERBOSITY", "info")
    configure_process()
    assert {name: os.environ[name] for name in OFFLINE_ENVIRONMENT} == OFFLINE_ENVIRONMENT
    assert os.environ["TRANSFORMERS_VERBOSITY"] == "info"  # a user's choice stays
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"


def test_the_test_embedder_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EMBEDDER_ENV, "fake")
    assert isinstance(provider_factory_from_environment()(), FakeEmbeddingProvider)
    monkeypatch.setenv(EMBEDDER_ENV, "psychic")
    with pytest.raises(InputError, match=EMBEDDER_ENV):
        provider_factory_from_environment()
    monkeypatch.delenv(EMBEDDER_ENV)
    assert provider_factory_from_environment() is None  # the default: woods's static model


def test_the_test_contextual_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    from woods.embedding.fake import FakeContextualProvider
    from woods.entrypoint import CONTEXTUAL_ENV, contextual_factory_from_environment

    monkeypatch.setenv(CONTEXTUAL_ENV, "fake")
    factory = contextual_factory_from_environment(None)
    assert factory is not None and isinstance(factory(), FakeContextualProvider)
    assert contextual_factory_from_environment(False) is None  # --no-contextual wins
    monkeypatch.setenv(CONTEXTUAL_ENV, "minilm")
    with pytest.raises(InputError, match=CONTEXTUAL_ENV):
        contextual_factory_from_environment(None)


def test_no_library_module_reads_the_switch_or_sets_offline_mode() -> None:
    for path in sorted((REPO / "woods").rglob("*.py")):
        if path.name == "entrypoint.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert EMBEDDER_ENV not in text, path
        assert 'environ["HF_HUB_OFFLINE"]' not in text and "set_verbosity" not in text, path


@pytest.mark.model
def test_loading_the_model_needs_no_network_and_leaves_the_host_process_alone() -> None:
    code = """
import os, socket, sys
for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY"):
    os.environ.pop(name, None)

def no_network(*args, **kwargs):
    raise AssertionError(f"network access: {args}")

socket.socket.connect = no_network
socket.create_connection = no_network
import sentence_transformers, torch, transformers  # they set variables of their own on import
from woods.embedding.sentence import SentenceTransformerProvider

environment, verbosity = dict(os.environ), transformers.logging.get_verbosity()
vector = SentenceTransformerProvider(precision="fp32").embed_batch(["find the invoice total"])[0]
assert vector.shape == (384,), vector.shape
assert dict(os.environ) == environment, set(os.environ.items()) ^ set(environment.items())
assert transformers.logging.get_verbosity() == verbosity
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300,
                          env={**env, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "ok"
