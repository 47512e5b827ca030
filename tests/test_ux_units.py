"""The pure pieces behind issue 33's command line, one by one: closest names (edit distance),
file filters (globs, languages), snippets and indentation, diagrams, colour, locating the index."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from woods.api.location import find_store, locate_store, repository_root
from woods.diagram import module_diagram, walk_diagram
from woods.errors import IndexNotFoundError, InputError
from woods.filters import UnknownLanguageError, file_filter, known_languages, language_named
from woods.snippets import best_line, dedent_unit, first_line_indent, match_spans, snippet, snippet_terms
from woods.suggest import closest, edit_distance, max_distance, unknown_type_message
from woods.terminal import highlight, paint, use_color

# -- woods.suggest ---------------------------------------------------------------------------------


def _levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j - 1] + (char_a != char_b), current[j - 1] + 1, previous[j] + 1))
        previous = current
    return previous[-1]


def test_bounded_edit_distance_is_levenshtein_within_the_bound():
    rng = random.Random(33)
    for _ in range(3000):
        a = "".join(rng.choice("ab_c") for _ in range(rng.randint(0, 9)))
        b = "".join(rng.choice("ab_c") for _ in range(rng.randint(0, 9)))
        bound = rng.randint(0, 4)
        exact = _levenshtein(a, b)
        assert edit_distance(a, b, bound) == (exact if exact <= bound else bound + 1), (a, b, bound)


def test_closest_names_are_near_sorted_and_never_the_name_itself():
    names = ["make_response", "make_default_options_response", "parse_response", "Response", "make_reponse"]
    assert closest("make_reponse", names) == ["make_response"]  # parse_response is 4 edits away
    assert closest("parse_respnse", names) == ["parse_response"]
    assert closest("MAKE_RESPONSE", names)[0] == "make_response"  # case-insensitive: distance 0
    assert closest("zorblaxQuuxHandler", names) == []
    assert max_distance("ab") == 1 and max_distance("make_resp") == 2 and max_distance("stream_with_context") == 3
    ordered = closest("cat", ["bat", "cab", "cot", "act", "at"], limit=10)
    assert ordered == ["at", "bat", "cab", "cot"]  # one edit, by name; `act` (two) is past a short name's bound
    assert closest("make_respnse", ["make_response", "make_responses", "make_resp"], limit=10) == [
        "make_response", "make_responses", "make_resp"]  # by distance (1, 2, 3), not by name


def test_an_unknown_type_message_names_the_closest_and_all_types():
    message = unknown_type_message("klass", {"class": 3, "method": 9, "module": 1})
    assert message == "unknown unit type 'klass'; did you mean class? (types in this index: class, method, module)"


# -- woods.filters -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("globs", "path", "selected"), [
    (["src/**/*.py"], "src/flask/app.py", True),
    (["src/**/*.py"], "src/app.py", True),
    (["src/**/*.py"], "tests/src/app.py", False),
    (["*.py"], "a/b/c.py", True),
    (["!tests/"], "tests/unit/a.py", False),
    (["!tests/"], "src/a.py", True),
    (["src/", "!src/vendor/"], "src/vendor/x.py", False),
    (["src/", "!src/vendor/"], "src/x.py", True),
    (["./src/app.py"], "src/app.py", True),
])
def test_globs_select_like_gitignore_patterns(globs, path, selected):
    chosen = file_filter(globs, None)
    assert chosen is not None and chosen.matches(path, "python") is selected


def test_languages_by_name_nickname_and_extension():
    assert {language_named(x) for x in ("py", ".py", "python", "PY", "pyi")} == {"python"}
    assert language_named("golang") == "go" and language_named("c++") == "cpp" and language_named("md") == "markdown"
    assert language_named("yml") == "yaml" and language_named("tsx") == "typescript"
    assert {"python", "ruby", "markdown", "erb"} <= set(known_languages())
    with pytest.raises(UnknownLanguageError, match="languages: .*python"):
        language_named("klingon")
    chosen = file_filter(None, ["rb", "erb"])
    assert chosen is not None and chosen.langs == ("ruby", "erb")
    assert chosen.matches("app/x.rb", "ruby") and not chosen.matches("app/x.py", "python")
    assert chosen.matches("app/views/a.html.erb")  # no language given: read from the name


def test_no_filter_and_bad_patterns():
    assert file_filter(None, None) is None and file_filter([], []) is None
    for bad in (["!"], [""], ["   "]):
        with pytest.raises(InputError):
            file_filter(bad, None)


# -- woods.snippets ------------------------------------------------------------------------------------

RUBY = 'def charge(amount)\n      payment = create!(amount)\n      ChargeCustomer.new(self).call\n    end'
PYTHON = "def run(self):\n        if self.ready:\n            return go()\n        return None"


def test_a_stored_units_first_line_indent_is_estimated():
    assert first_line_indent(RUBY.split("\n")) == "    "  # aligned with its `end`
    assert first_line_indent(PYTHON.split("\n")) == "    "  # one step (4) above its body
    assert first_line_indent(["@property", "    def x(self):", "        return 1"]) == "    "  # a decorator
    assert dedent_unit(RUBY).split("\n") == ["def charge(amount)", "  payment = create!(amount)",
                                             "  ChargeCustomer.new(self).call", "end"]
    assert dedent_unit("x = 1", "") == "x = 1"


def test_snippet_picks_the_best_lines_in_file_order():
    terms = snippet_terms("charge a customer")
    assert terms == ("customer", "charge")  # longest first, stop words gone
    assert snippet_terms("payment refunds") == ("payment", "refunds", "refund")  # and stems
    assert snippet_terms("class process") == ("process", "class")  # `-ss` is no plural
    lines = snippet(RUBY, 24, terms)
    assert [line.line for line in lines] == [24, 26]
    assert lines[0].text == "def charge(amount)" and lines[0].matches == ((4, 10),)
    assert lines[1].text.strip() == "ChargeCustomer.new(self).call" and best_line(lines) == 26
    unrelated = snippet(RUBY, 24, ("zebra",))
    assert [(line.line, line.text, line.matches) for line in unrelated] == [(24, "def charge(amount)", ())]
    assert match_spans("ChargeCustomer", ("charge", "customer")) == ((0, 14),)  # adjacent spans merge
    long_line = snippet("x = " + "charge " * 100, 1, ("charge",))[0]
    assert len(long_line.text) == 200 and long_line.text.endswith("…") and all(e <= 199 for _s, e in long_line.matches)


# -- woods.diagram ---------------------------------------------------------------------------------------


def test_module_diagram_keeps_the_heaviest_packages_and_counts_edges():
    units = [(f"k{i}", f"u{i}", path) for i, path in enumerate(
        ["a/x.rb", "a/y.rb", "b/z.rb", "c/w.rb", "d/v.rb", "e/t.rb"])]
    pagerank = {"u0": 0.4, "u1": 0.1, "u2": 0.3, "u3": 0.05, "u4": 0.1, "u5": 0.01}
    edges = [("k2", "k0"), ("k2", "k1"), ("k3", "k2"), ("k5", "k0"), ("k0", "k0"), ("k0", None)]
    diagram = module_diagram(units, pagerank, edges, limit=3)
    assert [n.label for n in diagram.nodes] == ["a", "b", "d"]  # 0.5, 0.3, then 0.1 beats 0.05 and 0.01
    assert [(e.source, e.target, e.label) for e in diagram.edges] == [(1, 0, "2")]
    assert diagram.omitted_nodes == 2 and diagram.omitted_edges == 2  # c and e; c→b and e→a
    small = module_diagram(units[:2], pagerank, [("k0", "k1")], limit=5)  # every file fits: files
    assert [n.label for n in small.nodes] == ["a/x.rb", "a/y.rb"]
    mermaid, dot = small.to_mermaid(), small.to_dot()
    assert mermaid.splitlines()[:3] == ["flowchart LR", "  %% files by PageRank, arrows counting unit dependencies",
                                        '  n1["a/x.rb"]'] and "  n1 -->|1| n2" in mermaid
    assert dot.startswith("digraph woods {") and 'n1 -> n2 [label="1"];' in dot


def test_walk_diagram_starts_at_the_unit_and_cuts_by_depth_then_centrality():
    nodes = [("B", 1, True), ("C", 1, True), ("Ext", 1, False), ("D", 2, True)]
    edges = [("A", "B", "calls"), ("A", "C", "calls"), ("A", "Ext", "superclass"), ("B", "D", "calls")]
    diagram = walk_diagram("A", nodes, {"B": 0.1, "C": 0.3}, edges, "dependencies", limit=3)
    assert [(n.label, n.external) for n in diagram.nodes] == [("A", False), ("C", False), ("B", False)]
    assert [(e.source, e.target, e.label) for e in diagram.edges] == [(0, 1, "calls"), (0, 2, "calls")]
    assert diagram.omitted_nodes == 2
    labelled = walk_diagram('Q"x', [], {}, [], "dependents").to_mermaid()
    assert '["Q#quot;x"]' in labelled


# -- woods.terminal ----------------------------------------------------------------------------------------


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_colour_follows_the_terminal_no_color_and_the_choice():
    assert use_color("auto", _Stream(True), {}) and not use_color("auto", _Stream(False), {})
    assert not use_color("auto", _Stream(True), {"NO_COLOR": "1"}) and use_color("auto", _Stream(True), {"NO_COLOR": ""})
    assert not use_color("auto", _Stream(True), {"TERM": "dumb"})
    assert use_color("always", _Stream(False), {"NO_COLOR": "1"}) and not use_color("never", _Stream(True), {})
    assert paint("x", "path", False) == "x" and paint("x", "path", True) == "\x1b[35mx\x1b[0m"
    assert highlight("charge it", ((0, 6),), True) == "\x1b[1;31mcharge\x1b[0m it"
    assert highlight("charge it", ((0, 6),), False) == "charge it"


# -- woods.api.location ------------------------------------------------------------------------------------


def test_the_nearest_index_up_to_the_repository_root(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / ".woods").mkdir(parents=True)
    (repo / ".git").mkdir()
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_store(deep) == repo / ".woods" and repository_root(deep) == repo
    nested = repo / "vendor" / "other"
    (nested / ".git").mkdir(parents=True)
    assert find_store(nested) is None  # another repository: the outer index is not its index
    with pytest.raises(IndexNotFoundError, match="run `woods index .*other` first"):
        locate_store(nested / ".git" / "..")
    with pytest.raises(InputError, match="path not found"):
        locate_store(repo / "missing")
    (repo / "app.py").write_text("x = 1\n")
    with pytest.raises(InputError, match="--path takes the repository directory, not a file"):
        locate_store(repo / "app.py")
