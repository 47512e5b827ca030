"""Embedding benchmark: throughput, query latency, cold start and peak memory of each embedder.

Each embedder runs in its own subprocess so cold start (import + model load + first vector) and
peak RSS are its own. Texts are real code: functions of the Python standard library (via `ast`),
trimmed line by line to fit the model's 256-token limit.

    HF_HUB_OFFLINE=1 python bench/embed_bench.py --texts 200 --queries 50 [--json out.json]
    HF_HUB_OFFLINE=1 python bench/embed_bench.py --embedders onnx-int8,static --one-core --texts 1000

`--one-core` pins every worker to one CPU (taskset), so texts/s is texts per second per core.
`static` is woods's own static model (woods/embedding/static.py); `onnx-int8` the index-time MiniLM.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Standard-library modules the texts come from: plain, varied Python, always installed.
SOURCE_MODULES = ("textwrap.py", "shlex.py", "difflib.py", "calendar.py", "argparse.py", "json/decoder.py",
                  "json/encoder.py", "dataclasses.py", "inspect.py", "typing.py", "pathlib.py", "tarfile.py")
QUERIES = ("find idempotency_key", "how are failed payments retried", "user mailer welcome email",
           "parse command line arguments", "where is the session cookie validated",
           "dataclass field default factory", "wrap text to a width", "json decoder error position")
WORKERS = ("sentence-fp32", "sentence-bf16", "numpy", "onnx-int8", "static")
COLD_SNIPPETS = {
    "numpy": "from woods.embedding.encoder import NumpyMiniLMEncoder as E; E().embed('find idempotency_key')",
    "static": "from woods.embedding.static import StaticEmbeddingProvider as P; P().embed('find idempotency_key')",
    "onnx-int8": "from woods.embedding.onnx import OnnxMiniLMProvider as P; P().embed('find idempotency_key')",
    "sentence-fp32": "from woods.embedding.sentence import SentenceTransformerProvider as P; "
                     "P(precision='fp32').embed('find idempotency_key')",
    "sentence-bf16": "from woods.embedding.sentence import SentenceTransformerProvider as P; "
                     "P(precision='bf16').embed('find idempotency_key')",
}


def code_texts(count: int, count_tokens, limit: int) -> list[str]:
    """`count` function sources from the stdlib, in module/line order, each trimmed to `limit`."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    texts: list[str] = []
    for name in SOURCE_MODULES:
        source = (stdlib / name).read_text(encoding="utf-8")
        lines = source.splitlines(keepends=True)
        nodes = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
            body = lines[node.lineno - 1 : node.end_lineno]
            while body and count_tokens("".join(body)) > limit:
                body.pop()
            if body:
                texts.append("".join(body))
            if len(texts) == count:
                return texts
    return texts


def make_provider(name: str):
    if name == "static":
        from woods.embedding.static import StaticEmbeddingProvider

        return StaticEmbeddingProvider()
    if name == "onnx-int8":
        from woods.embedding.onnx import OnnxMiniLMProvider

        return OnnxMiniLMProvider(precision="int8")
    if name == "numpy":
        from woods.embedding.encoder import NumpyMiniLMEncoder

        return NumpyMiniLMEncoder()
    from woods.embedding.sentence import SentenceTransformerProvider

    return SentenceTransformerProvider(precision="bf16" if name == "sentence-bf16" else "fp32")


def run_worker(name: str, text_count: int, query_count: int) -> dict:
    if name == "sentence-bf16":
        from woods.embedding.sentence import cpu_has_native_bf16

        if not cpu_has_native_bf16():
            return {"embedder": name, "skipped": "no native bf16 on this CPU"}
    started = time.perf_counter()
    provider = make_provider(name)
    provider.embed("warm up the model")
    cold = time.perf_counter() - started
    texts = code_texts(text_count, provider.count_tokens, provider.max_input_tokens or 256)
    tokens = sum(provider.count_tokens(text) for text in texts)
    started = time.perf_counter()
    provider.embed_batch(texts)
    bulk = time.perf_counter() - started
    latencies = []
    for index in range(query_count):
        query = QUERIES[index % len(QUERIES)]
        started = time.perf_counter()
        provider.embed(query)
        latencies.append((time.perf_counter() - started) * 1000.0)
    latencies.sort()
    return {
        "embedder": name,
        "precision": getattr(provider, "precision", "fp32"),
        "cold_start_s": round(cold, 3),
        "texts": len(texts),
        "tokens": tokens,
        "texts_per_s": round(len(texts) / bulk, 1),
        "tokens_per_s": round(tokens / bulk, 1),
        "query_p50_ms": round(statistics.median(latencies), 2),
        "query_p95_ms": round(latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))], 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        "torch_loaded": "torch" in sys.modules,
    }


def cold_wall_seconds(name: str, env: dict[str, str], pin: list[str]) -> float:
    """Wall time of a fresh interpreter that builds the embedder and embeds one query (incl.
    interpreter start-up): what a cold `woods search` pays for its query vector."""
    started = time.perf_counter()
    subprocess.run([*pin, sys.executable, "-c", COLD_SNIPPETS[name]], env=env, cwd=REPO, check=True, capture_output=True)
    return round(time.perf_counter() - started, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--embedders", default=",".join(WORKERS))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--one-core", action="store_true", help="pin each worker to CPU 0 (texts/s per core)")
    parser.add_argument("--worker", choices=WORKERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.texts, args.queries)))
        return
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
    results = []
    for name in [n for n in args.embedders.split(",") if n]:
        pin = ["taskset", "-c", "0"] if args.one_core else []
        proc = subprocess.run(
            [*pin, sys.executable, __file__, "--worker", name, "--texts", str(args.texts), "--queries", str(args.queries)],
            capture_output=True, text=True, env=env, cwd=REPO, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        if "skipped" not in row:
            row["cold_wall_s"] = cold_wall_seconds(name, env, pin)
        print(json.dumps(row))
        if "skipped" not in row:
            results.append(row)
    columns = ("embedder", "cold_wall_s", "cold_start_s", "texts_per_s", "tokens_per_s", "query_p50_ms", "query_p95_ms",
               "peak_rss_mb", "torch_loaded")
    print("\n" + " | ".join(columns))
    for row in results:
        print(" | ".join(str(row[column]) for column in columns))
    if args.json:
        args.json.write_text(json.dumps({"cpus": os.cpu_count(), "results": results}, indent=2) + "\n",
                             encoding="utf-8")


if __name__ == "__main__":
    main()
