"""Lexical mode: tokenisation, BM25F, exact tier, eligibility, assembler budget (spec §2.9)."""

from __future__ import annotations

import math

import pytest

from tests.retrieval_fakes import InMemoryMetadataStore, make_record
from woods.retrieval.candidates import Candidate
from woods.retrieval.ruby.lexical import HEADER, TRUNCATED_MARKER, BM25FSnapshot, LexicalAssembler, tokenize
from woods.store.identity import typed_key


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("ÉclairPayment", ["éclair", "payment"]),
        ("charge_card.rb", ["charge", "card", "rb"]),
        ("HTTPServer", ["http", "server"]),
        ("parseJSON2Html", ["parse", "json2", "html"]),
        ("the Invoice of a user", ["invoice", "user"]),
    ],
)
def test_tokenize(text: str, terms: list[str]) -> None:
    assert tokenize(text) == terms


def index(records) -> BM25FSnapshot:
    return BM25FSnapshot(InMemoryMetadataStore(records))


def test_bm25f_score_matches_the_formula() -> None:
    records = {
        "Invoice": make_record("Invoice", file_path="app/models/invoice.rb", source_code="class Invoice\nend\n"),
        "Payment": make_record("Payment", file_path="app/models/payment.rb", source_code="pay the invoice\n"),
    }
    result = index(records).execute("payment")
    [hit] = result.candidates
    assert hit.identifier == "Payment"
    n, df = 2, 1
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))

    def part(weight: float, tf: int, length: int, avg: float) -> float:
        norm = 1.2 * (1 - 0.75 + 0.75 * length / avg)
        return weight * idf * tf * 2.2 / (tf + norm)

    # identifier: 1 token each (avg 1.0); path: app models payment rb (4, avg 4); source: Invoice has
    # class+invoice+end (3), Payment has pay+invoice (2, "the" is a stop word) → avg 2.5; runtime empty.
    # "payment" also equals the identifier case-insensitively: +1.0 and the exact tier.
    expected = part(4.0, 1, 1, 1.0) + part(2.0, 1, 4, 4.0) + 1.0
    assert hit.score == pytest.approx(expected)
    assert hit.matched_fields == ("file_path:payment", "identifier:exact", "identifier:payment")


def test_exact_identifier_tier_beats_term_rich_documents() -> None:
    records = {
        "Refund": make_record("Refund", source_code="x\n"),
        "RefundLog": make_record("RefundLog", source_code="refund " * 50),
    }
    result = index(records).execute("refund")
    assert [c.identifier for c in result.candidates] == ["Refund", "RefundLog"]
    assert "identifier:exact" in result.candidates[0].matched_fields


def test_typed_duplicates_both_kept_and_ties_break_by_key() -> None:
    lib, model = typed_key("Shared", "lib"), typed_key("Shared", "model")
    records = {model: make_record("Shared", "model"), lib: make_record("Shared", "lib")}
    hits = index(records).execute("Shared").candidates
    assert [c.identifier for c in hits] == sorted([lib, model])


def test_runtime_metadata_matches() -> None:
    records = {"User": make_record("User", metadata={"callbacks": [{"kind": "before_save", "method": "normalize"}]})}
    [hit] = index(records).execute("normalize").candidates
    assert "runtime:normalize" in hit.matched_fields


def test_eligibility_applies_before_the_limit() -> None:
    records = {f"T{i}": make_record(f"T{i}", "test_mapping", source_code="invoice\n") for i in range(30)}
    records["Invoice"] = make_record("Invoice", source_code="class\n")
    idx = index(records)
    assert [c.identifier for c in idx.execute("invoice", exclude_types=["test_mapping"]).candidates] == ["Invoice"]
    assert len(idx.execute("invoice", types=["test_mapping"]).candidates) == 20


def test_stop_word_only_query_matches_nothing() -> None:
    assert index({"A": make_record("A")}).execute("the of and").candidates == ()


def test_assembler_reports_no_matches_and_respects_tiny_budgets() -> None:
    empty = LexicalAssembler().assemble([], 1000)
    assert empty.context == HEADER + "\nNo lexical matches."
    for budget in (1, 3, 20, 40, 200):
        unit = make_record("Big", source_code="x" * 5000)
        result = LexicalAssembler().assemble([Candidate("Big", 1.0, "lexical", unit, ("identifier:big",))], budget)
        assert result.tokens_used <= budget
        assert len(result.context) <= budget * 4


def test_assembler_truncates_with_marker_and_matched_line() -> None:
    unit = make_record("Big", source_code="x" * 5000)
    result = LexicalAssembler().assemble([Candidate("Big", 1.0, "lexical", unit, ("identifier:big",))], 300)
    assert "Matched: identifier:big" in result.context
    assert result.context.endswith(TRUNCATED_MARKER)
    assert result.sources[0].truncated is True
