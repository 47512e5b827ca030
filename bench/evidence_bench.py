"""Evidence extraction from pasted text (issue 30, item 2): `looks_like_issue` precision and recall,
and the time `extract_evidence` takes on 8 KB texts — real samples and adversarial ones.

    HF_HUB_OFFLINE=1 PYTHONPATH=$PWD python bench/evidence_bench.py \
        [--annotations /work/shared/semble-dev/annotations] [--repeat 5] [--json]

Precision: every short query must read as a question, a symbol or a path — the semble-dev queries
(`--annotations`, 478), the Redmine questions (`bench/redmine_questions.json`, 77) and the
references people type to `woods resolve` (`bench/resolve_refs.json`, 1364); each one flagged as an
issue is listed. Recall: the share of the real samples under `fixtures/evidence/` (junk excluded)
flagged as issues; each one missed is listed.

Time: each sample repeated to 8 KB, and adversarial 8 KB texts (one character repeated, frame
prefixes without frames, unclosed quotes and brackets, deep nesting, random bytes), each timed
`--repeat` times (best of the repeats is one measurement, so a scheduler hiccup is not reported as
the module's cost). Both wall time and the process's CPU time are reported: on a shared machine the
wall time includes waiting for a core, the CPU time does not. The baseline in the same run:
`woods.tokens.query_terms` on the same texts — what the lexical side already spends cutting a query
into words.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench._common import latency_summary  # noqa: E402
from woods.retrieval.evidence import extract_evidence, looks_like_issue  # noqa: E402
from woods.tokens import query_terms  # noqa: E402

SAMPLES = REPO / "fixtures" / "evidence"
TEXT_BYTES = 8192


def read_sample(path: Path) -> str:
    """A sample's body (after its `---` header line), decoded as the tests decode it."""
    text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    return text.split("\n---\n", 1)[1]


def short_queries(annotations: Path) -> dict[str, list[str]]:
    queries: dict[str, list[str]] = {}
    if annotations.is_dir():
        queries["semble-dev"] = [q["query"] for f in sorted(annotations.glob("*.json"))
                                 for q in json.loads(f.read_text())]
    redmine = json.loads((REPO / "bench" / "redmine_questions.json").read_text())
    queries["redmine"] = [q["question"] for q in redmine["questions"]]
    refs = json.loads((REPO / "bench" / "resolve_refs.json").read_text())
    queries["resolve-refs"] = [r["ref"] for r in refs["references"]]
    return queries


def adversarial_texts() -> dict[str, str]:
    rng = random.Random(30)
    pieces = ["at ", 'File "', ":in `", "(", ")", ":", "1", ".go:", "#0 ", "`", "'", '"', "/", "\\", "a", " ",
              "\n", "::", ".", "Error", "@", "panicked at '", "goroutine 1 [running]:\n", "    at x.y(", "[", "]"]
    texts = {
        "one character": "a" * TEXT_BYTES,
        "one long line of path characters": ("a/b.c:" * 2000)[:TEXT_BYTES],
        "at at at": ("at " * 3000)[:TEXT_BYTES],
        "unclosed parentheses": ("at a (" * 2000)[:TEXT_BYTES],
        "File quotes": ('File "' * 2000)[:TEXT_BYTES],
        "ruby :in without quotes": ("x.rb:1:in " * 1000)[:TEXT_BYTES],
        "digits and colons": ("1:" * 5000)[:TEXT_BYTES],
        "backticks": ("`" * TEXT_BYTES),
        "nesting": ("(" * 4000 + ")" * 4000)[:TEXT_BYTES],
        "qualified name": ("a." * 5000)[:TEXT_BYTES],
        "error suffixes": ("XError." * 2000)[:TEXT_BYTES],
        "php hashes": ("#1 a(" * 2000)[:TEXT_BYTES],
        "random tokens": "".join(rng.choice(pieces) for _ in range(4000))[:TEXT_BYTES],
        "random bytes": bytes(rng.randrange(256) for _ in range(TEXT_BYTES)).decode("utf-8", "surrogateescape"),
        "short lines": ("x\n" * 4096),
    }
    return texts


def to_8kb(text: str) -> str:
    if not text:
        return text
    repeated = text * (TEXT_BYTES // max(1, len(text.encode("utf-8", "surrogateescape"))) + 1)
    return repeated.encode("utf-8", "surrogateescape")[:TEXT_BYTES].decode("utf-8", "ignore")


def best_time(function: Callable[[str], object], text: str, repeat: int, clock: Callable[[], float]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        function(text)
        best = min(best, clock() - start)
    return best


def run(annotations: Path, repeat: int) -> dict[str, Any]:
    result: dict[str, Any] = {"precision": {}, "recall": {}, "time": {}}
    false_positives: list[str] = []
    total_short = 0
    for name, queries in short_queries(annotations).items():
        flagged = [q for q in queries if looks_like_issue(q)]
        false_positives += flagged
        total_short += len(queries)
        result["precision"][name] = {"queries": len(queries), "flagged_as_issue": len(flagged), "flagged": flagged}
    samples = {p.stem: read_sample(p) for p in sorted(SAMPLES.glob("*.sample"))}
    real = {k: v for k, v in samples.items() if not k.startswith("junk-")}
    missed = sorted(k for k, v in real.items() if not looks_like_issue(v))
    result["recall"] = {"samples": len(real), "flagged_as_issue": len(real) - len(missed), "missed": missed,
                        "recall": round((len(real) - len(missed)) / max(1, len(real)), 3)}
    for label, texts in (("samples at 8 KB", {k: to_8kb(v) for k, v in samples.items()}),
                         ("adversarial 8 KB", adversarial_texts())):
        row: dict[str, Any] = {"texts": len(texts)}
        for clock_name, clock in (("wall", time.perf_counter), ("cpu", time.process_time)):
            for name, function in (("extract_evidence", extract_evidence), ("looks_like_issue", looks_like_issue),
                                   ("baseline query_terms", query_terms)):
                row[f"{name} ({clock_name})"] = latency_summary([best_time(function, t, repeat, clock)
                                                                 for t in texts.values()])
        row["slowest"] = max(texts, key=lambda k: best_time(extract_evidence, texts[k], repeat, time.process_time))
        result["time"][label] = row
    result["precision"]["total"] = {"queries": total_short, "flagged_as_issue": len(false_positives)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--annotations", type=Path, default=Path("/work/shared/semble-dev/annotations"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.annotations, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for name, row in result["precision"].items():
        print(f"precision  {name:14} {row['flagged_as_issue']}/{row['queries']} short queries flagged as issues")
        for query in row.get("flagged", []):
            print(f"           flagged: {query!r}")
    recall = result["recall"]
    print(f"recall     samples        {recall['flagged_as_issue']}/{recall['samples']} ({recall['recall']:.1%});"
          f" missed: {', '.join(recall['missed']) or 'none'}")
    for label, row in result["time"].items():
        for key, summary in row.items():
            if isinstance(summary, dict):
                print(f"time       {label:17} {key:28} p50 {summary['p50_ms']:6.1f} ms  p95 {summary['p95_ms']:6.1f} ms"
                      f"  max {summary['max_ms']:6.1f} ms  (n={summary['n']})")
        print(f"           slowest (cpu): {row['slowest']}")


if __name__ == "__main__":
    main()
