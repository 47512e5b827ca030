"""woods's static embedding model: the run-time encoder, the shipped weights, the training corpus's
exclusions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from woods.embedding.provider import EmbeddingProvider, embedder_description
from woods.embedding.select import index_provider, query_embedder
from woods.embedding.static import (
    CHUNK_TOKENS,
    STATIC_MODEL_ID,
    StaticEmbeddingProvider,
    default_model_dir,
    split_identifiers,
)
from woods.errors import CorruptIndexError

REPO = Path(__file__).resolve().parent.parent
TRAINING = REPO / "training" / "static_model"


@pytest.fixture(scope="module")
def provider() -> StaticEmbeddingProvider:
    return StaticEmbeddingProvider()


def _normalised(repo: str) -> str:
    return repo.strip().lower().removesuffix(".git")


def _excluded() -> list[str]:
    lines = (TRAINING / "excluded_repos.tsv").read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in lines if line and not line.startswith("#")]
    assert rows[0] == ["repo", "source"]
    return [_normalised(repo) for repo, _source in rows[1:]]


def test_exclusion_list_holds_every_source() -> None:
    excluded = _excluded()
    sources = [line.split("\t")[1] for line in (TRAINING / "excluded_repos.tsv").read_text().splitlines()[5:]]
    assert sources.count("semble-benchmark") == 63
    assert sources.count("woods-eval") >= 50
    for repo in ("redmine/redmine", "python/cpython", "abseil/abseil-cpp", "httpie/cli", "ziglang/zig"):
        assert repo in excluded


def test_corpus_names_no_excluded_repository() -> None:
    excluded = _excluded()
    excluded_names = {repo.split("/")[1] for repo in excluded}
    corpus = json.loads((TRAINING / "corpus.json").read_text(encoding="utf-8"))["repositories"]
    assert len(corpus) >= 40
    for entry in corpus:
        repo = _normalised(entry["repo"])
        assert repo not in excluded, repo
        assert repo.split("/")[1] not in excluded_names, f"{repo} shares its name with an excluded repository"
        assert len(entry["commit"]) == 40 and entry["language"] and entry["licence"]


def test_split_identifiers() -> None:
    assert split_identifiers("parseHTTPResponse2 snake_case") == "parse HTTP Response 2 snake case"
    assert split_identifiers("how are retries handled") == "how are retries handled"


def test_provider_protocol_and_vectors(provider: StaticEmbeddingProvider) -> None:
    assert isinstance(provider, EmbeddingProvider)
    assert provider.name == STATIC_MODEL_ID and provider.max_input_tokens == CHUNK_TOKENS
    texts = ["def retry_with_backoff(attempts):\n    pass", "how are retries handled", "", "   "]
    vectors = provider.embed_batch(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (4, provider.dimension)
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert not vectors[2:].any()  # no token: the zero row
    # A vector depends on its text alone, not on the batch around it.
    assert np.allclose(provider.embed(texts[1]), vectors[1], atol=1e-6)
    assert provider.embed_batch([]).shape == (0, provider.dimension)


def test_counts_tokens_like_minilm(provider: StaticEmbeddingProvider) -> None:
    tokenizer = json.loads((default_model_dir() / "teacher_tokenizer.json").read_text())
    assert tokenizer["model"]["type"] == "WordPiece"
    # [CLS] hello world [SEP]
    assert provider.count_tokens("hello world") == 4


def test_no_input_limit(provider: StaticEmbeddingProvider) -> None:
    trace = "\n".join(f'  File "/srv/app/module_{i}.py", line {i}, in handler_{i}\n    raise ValueError(x)'
                      for i in range(120))
    assert len(trace) > 8000 and provider.count_tokens(trace) > CHUNK_TOKENS
    vector = provider.embed(trace)
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)


def test_code_lands_near_its_description(provider: StaticEmbeddingProvider) -> None:
    """The model means something: a question is closer to the code that answers it than to
    unrelated code (a property of trained vectors; random ones fail it)."""
    query = provider.embed("parse a json string into an object")
    parse = provider.embed("def parse_json(text):\n    return json.loads(text)")
    other = provider.embed("def draw_circle(canvas, radius):\n    canvas.arc(0, 0, radius)")
    assert float(query @ parse) > float(query @ other)


def test_selectable(provider: StaticEmbeddingProvider) -> None:
    assert isinstance(index_provider("static"), StaticEmbeddingProvider)
    description = embedder_description(provider)
    embedder = query_embedder(description)
    assert np.allclose(embedder.embed("find idempotency_key"), provider.embed("find idempotency_key"))
    # An index embedded by another build of the model is not queried with this one.
    with pytest.raises(CorruptIndexError, match="another build"):
        query_embedder({**description, "fingerprint": "0" * 64 + ":static-int8"})


def test_shipped_model_is_small_and_described() -> None:
    model_dir = default_model_dir()
    size = sum(p.stat().st_size for p in model_dir.iterdir())
    assert size <= 32 * 1024 * 1024
    config = json.loads((model_dir / "model.json").read_text())
    for key in ("teacher", "corpus_manifest_sha256", "script_version", "seed"):
        assert key in config["provenance"]


def test_never_imports_torch() -> None:
    code = ("import sys; from woods.embedding.static import StaticEmbeddingProvider as P; p = P(); "
            "p.embed_batch(['def f(): pass']); p.count_tokens('x'); "
            "bad = [m for m in ('torch', 'transformers', 'sentence_transformers', 'model2vec', 'onnxruntime') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("WOODS_STATIC_MODEL", None)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_recorded_weights_digest_is_the_weights_digest() -> None:
    """model.json's digest is what a cold query fingerprints the weights by; it must be theirs."""
    import hashlib

    model_dir = default_model_dir()
    config = json.loads((model_dir / "model.json").read_text())
    weights = (model_dir / "model.safetensors").read_bytes()
    assert config["weights_sha256"] == hashlib.sha256(weights).hexdigest()
    assert config["weights_bytes"] == len(weights)
    assert StaticEmbeddingProvider().weights_fingerprint == config["weights_sha256"]
