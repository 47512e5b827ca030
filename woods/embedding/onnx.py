"""OnnxMiniLMProvider: the packaged all-MiniLM-L6-v2 through ONNX Runtime — the index-time encoder.

Why: embedding is what indexing costs. The same model exported once to ONNX (mean pooling and
L2 normalisation inside the graph) and run by ONNX Runtime with its graph optimisations needs
fewer CPU cycles per text than sentence-transformers on torch, and dynamic int8 quantisation of
the weight matrices roughly halves them again (measurements: bench/README.md, "Model path").

The export needs torch, transformers and onnx, and happens once per machine and model: the file
is cached outside the repository (`$XDG_CACHE_HOME/woods/onnx/`, else `~/.cache/woods/onnx/`),
named by the weights' SHA-256 and the export settings, and written atomically (a temporary file
renamed into place), so concurrent indexers never read half a model. Querying never needs this
module: the numpy encoder (woods/embedding/encoder.py) agrees with these vectors to cosine ≥ 0.99
on real code texts (tests/test_onnx_provider.py).

Guarantees: `count_tokens` is the exact word-piece count; a text over `max_input_tokens` raises
InputTooLongError (never truncated); `embed_batch` returns float32 unit rows in input order. The
fingerprint names the ONNX precision, so vectors of this encoder are never mixed with another's.
When onnxruntime or the export is unavailable, `prepare()` switches to sentence-transformers and
records one warning (`warnings`); the fingerprint then says so too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from woods.embedding.encoder import (
    MINILM_DIMENSION,
    MINILM_MODEL_ID,
    WordPieceEmbedder,
    load_wordpiece_tokenizer,
    minilm_model_dir,
    padded,
    read_max_seq_length,
    weights_fingerprint,
)
from woods.embedding.provider import embedding_threads, ensure_fits

OnnxPrecision = Literal["int8", "fp32"]

# Texts per ONNX Runtime call: one. Dynamic int8 quantisation scales the activations per call, so
# a text's vector would depend on the texts batched with it (cosine 0.997 between the same text
# alone and in a batch of 32) — one text per call makes every vector a function of its text only.
# It is also faster: no padding, and on 240 Redmine chunks (1 thread, load 4) one text per call
# ran 32.5 texts/CPU-s against 23.5 for batches of 32.
DEFAULT_BATCH_SIZE = 1
# Bump when the export (graph, opset, quantisation settings) changes: the cache key includes it.
# 2: only layer 0's FFN output projection stays fp32 (1: every layer's).
EXPORT_VERSION = 2
# ONNX opset of the export: supported by every onnxruntime since 1.12.
OPSET = 17
# The FFN output projections of these layers stay fp32 when quantising. Measured on 300 stdlib
# functions (1 thread, one text per call; cosine to the fp32 model): every weight matrix int8 ran
# 90 texts/CPU-s at cosine min 0.987; layer 0's projection kept fp32, 84 at min 0.992 (mean 0.996);
# every layer's kept (export 1), 61 at min 0.994 — the error comes from layer 0 alone, so keeping
# that one buys the accuracy and keeps 1.37x of the speed. The attention score products
# (activation × activation) are never quantised.
_KEEP_FP32_LAYERS = (0,)
_FFN_OUTPUT = "/output/dense/MatMul"
_CACHE_ENV = "XDG_CACHE_HOME"
# With int8 weights, texts shorter than this many word pieces run through the fp32 export. The
# quantisation error is relative: on near-empty texts (`x`, whitespace: 2-3 pieces) it moved the
# vector to cosine 0.981 of the fp32 one, on texts of 9+ pieces never below 0.9947 (tests require
# ≥ 0.99 to the query encoder). Real embedding texts start with a `[type] identifier` header and are
# longer; the few short ones cost next to nothing in fp32.
SHORT_TEXT_TOKENS = 32


def onnx_cache_dir() -> Path:
    """Where exported models are kept: `$XDG_CACHE_HOME/woods/onnx`, else `~/.cache/woods/onnx`."""
    base = os.environ.get(_CACHE_ENV, "").strip()
    root = Path(base) if base else Path.home() / ".cache"
    return root / "woods" / "onnx"


def onnxruntime_available() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None


def export_available() -> bool:
    """True when this environment can export the model (torch, transformers and onnx installed)."""
    return all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers", "onnx"))


def _ort_version() -> str:
    import onnxruntime

    return str(onnxruntime.__version__)


def export_path(cache_dir: Path, weights_sha256: str, precision: OnnxPrecision) -> Path:
    """Where the export of the weights with this SHA-256 is cached, for these export settings and
    this onnxruntime (it may not exist yet)."""
    described: dict[str, object] = {"export": EXPORT_VERSION, "opset": OPSET, "precision": precision,
                                    "onnxruntime": _ort_version() if onnxruntime_available() else None}
    if precision == "int8":
        described["keep_fp32_layers"] = list(_KEEP_FP32_LAYERS)
    settings = json.dumps(described, sort_keys=True)
    key = hashlib.sha256(f"{weights_sha256}\0{settings}".encode()).hexdigest()[:24]
    return cache_dir / f"all-MiniLM-L6-v2-{precision}-{key}.onnx"


def _session(path: Path) -> Any:
    """An ONNX Runtime session on one thread: parallelism, where wanted, comes from running texts
    side by side (`OnnxMiniLMProvider.embed_batch`)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: its optimiser notes are not the user's business
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _run(session: Any, ids: Sequence[Sequence[int]]) -> np.ndarray:
    """One forward pass over texts of equal length (`ids`: word-piece ids per text)."""
    input_ids, mask = padded(ids)
    (vectors,) = session.run(None, {"input_ids": input_ids, "attention_mask": mask})
    return np.asarray(vectors, dtype=np.float32)


class OnnxQueryEncoder(WordPieceEmbedder):
    """The fp32 ONNX export of the weights that built an index, as its query encoder.

    Why: a query vector costs ~5 ms here against ~12 ms in the numpy encoder (the same fp32
    arithmetic; ONNX Runtime's kernels and fused graph), which is most of a warm vector search.
    It is only ever opened, never exported: `for_index` finds the export the index's own encoder
    left in the cache (named by the weights' SHA-256 the manifest records) or returns None, and the
    numpy encoder answers instead (cosine ≥ 0.9999 between the two, tests/test_onnx_provider.py).

    Guarantees: one text per call on one thread; a text over `max_input_tokens` word pieces raises
    InputTooLongError; float32 unit rows in input order.
    """

    def __init__(self, path: Path, model_dir: Path | None = None) -> None:
        self.model_dir = model_dir if model_dir is not None else minilm_model_dir()
        self.path = path
        self.name = MINILM_MODEL_ID
        self.model_id = MINILM_MODEL_ID
        self.dimension = MINILM_DIMENSION
        self.max_input_tokens: int | None = read_max_seq_length(self.model_dir)
        self._tokenizer = load_wordpiece_tokenizer(self.model_dir)
        self._session = _session(path)

    @classmethod
    def for_index(cls, fingerprint: str, cache_dir: Path | None = None) -> OnnxQueryEncoder | None:
        """The encoder for an index whose embedder fingerprint is `fingerprint` (`<weights
        SHA-256>:<precision>`), or None when onnxruntime or the cached fp32 export is missing."""
        weights = fingerprint.split(":", 1)[0]
        if len(weights) != 64 or not onnxruntime_available():
            return None
        path = export_path(cache_dir if cache_dir is not None else onnx_cache_dir(), weights, "fp32")
        if not path.is_file():
            return None
        return cls(path)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, encoding in enumerate(self._tokenizer.encode_batch(list(texts)) if texts else []):
            ensure_fits(len(encoding.ids), self.max_input_tokens, texts[row])
            out[row] = _run(self._session, [encoding.ids])[0]
        return out


class OnnxMiniLMProvider(WordPieceEmbedder):
    """all-MiniLM-L6-v2 via ONNX Runtime on CPU (int8 weight matrices by default); see the module doc."""

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        precision: OnnxPrecision = "int8",
        batch_size: int = DEFAULT_BATCH_SIZE,
        num_threads: int | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        if precision not in ("int8", "fp32"):
            raise ValueError(f"precision must be int8 or fp32, not {precision!r}")
        self.model_dir = Path(model_dir) if model_dir is not None else minilm_model_dir()
        self.name = MINILM_MODEL_ID
        self.model_id = MINILM_MODEL_ID
        self.dimension = MINILM_DIMENSION
        self.max_input_tokens: int | None = read_max_seq_length(self.model_dir)
        self.batch_size = max(1, batch_size)
        self.onnx_precision: OnnxPrecision = precision
        self.num_threads = num_threads if num_threads is not None else embedding_threads()
        self.cache_dir = cache_dir if cache_dir is not None else onnx_cache_dir()
        self.warnings: list[str] = []
        self._tokenizer = load_wordpiece_tokenizer(self.model_dir)
        self._session: Any = None
        self._short_session: Any = None
        self._fallback: Any = None
        self._lock = threading.Lock()
        problem = self._unavailable()
        if problem is not None:
            self._use_fallback(problem)

    # -- identity ------------------------------------------------------------------------------
    @property
    def precision(self) -> str:
        """`onnx-int8.<export version>` / `onnx-fp32`, or the fallback's precision: part of the
        fingerprint, so vectors of another quantisation are never mixed with these."""
        if self._fallback is not None:
            return str(self._fallback.precision)
        return f"onnx-int8.{EXPORT_VERSION}" if self.onnx_precision == "int8" else "onnx-fp32"

    @property
    def weights_fingerprint(self) -> str:
        return weights_fingerprint(self.model_dir)

    def model_path(self, precision: OnnxPrecision | None = None) -> Path:
        """The cached export for these weights and settings (it may not exist yet)."""
        return export_path(self.cache_dir, self.weights_fingerprint, precision or self.onnx_precision)

    def _needed(self) -> list[Path]:
        """The exports this provider runs: fp32, and int8 for all but the short texts."""
        return [self.model_path("fp32"), *([self.model_path("int8")] if self.onnx_precision == "int8" else [])]

    # -- availability --------------------------------------------------------------------------
    def _unavailable(self) -> str | None:
        if not onnxruntime_available():
            return "onnxruntime is not installed"
        if not all(path.is_file() for path in self._needed()) and not export_available():
            return "the ONNX model is not exported yet and torch, transformers or onnx is missing to export it"
        return None

    def _use_fallback(self, reason: str) -> None:
        from woods.embedding.sentence import SentenceTransformerProvider

        self.warnings.append(f"ONNX Runtime encoder unavailable ({reason}); embedding with sentence-transformers")
        self._fallback = SentenceTransformerProvider(self.model_dir, num_threads=self.num_threads)

    def prepare(self) -> None:
        """Export (once per machine) and load the ONNX model, or switch to the fallback with a
        warning when that fails. Called before the first vector; the fingerprint is final after it."""
        with self._lock:
            if self._session is not None or self._fallback is not None:
                return
            try:
                if not all(path.is_file() for path in self._needed()):
                    export_model(self.model_dir, self.model_path("fp32"),
                                 self.model_path("int8") if self.onnx_precision == "int8" else None)
                self._short_session = self._load_session(self.model_path("fp32"))
                self._session = (self._short_session if self.onnx_precision == "fp32"
                                 else self._load_session(self.model_path()))
            except Exception as exc:  # any export or load failure: recorded, never fatal
                self._use_fallback(f"{type(exc).__name__}: {exc}")

    def _load_session(self, path: Path) -> Any:
        return _session(path)

    def small_job_embedder(self) -> Any:
        """A handful of texts: the fallback's light twin when falling back, else this provider
        (an ONNX session loads in well under a second; no torch import)."""
        if self._fallback is not None:
            return self._fallback.small_job_embedder()
        return self

    # -- embedding -----------------------------------------------------------------------------
    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.prepare()
        if self._fallback is not None:
            return np.asarray(self._fallback.embed_batch(texts), dtype=np.float32)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        ids = [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]
        for text, token_ids in zip(texts, ids, strict=True):
            ensure_fits(len(token_ids), self.max_input_tokens, text)
        # Longest first, ties by input position: each batch pads to similar lengths.
        order = sorted(range(len(texts)), key=lambda i: (-len(ids[i]), i))
        long_texts = [i for i in order if len(ids[i]) >= SHORT_TEXT_TOKENS]
        short_texts = [i for i in order if len(ids[i]) < SHORT_TEXT_TOKENS]
        jobs = [(self._session, long_texts[i : i + self.batch_size]) for i in range(0, len(long_texts), self.batch_size)]
        jobs += [(self._short_session, short_texts[i : i + self.batch_size])
                 for i in range(0, len(short_texts), self.batch_size)]

        def run(job: tuple[Any, list[int]]) -> None:
            session, batch = job
            out[batch] = _run(session, [ids[i] for i in batch])  # rows of distinct batches never overlap

        if self.num_threads > 1 and len(jobs) > 1:
            # Texts in parallel, each on one thread: small matrices scale across texts far better
            # than inside one product, and ONNX Runtime releases the GIL while it runs.
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(self.num_threads, thread_name_prefix="woods-embed") as pool:
                list(pool.map(run, jobs))
        else:
            for job in jobs:
                run(job)
        return out


def export_model(model_dir: Path, fp32_target: Path, int8_target: Path | None) -> None:
    """Export the sentence-transformers model (BERT → mean pooling → L2 normalisation) to
    `fp32_target` and, when given, its int8-quantised twin to `int8_target`. Each file is written
    in a temporary directory beside it and renamed into place: a reader sees a whole file or none."""
    fp32_target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=fp32_target.parent, prefix=".export-") as work:
        fp32 = Path(work) / "model.onnx"
        _export_fp32(model_dir, fp32)
        if int8_target is not None:
            int8 = Path(work) / "model.int8.onnx"
            _quantize(fp32, int8)
            _install(int8, int8_target)
        _install(fp32, fp32_target)


def _install(staged: Path, target: Path) -> None:
    with open(staged, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(staged, target)


def _export_fp32(model_dir: Path, target: Path) -> None:
    import warnings

    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        """BERT, then sentence-transformers' mean pooling over the mask, then L2 normalisation."""

        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)
            ).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    bert = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    example = torch.ones(2, 16, dtype=torch.int64)
    axes = {0: "batch", 1: "tokens"}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # the tracer's notes about control flow it folded
        torch.onnx.export(
            Pooled(bert), (example, example), str(target), input_names=["input_ids", "attention_mask"],
            output_names=["embedding"], dynamic_axes={"input_ids": axes, "attention_mask": axes, "embedding": {0: "batch"}},
            opset_version=OPSET, dynamo=False,
        )


def _quantize(source: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    prepared = source.with_name("prepared.onnx")
    quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
    graph = onnx.load(str(prepared)).graph
    keep = sorted(n.name for n in graph.node if n.op_type == "MatMul" and "attention" not in n.name
                  and any(n.name.endswith(f"layer.{layer}{_FFN_OUTPUT}") for layer in _KEEP_FP32_LAYERS))
    if len(keep) != len(_KEEP_FP32_LAYERS):  # the export named its nodes otherwise: never quantise blind
        raise RuntimeError(f"expected {len(_KEEP_FP32_LAYERS)} FFN output projections to keep in fp32, found {keep}")
    attention_products = sorted(n.name for n in graph.node if n.op_type == "MatMul" and "/self/MatMul" in n.name)
    quantize_dynamic(
        str(prepared), str(target), per_channel=True, weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul"], nodes_to_exclude=[*keep, *attention_products],
    )
