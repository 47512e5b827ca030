"""Issue 33, through the command line: woods should feel like rg with understanding.

One test (or a few) per bullet of the issue, each running the real entry point in a subprocess
and checking its exit code: `--version`; the index found by walking up; rg-style output with
snippets, `--context` bounded by `--limit` and `--budget`; `--glob` / `--lang` on search and
status; honest answers for names (closest names, did you mean, overload stubs, session memory);
`.woods/.gitignore` and an index of nothing; diagrams; `--help` examples and shell completion;
lookup's dedented body, `--type` typos, the context banner; `--json` additions only. Colour under a
real terminal is tests/test_cli_terminal.py; the regenerated docs/cli.md is tests/test_docs.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, copy_fixture, index_with_fake, run_cli, write_files
from woods.version import __version__

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def rails(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Rails fixture as a git repository (a `.git` directory marks its root), indexed."""
    root = copy_fixture("rails_app", tmp_path_factory.mktemp("ux"))
    (root / ".git").mkdir()
    index_with_fake(root, "--json")
    return root


# Flask's shape: `@t.overload` stubs before the implementation, which holds a nested function.
HELPERS = '''import typing as t


@t.overload
def stream_with_context(generator: t.Iterator[str]) -> t.Iterator[str]: ...


@t.overload
def stream_with_context(generator: t.Callable[..., t.Iterator[str]]) -> t.Callable[..., t.Iterator[str]]: ...


def stream_with_context(generator):
    """Keep the request context while the response streams."""
    try:
        gen = iter(generator)
    except TypeError:

        def decorator(*args, **kwargs):
            return stream_with_context(generator(*args, **kwargs))

        return decorator
    return gen


def make_response(*args):
    """Turn a view's return value into a response."""
    return args


class Blueprint:
    """A set of routes registered on an app later."""

    def __init__(self, name):
        self.name = name


class Flask:
    def register_blueprint(self, blueprint):
        """Register a Blueprint on the application."""
        return blueprint

    def make_default_options_response(self):
        return make_response()
'''
SANSIO = '''class Blueprint:
    """The sans-IO base of a blueprint."""

    def register_blueprint(self, blueprint):
        return blueprint


class Scaffold:
    def register_blueprint_hook(self):
        return None
'''


@pytest.fixture(scope="module")
def flaskish(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_files(tmp_path_factory.mktemp("ux") / "flaskish", {
        "src/flask/__init__.py": "",
        "src/flask/helpers.py": HELPERS,
        "src/flask/sansio/__init__.py": "",
        "src/flask/sansio/blueprints.py": SANSIO,
        "README.md": "# flaskish\n\nA tiny web framework for tests.\n",
    })
    index_with_fake(root, "--json")
    return root


def _json(result: Any) -> dict[str, Any]:
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 1 and isinstance(payload["warnings"], list)
    return payload


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


# -- --version ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["version"]])
def test_version_three_ways(args):
    result = run_cli(*args, expect=0)
    assert result.stdout == f"woods {__version__}\n" and result.stderr == ""


def test_version_json():
    assert _json(run_cli("version", "--json", expect=0))["version"] == __version__


# -- the index found by walking up ---------------------------------------------------------------------


def test_search_from_a_subdirectory_reads_the_repository_index(rails):
    below = rails / "app" / "models" / "billing"
    result = run_cli("search", "invoice charge", "--json", cwd=below, expect=0)
    assert _json(result)["results"]
    status = run_cli("status", "--json", "--path", str(below), expect=0).json()
    assert status["store"] == str(rails / ".woods")
    # The repository is the directory holding the index, not the subdirectory the command ran in:
    # no "built from … read at …" warning, and every indexed file is found where it was.
    assert status["warnings"] == [] and status["root"] == str(rails)
    assert not (below / ".woods").exists()  # nothing was written where the command ran


def test_the_walk_stops_at_the_repository_root(tmp_path):
    outer = write_files(tmp_path / "outer", {"a.py": "def a():\n    return 1\n"})
    index_with_fake(outer)
    inner = write_files(outer / "vendor" / "lib", {"b.py": "def b():\n    return 2\n"})
    (inner / ".git").mkdir()  # another repository inside: the outer index is not its index
    result = run_cli("search", "b", cwd=inner / ".", expect=2)
    line = _one_line(result.stderr)
    assert f"no woods index in {inner}" in line and "woods index ." in line
    deeper = inner / "pkg"
    deeper.mkdir()
    line = _one_line(run_cli("status", cwd=deeper, expect=2).stderr)
    assert f"up to the repository root {inner}" in line and f"run `woods index {inner}` first" in line


def test_a_file_as_path_is_a_clear_error(rails):
    for command in (["search", "x"], ["status"], ["resolve", "x"], ["structure"]):
        result = run_cli(*command, "--path", str(rails / "Gemfile"), expect=2)
        line = _one_line(result.stderr)
        assert "--path takes the repository directory, not a file" in line and "--glob" in line


# -- rg-style human output, --context bounded by --limit and --budget -------------------------------


def test_human_output_is_path_line_then_the_matching_lines(rails):
    result = run_cli("search", "charge invoice", "--limit", "3", cwd=rails, expect=0)
    assert not ANSI.search(result.stdout + result.stderr)  # a pipe gets no colour
    blocks = result.stdout.strip("\n").split("\n\n")
    assert len(blocks) == 3
    for block in blocks:
        header, *lines = block.splitlines()
        path, line = re.match(r"^(\S+):(\d+)  ", header).groups()
        assert (rails / path).is_file() and 1 <= len(lines) <= 3
        numbers = [int(re.match(r"^\s*(\d+): ", text).group(1)) for text in lines]
        assert numbers == sorted(numbers) and int(line) in numbers
        shown = {n: text.split(": ", 1)[1].strip() for n, text in zip(numbers, lines, strict=True)}
        file_lines = (rails / path).read_text().splitlines()
        for number, text in shown.items():  # the lines are the file's own lines
            assert file_lines[number - 1].strip() == text
        assert any(word in " ".join(shown.values()).lower() for word in ("charge", "invoice"))
    assert result.stderr.strip().splitlines()[-1].startswith("strategy ")


def test_json_results_carry_the_same_snippets(rails):
    payload = _json(run_cli("search", "charge invoice", "--limit", "3", "--json", cwd=rails, expect=0))
    for row in payload["results"]:
        assert 1 <= len(row["snippet"]) <= 3
        for line in row["snippet"]:
            assert row["line_start"] <= line["line"] <= row["line_end"]
            for start, end in line["matches"]:
                assert line["text"][start:end].lower() in {"charge", "invoice"}


def test_context_holds_only_the_results_listed_and_fits_the_budget(rails):
    payload = _json(run_cli("search", "charge invoice", "--limit", "2", "--context", "--json", cwd=rails, expect=0))
    listed = [r["identifier"] for r in payload["results"]]
    assert len(listed) == 2
    assert [s["identifier"] for s in payload["sources"]] and {s["identifier"] for s in payload["sources"]} <= set(listed)
    assert payload["context"].count("\n## ") <= 2
    small = _json(run_cli("search", "charge invoice", "--limit", "5", "--budget", "300", "--context", "--json",
                          cwd=rails, expect=0))
    assert small["tokens_used"] <= 300 and len(small["context"]) <= 300 * 4
    text = run_cli("search", "charge invoice", "--limit", "2", "--context", cwd=rails, expect=0).stdout
    assert text.count("\n## ") <= 2 and "Codebase:" in text


# -- filters: --glob and --lang on search and status ---------------------------------------------------


def test_glob_selects_files_gitignore_style(rails):
    payload = _json(run_cli("search", "invoice", "--glob", "app/**/*.rb", "--glob", "!app/models/", "--limit", "20",
                            "--json", cwd=rails, expect=0))
    paths = [r["file_path"] for r in payload["results"]]
    assert paths and all(p.startswith("app/") and p.endswith(".rb") and not p.startswith("app/models/") for p in paths)
    assert payload["applied_scope"]["globs"] == ["app/**/*.rb", "!app/models/"]
    nothing = _json(run_cli("search", "invoice", "--glob", "src/**/*.py", "--json", cwd=rails, expect=0))
    assert nothing["results"] == [] and nothing["applied_scope"]["outcome"] == "empty_scope"


@pytest.mark.parametrize(("lang", "suffix"), [("erb", ".erb"), ("rb", ".rb"), ("ruby", ".rb")])
def test_lang_takes_names_and_extensions(rails, lang, suffix):
    payload = _json(run_cli("search", "user", "-t", lang, "--limit", "20", "--json", cwd=rails, expect=0))
    assert payload["results"] and all(r["file_path"].endswith(suffix) for r in payload["results"])


def test_an_unknown_language_lists_the_languages(rails):
    line = _one_line(run_cli("search", "user", "--lang", "klingon", cwd=rails, expect=2).stderr)
    assert "unknown language 'klingon'" in line and "python" in line and "ruby" in line


def test_status_narrows_to_the_filtered_files(rails):
    payload = _json(run_cli("status", "--lang", "erb", "--json", cwd=rails, expect=0))
    assert payload["filter"] == {"globs": [], "langs": ["erb"], "files": 9, "units": 9}
    assert payload["files_by_language"] == {"erb": 9} and payload["units_by_type"] == {"view_template": 9}
    text = run_cli("status", "-g", "app/views/**", cwd=rails, expect=0).stdout
    assert "filter --glob app/views/**: files 9, units 9" in text


# -- honest answers for names ------------------------------------------------------------------------


def test_a_name_no_unit_has_is_said_first_with_the_closest_names(rails):
    made_up = _json(run_cli("search", "zorblaxQuuxHandler", "--mode", "lexical", "--json", cwd=rails, expect=0))
    assert made_up["warnings"][0].startswith("no unit named 'zorblaxQuuxHandler'")
    typo = run_cli("search", "ChargCustomer", "--limit", "2", cwd=rails, expect=0)
    assert typo.stderr.splitlines()[0] == "woods: warning: no unit named 'ChargCustomer'; closest: ChargeCustomer"
    exists = _json(run_cli("search", "ChargeCustomer", "--json", cwd=rails, expect=0))
    assert not any(w.startswith("no unit named") for w in exists["warnings"])


def test_resolve_offers_did_you_mean(flaskish):
    result = run_cli("resolve", "make_reponse", cwd=flaskish, expect=3)
    assert result.stdout.splitlines()[0].startswith("did you mean: flask.helpers.make_response (function)")
    payload = _json(run_cli("resolve", "make_reponse", "--json", cwd=flaskish, expect=3))
    assert [s["identifier"] for s in payload["suggestions"]] == ["flask.helpers.make_response"]
    assert any(w.startswith("did_you_mean: make_response?") for w in payload["warnings"])
    assert "suggestions" not in _json(run_cli("resolve", "make_response", "--json", cwd=flaskish, expect=0))


@pytest.mark.parametrize("ref", ["flask.helpers.stream_with_context", "stream_with_context"])
def test_overload_stubs_resolve_to_the_implementation(flaskish, ref):
    payload = _json(run_cli("resolve", ref, "--json", cwd=flaskish, expect=0))
    assert (payload["identifier"], payload["line_start"]) == ("flask.helpers.stream_with_context", 12)
    lookup = _json(run_cli("lookup", "flask.helpers.stream_with_context", "--json", cwd=flaskish, expect=0))
    assert "Keep the request context" in lookup["units"][0]["source_code"]


def test_mcp_session_memory_never_hides_an_exact_definition(flaskish):
    """After a search showed `register_blueprint` methods, `resolve Blueprint` still answers with the
    two Blueprint classes, as a fresh session does (through `woods mcp` over stdio); after one that
    showed a Blueprint class, that class is the answer and the other one is still listed."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "woods", "mcp", "--path", str(flaskish)],
                                   env={"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}, cwd=str(REPO))

    async def ask(search: dict[str, Any] | None) -> tuple[list[str], dict[str, Any]]:
        with anyio.fail_after(180):
            async with Client(params, read_timeout_seconds=60) as client:
                shown: list[str] = []
                if search is not None:
                    found = await client.call_tool("search", search)
                    shown = [r["identifier"] for r in found.structured_content["results"]]
                result = await client.call_tool("resolve", {"ref": "Blueprint"})
                return shown, dict(result.structured_content)

    _none, fresh = anyio.run(ask, None)
    classes = ["flask.helpers.Blueprint", "flask.sansio.blueprints.Blueprint"]
    assert (fresh["status"], [c["identifier"] for c in fresh["candidates"]]) == ("ambiguous", classes)
    methods, after = anyio.run(ask, {"query": "register_blueprint", "types": ["method"], "limit": 3})
    assert sum("register_blueprint" in m for m in methods) >= 2 and not set(classes) & set(methods)
    assert after == fresh
    seen, chosen = anyio.run(ask, {"query": "sans-IO base of a blueprint", "types": ["class"], "limit": 1})
    assert seen == ["flask.sansio.blueprints.Blueprint"]
    assert (chosen["status"], chosen["method"], chosen["identifier"]) == ("resolved", "recent", seen[0])
    assert [a["identifier"] for a in chosen["alternatives"]] == ["flask.helpers.Blueprint"]


# -- .woods/.gitignore and an index of nothing ----------------------------------------------------------


def test_the_index_is_ignored_by_git(tmp_path):
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    root = write_files(tmp_path / "repo", {"app.py": "def main():\n    return 0\n"})
    subprocess.run([git, "init", "-q", str(root)], check=True)
    index_with_fake(root)
    assert (root / ".woods" / ".gitignore").read_text().splitlines()[-1] == "*"
    status = subprocess.run([git, "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert status.splitlines() == ["?? app.py"]


def test_an_index_of_nothing_says_why(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = index_with_fake(empty, expect=0)
    assert f"woods: warning: indexed nothing: {empty} holds no files" in result.stderr.splitlines()
    binaries = write_files(tmp_path / "data", {"notes.xyz": "not code\n"})
    (binaries / "blob.bin").write_bytes(b"\x00\x01" * 10)
    payload = _json(index_with_fake(binaries, "--json", expect=0))
    assert payload["summary"]["files"] == 0 and payload["summary"]["skipped"] == {"binary": 1, "unsupported": 1}
    assert payload["warnings"][-1].startswith(
        "indexed nothing: no source or document file woods reads under") and "(binary 1, unsupported 1)" in payload["warnings"][-1]
    code = write_files(tmp_path / "code", {"a.py": "def a():\n    return 1\n"})
    index_with_fake(code)
    again = _json(index_with_fake(code, "--json", expect=0))  # `.woods` now exists: still not counted
    assert again["summary"]["files"] == 1 and "ignored_dir" not in again["summary"]["skipped"]


# -- pictures -----------------------------------------------------------------------------------------


def test_structure_draws_the_most_central_packages(rails):
    mermaid = run_cli("structure", "--format", "mermaid", "--top", "6", cwd=rails, expect=0).stdout
    lines = mermaid.splitlines()
    assert lines[0] == "flowchart LR"
    nodes = [line for line in lines if re.match(r"^  n\d+\[", line)]
    assert len(nodes) == 6 and nodes[0] == '  n1["app/models"]'
    edges = [line for line in lines if "-->" in line]
    assert edges and len(edges) <= 12
    for edge in edges:
        source, target = (int(n) for n in re.findall(r"n(\d+)", edge))
        assert 1 <= source <= 6 and 1 <= target <= 6
    dot = run_cli("structure", "--format", "dot", "--top", "6", cwd=rails, expect=0).stdout
    assert dot.startswith("digraph woods {") and dot.rstrip().endswith("}") and dot.count(" -> ") == len(edges)


def test_deps_and_dependents_draw_the_neighbourhood(rails):
    mermaid = run_cli("deps", "Billing::Invoice", "--format", "mermaid", cwd=rails, expect=0).stdout
    assert mermaid.splitlines()[2] == '  n1["Billing::Invoice"]'
    assert "  n1 -->|superclass| n" in mermaid and mermaid.count("-->") == 5
    dot = run_cli("dependents", "ApplicationRecord", "--format", "dot", cwd=rails, expect=0).stdout
    assert 'n1 [label="ApplicationRecord"]' in dot and "-> n1 [label=\"superclass\"]" in dot
    line = _one_line(run_cli("deps", "Billing::Invoice", "--format", "dot", "--json", cwd=rails, expect=2).stderr)
    assert "--format dot draws a diagram" in line


# -- --help examples and shell completion ----------------------------------------------------------------

COMMANDS = ("index", "search", "status", "resolve", "lookup", "deps", "dependents", "structure", "mcp", "evaluate",
            "version", "completion")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_two_or_three_examples(command):
    text = run_cli(command, "--help", expect=0).stdout
    examples = text.split("Examples:", 1)[1].split("\n\n", 1)[0].strip().splitlines()
    assert 2 <= len(examples) <= 3 and all("woods " in line for line in examples), text


def test_completion_scripts_name_the_completion_variable():
    for shell in ("bash", "zsh", "fish"):
        script = run_cli("completion", shell, expect=0).stdout
        assert "_WOODS_COMPLETE=complete_" + shell in script and "woods" in script
    assert run_cli("completion", "tcsh").code == 2


@pytest.mark.parametrize(("shell", "env"), [
    ("bash", {"COMP_WORDS": "woods sea", "COMP_CWORD": "1"}),
    ("zsh", {"_TYPER_COMPLETE_ARGS": "woods sea"}),
    ("fish", {"_TYPER_COMPLETE_ARGS": "woods sea", "_TYPER_COMPLETE_FISH_ACTION": "get-args"}),
])
def test_completion_answers_offline_for_each_shell(shell, env):
    result = run_cli(env={"_WOODS_COMPLETE": f"complete_{shell}", **env}, expect=0)
    assert "search" in result.stdout
    options = run_cli(env={"_WOODS_COMPLETE": "complete_bash", "COMP_WORDS": "woods search x --col", "COMP_CWORD": "3"},
                      expect=0)
    assert options.stdout.split() == ["--color"]
    languages = run_cli(env={"_WOODS_COMPLETE": "complete_bash", "COMP_WORDS": "woods search x --lang py",
                             "COMP_CWORD": "4"}, expect=0)
    assert languages.stdout.split() == ["python"]


def test_bash_completes_woods_with_the_printed_script(tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    shim = tmp_path / "bin" / "woods"  # `woods` on PATH, as an install puts it
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m woods \"$@\"\n")
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    script = ('eval "$(woods completion bash)"; COMP_WORDS=(woods dep); COMP_CWORD=1; '
              '_woods_completion woods; printf "%s\\n" "${COMPREPLY[@]}"')
    env = dict(os.environ, PATH=f"{shim.parent}:{os.environ['PATH']}", PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1")
    proc = subprocess.run([bash, "--norc", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == ["dependents", "deps"]


# -- lookup, --type, the context banner ----------------------------------------------------------------


def test_lookup_dedents_the_whole_body(rails, flaskish):
    text = run_cli("lookup", "Billing::Invoice#charge", cwd=rails, expect=0).stdout
    body = text.split("\n\n", 1)[1].strip("\n").splitlines()
    assert body[0] == 'def charge(amount, currency: "EUR")'
    assert body[1].startswith("  payment = ") and body[-1] == "end"
    method = run_cli("lookup", "flask.helpers.Flask.register_blueprint", cwd=flaskish, expect=0).stdout
    lines = method.split("\n\n", 1)[1].strip("\n").splitlines()
    assert lines == ["def register_blueprint(self, blueprint):", '    """Register a Blueprint on the application."""',
                     "    return blueprint"]


def test_an_unknown_type_lists_the_valid_ones(rails):
    for command in (["search", "invoice"], ["lookup", "User"], ["resolve", "User"], ["deps", "User"]):
        line = _one_line(run_cli(*command, "--type", "klass", cwd=rails, expect=2).stderr)
        assert "unknown unit type 'klass'; did you mean class?" in line and "model" in line and "view_template" in line


def test_the_context_banner_has_no_empty_parentheses(flaskish):
    text = run_cli("search", "make a response", "--context", cwd=flaskish, expect=0).stdout
    banner = next(line for line in text.splitlines() if line.startswith("Codebase:"))
    assert re.match(r"^Codebase: \d+ searchable entries\. Entries include", banner) and "()" not in banner


# -- --json stays schema 1: new fields only ----------------------------------------------------------

# The keys schema-1 readers know (docs/cli.md before issue 33): every one must still be there.
SCHEMA_1_KEYS = {
    "search": {"schema_version", "query", "mode", "strategy", "budget", "tokens_used", "sources", "results",
               "classification", "trace", "type_rank_context", "applied_scope", "warnings"},
    "search.results": {"identifier", "key", "chunk", "type", "file_path", "line_start", "line_end", "score", "source",
                       "sources"},
    "resolve": {"schema_version", "status", "method", "candidates", "warnings"},
    "status": {"schema_version", "store", "generation", "root", "created_at", "embedder", "counts", "units_by_type",
               "files_by_language", "skipped", "manifest", "fresh", "vectors", "changes", "warnings"},
}


def test_json_output_only_adds_fields(rails):
    search = _json(run_cli("search", "charge invoice", "--path-prefix", "app", "--json", cwd=rails, expect=0))
    assert SCHEMA_1_KEYS["search"] <= set(search)
    assert all(SCHEMA_1_KEYS["search.results"] <= set(row) for row in search["results"])
    assert set(search["applied_scope"]) == {"packages", "source_paths", "eligible_units", "outcome", "candidate_count",
                                            "returned_units"}  # the filters' keys appear only when given
    resolve = _json(run_cli("resolve", "ChargCustomer", "--json", cwd=rails, expect=3))
    assert SCHEMA_1_KEYS["resolve"] <= set(resolve)
    status = _json(run_cli("status", "--json", cwd=rails, expect=0))
    assert SCHEMA_1_KEYS["status"] <= set(status) and "filter" not in status
