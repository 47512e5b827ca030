"""Evidence in pasted text: what an issue, a log, a failing test run or a stack trace says about
where the code to change is.

Why: the question a coding assistant asks most is "here is a bug report — which files and functions
must change?". Such a text carries strong, specific pointers that a bag of words drowns: frames
naming a file and a line of the repository, exception class names, error messages that appear
verbatim as string literals in the code, failing test names, API names written as code. This module
reads them out, each with where it was found (`offset`, a character index into the text) and how
strong it is as evidence (`strength`, 0–1), so ranking can weigh them instead of weighing every
word equally (`weighted_terms`), and so `woods search` can tell such a text from a short question
(`looks_like_issue`).

What it reads (one dataclass per kind, all frozen):
- `Trace`/`Frame` — stack frames of Python, Java/Kotlin, JavaScript/TypeScript, Ruby, Go, Rust, C#
  and PHP (`woods/retrieval/evidence_traces.py`), with the innermost project frame identified;
- `PathMention` — file paths outside frames (`src/foo/bar.py:12`, `lib/x.rb`, `C:\\app\\x.cs`,
  GitHub blob links), matched against repository paths by suffix (`path_suffixes`);
- `ErrorName` — exception and error class names (`ValueError`, `java.lang.IllegalStateException`,
  `NoMethodError`, Go's `io.EOF`, a Rust `Err` value's variant) with their message;
- `Message` — error messages and quoted sentences, cut into the stable fragments that can match a
  string literal verbatim (numbers, ids, paths, hex and quoted values taken out);
- `CodeName` — identifiers in backticks and code blocks, and API names written as code
  (`Foo.bar()`, `foo_bar()`, `Foo::Bar`) in prose;
- `TestName` — failing tests as pytest, unittest, JUnit (Gradle, Surefire, Maven), Go, cargo,
  RSpec, Jest, Mocha, PHPUnit, xUnit and NUnit report them.

Guarantees: pure functions of their input; `extract_evidence`, `looks_like_issue` and
`weighted_terms` never raise on any string (binary junk, lone surrogates, 8 KB of one character)
and run in time linear in the text: the text is capped at MAX_TEXT_CHARS and each line at
MAX_LINE_CHARS, every pattern is anchored or starts at a token boundary, and no quantifier nests in
another over the same characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias, TypeVar

from woods.retrieval.evidence_paths import (
    is_library_location,
    normalize_path,
    path_suffixes,
    strip_to_project,
)
from woods.retrieval.evidence_traces import (
    Frame,
    Line,
    ParsedTraces,
    Trace,
    parse_traces,
    split_lines,
    split_location,
)
from woods.tokens import STOP_WORDS, identifier_tokens, query_terms

__all__ = [
    "CodeName", "ErrorName", "Evidence", "Frame", "Message", "PathMention", "TestName", "Trace", "WeightedTerm",
    "extract_evidence", "looks_like_issue", "normalize_path", "path_suffixes", "weighted_terms",
]

# A query is at most 8 KiB (woods.limits.MAX_QUERY_BYTES); twice that in characters covers any text
# an interface lets through. The rest of a longer string is not read (`Evidence.truncated`).
MAX_TEXT_CHARS = 16_384
# Items of one kind worth keeping from one text: a log with more distinct names than this is a dump,
# and its first ones are as good as the rest.
MAX_ITEMS = 200
# An error message longer than this is a data dump (a serialized request, a diff); only its head is
# kept, and fragments are cut from that.
MAX_MESSAGE_CHARS = 300
# Fragments of one message: its template rarely has more constant parts than this.
MAX_FRAGMENTS = 4

# -- strengths (0–1): how specific a kind of evidence is about where the code is ------------------

# An exception class the project defines (`InvoiceNotFound`) names a unit; a runtime's own
# (`ValueError`, `NullPointerException`) only says what kind of failure it was.
STRENGTH_ERROR_CUSTOM = 0.8
STRENGTH_ERROR_BUILTIN = 0.4
STRENGTH_ERROR_MENTION = 0.5  # named in prose, without a message
# A message is matched verbatim against string literals: a hit is nearly unique.
STRENGTH_MESSAGE = 0.7
STRENGTH_QUOTED = 0.4  # a quoted sentence in prose may be a message or just a quotation
# A path the reporter wrote names a file; with a line number it names a place in it.
STRENGTH_PATH_LINE = 0.7
STRENGTH_PATH = 0.6
STRENGTH_FILE_NAME = 0.4  # a bare `config.py`: many repositories have one
STRENGTH_LIBRARY_PATH = 0.2
# A name written as code (`Foo.bar()`, in backticks) was chosen by the reporter to point at code.
STRENGTH_NAME_MARKED = 0.6
STRENGTH_NAME_CODE = 0.4  # in a fenced code block, or an API spelling in prose
STRENGTH_NAME_PLAIN = 0.3  # a camelCase / snake_case word in prose
# A test a runner reported failing points at the test and, through it, at the code it covers.
STRENGTH_TEST = 0.8
STRENGTH_TEST_MENTION = 0.4

# Prose words (the rest of the text) still count, a little: the lexical side keeps its recall.
PROSE_WEIGHT = 0.1
# A term named by several items is a little more certain than one named once.
REPEAT_BONUS = 0.1


@dataclass(frozen=True, slots=True)
class PathMention:
    """A file path written outside a stack frame, as written (`raw`) and normalised (`path`: `/`
    separators, no URL scheme or query); `line` when one was given (`x.py:12`, `#L12`)."""

    raw: str
    path: str
    line: int | None
    library: bool
    offset: int
    strength: float

    def path_suffixes(self) -> tuple[str, ...]:
        return path_suffixes(self.path)


@dataclass(frozen=True, slots=True)
class ErrorName:
    """An exception or error class as written (`name`, maybe qualified), its last segment
    (`short`), the message printed with it ("" when none), and whether it is a runtime's own."""

    name: str
    short: str
    message: str
    builtin: bool
    offset: int
    strength: float


@dataclass(frozen=True, slots=True)
class Message:
    """An error message (`source`: "error", "panic" or "quoted") and its stable `fragments`: the
    parts left once interpolated values (numbers, ids, hex, paths, quoted values) are cut out, each
    a candidate to find verbatim in a string literal; quoted identifiers (`'HTTP_REFERER'`) follow,
    since they often are literals too."""

    text: str
    fragments: tuple[str, ...]
    source: str
    offset: int
    strength: float


@dataclass(frozen=True, slots=True)
class CodeName:
    """An identifier written as code: `source` is "backtick", "code" (a fenced code block) or
    "prose" (an API spelling such as `Foo.bar()` in running text). `name` drops a trailing `()`."""

    name: str
    source: str
    offset: int
    strength: float


@dataclass(frozen=True, slots=True)
class TestName:
    """A failing test as its runner reported it (`framework`; "" for a test named in prose).
    `name` is the report's spelling; `function` the test itself (`test_z`, `testBar`, the `it`
    text); `suite` its class, module or `describe` ("" when none); `path`/`line` when reported."""

    __test__ = False  # not a pytest test class

    name: str
    framework: str
    function: str
    suite: str
    path: str
    line: int | None
    offset: int
    strength: float


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    """A lexical term (lowercase, cut like the index cuts it: `woods.tokens`) and how much it
    matters in the text (0–1)."""

    term: str
    weight: float


@dataclass(frozen=True, slots=True)
class Evidence:
    """Everything `extract_evidence` found, each kind in text order. `prose`: the lexical terms of
    the text's remaining running text (stop words dropped), for low-weight recall. `truncated`: the
    text was longer than MAX_TEXT_CHARS and only its head was read."""

    traces: tuple[Trace, ...]
    paths: tuple[PathMention, ...]
    errors: tuple[ErrorName, ...]
    messages: tuple[Message, ...]
    names: tuple[CodeName, ...]
    tests: tuple[TestName, ...]
    prose: tuple[str, ...]
    truncated: bool

    @property
    def frames(self) -> tuple[Frame, ...]:
        """Every frame of every trace, in text order."""
        return tuple(frame for trace in self.traces for frame in trace.frames)

    @property
    def is_empty(self) -> bool:
        return not (self.traces or self.paths or self.errors or self.messages or self.names or self.tests)


# --- patterns -------------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})")
_BACKTICK = re.compile(r"(`{1,3})([^`\n]{1,200}?)\1(?!`)")
# A run of characters a path, a URL or a `path:line` can be made of; validated by hand afterwards.
_PATH_RUN = re.compile(r"[\w.@+~\-/\\:#\[\]$%=]++")
_GITHUB_BLOB = re.compile(r"^https?://(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org)/[^/]+/[^/]+/(?:-/)?(?:blob|tree|src|raw)/[^/]+/")
_LINE_ANCHOR = re.compile(r"#L(\d{1,7})(?:-L?\d{1,7})?$")
_HAS_SCHEME = re.compile(r"^[A-Za-z][\w+.-]{1,20}://")
# One identifier, maybe qualified with `.`, `::`, `#`, `->` or `\`, maybe called (`()`): possessive,
# so a long run of word characters is read once.
_QUALIFIED = re.compile(r"[A-Za-z_$][\w$]*+(?:(?:\.|::|#|->|\\)[A-Za-z_$][\w$]*+)*+(?:\(\))?")
_SEPARATOR = re.compile(r"\.|::|#|->|\\")
_DEFINITION = re.compile(
    r"^\s*(?:(?:public|private|protected|internal|static|final|abstract|export|default|async|pub(?:\([\w:]{0,40}\))?|"
    r"open|override|sealed|data|inline|unsafe|extern|partial|readonly|const)\s+){0,4}"
    r"(?:def|class|function|func|fn|module|struct|interface|trait|enum|impl|sub|proc|object|record|macro|"
    r"defmodule|defp?)\s+(?P<name>[A-Za-z_$][\w$]{0,100}+(?:[.:][A-Za-z_$][\w$]{0,100}+)*+)"
)
_CALL = re.compile(r"(?<![\w$.])(?P<name>[A-Za-z_$][\w$]{0,100}+(?:(?:\.|::|->)[A-Za-z_$][\w$]{0,100}+)*+)\(")
_QUOTED_SENTENCE = re.compile(r"[\"“]([^\"“”\n]{6,200})[\"”]")
_WORD = re.compile(r"[^\W\d_]{2,}")

# Error names: the suffixes runtimes and projects give them, and the runtimes' own.
# Namespaces of runtimes' own errors: `java.lang.IllegalStateException` is the JVM's, while
# `ActionView::Template::Error` is a library's even though its last segment is a builtin name.
_RUNTIME_NAMESPACE = re.compile(
    r"^(?:java|javax|jdk|sun|kotlin|kotlinx\.coroutines|scala|System|Microsoft\.CSharp|builtins|exceptions|"
    r"std|core|alloc|io|os|errors|sql|context|net|http|json|syscall|junit\.framework|org\.junit|"
    r"org\.opentest4j|assert|node|internal)(?:\.|::)"
)
_ERROR_SUFFIXES = ("Error", "Exception", "Exit", "Interrupt", "Failure", "Fault", "Panic", "Iteration",
                   "Warning", "Violation", "Rejection")
BUILTIN_ERRORS = frozenset(
    {
        # Python
        "BaseException", "Exception", "ArithmeticError", "AssertionError", "AttributeError", "BlockingIOError",
        "BrokenPipeError", "BufferError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
        "EOFError", "FileExistsError", "FileNotFoundError", "FloatingPointError", "GeneratorExit", "ImportError",
        "IndentationError", "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
        "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "NotADirectoryError", "NotImplementedError",
        "OSError", "IOError", "OverflowError", "PermissionError", "RecursionError", "ReferenceError", "RuntimeError",
        "StopIteration", "StopAsyncIteration", "SyntaxError", "SystemError", "SystemExit", "TabError", "TimeoutError",
        "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError", "ValueError",
        "ZeroDivisionError", "DeprecationWarning", "UserWarning", "RuntimeWarning", "FutureWarning", "ExceptionGroup",
        # JavaScript
        "Error", "EvalError", "RangeError", "URIError", "AggregateError", "DOMException",
        # JVM
        "Throwable", "RuntimeException", "NullPointerException", "IllegalStateException", "IllegalArgumentException",
        "IOException", "UncheckedIOException", "FileNotFoundException", "ClassNotFoundException", "ClassCastException",
        "IndexOutOfBoundsException", "ArrayIndexOutOfBoundsException", "StringIndexOutOfBoundsException",
        "NumberFormatException", "UnsupportedOperationException", "ConcurrentModificationException",
        "ArithmeticException", "NoSuchElementException", "NoSuchMethodError", "NoSuchFieldError",
        "NoClassDefFoundError", "StackOverflowError", "OutOfMemoryError", "InterruptedException", "TimeoutException",
        "ExecutionException", "RejectedExecutionException", "CancellationException", "SQLException",
        "AssertionFailedError", "ComparisonFailure", "InvocationTargetException", "ExceptionInInitializerError",
        "SecurityException", "CloneNotSupportedException", "KotlinNullPointerException",
        "UninitializedPropertyAccessException",
        # .NET
        "SystemException", "NullReferenceException", "InvalidOperationException", "ArgumentException",
        "ArgumentNullException", "ArgumentOutOfRangeException", "NotSupportedException", "NotImplementedException",
        "KeyNotFoundException", "FormatException", "InvalidCastException", "ObjectDisposedException",
        "TaskCanceledException", "OperationCanceledException", "AggregateException", "InvalidProgramException",
        "DivideByZeroException", "HttpRequestException", "UnauthorizedAccessException", "XunitException",
        # Ruby
        "StandardError", "ArgumentError", "NoMethodError", "LoadError", "FrozenError", "LocalJumpError",
        "SystemStackError", "ScriptError", "SecurityError", "ThreadError", "FiberError", "EncodingError",
        "RegexpError",
        # PHP
        "ErrorException", "ArgumentCountError", "DivisionByZeroError", "LogicException", "InvalidArgumentException",
        "DomainException", "LengthException", "OutOfRangeException", "OutOfBoundsException", "OverflowException",
        "RangeException", "UnderflowException", "UnexpectedValueException", "BadMethodCallException",
        "BadFunctionCallException", "JsonException", "PDOException",
        # Go, Rust
        "EOF", "ErrUnexpectedEOF", "ParseIntError", "ParseFloatError", "Utf8Error", "FromUtf8Error", "TryFromIntError",
    }
)
_PYTHON_ERROR_LINE = re.compile(r"^(?P<name>[\w.]{1,300})(?::\s*(?P<msg>.*))?$")
_ERROR_CODE = re.compile(r" ?\[[A-Z0-9_]{1,40}\](?=:)")
# Django's debug page: `Exception Type: KeyError`, `Exception Value: 'x_pos'`.
_DJANGO_ERROR = re.compile(r"^\s*Exception (?:Type:\s+(?P<name>[\w.]{1,200})|Value:\s+(?P<msg>\S.{0,600}))\s*$")
_RUBY_TRAILING_ERROR = re.compile(r"['`’]: (?P<msg>.{0,600}?) \((?P<name>[A-Z][\w:]{0,200})\)\s*$")
_MARKED_ERROR = re.compile(r"^\W{0,4}(?P<name>Error|Exception)\W{0,4}:\s+(?P<msg>\S.*)$")
_GO_PANIC = re.compile(r"^\s*(?:panic|fatal error): (?P<msg>\S.{0,600}?)(?: \[recovered\])?\s*$")
_PHP_ERROR = re.compile(
    r"(?:PHP )?(?:Fatal error|Catchable fatal error|Parse error|Warning|Notice|Deprecated):\s+"
    r"(?:Uncaught (?P<name>[\w\\]{1,200}):\s+)?(?P<msg>\S.{0,600})"
)
# Where PHP's message ends: ` in /path/file.php:12` or ` in file.php on line 12` follows it.
_PHP_MESSAGE_END = re.compile(r"\s+in\s+(?:[A-Za-z]:)?[^\s:]{0,400}\.(?:php|phtml|inc)\b")
_PHP_WITH_MESSAGE = re.compile(r"exception '(?P<name>[\w\\]{1,200})' with message '(?P<msg>[^'\n]{1,600})'")
_RUST_ERR_VALUE = re.compile(r"on an `Err` value: (?P<name>[A-Z][\w]{0,100})(?:[({\s]|$)")

# Interpolated parts of a message, cut out to leave its constant template.
_INTERPOLATED = re.compile(
    r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`'\n]{0,200}['`]|‘[^’\n]{0,200}’|<[^<>\n]{0,200}>|#<[^>\n]{0,200}>"
    r"|\[[^\]\n]{0,200}\]|\{[^}\n]{0,200}\}"
    r"|\b0x[0-9a-fA-F]++|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
    r"|(?:[A-Za-z]:)?[\w.~\-]*+(?:[\\/][\w.~\-]++)++[\\/]?|@[0-9a-fA-F]{4,}+|\b[\w.\-]*\d[\w.:\-]*"
)
_FRAGMENT_TRIM = " \t:;,.()[]{}=-–—>|!?"
_QUOTED_VALUE = re.compile(r"^['\"`‘][\w.:\-]{3,80}['\"`’]$")

# Extensions of files a path mention may name (code, markup, configuration).
_KNOWN_EXTENSIONS = frozenset({
    "py", "pyi", "pyx", "pxd", "rb", "rake", "erb", "haml", "slim", "ru", "gemspec", "js", "mjs", "cjs",
    "jsx", "ts", "tsx", "mts", "cts", "vue", "svelte", "astro", "coffee", "go", "rs", "java", "kt", "kts",
    "scala", "sc", "groovy", "gradle", "clj", "cljs", "cljc", "edn", "cs", "csx", "vb", "fs", "fsx", "fsi",
    "cshtml", "razor", "php", "phtml", "inc", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm",
    "swift", "ex", "exs", "eex", "heex", "leex", "erl", "hrl", "hs", "lhs", "elm", "ml", "mli", "lua", "sh",
    "bash", "zsh", "fish", "zig", "dart", "r", "jl", "pl", "pm", "t", "nim", "cr", "v", "d", "sol", "tf",
    "hcl", "proto", "graphql", "gql", "sql", "json", "jsonc", "yaml", "yml", "toml", "ini", "cfg", "conf",
    "xml", "html", "htm", "xhtml", "css", "scss", "sass", "less", "md", "rst", "txt", "adoc", "properties",
    "env", "lock", "mk", "cmake", "bzl", "bazel", "nix", "pug", "ejs", "hbs", "mustache", "twig", "jinja",
    "j2", "tmpl", "tpl", "ipynb"
})
# Product names spelled like files (`Node.js`): not paths.
_NOT_FILES = frozenset({"node.js", "vue.js", "next.js", "nuxt.js", "three.js", "d3.js", "chart.js", "express.js",
                        "react.js", "angular.js", "ember.js", "backbone.js", "socket.io", "asp.net", "ado.net"})

# Test reports, one pattern per runner's spelling.
_PYTEST_SUMMARY = re.compile(r"^\s*(?:FAILED|ERROR)\s+(?P<id>[^\s:]{1,400}::[^\s]{1,400}?)(?:\s+-\s+.*)?\s*$")
_PYTEST_VERBOSE = re.compile(r"^\s*(?P<id>[^\s:]{1,400}::[^\s]{1,400}?)\s+(?:FAILED|ERROR)\b")
_PYTEST_NODE = re.compile(r"(?<![\w/.\-])(?P<id>[\w./\-]{1,400}\.py(?:::[\w\[\]\-.]{1,200}){1,4})")
_PYTEST_SECTION = re.compile(r"^_{3,} (?P<name>[\w.\[\]\-]{1,300}) _{3,}$")
_UNITTEST = re.compile(r"^(?:FAIL|ERROR): (?P<name>\w{1,200}) \((?P<suite>[\w.]{1,300})\)")
_GRADLE = re.compile(r"^\s*(?P<chain>\S.{0,1200}) (?:FAILED|FAILURE)\s*$")
_SUREFIRE = re.compile(r"^\s*(?P<name>\w{1,200})\((?P<suite>[\w.$]{1,300})\)(?:\s+Time elapsed:.{0,100}<<< (?:FAILURE|ERROR)!|\s*$|:)")
_SUREFIRE_LIST = re.compile(r"^\s*(?:Failed tests|Tests in error|Failures|Errors):\s*$")
_MAVEN_ERROR = re.compile(r"^\[ERROR\]\s+(?P<suite>[\w.$]{1,300})\.(?P<name>\w{1,200}):(?P<line>\d{1,7})")
_GO_FAIL = re.compile(r"^\s*--- FAIL: (?P<name>\w{1,200})(?:/(?P<sub>\S{1,300}))? \(")
_TESTIFY_TEST = re.compile(r"^\s*Test:\s+(?P<name>Test\w{0,200})")
_CARGO_TEST = re.compile(r"^\s*test (?P<name>[\w:]{1,400}) \.\.\. (?:FAILED|failed)")
_RUST_TEST_THREAD = re.compile(r"^\s*thread '(?P<name>(?:[\w]{1,100}::){1,10}\w{1,200})' panicked at ")
_CARGO_STDOUT = re.compile(r"^\s*---- (?P<name>[\w:]{1,400}) stdout ----\s*$")
_RSPEC_RERUN = re.compile(r"^\s*rspec (?P<path>\S{1,400}?\.rb)(?::(?P<line>\d{1,7})|\[[\d:]{1,100}\])?(?: # (?P<desc>.{1,400}))?\s*$")
_NUMBERED = re.compile(r"^\s*(?P<n>\d{1,4})\) (?P<desc>\S.{0,400}?)\s*$")
_JEST_BULLET = re.compile(r"^\s*(?:<[^>]{1,20}>\s*)?● (?P<desc>\S.{0,600}?)\s*$")
_JEST_FAIL_FILE = re.compile(r"^\s*FAIL\s+(?P<path>\S{1,400}\.(?:[jt]sx?|mjs|cjs|mts|cts|vue))\b")
_CROSS_MARK = re.compile(r"^\s*[✕✗×✖]\s+(?P<desc>\S.{0,400}?)(?:\s+\(\d{1,7}\s?m?s\))?\s*$")
_PHPUNIT = re.compile(r"^\s*\d{1,4}\) (?P<suite>[\w\\]{1,300})::(?P<name>\w{1,200})(?: with data set .{0,200})?\s*$")
_PHPUNIT_PHPT = re.compile(r"^\s*\d{1,4}\) (?P<path>\S{1,400}\.phpt)\s*$")
_NUNIT = re.compile(r"^\s*\d{1,4}\) (?:Failed|Error|Failure) : (?P<name>[\w.+`]{1,400})")
_DOTNET_FAILED = re.compile(r"^\s*(?:Failed|failed|X)\s+(?P<name>[A-Za-z_][\w.+`]{0,400})(?:\([^)\n]{0,300}\))?(?:\s+\[[^\]\n]{0,60}\]|\s+\(\d{1,7}\s?m?s\))?\s*$")
_XUNIT_CONSOLE = re.compile(r"^\s*(?:\[xUnit\.net [^\]\n]{0,40}\]\s+)?(?P<name>[A-Za-z_][\w.+`]{0,400})(?:\([^)\n]{0,300}\))? \[FAIL\]")
_TEST_MENTION = re.compile(
    r"(?<![\w$/\\])(?P<name>test_\w{2,200}+|[A-Z]\w{0,100}?(?:Test|Tests|Spec|IT)\.test\w{1,200}+"
    r"|[A-Z]\w{0,100}?(?:Test|Tests)\.\w{2,200}+)(?!\.\w)"
)
# What every test-report line above holds (one search instead of twenty matches on every line).
_TEST_GATE = re.compile(
    r"FAIL|ERROR|Failed|failed|---- |^\s*test |rspec |\d\) |●|[✕✗×✖]|^\s*X\s|\[xUnit|^_{3,} |Test:|::|<<<"
)
# Words an error line holds, one of which must be on a line before its error readers run.
_ERROR_GATE = re.compile(r"Error|Exception|error|panic|Err|Interrupt|Exit|Failure|Fault|Warning|EOF|Iteration")
# A line that reports a failing test run: a numbered list under it names tests.
_RUNNER_CONTEXT = re.compile(r"\b\d{1,6} failing\b|^\s*Failures:\s*$|There (?:was|were) \d{1,6} failures?:|Failure/Error:")


def extract_evidence(text: str) -> Evidence:
    """Everything `text` says about where the code is (see the module docstring)."""
    truncated = len(text) > MAX_TEXT_CHARS
    lines = split_lines(text[:MAX_TEXT_CHARS])
    parsed = parse_traces(lines)
    collector = _Collector(lines, parsed)
    collector.run()
    return Evidence(
        traces=parsed.traces,
        paths=_ordered(collector.paths.values()),
        errors=_ordered(collector.errors.values()),
        messages=_ordered(collector.messages.values()),
        names=_ordered(collector.names.values()),
        tests=_ordered(collector.tests.values()),
        prose=tuple(collector.prose)[:MAX_ITEMS],
        truncated=truncated,
    )


_Item = TypeVar("_Item", PathMention, ErrorName, Message, CodeName, TestName)


def _ordered(items: Iterable[_Item]) -> tuple[_Item, ...]:
    return tuple(sorted(items, key=lambda item: (item.offset, -item.strength)))[:MAX_ITEMS]


class _Collector:
    """The per-line readers of everything but frames, and what they found (deduplicated by key,
    keeping the strongest occurrence and the first offset)."""

    def __init__(self, lines: Sequence[Line], parsed: ParsedTraces) -> None:
        self.lines = lines
        self.frame_lines = parsed.frame_lines
        self.source_lines = parsed.source_lines
        self.header_lines = parsed.header_lines
        self.error_lines = parsed.error_lines
        self.traces = parsed.traces
        self.paths: dict[tuple[str, int | None], PathMention] = {}
        self.errors: dict[tuple[str, str], ErrorName] = {}
        self.messages: dict[str, Message] = {}
        self.names: dict[str, CodeName] = {}
        self.tests: dict[str, TestName] = {}
        self.prose: dict[str, None] = {}
        self.runner_context = any(_RUNNER_CONTEXT.search(line.body) for line in lines)
        self.surefire_list = False

    def run(self) -> None:
        in_fence = False
        for index, line in enumerate(self.lines):
            body = line.body
            if _FENCE.match(body) and body.count("```") < 2:
                in_fence = not in_fence
                continue
            base = line.offset + line.body_start
            if index in self.frame_lines:
                self._errors(body, base, frame_line=True)
                if thread := _RUST_TEST_THREAD.match(body):  # a test's panic names the test
                    self._test(_rust_test(thread), base + thread.start("name"))
                continue
            tested = self._tests(index, body, base, in_fence)
            erred = self._errors(body, base, frame_line=False)
            if index in self.error_lines and not erred and (last := _PYTHON_ERROR_LINE.match(body)):
                self._error(last.group("name"), last.group("msg") or "", base, header=True)
                erred = True
            self._paths(body, base, in_fence)
            if in_fence or index in self.source_lines:
                self._code_names(body, base)
                continue
            self._backticks(body, base)
            if not tested and not erred and index not in self.header_lines:
                self._quoted(body, base)
                words = _NOT_WORDS.sub(lambda m: " " * len(m.group()), body) if _MAY_HOLD_NON_WORDS.search(body) else body
                self._prose_names(words, base)
                self._prose_words(words)
        for trace in self.traces:
            if trace.message:
                self._message(trace.message, "panic", trace.offset, STRENGTH_MESSAGE)

    # -- errors and messages --

    def _errors(self, body: str, base: int, frame_line: bool) -> bool:
        """Error names and messages on the line; True when it is an error line (a header with a
        message, a panic), whose words are then not prose."""
        if not _ERROR_GATE.search(body):
            return False
        found = False
        if ruby := _RUBY_TRAILING_ERROR.search(body):
            self._error(ruby.group("name"), ruby.group("msg"), base + ruby.start("name"), header=True)
            found = True
        if php := _PHP_ERROR.search(body):
            message = php.group("msg")
            if location := _PHP_MESSAGE_END.search(message):
                message = message[: location.start()]
            if php.group("name"):
                self._error(php.group("name"), message, base + php.start("name"), header=True)
            else:
                self._message(message, "error", base + php.start("msg"), STRENGTH_MESSAGE)
            return True
        if php_message := _PHP_WITH_MESSAGE.search(body):
            self._error(php_message.group("name"), php_message.group("msg"), base + php_message.start(), header=True)
            found = True
        if panic := _GO_PANIC.match(body):
            self._message(panic.group("msg"), "panic", base + panic.start("msg"), STRENGTH_MESSAGE)
            found = True
        if rust := _RUST_ERR_VALUE.search(body):
            self._error(rust.group("name"), "", base + rust.start("name"), header=True)
            found = True
        if django := _DJANGO_ERROR.match(body):
            if django.group("name"):
                self._error(django.group("name"), "", base + django.start("name"), header=True)
            else:
                self._message(django.group("msg"), "error", base + django.start("msg"), STRENGTH_MESSAGE)
            return True
        if marked := _MARKED_ERROR.match(body):
            self._error(marked.group("name"), marked.group("msg"), base + marked.start("name"), header=True)
            return True
        for token in _QUALIFIED.finditer(body):
            name = token.group().removesuffix("()")
            short = _SEPARATOR.split(name)[-1]
            if not _is_error_name(name, short, body, token.start()):
                continue
            end = token.end()
            if code := _ERROR_CODE.match(body, end):  # Node: `AssertionError [ERR_ASSERTION]: …`
                end = code.end()
            after = body[end: end + 2]
            if after.startswith(":") and not after.startswith("::"):
                message = body[end + 1:].strip()
                if "Exception in thread" in body[: token.start()] or message.startswith(("//", "\\")):
                    message = message if "Exception in thread" in body[: token.start()] else ""
                self._error(name, message, base + token.start(), header=True)
                found = found or bool(message)
            elif not frame_line and (name != short or short not in ("Error", "Exception")) and not (
                    token.start() > 0 and body[token.start() - 1] == "(" and after.startswith(")")):
                self._error(name, "", base + token.start(), header=False)
        return found

    def _error(self, name: str, message: str, offset: int, header: bool) -> None:
        short = _SEPARATOR.split(name)[-1]
        builtin = short in BUILTIN_ERRORS and (name == short or bool(_RUNTIME_NAMESPACE.match(name)))
        message = _clean_message(message)
        if header:
            strength = STRENGTH_ERROR_BUILTIN if builtin else STRENGTH_ERROR_CUSTOM
        else:
            strength = STRENGTH_ERROR_BUILTIN / 2 if builtin else STRENGTH_ERROR_MENTION
        key = (name, message)
        if key not in self.errors or self.errors[key].strength < strength:
            previous = self.errors.get(key)
            self.errors[key] = ErrorName(name, short, message, builtin, previous.offset if previous else offset, strength)
        if message:
            self._message(message, "error", offset, STRENGTH_MESSAGE)

    def _message(self, text: str, source: str, offset: int, strength: float) -> None:
        text = _clean_message(text)
        if not text or text in self.messages or len(self.messages) >= MAX_ITEMS:
            return
        fragments = message_fragments(text)
        if fragments:
            self.messages[text] = Message(text, fragments, source, offset, strength)

    def _quoted(self, body: str, base: int) -> None:
        if '"' not in body and "“" not in body:
            return
        for m in _QUOTED_SENTENCE.finditer(body):
            sentence = m.group(1).strip()
            if " " in sentence and len(_WORD.findall(sentence)) >= 2 and not _HAS_SCHEME.match(sentence) and "/" not in sentence:
                self._message(sentence, "quoted", base + m.start(1), STRENGTH_QUOTED)

    # -- tests --

    def _tests(self, index: int, body: str, base: int, in_fence: bool) -> bool:
        """Failing tests reported on this line; True when the line is a test report."""
        found = False
        for pattern, handler in _TEST_READERS if _TEST_GATE.search(body) else ():
            if m := pattern.match(body):
                test = handler(m)
                if test is not None:
                    self._test(test, base + m.start())
                    found = True
                    break
        if not found and _SUREFIRE_LIST.match(body):
            self.surefire_list = True
            return True
        if not body.strip():
            self.surefire_list = False
        if not found and self.surefire_list and (m := _SUREFIRE.match(body)):
            self._test(_Test(m.group("name"), "junit", m.group("name"), m.group("suite")), base + m.start())
            found = True
        if not found and "Time elapsed" in body and "<<<" in body and (m := _SUREFIRE.match(body)):
            self._test(_Test(f"{m.group('suite')}.{m.group('name')}", "junit", m.group("name"), m.group("suite")),
                       base + m.start())
            found = True
        if not found and self.runner_context and (m := _NUMBERED.match(body)):
            found = self._numbered(index, m, base)
        if "::" in body and ".py" in body:
            for node in _PYTEST_NODE.finditer(body):
                self._test(_pytest(node.group("id"), "pytest" if found else ""), base + node.start())
        if not found and not in_fence and ("test" in body or "Test" in body):
            for mention in _TEST_MENTION.finditer(body):
                name = mention.group("name")
                function = _SEPARATOR.split(name)[-1]
                if function.lower() in _KNOWN_EXTENSIONS:  # `GreeterTest.java` is a file
                    continue
                suite = name[: -len(function) - 1] if len(function) < len(name) else ""
                self._test(_Test(name, "", function, suite, strength=STRENGTH_TEST_MENTION), base + mention.start())
        return found

    def _numbered(self, index: int, match: re.Match[str], base: int) -> bool:
        """`1) description` under a runner's failure list: an RSpec example (its `Failure/Error:`
        follows), a Mocha test (`1) suite test:`), a PHPUnit or NUnit test (read above)."""
        description = match.group("desc")
        following = " ".join(self.lines[i].body for i in range(index + 1, min(index + 3, len(self.lines))))
        if "Failure/Error" in following:
            self._test(_Test(description, "rspec", description, ""), base + match.start("desc"))
            return True
        if description.endswith(":"):
            self._test(_Test(description[:-1], "mocha", description[:-1], ""), base + match.start("desc"))
            return True
        return False

    def _test(self, test: _Test | None, offset: int) -> None:
        if test is None or not test.name or len(self.tests) >= MAX_ITEMS:
            return
        previous = self.tests.get(test.name)
        if previous is not None:  # one test reported twice (RSpec's failure and its rerun line): merge
            self.tests[test.name] = TestName(
                test.name, previous.framework or test.framework, previous.function or test.function,
                previous.suite or test.suite, previous.path or test.path,
                previous.line if previous.line is not None else test.line,
                previous.offset, max(previous.strength, test.strength),
            )
            return
        self.tests[test.name] = TestName(test.name, test.framework, test.function, test.suite, test.path, test.line,
                                         offset, test.strength)

    # -- paths --

    def _paths(self, body: str, base: int, in_fence: bool) -> None:
        if not any(c in body for c in "./\\"):
            return
        for run in _PATH_RUN.finditer(body):
            if run.start() > 0 and body[run.start() - 1] == "*":  # a glob (`test/**/*.spec.js`)
                continue
            mention = _path_mention(run.group(), base + run.start())
            if mention is None or len(self.paths) >= MAX_ITEMS:
                continue
            if in_fence:  # a path in pasted code or output is as good as one in prose, not better
                mention = PathMention(mention.raw, mention.path, mention.line, mention.library, mention.offset,
                                      min(mention.strength, STRENGTH_PATH))
            key = (mention.path, mention.line)
            previous = self.paths.get(key)
            if previous is None or previous.strength < mention.strength:
                self.paths[key] = mention if previous is None else PathMention(
                    mention.raw, mention.path, mention.line, mention.library, previous.offset, mention.strength)

    # -- names --

    def _backticks(self, body: str, base: int) -> None:
        if "`" not in body:
            return
        for m in _BACKTICK.finditer(body):
            content = m.group(2).strip()
            offset = base + m.start(2)
            if _is_symbol(content):
                self._name(content, "backtick", offset, STRENGTH_NAME_MARKED)
            elif len(content) <= 120 and not any(_path_mention(word, 0) for word in content.split()):
                for name, position, strength in _code_names(content, STRENGTH_NAME_CODE + 0.1):
                    self._name(name, "backtick", offset + position, strength)

    def _code_names(self, body: str, base: int) -> None:
        for name, position, strength in _code_names(body, STRENGTH_NAME_CODE):
            self._name(name, "code", base + position, strength)

    def _prose_names(self, body: str, base: int) -> None:
        text = _BACKTICK.sub(lambda m: " " * len(m.group()), body) if "`" in body else body
        for token in _QUALIFIED.finditer(text):
            name = token.group()
            if name.isalpha() and (len(name) == 1 or name[1:].islower()):  # a plain word, maybe capitalised
                continue
            strength = _prose_name_strength(name)
            if strength and not _is_error_name(name, _SEPARATOR.split(name.removesuffix("()"))[-1], text, token.start()):
                self._name(name, "prose", base + token.start(), strength)

    def _name(self, name: str, source: str, offset: int, strength: float) -> None:
        name = name.removesuffix("()").strip()
        if not name or len(name) > 200 or len(self.names) >= MAX_ITEMS:
            return
        previous = self.names.get(name)
        if previous is None or previous.strength < strength:
            self.names[name] = CodeName(name, source, previous.offset if previous else offset, round(strength, 2))

    def _prose_words(self, body: str) -> None:
        if len(self.prose) < MAX_ITEMS:
            for term in query_terms(body):
                if term not in STOP_WORDS and term not in _EXTENSION_TERMS and len(term) > 1 and not _is_noise_term(term):
                    self.prose[term] = None


@dataclass(frozen=True, slots=True)
class _Test:
    name: str
    framework: str
    function: str
    suite: str
    path: str = ""
    line: int | None = None
    strength: float = STRENGTH_TEST


def _pytest(node_id: str, framework: str = "pytest") -> _Test:
    parts = node_id.split("::")
    function = re.sub(r"\[.*$", "", parts[-1])
    suite = parts[-2] if len(parts) > 2 else ""
    return _Test(node_id, framework, function, suite, parts[0],
                 strength=STRENGTH_TEST if framework else STRENGTH_TEST_MENTION)


def _unittest(m: re.Match[str]) -> _Test:
    name, suite = m.group("name"), m.group("suite")
    if suite == "unittest.loader._FailedTest":  # a test module that failed to import
        return _Test(name, "unittest", name, "")
    suite = suite.removesuffix("." + name)  # Python 3.11+ prints `(pkg.Class.test_x)`
    return _Test(f"{suite}.{name}", "unittest", name, suite)


def _gradle(m: re.Match[str]) -> _Test | None:
    if " > " not in m.group("chain"):
        return None
    parts = [p.strip() for p in m.group("chain").split(" > ")]
    last = parts[-1].removesuffix("()")
    if len(parts) >= 2 and re.fullmatch(r"[\w.$]{1,300}", parts[-2]) and parts[-2][:1].isalpha():
        return _Test(f"{parts[-2]}.{last}", "junit", last, parts[-2])
    if re.fullmatch(r"[\w.$]{1,400}", last) and "." in last:
        suite, _, function = last.rpartition(".")
        return _Test(last, "junit", function, suite)
    return None


def _jest(m: re.Match[str]) -> _Test | None:
    description = m.group("desc")
    if description.startswith(("Test suite failed to run", "Console")):
        return None
    parts = [p.strip() for p in description.split(" › ")]
    return _Test(description, "jest", parts[-1], " › ".join(parts[:-1]))


def _rspec(m: re.Match[str]) -> _Test:
    description = (m.group("desc") or "").strip()
    number = m.group("line")
    name = description or (f"{m.group('path')}:{number}" if number else m.group("path"))
    return _Test(name, "rspec", description, "", m.group("path"), int(number) if number else None)


def _rust_test(m: re.Match[str]) -> _Test:
    name = m.group("name")
    function = name.rsplit("::", 1)[-1]
    return _Test(name, "cargo", function, name[: -len(function) - 2] if "::" in name else "")


def _dotted(framework: str) -> _TestReader:
    def read(m: re.Match[str]) -> _Test | None:
        name = m.group("name")
        if "." not in name and framework != "xunit":
            return _Test(name, framework, name, "")
        suite, _, function = name.rpartition(".")
        return _Test(name, framework, function, suite)
    return read


_TestReader: TypeAlias = Callable[[re.Match[str]], _Test | None]

_TEST_READERS: tuple[tuple[re.Pattern[str], _TestReader], ...] = (
    (_PYTEST_SUMMARY, lambda m: _pytest(m.group("id"))),
    (_PYTEST_VERBOSE, lambda m: _pytest(m.group("id"))),
    (_PYTEST_SECTION, lambda m: _Test(m.group("name"), "pytest", m.group("name").rsplit(".", 1)[-1],
                                      m.group("name").rpartition(".")[0])),
    (_UNITTEST, _unittest),
    (_GO_FAIL, lambda m: _Test(m.group(0).split("--- FAIL: ", 1)[1].split(" (", 1)[0], "go",
                               m.group("sub") or m.group("name"), m.group("name") if m.group("sub") else "")),
    (_TESTIFY_TEST, lambda m: _Test(m.group("name"), "go", m.group("name"), "")),
    (_CARGO_TEST, _rust_test),
    (_CARGO_STDOUT, _rust_test),
    (_MAVEN_ERROR, lambda m: _Test(f"{m.group('suite')}.{m.group('name')}", "junit", m.group("name"),
                                   m.group("suite"), line=int(m.group("line")))),
    (_GRADLE, _gradle),
    (_RSPEC_RERUN, _rspec),
    (_JEST_BULLET, _jest),
    (_JEST_FAIL_FILE, lambda m: _Test(m.group("path"), "jest", "", "", m.group("path"))),
    (_CROSS_MARK, lambda m: _Test(m.group("desc"), "jest", m.group("desc"), "")),
    (_PHPUNIT, lambda m: _Test(f"{m.group('suite')}::{m.group('name')}", "phpunit", m.group("name"), m.group("suite"))),
    (_PHPUNIT_PHPT, lambda m: _Test(m.group("path"), "phpunit", "", "", m.group("path"))),
    (_NUNIT, _dotted("nunit")),
    (_XUNIT_CONSOLE, _dotted("xunit")),
    (_DOTNET_FAILED, _dotted("dotnet")),
)


# --- helpers ----------------------------------------------------------------------------------------

def _is_error_name(name: str, short: str, body: str, start: int) -> bool:
    if len(short) > 100 or not short[:1].isupper() and not short.startswith("Err") and short != "EOF":
        return False
    segments = _SEPARATOR.split(name)
    if len(segments) == 2 and segments[0][:1].islower() and (short == "EOF" or re.fullmatch(r"Err[A-Z]\w*", short)):
        return True  # Go: io.EOF, sql.ErrNoRows
    if segments[0] == "Errno" and len(segments) == 2:
        return True  # Ruby: Errno::ENOENT
    if short in ("Error", "Exception"):
        before = body[:start].rstrip()
        return len(segments) > 1 or before.endswith(("Uncaught", "Unhandled exception.")) or not before.strip("*_#> -")
    return any(short.endswith(suffix) and len(short) > len(suffix) for suffix in _ERROR_SUFFIXES)


def _clean_message(text: str) -> str:
    """One line of at most MAX_MESSAGE_CHARS; a message that is one quoted value (`'HTTP_REFERER'`,
    as KeyError prints it) loses its quotes."""
    text = " ".join(text.split())[:MAX_MESSAGE_CHARS]
    if len(text) >= 2 and text[0] in "'\"`" and text[-1] == text[0] and text[0] not in text[1:-1]:
        text = text[1:-1]
    return text.strip()


def message_fragments(message: str) -> tuple[str, ...]:
    """The constant parts of a message, longest first: what is left once interpolated values
    (quoted values, numbers, ids, hex, paths, bracketed dumps) are cut out, each at least two words
    or one long word; then quoted identifier-like values (`'HTTP_REFERER'`), which are often
    literals too. `need more than 0 values to unpack` → (`values to unpack`, `need more than`)."""
    text = message[:MAX_MESSAGE_CHARS]
    pieces: list[str] = []
    quoted: list[str] = []
    last = 0
    for m in _INTERPOLATED.finditer(text):
        pieces.append(text[last: m.start()])
        if _QUOTED_VALUE.match(m.group()):
            quoted.append(m.group()[1:-1])
        last = m.end()
    pieces.append(text[last:])
    fragments: list[str] = []
    for piece in pieces:
        fragment = " ".join(piece.split()).strip(_FRAGMENT_TRIM)
        words = _WORD.findall(fragment)
        if len(words) >= 2 and len(fragment) >= 6 or len(words) == 1 and len(fragment) >= 8 and fragment == words[0]:
            fragments.append(fragment)
    ordered = sorted(dict.fromkeys(fragments), key=lambda f: (-len(f), f))[:MAX_FRAGMENTS]
    extra = [q for q in dict.fromkeys(quoted) if q not in ordered][: max(0, MAX_FRAGMENTS - len(ordered))]
    return tuple(ordered + extra)


def _path_mention(token: str, offset: int) -> PathMention | None:
    raw = token.rstrip(".,;:)]}'\"").lstrip("@-")
    if "=" in raw:  # `--config=jest.config.js`
        raw = raw.rsplit("=", 1)[1]
    if len(raw) < 3 or len(raw) > 600:
        return None
    line: int | None = None
    candidate = raw
    if blob := _GITHUB_BLOB.match(candidate):
        candidate = candidate[blob.end():]
        if anchor := _LINE_ANCHOR.search(candidate):
            line = int(anchor.group(1))
            candidate = candidate[: anchor.start()]
    elif _HAS_SCHEME.match(candidate) and not candidate.startswith(("file:", "webpack", "vite:")):
        return None
    if "#" in candidate:
        candidate = candidate.split("#", 1)[0]
    location = split_location(candidate)
    if location is not None and line is None:
        candidate, line = location[0], location[1]
    path = normalize_path(candidate)
    name = path.rsplit("/", 1)[-1]
    stem, dot, extension = name.rpartition(".")
    if not dot or not any(c.isalnum() for c in stem) or extension.lower() not in _KNOWN_EXTENSIONS \
            or name.lower() in _NOT_FILES:
        return None
    if "@" in path.split("/", 1)[0] and "/" not in path:  # an e-mail address
        return None
    library = is_library_location(path)
    has_directory = "/" in strip_to_project(path)
    if library:
        strength = STRENGTH_LIBRARY_PATH
    elif has_directory:
        strength = STRENGTH_PATH_LINE if line is not None else STRENGTH_PATH
    else:
        strength = STRENGTH_PATH if line is not None else STRENGTH_FILE_NAME
    return PathMention(raw, path, line, library, offset, strength)


def _is_symbol(content: str) -> bool:
    """A backtick span that is one identifier, maybe qualified or called (`Foo::Bar`, `x.y()`),
    not a path or a plain English word in code font."""
    return _QUALIFIED.fullmatch(content) is not None and _path_mention(content, 0) is None


def _prose_name_strength(name: str) -> float:
    """How much an identifier-like token in running text looks like code, 0 when it reads as a
    word: calls and qualified names with code casing are API spellings, camelCase and snake_case
    words are names; `e.g`, `github.com`, `Node.js` are not."""
    called = name.endswith("()")
    bare = name.removesuffix("()")
    segments = _SEPARATOR.split(bare)
    if any(len(s) < 2 for s in segments) or len(bare) > 120:
        return 0.0
    if any(s.lower() in _KNOWN_EXTENSIONS for s in segments[1:]) and "." in bare:
        return 0.0  # a file name (`failure_demo.py`, `Node.js`, `x.py::test_y`), not an API
    code_cased = any(_is_code_cased(s) for s in segments)
    if len(segments) > 1:
        if "::" in bare or "#" in bare or "->" in bare:
            return STRENGTH_NAME_CODE
        if called or code_cased or (segments[0][:1].isupper() and len(segments[-1]) >= 3 and segments[-1][:1].isupper()):
            return STRENGTH_NAME_CODE if called or code_cased else STRENGTH_NAME_PLAIN
        return 0.0
    if called:
        return STRENGTH_NAME_CODE
    return STRENGTH_NAME_PLAIN if code_cased else 0.0


def _is_code_cased(segment: str) -> bool:
    """camelCase, PascalCase with an inner capital, snake_case or a leading underscore."""
    inner = segment[1:]
    return (("_" in segment.strip("_") or segment.startswith("_")) and any(c.isalpha() for c in segment)) or (
        any(c.isupper() for c in inner) and any(c.islower() for c in segment)
    )


def _code_names(text: str, strength: float) -> Iterator[tuple[str, int, float]]:
    """Names in a line of code: what it defines, what it calls, and its code-cased words."""
    if m := _DEFINITION.match(text):
        yield m.group("name"), m.start("name"), strength + 0.1
    for m in _CALL.finditer(text):
        name = m.group("name")
        if len(name) >= 2 and name not in _CODE_KEYWORDS:
            yield name, m.start("name"), strength
    for m in _QUALIFIED.finditer(text):
        name = m.group()
        if _prose_name_strength(name) >= STRENGTH_NAME_CODE or _is_code_cased(name):
            yield name, m.start(), strength - 0.1


_CODE_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "return", "function", "print", "puts", "echo",
                            "require", "import", "include", "new", "typeof", "sizeof", "super", "self", "this",
                            "assert", "expect", "describe", "it", "test", "len", "str", "int", "list", "dict"})


def _is_noise_term(term: str) -> bool:
    """A token that is an id, a hash, a version or a number-heavy string rather than a word."""
    digits = sum(c.isdigit() for c in term)
    return (len(term) > 40 or (len(term) >= 6 and digits * 5 >= len(term) * 2)
            or bool(digits and _SHORT_CODE.fullmatch(term)))


# `v19`, `x86`, `s24`, `ff60`, `h3`: versions, registers and models, not words.
_SHORT_CODE = re.compile(r"[a-z]{0,3}\d+[a-z]{0,2}")
# What a prose line holds that is not words: URLs, hashes, hex numbers (blanked, offsets kept).
_NOT_WORDS = re.compile(r"\b[A-Za-z][\w+.-]{1,20}://\S*|\b[0-9a-fA-F]{7,}\b|\b0x[0-9a-fA-F]+\b")
_MAY_HOLD_NON_WORDS = re.compile(r"://|\d")


# --- weighted terms ---------------------------------------------------------------------------------

_NOISE_SEGMENT = re.compile(r"^(?:func\d+|\{\{closure\}\}|lambda\$\w*|\$\w*|<.*>|\d+|anonymous|anon|closure|block)$")
_EXTENSION_TERMS = frozenset({"py", "rb", "js", "ts", "tsx", "jsx", "mjs", "cjs", "go", "rs", "java", "kt", "kts", "cs",
                              "php", "scala", "ex", "exs", "erb", "vue"})


def weighted_terms(evidence: Evidence) -> tuple[WeightedTerm, ...]:
    """The lexical terms of the text, each weighted by the strongest evidence naming it (a term
    named by several items gains REPEAT_BONUS per extra item, up to 1): function and file names of
    frames, paths, error names, message fragments, code names and test names — then the remaining
    prose words at PROSE_WEIGHT. Sorted by weight, then term."""
    best: dict[str, float] = {}
    count: dict[str, int] = {}

    def add(tokens: Iterable[str], weight: float) -> None:
        for token in dict.fromkeys(tokens):
            if len(token) < 2 or token in _EXTENSION_TERMS or token in STOP_WORDS or _is_noise_term(token):
                continue
            best[token] = max(best.get(token, 0.0), weight)
            count[token] = count.get(token, 0) + 1

    for frame in evidence.frames:
        add(_function_terms(frame.function), frame.strength)
        add(_path_terms(frame.path), frame.strength if frame.project else frame.strength / 2)
    for mention in evidence.paths:
        add(_path_terms(mention.path), mention.strength)
    for error in evidence.errors:
        add(identifier_tokens(error.short), error.strength)
    for message in evidence.messages:
        add((t for f in message.fragments for t in query_terms(f) if t not in STOP_WORDS), message.strength * 0.8)
    for name in evidence.names:
        add(_function_terms(name.name), name.strength)
    for test in evidence.tests:
        add(_function_terms(test.function), test.strength)
        add(_function_terms(test.suite), test.strength * 0.8)
    weights = {term: min(1.0, best[term] + REPEAT_BONUS * (count[term] - 1)) for term in best}
    for term in evidence.prose:
        weights.setdefault(term, PROSE_WEIGHT)
    return tuple(WeightedTerm(term, round(weight, 3))
                 for term, weight in sorted(weights.items(), key=lambda item: (-item[1], item[0])))


def _function_terms(function: str) -> list[str]:
    """The tokens of a function's last two meaningful segments (`com.acme.Foo.bar` → foo, bar)."""
    segments = [s for s in re.split(r"[^\w$]+", function) if s and not _NOISE_SEGMENT.match(s)]
    return [t for segment in segments[-2:] for t in identifier_tokens(segment)]


def _path_terms(path: str) -> list[str]:
    """The tokens of a file's stem and its two parent directories (`…/pkg/web/app_runner.py` →
    pkg, web, app_runner, app, runner)."""
    if not path:
        return []
    segments = strip_to_project(normalize_path(path)).split("/")[-3:]
    if segments and "." in segments[-1]:
        segments[-1] = segments[-1].rsplit(".", 1)[0]
    return [t for segment in segments for t in identifier_tokens(segment)]


# --- is this an issue? --------------------------------------------------------------------------------

_MARKDOWN_SIGNALS = (
    re.compile(r"^\s{0,3}(?:`{3,}|~{3,})", re.MULTILINE),  # a code fence
    re.compile(r"^\s{0,3}#{1,6} \S", re.MULTILINE),  # a heading
    re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)]) \S", re.MULTILINE),  # a list
    re.compile(r"`[^`\n]{1,200}`"),  # inline code
    re.compile(r"\n\s*\n"),  # paragraphs
)
# What a bug report says and a document or a question rarely does.
_REPORT_WORDS = (
    re.compile(r"\b(?:steps to reproduce|expected (?:behaviou?r|result|output)|actual (?:behaviou?r|result|output)|"
               r"to reproduce|reproduc(?:e|ible|tion)|stack ?trace|traceback|backtrace|crash(?:es|ed)?|"
               r"regression|workaround|error message|throws?|raised?|fails?|failing|failed|broken|bug|"
               r"does(?:n't| not) work|not working|unexpected(?:ly)?)\b", re.IGNORECASE),
    re.compile(r"\b(?:version|environment|os|python|node|ruby|java|go|rustc|php|dotnet)\s*[:=]?\s*v?\d+\.\d+",
               re.IGNORECASE),
)
# A report is several lines long; a question is one. Below this many characters no multi-paragraph
# text counts as a report on its prose alone.
_MIN_REPORT_CHARS = 160
_MIN_REPORT_LINES = 3
# Markdown structure and report wording signals a report needs (one fewer when it names evidence).
_MIN_REPORT_SIGNALS = 3
# What may precede an error's name on its line for the line to be an error line rather than a
# sentence quoting one ("why does ValueError: x happen"): log prefixes, markers, runtime wording.
_ERROR_LINE_LEAD = re.compile(
    r"^(?:[\s>*#\-\[\]|E]|\d{1,4}[-:.T ]|Uncaught|Unhandled exception\.|Caused by:|Exception|Error|PHP|Fatal error:|"
    r"Fatal Exception:|in thread \"[^\"\n]{0,200}\"|[A-Z]{3,8}:)*$"
)


def _leads_its_line(text: str, offset: int) -> bool:
    """Whether the error at `offset` opens its line (after a log prefix or a runtime's wording)."""
    start = text.rfind("\n", 0, offset) + 1
    return bool(_ERROR_LINE_LEAD.match(text[start:offset][:200]))


def looks_like_issue(text: str, evidence: Evidence | None = None) -> bool:
    """Whether a query is a pasted issue, log, test run or stack trace rather than a question,
    a symbol or a path — so `woods search` can switch to localisation by itself. Precision over
    recall: a stack trace, a failing-test report or an error line with its message counts; so does
    a multi-line Markdown report (its structure and a bug report's wording, or evidence it names);
    a one-line question never does. `evidence`: the text's
    `extract_evidence`, when the caller has it already (it is read again otherwise)."""
    stripped = text[:MAX_TEXT_CHARS].strip()
    if len(stripped) < 12:
        return False
    if evidence is None:
        evidence = extract_evidence(stripped)
    if any(len(trace.frames) >= 2 for trace in evidence.traces):
        return True
    if evidence.traces and (evidence.errors or evidence.messages):
        return True
    if any(test.framework for test in evidence.tests):
        return True
    if any(error.message and error.strength >= STRENGTH_ERROR_BUILTIN and _leads_its_line(stripped, error.offset)
           for error in evidence.errors):
        return True
    if any(message.source == "panic" for message in evidence.messages):
        return True
    lines = [line for line in stripped.splitlines() if line.strip()]
    if len(lines) >= _MIN_REPORT_LINES and len(stripped) >= _MIN_REPORT_CHARS:
        signals = sum(1 for pattern in (*_MARKDOWN_SIGNALS, *_REPORT_WORDS) if pattern.search(stripped))
        return signals >= _MIN_REPORT_SIGNALS or (signals >= _MIN_REPORT_SIGNALS - 1 and not evidence.is_empty)
    return False
