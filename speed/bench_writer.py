"""Write a synthetic corpus through the layout writer; print documents per second and peak RSS.

    python speed/bench_writer.py [--docs 1000000] [--words 60]

The writer streams: memory is the batch being written and the current run of id hashes (``DocumentIds`` keeps
the corpus ids' hashes on disk, not a set of ids), so peak RSS does not grow with the corpus; see
``bench_build_memory.py`` for the whole build at two sizes.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path

from complexir.layout.card import CardInfo
from complexir.layout.writer import BenchmarkWriter

WORDS = ("retrieval evaluation benchmark document query relevance nugget coverage passage embedding model "
         "ranking judgment corpus subset instruction long context language title keyword summary").split()


def synthetic_docs(n: int, words: int, seed: int = 0):
    rng = random.Random(seed)
    for i in range(n):
        yield {"id": f"doc{i}", "title": f"Document {i}", "text": " ".join(rng.choices(WORDS, k=words))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--words", type=int, default=60)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench_writer_"))
    card = CardInfo("synthetic", "Synthetic", "apache-2.0", "@misc{synthetic}", "speed/bench_writer.py")
    start = time.perf_counter()
    try:
        with BenchmarkWriter(work / "synthetic", card, progress=False) as writer:
            writer.write_corpus("synthetic", synthetic_docs(args.docs, args.words), total=args.docs)
            queries = [{"id": f"q{i}", "text": f"query {i}"} for i in range(1000)]
            qrels = [{"query-id": f"q{i}", "corpus-id": f"doc{i * 7 % args.docs}", "score": 1} for i in range(1000)]
            writer.write_split("synthetic", "test", queries=queries, qrels=qrels)
        seconds = time.perf_counter() - start
        size = sum(p.stat().st_size for p in (work / "synthetic").rglob("*") if p.is_file())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
    print(f"documents: {args.docs:,} x {args.words} words; written and validated in {seconds:.1f} s")
    print(f"throughput: {args.docs / seconds:,.0f} documents/s; on disk: {size / 2**20:,.0f} MiB")
    print(f"peak RSS: {peak_mib:,.0f} MiB ({'under' if peak_mib < 1024 else 'OVER'} the 1 GB bound)")


if __name__ == "__main__":
    main()
