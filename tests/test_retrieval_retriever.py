"""Retriever pipeline: validation, type filters and fallback, type-rank table, scopes, lexical mode."""

from __future__ import annotations

import pytest

from tests.retrieval_fakes import CountingFactory, build_fake_index, make_record
from woods.errors import InputError
from woods.retrieval import (
    InvalidOptionError,
    InvalidQueryError,
    InvalidScopeError,
    InvalidTypeError,
    Retriever,
    StoreError,
)
from woods.retrieval.scope import normalize_path, path_matches

RECORDS = {
    "Billing::Invoice": make_record("Billing::Invoice", namespace="Billing", file_path="app/models/billing/invoice.rb",
                                    source_code="class Billing::Invoice\n  # invoice totals\nend\n", metadata={"package": "billing"}),
    "Billing::Payment": make_record("Billing::Payment", namespace="Billing", file_path="app/models/billing/payment.rb",
                                    source_code="class Billing::Payment\n  # invoice payment\nend\n", metadata={"package": "billing"}),
    "ChargeJob": make_record("ChargeJob", "job", file_path="app/jobs/charge_job.rb",
                             source_code="class ChargeJob\n  # charge the card\nend\n"),
    "InvoiceTest": make_record("InvoiceTest", "test_mapping", file_path="test/invoice_test.rb",
                               source_code="invoice invoice invoice\n"),
    "Support::Ticket": make_record("Support::Ticket", namespace="Support", file_path="packs/support/ticket.rb",
                                   source_code="class Support::Ticket\n  # invoice dispute\nend\n", metadata={"package": "support"}),
}
EDGES = [("Billing::Payment", "Billing::Invoice"), ("ChargeJob", "Billing::Payment")]


def retriever(mode: str = "semantic") -> tuple[Retriever, CountingFactory]:
    stores, embedder = build_fake_index(RECORDS, EDGES)
    factory = CountingFactory(embedder)
    return Retriever(stores, factory, mode=mode, profile="ruby", promote_exact=False), factory


@pytest.mark.parametrize("query", ["", "   \n\t", None, 42, "x" * 8193, "é" * 4097])
def test_bad_queries_raise_before_any_work(query: object) -> None:
    r, factory = retriever()
    with pytest.raises(InvalidQueryError):
        r.retrieve(query)
    assert factory.created == 0
    assert issubclass(InvalidQueryError, InputError)  # the CLI maps InputError to exit 2


def test_query_of_exactly_8192_bytes_is_accepted() -> None:
    r, _ = retriever()
    assert r.retrieve("find " + "a" * 8187).strategy == "keyword"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"types": ["modle"]}, InvalidTypeError),
        ({"types": "job"}, InvalidTypeError),
        ({"exclude_types": ["bad type"]}, InvalidTypeError),
        ({"path_prefixes": ["/etc"]}, InvalidScopeError),
        ({"path_prefixes": ["../x"]}, InvalidScopeError),
        ({"path_prefixes": ["app\\models"]}, InvalidScopeError),
        ({"packages": ["nope"]}, InvalidScopeError),
        ({"budget": 0}, InvalidOptionError),
        ({"strategy": "magic"}, InvalidOptionError),
    ],
)
def test_bad_options_raise_typed_errors(kwargs: dict, error: type[Exception]) -> None:
    r, _ = retriever()
    with pytest.raises(error):
        r.retrieve("find invoice", **kwargs)


def test_unknown_mode_rejected() -> None:
    stores, _ = build_fake_index(RECORDS)
    with pytest.raises(InvalidOptionError):
        Retriever(stores, None, mode="fuzzy")


def test_test_mapping_excluded_by_default_and_included_on_request() -> None:
    r, _ = retriever()
    default = r.retrieve("find invoice")
    assert "InvoiceTest" not in [s.identifier for s in default.sources]
    assert "InvoiceTest" in [s.identifier for s in r.retrieve("find invoice", types=["test_mapping"]).sources]
    excluded = r.retrieve("find invoice", exclude_types=["job"])
    assert "ChargeJob" not in [c.identifier for c in excluded.candidates]


def test_keyword_strategy_never_creates_the_embedder() -> None:
    r, factory = retriever()
    r.retrieve("find invoice")
    r.retrieve("trace Billing::Invoice")
    r.retrieve("find exactly invoice")
    assert factory.created == 0
    r.retrieve("explain how refunds happen")
    r.retrieve("explain the charge")
    assert factory.created == 1


def test_within_type_fallback_and_type_rank_table() -> None:
    r, factory = retriever()
    result = r.retrieve("find exactly Billing::Invoice", types=["job"])
    # direct hit is a model → filtered away → hard-filtered vector search finds the job.
    assert [s.identifier for s in result.sources] == ["ChargeJob"]
    entry = result.type_rank_context["job"]
    assert entry.source == "within_type_fallback" and entry.top_of_type_global_rank is None
    assert result.context.endswith(
        "\n### Type rank context\n\n"
        "| Type | Source | Rank in unfiltered top-K | Global K | Total in index |\n"
        "|------|--------|--------------------------|----------|----------------|\n"
        f"| job | within_type_fallback | — | {entry.global_k} | 1 |\n"
    )
    assert result.tokens_used == -(-len(result.context) // 4)  # final context, table included
    assert result.assembled_tokens < result.tokens_used
    assert factory.created == 1


def test_type_rank_context_in_top_k_and_absent() -> None:
    r, _ = retriever()
    result = r.retrieve("find charge", types=["job", "mailer"])
    assert result.type_rank_context["job"].source == "in_top_k"
    assert result.type_rank_context["job"].top_of_type_global_rank == 1
    assert result.type_rank_context["mailer"].source == "absent"
    assert result.type_rank_context["mailer"].total_of_type == 0


def test_fallback_skipped_when_every_requested_type_is_absent() -> None:
    r, factory = retriever()
    result = r.retrieve("find invoice", types=["mailer"])
    assert result.sources == () and factory.created == 0


def test_structural_banner_and_trace() -> None:
    r, _ = retriever()
    result = r.retrieve("find invoice", budget=2000)
    assert result.context.startswith(
        "Codebase: 5 searchable entries (3 model entries, 1 job entries). Entries include per-chunk rows"
    )
    assert result.trace.candidate_count >= result.trace.ranked_count > 0
    assert result.trace.strategy == "keyword"
    data = result.to_dict()
    assert data["trace"]["classification"]["intent"] == "locate"
    assert data["results"][0]["sources"] == ["keyword"]
    assert data["results"][0]["file_path"].startswith("app/")


def test_limit_trims_only_the_shown_candidate_list() -> None:
    r, _ = retriever()
    full = r.retrieve("find invoice")
    short = r.retrieve("find invoice", limit=1)
    assert len(short.candidates) == 1 and short.context == full.context


def test_forced_strategy() -> None:
    r, _ = retriever()
    assert r.retrieve("find invoice", strategy="graph").strategy == "graph"


def test_path_scope_applies_before_limits() -> None:
    r, _ = retriever()
    result = r.retrieve("find invoice", path_prefixes=["packs/support"])
    assert [s.identifier for s in result.sources] == ["Support::Ticket"]
    assert result.applied_scope.outcome == "matched" and result.applied_scope.eligible_units == 1
    assert result.type_rank_context is None


def test_package_scope_and_outcomes() -> None:
    r, _ = retriever()
    billing = r.retrieve("explain all invoice", packages=["billing"])
    assert {s.identifier for s in billing.sources} <= {"Billing::Invoice", "Billing::Payment"}
    assert r.retrieve("find zzz", packages=["billing"]).applied_scope.outcome == "no_match"
    assert r.retrieve("find invoice", path_prefixes=["lib/none"]).applied_scope.outcome == "empty_scope"


def test_empty_scope_lists_behave_like_no_scope() -> None:
    r, _ = retriever()
    plain = r.retrieve("find invoice")
    scoped = r.retrieve("find invoice", path_prefixes=[], packages=[])
    assert scoped.applied_scope is None and scoped.context == plain.context


def test_path_normalisation_matches_whole_segments() -> None:
    assert normalize_path("./app//models/") == "app/models"
    assert normalize_path("app/x/..") == "app"
    assert normalize_path(".") == "."
    assert path_matches("app/models/a.rb", ["app/models"]) and not path_matches("app/models_x/a.rb", ["app/models"])
    assert path_matches("anything.rb", ["."])


def test_lexical_mode_never_touches_the_embedder() -> None:
    r, factory = retriever(mode="lexical")
    result = r.retrieve("Billing::Invoice", budget=500)
    assert result.strategy == "lexical" and result.sources[0].identifier == "Billing::Invoice"
    assert result.context.startswith("Mode: lexical")
    assert result.tokens_used <= 500 and factory.created == 0
    scoped = r.retrieve("invoice", path_prefixes=["packs"])
    assert [s.identifier for s in scoped.sources] == ["Support::Ticket"]


def test_store_failures_become_store_errors() -> None:
    stores, embedder = build_fake_index(RECORDS, EDGES)

    def broken(query: str, fields=None):
        raise OSError("disk gone")

    stores.metadata.search = broken
    with pytest.raises(StoreError) as caught:
        Retriever(stores, CountingFactory(embedder), profile="ruby").retrieve("find invoice")
    assert caught.value.store == "metadata"
