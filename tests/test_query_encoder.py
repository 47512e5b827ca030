"""The numpy query encoder: accurate erf/GELU, zero-copy weights, and vectors equal to the
sentence-transformers ones — without importing torch."""

from __future__ import annotations

import ast
import json
import math
import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from woods.embedding.encoder import (
    NumpyMiniLMEncoder,
    _SafetensorsMap,
    erf,
    gelu,
    minilm_model_dir,
)
from woods.embedding.provider import EmbeddingProvider, InputTooLongError
from woods.embedding.text import embedding_prefix, embedding_text

REPO = Path(__file__).resolve().parent.parent
STDLIB = Path(sysconfig.get_paths()["stdlib"])
STDLIB_FILES = ("textwrap.py", "shlex.py", "fnmatch.py", "heapq.py", "json/decoder.py", "difflib.py",
                "calendar.py", "string.py", "bisect.py", "dataclasses.py")


def real_code_texts(count_tokens: Callable[[str], int], limit: int = 256, wanted: int = 50) -> list[str]:
    """~50 varied embedding texts: stdlib functions (with a woods prefix on some), a text trimmed
    to just under the token limit, unicode, and very short ones."""
    functions: list[tuple[str, str]] = []
    for name in STDLIB_FILES:
        source = (STDLIB / name).read_text(encoding="utf-8")
        lines = source.splitlines(keepends=True)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
                functions.append((f"{name}:{node.name}", "".join(lines[node.lineno - 1 : node.end_lineno])))
    fitting = [(where, code) for where, code in functions if count_tokens(code) <= limit * 3 // 8]
    step = max(1, len(fitting) // (wanted - 8))
    texts = []
    for index, (where, code) in enumerate(fitting[::step][: wanted - 8]):
        if index % 2:
            code = embedding_text(embedding_prefix("function", where, None, f"lib/{where}", ["os", "re"]), code)
        texts.append(code)
    longest = max(functions, key=lambda item: len(item[1]))[1].splitlines(keepends=True)
    while count_tokens("".join(longest)) > limit:
        longest.pop()
    texts.append("".join(longest))
    texts += ["x", "", "find idempotency_key", "def é(): return '日本語 🎉'\n",
              "# Ünïcödé cömmënt — “quotes” ±∞\nclass Ωmega:\n    pass\n", "\t\n  \n", "a" * 300,
              "SELECT * FROM users WHERE id = $1;"]
    return texts


def test_erf_is_accurate_to_1e7_everywhere():
    z = np.linspace(-8.0, 8.0, 160_001)
    reference = np.array([math.erf(v) for v in z])
    assert np.max(np.abs(erf(z) - reference)) < 1e-7
    assert erf(np.array([0.0]))[0] == 0.0
    np.testing.assert_array_equal(erf(-z), -erf(z))


def test_gelu_is_the_exact_erf_form():
    x = np.linspace(-12, 12, 4001, dtype=np.float32).reshape(1, -1)
    expected = np.array([v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.ravel().astype(np.float64)])
    out = gelu(x)
    assert out.dtype == np.float32 and out.shape == x.shape
    assert np.max(np.abs(out.ravel() - expected)) < 2e-6  # float32 rounding of values up to 12


def test_memory_mapped_weights_equal_safetensors_numpy():
    from safetensors.numpy import load_file

    path = minilm_model_dir() / "model.safetensors"
    mapped = _SafetensorsMap(path)
    loaded = load_file(str(path))
    assert mapped.keys() == sorted(loaded)
    for name, array in loaded.items():
        view = mapped.get(name)
        assert view.dtype == array.dtype and view.shape == array.shape, name
        np.testing.assert_array_equal(view, array)


@pytest.fixture(scope="module")
def encoder() -> NumpyMiniLMEncoder:
    return NumpyMiniLMEncoder()


def test_encoder_is_a_provider_with_the_model_limits(encoder):
    assert isinstance(encoder, EmbeddingProvider)
    assert encoder.name == encoder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert encoder.dimension == 384
    assert encoder.max_input_tokens == 256
    assert encoder.count_tokens("") == 2  # [CLS] and [SEP]
    assert encoder.count_tokens("hello world") == 4


def test_encoder_refuses_instead_of_truncating(encoder):
    at_limit = " ".join(["word"] * 254)
    assert encoder.count_tokens(at_limit) == 256
    assert encoder.embed(at_limit).shape == (384,)
    with pytest.raises(InputTooLongError) as caught:
        encoder.embed_batch(["short", at_limit + " word"])
    assert caught.value.tokens == 257 and caught.value.limit == 256


def test_batches_with_padding_match_single_texts(encoder):
    texts = ["def f(x):\n    return x * 2\n" * 8, "x", "", "class A:\n    pass\n", "find the user mailer"]
    batched = encoder.embed_batch(texts)
    assert batched.dtype == np.float32 and batched.shape == (5, 384)
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    singles = np.stack([encoder.embed(text) for text in texts])
    assert np.min(np.sum(batched * singles, axis=1)) > 0.99999
    assert encoder.embed_batch([]).shape == (0, 384)


def test_chunks_of_a_long_unit_are_all_accepted(encoder):
    from woods.chunking import chunk_unit
    from woods.units import Unit

    source = (STDLIB / "textwrap.py").read_text(encoding="utf-8")[:12000]
    unit = Unit(identifier="textwrap", type="module", language="python", file_path="textwrap.py",
                line_start=1, line_end=1 + source.count("\n"), source_code=source)
    chunks = chunk_unit(unit, encoder.count_tokens, encoder.max_input_tokens)
    assert len(chunks) > 5
    assert all(encoder.count_tokens(chunk.text) <= 256 for chunk in chunks)
    assert encoder.embed_batch([chunk.text for chunk in chunks[:6]]).shape == (6, 384)


def test_fingerprint_is_the_weights_sha256(encoder):
    import hashlib

    expected = hashlib.sha256((minilm_model_dir() / "model.safetensors").read_bytes()).hexdigest()
    assert encoder.weights_fingerprint == expected


@pytest.fixture(scope="module")
def sentence_fp32():
    from woods.embedding.sentence import SentenceTransformerProvider

    return SentenceTransformerProvider(precision="fp32")


@pytest.mark.model
def test_numpy_vectors_equal_sentence_transformers_vectors(encoder, sentence_fp32):
    texts = real_code_texts(encoder.count_tokens)
    assert len(texts) >= 50
    assert max(encoder.count_tokens(text) for text in texts) >= 240  # near the limit is covered
    ours = encoder.embed_batch(texts)
    theirs = sentence_fp32.embed_batch(texts)
    cosines = np.sum(ours * theirs, axis=1)
    assert cosines.min() >= 0.999, cosines.min()
    assert np.median(cosines) > 0.99999


def test_cold_start_needs_no_torch():
    code = (
        "import time, sys, json\n"
        "t0 = time.perf_counter()\n"
        "from woods.embedding.encoder import NumpyMiniLMEncoder\n"
        "vector = NumpyMiniLMEncoder().embed('find idempotency_key')\n"
        "elapsed = time.perf_counter() - t0\n"
        "print(json.dumps({'seconds': elapsed, 'dim': len(vector), 'heavy': sorted(m for m in sys.modules\n"
        "      if m.split('.')[0] in ('torch', 'sentence_transformers', 'transformers'))}))\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=120, check=True)
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["heavy"] == []
    assert report["dim"] == 384
    # ~0.2-0.3 s on an idle 2-core machine; generous bound for a loaded CI box.
    assert report["seconds"] < 3.0, report
