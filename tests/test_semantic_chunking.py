"""Semantic chunking (spec §1.5, parity items 75–76): section shapes, method ends, safety net,
and the integration into `chunk_unit`."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from woods.chunking import CHUNK_PART, chunk_unit
from woods.chunking.semantic import (
    METHOD_CHUNKABLE_TYPES,
    SEMANTIC_UNIT_TYPES,
    SemanticChunk,
    member_method_spans,
    method_spans,
    semantic_chunks,
    semantic_unit_chunks,
    split_lines,
)
from woods.embedding.encoder import load_wordpiece_tokenizer, minilm_model_dir
from woods.embedding.provider import InputTooLongError
from woods.embedding.text import unit_embedding_prefix
from woods.extract import extract_file
from woods.units import Unit

DETECTIONS = ("ast", "lines")
RAILS_APP = Path(__file__).resolve().parent.parent / "fixtures" / "rails_app"
_TOKENIZER = load_wordpiece_tokenizer(minilm_model_dir())


def wordpiece_count(text: str) -> int:
    return len(_TOKENIZER.encode(text).ids)


def ruby_unit(source: str, unit_type: str, identifier: str = "Thing", line_start: int = 5) -> Unit:
    return Unit(identifier=identifier, type=unit_type, language="ruby", file_path="app/thing.rb",
                line_start=line_start, line_end=line_start + max(len(split_lines(source)), 1) - 1,
                source_code=source)


def chunk(unit: Unit, detection: str = "ast", **options) -> list[SemanticChunk]:
    return semantic_chunks(unit, threshold_tokens=0, method_detection=detection, **options)


def by_type(chunks: list[SemanticChunk]) -> dict[str, SemanticChunk]:
    return {c.chunk_type: c for c in chunks}


def assert_located(unit: Unit, chunks: list[SemanticChunk]) -> None:
    """Every chunk names the file lines its content is made of, and its identifier its parent."""
    lines = split_lines(unit.source_code)
    for c in chunks:
        assert c.identifier == f"{unit.identifier}#{c.chunk_type}"
        assert list(c.lines) == sorted(set(c.lines))
        assert (c.line_start, c.line_end) == (c.lines[0], c.lines[-1])
        assert c.contiguous == (c.line_end - c.line_start + 1 == len(c.lines))
        assert all(unit.line_start <= n <= unit.line_end for n in c.lines)
        made_of = "".join(lines[n - unit.line_start] for n in c.lines)
        if "_part_" in c.chunk_type:
            assert c.content in made_of
        else:
            assert c.content == made_of


def assert_partition(unit: Unit, chunks: list[SemanticChunk]) -> None:
    """Each source line sits in exactly one section; only whitespace lines may be left out."""
    lines = split_lines(unit.source_code)
    owners: dict[int, int] = {}
    for c in chunks:
        for n in c.lines:
            assert n not in owners, f"line {n} in two sections"
            owners[n] = 1
    for offset, line in enumerate(lines):
        assert unit.line_start + offset in owners or not line.strip()


MODEL = """\
class User < ApplicationRecord
  include Trackable

  has_many :posts, dependent: :destroy
  belongs_to :account
  validates :email, presence: true
  validate :domain_allowed
  before_save :normalize
  after_create_commit :welcome
  scope :active, -> { where(active: true) }
  enum :role, { member: 0 }
  # a comment stays in the summary

  def activate!
    items.each do |item|
      item.touch
    end
    update!(active: true)
  end

  private

  def normalize
    self.email = email.strip
  end
end
"""


@pytest.mark.parametrize("detection", DETECTIONS)
def test_model_sections_in_gem_order(detection):
    unit = ruby_unit(MODEL, "model")
    chunks = chunk(unit, detection)
    assert [c.chunk_type for c in chunks] == [
        "summary", "associations", "validations", "callbacks", "scopes", "methods"]
    sections = by_type(chunks)
    assert sections["associations"].content == "  has_many :posts, dependent: :destroy\n  belongs_to :account\n"
    assert sections["validations"].content == "  validates :email, presence: true\n  validate :domain_allowed\n"
    # `after_create_commit` is a callback here (the gem's `\b` would have missed it)
    assert sections["callbacks"].content == "  before_save :normalize\n  after_create_commit :welcome\n"
    # a non-DSL line joins the current section; the class's closing `end` does too (gem rule)
    assert sections["scopes"].content.splitlines() == [
        "  scope :active, -> { where(active: true) }", "  enum :role, { member: 0 }", "end"]
    assert "# a comment stays in the summary" in sections["summary"].content
    assert sections["summary"].content.startswith("class User < ApplicationRecord\n  include Trackable\n")
    methods = sections["methods"].content
    assert methods.startswith("  def activate!\n") and "  private\n" in methods
    assert methods.rstrip().endswith("self.email = email.strip\n  end".rstrip())
    assert sections["associations"].contiguous and not sections["scopes"].contiguous
    assert (sections["scopes"].line_start, sections["scopes"].line_end) == (5 + 9, 5 + 25)
    assert_located(unit, chunks)
    assert_partition(unit, chunks)


def test_model_drops_empty_sections():
    source = "class Tag < ApplicationRecord\n  has_many :taggings\n\n  def label\n    name.upcase\n  end\nend\n"
    chunks = chunk(ruby_unit(source, "model"))
    assert [c.chunk_type for c in chunks] == ["summary", "associations", "methods"]


CONTROLLER = """\
class UsersController < ApplicationController
  before_action :set_user, only: [:show]

  def index
    @users = User.all
  end

  def show
    if @user.admin?
      redirect_to admin_path
    end
  end

  def self.allowed?
    true
  end

  def index
    head :ok
  end

  def admin? = current_user.admin?

  private

  def set_user
    @user = User.find(params[:id])
  end
end
"""


@pytest.mark.parametrize("detection", DETECTIONS)
def test_controller_summary_and_one_chunk_per_public_action(detection):
    unit = ruby_unit(CONTROLLER, "controller", "UsersController")
    chunks = chunk(unit, detection)
    assert [c.chunk_type for c in chunks] == [
        "summary", "action_index", "action_show", "action_self.allowed", "action_index@2", "action_admin"]
    sections = by_type(chunks)
    summary = sections["summary"].content
    assert "before_action :set_user" in summary
    assert "  private\n" in summary and "def set_user" in summary and "User.find" in summary
    assert sections["action_show"].content.endswith("    end\n  end\n")  # nested if … end balanced
    assert sections["action_index"].content == "  def index\n    @users = User.all\n  end\n"
    assert sections["action_index@2"].content == "  def index\n    head :ok\n  end\n"
    assert sections["action_admin"].content == "  def admin? = current_user.admin?\n"
    assert sections["action_show"].identifier == "UsersController#action_show"
    assert_located(unit, chunks)
    assert_partition(unit, chunks)


SERVICE = """\
class ChargeCustomer
  include Callable
  RETRIES = 3

  def initialize(invoice)
    @invoice = invoice
  end

  def call
    result = case @invoice.state
             when :open then charge
             end
    @memo ||= begin
      compute
    end
    retry_later if result.nil?
    result
  end

  def ==(other)
    other.is_a?(self.class)
  end

  class Result
    def call
      :nested
    end
  end

  protected

  def charge
    gateway.charge(@invoice) do |response|
      response.ok?
    end
  end
end
"""


@pytest.mark.parametrize("detection", DETECTIONS)
def test_service_methods_privates_and_repeated_names(detection):
    unit = ruby_unit(SERVICE, "service", "Billing::ChargeCustomer")
    chunks = chunk(unit, detection)
    assert [c.chunk_type for c in chunks] == [
        "summary", "method_initialize", "method_call", "method_==", "method_call@2", "private_methods"]
    sections = by_type(chunks)
    call = sections["method_call"].content
    assert call.startswith("  def call\n") and call.endswith("    result\n  end\n")
    assert sections["method_call@2"].content == "    def call\n      :nested\n    end\n"
    summary = sections["summary"].content
    assert "include Callable" in summary and "RETRIES = 3" in summary and "class Result" in summary
    assert sections["private_methods"].content.startswith("  protected\n")
    assert "response.ok?" in sections["private_methods"].content
    assert sections["private_methods"].content.endswith("  end\nend\n")
    assert all(c.identifier.startswith("Billing::ChargeCustomer#") for c in chunks)
    assert_located(unit, chunks)
    assert_partition(unit, chunks)


@pytest.mark.parametrize("unit_type", sorted(METHOD_CHUNKABLE_TYPES))
def test_every_method_chunkable_type_uses_the_method_chunker(unit_type):
    chunks = chunk(ruby_unit(SERVICE, unit_type))
    assert [c.chunk_type for c in chunks][:3] == ["summary", "method_initialize", "method_call"]


@pytest.mark.parametrize("detection", DETECTIONS)
def test_endless_defs_never_open_a_body(detection):
    source = ("class Ping\n  def ping = :pong\n  def self.pong() = :ping\n  def value=(v)\n    @v = v\n"
              "  end\n  def ==(other) = other.equal?(self)\n  def last\n    1\n  end\nend\n")
    chunks = chunk(ruby_unit(source, "poro"), detection)
    sections = by_type(chunks)
    assert [c.chunk_type for c in chunks] == [
        "summary", "method_ping", "method_self.pong", "method_value=", "method_==", "method_last"]
    assert sections["method_ping"].content == "  def ping = :pong\n"
    assert sections["method_value="].content == "  def value=(v)\n    @v = v\n  end\n"
    assert sections["method_last"].content == "  def last\n    1\n  end\n"


def test_multi_line_endless_def_with_heredoc_is_one_method():
    source = ("class Report\n  def sql = <<~SQL\n    select 1\n    end\n  SQL\n\n"
              "  def run\n    execute(sql)\n  end\nend\n")
    sections = by_type(chunk(ruby_unit(source, "query_object")))
    assert sections["method_sql"].content == "  def sql = <<~SQL\n    select 1\n    end\n  SQL\n"
    assert sections["method_run"].content == "  def run\n    execute(sql)\n  end\n"


def test_heredoc_with_an_end_line_does_not_close_the_method():
    source = ("class Report\n  def sql\n    <<~SQL\n      select\n    end\n    SQL\n  end\n\n"
              "  def run\n    1\n  end\nend\n")
    spans = method_spans(source, "ast")
    assert [(s.first, s.last) for s in spans] == [(1, 6), (8, 10)]


@pytest.mark.parametrize("detection", DETECTIONS)
def test_block_comments_are_ignored(detection):
    source = ("class Doc\n  def a\n=begin\n  if x\n  def hidden\n  do\n=end\n    1\n  end\n\n"
              "=begin\ndef not_a_method\n=end\n  def b\n    2\n  end\nend\n")
    sections = by_type(chunk(ruby_unit(source, "helper"), detection))
    assert set(sections) == {"summary", "method_a", "method_b"}
    assert sections["method_a"].content.endswith("    1\n  end\n")
    assert "def not_a_method" in sections["summary"].content
    assert sections["method_b"].content == "  def b\n    2\n  end\n"


@pytest.mark.parametrize("detection", DETECTIONS)
def test_nested_blocks_are_balanced(detection):
    source = """\
class Sync
  def run
    status = if ready?
      :go
    else
      :wait
    end
    return if status == :wait
    items.each do |item|
      while item.busy?
        sleep 1
      end
      case item
      when Foo then item.call
      end
    end.compact
    lambda do
      begin
        risky
      rescue StandardError
        nil
      end
    end
    total = values.sum { |v| v }
    unless done? then finish end
    total
  end

  def after
    :ok
  end
end
"""
    spans = method_spans(source, detection)
    assert [(s.first, s.last) for s in spans] == [(1, 26), (28, 30)]
    sections = by_type(chunk(ruby_unit(source, "job"), detection))
    assert sections["method_run"].content.endswith("    total\n  end\n")
    assert sections["method_after"].content == "  def after\n    :ok\n  end\n"


def test_one_line_def_closes_on_its_own_line_in_both_modes():
    source = "class C\n  def edit; end\n\n  def update\n    if x\n      y\n    end\n  end\nend\n"
    for detection in DETECTIONS:
        spans = method_spans(source, detection)
        assert [(s.first, s.last) for s in spans] == [(1, 1), (3, 7)]


def test_private_def_modifier_makes_that_method_private():
    source = "class C\n  def pub\n    1\n  end\n\n  private def helper\n    2\n  end\n\n  def later\n    3\n  end\nend\n"
    chunks = chunk(ruby_unit(source, "service"))
    assert [c.chunk_type for c in chunks] == ["summary", "method_pub", "method_later", "private_methods"]
    assert by_type(chunks)["private_methods"].content == "  private def helper\n    2\n  end\n"


def test_unparsable_source_falls_back_to_the_line_heuristic():
    source = "class Broken\n  def a\n    foo(\n  end\n\n  def b\n    1\n  end\nend\n"
    assert method_spans(source, "ast") == method_spans(source, "lines")


def test_small_units_and_other_types_stay_whole():
    unit = ruby_unit(SERVICE, "service")
    assert math.ceil(len(SERVICE) / 4) > 100
    whole = semantic_chunks(unit, threshold_tokens=10_000)
    assert [(c.chunk_type, c.content, c.identifier) for c in whole] == [("whole", SERVICE, "Thing#whole")]
    assert (whole[0].line_start, whole[0].line_end, whole[0].contiguous) == (5, 4 + SERVICE.count("\n"), True)
    # default threshold 200 estimated tokens: ~800 characters
    assert [c.chunk_type for c in semantic_chunks(unit)] == ["whole"]
    assert len(semantic_chunks(ruby_unit(SERVICE * 3, "service"))) > 1
    for unit_type in ("middleware", "migration", "route", "class"):
        assert [c.chunk_type for c in chunk(ruby_unit(SERVICE, unit_type))] == ["whole"]
    not_ruby = Unit(**{**unit.to_raw(), "language": "python", "dependencies": ()})
    assert [c.chunk_type for c in chunk(not_ruby)] == ["whole"]


@pytest.mark.parametrize("source", ["", "   \n\t\n"])
def test_blank_source_has_no_chunks(source):
    assert semantic_chunks(ruby_unit(source, "model"), threshold_tokens=0) == []


def test_safety_net_splits_oversize_sections_into_parts():
    unit = ruby_unit(SERVICE, "service", "Billing::ChargeCustomer")
    plain = chunk(unit)
    limit = 40
    prefix = unit_embedding_prefix(unit)
    parted = chunk(unit, count_tokens=wordpiece_count, max_tokens=limit, prefix=prefix)
    assert any("_part_" in c.chunk_type for c in parted)
    for c in parted:
        assert wordpiece_count(prefix + "\n" + c.content) <= limit
    # each oversize section became <type>_part_0.._part_n whose contents concatenate to it
    for section in plain:
        parts = [c for c in parted if c.chunk_type.startswith(section.chunk_type + "_part_")]
        if wordpiece_count(prefix + "\n" + section.content) <= limit:
            assert section in parted and not parts
        else:
            assert [c.chunk_type for c in parts] == [f"{section.chunk_type}_part_{i}" for i in range(len(parts))]
            assert "".join(c.content for c in parts) == section.content
            assert parts[0].line_start == section.line_start and parts[-1].line_end == section.line_end
    assert_located(unit, parted)


def test_safety_net_cuts_a_long_line_at_characters():
    source = "class Blob\n  DATA = '" + "x" * 400 + "'\n  def a\n    1\n  end\nend\n"
    unit = ruby_unit(source, "poro")
    parted = chunk(unit, max_tokens=30)  # the ceil(len/4) estimate, no prefix
    summary_parts = [c for c in parted if c.chunk_type.startswith("summary_part_")]
    assert len(summary_parts) > 3
    assert all(math.ceil(len("\n" + c.content) / 4) <= 30 for c in parted)
    assert "".join(c.content for c in summary_parts) == by_type(chunk(unit))["summary"].content
    assert all(c.identifier == f"Thing#{c.chunk_type}" for c in parted)


def test_safety_net_refuses_when_the_prefix_leaves_no_room():
    unit = ruby_unit(SERVICE, "service")
    with pytest.raises(InputTooLongError):
        chunk(unit, count_tokens=wordpiece_count, max_tokens=5, prefix="a long prefix " * 5)


# A Ruby class body assembled from fragments (a method, a DSL line, a block comment …), for the
# property that sections partition the source whatever the order.
FRAGMENTS = [
    "  has_many :posts\n", "  validates :name, presence: true\n", "  before_save :touch_it\n",
    "  scope :recent, -> { order(:id) }\n", "  private\n", "  # comment\n", "\n", "  attr_reader :x\n",
    "  def a\n    if b\n      c\n    end\n  end\n", "  def d = 1\n", "  def e; end\n",
    "  def f\n    g.each do |h|\n      h\n    end\n  end\n", "=begin\ndef z\n=end\n",
    "  def self.k\n    1\n  end\n", "  before_action :auth\n",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12), st.sampled_from(["model", "controller", "service"]),
       st.sampled_from(DETECTIONS))
def test_sections_partition_the_source(fragments, unit_type, detection):
    source = "class Thing\n" + "".join(fragments) + "end\n"
    unit = ruby_unit(source, unit_type)
    chunks = chunk(unit, detection)
    assert_located(unit, chunks)
    assert_partition(unit, chunks)


# ---------------------------------------------------------------------------------------------
# Integration into chunk_unit


def rails_units() -> list[Unit]:
    units = []
    for path in sorted(RAILS_APP.rglob("*.rb")):
        relative = path.relative_to(RAILS_APP).as_posix()
        units.extend(extract_file(relative, path.read_bytes()).units)
    return units


@pytest.mark.parametrize("max_tokens", [256, 128])
def test_chunk_unit_splits_rails_units_along_sections(max_tokens):
    semantic_seen = set()
    for unit in rails_units():
        chunks = chunk_unit(unit, wordpiece_count, max_tokens)
        prefix = unit_embedding_prefix(unit)
        for c in chunks:
            assert c.text == prefix + "\n" + c.content
            assert wordpiece_count(c.text) <= max_tokens
        if len(chunks) == 1:
            continue
        assert [c.embedding_id for c in chunks] == [f"{unit.identifier}#chunk_{i}" for i in range(len(chunks))]
        assert [c.index for c in chunks] == list(range(len(chunks)))
        types = [c.chunk_type for c in chunks]
        if types[0] == CHUNK_PART:  # plain packing: the contents concatenate to the source
            assert "".join(c.content for c in chunks) == unit.source_code
            continue
        semantic_seen.add(unit.type)
        assert unit.type in METHOD_CHUNKABLE_TYPES | {"model", "controller"}
        assert types[0].startswith("summary")
        # every non-blank source line is in some chunk, and each chunk's lines are the unit's
        lines = split_lines(unit.source_code)
        covered: set[int] = set()
        for c in chunks:
            assert unit.line_start <= c.line_start <= c.line_end <= unit.line_end
            covered.update(range(c.line_start, c.line_end + 1))
        assert all(unit.line_start + i in covered for i, line in enumerate(lines) if line.strip())
        # and the sections (parts rejoined) hold exactly the source's non-blank lines
        sections: dict[str, str] = {}
        for c in chunks:
            section = re.sub(r"_part_\d+$", "", c.chunk_type)
            sections[section] = sections.get(section, "") + c.content
        held = [line.rstrip("\n") for content in sections.values() for line in split_lines(content)]
        assert sorted(line for line in held if line.strip()) == sorted(
            line.rstrip("\n") for line in lines if line.strip())
    assert {"model", "controller"} <= semantic_seen


def test_chunk_unit_section_types_for_the_users_controller_and_user_model():
    units = {(u.type, u.identifier): u for u in rails_units()}
    controller = chunk_unit(units[("controller", "UsersController")], wordpiece_count, 256)
    assert [c.chunk_type for c in controller][:3] == ["summary", "action_index", "action_show"]
    show = next(c for c in controller if c.chunk_type == "action_show")
    assert show.content.startswith("  def show\n") and (show.line_start, show.line_end) == (13, 15)
    model = chunk_unit(units[("model", "User")], wordpiece_count, 256)
    assert [c.chunk_type for c in model] == [
        "summary", "associations", "validations", "callbacks", "scopes", "methods"]
    assert model[1].content.lstrip().startswith("has_many :posts")


def test_chunk_unit_keeps_fitting_and_non_ruby_units_as_before():
    units = {(u.type, u.identifier): u for u in rails_units()}
    user = units[("model", "User")]
    assert [c.chunk_type for c in chunk_unit(user, wordpiece_count, 10_000)] == ["whole"]
    as_python = Unit(**{**user.to_raw(), "language": "python", "dependencies": ()})
    assert {c.chunk_type for c in chunk_unit(as_python, wordpiece_count, 128)} == {CHUNK_PART}
    # a section-less unit (no defs) falls back to plain packing too
    assert semantic_unit_chunks(units[("controller", "ApplicationController")], wordpiece_count, 128) is None


def test_chunk_unit_base_id_names_semantic_chunks():
    units = {(u.type, u.identifier): u for u in rails_units()}
    chunks = chunk_unit(units[("model", "User")], wordpiece_count, 128, base_id="model:User")
    assert [c.embedding_id for c in chunks] == [f"model:User#chunk_{i}" for i in range(len(chunks))]
    assert any(c.chunk_type.startswith("methods_part_") for c in chunks)


def test_member_units_give_the_method_ranges_without_a_second_parse(monkeypatch):
    """The index builder passes a unit's members: their line ranges (from the extractor's parse)
    must give exactly the sections the parse gives, and chunking must not parse again."""
    units = rails_units()
    members: dict[str, list[Unit]] = {}
    for unit in units:
        if unit.parent:
            members.setdefault(unit.parent, []).append(unit)
    containers = [u for u in units if u.type in SEMANTIC_UNIT_TYPES and members.get(u.identifier)]
    assert {"model", "controller"} <= {u.type for u in containers}
    expected = {u.identifier: semantic_chunks(u, threshold_tokens=0) for u in containers}

    import woods.extract.base as base

    def no_parse(*_args: object) -> None:
        raise AssertionError("chunking parsed a source its member units already describe")

    monkeypatch.setattr(base, "parse", no_parse)
    for unit in containers:
        kids = members[unit.identifier]
        assert semantic_chunks(unit, threshold_tokens=0, members=kids) == expected[unit.identifier]
        chunk_unit(unit, wordpiece_count, 128, kids)  # must not parse either


def test_member_spans_extend_over_a_heredoc_the_method_opens():
    source = "class Q\n  def sql = <<~SQL\n    SELECT 1\n  SQL\n\n  def other\n    2\n  end\nend\n"
    unit = Unit("Q", "service", "ruby", "app/services/q.rb", 1, 9, source)
    sql = Unit("Q#sql", "method", "ruby", "app/services/q.rb", 2, 2, "def sql = <<~SQL", parent="Q")
    other = Unit("Q#other", "method", "ruby", "app/services/q.rb", 6, 8, "def other\n    2\n  end", parent="Q")
    spans = member_method_spans(unit, [other, sql])
    assert [(s.first, s.last, s.def_text) for s in spans] == [(1, 3, "def sql = <<~SQL"), (5, 7, "def other")]
    assert spans == method_spans(source)
