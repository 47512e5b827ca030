"""The Lua extractor reads `require("…")` calls and the names bound to them from its callee captures
(`_Extractor._requires`) instead of asking its query for them. What it reads must be exactly what
the query patterns it replaces capture: the same nodes, in the same order, each once."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import Node

from woods.extract import base, lua, scopes

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "lua_plugin"

# The patterns `_requires` stands for, as the query had them.
_QUERY_PATTERNS = """
(function_call name: (_) @callee)
((function_call name: (identifier) @require_name arguments: (arguments (string (string_content) @module))) @require
 (#eq? @require_name "require"))
(assignment_statement
  (variable_list . name: (identifier) @bound)
  (expression_list . value: (function_call name: (identifier) @bound_require
                                           arguments: (arguments (string (string_content) @bound_module))))
  (#eq? @bound_require "require"))
"""

SNIPPETS = [
    b'local utils = require("telescope.utils")\nlocal M = {}\nfunction M.f() local s = require "x.s" return s.g() end\nreturn M\n',
    b'local b, c = require("p", "q")\nlocal d = --[[c]] require("e")\nlocal --[[c]] e = require("f")\n',
    b'local a = require("x", "y", require("z"))\nlocal f = require(require("g"), "h")\nx, y = require("i"), require("j")\n',
    b'local a = (require("x"))\nlocal b = require"y".z\nlocal c = require("a" .. "b")\nlocal d = require()\nlocal\n e = require("\\n")\n',
    b'local a, b = require("x"), require("y")\nt.x = require("q")\nlocal a = -- c\n require("r")\nrequire[[long]]\n',
    b'local a = require("x"\nlocal b = require("y")) end\nlocal = require("z")\n',  # syntax errors
]


def _spans(nodes: list[Node]) -> list[tuple[int, int, str]]:
    return [(n.start_byte, n.end_byte, n.type) for n in nodes]


@pytest.mark.parametrize(
    "source", SNIPPETS + [p.read_bytes() for p in sorted(ROOT.rglob("*.lua"))], ids=lambda s: str(len(s))
)
def test_requires_read_from_callees_match_the_query_patterns(source: bytes) -> None:
    root = base.parse("lua", source).root_node
    wanted = scopes.captures_by_name("lua", _QUERY_PATTERNS, root)
    callees = scopes.captures_by_name("lua", lua._REFERENCES, root).get("callee", [])
    assert sorted(_spans(callees)) == sorted(_spans(wanted.get("callee", [])))
    got = lua._Extractor("a.lua", source)._requires(callees)
    names = ("require", "module", "bound", "bound_module")
    assert [_spans(found) for found in got] == [_spans(wanted.get(name, [])) for name in names]



def test_a_require_with_a_second_argument_binds_its_first_module() -> None:
    """`require("p", "q")` (the second argument is loader data in Lua 5.4) once failed the whole
    file (a strict zip of bound names against every string argument); now the name is bound to
    the first module and the file reads exactly as with `require("p")`."""
    body = b'\nlocal u = require("u")\nlocal function f() return b.g(), u.h() end\nreturn f\n'
    two = lua.extract("a.lua", b'local b, c = require("p", "q")' + body)
    one = lua.extract("a.lua", b'local b, c = require("p")     ' + body)
    assert [(u.identifier, u.type, u.dependencies) for u in two.units] == [
        (u.identifier, u.type, u.dependencies) for u in one.units
    ]
    calls = {d.target for u in two.units if u.type == "function" for d in u.dependencies}
    assert calls == {"p.g", "u.h"}
