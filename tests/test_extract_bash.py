"""Bash extraction over the backup-tool fixture (scripts, a library, an extension-less executable,
bats tests), shebang detection in discovery, plus broken, binary and deep input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from tests.linking_helpers import link_fixture, resolved
from woods.discovery import discover
from woods.extract import extract_file, language_for, shebang_language
from woods.extract.bash import extract
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "bash_tool"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "bash")


def _line(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"#!/bin/bash\n", "bash"),
        (b"#!/bin/sh -e\necho", "bash"),
        (b"#!/usr/bin/env bash\n", "bash"),
        (b"#!/usr/bin/env -S bash -euo pipefail\n", "bash"),
        (b"#! /usr/bin/env bats\n", "bash"),
        (b"#!/usr/bin/env python3\n", None),
        (b"#!/usr/bin/zsh\n", None),
        (b"echo hi\n", None),
        (b"", None),
    ],
)
def test_shebang_languages(head: bytes, language: str | None) -> None:
    assert shebang_language(head) == language


def test_language_for_uses_the_head_only_for_extension_less_names() -> None:
    assert language_for("lib/x.sh") == "bash" and language_for("lib/x.bash") == "bash"
    assert language_for("test/x.bats") == "bash"
    assert language_for("bin/tool") is None
    assert language_for("bin/tool", b"#!/bin/bash\n") == "bash"
    assert language_for("bin/tool.py", b"#!/bin/bash\n") == "python"  # the extension decides
    assert language_for("notes.txt", b"#!/bin/bash\n") == "text"  # the extension decides: a text document
    assert extract_file("bin/backup", (ROOT / "bin/backup").read_bytes()).language == "bash"


def test_discovery_detects_executables_by_their_shebang(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/deploy").write_text("#!/usr/bin/env bash\necho deploy\n")
    (tmp_path / "bin/tool").write_text("#!/usr/bin/env python3\nprint(1)\n")
    (tmp_path / "NOTES").write_text("plain words\n")
    (tmp_path / "big").write_bytes(b"#!/bin/sh\n" + b"#" * 2000)
    os.mkfifo(tmp_path / "pipe")  # never opened: opening a FIFO blocks
    result = discover(tmp_path, max_file_bytes=1000)
    assert [(f.path, f.language) for f in result.files] == [("bin/deploy", "bash")]
    # tool and NOTES are no shell scripts; the big file and the FIFO are reported as what they are
    assert result.skipped == {"unsupported": 2, "too_large": 1, "special_file": 1}
    assert discover(ROOT).languages == {"bash": 4}


def test_script_unit_sources_and_calls_of_an_executable() -> None:
    rel = "bin/backup"
    units = _extract(rel)
    script = units["bin/backup"]
    assert (script.type, script.line_start, script.line_end, script.parent) == ("script", 1, _line(rel, 'main "$@"'), None)
    assert script.docstring == "backup: archive a directory into a dated tarball and prune old ones.\n\nUsage: backup SOURCE_DIR DEST_DIR [KEEP]"
    assert deps_by_via(script, "import") == {
        "lib/log.sh": ("lib/log.sh", "bin/lib/log.sh"), "lib/archive.bash": ("lib/archive.bash", "bin/lib/archive.bash")
    }
    assert deps_by_via(script, "calls") == {"bin/backup:main": ("bin/backup:main",)}
    main = units["bin/backup:main"]
    assert (main.type, main.parent, main.namespace, main.signature) == ("function", "bin/backup", "bin/backup", "main()")
    assert (main.line_start, main.line_end) == (_line(rel, "main() {"), _line(rel, 'prune_archives "$dest_dir"') + 1)
    assert main.docstring == "Entry point: validate arguments, archive, prune."
    calls = deps_by_via(main, "calls")
    assert calls["bin/backup:usage"] == ("bin/backup:usage",)
    assert "lib/archive.bash:make_archive" in calls["lib/log.sh:make_archive"]  # any sourced file may define it


def test_function_forms_docs_and_conditional_definitions() -> None:
    log = _extract("lib/log.sh")
    assert log["lib/log.sh"].docstring == "Logging helpers shared by every script of the tool.\nMessages go to stderr so stdout stays machine-readable."
    error = log["lib/log.sh:log_error"]
    assert (error.signature, error.docstring) == ("function log_error", "Errors are always printed, whatever LOG_LEVEL says.")
    assert log["lib/log.sh:log_info"].line_start == log["lib/log.sh:log_info"].line_end == _line("lib/log.sh", "log_info()")
    rel = "lib/archive.bash"
    archive = _extract(rel)
    assert deps_by_via(archive[rel], "import") == {"lib/log.sh": ("lib/log.sh", "log.sh")}  # relative to the script
    listing = archive[f"{rel}:list_archives"]
    assert (listing.line_start, listing.docstring) == (_line(rel, "list_archives() { gfind"), "GNU find under its Homebrew name.")
    assert archive[f"{rel}:list_archives#2"].line_start == _line(rel, "list_archives() { find")
    assert deps_by_via(archive[f"{rel}:prune_archives"], "calls")[f"{rel}:list_archives"] == (f"{rel}:list_archives",)


def test_bats_tests_setup_load_and_run() -> None:
    rel = "test/archive.bats"
    units = _extract(rel)
    test = units['test/archive.bats:@test "archive names carry the date"']
    assert (test.type, test.parent, test.signature) == ("test", rel, '@test "archive names carry the date"')
    assert (test.line_start, test.line_end) == (_line(rel, "archive names carry"), _line(rel, "photos-*.tar.gz") + 1)
    assert deps_by_via(units[f"{rel}:setup"], "import") == {"lib/archive.bash": ("lib/archive.bash", "lib/archive")}
    assert list(deps_by_via(test, "calls")) == ["lib/archive.bash:archive_name"]
    assert units[rel].docstring == "Tests of lib/archive.bash."


def test_edges_resolve_across_the_tool() -> None:
    _units, edges = link_fixture(extract_file, ROOT, ("*.sh", "*.bash", "*.bats", "backup"))
    assert resolved(edges, "bin/backup", "import") == {"lib/log.sh", "lib/archive.bash"}
    assert resolved(edges, "bin/backup:main", "calls") == {
        "bin/backup:usage", "lib/log.sh:log_info", "lib/archive.bash:make_archive", "lib/archive.bash:prune_archives"
    }
    assert resolved(edges, "lib/archive.bash:make_archive", "calls") == {"lib/archive.bash:archive_name", "lib/log.sh:log_error"}
    assert resolved(edges, 'test/archive.bats:@test "prune keeps the newest archives"', "calls") == {"lib/archive.bash:prune_archives"}
    assert not any(e.target.endswith(":gfind") for e in edges["lib/archive.bash:list_archives"])


def test_syntax_errors_keep_what_parses() -> None:
    source = b"good() { echo ok; }\nbad() { if then fi\nlater() { :; }\n"
    result = extract("x.sh", source)
    assert "x.sh:good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = extract("x.sh", b"# caf\xe9\nf() { echo \"\xff\"; }\n").units
    assert units[1].identifier == "x.sh:f" and "\ufffd" in units[1].docstring
    assert extract("bin.sh", bytes(range(256)) * 8).units[0].type == "script"
    assert extract("empty.sh", b"").units == () and extract("blank.sh", b"\n\n").units == ()


def test_deep_nesting_does_not_recurse() -> None:
    depth = 2000
    source = ("f() {\n" + "if true; then\n" * depth + "g\n" + "fi\n" * depth + "}\ng() { :; }\n").encode()
    units = {u.identifier: u for u in extract("d.sh", source).units}
    assert set(units) == {"d.sh", "d.sh:f", "d.sh:g"}
    assert deps_by_via(units["d.sh:f"], "calls") == {"d.sh:g": ("d.sh:g",)}
