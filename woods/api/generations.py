"""Generations as a handle holds them: the one new calls read, pinned by every call that reads it,
closed when retired and no call uses it any more — and the warm state built on each.

Why reference counting: `Index.update()` publishes a new generation and switches the handle to it
while calls may still be running on the old one; each call pins the generation that was current
when it started (`Generations.use`), so it never sees a mix, and the old stores are closed by the
last call that leaves them. The warm state (retrievers, the resolve searcher, the name table, the
PageRank table) is built once per generation and dropped with it: nothing of a closed handle stays
in the process. The query embedder and its cache of query vectors outlive generations
(`CachingEmbedder`, kept by the handle across updates).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from woods.api.records import RankedUnit
from woods.errors import IndexClosedError
from woods.limits import DEFAULT_CONTEXT_BUDGET, DEFAULT_SEARCH_LIMIT

if TYPE_CHECKING:
    import numpy as np

    from woods.embedding.provider import QueryEmbedder
    from woods.filters import FileFilter
    from woods.resolve import NameTable, Searcher
    from woods.retrieval.candidates import RetrievalResult
    from woods.retrieval.code_search import CodeSearchConfig
    from woods.retrieval.retriever import Retriever
    from woods.store.index import IndexStores
    from woods.store.postgres import PostgresStores

# Query vectors kept per Index: an assistant often asks the same text twice in a row (search, then
# codebase_retrieve; resolve's search leg), and one embedding costs far more than the rest of a
# warm query. 256 vectors of 384 floats is about 400 KB.
QUERY_VECTOR_CACHE_SIZE = 256


class CachingEmbedder:
    """A query embedder with a thread-safe LRU of query text → vector (read-only arrays)."""

    def __init__(self, embedder: QueryEmbedder, size: int = QUERY_VECTOR_CACHE_SIZE) -> None:
        self._embedder = embedder
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, text: str) -> np.ndarray:
        with self._lock:
            cached = self._vectors.get(text)
            if cached is not None:
                self._vectors.move_to_end(text)
                return cached
        import numpy as np  # loaded with the first query vector, never by keyword-only use

        vector = np.array(self._embedder.embed(text), copy=True)
        vector.flags.writeable = False
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
        return vector


class WarmGeneration:
    """One open generation and the warm state built on it; closed when retired and unused."""

    def __init__(
        self,
        stores: IndexStores | PostgresStores,
        embedder_factory: Callable[[], QueryEmbedder],
        mode: str,
        profile: str,
        ranking: CodeSearchConfig | None = None,
        root: Path | None = None,
    ) -> None:
        self.stores = stores
        # The repository this generation's files are compared with and re-indexed from: the root
        # the handle was given (woods.freshness.index_root), never blindly the recorded one.
        self.root = root
        self.ranking = ranking
        self.embedder_factory = embedder_factory
        self.mode = mode
        self.users = 0
        self.retired = False
        self.lock = threading.Lock()  # guards the lazily built state below
        self._retrievers: dict[tuple[str, str], Retriever] = {}
        self._searcher: Searcher | None = None
        self._names: NameTable | None = None
        self._ranked: tuple[RankedUnit, ...] | None = None
        self.profile = profile
        self.retriever(mode, profile)  # an unknown mode or profile fails when the index is opened

    def retriever(self, mode: str, profile: str) -> Retriever:
        """The retriever of one mode (semantic or lexical) and ranking profile, built on first use."""
        with self.lock:
            retriever = self._retrievers.get((mode, profile))
            if retriever is None:
                from woods.retrieval.retriever import Retriever

                retriever = Retriever(
                    self.stores, self.embedder_factory, mode=mode, profile=profile, code_config=self.ranking
                )
                self._retrievers[(mode, profile)] = retriever
            return retriever

    def retrieve(
        self,
        query: str,
        *,
        mode: str | None = None,
        budget: int = DEFAULT_CONTEXT_BUDGET,
        types: Sequence[str] | None = None,
        exclude_types: Sequence[str] | None = None,
        strategy: str | None = None,
        path_prefixes: Sequence[str] | None = None,
        limit: int = DEFAULT_SEARCH_LIMIT,
        profile: str | None = None,
        files: FileFilter | None = None,
        context_limit: int | None = None,
    ) -> RetrievalResult:
        """One retrieval; concurrent calls run side by side (what a retriever builds on first use
        is built once, under its own lock: woods.lazy)."""
        retriever = self.retriever(self.mode if mode is None else mode, self.profile if profile is None else profile)
        return retriever.retrieve(
            query, budget=budget, types=types, exclude_types=exclude_types, strategy=strategy,
            path_prefixes=path_prefixes, limit=limit, files=files, context_limit=context_limit,
        )

    def searcher(self) -> Searcher:
        with self.lock:
            if self._searcher is None:
                from woods.resolve import make_searcher

                self._searcher = make_searcher(self.stores, self.embedder_factory)
            return self._searcher

    def names(self) -> NameTable:
        """Every unit by name (resolve's exact stages), built once per generation and dropped with
        it: nothing of a closed handle stays in the process."""
        with self.lock:
            if self._names is None:
                from woods.resolve import NameTable

                self._names = NameTable.from_metadata(self.stores.metadata)
            return self._names

    def ranked_units(self) -> tuple[RankedUnit, ...]:
        """Every (identifier, type) with its PageRank (the highest of the identifier's typed
        variants, 6 decimals), by (−score, identifier, type); built once."""
        with self.lock:
            if self._ranked is None:
                metadata = self.stores.metadata
                rows = metadata.top_pagerank(metadata.count())
                best: dict[str, float] = {}
                for identifier, _unit_type, score in rows:
                    best[identifier] = max(score, best.get(identifier, score))
                pairs = sorted({(identifier, unit_type) for identifier, unit_type, _score in rows})
                units = [RankedUnit(ident, unit_type, round(best[ident], 6)) for ident, unit_type in pairs]
                self._ranked = tuple(sorted(units, key=lambda u: (-u.score, u.identifier, u.type)))
            return self._ranked


class Generations:
    """The generation a handle's new calls read, and the reference counts that close old ones.

    Guarantees: `use()` pins the current generation for one call (IndexClosedError once the handle
    is closed); `switch(fresh)` makes `fresh` current and retires the previous one, whose stores
    close when its last call returns; `close()` marks the handle closed and hands back the current
    generation to retire (once: None afterwards).
    """

    def __init__(self, first: WarmGeneration, describe: str) -> None:
        self._current = first
        self._describe = describe  # the store, named in the error of a call on a closed handle
        self._lock = threading.Lock()  # guards _current, _closed and the users counts
        self._closed = False

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    @contextlib.contextmanager
    def use(self) -> Iterator[WarmGeneration]:
        with self._lock:
            if self._closed:
                raise IndexClosedError(f"this woods Index ({self._describe}) is closed; open a new one")
            generation = self._current
            generation.users += 1
        try:
            yield generation
        finally:
            with self._lock:
                generation.users -= 1
                release = generation.retired and generation.users == 0
            if release:
                generation.stores.close()

    def retire(self, generation: WarmGeneration) -> None:
        with self._lock:
            generation.retired = True
            release = generation.users == 0
        if release:
            generation.stores.close()

    def switch(self, fresh: WarmGeneration) -> None:
        """Point new calls at `fresh`; retire the generation they used (or `fresh` itself, when
        the handle was closed meanwhile)."""
        with self._lock:
            if self._closed:
                old = fresh
            else:
                old, self._current = self._current, fresh
        self.retire(old)

    def close(self) -> WarmGeneration | None:
        """Mark the handle closed; the current generation, to retire (None when already closed)."""
        with self._lock:
            if self._closed:
                return None
            self._closed = True
            return self._current


__all__ = ["QUERY_VECTOR_CACHE_SIZE", "CachingEmbedder", "Generations", "WarmGeneration"]
