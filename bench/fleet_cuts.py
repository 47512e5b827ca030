"""What finer cuts of a fleet job would cost, measured in one run: the figures behind "one task
per repository" (docs/scale.md).

    python bench/fleet_cuts.py --repo /tmp/semble-dev/checkouts/gson@f4d371d29c04/gson --out bench/fleet_cuts.json

1. Embedding actors pay off when a model is expensive to load. Measured: the static model's load
   (construct + first batch) and its time per batch of 64 texts in-process, against the same
   batch sent to a Ray actor that holds the model (round trip, texts out, vectors back).
2. Parse tasks per file batch pay off when parsing is dear next to moving its result. Measured:
   parsing the repository's files in-process, against pickling and unpickling the parsed units
   (what a task returning them to the publishing task would ship, before Ray's own transport).
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _texts(repo: Path) -> list[str]:
    from woods.discovery import discover
    from woods.indexing.parse import extract_files
    from woods.indexing.summary import IndexSummary, SilentProgress

    found = discover(repo)
    units, _rows = extract_files(repo, found.files, SilentProgress(), IndexSummary("", ""), workers=1)
    return [u.source_code or u.identifier for u in units][:2048]


def embedding(texts: list[str]) -> dict[str, Any]:
    import ray

    from woods.embedding.static import StaticEmbeddingProvider

    started = time.perf_counter()
    provider = StaticEmbeddingProvider()
    provider.embed_batch(texts[:64])
    load = time.perf_counter() - started
    batches = [texts[i : i + 64] for i in range(0, len(texts), 64)]
    local = []
    for batch in batches:
        started = time.perf_counter()
        provider.embed_batch(batch)
        local.append(time.perf_counter() - started)

    class Embedder:
        def __init__(self) -> None:
            self.provider = StaticEmbeddingProvider()

        def embed(self, batch: list[str]) -> Any:
            return self.provider.embed_batch(batch)

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=tempfile.mkdtemp(prefix="woods-cuts-"))
    try:
        actor = ray.remote(Embedder).remote()
        ray.get(actor.embed.remote(batches[0]))
        remote = []
        for batch in batches:
            started = time.perf_counter()
            ray.get(actor.embed.remote(batch))
            remote.append(time.perf_counter() - started)
    finally:
        ray.shutdown()
    return {"static_load_and_first_batch_ms": round(1000 * load, 1), "batches": len(batches),
            "in_process_ms_per_batch": round(1000 * statistics.median(local), 2),
            "actor_round_trip_ms_per_batch": round(1000 * statistics.median(remote), 2)}


def parsing(repo: Path) -> dict[str, Any]:
    from woods.discovery import discover
    from woods.extract.layout import RepositoryLayout
    from woods.indexing.parse import extract_one

    found = discover(repo)
    layout = RepositoryLayout.from_paths(f.path for f in found.files)
    started = time.perf_counter()
    outcomes = [extract_one(str(repo), f.path, f.mtime_ns, layout) for f in found.files]
    parse = time.perf_counter() - started
    started = time.perf_counter()
    blob = pickle.dumps(outcomes, protocol=pickle.HIGHEST_PROTOCOL)
    pickle.loads(blob)
    ship = time.perf_counter() - started
    return {"files": len(found.files), "units": sum(len(o.units) for o in outcomes), "parse_s": round(parse, 3),
            "pickle_round_trip_s": round(ship, 3), "pickled_mb": round(len(blob) / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report = {"repository": str(args.repo), "parse": parsing(args.repo), "embed": embedding(_texts(args.repo))}
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
