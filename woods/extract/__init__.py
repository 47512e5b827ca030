"""Extraction: source bytes of one file → units, per language, with tree-sitter.

Every language is one entry of `registry.py` (grammar, the files it claims, extractor); this
module answers from it. `language_for(path, head)` decides the language from the file name, and
for an extension-less file from its `#!` line when the first bytes are given (`bin/deploy`
starting `#!/usr/bin/env bash` is Bash); `extractor_language(path, data)` adds the language's
content rule (a `.h` that reads as C++ is extracted as C++); `extract_file(path, data, layout)`
runs that language's extractor with the repository layout (`layout.py`) the index builder
computed once for the run. Extractors are pure functions of (path, bytes, layout) — the
`registry.Extractor` protocol: they never touch the stores and never read or write process-wide
state.

Code languages come first; every other text file of a known *document kind* (Markdown, YAML,
SQL, Dockerfile … — `woods.extract.text.DOCUMENT_KINDS`) goes to the text fallback
`woods/extract/text.py`, whose units have the type `document` and the kind as their language.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from woods.extract import registry, text
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.extract.sniff import SHEBANG_BYTES, interpreter
from woods.extract.text import DOCUMENT_KINDS, document_kind
from woods.units import FileExtraction

__all__ = [
    "SHEBANG_BYTES", "content_may_decide", "extract_file", "extractor_language", "is_document", "language_for",
    "shebang_language",
]


def language_for(file_path: str, head: bytes | None = None) -> str | None:
    """The language woods extracts `file_path` as, or None when it does not index that file.

    The name decides first: code languages, then document kinds. `head` (the file's first bytes,
    at least up to the end of its first line) lets a file its name leaves open — one without an
    extension — be recognised by its `#!` line; without it only the name counts.
    """
    name = _file_name(file_path)
    if name in registry.BY_FILE_NAME:
        return registry.BY_FILE_NAME[name]
    suffix = _suffix(name).lower()
    found = registry.BY_EXTENSION.get(suffix) or document_kind(file_path)
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
    program = interpreter(head)
    return registry.BY_INTERPRETER.get(program) if program is not None else None


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


def extractor_language(file_path: str, source: bytes) -> str | None:
    """The language whose extractor reads this file: `language_for` from its name (and `#!` line),
    then the language's content rule (`Language.sniff`: a `.h` that reads as C++ is `cpp`)."""
    lang = language_for(file_path, source[:SHEBANG_BYTES])
    if lang is None or is_document(lang):
        return lang
    rule = registry.BY_NAME[lang].sniff
    return (rule(file_path, source) or lang) if rule is not None else lang


def extract_file(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Extract the units of one file. `file_path` is repository-relative with `/` separators."""
    lang = extractor_language(file_path, source)
    if lang is None:
        raise ValueError(f"no extractor for {file_path}")
    if is_document(lang):
        return text.extract(file_path, source, layout)
    return registry.extractor(lang)(file_path, source, layout)
