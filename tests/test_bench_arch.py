"""bench/arch: the held-out dev sets' metric, doc-comment blanking and sampling rules.

Offline and fast: tiny inline fixtures only (no checkout, no index, no model).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "arch"


def _load(name: str, path: Path) -> ModuleType:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


run = _load("bench_arch_run", BENCH / "run.py")
sample = _load("bench_arch_sample_functions", BENCH / "sample_functions.py")


# --- semble-dev's file-level NDCG@10 -------------------------------------------------------------


def test_ndcg_is_one_when_every_target_leads() -> None:
    assert run.file_ndcg(["a.py", "b.py", "x.py"], ["a.py", "b.py"]) == pytest.approx(1.0)


def test_ndcg_uses_binary_gains_and_min_k_ideal() -> None:
    # one of two targets, at rank 2: DCG = 1/log2(3); IDCG = 1 + 1/log2(3)
    got = run.file_ndcg(["x.py", "b.py"], ["a.py", "b.py"])
    assert got == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))


def test_ndcg_counts_a_file_once_and_only_in_the_first_ten() -> None:
    files = [f"f{i}.py" for i in range(10)] + ["a.py"]
    assert run.file_ndcg(files, ["a.py"]) == 0.0
    # a repeated file is deduplicated before ranks are taken
    assert run.file_ndcg(["x.py", "x.py", "a.py"], ["a.py"]) == pytest.approx(1 / math.log2(3))


def test_paths_match_by_slash_suffix_only() -> None:
    assert run.path_matches("src/lib/a.py", "lib/a.py")
    assert run.path_matches("lib/a.py", "src/lib/a.py")
    assert run.path_matches("./lib/a.py", "lib/a.py")
    assert not run.path_matches("src/xlib/a.py", "lib/a.py")


def test_overall_score_is_the_mean_of_per_repository_means() -> None:
    rows = [
        {"repo": "a", "language": "go", "arch": {"ndcg10": 1.0, "by_category": {"semantic": 1.0}}},
        {"repo": "b", "language": "go", "arch": {"ndcg10": 0.0, "by_category": {"architecture": 0.0}}},
        {"repo": "c", "language": "c", "fn": {"fn_mrr10": 0.5}},
    ]
    assert run.aggregate(rows, "arch", "ndcg10") == pytest.approx(0.5)
    assert run.aggregate(rows, "arch", "ndcg10", "semantic") == pytest.approx(1.0)
    assert run.aggregate(rows, "fn", "fn_mrr10") == pytest.approx(0.5)


# --- the function set's MRR ----------------------------------------------------------------------


def _task(**kw: object) -> object:
    base = {"query": "q", "path": "src/m.py", "identifier": "m.f", "line": 10, "start": 8, "end": 20,
            "doc_start": 11, "doc_end": 12}
    base.update(kw)
    return run.FunctionTask(**base)


def test_function_hit_needs_the_file_and_a_span_holding_the_definition_line() -> None:
    task = _task()
    hits = [run.Hit("src/other.py", 1, 100), run.Hit("src/m.py", 30, 40), run.Hit("src/m.py", 1, 50),
            run.Hit("src/m.py", 9, 15)]
    scores = run.function_scores(hits, task)
    assert scores["fn_mrr10"] == pytest.approx(1 / 3)  # the class-sized unit at rank 3 holds line 10
    assert scores["fn_mrr10_strict"] == pytest.approx(1 / 4)  # only rank 4 lies inside 8..20
    assert scores["file_mrr10"] == pytest.approx(1 / 2)  # files deduplicated: other.py, m.py


def test_function_miss_scores_zero_and_spanless_units_never_hit() -> None:
    scores = run.function_scores([run.Hit("src/m.py", None, None)], _task())
    assert scores["fn_mrr10"] == 0.0 and scores["file_mrr10"] == 1.0


# --- blanking doc comments ------------------------------------------------------------------------


def test_blanking_keeps_every_line_number_and_line_ending() -> None:
    data = b"a\r\n/** doc\r\n * more */\r\nint f();\nlast"
    out = run.blank_lines(data, [(2, 3)])
    assert out == b"a\r\n\r\n\r\nint f();\nlast"
    assert out.count(b"\n") == data.count(b"\n")


def test_blanking_refuses_a_span_outside_the_file() -> None:
    with pytest.raises(ValueError):
        run.blank_lines(b"one\ntwo\n", [(2, 3)])


def test_doc_span_holds_the_query_words_in_order_across_markup() -> None:
    text = 'x\n/// Write a log event with the <see cref="Level.Fatal"/> level.\nvoid Fatal() {}\n'
    task = _task(query="Write a log event with the Level.Fatal level.", doc_start=2, doc_end=2)
    assert run.doc_span_holds(text, task)
    assert not run.doc_span_holds(text, _task(query="level write", doc_start=2, doc_end=2))
    assert not run.doc_span_holds(text, _task(query="Write a log event", doc_start=3, doc_end=3))


def test_blanked_copy_is_made_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run, "WORK", tmp_path)
    repo = run.Repo("demo", "o/demo", "0" * 40, "python", None,
                    functions=[_task(query="Add two numbers.", path="m.py", identifier="m.add", line=1, start=1,
                                     end=4, doc_start=2, doc_end=2)])
    repo.checkout.mkdir(parents=True)
    source = 'def add(a, b):\n    """Add two numbers."""\n    return a + b\n\n'
    (repo.checkout / "m.py").write_text(source)
    report = run.make_blanked_copy(repo)
    assert report["problems"] == []
    blanked = (repo.blanked / "m.py").read_text()
    assert blanked == 'def add(a, b):\n\n    return a + b\n\n'
    compile(blanked, "m.py", "exec")  # still valid Python
    assert (repo.checkout / "m.py").read_text() == source  # the checkout is untouched


# --- BM25 floor ---------------------------------------------------------------------------------


def test_bm25_tokens_split_identifiers_and_rank_the_matching_file_first() -> None:
    assert run.bm25_tokens("HTTPAdapter full_dispatch") == ["httpadapter", "http", "adapter", "full_dispatch",
                                                             "full", "dispatch"]
    index = run.BM25Files({"a.py": run.bm25_tokens("class HttpAdapter: send request"),
                           "b.py": run.bm25_tokens("def parse_config(): read file"),
                           "c.py": run.bm25_tokens("unrelated words here")})
    assert index.search("how does the adapter send a request")[0] == "a.py"
    assert index.search("nothing matches zzz") == []


# --- sampling rules -----------------------------------------------------------------------------


def test_first_sentence_drops_markup_and_tag_lines() -> None:
    doc = "Returns the {@link Converter} for {@code type}. More text.\n\n@param type the type"
    assert sample.first_sentence(doc) == "Returns the Converter for type."
    assert sample.query_for("@param x the x", "f", "java") is None
    assert sample.query_for("Too short.", "f", "java") is None


def test_go_queries_lose_the_leading_function_name_only_in_go() -> None:
    assert sample.query_for("Snapshot returns an immutable copy of the list", "Snapshot", "go") == \
        "Returns an immutable copy of the list"
    assert sample.query_for("Format value as JSON to the output writer.", "Format", "csharp") == \
        "Format value as JSON to the output writer."


def test_python_docstring_span_needs_another_statement() -> None:
    text = 'def f():\n    """Do the thing well."""\n    return 1\n\ndef g():\n    """Only a docstring."""\n'
    assert sample.python_doc_span(text, "f", 1, 3) == (1, 2, 2)
    assert sample.python_doc_span(text, "g", 5, 6) is None


def test_comment_block_above_annotations_is_found() -> None:
    lines = ["class A {", "  /**", "   * Sends the request.", "   */", "  @Override", "  void send() {}", "}"]
    assert sample.comment_doc_span(lines, "send", 5, 6, "java") == (6, 2, 4)
    ruby = ["# Closes every connection", "# it holds.", "def close", "end"]
    assert sample.comment_doc_span(ruby, "close", 3, 4, "ruby") == (3, 1, 2)
    assert sample.comment_doc_span(["int x;", "void f() {}"], "f", 2, 2, "c") is None


def test_committed_sets_are_well_formed() -> None:
    """Every annotation file names its commit, and every function task its spans, consistently."""
    for path in sorted((BENCH / "annotations").glob("*.json")):
        data = json.loads(path.read_text())
        assert len(data["commit"]) == 40 and data["queries"], path
        for q in data["queries"]:
            assert q["relevant"] and q["category"] in run.CATEGORIES, (path, q["query"])
            assert q.get("pattern") in (None, *run.PATTERNS), (path, q["query"])
        functions = BENCH / "functions" / path.name
        if functions.exists():
            fdata = json.loads(functions.read_text())
            assert fdata["commit"] == data["commit"]
            for f in fdata["functions"]:
                assert f["start"] <= f["line"] <= f["end"] and f["doc_start"] <= f["doc_end"], f
