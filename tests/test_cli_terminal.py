"""Colour in a real terminal: `woods search` under a pseudo-terminal (pexpect) colours paths, line
numbers and the query's words as rg does; `NO_COLOR=1`, `--color never` and a pipe get plain text;
`--color always` colours a pipe. Issue 33's acceptance test for the human output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.helpers import REPO, copy_fixture, index_with_fake

ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
MATCH = "\x1b[1;31m"  # bold red: the query's words
PATH = "\x1b[35m"  # magenta: paths
LINE = "\x1b[32m"  # green: line numbers
QUERY = ("search", "charge invoice", "--limit", "2")


@pytest.fixture(scope="module")
def rails(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_fixture("rails_app", tmp_path_factory.mktemp("tty"))
    index_with_fake(root)
    return root


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update({"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TERM": "xterm-256color", **extra})
    return env


def in_terminal(root: Path, *args: str, **env: str) -> tuple[int, str]:
    """Run `woods ARGS` with a pseudo-terminal as its stdin, stdout and stderr."""
    child = pexpect.spawn(sys.executable, ["-m", "woods", *args], cwd=str(root), env=_environment(**env),
                          encoding="utf-8", timeout=120, dimensions=(50, 200))
    output = child.read()  # until the command exits
    child.close()
    assert child.exitstatus is not None, "woods did not exit"
    return child.exitstatus, output


def test_a_terminal_gets_colour(rails):
    code, output = in_terminal(rails, *QUERY)
    assert code == 0
    assert PATH in output and LINE in output and MATCH in output
    highlighted = {m.lower() for m in re.findall(re.escape(MATCH) + r"(.*?)\x1b\[0m", output)}
    assert highlighted <= {"charge", "invoice"} and highlighted
    plain = ESCAPE.sub("", output)
    assert re.search(r"^app/\S+\.rb:\d+  ", plain, re.MULTILINE)


@pytest.mark.parametrize(("args", "env"), [((), {"NO_COLOR": "1"}), (("--color", "never"), {}), ((), {"TERM": "dumb"})])
def test_no_color_and_never_turn_it_off_on_a_terminal(rails, args, env):
    code, output = in_terminal(rails, *QUERY, *args, **env)
    assert code == 0 and not ESCAPE.search(output)
    assert re.search(r"^app/\S+\.rb:\d+  ", output.replace("\r\n", "\n"), re.MULTILINE)


def test_a_pipe_gets_plain_text_unless_always(rails):
    def piped(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "woods", *QUERY, *args], cwd=rails, env=_environment(),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    plain = piped()
    assert not ESCAPE.search(plain)
    coloured = piped("--color", "always")
    assert MATCH in coloured and ESCAPE.sub("", coloured) == plain
