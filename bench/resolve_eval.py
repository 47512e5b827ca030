"""Score `woods resolve` on the reference set (`bench/resolve_refs.json`, see resolve_refs_generate.py).

Each reference runs through `woods.Index(store).resolve` (the search stage included, with the
index's own embedder). Per kind (bare / qualified / phrase) and language it counts:

- unambiguous references (one expected unit): resolved correctly, flagged ambiguous, not found,
  and resolved to a *wrong* unit (the worst outcome: every one is listed);
- ambiguous references: flagged (ambiguous), resolved anyway (listed too), not found.

A resolved answer is correct when its identifier is the expected one (any of its types/files:
the set's truth is by qualified name).

    python bench/resolve_eval.py --stores /tmp/resolve-stores [--refs bench/resolve_refs.json] [--json OUT]
    python bench/resolve_eval.py --stores … --woods-src /tmp/woods-main   # the same set on another checkout
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

REFS = REPO / "bench" / "resolve_refs.json"


def classify(expected: str, outcome: Any) -> str:
    status = outcome.status.value
    if expected == "ambiguous":
        return {"ambiguous": "flagged", "resolved": "resolved_anyway", "not_found": "not_found"}[status]
    if status == "resolved":
        return "correct" if outcome.identifier == expected else "wrong"
    return status  # ambiguous / not_found on an unambiguous reference


def evaluate(stores: Path, refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from woods.api import Index

    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for ref in refs:
        by_repo[ref["repo"]].append(ref)
    results = []
    for repo in sorted(by_repo):
        with Index.open(store=stores / repo) as index:
            for ref in by_repo[repo]:
                outcome = index.resolve(ref["ref"])
                results.append({
                    **ref,
                    "outcome": classify(ref["expected"], outcome),
                    "status": outcome.status.value,
                    "method": outcome.method.value,
                    "got": outcome.identifier,
                    "confidence": outcome.confidence,
                    "candidates": [c.identifier for c in outcome.candidates[:5]],
                })
    return results


def table(results: list[dict[str, Any]], group: str) -> list[str]:
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        key = r[group]
        unamb = r["expected"] != "ambiguous"
        rows[key]["unamb" if unamb else "amb"] += 1
        rows[key][("u_" if unamb else "a_") + r["outcome"]] += 1
        rows["all"]["unamb" if unamb else "amb"] += 1
        rows["all"][("u_" if unamb else "a_") + r["outcome"]] += 1
    lines = [
        f"| {group} | unambiguous | correct | ambiguous | not found | **wrong** | ambiguous refs | flagged | resolved anyway |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def pct(part: int, whole: int) -> str:
        return f"{part} ({100 * part / whole:.0f}%)" if whole else "0"

    for key in sorted(k for k in rows if k != "all") + ["all"]:
        c = rows[key]
        lines.append(
            f"| {key} | {c['unamb']} | {pct(c['u_correct'], c['unamb'])} | {c['u_ambiguous']} | {c['u_not_found']} | "
            f"{c['u_wrong']} | {c['amb']} | {pct(c['a_flagged'], c['amb'])} | {c['a_resolved_anyway']} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stores", type=Path, required=True)
    parser.add_argument("--refs", type=Path, default=REFS)
    parser.add_argument("--json", type=Path, help="write every result here")
    parser.add_argument("--woods-src", type=Path, default=REPO,
                        help="import woods from this checkout (e.g. an export of main, for before/after)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.woods_src))
    refs = [r for r in json.loads(args.refs.read_text())["references"] if r["expected"] != "none"]
    results = evaluate(args.stores, refs)
    print(f"{len(results)} references\n")
    for group in ("kind", "language"):
        print("\n".join(table(results, group)) + "\n")
    bad = [r for r in results if r["outcome"] in ("wrong", "resolved_anyway")]
    print(f"wrong resolved answers: {len(bad)}")
    for r in bad:
        print(f"- [{r['repo']}/{r['language']}/{r['kind']}] {r['ref']!r} -> {r['got']} ({r['method']}, "
              f"{r['confidence']}); expected {r['expected']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
