"""End-to-end timings of ``complexir evaluate`` on TREC files against the reference tools (a script, not a test).

    python speed/bench_metrics.py [--repeat 3] [--ndeval PATH] [--trec-eval PATH] [--workdir DIR]
                                       [--baseline-pythonpath DIR] [--only coverage|adhoc]

Every tool is run as a user runs it: a fresh process reading the same two files from disk and computing the
same measures, per query, to the end (Python start-up, imports and parsing included). Timed: wall time and
the process's peak RSS (``wait4``). The files are synthetic and written once into ``--workdir``:

- coverage: ``--topics`` (1,000) topics x ``--docs`` (1,000) ranked docs, ``--nuggets`` (20) nuggets per topic
  judged on ``--pool`` (100) docs (each nugget on 1-14 of them, grades 0-2), ndeval's qrels format;
  alpha-nDCG@20 + StRecall@20. Tools: complexir, ndeval (C), ir_measures (pyndeval provider).
- ad hoc: ``--queries`` (10,000) queries x ``--docs`` ranked docs, ``--pool`` judged docs per query (grades
  0-3); nDCG@10 + R@100 + AP@10. Tools: complexir, trec_eval (C), pytrec_eval (its own file parsers, then
  ``evaluate``).

Scores are random floats (no ties, so every tool's tie rule agrees) and each run file lists a query's docs by
rank, rank column consistent with the scores (ndeval orders by it). ``--baseline-pythonpath`` adds
"complexir before": the same command with ``PYTHONPATH`` pointing at another source tree of the package
(e.g. an older commit laid out as an importable ``complexir``), for before/after figures.

Candidates run round-robin (one of each per round, so a load change hits all of them; each round starts one
further along, so no tool always follows the same one) and the median of the rounds is reported: the machine may
be shared, the ratios matter. Before each run the two files are read once, so every tool finds them in the page
cache, whatever the previous tool's memory pushed out of it. Every process starts in ``--workdir``: started from
a checkout, ``python -m`` would put the checkout's ``complexir`` ahead of ``--baseline-pythonpath``. Per-query
values are compared with
complexir's: pytrec_eval and ir_measures to 1e-12; trec_eval and ndeval print 4 and 6 decimals, so to half
a unit of their last digit. Exit status 1 if any comparison fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
COVERAGE = ("alpha_nDCG@20", "StRecall@20")
ADHOC = ("nDCG@10", "R@100", "AP@10")
TREC_EVAL_NAMES = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "AP@10": "map_cut_10"}
NDEVAL_NAMES = {"alpha_nDCG@20": "alpha-nDCG@20", "StRecall@20": "strec@20"}

IRM_SCRIPT = """
import sys, ir_measures
measures = [ir_measures.parse_measure(m) for m in sys.argv[3:]]
qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))  # iteration column = nugget id, as pyndeval reads it
for m in measures:  # one call per measure: mixed parameters in one call are a known ir_measures trap
    for r in ir_measures.iter_calc([m], qrels, ir_measures.read_trec_run(sys.argv[2])):
        print(f"{r.measure}\\t{r.query_id}\\t{r.value!r}")
"""
PYTREC_SCRIPT = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
names = {"ndcg_cut_10": "nDCG@10", "recall_100": "R@100", "map_cut_10": "AP@10"}
res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "map_cut.10"}).evaluate(run)
for q, ms in res.items():
    for k, v in ms.items():
        print(f"{names[k]}\\t{q}\\t{v!r}")
"""


# ---- data ---------------------------------------------------------------------------------------------------------

def _write(path: Path, **columns) -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    pcsv.write_csv(pa.table(columns), path,
                   pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))


def _ids(prefix: str, ints: np.ndarray):
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(ints), pa.string()), "")


def write_run(path: Path, topics: int, docs: int, pool: int, rng: np.random.Generator) -> None:
    """Each topic's docs by rank: the judged pool (t<T>_d<i>) and unjudged ones (t<T>_x<i>) shuffled by score."""
    import pyarrow as pa
    import pyarrow.compute as pc

    score = rng.random((topics, docs))
    order = np.argsort(-score, axis=1)  # doc index at each rank
    t = np.repeat(np.arange(topics), docs)
    i = order.ravel()
    doc = pc.binary_join_element_wise(_ids("t", t), pc.if_else(pa.array(i < pool), _ids("_d", i),
                                                                _ids("_x", i - pool)), "")
    n = topics * docs
    _write(path, topic=pc.cast(pa.array(t + 1), pa.string()), q0=pa.array(np.full(n, "Q0")), doc=doc,
           rank=pa.array(np.tile(np.arange(1, docs + 1), topics)),
           score=pa.array(np.take_along_axis(score, order, axis=1).ravel()), tag=pa.array(np.full(n, "bench")))


def write_qrels(path: Path, topics: int, pool: int, rng: np.random.Generator) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    t = np.repeat(np.arange(topics), pool)
    i = np.tile(np.arange(pool), topics)
    _write(path, topic=pc.cast(pa.array(t + 1), pa.string()), iteration=pa.array(np.zeros(len(t), np.int64)),
           doc=pc.binary_join_element_wise(_ids("t", t), _ids("_d", i), ""),
           label=pa.array(rng.integers(0, 4, len(t))))


def write_nugget_qrels(path: Path, topics: int, pool: int, nuggets: int, rng: np.random.Generator) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    sizes = rng.integers(1, min(15, pool + 1), topics * nuggets)
    t = np.repeat(np.repeat(np.arange(topics), nuggets), sizes)
    nugget = np.repeat(np.tile(np.arange(1, nuggets + 1), topics), sizes)
    members = np.concatenate([rng.choice(pool, size=s, replace=False) for s in sizes])
    _write(path, topic=pc.cast(pa.array(t + 1), pa.string()), nugget=pa.array(nugget),
           doc=pc.binary_join_element_wise(_ids("t", t), _ids("_d", members), ""),
           label=pa.array(rng.integers(0, 3, len(t))))


def make_files(workdir: Path, args: argparse.Namespace) -> dict[str, tuple[Path, Path]]:
    rng = np.random.default_rng(0)
    cov = (workdir / f"cov_{args.topics}x{args.docs}x{args.nuggets}.qrels",
           workdir / f"cov_{args.topics}x{args.docs}.run")
    adhoc = (workdir / f"adhoc_{args.queries}x{args.pool}.qrels", workdir / f"adhoc_{args.queries}x{args.docs}.run")
    if not cov[0].exists():
        write_nugget_qrels(cov[0], args.topics, args.pool, args.nuggets, rng)
    if not cov[1].exists():
        write_run(cov[1], args.topics, args.docs, args.pool, rng)
    if not adhoc[0].exists():
        write_qrels(adhoc[0], args.queries, args.pool, rng)
    if not adhoc[1].exists():
        write_run(adhoc[1], args.queries, args.docs, args.pool, rng)
    return {"coverage": cov, "adhoc": adhoc}


# ---- running ------------------------------------------------------------------------------------------------------

GNU_TIME = Path("/usr/bin/time").exists()


def read_through(paths: list[str]) -> None:
    """Read the files once, so that the timed process finds them in the page cache."""
    for path in paths:
        with open(path, "rb", buffering=0) as fh:
            while fh.read(1 << 24):
                pass


def timed(cmd: list[str], env: dict[str, str] | None, cwd: Path) -> tuple[float, float | None, str]:
    """Wall seconds, peak RSS in MiB (None without GNU time) and stdout of one process started in ``cwd``.

    The peak RSS comes from GNU time, which forks from a small process: a child forked from this Python
    process carries this process's RSS until it execs, and the kernel's high-water mark keeps it.
    """
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as rss:
        wrapped = ["/usr/bin/time", "-f", "%M", "-o", rss.name, *cmd] if GNU_TIME else cmd
        t0 = time.perf_counter()
        proc = subprocess.run(wrapped, stdout=out, stderr=subprocess.PIPE, env=env, cwd=cwd)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        out.seek(0)
        peak = int(rss.read().split()[-1]) / 1024 if GNU_TIME else None
        return wall, peak, out.read().decode()


def parse_tab(text: str) -> dict[str, dict[str, float]]:
    """MEASURE<TAB>QUERY<TAB>VALUE lines (complexir, our ir_measures/pytrec_eval wrappers)."""
    out: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        name, query, value = line.split("\t")
        if query != "all":
            out.setdefault(name, {})[query] = float(value)
    return out


def parse_trec_eval(text: str) -> dict[str, dict[str, float]]:
    names = {v: k for k, v in TREC_EVAL_NAMES.items()}
    out: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        name, query, value = line.split()
        if query != "all" and name in names:
            out.setdefault(names[name], {})[query] = float(value)
    return out


def parse_ndeval(text: str) -> dict[str, dict[str, float]]:
    lines = text.splitlines()
    header = lines[0].split(",")
    out: dict[str, dict[str, float]] = {}
    for line in lines[1:]:
        row = dict(zip(header, line.split(","), strict=True))
        if row["topic"] != "amean":
            for ours, theirs in NDEVAL_NAMES.items():
                out.setdefault(ours, {})[row["topic"]] = float(row[theirs])
    return out


def max_diff(ours: dict, theirs: dict, names) -> float:
    worst = 0.0
    for name in names:
        mine, ref = ours[name], theirs.get(name, {})
        for q, value in mine.items():
            worst = max(worst, abs(value - ref.get(q, 0.0)))  # a query a tool leaves out counts as 0
    return worst


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=1000, help="coverage topics")
    ap.add_argument("--queries", type=int, default=10000, help="ad hoc queries")
    ap.add_argument("--docs", type=int, default=1000, help="ranked docs per query")
    ap.add_argument("--nuggets", type=int, default=20)
    ap.add_argument("--pool", type=int, default=100, help="judged docs per query")
    ap.add_argument("--repeat", type=int, default=3, help="rounds; medians are reported")
    ap.add_argument("--ndeval", default=str(REPO.parent / "shared" / "bin" / "ndeval"),
                    help="ndeval binary (skipped when absent)")
    ap.add_argument("--trec-eval", default=str(REPO.parent / "shared" / "bin" / "trec_eval"),
                    help="trec_eval binary (skipped when absent)")
    ap.add_argument("--workdir", default=None, help="where the files are written (kept; default: a temp dir)")
    ap.add_argument("--baseline-pythonpath", default=None,
                    help="also time 'complexir before': the same command with PYTHONPATH=DIR")
    ap.add_argument("--only", choices=("coverage", "adhoc"), default=None)
    args = ap.parse_args(argv)

    workdir = Path(args.workdir).resolve() if args.workdir else Path(tempfile.mkdtemp(prefix="bench_metrics_"))
    workdir.mkdir(parents=True, exist_ok=True)
    files = make_files(workdir, args)
    py = sys.executable
    ours = [py, "-m", "complexir.cli.main", "evaluate", "--per-query", "--digits", "17"]
    base_env = None
    if args.baseline_pythonpath:
        base_env = {**os.environ, "PYTHONPATH": args.baseline_pythonpath}
    failed = False
    for kind in ("coverage", "adhoc"):
        if args.only and kind != args.only:
            continue
        qrels, run = map(str, files[kind])
        names = COVERAGE if kind == "coverage" else ADHOC
        mflags = [a for n in names for a in ("-m", n)]
        nug = ["--nuggets"] if kind == "coverage" else []
        cases: dict[str, tuple[list[str], dict | None, object, float]] = {
            "complexir evaluate": ([*ours, *nug, *mflags, qrels, run], None, parse_tab, 0.0),
        }
        if base_env:
            cases["complexir before"] = ([*ours, *nug, *mflags, qrels, run], base_env, parse_tab, 1e-12)
        if kind == "coverage":
            if shutil.which(args.ndeval) or Path(args.ndeval).is_file():
                cases["ndeval (C)"] = ([args.ndeval, qrels, run], None, parse_ndeval, 5e-7 + 1e-12)
            cases["ir_measures"] = ([py, "-c", IRM_SCRIPT, qrels, run, *names], None, parse_tab, 1e-12)
        else:
            if shutil.which(args.trec_eval) or Path(args.trec_eval).is_file():
                cases["trec_eval (C)"] = ([args.trec_eval, "-q", "-m", "ndcg_cut.10", "-m", "recall.100", "-m",
                                           "map_cut.10", qrels, run], None, parse_trec_eval, 5e-5 + 1e-12)
            cases["pytrec_eval"] = ([py, "-c", PYTREC_SCRIPT, qrels, run], None, parse_tab, 1e-12)
        times: dict[str, list[float]] = {name: [] for name in cases}
        rss: dict[str, list[float | None]] = {name: [] for name in cases}
        outputs: dict[str, str] = {}
        order = list(cases)
        for round_ in range(args.repeat):
            start = round_ % len(order)
            for name in order[start:] + order[:start]:
                cmd, env = cases[name][:2]
                read_through([qrels, run])
                wall, peak, out = timed(cmd, env, workdir)
                times[name].append(wall)
                rss[name].append(peak)
                outputs[name] = out
        mine = parse_tab(outputs["complexir evaluate"])
        size = sum(Path(p).stat().st_size for p in (qrels, run)) / 2**20
        what = (f"{args.topics} topics x {args.docs} ranked docs x {args.nuggets} nuggets" if kind == "coverage"
                else f"{args.queries} queries x {args.docs} ranked docs, {args.pool} judged each")
        print(f"\n{kind}: {' + '.join(names)} on {what} ({size:.0f} MiB of TREC files); "
              f"median of {args.repeat} round-robin rounds")
        ref = statistics.median(times["complexir evaluate"])
        for name, (_cmd, _env, parse, tol) in cases.items():
            med = statistics.median(times[name])
            note = ""
            if name != "complexir evaluate":
                diff = max_diff(mine, parse(outputs[name]), names)
                ok = diff <= tol
                failed |= not ok
                note = f"  {med / ref:5.1f}x complexir's time   max |diff| {diff:.1e} {'ok' if ok else 'FAIL'}"
            peak = f"{statistics.median(rss[name]):7.0f} MiB" if rss[name][0] is not None else "    n/a"
            print(f"  {name:22s} {med:8.2f} s   peak RSS {peak}{note}")
    print(f"\nfiles kept in {workdir}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
