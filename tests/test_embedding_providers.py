"""Providers: the Ruby Fake provider exactly, replay by text hash, and the packaged MiniLM via
sentence-transformers (exact token counts, refusal instead of truncation, bf16 ≡ fp32)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from woods.embedding.fake import FakeEmbeddingProvider
from woods.embedding.provider import EmbeddingProvider, InputTooLongError, file_fingerprint, l2_normalize_rows
from woods.embedding.replay import ReplayEmbeddingProvider, ReplayMissError
from woods.embedding.sentence import SentenceTransformerProvider, cpu_has_native_bf16

BENCH_VECTORS = Path("/work/shared/parity/woods-ruby-bench/vectors.json")


# --- Fake ---------------------------------------------------------------------------------------


def ruby_fake_vector(text: str, dims: int = 128) -> list[float]:
    """The Ruby Fake provider's algorithm written out independently, in plain Python floats."""
    counts = [0.0] * dims
    for token in re.findall(r"[a-z_][a-z0-9_]*", text.lower()):
        counts[int(hashlib.sha256(token.encode()).hexdigest(), 16) % dims] += 1.0
    norm = math.sqrt(sum(c * c for c in counts))
    return [c / norm for c in counts] if norm else counts


def test_fake_provider_identity_and_defaults():
    fake = FakeEmbeddingProvider()
    assert isinstance(fake, EmbeddingProvider)
    assert (fake.name, fake.dimension, fake.max_input_tokens) == ("fake-embedding-test", 128, None)


@pytest.mark.parametrize("text", ["User has_many :posts", "find idempotency_key", "Foo foo FOO bar_1 9x",
                                  "été über_cool", "", "   ", "!!! ???"])
def test_fake_vectors_match_the_ruby_algorithm(text):
    vector = FakeEmbeddingProvider().embed(text)
    assert vector.dtype == np.float32 and vector.shape == (128,)
    np.testing.assert_allclose(vector, ruby_fake_vector(text), atol=1e-7)


def test_fake_counts_occurrences_case_insensitively():
    fake = FakeEmbeddingProvider()
    raw = fake.raw_vector("Foo foo FOO bar")
    assert raw.sum() == 4.0 and raw.max() == 3.0
    assert not FakeEmbeddingProvider().embed("日本語 123").any()  # no ASCII word → zero vector


def test_fake_token_limit_and_counting():
    fake = FakeEmbeddingProvider(dimensions=16, max_input_tokens=3)
    assert fake.count_tokens("a  b\nc\td") == 4
    assert fake.embed_batch(["a b c"]).shape == (1, 16)
    with pytest.raises(InputTooLongError):
        fake.embed_batch(["a b", "a b c d"])


def test_fake_batch_is_in_input_order():
    fake = FakeEmbeddingProvider()
    texts = ["alpha", "beta gamma", "alpha"]
    batch = fake.embed_batch(texts)
    for row, text in zip(batch, texts, strict=True):
        np.testing.assert_array_equal(row, fake.embed(text))
    assert fake.embed_batch([]).shape == (0, 128)


# --- shared helpers -----------------------------------------------------------------------------


def test_l2_normalize_keeps_zero_rows_zero():
    out = l2_normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    assert out.dtype == np.float32


def test_file_fingerprint_is_sha256_and_sees_changes(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(b"one")
    assert file_fingerprint(path) == hashlib.sha256(b"one").hexdigest()
    path.write_bytes(b"two!")
    assert file_fingerprint(path) == hashlib.sha256(b"two!").hexdigest()


# --- Replay -------------------------------------------------------------------------------------


def write_vectors(path: Path, texts: dict[str, list[float]]) -> Path:
    vectors = {hashlib.sha256(text.encode()).hexdigest(): values for text, values in texts.items()}
    path.write_text(json.dumps({"dimensions": 2, "vectors": vectors}), encoding="utf-8")
    return path


def test_replay_looks_vectors_up_by_text_hash(tmp_path):
    replay = ReplayEmbeddingProvider(write_vectors(tmp_path / "v.json", {"a": [0.6, 0.8], "b": [1.0, 0.0]}))
    assert isinstance(replay, EmbeddingProvider)
    assert (replay.dimension, replay.max_input_tokens, replay.name) == (2, None, "replay")
    np.testing.assert_allclose(replay.embed_batch(["b", "a"]), [[1.0, 0.0], [0.6, 0.8]])
    assert replay.embed("a").dtype == np.float32
    assert "a" in replay and "c" not in replay


def test_replay_miss_names_the_text(tmp_path):
    replay = ReplayEmbeddingProvider(write_vectors(tmp_path / "v.json", {"a": [0.6, 0.8]}))
    text = "class Missing\n" + "x" * 100
    with pytest.raises(ReplayMissError) as caught:
        replay.embed_batch(["a", text])
    assert repr(text[:60]) in str(caught.value)
    assert caught.value.sha256 == hashlib.sha256(text.encode()).hexdigest()


def test_replay_rejects_wrong_dimensions(tmp_path):
    path = tmp_path / "v.json"
    path.write_text(json.dumps({"dimensions": 3, "vectors": {"ab": [1.0, 0.0]}}), encoding="utf-8")
    with pytest.raises(ValueError):
        ReplayEmbeddingProvider(path)


@pytest.mark.skipif(not BENCH_VECTORS.exists(), reason="parity bench not present")
def test_replay_serves_the_parity_capture_exactly():
    replay = ReplayEmbeddingProvider(BENCH_VECTORS)
    raw = json.loads(BENCH_VECTORS.read_text(encoding="utf-8"))
    assert len(replay) == 90 and replay.dimension == 384
    assert replay.name == "sentence-transformers/all-MiniLM-L6-v2"
    key = hashlib.sha256(b"find idempotency_key").hexdigest()
    assert replay.embed_exact("find idempotency_key").tolist() == raw["vectors"][key]


# --- SentenceTransformerProvider ----------------------------------------------------------------


def test_cpu_bf16_detection_reads_the_flags(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse avx512f amx_bf16 avx2\n", encoding="utf-8")
    assert cpu_has_native_bf16(cpuinfo)
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse avx512f avx2\n", encoding="utf-8")
    assert not cpu_has_native_bf16(cpuinfo)
    assert not cpu_has_native_bf16(tmp_path / "missing")


def test_provider_is_cheap_until_it_embeds():
    provider = SentenceTransformerProvider(precision="fp32")
    assert isinstance(provider, EmbeddingProvider)
    assert provider.name == provider.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert (provider.dimension, provider.max_input_tokens) == (384, 256)
    assert provider.precision == "fp32"
    assert SentenceTransformerProvider().precision == ("bf16" if cpu_has_native_bf16() else "fp32")
    too_long = " ".join(["token"] * 255)  # 255 word pieces + [CLS] + [SEP]
    assert provider.count_tokens(too_long) == 257
    with pytest.raises(InputTooLongError):
        provider.embed(too_long)
    assert provider._model is None  # refused before loading the model
    with pytest.raises(ValueError):
        SentenceTransformerProvider(precision="fp16")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def fp32() -> SentenceTransformerProvider:
    return SentenceTransformerProvider(precision="fp32", batch_size=8)


def code_texts() -> list[str]:
    """~50 real code texts: stdlib functions, each under the model's limit."""
    import ast
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    texts = []
    for name in ("textwrap.py", "shlex.py", "fnmatch.py", "heapq.py", "json/encoder.py", "calendar.py"):
        source = (stdlib / name).read_text(encoding="utf-8")
        lines = source.splitlines(keepends=True)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and node.end_lineno:
                texts.append("".join(lines[node.lineno - 1 : node.end_lineno]))
    return texts


@pytest.mark.model
def test_token_counts_are_what_the_model_sees(fp32):
    model = fp32._load()
    preprocess = getattr(model, "preprocess", None) or model.tokenize
    for text in ["x", "", "def é(): return '日本語 🎉'", "  lots   of\n\n whitespace\t"] + code_texts()[:10]:
        if fp32.count_tokens(text) <= 256:
            assert fp32.count_tokens(text) == int(preprocess([text])["attention_mask"].sum())


@pytest.mark.model
def test_batch_restores_input_order_and_normalises(fp32):
    texts = ["short", "def f(x):\n    return x\n" * 6, "", "class A:\n    pass\n", "short"]
    batch = fp32.embed_batch(texts)
    assert batch.dtype == np.float32 and batch.shape == (5, 384)
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    singles = np.stack([fp32.embed(text) for text in texts])
    assert np.min(np.sum(batch * singles, axis=1)) > 0.9999
    np.testing.assert_allclose(batch[0], batch[4], atol=1e-6)
    assert fp32.embed_batch([]).shape == (0, 384)


@pytest.mark.model
def test_bf16_vectors_stay_within_0999_cosine_of_fp32(fp32):
    texts = [t for t in code_texts() if fp32.count_tokens(t) <= 128][:50]
    assert len(texts) >= 45
    bf16 = SentenceTransformerProvider(precision="bf16", batch_size=8)
    bf16._model = fp32._load()  # same weights; only the autocast differs
    cosines = np.sum(fp32.embed_batch(texts) * bf16.embed_batch(texts), axis=1)
    assert cosines.min() >= 0.999, cosines.min()


@pytest.mark.model
def test_fingerprint_is_the_weights_sha256(fp32):
    expected = hashlib.sha256((fp32.model_dir / "model.safetensors").read_bytes()).hexdigest()
    assert fp32.weights_fingerprint == expected


@pytest.mark.model
def test_small_jobs_use_the_numpy_twin_until_torch_is_loaded():
    """Re-indexing after a one-file edit must not pay ~8 s to import torch for two texts."""
    from woods.embedding.encoder import NumpyMiniLMEncoder
    from woods.embedding.sentence import SentenceTransformerProvider

    provider = SentenceTransformerProvider()
    twin = provider.small_job_embedder()
    assert isinstance(twin, NumpyMiniLMEncoder) and twin.dimension == provider.dimension
    assert twin.max_input_tokens == provider.max_input_tokens
    text = "def charge(invoice):\n    return invoice.total"
    a, b = twin.embed(text), provider.embed(text)
    assert float(a @ b) >= 0.999
    assert provider.small_job_embedder() is provider  # torch already loaded: keep using it
