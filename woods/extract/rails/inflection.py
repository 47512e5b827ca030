"""Rails inflection, statically: singular/plural nouns and constant ↔ path spelling (ActiveSupport's rules for the names apps use)."""

from __future__ import annotations

import functools
import re

# Inflections are pure and the same names recur across a repository's files (associations, table
# and controller names): each function keeps its recent answers. 4096 names cover a large app,
# at a few hundred kilobytes.
_CACHE_SIZE = 4096

# Irregular nouns Rails apps meet in table and association names (singular → plural).
_IRREGULAR: dict[str, str] = {
    "person": "people",
    "man": "men",
    "woman": "women",
    "child": "children",
    "mouse": "mice",
    "goose": "geese",
    "foot": "feet",
    "tooth": "teeth",
    "ox": "oxen",
    "datum": "data",
    "criterion": "criteria",
    "medium": "media",
}
_IRREGULAR_PLURAL = {plural: singular for singular, plural in _IRREGULAR.items()}
# Words whose singular and plural agree (ActiveSupport's uncountables, the common ones).
_UNCOUNTABLE = frozenset(
    {
        "equipment",
        "information",
        "rice",
        "money",
        "species",
        "series",
        "fish",
        "sheep",
        "jeans",
        "police",
        "news",
        "metadata",
        "feedback",
        "staff",
    }
)
# Ordered (pattern, replacement) singularization rules; the first that matches wins.
_SINGULAR_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"(quiz)zes$", r"\1"),
        (r"(matr)ices$", r"\1ix"),
        (r"(vert|ind)ices$", r"\1ex"),
        (r"(alias|status|campus|virus|bus)(es)?$", r"\1"),
        (r"(octop)(us|i)$", r"\1us"),
        (r"(cris|ax|test)es$", r"\1is"),
        (r"(analy|diagno|progno|synop|parenthe|the)ses$", r"\1sis"),
        (r"(shoe|canoe)s$", r"\1"),
        (r"(o)es$", r"\1"),
        (r"([ml])ice$", r"\1ouse"),
        (r"(x|ch|ss|sh|zz)es$", r"\1"),
        (r"(m)ovies$", r"\1ovie"),
        (r"([^aeiouy]|qu)ies$", r"\1y"),
        (r"([lr])ves$", r"\1f"),
        (r"(hive|tive)s$", r"\1"),
        (r"([^f])ves$", r"\1fe"),
        (r"(ss)$", r"\1"),
        (r"us$", "us"),
        (r"s$", ""),
    )
)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def singularize(word: str) -> str:
    """English singular of a lower/snake-case word (`categories` → `category`, `people` → `person`)."""
    head, _, last = word.rpartition("_")
    prefix = f"{head}_" if head else ""
    if last in _UNCOUNTABLE:
        return word
    if last in _IRREGULAR_PLURAL:
        return prefix + _IRREGULAR_PLURAL[last]
    for pattern, replacement in _SINGULAR_RULES:
        if pattern.search(last):
            return prefix + pattern.sub(replacement, last, count=1)
    return word


@functools.lru_cache(maxsize=_CACHE_SIZE)
def pluralize(word: str) -> str:
    """English plural of a snake-case word (`profile` → `profiles`, `company` → `companies`)."""
    head, _, last = word.rpartition("_")
    prefix = f"{head}_" if head else ""
    if last in _UNCOUNTABLE:
        return word
    if last in _IRREGULAR:
        return prefix + _IRREGULAR[last]
    if re.search(r"[^aeiouy]y$", last):
        return prefix + last[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", last):
        return prefix + last + "es"
    return prefix + last + "s"


@functools.lru_cache(maxsize=_CACHE_SIZE)
def camelize(path: str) -> str:
    """`billing/line_item` → `Billing::LineItem` (no acronym table: `api` → `Api`)."""
    segments = [s for s in path.strip("/").split("/") if s]
    return "::".join(
        "".join(part[:1].upper() + part[1:] for part in seg.split("_") if part) for seg in segments
    )


@functools.lru_cache(maxsize=_CACHE_SIZE)
def underscore(constant: str) -> str:
    """`Admin::UsersController` → `admin/users_controller`."""
    parts = []
    for segment in constant.split("::"):
        spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", segment)
        spaced = re.sub(r"([a-z\d])([A-Z])", r"\1_\2", spaced)
        parts.append(spaced.lower())
    return "/".join(parts)


