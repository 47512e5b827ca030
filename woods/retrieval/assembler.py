"""ContextAssembler: turns ranked candidates into one token-budgeted context string.

Why: an assistant's context window is the scarce resource; the assembler decides which unit
texts fit. Guarantees (Ruby context_assembler.rb @09d3e156, full evidence mode): chunk candidates
collapse to their best-scoring base unit; a structural banner takes at most 10 % of the budget;
the rest splits 65/35 (primary/supporting) or 55/25/20 with framework context; an empty
supporting section hands its budget to primary; framework units appear in exactly one section
(#186); units missing from the metadata store are skipped and counted; a block that does not fit
is truncated only when more than 200 tokens remain, and either way its section stops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from woods.limits import DEFAULT_CONTEXT_BUDGET
from woods.retrieval.candidates import AssembledContext, Candidate, Classification, SourceAttribution
from woods.store.base import MetadataStore, Record
from woods.store.identity import strip_chunk

DEFAULT_BUDGET = DEFAULT_CONTEXT_BUDGET  # tokens; the rationale is in woods.limits
DEFAULT_CHARS_PER_TOKEN = 4.0  # tiktoken cl100k_base averages ~4.4 chars/token on Ruby; 4.0 errs safe
STRUCTURAL_SHARE = 0.10  # the codebase banner never takes more than a tenth of the budget
# Shares of what remains after the banner. With framework context the framework section gets a
# fifth; without, its share is not redistributed (Ruby keeps 65/35).
FRAMEWORK_ACTIVE_SHARES = (("primary", 0.55), ("supporting", 0.25), ("framework", 0.20))
FRAMEWORK_INACTIVE_SHARES = (("primary", 0.65), ("supporting", 0.35))
MIN_USEFUL_TOKENS = 200  # a truncated block smaller than this is noise, not context
TRUNCATION_SAFETY = 0.9  # cut 10 % below the estimate so re-estimation stays within budget
TRUNCATION_MARKER = "\n... [truncated]"
SECTION_SEPARATOR = "\n\n---\n\n"
BLOCK_SEPARATOR = "\n\n"
FRAMEWORK_TYPES = frozenset({"rails_source", "gem_source"})
_RUBY_WHITESPACE = " \t\n\v\f\r\x00"  # Ruby String#strip's whitespace set


def estimate_tokens(text: str, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN) -> int:
    """ceil(characters / chars_per_token); the empty string costs nothing."""
    if not text:
        return 0
    return math.ceil(len(text) / chars_per_token)


def truncate_to_budget(text: str, token_budget: int, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN) -> str:
    if estimate_tokens(text, chars_per_token) <= token_budget:
        return text
    target = int(token_budget * chars_per_token * TRUNCATION_SAFETY)
    return text[: max(target, 0)] + TRUNCATION_MARKER


def format_unit(unit: Record) -> str:
    """`## <identifier> (<type>)\\nFile: <path>\\n\\n<source>`, stripped like Ruby `strip`."""
    identifier = _text(unit.get("identifier"))
    unit_type = _text(unit.get("type"))
    file_path = _text(unit.get("file_path"))
    source = _text(unit.get("source_code"))
    return f"## {identifier} ({unit_type})\nFile: {file_path}\n\n{source}\n".strip(_RUBY_WHITESPACE)


def _text(value: object) -> str:
    return "" if value is None else str(value)


def collapse_chunks(candidates: Sequence[Candidate]) -> list[Candidate]:
    """One candidate per base unit: the highest-scoring (first seen wins ties), in first-appearance order."""
    best: dict[str, Candidate] = {}
    for candidate in candidates:
        base = strip_chunk(candidate.identifier)
        rewritten = candidate if candidate.identifier == base else replace(candidate, identifier=base)
        known = best.get(base)
        if known is None or rewritten.score > known.score:
            best[base] = rewritten
    return list(best.values())


class ContextAssembler:
    """Builds the context for one request; holds no per-request state (safe to share)."""

    def __init__(
        self,
        metadata: MetadataStore,
        *,
        budget: int = DEFAULT_BUDGET,
        chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
    ) -> None:
        self._metadata = metadata
        self.budget = budget
        self.chars_per_token = chars_per_token if chars_per_token > 0 else DEFAULT_CHARS_PER_TOKEN

    def estimate_tokens(self, text: str) -> int:
        return estimate_tokens(text, self.chars_per_token)

    def assemble(
        self,
        candidates: Sequence[Candidate],
        classification: Classification,
        *,
        structural_context: str | None = None,
        budget: int | None = None,
    ) -> AssembledContext:
        effective_budget = self.budget if budget is None else budget
        collapsed = collapse_chunks(candidates)
        units = self._metadata.find_batch([c.identifier for c in collapsed])
        sections: list[tuple[str, str]] = []
        sources: list[SourceAttribution] = []
        tokens_used = 0
        if structural_context is not None:
            banner_budget = int(effective_budget * STRUCTURAL_SHARE)
            banner = truncate_to_budget(structural_context, banner_budget, self.chars_per_token)
            sections.append(("structural", banner))
            tokens_used = self.estimate_tokens(banner)

        budgets = section_budgets(effective_budget - tokens_used, classification.framework_context)
        framework_active = budgets["framework"] > 0
        framework: list[Candidate] = []
        local: list[Candidate] = []
        for candidate in collapsed:
            is_framework = framework_active and _candidate_type(candidate, units) in FRAMEWORK_TYPES
            (framework if is_framework else local).append(candidate)
        supporting = [c for c in local if c.source == "graph_expansion"]
        primary = [c for c in local if c.source != "graph_expansion"]
        if not supporting:
            budgets = {**budgets, "primary": budgets["primary"] + budgets["supporting"], "supporting": 0}

        skipped = 0
        plan = [("primary", primary), ("supporting", supporting)]
        if framework_active:
            plan.append(("framework", framework))
        for name, members in plan:
            if not members:
                continue
            content, attributions, missing = self._section(members, units, budgets[name])
            skipped += missing
            if content:
                sections.append((name, content))
                sources.extend(attributions)

        context = SECTION_SEPARATOR.join(content for _, content in sections)
        return AssembledContext(
            context=context,
            tokens_used=self.estimate_tokens(context),
            budget=effective_budget,
            sources=tuple(dict.fromkeys(sources)),
            sections=tuple(name for name, _ in sections),
            skipped_missing_metadata=skipped,
        )

    def _section(
        self, members: list[Candidate], units: dict[str, Record], budget: int
    ) -> tuple[str, list[SourceAttribution], int]:
        """Blocks by −score (stable: ranked order breaks ties) until the budget runs out."""
        parts: list[str] = []
        attributions: list[SourceAttribution] = []
        used = 0
        missing = 0
        for candidate in sorted(members, key=lambda c: -c.score):
            unit = units.get(candidate.identifier)
            if unit is None:
                missing += 1  # a stale vector: the index needs re-embedding, not "no match"
                continue
            text = format_unit(unit)
            tokens = self.estimate_tokens(text)
            remaining = budget - used
            if tokens <= remaining:
                parts.append(text)
                attributions.append(attribution(candidate, unit))
                used += tokens
                continue
            if remaining > MIN_USEFUL_TOKENS:
                parts.append(truncate_to_budget(text, remaining, self.chars_per_token))
                attributions.append(attribution(candidate, unit, truncated=True))
            break
        return BLOCK_SEPARATOR.join(parts), attributions, missing


def section_budgets(remaining: int, framework_context: bool) -> dict[str, int]:
    shares = FRAMEWORK_ACTIVE_SHARES if framework_context else FRAMEWORK_INACTIVE_SHARES
    budgets = {name: int(remaining * share) for name, share in shares}
    budgets.setdefault("framework", 0)
    return budgets


def attribution(candidate: Candidate, unit: Record, truncated: bool = False) -> SourceAttribution:
    return SourceAttribution(
        identifier=str(unit.get("identifier") or candidate.identifier),
        type=None if unit.get("type") is None else str(unit.get("type")),
        score=candidate.score,
        file_path=None if unit.get("file_path") is None else str(unit.get("file_path")),
        truncated=truncated,
    )


def _candidate_type(candidate: Candidate, units: dict[str, Record]) -> str | None:
    value = candidate.metadata.get("type") if candidate.metadata else None
    if value is None:
        unit = units.get(candidate.identifier)
        value = unit.get("type") if unit else None
    return None if value is None else str(value)
