"""Step 1-2 of the build: check out the pinned corpus and turn it into the texts woods embeds.

Each repository of corpus.json is unpacked at its pinned commit (`git archive` from the fetched
bare snapshot) and run through woods's own discovery → extraction → linking → chunking code
(`woods.indexing.plan.prepare_texts` with the MiniLM token counter and its 256-token limit), so the
chunk texts are byte for byte what `woods index` would embed for that repository. Beside them it
writes short natural-language texts derived from the same units — a docstring's first sentence, a
Markdown section's heading and first paragraph, an identifier turned into words — so that questions
land near the code that answers them.

Sampling is stratified by language (woods's unit language; documents and configuration count as
their own languages) and, inside a language, round-robin over its repositories, each list shuffled
with the build seed: no repository or language crowds out the others.

Output: texts.jsonl, one {"text", "language", "repo", "kind"} object a line (kind: chunk / nl).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from common import MIRRORS, load_corpus, log_step

from woods.limits import DEFAULT_MAX_FILE_BYTES

# Natural-language texts are short: a sentence or a heading and its first paragraph.
NL_MAX_CHARS = 300
NL_MIN_WORDS = 3


def checkout(repo: str, commit: str, target: Path) -> Path:
    """Unpack `repo` at `commit` from its fetched bare snapshot into `target` (once)."""
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        raise SystemExit(f"{repo}: no snapshot at {git_dir}; fetch github:{repo} first")
    done = target / ".woods-train-commit"
    if done.is_file() and done.read_text().strip() == commit:
        return target
    target.mkdir(parents=True, exist_ok=True)
    # Blob by blob rather than `git archive`: snapshots lack files of 4 MiB and more, which woods
    # would skip as too large anyway (DEFAULT_MAX_FILE_BYTES), so those are left out here too.
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-l", "-z", commit],
                             capture_output=True, check=True).stdout.split(b"\0")
    wanted: list[tuple[str, str]] = []
    for row in listing:
        if not row:
            continue
        meta, path = row.split(b"\t", 1)
        mode, kind, sha, size = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755") and size.isdigit() and int(size) <= DEFAULT_MAX_FILE_BYTES:
            wanted.append((sha.decode(), path.decode("utf-8", "surrogateescape")))
    batch = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert batch.stdin is not None and batch.stdout is not None
    for sha, path in wanted:
        batch.stdin.write(sha.encode() + b"\n")
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        destination = target / path
        if ".." in Path(path).parts:
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)
    batch.stdin.close()
    batch.wait()
    done.write_text(commit + "\n")
    return target


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def identifier_words(identifier: str) -> str:
    """`Billing::Invoice#charge_later` → `invoice charge later` (the last two name parts, as words)."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", identifier) if p][-2:]
    words: list[str] = []
    for part in parts:
        for piece in _CAMEL.split(part):
            words.extend(w.lower() for w in re.split(r"_+|(?<=[A-Za-z])(?=\d)", piece) if w)
    return " ".join(words)


def first_sentence(docstring: str) -> str:
    text = " ".join(line.strip(" \t*/#-!") for line in docstring.strip().splitlines()).strip()
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return (match.group(1) if match else text)[:NL_MAX_CHARS]


def document_text(unit_identifier: str, source: str) -> str:
    """A Markdown section's heading and first paragraph."""
    heading = ""
    paragraph: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and not heading:
            heading = stripped.lstrip("#").strip()
            continue
        if not stripped:
            if paragraph:
                break
            continue
        if stripped.startswith(("```", "|", "<", "!", "[![")):
            if paragraph:
                break
            continue
        paragraph.append(stripped)
    return (heading + ". " + " ".join(paragraph)).strip(". ")[:NL_MAX_CHARS] if heading or paragraph else ""


# A natural-language text is mostly letters: a heading of `*****` or a table row of numbers is not one.
MIN_LETTER_SHARE = 0.6


def is_prose(text: str) -> bool:
    """Whether a natural-language text is prose (also keeps it far inside the teacher's 256 tokens)."""
    return sum(c.isalpha() or c.isspace() for c in text) >= MIN_LETTER_SHARE * len(text)


def natural_texts(units: Iterable[object]) -> list[tuple[str, str]]:
    """(language, text) natural-language texts derived from units."""
    out: list[tuple[str, str]] = []
    for unit in units:
        language, kind = unit.language, unit.type  # type: ignore[attr-defined]
        if kind == "document":
            text = document_text(unit.identifier, unit.source_code or "")  # type: ignore[attr-defined]
            if len(text.split()) >= NL_MIN_WORDS:
                out.append((language, text))
            continue
        doc = unit.docstring  # type: ignore[attr-defined]
        if doc:
            sentence = first_sentence(doc)
            if len(sentence.split()) >= NL_MIN_WORDS:
                out.append((language, sentence))
        words = identifier_words(unit.identifier)  # type: ignore[attr-defined]
        if len(words.split()) >= 2:
            out.append((language, words))
    return out


def repo_texts(root: Path, max_files: int, seed: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(chunk texts, natural-language texts) of one checked-out repository, as (language, text).

    A repository with more than `max_files` indexable files is cut to a seeded sample of them
    (parsing is most of this step's time, and the per-language cap keeps only a sample anyway):
    the texts are still woods's texts of those files, linked within the sample."""
    from woods.discovery import discover
    from woods.embedding.encoder import load_wordpiece_tokenizer, minilm_model_dir, read_max_seq_length
    from woods.extract.layout import RepositoryLayout
    from woods.indexing.generation import link_units
    from woods.indexing.parse import extract_files
    from woods.indexing.pipeline import go_module_aliases
    from woods.indexing.plan import prepare_texts
    from woods.indexing.summary import IndexSummary, SilentProgress

    model_dir = minilm_model_dir()
    tokenizer = load_wordpiece_tokenizer(model_dir)

    class Counter:
        """Just what chunking asks of the provider: the teacher's token count and limit."""

        max_input_tokens = read_max_seq_length(model_dir)

        def count_tokens(self, text: str) -> int:
            return len(tokenizer.encode(text).ids)

    files = list(discover(root).files)
    if len(files) > max_files:
        files = sorted(random.Random(seed).sample(files, max_files), key=lambda f: f.path)
    layout = RepositoryLayout.from_paths(f.path for f in files)
    units, _rows = extract_files(root, files, SilentProgress(), IndexSummary(str(root), ""), workers=2,
                                 layout=layout)
    go_mods = [p.relative_to(root).as_posix() for p in [root / "go.mod", *root.glob("*/go.mod")] if p.is_file()]
    linked = link_units(units, link=True, prefix_aliases=go_module_aliases(root, go_mods))
    language_of = {key: unit.language for key, unit in linked.keyed}
    prepared = prepare_texts(linked.keyed, Counter(), True, SilentProgress(), {}, lambda _sha: False,  # type: ignore[arg-type]
                             linked.children)
    chunks = [(language_of[p.key], p.text) for p in prepared if p.text and p.text.strip()]
    return chunks, natural_texts(u for _k, u in linked.keyed)


def stratified(per_repo: dict[str, dict[str, list[str]]], cap: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """At most `cap` texts per language, round-robin over that language's repositories."""
    by_language: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for repo, languages in sorted(per_repo.items()):
        for language, texts in sorted(languages.items()):
            shuffled = list(texts)
            rng.shuffle(shuffled)
            by_language[language][repo] = shuffled
    out: list[tuple[str, str, str]] = []
    for language, repos in sorted(by_language.items()):
        taken = 0
        queues = {repo: iter(texts) for repo, texts in sorted(repos.items())}
        while queues and taken < cap:
            for repo in sorted(queues):
                text = next(queues[repo], None)
                if text is None:
                    del queues[repo]
                    continue
                out.append((language, repo, text))
                taken += 1
                if taken >= cap:
                    break
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunks-per-language", type=int, default=6000)
    parser.add_argument("--nl-per-language", type=int, default=2000)
    parser.add_argument("--max-files-per-repo", type=int, default=150)
    parser.add_argument("--cached-only", action="store_true", help="use only repositories already extracted (a quick build)")
    parser.add_argument("--out", type=Path, default=None, help="default: <work>/texts.jsonl")
    args = parser.parse_args()
    work: Path = args.work
    rng = random.Random(args.seed)
    corpus = load_corpus()
    chunk_pool: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    nl_pool: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    seen: set[str] = set()
    cache = work / "repo-texts"
    cache.mkdir(parents=True, exist_ok=True)
    with log_step(work, "texts"):
        for entry in corpus:
            repo, commit = entry["repo"], entry["commit"]
            cached = cache / f"{repo.replace('/', '+')}@{commit[:12]}-{args.max_files_per_repo}.json"
            if not cached.is_file():
                if args.cached_only:
                    continue
                root = checkout(repo, commit, work / "checkouts" / repo.replace("/", "+"))
                chunks, nl = repo_texts(root, args.max_files_per_repo, args.seed)
                cached.write_text(json.dumps({"chunks": chunks, "nl": nl}))
            data = json.loads(cached.read_text())
            for pool, rows in ((chunk_pool, data["chunks"]), (nl_pool, data["nl"])):
                for language, text in rows:
                    digest = hashlib.sha256(text.encode()).hexdigest()
                    if digest not in seen:
                        seen.add(digest)
                        pool[repo][language].append(text)
            print(f"{repo}: {len(data['chunks'])} chunks, {len(data['nl'])} natural-language texts", flush=True)
        rows = [(lang, repo, text, "chunk") for lang, repo, text in stratified(chunk_pool, args.chunks_per_language, rng)]
        rows += [(lang, repo, text, "nl") for lang, repo, text in stratified(nl_pool, args.nl_per_language, rng)
                 if is_prose(text)]
        # Shuffled (seeded): a teacher run stopped part-way still covers every language and kind.
        rng.shuffle(rows)
        with open(args.out or work / "texts.jsonl", "w", encoding="utf-8") as handle:
            for language, repo, text, kind in rows:
                handle.write(json.dumps({"text": text, "language": language, "repo": repo, "kind": kind}) + "\n")
        counts: dict[str, int] = defaultdict(int)
        for language, _repo, _text, kind in rows:
            counts[f"{kind}:{language}"] += 1
        print(json.dumps(dict(sorted(counts.items()))), flush=True)
        print(f"{len(rows)} texts", flush=True)


if __name__ == "__main__":
    main()
