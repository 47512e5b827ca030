"""What a code-search query is: a symbol, a path, or a question in words — and what it names.

Why: the right mix of evidence depends on the query. A bare `ClientSession` wants the definition
of that name (lexical and exact-name evidence); "how are chunked bodies parsed" wants meaning
(vectors) as much as words; `aiohttp/web_app.py` wants that file. Routing on the query's shape
beats routing on English keywords ("where", "find"), which questions use for every intent.

Guarantees: pure functions of the query text; `analyze` never raises on any string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from woods.paths import roles_asked_for
from woods.tokens import STOP_WORDS, code_tokens, query_terms

SYMBOL = "symbol"  # one identifier, maybe qualified: ClientSession, Sinatra::Base, fmt.Println
PATH = "path"  # a file path: aiohttp/web_app.py
NATURAL = "natural"  # a question or description in words

# One identifier, possibly qualified with ::, ., #, \\ or ->, optionally followed by ().
_SYMBOL_QUERY = re.compile(r"^[^\W\d]\w*(?:(?:::|\.|#|\\|->)[^\W\d]\w*)*(?:\(\))?$")
_PATH_QUERY = re.compile(r"^[\w.\-]+(?:/[\w.\-]+)+$|^[\w\-]+\.[A-Za-z0-9]{1,8}$")
# Names written the way code writes them, inside a sentence: CamelCase with an inner capital,
# camelCase, snake_case, or qualified (a.b / A::B). Plain words and lone acronyms are not names.
_EMBEDDED_NAME = re.compile(
    r"(?<![\w.:])(?:"
    r"[^\W\d]\w*(?:(?:::|\.|#)[^\W\d]\w*)+"  # qualified
    r"|[A-Z][a-z0-9]+[A-Z]\w*"  # PascalCase with an inner capital: StateManager
    r"|[a-z][a-z0-9]*[A-Z]\w*"  # camelCase: safeParse
    r"|[a-z][a-z0-9]*_\w+"  # snake_case: dispatch_request
    r"|_\w+"  # _private
    r")(?![\w])"
)
_SEPARATORS = re.compile(r"::|\.|#|\\|->")
# A capitalised plain word (`Logger`, `Request`, `Application`): in a question about code it names a
# type far more often than it starts a sentence; and any word (for pairs).
_CAPITALISED = re.compile(r"(?<![\w.:#])[A-Z][a-z0-9]+(?![\w])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """The shape of a query and what it names.

    `terms`: lexical terms (code-aware, stop words dropped). `names`: identifiers the query
    names, last segment first-class (`Sinatra::Base` → `Base`, plus the qualified spelling in
    `qualified`). `words`: the lowercase word tokens (for path matching and role requests).
    `roles`: path roles the query asks for (tests, examples …) — those are not demoted.
    `soft_names`: names a question may mean without spelling them like code — its capitalised
    words (`Logger`, `Request`) and adjacent content words joined as an identifier (`type adapter`
    → `TypeAdapter`, `JSON element` → `JsonElement`); weaker evidence than `names`, used for
    questions in words only.
    """

    text: str
    kind: str
    terms: tuple[str, ...]
    names: tuple[str, ...]
    qualified: tuple[str, ...]
    words: frozenset[str]
    roles: frozenset[str]
    soft_names: tuple[str, ...] = ()

    @property
    def is_symbol(self) -> bool:
        return self.kind == SYMBOL


def _last_segment(name: str) -> str:
    return _SEPARATORS.split(name.removesuffix("()"))[-1]


def _looks_like_code(word: str) -> bool:
    """A lone word is a symbol query when it is spelled like code: a capital, an underscore, a
    qualifier or call parentheses. A plain lowercase word (`session`) reads as English."""
    return any(c.isupper() for c in word) or "_" in word or bool(_SEPARATORS.search(word)) or word.endswith("()")


def analyze(query: str) -> QueryAnalysis:
    """Classify a query and pull out its terms and names."""
    text = query.strip()
    if _SYMBOL_QUERY.match(text) and _looks_like_code(text):
        kind = SYMBOL
        qualified: tuple[str, ...] = (text.removesuffix("()"),) if _SEPARATORS.search(text) else ()
        names: tuple[str, ...] = (_last_segment(text),)
    elif _PATH_QUERY.match(text):
        kind, qualified, names = PATH, (), ()
    else:
        kind = NATURAL
        found = [m.group() for m in _EMBEDDED_NAME.finditer(text)]
        if not found and _SYMBOL_QUERY.match(text):  # one plain lowercase word: maybe a name too
            found = [text]
        qualified = tuple(dict.fromkeys(f for f in found if _SEPARATORS.search(f)))
        names = tuple(dict.fromkeys(_last_segment(f) for f in found))
    words = frozenset(code_tokens(text))
    return QueryAnalysis(
        text=text,
        kind=kind,
        terms=tuple(query_terms(text)),
        names=names,
        qualified=qualified,
        words=words,
        roles=roles_asked_for(set(words)),
        soft_names=soft_names(text) if kind == NATURAL else (),
    )


def soft_names(text: str) -> tuple[str, ...]:
    """Capitalised content words and adjacent content-word pairs joined in CamelCase, in order,
    without repeats (see `QueryAnalysis.soft_names`)."""
    found = [w for w in _CAPITALISED.findall(text) if w.lower() not in STOP_WORDS]
    words = _WORD.findall(text)
    for first, second in zip(words, words[1:], strict=False):
        if first.lower() not in STOP_WORDS and second.lower() not in STOP_WORDS:
            found.append(first[:1].upper() + first[1:].lower() + second[:1].upper() + second[1:].lower())
    return tuple(dict.fromkeys(found))
