"""The Ruby gem's lexical mode: field-aware BM25F over published unit text, and its plain-text assembler.

Why: retrieval without an embedding model (no torch, no vectors) that still ranks by evidence.
Guarantees (Ruby lexical_index.rb / lexical_assembler.rb): an immutable snapshot of every record;
fields identifier (4.0), file_path (2.0), source_code (1.0) and runtime metadata (2.0);
camelCase/acronym-aware Unicode tokenisation minus stop words; an exact identifier match adds
1.0 and ranks in a first tier; eligibility (types / exclusions) applies before the limit; ties
break by storage key; the assembled context never exceeds the budget (4 chars per token).
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from woods.retrieval.candidates import AssembledContext, Candidate, ExecutionResult, SourceAttribution
from woods.retrieval.ruby.classifier import STOP_WORDS
from woods.retrieval.ruby.ranker import ruby_sum
from woods.store.contracts import UnitReader

# Field weights: a name match says most about what a unit *is*, its path and runtime facts
# (callbacks, routes, columns …) next, body text least.
FIELD_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("identifier", 4.0),
    ("file_path", 2.0),
    ("source_code", 1.0),
    ("runtime", 2.0),
)
RUNTIME_FIELDS = ["callbacks", "associations", "validations", "scopes", "concerns", "included_modules", "methods", "instance_methods", "class_methods", "actions", "routes", "columns", "table_name", "description", "purpose", "dependencies"]
DEFAULT_LIMIT = 20
K1 = 1.2  # term-frequency saturation (the usual BM25 value)
B = 0.75  # length normalisation strength (the usual BM25 value)
EXACT_BONUS = 1.0  # an exact identifier hit outranks any amount of body text
CHARS_PER_TOKEN = 4.0  # the lexical assembler's fixed estimate
HEADER = "Mode: lexical (field-aware BM25; ranked top 20; token counts estimated)."
NO_MATCHES = "\nNo lexical matches."
TRUNCATED_MARKER = "\n[Published evidence truncated; use lookup for the full unit.]"


def _is_lower(ch: str) -> bool:
    return unicodedata.category(ch) == "Ll"


def _is_upper(ch: str) -> bool:
    return unicodedata.category(ch) == "Lu"


def _split_lower_upper(text: str) -> str:
    """Ruby gsub(/(\\p{Ll}|\\d)(\\p{Lu})/, '\\1 \\2'): leftmost, non-overlapping."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if i + 1 < len(text) and (_is_lower(ch) or ch in "0123456789") and _is_upper(text[i + 1]):
            out.append(ch + " " + text[i + 1])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _split_acronym(text: str) -> str:
    """Ruby gsub(/(\\p{Lu})(\\p{Lu}\\p{Ll})/, '\\1 \\2'): `HTTPServer` → `HTTP Server`."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if i + 2 < len(text) and _is_upper(ch) and _is_upper(text[i + 1]) and _is_lower(text[i + 2]):
            out.append(ch + " " + text[i + 1 : i + 3])
            i += 3
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _is_term_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LN"


def tokenize(value: Any) -> list[str]:
    """camelCase/acronym boundaries → lowercase → runs of Unicode letters/digits − stop words."""
    text = "" if value is None else str(value)
    lowered = _split_acronym(_split_lower_upper(text)).lower()
    terms: list[str] = []
    current: list[str] = []
    for ch in lowered:
        if _is_term_char(ch):
            current.append(ch)
        elif current:
            terms.append("".join(current))
            current = []
    if current:
        terms.append("".join(current))
    return [t for t in terms if t not in STOP_WORDS]


def values_text(value: Any) -> str:
    """Values of nested hashes/arrays flattened to one space-joined string (keys never count)."""
    if isinstance(value, Mapping):
        return " ".join(values_text(child) for child in value.values())
    if isinstance(value, (list, tuple)):
        return " ".join(values_text(child) for child in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return ""


def runtime_values(unit: Mapping[str, Any]) -> dict[str, Any]:
    raw = unit.get("metadata")
    metadata: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    selected: dict[str, Any] = {}
    for key in RUNTIME_FIELDS:
        value = metadata.get(key)
        if value is None or value is False:  # Ruby `metadata[key] || unit[key]`: only nil/false fall through
            value = unit.get(key)
        if value is not None and value is not False:
            selected[key] = value
    return selected


@dataclass(frozen=True, slots=True)
class _Document:
    key: str
    unit: Mapping[str, Any]
    fields: dict[str, Counter[str]]
    lengths: dict[str, int]


class BM25FSnapshot:
    """An immutable BM25F snapshot of a metadata store's units, built once per retriever (the
    gem's LexicalIndex; renamed here so that "index" means only the index woods builds)."""

    def __init__(self, metadata: UnitReader) -> None:
        documents: list[_Document] = []
        for key in sorted(metadata.all_identifiers()):
            unit = metadata.find(key)
            if not isinstance(unit, Mapping):
                raise ValueError(f"missing unit metadata for {key!r}")
            snapshot = json.loads(json.dumps(unit))
            texts = {
                "identifier": snapshot.get("identifier"),
                "file_path": snapshot.get("file_path"),
                "source_code": snapshot.get("source_code"),
                "runtime": values_text(list(runtime_values(snapshot).values())),
            }
            fields = {name: Counter(tokenize(text)) for name, text in texts.items()}
            lengths = {name: sum(counts.values()) for name, counts in fields.items()}
            documents.append(_Document(key, snapshot, fields, lengths))
        self._documents = tuple(documents)
        self._averages: dict[str, float] = {}
        for name, _ in FIELD_WEIGHTS:
            field_lengths = [doc.lengths[name] for doc in documents]
            self._averages[name] = max(sum(field_lengths) / len(field_lengths), 1.0) if field_lengths else 1.0
        frequencies: Counter[str] = Counter()
        for doc in documents:
            frequencies.update({term for counts in doc.fields.values() for term in counts})
        self._frequencies = frequencies

    def __len__(self) -> int:
        return len(self._documents)

    def execute(
        self,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        types: Sequence[str] | None = None,
        exclude_types: Iterable[str] = (),
        keys: Iterable[str] | None = None,
    ) -> ExecutionResult:
        """Top `limit` documents by (exact tier, −score, key); `keys` restricts to a scope."""
        terms = list(dict.fromkeys(tokenize(query)))
        allowed = {str(t) for t in types} if types else None
        excluded = {str(t) for t in exclude_types}
        eligible_keys = set(keys) if keys is not None else None
        wanted = query.strip(" \t\n\v\f\r\x00").casefold()
        candidates: list[Candidate] = []
        for doc in self._documents:
            if eligible_keys is not None and doc.key not in eligible_keys:
                continue
            unit_type = doc.unit.get("type")
            if allowed is not None and unit_type not in allowed:
                continue
            if allowed is None and unit_type in excluded:
                continue
            score, fields = self._score(doc, terms)
            if str(doc.unit.get("identifier") or "").casefold() == wanted:
                score += EXACT_BONUS
                fields.append("identifier:exact")
            if score <= 0:
                continue
            candidates.append(Candidate(doc.key, score, "lexical", doc.unit, tuple(sorted(fields))))
        candidates.sort(
            key=lambda c: (0 if "identifier:exact" in (c.matched_fields or ()) else 1, -c.score, c.identifier)
        )
        return ExecutionResult(tuple(candidates[:limit]), "lexical", query)

    def _score(self, doc: _Document, terms: list[str]) -> tuple[float, list[str]]:
        fields: list[str] = []
        total_docs = len(self._documents)
        per_field: list[float] = []
        for name, weight in FIELD_WEIGHTS:
            counts = doc.fields[name]
            normalization = K1 * (1 - B + (B * doc.lengths[name] / self._averages[name]))
            contributions: list[float] = []
            for term in terms:
                frequency = counts.get(term, 0)
                if frequency == 0:
                    contributions.append(0.0)
                    continue
                fields.append(f"{name}:{term}")
                df = self._frequencies[term]
                idf = math.log(1 + ((total_docs - df + 0.5) / (df + 0.5)))
                contributions.append(weight * idf * frequency * (K1 + 1) / (frequency + normalization))
            per_field.append(ruby_sum(contributions))
        return ruby_sum(per_field), fields


def evidence_text(candidate: Candidate) -> str:
    unit = candidate.metadata
    source = "" if unit.get("source_code") is None else str(unit.get("source_code"))
    if not any(f.startswith("runtime:") for f in candidate.matched_fields or ()):
        return source
    values = runtime_values(unit)
    return f"Published runtime metadata:\n{json.dumps(values, indent=2, ensure_ascii=False)}\n\n{source}"


class LexicalAssembler:
    """Assembles lexical hits in rank order; charges headers and markers to the same budget."""

    @staticmethod
    def estimate_tokens(text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0

    def assemble(self, candidates: Sequence[Candidate], budget: int) -> AssembledContext:
        limit_chars = int(budget * CHARS_PER_TOKEN)
        context = HEADER + (NO_MATCHES if not candidates else "")
        context = context[:limit_chars]
        sources: list[SourceAttribution] = []
        for candidate in candidates:
            unit = candidate.metadata
            matched = list(candidate.matched_fields or ())
            header = (
                f"\n\n## {_text(unit.get('identifier'))} ({_text(unit.get('type'))})\n"
                f"File: {_text(unit.get('file_path'))}\nMatched: {', '.join(matched)}\n\n"
            )
            remaining = limit_chars - len(context) - len(header)
            if remaining <= 0:
                continue
            body = evidence_text(candidate)
            truncated = len(body) > remaining
            if truncated and remaining <= len(TRUNCATED_MARKER):
                continue
            context += header + (body[: remaining - len(TRUNCATED_MARKER)] + TRUNCATED_MARKER if truncated else body)
            sources.append(
                SourceAttribution(
                    identifier=_text(unit.get("identifier")),
                    type=None if unit.get("type") is None else str(unit.get("type")),
                    score=candidate.score,
                    file_path=None if unit.get("file_path") is None else str(unit.get("file_path")),
                    truncated=truncated,
                    matched_fields=tuple(matched),
                )
            )
            if truncated:
                break
        return AssembledContext(
            context=context,
            tokens_used=self.estimate_tokens(context),
            budget=budget,
            sources=tuple(sources),
            sections=("primary",),
        )


def _text(value: object) -> str:
    return "" if value is None else str(value)
