"""A repository copied, moved or restored with its `.woods/` is read from where it is now.

The root a command or server is given is the root: files are compared and re-indexed there, the
index says when it was built elsewhere (status, warnings), and the next index re-roots it — never
is the original directory read or indexed in the copy's place. Checked through the CLI, the MCP
server (a real stdio process and its tool layer) and the API.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client

from tests.helpers import FAKE_EMBEDDER, build_repo, run_cli
from tests.test_mcp import CALL_TIMEOUT, _params
from woods.api import Index
from woods.embedding.fake import FakeEmbeddingProvider
from woods.mcp_server import WoodsTools

ONLY_IN_ORIG = "lib/only_orig.py"
ONLY_IN_COPY = "lib/only_copy.py"


def _diverge(orig: Path, copy: Path) -> None:
    """After the copy: a file only the original has, and one only the copy has."""
    (orig / ONLY_IN_ORIG).write_text("def frobnicate_original():\n    return 1\n")
    (copy / ONLY_IN_COPY).write_text("def frobnicate_copy():\n    return 2\n")


@pytest.fixture()
def pair(tmp_path: Path) -> tuple[Path, Path]:
    orig = build_repo(tmp_path / "orig")
    copy = tmp_path / "copy"
    shutil.copytree(orig, copy)  # `cp -r orig copy`: the index comes along, recording orig's root
    _diverge(orig, copy)
    return orig, copy


def _indexed_files(index: Index) -> set[str]:
    return {str(f["path"]) for f in index.structure(detail="full").files}


def test_status_of_a_copy_names_both_roots_and_compares_the_copys_files(pair):
    orig, copy = pair
    with Index.open(copy) as index:
        status = index.status()
    assert status.root == str(copy)
    assert status.recorded_root == str(orig)
    assert any("built from" in w and str(orig) in w for w in status.warnings)
    # The copy's own files are compared: its extra file is "added"; the original's is not seen.
    assert status.changes.added == [ONLY_IN_COPY]
    assert status.to_dict()["recorded_root"] == str(orig)

    cli = run_cli("status", "--path", str(copy), "--json", expect=0)
    payload = cli.json()
    assert payload["root"] == str(copy) and payload["recorded_root"] == str(orig)
    assert payload["changes"]["added"] == [ONLY_IN_COPY] and payload["warnings"]
    human = run_cli("status", "--path", str(copy), expect=0)
    assert f"root: {copy}" in human.stdout and f"recorded root: {orig}" in human.stdout
    assert "built from" in human.stderr


def test_a_search_in_a_copy_warns_until_it_is_reindexed(pair):
    _orig, copy = pair
    with Index.open(copy) as index:
        assert any("built from" in w for w in index.search("invoice charge", mode="lexical").warnings)
    run_cli("index", str(copy), env=FAKE_EMBEDDER, expect=0)
    with Index.open(copy) as index:
        assert not any("built from" in w for w in index.search("invoice charge", mode="lexical").warnings)
        assert index.status().recorded_root is None and index.status().root == str(copy)
        assert ONLY_IN_COPY in _indexed_files(index) and ONLY_IN_ORIG not in _indexed_files(index)


def test_update_of_a_copy_indexes_the_copy_not_the_original(pair):
    orig, copy = pair
    with Index.open(copy) as index:
        index.update(provider_factory=FakeEmbeddingProvider)
        files = _indexed_files(index)
        assert index.status().root == str(copy) and index.status().recorded_root is None
    assert ONLY_IN_COPY in files and ONLY_IN_ORIG not in files
    with Index.open(orig) as original:  # the original's own index is untouched
        assert ONLY_IN_COPY not in _indexed_files(original)


def test_mcp_reindex_of_a_copy_indexes_the_copy(pair):
    """Through the server's tool layer, then through a real stdio server process."""
    orig, copy = pair
    tools = WoodsTools(copy / ".woods", root=copy, provider_factory=FakeEmbeddingProvider)
    try:
        _text, status, is_error = tools.call("woods_status", {})
        assert not is_error and status["root"] == str(copy) and status["recorded_root"] == str(orig)
        _text, reindexed, is_error = tools.call("reindex", {"changed_files": [ONLY_IN_COPY]})
        assert not is_error, reindexed
        assert reindexed["changed_files_status"] == {ONLY_IN_COPY: "changed"}
        assert tools.index().wait_for_vectors(60)
        files = _indexed_files(tools.index())
    finally:
        tools.close()
    assert ONLY_IN_COPY in files and ONLY_IN_ORIG not in files


def test_mcp_server_process_in_a_moved_repository(tmp_path):
    """`mv orig moved`: the recorded root no longer exists; the server reads and re-indexes `moved`."""
    orig = build_repo(tmp_path / "orig")
    moved = tmp_path / "moved"
    orig.rename(moved)
    (moved / ONLY_IN_COPY).write_text("def frobnicate_copy():\n    return 2\n")

    async def body(client: Client) -> tuple[Any, Any, Any]:
        status = await client.call_tool("woods_status", {})
        reindexed = await client.call_tool("reindex", {})
        found = await client.call_tool("search", {"query": "frobnicate_copy", "mode": "lexical"})
        return status, reindexed, found

    async def main() -> Any:
        with anyio.fail_after(CALL_TIMEOUT * 3):
            params = _params("--path", str(moved))
            params.env = {**(params.env or {}), **FAKE_EMBEDDER}
            async with Client(params, read_timeout_seconds=CALL_TIMEOUT) as client:
                return await body(client)

    status, reindexed, found = anyio.run(main)
    payload = status.structured_content
    assert payload["root"] == str(moved) and payload["recorded_root"] == str(orig)
    assert payload["changes"]["root_missing"] is False and payload["changes"]["added"] == [ONLY_IN_COPY]
    assert not reindexed.is_error and reindexed.structured_content["other_changes"] == [ONLY_IN_COPY]
    assert not found.is_error
    assert found.structured_content["results"][0]["file_path"] == ONLY_IN_COPY
    assert not (tmp_path / "orig").exists()  # nothing was written where the index used to live


def test_a_restored_cache_is_re_rooted_by_the_cli(tmp_path):
    """A CI cache restores `.woods/` built on another machine (another absolute path)."""
    built = build_repo(tmp_path / "ci-runner-1" / "repo")
    checkout = tmp_path / "ci-runner-2" / "repo"
    shutil.copytree(built, checkout, ignore=shutil.ignore_patterns(".woods"))
    shutil.copytree(built / ".woods", checkout / ".woods")
    shutil.rmtree(tmp_path / "ci-runner-1")  # the machine that built it is gone
    status = run_cli("status", "--path", str(checkout), "--json", expect=0).json()
    assert status["root"] == str(checkout) and status["changes"]["root_missing"] is False
    assert status["fresh"] is True  # the same files, so nothing is stale
    run_cli("index", str(checkout), env=FAKE_EMBEDDER, expect=0)
    again = run_cli("status", "--path", str(checkout), "--json", expect=0).json()
    assert again["recorded_root"] is None and again["warnings"] == []


def test_an_index_kept_outside_its_repository_uses_the_recorded_root(tmp_path):
    """`--store DIR` elsewhere: the store has no repository of its own, so the recorded one is it."""
    root = tmp_path / "repo"
    store = tmp_path / "elsewhere" / "idx"
    from tests.helpers import SAMPLE_REPO, write_files
    from woods.api import build_index

    write_files(root, SAMPLE_REPO)
    build_index(root, store=store, provider_factory=FakeEmbeddingProvider, workers=1)
    with Index.open(store=store) as index:
        status = index.status()
    assert status.root == str(root) and status.recorded_root is None and status.warnings == ()
    assert os.path.isdir(status.root)
