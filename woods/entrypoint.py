"""What only a program's entry point may do: configure the host process and read test switches.

Why a module of its own: woods is also a library (`woods.Index`), and a library must never change
the process it runs in — its environment variables, another library's log level. The `woods`
command and the MCP server own their processes, so they (and only they) call
`configure_process()` before anything loads a model. Environment switches meant for tests are read
here too, so no library module ever consults them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from woods.errors import InputError

if TYPE_CHECKING:
    from woods.embedding.provider import EmbeddingProvider

# woods never uses the network: the model ships in a package. Forced, not defaulted, so an
# inherited `HF_HUB_OFFLINE=0` cannot make a woods command reach out.
OFFLINE_ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
# woods draws its own progress on stderr; the Hugging Face libraries' weight-loading bars and info
# logs would interleave with it. Defaults only: a user debugging a load may set them otherwise.
QUIET_ENVIRONMENT = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error"}
# numpy's OpenBLAS on one thread for a woods process (a default: a user's own setting wins). A
# query's matrices are too small to share, and a thread pool on a busy machine stalls: measured on
# 2 cores at load ≈ 5, a numpy MiniLM query p50 23 ms on 1 thread vs 58–85 ms on 2 (p95 27 vs
# 224–496 ms). The heavy index-time work runs in ONNX Runtime, torch and FAISS, each with its own
# thread pool. Set in the environment before numpy loads, so it costs no import; the library
# itself never changes its host process's thread counts.
BLAS_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1"}

# Tests only: `WOODS_EMBEDDER=fake` makes `woods index` (and the MCP server's first build) embed
# phase 1 with the deterministic Fake provider instead of woods's static model, and
# `WOODS_CONTEXTUAL=fake` adds a phase 2 with the Fake contextual provider (a second embedder of
# another name and dimension) instead of MiniLM. Unset means the real models; any other value is
# refused (never a silent fallback). Documented in docs/cli.md.
EMBEDDER_ENV = "WOODS_EMBEDDER"
CONTEXTUAL_ENV = "WOODS_CONTEXTUAL"
REAL_EMBEDDER = "static"
TEST_EMBEDDER = "fake"


def configure_process() -> None:
    """Offline mode, quiet model loading and one BLAS thread for this process (call first thing in
    `main`, before numpy loads)."""
    os.environ.update(OFFLINE_ENVIRONMENT)
    for name, value in {**QUIET_ENVIRONMENT, **BLAS_ENVIRONMENT}.items():
        os.environ.setdefault(name, value)


def provider_factory_from_environment() -> Callable[[], EmbeddingProvider] | None:
    """The phase-1 embedder the entry point builds with: None for the default (woods's static
    model), or (tests) the Fake one."""
    from woods.embedding.select import index_provider

    name = os.environ.get(EMBEDDER_ENV, "").strip()
    if name in ("", REAL_EMBEDDER):
        return None
    if name == TEST_EMBEDDER:
        return partial(index_provider, TEST_EMBEDDER)  # picklable: fleet workers build it
    raise InputError(
        f"{EMBEDDER_ENV}={name!r} is not an embedder; it is a test-only switch "
        f"({TEST_EMBEDDER!r} or unset for woods's static model)"
    )


def contextual_factory_from_environment(option: bool | None) -> Callable[[], EmbeddingProvider] | None:
    """The phase-2 embedder the entry point builds with: `option` (`--contextual` True,
    `--no-contextual` False, else None: automatic, see woods.embedding.select.contextual_factory)
    decides, except that tests may swap MiniLM for the Fake contextual provider."""
    from woods.embedding.select import FAKE_CONTEXTUAL_EMBEDDER, contextual_factory, index_provider

    name = os.environ.get(CONTEXTUAL_ENV, "").strip()
    if name == TEST_EMBEDDER:
        return None if option is False else partial(index_provider, FAKE_CONTEXTUAL_EMBEDDER)
    if name:
        raise InputError(f"{CONTEXTUAL_ENV}={name!r} is not an embedder; it is a test-only switch ({TEST_EMBEDDER!r} or unset)")
    return contextual_factory(option, default_base=provider_factory_from_environment() is None)
