"""Chunking keeps every text within the token limit and loses nothing (property-tested)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from woods.chunking import CHUNK_PART, CHUNK_WHOLE, Chunk, chunk_unit
from woods.embedding.encoder import load_wordpiece_tokenizer, minilm_model_dir
from woods.embedding.fake import FakeEmbeddingProvider
from woods.embedding.provider import InputTooLongError
from woods.embedding.text import unit_embedding_prefix, unit_embedding_text
from woods.store.identity import strip_chunk
from woods.units import Dependency, Unit

Counter = Callable[[str], int]


def whitespace_count(text: str) -> int:
    return FakeEmbeddingProvider().count_tokens(text)


def char_count(text: str) -> int:
    return len(text)


def superlinear_count(text: str) -> int:
    """Not additive: a concatenation costs more than its parts (forces the verify/re-split path)."""
    words = len(text.split())
    return words + words * words // 30


_TOKENIZER = load_wordpiece_tokenizer(minilm_model_dir())


def wordpiece_count(text: str) -> int:
    return len(_TOKENIZER.encode(text).ids)


def make_unit(source: str, line_start: int = 10, identifier: str = "App::Thing", **extra) -> Unit:
    return Unit(identifier=identifier, type="class", language="python", file_path="app/thing.py",
                line_start=line_start, line_end=line_start + source.count("\n"), source_code=source, **extra)


def assert_chunk_invariants(unit: Unit, chunks: list[Chunk], count: Counter, max_tokens: int) -> None:
    source = unit.source_code
    prefix = unit_embedding_prefix(unit)
    assert "".join(chunk.content for chunk in chunks) == source
    offset = 0
    for index, chunk in enumerate(chunks):
        assert chunk.index == index
        assert chunk.content, "no empty chunk"
        assert chunk.text == prefix + "\n" + chunk.content
        assert count(chunk.text) <= max_tokens
        assert chunk.unit_identifier == unit.identifier and chunk.unit_type == unit.type
        first_line = unit.line_start + source[:offset].count("\n")
        assert chunk.line_start == first_line
        # the line of the chunk's last character
        assert chunk.line_end == unit.line_start + source[: offset + len(chunk.content) - 1].count("\n")
        if index:
            previous = chunks[index - 1]
            step = 1 if previous.content.endswith("\n") else 0
            assert chunk.line_start == previous.line_end + step
        offset += len(chunk.content)
    assert chunks[-1].line_end <= unit.line_end
    if len(chunks) == 1:
        assert chunks[0].embedding_id == unit.identifier and chunks[0].chunk_type == CHUNK_WHOLE
    else:
        assert [c.embedding_id for c in chunks] == [f"{unit.identifier}#chunk_{i}" for i in range(len(chunks))]
        assert {strip_chunk(c.embedding_id) for c in chunks} == {unit.identifier}
        assert {c.chunk_type for c in chunks} == {CHUNK_PART}


def method_source(count: int, body_lines: int) -> tuple[str, list[tuple[int, int]]]:
    lines = ["class Thing:", '    """A thing."""', ""]
    ranges = []
    for m in range(count):
        start = len(lines)
        lines.append(f"    def method_{m}(self, value):")
        lines.extend(f"        value = value + {m} * {k}  # step {k}" for k in range(body_lines))
        lines.append("        return value")
        ranges.append((start, len(lines) - 1))
        lines.append("")
    return "\n".join(lines) + "\n", ranges


def test_unit_that_fits_is_one_whole_chunk_with_the_unit_id():
    unit = make_unit("def f():\n    return 1\n", dependencies=(Dependency("os", "import"),))
    [chunk] = chunk_unit(unit, wordpiece_count, 256)
    assert chunk == Chunk(embedding_id="App::Thing", unit_identifier="App::Thing", unit_type="class", index=0,
                          chunk_type=CHUNK_WHOLE, content=unit.source_code, line_start=10, line_end=11,
                          text=unit_embedding_text(unit))


def test_no_limit_means_one_chunk_however_long():
    unit = make_unit("x = 1\n" * 5000)
    [chunk] = chunk_unit(unit, None, None)
    assert chunk.content == unit.source_code and chunk.line_end == 10 + 4999


@pytest.mark.parametrize("source", ["", "   ", "\n\n  \t\n"])
def test_blank_source_yields_no_chunks(source):
    assert chunk_unit(make_unit(source), wordpiece_count, 256) == []


def test_limit_without_counter_is_an_error():
    with pytest.raises(ValueError):
        chunk_unit(make_unit("a\n"), None, 10)


def test_long_unit_splits_at_member_boundaries():
    source, ranges = method_source(count=8, body_lines=6)
    unit = make_unit(source, line_start=1)
    children = [make_unit("x\n", line_start=1 + a, identifier=f"App::Thing.method_{i}")
                for i, (a, _b) in enumerate(ranges)]
    children = [Unit(**{**{f: getattr(c, f) for f in c.__slots__}, "line_end": 1 + b})  # type: ignore[attr-defined]
                for c, (_a, b) in zip(children, ranges, strict=True)]
    chunks = chunk_unit(unit, wordpiece_count, 140, children, skeleton=False)
    assert len(chunks) > 2
    assert_chunk_invariants(unit, chunks, wordpiece_count, 140)
    member_starts = {1 + a for a, _b in ranges}
    member_spans = [(1 + a, 1 + b) for a, b in ranges]
    for chunk in chunks:
        # No method is cut in two: every method lies wholly inside one chunk or outside it.
        for first, last in member_spans:
            inside = chunk.line_start <= first and last <= chunk.line_end
            outside = last < chunk.line_start or first > chunk.line_end
            assert inside or outside, (chunk.line_start, chunk.line_end, first, last)
    assert any(chunk.line_start in member_starts for chunk in chunks[1:])


def test_member_larger_than_the_budget_is_split_by_lines():
    source, ranges = method_source(count=1, body_lines=60)
    unit = make_unit(source, line_start=1)
    child = make_unit("x\n", line_start=1 + ranges[0][0], identifier="m")
    child = Unit(**{**{f: getattr(child, f) for f in child.__slots__}, "line_end": 1 + ranges[0][1]})  # type: ignore[attr-defined]
    chunks = chunk_unit(unit, wordpiece_count, 100, [child], skeleton=False)
    assert len(chunks) > 3
    assert_chunk_invariants(unit, chunks, wordpiece_count, 100)
    assert all(chunk.content.endswith("\n") for chunk in chunks), "only whole lines when lines fit"


def test_overlong_line_is_cut_at_characters_and_nothing_is_lost():
    long_line = " ".join(f"word{i}" for i in range(600))
    unit = make_unit(f"head = 1\n{long_line}\ntail = 2\n", line_start=5)
    chunks = chunk_unit(unit, wordpiece_count, 64)
    assert_chunk_invariants(unit, chunks, wordpiece_count, 64)
    assert sum(1 for chunk in chunks if chunk.line_start == chunk.line_end == 6) >= 3


def test_line_without_whitespace_is_cut_too():
    unit = make_unit("a" * 3000)
    chunks = chunk_unit(unit, char_count, 200)
    assert_chunk_invariants(unit, chunks, char_count, 200)
    assert len(chunks) == -(-3000 // (200 - len(unit_embedding_prefix(unit)) - 1))


def test_non_additive_counter_is_verified_and_resplit():
    unit = make_unit("".join(f"alpha beta gamma delta {i}\n" for i in range(200)))
    chunks = chunk_unit(unit, superlinear_count, 60)
    assert_chunk_invariants(unit, chunks, superlinear_count, 60)


def test_prefix_that_cannot_fit_raises():
    unit = make_unit("x = 1\n" * 50, dependencies=tuple(Dependency(f"Dep{i}", "calls") for i in range(10)))
    with pytest.raises(InputTooLongError):
        chunk_unit(unit, whitespace_count, 5)


def test_base_id_overrides_chunk_ids():
    unit = make_unit("a b c\n" * 40)
    chunks = chunk_unit(unit, whitespace_count, 30, base_id="@woods-unit:abc")
    assert chunks[0].embedding_id == "@woods-unit:abc#chunk_0"
    assert chunk_unit(make_unit("a\n"), whitespace_count, 30, base_id="K")[0].embedding_id == "K"


def test_each_line_is_counted_about_once():
    calls = 0

    def counting(text: str) -> int:
        nonlocal calls
        calls += 1
        return wordpiece_count(text)

    source = "".join(f"    total += compute(item_{i}, factor={i})\n" for i in range(400))
    chunks = chunk_unit(make_unit(source), counting, 128)
    # one whole-text check, prefix and empty counts, one per line, one verification per chunk
    assert calls <= 1 + 2 + 400 + len(chunks) + 5


# --- properties ---------------------------------------------------------------------------------

LINE = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40),
    st.lists(st.sampled_from(["def", "self.x", "(", ")", "=", "'é'", "日本", "🎉", "  ", "\t", "x_1",
                              "return", "#", "snake_case_name", "CamelCase"]), max_size=30).map(" ".join),
    st.text(alphabet="abc ", min_size=50, max_size=400),
)
COUNTERS = {"whitespace": whitespace_count, "chars": char_count, "wordpiece": wordpiece_count,
            "superlinear": superlinear_count}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(LINE, min_size=1, max_size=60),
    trailing_newline=st.booleans(),
    counter_name=st.sampled_from(sorted(COUNTERS)),
    slack=st.integers(min_value=1, max_value=120),
    member_cuts=st.lists(st.tuples(st.integers(0, 70), st.integers(0, 20)), max_size=6),
    line_start=st.integers(1, 1000),
)
def test_chunks_reproduce_the_source_and_fit(lines, trailing_newline, counter_name, slack, member_cuts,
                                             line_start):
    source = "\n".join(lines) + ("\n" if trailing_newline else "")
    unit = make_unit(source, line_start=line_start)
    count = COUNTERS[counter_name]
    max_tokens = count(unit_embedding_prefix(unit) + "\n") + slack
    children = [Unit(identifier=f"c{i}", type="method", language="python", file_path="app/thing.py",
                     line_start=line_start + first, line_end=line_start + first + size, source_code="")
                for i, (first, size) in enumerate(member_cuts)]
    try:
        chunks = chunk_unit(unit, count, max_tokens, children, skeleton=False)
    except InputTooLongError:
        # Only legitimate when one character with the prefix does not fit.
        assert any(count(unit_embedding_prefix(unit) + "\n" + ch) > max_tokens for ch in source)
        return
    if not source.strip():
        assert chunks == []
        return
    assert_chunk_invariants(unit, chunks, count, max_tokens)


def test_provider_accepts_every_chunk():
    fake = FakeEmbeddingProvider(max_input_tokens=25)
    unit = make_unit("".join(f"step {i} of the long procedure\n" for i in range(100)) + "x " * 60)
    chunks = chunk_unit(unit, fake.count_tokens, fake.max_input_tokens)
    assert len(chunks) > 5
    assert fake.embed_batch([chunk.text for chunk in chunks]).shape == (len(chunks), 128)


def test_an_oversized_prefix_is_shortened_never_the_code():
    """A unit whose header alone would fill the input (huge dependency names) still chunks: the
    dependency list shrinks, then header lines are cut; the code is split, never lost."""
    from woods.embedding.text import PREFIX_MAX_SHARE, bounded_prefix
    from woods.units import Dependency

    def words(text: str) -> int:
        return len(text.split())

    deps = tuple(Dependency(" ".join(["Huge"] * 40) + str(i), "calls") for i in range(10))
    unit = Unit(identifier="Hub", type="class", language="ruby", file_path="hub.rb", line_start=1,
                line_end=30, source_code="".join(f"line {i} of code\n" for i in range(30)), dependencies=deps)
    prefix = bounded_prefix(unit, words, 64)
    assert words(prefix) <= 64 * PREFIX_MAX_SHARE and prefix.startswith("[class] Hub")
    with pytest.raises(InputTooLongError):  # the full header leaves no room at all
        chunk_unit(unit, words, 64)
    chunks = chunk_unit(unit, words, 64, prefix=prefix)
    assert "".join(c.content for c in chunks) == unit.source_code
    assert all(words(c.text) <= 64 for c in chunks)
    long_name = Unit(identifier="X" * 5000, type="method", language="java", file_path="a.java", line_start=1,
                     line_end=1, source_code="int x = 1;\n")
    def quarter(text: str) -> int:
        return len(text) // 4

    short = bounded_prefix(long_name, quarter, 256)
    assert "…" in short and quarter(short) <= 128
    (chunk,) = chunk_unit(long_name, quarter, 256, prefix=short)  # header cut at characters, code kept
    assert chunk.content == long_name.source_code


def test_a_container_too_long_embeds_its_skeleton_and_members_stay_whole():
    """A class that does not fit is embedded as its own lines with member bodies elided: its
    members are units of their own, so nothing is embedded twice and nothing is lost."""
    from woods.chunking import CHUNK_SKELETON, skeleton_source

    source, ranges = method_source(count=8, body_lines=6)
    unit = make_unit(source, line_start=1)
    children = [
        Unit(identifier=f"App::Thing.method_{i}", type="method", language="python", file_path="app/thing.py",
             line_start=1 + a, line_end=1 + b, source_code="".join(source.splitlines(True)[a : b + 1]))
        for i, (a, b) in enumerate(ranges)
    ]
    skeleton = skeleton_source(unit, children)
    assert "def method_3(self, value):" in skeleton and "… 7 lines: App::Thing.method_3" in skeleton
    body_line = source.splitlines()[ranges[0][0] + 1]
    assert body_line not in skeleton
    chunks = chunk_unit(unit, wordpiece_count, 140, children)
    assert chunks and {c.chunk_type for c in chunks} == {CHUNK_SKELETON}
    assert "".join(c.content for c in chunks) == skeleton
    assert all(wordpiece_count(c.text) <= 140 for c in chunks)
    assert all((c.line_start, c.line_end) == (unit.line_start, unit.line_end) for c in chunks)
    # A container that fits is embedded whole, bodies included.
    (whole,) = chunk_unit(unit, wordpiece_count, 10_000, children)
    assert whole.content == source


# --- documents ---------------------------------------------------------------------------------
def _document_chunks(path: str, text: str, max_tokens: int = 128) -> tuple[list[Unit], dict[str, list[Chunk]]]:
    from woods.extract.text import extract

    units = list(extract(path, text.encode()).units)
    kids = {u.identifier: [c for c in units if c.parent == u.identifier] for u in units}
    return units, {u.identifier: chunk_unit(u, wordpiece_count, max_tokens, kids[u.identifier]) for u in units}


def test_a_long_document_is_cut_into_line_windows_covering_each_line_once():
    prose = "".join(f"Line {n} of the manual explains one more option in plain words.\n" for n in range(400))
    [unit], chunks = _document_chunks("docs/manual.txt", prose)
    parts = chunks[unit.identifier]
    assert len(parts) > 10
    assert_chunk_invariants(unit, parts, wordpiece_count, 128)
    covered = [line for chunk in parts for line in range(chunk.line_start, chunk.line_end + 1)]
    assert covered == list(range(1, 401))  # every line exactly once, in order
    assert all(chunk.content.endswith("\n") for chunk in parts)  # no line is ever cut


def test_only_a_line_longer_than_the_model_input_is_cut_inside():
    text = "short line\n" * 30 + "word " * 2000 + "\n" + "short line\n" * 30
    [unit], chunks = _document_chunks("notes.txt", text)
    parts = chunks[unit.identifier]
    assert_chunk_invariants(unit, parts, wordpiece_count, 128)
    cut = [chunk for chunk in parts if not chunk.content.endswith("\n")]
    assert cut and all(chunk.line_start == chunk.line_end == 31 for chunk in cut)


def test_document_sections_each_keep_their_lines_whole():
    text = "# Guide\n\nIntro.\n\n" + "".join(
        f"## Part {p}\n\n" + "".join(f"Sentence {n} of part {p} says something useful.\n" for n in range(40)) + "\n"
        for p in range(4))
    units, chunks = _document_chunks("guide.md", text)
    for unit in units:
        parts = chunks[unit.identifier]
        if unit.identifier == "guide.md":  # too long, with sections: its skeleton (headings) is embedded
            assert {c.chunk_type for c in parts} == {"skeleton"}
            assert "## Part 3" in parts[-1].content and "Sentence 5 " not in "".join(c.content for c in parts)
            continue
        assert_chunk_invariants(unit, parts, wordpiece_count, 128)
        assert all(c.content.endswith("\n") or c is parts[-1] for c in parts)
