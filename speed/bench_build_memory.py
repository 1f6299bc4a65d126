"""Peak memory of a real build as the collection grows: ``complexir build coveragebench --corpus full --docs``.

    nice python speed/bench_build_memory.py [--docs 500000 2000000] [--words 40] [--no-statistics]

For each size it writes a synthetic JSONL collection (the demo release's judged ``cast2020`` documents plus that
many generated ones, with ids shaped like RAG 2024's segment ids) and runs, each in a child process from the same
command line as ``complexir build``, printing the child's peak RSS (``ru_maxrss``) and time:
- ``write``: the writing step alone (stream through the writer, validate, swap into place);
- ``build``: the whole build as ``complexir build`` runs it (the writing step, with mteb's descriptive statistics
  computed on the finished folder before the swap);
- ``statistics``: those statistics alone, in a fresh process, on the folder the build wrote.
A bounded step shows the same peak at every size. ``--no-statistics`` runs the first only.
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


# The child: the command line `complexir build` parses, and one of the steps above.
CHILD = """
import json, os, resource, sys, time
from importlib import import_module
from pathlib import Path
from complexir.registry.benchmarks import all_specs
from complexir.tasks.layout_task import write_descriptive_statistics
from complexir.cli.main import build_parser
from complexir.upstream.options import BuildOptions

argv = sys.argv[1:]
args = build_parser(argv).parse_args(argv)
spec = next(s for s in all_specs() if s.folder == args.benchmark)
step = os.environ["BENCH_STEP"]
module = import_module(spec.loading_script)
options = getattr(module, "OPTIONS", BuildOptions).from_flags(vars(args))  # before_swap None: no statistics
runs = {"write": lambda: module.build(options),
        "build": lambda: args.func(args),
        "statistics": lambda: write_descriptive_statistics(Path(args.out), spec)}
start = time.perf_counter()
runs[step]()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
print("STEP", json.dumps({"seconds": time.perf_counter() - start, "peak_mib": peak}), flush=True)
"""


def run_step(step: str, release: Path, docs: Path, out: Path) -> dict[str, float]:
    """One step (see above) in a child process: its seconds and the process's peak RSS (MiB)."""
    command = [sys.executable, "-c", CHILD, "build", "coveragebench", "--source", str(release), "--subset", SUBSET,
               "--corpus", "full", "--docs", f"{SUBSET}=jsonl:{docs}", "--out", str(out), "--no-progress",
               "--overwrite"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "BENCH_STEP": step}
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the {step} step failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return next(json.loads(line[5:]) for line in done.stdout.splitlines() if line.startswith("STEP "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[500_000, 2_000_000],
                        help="synthetic documents per run, one run per value")
    parser.add_argument("--words", type=int, default=40, help="words per synthetic document")
    parser.add_argument("--no-statistics", action="store_true",
                        help="run the writing step only (no descriptive statistics)")
    args = parser.parse_args()
    steps = ("write",) if args.no_statistics else ("write", "build", "statistics")

    peaks: dict[str, list[tuple[int, float]]] = {step: [] for step in steps}
    for n in args.docs:
        work = Path(tempfile.mkdtemp(prefix="bench_build_memory_"))
        try:
            release = work / "release"
            shutil.copytree(RELEASE, release)
            docs = work / "docs.jsonl"
            write_collection(docs, n, args.words)
            print(f"synthetic --docs collection of {n:,} documents x {args.words} words (+ the demo's {SUBSET} "
                  f"documents):", flush=True)
            for step in steps:
                figures = run_step(step, release, docs, work / "out")
                peaks[step].append((n, figures["peak_mib"]))
                rate = "" if step == "statistics" else f" ({n / figures['seconds']:,.0f} documents/s)"
                print(f"  {step}: {figures['seconds']:.0f} s{rate}, peak RSS {figures['peak_mib']:,.0f} MiB",
                      flush=True)
            written = sum(p.stat().st_size for p in (work / "out").rglob("*.parquet"))
            print(f"  ({written / 2**20:,.0f} MiB of parquet)", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if len(args.docs) > 1:
        for step, figures in peaks.items():
            (n0, a), (n1, b) = figures[0], figures[-1]
            print(f"peak RSS, {step}, from {n0:,} to {n1:,} documents: {b - a:+,.0f} MiB "
                  f"({(b - a) * 2**20 / (n1 - n0):+,.0f} bytes per added document)")


if __name__ == "__main__":
    main()
