"""Extraction: source bytes of one file → units, per language, with tree-sitter.

`language_for(path, head)` decides the language from the file name, and for an extension-less
file from its `#!` line when the first bytes are given (`bin/deploy` starting `#!/usr/bin/env
bash` is Bash); `extract_file(path, data, layout)` runs that language's extractor with the
repository layout (`layout.py`) the index builder computed once for the run. Extractors are pure
functions of (path, bytes, layout): they never touch the stores and never read or write
process-wide state.

Code languages come first; every other text file of a known *document kind* (Markdown, YAML,
SQL, Dockerfile … — `woods.extract.text.DOCUMENT_KINDS`) goes to the text fallback
`woods/extract/text.py`, whose units have the type `document` and the kind as their language.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import PurePosixPath
from types import ModuleType

from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.extract.text import DOCUMENT_KINDS, document_kind
from woods.units import FileExtraction

# File name → language. Extensions are matched lower-cased; whole names cover extension-less files.
EXTENSION_LANGUAGES: dict[str, str] = {
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".ru": "ruby",
    ".erb": "erb",
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
    ".scala": "scala",
    ".sc": "scala",
    ".hs": "haskell",
    ".ex": "elixir",
    ".exs": "elixir",
    ".lua": "lua",
    ".sh": "bash",
    ".bash": "bash",
    ".bats": "bash",  # bats-core test files: Bash plus `@test "…" { … }` blocks
    ".zig": "zig",
    ".c": "c",
    ".h": "c",  # C or C++ by content: woods/extract/c.py decides per file
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".tpp": "cpp",
    ".inl": "cpp",
    ".cs": "csharp",
    ".php": "php",
    ".phtml": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
}
FILENAME_LANGUAGES: dict[str, str] = {"Rakefile": "ruby", "Gemfile": "ruby"}
# Interpreter of a `#!` line → language, for extension-less executables (`libexec/tool`). POSIX
# shells and bats scripts parse with the Bash grammar.
SHEBANG_LANGUAGES: dict[str, str] = {"bash": "bash", "sh": "bash", "dash": "bash", "ksh": "bash", "bats": "bash"}
# Bytes of a file `language_for` needs to read a `#!` line (longer interpreter lines are not real).
SHEBANG_BYTES = 256

# Language → module under woods.extract that defines `extract(file_path, source) -> FileExtraction`.
_MODULES: dict[str, str] = {
    "ruby": "woods.extract.rails",  # the Ruby walk plus Rails conventions (only inside Rails apps)
    "erb": "woods.extract.erb",
    "python": "woods.extract.python",
    "javascript": "woods.extract.javascript",
    "typescript": "woods.extract.javascript",
    "go": "woods.extract.go",
    "java": "woods.extract.java",
    "rust": "woods.extract.rust",
    "scala": "woods.extract.scala",
    "haskell": "woods.extract.haskell",
    "elixir": "woods.extract.elixir",
    "lua": "woods.extract.lua",
    "bash": "woods.extract.bash",
    "zig": "woods.extract.zig",
    "c": "woods.extract.c",
    "cpp": "woods.extract.cpp",
    "csharp": "woods.extract.csharp",
    "php": "woods.extract.php",
    "kotlin": "woods.extract.kotlin",
    "swift": "woods.extract.swift",
}


# Documents (every kind in DOCUMENT_KINDS) are extracted by the text fallback.
_DOCUMENT_MODULE = "woods.extract.text"


def language_for(file_path: str, head: bytes | None = None) -> str | None:
    """The language woods extracts `file_path` as, or None when it does not index that file.

    The name decides first: code languages, then document kinds. `head` (the file's first bytes,
    at least up to the end of its first line) lets a file its name leaves open — one without an
    extension — be recognised by its `#!` line; without it only the name counts.
    """
    name = _file_name(file_path)
    if name in FILENAME_LANGUAGES:
        return FILENAME_LANGUAGES[name]
    suffix = _suffix(name).lower()
    found = EXTENSION_LANGUAGES.get(suffix) or document_kind(file_path)
    if found is not None or head is None or suffix:
        return found
    return shebang_language(head)


def content_may_decide(file_path: str) -> bool:
    """Whether the first bytes may decide the language of a file its name leaves open: files
    without an extension (scripts named `bin/setup`, whose `#!` line says what they are)."""
    return not _suffix(_file_name(file_path)) and language_for(file_path) is None


def is_document(language: str) -> bool:
    """Whether `language` is a document kind (text fallback) rather than a code language."""
    return language in DOCUMENT_KINDS


def shebang_language(head: bytes) -> str | None:
    """The language a `#!` first line names (`#!/bin/sh`, `#!/usr/bin/env bash`, `#!/usr/bin/env -S
    bash -e`), or None."""
    if not head.startswith(b"#!"):
        return None
    line = head[2:SHEBANG_BYTES].split(b"\n", 1)[0].decode("utf-8", "replace")
    words = line.split()
    if not words:
        return None
    program = _file_name(words[0])
    if program == "env":  # `env [-S] [-i] [NAME=value …] interpreter`
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        program = _file_name(rest[0]) if rest else ""
    return SHEBANG_LANGUAGES.get(program)


def _file_name(file_path: str) -> str:
    """`PurePosixPath(file_path).name`, read from the string: building a path object cost more
    than the rest of `language_for`, which runs for every file extracted."""
    name = file_path.rpartition("/")[2]
    if name and name != ".":
        return name
    return PurePosixPath(file_path).name  # `dir/`, `dir/.`, `/`: pathlib drops such endings


def _suffix(name: str) -> str:
    """`PurePosixPath(name).suffix` of a file name: from its last dot, unless the name starts or
    ends with that dot."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


@functools.cache
def _extractor(lang: str) -> ModuleType:
    """The extractor module of a language, imported on first use; later calls skip importlib's machinery."""
    return importlib.import_module(_DOCUMENT_MODULE if is_document(lang) else _MODULES[lang])


def extract_file(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Extract the units of one file. `file_path` is repository-relative with `/` separators."""
    lang = language_for(file_path, source[:SHEBANG_BYTES])
    if lang is None:
        raise ValueError(f"no extractor for {file_path}")
    extraction: FileExtraction = _extractor(lang).extract(file_path, source, layout)
    return extraction
