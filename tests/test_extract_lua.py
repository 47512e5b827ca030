"""Lua extraction over the Neovim-plugin-shaped fixture, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from tests.linking_helpers import link_fixture, resolved
from woods.extract import language_for
from woods.extract.lua import extract, module_name
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "lua_plugin"
INIT = "lua/notes/init.lua"
STORE = "lua/notes/store.lua"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "lua")


def _line(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("lua/telescope/builtin/init.lua", "telescope.builtin"),
        ("lua/telescope/actions/state.lua", "telescope.actions.state"),
        ("nvim/lua/notes/init.lua", "notes"),
        ("src/lpeg/re.lua", "lpeg.re"),
        ("builtin/__files.lua", "builtin.__files"),
        ("init.lua", "init"),
        ("plugin/notes.lua", "plugin.notes"),
    ],
)
def test_module_names_follow_require(path: str, name: str) -> None:
    assert module_name(path) == name


def test_registered_for_lua() -> None:
    assert language_for("lua/notes/init.lua") == "lua"


def test_returned_table_functions_are_module_members() -> None:
    units = _extract(INIT)
    module = units["notes"]
    assert (module.type, module.line_start, module.line_end) == ("module", 1, _line(INIT, "return M"))
    assert module.docstring == "notes.nvim: jot down notes per project and find them again.\nEntry point: `require(\"notes\").setup({ ... })`."
    assert deps_by_via(module, "import") == {
        "notes.config": ("notes.config", "config"), "notes.store": ("notes.store", "store"), "notes.util": ("notes.util", "util")
    }
    setup = units["notes.setup"]
    assert (setup.type, setup.parent, setup.namespace, setup.metadata) == ("function", "notes", "notes", {"local": False})
    assert (setup.line_start, setup.line_end) == (_line(INIT, "function M.setup"), _line(INIT, "function M.setup") + 3)
    assert setup.signature == "function M.setup(opts)"
    assert setup.docstring == "Configure the plugin and open the note store.\n@param opts table|nil user options, merged over the defaults"
    calls = deps_by_via(setup, "calls")
    assert calls["notes.config.apply"] == ("notes.config.apply", "notes.config:apply", "config.apply", "config:apply")
    assert "notes.store.new" in calls
    assert set(units) == {"notes", "notes.setup", "notes.add", "notes.search"}


def test_class_tables_methods_and_self_calls() -> None:
    units = _extract(STORE)
    new = units["notes.store.new"]
    assert new.type == "function" and new.docstring == "A store that reads and writes `directory/notes.json`."
    assert deps_by_via(new, "calls") == {"notes.store:load": ("notes.store:load", "notes.store.load")}
    load = units["notes.store:load"]
    assert (load.type, load.line_start, load.line_end) == ("method", _line(STORE, "function Store:load"), _line(STORE, "function Store:load") + 6)
    assert deps_by_via(load, "calls") == {"notes.store:path": ("notes.store:path", "notes.store.path")}
    assert deps_by_via(units["notes.store:add"], "calls")["notes.util.now"][0] == "notes.util.now"


def test_local_functions_assigned_functions_and_table_constructors() -> None:
    util = _extract("lua/notes/util.lua")
    assert util["notes.util.strip"].metadata == {"local": True}
    assert util["notes.util.now"].signature == "M.now = function()"
    assert util["notes.util.now"].docstring == "Seconds since the epoch; a function so tests can replace it."
    assert deps_by_via(util["notes.util.trim"], "calls") == {"notes.util.strip": ("notes.util.strip",)}
    config = _extract("lua/notes/config.lua")
    apply = config["notes.config.apply"]  # a field of the returned table constructor
    assert (apply.line_start, apply.line_end, apply.signature) == (_line("lua/notes/config.lua", "apply = function"), _line("lua/notes/config.lua", "return merged") + 1, "apply = function(opts)")
    assert apply.docstring == "Merge user options over the defaults (unknown keys are kept)."


def test_lazy_requires_belong_to_their_function() -> None:
    units = _extract("plugin/notes.lua")
    module = units["plugin.notes"]
    assert deps_by_via(module, "import") == {"notes": ("notes",)}
    assert deps_by_via(module, "calls") == {"notes.add": ("notes.add", "notes:add")}


def test_edges_resolve_across_the_plugin() -> None:
    _units, edges = link_fixture(extract, ROOT, ("*.lua",))
    assert resolved(edges, "notes", "import") == {"notes.config", "notes.store", "notes.util"}
    assert resolved(edges, "notes.setup", "calls") == {"notes.config.apply", "notes.store.new"}
    assert resolved(edges, "notes.add", "calls") == {"notes.util.trim"}
    assert resolved(edges, "notes.store:load", "calls") == {"notes.store:path"}
    assert resolved(edges, "plugin.notes", "calls") == {"notes.add"}


def test_an_index_rooted_inside_lua_resolves_through_the_second_candidate() -> None:
    units = {u.identifier: u for u in extract("notes/init.lua", (ROOT / INIT).read_bytes()).units}
    assert "notes" in units and units["notes.setup"].parent == "notes"
    nested = extract("builtin/init.lua", b'local files = require("telescope.builtin.__files")\nlocal M = {}\nfunction M.find() return files.find() end\nreturn M\n').units
    find = next(u for u in nested if u.identifier == "builtin.find")
    assert deps_by_via(find, "calls")["telescope.builtin.__files.find"][2] == "builtin.__files.find"


def test_syntax_errors_keep_what_parses() -> None:
    source = b"local M = {}\nfunction M.good() return 1 end\nfunction M.bad( return end end\nreturn M\n"
    result = extract("lua/x.lua", source)
    assert "x.good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = extract("x.lua", b"-- caf\xe9\nlocal function f() return \"\xff\" end\n").units
    assert units[1].identifier == "x.f" and "\ufffd" in units[1].docstring
    assert extract("bin.lua", bytes(range(256)) * 8).units[0].type == "module"
    assert extract("empty.lua", b"").units == () and extract("blank.lua", b" \n").units == ()


def test_deep_nesting_does_not_recurse() -> None:
    depth = 3000
    source = f"local function f() return {'(' * depth}1{')' * depth} end\n".encode()
    assert [u.identifier for u in extract("d.lua", source).units] == ["d", "d.f"]
    tables = "local M = {}\nfunction M.g() return " + "{" * 500 + "}" * 500 + " end\nreturn M\n"
    assert [u.identifier for u in extract("t.lua", tables.encode()).units] == ["t", "t.g"]
