"""QueryClassifier and strategy selection: the Ruby spec-suite examples (spec §5, checklist 2–8)."""

from __future__ import annotations

import pytest

from woods.retrieval.ruby.classifier import STOP_WORDS, QueryClassifier, extract_keywords, select_strategy

classify = QueryClassifier().classify


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("Where is the User model defined?", "locate"),
        ("What calls UserService.create?", "trace"),
        ("Who calls the authenticate method?", "trace"),
        ("What depends on the User model?", "trace"),
        ("find who calls Billing::Invoice", "trace"),  # trace is evaluated before locate (L8)
        ("Fix the bug in checkout", "debug"),
        ("Add a new endpoint for orders", "implement"),
        ("How does has_many work in Rails?", "framework"),
        ("How does ActiveJob process queues?", "framework"),
        ("Show me the OrderController interface", "reference"),
        ("List all available scopes", "reference"),
        ("Compare User and Admin models", "compare"),
        ("Explain the payment flow", "understand"),
        ("something vague about code", "understand"),
        ("call the service", "understand"),  # bare "call" is not a trace word
    ],
)
def test_intent_examples(query: str, intent: str) -> None:
    assert classify(query).intent == intent


@pytest.mark.parametrize(
    ("query", "scope"),
    [
        ("Show me exactly the User model", "pinpoint"),
        ("The entire authentication system", "comprehensive"),
        ("Files similar to UserService", "exploratory"),
        ("explain the invoice", "focused"),
        ("exactly all of it", "pinpoint"),  # pinpoint is checked before comprehensive
    ],
)
def test_scope_examples(query: str, scope: str) -> None:
    assert classify(query).scope == scope


@pytest.mark.parametrize(
    ("query", "target"),
    [
        ("checkout controller actions", "controller"),
        ("the CreateUser mutation", "graphql"),
        ("Sidekiq worker for imports", "job"),
        ("how does this thing work", None),
        ("How do we get the current user?", None),  # #184: lowercase HTTP verbs are ordinary words
        ("GET the invoices", "route"),
        ("what type of query field", None),  # "type", "query", "field" are not type words
        ("send an email to readers", "mailer"),
        ("perform_later in the worker", "job"),
    ],
)
def test_conservative_target_types(query: str, target: str | None) -> None:
    assert classify(query).target_type == target


def test_framework_context_needs_a_framework_word() -> None:
    assert classify("How does Rails route requests?").framework_context is True
    assert classify("rack middleware order").framework_context is True
    assert classify("railsy things").framework_context is False


def test_keywords_drop_stop_words_short_tokens_and_duplicates() -> None:
    assert extract_keywords("find Support::Ticket ownership") == ("find", "support", "ticket", "ownership")
    assert extract_keywords("User.find") == ("user", "find")
    assert extract_keywords("a x the user User USER") == ("user",)
    assert len(STOP_WORDS) == 51


def test_keywords_lowercase_unicode_but_split_non_ascii_letters() -> None:
    # Ruby: downcase is Unicode, but [^\w\s] with ASCII \w turns É into a separator.
    assert extract_keywords("ÉCLAIR payment") == ("clair", "payment")


@pytest.mark.parametrize(
    ("query", "strategy"),
    [
        ("trace Billing::Invoice", "graph"),
        ("How does Rails handle ActiveRecord callbacks?", "keyword"),
        ("find exactly Billing::CollectPayment", "direct"),
        ("Show me all models related to users", "hybrid"),
        ("explain all payment refunds", "hybrid"),
        ("find idempotency_key", "keyword"),
        ("How are refunds prevented?", "vector"),
        ("Fix the broken checkout", "vector"),
    ],
)
def test_strategy_table(query: str, strategy: str) -> None:
    assert select_strategy(classify(query)) == strategy
