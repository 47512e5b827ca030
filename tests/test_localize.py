"""Issue → code localisation: a pasted trace, failing test or bug report points at files and units,
each with its evidence; `woods search` detects such text itself; the API, the MCP tool and the CLI
give one answer; any text up to the query limit is answered (or refused as bad input, exit 2).

Indexes use the real pipeline with the Fake embedder (named as the test double it is) on the
repository's own fixtures.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import copy_fixture, run_cli
from woods.api import Index
from woods.embedding.fake import FakeEmbeddingProvider
from woods.errors import InputError
from woods.indexing import index_repository
from woods.limits import MAX_QUERY_BYTES
from woods.mcp_server import WoodsTools

PYTHON_TRACE = """Posting a refund crashes the nightly job

Traceback (most recent call last):
  File "/srv/ledger/venv/lib/python3.11/site-packages/click/core.py", line 1078, in main
    rv = self.invoke(ctx)
  File "/srv/ledger/ledger/cli.py", line 40, in main
    service.post(entry)
  File "/srv/ledger/ledger/services/posting.py", line 32, in validate
    raise UnbalancedEntryError(f"entry {entry.memo!r} does not balance")
ledger.services.posting.UnbalancedEntryError: entry 'refund 42' does not balance
"""

JAVA_TRACE = """Shipping more than is in stock throws instead of refusing politely
java.lang.IllegalStateException: not enough stock for sku ABC-1
\tat com.acme.inventory.service.InventoryService.ship(InventoryService.java:44)
\tat com.acme.inventory.App.main(App.java:21)
"""

BUG_REPORT = """### Reorder never triggers

When stock falls below the threshold, no purchase order is produced.
`ThresholdReorderPolicy` seems to compare with the wrong value; `InventoryService.reorderSuggestions`
returns an empty list.

Steps: receive 5, ship 4, ask for suggestions.
"""


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("localize")
    out = {}
    for name in ("python_pkg", "java_app"):
        root = copy_fixture(name, base)
        index_repository(root, root / ".woods", FakeEmbeddingProvider, workers=1)
        out[name] = root
    return out


def test_a_python_traceback_points_at_the_frame_the_error_rose_in(repos):
    with Index.open(repos["python_pkg"]) as index:
        found = index.localize(PYTHON_TRACE)
    assert found.files[0].path == "ledger/services/posting.py"
    top = found.files[0].units[0]
    assert top.identifier == "ledger.services.posting.PostingService.validate"
    assert any(e.startswith("frame ") and ":32 in validate" in e for e in top.evidence)
    assert found.found["frames"] >= 3 and found.found["errors"] >= 1
    by_id = {u.identifier: u for u in found.units}
    error_class = by_id["ledger.services.posting.UnbalancedEntryError"]
    assert any(e == "defines UnbalancedEntryError" for e in error_class.evidence)
    # The caller the trace came through is found too, one step through the graph or by its frame.
    assert "ledger/cli.py" in [f.path for f in found.files]


def test_a_java_trace_maps_frames_to_repository_files_by_package(repos):
    with Index.open(repos["java_app"]) as index:
        found = index.localize(JAVA_TRACE)
    assert found.files[0].path.endswith("com/acme/inventory/service/InventoryService.java")
    assert found.files[0].units[0].identifier == "com.acme.inventory.service.InventoryService#ship"


def test_a_bug_report_names_lead_to_their_units(repos):
    with Index.open(repos["java_app"]) as index:
        found = index.localize(BUG_REPORT)
    paths = [f.path for f in found.files[:3]]
    assert any(p.endswith("ThresholdReorderPolicy.java") for p in paths), paths
    assert any(p.endswith("InventoryService.java") for p in paths), paths


def test_search_reads_a_pasted_trace_as_an_issue_by_itself(repos):
    with Index.open(repos["python_pkg"]) as index:
        auto = index.search(PYTHON_TRACE)
        forced = index.search(PYTHON_TRACE, read_as="issue")
        plain = index.search(PYTHON_TRACE, read_as="query")
        question = index.search("post a journal entry")
        with pytest.raises(InputError, match="read_as"):
            index.search("x", read_as="sideways")
    assert auto.strategy == "localize" and auto.localization is not None
    assert [h.key for h in auto] == [h.key for h in forced]
    assert auto[0].identifier == "ledger.services.posting.PostingService.validate" and auto[0].evidence
    assert plain.strategy != "localize" and plain.localization is None
    assert question.strategy != "localize" and "localization" not in question.to_dict()
    assert auto.to_dict()["results"][0]["evidence"]


def test_the_cli_and_the_mcp_tools_answer_what_the_api_answers(repos):
    root = repos["python_pkg"]
    with Index.open(root) as index:
        api = index.localize(PYTHON_TRACE).to_dict()
        api_search = index.search(PYTHON_TRACE).to_dict(context=False)
    tools = WoodsTools(root / ".woods", root=root)
    try:
        _text, mcp, is_error = tools.call("localize", {"text": PYTHON_TRACE})
        assert not is_error, mcp
        _text, mcp_search, is_error = tools.call("search", {"query": PYTHON_TRACE})
        assert not is_error, mcp_search
    finally:
        tools.close()
    assert mcp["files"] == api["files"]
    assert mcp_search["results"] == api_search["results"] and mcp_search["localization"] == api_search["localization"]
    cli = run_cli("search", PYTHON_TRACE, "--path", str(root), "--json", expect=0).json()
    assert cli["results"] == api_search["results"] and cli["localization"]["files"] == api["files"]
    human = run_cli("search", "--as", "issue", PYTHON_TRACE, "--path", str(root), expect=0)
    assert "why: frame" in human.stdout


TEXT_PIECES = st.sampled_from([PYTHON_TRACE, JAVA_TRACE, BUG_REPORT, "```\n", "\x00", "\ud800", "é" * 50, "\t", "\n"])
ANY_TEXT = st.lists(st.one_of(TEXT_PIECES, st.text(max_size=300), st.binary(max_size=200).map(
    lambda b: b.decode("latin-1"))), max_size=40).map("".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(text=ANY_TEXT)
def test_any_text_is_answered_or_refused_as_bad_input_by_api_and_mcp(repos, text):
    root = repos["python_pkg"]
    with Index.open(root) as index:
        for call in (lambda: index.search(text), lambda: index.localize(text), lambda: index.search(text, mode="lexical")):
            try:
                call()
            except InputError:
                assert not text.strip() or len(text.encode("utf-8", "surrogatepass")) > MAX_QUERY_BYTES or "\x00" in text
    tools = WoodsTools(root / ".woods", root=root)
    try:
        for name, args in (("search", {"query": text}), ("localize", {"text": text})):
            _t, body, is_error = tools.call(name, args)
            assert not is_error or body["error"]["code"] == "invalid_argument", body
    finally:
        tools.close()


def test_texts_up_to_the_byte_limit_search_in_every_mode_through_the_cli(repos):
    root = repos["python_pkg"]
    near_limit = (PYTHON_TRACE * 40)[: MAX_QUERY_BYTES - 10]
    for args in ((), ("--mode", "lexical"), ("--as", "query"), ("--as", "issue")):
        run_cli("search", near_limit, "--path", str(root), "--json", *args, expect=0)
    over = "x" * (MAX_QUERY_BYTES + 1)
    refused = run_cli("search", over, "--path", str(root), expect=2)
    assert "query exceeds" in refused.stderr and "Traceback" not in refused.stderr
    junk = "".join(string.printable[i % 100] for i in range(4000))
    run_cli("search", junk, "--path", str(root), "--json", expect=0)
    assert json.loads(run_cli("search", junk, "--path", str(root), "--json", expect=0).stdout)["schema_version"]



@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="\n:"), max_size=200))
def test_the_cheap_gate_rejects_only_what_the_evidence_reader_rejects(text):
    from woods.api import might_be_issue
    from woods.retrieval.evidence import looks_like_issue

    if not might_be_issue(text):
        assert not looks_like_issue(text)


def test_the_cheap_gate_lets_real_samples_through():
    from woods.api import might_be_issue
    from woods.retrieval.evidence import looks_like_issue

    samples = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "evidence").glob("*.sample"))
    assert len(samples) > 50
    for sample in samples:
        text = sample.read_text(encoding="utf-8", errors="replace")
        if looks_like_issue(text):
            assert might_be_issue(text), sample
    for line in ("FooTest > testBar FAILED", "test parser::tests::it_works ... FAILED", "ValueError: bad"):
        assert might_be_issue(line)
