"""Code-aware ranking signals: small pure functions, each measured on its own before it stayed.

Why separate: the search engine (`code_search.py`) gathers evidence from the stores; these
functions only turn evidence into numbers, so each can be tested and ablated in isolation.
Every function is deterministic and reads nothing but its arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from woods.paths import path_roles
from woods.tokens import split_identifier

if TYPE_CHECKING:
    from woods.store.metadata import UnitSummary

# Types that define a named thing a symbol query is usually after (over a method of the same name).
TYPE_DEFINITIONS = frozenset(
    {"class", "module", "struct", "interface", "trait", "enum", "type", "type_alias", "protocol", "object",
     "record", "union", "namespace", "typedef", "model", "controller", "service", "job", "mailer", "concern",
     "policy", "serializer", "poro", "lib", "helper", "validator", "component", "view_component", "impl"}
)
CALLABLES = frozenset({"function", "method", "macro", "constructor", "test"})
# Constructors by their languages' names: they set a container up and rarely answer a question
# about what it does, so they never take its place at the head of a file.
CONSTRUCTOR_NAMES = frozenset({"initialize", "__init__", "constructor", "init", "new", "__construct"})


def is_constructor(unit: UnitSummary) -> bool:
    return unit.type == "constructor" or unit.name in CONSTRUCTOR_NAMES


def minmax(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores rescaled to [0, 1] (all equal → all 1.0; empty → empty)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high - low <= 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {key: (value - low) / (high - low) for key, value in scores.items()}


def scaled_to_max(scores: Mapping[str, float], floor: float = 0.0) -> dict[str, float]:
    """Scores divided by the best one, or by `floor` when the best is lower (a zero bottom keeps
    absolute gaps: BM25 has a natural zero; the floor keeps a leg whose best evidence is weak
    from being stretched to full strength)."""
    if not scores:
        return {}
    high = max(max(scores.values()), floor)
    if high <= 0:
        return dict.fromkeys(scores, 0.0)
    return {key: max(0.0, value) / high for key, value in scores.items()}


def rrf(rankings: Iterable[Sequence[str]], k: float = 60.0) -> dict[str, float]:
    """Reciprocal rank fusion: Σ 1/(k + rank) over the rankings a key appears in (rank from 1)."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    return fused


def role_penalty(path: str, asked: frozenset[str], factors: Mapping[str, float]) -> float:
    """The multiplier a file's roles earn (tests, examples, vendored …), 1.0 for library code or
    for roles the query asks for. Several roles multiply."""
    return role_factor(path_roles(path), asked, factors)


def role_factor(roles: Iterable[str], asked: frozenset[str], factors: Mapping[str, float]) -> float:
    """`role_penalty` for roles already read off a path (`woods.paths.path_roles`)."""
    factor = 1.0
    for role in roles:
        if role not in asked:
            factor *= factors.get(role, 1.0)
    return factor


def name_match(unit_name: str, names: Sequence[str]) -> float:
    """How exactly a unit's own name matches a name the query gives: 1.0 same spelling, 0.7 same
    letters in another case, with `_` removed (`dispatchRequest` ~ `dispatch_request`) or without
    a leading `$` (`$ZodType`, the JavaScript convention for a core or internal type), 0."""
    return name_matcher(names)(unit_name)


def fold_name(name: str) -> str:
    """A name as `name_match` compares it loosely: lower-case, no `_`, no leading `$`."""
    return name.lower().replace("_", "").lstrip("$")


def name_matcher(names: Sequence[str]) -> Callable[[str], float]:
    """`name_match` against fixed `names` (folded once, for ranking hundreds of units)."""
    exact = frozenset(names)
    folded = frozenset(fold_name(name) for name in names)

    def match(unit_name: str) -> float:
        if not exact or not unit_name:
            return 0.0
        if unit_name in exact:
            return 1.0
        return 0.7 if fold_name(unit_name) in folded else 0.0

    return match


def best_per_group(scores: Mapping[str, float], group_of: Callable[[str], str]) -> dict[str, str]:
    """group → its key of highest score (ties: the smallest key), in one pass."""
    best: dict[str, str] = {}
    for key, score in scores.items():
        group = group_of(key)
        held = best.get(group)
        if held is None or score > scores[held] or (score == scores[held] and key < held):
            best[group] = key
    return best


def path_words(path: str) -> frozenset[str]:
    """The identifier parts of a file's stem and of its parent directory's name
    (`src/routing/dispatcher.py` → dispatcher, routing)."""
    directory, _, name = path.rpartition("/")
    parent = directory.rpartition("/")[2]
    stem = name.split(".", 1)[0]
    parts: set[str] = set()
    for segment in (stem, parent):
        if segment and segment not in (".", ".."):
            parts.update(split_identifier(segment))
    return frozenset(parts)


def word_share(parts: frozenset[str], words: frozenset[str], heads: frozenset[str] | None = None) -> float:
    """Share of `words` found among `parts` (a file's `path_words`), with prefix tolerance for
    word forms (`dispatcher` ~ `dispatch`, `routing` ~ `route`): 0 … 1. `heads` (`word_heads` of
    `parts`), when given, spares the prefix test for words no part can match."""
    if not words or not parts:
        return 0.0
    matched = 0
    for word in words:
        # Stems of four letters or more share their first four: a cheap test before `_same_stem`.
        head = word[:_STEM_MIN]
        if word in parts or (
            (heads is None or head in heads)
            and any(part[:_STEM_MIN] == head and _same_stem(word, part) for part in parts)
        ):
            matched += 1
    return matched / len(words)


def word_heads(parts: Iterable[str]) -> frozenset[str]:
    """The first `_STEM_MIN` letters of each part: `word_share`'s prefix test can only match a
    word with one of these heads."""
    return frozenset(part[:_STEM_MIN] for part in parts)


def path_word_match(path: str, words: frozenset[str]) -> float:
    """Share of the query's words found in the file's stem or its parent directory's name
    (`word_share` of `path_words`): 0 … 1."""
    return word_share(path_words(path), words) if words else 0.0


# A versioned directory: `v3/`, `v4/` (an API kept in several versions side by side).
_VERSION_DIR = re.compile(r"(?:^|/)v(\d+)/")


def older_versions(paths: Iterable[str], words: frozenset[str]) -> frozenset[str]:
    """The paths below a versioned directory (`src/v3/…`) that has a newer sibling among `paths`
    (`src/v4/…`): the older copy of an API a library keeps for compatibility. A version the
    question names (`v3`) is never older."""
    newest: dict[str, int] = {}
    located: dict[str, tuple[str, int]] = {}
    for path in paths:
        match = _VERSION_DIR.search(path)
        if match is None:
            continue
        parent, version = path[: match.start()], int(match.group(1))
        located[path] = (parent, version)
        newest[parent] = max(version, newest.get(parent, version))
    return frozenset(
        path for path, (parent, version) in located.items()
        if version < newest[parent] and f"v{version}" not in words
    )


def file_named_after(path: str, names: Iterable[str]) -> float:
    """1.0 when the file's name without its extension is one of `names` (case and `_` ignored:
    `client_session.py` for ClientSession, `SqlMapper.cs` for SqlMapper); 0.5 when a name is only
    the first part of a dotted file name (`SqlMapper.Async.cs`, a partial of the same class); 0."""
    base = path.rpartition("/")[2]  # a repository-relative file path: its last segment is the name
    full = base.rsplit(".", 1)[0] if "." in base else base
    first = full.split(".", 1)[0]
    folded = {n.lower().replace("_", "") for n in names}
    if full.lower().replace("_", "") in folded:
        return 1.0
    if first != full and first.lower().replace("_", "") in folded:
        return 0.5
    return 0.0


# The shortest word `_same_stem` compares by prefix.
_STEM_MIN = 4


def _same_stem(a: str, b: str, minimum: int = _STEM_MIN) -> bool:
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return len(shorter) >= minimum and longer.startswith(shorter[: max(minimum, len(shorter) - 2)])


def diversify(
    ordered: Sequence[tuple[str, str, float]], decay: float, free_per_file: int = 1
) -> list[tuple[str, float]]:
    """Re-order (key, file, score) triples so one file does not fill the list: the n-th unit of a
    file beyond `free_per_file` has its score multiplied by decay**(n - free_per_file). Input must
    be in descending score order; ties break by key."""
    seen: dict[str, int] = {}
    adjusted: list[tuple[str, float]] = []
    for key, file_path, score in ordered:
        count = seen.get(file_path, 0)
        factor = decay ** max(0, count + 1 - free_per_file) if count >= free_per_file else 1.0
        adjusted.append((key, score * factor))
        seen[file_path] = count + 1
    adjusted.sort(key=lambda item: (-item[1], item[0]))
    return adjusted


def stem_key(path: str) -> str:
    """A file's name before its first dot, lower-cased, `_` and `-` removed: what a name the query
    gives is compared with (`json_element.py`, `JsonElement.java` → `jsonelement`)."""
    name = path.rpartition("/")[2].split(".", 1)[0]
    return name.lower().replace("_", "").replace("-", "")


def hub_shares(
    best: Mapping[str, float], links: Iterable[tuple[str, str]], top: int, referenced: float = 1.0
) -> dict[str, float]:
    """How much of the question's strongest files each file is linked with: for every file of
    `best` (file → its best score), the summed scores of the `top` best other files it references
    — or, weighted by `referenced`, is referenced by — (`links`: (source file, target file)
    pairs), over the `top` files' total: 0 … 1. A manager, registry or main class that uses the
    retrieved parts scores high even when its own words match the question less than each part's
    do; a contract the parts implement (they reference it) gets `referenced` of that."""
    leaders = sorted(best, key=lambda f: (-best[f], f))[:top]
    total = sum(best[f] for f in leaders) or 1.0
    lead = frozenset(leaders)
    uses: dict[str, set[str]] = {}
    used_by: dict[str, set[str]] = {}
    for source, target in links:
        if target in lead:
            uses.setdefault(source, set()).add(target)
        if source in lead:
            used_by.setdefault(target, set()).add(source)
    shares = {}
    for f in best:
        out = uses.get(f, set())
        back = used_by.get(f, set()) - out
        shares[f] = (sum(best[g] for g in out if g != f) + referenced * sum(best[g] for g in back if g != f)) / total
    return shares
