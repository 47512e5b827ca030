"""Extraction: source bytes of one file → units, per language, with tree-sitter.

`language_for(path)` decides the language from the file name; `extract_file(path, data, layout)`
runs that language's extractor with the repository layout (`layout.py`) the index builder computed
once for the run. Extractors are pure functions of (path, bytes, layout): they never touch the
stores and never read or write process-wide state.

Code languages come first; every other text file of a known *document kind* (Markdown, YAML,
SQL, Dockerfile … — `woods.extract.text.DOCUMENT_KINDS`) goes to the text fallback
`woods/extract/text.py`, whose units have the type `document` and the kind as their language.
"""

from __future__ import annotations

import importlib
from pathlib import PurePosixPath

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
}
FILENAME_LANGUAGES: dict[str, str] = {"Rakefile": "ruby", "Gemfile": "ruby"}

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
}


# Documents (every kind in DOCUMENT_KINDS) are extracted by the text fallback.
_DOCUMENT_MODULE = "woods.extract.text"


def language_for(file_path: str, head: bytes | None = None) -> str | None:
    """The language woods extracts `file_path` as, or None when it does not index that file.

    The name decides first: code languages, then document kinds. `head` (the first bytes of the
    file, as discovery's sniff read them) may decide a file its name leaves open — see
    `content_may_decide`; without it only the name counts.
    """
    name = PurePosixPath(file_path).name
    if name in FILENAME_LANGUAGES:
        return FILENAME_LANGUAGES[name]
    suffix = PurePosixPath(name).suffix.lower()
    found = EXTENSION_LANGUAGES.get(suffix) or document_kind(file_path)
    if found is not None or head is None:
        return found
    return language_from_content(file_path, head)


def content_may_decide(file_path: str) -> bool:
    """Whether the first bytes may decide the language of a file its name leaves open: files
    without an extension (scripts named `bin/setup`, whose `#!` line says what they are)."""
    return not PurePosixPath(file_path).suffix and language_for(file_path) is None


def language_from_content(file_path: str, head: bytes) -> str | None:
    """The language of a file its name leaves open, from its first bytes. Nothing is recognised
    from content yet: this is the hook for interpreter (`#!`) lines."""
    del file_path, head
    return None


def is_document(language: str) -> bool:
    """Whether `language` is a document kind (text fallback) rather than a code language."""
    return language in DOCUMENT_KINDS


def extract_file(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Extract the units of one file. `file_path` is repository-relative with `/` separators."""
    lang = language_for(file_path, source)
    if lang is None:
        raise ValueError(f"no extractor for {file_path}")
    module = importlib.import_module(_DOCUMENT_MODULE if is_document(lang) else _MODULES[lang])
    extraction: FileExtraction = module.extract(file_path, source, layout)
    return extraction
