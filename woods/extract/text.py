"""Documents and configuration: the text fallback for every text file without a tree-sitter grammar.

Why: a repository's READMEs, docs, configuration, SQL schemas, Dockerfiles and Makefiles answer
questions code cannot ("how do I install it", "which port does it listen on", "where is the users
table"). They have no grammar woods parses, but most have a cheap, robust outline: headings in
prose, tables and top-level keys in configuration, targets in a Makefile, `CREATE` statements in
SQL. This module turns them into `document` units whose `language` is the document kind
(`markdown`, `yaml`, `sql` …; see `DOCUMENT_KINDS`), so ranking can tell them from code.

Units of one file (see docs/extraction.md, "Documents and configuration"):

- one *file unit* per file: identifier = the path, the whole text, `signature` = the title (first
  heading) of a prose file;
- *outline kinds* (markdown, rst, asciidoc, rdoc): one unit per heading, identifier
  `path#slug` (GitHub-style slug, repeats `-1`, `-2` …). A section runs from its heading (for
  setext/overlined titles: the first line of the title block) to the line before the next heading
  of the same or a higher level, so sections nest: `parent` is the enclosing section, or the file;
- *configuration kinds*: one unit per named section (TOML/INI tables, multi-line top-level YAML/JSON
  keys, Makefile targets, Dockerfile stages, CMake functions, SQL `CREATE` statements), identifier
  `path#<name>`; sections are disjoint and their parent is the file;
- every other kind: the file unit only.

Guarantees: `extract` is a pure function of (path, bytes) that never raises on any input (invalid
UTF-8 decodes with U+FFFD, NUL bytes and 2 MB lines are just text); lines end at "\\n" only, as in
tree-sitter positions and the chunker; every unit's `source_code` is exactly its lines of the file
(1-based, inclusive; a section never ends on a blank line); a section equal to the whole file (its
first to last non-blank line) is not repeated — the file unit stands for it; identifiers within a
file are unique.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import DOCUMENT_TYPE, FileExtraction, Unit

if TYPE_CHECKING:  # markdown-it is imported on first use: discovery imports this module for its tables
    from markdown_it import MarkdownIt

# --- kinds -----------------------------------------------------------------------------------------
# Document kind → group. The kind is the unit's and the file's `language`; the group tells ranking
# what a document is for: `prose` explains, `config` configures, `schema` declares data shapes,
# `markup` is presentation (HTML/CSS/templates, Vue/Svelte components).
DOCUMENT_KINDS: dict[str, str] = {
    "markdown": "prose",
    "rst": "prose",
    "asciidoc": "prose",
    "rdoc": "prose",
    "text": "prose",
    "yaml": "config",
    "toml": "config",
    "json": "config",
    "ini": "config",
    "properties": "config",
    "xml": "config",
    "hcl": "config",
    "gomod": "config",
    "dockerfile": "config",
    "makefile": "config",
    "cmake": "config",
    "sql": "schema",
    "protobuf": "schema",
    "graphql": "schema",
    "csv": "schema",
    "html": "markup",
    "css": "markup",
    "scss": "markup",
    "less": "markup",
    "vue": "markup",
    "svelte": "markup",
    "haml": "markup",
    "slim": "markup",
    "template": "markup",
}

# Lower-cased extension → kind. A deliberate allow-list: text people write and search. Not on it
# (and so `unsupported`): images-as-text (.svg), logs, certificates and keys (.pem .key .crt),
# secrets files (.env, .npmrc, .netrc), patches, and source of languages without an extractor —
# a code extractor, not a text fallback typed `document`, is the right fix for those.
DOCUMENT_EXTENSIONS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".rdoc": "rdoc",
    ".txt": "text",
    ".yml": "yaml",
    ".yaml": "yaml",
    ".toml": "toml",
    ".json": "json",
    ".jsonc": "json",
    ".json5": "json",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".properties": "properties",
    ".xml": "xml",
    ".xsd": "xml",
    ".plist": "xml",  # a binary plist has NUL bytes: discovery's sniff skips it as `binary`
    ".csproj": "xml",
    ".tf": "hcl",
    ".tfvars": "hcl",
    ".hcl": "hcl",
    ".sql": "sql",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".graphqls": "graphql",
    ".gql": "graphql",
    ".csv": "csv",  # small tables only: discovery skips larger ones as `data`
    ".tsv": "csv",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".css": "css",
    ".scss": "scss",
    ".sass": "scss",
    ".less": "less",
    ".vue": "vue",
    ".svelte": "svelte",
    ".haml": "haml",
    ".slim": "slim",
    ".hbs": "template",
    ".handlebars": "template",
    ".mustache": "template",
    ".jinja": "template",
    ".jinja2": "template",
    ".j2": "template",
    ".njk": "template",
    ".twig": "template",
    ".liquid": "template",
    ".ejs": "template",
    ".eex": "template",  # Elixir EEx / HEEx / LiveView templates
    ".heex": "template",
    ".leex": "template",
    ".tmpl": "template",
    ".tpl": "template",
    ".mk": "makefile",
    ".cmake": "cmake",
    ".dockerfile": "dockerfile",
}

# Whole file names (case-sensitive, as the tools that read them are) → kind.
DOCUMENT_FILENAMES: dict[str, str] = {
    "Dockerfile": "dockerfile",
    "Containerfile": "dockerfile",
    "Makefile": "makefile",
    "makefile": "makefile",
    "GNUmakefile": "makefile",
    "CMakeLists.txt": "cmake",
    "go.mod": "gomod",
    "go.work": "gomod",
    "Pipfile": "toml",
    ".editorconfig": "ini",
    ".flake8": "ini",
    ".pylintrc": "ini",
    "pylintrc": "ini",
    ".coveragerc": "ini",
}

# Extension-less project documents, matched case-insensitively on the name's first word
# (`LICENSE`, `LICENSE-MIT`, `COPYING.LESSER`, `README`): plain `text`.
TEXT_DOCUMENT_WORDS: frozenset[str] = frozenset({
    "README", "LICENSE", "LICENCE", "COPYING", "CHANGELOG", "CHANGES", "HISTORY", "NEWS", "CONTRIBUTING",
    "AUTHORS", "CONTRIBUTORS", "MAINTAINERS", "NOTICE", "INSTALL", "SECURITY", "TODO", "USAGE", "CODEOWNERS",
})

# `config.yml.example`, `.env.sample`, `database.yml.template`: a configuration file shipped as an
# example is indexed as the kind under the suffix (never as code, never as a template).
EXAMPLE_SUFFIXES: tuple[str, ...] = (".example", ".sample", ".template", ".dist", ".default", ".tmpl")
# `.env` itself usually holds secrets and is never indexed; its examples (`.env.example`) are.
_ENV_NAME = ".env"
_EXAMPLE_KIND_GROUPS = frozenset({"config", "schema"})

_NAME_WORD = re.compile(r"[.\-_]")


def document_kind(file_path: str) -> str | None:
    """The document kind of `file_path` from its name alone, or None when it is not a document."""
    name = PurePosixPath(file_path).name
    kind = _name_kind(name)
    if kind is not None:
        return kind
    lowered = name.lower()
    for suffix in EXAMPLE_SUFFIXES:
        if lowered.endswith(suffix) and len(name) > len(suffix):
            inner = name[: -len(suffix)]
            inner_kind = "properties" if inner.lower() == _ENV_NAME else _name_kind(inner)
            if inner_kind is not None and DOCUMENT_KINDS[inner_kind] in _EXAMPLE_KIND_GROUPS:
                return inner_kind
    return None


def _name_kind(name: str) -> str | None:
    if name in DOCUMENT_FILENAMES:
        return DOCUMENT_FILENAMES[name]
    if name.startswith("Dockerfile.") or name.startswith("Containerfile."):
        return "dockerfile"
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in DOCUMENT_EXTENSIONS:
        return DOCUMENT_EXTENSIONS[suffix]
    if not name.startswith(".") and _NAME_WORD.split(name, maxsplit=1)[0].upper() in TEXT_DOCUMENT_WORDS:
        return "text"
    return None


# --- the extractor ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Section:
    """A section found by a scanner: 0-based inclusive lines, the fragment base, the signature line."""

    start: int
    end: int
    heading: int  # the heading, key or statement line (after any comments attached above it)
    name: str
    signature: str
    level: int = 1  # outline depth (1 = top); flat configuration sections are all level 1
    metadata: tuple[tuple[str, str], ...] = ()


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """The document units of one file: the file unit, then its sections in source order."""
    del layout  # documents do not depend on the repository layout
    kind = document_kind(file_path) or "text"
    text = source.decode("utf-8", "replace")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # "a\n" is one line, as in file_span
    if not lines:
        lines = [""]
    scanner = _SCANNERS.get(kind)
    found = scanner(_clean(lines)) if scanner is not None else []
    outline = kind in _OUTLINE_SCANNERS
    title = found[0].signature if outline and found else None
    sections = _exact(found, lines)
    file_unit = Unit(
        identifier=file_path, type=DOCUMENT_TYPE, language=kind, file_path=file_path, line_start=1,
        line_end=len(lines), source_code=text, signature=title, metadata={"kind": kind},
    )
    units = [file_unit, *_section_units(file_path, kind, lines, sections, nested=outline)]
    return FileExtraction(file_path=file_path, language=kind, units=tuple(units))


def _clean(lines: Sequence[str]) -> list[str]:
    """The lines scanners read: no byte-order mark, no carriage return before the line end."""
    clean = [line[:-1] if line.endswith("\r") else line for line in lines]
    clean[0] = clean[0].lstrip("\ufeff")
    return clean


def _exact(found: Sequence[_Section], lines: Sequence[str]) -> list[_Section]:
    """Sections trimmed of trailing blank lines, without one that spans the whole file, in order."""
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    if not nonblank:
        return []
    whole = (nonblank[0], nonblank[-1])
    kept: list[_Section] = []
    for section in found:
        end = section.end
        while end > section.start and not lines[end].strip():
            end -= 1
        if (section.start, end) == whole:
            continue
        kept.append(_Section(section.start, end, section.heading, section.name, section.signature, section.level,
                             section.metadata))
    return sorted(kept, key=lambda s: (s.start, -s.end, s.level, s.heading))


def _section_units(file_path: str, kind: str, lines: Sequence[str], sections: Sequence[_Section],
                   nested: bool) -> list[Unit]:
    slugs = _Slugger(slug if nested else str)
    units: list[Unit] = []
    open_sections: list[tuple[_Section, str]] = []  # the enclosing outline, outermost first
    for section in sections:
        identifier = f"{file_path}#{slugs(section.name)}"
        parent = file_path
        if nested:
            while open_sections and (open_sections[-1][0].level >= section.level
                                     or open_sections[-1][0].end < section.start):
                open_sections.pop()
            if open_sections:
                parent = open_sections[-1][1]
            open_sections.append((section, identifier))
        metadata = {"kind": kind, "level": section.level, **dict(section.metadata)}
        units.append(Unit(
            identifier=identifier, type=DOCUMENT_TYPE, language=kind, file_path=file_path,
            line_start=section.start + 1, line_end=section.end + 1,
            source_code="\n".join(lines[section.start : section.end + 1]),
            signature=section.signature, parent=parent, metadata=metadata,
        ))
    return units


class _Slugger:
    """Unique fragments within one file, github-slugger's way: a repeat of `x` becomes `x-1`,
    `x-2` … (skipping any taken already). `transform` makes the base (`slug` for headings); an
    empty base (a heading of only symbols) becomes `section`."""

    def __init__(self, transform: Callable[[str], str]) -> None:
        self._transform = transform
        self._occurrences: dict[str, int] = {}

    def __call__(self, name: str) -> str:
        base = self._transform(name) or "section"
        result = base
        while result in self._occurrences:
            self._occurrences[base] += 1
            result = f"{base}-{self._occurrences[base]}"
        self._occurrences[result] = 0
        return result


def slug(text: str) -> str:
    """GitHub's anchor of a heading's text (github-slugger, without de-duplication): lower-cased,
    everything but letters, marks, numbers, `_`, `-` and spaces dropped, each space a `-`."""
    kept = (c for c in text.lower() if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return "".join(kept).replace(" ", "-")


def _name_fragment(name: str) -> str:
    """A configuration section's name as an identifier fragment: verbatim, whitespace runs as `-`."""
    return "-".join(name.split())


# --- outline scanners: prose -----------------------------------------------------------------------
_FRONT_MATTER_FENCES = {"---": ("---", "..."), "+++": ("+++",)}  # Jekyll/Hugo YAML and TOML front matter


def _front_matter_end(lines: Sequence[str]) -> int:
    """Index of the line closing a front-matter block at the top of the file, or -1."""
    if not lines:
        return -1
    closers = _FRONT_MATTER_FENCES.get(lines[0].lstrip("\ufeff").rstrip())
    if closers is None:
        return -1
    for index in range(1, len(lines)):
        if lines[index].rstrip() in closers:
            return index
    return -1


@lru_cache(maxsize=1)
def _markdown_parser() -> MarkdownIt:
    """CommonMark block parser with GFM tables; inline parsing is left to `_heading_text`."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table")
    parser.core.ruler.disable("inline")
    return parser


@lru_cache(maxsize=1)
def _inline_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def _heading_text(raw: str) -> str:
    """The rendered text of a heading's inline markdown (code spans, link text; no markup)."""
    parts: list[str] = []
    for token in _inline_parser().parseInline(raw):
        for child in token.children or ():
            if child.type in ("text", "code_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
    return "".join(parts).strip()


def _markdown_sections(lines: Sequence[str]) -> list[_Section]:
    """ATX and setext headings outside containers, fences, HTML blocks and front matter."""
    front = _front_matter_end(lines)
    # Front matter becomes blank lines and lone CRs spaces, so markdown-it's line numbers are ours.
    body = ["" if i <= front else line.replace("\r", " ") for i, line in enumerate(lines)]
    tokens = _markdown_parser().parse("\n".join(body))
    headings: list[tuple[int, int, int, str]] = []  # (first line, last title line, level, raw title)
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        first, after = token.map
        inline = tokens[index + 1] if index + 1 < len(tokens) else None
        raw = inline.content if inline is not None and inline.type == "inline" else ""
        last_title = first if token.markup.startswith("#") else max(first, after - 2)
        headings.append((first, last_title, int(token.tag[1:]), raw))
    return _outline(lines, [
        (first, level, _heading_text(raw), " ".join(lines[i].strip() for i in range(first, last + 1)))
        for first, last, level, raw in headings
    ])


def _outline(lines: Sequence[str], headings: Sequence[tuple[int, int, str, str]]) -> list[_Section]:
    """Nested sections from (first line, level, title, signature) in source order: each runs to the
    line before the next heading of the same or a higher level (a lower or equal number)."""
    ends = [len(lines) - 1] * len(headings)
    open_headings: list[int] = []  # positions of headings whose section has not ended yet
    for position, (first, level, _title, _signature) in enumerate(headings):
        while open_headings and headings[open_headings[-1]][1] >= level:
            ends[open_headings.pop()] = first - 1
        open_headings.append(position)
    return [
        _Section(first, max(first, end), first, title, signature, level, (("title", title),))
        for (first, level, title, signature), end in zip(headings, ends, strict=True)
    ]


_RST_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1*[ \t]*\Z")  # one punctuation character, repeated


def _rst_adornment(line: str) -> str | None:
    """The adornment character when `line` is an over- or underline, else None."""
    return line[0] if line and _RST_ADORNMENT.match(line) else None


def _rst_sections(lines: Sequence[str]) -> list[_Section]:
    """Section titles: a text line with an underline, optionally an overline of the same character,
    after a blank line (or another title). Levels follow the order in which adornment styles first
    appear, as in docutils; a section starts at its overline when it has one."""
    styles: list[tuple[str, bool]] = []
    headings: list[tuple[int, int, str, str]] = []
    count = len(lines)
    previous_title_end = -1
    index = 0
    while index < count:
        line = lines[index]
        if index > 0 and lines[index - 1].strip() and index - 1 != previous_title_end:
            index += 1  # a title follows a blank line, the start, or another title
            continue
        over = _rst_adornment(line)
        block: tuple[str, int, tuple[str, bool]] | None = None
        if over is not None and index + 2 < count:
            title = lines[index + 1].strip()
            under = lines[index + 2].rstrip()
            if title and _rst_adornment(lines[index + 1]) is None and _rst_adornment(under) == over \
                    and len(under) >= len(title):
                block = (title, 3, (over, True))
        elif over is None and line.strip() and not line[0].isspace() and index + 1 < count:
            under_char = _rst_adornment(lines[index + 1])
            if under_char is not None and _rst_title_fits(line, lines[index + 1]):
                block = (line.strip(), 2, (under_char, False))
        if block is None:
            index += 1
            continue
        title, height, style = block
        if style not in styles:
            styles.append(style)
        headings.append((index, styles.index(style) + 1, title, title))
        previous_title_end = index + height - 1
        index += height
    return _outline(lines, headings)


def _rst_title_fits(title: str, underline: str) -> bool:
    """docutils: an underline shorter than its title is still one when at least 4 characters long."""
    length = len(underline.rstrip())
    return length >= len(title.rstrip()) or length >= 4


_EQUALS_HEADING = re.compile(r"(=+)[ \t]+(\S.*?)[ \t]*\Z")  # AsciiDoc / RDoc `== Title`
_ASCIIDOC_DELIMITER = re.compile(r"(-{4,}|\.{4,}|={4,}|\*{4,}|\+{4,}|_{4,}|/{4,}|`{3,})[ \t]*\Z")


def _equals_sections(lines: Sequence[str], delimited: bool) -> list[_Section]:
    """`=`-prefixed headings (level = number of `=`), outside AsciiDoc delimited blocks."""
    headings: list[tuple[int, int, str, str]] = []
    inside: str | None = None
    for index, line in enumerate(lines):
        stripped = line.rstrip()
        if delimited:
            block = _ASCIIDOC_DELIMITER.match(stripped)
            if block is not None:
                inside = None if inside == block.group(1) else (inside or block.group(1))
                continue
            if inside is not None:
                continue
        match = _EQUALS_HEADING.match(stripped)
        if match is not None:
            headings.append((index, len(match.group(1)), match.group(2), stripped))
    return _outline(lines, headings)


# --- flat scanners: configuration ------------------------------------------------------------------
def _attach_comments(lines: Sequence[str], start: int, floor: int, prefixes: tuple[str, ...]) -> int:
    """`start` moved up over the comment lines directly above it (no blank line between), not
    above `floor` (the first line the section may take)."""
    while start - 1 >= floor and lines[start - 1].strip().startswith(prefixes) and lines[start - 1].strip():
        start -= 1
    return start


def _split_at(lines: Sequence[str], starts: Sequence[tuple[int, str, dict[str, str]]],
              comments: tuple[str, ...], floor: int = 0) -> list[_Section]:
    """Disjoint sections from (line, name, metadata) starts in order: each takes the comments
    directly above it and ends before the next one begins."""
    begins: list[int] = []
    previous = floor
    for line, _name, _meta in starts:
        begins.append(_attach_comments(lines, line, previous, comments) if comments else line)
        previous = line + 1
    sections = []
    for position, (line, name, meta) in enumerate(starts):
        end = begins[position + 1] - 1 if position + 1 < len(starts) else len(lines) - 1
        sections.append(_Section(begins[position], max(line, end), line, _name_fragment(name), lines[line].strip(),
                                 metadata=tuple(sorted(meta.items()))))
    return sections


def _multi_line(sections: Sequence[_Section], lines: Sequence[str]) -> list[_Section]:
    """Key sections whose value goes on below the key line (a one-line setting is part of its file)."""
    return [
        section for section in sections
        if any(lines[i].strip() and not lines[i].lstrip().startswith("#")
               for i in range(section.heading + 1, section.end + 1))
    ]


_YAML_KEY = re.compile(
    r"""(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([^\s#\-?:,\[\]{}&*!|>'"%@`][^#]*?|-[^\s#][^#]*?))[ \t]*:(?:[ \t]|\Z)"""
)
_YAML_DOCUMENT = re.compile(r"(?:---|\.\.\.)(?:[ \t]|\Z)")


def _yaml_sections(lines: Sequence[str]) -> list[_Section]:
    """Top-level mapping keys of a single-document YAML file whose value spans several lines."""
    starts: list[tuple[int, str, dict[str, str]]] = []
    for index, line in enumerate(lines):
        if _YAML_DOCUMENT.match(line):
            if starts:
                return []  # several documents (Kubernetes manifests …): the file unit only
            continue
        match = _YAML_KEY.match(line)
        if match is not None:
            key = next(group for group in match.groups() if group is not None)
            starts.append((index, key, {"key": key}))
    return _multi_line(_split_at(lines, starts, ("#",)), lines)


_TOML_TABLE = re.compile(r"[ \t]*\[(\[)?[ \t]*([^\[\]]+?)[ \t]*\](?(1)\])[ \t]*(?:#.*)?\Z")
_TOML_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'')


def _toml_sections(lines: Sequence[str]) -> list[_Section]:
    """`[table]` and `[[array.of.tables]]` headers outside multi-line strings and arrays."""
    starts: list[tuple[int, str, dict[str, str]]] = []
    in_string: str | None = None
    depth = 0
    for index, line in enumerate(lines):
        if in_string is not None:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        if depth == 0:
            match = _TOML_TABLE.match(line)
            if match is not None:
                starts.append((index, match.group(2), {"table": match.group(2)}))
                continue
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                in_string = quote
                line = line[: line.index(quote)]
                break
        code = _TOML_STRING.sub("", line).split("#", 1)[0]
        depth = max(0, depth + code.count("[") + code.count("{") - code.count("]") - code.count("}"))
    return _split_at(lines, starts, ("#",))


_INI_SECTION = re.compile(r"[ \t]*\[([^\]\n]+)\][ \t]*(?:[;#].*)?\Z")


def _ini_sections(lines: Sequence[str]) -> list[_Section]:
    starts = []
    for index, line in enumerate(lines):
        match = _INI_SECTION.match(line)
        if match is not None:
            name = match.group(1).strip()
            starts.append((index, name, {"section": name}))
    return _split_at(lines, starts, ("#", ";"))


_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\[^\n])*"?|//[^\n]*|/\*.*?(?:\*/|\Z)|[{}\[\]:,\n]', re.S)


def _json_sections(lines: Sequence[str]) -> list[_Section]:
    """Keys of the root object whose value spans several lines (`scripts`, `compilerOptions` …).
    Comments (JSONC) are skipped; a malformed file yields what was seen before it went wrong."""
    text = "\n".join(lines)
    spans: list[tuple[int, int, str]] = []
    depth = 0
    line = 0
    last_line = 0  # line of the last significant token
    expect_key = False
    pending: str | None = None  # a string at depth 1 that may be a key
    current: tuple[int, str] | None = None  # (line, key) whose value is being read
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
            continue
        if token.startswith(("//", "/*")):
            line += token.count("\n")
            continue
        if token in "{[":
            if depth == 0 and token == "[":
                return []  # a root array: no named keys
            depth += 1
            expect_key = depth == 1
        elif token in "}]":
            depth -= 1
            if depth == 0:
                if current is not None:
                    spans.append((current[0], last_line, current[1]))
                break
        elif token == ",":
            if depth == 1:
                if current is not None:
                    spans.append((current[0], last_line, current[1]))
                current, expect_key = None, True
        elif token == ":":
            if depth == 1 and pending is not None:
                current, pending, expect_key = (line, pending), None, False
        elif token.startswith('"') and depth == 1 and expect_key:
            pending = token[1:-1] if token.endswith('"') and len(token) > 1 else token[1:]
        last_line = line
    sections = [_Section(start, end, start, _name_fragment(key), lines[start].strip(), metadata=(("key", key),))
                for start, end, key in spans if end > start]
    return sections


_MAKE_DIRECTIVE = re.compile(
    r"(?:-?include|sinclude|ifeq|ifneq|ifdef|ifndef|else|endif|define|endef|export|unexport|override|vpath)\b")
_MAKE_RULE = re.compile(r"([^:=#\t ][^:=#]*?)[ \t]*::?(?!:?=)")


def _makefile_sections(lines: Sequence[str]) -> list[_Section]:
    """Rules (`target: prerequisites` and their tab-indented recipe), special targets excepted."""
    sections: list[_Section] = []
    index = 0
    floor = 0
    in_define = False
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if in_define:
            in_define = not stripped.startswith("endef")
            index += 1
            continue
        if _MAKE_DIRECTIVE.match(line):
            in_define = stripped.startswith("define")
            index += 1
            continue
        match = _MAKE_RULE.match(line)
        if match is None or match.group(1).startswith(".") and match.group(1)[1:2].isupper():
            index += 1
            continue
        start = _attach_comments(lines, index, floor, ("#",))
        end = index
        cursor = index
        while lines[cursor].endswith("\\") and cursor + 1 < len(lines):
            cursor += 1
            end = cursor
        cursor += 1
        while cursor < len(lines) and (lines[cursor].startswith("\t") or not lines[cursor].strip()
                                       or lines[cursor - 1].endswith("\\")):
            if lines[cursor].strip():
                end = cursor
            cursor += 1
        target = match.group(1).strip()
        sections.append(_Section(start, end, index, _name_fragment(target), line.strip(),
                                 metadata=(("target", target),)))
        floor = end + 1
        index = cursor
    return sections


_DOCKER_FROM = re.compile(r"[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*(\S+)(?:[ \t]+AS[ \t]+(\S+))?", re.I)


def _dockerfile_sections(lines: Sequence[str]) -> list[_Section]:
    """Build stages of a multi-stage Dockerfile (`FROM … AS name`), named by alias, else image."""
    starts = []
    for index, raw in enumerate(lines):
        match = _DOCKER_FROM.match(raw)
        if match is not None:
            name = match.group(2) or match.group(1)
            starts.append((index, name, {"stage": name}))
    return _split_at(lines, starts, ("#",)) if len(starts) >= 2 else []


_CMAKE_BLOCK = re.compile(r"[ \t]*(function|macro)[ \t]*\([ \t]*([^\s()]+)", re.I)
_CMAKE_END = re.compile(r"[ \t]*end(function|macro)[ \t]*\(", re.I)


def _cmake_sections(lines: Sequence[str]) -> list[_Section]:
    """`function(name …)` / `macro(name …)` through their `endfunction()` / `endmacro()`."""
    sections: list[_Section] = []
    floor = 0
    index = 0
    while index < len(lines):
        match = _CMAKE_BLOCK.match(lines[index])
        if match is None:
            index += 1
            continue
        end = index
        for cursor in range(index + 1, len(lines)):
            close = _CMAKE_END.match(lines[cursor])
            if close is not None and close.group(1).lower() == match.group(1).lower():
                end = cursor
                break
        else:
            end = len(lines) - 1
        start = _attach_comments(lines, index, floor, ("#",))
        name = match.group(2)
        sections.append(_Section(start, end, index, _name_fragment(name), lines[index].strip(),
                                 metadata=(("command", match.group(1).lower()),)))
        floor = index = end + 1
    return sections


# --- SQL -------------------------------------------------------------------------------------------
_SQL_NAME_PART = r'(?:"[^"]+"|`[^`]+`|\[[^\]]+\]|[\w$]+)'
_SQL_CREATE = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:GLOBAL|LOCAL|TEMP|TEMPORARY|UNLOGGED|UNIQUE|MATERIALIZED|RECURSIVE"
    r"|DEFINER\s*=\s*\S+|ALGORITHM\s*=\s*\S+|SQL\s+SECURITY\s+\w+)\s+)*"
    r"(TABLE|VIEW|FUNCTION|PROCEDURE|INDEX|TRIGGER|TYPE|SCHEMA|SEQUENCE|DOMAIN|EXTENSION|AGGREGATE|EVENT|POLICY"
    r"|RULE|DATABASE)\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?"
    rf"({_SQL_NAME_PART}(?:\s*\.\s*{_SQL_NAME_PART})*)",
    re.I,
)
_SQL_SPECIAL = re.compile(r"--|/\*|'|\"|`|\$(?:[A-Za-z_]\w*)?\$|\n")
_SQL_LEADING = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*", re.S)
_SQL_DELIMITER = re.compile(r"[ \t]*DELIMITER[ \t]+(\S+)[ \t]*\r?\Z", re.I)
_SQL_GO = re.compile(r"[ \t]*GO[ \t]*\r?\Z", re.I)
_SQL_CLOSERS: dict[str, str | None] = {"-": "\n", "/": "*/", "'": None, '"': None, "`": None}
_SQL_QUOTE_END = {quote: re.compile(rf"(?:[^{quote}\\]|\\.)*{quote}", re.S) for quote in ("'", '"', "`")}


def _sql_statements(text: str) -> list[tuple[int, int]]:
    """(start offset, end offset) of each statement: ends after the delimiter (`;`, or what a MySQL
    `DELIMITER` line sets) outside strings, quoted names, comments and dollar quotes, or before a
    T-SQL `GO` line; a statement without an end runs to the end of the text. Linear in the text."""
    statements: list[tuple[int, int]] = []
    delimiter = ";"
    start = position = 0
    length = len(text)
    found = text.find(delimiter)
    while position < length:
        if 0 <= found < position:
            found = text.find(delimiter, position)
        special = _SQL_SPECIAL.search(text, position)
        if special is not None and (found < 0 or special.start() < found):
            token = special.group()
            if token == "\n":
                line_end = text.find("\n", special.end())
                line_end = length if line_end < 0 else line_end
                command = _SQL_DELIMITER.match(text, special.end(), line_end) or _SQL_GO.match(
                    text, special.end(), line_end)
                if command is not None:
                    statements.append((start, special.start()))
                    if command.re is _SQL_DELIMITER:
                        delimiter = command.group(1)
                        found = text.find(delimiter, line_end)
                    start = line_end
                position = line_end if command is not None else special.end()
                continue
            closer = _SQL_CLOSERS.get(token[0], token)
            if closer is None:  # a quote: backslash escapes count (MySQL), doubled quotes reopen
                quoted = _SQL_QUOTE_END[token].match(text, special.end())
                position = length if quoted is None else quoted.end()
            else:
                close = text.find(closer, special.end())
                position = length if close < 0 else close + (0 if closer == "\n" else len(closer))
            continue
        if found < 0:
            break
        statements.append((start, found + len(delimiter)))
        start = position = found + len(delimiter)
    if text[start:].strip():
        statements.append((start, length))
    return statements


def _sql_sections(lines: Sequence[str]) -> list[_Section]:
    """One section per `CREATE TABLE|VIEW|FUNCTION|INDEX …` statement, named by its object."""
    text = "\n".join(lines)
    line_starts = [0]
    for index, line in enumerate(lines[:-1]):
        line_starts.append(line_starts[index] + len(line) + 1)

    def line_of(offset: int) -> int:
        return bisect_right(line_starts, offset) - 1

    sections: list[_Section] = []
    floor = 0
    for begin, end in _sql_statements(text):
        head = _SQL_LEADING.match(text, begin)
        head_at = head.end() if head is not None else begin
        match = _SQL_CREATE.match(text, head_at)
        if match is None or head_at >= end or match.group(2).upper() == "ON":
            floor = line_of(max(begin, end - 1)) + 1
            continue
        first = line_of(head_at)
        last = line_of(max(head_at, end - 1))
        while last > first and not lines[last].strip():
            last -= 1
        start = _attach_comments(lines, first, floor, ("--",))
        name = "".join(part.strip('"`[]') for part in re.split(r"\s*(\.)\s*", match.group(2)))
        sections.append(_Section(start, last, first, _name_fragment(name), lines[first].strip(),
                                 metadata=(("object", match.group(1).lower()),)))
        floor = last + 1
    return sections


_OUTLINE_SCANNERS: dict[str, Callable[[Sequence[str]], list[_Section]]] = {
    "markdown": _markdown_sections,
    "rst": _rst_sections,
    "asciidoc": lambda lines: _equals_sections(lines, delimited=True),
    "rdoc": lambda lines: _equals_sections(lines, delimited=False),
}
_SCANNERS: dict[str, Callable[[Sequence[str]], list[_Section]]] = {
    **_OUTLINE_SCANNERS,
    "yaml": _yaml_sections,
    "toml": _toml_sections,
    "ini": _ini_sections,
    "json": _json_sections,
    "makefile": _makefile_sections,
    "dockerfile": _dockerfile_sections,
    "cmake": _cmake_sections,
    "sql": _sql_sections,
}
