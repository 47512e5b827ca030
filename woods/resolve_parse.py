"""Parse an English reference ("the json method of ClientResponse") into a structured one.

Why: people and agents name code in sentences as often as in identifiers — "the APIRouter class",
"the jsonable_encoder function in fastapi.encoders", "ClientResponse's json", "json in
client_reqrep.py". Sent to search, such a phrase comes back ambiguous although it names exactly
one definition. Parsed into (name, kind, container), it resolves deterministically.

Guarantees: pure (no index, no I/O); total (any text returns a `StructuredRef` or None, never
raises); conservative — a phrase is parsed only when it has one of the shapes below and its name
looks like an identifier, so free text ("how does routing work") stays None and goes to search.

Shapes (keywords case-insensitive; a leading "the"/"a"/"an", surrounding back-quotes and a
trailing `()`/`?`/`.` are ignored):

- `NAME KIND` / `KIND NAME`                          the APIRouter class, function parse_query
- `… (of|on|in|from|inside|defined in) CONTAINER`     json method of ClientResponse, json in x.py
- `… in the CONTAINER (class|module|file|package)`   json in the ClientResponse class
- `CONTAINER's NAME [KIND]`                           ClientResponse's json (method)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

# The longest phrase worth parsing; past it the text is a question for search, not a reference.
MAX_PHRASE_WORDS = 12


class ContainerKind(StrEnum):
    """What the container of a phrase is: the class that owns the name, the module or file it is
    in, or unknown ("json in Foo": a class, a module or a file named Foo)."""

    OWNER = "owner"
    MODULE = "module"
    FILE = "file"
    ANY = "any"


# Kind words -> the unit-type family they mean. Families, not single types: "the X class" is a
# Go struct, a Rust struct or a Rails model as much as a Python class.
CALLABLE = "callable"
CLASS_LIKE = "class_like"
MODULE = "module"
KIND_WORDS: dict[str, str] = {
    "method": CALLABLE, "methods": CALLABLE, "function": CALLABLE, "functions": CALLABLE, "func": CALLABLE,
    "fn": CALLABLE, "def": CALLABLE, "procedure": CALLABLE, "action": CALLABLE, "callback": CALLABLE,
    "macro": CALLABLE,
    "class": CLASS_LIKE, "classes": CLASS_LIKE, "struct": "struct", "interface": "interface",
    "protocol": "interface", "trait": "trait", "enum": "enum", "type": CLASS_LIKE, "record": CLASS_LIKE,
    "model": CLASS_LIKE, "controller": CLASS_LIKE, "object": CLASS_LIKE, "constant": "constant",
    "const": "constant", "module": MODULE, "mod": MODULE, "package": MODULE, "namespace": MODULE,
    "concern": MODULE, "mixin": MODULE, "route": "route", "task": "rake_task", "table": "database_table",
}
_CALLABLE_TYPES = frozenset({"method", "function", "macro", "callback", "constructor"})
# Unit types that are not class-like: callables, modules, documents, tests, implementation blocks
# (Rust `impl`, Haskell `instance`) and the Rails non-class units.
_NOT_CLASS_LIKE = _CALLABLE_TYPES | frozenset(
    {"module", "route", "rake_task", "database_table", "concern", "document", "test", "impl", "instance"}
)
# Families that name one or a few specific types.
_FAMILY_TYPES: dict[str, frozenset[str]] = {
    CALLABLE: _CALLABLE_TYPES,
    MODULE: frozenset({"module", "concern"}),
    "struct": frozenset({"struct", "class", "type"}),
    "interface": frozenset({"interface", "trait", "protocol", "type"}),
    "trait": frozenset({"trait", "interface"}),
    "enum": frozenset({"enum", "type"}),
    "route": frozenset({"route"}),
    "rake_task": frozenset({"rake_task"}),
    "database_table": frozenset({"database_table"}),
}
# Container words after the container ("in the Foo class", "in the x module", "in the x.py file").
_CONTAINER_WORDS: dict[str, ContainerKind] = {
    "class": ContainerKind.OWNER, "struct": ContainerKind.OWNER, "interface": ContainerKind.OWNER,
    "trait": ContainerKind.OWNER, "enum": ContainerKind.OWNER, "type": ContainerKind.OWNER,
    "model": ContainerKind.OWNER, "controller": ContainerKind.OWNER, "object": ContainerKind.OWNER,
    "module": ContainerKind.MODULE, "package": ContainerKind.MODULE, "namespace": ContainerKind.MODULE,
    "mod": ContainerKind.MODULE, "crate": ContainerKind.MODULE, "file": ContainerKind.FILE,
}
# Prepositions between a name and its container: "of"/"on" say the container owns the name;
# "in"/"from"/"inside"/"within" may mean a class, a module or a file.
_OWNER_PREPOSITIONS = frozenset({"of", "on"})
_PLACE_PREPOSITIONS = frozenset({"in", "from", "inside", "within", "under"})
_ARTICLES = frozenset({"the", "a", "an"})
_VERBS = frozenset({"defined", "declared", "implemented", "located", "found"})

# An identifier in any indexed language's spelling, qualified or not (`json`, `save!`, `empty?`,
# `Foo::Bar#baz`, `pkg.mod.f`, `src/x:Y`, `$http`).
_NAME = re.compile(r"\A[A-Za-z_$][\w$]*(?:(?:::|[#./:])[A-Za-z_$][\w$]*)*[!?=]?\Z")
# A file path: words joined by `/` (`lib/x`); a dotted word is a file only when its extension is
# an indexed language's (`client_reqrep.py`), otherwise a module (`fastapi.encoders`).
_FILE = re.compile(r"\A[\w.-]+(?:/[\w.-]+)+\Z")
# A container may also be a module or file stem with dashes (`json-schema-processors`).
_CONTAINER_NAME = re.compile(r"\A[A-Za-z_$][\w$-]*(?:(?:::|[#./:])[\w$-]+)*\Z")
_POSSESSIVE = re.compile(r"\A(?P<container>\S+?)(?:'s|’s|'|’)\Z")
_TRIM = "`\"'“”‘’"


@dataclass(frozen=True, slots=True)
class StructuredRef:
    """A parsed English reference: the `name` (maybe qualified), the unit-type family its `kind`
    word says (None: any), and the `container` that narrows it (None: none given)."""

    name: str
    kind: str | None = None
    container: str | None = None
    container_kind: ContainerKind = ContainerKind.ANY


def kind_types(kind: str, present: frozenset[str] | set[str]) -> frozenset[str]:
    """The unit types of `present` (an index's types) that a kind family covers."""
    if kind == CLASS_LIKE or kind == "constant":
        return frozenset(t for t in present if t not in _NOT_CLASS_LIKE)
    return frozenset(t for t in present if t in _FAMILY_TYPES.get(kind, frozenset()))


def _clean(word: str) -> str:
    word = word.strip(_TRIM)
    while word.endswith(("()", "?", ".", ",", ";")) and not _is_ruby_predicate(word):
        word = word[:-2] if word.endswith("()") else word[:-1]
        word = word.strip(_TRIM)
    return word


def _is_ruby_predicate(word: str) -> bool:
    """`empty?` is a Ruby method name, not a question mark ending a sentence."""
    return word.endswith("?") and len(word) > 1 and (word[-2].isalnum() or word[-2] == "_") and "?" not in word[:-1]


def _is_name(word: str) -> bool:
    """Identifier-shaped and not an article (a kind word may be a name: `route`, `type`, `task`)."""
    return bool(_NAME.match(word)) and word.lower() not in _ARTICLES


def _is_kind(word: str) -> bool:
    return word.lower() in KIND_WORDS


def _container(words: list[str], default: ContainerKind) -> tuple[str, ContainerKind] | None:
    """The container of the words after a preposition: `[the] NAME [class|module|file]`."""
    if words and words[0].lower() in _ARTICLES:
        words = words[1:]
    kind = default
    if len(words) == 2 and words[1].lower() in _CONTAINER_WORDS:
        kind = _CONTAINER_WORDS[words[1].lower()]
        words = words[:1]
    elif len(words) == 2 and words[0].lower() in _CONTAINER_WORDS:  # "in module x", "in file x.py"
        kind = _CONTAINER_WORDS[words[0].lower()]
        words = words[1:]
    if len(words) != 1:
        return None
    name = _clean(words[0])
    from woods.extract import language_for  # the extractors' table: only a phrase naming a file needs it

    if (_FILE.match(name) or language_for(name) is not None) and (kind is ContainerKind.ANY or kind is ContainerKind.FILE):
        return name, ContainerKind.FILE
    if not (_is_name(name) or _CONTAINER_NAME.match(name)):
        return None
    return name, kind


def _name_and_kind(words: list[str]) -> tuple[str, str | None] | None:
    """`NAME`, `NAME KIND` or `KIND NAME` (articles already dropped)."""
    if len(words) == 1:
        name = _clean(words[0])
        return (name, None) if _is_name(name) else None
    if len(words) != 2:
        return None
    first, second = _clean(words[0]), _clean(words[1])
    # NAME KIND is the usual English order ("the route function"), so it wins when both words are
    # kind words; KIND NAME otherwise ("function parse_query").
    if _is_kind(second) and _is_name(first):
        return first, KIND_WORDS[second.lower()]
    if _is_kind(first) and _is_name(second):
        return second, KIND_WORDS[first.lower()]
    return None


def parse_reference(text: str) -> StructuredRef | None:
    """The structured form of an English reference, or None when `text` is not one of the shapes."""
    words = text.split()
    if len(words) < 2 or len(words) > MAX_PHRASE_WORDS:
        return None
    if words[0].lower() in _ARTICLES:
        words = words[1:]
    possessive = _POSSESSIVE.match(words[0]) if words else None
    if possessive:  # "ClientResponse's json [method]"
        owner = _clean(possessive["container"])
        named = _name_and_kind(words[1:])
        if named is None or not _is_name(owner):
            return None
        return StructuredRef(named[0], named[1], owner, ContainerKind.OWNER)
    lowered = [w.lower() for w in words]
    for index, word in enumerate(lowered):
        if word not in _OWNER_PREPOSITIONS and word not in _PLACE_PREPOSITIONS:
            continue
        head = words[:index]
        if head and head[-1].lower() in _VERBS:  # "json defined in x.py"
            head = head[:-1]
        named = _name_and_kind(head)
        if named is None:
            return None
        default = ContainerKind.OWNER if word in _OWNER_PREPOSITIONS else ContainerKind.ANY
        container = _container(words[index + 1 :], default)
        if container is None:
            return None
        return StructuredRef(named[0], named[1], container[0], container[1])
    named = _name_and_kind(words)
    if named is None or named[1] is None:
        return None  # two bare words without a kind word: free text, not a reference
    return StructuredRef(named[0], named[1])


__all__ = ["CALLABLE", "CLASS_LIKE", "MODULE", "ContainerKind", "StructuredRef", "kind_types", "parse_reference"]
