"""The `evaluate` modules load offline from their folders; compute and add_batch agree with the library."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import diversity_evaluate_inputs

from complexir.metrics import coverage_per_query, mean_scores, rank_run
from complexir.runs.trec_io import read_nugget_qrels, read_run

evaluate = pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parents[1]
DIV = Path(__file__).resolve().parent / "fixtures" / "diversity"


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")


def _load(name: str, relative: bool = False):
    if relative:  # the README's spelling, from the repository root
        cwd = os.getcwd()
        os.chdir(REPO)
        try:
            return evaluate.load(f"metrics/{name}")
        finally:
            os.chdir(cwd)
    return evaluate.load(str(REPO / "metrics" / name))


@pytest.fixture(scope="module")
def diversity_inputs():
    return diversity_evaluate_inputs(DIV)


def test_alpha_ndcg_module(diversity_inputs):
    preds, refs = diversity_inputs
    module = _load("alpha_ndcg", relative=True)
    out = module.compute(predictions=preds, references=refs, k=[5, 20])
    assert out["alpha_nDCG@20"] == pytest.approx(0.7282847261876347, abs=1e-12)
    assert out["alpha_nDCG@5"] == pytest.approx(0.6707627055878922, abs=1e-12)
    out = module.compute(predictions=preds, references=refs, alpha=0.9)
    assert out == {"alpha_nDCG@20": pytest.approx(0.7398853219815282, abs=1e-12)}
    for p, r in zip(preds, refs, strict=True):
        module.add_batch(predictions=[p], references=[r])
    assert module.compute(k=20)["alpha_nDCG@20"] == pytest.approx(0.7282847261876347, abs=1e-12)


def test_strecall_module(diversity_inputs):
    preds, refs = diversity_inputs
    module = _load("strecall")
    assert module.compute(predictions=preds, references=refs, k=[5, 20]) == {
        "StRecall@5": pytest.approx(5 / 6, abs=1e-12), "StRecall@20": 1.0}
    module.add_batch(predictions=preds, references=refs)
    all_den = module.compute(k=20, denominator="all")["StRecall@20"]
    judgments = read_nugget_qrels(DIV / "qrels.txt")
    lib = mean_scores(coverage_per_query(judgments, rank_run(read_run(DIV / "run.txt")), ["StRecall@20"],
                                         denominator="all"))
    assert all_den == pytest.approx(lib["StRecall@20"], abs=1e-12)
    assert all_den == pytest.approx((1.0 + 2 / 3) / 2, abs=1e-12)  # topic 2 lists nugget 3, label 0 only


def test_retrieval_module():
    module = _load("retrieval", relative=True)
    refs = [[{"doc_id": "a", "label": 1}, {"doc_id": "c", "label": 0}], [{"doc_id": "x", "label": 2}]]
    preds = [["b", "a", "a"], []]
    out = module.compute(predictions=preds, references=refs)
    assert set(out) == {"nDCG@10", "R@100", "AP@10", "RR@10", "P@10"}
    assert out["RR@10"] == pytest.approx(0.25) and out["P@10"] == pytest.approx(0.05)
    module.add_batch(predictions=preds[:1], references=refs[:1])
    module.add_batch(predictions=preds[1:], references=refs[1:])
    assert module.compute(k=[1, 2])["R@2"] == pytest.approx(0.5)


def test_module_errors():
    module = _load("retrieval")
    with pytest.raises(ValueError):
        module.compute(predictions=[["a"], ["b"]], references=[[{"doc_id": "a", "label": 1}]])
    with pytest.raises(ValueError, match="label"):
        module.compute(predictions=[["a"]], references=[[{"doc_id": "a", "label": -1}]])
    with pytest.raises(ValueError, match="k must"):
        module.compute(predictions=[["a"]], references=[[{"doc_id": "a", "label": 1}]], k=0)


def test_module_files_complete():
    for name in ("alpha_ndcg", "strecall", "retrieval"):
        folder = REPO / "metrics" / name
        for f in (f"{name}.py", "README.md", "app.py", "requirements.txt"):
            assert (folder / f).is_file(), folder / f
        card = (folder / "README.md").read_text()
        assert card.startswith("---\n") and "app_file: app.py" in card
        reqs = (folder / "requirements.txt").read_text().split()
        assert "complexir" in reqs and any(r.startswith("evaluate") for r in reqs)
        source = (folder / f"{name}.py").read_text()
        for needed in ("_DESCRIPTION", "_KWARGS_DESCRIPTION", "_CITATION", "from complexir.metrics"):
            assert needed in source
