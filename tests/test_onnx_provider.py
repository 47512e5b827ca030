"""The index-time ONNX Runtime encoder: exported once into a cache outside the repository, keyed by
the weights and settings; vectors agree with the numpy query encoder to cosine ≥ 0.99 on real
code texts; a missing onnxruntime or a failed export falls back with one warning; the manifest's
fingerprint names the encoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.test_query_encoder import real_code_texts
from woods.embedding import onnx as onnx_module
from woods.embedding.encoder import NumpyMiniLMEncoder
from woods.embedding.onnx import OnnxMiniLMProvider, OnnxQueryEncoder
from woods.embedding.provider import InputTooLongError
from woods.embedding.select import query_embedder
from woods.indexing.vector_cache import embedder_description

# Slow (the quick loop leaves it out): exports and runs the ONNX MiniLM.
pytestmark = pytest.mark.slow

pytest.importorskip("onnxruntime")

# The query encoder must find the index's vectors: same text, cosine at least this.
MIN_QUERY_COSINE = 0.99


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def numpy_encoder() -> NumpyMiniLMEncoder:
    return NumpyMiniLMEncoder()


@pytest.mark.parametrize("precision", ["int8", "fp32"])
def test_onnx_vectors_agree_with_the_query_encoder_on_real_code(precision, cache_dir, numpy_encoder):
    provider = OnnxMiniLMProvider(precision=precision, cache_dir=cache_dir, num_threads=1)
    texts = real_code_texts(provider.count_tokens)
    vectors = provider.embed_batch(texts)
    assert provider.warnings == []
    assert provider.model_path().is_file() and provider.model_path().parent == cache_dir
    assert provider.model_path("fp32").is_file()  # short texts run in fp32 (SHORT_TEXT_TOKENS)
    reference = numpy_encoder.embed_batch(texts)
    assert vectors.shape == reference.shape and vectors.dtype == np.float32
    nonzero = np.linalg.norm(reference, axis=1) > 0
    cosines = (vectors[nonzero] * reference[nonzero]).sum(axis=1)
    assert cosines.min() >= MIN_QUERY_COSINE, (precision, float(cosines.min()))
    assert np.allclose(np.linalg.norm(vectors[nonzero], axis=1), 1.0, atol=1e-4)
    # Input order is kept whatever the length-sorted batching did.
    single = provider.embed_batch([texts[3]])[0]
    assert float(single @ vectors[3]) > 0.9999


def test_onnx_refuses_over_long_texts_and_counts_model_tokens(cache_dir):
    provider = OnnxMiniLMProvider(cache_dir=cache_dir, num_threads=1)
    assert provider.count_tokens("hello world") == 4  # [CLS] hello world [SEP]
    with pytest.raises(InputTooLongError):
        provider.embed_batch(["word " * 400])


def test_fingerprint_names_the_onnx_encoder(cache_dir):
    int8 = embedder_description(OnnxMiniLMProvider(precision="int8", cache_dir=cache_dir))
    fp32 = embedder_description(OnnxMiniLMProvider(precision="fp32", cache_dir=cache_dir))
    assert int8["fingerprint"].endswith(f":onnx-int8.{onnx_module.EXPORT_VERSION}") and fp32["fingerprint"].endswith(":onnx-fp32")
    assert int8["fingerprint"] != fp32["fingerprint"] and int8["name"] == fp32["name"]
    # … and differs from sentence-transformers' (vectors of different encoders never mix).
    from woods.embedding.sentence import SentenceTransformerProvider

    assert embedder_description(SentenceTransformerProvider())["fingerprint"] not in (int8["fingerprint"], fp32["fingerprint"])


def test_the_cache_is_keyed_by_weights_and_settings(cache_dir):
    int8 = OnnxMiniLMProvider(precision="int8", cache_dir=cache_dir)
    fp32 = OnnxMiniLMProvider(precision="fp32", cache_dir=cache_dir)
    assert int8.model_path() != fp32.model_path()
    assert int8.model_path() == OnnxMiniLMProvider(precision="int8", cache_dir=cache_dir).model_path()


def test_missing_onnxruntime_falls_back_with_one_warning(monkeypatch, tmp_path):
    monkeypatch.setattr(onnx_module, "onnxruntime_available", lambda: False)
    provider = OnnxMiniLMProvider(cache_dir=tmp_path)
    assert len(provider.warnings) == 1 and "onnxruntime is not installed" in provider.warnings[0]
    assert provider.precision in ("fp32", "bf16")  # the fallback's precision: its own fingerprint
    provider.prepare()
    assert len(provider.warnings) == 1


def test_a_failed_export_falls_back_with_one_warning(monkeypatch, tmp_path):
    def broken(*_args: object) -> None:
        raise RuntimeError("exporter exploded")

    monkeypatch.setattr(onnx_module, "export_model", broken)
    provider = OnnxMiniLMProvider(cache_dir=tmp_path / "empty")
    assert provider.precision == f"onnx-int8.{onnx_module.EXPORT_VERSION}"
    provider.prepare()
    assert len(provider.warnings) == 1 and "exporter exploded" in provider.warnings[0]
    assert provider.precision in ("fp32", "bf16")
    assert not list((tmp_path / "empty").glob("*.onnx"))


def test_the_query_encoder_opens_the_fp32_export_the_index_encoder_left(cache_dir, numpy_encoder):
    provider = OnnxMiniLMProvider(precision="int8", cache_dir=cache_dir, num_threads=1)
    provider.prepare()
    fingerprint = embedder_description(provider)["fingerprint"]
    encoder = OnnxQueryEncoder.for_index(fingerprint, cache_dir=cache_dir)
    assert encoder is not None and encoder.path == provider.model_path("fp32")
    texts = real_code_texts(encoder.count_tokens)
    vectors = encoder.embed_batch(texts)
    reference = numpy_encoder.embed_batch(texts)
    nonzero = np.linalg.norm(reference, axis=1) > 0
    # The same fp32 arithmetic: the two query encoders are interchangeable.
    assert (vectors[nonzero] * reference[nonzero]).sum(axis=1).min() >= 0.9999
    assert float(encoder.embed(texts[2]) @ vectors[2]) > 0.99999
    with pytest.raises(InputTooLongError):
        encoder.embed("word " * 400)
    # Never an export at query time: no cached file (or no weights hash) → None.
    assert OnnxQueryEncoder.for_index(fingerprint, cache_dir=cache_dir / "nothing-here") is None
    assert OnnxQueryEncoder.for_index("synthetic:bf16", cache_dir=cache_dir) is None


def test_query_embedder_picks_onnx_for_long_lived_handles_and_numpy_for_one_shot(cache_dir, monkeypatch, tmp_path):
    provider = OnnxMiniLMProvider(precision="int8", cache_dir=cache_dir, num_threads=1)
    provider.prepare()
    description = embedder_description(provider)
    (tmp_path / "woods").mkdir()
    (tmp_path / "woods" / "onnx").symlink_to(cache_dir)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert isinstance(query_embedder(description).inner, OnnxQueryEncoder)
    assert isinstance(query_embedder(description, one_shot=True).inner, NumpyMiniLMEncoder)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    assert isinstance(query_embedder(description).inner, NumpyMiniLMEncoder)
