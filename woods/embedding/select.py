"""Which embedder to use: the heavy one to build an index, the light one to query it.

Why: an index must be queried with vectors from the very model that built it. The manifest
records the embedder's name; at query time woods never imports torch for the packaged MiniLM: a
long-lived process opens the fp32 ONNX export the index's own encoder cached (about 5 ms a query),
a one-shot one (or one without that export) runs the same weights in numpy (about 12 ms a query,
but loaded in a quarter of the time) — so a cold `woods search` costs under half a second, not five.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from woods.errors import CorruptIndexError

if TYPE_CHECKING:
    from woods.embedding.provider import EmbeddingProvider
    from woods.retrieval.executor import Embedder

DEFAULT_EMBEDDER = "minilm"
FAKE_EMBEDDER = "fake"
# woods's own static model (woods/embedding/static.py): a token-vector table, no transformer.
STATIC_EMBEDDER = "static"


def index_provider(name: str = DEFAULT_EMBEDDER) -> EmbeddingProvider:
    """The provider `woods index` embeds with: the packaged MiniLM through ONNX Runtime (int8
    weight matrices; sentence-transformers when onnxruntime or the export is unavailable, with a
    warning). `static` is woods's own static model (thousands of texts a second, numpy only).
    `fake` exists for tests only (never a default)."""
    if name == STATIC_EMBEDDER:
        from woods.embedding.static import StaticEmbeddingProvider

        return StaticEmbeddingProvider()
    if name == DEFAULT_EMBEDDER:
        from woods.embedding.onnx import OnnxMiniLMProvider

        return OnnxMiniLMProvider()
    if name == FAKE_EMBEDDER:
        from woods.embedding.fake import FakeEmbeddingProvider

        return FakeEmbeddingProvider()
    raise ValueError(f"unknown embedder {name!r}")


def query_embedder(embedder: dict[str, Any], one_shot: bool = False) -> Embedder:
    """A query-time embedder producing vectors compatible with an index built by `embedder`.

    `one_shot`: the process asks one question (a CLI run), so the encoder that loads fastest wins —
    numpy (≈ 60 ms to load and embed) over ONNX Runtime (≈ 230 ms to load, then 5 ms a query
    against 12). The two agree to cosine ≥ 0.9999 (tests/test_onnx_provider.py)."""
    from woods.embedding.fake import FAKE_MODEL_NAME, FakeEmbeddingProvider

    name = str(embedder.get("name", ""))
    if name == FAKE_MODEL_NAME:
        return FakeEmbeddingProvider(dimensions=int(embedder["dimension"]))
    from woods.embedding.static import is_static_model

    if is_static_model(name):
        from woods.embedding.static import StaticEmbeddingProvider

        static = StaticEmbeddingProvider()
        if static.dimension != int(embedder["dimension"]):
            raise CorruptIndexError(f"the index has {embedder['dimension']}-d vectors, {name} makes {static.dimension}-d; "
                                    "run `woods index --full`")
        return static
    if "all-MiniLM-L6-v2" in name:
        from woods.embedding.encoder import NumpyMiniLMEncoder
        from woods.embedding.onnx import OnnxQueryEncoder

        encoder: OnnxQueryEncoder | NumpyMiniLMEncoder | None = None
        if not one_shot:
            encoder = OnnxQueryEncoder.for_index(str(embedder.get("fingerprint", "")))
        if encoder is None:
            encoder = NumpyMiniLMEncoder()
        if int(encoder.dimension) != int(embedder["dimension"]):
            raise CorruptIndexError(
                f"the index was embedded with {embedder['dimension']}-d vectors, the query encoder makes "
                f"{encoder.dimension}-d; run `woods index --full`"
            )
        return encoder
    raise CorruptIndexError(f"the index was built with embedder {name!r}, which this woods cannot load; run `woods index --full`")
