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
from complexir.metrics import parse_measure
from complexir.registry.benchmarks import CRUMB

# MTEB key → ir_measures measure: crumb_eval's default measures, keyed as the measure registry keys them
OFFICIAL = {parse_measure(m).mteb_key: m for m in CRUMB.official_measures}


class FixedRun:
    """An MTEB search model returning a fixed passage run: its top ``top_k`` passages, ties by id descending. Like
    MTEB's own ``SearchEncoderWrapper`` it forgets the corpus after each search (so a second search needs an index)."""

    def __init__(self, runs: dict[str, dict[str, dict[str, float]]]):
        self.runs = runs
        self.depths: dict[str, list[int]] = {}  # split → the depth of each search, in order
        self.corpus = None

    def index(self, corpus, **kwargs) -> None:
        self.corpus = corpus

    def search(self, queries, *, top_k, hf_split, **kwargs):
        if self.corpus is None:
            raise ValueError("Corpus must be indexed before searching.")  # as MTEB's SearchEncoderWrapper
        self.corpus = None
        run = self.runs[hf_split]
        self.depths.setdefault(hf_split, []).append(top_k)
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


def reference_scores(passages, qrels, run, depth: int | None = None) -> dict[str, float]:
    """ir_measures on the run collapsed by parent_id, ties broken as trec_eval does before it sees the run; with
    ``depth``, its top ``depth`` documents (the run a search of that depth gives, as crumb_eval would read it)."""
    parent = {p: doc for doc, ps in passages.items() for p in ps}
    ranked = {}
    for q, scores in run.items():
        docs: dict[str, float] = {}
        for p, s in scores.items():
            docs[parent[p]] = max(s, docs.get(parent[p], -math.inf))
        order = sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)[:depth]
        ranked[q] = {d: float(len(order) - i) for i, (d, _) in enumerate(order)}
    measures = [ir_measures.parse_measure(m) for m in OFFICIAL.values()]
    means = ir_measures.calc_aggregate(measures, qrels, ranked)
    return {key: means[ir_measures.parse_measure(m)] for key, m in OFFICIAL.items()}


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
        assert set(OFFICIAL) <= set(per_query)  # every official measure, with its per-query values
        expected = reference_scores(passages, labels[split], runs[split])
        for key, value in expected.items():
            assert scores[key] == pytest.approx(value, abs=1e-12), (split, key)
    assert result.scores["test"][0]["judged_queries_without_positive"] == 1


def test_paper_retrieval_binary_per_query_scores_are_the_reported_means(tmp_path):
    """paper_retrieval: nDCG on the graded qrels, recall/precision/RR/hit rate on the binary ones, and the per-query
    values behind each mean come from the same qrels as that mean."""
    from complexir.systems.models import load_model
    from complexir.tasks import TASKS_BY_NAME

    fixture = Path(__file__).parent / "fixtures" / "crumb" / "demo_upstream"
    build_crumb(fixture, tmp_path / "crumb", subsets=["paper_retrieval"], progress=False)
    task = TASKS_BY_NAME["CRUMBPaperRetrieval"]().filter_eval_splits(["test", "validation"])
    task.data_dir = tmp_path
    result = mteb.evaluate(load_model(), [task], overwrite_strategy="always", cache=None).task_results[0]
    for split in ("test", "validation"):
        scores = result.scores[split][0]
        per_query = task.per_query_scores["default"][split]
        assert {"ndcg_at_10", "recall_at_100", "mrr_at_10", "mrr", "accuracy"} | set(OFFICIAL) <= set(per_query)
        for key, values in per_query.items():
            assert scores[key] == math.fsum(values.values()) / len(values), (split, key)
    test = result.scores["test"][0]
    # doris-mae-63 has a binary positive but no graded one: in recall's population, a zero in nDCG's
    assert len(task.per_query_scores["default"]["test"]["ndcg_at_10"]) == test["judged_queries"] == 3
    for key in ("recall_at_100", "precision_at_5", "mrr", "mrr_at_10"):  # on the binary qrels, uncut RR too
        assert len(task.per_query_scores["default"]["test"][key]) == test["binary_judged_queries"], key


def test_maxp_searches_deep_enough_for_every_cutoff(tmp_path):
    """Documents of 1,100 passages: the first MaxP passage search (9,885 of 12,400 passages) holds only the 9 long
    documents, fewer than 10 of them exact (the old code dropped nDCG@10, the main score, here). The task searches
    again, deeper, until every query's top 1,000 documents are exact, and reports every cutoff and every official
    measure, equal to the reference: the whole run collapsed, its top 1,000 documents."""
    from crumb_oracle_fixture import LONG_QUERIES, long_documents_run, write_long_documents_release

    from complexir.tasks import TASKS_BY_NAME, crumb

    passages = write_long_documents_release(tmp_path / "release")
    build_crumb(tmp_path / "release", tmp_path / "data" / "crumb", subsets=[TASK], progress=False)
    runs = {split: long_documents_run(passages, list(qrels)) for split, qrels in LONG_QUERIES.items()}
    model = FixedRun(runs)
    task = TASKS_BY_NAME["CRUMBTipOfTheTongue"]().filter_eval_splits(["test", "validation"])
    task.data_dir = tmp_path / "data"
    result = mteb.evaluate(model, [task], overwrite_strategy="always", cache=None).task_results[0]
    corpus_size = sum(map(len, passages.values()))
    parents = {p: doc for doc, ps in passages.items() for p in ps}
    first, *later = model.depths["test"]
    assert first == 9885 and later == [corpus_size]  # searched again, to the whole corpus
    first_run = {q: dict(sorted(run.items(), key=lambda x: (x[1], x[0]), reverse=True)[:first])
                 for q, run in runs["test"].items()}
    assert all(crumb.maxp_exact_documents(r, parents, first, corpus_size) < 10 for r in first_run.values())
    for split, qrels in LONG_QUERIES.items():
        scores = result.scores[split][0]
        labels = {q: {d: int(v) for d, v in docs.items()} for q, docs in qrels.items()}
        assert scores["maxp_passages_searched"] == corpus_size
        assert scores["main_score"] == scores["ndcg_at_10"]
        assert set(OFFICIAL) <= set(scores) and set(OFFICIAL) <= set(task.per_query_scores["default"][split])
        for key, values in task.per_query_scores["default"][split].items():
            assert scores[key] == math.fsum(values.values()) / len(values), (split, key)
        expected = reference_scores(passages, labels, runs[split], depth=1000)
        for key, value in expected.items():
            assert scores[key] == pytest.approx(value, abs=1e-12), (split, key)
    assert 0 < result.scores["test"][0]["recall_at_1000"] < 1  # a relevant short document below rank 1,000


def test_missing_main_score_is_named(oracle, monkeypatch):
    """A task whose main score is missing from its scores fails naming the task, subset, split and score (never a
    bare KeyError)."""
    from complexir.tasks import TASKS_BY_NAME

    root, passages, labels, runs = oracle
    task = TASKS_BY_NAME["CRUMBTipOfTheTongue"]()
    task.data_dir = root / "data"
    counted = type(task).count_judged_queries
    monkeypatch.setattr(type(task), "count_judged_queries", lambda self, scores, hf_subset, split: {
        k: v for k, v in counted(self, scores, hf_subset, split).items() if k != "ndcg_at_10"})
    with pytest.raises(RuntimeError, match=r"CRUMBTipOfTheTongue \(default, test\): no main score 'ndcg_at_10'"):
        mteb.evaluate(FixedRun(runs), [task], overwrite_strategy="always", cache=None)
