"""The embedding text is the Ruby TextPreparer format, byte for byte (checked against vectors.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from woods.embedding.text import (
    MAX_PREFIX_DEPENDENCIES,
    embedding_prefix,
    embedding_text,
    unit_embedding_prefix,
    unit_embedding_text,
)
from woods.units import Dependency, Unit, sha256_hex

BENCH = Path("/work/shared/parity/woods-ruby-bench")
needs_bench = pytest.mark.skipif(not (BENCH / "corpus.json").exists(), reason="parity bench not present")


def _unit(**overrides) -> Unit:
    fields = dict(identifier="Billing::Invoice", type="model", language="ruby",
                  file_path="app/models/billing/invoice.rb", line_start=1, line_end=3,
                  source_code="class Invoice\nend\n")
    fields.update(overrides)
    return Unit(**fields)


def _corpus_unit(entry: dict) -> Unit:
    dependencies = tuple(Dependency(target=d["target"], via=d.get("via", ""), target_type=d.get("type"))
                         for d in entry.get("dependencies") or ())
    return Unit(identifier=entry["identifier"], type=entry["type"], language="ruby",
                file_path=entry["file_path"], line_start=1, line_end=1 + entry["source_code"].count("\n"),
                source_code=entry["source_code"], namespace=entry.get("namespace"),
                dependencies=dependencies)


@needs_bench
def test_every_corpus_unit_and_query_text_hashes_to_a_captured_vector():
    corpus = json.loads((BENCH / "corpus.json").read_text(encoding="utf-8"))
    keys = json.loads((BENCH / "vectors.json").read_text(encoding="utf-8"))["vectors"].keys()
    unit_hashes = [sha256_hex(unit_embedding_text(_corpus_unit(entry))) for entry in corpus["units"]]
    query_hashes = [sha256_hex(query["query"]) for query in corpus["queries"]]
    assert len(unit_hashes) == 62 and len(query_hashes) == 28
    assert [h in keys for h in unit_hashes].count(True) == 62
    assert [h in keys for h in query_hashes].count(True) == 28
    # Key order of the capture is units (corpus order) then queries.
    assert list(keys) == unit_hashes + query_hashes


def test_prefix_lines_in_order():
    prefix = embedding_prefix("service", "Billing::Charge", "Billing", "app/services/charge.rb", ["A", "B"])
    assert prefix == ("[service] Billing::Charge\nnamespace: Billing\nfile: app/services/charge.rb\n"
                      "dependencies: A, B")


def test_none_fields_and_empty_dependencies_are_omitted():
    assert embedding_prefix("model", "User") == "[model] User"
    assert embedding_prefix("model", "User", None, "app/models/user.rb", []) == "[model] User\nfile: app/models/user.rb"
    assert embedding_prefix("model", "User", "Admin", None) == "[model] User\nnamespace: Admin"


def test_empty_namespace_is_kept_like_ruby_truthiness():
    # Ruby includes the line for any non-nil namespace, "" included.
    assert embedding_prefix("model", "User", "", None) == "[model] User\nnamespace: "


def test_dependencies_capped_at_ten_in_order_with_duplicates():
    targets = ["A", "B", "A"] + [f"T{i}" for i in range(20)]
    line = embedding_prefix("job", "J", dependency_targets=iter(targets)).split("\n")[-1]
    assert line == "dependencies: " + ", ".join(targets[:MAX_PREFIX_DEPENDENCIES])
    assert line.count("A") == 2


def test_text_is_prefix_newline_content_unchanged():
    assert embedding_text("[x] y", "body") == "[x] y\nbody"
    assert embedding_text("[x] y", "") == "[x] y\n"
    assert embedding_text("[x] y", "a\n\n") == "[x] y\na\n\n"


def test_unit_text_uses_dependency_targets_and_source():
    unit = _unit(namespace="Billing", dependencies=(Dependency("Billing::Payment", "code_reference"),
                                                    Dependency("Mailer", "calls")))
    assert unit_embedding_prefix(unit) == ("[model] Billing::Invoice\nnamespace: Billing\n"
                                           "file: app/models/billing/invoice.rb\n"
                                           "dependencies: Billing::Payment, Mailer")
    assert unit_embedding_text(unit) == unit_embedding_prefix(unit) + "\nclass Invoice\nend\n"
