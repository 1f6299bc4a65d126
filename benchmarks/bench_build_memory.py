"""Peak memory of a real build as the collection grows: ``complexir build coveragebench --corpus full --docs``.

    nice python benchmarks/bench_build_memory.py [--docs 500000 2000000] [--words 40]

For each size it writes a synthetic JSONL collection (the demo release's judged ``cast2020`` documents plus that
many generated ones, with ids shaped like RAG 2024's segment ids), then runs the build in a child process from the
same command line as ``complexir build``, and prints the child's peak RSS (``ru_maxrss``) and documents/s after
each of the build's two steps: writing (stream through the writer, validate, swap into place), then mteb's
descriptive statistics of the built folder. A bounded step shows the same peak at every size.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RELEASE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "coveragebench" / "demo_upstream"
SUBSET = "cast2020"
WORDS = ("retrieval evaluation benchmark document query relevance nugget coverage passage embedding model "
         "ranking judgment corpus subset instruction long context language title keyword summary").split()


def write_collection(path: Path, n: int, words: int, seed: int = 0) -> None:
    """The release's own documents of the subset (so its judgments resolve), then ``n`` synthetic ones."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        out.write((RELEASE / "corpus" / f"{SUBSET}.jsonl").read_text(encoding="utf-8"))
        for i in range(n):
            doc_id = f"msmarco_v2.1_doc_{i % 59:02d}_{i * 7919 % 10**9}#{i % 13}_{i}"
            out.write(json.dumps({"id": doc_id, "title": f"Document {i}",
                                  "text": " ".join(rng.choices(WORDS, k=words))}) + "\n")


# The child: the command line `complexir build` parses, its two steps timed and measured apart. Step 1 is the
# loading script (stream the collection through the writer, validate, swap into place), step 2 the descriptive
# statistics `complexir build` then computes with mteb on the built folder.
CHILD = """
import json, os, resource, sys, time
from importlib import import_module
from pathlib import Path
from complexir.benchmarks import all_specs
from complexir.cli.build_cmd import write_descriptive_statistics
from complexir.cli.main import build_parser

argv = sys.argv[1:]
args = build_parser(argv).parse_args(argv)
spec = next(s for s in all_specs() if s.folder == args.benchmark)
steps = (("write", lambda: import_module(spec.loading_script).build(args)),
         ("statistics", lambda: write_descriptive_statistics(Path(args.out), spec)))
for step, run in steps[:int(os.environ["BENCH_STEPS"])]:
    start = time.perf_counter()
    run()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
    print("STEP", json.dumps({"step": step, "seconds": time.perf_counter() - start, "peak_mib": peak}), flush=True)
"""


def build(release: Path, docs: Path, out: Path, steps: int) -> dict[str, dict[str, float]]:
    """Run the build's first ``steps`` steps in a child process; per step, its seconds and the process's peak RSS
    (MiB) at its end."""
    command = [sys.executable, "-c", CHILD, "build", "coveragebench", "--source", str(release), "--subset", SUBSET,
               "--corpus", "full", "--docs", f"{SUBSET}=jsonl:{docs}", "--out", str(out), "--no-progress"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "BENCH_STEPS": str(steps)}
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the build failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    steps = [json.loads(line[5:]) for line in done.stdout.splitlines() if line.startswith("STEP ")]
    return {step.pop("step"): step for step in steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[500_000, 2_000_000],
                        help="synthetic documents per run, one run per value")
    parser.add_argument("--words", type=int, default=40, help="words per synthetic document")
    parser.add_argument("--no-statistics", action="store_true",
                        help="stop after the writing step (skip mteb's descriptive statistics)")
    args = parser.parse_args()

    results = []
    for n in args.docs:
        work = Path(tempfile.mkdtemp(prefix="bench_build_memory_"))
        try:
            release = work / "release"
            shutil.copytree(RELEASE, release)
            docs = work / "docs.jsonl"
            write_collection(docs, n, args.words)
            steps = build(release, docs, work / "out", 1 if args.no_statistics else 2)
            written = sum(p.stat().st_size for p in (work / "out").rglob("*.parquet"))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        write, stats = steps["write"], steps.get("statistics")
        results.append((n, write["peak_mib"], stats["peak_mib"] if stats else None))
        print(f"synthetic --docs collection of {n:,} documents x {args.words} words (+ the demo's {SUBSET} documents), "
              f"{written / 2**20:,.0f} MiB of parquet:\n"
              f"  write + validate + swap: {write['seconds']:.0f} s ({n / write['seconds']:,.0f} documents/s), "
              f"peak RSS {write['peak_mib']:,.0f} MiB", flush=True)
        if stats:
            print(f"  then mteb's descriptive statistics: {stats['seconds']:.0f} s, "
                  f"peak RSS {stats['peak_mib']:,.0f} MiB", flush=True)
    if len(results) > 1:
        (n0, w0, s0), (n1, w1, s1) = results[0], results[-1]
        for label, a, b in (("write + validate + swap", w0, w1), ("with mteb's descriptive statistics", s0, s1)):
            if a is None:
                continue
            print(f"peak RSS, {label}, from {n0:,} to {n1:,} documents: {b - a:+,.0f} MiB "
                  f"({(b - a) * 2**20 / (n1 - n0):+,.0f} bytes per added document)")

if __name__ == "__main__":
    main()
