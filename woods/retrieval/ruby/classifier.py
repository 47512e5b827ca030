"""QueryClassifier: intent, scope, target type, framework context and keywords of a query.

Why: the Ruby gem picks its search strategy from a heuristic reading of the query; parity needs
the same word lists in the same order. Guarantees: patterns are case-insensitive, word-bounded
alternations evaluated in the listed order (first match wins); `\\b`/`\\w`/`\\s` are ASCII-only
(`re.ASCII`, as in Ruby) while lowercasing is Unicode (`str.lower`, as Ruby `String#downcase`).
"""

from __future__ import annotations

import re

from woods.retrieval.candidates import Classification

INTENTS = ("understand", "locate", "trace", "debug", "implement", "reference", "compare", "framework")
SCOPES = ("pinpoint", "focused", "exploratory", "comprehensive")

# The Ruby STOP_WORDS set (51 words); also used by the graph seeder and the lexical tokenizer.
STOP_WORDS = frozenset(
    ["the", "a", "an", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "do", "does", "did", "will", "would", "could", "should", "may", "might", "can", "shall", "in", "on", "at", "to", "for", "of", "and", "or", "but", "not", "with", "by", "from", "as", "this", "that", "these", "those", "it", "its", "how", "what", "when", "where", "why", "who", "which"]
)

_FLAGS = re.IGNORECASE | re.ASCII


def _words(alternation: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + alternation + r")\b", _FLAGS)


# Intent patterns in evaluation order. `trace` precedes `locate` (CHANGELOG L8: "find who calls X"
# is a trace). Bare "call" is not a trace word; "calls" and "called by" are.
INTENT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("trace", _words(r"trace|follow|track|call(?:s|ed by)|depends on|used by|who calls|what calls")),
    ("locate", _words(r"where|find|which file|locate|look for|search for")),
    ("debug", _words(r"bug|error|fix|broken|failing|wrong|issue|problem|crash|exception")),
    ("implement", _words(r"implement|add|create|build|write|make|generate")),
    ("compare", _words(r"compare|difference|vs|versus|between|contrast")),
    (
        "framework",
        _words(
            r"how does rails|what does rails|rails .+ work|work.+\brails\b|in rails\b|activerecord"
            r"|actioncontroller|activejob|actionmailer|actioncable|actiontext|activestorage"
            r"|solid_queue|solid_cache|solid_cable|kamal|propshaft|importmap|hotwire|turbo"
            r"|stimulus|zeitwerk"
        ),
    ),
    ("reference", _words(r"show me|what is|what are|list|options for|api|interface|signature")),
    ("understand", _words(r"how|why|explain|understand|what happens|describe|overview")),
)
DEFAULT_INTENT = "understand"

SCOPE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pinpoint", _words(r"exactly|specific|this one|just the|only the")),
    ("comprehensive", _words(r"all|every|entire|whole|complete|everything")),
    ("exploratory", _words(r"related|around|near|similar|like|associated")),
)
DEFAULT_SCOPE = "focused"

# Conservative target-type words (#184): a soft ranking hint only. Bare lowercase HTTP verbs,
# "query", "type", "field", "email" and "perform" are ordinary words, not type signals.
TARGET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("model", _words(r"model|activerecord|association|schema|table|column|scope|validation")),
    (
        "controller",
        _words(r"controller|action|route|endpoint|api|request|response|filter|callback"),
    ),
    ("service", _words(r"service|interactor|operation|command|use.?case|business.?logic")),
    ("job", _words(r"job|worker|background|async|sidekiq|queue|perform.?(?:later|now|async)")),
    (
        "mailer",
        _words(
            r"mailer|mail|send.?mail|deliver.?(?:later|now)|notification\s+email"
            r"|email\s+(?:template|notification|deliver\w*)|send\w*\s+(?:an\s+)?email"
        ),
    ),
    ("graphql", _words(r"graphql|mutation|resolver")),
    ("concern", _words(r"concern|mixin|module|included|extend")),
    # Only the uppercase HTTP verbs are route words (case-sensitive second alternative).
    (
        "route",
        re.compile(r"(?i:\b(?:route|path|url|uri|http)\b)|\b(?:GET|POST|PUT|PATCH|DELETE)\b", re.ASCII),
    ),
    ("middleware", _words(r"middleware|rack|request.?pipeline|before.?action")),
    ("i18n", _words(r"i18n|translation|locale|internationalization|t\(|translate")),
    ("pundit_policy", _words(r"pundit|authorize|policy|allowed|permitted")),
    ("configuration", _words(r"config|initializer|environment|setting|configure")),
    ("engine", _words(r"engine|mountable|mount|railtie|plugin|isolated.?namespace")),
    ("view_template", _words(r"view|template|partial|render|erb|layout|html")),
    (
        "migration",
        _words(
            r"migration|migrate|schema.?change|add.?column|remove.?column|create.?table"
            r"|drop.?table|db.?migrate"
        ),
    ),
    (
        "action_cable_channel",
        _words(
            r"action.?cable|websocket|broadcast|cable.?channel|subscription.?channel|realtime"
            r"|real.?time"
        ),
    ),
    (
        "scheduled_job",
        _words(
            r"schedule[dr]?|recurring|cron|periodic|every\s+\d|daily|hourly|weekly"
            r"|solid.?queue.*recur|sidekiq.?cron|whenever"
        ),
    ),
    ("rake_task", _words(r"rake|rake.?task|lib.?tasks?|maintenance.?script|batch.?script")),
)

FRAMEWORK_CONTEXT_PATTERN = _words(
    r"rails|activerecord|actioncontroller|activejob|actionmailer|activesupport|rack|middleware"
)

_NON_WORD = re.compile(r"[^\w\s]", re.ASCII)
_WHITESPACE = re.compile(r"\s+", re.ASCII)
MIN_KEYWORD_LENGTH = 2  # Ruby drops one-character tokens ("a", "x") as noise.


def _first_match(patterns: tuple[tuple[str, re.Pattern[str]], ...], query: str) -> str | None:
    for name, pattern in patterns:
        if pattern.search(query):
            return name
    return None


def extract_keywords(query: str) -> tuple[str, ...]:
    """Lowercase, punctuation → space, split, drop stop words and short tokens, dedupe in order."""
    cleaned = _NON_WORD.sub(" ", query.lower())
    seen: dict[str, None] = {}
    for token in _WHITESPACE.split(cleaned):
        if token and token not in STOP_WORDS and len(token) >= MIN_KEYWORD_LENGTH:
            seen.setdefault(token, None)
    return tuple(seen)


class QueryClassifier:
    """Classifies a query the way the Ruby gem does (stateless; safe to share)."""

    def classify(self, query: str) -> Classification:
        return Classification(
            intent=_first_match(INTENT_PATTERNS, query) or DEFAULT_INTENT,
            scope=_first_match(SCOPE_PATTERNS, query) or DEFAULT_SCOPE,
            target_type=_first_match(TARGET_PATTERNS, query),
            framework_context=bool(FRAMEWORK_CONTEXT_PATTERN.search(query)),
            keywords=extract_keywords(query),
        )


def select_strategy(classification: Classification) -> str:
    """Ruby `select_strategy`: the search strategy for a classification."""
    intent, scope = classification.intent, classification.scope
    if intent == "trace":
        return "graph"
    if intent == "framework":
        return "keyword"
    if intent in ("locate", "reference") and scope == "pinpoint":
        return "direct"
    if scope in ("comprehensive", "exploratory"):
        return "hybrid"
    if intent in ("locate", "reference"):
        return "keyword"
    return "vector"
