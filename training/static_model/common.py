"""What every step of the static-model build shares: paths, the corpus manifest, the step log."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STEP_DIR = Path(__file__).resolve().parent
REPO_ROOT = STEP_DIR.parent.parent
CORPUS = STEP_DIR / "corpus.json"
EXCLUDED = STEP_DIR / "excluded_repos.tsv"
# Where the `fetch` tool leaves bare snapshots (github:OWNER/NAME → OWNER+NAME/repo).
MIRRORS = Path("/work/.mirror")
# Bump when a step changes what it produces: it is recorded in the model's provenance.
SCRIPT_VERSION = 1


def load_corpus() -> list[dict[str, str]]:
    return list(json.loads(CORPUS.read_text(encoding="utf-8"))["repositories"])


def corpus_hash() -> str:
    """SHA-256 of the corpus manifest's repositories (name, commit), order-independent."""
    pinned = sorted(f"{e['repo']}@{e['commit']}" for e in load_corpus())
    return hashlib.sha256("\n".join(pinned).encode()).hexdigest()


@contextmanager
def log_step(work: Path, name: str) -> Iterator[None]:
    """Time a step and append it to <work>/build-log.jsonl."""
    started = time.time()
    yield
    seconds = round(time.time() - started, 1)
    work.mkdir(parents=True, exist_ok=True)
    with open(work / "build-log.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"step": name, "seconds": seconds, "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}) + "\n")
    print(f"[{name}] {seconds} s", flush=True)
