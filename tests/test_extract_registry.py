"""The language registry: one entry per language, each file name claimed once, every entry's
extractor and grammar loadable, and detection (`language_for`, `extractor_language`) read from it."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections import Counter

import pytest
from tree_sitter import Language as TreeSitterLanguage
from tree_sitter import Parser

from woods.extract import (
    base,
    extract_file,
    extractor_language,
    is_document,
    language_for,
    registry,
    shebang_language,
)
from woods.extract.layout import UNKNOWN_LAYOUT
from woods.extract.text import DOCUMENT_KINDS

LANGUAGES = {language.name: language for language in registry.LANGUAGES}


def _installed(language: registry.Language) -> bool:
    return all(importlib.util.find_spec(grammar.wheel) is not None for grammar in language.grammars)


def test_each_name_extension_file_name_interpreter_and_grammar_belongs_to_one_language() -> None:
    claims = Counter(
        [("language", language.name) for language in registry.LANGUAGES]
        + [("extension", ext) for language in registry.LANGUAGES for ext in language.extensions]
        + [("file name", name) for language in registry.LANGUAGES for name in language.file_names]
        + [("interpreter", name) for language in registry.LANGUAGES for name in language.interpreters]
        + [("grammar", grammar.name) for language in registry.LANGUAGES for grammar in language.grammars]
    )
    assert [claim for claim, count in claims.items() if count > 1] == []
    assert not set(LANGUAGES) & set(DOCUMENT_KINDS)  # a code language is never a document kind


def test_extensions_are_lower_case_and_dotted() -> None:
    for language in registry.LANGUAGES:
        for ext in language.extensions:
            assert ext.startswith(".") and ext == ext.lower(), (language.name, ext)
        for grammar in language.grammars[1:]:
            assert grammar.extensions and set(grammar.extensions) <= set(language.extensions), grammar


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_language_for_reads_every_claim_from_the_registry(name: str) -> None:
    language = LANGUAGES[name]
    for ext in language.extensions:
        assert language_for(f"src/example{ext}") == name
        assert language_for(f"src/EXAMPLE{ext.upper()}") == name  # extensions match lower-cased
    for file_name in language.file_names:
        assert language_for(f"sub/{file_name}") == name
    for program in language.interpreters:
        head = f"#!/usr/bin/env {program}\n".encode()
        assert shebang_language(head) == name
        assert language_for("bin/tool", head) == name
        assert language_for("bin/tool") is None  # without its first line an extension-less file is open
    assert not is_document(name)


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_every_extractor_is_an_extractor_and_extracts_an_empty_file(name: str) -> None:
    language = LANGUAGES[name]
    if not _installed(language):
        pytest.skip(f"{language.grammars[0].wheel} is not installed here (pip install -e .)")
    extract = registry.extractor(name)
    assert extract is importlib.import_module(language.module).extract
    parameters = list(inspect.signature(extract).parameters.values())
    assert [p.name for p in parameters[:3]] == ["file_path", "source", "layout"]
    assert parameters[2].default is UNKNOWN_LAYOUT  # callable with a path and bytes alone, as tests do
    path = f"src/empty{language.extensions[0]}" if language.extensions else f"src/{language.file_names[0]}"
    found = extract(path, b"", UNKNOWN_LAYOUT)
    assert found.file_path == path and found.warnings == ()
    assert all(unit.file_path == path for unit in found.units)


@pytest.mark.parametrize("grammar", sorted(registry.GRAMMARS))
def test_every_grammar_loads_and_parses(grammar: str) -> None:
    spec = registry.grammar(grammar)
    if importlib.util.find_spec(spec.wheel) is None:
        pytest.skip(f"{spec.wheel} is not installed here (pip install -e .)")
    language = base.language(grammar)
    assert isinstance(language, TreeSitterLanguage)
    assert 13 <= language.abi_version <= 15  # what the tree-sitter 0.26 binding reads
    assert Parser(language).parse(b"\n").root_node is not None


def test_grammar_for_picks_a_later_grammar_only_for_its_extensions() -> None:
    typescript = LANGUAGES["typescript"]
    assert typescript.grammar_for("src/app.ts") == "typescript"
    assert typescript.grammar_for("src/App.TSX") == "tsx"
    assert LANGUAGES["php"].grammar_for("index.php") == "php"


def test_a_content_rule_names_the_extractor_without_changing_what_discovery_lists() -> None:
    cpp_header = b"namespace geo {\nclass Shape {};\n}\n"
    c_header = b"struct point { int x; };\n"
    assert language_for("include/shape.h") == "c"
    assert extractor_language("include/shape.h", cpp_header) == "cpp"
    assert extractor_language("include/point.h", c_header) == "c"
    assert extract_file("include/shape.h", cpp_header).language == "cpp"
    assert extractor_language("README.md", b"# Title\n") == "markdown"  # documents have no content rule
    assert extractor_language("bin/deploy", b"#!/bin/sh\necho\n") == "bash"
    assert extractor_language("data.bin", b"\x00\x01") is None


def test_an_unknown_file_has_no_extractor() -> None:
    with pytest.raises(ValueError, match="no extractor"):
        extract_file("image.png", b"\x89PNG")
