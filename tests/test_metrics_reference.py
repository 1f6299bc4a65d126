"""complexir.metrics against the reference tools' own outputs: trec_eval's test collection and the
ndeval diversity vector (values computed by ndeval 4.5, see tests/fixtures/diversity/NOTICE)."""

from __future__ import annotations

from pathlib import Path

import pytest

from complexir.metrics import adhoc_per_query, coverage_per_query, mean_scores, rank_run
from complexir.runs.trec_io import read_nugget_qrels, read_qrels, read_run

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TREC = FIXTURES / "trec_eval"
DIV = FIXTURES / "diversity"

# trec_eval name in out.test.a -> our name
TREC_NAMES = {
    "map": "AP", "recip_rank": "RR", "ndcg": "nDCG",
    **{f"ndcg_cut_{k}": f"nDCG@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"map_cut_{k}": f"AP@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"P_{k}": f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"recall_{k}": f"R@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
}


@pytest.fixture(scope="module")
def trec():
    return read_qrels(TREC / "qrels.test"), rank_run(read_run(TREC / "results.test")), read_run(TREC / "results.test")


@pytest.fixture(scope="module")
def diversity():
    return read_nugget_qrels(DIV / "qrels.txt"), rank_run(read_run(DIV / "run.txt"))


def _expected_out_test_a() -> dict[str, float]:
    out = {}
    for line in (TREC / "out.test.a").read_text().splitlines():
        name, _all, value = line.split()
        if name in TREC_NAMES:
            out[TREC_NAMES[name]] = float(value)
    return out


def test_trec_eval_expected_output(trec):
    qrels, rankings, _ = trec
    expected = _expected_out_test_a()
    assert len(expected) == 39
    means = mean_scores(adhoc_per_query(qrels, rankings, list(expected)))
    for name, value in expected.items():
        assert means[name] == pytest.approx(value, abs=5e-5), name  # out.test.a prints 4 decimals


def test_trec_eval_fixture_equals_pytrec_eval(trec):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, rankings, run = trec
    names = {"ndcg_cut_10": "nDCG@10", "ndcg_cut_20": "nDCG@20", "recall_100": "R@100", "map": "AP",
             "P_10": "P@10", "map_cut_10": "AP@10", "map_cut_1000": "AP@1000", "recip_rank": "RR", "ndcg": "nDCG"}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10,20", "recall.100", "map", "P.10", "map_cut.10,1000",
                                                "recip_rank", "ndcg"})
    ref = ev.evaluate(run)  # the raw run: trec_eval applies its own tie rule, which ours must equal
    ours = adhoc_per_query(qrels, rankings, list(names.values()))
    for tname, name in names.items():
        for qid in qrels:
            assert ours[name][qid] == pytest.approx(ref[qid][tname], abs=1e-12), (name, qid)


DIV_VECTOR = {
    "alpha_nDCG@5": {"1": 0.48828444153440875, "2": 0.8532409696413754},
    "alpha_nDCG@20": {"1": 0.603328482733894, "2": 0.8532409696413754},
    "StRecall@5": {"1": 2 / 3, "2": 1.0},
    "StRecall@20": {"1": 1.0, "2": 1.0},
}
DIV_MEANS = {
    "alpha_nDCG@5": 0.670763, "alpha_nDCG@20": 0.7282847261876347, "StRecall@5": 0.833333, "StRecall@20": 1.0,
    "alpha_nDCG(alpha=0.9)@20": 0.7398853219815282, "ERR_IA@20": 0.445833, "nERR_IA@20": 0.668670,
    "NRBP": 0.414062, "nNRBP": 0.637135, "AP_IA": 0.475694, "P_IA@20": 0.083333, "P_IA@5": 0.3,
}


def test_diversity_vector(diversity):
    judgments, rankings = diversity
    per = coverage_per_query(judgments, rankings, list(DIV_MEANS))
    for name, per_topic in DIV_VECTOR.items():
        for topic, value in per_topic.items():
            assert per[name][topic] == pytest.approx(value, abs=1e-12), (name, topic)
    means = mean_scores(per)
    for name, value in DIV_MEANS.items():
        tol = 1e-12 if len(repr(value)) > 10 else 1e-6  # METRICS.md prints some means with 6 decimals
        assert means[name] == pytest.approx(value, abs=tol), name


def test_alpha_keyword_equals_measure_parameter(diversity):
    judgments, rankings = diversity
    a = mean_scores(coverage_per_query(judgments, rankings, ["alpha_nDCG@20"], alpha=0.9))
    assert a["alpha_nDCG@20"] == pytest.approx(0.7398853219815282, abs=1e-12)


def test_greedy_ideal_can_exceed_one():
    judgments = {"t": {"1": {"a": 1, "c": 1}, "2": {"a": 1}, "3": {"b": 1, "c": 1}, "4": {"b": 1}}}
    per = coverage_per_query(judgments, {"t": ["a", "b", "c"]}, ["alpha_nDCG@20"])
    assert per["alpha_nDCG@20"]["t"] == pytest.approx(1.017710467450658, abs=1e-12)


def test_diversity_equals_ir_measures(diversity):
    ir_measures = pytest.importorskip("ir_measures")
    judgments, rankings = diversity
    qrels = [ir_measures.Qrel(t, d, lab, n) for t, ns in judgments.items() for n, ds in ns.items()
             for d, lab in ds.items()]
    run = [ir_measures.ScoredDoc(t, d, float(len(docs) - i)) for t, docs in rankings.items()
           for i, d in enumerate(docs)]
    names = ["alpha_nDCG@5", "alpha_nDCG@20", "alpha_DCG@20", "alpha_DCG@1", "StRecall@5", "ERR_IA@20",
             "ERR_IA@1", "nERR_IA@20", "NRBP", "nNRBP", "AP_IA", "P_IA@20", "alpha_nDCG(alpha=0.9)@20",
             "StRecall(rel=2)@10", "alpha_nDCG(rel=2)@10"]
    ours = coverage_per_query(judgments, rankings, names)
    for name in names:  # one call per measure: ir_measures zeroes mixed alpha/rel calls
        ref = {r.query_id: r.value for r in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)}
        for topic in judgments:
            assert ours[name][topic] == pytest.approx(ref.get(topic, 0.0), abs=1e-12), (name, topic)
