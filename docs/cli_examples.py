"""Regenerate the example output in docs/cli.md from real runs of `woods`.

Every `<!-- example: ARGS -->` line in docs/cli.md is followed by a ```text block holding
`$ woods ARGS` and what that command printed — stdout and stderr in the order a terminal shows
them, then `(exit N)` when it is not 0; every `<!-- diagram: ARGS -->` line by a ```mermaid block
holding what the command printed (a `--format mermaid` diagram, which GitHub draws). This script runs each example, in document order, inside a
fresh copy of fixtures/rails_app indexed with the test embedder (`WOODS_EMBEDDER=fake`: fast and
deterministic; its scores differ from the packaged model's), and rewrites the blocks. Values that
change from run to run — durations, rates, generation names, timestamps, the temporary path — are
replaced by fixed placeholders, so the output is the same on every machine.

    python docs/cli_examples.py           # rewrite docs/cli.md
    python docs/cli_examples.py --check   # exit 1 when docs/cli.md is not what the code prints

tests/test_docs.py runs the check, so docs/cli.md cannot drift from the code.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLI_MD = REPO / "docs" / "cli.md"
FIXTURE = REPO / "fixtures" / "rails_app"
# Files the examples use beside the repository (`woods evaluate ../rails_app_queries.json`).
EXAMPLES = REPO / "docs" / "examples"
# Where the examples say the repository is (the temporary copy's path is replaced by this).
SHOWN_ROOT = "~/src/rails_app"
MARKER = re.compile(r"^<!-- (?P<kind>example|diagram): (?P<args>.+?) -->$")
# Run-to-run values and what they are shown as.
VOLATILE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b\d{8}T\d{6}-[0-9a-f]{8}\b"), "20261201T120000-0a1b2c3d"),
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b"), "2026-12-01T12:00:00Z"),
    (re.compile(r"\b\d+(?:\.\d+)? ms\b"), "… ms"),
    (re.compile(r"\b\d+\.\d+s\b"), "…s"),
    (re.compile(r"\b\d+/s\b"), "…/s"),
)
# Commands of one example may take this long (a cold index of the fixture is ~2 s).
TIMEOUT_SECONDS = 120


def normalise(text: str, root: Path) -> str:
    """The output with the temporary path and every volatile value replaced (see VOLATILE)."""
    text = text.replace(str(root), SHOWN_ROOT)
    for pattern, shown in VOLATILE:
        text = pattern.sub(shown, text)
    return "\n".join(line.rstrip() for line in text.splitlines())


def runner(root: Path) -> Callable[[list[str]], str]:
    """Run `woods ARGS` in `root` as a user would at a terminal-less prompt, both streams in the
    order written (unbuffered), no colour."""

    def run(args: list[str]) -> str:
        env = dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", WOODS_EMBEDDER="fake",
                   PYTHONUNBUFFERED="1", COLUMNS="100", NO_COLOR="1")
        proc = subprocess.run([sys.executable, "-m", "woods", *args], cwd=root, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_SECONDS)
        shown = normalise(proc.stdout, root).rstrip("\n")
        if proc.returncode:
            shown += f"\n(exit {proc.returncode})"
        return shown

    return run


def render(markdown: str, run: Callable[[list[str]], str]) -> str:
    """`markdown` with the block after every example marker replaced by that example's output."""
    lines = markdown.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        out.append(line)
        index += 1
        marker = MARKER.match(line)
        if marker is None:
            continue
        args = shlex.split(marker.group("args"))
        if index < len(lines) and lines[index].startswith("```"):  # drop the old block
            index += 1
            while index < len(lines) and not lines[index].startswith("```"):
                index += 1
            index += 1
        if marker.group("kind") == "diagram":
            out.extend(["```mermaid", run(args), "```"])
        else:
            out.extend(["```text", f"$ woods {marker.group('args')}", run(args), "```"])
    return "\n".join(out)


def regenerate(markdown: str) -> str:
    """Run every example of `markdown` in a fresh copy of the fixture and return the new text."""
    with tempfile.TemporaryDirectory(prefix="woods-cli-examples-") as scratch:
        root = Path(scratch) / "rails_app"
        shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns(".woods"))
        for example in sorted(EXAMPLES.glob("*.json")):  # query sets, beside the repository
            shutil.copy(example, root.parent / example.name)
        return render(markdown, runner(root))


def main() -> int:
    parser = argparse.ArgumentParser(description="Regenerate the example output in docs/cli.md.")
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md differs")
    args = parser.parse_args()
    current = CLI_MD.read_text(encoding="utf-8")
    fresh = regenerate(current)
    if args.check:
        if fresh != current:
            import difflib

            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), fresh.splitlines(True),
                                                       "docs/cli.md", "regenerated"))
            return 1
        return 0
    CLI_MD.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
