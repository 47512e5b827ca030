"""The Python API — the library every interface renders: `woods.Index`, one warm, thread-safe
handle on a published index, and `build_index`, the one way an index is built.

Why: the library answers every question; the CLI (`woods …`) and the MCP server (`woods mcp`) are
thin renderers over it, so the same question gets the same answer on every interface — the same
ranked hits and scores, the same resolve outcome, the same graph rows under the same field names.
It is also the only door: the interfaces import this package (and the embedding providers they
choose), never the index builder, the stores or the freshness checks below it
(tests/test_layering.py). The guarantees are `Index`'s (`woods.api.index`).

Modules, one concept each:
- `index` — `Index`: checks a call's arguments, pins a generation, asks the modules below.
- `answers`, `records`, `reports` — the typed answers (`to_dict()` is what `--json` and MCP emit):
  search results, units and graph walks, the index's structure and status.
- `searching`, `lookups`, `inspection` — the questions over one pinned generation: search,
  localise and retrieve; units, graph walks and diagrams; structure, status and vector state.
- `generations` — the generation a handle reads, reference-counted, and its warm state.
- `background` — phase 2 (contextual vectors) in a thread of the handle's own.
- `building` — `build_index` and the embedders that rebuild an index as it is.
- `location` — where an index is: the one resolver of `--path` / `--store` / `--repo`.
- `validation` — the argument checks every question shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from woods.api.answers import ContextSource, LocalizeResult, Retrieval, SearchHit, SearchResult
from woods.api.building import STORE_GITIGNORE, build_index, empty_index_warning, ignore_store_in_git
from woods.api.generations import QUERY_VECTOR_CACHE_SIZE
from woods.api.index import Index
from woods.api.inspection import STRUCTURE_DETAILS
from woods.api.location import (
    IndexLocation,
    find_store,
    is_server_url,
    locate_index,
    locate_store,
    repository_root,
    store_label,
    store_spec,
)
from woods.api.lookups import GRAPH_DIRECTIONS, MAX_INDENT_PARENTS
from woods.api.records import GraphNeighbor, GraphWalk, RankedUnit, UnitRecord
from woods.api.reports import Status, Structure
from woods.api.searching import READ_AS, might_be_issue
from woods.errors import AmbiguousIdentifierError, IndexClosedError, InputError, UnitNotFoundError
from woods.limits import DEFAULT_CONTEXT_BUDGET

if TYPE_CHECKING:
    from woods.filters import known_languages
    from woods.indexing.resume import describe_vector_state
    from woods.indexing.summary import IndexSummary, Progress
    from woods.resolve import DID_YOU_MEAN, ResolveOutcome

# Kept under its old name for callers of this module; the value lives in woods.limits.
DEFAULT_RETRIEVE_BUDGET = DEFAULT_CONTEXT_BUDGET


def __getattr__(name: str) -> object:
    """What the interfaces need from the layers below, imported on first use: `import woods.api`
    stays as light as it was (a cold `woods status`, keyword search or lookup loads no FAISS, no
    torch and — keyword search and lookup — no numpy)."""
    if name in ("IndexSummary", "Progress"):  # the index builder's report and progress protocol
        from woods.indexing import summary

        return getattr(summary, name)
    if name == "describe_vector_state":  # `vectors: 4,120 / 12,016 embedded`, as `woods status` says it
        from woods.indexing.resume import describe_vector_state

        return describe_vector_state
    if name in ("DID_YOU_MEAN", "ResolveOutcome"):  # what `Index.resolve` answers, and its warning mark
        from woods import resolve

        return getattr(resolve, name)
    if name == "known_languages":  # the names `--lang` accepts (shell completion)
        from woods.filters import known_languages

        return known_languages
    raise AttributeError(f"module 'woods.api' has no attribute {name!r}")


__all__ = [
    "DEFAULT_RETRIEVE_BUDGET",
    "DID_YOU_MEAN",
    "GRAPH_DIRECTIONS",
    "MAX_INDENT_PARENTS",
    "QUERY_VECTOR_CACHE_SIZE",
    "READ_AS",
    "STORE_GITIGNORE",
    "STRUCTURE_DETAILS",
    "AmbiguousIdentifierError",
    "ContextSource",
    "GraphNeighbor",
    "GraphWalk",
    "Index",
    "IndexClosedError",
    "IndexLocation",
    "IndexSummary",
    "InputError",
    "LocalizeResult",
    "Progress",
    "RankedUnit",
    "ResolveOutcome",
    "Retrieval",
    "SearchHit",
    "SearchResult",
    "Status",
    "Structure",
    "UnitNotFoundError",
    "UnitRecord",
    "build_index",
    "describe_vector_state",
    "empty_index_warning",
    "find_store",
    "ignore_store_in_git",
    "is_server_url",
    "known_languages",
    "locate_index",
    "locate_store",
    "might_be_issue",
    "repository_root",
    "store_label",
    "store_spec",
]
