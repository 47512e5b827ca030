"""Build the resolve reference set (`bench/resolve_refs.json`) from indexes of the semble-dev repositories.

Why: `woods resolve` is judged on references a person would type about code nobody here wrote.
For each sampled public definition the set holds its bare name, a short qualified name and two
English phrasings ("the json method of ClientResponse", "ClientResponse's json", "json in
client_reqrep.py" …). The expected answer is decided here, independently of woods' resolver, by
distinct qualified names: a reference that describes exactly one identifier expects that unit,
several expect `ambiguous`.

Rules (documented so the expectations can be checked by hand):

- Candidates are the units of the index. Library code is preferred the way `woods.paths` defines
  it (issue 14, kind 3): when at least one matching identifier lies outside tests, examples and
  fixtures, only those count; otherwise all of them count.
- A module unit does not count beside a definition of the same name in its own file (a file
  named after the class it defines is one definition).
- A name matches a unit when it equals the identifier's last segment exactly (the extractors'
  `#2` duplicate marker and a Java parameter list dropped).
- `Owner.name` / "the name method of Owner" / "Owner's name": the unit's parent (or the segment
  before its name) is spelled `Owner`.
- "the name K": K's unit types (class-like for "class", function/method for "function" …).
- "name in M" (module): M's own members named so (`M.name`), else units in M's file; "name in
  f.py" (file): units in a file of that base name.

Sampling: public definitions (last segment not starting with `_`, library code, no `#N`
duplicate), per language over all of that language's repositories, `--per-language` of them with
a fixed seed; candidate lists are sorted before sampling, so the set is reproducible from the same
indexes.

    python bench/resolve_refs_generate.py --stores /tmp/resolve-stores [--per-language 30] [--seed 14]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from woods.paths import EXAMPLE, FIXTURE, TEST, identifier_roles, path_roles  # noqa: E402

OUT = REPO / "bench" / "resolve_refs.json"
DEFAULT_SEED = 14  # the issue number: any fixed value makes the set reproducible
DEFAULT_PER_LANGUAGE = 30  # 30 definitions x 4 references x ~7 languages: ~800 references, minutes to run
# Roles a reference does not mean unless it says so (issue 14, kind 3).
NON_LIBRARY = frozenset({TEST, EXAMPLE, FIXTURE})
# Languages whose `module` units are definitions (Ruby `module`, Elixir `defmodule`); elsewhere a module is a file.
DEFINITION_MODULE_LANGUAGES = frozenset({"ruby", "elixir"})
_SPLIT = re.compile(r"::|[#./:]")
_DEDUP = re.compile(r"#\d+\Z")
_ARITY = re.compile(r"/\d+\Z")  # Elixir `Mod.fun/2`

# Unit type -> the English word a person uses for it.
KIND_WORD = {
    "class": "class", "struct": "struct", "interface": "interface", "trait": "trait", "enum": "enum",
    "type": "type", "type_alias": "type", "module": "module", "method": "method", "function": "function",
    "model": "class", "controller": "class", "object": "class", "union": "struct", "data": "type",
    "newtype": "type", "protocol": "interface", "macro": "macro",
}
# English word -> unit types it covers (the truth side of the phrasings).
WORD_TYPES = {
    "class": {"class", "struct", "model", "controller", "interface", "trait", "enum", "type", "type_alias", "object",
              "union", "data", "newtype", "protocol", "record"},
    "struct": {"struct", "class", "type"},
    "interface": {"interface", "trait", "protocol", "type"},
    "trait": {"trait", "interface"},
    "enum": {"enum", "type"},
    "type": {"type", "type_alias", "struct", "interface", "enum", "class"},
    "module": {"module"},
    "method": {"method", "function", "macro", "callback"},
    "function": {"function", "method", "macro", "callback"},
    "macro": {"macro", "function", "method", "callback"},
}


@dataclass(frozen=True)
class Row:
    identifier: str
    type: str
    language: str
    file_path: str
    parent: str | None
    repo: str

    @property
    def bare(self) -> str:
        segments = segments_of(self.identifier)
        return segments[-1] if segments else self.identifier

    @property
    def owner(self) -> str | None:
        segments = segments_of(self.identifier)
        return segments[-2] if len(segments) > 1 else None

    @property
    def library(self) -> bool:
        # woods.paths' rules (shared with ranking), plus test units themselves (Zig `test "x"`).
        return (
            self.type != "test"
            and not (set(path_roles(self.file_path)) & NON_LIBRARY)
            and not identifier_roles(segments_of(self.identifier))
        )


def segments_of(identifier: str) -> list[str]:
    bare = _ARITY.sub("", _DEDUP.sub("", identifier)).split("(", 1)[0]
    return [s for s in _SPLIT.split(bare) if s]


def load_rows(store: Path, repo: str) -> list[Row]:
    generation = json.loads((store / "CURRENT").read_text())["generation"]
    path = store / "generations" / generation / "metadata.sqlite3"
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT identifier, type, language, file_path, parent FROM units ORDER BY identifier, type, file_path"
        ).fetchall()
    finally:
        conn.close()
    return [Row(str(i), str(t), str(lang), str(f), p, repo) for i, t, lang, f, p in rows]


def is_definition(row: Row, parents: dict[str, str]) -> bool:
    if row.type not in KIND_WORD or not row.library or _DEDUP.search(row.identifier):
        return False
    if row.type == "module" and row.language not in DEFINITION_MODULE_LANGUAGES:
        return False
    bare = row.bare
    if not bare or bare.startswith("_") or not bare[0].isalpha() or len(bare) < 3:
        return False
    # A member of a function (a closure) is no public definition.
    return not (row.parent and parents.get(row.parent) in ("function", "method"))


class Truth:
    """The expected answer of a description over one repository's units."""

    def __init__(self, rows: list[Row]) -> None:
        self.by_bare: dict[str, list[Row]] = defaultdict(list)
        self.module_files: dict[str, set[str]] = defaultdict(set)
        for row in rows:
            self.by_bare[row.bare].append(row)
            if row.type == "module":
                for name in {row.identifier, segments_of(row.identifier)[-1] if segments_of(row.identifier) else ""}:
                    if name:
                        self.module_files[name].add(row.file_path)

    def expect(self, name: str, *, word: str | None = None, owner: str | None = None,
               module: str | None = None, file: str | None = None) -> str:
        matches = list(self.by_bare.get(name, ()))
        if word is not None:
            matches = [r for r in matches if r.type in WORD_TYPES[word]]
        if owner is not None:
            matches = [r for r in matches if r.owner == owner]
        if module is not None:  # the module's own members first (`web_routedef.put`), else anything in its file
            files = self.module_files.get(module, set())
            direct = [r for r in matches if r.file_path in files and r.owner == segments_of(module)[-1]]
            matches = direct or [r for r in matches if r.file_path in files]
        if file is not None:
            matches = [r for r in matches if PurePosixPath(r.file_path).name == file]
        library = [r for r in matches if r.library]
        chosen = library or matches
        # A module is the file of the definition it is named after (`TokenBucketLimiter.ts`), not a second definition.
        defined = {(r.file_path, r.bare) for r in chosen if r.type != "module"}
        chosen = [r for r in chosen if r.type != "module" or (r.file_path, r.bare) not in defined]
        identifiers = sorted({r.identifier for r in chosen})
        if not identifiers:
            return "none"
        return identifiers[0] if len(identifiers) == 1 else "ambiguous"


def member_separator(row: Row) -> str:
    if row.language == "ruby":
        return "." if "." in row.identifier.rsplit("::", 1)[-1] else "#"
    return "::" if row.language == "rust" else "."


def module_of(row: Row, module_by_file: dict[str, str]) -> str | None:
    module = module_by_file.get(row.file_path)
    if module is None:
        return None
    if row.language in ("javascript", "typescript", "rust", "go"):
        segments = segments_of(module)
        return segments[-1] if segments else None
    return module


def references(row: Row, truth: Truth, module_by_file: dict[str, str], rng: random.Random) -> list[dict[str, str]]:
    name, owner, word = row.bare, row.owner, KIND_WORD[row.type]
    file = PurePosixPath(row.file_path).name
    is_member = bool(row.parent) and row.owner is not None and row.parent not in module_by_file.values()
    refs: list[tuple[str, str, str]] = [("bare", name, truth.expect(name))]
    if is_member and owner:
        refs.append(("qualified", f"{owner}{member_separator(row)}{name}", truth.expect(name, owner=owner)))
        phrases = [
            (f"the {name} {word} of {owner}", truth.expect(name, word=word, owner=owner)),
            (f"{owner}'s {name}", truth.expect(name, owner=owner)),
            (f"{name} in {file}", truth.expect(name, file=file)),
        ]
    else:
        refs.append(("qualified", row.identifier, row.identifier))
        module = module_of(row, module_by_file)
        phrases = [
            (f"the {name} {word}", truth.expect(name, word=word)),
            (f"{name} in {file}", truth.expect(name, file=file)),
        ]
        if module and module != name:
            phrases.append((f"the {name} {word} in {module}", truth.expect(name, word=word, module=module)))
    for ref, expected in rng.sample(phrases, 2):
        refs.append(("phrase", ref, expected))
    return [
        {"ref": ref, "kind": kind, "expected": expected, "language": row.language, "repo": row.repo,
         "definition": row.identifier, "definition_type": row.type}
        for kind, ref, expected in refs
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stores", type=Path, required=True, help="directory holding one index per repository")
    parser.add_argument("--repo", action="append", default=[], help="only these repositories (repeatable)")
    parser.add_argument("--per-language", type=int, default=DEFAULT_PER_LANGUAGE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    repos = args.repo or sorted(p.name for p in args.stores.iterdir() if (p / "CURRENT").is_file())
    pools: dict[str, list[tuple[Row, Truth, dict[str, str]]]] = defaultdict(list)
    for repo in repos:
        rows = load_rows(args.stores / repo, repo)
        truth = Truth(rows)
        parents = {r.identifier: r.type for r in rows}
        module_by_file = {r.file_path: r.identifier for r in sorted(rows, key=lambda r: (r.file_path, r.identifier)) if r.type == "module"}
        for row in rows:
            if is_definition(row, parents):
                pools[row.language].append((row, truth, module_by_file))
    out: list[dict[str, str]] = []
    for language in sorted(pools):
        pool = sorted(pools[language], key=lambda item: (item[0].repo, item[0].identifier, item[0].type, item[0].file_path))
        rng = random.Random(f"{args.seed}:{language}")
        for row, truth, module_by_file in rng.sample(pool, min(args.per_language, len(pool))):
            out.extend(references(row, truth, module_by_file, rng))
    args.out.write_text(json.dumps({"seed": args.seed, "per_language": args.per_language, "repos": repos,
                                     "references": out}, indent=1) + "\n")
    print(f"{len(out)} references over {len(pools)} languages -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
