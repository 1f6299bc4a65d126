"""CRUMB: build from the release format, row by row, and MTEB scores equal to the official crumb_eval recipe.

The fixture ``tests/fixtures/crumb/demo_upstream`` is hand-written in the exact release format (it is also the
demo): the ``scientific_paper`` folder for paper_retrieval, null ``parent_id``, fractional and judged-0 labels,
binary qrels, empty instructions, and a query (doris-mae-63) whose only graded positive is 0.5.
"""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import mteb
import pyarrow.parquet as pq
import pytest
from ir_measures import P, R, nDCG
from mteb.types import PromptType

from complexir.layout.errors import UpstreamFormatError
from complexir.layout.reader import zero_score_queries
from complexir.loading_scripts.crumb import build_crumb
from complexir.metrics import parse_measure
from complexir.registry.benchmarks import CRUMB

FIXTURE = Path(__file__).parent / "fixtures" / "crumb" / "demo_upstream"
TASKS = ["clinical_trial", "legal_qa", "paper_retrieval"]


def rows(folder: Path, subset: str, kind: str, split: str = "") -> list[dict]:
    name = "corpus-00000.parquet" if kind == "corpus" else f"{kind}-{split}.parquet"
    return pq.read_table(folder / "data" / subset / name).to_pylist()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("crumb") / "crumb"
    return build_crumb(FIXTURE, out, subsets=TASKS, progress=False)


# -- the build, row by row ------------------------------------------------------------------------------
def test_paper_retrieval_rows(built: Path) -> None:
    corpus = rows(built, "paper_retrieval", "corpus")
    assert [r["id"] for r in corpus] == ["1706.03762", "1810.04805", "2004.12832", "2004.04906", "1512.03385",
                                         "1406.2661"]
    first = corpus[0]
    assert first["title"] == "" and first["text"].startswith("# Attention Is All You Need\n\nThe dominant")
    assert first["parent-id"] == "1706.03762"  # null parent_id: the passage is its own document
    assert json.loads(first["metadata"]) == {"arxiv": "1706.03762"}

    queries = rows(built, "paper_retrieval", "queries", "test")
    # doris-mae-63's only graded positive is 0.5 -> 0 after the cast: dropped from the graded split
    assert [(q["id"], q["instruction"]) for q in queries] == [("doris-mae-17", ""), ("doris-mae-42", "")]
    assert queries[0]["text"].startswith("I am looking for work on first-stage neural retrieval")
    qrels = [(r["query-id"], r["corpus-id"], r["score"]) for r in rows(built, "paper_retrieval", "qrels", "test")]
    assert qrels == [
        ("doris-mae-17", "2004.04906", 2), ("doris-mae-17", "2004.12832", 1),  # 1.5 -> 1
        ("doris-mae-17", "1810.04805", 0), ("doris-mae-17", "1512.03385", 0),  # 0.5 -> 0, judged 0 kept
        ("doris-mae-42", "1706.03762", 2), ("doris-mae-42", "1810.04805", 0), ("doris-mae-42", "1406.2661", 0),
    ]
    binary = [(r["query-id"], r["corpus-id"], r["score"])
              for r in rows(built, "paper_retrieval", "qrels", "test_binary")]
    assert ("doris-mae-63", "1406.2661", 1) in binary and ("doris-mae-17", "2004.12832", 1) in binary
    assert len(binary) == 9
    assert [q["id"] for q in rows(built, "paper_retrieval", "queries", "test_binary")] == [
        "doris-mae-17", "doris-mae-42", "doris-mae-63"]
    assert [q["id"] for q in rows(built, "paper_retrieval", "queries", "validation")] == ["doris-mae-88"]
    assert not (built / "data" / "paper_retrieval_full").exists()  # same content upstream: passage subset only


def test_clinical_trial_rows(built: Path) -> None:
    corpus = rows(built, "clinical_trial", "corpus")
    assert len(corpus) == 9
    assert [(r["id"], r["parent-id"]) for r in corpus[:3]] == [
        ("NCT00002569:0", "NCT00002569"), ("NCT00002569:1", "NCT00002569"), ("NCT00002569:2", "NCT00002569")]
    full = rows(built, "clinical_trial_full", "corpus")
    assert [r["id"] for r in full] == ["NCT00002569", "NCT00003466", "NCT01119599", "NCT02423343"]
    assert "parent-id" not in full[0]
    assert full[0]["text"].count("Eligibility >") == 2
    queries = rows(built, "clinical_trial_full", "queries", "test")
    assert [q["id"] for q in queries] == ["trec-20211", "trec-20212", "trec-20213"]
    assert {q["instruction"] for q in queries} == {
        "Given a patient's medical history, retrieve clinical trials the patient is eligible for."}
    assert [(r["query-id"], r["corpus-id"], r["score"])
            for r in rows(built, "clinical_trial_full", "qrels", "test")] == [
        ("trec-20211", "NCT00002569", 2), ("trec-20211", "NCT00003466", 1), ("trec-20211", "NCT01119599", 0),
        ("trec-20212", "NCT01119599", 2), ("trec-20212", "NCT02423343", 0),
        ("trec-20213", "NCT02423343", 1), ("trec-20213", "NCT00002569", 0)]
    assert [(r["query-id"], r["corpus-id"], r["score"])
            for r in rows(built, "clinical_trial_full", "qrels", "validation")] == [
        ("trec-20221", "NCT00003466", 2), ("trec-20221", "NCT00002569", 0)]  # 0.5 -> 0


def test_card_counts_and_notes(built: Path) -> None:
    readme = (built / "README.md").read_text(encoding="utf-8")
    judged = {  # the official crumb_eval population: queries with at least one judgment
        "clinical_trial": {"test": 3, "validation": 1}, "clinical_trial_full": {"test": 3, "validation": 1},
        "legal_qa": {"test": 2, "validation": 1}, "legal_qa_full": {"test": 2, "validation": 1},
        "paper_retrieval": {"test": 3, "test_binary": 3, "validation": 1, "validation_binary": 1},
    }
    zero = zero_score_queries(built)  # judged, no positive after the cast: dropped, listed in the card
    assert zero == {"paper_retrieval": {"test": ["doris-mae-63"]}}
    for subset, splits in judged.items():
        for split, count in splits.items():
            assert len(rows(built, subset, "queries", split)) + len(zero.get(subset, {}).get(split, [])) == count
    assert "| paper_retrieval | test | passage_qrels | 9 | 4 | 3 | 0 | 3 | 2 |" in readme
    assert "test: passage_qrels labels changed by the int cast: 4" in readme
    assert "license: cc-by-nc-4.0" in readme and "2509.07253" in readme
    assert "| clinical_trial | test | 9 | 3 | 14 | 0 | 0 |" in readme  # $counts_table rendered from the build
    assert "*(empty: the query alone)*" in readme


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    src = tmp_path / "release"
    for f in (FIXTURE / "legal_qa").rglob("*.jsonl"):
        target = src / "legal_qa" / f.relative_to(FIXTURE / "legal_qa")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    bad = src / "legal_qa" / "eval" / "query_labels.jsonl"
    bad.write_text(bad.read_text(encoding="utf-8") + '{"query_id": "x", "query_content": \n', encoding="utf-8")
    with pytest.raises(UpstreamFormatError, match=r"query_labels\.jsonl, line 3: invalid JSON"):
        build_crumb(src, tmp_path / "out", subsets=["legal_qa"], progress=False)
    assert not (tmp_path / "out").exists()
    with pytest.raises(UpstreamFormatError, match="passage_corpus.jsonl"):
        build_crumb(src, tmp_path / "out", subsets=["code_retrieval"], progress=False)


def _copy_task(src: Path, folder: str) -> Path:
    """A copy of one task folder of the fixture release under ``src``."""
    for f in (FIXTURE / folder).rglob("*.jsonl"):
        target = src / folder / f.relative_to(FIXTURE / folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    return src


def _rewrite(path: Path, change) -> None:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    path.write_text("".join(json.dumps(change(row)) + "\n" for row in lines), encoding="utf-8")


def test_query_row_missing_a_judgment_list(tmp_path: Path) -> None:
    src = _copy_task(tmp_path / "release", "clinical_trial")
    labels = src / "clinical_trial" / "val" / "query_labels.jsonl"
    _rewrite(labels, lambda row: {k: v for k, v in row.items() if k != "full_document_qrels"})
    with pytest.raises(UpstreamFormatError, match=r"val/query_labels\.jsonl, line 1: query 'trec-20221' has no "
                                                  r"'full_document_qrels' field") as info:
        build_crumb(src, tmp_path / "out", subsets=["clinical_trial"], progress=False)
    assert info.value.line == 1
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def document_level_only(tmp_path_factory) -> Path:
    """clinical_trial as the release may ship a MaxP task: judgments at document level only (empty
    passage_qrels), and one passage id that does not follow <parent_id>:<chunk index>."""
    root = tmp_path_factory.mktemp("crumb_doc_level")
    src = _copy_task(root / "release", "clinical_trial")
    for sub in ("eval", "val"):
        _rewrite(src / "clinical_trial" / sub / "query_labels.jsonl", lambda row: {**row, "passage_qrels": []})
    _rewrite(src / "clinical_trial" / "passage_corpus.jsonl",
             lambda row: {**row, "document_id": "NCT00003466-p1"} if row["document_id"] == "NCT00003466:1" else row)
    return build_crumb(src, root / "data" / "crumb", subsets=["clinical_trial"], progress=False)


def test_maxp_task_without_passage_positives(document_level_only: Path, caplog) -> None:
    from complexir.layout.reader import list_subsets
    from complexir.tasks import TASKS_BY_NAME

    built = document_level_only
    # <task> keeps its passage corpus only; <task>_full has queries and qrels as always
    assert sorted(p.name for p in (built / "data" / "clinical_trial").iterdir()) == ["corpus-00000.parquet"]
    assert [q["id"] for q in rows(built, "clinical_trial_full", "queries", "test")] == [
        "trec-20211", "trec-20212", "trec-20213"]
    assert set(list_subsets(built)) == {"clinical_trial", "clinical_trial_full"}
    readme = (built / "README.md").read_text(encoding="utf-8")
    assert "test: not written: no passage-level positive in passage_qrels" in readme
    assert "validation: not written" in readme
    assert "| clinical_trial | test | passage_qrels | 0 | 0 | 0 | 0 | 0 | – (not written) |" in readme
    # the renamed passage is counted, and keeps its parent-id
    assert "(MaxP uses parent-id): 1 of 9" in readme
    assert ("NCT00003466-p1", "NCT00003466") in [(r["id"], r["parent-id"])
                                                 for r in rows(built, "clinical_trial", "corpus")]

    task = TASKS_BY_NAME["CRUMBClinicalTrial"]()
    assert task.available_in(built.parent)
    assert not TASKS_BY_NAME["CRUMBLegalQA"]().available_in(built.parent)
    task.data_dir = built.parent
    task.filter_eval_splits(["test", "validation"]).load_data()
    for split, qids in (("test", ["trec-20211", "trec-20212", "trec-20213"]), ("validation", ["trec-20221"])):
        data = task.dataset["default"][split]
        assert len(data["corpus"]) == 9 and data["queries"]["id"] == qids
        assert data["relevant_docs"] == {q: d for q, d in official_qrels("clinical_trial", split,
                                                                         "full_document_qrels").items()}
        assert task._extra["default"][split]["parents"]["NCT00003466-p1"] == "NCT00003466"


def test_maxp_scores_do_not_depend_on_passage_qrels(built: Path, document_level_only: Path, reversed_model,
                                                    tmp_path: Path) -> None:
    """The document-level-only build scores exactly as the full fixture: MaxP reads <task>_full and parent-id."""
    from complexir.tasks import TASKS_BY_NAME

    scores = []
    for data_dir in (built.parent, document_level_only.parent):
        task = TASKS_BY_NAME["CRUMBClinicalTrial"]()
        task.data_dir = data_dir
        result = mteb.evaluate(reversed_model, [task], overwrite_strategy="always", cache=None)
        scores.append({split: s[0]["ndcg_at_10"] for split, s in result.task_results[0].scores.items()})
    assert scores[0] == scores[1]


# -- official equivalence -------------------------------------------------------------------------------
def official_qrels(task_folder: str, split: str, key: str) -> dict[str, dict[str, int]]:
    """The official recipe's qrels: straight from the release file, labels cast with int()."""
    out: dict[str, dict[str, int]] = {}
    sub = {"test": "eval", "validation": "val"}[split]
    for line in (FIXTURE / task_folder / sub / "query_labels.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for entry in row[key]:
            out.setdefault(row["query_id"], {})[entry["id"]] = int(entry["label"])
    return out


def by_hand_maxp(run: dict[str, dict[str, float]], parents: dict[str, str]) -> dict[str, dict[str, float]]:
    """MaxP by the release's ``parent_id`` (``parents``: passage → document), not by splitting the passage id:
    crumb_eval's first-``:`` split would merge documents whose ids contain ``:``."""
    out: dict[str, dict[str, float]] = {}
    for qid, passages in run.items():
        for pid, score in passages.items():
            doc = parents.get(pid, pid)  # a prediction already collapsed to documents names the document
            out.setdefault(qid, {})[doc] = max(score, out.get(qid, {}).get(doc, float("-inf")))
    return out


def release_parents(task_folder: str) -> dict[str, str]:
    """Passage id → its document, from the release's ``parent_id`` (null: the passage is its own document)."""
    rows = [json.loads(line) for line in (FIXTURE / task_folder / "passage_corpus.jsonl").read_text().splitlines()]
    return {r["document_id"]: r["parent_id"] or r["document_id"] for r in rows}


@pytest.fixture(scope="module")
def reversed_model():
    """The packaged MiniLM with negated query embeddings: a fixed, deliberately imperfect ranking."""
    from complexir.systems.models import load_model

    model = load_model()

    class Reversed(type(model)):
        def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
            emb = super().encode(inputs, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                                 prompt_type=prompt_type, **kwargs)
            return -emb if prompt_type == PromptType.query else emb

    model.__class__ = Reversed
    return model


@pytest.mark.parametrize(("task_name", "folder", "maxp", "binary"), [
    ("CRUMBClinicalTrial", "clinical_trial", True, False),
    ("CRUMBPaperRetrieval", "scientific_paper", False, True),
    ("CRUMBLegalQA", "legal_qa", False, False),
])
def test_scores_equal_official_recipe(built: Path, reversed_model, tmp_path: Path, task_name: str, folder: str,
                                      maxp: bool, binary: bool) -> None:
    from complexir.tasks import TASKS_BY_NAME

    task = TASKS_BY_NAME[task_name]().filter_eval_splits(["test", "validation"])  # validation: only when asked
    task.data_dir = built.parent
    result = mteb.evaluate(reversed_model, [task], overwrite_strategy="always", cache=None,
                           prediction_folder=tmp_path)
    predictions = json.loads((tmp_path / f"{task_name}_predictions.json").read_text())["default"]
    scores = {split: s[0] for split, s in result.task_results[0].scores.items()}
    for split in ("test", "validation"):
        run = predictions[split]  # the passage run the model produced
        if maxp:
            run = by_hand_maxp(run, release_parents(folder))
        graded = official_qrels(folder, split, "full_document_qrels" if maxp else "passage_qrels")
        recall_qrels = official_qrels(folder, split, "passage_binary_qrels") if binary else graded
        # the official crumb_eval: ir_measures over every judged query (a query missing from the run scores 0);
        # our means are exact (MTEB's own are rounded to 5 decimals)
        run = {q: run.get(q, {}) for q in graded} | {q: run.get(q, {}) for q in recall_qrels}
        # crumb_eval's split: nDCG on the graded qrels, P, R and RR on the binary ones (the graded elsewhere);
        # every one of its default measures, uncut RR included, beside a few of MTEB's own
        official = {parse_measure(m).mteb_key: ir_measures.parse_measure(m) for m in CRUMB.official_measures}
        official |= {"recall_at_1": R @ 1, "precision_at_1": P @ 1}
        for key, measure in official.items():
            qrels = graded if isinstance(measure, type(nDCG)) else recall_qrels
            expected = ir_measures.calc_aggregate([measure], qrels, run)[measure]
            assert scores[split][key] == pytest.approx(expected, abs=1e-12), (split, key)
        assert scores[split]["main_score"] == scores[split]["ndcg_at_10"]
    if binary:  # the 0.5-only query counts as 0 in nDCG and with its binary positive in recall
        assert scores["test"]["judged_queries"] == 3 and scores["test"]["judged_queries_without_positive"] == 1


def test_instruction_reaches_instruct_models_only(built: Path) -> None:
    """A plain model sees the query alone; the task prompt carries the instruction for instruct models."""
    from mteb.models.instruct_wrapper import InstructSentenceTransformerModel  # noqa: F401  (exists in mteb)

    from complexir.tasks import TASKS_BY_NAME

    task = TASKS_BY_NAME["CRUMBClinicalTrial"]()
    task.data_dir = built.parent
    task.load_data()
    queries = task.dataset["default"]["test"]["queries"]
    assert "instruction" not in queries.column_names  # MTEB would append it to every query's text
    assert queries["text"][0].startswith("Patient is a 45-year-old man")
    assert task._extra["default"]["test"]["instruction"].startswith("Given a patient's medical history")


@pytest.mark.slow  # the whole benchmark with the real model
def test_complexir_run_end_to_end(built: Path, tmp_path: Path) -> None:
    from complexir.cli.main import main

    rc = main(["run", "--benchmark", "CRUMB", "--data-dir", str(built.parent), "--output", str(tmp_path)])
    assert rc == 0
    found = {p.name for p in tmp_path.rglob("CRUMB*.json")}
    assert {"CRUMBClinicalTrial.json", "CRUMBLegalQA.json", "CRUMBPaperRetrieval.json"} <= found


def test_plain_mteb_defaults_score_what_complexir_run_scores(built: Path, tmp_path: Path, monkeypatch) -> None:
    """``mteb.evaluate`` with the task's defaults and ``complexir run`` score the same split (test only) and give
    the same numbers; validation is scored only when asked for."""
    from complexir.cli.main import main
    from complexir.hub.data_source import DataSource
    from complexir.systems.models import load_model
    from complexir.tasks.layout_task import LayoutRetrievalTask

    # what the mteb hook sets from COMPLEXIR_DATA_DIR for tasks plain mteb creates
    monkeypatch.setattr(LayoutRetrievalTask, "default_source", DataSource.local(built.parent))
    model = load_model()
    plain = mteb.evaluate(model, [mteb.get_task("CRUMBPaperRetrieval")], overwrite_strategy="always",
                          cache=mteb.ResultCache(tmp_path / "plain")).task_results[0]
    assert list(plain.scores) == ["test"]

    assert main(["run", "--task", "CRUMBPaperRetrieval", "--data-dir", str(built.parent),
                 "--output", str(tmp_path / "ours")]) == 0
    files = [json.loads(next((tmp_path / which).rglob("results/**/CRUMBPaperRetrieval.json")).read_text())
             for which in ("plain", "ours")]
    assert [list(f["scores"]) for f in files] == [["test"], ["test"]]
    plain_scores, ours_scores = (f["scores"]["test"][0] for f in files)
    numeric = sorted(k for k, v in plain_scores.items() if isinstance(v, (int, float)))
    assert len(numeric) > 50
    # the same numbers: mteb writes its file rounded to 6 decimals, complexir run writes the exact means unrounded
    for key in numeric:
        assert ours_scores[key] == pytest.approx(plain_scores[key], abs=5e-7, nan_ok=True), key  # nAUC may be NaN
    assert plain_scores["main_score"] == plain_scores["ndcg_at_10"]
    assert ours_scores["main_score"] == ours_scores["ndcg_at_10"]

    validation = mteb.get_task("CRUMBPaperRetrieval", eval_splits=["validation"])
    result = mteb.evaluate(load_model(), [validation], overwrite_strategy="always", cache=None).task_results[0]
    assert list(result.scores) == ["validation"]
