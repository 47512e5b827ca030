"""The text fallback: document units for prose, configuration and schemas, with exact line ranges.

Every extraction here goes through `_units`, which checks the module's guarantees on the way:
exact source per unit, sections inside the file and properly nested, unique identifiers, no
section ending on a blank line, type `document`, language = the document kind.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from woods.extract import extract_file, is_document, language_for
from woods.extract.text import DOCUMENT_KINDS, document_kind, extract, slug
from woods.units import Unit


def _units(path: str, text: str | bytes) -> dict[str, Unit]:
    data = text.encode() if isinstance(text, str) else text
    result = extract(path, data)
    decoded = data.decode("utf-8", "replace")
    lines = decoded.split("\n")
    if decoded.endswith("\n"):
        lines.pop()
    lines = lines or [""]
    units = result.units
    assert result.warnings == ()
    assert units[0].identifier == path and units[0].source_code == decoded
    assert (units[0].line_start, units[0].line_end) == (1, len(lines))
    assert len({u.identifier for u in units}) == len(units)
    by_id = {u.identifier: u for u in units}
    for unit in units:
        assert unit.type == "document" and unit.language == result.language and unit.file_path == path
        if unit is units[0]:
            continue
        assert unit.identifier.startswith(path + "#")
        assert 1 <= unit.line_start <= unit.line_end <= len(lines)
        assert unit.source_code == "\n".join(lines[unit.line_start - 1 : unit.line_end])
        assert lines[unit.line_end - 1].strip(), "a section never ends on a blank line"
        parent = by_id[unit.parent or ""]
        assert parent.line_start <= unit.line_start and unit.line_end <= parent.line_end
    starts = [(u.line_start, -u.line_end) for u in units]
    assert starts == sorted(starts), "outermost first, in source order"
    return by_id


def _spans(units: dict[str, Unit]) -> dict[str, tuple[int, int]]:
    return {k: (u.line_start, u.line_end) for k, u in units.items()}


# --- kinds -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("path", "kind"), [
    ("README.md", "markdown"), ("docs/guide.MDX", "markdown"), ("index.rst", "rst"), ("manual.adoc", "asciidoc"),
    ("README.rdoc", "rdoc"), ("notes.txt", "text"), ("README", "text"), ("LICENSE-MIT", "text"),
    ("COPYING.LESSER", "text"), ("CHANGELOG", "text"), (".github/CODEOWNERS", "text"),
    ("ci.yml", "yaml"), ("pyproject.toml", "toml"), ("tsconfig.json", "json"), ("settings.jsonc", "json"),
    ("setup.cfg", "ini"), ("nginx.conf", "ini"), (".editorconfig", "ini"), ("app.properties", "properties"),
    (".env.example", "properties"), ("config/database.yml.example", "yaml"), ("my.cnf.dist", None),
    ("pom.xml", "xml"), ("main.tf", "hcl"), ("schema.sql", "sql"), ("api.proto", "protobuf"),
    ("schema.graphql", "graphql"), ("page.html", "html"), ("site.scss", "scss"), ("App.vue", "vue"),
    ("Dockerfile", "dockerfile"), ("Dockerfile.dev", "dockerfile"), ("web.dockerfile", "dockerfile"),
    ("Makefile", "makefile"), ("GNUmakefile", "makefile"), ("rules.mk", "makefile"),
    ("CMakeLists.txt", "cmake"), ("cmake/deps.cmake", "cmake"), ("go.mod", "gomod"),
])
def test_document_kind_from_the_name(path: str, kind: str | None) -> None:
    assert document_kind(path) == kind


@pytest.mark.parametrize("path", [
    ".env", "prod.env", ".env.local", "logo.svg", "server.log", "key.pem", "fix.patch", "bin/setup",
    ".gitignore", "x.py.example", "Makefile.in", "messages.po",
])
def test_not_documents(path: str) -> None:
    assert document_kind(path) is None


def test_code_languages_win_and_documents_are_dispatched_to_the_text_fallback() -> None:
    assert language_for("Gemfile") == "ruby" and language_for("a/b.py") == "python"
    assert language_for("README.md") == "markdown" and is_document("markdown") and not is_document("python")
    assert set(DOCUMENT_KINDS.values()) == {"prose", "config", "schema", "markup"}
    result = extract_file("docs/x.md", b"# A\n\ntext\n\n## B\n")
    assert result.language == "markdown"
    assert [u.identifier for u in result.units] == ["docs/x.md", "docs/x.md#b"]


# --- markdown --------------------------------------------------------------------------------------
MARKDOWN = """\
<p align="center">logo</p>

# Woods

Intro text.

## Installation

```sh
# not a heading inside a fence
pip install woods
```

~~~
## nor here
~~~

### From source

    # indented code is no heading

Usage
-----

Some *text*.

Second Title
============

## Installation

> # quoted heading is not a section

- # nor a list item's

<!--
# nor a comment
-->
## `code` and [a link](http://x) & Co.!
#hashtag is not a heading
"""


def test_markdown_sections_nest_by_level_with_exact_lines() -> None:
    units = _units("README.md", MARKDOWN)
    assert _spans(units) == {
        "README.md": (1, 40),
        "README.md#woods": (3, 25),
        "README.md#installation": (7, 20),
        "README.md#from-source": (18, 20),
        "README.md#usage": (22, 25),
        "README.md#second-title": (27, 40),
        "README.md#installation-1": (30, 38),
        "README.md#code-and-a-link--co": (39, 40),
    }
    assert units["README.md#from-source"].parent == "README.md#installation"
    assert units["README.md#installation"].parent == "README.md#woods"
    assert units["README.md#usage"].parent == "README.md#woods"
    assert units["README.md#woods"].parent == "README.md"
    assert units["README.md#installation-1"].parent == "README.md#second-title"
    assert units["README.md#usage"].signature == "Usage"  # setext: the title line
    assert units["README.md#installation"].signature == "## Installation"
    assert units["README.md#installation"].metadata == {"kind": "markdown", "level": 2, "title": "Installation"}
    assert units["README.md"].signature == "# Woods"  # the title


def test_a_lone_title_section_is_the_file_unit() -> None:
    units = _units("doc.md", "# Title\n\nIntro.\n\n## Part\n\nBody.\n")
    assert _spans(units) == {"doc.md": (1, 7), "doc.md#part": (5, 7)}
    assert units["doc.md#part"].parent == "doc.md" and units["doc.md"].signature == "# Title"


def test_front_matter_is_not_a_heading_and_setext_paragraphs_span_their_lines() -> None:
    units = _units("post.md", "---\ntitle: x\n---\nA long\nheading\n===\n\n## B\n")
    assert _spans(units) == {"post.md": (1, 8), "post.md#a-long-heading": (4, 8), "post.md#b": (8, 8)}
    assert units["post.md#a-long-heading"].signature == "A long heading"


def test_slugs_follow_github_and_repeats_are_numbered() -> None:
    assert slug("Hello, World!") == "hello-world"
    assert slug("API (v2) — Überblick") == "api-v2--überblick"
    assert slug("snake_case-and-dash") == "snake_case-and-dash"
    text = "# A\n\n# A\n\n# A-1\n\n# A\n\n# 🎉\n"
    assert list(_units("s.md", text)) == ["s.md", "s.md#a", "s.md#a-1", "s.md#a-1-1", "s.md#a-2", "s.md#section"]


def test_an_unclosed_fence_hides_every_later_heading() -> None:
    assert list(_units("f.md", "intro\n\n# A\n\ntext\n\n```\n# B\n")) == ["f.md", "f.md#a"]


# --- reStructuredText, AsciiDoc, RDoc --------------------------------------------------------------
RST = """\
=======
 Title
=======

Intro.

Install
=======

pip.

From source
-----------

Run it::

    Not a title
    -----------

----------

Usage
=====
Short
--
"""


def test_rst_titles_levels_follow_first_use_of_each_style() -> None:
    units = _units("index.rst", RST)
    assert _spans(units) == {
        "index.rst": (1, 25),
        "index.rst#install": (7, 20),  # the transition (line 20) is content; `Not a title` is indented
        "index.rst#from-source": (12, 20),
        "index.rst#usage": (22, 25),  # `Short` / `--`: an underline under 4 characters and too short
    }
    assert units["index.rst"].signature == "Title"  # the overlined document title spans the file
    assert units["index.rst#from-source"].parent == "index.rst#install"
    assert units["index.rst#from-source"].metadata["level"] == 3  # ===/=== overline, === under, --- under


def test_asciidoc_and_rdoc_equals_headings() -> None:
    adoc = "= Manual\n\n== Setup\n\n----\n== in a listing\n----\n\n=== Linux\n\n== Use\n"
    units = _units("m.adoc", adoc)
    assert _spans(units) == {"m.adoc": (1, 11), "m.adoc#setup": (3, 9), "m.adoc#linux": (9, 9), "m.adoc#use": (11, 11)}
    rdoc = "= Gem\n\n== Usage\n\n  = verbatim\n\n== Other\n"
    assert list(_units("README.rdoc", rdoc)) == ["README.rdoc", "README.rdoc#usage", "README.rdoc#other"]


# --- configuration ---------------------------------------------------------------------------------
def test_yaml_multi_line_top_level_keys_take_their_comments() -> None:
    text = ("version: 2\n\n# the services\nservices:\n  web:\n    image: x\n\"quoted key\":\n  - a\n"
            "scalar: 1\n# comment only\nlist:\n- a\n- b\n")
    units = _units("compose.yml", text)
    assert _spans(units) == {
        "compose.yml": (1, 13), "compose.yml#services": (3, 6), "compose.yml#quoted-key": (7, 8),
        "compose.yml#list": (10, 13),  # the comment directly above a key is the key's
    }
    assert units["compose.yml#services"].signature == "services:"
    assert units["compose.yml#services"].metadata == {"kind": "yaml", "level": 1, "key": "services"}


def test_yaml_with_several_documents_is_one_unit() -> None:
    text = "---\nkind: A\nspec:\n  x: 1\n---\nkind: B\nspec:\n  y: 2\n"
    assert list(_units("k8s.yaml", text)) == ["k8s.yaml"]
    assert list(_units("one.yaml", "---\nspec:\n  x: 1\nother:\n  y: 2\n")) == [
        "one.yaml", "one.yaml#spec", "one.yaml#other"]


def test_toml_tables_skip_brackets_inside_strings_and_arrays() -> None:
    text = ('title = "x"\n\n[project]\nname = "a"\ndesc = """\n[not.a.table]\n"""\nmatrix = [\n  [1, 2],\n'
            "  [3],\n]\n\n# bins\n[[bin]]\nname = 'a'\n[[bin]]\nname = 'b'\n[tool.ruff.lint] # c\nx = 1\n")
    units = _units("pyproject.toml", text)
    assert _spans(units) == {
        "pyproject.toml": (1, 19), "pyproject.toml#project": (3, 11), "pyproject.toml#bin": (13, 15),
        "pyproject.toml#bin-1": (16, 17), "pyproject.toml#tool.ruff.lint": (18, 19),
    }
    assert units["pyproject.toml#bin"].signature == "[[bin]]"


def test_json_root_keys_with_multi_line_values() -> None:
    text = ('{\n  // jsonc comment: "fake": {\n  "name": "x",\n  "scripts": {\n    "test": "a, b"\n  },\n'
            '  "files": ["a",\n    "b"], "tail": 1\n}\n')
    units = _units("package.json", text)
    assert _spans(units) == {"package.json": (1, 9), "package.json#scripts": (4, 6), "package.json#files": (7, 8)}
    assert list(_units("list.json", '[\n  {"a": 1},\n  {"b": 2}\n]\n')) == ["list.json"]
    assert list(_units("broken.json", '{\n  "a": {\n    "b": "unterminated\n')) == ["broken.json"]


def test_ini_sections() -> None:
    text = "; top\nroot = 1\n\n[metadata]\nname = x\n\n# options\n[options]\nzip_safe = False\n"
    units = _units("setup.cfg", text)
    assert _spans(units) == {"setup.cfg": (1, 9), "setup.cfg#metadata": (4, 5), "setup.cfg#options": (7, 9)}


def test_makefile_rules_with_their_recipes() -> None:
    text = ("CC := gcc\nFLAGS ::= -O2\n.PHONY: all test\n\n# Build it\nall: main.o\n\t$(CC) -o app \\\n"
            "\t  main.o\n\n\tstrip app\nVAR = a:b\ndefine TEMPLATE\nfake: rule\nendef\ntest:\n\t./app\n")
    units = _units("Makefile", text)
    assert _spans(units) == {"Makefile": (1, 16), "Makefile#all": (5, 10), "Makefile#test": (15, 16)}
    assert units["Makefile#all"].signature == "all: main.o"


def test_dockerfile_stages_only_when_multi_stage() -> None:
    text = "# syntax=docker/dockerfile:1\n\nFROM golang:1.22 AS build\nRUN go build\n\n# runtime\nFROM alpine\nCOPY x /\n"
    units = _units("Dockerfile", text)
    assert _spans(units) == {"Dockerfile": (1, 8), "Dockerfile#build": (3, 4), "Dockerfile#alpine": (6, 8)}
    assert list(_units("Dockerfile.one", "FROM python:3.11\nRUN pip install x\n")) == ["Dockerfile.one"]


def test_cmake_functions_and_macros() -> None:
    text = ("cmake_minimum_required(VERSION 3.20)\n# Adds a test\nfunction(add_woods_test name)\n  message(x)\n"
            "endfunction()\nMACRO(Helper)\nENDMACRO()\n")
    units = _units("CMakeLists.txt", text)
    assert _spans(units) == {"CMakeLists.txt": (1, 7), "CMakeLists.txt#add_woods_test": (2, 5),
                             "CMakeLists.txt#Helper": (6, 7)}


SQL = """\
-- Accounts
CREATE TABLE IF NOT EXISTS public."users" (
  id serial, -- ; not the end
  note text DEFAULT 'a;b'
);
INSERT INTO users VALUES ('it\\'s; fine', "x;y");

/* a function */
CREATE OR REPLACE FUNCTION touch() RETURNS trigger AS $body$
BEGIN
  NEW.at := now();  -- ; inside the body
  RETURN NEW;
END;
$body$ LANGUAGE plpgsql;
CREATE INDEX ON users (id);
CREATE UNIQUE INDEX users_note ON users (note);
DELIMITER //
CREATE PROCEDURE p()
BEGIN
  SELECT 1;
END //
DELIMITER ;
CREATE VIEW v AS
SELECT 1
GO
create table [dbo].[Orders] (id int)
"""


def test_sql_create_statements_are_sections() -> None:
    units = _units("schema.sql", SQL)
    assert _spans(units) == {
        "schema.sql": (1, 26),
        "schema.sql#public.users": (1, 5),
        "schema.sql#touch": (9, 14),
        "schema.sql#users_note": (16, 16),
        "schema.sql#p": (18, 21),
        "schema.sql#v": (23, 24),
        "schema.sql#dbo.Orders": (26, 26),
    }
    assert units["schema.sql#public.users"].metadata["object"] == "table"
    assert units["schema.sql#touch"].signature == "CREATE OR REPLACE FUNCTION touch() RETURNS trigger AS $body$"


# --- hostile input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["e.md", "e.rst", "e.yml", "e.toml", "e.json", "e.sql", "Makefile", "e.txt"])
def test_empty_and_blank_files_are_one_file_unit(path: str) -> None:
    for data in (b"", b"\n\n   \n"):
        units = _units(path, data)
        assert list(units) == [path]


def test_invalid_utf8_nul_bytes_bom_and_crlf() -> None:
    units = _units("bad.md", b"\xef\xbb\xbf# T\xff\xfeitle\r\n\r\n## Sec\x00tion\r\nbody\r\n")
    assert list(units) == ["bad.md", "bad.md#section"]  # the NUL is no letter: dropped from the slug
    assert units["bad.md#section"].source_code == "## Sec\x00tion\r\nbody\r"
    assert units["bad.md"].signature == "# T\ufffd\ufffditle"
    yml = _units("c.yml", b"a:\r\n  b: 1\r\nc: \xff\r\n")
    assert list(yml) == ["c.yml", "c.yml#a"]


# Work that grows linearly takes ~10x as long on 10x the input; quadratic work ~100x. The bound sits
# between, on the best of a few runs each, so a stalled run on a loaded machine cannot fail it.
_LINEAR_BOUND = 30.0


def _best_seconds(call: Callable[[], object], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def _grows_linearly(make: Callable[[int], tuple[str, str | bytes]], small: int) -> None:
    """`make(n)` → (path, text of size ~n); extraction time on 10x the size stays within
    `_LINEAR_BOUND` x the time on the smaller text."""
    little = _best_seconds(lambda: extract(*_encoded(make(small))))
    large = _best_seconds(lambda: extract(*_encoded(make(small * 10))))
    assert large <= _LINEAR_BOUND * max(little, 1e-4), (little, large)


def _encoded(item: tuple[str, str | bytes]) -> tuple[str, bytes]:
    path, text = item
    return path, text.encode() if isinstance(text, str) else text


def test_a_two_megabyte_single_line_is_one_unit_and_linear() -> None:
    for path in ("huge.md", "huge.json", "huge.sql", "huge.yml", "huge.txt", "huge.rst"):
        data = b"x" * 2_000_000 if not path.endswith(".json") else b'{"a": "' + b"y" * 2_000_000 + b'"}'
        units = _units(path, data)
        assert list(units) == [path] and units[path].line_end == 1
        _grows_linearly(lambda n, path=path: (path, b"x" * n), 200_000)


def test_pathological_structure_stays_linear() -> None:
    units = _units("many.rst", "Title\n=====\n\n" * 20_000)
    assert len(units) == 20_001
    _grows_linearly(lambda n: ("many.rst", "Title\n=====\n\n" * n), 2_000)
    _grows_linearly(lambda n: ("unclosed.sql", "CREATE TABLE t (\n" + "  'a\n" * n), 2_000)
    _grows_linearly(lambda n: ("nested.md", ">" * n + " # deep\n"), 5_000)
