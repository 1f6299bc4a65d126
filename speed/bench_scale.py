"""Stream synthetic corpora through the search engines; print documents/s and peak RSS per process.

    python speed/bench_scale.py [--sizes 100000 300000 1000000] [--engines mteb local ray] [--workers 2]

The model is a static-embedding model built here from the packaged all-MiniLM-L6-v2 tokenizer with random
weights (sentence-transformers' ``StaticEmbedding``; nothing is downloaded), so the pipeline is measured, not the
model. Each (engine, size) runs in a fresh process:

- ``mteb``: MTEB's own search (``SearchEncoderWrapper``) over the corpus as a ``datasets.Dataset`` read from the
  parquet shards: today's in-memory path.
- ``local``: ``StreamingSearch`` reading the parquet shards batch by batch, through a fresh embedding store.
- ``ray``: the same on a local Ray with ``--workers`` CPU actors; the driver's and each worker's peak RSS.

Peak RSS is ``ru_maxrss`` of each process (Ray's own raylet/GCS processes are not counted).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

WORDS = ("retrieval evaluation benchmark document query relevance nugget coverage passage embedding model "
         "ranking judgment corpus subset instruction long context language title keyword summary cat dog market "
         "stock river mountain court law patient trial theorem proof code function").split()
SHARD_ROWS = 100_000
QUERIES = 100
TOP_K = 100


def write_corpus(folder: Path, n_docs: int, words: int = 40, seed: int = 0) -> list[Path]:
    """Parquet shards of ``SHARD_ROWS`` synthetic documents (written shard by shard: memory stays bounded)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for shard, start in enumerate(range(0, n_docs, SHARD_ROWS)):
        ids = [f"doc{i}" for i in range(start, min(start + SHARD_ROWS, n_docs))]
        texts = [" ".join(rng.choices(WORDS, k=words)) for _ in ids]
        path = folder / f"corpus-{shard:05d}.parquet"
        pq.write_table(pa.table({"id": ids, "title": [""] * len(ids), "text": texts}), path)
        files.append(path)
    return files


def build_model(folder: Path) -> Path:
    """A StaticEmbedding model with the packaged MiniLM tokenizer and random weights, saved to ``folder``."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer

    from complexir.systems.models import default_model_path

    if (folder / "modules.json").exists():
        return folder
    tokenizer = Tokenizer.from_file(str(default_model_path() / "tokenizer.json"))
    torch.manual_seed(0)
    weights = torch.randn(tokenizer.get_vocab_size(), 256)
    model = SentenceTransformer(modules=[StaticEmbedding(tokenizer, embedding_weights=weights)], device="cpu")
    model.save(str(folder))
    return folder


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def measure(engine: str, corpus: Path, model_dir: Path, workers: int, batch_docs: int) -> dict:
    """One search over the corpus in this process; returns the figures."""
    from datasets import Dataset
    from mteb.models.search_wrappers import SearchEncoderWrapper

    from complexir.systems.embedding_store import EmbeddingStore
    from complexir.systems.models import load_model
    from complexir.systems.stored_encoder import StoredEncoder
    from complexir.systems.streaming_search import LocalEngine, ParquetSource, StreamingSearch
    from complexir.tasks import tasks_by_name

    meta = tasks_by_name()["IRSCQuery"].metadata  # any text retrieval task: only its metadata is used
    files = sorted(corpus.glob("corpus-*.parquet"))
    rng = random.Random(1)
    queries = Dataset.from_dict({"id": [f"q{i}" for i in range(QUERIES)],
                                 "text": [" ".join(rng.choices(WORDS, k=6)) for _ in range(QUERIES)]})
    base = load_model(str(model_dir))
    kwargs = {"task_metadata": meta, "hf_split": "test", "hf_subset": "default",
              "encode_kwargs": {"batch_size": 256, "show_progress_bar": False}}
    store = Path(tempfile.mkdtemp(prefix="bench_scale_store_"))
    engine_obj = None
    try:
        source = ParquetSource(files)
        start = time.perf_counter()
        if engine == "mteb":
            dataset = Dataset.from_parquet([str(f) for f in files])
            search = SearchEncoderWrapper(base)
            search.index(dataset, **kwargs)
            search.search(queries, top_k=TOP_K, **kwargs)
        else:
            if engine == "ray":
                from complexir.systems.ray_engine import RayEngine, StoredModelSpec

                engine_obj = RayEngine(StoredModelSpec(store=str(store), model=str(model_dir)), workers=workers)
            else:
                engine_obj = LocalEngine()
            search = StreamingSearch(StoredEncoder(base, EmbeddingStore(store)), engine=engine_obj,
                                     batch_docs=batch_docs, progress=False)
            search.search_source(queries, source, top_k=TOP_K, **kwargs)
        seconds = time.perf_counter() - start
        workers_rss = [rss / 2**20 for _, rss in engine_obj.worker_peak_rss()] if engine == "ray" else []
        return {"engine": engine, "docs": source.num_rows, "seconds": seconds, "docs_per_s": source.num_rows / seconds,
                "driver_peak_rss_mib": peak_rss_mib(), "worker_peak_rss_mib": workers_rss}
    finally:
        if engine_obj is not None and hasattr(engine_obj, "shutdown"):
            engine_obj.shutdown()
        shutil.rmtree(store, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--engines", nargs="+", default=["mteb", "local", "ray"], choices=["mteb", "local", "ray"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-docs", type=int, default=8192)
    parser.add_argument("--work", default=None, help="folder for corpora and the model (default: a temporary one)")
    parser.add_argument("--one", nargs=2, metavar=("ENGINE", "CORPUS"), help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.one:  # a child process: one measurement, printed as JSON
        print(json.dumps(measure(args.one[0], Path(args.one[1]), Path(args.model_dir), args.workers, args.batch_docs)))
        return

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench_scale_"))
    model_dir = build_model(work / "static-model")
    print(f"synthetic corpora of 40-word documents, {QUERIES} queries, top {TOP_K}; static-embedding model "
          f"(256 dims, random weights, MiniLM tokenizer); batches of {args.batch_docs} documents")
    print(f"{'engine':<6} {'documents':>10} {'seconds':>8} {'docs/s':>8} {'driver peak RSS':>16}  worker peak RSS")
    for size in args.sizes:
        corpus = work / f"corpus-{size}"
        if not corpus.exists():
            write_corpus(corpus, size)
        for engine in args.engines:
            out = subprocess.run([sys.executable, __file__, "--one", engine, str(corpus), "--model-dir",
                                  str(model_dir), "--workers", str(args.workers), "--batch-docs",
                                  str(args.batch_docs)], capture_output=True, text=True)
            if out.returncode:
                print(f"{engine:<6} {size:>10,} failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            workers = ", ".join(f"{w:,.0f}" for w in r["worker_peak_rss_mib"]) or "-"
            print(f"{engine:<6} {r['docs']:>10,} {r['seconds']:>8.1f} {r['docs_per_s']:>8,.0f} "
                  f"{r['driver_peak_rss_mib']:>12,.0f} MiB  {workers}{' MiB' if r['worker_peak_rss_mib'] else ''}",
                  flush=True)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
