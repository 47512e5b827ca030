"""The committed Redmine question set (bench/redmine_questions.json) is well formed.

Why: the set is scored by bench/redmine_eval.py against a Redmine tree that CI does not have;
these checks need only the JSON file, so a broken edit is caught before anyone runs the bench.
Gold files and units are checked against Redmine itself by the bench (it exits 2 on a miss).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = REPO / "bench" / "redmine_questions.json"
CATEGORIES = {"semantic", "architecture", "symbol"}
FIELDS = {"id", "question", "category", "kind", "gold_files", "gold_units"}
MIN_QUESTIONS = 45


@pytest.fixture(scope="module")
def payload() -> dict[str, Any]:
    data = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def questions(payload: dict[str, Any]) -> list[dict[str, Any]]:
    items = payload["questions"]
    assert isinstance(items, list)
    return items


def test_header_names_the_redmine_version_the_gold_method_and_the_date(payload: dict[str, Any]) -> None:
    header = payload["header"]
    assert re.fullmatch(r"5\.0\.\d+", header["redmine_version"])
    assert header["gold"].strip()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", header["date"])


def test_at_least_45_questions(questions: list[dict[str, Any]]) -> None:
    assert len(questions) >= MIN_QUESTIONS


def test_every_question_has_exactly_the_known_fields(questions: list[dict[str, Any]]) -> None:
    for item in questions:
        assert set(item) == FIELDS, item.get("id")
        for name in ("id", "question", "kind"):
            assert isinstance(item[name], str) and item[name].strip(), (item["id"], name)


def test_categories_are_valid_and_all_used(questions: list[dict[str, Any]]) -> None:
    counts = Counter(item["category"] for item in questions)
    assert set(counts) == CATEGORIES
    # About 15 % of the questions name a class or method; most describe behaviour.
    assert 0.10 <= counts["symbol"] / len(questions) <= 0.25


def test_no_duplicate_ids_or_questions(questions: list[dict[str, Any]]) -> None:
    ids = [item["id"] for item in questions]
    texts = [" ".join(item["question"].lower().split()) for item in questions]
    assert len(set(ids)) == len(ids)
    assert len(set(texts)) == len(texts)


def test_every_question_has_gold_files_and_gold_units(questions: list[dict[str, Any]]) -> None:
    for item in questions:
        for name in ("gold_files", "gold_units"):
            values = item[name]
            assert isinstance(values, list) and values, (item["id"], name)
            assert all(isinstance(v, str) and v.strip() for v in values), (item["id"], name)
            assert len(set(values)) == len(values), (item["id"], name)
        for path in item["gold_files"]:
            assert not path.startswith("/") and ".." not in Path(path).parts, (item["id"], path)


def _load_bench() -> ModuleType:
    path = REPO / "bench" / "redmine_eval.py"
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location("redmine_eval", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(path.parent))


def test_the_bench_accepts_the_committed_file(payload: dict[str, Any]) -> None:
    bench = _load_bench()
    assert bench.schema_problems(payload) == []


def test_the_bench_metrics_follow_semble_dev() -> None:
    bench = _load_bench()
    question = bench.Question("q", "?", "semantic", "where", ("a/x.rb", "b/y.rb"), ("X#y",))
    perfect = bench.score(question, ["a/x.rb", "b/y.rb"], ["X#y"])
    assert perfect.ndcg == pytest.approx(1.0) and perfect.file_recall == 1.0 and perfect.unit_mrr == 1.0
    partial = bench.score(question, ["c/z.rb", "b/y.rb"], ["Z", "W", "X#y"])
    assert partial.file_mrr == 0.5 and partial.file_recall == 0.5
    assert partial.unit_mrr == pytest.approx(1 / 3)
    # one hit at rank 2 out of two relevant: (1/log2(3)) / (1 + 1/log2(3))
    assert partial.ndcg == pytest.approx((1 / 1.5849625) / (1 + 1 / 1.5849625), rel=1e-6)
    assert bench.score(question, [], []).ndcg == 0.0
