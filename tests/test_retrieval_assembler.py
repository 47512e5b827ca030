"""ContextAssembler: budgets, sections, truncation, chunk collapse, skipped units (spec §2.7)."""

from __future__ import annotations

from tests.retrieval_fakes import InMemoryMetadataStore, make_record
from woods.retrieval.assembler import (
    TRUNCATION_MARKER,
    ContextAssembler,
    collapse_chunks,
    estimate_tokens,
    format_unit,
    section_budgets,
)
from woods.retrieval.candidates import Candidate, Classification

PLAIN = Classification("understand", "focused", None, False, ())
FRAMEWORK = Classification("framework", "focused", None, True, ())


def assembler(records) -> ContextAssembler:
    return ContextAssembler(InMemoryMetadataStore(records))


def test_empty_input_gives_empty_context() -> None:
    result = assembler({}).assemble([], PLAIN)
    assert result.context == "" and result.tokens_used == 0 and result.sources == ()


def test_block_format_and_separators() -> None:
    records = {"A": make_record("A", source_code="class A\nend\n"), "B": make_record("B", "service", source_code="x\n")}
    result = assembler(records).assemble(
        [Candidate("A", 0.9, "vector"), Candidate("B", 0.5, "graph_expansion")], PLAIN, structural_context="Banner"
    )
    assert result.context == (
        "Banner\n\n---\n\n## A (model)\nFile: app/models/a.rb\n\nclass A\nend\n\n---\n\n## B (service)\nFile: app/services/b.rb\n\nx"
    )
    assert result.sections == ("structural", "primary", "supporting")
    assert [s.identifier for s in result.sources] == ["A", "B"]
    assert result.tokens_used == estimate_tokens(result.context)


def test_section_budget_shares() -> None:
    assert section_budgets(900, False) == {"primary": 585, "supporting": 315, "framework": 0}
    assert section_budgets(900, True) == {"primary": 495, "supporting": 225, "framework": 180}


def test_structural_banner_is_capped_at_ten_percent() -> None:
    result = assembler({}).assemble([], PLAIN, structural_context="x" * 1000, budget=100)
    assert result.context.endswith(TRUNCATION_MARKER)
    assert result.context == "x" * 36 + TRUNCATION_MARKER  # int(10 tokens × 4 chars × 0.9)


def test_unused_supporting_budget_goes_to_primary() -> None:
    # 1000 budget, no banner: primary 650 alone cannot hold 700 tokens, primary+supporting can.
    records = {"A": make_record("A", source_code="a" * (700 * 4 - 40))}
    result = assembler(records).assemble([Candidate("A", 0.9, "vector")], PLAIN, budget=1000)
    assert result.sources[0].truncated is False


def test_oversized_unit_is_truncated_and_marked_then_section_stops() -> None:
    records = {"Big": make_record("Big", source_code="b" * 20000), "Small": make_record("Small")}
    result = assembler(records).assemble(
        [Candidate("Big", 0.9, "vector"), Candidate("Small", 0.5, "vector")], PLAIN, budget=1000
    )
    assert result.context.endswith(TRUNCATION_MARKER)
    assert [(s.identifier, s.truncated) for s in result.sources] == [("Big", True)]
    assert len(result.context) == int(1000 * 4 * 0.9) + len(TRUNCATION_MARKER)


def test_no_truncation_when_at_most_200_tokens_remain() -> None:
    records = {"Big": make_record("Big", source_code="b" * 5000)}
    # budget 200 → primary 130 + reclaimed supporting 70 = 200 tokens: not more than 200.
    result = assembler(records).assemble([Candidate("Big", 0.9, "vector")], PLAIN, budget=200)
    assert result.context == "" and result.sources == ()


def test_missing_units_are_skipped_and_counted() -> None:
    result = assembler({"A": make_record("A")}).assemble(
        [Candidate("Gone", 0.9, "vector"), Candidate("A", 0.5, "vector")], PLAIN
    )
    assert result.skipped_missing_metadata == 1 and [s.identifier for s in result.sources] == ["A"]


def test_framework_units_only_in_the_framework_section() -> None:
    records = {"ActiveRecord::Base": make_record("ActiveRecord::Base", "rails_source"), "User": make_record("User")}
    cands = [Candidate("ActiveRecord::Base", 0.9, "vector", {"type": "rails_source"}), Candidate("User", 0.5, "vector")]
    result = assembler(records).assemble(cands, FRAMEWORK)
    assert result.sections == ("primary", "framework")
    assert result.context.count("## ActiveRecord::Base") == 1
    expansion = [Candidate("ActiveRecord::Base", 0.9, "graph_expansion", {}), Candidate("User", 0.5, "graph_expansion")]
    assert assembler(records).assemble(expansion, FRAMEWORK).sections == ("supporting", "framework")
    # Without framework context the framework unit stays where its source puts it.
    assert assembler(records).assemble(cands, PLAIN).sections == ("primary",)


def test_chunks_collapse_to_the_best_scoring_base_unit() -> None:
    cands = [Candidate("A#chunk_0", 0.4, "vector"), Candidate("B", 0.6, "vector"), Candidate("A#chunk_3", 0.7, "vector")]
    collapsed = collapse_chunks(cands)
    assert [(c.identifier, c.score) for c in collapsed] == [("A", 0.7), ("B", 0.6)]
    result = assembler({"A": make_record("A"), "B": make_record("B")}).assemble(cands, PLAIN)
    assert [s.identifier for s in result.sources] == ["A", "B"]


def test_format_strips_like_ruby() -> None:
    assert format_unit({"identifier": "X", "type": "lib", "file_path": None, "source_code": "\n\nbody\n\n"}) == (
        "## X (lib)\nFile: \n\n\n\nbody"  # only the block's ends are stripped
    )


def test_per_call_budget_override() -> None:
    records = {"A": make_record("A", source_code="a" * 4000)}
    small = assembler(records).assemble([Candidate("A", 0.9, "vector")], PLAIN, budget=500)
    large = assembler(records).assemble([Candidate("A", 0.9, "vector")], PLAIN, budget=5000)
    assert small.sources[0].truncated and not large.sources[0].truncated
