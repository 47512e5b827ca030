"""Every limit and default the interfaces share, in one place, each with the reason for its value.

Why one module: the CLI, the MCP server and the Python API must accept the same inputs and answer
with the same defaults. When a bound lived in each of them, they drifted (a budget the MCP server
refused was fine on the CLI; the CLI's search limit was not the API's). Interfaces and the core
import these names; no interface repeats a literal.

Only plain constants live here, so importing this module costs nothing.
"""

from __future__ import annotations

# -- queries and references ----------------------------------------------------------------------

# Ruby MAX_QUERY_BYTES: a query is a question, not a document. Anything bigger is a caller bug
# (a pasted file), and it fails fast instead of as an embedding provider's 400 later.
MAX_QUERY_BYTES = 8192
# A reference to resolve is a name, never longer than a query.
MAX_REF_BYTES = MAX_QUERY_BYTES
# `woods resolve --input -` reads one small JSON request; a megabyte is far beyond any real one and
# keeps a runaway pipe from filling memory.
MAX_INPUT_REQUEST_BYTES = 1_000_000

# -- search and context --------------------------------------------------------------------------

# Ruby `codebase_retrieve` default budget (tokens, estimated as characters / 4): a comfortable
# slice of a modern context window.
DEFAULT_CONTEXT_BUDGET = 8000
# No prompt holds more than this many tokens of retrieved code; a larger budget is a unit mix-up
# (characters for tokens), and refusing it keeps one answer bounded in size.
MAX_CONTEXT_BUDGET = 200_000
# Results a person or an assistant reads at a glance.
DEFAULT_SEARCH_LIMIT = 10
# The ranked list behind a search is as deep as the strategies fetch (the executor's 20, hybrid's
# ×3 and graph expansion); past 200 there is nothing more, so a larger limit is a mistake.
MAX_SEARCH_LIMIT = 200
# Ranking profiles: "code" (woods' code search: a lexical index and MiniLM vectors, fused and shaped
# by code signals) ranks best on real repositories and is the default; "ruby" is the Ruby gem woods
# 2.0's pipeline (classifier-routed strategies, its ranker), kept so parity stays provable.
PROFILES = ("code", "ruby")
DEFAULT_PROFILE = "code"
# Searches whose assembled context is thrown away (resolve's search stage) assemble within this
# small budget: the ranked list does not depend on the budget, and the waste stays small.
DISCARDED_CONTEXT_BUDGET = 256

# -- resolve -------------------------------------------------------------------------------------

# Candidates listed for an ambiguous reference by default: enough to pick from at a glance.
RESOLVE_DEFAULT_LIMIT = 5
# An agent reads a list this long at a glance; beyond it the reference is simply too vague.
RESOLVE_MAX_CANDIDATES = 20

# -- the graph -----------------------------------------------------------------------------------

# One hop answers "what does this use / who uses this"; deeper walks are asked for explicitly.
DEFAULT_GRAPH_DEPTH = 1
# Traversals deeper than this return most of a real codebase; nobody reads that as "dependencies".
MAX_GRAPH_DEPTH = 10
# Units in a PageRank list by default (Ruby server default for `pagerank`).
DEFAULT_PAGERANK_LIMIT = 20
# The longest list one answer returns (PageRank, a page of graph neighbours): about 50 KB of JSON,
# still readable by a person and affordable for an assistant's context.
MAX_LIST_LIMIT = 1000

# -- the MCP server ------------------------------------------------------------------------------

# The Ruby gem's index server default: an assistant asking for dependencies usually wants two hops.
MCP_DEFAULT_GRAPH_DEPTH = 2
# Graph neighbours per page (Ruby server default): a page fits an assistant's working memory.
MCP_DEFAULT_GRAPH_PAGE = 50
# Units remembered per session for `resolve`: more than one answer's worth of hits yet short enough
# that "that one" still means something recent. resolve reads the first MAX_RECENT of them.
MCP_RECENT_RING_SIZE = 64

# -- indexing ------------------------------------------------------------------------------------

# Files above this size are generated or vendored (bundles, fixtures, dumps), not code anyone
# searches; skipping them bounds parse time and memory.
DEFAULT_MAX_FILE_BYTES = 1_000_000
# How long an indexer waits for another one holding the store lock: long enough for an incremental
# run of a large repository to finish, short enough that a stuck run is reported.
DEFAULT_LOCK_WAIT_SECONDS = 30.0
