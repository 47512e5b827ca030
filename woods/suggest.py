"""Closest names: what someone probably meant when a name they typed names no unit.

Why: a made-up or misspelt name (`zorblaxQuuxHandler`, `make_reponse`) otherwise gets confident
hits matched on one of its words ("handler"), or a resolve that lists unrelated files. Saying
"no unit named …; closest: …" — the names of the index nearest by edit distance — is honest and
usually one keystroke from the answer. `woods search` (its `warnings`) and `woods resolve` (its
`suggestions`) both ask this module, so they suggest the same names.

Guarantees: pure functions; names are compared case-insensitively; the order is (distance,
name) — deterministic whatever order the names come in; a name further than `max_distance` of
the wanted one is never suggested.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# At most this many names are suggested: a short list reads as "did you mean", a long one as noise.
MAX_SUGGESTIONS = 3
# Edits allowed by the wanted name's length: one slip in a short name, two in a word, three in a
# long identifier — `make_reponse` → `make_response` (1), `ClientSesion` → `ClientSession` (1),
# a transposition (2) — while names that merely share a prefix stay out.
DISTANCE_STEPS = ((4, 1), (10, 2))
LONG_NAME_DISTANCE = 3


def max_distance(name: str) -> int:
    """The most edits a suggestion for `name` may need: 1 up to 4 characters, 2 up to 10, else 3."""
    for length, distance in DISTANCE_STEPS:
        if len(name) <= length:
            return distance
    return LONG_NAME_DISTANCE


def edit_distance(a: str, b: str, bound: int) -> int:
    """Levenshtein distance of `a` and `b` (insert, delete, substitute cost 1), or `bound + 1`
    when it exceeds `bound`. Only the diagonal band of width 2·bound+1 is computed (a path that
    leaves it costs more than `bound`), and a row whose every cell exceeds `bound` stops early."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    if a == b:
        return 0
    over = bound + 1
    width = len(b)
    previous = [j if j <= bound else over for j in range(width + 1)]
    for i, char_a in enumerate(a, 1):
        low = max(1, i - bound)
        high = min(width, i + bound)
        current = [over] * (width + 1)
        current[0] = i if i <= bound else over
        best = current[0]
        for j in range(low, high + 1):
            value = previous[j - 1] + (char_a != b[j - 1])
            insert = current[j - 1] + 1
            if insert < value:
                value = insert
            delete = previous[j] + 1
            if delete < value:
                value = delete
            if value > over:
                value = over
            current[j] = value
            if value < best:
                best = value
        if best > bound:
            return over
        previous = current
    return previous[width] if previous[width] <= bound else over


def closest(wanted: str, names: Iterable[str], limit: int = MAX_SUGGESTIONS) -> list[str]:
    """The names nearest to `wanted` (case-insensitive edit distance within `max_distance`),
    ordered by (distance, lowercased name, name); the wanted name itself is never suggested.

    A q-gram count filters first: one edit changes at most two of a name's letter pairs, so a
    name within `bound` edits shares at least `len - 1 - 2·bound` pairs with the wanted one (the
    pairs are counted generously, so the filter never drops a name the distance would keep)."""
    target = wanted.lower()
    bound = max_distance(wanted)
    pairs = {target[i : i + 2] for i in range(len(target) - 1)}
    scored: list[tuple[int, str, str]] = []
    seen: set[str] = set()
    for name in names:
        if name in seen or name == wanted:
            continue
        seen.add(name)
        folded = name.lower()
        if abs(len(folded) - len(target)) > bound:
            continue
        needed = max(len(folded), len(target)) - 1 - 2 * bound
        if needed > 0 and sum(folded[i : i + 2] in pairs for i in range(len(folded) - 1)) < needed:
            continue
        distance = edit_distance(target, folded, bound)
        if distance <= bound:
            scored.append((distance, folded, name))
    scored.sort()
    return [name for _distance, _folded, name in scored[:limit]]


def unknown_type_message(unit_type: str, present: Mapping[str, int] | Iterable[str]) -> str:
    """`unknown unit type 'klass'; did you mean class? (types in this index: …)` — the one wording
    every interface uses for a unit type that names nothing."""
    names = sorted(present)
    near = closest(unit_type, names)
    hint = f"; did you mean {' or '.join(near)}?" if near else ""
    return f"unknown unit type {unit_type!r}{hint} (types in this index: {', '.join(names) or 'none'})"


__all__ = ["MAX_SUGGESTIONS", "closest", "edit_distance", "max_distance", "unknown_type_message"]
