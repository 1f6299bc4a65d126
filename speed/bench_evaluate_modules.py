"""Timings of the `evaluate` modules (metrics/retrieval, metrics/alpha_ndcg) on synthetic inputs: the inputs on
columns (today's modules) against the dict conversion they replaced (a script, not a test).

    python speed/bench_evaluate_modules.py [--queries 10000] [--docs 100] [--rounds 7] [--only retrieval]

Inputs, made once with a fixed seed: ``--queries`` queries, each ranking ``--docs`` doc ids drawn from its own pool of
3x as many docs of a ``--corpus`` (100,000) doc collection (one doc in 20 repeated further down: repeats are part of
what the conversion handles);
retrieval's references judge ``--judged`` (20) docs per query with labels 0-3; alpha_ndcg's list ``--nuggets`` (10)
nuggets per query, each on 1-8 docs, labels 0-1. Measures: retrieval's default set (nDCG@10, R@100, AP@10, RR@10,
P@10) and alpha-nDCG@20.

Candidates: "columns" is the module as it is; "dicts" is the same module with the columnar path switched off
(``evaluate_inputs._columns`` answering None), so every input goes the dict conversion the modules used before
(to_qrels / to_judgments / to_rankings, then adhoc_per_query / coverage_per_query). Two timings of each:
``compute()`` end to end, as a user calls it (evaluate writes the inputs to an Arrow table and reads them back
before calling the module: that part is the same for both), and the module's ``_compute`` alone on the lists
evaluate hands it. Candidates run in turn within each round (the order alternating between rounds) and the medians
of the rounds are printed, so that a change of load on a shared machine hits both; the values of the two are
compared (max |diff|, must be below 1e-12: exit status 1 otherwise).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _inputs(queries: int, docs: int, judged: int, nuggets: int, corpus: int, seed: int) -> tuple[list, list, list]:
    rnd = random.Random(seed)
    predictions, adhoc, coverage = [], [], []
    for _ in range(queries):
        pool = [f"doc-{i:07d}" for i in rnd.sample(range(corpus), 3 * docs)]
        ranking = rnd.sample(pool, docs)
        for i in range(0, docs, 20):  # a repeat further down, 1 in 20
            ranking[min(docs - 1, i + rnd.randrange(1, 20))] = ranking[i]
        predictions.append(ranking)
        adhoc.append([{"doc_id": d, "label": rnd.randrange(4)} for d in rnd.sample(pool, judged)])
        coverage.append([{"doc_id": d, "nugget_id": f"n{n}", "label": rnd.randrange(2)}
                         for n in range(nuggets) for d in rnd.sample(pool, rnd.randint(1, 8))])
    return predictions, adhoc, coverage


def _timed(call, *args, **kwargs) -> tuple[float, dict]:
    gc.collect()
    start = time.perf_counter()
    out = call(*args, **kwargs)
    return time.perf_counter() - start, out


def _machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import evaluate
    import numpy
    import pyarrow

    return (f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {numpy.__version__}, "
            f"pyarrow {pyarrow.__version__}, evaluate {evaluate.__version__}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--judged", type=int, default=20)
    parser.add_argument("--nuggets", type=int, default=10)
    parser.add_argument("--corpus", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=("retrieval", "alpha_ndcg"))
    args = parser.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
    logging.disable(logging.WARNING)  # the repeats are warned about on every call
    import evaluate

    from complexir.metrics import evaluate_inputs

    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    print(f"commit {commit}{' (with uncommitted changes)' if dirty else ''}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"machine: {_machine()}; load average at start {os.getloadavg()[0]:.2f}")
    predictions, adhoc, coverage = _inputs(args.queries, args.docs, args.judged, args.nuggets, args.corpus, args.seed)
    print(f"inputs: {args.queries:,} queries x {args.docs} ranked docs of {args.corpus:,} (seed {args.seed}); "
          f"retrieval: {sum(map(len, adhoc)):,} judgments; alpha_ndcg: {sum(map(len, coverage)):,} nugget judgments")

    columnar = evaluate_inputs._columns
    modes = {"columns": columnar, "dicts": lambda *a, **k: None}
    cases = {"retrieval": (adhoc, {}), "alpha_ndcg": (coverage, {"k": 20})}
    failed = False
    print("\nmodule       timing        columns (s)   dicts (s)   dicts / columns   max |diff|")
    for name, (references, options) in cases.items():
        if args.only and name != args.only:
            continue
        module = evaluate.load(str(REPO / "metrics" / name))
        times = {(mode, part): [] for mode in modes for part in ("compute", "_compute")}
        values: dict[str, dict] = {}
        for r in range(args.rounds):
            order = list(modes) if r % 2 == 0 else list(modes)[::-1]
            for mode in order:
                evaluate_inputs._columns = modes[mode]
                try:
                    seconds, values[mode] = _timed(module.compute, predictions=predictions, references=references,
                                                   **options)
                    times[mode, "compute"].append(seconds)
                    seconds, _ = _timed(module._compute, predictions, references, **options)
                    times[mode, "_compute"].append(seconds)
                finally:
                    evaluate_inputs._columns = columnar
        diff = max(abs(values["columns"][k] - values["dicts"][k]) for k in values["dicts"])
        failed |= not diff < 1e-12 or values["columns"].keys() != values["dicts"].keys()
        for part in ("compute", "_compute"):
            new, old = (statistics.median(times[mode, part]) for mode in ("columns", "dicts"))
            print(f"{name:<12} {part + '()':<12} {new:>11.3f} {old:>11.3f} {old / new:>15.2f}x   {diff:.1e}")
    print(f"\nmedians of {args.rounds} rounds; load average at the end {os.getloadavg()[0]:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
