"""Colour on a terminal, as rg and fd do it: on when stdout is a terminal, off in a pipe or a file,
off when `NO_COLOR` is set (https://no-color.org), and `--color never|auto|always` to decide.

Why plain ANSI escapes and not rich: rich costs tens of milliseconds to import, and a cold `woods
search` is measured in hundreds (bench/cli_latency_bench.py); five SGR codes need no library.
The command line renders with these; the library never does.

Guarantees: `use_color` is a pure function of its arguments; `paint` returns the text unchanged
when colour is off, so output without colour is byte-identical to what a pipe receives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO

COLOR_CHOICES = ("auto", "always", "never")
# rg's default palette: paths magenta, line numbers green, matches bold red.
STYLES: dict[str, str] = {
    "path": "35",
    "line": "32",
    "match": "1;31",
    "name": "1",
    "dim": "2",
    "warn": "33",
}
_RESET = "\x1b[0m"


def use_color(choice: str, stream: IO[str], environ: Mapping[str, str]) -> bool:
    """Whether to colour what goes to `stream`: `always`/`never` decide; `auto` colours a terminal
    unless `NO_COLOR` is set to anything non-empty or `TERM` is `dumb`."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if environ.get("NO_COLOR") or environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or exotic stream: no colour
        return False


def paint(text: str, style: str, enabled: bool) -> str:
    """`text` in `style` (a key of STYLES) when `enabled`."""
    return f"\x1b[{STYLES[style]}m{text}{_RESET}" if enabled and text else text


def highlight(text: str, spans: Sequence[tuple[int, int]], enabled: bool) -> str:
    """`text` with the character spans painted as matches."""
    if not enabled or not spans:
        return text
    out: list[str] = []
    position = 0
    for start, end in spans:
        out.append(text[position:start])
        out.append(paint(text[start:end], "match", True))
        position = end
    out.append(text[position:])
    return "".join(out)


__all__ = ["COLOR_CHOICES", "highlight", "paint", "use_color"]
