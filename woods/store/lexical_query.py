"""How the lexical index is asked: query terms cleaned and cut as FTS5 cuts them, the terms worth
asking for, the order their BM25 contributions are summed in, and an exact top-k plan that skips
the rows only common terms match.

Why: FTS5 scores every row its MATCH expression matches before `ORDER BY bm25(…) LIMIT k` keeps
k of them (2-3 µs a row). A question's common words (`return`, `data`, `file`) match tens of
thousands of units, yet a row holding none of the rarer words can never reach the top k once the
k-th best score exceeds what the common words alone can add. The plan (MaxScore, Turtle & Flood
1995) splits the phrases into *essential* ones E (rarest first) and the rest N, asks
`E AND N` and `E NOT N` (every phrase stays in both expressions, so each row gets its full
score), and accepts the union's top k when its k-th score is above N's upper bound; otherwise it
moves phrases from N to E — after a round that found k rows, as many as its k-th score says must
move, so the next round proves its list; after one that found fewer, one — and in the end asks
every phrase at once.

Guarantees: the ranked list is exactly that of one query over all phrases (same rows, same
scores to the last bit): every expression lists the phrases in `phrase_order`, and FTS5 sums a
row's phrase contributions in expression order, as the PostgreSQL backend does in the same order.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from woods.store.fts5_bm25 import BM25_K1

# The lexical index's tokenizer (the FTS5 table's `tokenize` option): porter stemming over
# unicode61. The PostgreSQL backend cuts query terms with it too (`fts5_phrases`).
LEXICAL_TOKENIZER = "porter unicode61 remove_diacritics 2 tokenchars '_'"

# A split is tried only when the non-essential phrases match at least this many times the rows the
# essential ones match (summed per phrase): below that, the two split queries save less than the
# first round can cost. Measured on 50 bench queries over the standard library (115k units):
# mean 7.9 → 5.6 ms at 2, 5.6 at 1, 5.7 at 0.
SPLIT_MIN_RATIO = 2.0
# A row's score is compared with N's bound with this relative margin: the bound and FTS5's score
# are both float sums of at most a few dozen terms, off from exact by far less than 1e-12.
BOUND_MARGIN = 1e-9

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def clean_terms(terms: Sequence[str]) -> list[str]:
    """`terms` as the lexical index is asked for them: control characters dropped (SQLite reads a
    NUL as the end of the query), surrounding blanks stripped, empty terms skipped."""
    cleaned = (_CONTROL.sub("", term).strip() for term in terms)
    return [term for term in cleaned if term]


def informative_terms(terms: Sequence[str], rows: Sequence[int], total: int) -> list[str]:
    """`terms` without those matching at least half of the `total` rows, when another term matches
    some rows but fewer than half. `rows[i]` counts the rows matching `terms[i]` (at least up to
    half of `total`).

    Why: BM25 gives such a term the IDF floor (1e-6, `fts5_bm25.IDF_FLOOR`): it moves no score by
    more than ~1e-5 yet makes FTS5 score every row it matches — `py` in a Python repository's
    paths, `self` in its bodies: 60-130 ms per query on the standard library instead of a few. The
    rows it alone would add score ~0 and only pad the list. When every term is that common, or the
    others match nothing, the terms are kept as asked."""
    common = [2 * n >= total for n in rows]
    if not any(n > 0 and not c for n, c in zip(rows, common, strict=True)):
        return list(terms)
    return [term for term, c in zip(terms, common, strict=True) if not c]


def phrase_order(rows: Sequence[int], total: int) -> list[int]:
    """Positions of the phrases in the order their contributions are summed: fewest matching rows
    first (counted up to half of `total`, as `informative_terms` counts them), ties by position.
    Rarest first makes every set of essential phrases a prefix of this order."""
    half = (total + 1) // 2
    return sorted(range(len(rows)), key=lambda i: (min(rows[i], half), i))


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of `terms`: each quoted (so no input is ever FTS5 syntax), control
    characters dropped, empty terms skipped (`clean_terms`)."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in clean_terms(terms))


def split_expressions(terms: Sequence[str], essential: int) -> tuple[str, str]:
    """`E AND N` and `E NOT N` for E = the first `essential` terms, N = the rest: together they
    match exactly the rows `E` matches, with every phrase in `terms`' order."""
    rare = "(" + match_expression(terms[:essential]) + ")"
    common = "(" + match_expression(terms[essential:]) + ")"
    return f"{rare} AND {common}", f"{rare} NOT {common}"


def bound(idfs: Sequence[float]) -> float:
    """More than any row can score from these phrases alone: FTS5's BM25 adds at most
    `idf · (k1 + 1)` per phrase (its frequency term saturates below k1 + 1)."""
    return (BM25_K1 + 1.0) * sum(idfs) * (1.0 + BOUND_MARGIN)


def first_split(rows: Sequence[int], fetch: int) -> int:
    """How many of the phrases (in `phrase_order`, `rows` their row counts) to ask for first: the
    fewest whose rows add up to `fetch`, or all of them when the rest would not save enough
    (`SPLIT_MIN_RATIO`)."""
    total = 0
    essential = 0
    while essential < len(rows) and total < fetch:
        total += rows[essential]
        essential += 1
    rest = sum(rows[essential:])
    return essential if total >= fetch and rest >= SPLIT_MIN_RATIO * total else len(rows)


def proven(scores: Sequence[float], limit: int, rest_bound: float) -> bool:
    """Whether the top `limit` of the essential rows (`scores`, best first) is the top `limit` of
    all: no row matching only the other phrases can score `rest_bound` or more."""
    return len(scores) >= limit and scores[limit - 1] > rest_bound


def next_split(idfs: Sequence[float], essential: int, scores: Sequence[float], limit: int) -> int:
    """The essential count for the next round after a round with `essential` failed: the fewest
    phrases whose remainder is bounded below the k-th score already reached (adding phrases to E
    only adds rows, so that score can only rise), or one more when that round found under
    `limit` rows."""
    if len(scores) < limit:
        return essential + 1
    reached = scores[limit - 1]
    nxt = essential + 1
    while nxt < len(idfs) and bound(idfs[nxt:]) >= reached:
        nxt += 1
    return nxt


def fts5_phrases(terms: Sequence[str]) -> list[tuple[str, ...]]:
    """Each term of `clean_terms(terms)` as FTS5 tokenizes it (a phrase: usually one stemmed
    token), in query order — the phrases `match_expression(terms)` asks FTS5 for."""
    return fts5_tokens(clean_terms(terms))


def fts5_tokens(texts: Sequence[str]) -> list[tuple[str, ...]]:
    """Each text's tokens as the lexical index's tokenizer cuts it (`LEXICAL_TOKENIZER`), in
    order: FTS5 itself tokenizes them, in one in-memory table."""
    if not texts:
        return []
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize={LEXICAL_TOKENIZER!r})")
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 't', 'instance')")
        conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", [(i + 1, text) for i, text in enumerate(texts)])
        tokens: dict[int, list[tuple[int, str]]] = {}
        for term, doc, offset in conn.execute("SELECT term, doc, offset FROM temp.v"):
            tokens.setdefault(int(doc), []).append((int(offset), str(term)))
    finally:
        conn.close()
    return [tuple(token for _offset, token in sorted(tokens.get(i + 1, []))) for i in range(len(texts))]
