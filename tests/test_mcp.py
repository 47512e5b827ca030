"""The MCP server end to end: a real subprocess (`python -m woods.mcp_server`) driven through the
`mcp` SDK's stdio client — tool schemas, every tool against the Python API, typed errors that
leave the server serving, and the session's recent-units ring behind `resolve`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.helpers import SAMPLE_REPO, build_repo, write_files
from woods.api import Index
from woods.mcp_server import (
    ERROR_CODES,
    LOOKUP_ALWAYS,
    RECENT_RING_SIZE,
    TOOLS,
    TOOLS_BY_NAME,
    RecentRing,
    ToolError,
    WoodsTools,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
EXPECTED_TOOLS = {
    "codebase_retrieve", "search", "localize", "resolve", "lookup", "dependencies", "dependents",
    "structure", "pagerank", "woods_status", "reindex",
}
# Generous: the first call loads the index in a fresh process on a busy 2-core machine.
CALL_TIMEOUT = 60


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_repo(tmp_path_factory.mktemp("mcp") / "repo")


@pytest.fixture(scope="module")
def api(repo: Path):
    with Index.open(repo) as index:
        yield index


def _params(*args: str) -> StdioServerParameters:
    env = {"PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1"}
    return StdioServerParameters(command=sys.executable, args=["-m", "woods.mcp_server", *args], env=env,
                                 cwd=str(REPO_ROOT))


def session(*args: str, mode: str = "auto") -> Callable[[Callable[[Client], Awaitable[Any]]], Any]:
    """Run `body(client)` against a fresh server process (one process = one MCP session)."""

    def run(body: Callable[[Client], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            with anyio.fail_after(CALL_TIMEOUT * 3):
                async with Client(_params(*args), mode=mode, read_timeout_seconds=CALL_TIMEOUT) as client:
                    return await body(client)

        return anyio.run(main)

    return run


def _error(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    body = json.loads(result.content[0].text)
    assert set(body) == {"error"} and body["error"]["code"] in ERROR_CODES
    assert body == result.structured_content
    return body["error"]


# -- end to end ----------------------------------------------------------------------------------


def test_tools_are_listed_with_their_json_schemas(repo):
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = session("--store", str(repo / ".woods"))(body)
    assert {t.name for t in tools} == EXPECTED_TOOLS
    for tool in tools:
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert schema == TOOLS_BY_NAME[tool.name].input_schema()
        assert tool.description
    by_name = {t.name: t.input_schema for t in tools}
    assert by_name["codebase_retrieve"]["required"] == ["query"]
    assert "limit" not in by_name["codebase_retrieve"]["properties"]
    assert by_name["codebase_retrieve"]["properties"]["budget"]["default"] == 8000
    assert by_name["dependencies"]["properties"]["depth"]["default"] == 2
    assert by_name["dependents"]["properties"]["limit"]["default"] == 50
    assert by_name["lookup"]["required"] == ["identifier"]
    assert by_name["resolve"]["required"] == ["ref"]


def test_every_tool_answers_what_the_python_api_answers(repo, api):
    async def body(client: Client) -> dict[str, Any]:
        calls = [
            ("codebase_retrieve", "codebase_retrieve", {"query": "how is a payment captured", "budget": 2000}),
            ("search", "search", {"query": "invoice charge", "limit": 5}),
            ("search_typed", "search", {"query": "charge amount", "types": ["method"], "strategy": "hybrid"}),
            ("resolve", "resolve", {"ref": "Payment#capture"}),
            ("lookup", "lookup", {"identifier": "Billing::Invoice#charge"}),
            ("lookup_trimmed", "lookup",
             {"identifier": "Billing::Invoice#charge", "include_source": False, "sections": ["signature"]}),
            ("dependencies", "dependencies", {"identifier": "Subscription", "depth": 3}),
            ("dependents", "dependents", {"identifier": "Payment", "via": ["calls"], "limit": 2, "offset": 1}),
            ("structure", "structure", {}),
            ("pagerank", "pagerank", {"limit": 3}),
            ("woods_status", "woods_status", {}),
        ]
        results = {}
        for label, tool, arguments in calls:
            results[label] = await client.call_tool(tool, arguments)
        return results

    got = session("--store", str(repo / ".woods"))(body)
    for label, result in got.items():
        assert not result.is_error, (label, result.content)

    retrieval = api.retrieve("how is a payment captured", budget=2000)
    assert got["codebase_retrieve"].content[0].text == retrieval.context
    assert got["codebase_retrieve"].structured_content == retrieval.to_dict()

    searched = api.search("invoice charge", limit=5)
    hits = [h.to_dict() for h in searched]
    assert got["search"].structured_content == {
        "query": "invoice charge", "mode": "semantic", "strategy": searched.strategy, "result_count": len(hits),
        "results": hits, "applied_scope": None, "warnings": [],
    }
    assert json.loads(got["search"].content[0].text) == got["search"].structured_content
    typed = [h.to_dict() for h in api.search("charge amount", types=["method"], strategy="hybrid")]
    assert got["search_typed"].structured_content["results"] == typed

    assert got["resolve"].structured_content == api.resolve("Payment#capture").to_dict()

    unit = api.lookup("Billing::Invoice#charge").to_dict()
    assert got["lookup"].structured_content == unit
    trimmed = got["lookup_trimmed"].structured_content
    assert set(trimmed) == set(LOOKUP_ALWAYS) | {"signature"}
    assert trimmed["signature"] == unit["signature"]

    deps = [n.to_dict() for n in api.dependencies("Subscription", depth=3)]
    assert got["dependencies"].structured_content["results"] == deps
    assert got["dependencies"].structured_content["total"] == len(deps)
    users = [n.to_dict() for n in api.dependents("Payment", depth=2, via="calls")]
    page = got["dependents"].structured_content
    assert page["results"] == users[1:3] and page["total"] == len(users)
    assert page["truncated"] == (len(users) > 3)

    assert got["structure"].structured_content == api.structure().to_dict()
    assert got["structure"].structured_content["top_pagerank"] == [u.to_dict() for u in api.pagerank()]
    ranked = api.pagerank(limit=1000)
    assert got["pagerank"].structured_content == {
        "total_nodes": len(ranked), "results": [u.to_dict() for u in ranked[:3]]
    }
    status = got["woods_status"].structured_content
    assert status["degraded"] is False and status["generation"] == api.generation
    assert status["session"]["recent_units"] > 0


def test_bad_arguments_get_typed_errors_and_the_server_keeps_serving(repo):
    bad_calls = [
        ("search", {}, "invalid_argument"),  # missing query
        ("search", {"query": 42}, "invalid_argument"),  # wrong type
        ("search", {"query": "invoice", "limit": "ten"}, "invalid_argument"),
        ("search", {"query": "invoice", "limit": 0}, "invalid_argument"),
        ("search", {"query": "x" * 8193}, "invalid_argument"),  # over 8192 bytes
        ("search", {"query": "   "}, "invalid_argument"),
        ("search", {"query": "invoice", "types": ["no_such_type"]}, "invalid_argument"),
        ("search", {"query": "invoice", "strategy": "psychic"}, "invalid_argument"),
        ("search", {"query": "invoice", "colour": "blue"}, "invalid_argument"),  # unknown argument
        ("codebase_retrieve", {"query": "invoice", "limit": 5}, "unsupported_argument"),
        ("codebase_retrieve", {"query": "y" * 9000}, "invalid_argument"),
        ("lookup", {"identifier": "No::Such#thing"}, "not_found"),
        ("lookup", {"identifier": "Shared"}, "invalid_argument"),  # two typed variants
        ("lookup", {"identifier": "Billing", "sections": ["everything"]}, "invalid_argument"),
        ("dependencies", {"identifier": "No::Such"}, "not_found"),
        ("dependents", {"identifier": "Payment", "depth": 99}, "invalid_argument"),
        ("resolve", {"ref": ""}, "invalid_argument"),
        ("resolve", {"ref": "charge", "strict": "yes"}, "invalid_argument"),
        ("structure", {"detail": "everything"}, "invalid_argument"),
        ("reindex", {"changed_files": ["../outside.rb"]}, "invalid_argument"),
        ("no_such_tool", {}, "invalid_argument"),
    ]

    async def body(client: Client) -> list[tuple[str, Any, Any]]:
        out = []
        for name, arguments, _code in bad_calls:
            bad = await client.call_tool(name, arguments)
            good = await client.call_tool("search", {"query": "invoice", "limit": 1})
            out.append((name, bad, good))
        return out

    outcomes = session("--store", str(repo / ".woods"))(body)
    for (name, bad, good), (_n, arguments, code) in zip(outcomes, bad_calls, strict=True):
        error = _error(bad)
        assert error["code"] == code, (name, arguments, error)
        assert error["message"]
        assert not good.is_error and good.structured_content["result_count"] == 1
    ambiguous = _error(outcomes[12][1])
    assert sorted(c["type"] for c in ambiguous["candidates"]) == ["lib", "poro"]


def test_recent_ring_makes_a_short_name_resolve_within_one_session_only(repo, api):
    assert api.resolve("charge").status.value == "ambiguous"  # without the ring: two charge methods

    async def follow_up(client: Client) -> tuple[Any, Any]:
        shown = await client.call_tool("search", {"query": "Billing::Invoice#charge", "limit": 1})
        resolved = await client.call_tool("resolve", {"ref": "charge"})
        return shown, resolved

    shown, resolved = session("--store", str(repo / ".woods"))(follow_up)
    assert [r["identifier"] for r in shown.structured_content["results"]] == ["Billing::Invoice#charge"]
    outcome = resolved.structured_content
    assert (outcome["status"], outcome["method"], outcome["identifier"]) == ("resolved", "recent", "Billing::Invoice#charge")

    async def fresh(client: Client) -> Any:
        return await client.call_tool("resolve", {"ref": "charge"})

    again = session("--store", str(repo / ".woods"))(fresh).structured_content
    assert again["status"] == "ambiguous"
    assert {c["identifier"] for c in again["candidates"]} == {"Billing::Invoice#charge", "Subscription#charge"}


def test_reindex_switches_the_running_server_to_the_new_index(tmp_path):
    root = build_repo(tmp_path / "repo")

    async def body(client: Client) -> tuple[Any, Any, Any]:
        before = await client.call_tool("lookup", {"identifier": "Refund#issue"})
        (root / "app/models/refund.rb").write_text("class Refund\n  def issue\n    true\n  end\nend\n")
        status = await client.call_tool("woods_status", {})
        reindexed = await client.call_tool("reindex", {"changed_files": ["app/models/refund.rb"]})
        after = await client.call_tool("lookup", {"identifier": "Refund#issue"})
        return before, status, (reindexed, after)

    before, status, (reindexed, after) = session("--path", str(root))(body)
    assert _error(before)["code"] == "not_found"
    assert status.structured_content["changes"]["added"] == ["app/models/refund.rb"]
    payload = reindexed.structured_content
    assert not reindexed.is_error and payload["generation"] != payload["previous_generation"]
    assert payload["mode"] == "incremental" and payload["message"].startswith("incremental re-index")
    assert payload["changed_files"] == ["app/models/refund.rb"]
    assert payload["changed_files_status"] == {"app/models/refund.rb": "changed"}
    assert payload["parsed_files"] == 1 and payload["reused_files"] == payload["files"] - 1
    # The lexical generation answers at once; the vectors follow in the background.
    assert payload["summary"]["vectors_pending"] is True and payload["summary"]["searchable_seconds"] is not None
    assert payload["vectors"]["state"] in ("pending", "embedding", "complete")
    assert not after.is_error and after.structured_content["file_path"] == "app/models/refund.rb"


def test_missing_index_is_a_degraded_state_not_a_crash(tmp_path):
    async def body(client: Client) -> tuple[Any, Any, Any]:
        status = await client.call_tool("woods_status", {})
        search = await client.call_tool("search", {"query": "invoice"})
        tools = await client.list_tools()
        return status, search, tools

    # The handshake-era protocol, as older clients speak it, works too.
    status, search, tools = session("--store", str(tmp_path / "nothing"), mode="legacy")(body)
    assert not status.is_error and status.structured_content["degraded"] is True
    assert status.structured_content["phase"] == "boot"
    error = _error(search)
    assert error["code"] == "degraded_index" and error["phase"] == "boot" and "woods index" in error["message"]
    assert len(tools.tools) == len(EXPECTED_TOOLS)


# -- in-process units ----------------------------------------------------------------------------


def test_recent_ring_keeps_the_last_64_most_recent_first():
    ring = RecentRing()
    ring.remember(f"u{i}" for i in range(100))  # shown in rank order: u0 is the top hit
    ids = ring.ids()
    assert len(ids) == RECENT_RING_SIZE == 64
    assert ids[0] == "u0" and ids[-1] == "u63"
    ring.remember(["u50"])
    assert ring.ids()[0] == "u50" and ring.ids().count("u50") == 1


def test_tool_table_rejects_what_its_schema_rejects():
    spec = TOOLS_BY_NAME["dependencies"]
    assert spec.bind({"identifier": "X"}) == {
        "identifier": "X", "depth": 2, "via": None, "types": None, "limit": 50, "offset": 0
    }
    for arguments in ({"identifier": "X", "depth": True}, {"identifier": "X", "via": [1]},
                      {"identifier": "X", "offset": -1}, {"depth": 1}):
        with pytest.raises(ToolError) as caught:
            spec.bind(arguments)
        assert caught.value.code == "invalid_argument"
    assert spec.bind({"identifier": "X", "via": "calls"})["via"] == "calls"
    assert {t.name for t in TOOLS} == EXPECTED_TOOLS


def test_in_process_session_ring_feeds_resolve(repo):
    tools = WoodsTools(repo / ".woods")
    try:
        _text, ambiguous, is_error = tools.call("resolve", {"ref": "charge"})
        assert not is_error and ambiguous["status"] == "ambiguous"
        tools.call("lookup", {"identifier": "Subscription#charge"})
        _text, resolved, _ = tools.call("resolve", {"ref": "charge"})
        assert resolved["identifier"] == "Subscription#charge"
        _text, body, is_error = tools.call("search", None)
        assert is_error and body["error"]["code"] == "invalid_argument"
    finally:
        tools.close()


def test_unexpected_failures_become_typed_errors(repo, monkeypatch):
    from woods.retrieval.candidates import StoreError

    tools = WoodsTools(repo / ".woods")
    try:
        def broken_store(*_args: Any, **_kwargs: Any) -> Any:
            raise StoreError("vector store call search failed: RuntimeError: boom", store="vector")

        def bug(*_args: Any, **_kwargs: Any) -> Any:
            raise KeyError("oops")

        monkeypatch.setattr(Index, "search", broken_store)
        _text, body, is_error = tools.call("search", {"query": "invoice"})
        assert is_error and body["error"]["code"] == "degraded_index"
        assert (body["error"]["phase"], body["error"]["stores"]) == ("query", ["vector"])
        monkeypatch.setattr(Index, "search", bug)
        _text, body, is_error = tools.call("search", {"query": "invoice"})
        assert is_error and body["error"]["code"] == "internal_error" and "KeyError" in body["error"]["message"]
        monkeypatch.undo()
        _text, body, is_error = tools.call("search", {"query": "invoice", "limit": 1})
        assert not is_error and body["result_count"] == 1
    finally:
        tools.close()


def test_ranked_but_unreadable_units_are_a_stale_index_error(repo, monkeypatch):
    from types import SimpleNamespace

    from woods.api import Retrieval

    def unreadable(*_args: Any, **_kwargs: Any) -> Retrieval:
        trace = SimpleNamespace(ranked_count=3, skipped_missing_metadata=3)
        return Retrieval("q", "", (), "vector", 0, 8000, SimpleNamespace(trace=trace))

    tools = WoodsTools(repo / ".woods")
    try:
        _text, body, is_error = tools.call("codebase_retrieve", {"query": "invoice"})
        assert not is_error and body["sources"]
        monkeypatch.setattr(Index, "retrieve", unreadable)
        _text, body, is_error = tools.call("codebase_retrieve", {"query": "invoice"})
        assert is_error and body["error"]["code"] == "stale_index"
    finally:
        tools.close()


def test_reindex_reports_what_happened_and_checks_the_files_it_was_told_about(tmp_path):
    from woods.embedding.fake import FakeEmbeddingProvider

    root = tmp_path / "repo"
    root.mkdir()
    (root / "logo.svg").write_text("<svg/>\n")  # a file woods does not index
    # No index yet: a session started with the repository root builds it on `reindex`.
    tools = WoodsTools(root / ".woods", root=root, provider_factory=FakeEmbeddingProvider)
    try:
        _text, degraded, is_error = tools.call("search", {"query": "invoice"})
        assert is_error and degraded["error"]["code"] == "degraded_index"
        write_files(root, SAMPLE_REPO)
        _text, first, is_error = tools.call("reindex", {"changed_files": ["lib/report.py", "logo.svg"]})
        assert not is_error, first
        assert (first["mode"], first["previous_generation"]) == ("full", None)
        assert first["changed_files_status"] == {"logo.svg": "not_indexed", "lib/report.py": "changed"}
        # The vectors follow in the background; then the index moves to the vector-complete generation.
        assert tools.index().wait_for_vectors(60)
        built = tools.index().generation

        _text, same, _ = tools.call("reindex", {"changed_files": ["lib/report.py"]})
        assert same["mode"] == "up_to_date" and same["generation"] == built
        assert same["changed_files_status"] == {"lib/report.py": "unchanged"} and same["other_changes"] == []
        assert same["message"].startswith("up to date")

        (root / "app/models/payment.rb").write_text("class Payment\n  def capture\n    false\n  end\nend\n")
        (root / "lib/extra.py").write_text("def extra():\n    return 1\n")
        _text, told, _ = tools.call("reindex", {"changed_files": ["app/models/payment.rb", "lib/report.py",
                                                                  "docs/missing.rb"]})
        assert told["mode"] == "incremental" and told["previous_generation"] == built
        assert told["changed_files_status"] == {
            "app/models/payment.rb": "changed", "docs/missing.rb": "not_indexed", "lib/report.py": "unchanged",
        }
        assert told["other_changes"] == ["lib/extra.py"]  # woods found it although nobody listed it
        assert told["parsed_files"] == 2 and told["reused_files"] == told["files"] - 2
    finally:
        tools.close()
