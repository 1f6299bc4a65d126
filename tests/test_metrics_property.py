"""Random cases (hypothesis): complexir.metrics equals pytrec_eval and pyndeval/ir_measures to 1e-12.

Cases include score ties, duplicate docs, unjudged docs, empty runs, topics without relevant docs,
alpha != 0.5 and k != 20. Reference-tool traps (METRICS.md) are avoided on the reference side: ties are
broken before the run is handed over, nugget ids travel in Qrel.iteration, renumbered per topic, and
each measure gets its own ir_measures call.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from complexir.metrics import adhoc_per_query, coverage_per_query, rank_run

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DOCS = [f"d{i}" for i in range(10)]
TOPICS = ["1", "2", "3"]

scores = st.sampled_from([0.0, 1.0, 2.0, 2.5, -1.0, 3.0])  # few values: many ties


@st.composite
def adhoc_case(draw):
    qrels, run = {}, {}
    for q in TOPICS:
        judged = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), min_size=1, max_size=8))
        qrels[q] = judged
        if draw(st.booleans()) or q == "1":
            run[q] = draw(st.dictionaries(st.sampled_from(DOCS + ["x1", "x2"]), scores, max_size=12))
    k = draw(st.sampled_from([1, 2, 3, 5, 10, 20]))
    return qrels, run, k


def _distinct_scores(rankings):
    return {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in rankings.items() if docs}


@SETTINGS
@given(adhoc_case(), st.randoms(use_true_random=False))
def test_adhoc_equals_pytrec_eval(case, rnd):
    qrels, run, k = case
    rankings = rank_run(run)
    # insert duplicates after their first occurrence: they must count once, at the first rank
    dup = {}
    for q, docs in rankings.items():
        docs = list(docs)
        for _ in range(rnd.randint(0, 2)):
            if docs:
                i = rnd.randrange(len(docs))
                docs.insert(rnd.randint(i + 1, len(docs)), docs[i])
        dup[q] = docs
    names = [f"nDCG@{k}", f"R@{k}", f"P@{k}", f"AP@{k}", "AP", "nDCG", f"RR@{k}", "RR", f"R(rel=2)@{k}"]
    ours = adhoc_per_query(qrels, dup, names)
    tmap = {f"nDCG@{k}": f"ndcg_cut_{k}", f"R@{k}": f"recall_{k}", f"P@{k}": f"P_{k}",
            f"AP@{k}": f"map_cut_{k}", "AP": "map", "nDCG": "ndcg", "RR": "recip_rank"}
    raw = {q: s for q, s in run.items() if s}
    # trec_eval on the raw tied run: its tie rule must be ours
    ref = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}", f"recall.{k}", f"P.{k}", f"map_cut.{k}",
                                                 "map", "ndcg", "recip_rank"}).evaluate(raw)
    for name, tname in tmap.items():
        for q in qrels:
            assert ours[name][q] == pytest.approx(ref.get(q, {}).get(tname, 0.0), abs=1e-12), (name, q)
    top = {q: {d: s for d, s in sc.items() if d in set(rankings[q][:k])} for q, sc in raw.items()}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate({q: s for q, s in top.items() if s})
    rel2 = pytrec_eval.RelevanceEvaluator(qrels, {f"recall.{k}"}, relevance_level=2).evaluate(raw)
    for q in qrels:
        assert ours[f"RR@{k}"][q] == pytest.approx(rr.get(q, {}).get("recip_rank", 0.0), abs=1e-12)
        assert ours[f"R(rel=2)@{k}"][q] == pytest.approx(rel2.get(q, {}).get(f"recall_{k}", 0.0), abs=1e-12)


@st.composite
def coverage_case(draw):
    judgments, rankings = {}, {}
    for t in TOPICS:
        nuggets = {}
        for n in range(draw(st.integers(1, 4))):
            nuggets[str(n + 1)] = draw(
                st.dictionaries(st.sampled_from(DOCS), st.integers(0, 2), min_size=1, max_size=6)
            )
        judgments[t] = nuggets
        if draw(st.booleans()) or t == "1":
            rankings[t] = rank_run({"q": draw(st.dictionaries(st.sampled_from(DOCS + ["x1"]), scores,
                                                               max_size=11))})["q"]
    k = draw(st.integers(1, 20))
    alpha = draw(st.sampled_from([0.5, 0.25, 0.75, 0.9, 0.0, 1.0]))
    return judgments, rankings, k, alpha


def _ir_measures_ref(name, judgments, rankings):
    qrels = [ir_measures.Qrel(t, d, lab, n) for t, ns in judgments.items() for n, ds in ns.items()
             for d, lab in ds.items()]
    run = [ir_measures.ScoredDoc(t, d, s) for t, sc in _distinct_scores(rankings).items() for d, s in sc.items()]
    if not run:
        return {}
    out = {r.query_id: r.value for r in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)}
    return {q: (0.0 if math.isnan(v) else v) for q, v in out.items()}


@SETTINGS
@given(coverage_case())
def test_coverage_equals_pyndeval(case):
    judgments, rankings, k, alpha = case
    names = [f"alpha_nDCG(alpha={alpha})@{k}", f"alpha_DCG(alpha={alpha})@{k}", f"StRecall@{k}",
             f"ERR_IA@{k}", f"nERR_IA@{k}", f"P_IA@{k}", "AP_IA", f"NRBP(alpha={alpha})",
             f"nNRBP(alpha={alpha})", f"StRecall(rel=2)@{k}", f"alpha_nDCG(rel=2)@{k}"]
    ours = coverage_per_query(judgments, rankings, names)
    for name in names:
        ref = _ir_measures_ref(name, judgments, rankings)
        for t in judgments:
            assert ours[name][t] == pytest.approx(ref.get(t, 0.0), abs=1e-12), (name, t)


@SETTINGS
@given(coverage_case())
def test_coverage_duplicates_count_once(case):
    judgments, rankings, k, alpha = case
    doubled = {t: [d for d in docs for _ in (0, 1)] for t, docs in rankings.items()}
    names = [f"alpha_nDCG@{k}", f"StRecall@{k}", "AP_IA", "nNRBP"]
    assert coverage_per_query(judgments, doubled, names, alpha=alpha) == coverage_per_query(
        judgments, rankings, names, alpha=alpha
    )
