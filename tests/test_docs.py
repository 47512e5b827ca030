"""Keep the user documentation honest: it must name what the code has, and only that.

- docs/cli.md documents every command of `woods.cli.app` in its own `## woods <command>` section,
  with every option's long names; its option tables list no option the command lacks.
- Every relative link in docs/*.md and README.md points to an existing file, and a `#fragment`
  to an existing heading of that file.
- Every `woods …` line of a bash block in the docs this suite owns uses a real command and only
  that command's options.
- docs/README.md indexes every document in docs/; the on-disk layout in docs/architecture.md
  names the files and SQLite tables the store actually writes.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer.main

from woods import cli
from woods.errors import CorruptIndexError, IndexingError, IndexNotFoundError, InputError, LockTimeoutError
from woods.store import index as layout
from woods.store import metadata

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
CLI_MD = DOCS / "cli.md"
# Docs whose bash blocks this suite checks (docs/api.md and docs/mcp.md have their own tests).
CHECKED_COMMAND_DOCS = ("getting-started.md", "cli.md", "architecture.md", "parity.md")

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```(\w*)\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TABLE_OPTION = re.compile(r"^\|\s*`(--[a-z][a-z0-9-]*)")


# -- helpers --------------------------------------------------------------------------------------


def cli_commands() -> dict[str, dict[str, list[str]]]:
    """command name → {param name: its long option names}, introspected from the typer app."""
    group = typer.main.get_command(cli.app)
    commands: dict[str, dict[str, list[str]]] = {}
    for name, command in group.commands.items():
        options: dict[str, list[str]] = {}
        for param in command.params:
            names = [*param.opts, *getattr(param, "secondary_opts", [])]
            longs = [n for n in names if n.startswith("--")]
            if longs:
                options[param.name] = longs
        commands[name] = options
    return commands


def all_long_options(command: str) -> set[str]:
    return {opt for opts in cli_commands()[command].values() for opt in opts} | {"--help"}


def outside_fences(text: str) -> list[str]:
    """The lines of a Markdown document that are not inside a fenced code block."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def sections(text: str) -> dict[str, str]:
    """`## heading` → the text up to the next `##`-or-higher heading (fences respected)."""
    found: dict[str, str] = {}
    current: str | None = None
    body: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading and len(heading.group(1)) <= 2:
            if current is not None:
                found[current] = "\n".join(body)
            current, body = heading.group(2), []
            continue
        body.append(line)
    if current is not None:
        found[current] = "\n".join(body)
    return found


def code_blocks(text: str, languages: tuple[str, ...]) -> list[str]:
    blocks, current, language = [], None, ""
    for line in text.splitlines():
        fence = _FENCE.match(line)
        if fence and current is None:
            current, language = [], fence.group(1)
        elif fence:
            if language in languages:
                blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, markup and punctuation dropped, spaces → '-'."""
    text = re.sub(r"[`*_\[\]]|\]\([^)]*\)", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for line in outside_fences(path.read_text(encoding="utf-8")):
        heading = _HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            anchor, n = base, 1
            while anchor in found:  # GitHub numbers repeated headings: x, x-1, x-2 …
                anchor, n = f"{base}-{n}", n + 1
            found.add(anchor)
    return found


def markdown_files() -> list[Path]:
    return [*sorted(DOCS.glob("*.md")), REPO / "README.md"]


def woods_invocations(path: Path) -> list[list[str]]:
    """Argument lists of every line starting with `woods ` in the file's bash/sh blocks."""
    calls = []
    for block in code_blocks(path.read_text(encoding="utf-8"), ("bash", "sh", "shell")):
        for line in block.splitlines():
            stripped = line.strip()
            if stripped.startswith("woods "):
                calls.append(shlex.split(stripped, comments=True)[1:])
    return calls


# -- the helpers themselves ------------------------------------------------------------------------


def test_slug_follows_github_rules() -> None:
    assert slug("woods search") == "woods-search"
    assert slug("Publishing, locking and cleanup") == "publishing-locking-and-cleanup"
    assert slug("Beyond the gem, on purpose") == "beyond-the-gem-on-purpose"
    assert slug("Output streams and `--json`") == "output-streams-and---json"


def test_sections_ignore_headings_inside_fences() -> None:
    text = "## a\nx\n```bash\n## not a heading\n```\n## b\ny\n"
    assert sections(text) == {"a": "x\n```bash\n## not a heading\n```", "b": "y"}


def test_introspection_sees_the_commands_and_their_options() -> None:
    commands = cli_commands()
    assert {
        "index",
        "search",
        "status",
        "resolve",
        "lookup",
        "deps",
        "dependents",
        "structure",
        "mcp",
        "evaluate",
    } <= set(commands)
    assert commands["lookup"]["include_source"] == ["--source", "--no-source"]
    assert "--json" not in all_long_options("mcp")


# -- docs/cli.md -----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(cli_commands()))
def test_cli_md_documents_every_command_and_option(command: str) -> None:
    documented = sections(CLI_MD.read_text(encoding="utf-8"))
    heading = f"woods {command}"
    assert heading in documented, f"docs/cli.md has no '## {heading}' section"
    body = documented[heading]
    missing = sorted(
        opt
        for opts in cli_commands()[command].values()
        for opt in opts
        if not re.search(re.escape(opt) + r"(?![a-z0-9-])", body)
    )
    assert not missing, f"docs/cli.md '## {heading}' does not mention {missing}"


@pytest.mark.parametrize("command", sorted(cli_commands()))
def test_cli_md_option_tables_list_only_real_options(command: str) -> None:
    body = sections(CLI_MD.read_text(encoding="utf-8"))[f"woods {command}"]
    listed = {m.group(1) for line in body.splitlines() if (m := _TABLE_OPTION.match(line))}
    assert listed, f"'## woods {command}' has no option table"
    unknown = listed - all_long_options(command)
    assert not unknown, f"docs/cli.md lists options that `woods {command}` does not have: {sorted(unknown)}"


def test_cli_md_states_the_exit_codes_of_the_errors() -> None:
    table = sections(CLI_MD.read_text(encoding="utf-8"))["Conventions"]
    codes = {int(m.group(1)) for m in re.finditer(r"^\| (\d+) \|", table, re.MULTILINE)}
    assert codes == {0, 1, 2, 3, 130}
    assert {
        InputError.exit_code,
        IndexNotFoundError.exit_code,
        CorruptIndexError.exit_code,
        LockTimeoutError.exit_code,
    } == {2}
    assert IndexingError.exit_code == 1


def test_cli_md_json_examples_carry_the_current_schema_version() -> None:
    """Top-level `schema_version` is the JSON output's; the one nested in a manifest is the index's."""
    text = CLI_MD.read_text(encoding="utf-8")
    output = {int(v) for v in re.findall(r'^(?:\{| {2})"schema_version": (\d+)', text, re.MULTILINE)}
    index = {int(v) for v in re.findall(r'^ {4}"schema_version": (\d+)', text, re.MULTILINE)}
    assert output == {cli.JSON_SCHEMA_VERSION}
    assert index == {layout.SCHEMA_VERSION}


# -- links -------------------------------------------------------------------------------------------


def relative_links() -> list[tuple[Path, str]]:
    links = []
    for path in markdown_files():
        for line in outside_fences(path.read_text(encoding="utf-8")):
            for target in _LINK.findall(line):
                if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # skip https:, mailto: …
                    links.append((path, target))
    return links


def test_docs_have_relative_links_to_check() -> None:
    assert len(relative_links()) >= 20


@pytest.mark.parametrize(
    ("source", "target"), relative_links(), ids=lambda v: v.name if isinstance(v, Path) else v
)
def test_relative_link_points_to_an_existing_file(source: Path, target: str) -> None:
    file_part, _, fragment = target.partition("#")
    destination = (source.parent / file_part).resolve() if file_part else source
    assert destination.exists(), f"{source.relative_to(REPO)} links to missing {target}"
    if fragment and destination.is_file() and destination.suffix == ".md":
        assert fragment in anchors(destination), (
            f"{source.relative_to(REPO)}: no heading for #{fragment} in {file_part or source.name}"
        )


# -- command lines in the docs -----------------------------------------------------------------------


def documented_invocations() -> list[tuple[str, list[str]]]:
    return [(name, args) for name in CHECKED_COMMAND_DOCS for args in woods_invocations(DOCS / name)]


def test_getting_started_shows_the_main_commands() -> None:
    used = {args[0] for args in woods_invocations(DOCS / "getting-started.md") if args}
    assert {"index", "search", "resolve", "status"} <= used


@pytest.mark.parametrize(
    ("doc", "args"), documented_invocations(), ids=lambda v: v if isinstance(v, str) else " ".join(v)
)
def test_documented_command_lines_use_real_commands_and_options(doc: str, args: list[str]) -> None:
    assert args, f"docs/{doc}: a bare `woods` line"
    command = args[0]
    assert command in cli_commands(), f"docs/{doc}: `woods {command}` is not a command"
    options = {a.split("=", 1)[0] for a in args[1:] if a.startswith("--")}
    unknown = options - all_long_options(command)
    assert not unknown, f"docs/{doc}: `woods {command}` has no option {sorted(unknown)}"


# -- index and layout ----------------------------------------------------------------------------------


def test_docs_index_lists_every_document() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = {target.partition("#")[0] for target in _LINK.findall(index)}
    expected = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert expected <= linked, f"docs/README.md does not link {sorted(expected - linked)}"


def test_architecture_names_the_store_files_and_tables() -> None:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    files = [
        layout.CURRENT_FILE,
        layout.GENERATIONS_DIR,
        layout.METADATA_FILE,
        layout.VECTORS_FILE,
        layout.MANIFEST_FILE,
        layout.LOCK_FILE,
        layout.BUILD_PREFIX,
        layout.STORE_DIRNAME,
    ]
    assert [f for f in files if f not in text] == []
    tables = re.findall(r"CREATE (?:VIRTUAL )?TABLE IF NOT EXISTS (\w+)", metadata._SCHEMA)
    assert len(tables) >= 7
    assert [t for t in tables if f"`{t}`" not in text] == []


# -- real output in docs/cli.md ------------------------------------------------------------------------


def _cli_examples():  # docs/cli_examples.py is a script beside the page it regenerates, not a package
    import importlib.util

    spec = importlib.util.spec_from_file_location("cli_examples", DOCS / "cli_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_md_shows_real_output_of_every_command() -> None:
    """Every example block is what the command prints today (`python docs/cli_examples.py`
    regenerates them); every command but the MCP server (a stdio protocol) has one."""
    examples = _cli_examples()
    current = CLI_MD.read_text(encoding="utf-8")
    shown = {m.group("args").split()[0] for line in current.splitlines() if (m := examples.MARKER.match(line))}
    assert set(cli_commands()) - {"mcp"} <= shown
    fresh = examples.regenerate(current)
    assert fresh == current, "docs/cli.md is stale: run `python docs/cli_examples.py`"


def test_example_rendering_replaces_only_the_marked_blocks() -> None:
    examples = _cli_examples()
    text = "intro\n<!-- example: status --lang py -->\n```text\nold\n```\nafter\n<!-- diagram: structure -->\n```mermaid\n```\n"
    seen: list[list[str]] = []

    def run(args: list[str]) -> str:
        seen.append(args)
        return "OUT " + " ".join(args)

    rendered = examples.render(text, run)
    assert seen == [["status", "--lang", "py"], ["structure"]]
    assert rendered == (
        "intro\n<!-- example: status --lang py -->\n```text\n$ woods status --lang py\nOUT status --lang py\n```\n"
        "after\n<!-- diagram: structure -->\n```mermaid\nOUT structure\n```\n"
    )
    assert examples.normalise("built 2026-11-30T01:30:17Z in 0.3s (12.5 ms, 273/s) at /tmp/x/rails_app",
                              Path("/tmp/x/rails_app")) == (
        "built 2026-12-01T12:00:00Z in …s (… ms, …/s) at ~/src/rails_app")
