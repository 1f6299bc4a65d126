"""Encoding speed of each sentence-transformers backend against torch, and what it changes in the scores.

    python speed/bench_encode.py [--backends torch onnx openvino] [--model PATH_OR_NAME] [--texts 2000]
                                      [--batch-size 32] [--repeat 3]

For each backend (a fresh process each, so one backend's imports and threads never slow another):

- documents/s: ``--texts`` documents of the packaged demos (every corpus text of the four demo benchmarks,
  repeated to the count; titles joined as the tasks join them) encoded in batches of ``--batch-size``; the model is
  loaded and warmed up on one batch first, the median of ``--repeat`` timed passes is reported;
- the largest change in nDCG@10 against torch over every demo task (``complexir run --backend B`` on the packaged
  demos, each backend with its own empty embedding store).

A backend this install cannot load is reported with the reason (sentence-transformers' ONNX and OpenVINO backends
need optimum, whose releases may not fit the installed transformers) and the others still run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKER = "--worker"


def demo_texts(count: int) -> list[str]:
    import pyarrow.parquet as pq

    from complexir.api.run import demo_data_dir

    texts = []
    for path in sorted(demo_data_dir().glob("*/data/*/corpus-*.parquet")):
        table = pq.read_table(path, columns=["title", "text"])
        for title, text in zip(table.column("title").to_pylist(), table.column("text").to_pylist(), strict=True):
            texts.append(f"{title} {text}".strip() if title else text)
    if not texts:
        raise SystemExit("no demo corpus found")
    return [texts[i % len(texts)] for i in range(count)]


def worker(backend: str, model: str | None, texts: int, batch_size: int, repeat: int, out: Path) -> None:
    """In a fresh process: load, warm up, time ``repeat`` passes; then the demo run's nDCG@10 per task."""
    from complexir.cli.main import main
    from complexir.runs.results import load_run
    from complexir.systems.models import BackendUnavailable, load_model

    try:
        encoder = load_model(model, backend=backend)
    except BackendUnavailable as error:
        out.write_text(json.dumps({"backend": backend, "unavailable": str(error)}))
        return
    st_model = encoder.model
    docs = demo_texts(texts)
    st_model.encode(docs[:batch_size], batch_size=batch_size)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        st_model.encode(docs, batch_size=batch_size)
        times.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as tmp:
        args = ["run", "--backend", backend, "--output", f"{tmp}/out", "--cache", f"{tmp}/store"]
        if model:
            args += ["--model", model]
        if main(args) != 0:
            raise SystemExit(f"complexir run --backend {backend} failed")
        run = load_run(f"{tmp}/out")
        ndcg = {name: result.get_score(getter=lambda s: s.get("ndcg_at_10")) for name, result in
                run.task_results.items()}
    out.write_text(json.dumps({"backend": backend, "docs_per_s": texts / statistics.median(times), "ndcg": ndcg}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["torch", "onnx", "openvino"])
    parser.add_argument("--model", default=None, help="default: the packaged all-MiniLM-L6-v2")
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if "torch" not in args.backends:
        args.backends.insert(0, "torch")  # the reference of every ratio and score change
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backends:
            out = Path(tmp) / f"{backend}.json"
            cmd = [sys.executable, __file__, WORKER, backend, str(args.texts), str(args.batch_size), str(args.repeat),
                   str(out), args.model or ""]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            found[backend] = json.loads(out.read_text())
    base = found["torch"]
    print(f"{args.texts} demo documents, batch {args.batch_size}, median of {args.repeat}; "
          f"model {args.model or 'packaged all-MiniLM-L6-v2'}")
    print(f"{'backend':<10} {'docs/s':>9} {'vs torch':>9}  largest |change| in nDCG@10 on the demo tasks")
    for backend, result in found.items():
        if "unavailable" in result:
            print(f"{backend:<10} {'-':>9} {'-':>9}  unavailable: {result['unavailable']}")
            continue
        changes = [abs(score - base["ndcg"][task]) for task, score in result["ndcg"].items()
                   if task in base["ndcg"] and score is not None and base["ndcg"][task] is not None]
        worst = max(changes) if changes else float("nan")
        ratio = result["docs_per_s"] / base["docs_per_s"]
        print(f"{backend:<10} {result['docs_per_s']:>9.1f} {ratio:>8.2f}x  {worst:.4f} over {len(changes)} task(s)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == WORKER:
        backend, texts, batch_size, repeat, out, model = sys.argv[2:8]
        worker(backend, model or None, int(texts), int(batch_size), int(repeat), Path(out))
    else:
        sys.exit(main())
