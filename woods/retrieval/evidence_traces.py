"""Stack frames in pasted text: Python, Java/Kotlin, JavaScript/TypeScript, Ruby, Go, Rust, C# and PHP.

Why: a frame that names a file and a line of the repository is the strongest evidence a bug report
carries — it points at a unit directly — and the frames around it name the functions the failure
went through. Every runtime prints its frames its own way; this module reads them all into one
shape (`Frame`) and groups them into the traces they were printed as (`Trace`), in printed order,
with the innermost frame of the project's own code identified (Python prints the innermost frame
last; the JVM, V8, Go, Rust, .NET, Ruby and PHP print it first).

How: the text is read line by line (`Line`: capped length, a log prefix such as a CI timestamp or a
journald header set aside). Each line is checked by cheap substring gates first (`File "`, `at `,
`:in `, `.go:`, `panicked at` …) and only then by anchored regular expressions whose quantifiers are
bounded and never nested, or by plain string splitting (a frame's location is split at its last
colons, its parentheses found with `rfind`). A few formats span two lines (Go prints the function
above its location, a Rust backtrace puts `at file:line` under the function, Django's old debug page
puts the line number under the file); those look one line ahead or back, never further.

Guarantees: `parse_traces` is a pure function of its lines, linear in their total length (a line is
never longer than `MAX_LINE_CHARS`), and never raises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from woods.retrieval.evidence_paths import is_library_location, path_suffixes

# A pasted line longer than this is data (minified code, a base64 blob, a serialized request); the
# rest of it is not searched. Every frame format fits well within it.
MAX_LINE_CHARS = 1000
# Frames of one trace and traces of one text worth keeping: deeper recursion repeats itself, and a
# log holding more traces than this is a log dump whose first traces are as good as the rest.
MAX_FRAMES_PER_TRACE = 200
MAX_TRACES = 50
# Lines (code excerpts, `^^^` markers, blank lines, interleaved timestamps) that may separate two
# frames of the same trace; a longer gap starts a new trace.
MAX_GAP_LINES = 6

PYTHON = "python"
JAVA = "java"
KOTLIN = "kotlin"
SCALA = "scala"
JAVASCRIPT = "javascript"
TYPESCRIPT = "typescript"
RUBY = "ruby"
GO = "go"
RUST = "rust"
CSHARP = "csharp"
PHP = "php"
LANGUAGES = (PYTHON, JAVA, KOTLIN, SCALA, JAVASCRIPT, TYPESCRIPT, RUBY, GO, RUST, CSHARP, PHP)
# Languages whose frames belong to one trace when printed together (a Kotlin app runs on the JVM's
# frames; a TypeScript file's frames sit between the JavaScript runtime's).
_FAMILY = {JAVA: "jvm", KOTLIN: "jvm", SCALA: "jvm", JAVASCRIPT: "js", TYPESCRIPT: "js"}
# Runtimes that print the innermost frame last (everyone else prints it first).
_INNERMOST_LAST = frozenset({PYTHON})

# Strength of a frame as evidence, by what it is. The innermost frame of the project's code is
# where the failure surfaced: the best single pointer a text can hold. Other project frames are the
# path that led there; library and runtime frames only say which API was called.
STRENGTH_INNERMOST = 1.0
STRENGTH_PROJECT = 0.8
STRENGTH_PROJECT_NO_LOCATION = 0.6
STRENGTH_LIBRARY = 0.2
STRENGTH_LIBRARY_NO_LOCATION = 0.1


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the pasted text: `text` (capped at MAX_LINE_CHARS), the offset of its first
    character in the whole text, and `body`: the text without a log prefix (a CI step timestamp, a
    journald or docker-compose header, a Markdown quote marker), starting at `body_start`."""

    text: str
    offset: int
    body: str
    body_start: int


@dataclass(frozen=True, slots=True)
class Frame:
    """One stack frame as printed. `path` and `function` are as written (empty when the frame
    has none); `line`/`column` are None when not printed. `project` is the guess that the frame is
    the code being debugged rather than a dependency or the runtime. `offset` is where the frame
    starts in the text; `strength` how much it says about where the bug is (0–1)."""

    language: str
    path: str
    line: int | None
    column: int | None
    function: str
    project: bool
    offset: int
    strength: float

    def path_suffixes(self) -> tuple[str, ...]:
        """Repository-relative suffixes the frame's file may have, longest first. A JVM frame
        prints only a file name; its package gives the directories (`com.acme.Foo.bar` in
        `Foo.java` → `com/acme/Foo.java`)."""
        if _FAMILY.get(self.language) == "jvm" and self.path and "/" not in self.path and "." in self.function:
            package = _jvm_class(self.function).rpartition(".")[0]
            if package:
                return path_suffixes(package.replace(".", "/") + "/" + self.path)
        return path_suffixes(self.path) if self.path else ()


@dataclass(frozen=True, slots=True)
class Trace:
    """Frames printed together, in printed order. `innermost_first` says which end the failure
    is at; `innermost_project` is the index (into `frames`) of the project frame nearest that end,
    None when every frame is a library's. `error`/`message`: what its header says failed ("" when
    it has no header, or the header is read elsewhere)."""

    language: str
    frames: tuple[Frame, ...]
    innermost_first: bool
    offset: int
    innermost_project: int | None
    error: str = ""
    message: str = ""

    @property
    def innermost_project_frame(self) -> Frame | None:
        return None if self.innermost_project is None else self.frames[self.innermost_project]

    @property
    def innermost_frame(self) -> Frame:
        """The frame at the failure's end of the trace, project or not."""
        return self.frames[0] if self.innermost_first else self.frames[-1]


@dataclass(frozen=True, slots=True)
class ParsedTraces:
    """What `parse_traces` found: the traces, and the lines they took (`frame_lines`: frames and
    trace headers, whose words are not prose; `header_lines`: headers that also carry an error
    name and message for the caller to read; `source_lines`: the source line Python prints under
    a frame — code, not prose; `error_lines`: the line after a Python trace that names its error,
    whatever the error's name — `InvoiceNotFound: no invoice 12`)."""

    traces: tuple[Trace, ...]
    frame_lines: frozenset[int]
    header_lines: frozenset[int]
    source_lines: frozenset[int]
    error_lines: frozenset[int]


# --- line reading -------------------------------------------------------------------------------

_LOG_PREFIX = re.compile(
    r"^(?:"
    r"\[\d{1,2}:\d\d:\d\d(?:[.,]\d{1,9})?\]\s?"  # [01:06:58] (CI step logs)
    r"|\d{4}-\d\d-\d\d[T _]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\s+"  # ISO timestamps
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]{1,64} [\w.\-/]{1,64}(?:\[\d{1,10}\])?:\s"  # journald
    r"|[\w.-]{1,40} {1,8}\| "  # docker compose `service-1  | `
    r"|> ?"  # Markdown quote
    r")"
)


def split_lines(text: str) -> list[Line]:
    """The text's lines with their offsets, each capped and with its log prefix set aside."""
    lines: list[Line] = []
    offset = 0
    for raw in text.split("\n"):
        capped = raw[:MAX_LINE_CHARS].rstrip("\r")
        prefix = _LOG_PREFIX.match(capped)
        start = prefix.end() if prefix else 0
        lines.append(Line(capped, offset, capped[start:], start))
        offset += len(raw) + 1
    return lines


# --- locations ----------------------------------------------------------------------------------

_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")


def split_location(location: str) -> tuple[str, int, int | None] | None:
    """`path:line[:column]` → (path, line, column), split at the last colons (Windows drive
    letters and URLs keep theirs); None when it does not end in a line number."""
    text = location.strip()
    head, sep, last = text.rpartition(":")
    if not sep or not _is_number(last):
        return None
    before, sep2, middle = head.rpartition(":")
    if sep2 and _is_number(middle) and before:
        return before, int(middle), int(last)
    return (head, int(last), None) if head else None


def _is_number(text: str) -> bool:
    return 0 < len(text) <= 7 and text.isascii() and text.isdigit()


def _looks_like_file(path: str) -> bool:
    """A location's path part names a file (not `at the moment: 3`): it has an extension, a
    directory, or is one of the runtimes' pseudo-files."""
    if not path or len(path) > 500 or " " in path.strip():
        return path.startswith(("<anonymous>", "node:", "internal/"))
    bare = path.split("?", 1)[0]
    return bool(_EXTENSION.search(bare) or "/" in bare or "\\" in bare or bare.startswith(("<", "node:")))


def _language_of_file(path: str, default: str) -> str:
    lower = path.lower().split("?", 1)[0]
    for suffix, language in _FILE_LANGUAGES:
        if lower.endswith(suffix):
            return language
    return default


_FILE_LANGUAGES = (
    (".tsx", TYPESCRIPT), (".ts", TYPESCRIPT), (".mts", TYPESCRIPT), (".cts", TYPESCRIPT),
    (".rs", RUST), (".py", PYTHON), (".rb", RUBY), (".go", GO), (".php", PHP), (".cs", CSHARP),
    (".kt", KOTLIN), (".kts", KOTLIN), (".scala", SCALA), (".java", JAVA),
)


# --- library or project -------------------------------------------------------------------------

_JVM_LIBRARY = re.compile(
    r"^(?:java|javax|jakarta|jdk|sun|com\.sun|kotlin|kotlinx|scala|akka|android|androidx|dalvik|"
    r"com\.android|org\.junit|junit|org\.testng|org\.hamcrest|org\.mockito|org\.assertj|org\.springframework|"
    r"org\.apache|org\.gradle|worker\.org\.gradle|org\.eclipse|org\.jetbrains|io\.netty|io\.grpc|io\.ktor|"
    r"reactor|io\.reactivex|rx|okhttp3|okio|retrofit2|com\.google|com\.fasterxml|org\.hibernate|ch\.qos|"
    r"org\.slf4j|groovy|org\.codehaus|net\.bytebuddy|org\.awaitility|io\.micrometer|io\.quarkus|io\.micronaut)\."
)
_CSHARP_LIBRARY = re.compile(
    r"^(?:System|Microsoft|Xunit|NUnit|Newtonsoft|Castle|Moq|MS|Mono|Windows|Npgsql|Serilog|Polly|"
    r"AutoMapper|Dapper|FluentAssertions|Grpc|Google|Azure|Amazon|StackExchange|NLog|log4net|Autofac|"
    r"MediatR|Swashbuckle|Hangfire|Orleans|Avalonia|Xamarin|Android|UIKit|Foundation|UnityEngine)[.+]"
)
_RUST_LIBRARY = re.compile(
    r"^(?:<?(?:std|core|alloc|tokio|futures|futures_\w+|hyper|backtrace|panic_unwind|test|rayon|rayon_core|"
    r"async_std|actix_rt|tracing|tower)::|<unknown>$|main$|__rust|_rust|rust_begin_unwind|__rustc|__libc|"
    r"_start$|start_thread$|clone\d*$|BaseThreadInitThunk|RtlUserThreadStart|_pthread|__scrt|invoke_main|"
    r"mainCRTStartup|__tmainCRTStartup)"
)
_PHP_LIBRARY_FUNCTIONS = frozenset({"{main}", "include", "require", "include_once", "require_once"})


def _jvm_class(function: str) -> str:
    """`java.base/java.lang.Thread.run` → `java.lang.Thread` (module prefix and method dropped)."""
    qualified = function.rsplit("/", 1)[-1]
    return qualified.rpartition(".")[0] if "." in qualified else qualified


def _go_standard_library(function: str) -> bool:
    """`os/exec.(*Cmd).Wait`, `runtime.gopark`: the standard library's package paths have no dot in
    their first segment; everyone else's start with a domain (`github.com/…`) or are `main`."""
    name = function.removeprefix("created by ").strip()
    slash = name.rfind("/")
    package = name[: slash + 1] + name[slash + 1:].split(".", 1)[0]
    return bool(name) and package != "main" and "." not in package.split("/", 1)[0]


def is_library_frame(language: str, path: str, function: str) -> bool:
    """A frame of a dependency, the toolchain or the runtime (by its file when it names one, and
    by the package of its function where the runtime prints packages)."""
    if path and is_library_location(path):
        return True
    family = _FAMILY.get(language, language)
    if family == "jvm":
        return bool(_JVM_LIBRARY.match(function.rsplit("/", 1)[-1]))
    if language == CSHARP:
        return bool(_CSHARP_LIBRARY.match(function))
    if language == RUST:
        return bool(_RUST_LIBRARY.match(function))
    if language == GO:
        return _go_standard_library(function)
    if language == PHP:
        return function == "{main}" or (function in _PHP_LIBRARY_FUNCTIONS and not path)
    return False


# --- frame patterns -----------------------------------------------------------------------------

_PY_FRAME = re.compile(r'File "(?P<path>[^"\n]{1,500})", line (?P<line>\d{1,7})(?:, in (?P<func>[^\s,]{1,200}))?')
_PY_DJANGO_FRAME = re.compile(r'^\s*File "(?P<path>[^"\n]{1,500})" in (?P<func>[^\s,]{1,200})\s*$')
_PY_DJANGO_LINE = re.compile(r"^\s{1,20}(?P<line>\d{1,7})\.\s")
_PY_IPYTHON_FRAME = re.compile(r"^\s*File (?P<path>[~/\\\w.][^\s:,]{0,400}):(?P<line>\d{1,7})(?:, in (?P<func>[^\s(]{1,200}))?")
_PY_RICH_FRAME = re.compile(r"(?:^|(?<=[\s│|]))(?P<path>[^\s│|:]{0,400}?\.py):(?P<line>\d{1,7}) in (?P<func>[\w<>.]{1,200})")
_PY_LOCATION = re.compile(r"Exception Location:\s+(?P<path>\S.{0,499}?) in (?P<func>[^\s,]{1,200}), line (?P<line>\d{1,7})")

# `at` frames (JVM, V8, .NET, a Rust backtrace's location lines): found, then split by hand. An
# `at` starts a line or follows whitespace; a JVM frame glued to its exception (`…Exceptionat x.y(…)`,
# as pasted without a newline) is read too.
# .NET prints its word for `at` in the languages its runtime is localised to (read only at a line's
# start, before a call: `en Xunit.Assert.Equal(…) en C:\…\x.cs:línea 244`).
_AT = re.compile(r"(?:(?<![^\s>|])|(?<=Exception)|(?<=Error))at\s+|^\s*(?:en|bei|à|в|em|ved|vid|w|在)\s+(?=\S+\()")
_CSHARP_TAIL = re.compile(
    r"^(?:in|en|bei|dans|à|в|em|na|i|w|v|在)\s+(?P<path>.{1,500}?):"
    r"(?:(?:line|línea|linea|Zeile|ligne|строка|linha|riga|regel|rad|řádek|wiersz|行)\s?)?(?P<line>\d{1,7})\s*$"
)
_JVM_LOCATION = re.compile(
    r"^(?P<file>[\w$.\-]{1,200}\.(?P<ext>java|kt|kts|scala|groovy|clj|cljc|aj)):(?P<line>\d{1,7})$"
    r"|^(?:Unknown Source(?::\d{1,7})?|Native Method|<generated>|Compiled Code|SourceFile:\d{1,7}|"
    r"[\w$.\-]{1,200}\.(?:java|kt|kts|scala|groovy))$"
)
_JVM_EXTENSIONS = {"java": JAVA, "kt": KOTLIN, "kts": KOTLIN, "scala": SCALA, "groovy": JAVA, "clj": JAVA,
                   "cljc": JAVA, "aj": JAVA}
_BRACKET_SUFFIX = re.compile(r"\s+~?\[[^\[\]]{0,200}\]$")  # logback's ` ~[lib-1.0.jar:1.0]`

_RUBY_FRAME = re.compile(
    r"(?:^|(?<=[\s(]))(?P<path><internal:[^>\n]{0,300}>|(?:[A-Za-z]:)?[^\s:'\"`()<>]{1,400}+)"
    r":(?P<line>\d{1,7}) ?:in\s+[`'‘](?P<label>[^'`’\n]{0,300})['`’]"
)
_RUBY_LABEL_PREFIX = re.compile(r"^(?:(?:block|rescue|ensure)(?: \(\d{1,4} levels\))? in )+")

_GO_GOROUTINE = re.compile(r"^goroutine \d{1,10} \[[^\]]{0,100}\]:\s*$")
_GO_LOCATION = re.compile(r"^\s*(?P<path>\S{1,500}\.go):(?P<line>\d{1,7})(?:\s+\+0x[0-9a-fA-F]{1,16})?\s*$")
_GO_FUNCTION = re.compile(r"^[\w.\-/*()$\[\]{}]{1,400}$")

_RUST_PANIC = re.compile(r"(?:thread '(?P<thread>[^'\n]{0,200})' )?panicked at ")
_RUST_OLD_TAIL = re.compile(r"', (?P<loc>[^\s']{1,500}:\d{1,7}(?::\d{1,7})?)\s*$")
_RUST_FRAME = re.compile(r"^\s*\d{1,4}:\s+(?:(?P<address>0x[0-9a-fA-F]{1,16}) - )?(?P<func>\S.{0,600})$")
_RUST_AT = re.compile(r"^\s+at (?P<loc>\S.{0,600})$")
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
_RUST_RUSTC_PREFIX = re.compile(r"^__rustc\[[0-9a-f]{1,32}\]::")

_PHP_HASH_FRAME = re.compile(
    r"(?:^|(?<=\s))#(?P<n>\d{1,4})\s+(?P<path>[^\s(#]{1,400}?)\((?P<line>\d{1,7})\):\s*(?P<func>[^\s(]{1,300})"
)
_PHP_INTERNAL_FRAME = re.compile(r"(?:^|(?<=\s))#\d{1,4}\s+\[internal function\]:\s*(?P<func>[^\s(]{1,300})")
_PHP_IN_FILE = re.compile(
    r"\bin (?P<path>(?:[A-Za-z]:)?[^\s:]{0,400}?\.(?:php|phtml|inc|module))"
    r"(?::(?P<line>\d{1,7})|\s+on line (?P<line2>\d{1,7}))"
)
_PHP_BARE_LOCATION = re.compile(r"^\s*(?P<path>(?:[A-Za-z]:)?[^\s:]{1,500}\.php):(?P<line>\d{1,7})\s*$")  # PHPUnit
_PHP_XDEBUG_ROW = re.compile(r"^\s*\d{1,4}\s+\d{1,6}\.\d{1,6}\s+\d{1,12}\s+(?P<func>\S{1,300}?)\(\s*\)\s+(?P<loc>\S{1,500})\s*$")

_BROWSER_FIREFOX = re.compile(r"^\s*(?P<func>[^@\s]{0,300})@(?P<loc>\S{1,600}?),?\s*$")
_BROWSER_CHROME = re.compile(r"^\s*(?P<func>\S[^@]{0,300}?) @ (?P<loc>\S{1,600})\s*$")
_NODE_THROW_SITE = re.compile(r"^(?P<path>(?:[A-Za-z]:)?[^\s:]{1,500}\.(?:js|mjs|cjs|jsx|ts|tsx|mts|cts|coffee|vue)):(?P<line>\d{1,7})\s*$")

# --- headers ------------------------------------------------------------------------------------

_PY_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
_JVM_CAUSE = re.compile(r"^\s*(?:Caused by|Suppressed):\s+(?P<error>[\w$.]{1,300})")
_JVM_THREAD = re.compile(r"^\s*(?:Exception|Error) in thread \"[^\"\n]{0,200}\"\s+(?P<error>[\w$.]{1,300})")
# The line after a Python trace: `pkg.InvoiceNotFound: no invoice 12`, or a bare `KeyboardInterrupt`.
_PY_ERROR_LINE = re.compile(r"^(?P<error>[A-Za-z_][\w]{0,100}(?:\.[A-Za-z_][\w]{0,100}){0,10})(?::(?: |$)|$)")
_RUST_BACKTRACE = re.compile(r"^\s*stack backtrace:\s*$")
_PHP_STACK = re.compile(r"^\s*(?:PHP )?Stack trace:\s*$")
_CSHARP_END = re.compile(r"^\s*--- (?:End of|Fin del|Ende der|Fin de la) ")
_JVM_MORE = re.compile(r"^\s*\.\.\. \d{1,9} (?:more|common frames omitted)\s*$")
# An error header at a line's start (`TypeError: …`, `java.lang.X: …`, `System.X: …`): after a
# Python trace it names that trace's error; before other runtimes' frames it starts a new trace.
_ERROR_HEADER = re.compile(
    r"^\s*(?:Uncaught |Unhandled exception\. |Exception |Fatal Exception: )?"
    r"(?P<error>(?:[A-Za-z_$][\w$]{0,100}(?:\.|::)){0,8}"
    r"(?:[A-Z][\w$]{0,100}(?:Error|Exception|Exit|Interrupt|Failure|Fault|Iteration|Warning)|Error|Exception))"
    r"(?: ?\[[A-Z0-9_]{1,40}\])?(?::|\s*$)"
)


# What every header above holds (one search instead of ten matches on every line).
_HEADER_GATE = re.compile(
    r"Traceback|Caused by|Suppressed|in thread|goroutine|stack backtrace|Stack trace|^\s*--- |^\s*\.\.\. "
    r"|Error|Exception|Exit|Interrupt|Failure|Fault|Iteration|Warning"
)


@dataclass(slots=True)
class _RawFrame:
    language: str
    path: str
    line: int | None
    column: int | None
    function: str
    offset: int


@dataclass(slots=True)
class _Builder:
    language: str
    offset: int
    last_line: int
    frames: list[_RawFrame] = field(default_factory=list)
    error: str = ""
    message: str = ""
    throw_site_only: bool = False
    traceback: bool = False  # a Python trace under its `Traceback (most recent call last):` header


def _python_error_name(name: str, body: str) -> bool:
    """An exception class name as Python prints it under a trace: with a message after `: `, or
    spelled like a class (dotted, or CamelCase) when alone — not a stray word such as `Thanks`."""
    if body.startswith(name + ":"):
        return True
    last = name.rsplit(".", 1)[-1]
    return "." in name or (last[:1].isupper() and any(c.isupper() for c in last[1:]))


def _family(language: str) -> str:
    return _FAMILY.get(language, language)


def parse_traces(lines: Sequence[Line]) -> ParsedTraces:
    """Every stack trace in `lines`, in text order (see the module docstring)."""
    parser = _Parser(lines)
    parser.run()
    return ParsedTraces(tuple(parser.traces), frozenset(parser.frame_lines), frozenset(parser.header_lines),
                        frozenset(parser.source_lines), frozenset(parser.error_lines))


class _Parser:
    """The line loop's state: the trace being built, the headers seen, the lines taken."""

    def __init__(self, lines: Sequence[Line]) -> None:
        self.lines = lines
        self.traces: list[Trace] = []
        self.frame_lines: set[int] = set()
        self.header_lines: set[int] = set()
        self.source_lines: set[int] = set()
        self.error_lines: set[int] = set()
        self.current: _Builder | None = None
        self.force_new = False  # a header said the next frames start a new trace
        self.pending_error = ""
        self.pending_message = ""
        self.pending_traceback = False
        self.rust_context = False  # inside a Rust backtrace: numbered lines are frames

    # -- the loop --

    def run(self) -> None:
        index = 0
        while index < len(self.lines):
            index += self._line(index)
        self._close()

    def _line(self, index: int) -> int:
        """Read line `index`; returns how many lines it took (1, or 2 when a frame spans two)."""
        body = self.lines[index].body
        if not body.strip():
            return 1
        if self._header(index, body):
            return 1
        taken = self._frames(index, body)
        if taken:
            return taken
        self.rust_context = False
        return 1

    def _header(self, index: int, body: str) -> bool:
        in_traceback = self.current is not None and self.current.traceback
        if not in_traceback and not _HEADER_GATE.search(body):
            return False
        if _PY_TRACEBACK.match(body):
            self._start_header(index)
            self.pending_traceback = True
            return True
        if (cause := _JVM_CAUSE.match(body)) or (cause := _JVM_THREAD.match(body)):
            error = cause.group("error")
            if error.endswith(("Exceptionat", "Errorat")):  # `…NullPointerExceptionat com.x.y(…)`, pasted glued
                error = error[:-2]
            self._start_header(index, error)
            self.header_lines.add(index)
            self._at_frames(index, body, 0)
            return True
        if _GO_GOROUTINE.match(body):
            self._start_header(index)
            return True
        if _RUST_BACKTRACE.match(body):
            self.frame_lines.add(index)
            self.rust_context = True
            if self.current is None or self.current.language != RUST or index - self.current.last_line > MAX_GAP_LINES:
                self._start_header(index)
            return True
        if _PHP_STACK.match(body) or _CSHARP_END.match(body) or _JVM_MORE.match(body):
            self.frame_lines.add(index)
            if self.current is not None:
                self.current.last_line = index
            return True
        current = self.current
        if (current is not None and current.traceback and index - current.last_line <= MAX_GAP_LINES
                and (last := _PY_ERROR_LINE.match(body)) and _python_error_name(last.group("error"), body)):
            current.error = current.error or last.group("error")  # Python names its error last, any name
            self._close()
            self.header_lines.add(index)
            self.error_lines.add(index)
            return True
        if error := _ERROR_HEADER.match(body):
            name, current = error.group("error"), self.current
            near = current is not None and index - current.last_line <= MAX_GAP_LINES
            if current is not None and near and current.language == PYTHON:  # Python names its error last
                current.error = current.error or name
                self._close()
            elif current is not None and near and current.throw_site_only:  # Node: file:line, source, error
                current.error = current.error or name
            else:
                self._close()
                self.force_new = True
                self.pending_error = name
            self.header_lines.add(index)
            return False  # the line may hold a frame too (a Ruby or PHP one-liner)
        return False

    def _start_header(self, index: int, error: str = "") -> None:
        self._close()
        self.force_new = True
        self.pending_traceback = False
        self.pending_error = error
        self.frame_lines.add(index)

    # -- frames --

    def _frames(self, index: int, body: str) -> int:
        line = self.lines[index]
        base = line.offset + line.body_start
        if 'File "' in body or body.lstrip().startswith("File "):
            taken = self._python(index, body, base)
            if taken:
                return taken
        if "Exception Location:" in body and (m := _PY_LOCATION.search(body)):
            self._add(index, PYTHON, m.group("path"), int(m.group("line")), None, m.group("func"), base + m.start("path"))
            return 1
        if ".py:" in body and " in " in body and (m := _PY_RICH_FRAME.search(body)):
            self._add(index, PYTHON, m.group("path"), int(m.group("line")), None, m.group("func"), base + m.start())
            return 1
        if self.rust_context or " - " in body:
            taken = self._rust_frame(index, body, base)
            if taken:
                return taken
        if "panicked at " in body:
            return self._rust_panic(index, body, base)
        if ".go:" in body and (m := _GO_LOCATION.match(body)):
            return self._go(index, m, base)
        if ":in " in body and self._ruby(index, body, base):
            return 1
        if ("at" in body or "(" in body) and self._at_frames(index, body, 0):
            return 1
        if ("#" in body or ".php" in body or ".phtml" in body or ".inc" in body) and self._php(index, body, base):
            return 1
        if "@" in body and self._browser(index, body, base):
            return 1
        if (m := _NODE_THROW_SITE.match(body)) and self._node_throw_site(index, m, base):
            return 1
        return 0

    def _python(self, index: int, body: str, base: int) -> int:
        if m := _PY_FRAME.search(body):
            self._add(index, PYTHON, m.group("path"), int(m.group("line")), None, m.group("func") or "", base + m.start())
            following = self.lines[index + 1].body if index + 1 < len(self.lines) else ""
            indent = len(body) - len(body.lstrip())
            if following.strip() and len(following) - len(following.lstrip()) > indent and 'File "' not in following:
                self.source_lines.add(index + 1)  # the frame's source line, printed under it
            return 1
        if m := _PY_DJANGO_FRAME.match(body):
            following = self.lines[index + 1].body if index + 1 < len(self.lines) else ""
            number = _PY_DJANGO_LINE.match(following)
            self._add(index, PYTHON, m.group("path"), int(number.group("line")) if number else None, None,
                      m.group("func"), base + m.start("path") - len('File "'))
            if number:
                self.frame_lines.add(index + 1)
                return 2
            return 1
        if m := _PY_IPYTHON_FRAME.match(body):
            self._add(index, PYTHON, m.group("path"), int(m.group("line")), None, m.group("func") or "", base + m.start("path"))
            return 1
        return 0

    def _at_frames(self, index: int, body: str, shift: int) -> bool:
        """Every `at …` frame on the line (one, or several when a trace was pasted on one line)."""
        line = self.lines[index]
        base = line.offset + line.body_start + shift
        found = False
        matches = list(_AT.finditer(body))
        for number, match in enumerate(matches):
            end = matches[number + 1].start() if number + 1 < len(matches) else len(body)
            parsed = _parse_at(body[match.end():end], self.rust_context)
            if parsed is None:
                continue
            language, function, path, line_number, column = parsed
            if language == RUST and line_number is not None and self._attach_rust_location(index, path, line_number, column):
                found = True
                continue
            self._add(index, language, path, line_number, column, function, base + match.start())
            found = True
        return found

    def _ruby(self, index: int, body: str, base: int) -> bool:
        found = False
        for m in _RUBY_FRAME.finditer(body):
            label = _RUBY_LABEL_PREFIX.sub("", m.group("label")).strip()
            function = "" if label.startswith("<") else label
            self._add(index, RUBY, m.group("path"), int(m.group("line")), None, function, base + m.start())
            found = True
        return found

    def _go(self, index: int, location: re.Match[str], base: int) -> int:
        previous = self.lines[index - 1].body.strip() if index > 0 else ""
        function = ""
        offset = base + location.start("path")
        if previous.startswith("created by "):
            function = previous.removeprefix("created by ").split(" in goroutine ", 1)[0].strip()
        elif previous.endswith(")") and "(" in previous:
            function = previous[: previous.rfind("(")]
        elif _GO_FUNCTION.match(previous):
            function = previous
        if function and not _GO_FUNCTION.match(function):
            function = ""
        if function:
            self.frame_lines.add(index - 1)
            offset = self.lines[index - 1].offset + len(self.lines[index - 1].text) - len(self.lines[index - 1].text.lstrip())
        elif not (self.current is not None and self.current.language == GO):
            return 0  # a lone `file.go:12` (a test's `Error Trace:`) is a path, not a frame
        self._add(index, GO, location.group("path"), int(location.group("line")), None, function, offset)
        return 1

    def _rust_panic(self, index: int, body: str, base: int) -> int:
        match = _RUST_PANIC.search(body)
        if match is None:
            return 0
        rest = body[match.end():].strip()
        message, location, taken = "", "", 1
        if rest.startswith("'"):
            tail = _RUST_OLD_TAIL.search(rest)
            if tail:
                message, location = rest[1: tail.start()], tail.group("loc")
            else:  # the message spans lines: `panicked at 'assertion failed …\n  left: …', src/x.rs:1:2`
                parts = [rest[1:]]
                for ahead in range(index + 1, min(index + 7, len(self.lines))):
                    tail = _RUST_OLD_TAIL.search(self.lines[ahead].body)
                    if tail:
                        parts.append(self.lines[ahead].body[: tail.start()].strip())
                        location, taken = tail.group("loc"), ahead - index + 1
                        break
                    parts.append(self.lines[ahead].body.strip())
                message = " ".join(p for p in parts if p) if location else rest[1:]
        else:
            location = rest.rstrip(":").strip()
            following = self.lines[index + 1].body.strip() if index + 1 < len(self.lines) else ""
            if following and not following.startswith(("note:", "stack backtrace:")):
                message = following
                taken = 2
        parsed = split_location(location) if location else None
        self._start_header(index)
        self.pending_message = message[:500]
        for extra in range(index, index + taken):
            self.frame_lines.add(extra)
        if parsed is not None and _looks_like_file(parsed[0]):
            self._add(index, RUST, parsed[0], parsed[1], parsed[2], "", base + match.start())
        elif self.current is None:  # a panic without a location still starts a Rust trace
            self.current = _Builder(RUST, base + match.start(), index, message=self.pending_message)
            self.force_new = False
        self.rust_context = True
        return taken

    def _rust_frame(self, index: int, body: str, base: int) -> int:
        if self.rust_context and (at := _RUST_AT.match(body)):
            parsed = split_location(at.group("loc"))
            if parsed is not None and self._attach_rust_location(index, *parsed):
                return 1
            return 0
        frame = _RUST_FRAME.match(body)
        if frame is None or not (self.rust_context or frame.group("address")):
            return 0
        function = _RUST_RUSTC_PREFIX.sub("", _RUST_HASH.sub("", frame.group("func").strip()))
        self.frame_lines.add(index)
        self.rust_context = True
        if function == "<unknown>":
            return 1
        self._add(index, RUST, "", None, None, function, base + frame.start("func"))
        return 1

    def _attach_rust_location(self, index: int, path: str, line: int, column: int | None) -> bool:
        """A backtrace's `at file:line:col` line completes the frame above it."""
        current = self.current
        if current is None or current.language != RUST or not current.frames or index - current.last_line > 1:
            return False
        last = current.frames[-1]
        if last.path:
            return False
        last.path, last.line, last.column = path, line, column
        current.last_line = index
        self.frame_lines.add(index)
        return True

    def _php(self, index: int, body: str, base: int) -> bool:
        """PHP's `#0 file(line): call()` frames, its `in file on line N` / `in file:N` throw sites
        and Xdebug's call-stack rows, in the order the line holds them (a trace pasted on one line
        reads throw site, frames, then the throw site again)."""
        found: list[tuple[int, str, int | None, str]] = []
        if "#" in body:
            found += [(m.start(), m.group("path"), int(m.group("line")), m.group("func"))
                      for m in _PHP_HASH_FRAME.finditer(body)]
            found += [(m.start(), "", None, m.group("func")) for m in _PHP_INTERNAL_FRAME.finditer(body)]
        found += [(m.start("path"), m.group("path"), int(m.group("line") or m.group("line2")), "")
                  for m in _PHP_IN_FILE.finditer(body)]
        if not found and (m := _PHP_XDEBUG_ROW.match(body)) and (loc := split_location(m.group("loc"))):
            found.append((m.start("func"), loc[0], loc[1], m.group("func")))
        if not found and (m := _PHP_BARE_LOCATION.match(body)):
            found.append((m.start("path"), m.group("path"), int(m.group("line")), ""))
        for position, path, line_number, function in sorted(found, key=lambda item: item[0]):
            self._add(index, PHP, path, line_number, None, function, base + position)
        return bool(found)

    def _browser(self, index: int, body: str, base: int) -> bool:
        for pattern in (_BROWSER_CHROME, _BROWSER_FIREFOX):
            if (m := pattern.match(body)) and (loc := split_location(m.group("loc"))) and _looks_like_file(loc[0]):
                if pattern is _BROWSER_FIREFOX and "." not in loc[0]:
                    continue
                language = _language_of_file(loc[0], JAVASCRIPT)
                if _family(language) != "js":
                    continue
                self._add(index, language, loc[0], loc[1], loc[2], m.group("func").strip(), base + m.start())
                return True
        return False

    def _node_throw_site(self, index: int, match: re.Match[str], base: int) -> bool:
        """Node prints the throwing line's file first (`/app/x.js:14`), then the source line and a
        caret, then the error: the innermost frame, before the trace proper."""
        following = " ".join(self.lines[i].body for i in range(index + 1, min(index + 6, len(self.lines))))
        if "^" not in following:
            return False
        self._close()
        self.force_new = True
        path = match.group("path")
        self._add(index, _language_of_file(path, JAVASCRIPT), path, int(match.group("line")), None, "", base)
        if self.current is not None:
            self.current.throw_site_only = True
        return True

    # -- building traces --

    def _add(self, index: int, language: str, path: str, line: int | None, column: int | None,
             function: str, offset: int) -> None:
        current = self.current
        joins = (
            current is not None and not self.force_new and _family(current.language) == _family(language)
            and index - current.last_line <= MAX_GAP_LINES
        )
        if not joins:
            self._close()
            current = self.current = _Builder(language, offset, index, error=self.pending_error,
                                              message=self.pending_message,
                                              traceback=self.pending_traceback and language == PYTHON)
            self.force_new = self.pending_traceback = False
            self.pending_error = self.pending_message = ""
        assert current is not None
        self.frame_lines.add(index)
        current.last_line = index
        if current.throw_site_only and current.frames and not (path and path == current.frames[0].path and line == current.frames[0].line):
            current.throw_site_only = False
        if len(current.frames) >= MAX_FRAMES_PER_TRACE:
            return
        if path and line is not None and language == PHP and any(f.path == path and f.line == line for f in current.frames):
            return  # PHP repeats the throw site at the end of a one-line trace (`thrown in x.php on line 3`)
        current.frames.append(_RawFrame(language, path.strip(), line, column, function.strip(), offset))

    def _close(self) -> None:
        current, self.current = self.current, None
        if current is None or not current.frames or len(self.traces) >= MAX_TRACES:
            return
        self.traces.append(_finish(current))


def _finish(builder: _Builder) -> Trace:
    language = builder.language
    languages = {f.language for f in builder.frames}
    if len(languages) > 1 and _family(language) == "js":
        language = TYPESCRIPT if TYPESCRIPT in languages else JAVASCRIPT
    elif len(languages) > 1 and _family(language) == "jvm":
        language = KOTLIN if KOTLIN in languages else SCALA if SCALA in languages else JAVA
    innermost_first = language not in _INNERMOST_LAST
    project = [not is_library_frame(f.language, f.path, f.function) and bool(f.path or f.function)
               for f in builder.frames]
    order = range(len(project)) if innermost_first else range(len(project) - 1, -1, -1)
    innermost = next((i for i in order if project[i]), None)
    frames = tuple(
        Frame(
            language=f.language, path=f.path, line=f.line, column=f.column, function=f.function,
            project=project[i], offset=f.offset, strength=_strength(project[i], i == innermost, f),
        )
        for i, f in enumerate(builder.frames)
    )
    return Trace(language, frames, innermost_first, builder.offset, innermost, builder.error, builder.message)


def _strength(project: bool, innermost: bool, frame: _RawFrame) -> float:
    located = bool(frame.path) and frame.line is not None
    if innermost:
        return STRENGTH_INNERMOST
    if project:
        return STRENGTH_PROJECT if located else STRENGTH_PROJECT_NO_LOCATION
    return STRENGTH_LIBRARY if located else STRENGTH_LIBRARY_NO_LOCATION


def _parse_at(segment: str, rust_context: bool) -> tuple[str, str, str, int | None, int | None] | None:
    """One `at …` frame → (language, function, path, line, column), or None when the text after
    `at` is not a frame. Split by hand: the location sits in the last parentheses (JVM, V8) or
    after them (`in file:line N`, .NET), or is all there is (`at file:line:col`, V8 and Rust)."""
    text = _BRACKET_SUFFIX.sub("", segment.strip().rstrip(","))
    close = text.rfind(")")
    if close == -1:
        loc = split_location(text)
        if loc is None or not _looks_like_file(loc[0]):
            return None
        path = loc[0]
        language = _language_of_file(path, RUST if rust_context else JAVASCRIPT)
        if loc[2] is None and language not in (RUST, JAVA, KOTLIN, SCALA):
            return None  # `at x.js:3` without a column is prose more often than V8
        return language, "", path, loc[1], loc[2]
    opening = text.rfind("(", 0, close)
    if opening == -1:
        return None
    head, inner, tail = text[:opening].rstrip(), text[opening + 1: close], text[close + 1:].strip()
    if tail:
        csharp = _CSHARP_TAIL.match(tail)
        if csharp and head and " " not in head:
            return CSHARP, head, csharp.group("path").strip(), int(csharp.group("line")), None
    loc = split_location(inner)
    if loc is not None and loc[2] is not None and _looks_like_file(loc[0]):
        return _language_of_file(loc[0], JAVASCRIPT), head, loc[0], loc[1], loc[2]
    if inner in ("<anonymous>", "native", "index 0") or inner.startswith("eval at"):
        return (JAVASCRIPT, head, "", None, None) if head else None
    if not head or " " in head:
        return None
    jvm = _JVM_LOCATION.match(inner)
    if jvm is not None and "." in head:
        if jvm.group("file"):
            return _JVM_EXTENSIONS[jvm.group("ext")], head, jvm.group("file"), int(jvm.group("line")), None
        return JAVA, head, "", None, None
    if "." in head and (not inner or " " in inner or "," in inner or "&" in inner or "`" in inner):
        return CSHARP, head, "", None, None
    return None
