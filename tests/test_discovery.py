"""Discovery over deliberately hostile trees: every skip reason is counted exactly, every indexed path
is listed exactly."""

from __future__ import annotations

import builtins
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

from woods import discovery
from woods.discovery import discover


def write(root: Path, rel: str, data: bytes | str = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def paths(result: discovery.DiscoveryResult) -> list[str]:
    return [f.path for f in result.files]


def can_be_denied(path: Path) -> bool:
    """chmod 000 only bites when not running as root (root bypasses permission bits)."""
    return not os.access(path, os.R_OK)


# --- the big hostile tree ------------------------------------------------------------------------
@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, "src/app.py")
    write(root, "src/invalid_utf8.py", b"\xff\xfe\xfa def broken(:\n")  # decoding is not our job
    write(root, "src/nul.py", b"x = 1\n\x00\x01\x02")
    write(root, "src/late_nul.py", b"#" * 8192 + b"\x00")  # NUL just past the 8 KiB sniff window
    write(root, "src/edge_nul.py", b"#" * 8191 + b"\x00")  # NUL as the window's last byte
    write(root, "src/empty.rb", b"")
    write(root, "assets/logo.png", b"no NUL needed, the extension decides")
    write(root, "assets/site.css", "body {}")
    with open(root / "big.py", "wb") as handle:  # sparse 50 MB: no real disk use
        handle.truncate(50 * 1024 * 1024)
    write(root, "README.md", "# readme")
    write(root, "node_modules/pkg/index.js")
    write(root, "vendor/bundle/ruby/3.2/gems/rack/lib/rack.rb")
    write(root, "vendor/lib/shim.rb")  # plain vendor/ is source
    write(root, "dist/bundle.js")
    write(root, "app/__pycache__/m.cpython-311.pyc", b"\x00")
    write(root, "env/pyvenv.cfg", "home = /usr/bin")
    write(root, "env/lib/site.py")
    write(root, "myvenv/pyvenv.cfg", "home = /usr/bin")  # any virtualenv, whatever its name
    write(root, "tools/env/setup.py")  # an `env` that is not a virtualenv is source
    write(root, ".git/config", "[core]")
    write(root, ".git/info/exclude", "local_only.py\n")
    write(root, "local_only.py")
    write(root, ".gitignore", "*.generated.py\ngen/\n!gen/keep.py\n")
    write(root, "schema.generated.py")
    write(root, "gen/keep.py")  # git cannot re-include a file under an excluded directory
    write(root, ".woodsignore", "fixtures_big/\n")
    write(root, "fixtures_big/data.py")
    write(root, "pkg/.gitignore", "*.py\n!keep.py\n/anchored.rb\n")
    write(root, "pkg/keep.py")
    write(root, "pkg/drop.py")
    write(root, "pkg/anchored.rb")
    write(root, "pkg/deeper/anchored.rb")  # `/anchored.rb` is anchored to pkg/
    write(root, "pkg/sub/.gitignore", "!drop.py\n!also.py\n")
    write(root, "pkg/sub/.woodsignore", "also.py\n")  # same level: .woodsignore wins
    write(root, "pkg/sub/drop.py")  # deeper negation re-includes
    write(root, "pkg/sub/also.py")
    write(root, "pkg/sub/keep.py")
    os.close(os.open(os.fsencode(root) + b"/bad\xffname.py", os.O_CREAT | os.O_WRONLY, 0o644))
    os.mkfifo(root / "pipe.py")  # opening it would block forever
    return root


def test_hostile_tree_exact_files_and_reasons(hostile: Path) -> None:
    result = discover(hostile)

    assert paths(result) == [
        "README.md",  # a document (markdown) since the text fallback
        "assets/site.css",  # a document (css)
        "pkg/deeper/anchored.rb",
        "pkg/keep.py",
        "pkg/sub/drop.py",
        "pkg/sub/keep.py",
        "src/app.py",
        "src/empty.rb",
        "src/invalid_utf8.py",
        "src/late_nul.py",
        "tools/env/setup.py",
        "vendor/lib/shim.rb",
    ]
    assert result.skipped == Counter({
        "ignored_dir": 7,  # .git node_modules vendor/bundle dist __pycache__ env myvenv
        "gitignored": 7,  # local_only schema.generated gen/ fixtures_big/ drop anchored also
        "unsupported": 5,  # .gitignore×3 .woodsignore×2
        "binary": 3,  # logo.png nul.py edge_nul.py
        "too_large": 1,
        "bad_filename": 1,
        "special_file": 1,
    })
    assert result.skipped_examples["ignored_dir"] == [
        ".git", "app/__pycache__", "dist", "env", "myvenv"]  # the 5 smallest of 7
    assert result.skipped_examples["gitignored"] == [
        "fixtures_big", "gen", "local_only.py", "pkg/anchored.rb", "pkg/drop.py"]
    assert result.skipped_examples["bad_filename"] == ["bad\\xffname.py"]
    assert result.skipped_examples["too_large"] == ["big.py"]
    assert result.skipped_examples["binary"] == ["assets/logo.png", "src/edge_nul.py", "src/nul.py"]
    assert result.languages == Counter({"python": 7, "ruby": 3, "markdown": 1, "css": 1})
    assert result.warnings == []


def test_files_carry_stat_data_and_languages(hostile: Path) -> None:
    result = discover(hostile)
    by_path = {f.path: f for f in result.files}
    app = by_path["src/app.py"]
    st = os.stat(hostile / "src/app.py")
    assert (app.size, app.mtime_ns, app.language) == (st.st_size, st.st_mtime_ns, "python")
    assert app.abs_path == hostile / "src" / "app.py"
    assert by_path["src/empty.rb"].size == 0
    assert by_path["src/empty.rb"].language == "ruby"


def test_large_files_are_never_opened(hostile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open = builtins.open

    def spying_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spying_open)
    result = discover(hostile)
    assert "big.py" in result.skipped_examples["too_large"]
    assert str(hostile / "big.py") not in opened
    assert str(hostile / "src/app.py") in opened


def test_max_file_bytes_is_inclusive(tmp_path: Path) -> None:
    write(tmp_path, "exact.py", b"a" * 100)
    write(tmp_path, "over.py", b"a" * 101)
    result = discover(tmp_path, max_file_bytes=100)
    assert paths(result) == ["exact.py"]
    assert result.skipped == Counter({"too_large": 1})


def test_on_file_reports_running_count_and_output_is_deterministic(hostile: Path) -> None:
    seen: list[int] = []
    first = discover(hostile, on_file=seen.append)
    second = discover(hostile)
    assert seen == list(range(1, len(first.files) + 1))
    assert first == second


# --- ignore rules --------------------------------------------------------------------------------
def test_extra_ignores_beat_nested_negations(tmp_path: Path) -> None:
    write(tmp_path, "a/.gitignore", "!*.py\n")
    write(tmp_path, "a/x.py")
    write(tmp_path, "a/y.py")
    result = discover(tmp_path, extra_ignores=["x.py"])
    assert paths(result) == ["a/y.py"]
    assert result.skipped == Counter({"gitignored": 1, "unsupported": 1})


def test_invalid_ignore_pattern_is_dropped_with_warning(tmp_path: Path) -> None:
    write(tmp_path, "a/.gitignore", "!\nskip.py\n")
    write(tmp_path, "a/.woodsignore", "# c\n!\nalso.py\n")
    write(tmp_path, "a/skip.py")
    write(tmp_path, "a/also.py")
    write(tmp_path, "a/keep.py")
    result = discover(tmp_path)
    assert paths(result) == ["a/keep.py"]
    assert result.skipped == Counter({"gitignored": 2, "unsupported": 2})
    assert result.warnings == [
        "a/.gitignore:1: invalid ignore pattern '!' dropped",
        "a/.woodsignore:2: invalid ignore pattern '!' dropped",
    ]


def test_git_file_pointing_to_gitdir_honours_its_exclude(tmp_path: Path) -> None:
    repo = tmp_path / "wt"
    write(tmp_path, "gitdir/info/exclude", "# comment\nsecret.py\n")
    write(repo, ".git", f"gitdir: {tmp_path / 'gitdir'}\n")
    write(repo, "secret.py")
    write(repo, "open.py")
    result = discover(repo)
    assert paths(result) == ["open.py"]
    assert result.skipped == Counter({"gitignored": 1, "unsupported": 1})  # the .git file itself


def test_directory_patterns_do_not_match_files(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "out/\n")
    write(tmp_path, "out/x.py")
    write(tmp_path, "src/out", b"plain file named out")
    write(tmp_path, "src/out.py")
    result = discover(tmp_path, is_indexable=lambda p: not p.endswith(".gitignore"))
    assert paths(result) == ["src/out", "src/out.py"]
    assert [f.language for f in result.files] == ["unknown", "python"]
    assert result.skipped == Counter({"gitignored": 1, "unsupported": 1})


def test_skip_dirs_can_be_replaced(tmp_path: Path) -> None:
    write(tmp_path, "log/slog.go", "package log\n")
    write(tmp_path, "node_modules/a.js")
    assert paths(discover(tmp_path)) == []
    result = discover(tmp_path, skip_dirs=("node_modules",))
    assert paths(result) == ["log/slog.go"]
    assert result.skipped == Counter({"ignored_dir": 1})


# --- structure -----------------------------------------------------------------------------------
def test_deep_nesting_without_recursion(tmp_path: Path) -> None:
    depth = 500
    deep = tmp_path.joinpath(*(["d"] * depth))
    deep.mkdir(parents=True)
    (deep / "bottom.py").write_text("x = 1\n")
    write(tmp_path, "d/d/side.rb")
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # a recursive walk would blow up well before depth 500
    try:
        result = discover(tmp_path)
    finally:
        sys.setrecursionlimit(old_limit)
    assert paths(result) == ["/".join(["d"] * depth + ["bottom.py"]), "d/d/side.rb"]
    assert result.skipped == Counter()


def test_root_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        discover(tmp_path / "missing")
    write(tmp_path, "file.py")
    with pytest.raises(NotADirectoryError):
        discover(tmp_path / "file.py")
    with pytest.raises(ValueError):
        discover(tmp_path, max_file_bytes=-1)


# --- symlinks ------------------------------------------------------------------------------------
@pytest.fixture
def linked(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(tmp_path, "outside/o.py")
    write(root, "real/a.py")
    write(root, ".gitignore", "hidden/\n")
    write(root, "hidden/h.py")
    write(root, "hidden/only_via_dir.py")
    (root / "real/loop").symlink_to("..")  # an ancestor: a real cycle
    (root / "real/self").symlink_to(".")  # its own directory
    (root / "alias.py").symlink_to("real/a.py")  # target already indexed
    (root / "mirror").symlink_to("real")  # sibling directory already walked
    (root / "cycle1").symlink_to("cycle2")
    (root / "cycle2").symlink_to("cycle1")  # ELOOP
    (root / "out_dir").symlink_to(tmp_path / "outside")
    (root / "out.py").symlink_to(tmp_path / "outside/o.py")
    (root / "sneaky").symlink_to("../outside")  # relative, still outside
    (root / "broken.py").symlink_to("missing.py")
    (root / "exposed.py").symlink_to("hidden/h.py")  # target ignored: indexed under the link
    (root / "exposed_dir").symlink_to("hidden")  # walked under the link; h.py is a duplicate
    return root


def test_symlinks_never_leave_root_loop_or_duplicate(linked: Path) -> None:
    result = discover(linked)
    assert paths(result) == ["exposed.py", "exposed_dir/only_via_dir.py", "real/a.py"]
    assert result.skipped == Counter({
        "symlink_loop": 4,  # real/loop real/self cycle1 cycle2
        "symlink_duplicate": 3,  # alias.py mirror exposed_dir/h.py
        "symlink_outside": 3,  # out_dir out.py sneaky
        "broken_symlink": 1,
        "gitignored": 1,  # hidden/
        "unsupported": 1,  # .gitignore
    })
    assert result.skipped_examples["symlink_loop"] == ["cycle1", "cycle2", "real/loop", "real/self"]
    assert result.skipped_examples["symlink_duplicate"] == ["alias.py", "exposed_dir/h.py", "mirror"]
    assert result.skipped_examples["symlink_outside"] == ["out.py", "out_dir", "sneaky"]


def test_symlinks_not_followed_when_disabled(linked: Path) -> None:
    result = discover(linked, follow_symlinks=False)
    assert paths(result) == ["real/a.py"]
    assert result.skipped == Counter({"symlink_not_followed": 12, "gitignored": 1, "unsupported": 1})


def test_ignored_symlink_is_not_resolved(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "broken.py\n")
    (tmp_path / "broken.py").symlink_to("nowhere.py")
    result = discover(tmp_path)
    assert result.skipped == Counter({"gitignored": 1, "unsupported": 1})


# --- failures mid-walk ---------------------------------------------------------------------------
def test_unreadable_file_and_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "ok.py")
    secret_file = write(tmp_path, "secret.py")
    locked_dir = tmp_path / "locked"
    write(tmp_path, "locked/inner.py")
    write(tmp_path, "after/z.py")  # the walk continues past the failures
    secret_file.chmod(0o000)
    locked_dir.chmod(0o000)
    try:
        if not can_be_denied(secret_file):  # running as root: simulate the denials
            real_open, real_scandir = builtins.open, os.scandir

            def denying_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
                if os.fspath(file) == str(secret_file):
                    raise PermissionError(13, "Permission denied", os.fspath(file))
                return real_open(file, *args, **kwargs)

            def denying_scandir(path=".", *args):  # type: ignore[no-untyped-def]
                if os.fspath(path) == str(locked_dir):
                    raise PermissionError(13, "Permission denied", os.fspath(path))
                return real_scandir(path, *args)

            monkeypatch.setattr(builtins, "open", denying_open)
            monkeypatch.setattr(os, "scandir", denying_scandir)
        result = discover(tmp_path)
    finally:
        monkeypatch.undo()
        secret_file.chmod(0o644)
        locked_dir.chmod(0o755)
    assert paths(result) == ["after/z.py", "ok.py"]
    assert result.skipped == Counter({"unreadable": 2})
    assert result.skipped_examples["unreadable"] == ["locked", "secret.py"]
    assert result.warnings == ["cannot list locked: Permission denied"]


def test_file_vanishing_mid_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "stays.py")
    doomed = write(tmp_path, "doomed.py")
    real_stat, real_unlink = os.stat, os.unlink

    def deleting_stat(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if os.fspath(path) == str(doomed) and os.path.lexists(doomed):
            real_unlink(doomed)  # deleted after listing, before stat
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", deleting_stat)
    result = discover(tmp_path)
    monkeypatch.undo()
    assert paths(result) == ["stays.py"]
    assert result.skipped == Counter({"vanished": 1})
    assert result.skipped_examples == {"vanished": ["doomed.py"]}


def test_directory_vanishing_mid_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "gone/x.py")
    write(tmp_path, "kept/y.py")
    real_scandir = os.scandir

    def deleting_scandir(path=".", *args):  # type: ignore[no-untyped-def]
        if os.fspath(path) == str(tmp_path / "gone"):
            raise FileNotFoundError(2, "No such file or directory", os.fspath(path))
        return real_scandir(path, *args)

    monkeypatch.setattr(os, "scandir", deleting_scandir)
    result = discover(tmp_path)
    monkeypatch.undo()
    assert paths(result) == ["kept/y.py"]
    assert result.skipped == Counter({"vanished": 1})


def test_root_given_through_a_symlink(linked: Path, tmp_path: Path) -> None:
    (tmp_path / "repo_link").symlink_to(linked)
    via_link = discover(tmp_path / "repo_link")
    direct = discover(linked)
    assert paths(via_link) == paths(direct)
    assert via_link.skipped == direct.skipped
    assert via_link.files[0].abs_path == tmp_path / "repo_link" / via_link.files[0].path


def test_a_package_named_venv_is_indexed_and_minified_bundles_are_not(tmp_path):
    """Only a real virtualenv (pyvenv.cfg) is skipped, whatever its name: the standard library
    has a `venv` package. Minified bundles are generated, not source."""
    from woods.discovery import discover

    (tmp_path / "venv").mkdir()
    (tmp_path / "venv/__init__.py").write_text("def create():\n    pass\n")
    (tmp_path / "real_env").mkdir()
    (tmp_path / "real_env/pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "real_env/lib.py").write_text("x = 1\n")
    (tmp_path / "app.min.js").write_text("var a=1;" * 100 + "\n")
    (tmp_path / "app.js").write_text("export function a() { return 1 }\n")
    result = discover(tmp_path)
    assert [f.path for f in result.files] == ["app.js", "venv/__init__.py"]
    assert result.skipped["minified"] == 1 and result.skipped["ignored_dir"] == 1


# --- documents, and the files that stay skipped -------------------------------------------------
DOCUMENTS = {
    "README.md": "# Tool\n",
    "docs/guide.rst": "Guide\n=====\n",
    "LICENSE": "MIT\n",
    "LICENSE-APACHE": "Apache\n",
    "CHANGELOG": "1.0\n",
    "requirements.txt": "pathspec\n",
    "Dockerfile": "FROM python\n",
    "Makefile": "all:\n\ttrue\n",
    "CMakeLists.txt": "project(x)\n",
    "pyproject.toml": "[project]\n",
    "config/app.yml": "a: 1\n",
    "config/database.yml.example": "a: 1\n",
    ".env.example": "TOKEN=\n",
    ".editorconfig": "[*]\n",
    "tsconfig.json": "{}\n",
    "db/schema.sql": "CREATE TABLE t (id int);\n",
    "web/index.html": "<p>hi</p>\n",
    "web/site.css": "p { color: red }\n",
    "web/App.vue": "<template></template>\n",
    "data/small.csv": "a,b\n1,2\n",
    "config/locales/en.yml": "en:\n  hello: Hello\n",
    "locales/en-US/app.json": "{}\n",
    "locales/README.md": "# Translating\n",
    "pom.xml": "<project/>\n",
    "go.mod": "module x\n",
}
NOT_DOCUMENTS = [".env", "prod.env", "logo.svg", "server.log", "certs/key.pem", "fix.patch", ".gitignore", "Makefile.in"]


def test_documents_are_indexed_under_their_kind_and_the_rest_stays_unsupported(tmp_path: Path) -> None:
    for rel, text in DOCUMENTS.items():
        write(tmp_path, rel, text)
    for rel in NOT_DOCUMENTS:
        write(tmp_path, rel, "text\n")
    result = discover(tmp_path)
    assert paths(result) == sorted(DOCUMENTS)
    by_path = {f.path: f.language for f in result.files}
    assert by_path["README.md"] == "markdown" and by_path["LICENSE-APACHE"] == "text"
    assert by_path["config/database.yml.example"] == "yaml" and by_path[".env.example"] == "properties"
    assert by_path["CMakeLists.txt"] == "cmake" and by_path["data/small.csv"] == "csv"
    assert result.skipped == Counter({"unsupported": len(NOT_DOCUMENTS)})
    assert result.skipped_examples["unsupported"] == sorted(NOT_DOCUMENTS)[:5]


LOCKS = [
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "Cargo.lock",
    "Gemfile.lock", "poetry.lock", "Pipfile.lock", "uv.lock", "composer.lock", "go.sum", "mix.lock",
    "Package.resolved", "packages.lock.json", ".terraform.lock.hcl", "gradle.lockfile", "flake.lock",
]


def test_lock_files_are_skipped_by_name_without_being_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for rel in LOCKS:
        write(tmp_path, f"sub/{rel}", "{}\n")
    write(tmp_path, "sub/package.json", "{}\n")
    opened: list[str] = []
    real_open = builtins.open

    def spying_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spying_open)
    result = discover(tmp_path)
    monkeypatch.undo()
    assert paths(result) == ["sub/package.json"]
    assert result.skipped == Counter({"lock": len(LOCKS)})
    assert opened == [str(tmp_path / "sub/package.json")]


GENERATED_BY_NAME = [
    "api/user.pb.go", "api/user_pb2.py", "api/user_pb2_grpc.py", "web/user_pb.js", "static/app.js.map",
    "static/site.css.map", "src/__snapshots__/App.test.js.snap", "pkg/zz_generated.deepcopy.go",
    "ui/Form1.Designer.cs", "src/PublicAPI.Shipped.txt",
]
GENERATED_HEADERS = {
    "gen/client.go": "// Copyright 2024 The Authors.\n// Licensed under MIT.\n\n// Code generated by mockgen. DO NOT EDIT.\n"
                     "package gen\n",
    "gen/types.py": "# @generated by tool\nx = 1\n",
    "gen/Model.java": "/*\n * NOTE: This class is auto generated by the swagger code generator program.\n"
                      " * Do not edit the class manually.\n */\nclass Model {}\n",
    "gen/openapi.yml": "# This file is autogenerated. DO NOT EDIT.\nopenapi: 3.0.0\n",
    "gen/Thing.java": "// <auto-generated/>\nclass Thing {}\n",
    "gen/page.html": "<!-- Generated by docs-tool; do not edit -->\n<p>x</p>\n",
}
NOT_GENERATED = {
    "db/schema.rb": "# This file is auto-generated from the current state of the database. Instead\n"
                    "# of editing this file, please use the migrations feature of Active Record.\nActiveRecord::Schema.define do\nend\n",
    "app/migrations/0001_initial.py": "# Generated by Django 4.2 on 2024-01-01 00:00\nfrom django.db import migrations\n",
    "tools/gen.py": '"""Writes files marked @generated and DO NOT EDIT."""\n\ndef main():\n    pass\n',
    "docs/generating.md": "# Generating code\n\nGenerated files say DO NOT EDIT.\n",
}


def test_generated_files_by_name_and_by_header(tmp_path: Path) -> None:
    for rel in GENERATED_BY_NAME:
        write(tmp_path, rel, "x = 1\n")
    for rel, text in {**GENERATED_HEADERS, **NOT_GENERATED}.items():
        write(tmp_path, rel, text)
    result = discover(tmp_path)
    assert paths(result) == sorted(NOT_GENERATED)
    assert result.skipped == Counter({"generated": len(GENERATED_BY_NAME) + len(GENERATED_HEADERS)})


def test_a_generated_header_far_below_the_top_does_not_count(tmp_path: Path) -> None:
    write(tmp_path, "late.go", "// x\n" * 40 + "// Code generated by x. DO NOT EDIT.\npackage late\n")
    write(tmp_path, "early.go", "// x\n" * 39 + "// Code generated by x. DO NOT EDIT.\npackage early\n")
    result = discover(tmp_path)
    assert paths(result) == ["late.go"] and result.skipped == Counter({"generated": 1})


def test_minified_by_name_and_by_content(tmp_path: Path) -> None:
    write(tmp_path, "static/site.min.css", "a{b:c}\n")
    write(tmp_path, "static/bundle.js", "var a=1;" * 500)  # one 4 KB line, no `.min.` in the name
    write(tmp_path, "static/blob.json", '{"k":' + '"v",' * 400 + '"z":1}')
    write(tmp_path, "static/ok.json", '{\n  "a": 1\n}\n' * 200)
    write(tmp_path, "long_lines.py", "x = '" + "a" * 5000 + "'\n")  # long lines in code are not minification
    write(tmp_path, "long_lines.md", ("word " * 200 + "\n\n") * 5)
    result = discover(tmp_path)
    assert paths(result) == ["long_lines.md", "long_lines.py", "static/ok.json"]
    assert result.skipped == Counter({"minified": 3})


def test_data_files_by_extension_and_size(tmp_path: Path) -> None:
    write(tmp_path, "events.jsonl", '{"a": 1}\n')
    write(tmp_path, "shapes.geojson", "{}\n")
    write(tmp_path, "fixtures/big.json", "{\n" + '  "k": 1,\n' * 30_000 + '  "z": 1\n}\n')  # ~300 KB
    write(tmp_path, "fixtures/dump.xml", "<a>\n" + "  <b/>\n" * 40_000 + "</a>\n")
    write(tmp_path, "tables/big.csv", "a,b\n" * 5_000)  # 20 KB
    write(tmp_path, "tables/small.tsv", "a\tb\n" * 100)
    write(tmp_path, "config/big.yml", "key:\n" + "  - value\n" * 30_000)  # configuration has no data limit
    result = discover(tmp_path)
    assert paths(result) == ["config/big.yml", "tables/small.tsv"]
    assert result.skipped == Counter({"data": 5})


def test_translation_catalogs_but_english_are_skipped(tmp_path: Path) -> None:
    skipped = ["config/locales/de.yml", "config/locales/devise.fr.yml", "config/locales/pt-BR.yml",
               "locales/zh_TW/app.json", "i18n/ja/strings.properties", "po/de.po", "po/app.pot",
               "ios/Localizable.xliff"]
    kept = ["config/locales/en.yml", "config/locales/devise.en.yml", "locales/en-GB/app.json",
            "locales/README.md", "i18n/index.js", "i18n/index.json", "lang/go.yml"]
    for rel in [*skipped, *kept]:
        write(tmp_path, rel, "x: 1\n")
    result = discover(tmp_path)
    assert paths(result) == sorted(kept)
    assert result.skipped == Counter({"translation": len(skipped)})


def test_skip_reasons_are_all_declared(tmp_path: Path) -> None:
    assert len(set(discovery.SKIP_REASONS)) == len(discovery.SKIP_REASONS)
    assert {"lock", "generated", "data", "translation", "minified", "unsupported"} <= set(discovery.SKIP_REASONS)


def test_extension_less_files_are_named_by_their_shebang(tmp_path: Path) -> None:
    """Extension-less files the name leaves open are read: a `#!` line naming a shell makes them
    Bash; anything else stays `unsupported`, and a file with an unknown extension is never read."""
    write(tmp_path, "bin/setup", "#!/bin/bash\necho hi\n")
    write(tmp_path, "bin/notes", "plain\n")
    write(tmp_path, "data.xyz", "#!/bin/bash\n")  # an unknown extension is never read
    result = discover(tmp_path)
    assert [(f.path, f.language) for f in result.files] == [("bin/setup", "bash")]
    assert result.skipped == Counter({"unsupported": 2})


def test_translated_documentation_beside_an_english_original_is_skipped(tmp_path: Path) -> None:
    kept = ["docs/en/docs/index.md", "docs/en/mkdocs.yml", "docs/missing-translation.md", "help/en/syntax.html",
            "src/de/parser.py", "notes/de/todo.md", "site/content/fr/page.md"]  # code, or no English sibling
    skipped = ["docs/de/docs/index.md", "docs/zh-hant/docs/index.md", "docs/pt/mkdocs.yml", "help/fr/syntax.html"]
    for rel in [*kept, *skipped]:
        write(tmp_path, rel, "x: 1\n")
    write(tmp_path, "src/en/parser.py")
    result = discover(tmp_path)
    assert paths(result) == sorted([*kept, "src/en/parser.py"])
    assert result.skipped == Counter({"translation": len(skipped)})


def test_output_named_directories_follow_the_ignore_file_when_there_is_one(tmp_path: Path) -> None:
    # clap keeps its builder in src/build/: with a .gitignore in effect that does not ignore it,
    # it is source and indexed; what the .gitignore ignores stays out.
    repo = tmp_path / "governed"
    write(repo, ".gitignore", "/target/\n")
    write(repo, "src/build/arg.rs", "pub fn arg() {}\n")
    write(repo, "target/debug/out.rs", "pub fn generated() {}\n")
    write(repo, "pkg/log/logger.go", "package log\n")
    result = discover(repo)
    assert [f.path for f in result.files] == ["pkg/log/logger.go", "src/build/arg.rs"]
    assert result.skipped["gitignored"] == 1 and result.skipped.get("ignored_dir", 0) == 0

    # No ignore file anywhere: the name decides, as for a tarball of a project with its build output.
    bare = tmp_path / "bare"
    write(bare, "src/build/arg.rs", "pub fn arg() {}\n")
    write(bare, "lib/main.rs", "fn main() {}\n")
    result = discover(bare)
    assert [f.path for f in result.files] == ["lib/main.rs"]
    assert result.skipped["ignored_dir"] == 1

    # Dependency, tool and always-output directories are skipped by name whatever the ignore file says.
    write(repo, "node_modules/dep/index.js", "module.exports = 1\n")
    write(repo, "dist/lib.js", "module.exports = 2\n")
    assert [f.path for f in discover(repo).files] == ["pkg/log/logger.go", "src/build/arg.rs"]
