"""Timings of complexir.metrics against the reference tools, on synthetic data (a script, not a test).

    python benchmarks/bench_metrics.py [--topics 1000] [--docs 1000] [--nuggets 20] [--pool 100] [--repeat 5]

Every timed call starts from the same Python inputs and does its whole job, conversion included. The
headline rows all start from the same scored run, the input the reference tools take:

- judgments ``{topic: {nugget: {doc: label}}}``, qrels ``{query: {doc: label}}`` and a scored run
  ``{query: {doc: score}}`` (random float scores, so no ties and every tool's tie rule agrees).
- complexir: ``rank_run(run, depth=max_depth(measures))`` (only the top k of each query is ordered),
  then ``coverage_per_query`` / ``adhoc_per_query`` (no state kept between calls).
- ir_measures (pyndeval provider): building its ``Qrel`` list from the judgments (it needs the nugget in
  the iteration field), then ``iter_calc`` on the scored run dict as is, to the end.
- pyndeval directly: building its qrel and run tuples from the dicts, the evaluator, ``evaluate``.
- pytrec_eval: evaluator from the qrels dict, ``evaluate`` on the scored run dict (its native input).

Secondary rows: complexir with the rankings given (``rank_run(run)`` done beforehand), and
``rank_run`` alone, full and at depth k.

The machine may be shared, so the candidates are timed round-robin (one of each per repetition, so a
load change hits all of them) and the median of the repetitions is reported; the ratios matter, the
absolute times do not. Values are checked equal (max abs difference printed) before any ratio counts;
the exit status is 1 if any difference exceeds 1e-12.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from complexir.metrics import adhoc_per_query, coverage_per_query, max_depth, rank_run


def round_robin(cases: dict[str, Callable[[], object]], repeat: int) -> tuple[dict[str, float], dict[str, object]]:
    """Median wall time of each case over ``repeat`` rounds (each round runs every case once), last results."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    results: dict[str, object] = {}
    for _ in range(repeat):
        for name, fn in cases.items():
            t0 = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}, results


def make_data(topics, docs, nuggets, pool, seed=0):
    rng = np.random.default_rng(seed)
    judgments, qrels, run = {}, {}, {}
    for t in range(topics):
        tid = str(t + 1)
        pool_ids = [f"t{t}_d{i}" for i in range(pool)]
        nug = {}
        for n in range(nuggets):
            members = rng.choice(pool, size=rng.integers(1, 15), replace=False)
            nug[str(n + 1)] = {pool_ids[i]: int(rng.integers(0, 3)) for i in members}
        judgments[tid] = nug
        qrels[tid] = {d: int(rng.integers(0, 4)) for d in pool_ids}
        ranked = pool_ids + [f"t{t}_x{i}" for i in range(docs - pool)]
        scores = rng.random(docs)
        run[tid] = dict(zip(ranked, scores.tolist(), strict=True))
    return judgments, qrels, run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--nuggets", type=int, default=20)
    ap.add_argument("--pool", type=int, default=100, help="judged docs per topic")
    ap.add_argument("--repeat", type=int, default=5, help="rounds; medians are reported")
    args = ap.parse_args(argv)
    judgments, qrels, run = make_data(args.topics, args.docs, args.nuggets, args.pool)
    rankings = rank_run(run)
    print(f"data: {args.topics} topics x {args.docs} ranked docs x {args.nuggets} nuggets, "
          f"{args.pool} judged docs per topic; median of {args.repeat} round-robin rounds")

    # ---- rank_run alone ---------------------------------------------------------------------------
    rank_cases = {"rank_run(run), full rankings": lambda: rank_run(run)}
    for k in (20, 100):
        rank_cases[f"rank_run(run, depth={k})"] = lambda k=k: rank_run(run, depth=k)
    med_r, res_r = round_robin(rank_cases, args.repeat)
    for k in (20, 100):
        assert res_r[f"rank_run(run, depth={k})"] == {q: r[:k] for q, r in rankings.items()}
    print(f"\nrank_run ({args.docs} docs per query)")
    for name, sec in med_r.items():
        print(f"  {name:70s} {sec:8.3f} s")

    # ---- coverage ---------------------------------------------------------------------------------
    import ir_measures
    import pyndeval

    cov_names = ["alpha_nDCG@20", "StRecall@20"]
    cov_depth = max_depth(cov_names)
    irm_measures = [ir_measures.parse_measure(n) for n in cov_names]

    def irm_scored_run():
        irm_qrels = [ir_measures.Qrel(t, d, lab, n) for t, ns in judgments.items() for n, ds in ns.items()
                     for d, lab in ds.items()]
        return list(ir_measures.iter_calc(irm_measures, irm_qrels, run))

    def pyndeval_scored_run():
        sub_qrels = [(t, n, d, lab) for t, ns in judgments.items() for n, ds in ns.items() for d, lab in ds.items()]
        ref_run = [(t, d, score) for t, ds in run.items() for d, score in ds.items()]
        return pyndeval.RelevanceEvaluator(sub_qrels, ["alpha-nDCG@20", "strec@20"]).evaluate(ref_run)

    cov_cases = {
        f"complexir rank_run(depth={cov_depth}) + coverage_per_query": lambda: coverage_per_query(
            judgments, rank_run(run, depth=cov_depth), cov_names
        ),
        "ir_measures (Qrel conversion + iter_calc on the run dict)": irm_scored_run,
        "pyndeval directly (tuple conversion + evaluate)": pyndeval_scored_run,
        "complexir coverage_per_query, rankings given": lambda: coverage_per_query(judgments, rankings, cov_names),
    }
    med, res = round_robin(cov_cases, args.repeat)
    ours_name, irm_name, pnd_name, given_name = cov_cases
    ours = res[ours_name]
    assert ours == res[given_name]
    diffs = {irm_name: max(abs(ours[str(r.measure)][r.query_id] - r.value) for r in res[irm_name])}
    ref = res[pnd_name]
    diffs[pnd_name] = max(
        max(abs(ours["alpha_nDCG@20"][t] - ref[t]["alpha-nDCG@20"]), abs(ours["StRecall@20"][t] - ref[t]["strec@20"]))
        for t in ref
    )
    print("\nalpha_nDCG@20 + StRecall@20, from the scored run")
    for name, sec in med.items():
        note = f"   max |diff| {diffs[name]:.1e}" if name in diffs else ""
        print(f"  {name:70s} {sec:8.3f} s{note}")
    print(f"  speed-up from the scored run: {med[irm_name] / med[ours_name]:5.1f}x vs ir_measures, "
          f"{med[pnd_name] / med[ours_name]:5.1f}x vs pyndeval")

    # ---- ad hoc -----------------------------------------------------------------------------------
    import pytrec_eval

    adhoc_names = ["nDCG@10", "R@100", "AP@10"]
    adhoc_depth = max_depth(adhoc_names)

    def run_trec():
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "map_cut.10"})
        return ev.evaluate(run)

    adhoc_cases = {
        f"complexir rank_run(depth={adhoc_depth}) + adhoc_per_query": lambda: adhoc_per_query(
            qrels, rank_run(run, depth=adhoc_depth), adhoc_names
        ),
        "pytrec_eval (evaluator + evaluate on the run dict)": run_trec,
        "complexir adhoc_per_query, rankings given": lambda: adhoc_per_query(qrels, rankings, adhoc_names),
    }
    med_a, res_a = round_robin(adhoc_cases, args.repeat)
    a_run_name, trec_name, a_given_name = adhoc_cases
    ours_a, ref_a = res_a[a_run_name], res_a[trec_name]
    assert ours_a == res_a[a_given_name]
    tnames = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "AP@10": "map_cut_10"}
    diff_a = max(abs(ours_a[n][q] - ref_a[q][tn]) for n, tn in tnames.items() for q in ref_a)
    print("\nnDCG@10 + R@100 + AP@10, from the scored run")
    for name, sec in med_a.items():
        note = f"   max |diff| {diff_a:.1e}" if name == trec_name else ""
        print(f"  {name:70s} {sec:8.3f} s{note}")
    print(f"  speed-up from the scored run: {med_a[trec_name] / med_a[a_run_name]:5.1f}x vs pytrec_eval")
    return 0 if max(*diffs.values(), diff_a) <= 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
