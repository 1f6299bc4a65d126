"""``complexir compare`` against ``ranx.compare``, and ``complexir run --runs`` against ir_measures, on IRSC-sized
synthetic data (a script, not a test).

    python speed/bench_compare.py [--queries 5000] [--systems 10] [--depth 100] [--resamples 10000]
                                  [--ranx-tasks N] [--workdir DIR] [--skip-ranx] [--skip-ir-measures]

Builds, in ``--workdir`` (default: a temporary folder), an IRSC-shaped benchmark: IRSC's five tasks, each one
setting (``en``) of ``--queries`` queries with exactly one relevant document, a corpus of twice as many documents;
then ``--systems`` systems as runs folders of TREC runs of depth ``--depth`` (system k finds the relevant document
higher, on average, the larger k; the rest of a ranking is random corpus documents).

Timed, each a fresh process as a user runs it (wall time):

- ``complexir run --runs`` of the first system (per-query files and provenance written, as always), against
  ir_measures computing the same measures from the same qrels and run files (``ir_measures.iter_calc``, per query);
  the other systems are scored too (untimed), for the comparison;
- ``complexir compare`` of every system (all pairs; intervals, randomisation tests and t-tests of each task's
  measures and of the benchmark's average), against ``ranx.compare`` (``stat_test="fisher"``) of the same pairs,
  on the same measures (IRSC's recall@10, MAP@10 and nDCG@10), with ``--resamples`` permutations (complexir's
  randomisation test draws 10,000; pass 10000 to match). ranx runs once per task in one process, after a warm-up
  call that compiles its numba code (not timed; reported apart). ``--ranx-tasks N`` times ranx on the first N
  tasks only, ``--ranx-systems K`` on the pairs of the first K systems only, and scales its time to all tasks and
  pairs (every task has the same size and every test the same queries and permutations, so the same work; ranx's
  evaluation of the runs, a small share, is scaled with them), for machines where the full ranx run takes too
  long; the figure printed says so.

The machine may be shared: run it at a reduced size first (``--queries 1000 --systems 4``).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SETTING = "en"
MEASURES_RANX = ["recall@10", "map@10", "ndcg@10"]  # IRSC's measures (MTEB's recall_at_10, map_at_10, ndcg_at_10)


def irsc_tasks() -> list[tuple[str, str]]:
    """(task name, layout subset) of IRSC's tasks, in one setting."""
    from complexir.registry.benchmarks import IRSC

    return [(f"IRSC{s.title}", f"{s.name}-{SETTING}") for s in IRSC.subsets]


def build_data(data_dir: Path, n_queries: int) -> None:
    """The ``irsc`` benchmark folder: per task, ``n_queries`` queries with one relevant document each."""
    from complexir.layout.card import CardInfo
    from complexir.layout.writer import BenchmarkWriter
    from complexir.registry.benchmarks import IRSC

    card = CardInfo(IRSC.folder, "IRSC (synthetic, speed/bench_compare.py)", "other", IRSC.citation,
                    "synthetic", revision="1")
    words = np.array("retrieval query document ranking judged corpus title summary keyword part".split())
    rng = np.random.default_rng(0)
    with BenchmarkWriter(data_dir / IRSC.folder, card, progress=False, overwrite=True) as writer:
        for _task, subset in irsc_tasks():
            docs = ({"id": f"d{i}", "title": "", "text": " ".join(rng.choice(words, 8))} for i in range(2 * n_queries))
            writer.write_corpus(subset, docs, total=2 * n_queries)
            queries = [{"id": f"q{i}", "text": f"query {i}"} for i in range(n_queries)]
            qrels = [{"query-id": f"q{i}", "corpus-id": f"d{i}", "score": 1} for i in range(n_queries)]
            writer.write_split(subset, "test", queries=queries, qrels=qrels)


def write_runs(runs_dir: Path, n_queries: int, n_systems: int, depth: int) -> list[Path]:
    """One runs folder per system: ``<Task>/<subset>/test.trec`` of depth ``depth``."""
    folders = []
    for k in range(n_systems):
        folder = runs_dir / f"system{k}"
        rng = np.random.default_rng(100 + k)
        for task, _subset in irsc_tasks():
            path = folder / task / SETTING / "test.trec"
            path.parent.mkdir(parents=True, exist_ok=True)
            # system k ranks the relevant document within its top `depth` with probability (k + 1) / (n + 1)
            hit = rng.random(n_queries) < (k + 1) / (n_systems + 1)
            where = rng.integers(0, depth, n_queries)
            starts = rng.integers(0, 2 * n_queries, n_queries)
            lines = []
            for q in range(n_queries):
                others = (starts[q] + np.arange(depth + 1)) % (2 * n_queries)  # distinct documents, cheaply
                docs = [f"d{d}" for d in others if d != q][:depth]
                if hit[q]:
                    docs[where[q]] = f"d{q}"
                lines += [f"q{q} Q0 {d} {r + 1} {depth - r} system{k}\n" for r, d in enumerate(docs)]
            path.write_text("".join(lines), encoding="utf-8")
        folders.append(folder)
    return folders


def write_qrels(qrels_dir: Path, n_queries: int) -> dict[str, Path]:
    qrels_dir.mkdir(parents=True, exist_ok=True)
    files = {}
    for task, _subset in irsc_tasks():
        files[task] = qrels_dir / f"{task}.qrels"
        files[task].write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(n_queries)), encoding="utf-8")
    return files


class Took:
    """Wall and CPU seconds (user + system, every thread) of what was timed."""

    def __init__(self, wall: float = 0.0, cpu: float = 0.0):
        self.wall, self.cpu = wall, cpu

    def __add__(self, other: Took) -> Took:
        return Took(self.wall + other.wall, self.cpu + other.cpu)

    def __str__(self) -> str:
        return f"{self.wall:.1f} s wall, {self.cpu:.1f} s CPU"


def timed(command: list[str], cwd: Path) -> Took:
    """Run ``command`` to its end as a fresh process; its wall time and its CPU time (from the kernel's account of
    the children waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return Took(wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def mteb_measures(result_dir: Path) -> list[str]:
    """The ir_measures names of the ad hoc measures one task's result holds (what run --runs computed)."""
    from complexir.metrics.measures import from_mteb_key

    result = json.loads(next(p for p in result_dir.rglob("IRSC*.json")).read_text())
    names = []
    for key, value in result["scores"]["test"][0].items():
        if not isinstance(value, (int, float)):
            continue
        try:
            measure = from_mteb_key(key)
        except ValueError:
            continue
        if measure.kind == "adhoc":
            names.append(measure.name)
    return sorted(set(names))


IR_MEASURES_SCRIPT = """
import sys, ir_measures
measures = [ir_measures.parse_measure(m) for m in sys.argv[3].split(",")]
rows = sum(1 for _ in ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(sys.argv[1]),
                                            ir_measures.read_trec_run(sys.argv[2])))
print(rows)
"""

RANX_SCRIPT = """
import json, sys, time
from ranx import Qrels, Run, compare
args = json.loads(sys.argv[1])
small = Qrels({"q": {"d": 1}}), [Run({"q": {"d": 1.0, "e": 0.5}}, name=f"w{i}") for i in range(2)]
start = time.perf_counter()
compare(small[0], small[1], metrics=args["metrics"], stat_test="fisher", n_permutations=10)  # numba compiles
warm = time.perf_counter() - start
start, cpu = time.perf_counter(), time.process_time()
for task in args["tasks"]:
    qrels = Qrels.from_file(args["qrels"][task], kind="trec")
    runs = [Run.from_file(f"{folder}/{task}/{args['setting']}/test.trec", kind="trec", name=f"s{k}")
            for k, folder in enumerate(args["runs"])]
    compare(qrels, runs, metrics=args["metrics"], stat_test="fisher", n_permutations=args["resamples"])
print(json.dumps({"warm_up": warm, "wall": time.perf_counter() - start, "cpu": time.process_time() - cpu}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=10_000, help="ranx's permutations")
    parser.add_argument("--ranx-tasks", type=int, default=None, help="time ranx on this many tasks, scaled to all")
    parser.add_argument("--ranx-systems", type=int, default=None,
                        help="time ranx on the pairs of this many systems, scaled to all pairs")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--skip-ranx", action="store_true")
    parser.add_argument("--skip-ir-measures", action="store_true")
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_compare_")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    tasks = irsc_tasks()
    print(f"{len(tasks)} tasks x {args.queries:,} queries (one relevant document each), {args.systems} systems, "
          f"runs of depth {args.depth}; in {work}", flush=True)
    start = time.perf_counter()
    build_data(work / "data", args.queries)
    runs = write_runs(work / "runs", args.queries, args.systems, args.depth)
    qrels = write_qrels(work / "qrels", args.queries)
    print(f"data and runs written in {time.perf_counter() - start:.1f} s", flush=True)

    python = sys.executable
    results = [work / "results" / f"system{k}" for k in range(len(runs))]
    for folder in results:
        shutil.rmtree(folder, ignore_errors=True)
    run_seconds = []
    for k, (folder, out) in enumerate(zip(runs, results, strict=True)):
        command = [python, "-m", "complexir.cli.main", "run", "--runs", str(folder), "--benchmark", "IRSC",
                   "--data-dir", str(work / "data"), "--output", str(out), "--model-name", f"bench/system{k}"]
        run_seconds.append(timed(command, work))
        print(f"complexir run --runs system{k}: {run_seconds[-1]}", flush=True)
    if not args.skip_ir_measures:
        measures = mteb_measures(results[0])
        ir_seconds = Took()
        for task, _subset in tasks:
            ir_seconds += timed([python, "-c", IR_MEASURES_SCRIPT, str(qrels[task]),
                                 str(runs[0] / task / SETTING / "test.trec"), ",".join(measures)], work)
        print(f"ir_measures, the same {len(measures)} measures, {len(tasks)} run files: {ir_seconds}", flush=True)
        print(f"run --runs / ir_measures (system0): {run_seconds[0].wall / ir_seconds.wall:.2f}x wall, "
              f"{run_seconds[0].cpu / ir_seconds.cpu:.2f}x CPU", flush=True)

    out = work / "compare"
    compare_seconds = timed([python, "-m", "complexir.cli.main", "compare", *map(str, results), "--out", str(out),
                             "--no-progress"], work)
    report = json.loads((out / "compare.json").read_text())
    pairs = args.systems * (args.systems - 1) // 2
    print(f"complexir compare: {compare_seconds} ({len(report['tests'])} tests: {pairs} pairs x "
          f"{len({(t['task'], t['measure']) for t in report['tests']})} task-measures, with intervals)", flush=True)
    if not args.skip_ranx:
        timed_tasks = tasks[: args.ranx_tasks] if args.ranx_tasks else tasks
        timed_runs = runs[: args.ranx_systems] if args.ranx_systems else runs
        timed_pairs = len(timed_runs) * (len(timed_runs) - 1) // 2
        spec = {"tasks": [t for t, _ in timed_tasks], "setting": SETTING, "runs": list(map(str, timed_runs)),
                "qrels": {t: str(p) for t, p in qrels.items()}, "metrics": MEASURES_RANX,
                "resamples": args.resamples}
        done = subprocess.run([python, "-c", RANX_SCRIPT, json.dumps(spec)], cwd=work, capture_output=True,
                              text=True)
        if done.returncode != 0:
            sys.exit(f"ranx failed:\n{done.stderr[-4000:]}")
        ranx = json.loads(done.stdout.strip().splitlines()[-1])
        share = len(tasks) / len(timed_tasks) * pairs / timed_pairs
        scaled = Took(ranx["wall"] * share, ranx["cpu"] * share)
        note = "" if share == 1 else (f" (timed on {timed_pairs} of {pairs} pairs x {len(timed_tasks)} of "
                                      f"{len(tasks)} tasks: {Took(ranx['wall'], ranx['cpu'])}; scaled)")
        print(f"ranx.compare (fisher, {args.resamples:,} permutations, {pairs} pairs x {len(tasks)} tasks x "
              f"{len(MEASURES_RANX)} measures): {scaled}{note}; numba warm-up {ranx['warm_up']:.1f} s not counted",
              flush=True)
        print(f"complexir compare / ranx.compare: {compare_seconds.wall / scaled.wall:.2f}x wall, "
              f"{compare_seconds.cpu / scaled.cpu:.2f}x CPU", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
