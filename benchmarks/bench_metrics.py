"""Timings of complexir.metrics against the reference tools, on synthetic data (a script, not a test).

    python benchmarks/bench_metrics.py [--topics 1000] [--docs 1000] [--nuggets 20] [--repeat 3]

Coverage: alpha_nDCG@20 + StRecall@20 over topics x ranked docs x nuggets, against pyndeval directly and
through ir_measures. Ad hoc: nDCG@10, R@100, AP@10 against pytrec_eval. Every timing starts from the same
scored run (dict of dicts); "ours" includes rank_run (sorting, trec_eval tie rule). Values are checked
equal (max abs difference printed) before any ratio is reported.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from complexir.metrics import adhoc_per_query, coverage_per_query, rank_run


def best_of(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


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
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    judgments, qrels, run = make_data(args.topics, args.docs, args.nuggets, args.pool)
    print(f"data: {args.topics} topics x {args.docs} ranked docs x {args.nuggets} nuggets, "
          f"{args.pool} judged docs per topic")

    # ---- coverage ---------------------------------------------------------------------------------
    cov_names = ["alpha_nDCG@20", "StRecall@20"]
    t_rank, rankings = best_of(lambda: rank_run(run), args.repeat)
    t_cov, ours = best_of(lambda: coverage_per_query(judgments, rankings, cov_names), args.repeat)
    print(f"complexir rank_run                         {t_rank:8.3f} s")
    print(f"complexir coverage_per_query (given ranks) {t_cov:8.3f} s")
    ours_total = t_rank + t_cov

    import pyndeval

    # reference traps avoided: ties broken by us, nugget ids renumbered per topic (they already are)
    sub_qrels = [pyndeval.SubtopicQrel(t, n, d, lab) for t, ns in judgments.items() for n, ds in ns.items()
                 for d, lab in ds.items()]
    ref_run = [pyndeval.ScoredDoc(t, d, float(len(ds) - i)) for t, ds in rankings.items() for i, d in enumerate(ds)]

    def run_pyndeval():
        ev = pyndeval.RelevanceEvaluator(sub_qrels, ["alpha-nDCG@20", "strec@20"])
        return ev.evaluate(ref_run)

    t_pnd, ref = best_of(run_pyndeval, args.repeat)
    diff = max(abs(ours["alpha_nDCG@20"][t] - ref[t]["alpha-nDCG@20"]) for t in ref)
    diff = max(diff, max(abs(ours["StRecall@20"][t] - ref[t]["strec@20"]) for t in ref))
    print(f"pyndeval (already-ranked run)              {t_pnd:8.3f} s   max |diff| {diff:.1e}")

    import ir_measures

    irm_qrels = [ir_measures.Qrel(t, d, lab, n) for t, ns in judgments.items() for n, ds in ns.items()
                 for d, lab in ds.items()]
    irm_run = [ir_measures.ScoredDoc(t, d, s) for t, ds in rankings.items()
               for d, s in zip(ds, range(len(ds), 0, -1), strict=True)]
    measures = [ir_measures.parse_measure(n) for n in cov_names]
    t_irm, irm = best_of(lambda: list(ir_measures.iter_calc(measures, irm_qrels, irm_run)), 1)
    diff_irm = max(abs(ours[str(r.measure)][r.query_id] - r.value) for r in irm)
    print(f"ir_measures (pyndeval provider)            {t_irm:8.3f} s   max |diff| {diff_irm:.1e}")
    print(f"coverage speed-up: {t_pnd / t_cov:6.1f}x vs pyndeval, {t_irm / t_cov:6.1f}x vs ir_measures "
          f"(rankings given); {t_pnd / ours_total:5.1f}x / {t_irm / ours_total:5.1f}x including rank_run")

    # ---- ad hoc -----------------------------------------------------------------------------------
    import pytrec_eval

    adhoc_names = ["nDCG@10", "R@100", "AP@10"]
    t_adhoc, ours_a = best_of(lambda: adhoc_per_query(qrels, rank_run(run), adhoc_names), args.repeat)
    t_adhoc_only, _ = best_of(lambda: adhoc_per_query(qrels, rankings, adhoc_names), args.repeat)

    def run_trec():
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "map_cut.10"})
        return ev.evaluate(run)

    t_trec, ref_a = best_of(run_trec, args.repeat)
    names = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "AP@10": "map_cut_10"}
    diff_a = max(abs(ours_a[n][q] - ref_a[q][tn]) for n, tn in names.items() for q in ref_a)
    print(f"complexir rank_run + adhoc_per_query       {t_adhoc:8.3f} s   (given ranks: {t_adhoc_only:.3f} s)")
    print(f"pytrec_eval                                {t_trec:8.3f} s   max |diff| {diff_a:.1e}")
    print(f"ad hoc speed-up: {t_trec / t_adhoc:5.1f}x vs pytrec_eval (same scored run), "
          f"{t_trec / t_adhoc_only:5.1f}x with rankings given")
    return 0 if max(diff, diff_irm, diff_a) <= 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
