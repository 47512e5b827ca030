"""Which embedder to use: the heavy one to build an index, the light one to query it.

Why: an index must be queried with vectors from the very model that built it. The manifest
records the embedder's name; at query time woods picks the light numpy encoder for the packaged
MiniLM (same weights, no torch import), so a cold `woods search` costs about a second, not five.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from woods.errors import CorruptIndexError

if TYPE_CHECKING:
    from woods.embedding.provider import EmbeddingProvider
    from woods.retrieval.executor import Embedder

DEFAULT_EMBEDDER = "minilm"
FAKE_EMBEDDER = "fake"


def index_provider(name: str = DEFAULT_EMBEDDER) -> EmbeddingProvider:
    """The provider `woods index` embeds with: the packaged MiniLM through ONNX Runtime (int8
    weight matrices; sentence-transformers when onnxruntime or the export is unavailable, with a
    warning). `fake` exists for tests only (never a default)."""
    if name == DEFAULT_EMBEDDER:
        from woods.embedding.onnx import OnnxMiniLMProvider

        return OnnxMiniLMProvider()
    if name == FAKE_EMBEDDER:
        from woods.embedding.fake import FakeEmbeddingProvider

        return FakeEmbeddingProvider()
    raise ValueError(f"unknown embedder {name!r}")


def query_embedder(embedder: dict[str, Any]) -> Embedder:
    """A query-time embedder producing vectors compatible with an index built by `embedder`."""
    from woods.embedding.fake import FAKE_MODEL_NAME, FakeEmbeddingProvider

    name = str(embedder.get("name", ""))
    if name == FAKE_MODEL_NAME:
        return FakeEmbeddingProvider(dimensions=int(embedder["dimension"]))
    if "all-MiniLM-L6-v2" in name:
        from woods.embedding.encoder import NumpyMiniLMEncoder

        encoder = NumpyMiniLMEncoder()
        if int(encoder.dimension) != int(embedder["dimension"]):
            raise CorruptIndexError(
                f"the index was embedded with {embedder['dimension']}-d vectors, the query encoder makes "
                f"{encoder.dimension}-d; run `woods index --full`"
            )
        return encoder
    raise CorruptIndexError(f"the index was built with embedder {name!r}, which this woods cannot load; run `woods index --full`")
