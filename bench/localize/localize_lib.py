"""Pure helpers of the issue → code localisation bench: what mine.py labels and run.py scores.

Why one module: the rules that decide what a query is (a bug fix, with or without a stack trace),
what its gold is (the non-test, non-doc code files the fix changed and the functions around the
changed lines at the parent commit) and how a ranked answer is scored are small pure functions —
kept apart from git and the index so tests/test_localize_bench.py checks them offline on tiny
inline inputs. Nothing here imports woods: the labels must not depend on the engine they measure
(the one exception, `woods.extract`, is called by mine.py, not here).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------------------
# Is this commit a bug fix?

# A fix says so in its words: fix/bug/regression/crash/panic/… or closes an issue by number.
_BUG_WORDS = (
    r"fix(?:es|ed|ing)?|bug(?:s|fix)?|hotfix|regression|crash(?:es|ed|ing)?|panic(?:s|ked)?|"
    r"traceback|exception|segfault|segmentation fault|deadlock|hang(?:s|ing)?|leak(?:s|ed)?|"
    r"broken|incorrect(?:ly)?|wrong(?:ly)?|erroneous(?:ly)?|fail(?:s|ed|ure)?|error"
)
FIX_WORDS = re.compile(rf"\b(?:{_BUG_WORDS})\b", re.IGNORECASE)
# In a body that closes an issue, an exception's name is a bug report too ("It raised ValueError").
# Not in a subject: there it is as often a rule or class being edited ("SwallowedException: …").
BODY_BUG_WORDS = re.compile(rf"\b(?:{_BUG_WORDS}|\w+(?:error|exception))\b", re.IGNORECASE)
ISSUE_REFERENCE = re.compile(r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s+(?:[\w.-]+/[\w.-]+)?#\d+", re.I)
# Subjects that are housekeeping whatever words they use: the change is not a behaviour fix a
# user would report (typos, lint, CI, releases, dependency bumps, reverts, docs and tests only).
NOT_A_FIX = re.compile(
    r"^(?:revert\b|merge\b|release\b|bump\b|prepare\b|chore|docs?\b|ci\b|build\b|style\b|test(?:s|ing)?\b|"
    r"lint|typo|format|changelog|readme|update (?:the )?(?:docs|changelog|readme|copyright|dependencies)|"
    r"(?:fix|fixes|fixed) (?:a |the |some )?(?:typos?|lint(?:ing)?|tests?|ci|build|docs?|"
    r"documentation|formatting|warnings?|clippy|flake8|mypy|spelling|changelog|readme|links?)\b)",
    re.IGNORECASE,
)


def is_fix_message(subject: str, body: str) -> bool:
    """True when the message describes a bug fix (not housekeeping that happens to say 'fix')."""
    if NOT_A_FIX.search(_strip_conventional_prefix(subject)) or _conventional_type(subject) in HOUSEKEEPING_TYPES:
        return False
    if FIX_WORDS.search(subject):
        return True
    # A body that closes an issue or a `fix:` subject counts when the body speaks of a bug: a
    # closed feature request ("Extend the plugin API … Close #433") is not a bug report.
    return bool(BODY_BUG_WORDS.search(body) and (ISSUE_REFERENCE.search(body) or _conventional_type(subject) == "fix"))


HOUSEKEEPING_TYPES = frozenset({"chore", "docs", "doc", "ci", "build", "style", "test", "tests", "refactor", "perf",
                                "release", "deps", "bench"})
_CONVENTIONAL = re.compile(r"^\s*([a-z]+)(?:\([^)]*\))?!?:\s*", re.IGNORECASE)


def _conventional_type(subject: str) -> str:
    match = _CONVENTIONAL.match(subject)
    return match.group(1).lower() if match else ""


def _strip_conventional_prefix(subject: str) -> str:
    """`fix(parser): crash on …` → `crash on …`; `[core] crash …` → `crash …`."""
    text = _CONVENTIONAL.sub("", subject, count=1) if _conventional_type(subject) == "fix" else subject
    return re.sub(r"^\s*\[[^\]]*\]\s*", "", text)


# ---------------------------------------------------------------------------------------------
# The query text: the message as a user would have reported it, trailers and bookkeeping removed.

_TRAILER = re.compile(
    r"^(?:signed-off-by|co-authored-by|co-authored by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|"
    r"helped-by|cc|change-id|git-svn-id|pr-url|pr-close|reviewed-on|differential revision|bug|refs?|see|related|"
    r"(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)(?: issue)?)\s*:?\s*(?:\S+@\S+|<[^>]*>|[\w.-]*/?[\w.-]*#\d+(?:[ ,]+#?\d+)*|https?://\S+|.*@.*|[A-Z0-9-]+)?\s*$",
    re.IGNORECASE,
)
_CHERRY_PICK = re.compile(r"^\(cherry picked from commit [0-9a-f]+\)\s*$|^This reverts commit [0-9a-f]+\.?\s*$", re.I)
_PR_SUFFIX = re.compile(r"\s*\((?:#\d+(?:,\s*)?)+\)\s*$")
_SQUASH_NOISE = re.compile(r"^\*\s+(?:wip|fixup!?.*|squash!?.*|address (?:review )?(?:comments|feedback)|"
                           r"apply suggestions? from code review|update [\w./-]+|lint|format(?:ting)?|fix tests?)\s*$",
                           re.IGNORECASE)


def clean_message(message: str) -> str:
    """The commit message as a query: trailers (Signed-off-by, Fixes #1 …), cherry-pick notes and
    squash-merge noise removed, the subject's `(#123)` suffix dropped, runs of blank lines squeezed."""
    lines = message.replace("\r\n", "\n").split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if index == 0:
            line = _PR_SUFFIX.sub("", line)
        elif _TRAILER.match(stripped) or _CHERRY_PICK.match(stripped) or _SQUASH_NOISE.match(stripped):
            continue
        kept.append(line.rstrip())
    text = "\n".join(kept)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


_ISSUE_NUMBER = re.compile(r"(?:^|[\s(])(?:[\w.-]+/[\w.-]+)?#(\d+)\b")


def issue_numbers(message: str) -> list[int]:
    """Issue and pull request numbers a message mentions (`#123`, `owner/repo#123`), in order."""
    return [int(n) for n in _ISSUE_NUMBER.findall(message)]


def word_count(text: str) -> int:
    return len(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


# ---------------------------------------------------------------------------------------------
# Stack traces and error output in a message.

# Each pattern is evidence of pasted program output, named by what it is rather than by runtime
# (one Java trace has frames, an exception line and a `Caused by:`; a JS one frames and an error
# line): `traceback` Python's header and `File "…", line N` frames; `frames` the stack frames of
# the JVM, .NET, Node, Ruby, PHP and Go; `exception` a `SomeError: message` / `Foo::BarError`
# line as runtimes print it; `panic` Go and Rust panics and Rust backtraces; `native-crash`
# signals, sanitizer reports, failed assertions, native frames; `compiler-error` a compiler's or
# type checker's `file:line:col: error` or `error[E…]`/`error TS…`; `error-output` a program's
# own `Error: …` / `ERROR: …` / `fatal: …` / `PHP Warning: …` line.
TRACE_PATTERNS: dict[str, re.Pattern[str]] = {
    "traceback": re.compile(r"Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+", re.M),
    "frames": re.compile(
        r"^\s*at [\w$.<>/`\[\],]+\([\w$.]*(?:\.(?:java|kt|scala|groovy)|Native Method|Unknown Source)(?::\d+)?\)"
        r"|^\s*at [\w.`<>\[\],]+\([^)\n]*\) in [^\n]+:line \d+|^\s*at (?:\w+\.){2,}[\w`<>\[\],]+\([^)\n]*\)\s*$"
        r"|^\s*at (?:async )?(?:[\w$.<>\[\] ]+ )?\(?(?:file://)?[\w@./\\:-]+\.(?:js|mjs|cjs|ts|tsx|jsx):\d+:\d+\)?\s*$"
        r"|\.rb:\d+:in [`'\"]|^\s*#\d+ [^\n]*\.php[(:]\d+\)?|\.go:\d+ \+0x[0-9a-f]+|^goroutine \d+ \[", re.M),
    "exception": re.compile(
        r"^\s*(?:Uncaught |Caused by: |---> |Exception in thread \"[^\"]*\" )?(?:[\w$]+[.:\\]{1,2})*"
        r"(?:[A-Z]\w*(?:Error|Exception)|KeyboardInterrupt|StopIteration)(?: \[\w+\])?\s?: \S"
        r"|Exception in thread \"|undefined (?:method|local variable or method) [`'\"]|\bUnhandledPromiseRejection\w*",
        re.M),
    "panic": re.compile(r"^\s*panic: |panicked at |^\s*stack backtrace:|^fatal error: all goroutines|RUST_BACKTRACE=", re.M),
    "native-crash": re.compile(r"==\d+==\s*(?:ERROR|WARNING)|SUMMARY: \w+Sanitizer|^\s*#\d+ +0x[0-9a-f]+ in |"
                               r"Segmentation fault(?: \(core dumped\))?\s*$|(?:Program|Thread \d+[^\n]*) received signal SIG|"
                               r"Assertion [`'\"].+[`'\"] failed|:\d+:\d+: runtime error: |Invalid (?:read|write) of size \d+|"
                               r"^\s*\*\*\* (?:Error in|stack smashing)|terminated by signal SIG\w+|^\s*SIG\w+: ", re.M),
    "compiler-error": re.compile(r"^\s*[\w./-]+\.(?:c|cc|cpp|h|hpp|cs|java|kt|swift|ts|tsx|rs|go|py|php):\(?\d+[:,]\d+\)?:? "
                                 r"(?:fatal )?(?:error|warning)\b|^error\[E\d{4}\]|^\s*--> [\w./-]+\.rs:\d+:\d+|"
                                 r"^\s*error (?:TS|CS)\d+: |^[\w./-]+\.py:\d+: error: ", re.M),
    "error-output": re.compile(r"^\s*(?:Error|ERROR|FATAL|Fatal error|fatal|error|BUG)\s?: .{6,}$|"
                               r"PHP (?:Fatal error|Warning|Notice|Deprecated): ", re.M),
}


def trace_kinds(text: str) -> list[str]:
    """The kinds of pasted program output (stack traces, error lines) found in `text`, in
    TRACE_PATTERNS order; empty when there is none."""
    return [kind for kind, pattern in TRACE_PATTERNS.items() if pattern.search(text)]


# ---------------------------------------------------------------------------------------------
# Which changed files are gold: code, not tests, docs, examples, benchmarks, fixtures or vendored.

_NON_LIBRARY_DIRS = re.compile(
    r"(?:^|/)(?:t|tests?|__tests__|specs?|testing|testdata|test_?utils?|testlib|e2e|integration[-_]tests?|"
    r"[\w-]+[-_]tests?|[\w.]+\.Tests?|[\w]+Tests?|[\w.]+Specs?|androidTest|jvmTest|jsTest|commonTest|nativeTest|"
    r"docs?|documentation|site|website|examples?|_examples?|samples?|demos?|benches|benchmarks?|bench|"
    r"fixtures?|__fixtures__|__mocks__|mocks?|vendor|vendored|third_party|thirdparty|3rdparty|node_modules|"
    r"\.github|\.circleci|\.ci|ci|scripts?/ci|fuzz|tools/test)/",
    re.IGNORECASE,
)
_TEST_FILE = re.compile(
    r"(?:^|/)(?:test_[^/]*\.py|[^/]*_test\.(?:py|go|rb|rs|c|cc|cpp|exs|ex|zig|lua)|[^/]*_spec\.(?:rb|lua)|"
    r"[^/]*\.(?:test|spec|test-d|bench)\.(?:js|jsx|ts|tsx|mjs|cjs|mts|cts)|[^/]*Tests?\.(?:java|kt|kts|cs|php|swift|scala)|"
    r"[^/]*(?:Specs?|Suite|TestCase|IT)\.(?:java|kt|kts|swift|scala|cs)|[^/]*\.bats|conftest\.py|AssemblyInfo\.cs|"
    r"test_helpers?\.\w+|spec_helper\.rb|rails_helper\.rb|[^/]*\.d\.ts)$",
    re.IGNORECASE,
)


def is_library_path(path: str) -> bool:
    """False for tests, docs, examples, benchmarks, fixtures, vendored code and CI files.

    The bench's own rule (not woods.paths): the labels must not follow the engine's heuristics.
    `.d.ts` declaration files count as non-library too (they restate types, they do not run), and
    so does C#'s generated `AssemblyInfo.cs` (version attributes, never what a bug is about).
    """
    return not (_NON_LIBRARY_DIRS.search(path) or _TEST_FILE.search(path))


# Identifier segments that mark test code inside a library file (Rust's `mod tests`).
TEST_SEGMENTS = frozenset({"test", "tests"})


def is_test_identifier(identifier: str) -> bool:
    parts = [p for p in re.split(r"::|[.#:/]", identifier) if p]
    return any(p.lower() in TEST_SEGMENTS for p in parts[:-1]) or bool(parts and parts[-1].startswith("test_"))


# ---------------------------------------------------------------------------------------------
# Changed lines → gold functions.


@dataclass(frozen=True)
class Hunk:
    """One `@@ -old_start,old_count +new_start,new_count @@` hunk of a zero-context diff."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int


_DIFF_HEADER = re.compile(r"^diff --git a/(.+?) b/(.+)$")
_OLD_NAME = re.compile(r"^--- (?:a/(.+)|/dev/null)$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_hunks(diff: str) -> dict[str, list[Hunk]]:
    """Hunks per old (parent-side) path of a `git diff -U0` output; added files are left out."""
    hunks: dict[str, list[Hunk]] = {}
    current: str | None = None
    for line in diff.split("\n"):
        header = _DIFF_HEADER.match(line)
        if header:
            current = header.group(1)
            continue
        old = _OLD_NAME.match(line)
        if old:
            current = old.group(1)  # None for /dev/null: a new file has no parent-side lines
            continue
        hunk = _HUNK.match(line)
        if hunk and current is not None:
            old_count = 1 if hunk.group(2) is None else int(hunk.group(2))
            new_count = 1 if hunk.group(4) is None else int(hunk.group(4))
            hunks.setdefault(current, []).append(Hunk(int(hunk.group(1)), old_count, int(hunk.group(3)), new_count))
    return hunks


@dataclass(frozen=True)
class Span:
    """A unit of the parent commit: identifier, type, 1-based inclusive lines."""

    identifier: str
    type: str
    line_start: int
    line_end: int


# Unit types that are functions for the function-level gold: what a fix edits the body of.
FUNCTION_TYPES = frozenset({"function", "method", "constructor", "macro", "property", "rake_task"})


def touched_functions(spans: Sequence[Span], hunks: Sequence[Hunk]) -> list[Span]:
    """The innermost function-like spans holding a changed parent line, in source order.

    A hunk that removes or rewrites lines touches every line it covers; a pure insertion
    (old_count 0, after line `old_start`) touches a function only when it falls strictly inside it
    (both `old_start` and the next line within the span) — an insertion between two functions
    touches neither.
    """
    functions = [s for s in spans if s.type in FUNCTION_TYPES]
    found: dict[tuple[str, int], Span] = {}
    for hunk in hunks:
        if hunk.old_count > 0:
            probes = [(line, line) for line in range(hunk.old_start, hunk.old_start + hunk.old_count)]
        else:
            probes = [(hunk.old_start, hunk.old_start + 1)]
        for low, high in probes:
            holders = [s for s in functions if s.line_start <= low and high <= s.line_end]
            if holders:
                inner = min(holders, key=lambda s: (s.line_end - s.line_start, -s.line_start, s.identifier))
                found[(inner.identifier, inner.line_start)] = inner
    return sorted(found.values(), key=lambda s: (s.line_start, s.identifier))


def only_test_code_changed(spans: Sequence[Span], hunks: Sequence[Hunk]) -> bool:
    """True when every changed line of a library file lies inside test code (`mod tests`)."""
    tests = [s for s in spans if is_test_identifier(s.identifier)]
    if not tests or not hunks:
        return False
    for hunk in hunks:
        lines = range(hunk.old_start, hunk.old_start + max(hunk.old_count, 1))
        for line in lines:
            if not any(s.line_start <= line <= s.line_end for s in tests):
                return False
    return True


# ---------------------------------------------------------------------------------------------
# Does the message give the answer away?


def names_gold_path(text: str, gold_files: Iterable[str]) -> bool:
    """True when the text names a gold file's path: the whole repository path, or its last two
    segments or more (`celery/utils/imports.py` inside a site-packages trace, `jsoup/nodes/Element.java`
    inside a package path). A bare file name is not counted (`names_gold_basename`)."""
    for path in gold_files:
        parts = path.split("/")
        for start in range(max(len(parts) - 1, 1)):  # suffixes of two segments or more, or the whole path
            if re.search(r"(?<![\w-])" + re.escape("/".join(parts[start:])) + r"(?![\w-])", text):
                return True
    return False


def names_gold_basename(text: str, gold_files: Iterable[str]) -> bool:
    """True when the text names a gold file by its file name (`imports.py`)."""
    return any(re.search(r"(?<![\w-])" + re.escape(path.rsplit("/", 1)[-1]) + r"(?![\w-])", text) for path in gold_files)


# ---------------------------------------------------------------------------------------------
# Scoring a ranked answer.


@dataclass(frozen=True)
class RankedUnit:
    """One result of a system, best first: a unit (or a whole file: identifier None)."""

    file_path: str
    identifier: str | None = None
    line_start: int | None = None
    line_end: int | None = None


@dataclass(frozen=True)
class GoldFunction:
    file: str
    identifier: str
    line_start: int
    line_end: int


def ranked_files(results: Sequence[RankedUnit]) -> list[str]:
    """Distinct files in order of their best-ranked unit."""
    seen: dict[str, None] = {}
    for result in results:
        seen.setdefault(result.file_path, None)
    return list(seen)


def first_rank(items: Sequence[object], relevant: object, k: int) -> int | None:
    """1-based rank of the first item among the top `k` for which `relevant(item)` holds."""
    assert callable(relevant)
    for rank, item in enumerate(items[:k], start=1):
        if relevant(item):
            return rank
    return None


def function_hit(result: RankedUnit, gold: Sequence[GoldFunction], strict: bool = False) -> bool:
    """A result unit hits a gold function when its file matches and either its identifier is the
    gold's or its span contains the gold's first line. `strict` also asks the spans to overlap by
    half (intersection over union ≥ 0.5), so a class or file unit around the function does not count."""
    if result.identifier is None:
        return False
    for function in gold:
        if result.file_path != function.file:
            continue
        if result.identifier == function.identifier:
            return True
        if result.line_start is None or result.line_end is None:
            continue
        if result.line_start <= function.line_start <= result.line_end:
            if not strict:
                return True
            overlap = min(result.line_end, function.line_end) - max(result.line_start, function.line_start) + 1
            union = max(result.line_end, function.line_end) - min(result.line_start, function.line_start) + 1
            if overlap / union >= 0.5:
                return True
    return False


@dataclass(frozen=True)
class QueryScore:
    """File Acc@1, Acc@5, MRR@10 and function MRR@10 of one answer (None: no gold functions, or
    a system that ranks files only)."""

    acc1: float
    acc5: float
    mrr10: float
    func_mrr10: float | None
    func_mrr10_strict: float | None
    error: bool = False


def score_answer(results: Sequence[RankedUnit], gold_files: Sequence[str], gold_functions: Sequence[GoldFunction],
                 files_only: bool = False, error: bool = False) -> QueryScore:
    files = ranked_files(results)
    gold = set(gold_files)
    rank = first_rank(files, lambda f: f in gold, 10)
    acc1 = 1.0 if rank == 1 else 0.0
    acc5 = 1.0 if rank is not None and rank <= 5 else 0.0
    mrr = 1.0 / rank if rank else 0.0
    func: float | None = None
    func_strict: float | None = None
    if gold_functions and not files_only:
        units = [r for r in results if r.identifier is not None]
        found = first_rank(units, lambda r: function_hit(r, gold_functions), 10)
        func = 1.0 / found if found else 0.0
        found_strict = first_rank(units, lambda r: function_hit(r, gold_functions, strict=True), 10)
        func_strict = 1.0 / found_strict if found_strict else 0.0
    return QueryScore(acc1, acc5, mrr, func, func_strict, error)


@dataclass
class Aggregate:
    """Means over a group of scored queries (function metrics over those that have them)."""

    n: int = 0
    errors: int = 0
    acc1: float = 0.0
    acc5: float = 0.0
    mrr10: float = 0.0
    func_n: int = 0
    func_mrr10: float = 0.0
    func_mrr10_strict: float = 0.0
    _sums: dict[str, float] = field(default_factory=dict, repr=False)

    def add(self, score: QueryScore) -> None:
        self.n += 1
        self.errors += int(score.error)
        for name in ("acc1", "acc5", "mrr10"):
            self._sums[name] = self._sums.get(name, 0.0) + getattr(score, name)
        if score.func_mrr10 is not None and score.func_mrr10_strict is not None:
            self.func_n += 1
            self._sums["func"] = self._sums.get("func", 0.0) + score.func_mrr10
            self._sums["func_strict"] = self._sums.get("func_strict", 0.0) + score.func_mrr10_strict
        self.acc1 = self._sums["acc1"] / self.n
        self.acc5 = self._sums["acc5"] / self.n
        self.mrr10 = self._sums["mrr10"] / self.n
        if self.func_n:
            self.func_mrr10 = self._sums["func"] / self.func_n
            self.func_mrr10_strict = self._sums["func_strict"] / self.func_n

    def to_dict(self) -> dict[str, float | int | None]:
        return {"n": self.n, "errors": self.errors, "acc1": round(self.acc1, 4), "acc5": round(self.acc5, 4),
                "mrr10": round(self.mrr10, 4), "func_n": self.func_n,
                "func_mrr10": round(self.func_mrr10, 4) if self.func_n else None,
                "func_mrr10_strict": round(self.func_mrr10_strict, 4) if self.func_n else None}


# ---------------------------------------------------------------------------------------------
# The BM25-over-files floor.

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def code_tokens(text: str) -> list[str]:
    """Code-aware words: each alphanumeric run lower-cased, plus its camelCase parts when it has
    several (`parseHTTPHeader` → parsehttpheader, parse, http, header; snake_case splits on `_`
    already). Single characters are dropped."""
    out: list[str] = []
    for word in _WORD.findall(text):
        lower = word.lower()
        if len(lower) > 1:
            out.append(lower)
        parts = _CAMEL.findall(word)
        if len(parts) > 1:
            out.extend(p.lower() for p in parts if len(p) > 1)
    return out


class BM25Files:
    """Okapi BM25 (k1 1.2, b 0.75, Lucene's idf log(1 + (N − df + 0.5)/(df + 0.5))) over whole
    files, path words included, with postings so a query touches only the files holding its
    words; files can be replaced or removed (a snapshot walk updates the changed files only).
    Small and exact: the floor a localiser has to beat."""

    K1 = 1.2
    B = 0.75

    def __init__(self, documents: Mapping[str, str] | None = None) -> None:
        self.term_freqs: dict[str, dict[str, int]] = {}
        self.lengths: dict[str, int] = {}
        self.postings: dict[str, set[str]] = {}
        self.total_length = 0
        for path, text in sorted((documents or {}).items()):
            self.put(path, text)

    def put(self, path: str, text: str) -> None:
        """Index `text` as the file `path` (replacing what was indexed under it)."""
        self.remove(path)
        counts: dict[str, int] = {}
        for token in code_tokens(path + "\n" + text):
            counts[token] = counts.get(token, 0) + 1
        self.term_freqs[path] = counts
        length = sum(counts.values())
        self.lengths[path] = length
        self.total_length += length
        for token in counts:
            self.postings.setdefault(token, set()).add(path)

    def remove(self, path: str) -> None:
        counts = self.term_freqs.pop(path, None)
        if counts is None:
            return
        self.total_length -= self.lengths.pop(path)
        for token in counts:
            holders = self.postings[token]
            holders.discard(path)
            if not holders:
                del self.postings[token]

    def __len__(self) -> int:
        return len(self.term_freqs)

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        n = len(self.term_freqs)
        if not n:
            return []
        average = self.total_length / n
        terms: dict[str, int] = {}
        for token in code_tokens(query):
            if token in self.postings:
                terms[token] = terms.get(token, 0) + 1
        scores: dict[str, float] = {}
        for term, query_count in terms.items():
            holders = self.postings[term]
            idf = math.log(1.0 + (n - len(holders) + 0.5) / (len(holders) + 0.5))
            for path in holders:
                tf = self.term_freqs[path][term]
                norm = self.K1 * (1 - self.B + self.B * self.lengths[path] / average)
                scores[path] = scores.get(path, 0.0) + query_count * idf * tf * (self.K1 + 1) / (tf + norm)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return ranked[:limit]
