"""Extraction identity check: two versions of woods extract the same files into the same units.

Why: a refactor of the extractors (the language registry, the one draft type) must change no unit
any language yields — not an identifier, a line, a lookup candidate's order or a warning. This
runs each version of the code in its own interpreter over every file of the given trees, exactly
as the index does (`discover`, the repository layout from the whole file list, `extract_file`),
and compares what the two wrote byte for byte: per file its language, units (`Unit.to_raw`:
identifier, type, language, file, lines, namespace, signature, docstring, parent, metadata,
dependencies with their lookups, source) in order, warnings and file metadata, or the error the
extractor raised.

    python bench/extract_identity.py --old /tmp/lang-base --new . \
        [--root fixtures/ruby_gem …] [--fixtures] [--semble-dev] [--redmine DIR] [--repeat N] [--json]

`--old`/`--new` are source trees (a checkout, or `git archive REV | tar -x -C DIR`); `--fixtures`
adds every directory under the new tree's `fixtures/`, `--semble-dev` every checkout under
/tmp/semble-dev/checkouts (`python3 /work/shared/semble-dev/run.py prepare`). Files only one
version extracts (a language the old code did not have) are counted apart, not compared.
Exit status 0 when every common file is identical, 1 otherwise.

`--repeat N` also times extraction, per language, the same way in both versions: each file is
extracted N more times after the compared run and its fastest run counts (CPU time of the thread,
`time.thread_time`, so other processes on a loaded machine do not inflate it; the minimum drops
the runs a cache miss or preemption slowed). The two versions run one after the other, twice in
alternation (old, new, old, new), and each language keeps each version's faster pass.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
SEMBLE_DEV = Path("/tmp/semble-dev/checkouts")
MAX_EXAMPLES = 10


def dump(code: Path, roots: list[Path], out: Path, repeat: int = 0) -> None:
    """In this interpreter, with `code` first on sys.path: one JSON line per indexed file, and with
    `repeat` the fastest of `repeat` more extractions of each file, summed per language (`out`
    with `.timing.json` appended)."""
    sys.path.insert(0, str(code))
    from woods.discovery import discover
    from woods.extract import extract_file
    from woods.extract.layout import RepositoryLayout

    seconds: Counter[str] = Counter()
    files: Counter[str] = Counter()
    with out.open("w", encoding="utf-8") as sink:
        for root in roots:
            found = discover(root)
            layout = RepositoryLayout.from_paths(item.path for item in found.files)
            for item in found.files:
                record: dict[str, Any] = {"root": str(root), "path": item.path, "discovered": item.language}
                try:
                    data = (root / item.path).read_bytes()
                except OSError as exc:
                    record["error"] = f"unreadable: {exc.__class__.__name__}"
                else:
                    try:
                        extraction = extract_file(item.path, data, layout)
                    except Exception as exc:  # recorded and compared: both versions must fail alike
                        record["error"] = f"{exc.__class__.__name__}: {exc}"
                    else:
                        record["language"] = extraction.language
                        record["units"] = [unit.to_raw() for unit in extraction.units]
                        record["warnings"] = list(extraction.warnings)
                        record["metadata"] = extraction.metadata
                        if repeat:
                            seconds[extraction.language] += _fastest(extract_file, item.path, data, layout, repeat)
                            files[extraction.language] += 1
                sink.write(json.dumps(record, ensure_ascii=False, default=repr) + "\n")
    if repeat:
        timing = {lang: {"files": files[lang], "seconds": round(seconds[lang], 6)} for lang in sorted(files)}
        Path(f"{out}.timing.json").write_text(json.dumps(timing, indent=1), encoding="utf-8")


def _fastest(extract: Any, path: str, data: bytes, layout: Any, repeat: int) -> float:
    """CPU seconds of this thread for the fastest of `repeat` extractions of one file."""
    best = float("inf")
    for _ in range(repeat):
        started = time.thread_time()
        extract(path, data, layout)
        best = min(best, time.thread_time() - started)
    return best


def run_dump(code: Path, roots: list[Path], out: Path, repeat: int = 0) -> None:
    argv = [sys.executable, str(Path(__file__).resolve()), "--dump", str(out), "--code", str(code),
            "--repeat", str(repeat)]
    for root in roots:
        argv += ["--root", str(root)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(code)}
    subprocess.run(argv, env=env, check=True)


def _records(path: Path) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    with path.open(encoding="utf-8") as source:
        for line in source:
            record = json.loads(line)
            found[(record["root"], record["path"])] = line
    return found


def compare(old: Path, new: Path) -> dict[str, Any]:
    """Counts of what was compared, and the files that differ."""
    before, after = _records(old), _records(new)
    counts: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    differing: list[str] = []
    only_new: Counter[str] = Counter()
    only_old: Counter[str] = Counter()
    for key, line in after.items():
        if key not in before:
            only_new[json.loads(line)["discovered"]] += 1
    for key, line in before.items():
        if key not in after:
            only_old[json.loads(line)["discovered"]] += 1
            continue
        counts["files"] += 1
        record = json.loads(line)
        languages[record.get("language", "error")] += 1
        counts["units"] += len(record.get("units", ()))
        counts["dependencies"] += sum(len(u["dependencies"]) for u in record.get("units", ()))
        counts["warnings"] += len(record.get("warnings", ()))
        counts["errors"] += "error" in record
        counts["bytes_compared"] += len(line)
        if after[key] != line:
            differing.append(f"{key[0]}: {key[1]}")
    return {
        "identical": not differing and not only_old,
        "compared": dict(counts),
        "files_by_language": dict(sorted(languages.items())),
        "differing_files": len(differing),
        "differing_examples": differing[:MAX_EXAMPLES],
        "only_old_by_language": dict(sorted(only_old.items())),
        "only_new_by_language": dict(sorted(only_new.items())),
    }


def _timing(dump_path: Path) -> dict[str, dict[str, float]]:
    loaded: dict[str, dict[str, float]] = json.loads(Path(f"{dump_path}.timing.json").read_text(encoding="utf-8"))
    return loaded


def _timing_report(first: dict[str, dict[str, dict[str, float]]],
                   second: dict[str, dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per language (and all of them): each version's faster pass, and new over old."""
    rows: dict[str, dict[str, float]] = {}
    languages = sorted(set(first["old"]) & set(first["new"]))
    for lang in languages:
        old = min(first["old"][lang]["seconds"], second["old"][lang]["seconds"])
        new = min(first["new"][lang]["seconds"], second["new"][lang]["seconds"])
        rows[lang] = {"files": first["old"][lang]["files"], "old": old, "new": new, "ratio": round(new / old, 3) if old else 0.0}
    old_total = sum(r["old"] for r in rows.values())
    new_total = sum(r["new"] for r in rows.values())
    rows["all"] = {"files": sum(r["files"] for r in rows.values()), "old": old_total, "new": new_total,
                   "ratio": round(new_total / old_total, 3) if old_total else 0.0}
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, help="source tree of the old version")
    parser.add_argument("--new", type=Path, default=BENCH_DIR.parent, help="source tree of the new version")
    parser.add_argument("--root", type=Path, action="append", default=[], help="a tree to extract (repeatable)")
    parser.add_argument("--fixtures", action="store_true", help="every directory under the new tree's fixtures/")
    parser.add_argument("--semble-dev", action="store_true", help=f"every checkout under {SEMBLE_DEV}")
    parser.add_argument("--redmine", type=Path, help="an unpacked Redmine (apt-get download redmine)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/extract-identity"), help="where the dumps go")
    parser.add_argument("--repeat", type=int, default=0, help="also time extraction: the fastest of N runs per file")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)  # worker: write one version's dump
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    roots = [root.resolve() for root in args.root]
    if args.dump is not None:
        dump(args.code, roots, args.dump, args.repeat)
        return 0
    if args.old is None:
        parser.error("--old is required")
    if args.fixtures:
        roots += sorted(p for p in (args.new / "fixtures").resolve().iterdir() if p.is_dir())
    if args.semble_dev:
        roots += sorted(p for p in SEMBLE_DEV.iterdir() if p.is_dir())
    if args.redmine is not None:
        roots.append(args.redmine.resolve())
    if not roots:
        parser.error("nothing to extract: give --root, --fixtures, --semble-dev or --redmine")
    args.work.mkdir(parents=True, exist_ok=True)
    old_dump, new_dump = args.work / "old.jsonl", args.work / "new.jsonl"
    run_dump(args.old.resolve(), roots, old_dump, args.repeat)
    run_dump(args.new.resolve(), roots, new_dump, args.repeat)
    report: dict[str, Any] = {"roots": len(roots), **compare(old_dump, new_dump)}
    if args.repeat:
        first = {v: _timing(args.work / f"{v}.jsonl") for v in ("old", "new")}
        run_dump(args.old.resolve(), roots, args.work / "old-2.jsonl", args.repeat)
        run_dump(args.new.resolve(), roots, args.work / "new-2.jsonl", args.repeat)
        second = {v: _timing(args.work / f"{v}-2.jsonl") for v in ("old", "new")}
        report["timing"] = _timing_report(first, second)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        compared = report["compared"]
        print(f"roots {report['roots']}, files {compared.get('files', 0)}, units {compared.get('units', 0)}, "
              f"dependencies {compared.get('dependencies', 0)}, warnings {compared.get('warnings', 0)}, "
              f"errors {compared.get('errors', 0)}, {compared.get('bytes_compared', 0):,} bytes")
        print(f"by language: {report['files_by_language']}")
        if report["only_new_by_language"] or report["only_old_by_language"]:
            print(f"only new: {report['only_new_by_language']}; only old: {report['only_old_by_language']}")
        print("identical" if report["identical"] else f"DIFFERENT: {report['differing_files']} files")
        for example in report["differing_examples"]:
            print(f"  {example}")
        if "timing" in report:
            print(f"\n{'language':12} {'files':>6} {'old CPU s':>10} {'new CPU s':>10} {'new/old':>8}")
            for lang, row in report["timing"].items():
                print(f"{lang:12} {row['files']:6d} {row['old']:10.3f} {row['new']:10.3f} {row['ratio']:8.3f}")
    return 0 if report["identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
