"""The issue → code localisation bench (bench/localize/): its mining and scoring helpers on tiny
inline inputs, the snapshot walk on a throwaway git repository, and the committed dev set's shape.

Why: the dev set is mined and scored from repositories CI does not have; these checks need only
the helpers, git and the committed JSON, so a rule that silently changes what counts as a fix, a
trace, a gold function or a hit is caught offline.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench" / "localize"


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


lib = _load("localize_lib")
run = _load("run")


# -- what is a fix ------------------------------------------------------------------------------


@pytest.mark.parametrize("subject, body", [
    ("Fix crash when the table is empty", ""),
    ("fix(parser): handle a trailing comma", ""),
    ("Avoid double free in the stream reader", "This fixes a crash seen by users.\n\nFixes #12"),
    ("Handle None in LimitedSet.discard", "It raised ValueError on every call.\n\nCloses #7"),
    ("Regression: header parsing drops the last byte", ""),
])
def test_bug_fixes_are_recognised(subject: str, body: str) -> None:
    assert lib.is_fix_message(subject, body)


@pytest.mark.parametrize("subject, body", [
    ("Fix typo in README", ""),
    ("fix tests on Python 3.13", ""),
    ("chore(deps): fix lockfile", ""),
    ("docs: fix broken link", ""),
    ("Revert \"Fix crash in parser\"", ""),
    ("Extend the auth plugin API", "Adds three attributes.\n\nClose #433"),  # a feature request closed
    ("Add a progress bar", ""),
])
def test_housekeeping_and_features_are_not_fixes(subject: str, body: str) -> None:
    assert not lib.is_fix_message(subject, body)


def test_clean_message_drops_trailers_and_the_pull_request_suffix() -> None:
    message = ("Fix crash on empty input (#1234)\n\nThe reader indexed past the end.\n\n\n\n"
               "Fixes #1200\nSigned-off-by: A Person <a@example.com>\nCo-authored-by: B <b@example.com>\n"
               "(cherry picked from commit 0123456789abcdef)\ngit-svn-id: svn://example.org/trunk@28697 b305")
    assert lib.clean_message(message) == "Fix crash on empty input\n\nThe reader indexed past the end."
    assert lib.issue_numbers(message) == [1234, 1200]


# -- traces ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, kind", [
    ('Traceback (most recent call last):\n  File "/x/celery/app/base.py", line 12, in f\nKeyError: 1', "traceback"),
    ("java.lang.NullPointerException: boom\n\tat io.netty.Foo.bar(Foo.java:12)", "frames"),
    ("Caused by: java.lang.IllegalStateException: closed", "exception"),
    ("panic: runtime error: index out of range\n\ngoroutine 1 [running]:\nmain.main()\n\t/x/main.go:5 +0x1d", "panic"),
    ("thread 'main' panicked at src/lib.rs:10:5:\nattempt to subtract with overflow", "panic"),
    ("TypeError: Cannot read properties of undefined (reading 'x')\n    at parse (/app/lib/parse.js:10:15)", "frames"),
    ("/gems/rubygems/specification.rb:1413:in `block in each': undefined method `name' for nil", "frames"),
    ("System.ArgumentNullException: Value cannot be null.\n   at Jellyfin.Api.Foo.Bar(String x) in /src/Foo.cs:line 42", "frames"),
    ("PHP Fatal error:  Uncaught TypeError: html::quote(): Argument #1 must be of type string", "error-output"),
    ("==1486==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020", "native-crash"),
    ("util.c:161:24: error: storage size of 'timebuf' isn't known", "compiler-error"),
    ("error[E0277]: can't compare `Option<&str>` with `Option<&String>`", "compiler-error"),
    ("fatal: renaming 'src' failed: No such file or directory", "error-output"),
])
def test_pasted_program_output_is_a_trace(text: str, kind: str) -> None:
    assert kind in lib.trace_kinds("Some words first.\n\n" + text)


@pytest.mark.parametrize("text", [
    "Fix a double free when the stream is closed twice.",
    "Avoid SIGABRT handling on exit; see the error handling notes.",
    "Add Error::is_shutdown() so callers can filter these errors out.",
    "The parser now reports an error when the delimiter is missing.",
])
def test_prose_about_errors_is_not_a_trace(text: str) -> None:
    assert lib.trace_kinds(text) == []


# -- gold files and functions ---------------------------------------------------------------------


@pytest.mark.parametrize("path, library", [
    ("celery/app/base.py", True),
    ("src/main/java/io/netty/Foo.java", True),
    ("tests/test_base.py", False),
    ("src/test/java/io/netty/FooTest.java", False),
    ("lib/parse.test.ts", False),
    ("pkg/server_test.go", False),
    ("docs/conf.py", False),
    ("examples/hello.rs", False),
    ("t/t1234-rebase.sh", False),
    ("types/index.d.ts", False),
    ("vendor/lib/x.go", False),
    ("src/Polly.SharedSpecs/Retry/WaitAndRetrySpecs.cs", False),
    ("src/Polly.NetStandard11/Properties/AssemblyInfo.cs", False),
    ("src/Polly.Shared/Retry/RetrySyntax.cs", True),
])
def test_library_paths(path: str, library: bool) -> None:
    assert lib.is_library_path(path) is library


DIFF = """diff --git a/pkg/a.py b/pkg/a.py
index 1111111..2222222 100644
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -5 +5 @@ def f():
-    return 1
+    return 2
@@ -12,0 +13,2 @@ def g():
+    x = 1
+    y = 2
@@ -20,0 +22 @@
+# between
diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,3 @@
+def h():
+    pass
+
diff --git a/pkg/old.py b/pkg/renamed.py
similarity index 90%
--- a/pkg/old.py
+++ b/pkg/renamed.py
@@ -3,2 +3,0 @@
-    a = 1
-    b = 2
"""


def test_parse_hunks_keys_parent_paths_and_leaves_added_files_out() -> None:
    hunks = lib.parse_hunks(DIFF)
    assert set(hunks) == {"pkg/a.py", "pkg/old.py"}
    assert hunks["pkg/a.py"] == [lib.Hunk(5, 1, 5, 1), lib.Hunk(12, 0, 13, 2), lib.Hunk(20, 0, 22, 1)]
    assert hunks["pkg/old.py"] == [lib.Hunk(3, 2, 3, 0)]


def test_touched_functions_take_the_innermost_and_skip_insertions_between_functions() -> None:
    spans = [
        lib.Span("pkg.a", "module", 1, 30),
        lib.Span("pkg.a.C", "class", 2, 19),
        lib.Span("pkg.a.C.f", "method", 3, 8),
        lib.Span("pkg.a.C.g", "method", 10, 19),
        lib.Span("pkg.a.k", "function", 22, 30),
    ]
    touched = lib.touched_functions(spans, lib.parse_hunks(DIFF)["pkg/a.py"])
    # line 5 is in f; the insertion after 12 is inside g; the insertion after 20 falls between g and k
    assert [s.identifier for s in touched] == ["pkg.a.C.f", "pkg.a.C.g"]
    assert lib.touched_functions(spans, [lib.Hunk(19, 0, 20, 1)]) == []  # after g's last line


def test_a_file_whose_changes_are_all_in_test_code_is_not_gold() -> None:
    spans = [lib.Span("crate::x::parse", "function", 1, 10), lib.Span("crate::x::tests::it_parses", "function", 20, 30)]
    assert lib.only_test_code_changed(spans, [lib.Hunk(22, 2, 22, 3)])
    assert not lib.only_test_code_changed(spans, [lib.Hunk(22, 2, 22, 3), lib.Hunk(5, 1, 5, 1)])
    assert lib.is_test_identifier("crate::x::tests::it_parses") and not lib.is_test_identifier("crate::x::parse")


def test_naming_a_gold_path() -> None:
    gold = ["celery/utils/imports.py"]
    trace = 'File "/usr/lib/python3.10/site-packages/celery/utils/imports.py", line 146'
    assert lib.names_gold_path(trace, gold)
    assert lib.names_gold_path("see utils/imports.py", gold)
    assert not lib.names_gold_path("see imports.py", gold) and lib.names_gold_basename("see imports.py", gold)
    assert not lib.names_gold_path("the importer", gold) and not lib.names_gold_basename("reimports.pyc", gold)


# -- scoring --------------------------------------------------------------------------------------


GOLD_FUNCTIONS = [lib.GoldFunction("a/x.py", "a.x.C.f", 10, 20)]


def test_file_metrics() -> None:
    results = [lib.RankedUnit("b.py", "b.k", 1, 5), lib.RankedUnit("b.py", "b.m", 7, 9), lib.RankedUnit("a/x.py", "a.x.C.f", 10, 20)]
    score = lib.score_answer(results, ["a/x.py"], GOLD_FUNCTIONS)
    assert (score.acc1, score.acc5, score.mrr10) == (0.0, 1.0, 0.5)  # the second distinct file
    assert score.func_mrr10 == pytest.approx(1 / 3)  # the third unit
    top = lib.score_answer([lib.RankedUnit("a/x.py")], ["a/x.py"], GOLD_FUNCTIONS, files_only=True)
    assert (top.acc1, top.mrr10, top.func_mrr10) == (1.0, 1.0, None)
    files = [lib.RankedUnit(f"f{i}.py") for i in range(12)] + [lib.RankedUnit("a/x.py")]
    assert lib.score_answer(files, ["a/x.py"], []).mrr10 == 0.0  # beyond ten files


def test_function_hits_by_identifier_or_span_and_strict_spans() -> None:
    renamed = lib.RankedUnit("a/x.py", "x.C.f", 9, 20)  # another spelling, span holds the first line
    container = lib.RankedUnit("a/x.py", "a.x.C", 1, 200)
    chunk = lib.RankedUnit("a/x.py", "a.x.C.f", 15, 20)  # a chunk of f: found by identifier
    other_file = lib.RankedUnit("b/x.py", "a.x.C.f2", 10, 20)
    assert lib.function_hit(renamed, GOLD_FUNCTIONS) and lib.function_hit(renamed, GOLD_FUNCTIONS, strict=True)
    assert lib.function_hit(container, GOLD_FUNCTIONS) and not lib.function_hit(container, GOLD_FUNCTIONS, strict=True)
    assert lib.function_hit(chunk, GOLD_FUNCTIONS, strict=True)
    assert not lib.function_hit(other_file, GOLD_FUNCTIONS)


def test_aggregate_counts_errors_and_function_queries_apart() -> None:
    total = lib.Aggregate()
    total.add(lib.QueryScore(1.0, 1.0, 1.0, 0.5, 0.5))
    total.add(lib.QueryScore(0.0, 0.0, 0.0, None, None, error=True))
    data = total.to_dict()
    assert (data["n"], data["errors"], data["acc1"], data["func_n"], data["func_mrr10"]) == (2, 1, 0.5, 1, 0.5)


# -- BM25 over files ------------------------------------------------------------------------------


def test_code_tokens_split_identifiers() -> None:
    assert lib.code_tokens("parseHTTPHeader read_line x") == ["parsehttpheader", "parse", "http", "header", "read", "line"]


def test_bm25_ranks_the_file_with_the_rare_words_and_updates_in_place() -> None:
    docs = {"a/http.py": "def parse_header(line): return line.split(':')",
            "b/io.py": "def read_line(stream): return stream.readline()",
            "c/misc.py": "def helper(): pass\n" * 3}
    bm25 = lib.BM25Files(docs)
    assert bm25.search("crash in parseHeader on a bad line", 3)[0][0] == "a/http.py"
    assert bm25.search("nothing matches zzz", 3) == []
    bm25.put("b/io.py", "def parse_header_fast(): pass")
    bm25.remove("c/misc.py")
    rebuilt = lib.BM25Files({"a/http.py": docs["a/http.py"], "b/io.py": "def parse_header_fast(): pass"})
    assert bm25.search("parse header", 5) == rebuilt.search("parse header", 5)
    assert len(bm25) == 2


# -- the harness ------------------------------------------------------------------------------------


class _Unit:
    def __init__(self, file_path: str, identifier: str, line_start: int, line_end: int) -> None:
        self.file_path, self.identifier, self.line_start, self.line_end = file_path, identifier, line_start, line_end


class _File:
    def __init__(self, file_path: str, units: list[_Unit]) -> None:
        self.file_path, self.units = file_path, units


def test_ranked_flattens_unit_hits_and_files_with_units() -> None:
    answer = [_File("a.py", [_Unit("a.py", "a.f", 1, 3), _Unit("a.py", "a.g", 5, 9)]), _File("b.py", []),
              _Unit("c.py", "c.h", 2, 4)]
    assert run.ranked(answer) == [lib.RankedUnit("a.py", "a.f", 1, 3), lib.RankedUnit("a.py", "a.g", 5, 9),
                                  lib.RankedUnit("b.py"), lib.RankedUnit("c.py", "c.h", 2, 4)]


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def test_materialize_writes_only_what_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "src"
    source.mkdir()
    _git(source, "init", "-q")
    (source / "keep.py").write_text("x = 1\n")
    (source / "edit.py").write_text("y = 1\n")
    (source / "gone.py").write_text("z = 1\n")
    _git(source, "add", "-A")
    _git(source, "commit", "-qm", "one")
    first = _git(source, "rev-parse", "HEAD")
    (source / "edit.py").write_text("y = 2\n")
    (source / "gone.py").unlink()
    (source / "pkg").mkdir()
    (source / "pkg" / "new.py").write_text("w = 1\n")
    _git(source, "add", "-A")
    _git(source, "commit", "-qm", "two")
    second = _git(source, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    _git(tmp_path, "clone", "-q", "--bare", str(source), str(mirrors / "o+r" / "repo"))
    monkeypatch.setattr(run, "MIRRORS", mirrors)

    tree = tmp_path / "tree"
    state = run.TreeState()
    assert run.materialize("o/r", tree, state, first) == 3
    os.utime(tree / "keep.py", ns=(1, 1))
    assert run.materialize("o/r", tree, state, second) == 3  # edit, delete, add
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py")) == ["edit.py", "keep.py", "pkg/new.py"]
    assert (tree / "edit.py").read_text() == "y = 2\n"
    assert (tree / "keep.py").stat().st_mtime_ns == 1  # untouched: the incremental index skips it
    assert state.commit == second and state.missing == []

    # a directory that becomes a symlink, and back
    (source / "pkg" / "new.py").unlink()
    (source / "pkg").rmdir()
    (source / "other").mkdir()
    (source / "other" / "x.py").write_text("v = 1\n")
    (source / "pkg").symlink_to("other")
    _git(source, "add", "-A")
    _git(source, "commit", "-qm", "three")
    third = _git(source, "rev-parse", "HEAD")
    _git(tmp_path, "--git-dir", str(mirrors / "o+r" / "repo"), "fetch", "-q", str(source), "HEAD:refs/heads/main")
    run.materialize("o/r", tree, state, third)
    assert (tree / "pkg").is_symlink() and (tree / "pkg" / "x.py").read_text() == "v = 1\n"
    run.materialize("o/r", tree, state, second)
    assert not (tree / "pkg").is_symlink() and (tree / "pkg" / "new.py").read_text() == "w = 1\n"
    assert (tree / "other" / "x.py").exists() is False


# -- the committed dev set ------------------------------------------------------------------------

FIELDS = {"id", "repo", "fix_commit", "parent_commit", "commit_time", "language", "kind", "has_trace", "trace_kinds",
          "subject", "query", "gold_files", "gold_functions", "added_files", "names_gold_path", "names_gold_basename",
          "issue_refs"}


@pytest.fixture(scope="module")
def queries() -> list[dict[str, Any]]:
    payload = json.loads((BENCH / "queries.json").read_text(encoding="utf-8"))
    items: list[dict[str, Any]] = payload["queries"]
    return items


def test_the_dev_set_is_large_varied_and_a_third_traced(queries: list[dict[str, Any]]) -> None:
    assert len(queries) >= 300
    languages = Counter(q["language"] for q in queries)
    assert sum(1 for n in languages.values() if n >= 10) >= 8
    assert sum(q["has_trace"] for q in queries) * 3 >= len(queries)


def test_every_query_is_well_formed(queries: list[dict[str, Any]]) -> None:
    ids = [q["id"] for q in queries]
    assert len(set(ids)) == len(ids)
    for q in queries:
        assert set(q) == FIELDS, q["id"]
        assert q["kind"] in ("commit-message", "issue-text")
        assert q["has_trace"] == bool(q["trace_kinds"]) == bool(lib.trace_kinds(q["query"])), q["id"]
        assert 1 <= len(q["gold_files"]) <= 10 and len(set(q["gold_files"])) == len(q["gold_files"])
        assert all(lib.is_library_path(p) for p in q["gold_files"]), q["id"]
        assert len(q["fix_commit"]) == len(q["parent_commit"]) == 40
        assert len(q["query"].encode()) <= 8192 and lib.word_count(q["query"]) >= 8
        for function in q["gold_functions"]:
            assert function["file"] in q["gold_files"] and 1 <= function["line_start"] <= function["line_end"]
        assert q["names_gold_path"] == lib.names_gold_path(q["query"], q["gold_files"]), q["id"]
