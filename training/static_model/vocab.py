"""Step 4 of the build: the code-aware vocabulary — whole code words mined from the corpus.

The teacher's WordPiece vocabulary (30,522 uncased pieces) cuts code words it never saw into
continuation pieces (`kwargs` → `kw ##ar ##gs`), and a static model gives `##ar` one vector for every
word it appears in. Here every corpus text is split the way the run-time encoder splits it
(`woods.embedding.static.split_identifiers`: camelCase, snake_case, letters/digits), cut into words
at whitespace and punctuation as the teacher's pre-tokenizer cuts them, and lowercased; a word that is not already one WordPiece token
is kept whole when it is common (at least MIN_COUNT occurrences) and not one repository's private
name (in at least MIN_REPOS repositories). The MAX_WORDS most frequent are written to
vocabulary.txt (ties broken alphabetically), for the distillation step to add to the tokenizer.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from common import log_step

from woods.embedding.static import split_identifiers

MIN_COUNT = 40
MIN_REPOS = 4
MAX_WORDS = 20000
# Words of ASCII letters only, 3-24 long, as the teacher's pre-tokenizer cuts them (at whitespace
# and punctuation): digits are split off at run time, longer runs are hashes or base64.
LETTERS = re.compile(r"(?<![A-Za-z0-9])[a-z]{3,24}(?![A-Za-z0-9])")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--teacher-tokenizer", type=Path, required=True)
    parser.add_argument("--max-words", type=int, default=MAX_WORDS)
    args = parser.parse_args()
    from tokenizers import Tokenizer

    teacher = Tokenizer.from_file(str(args.teacher_tokenizer))
    known = set(teacher.get_vocab())
    counts: Counter[str] = Counter()
    repos: dict[str, set[str]] = defaultdict(set)
    with log_step(args.work, "vocab"):
        for path in sorted((args.work / "repo-texts").glob("*.json")):
            repo = path.name.split("@")[0]
            data = json.loads(path.read_text())
            for _language, text in data["chunks"] + data["nl"]:
                for word in LETTERS.findall(split_identifiers(text).lower()):
                    if word not in known:
                        counts[word] += 1
                        repos[word].add(repo)
        kept = [(w, c) for w, c in counts.items() if c >= MIN_COUNT and len(repos[w]) >= MIN_REPOS]
        kept.sort(key=lambda item: (-item[1], item[0]))
        words = [w for w, _c in kept[: args.max_words]]
        (args.work / "vocabulary.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
        print(f"{len(counts)} unknown words, {len(kept)} common; kept {len(words)}: {words[:40]}", flush=True)


if __name__ == "__main__":
    main()
