"""Repositories live at any path a file system allows: `#`, `?`, `%`, spaces, unicode and a leading
`-` in a directory name must not change what index, search, status and the MCP server see.

SQLite opens published databases through `file:` URIs, where `?`, `#` and `%` mean something: a
repository at `proj#1` used to be searched at the cut-off path `proj` ("no such table: units").
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.helpers import FAKE_EMBEDDER, run_cli, write_files
from woods.embedding.fake import FakeEmbeddingProvider
from woods.mcp_server import WoodsTools
from woods.store.sqlite_uri import sqlite_uri

# Slow (the quick loop leaves it out): index, search, status and an MCP server per path name.
pytestmark = pytest.mark.slow

FILES = {"lib/frob.py": "def frobnicate(widget):\n    \"\"\"Frobnicate a widget.\"\"\"\n    return widget\n"}

# Characters that mean something in a URI, a shell or a command line, and some that are not ASCII.
TRICKY = "#?%&=;+ -_.~'()[]{}!$@,éüß中文😀"
names = st.text(alphabet=TRICKY + "abc", min_size=1, max_size=12).filter(
    lambda n: n not in (".", "..") and not n.startswith(".") and n.strip() == n and n.strip()
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=names)
@example(name="proj#1")
@example(name="C#")
@example(name="-dash ?%20é")
def test_index_search_status_and_mcp_at_any_path(name: str) -> None:
    parent = Path(tempfile.mkdtemp(prefix="woods-path-"))
    try:
        root = write_files(parent / name, FILES)
        run_cli("index", "--", str(root), env=FAKE_EMBEDDER, expect=0)
        found = run_cli("search", "frobnicate", "--path", str(root), "--json", expect=0).json()
        assert found["results"][0]["identifier"] == "lib.frob.frobnicate"
        status = run_cli("status", "--path", str(root), "--json", expect=0).json()
        assert status["root"] == str(root) and status["fresh"] is True and status["counts"]["units"] >= 1
        tools = WoodsTools(root / ".woods", root=root, provider_factory=FakeEmbeddingProvider)
        try:
            _text, payload, is_error = tools.call("search", {"query": "frobnicate", "mode": "lexical"})
            assert not is_error, payload
            assert payload["results"][0]["identifier"] == "lib.frob.frobnicate"
        finally:
            tools.close()
        # Nothing was created beside the repository at a cut-off path.
        assert sorted(p.name for p in parent.iterdir()) == [name]
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def test_sqlite_uri_escapes_what_a_uri_reads_as_syntax(tmp_path: Path) -> None:
    uri = sqlite_uri(tmp_path / "a#b?c%d e" / "m.sqlite3")
    assert "#" not in uri.split("?mode=")[0] and "%23" in uri and "%3F" in uri and "%25" in uri and "%20" in uri
    assert uri.endswith("?mode=ro&immutable=1")
    assert sqlite_uri(tmp_path / "x", immutable=False).endswith("?mode=ro")
