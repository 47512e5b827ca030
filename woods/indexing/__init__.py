"""The index builder: discovery → extraction → linking → chunking → embedding → stores → publish.

Modules, in pipeline order: `parse` (read and extract files, in parallel, reusing unchanged ones),
`plan` (every unit's embedding texts), `vector_cache` (vectors of the previous generation),
`generation` (write one complete generation and publish it atomically), `pipeline` (a repository
run: lock, discover, parse, purge guard, build), `summary` (progress and the run's report).
"""

from woods.indexing.generation import build_index_from_units, crash_test_pause, open_previous
from woods.indexing.parse import PARALLEL_PARSE_MIN_FILES, extract_files, parse_workers
from woods.indexing.pipeline import PURGE_GUARD_SHARE, go_module_aliases, index_repository
from woods.indexing.summary import IndexSummary, Progress, SilentProgress
from woods.indexing.vector_cache import embedder_description

__all__ = [
    "PARALLEL_PARSE_MIN_FILES",
    "PURGE_GUARD_SHARE",
    "IndexSummary",
    "Progress",
    "SilentProgress",
    "build_index_from_units",
    "crash_test_pause",
    "embedder_description",
    "extract_files",
    "go_module_aliases",
    "index_repository",
    "open_previous",
    "parse_workers",
]
