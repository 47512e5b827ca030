"""The languages woods extracts: one entry per language, and nothing about a language elsewhere.

Why one table: a language is its grammar wheel, the files it claims (extensions, whole file
names, `#!` interpreters, a content rule for names two languages share) and its extractor module.
Everything that needs one of those — discovery (`woods.extract.language_for`), extraction
(`woods.extract.extract_file`), grammar loading (`base.language`), the benches — reads it from
here, so adding a language is one `Language(…)` line plus its extractor module
(docs/extraction.md, "Adding a language").

Guarantees: every extension, file name, interpreter and grammar name belongs to exactly one entry
(tests/test_extract_registry.py); this module imports no extractor and no grammar — an extractor
module is imported the first time a file of its language is extracted, a grammar wheel the first
time it parses (so `woods --help` pays for neither).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from woods.extract import sniff
from woods.extract.layout import RepositoryLayout
from woods.units import FileExtraction


class Extractor(Protocol):
    """What a language's extractor module exposes as `extract`: one file's bytes → its units.

    A pure function of (repository-relative path with `/` separators, the file's bytes, the
    repository layout the index builder computed once for the run): it never touches the stores,
    never reads or writes process-wide state, and never raises on bad input (syntax errors,
    invalid UTF-8, NUL bytes) — it extracts what parses and says so in `warnings`.
    """

    def __call__(self, file_path: str, source: bytes, layout: RepositoryLayout, /) -> FileExtraction: ...


@dataclass(frozen=True, slots=True)
class Grammar:
    """A tree-sitter grammar from its official per-language wheel.

    `name` is what extractors parse with (`base.parse(name, source)`); `wheel` is the wheel's
    import name and `function` the function in it that returns the language pointer. When a
    language has several grammars the first parses its files, except the files whose extension
    a later one lists (`.tsx` is TypeScript's second grammar).
    """

    name: str
    wheel: str
    function: str = "language"
    extensions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Language:
    """One language: its grammars, the files it claims, and its extractor.

    `name` is the language key (`FileExtraction.language`, `woods status`); `module` the module
    whose `extract` is the language's `Extractor`. Files are claimed by `extensions` (matched
    lower-cased, with the dot), by whole `file_names` (`Gemfile`), and — for a file without an
    extension — by the `interpreters` of its `#!` line. `sniff`, when set, reads a claimed
    file's bytes and may name another language whose extractor reads it instead (`.h` headers
    that read as C++); discovery still lists the file under this language.
    """

    name: str
    module: str
    grammars: tuple[Grammar, ...]
    extensions: tuple[str, ...] = ()
    file_names: tuple[str, ...] = ()
    interpreters: tuple[str, ...] = ()
    sniff: Callable[[str, bytes], str | None] | None = None

    def grammar_for(self, file_path: str) -> str:
        """The grammar this language parses `file_path` with."""
        lowered = file_path.lower()
        for grammar in self.grammars[1:]:
            if lowered.endswith(grammar.extensions):
                return grammar.name
        return self.grammars[0].name


def _grammar(name: str, wheel: str, function: str = "language", *extensions: str) -> tuple[Grammar, ...]:
    """One grammar, as the one-element tuple most languages have."""
    return (Grammar(name, wheel, function, extensions),)


# One line per language (docs/extraction.md lists each grammar's version and ABI).
LANGUAGES: tuple[Language, ...] = (
    # Ruby files go through the Rails layer, which runs the Ruby walk and adds Rails conventions inside Rails apps.
    Language("ruby", "woods.extract.rails", _grammar("ruby", "tree_sitter_ruby"), (".rb", ".rake", ".gemspec", ".ru"), ("Rakefile", "Gemfile")),
    Language("erb", "woods.extract.erb", _grammar("embedded_template", "tree_sitter_embedded_template"), (".erb",)),
    Language("python", "woods.extract.python", _grammar("python", "tree_sitter_python"), (".py", ".pyi")),
    Language("javascript", "woods.extract.javascript", _grammar("javascript", "tree_sitter_javascript"), (".js", ".mjs", ".cjs", ".jsx")),
    Language("typescript", "woods.extract.javascript", (Grammar("typescript", "tree_sitter_typescript", "language_typescript"), Grammar("tsx", "tree_sitter_typescript", "language_tsx", (".tsx",))), (".ts", ".mts", ".cts", ".tsx")),
    Language("go", "woods.extract.go", _grammar("go", "tree_sitter_go"), (".go",)),
    Language("java", "woods.extract.java", _grammar("java", "tree_sitter_java"), (".java",)),
    Language("rust", "woods.extract.rust", _grammar("rust", "tree_sitter_rust"), (".rs",)),
    Language("scala", "woods.extract.scala", _grammar("scala", "tree_sitter_scala"), (".scala", ".sc")),
    Language("haskell", "woods.extract.haskell", _grammar("haskell", "tree_sitter_haskell"), (".hs",)),
    Language("elixir", "woods.extract.elixir", _grammar("elixir", "tree_sitter_elixir"), (".ex", ".exs")),
    Language("lua", "woods.extract.lua", _grammar("lua", "tree_sitter_lua"), (".lua",)),
    # bats-core test files are Bash plus `@test "…" { … }` blocks; POSIX shells parse with the Bash grammar.
    Language("bash", "woods.extract.bash", _grammar("bash", "tree_sitter_bash"), (".sh", ".bash", ".bats"), interpreters=("bash", "sh", "dash", "ksh", "bats")),
    Language("zig", "woods.extract.zig", _grammar("zig", "tree_sitter_zig"), (".zig",)),
    Language("c", "woods.extract.c", _grammar("c", "tree_sitter_c"), (".c", ".h"), sniff=sniff.c_or_cpp),
    Language("cpp", "woods.extract.cpp", _grammar("cpp", "tree_sitter_cpp"), (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp", ".inl")),
    Language("csharp", "woods.extract.csharp", _grammar("c_sharp", "tree_sitter_c_sharp"), (".cs",)),
    Language("php", "woods.extract.php", _grammar("php", "tree_sitter_php", "language_php"), (".php", ".phtml")),
    Language("kotlin", "woods.extract.kotlin", _grammar("kotlin", "tree_sitter_kotlin"), (".kt", ".kts")),
    Language("swift", "woods.extract.swift", _grammar("swift", "tree_sitter_swift"), (".swift",)),
    Language("dart", "woods.extract.dart", _grammar("dart", "tree_sitter_dart"), (".dart",)),
    Language("ocaml", "woods.extract.ocaml", (Grammar("ocaml", "tree_sitter_ocaml", "language_ocaml"), Grammar("ocaml_interface", "tree_sitter_ocaml", "language_ocaml_interface", (".mli",))), (".ml", ".mli")),
)

BY_NAME: dict[str, Language] = {language.name: language for language in LANGUAGES}
# File name → language key: extensions (lower-cased), whole names, `#!` interpreters.
BY_EXTENSION: dict[str, str] = {ext: language.name for language in LANGUAGES for ext in language.extensions}
BY_FILE_NAME: dict[str, str] = {name: language.name for language in LANGUAGES for name in language.file_names}
BY_INTERPRETER: dict[str, str] = {name: language.name for language in LANGUAGES for name in language.interpreters}
GRAMMARS: dict[str, Grammar] = {grammar.name: grammar for language in LANGUAGES for grammar in language.grammars}


def grammar(name: str) -> Grammar:
    """The grammar registered under `name` (KeyError for a name no language lists)."""
    return GRAMMARS[name]


@functools.cache
def extractor(language: str) -> Extractor:
    """The `extract` of a language's module, imported on first use (later calls skip importlib)."""
    found: Extractor = importlib.import_module(BY_NAME[language].module).extract
    return found
