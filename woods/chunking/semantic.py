"""Semantic chunking of Ruby class-like units: the Ruby gem's SemanticChunker.

Why: a large Rails model or controller embedded as arbitrary line windows mixes unrelated code in
one vector; split along its sections (associations, validations, one chunk per controller action,
one per public service method …) each vector describes one thing, and a query such as "which
callbacks does User have" meets a chunk that is only about callbacks.

Sections follow the gem's line classifiers (ModelChunker, ControllerChunker, MethodChunker). The
one place the gem guesses is where a method ends (a line-depth heuristic that heredocs, one-line
`def x; end` and brace blocks can fool). We are static and hold the source, so method ranges come
from the tree-sitter Ruby parse by default (exact, including `private def …` and endless defs with
heredocs); the heuristic is kept as `method_detection="lines"` and as the fallback for a source
that does not parse cleanly.

Every line of the unit's source lands in exactly one section, so the non-blank sections cover the
source; a section may be made of non-contiguous lines (a model's `validations` gathered from the
whole class body), which `SemanticChunk.contiguous` says.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from woods.chunking.chunks import CHUNK_WHOLE, Chunk, TokenCounter, chunk_id
from woods.chunking.splitter import Splitter
from woods.embedding.text import embedding_text, unit_embedding_prefix
from woods.errors import InputTooLongError
from woods.units import Unit

MethodDetection = Literal["ast", "lines"]

# The gem's default: a unit of at most 200 estimated tokens is one `whole` chunk — splitting
# something that small would only multiply prefixes without making any vector more specific.
DEFAULT_THRESHOLD_TOKENS = 200
# The gem's token estimate (Chunk#token_count, `estimated_tokens`): ceil(characters / 4).
ESTIMATE_CHARS_PER_TOKEN = 4

# Class-like unit types the gem's MethodChunker handles (summary + public methods + privates),
# verbatim from semantic_chunker.rb's METHOD_CHUNKABLE_TYPES.
METHOD_CHUNKABLE_TYPES = frozenset({
    "service", "job", "mailer", "concern", "policy", "pundit_policy", "serializer", "decorator",
    "presenter", "interactor", "query_object", "value_object", "component", "view_component",
    "action_cable_channel", "channel", "graphql_resolver", "graphql_type", "helper", "validator",
    "api_client", "poro", "manager", "configuration",
})
SEMANTIC_UNIT_TYPES = METHOD_CHUNKABLE_TYPES | {"model", "controller"}

# Section names (chunk types) in the order the gem emits them.
SUMMARY = "summary"
MODEL_SECTIONS = ("summary", "associations", "validations", "callbacks", "scopes", "methods")
PRIVATE_METHODS = "private_methods"

# ---------------------------------------------------------------------------------------------
# Line patterns (semantic_chunker.rb), applied to one line at a time.

METHOD_LINE = re.compile(r"\s*def\s+")
PRIVATE_LINE = re.compile(r"\s*(?:private|protected)\s*$")
ASSOCIATION_LINE = re.compile(r"\s*(?:has_many|has_one|belongs_to|has_and_belongs_to_many)\b")
VALIDATION_LINE = re.compile(r"\s*validates?\b")
# The gem's list of callback events. Deliberate deviation: the optional `_commit` suffix also
# admits Rails' `after_create_commit`/`after_update_commit`/… — the gem's `\b` after the event
# rejects them, dropping them into whatever section came before (usually `validations`).
CALLBACK_LINE = re.compile(
    r"\s*(?:before_|after_|around_)"
    r"(?:save|create|update|destroy|validation|action|commit|rollback|find|initialize|touch)"
    r"(?:_commit)?\b"
)
SCOPE_LINE = re.compile(r"\s*scope\s+:")
MODEL_SECTION_LINES = (
    ("associations", ASSOCIATION_LINE),
    ("validations", VALIDATION_LINE),
    ("callbacks", CALLBACK_LINE),
    ("scopes", SCOPE_LINE),
)
COMMENT_LINE = re.compile(r"\s*#")

# Operator method names, longest first so `<=>` wins over `<=`.
_OPERATORS = r"<=>|===|==|=~|!~|!=|\[\]=|\[\]|\*\*|<<|>>|<=|>=|[+-]@|[+\-*/%<>&|^~!]"
# MethodChunker's method name (`self.` kept, whitespace removed afterwards).
METHOD_NAME = re.compile(r"\s*def\s+((?:self\s*\.\s*)?(?:" + _OPERATORS + r"|\w+[?!=]?))")
# ControllerChunker's action name: the gem's narrower rule (`def admin?` is action `admin`).
ACTION_NAME = re.compile(r"def\s+((?:self\.)?\w+)")
# Endless def (`def show = head :ok`): an `=` after the name and optional parameter list;
# `def ==(o)` and `def x=(v)` are ordinary defs whose name contains `=`.
ENDLESS_DEF = re.compile(
    r"\s*def\s+(?:self\s*\.\s*)?"
    r"(?:" + _OPERATORS + r"|\w+=(?=\s*\()|\w+[?!]?)"
    r"(?:\s*\([^)]*\)\s*|\s+)=\s*\S"
)
# Heuristic openers: `do` at line end (through block args and a trailing comment), or a keyword in
# statement position (line start or right after `=`), so modifier forms (`return if x`) add no depth.
DO_BLOCK = re.compile(r"\bdo\s*(?:\|[^|]*\|)?\s*(?:#.*)?\Z")
STATEMENT_KEYWORD = re.compile(r"(?:\A|=\s*)(?:if|unless|case|begin|while|until|for|def|class|module)\b")
END_LINE = re.compile(r"end\b(?!:)")  # `end`, `end.compact`, `end while x`; not the `end:` key
SELF_BALANCED = re.compile(r"\bend\s*\Z")  # `if x then y end`, `def a; end`
BLOCK_COMMENT_BEGIN = re.compile(r"=begin\b")
BLOCK_COMMENT_END = re.compile(r"=end\b")
# Words that make a `def` on the same line private (`private def helper … end`).
PRIVATE_DEF_MODIFIERS = frozenset({"private", "protected", "private_class_method"})


@dataclass(frozen=True, slots=True)
class SemanticChunk:
    """One section of a unit (the gem's Chunk), with where its lines sit in the file.

    Guarantees: `identifier` == "<parent identifier>#<chunk_type>"; `content` is the section's
    lines joined unchanged (a `_part_` chunk is a slice of its section's content, and the parts
    concatenate to it); `lines` are the 1-based absolute file lines the content touches, ascending,
    `line_start`/`line_end` their first and last; `contiguous` is False when lines in between
    belong to other sections.
    """

    chunk_type: str
    identifier: str
    content: str
    line_start: int
    line_end: int
    contiguous: bool
    lines: tuple[int, ...]

    @property
    def token_count(self) -> int:
        return estimated_tokens(self.content)


def estimated_tokens(text: str) -> int:
    """The gem's estimate: ceil(characters / 4)."""
    return math.ceil(len(text) / ESTIMATE_CHARS_PER_TOKEN)


def split_lines(source: str) -> list[str]:
    """Lines with their "\\n" kept (only "\\n" ends a line, as in Ruby's String#lines)."""
    lines = source.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


# ---------------------------------------------------------------------------------------------
# Method ranges


@dataclass(frozen=True, slots=True)
class MethodSpan:
    """An outermost method definition: 0-based first/last line index in the unit's source.

    `def_text` is the definition's first line from the `def` keyword on (names are read from it);
    `private_def` says the def line itself made it private (`private def x`).
    """

    first: int
    last: int
    def_text: str
    private_def: bool = False


def method_spans(source: str, detection: MethodDetection = "ast") -> list[MethodSpan]:
    """Outermost method definitions of a Ruby source, in order, non-overlapping.

    "ast" uses the tree-sitter parse and falls back to "lines" (the gem's heuristic) when the
    source has syntax errors, where tree-sitter's recovery may invent or lose method nodes.
    """
    lines = split_lines(source)
    if detection == "ast":
        spans = _ast_method_spans(source)
        if spans is not None:
            return spans
    return _heuristic_method_spans(lines)


def _ast_method_spans(source: str) -> list[MethodSpan] | None:
    from woods.extract.base import parse  # lazy: grammars load only when Ruby is chunked

    data = source.encode("utf-8", "surrogatepass")
    root = parse("ruby", data).root_node
    if root.has_error:
        return None
    methods = []
    heredocs: list[tuple[int, int]] = []
    stack = [root]
    while stack:  # depth-first, children pushed reversed so nodes come out in source order
        node = stack.pop()
        if node.type in ("method", "singleton_method"):
            methods.append(node)
            continue
        if node.type == "heredoc_body":
            heredocs.append((node.start_point.row, node.end_point.row))
        stack.extend(reversed(node.children))
    spans: list[MethodSpan] = []
    for node in methods:
        row = node.start_point.row
        line_begin = node.start_byte - node.start_point.column
        before = data[line_begin : node.start_byte].decode("utf-8", "replace").split()
        line_end = data.find(b"\n", node.start_byte)
        def_text = data[node.start_byte : len(data) if line_end < 0 else line_end].decode("utf-8", "replace")
        last = _extend_over_heredocs(row, node.end_point.row, heredocs)
        if spans and row <= spans[-1].last:  # shares a line with the previous method: merge
            previous = spans[-1]
            spans[-1] = MethodSpan(previous.first, max(previous.last, last), previous.def_text,
                                   previous.private_def)
            continue
        spans.append(MethodSpan(row, last, def_text, bool(before) and before[-1] in PRIVATE_DEF_MODIFIERS))
    return spans


# A heredoc opener (`<<~SQL`, `<<-'EOS'`, `<<HTML`) and the identifier its closing line repeats.
HEREDOC_OPENER = re.compile(r"<<[~-]?(['\"`]?)([A-Za-z_]\w*)\1")


def member_method_spans(unit: Unit, members: Sequence[Unit]) -> list[MethodSpan]:
    """Outermost method spans from the unit's member units, whose line ranges the extractor
    already took from the tree-sitter parse — so chunking never parses the source again.

    Methods sharing a line merge (as in the parse); a heredoc opened on a method's lines whose
    body the parse places after the method (`def x = <<~SQL`) extends the method to its closing
    line, found by scanning the unit's own lines.
    """
    lines = split_lines(unit.source_code or "")
    methods = sorted(
        (m for m in members if m.type == "method" and m.file_path == unit.file_path),
        key=lambda m: (m.line_start, -m.line_end, m.identifier),
    )
    spans: list[MethodSpan] = []
    for member in methods:
        first, last = member.line_start - unit.line_start, member.line_end - unit.line_start
        if first < 0 or last >= len(lines) or first > last:
            continue
        if spans and first <= spans[-1].last:  # nested or sharing a line with the previous method
            previous = spans[-1]
            spans[-1] = MethodSpan(previous.first, max(previous.last, last), previous.def_text, previous.private_def)
            continue
        head = (member.source_code or "").split("\n", 1)[0]
        column = lines[first].find(head) if head else -1
        before = lines[first][:column].split() if column > 0 else []
        private_def = bool(before) and before[-1] in PRIVATE_DEF_MODIFIERS
        spans.append(MethodSpan(first, _extend_over_heredoc_lines(lines, first, last), head, private_def))
    return spans


def _extend_over_heredoc_lines(lines: Sequence[str], first: int, last: int) -> int:
    """The last line of the method, past the closing line of any heredoc opened on its lines."""
    cursor = first
    while cursor <= last:
        for match in HEREDOC_OPENER.finditer(lines[cursor]):
            tag = match.group(2)
            closing = next((i for i in range(cursor + 1, len(lines)) if lines[i].strip() == tag), None)
            if closing is not None and closing > last:
                last = closing
        cursor += 1
    return last


def _extend_over_heredocs(first: int, last: int, heredocs: Sequence[tuple[int, int]]) -> int:
    """A heredoc started on the method's lines belongs to it even when its body follows the
    method node (tree-sitter places `def x = <<~SQL`'s body after the method)."""
    changed = True
    while changed:
        changed = False
        for start, end in heredocs:
            if first <= start <= last < end:
                last, changed = end, True
    return last


def block_opener(line: str) -> bool:
    """Does this line open a body a later `end` closes? (the gem's line heuristic)"""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return False
    if BLOCK_COMMENT_BEGIN.match(stripped) or BLOCK_COMMENT_END.match(stripped):
        return False
    if ENDLESS_DEF.match(stripped) or SELF_BALANCED.search(stripped):
        return False
    return bool(STATEMENT_KEYWORD.search(stripped) or DO_BLOCK.search(stripped))


def block_terminator(line: str) -> bool:
    return bool(END_LINE.match(line.strip()))


def _heuristic_method_spans(lines: Sequence[str]) -> list[MethodSpan]:
    """The gem's line-depth heuristic (B-083): a top-level `def` line opens a method at depth 1;
    openers add one, `end` lines take one, and the method closes when the depth reaches 0.

    Two deliberate departures, both where the gem loses lines: a one-line `def a; end` closes on
    its own line (the gem starts tracking it and swallows the methods that follow), and a whole
    `=begin`…`=end` block is skipped (the gem ignores only the two marker lines).
    """
    spans: list[MethodSpan] = []
    in_comment = _block_comment_lines(lines)
    index = 0
    while index < len(lines):
        line = lines[index]
        if in_comment[index] or not METHOD_LINE.match(line):
            index += 1
            continue
        stripped = line.strip()
        if ENDLESS_DEF.match(stripped) or SELF_BALANCED.search(stripped):
            spans.append(MethodSpan(index, index, stripped))
            index += 1
            continue
        depth, last = 1, len(lines) - 1
        for cursor in range(index + 1, len(lines)):
            if in_comment[cursor]:
                continue
            if block_opener(lines[cursor]):
                depth += 1
            if block_terminator(lines[cursor]):
                depth -= 1
                if depth <= 0:
                    last = cursor
                    break
        spans.append(MethodSpan(index, last, stripped))
        index = last + 1
    return spans


def _block_comment_lines(lines: Sequence[str]) -> list[bool]:
    """True for the lines of `=begin`…`=end` blocks (markers at column 0, as Ruby requires)."""
    flags = []
    inside = False
    for line in lines:
        if not inside and BLOCK_COMMENT_BEGIN.match(line):
            inside = True
        flags.append(inside)
        if inside and BLOCK_COMMENT_END.match(line):
            inside = False
    return flags


def method_name(def_text: str) -> str:
    """MethodChunker's name for a def line (`self.` kept, whitespace removed)."""
    found = METHOD_NAME.match(def_text)
    if found is None:
        return ""
    return re.sub(r"[ \t]", "", found.group(1))


def action_name(def_text: str) -> str:
    """ControllerChunker's name for a def line (operator names fall back to method_name)."""
    found = ACTION_NAME.search(def_text)
    return found.group(1) if found else method_name(def_text)


# ---------------------------------------------------------------------------------------------
# Section classifiers: each returns [(section name, [0-based line indexes])] in emission order.

Sections = list[tuple[str, list[int]]]


def _span_of_line(line_count: int, spans: Sequence[MethodSpan]) -> list[int]:
    """For each line, the index of the method span holding it, or -1."""
    owner = [-1] * line_count
    for number, span in enumerate(spans):
        for index in range(span.first, min(span.last, line_count - 1) + 1):
            owner[index] = number
    return owner


def model_sections(lines: Sequence[str], spans: Sequence[MethodSpan]) -> Sections:
    """ModelChunker: DSL lines to their section; a non-matching line joins the current section
    (the last one a DSL line opened), except blank and comment lines, which go to the summary;
    method bodies and `private`/`protected` markers go to `methods`."""
    buckets: dict[str, list[int]] = {name: [] for name in MODEL_SECTIONS}
    owner = _span_of_line(len(lines), spans)
    current = SUMMARY
    for index, line in enumerate(lines):
        if owner[index] >= 0:
            buckets["methods"].append(index)
            continue
        section = next((name for name, pattern in MODEL_SECTION_LINES if pattern.match(line)), None)
        if section is not None:
            current = section
            buckets[section].append(index)
        elif PRIVATE_LINE.match(line):
            buckets["methods"].append(index)
        elif current == SUMMARY or not line.strip() or COMMENT_LINE.match(line):
            buckets[SUMMARY].append(index)
        else:
            buckets[current].append(index)
    return [(name, buckets[name]) for name in MODEL_SECTIONS]


def _numbered(name: str, seen: dict[str, int]) -> str:
    """`name`, then `name@2`, `name@3` … for repeats, so no definition overwrites another."""
    seen[name] = seen.get(name, 0) + 1
    return name if seen[name] == 1 else f"{name}@{seen[name]}"


_PRIVATE_DEF = "\0private"  # the key `_member_lines` gives lines of private methods


def _member_lines(
    lines: Sequence[str], spans: Sequence[MethodSpan], prefix: str, name_of: Callable[[str], str]
) -> Iterator[tuple[int, str | None, bool]]:
    """(line index, key, after a `private` marker) for every line. key: `<prefix><name>` (repeats
    numbered `@2` …) for the lines of a public def, _PRIVATE_DEF for a private def's lines (or any
    def after `private`), None outside defs. The shared walk of the controller and method chunkers."""
    seen: dict[str, int] = {}
    owner = _span_of_line(len(lines), spans)
    in_private = False
    key_of_span: dict[int, str] = {}
    for index, line in enumerate(lines):
        number = owner[index]
        if number < 0:
            in_private = in_private or bool(PRIVATE_LINE.match(line))
            yield index, None, in_private
            continue
        span = spans[number]
        if in_private or span.private_def:
            yield index, _PRIVATE_DEF, in_private
            continue
        if number not in key_of_span:
            key_of_span[number] = prefix + _numbered(name_of(span.def_text), seen)
        yield index, key_of_span[number], in_private


def controller_sections(lines: Sequence[str], spans: Sequence[MethodSpan]) -> Sections:
    """ControllerChunker: `summary` (class line, filters, everything from `private` on) + one
    `action_<name>` per public def. Unlike the gem, a repeated action name is numbered (`@2`)
    instead of replacing the earlier body."""
    summary: list[int] = []
    actions: dict[str, list[int]] = {}
    for index, key, _after_private in _member_lines(lines, spans, "action_", action_name):
        if key is None or key == _PRIVATE_DEF:
            summary.append(index)
        else:
            actions.setdefault(key, []).append(index)
    return [(SUMMARY, summary), *actions.items()]


def method_sections(lines: Sequence[str], spans: Sequence[MethodSpan]) -> Sections:
    """MethodChunker: `summary` (declaration, includes, DSL calls before and between public
    methods), `method_<name>` per public method (repeats `@2` …), and one `private_methods`
    bundle (the `private` marker and everything after it)."""
    summary: list[int] = []
    methods: dict[str, list[int]] = {}
    private: list[int] = []
    for index, key, after_private in _member_lines(lines, spans, "method_", method_name):
        if key == _PRIVATE_DEF or (key is None and after_private):
            private.append(index)
        elif key is None:
            summary.append(index)
        else:
            methods.setdefault(key, []).append(index)
    return [(SUMMARY, summary), *methods.items(), (PRIVATE_METHODS, private)]


def unit_sections(
    unit: Unit, detection: MethodDetection = "ast", members: Sequence[Unit] | None = None
) -> Sections | None:
    """The unit's sections by its type, or None for a unit the gem keeps whole (a type it does not
    split, or a non-Ruby unit: the classifiers read Ruby lines). With `members` (the unit's
    member units, from extraction), method ranges come from them instead of `detection`."""
    if unit.language != "ruby" or unit.type not in SEMANTIC_UNIT_TYPES:
        return None
    source = unit.source_code or ""
    lines = split_lines(source)
    spans = member_method_spans(unit, members) if members is not None else method_spans(source, detection)
    if unit.type == "model":
        return model_sections(lines, spans)
    if unit.type == "controller":
        return controller_sections(lines, spans)
    return method_sections(lines, spans)


# ---------------------------------------------------------------------------------------------
# Chunks


def _section_chunk(unit: Unit, chunk_type: str, content: str, line_indexes: Sequence[int]) -> SemanticChunk:
    absolute = tuple(unit.line_start + index for index in line_indexes)
    contiguous = absolute[-1] - absolute[0] + 1 == len(absolute)
    return SemanticChunk(chunk_type, f"{unit.identifier}#{chunk_type}", content, absolute[0], absolute[-1],
                         contiguous, absolute)


def _fits(content: str, count: TokenCounter, max_tokens: int, prefix: str | None) -> bool:
    text = content if prefix is None else embedding_text(prefix, content)
    return count(text) <= max_tokens


def _split_oversize(unit: Unit, chunk: SemanticChunk, count: TokenCounter, max_tokens: int,
                    prefix: str | None) -> list[SemanticChunk]:
    """The safety net: a chunk over the limit becomes `<type>_part_<i>` chunks by greedy line
    packing (an over-long line cut at character boundaries), each verified with a real count;
    the parts concatenate to the chunk's content. Raises InputTooLongError when not even one
    character fits beside the prefix."""
    if _fits(chunk.content, count, max_tokens, prefix):
        return [chunk]
    # Packing always counts prefix + "\n" + part; with no prefix that is one extra newline,
    # which costs a word-piece or whitespace counter nothing and the estimate one character.
    splitter = Splitter(chunk.content, prefix or "", count, max_tokens)
    if splitter.budget <= 0:
        text = embedding_text(prefix or "", chunk.content[:1])
        raise InputTooLongError(count(text), max_tokens, text)
    spans = splitter.pack(splitter.line_pieces(0, len(chunk.content)))
    # Offsets of the chunk's lines in its content, to map each part back to file lines.
    starts, position = [], 0
    for line in split_lines(chunk.content):
        starts.append(position)
        position += len(line)
    parts = []
    for number, (start, end) in enumerate(spans):
        first = bisect_right(starts, start) - 1
        last = bisect_left(starts, end) - 1
        lines = chunk.lines[first : last + 1]
        chunk_type = f"{chunk.chunk_type}_part_{number}"
        parts.append(SemanticChunk(chunk_type, f"{unit.identifier}#{chunk_type}", chunk.content[start:end],
                                   lines[0], lines[-1], lines[-1] - lines[0] + 1 == len(lines), lines))
    return parts


def semantic_chunks(
    unit: Unit,
    *,
    threshold_tokens: int = DEFAULT_THRESHOLD_TOKENS,
    count_tokens: TokenCounter | None = None,
    max_tokens: int | None = None,
    prefix: str | None = None,
    method_detection: MethodDetection = "ast",
    members: Sequence[Unit] | None = None,
) -> list[SemanticChunk]:
    """The unit's semantic chunks, as the gem's SemanticChunker emits them.

    Blank source → []; at most `threshold_tokens` estimated tokens, a type the gem does not split,
    or a non-Ruby unit → one `whole` chunk; a model, controller or METHOD_CHUNKABLE_TYPES unit → its non-blank
    sections in the gem's order. With `max_tokens`, every chunk is kept within it (counted by
    `count_tokens`, default the ceil(len/4) estimate; with `prefix`, counting the embedding
    text prefix + "\\n" + content) by the `_part_` safety net.
    """
    source = unit.source_code or ""
    if not source.strip():
        return []
    sections = None if estimated_tokens(source) <= threshold_tokens else unit_sections(unit, method_detection, members)
    if sections is None:
        line_count = len(split_lines(source))
        chunks = [_section_chunk(unit, CHUNK_WHOLE, source, range(line_count))]
    else:
        lines = split_lines(source)
        chunks = []
        for name, indexes in sections:
            content = "".join(lines[index] for index in indexes)
            if content.strip():  # the gem drops empty chunks (Chunk#empty?)
                chunks.append(_section_chunk(unit, name, content, indexes))
    if max_tokens is None:
        return chunks
    count = count_tokens or estimated_tokens
    return [part for chunk in chunks for part in _split_oversize(unit, chunk, count, max_tokens, prefix)]


def semantic_unit_chunks(
    unit: Unit,
    count_tokens: TokenCounter,
    max_tokens: int,
    *,
    base_id: str | None = None,
    method_detection: MethodDetection = "ast",
    prefix: str | None = None,
    members: Sequence[Unit] | None = None,
) -> list[Chunk] | None:
    """Embedding chunks along the unit's sections, for `chunking.chunk_unit` when a unit does not
    fit the embedder; None when the unit is not a Ruby unit the gem splits semantically, or when it
    has fewer than two non-blank sections (plain member/line packing is then as good).

    `members` (the unit's member units) give the method ranges when known (see
    `member_method_spans`). Every chunk's text (prefix + "\\n" + content) fits `max_tokens`; ids are `<base>#chunk_<i>`
    in section order; `chunk_type` is the section's (`summary`, `action_show`, `methods_part_0` …);
    the chunks' lines cover every non-blank line of the source; a chunk's line range is its first
    to last line, which may enclose lines of other sections.
    """
    if unit.language != "ruby" or unit.type not in SEMANTIC_UNIT_TYPES:
        return None
    prefix = unit_embedding_prefix(unit) if prefix is None else prefix
    sections = semantic_chunks(unit, threshold_tokens=0, method_detection=method_detection, members=members)
    if len(sections) < 2:
        return None
    base = base_id if base_id is not None else unit.identifier
    pieces = [part for section in sections
              for part in _split_oversize(unit, section, count_tokens, max_tokens, prefix)]
    return [
        Chunk(embedding_id=chunk_id(base, index), unit_identifier=unit.identifier, unit_type=unit.type,
              index=index, chunk_type=piece.chunk_type, content=piece.content, line_start=piece.line_start,
              line_end=piece.line_end, text=embedding_text(prefix, piece.content))
        for index, piece in enumerate(pieces)
    ]
