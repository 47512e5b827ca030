"""Extraction: source bytes of one file → units, per language, with tree-sitter.

`language_for(path)` decides the language from the file name; `extract_file(path, data, layout)`
runs that language's extractor with the repository layout (`layout.py`) the index builder computed
once for the run. Extractors are pure functions of (path, bytes, layout): they never touch the
stores and never read or write process-wide state.
"""

from __future__ import annotations

import importlib
from pathlib import PurePosixPath

from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
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
    "c": "woods.extract.c",
    "cpp": "woods.extract.cpp",
    "csharp": "woods.extract.csharp",
    "php": "woods.extract.php",
    "kotlin": "woods.extract.kotlin",
    "swift": "woods.extract.swift",
}


def language_for(file_path: str) -> str | None:
    """The language woods extracts `file_path` as, or None when it does not index that file."""
    name = PurePosixPath(file_path).name
    if name in FILENAME_LANGUAGES:
        return FILENAME_LANGUAGES[name]
    suffix = PurePosixPath(name).suffix.lower()
    return EXTENSION_LANGUAGES.get(suffix)


def extract_file(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Extract the units of one file. `file_path` is repository-relative with `/` separators."""
    lang = language_for(file_path)
    if lang is None:
        raise ValueError(f"no extractor for {file_path}")
    module = importlib.import_module(_MODULES[lang])
    extraction: FileExtraction = module.extract(file_path, source, layout)
    return extraction
