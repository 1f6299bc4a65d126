"""Every mean is the exact mean of the per-query values (over every judged query), never MTEB's 5-decimal rounding,
on a CRUMB release built to be hard: MaxP over documents whose ids contain ':', ties everywhere, a judged query
without a positive after the int cast, a judgment on a document missing from the corpus (see
``crumb_oracle_fixture``). The reference is ir_measures (trec_eval semantics) on the same run, collapsed by the
release's parent_id."""

from __future__ import annotations

import json
import math
from pathlib import Path

import ir_measures
import mteb
import pytest
from crumb_oracle_fixture import TASK, fixed_run, write_release
from mteb.models.model_meta import ModelMeta

from complexir.loading_scripts.crumb import build_crumb

# MTEB key → ir_measures measure, for the official crumb_eval measures MTEB reports
REFERENCE = {"ndcg_at_10": "nDCG@10", "ndcg_at_5": "nDCG@5", "precision_at_10": "P@10", "precision_at_5": "P@5",
             "recall_at_10": "R@10", "recall_at_100": "R@100", "recall_at_1000": "R@1000", "mrr_at_10": "RR@10"}


class FixedRun:
    """An MTEB search model returning a fixed passage run: its top ``top_k`` passages, ties by id descending."""

    def __init__(self, runs: dict[str, dict[str, dict[str, float]]]):
        self.runs = runs

    def index(self, corpus, **kwargs) -> None:
        pass

    def search(self, queries, *, top_k, hf_split, **kwargs):
        run = self.runs[hf_split]
        return {q: dict(sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)[:top_k])
                for q in queries["id"]}

    @property
    def mteb_model_meta(self):
        return ModelMeta.create_empty({"name": "complexir-tests/fixed-run", "revision": "1"})


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    root = tmp_path_factory.mktemp("crumb_oracle")
    passages = write_release(root / "release")
    build_crumb(root / "release", root / "data" / "crumb", subsets=[TASK], progress=False)
    labels = {}
    for split, folder in (("test", "eval"), ("validation", "val")):
        rows = [json.loads(line) for line in
                (root / "release" / TASK / folder / "query_labels.jsonl").read_text().splitlines()]
        labels[split] = {r["query_id"]: {e["id"]: int(e["label"]) for e in r["full_document_qrels"]} for r in rows}
    runs = {split: fixed_run(passages, {q: list(d) for q, d in qrels.items()}) for split, qrels in labels.items()}
    return root, passages, labels, runs


def reference_scores(passages, qrels, run) -> dict[str, float]:
    """ir_measures on the run collapsed by parent_id, ties broken as trec_eval does before it sees the run."""
    parent = {p: doc for doc, ps in passages.items() for p in ps}
    ranked = {}
    for q, scores in run.items():
        docs: dict[str, float] = {}
        for p, s in scores.items():
            docs[parent[p]] = max(s, docs.get(parent[p], -math.inf))
        order = sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)
        ranked[q] = {d: float(len(order) - i) for i, (d, _) in enumerate(order)}
    measures = [ir_measures.parse_measure(m) for m in REFERENCE.values()]
    means = ir_measures.calc_aggregate(measures, qrels, ranked)
    return {key: means[ir_measures.parse_measure(m)] for key, m in REFERENCE.items()}


def test_maxp_means_are_exact_and_equal_the_reference(oracle):
    from complexir.tasks import TASKS_BY_NAME

    root, passages, labels, runs = oracle
    task = TASKS_BY_NAME["CRUMBTipOfTheTongue"]().filter_eval_splits(["test", "validation"])
    task.data_dir = root / "data"
    result = mteb.evaluate(FixedRun(runs), [task], overwrite_strategy="always", cache=None).task_results[0]
    for split in ("test", "validation"):
        scores = result.scores[split][0]
        per_query = task.per_query_scores["default"][split]
        # tot-2's only positive is 0.5 (cast to 0): judged, no positive, counted with 0
        assert scores["judged_queries"] == len(labels[split])
        for key, values in per_query.items():
            assert len(values) == len(labels[split]), key
            assert scores[key] == math.fsum(values.values()) / len(values), key  # the exact mean, no rounding
        expected = reference_scores(passages, labels[split], runs[split])
        for key, value in expected.items():
            assert scores[key] == pytest.approx(value, abs=1e-12), (split, key)
    assert result.scores["test"][0]["judged_queries_without_positive"] == 1


def test_paper_retrieval_binary_per_query_scores_are_the_reported_means(tmp_path):
    """paper_retrieval: nDCG on the graded qrels, recall/precision/RR/hit rate on the binary ones, and the per-query
    values behind each mean come from the same qrels as that mean."""
    from complexir.models import load_model
    from complexir.tasks import TASKS_BY_NAME

    fixture = Path(__file__).parent / "fixtures" / "crumb" / "demo_upstream"
    build_crumb(fixture, tmp_path / "crumb", subsets=["paper_retrieval"], progress=False)
    task = TASKS_BY_NAME["CRUMBPaperRetrieval"]().filter_eval_splits(["test", "validation"])
    task.data_dir = tmp_path
    result = mteb.evaluate(load_model(), [task], overwrite_strategy="always", cache=None).task_results[0]
    for split in ("test", "validation"):
        scores = result.scores[split][0]
        per_query = task.per_query_scores["default"][split]
        assert {"ndcg_at_10", "recall_at_100", "mrr_at_10", "accuracy"} <= set(per_query)
        for key, values in per_query.items():
            assert scores[key] == math.fsum(values.values()) / len(values), (split, key)
    test = result.scores["test"][0]
    # doris-mae-63 has a binary positive but no graded one: in recall's population, a zero in nDCG's
    assert len(task.per_query_scores["default"]["test"]["ndcg_at_10"]) == test["judged_queries"] == 3
    assert len(task.per_query_scores["default"]["test"]["recall_at_100"]) == test["binary_judged_queries"]


def test_maxp_reports_only_cutoffs_that_are_exact(oracle, monkeypatch):
    """A passage search shallower than the corpus (here 150 of 928 passages, documents of up to 30 passages): the
    collapsed ranking is exact only down to the documents scoring above the last passage kept. Deeper cutoffs are
    not reported; every reported one equals the reference on the full run."""
    from complexir.tasks import TASKS_BY_NAME, crumb

    root, passages, labels, runs = oracle
    monkeypatch.setattr(crumb, "MAXP_DOCS", 5)
    task = TASKS_BY_NAME["CRUMBTipOfTheTongue"]()
    task._top_k = 50  # search depth max(50, 5 x 30) = 150 passages
    task.data_dir = root / "data"
    scores = mteb.evaluate(FixedRun(runs), [task], overwrite_strategy="always", cache=None).task_results[0]
    scores = scores.scores["test"][0]
    cutoff = scores["maxp_exact_cutoff"]
    assert 5 <= cutoff < 100
    reported = {int(m.group(1)) for key in scores if (m := crumb.CUTOFF.search(key))}
    assert reported and max(reported) <= cutoff
    assert "recall_at_100" not in scores and "recall_at_1000" not in scores
    assert all(max(int(m.group(1)) for m in [crumb.CUTOFF.search(k)] if m) <= cutoff
               for k in task.per_query_scores["default"]["test"] if crumb.CUTOFF.search(k))
    expected = reference_scores(passages, labels["test"], runs["test"])
    for key, value in expected.items():
        if int(crumb.CUTOFF.search(key).group(1)) <= cutoff:
            assert scores[key] == pytest.approx(value, abs=1e-12), key
