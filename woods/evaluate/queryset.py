"""Query sets: the Ruby evaluation format (`{"queries": [{"query", "expected_units", …}]}`).

Why: the same file drives the Ruby gem's evaluator and ours, so results compare one to one.
Guarantees: every query has a non-empty `query` string and a list of expected identifiers;
optional `id` (default `q<n>`), `types`, `budget` (positive int), `strategy` (a tag used to
group aggregates), `intent`, `scope`, `tags`; a malformed file raises QuerySetError.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from woods.errors import QuerySetError as QuerySetError


@dataclass(frozen=True, slots=True)
class EvalQuery:
    id: str
    query: str
    expected_units: tuple[str, ...]
    strategy: str | None = None
    types: tuple[str, ...] | None = None
    budget: int | None = None
    intent: str | None = None
    scope: str | None = None
    tags: tuple[str, ...] = ()


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise QuerySetError(f"{where} must be a list of strings")
    return tuple(value)


def parse_query(entry: Any, position: int) -> EvalQuery:
    where = f"queries[{position}]"
    if not isinstance(entry, dict):
        raise QuerySetError(f"{where} must be an object")
    query = entry.get("query")
    if not isinstance(query, str) or not query.strip():
        raise QuerySetError(f"{where}.query must be a non-empty string")
    budget = entry.get("budget")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0):
        raise QuerySetError(f"{where}.budget must be a positive integer")
    types = entry.get("types")
    return EvalQuery(
        id=str(entry.get("id") or f"q{position + 1}"),
        query=query,
        expected_units=_string_list(entry.get("expected_units", []), f"{where}.expected_units"),
        strategy=None if entry.get("strategy") is None else str(entry["strategy"]),
        types=None if types is None else _string_list(types, f"{where}.types"),
        budget=budget,
        intent=entry.get("intent"),
        scope=entry.get("scope"),
        tags=_string_list(entry.get("tags", []), f"{where}.tags"),
    )


def load_query_set(path: str | os.PathLike[str]) -> tuple[EvalQuery, ...]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise QuerySetError(f"cannot read query set {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        raise QuerySetError(f"{path}: expected an object with a `queries` list")
    queries = tuple(parse_query(entry, i) for i, entry in enumerate(data["queries"]))
    ids = [q.id for q in queries]
    if len(set(ids)) != len(ids):
        raise QuerySetError(f"{path}: query ids must be unique")
    return queries
