"""One question, one answer: the CLI (`--json`), the Python API and the MCP server agree.

The same questions go to `woods … --json` (a subprocess, the real entry point), to `woods.Index`
and to the MCP tools (in process through `WoodsTools.call`; tests/test_mcp.py drives the stdio
server end to end) over one index of a small repository, and the answers must be identical: the
same ranked identifiers, keys and scores for searches with several option combinations, the same
resolve outcomes, lookup records, graph rows (also from a graph node that is not a unit), structure
and status. The bounds the interfaces advertise must be the same too. Every reading test runs on
both backends: the repository's `.woods` directory and a PostgreSQL store (a real server,
tests/conftest.py `pg_server`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer.main

from tests.helpers import SAMPLE_REPO, Location, index_with_fake, run_cli, write_files
from woods import cli, limits
from woods.api import AmbiguousIdentifierError, Index, UnitNotFoundError
from woods.mcp_server import STRATEGIES, TOOLS_BY_NAME, RecentRing, WoodsTools
from woods.retrieval.ruby.executor import STRATEGIES as ENGINE_STRATEGIES

# SAMPLE_REPO plus two models whose superclass, ApplicationRecord, the repository never defines:
# ApplicationRecord is a node of the graph but not a unit.
FILES = {
    **SAMPLE_REPO,
    "app/models/receipt.rb": "class Receipt < ApplicationRecord\n  def print\n    Payment.new(1).capture\n  end\nend\n",
    "app/models/refund.rb": "class Refund < ApplicationRecord\n  def issue\n    true\n  end\nend\n",
}

SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("invoice charge", {}),
    ("charge amount", {"types": ["method"]}),
    ("Payment", {"strategy": "keyword", "limit": 3}),
    ("invoice", {"exclude_types": ["method"], "limit": 20}),
    ("charge", {"path_prefixes": ["app/models"]}),
    ("charge", {"path_prefixes": ["lib", "app/models/billing"], "strategy": "hybrid"}),
    ("render report rows", {"mode": "lexical"}),
    ("Billing::Invoice#charge", {}),
    ("how is a payment captured", {"strategy": "vector", "budget": 500, "limit": 4}),
    ("Payment", {"strategy": "graph"}),
    # issue 33's filters: gitignore-style globs (`!` excludes) and languages by name or extension
    ("charge", {"globs": ["app/**/*.rb", "!app/models/billing/"]}),
    ("report rows", {"langs": ["py"]}),
    ("charge amount", {"langs": ["ruby"], "globs": ["app/"], "strategy": "keyword"}),
]
RESOLVES: list[tuple[str, dict[str, Any]]] = [
    ("charge", {}),
    ("Billing::Invoice#charge", {}),
    ("Payment.capture", {}),
    ("app/models/payment.rb:6", {}),
    ("Shared", {}),
    ("Shared", {"type": "lib"}),
    ("charge", {"limit": 1}),
    ("render report", {"strict": True}),
    ("zzz_nothing_like_this", {}),
]
LOOKUPS = ["Billing::Invoice#charge", "Shared", "Receipt", "lib/report.py"]
WALKS: list[tuple[str, str, dict[str, Any]]] = [
    ("Subscription", "dependencies", {"depth": 3}),
    ("Payment", "dependents", {"depth": 2, "via": "calls"}),
    ("Payment", "dependents", {"depth": 3, "types": ["method"]}),
    ("ApplicationRecord", "dependents", {}),  # a graph node, not a unit
    ("Receipt", "dependencies", {"depth": 2}),
]


@pytest.fixture(scope="module", params=["local", "postgres"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Location:
    root = write_files(tmp_path_factory.mktemp("interfaces") / "repo", FILES)
    if request.param == "local":
        index_with_fake(root, "--json")
        return Location("local", root, root / ".woods")
    url = request.getfixturevalue("pg_database")()
    index_with_fake(root, "--store", url, "--json")
    return Location("postgres", root, url, "repo")


@pytest.fixture(scope="module")
def api(repo: Location) -> Iterator[Index]:
    with Index(repo.store, repo=repo.repo) as index:
        yield index


@pytest.fixture(scope="module")
def mcp(repo: Location) -> Iterator[WoodsTools]:
    tools = WoodsTools(repo.store, root=repo.root, repo=repo.repo)
    yield tools
    tools.close()


def _cli_json(repo: Location, *args: str, code: int = 0) -> dict[str, Any]:
    payload = run_cli(*args, *repo.args, "--json", expect=code).json()
    assert payload.pop("schema_version") == cli.JSON_SCHEMA_VERSION
    return payload


def _tool(tools: WoodsTools, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    _text, payload, is_error = tools.call(name, arguments)
    assert not is_error, payload
    return payload


def _search_flags(options: dict[str, Any]) -> list[str]:
    flags: list[str] = []
    names = {"types": "--type", "exclude_types": "--exclude-type", "path_prefixes": "--path-prefix",
             "globs": "--glob", "langs": "--lang"}
    for name, value in options.items():
        if name in names:
            for item in value:
                flags += [names[name], item]
        else:
            flags += [f"--{name}", str(value)]
    return flags


def _without_timing(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "trace": {k: v for k, v in payload["trace"].items() if k != "elapsed_ms"}}


# -- search ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "options"), SEARCHES, ids=[f"{q}-{sorted(o)}" for q, o in SEARCHES])
def test_search_answers_agree(repo: Location, api: Index, mcp: WoodsTools, query: str, options: dict[str, Any]) -> None:
    from_api = api.search(query, **options)
    assert from_api.hits, "every question here has an answer"
    expected = from_api.to_dict(context=False)
    from_cli = _cli_json(repo, "search", query, *_search_flags(options))
    assert _without_timing(from_cli) == _without_timing(expected)

    if "budget" in options:  # the MCP search tool returns no context, so it takes no budget
        expected = api.search(query, **{k: v for k, v in options.items() if k != "budget"}).to_dict(context=False)
    from_mcp = _tool(mcp, "search", {"query": query, **{k: v for k, v in options.items() if k != "budget"}})
    assert from_mcp["results"] == expected["results"]
    assert (from_mcp["strategy"], from_mcp["mode"], from_mcp["warnings"], from_mcp["applied_scope"]) == (
        expected["strategy"], expected["mode"], expected["warnings"], expected["applied_scope"],
    )
    assert from_mcp["result_count"] == len(from_api)


def test_search_context_is_the_same_text(repo: Location, api: Index) -> None:
    from_cli = _cli_json(repo, "search", "payment capture", "--budget", "600", "--context")
    from_api = api.search("payment capture", budget=600)
    assert from_cli["context"] == from_api.context and from_api.tokens_used <= 600


# -- resolve ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("ref", "options"), RESOLVES, ids=[f"{r}-{sorted(o)}" for r, o in RESOLVES])
def test_resolve_outcomes_agree(repo: Location, api: Index, mcp: WoodsTools, ref: str, options: dict[str, Any]) -> None:
    outcome = api.resolve(ref, **options)
    flags = [item for name, value in options.items()
             for item in ([f"--{name}"] if value is True else [f"--{name}", str(value)])]
    assert _cli_json(repo, "resolve", ref, *flags, code=outcome.exit_code) == outcome.to_dict()
    mcp.recent = RecentRing()  # the session ring would (rightly) change the answer; start empty
    assert _tool(mcp, "resolve", {"ref": ref, **options}) == outcome.to_dict()


# -- lookup ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("identifier", LOOKUPS)
def test_lookup_records_agree(repo: Location, api: Index, mcp: WoodsTools, identifier: str) -> None:
    units = api.lookup_all(identifier)
    if not units:  # a path is not a unit identifier: every interface says "not found"
        assert _cli_json(repo, "lookup", identifier, code=3)["status"] == "not_found"
        assert api.lookup(identifier) is None
        _text, body, is_error = mcp.call("lookup", {"identifier": identifier})
        assert is_error and body["error"]["code"] == "not_found"
        return
    from_cli = _cli_json(repo, "lookup", identifier)["units"]
    assert [{k: v for k, v in u.items() if k != "id"} for u in from_cli] == [u.to_dict() for u in units]
    trimmed = _cli_json(repo, "lookup", identifier, "--no-source")["units"]
    assert [{k: v for k, v in u.items() if k != "id"} for u in trimmed] == [
        u.to_dict() for u in api.lookup_all(identifier, include_source=False)
    ]
    for unit in units:  # MCP answers one unit: by type when the identifier has several
        arguments = {"identifier": identifier, "type": unit.type} if len(units) > 1 else {"identifier": identifier}
        assert _tool(mcp, "lookup", arguments) == unit.to_dict()
    if len(units) > 1:
        typed = _cli_json(repo, "lookup", identifier, "--type", units[-1].type)["units"]
        assert [u["key"] for u in typed] == [units[-1].key]
        with pytest.raises(AmbiguousIdentifierError):
            api.lookup(identifier)
        _text, body, is_error = mcp.call("lookup", {"identifier": identifier})
        assert is_error and body["error"]["code"] == "invalid_argument"
        assert [c["key"] for c in body["error"]["candidates"]] == [u.key for u in units]


# -- the graph ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("identifier", "direction", "options"), WALKS,
                         ids=[f"{i}-{d}-{sorted(o)}" for i, d, o in WALKS])
def test_graph_rows_agree(repo: Location, api: Index, mcp: WoodsTools, identifier: str, direction: str,
                          options: dict[str, Any]) -> None:
    walk = api.traverse(identifier, direction=direction, **options)
    assert walk.neighbors
    expected = walk.to_dict()
    listed = api.dependencies if direction == "dependencies" else api.dependents
    assert [n.to_dict() for n in listed(identifier, **options)] == expected["results"]

    command = "deps" if direction == "dependencies" else "dependents"
    flags = [item for name, value in options.items() for v in (value if isinstance(value, list) else [value])
             for item in ("--type" if name == "types" else f"--{name}", str(v))]
    from_cli = _cli_json(repo, command, identifier, *flags)
    aliases = ("distance", "in_index", "type")  # schema-1 names the CLI keeps beside the new ones
    rows = [{k: v for k, v in row.items() if k not in aliases} for row in from_cli.pop("results")]
    assert rows == expected["results"]
    assert from_cli == {**{k: v for k, v in expected.items() if k != "results"}, "warnings": []}

    # The same question: the MCP tools default to two hops (the Ruby server's default), so say how many.
    arguments = {"identifier": identifier, "limit": limits.MAX_LIST_LIMIT, "depth": walk.depth, **options}
    from_mcp = _tool(mcp, direction, arguments)
    assert from_mcp["results"] == expected["results"] and from_mcp["truncated"] is False
    assert {k: from_mcp[k] for k in ("identifier", "direction", "depth", "via", "types", "total")} == {
        k: expected[k] for k in ("identifier", "direction", "depth", "via", "types", "total")
    }


def test_a_graph_node_that_is_not_a_unit_is_answered_everywhere(repo: Location, api: Index, mcp: WoodsTools) -> None:
    assert api.lookup_all("ApplicationRecord") == []
    assert {n.identifier for n in api.dependents("ApplicationRecord")} == {"Receipt", "Refund"}
    assert [r["identifier"] for r in _cli_json(repo, "dependents", "ApplicationRecord")["results"]] == [
        "Receipt", "Refund"]
    from_mcp = _tool(mcp, "dependents", {"identifier": "ApplicationRecord", "depth": 1})
    assert [r["identifier"] for r in from_mcp["results"]] == ["Receipt", "Refund"]


def test_an_unknown_name_is_not_found_everywhere(repo: Location, api: Index, mcp: WoodsTools) -> None:
    with pytest.raises(UnitNotFoundError):
        api.dependencies("No::Such")
    assert _cli_json(repo, "deps", "No::Such", code=3)["status"] == "not_found"
    _text, body, is_error = mcp.call("dependencies", {"identifier": "No::Such"})
    assert is_error and body["error"]["code"] == "not_found"


# -- the index itself ------------------------------------------------------------------------------


def test_structure_agrees(repo: Location, api: Index, mcp: WoodsTools) -> None:
    for detail in ("summary", "full"):
        expected = api.structure(detail=detail, top=5).to_dict()
        assert _cli_json(repo, "structure", "--top", "5", "--detail", detail) == {**expected, "warnings": []}
        assert _tool(mcp, "structure", {"detail": detail, "top": 5}) == expected
    ranked = [u.to_dict() for u in api.pagerank(limit=5)]
    assert api.structure(top=5).to_dict()["top_pagerank"] == ranked
    assert _tool(mcp, "pagerank", {"limit": 5})["results"] == ranked


def test_status_agrees(repo: Location, api: Index, mcp: WoodsTools) -> None:
    expected = api.status().to_dict()
    assert expected["fresh"] and expected["units_by_type"]["method"] >= 5
    assert expected["files_by_language"] == {"python": 1, "ruby": 7}
    assert _cli_json(repo, "status") == {**expected, "warnings": []}
    from_mcp = _tool(mcp, "woods_status", {})
    assert {k: v for k, v in from_mcp.items() if k not in ("degraded", "session")} == expected


def test_filtered_status_and_context_agree(repo: Location, api: Index, mcp: WoodsTools) -> None:
    expected = api.status(globs=["app/models/**"], langs=["rb"]).to_dict()
    assert expected["filter"] == {"globs": ["app/models/**"], "langs": ["ruby"], "files": 6,
                                  "units": sum(expected["units_by_type"].values())}
    assert expected["files_by_language"] == {"ruby": 6}
    assert _cli_json(repo, "status", "--glob", "app/models/**", "--lang", "rb") == {**expected, "warnings": []}
    from_mcp = _tool(mcp, "woods_status", {"globs": ["app/models/**"], "langs": ["rb"]})
    assert {k: v for k, v in from_mcp.items() if k not in ("degraded", "session")} == expected
    retrieval = api.retrieve("report rows", langs=["python"])
    assert {s.file_path for s in retrieval.sources} == {"lib/report.py"}
    assert _tool(mcp, "codebase_retrieve", {"query": "report rows", "langs": ["python"]}) == retrieval.to_dict()


def test_a_bad_filter_is_the_same_input_error_everywhere(repo: Location, api: Index, mcp: WoodsTools) -> None:
    from woods.errors import InputError

    with pytest.raises(InputError, match="unknown language 'klingon'"):
        api.search("charge", langs=["klingon"])
    result = run_cli("search", "charge", *repo.args, "--lang", "klingon", expect=2)
    assert "unknown language 'klingon'" in result.stderr
    _text, body, is_error = mcp.call("search", {"query": "charge", "langs": ["klingon"]})
    assert is_error and body["error"]["code"] == "invalid_argument" and "klingon" in body["error"]["message"]


# -- one set of limits and words -------------------------------------------------------------------


def _cli_option(command: str, name: str) -> Any:
    group = typer.main.get_command(cli.app)
    return next(p for p in group.commands[command].params if p.name == name)


def test_the_interfaces_advertise_the_same_bounds_and_defaults() -> None:
    schema = {name: spec.input_schema()["properties"] for name, spec in TOOLS_BY_NAME.items()}
    pairs = [
        (("search", "limit"), ("search", "limit"), limits.DEFAULT_SEARCH_LIMIT, limits.MAX_SEARCH_LIMIT),
        (("search", "budget"), ("codebase_retrieve", "budget"), limits.DEFAULT_CONTEXT_BUDGET, limits.MAX_CONTEXT_BUDGET),
        (("resolve", "limit"), ("resolve", "limit"), limits.RESOLVE_DEFAULT_LIMIT, limits.RESOLVE_MAX_CANDIDATES),
        (("deps", "depth"), ("dependencies", "depth"), None, limits.MAX_GRAPH_DEPTH),
        (("structure", "top"), ("structure", "top"), limits.DEFAULT_PAGERANK_LIMIT, limits.MAX_LIST_LIMIT),
    ]
    for (command, option), (tool, argument), default, maximum in pairs:
        param = _cli_option(command, option)
        bounds = param.type  # click's IntRange carries the option's bounds
        assert (bounds.min, bounds.max) == (1, maximum), (command, option)
        assert (schema[tool][argument]["minimum"], schema[tool][argument]["maximum"]) == (1, maximum), tool
        if default is not None:
            assert param.default == default == schema[tool][argument]["default"], (command, option)
    assert _cli_option("deps", "depth").default == limits.DEFAULT_GRAPH_DEPTH
    assert schema["dependencies"]["depth"]["default"] == limits.MCP_DEFAULT_GRAPH_DEPTH
    assert set(STRATEGIES) == {s.value for s in cli.Strategy} == {"auto", *ENGINE_STRATEGIES}
    assert set(schema["search"]["mode"]["enum"]) == {m.value for m in cli.Mode}
