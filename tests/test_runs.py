"""Runs in and out: `complexir run --save-runs` then `--runs` of that folder scores every demo task identically; a
hand-written TREC run scores what the official crumb_eval recipe gives; bad runs are refused naming file and line;
the runs folder's files read back exactly."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import ir_measures
import mteb
import pytest
from crumb_oracle_fixture import COLON_TITLES, TASK, write_release
from run_output import MODEL_DIR, table_rows

from complexir.cli.main import main
from complexir.metrics import parse_measure
from complexir.registry.benchmarks import CRUMB
from complexir.runs.folder import (
    FixedRunsSearch,
    RunsError,
    RunsFolder,
    RunsFolderWriter,
    decode_id,
    read_run_file,
    write_run_file,
)
from complexir.runs.trec_io import TrecFormatError

FIXTURE = Path(__file__).parent / "fixtures" / "crumb" / "demo_upstream"  # the CRUMB demo, in the release format
# MTEB key → ir_measures measure: crumb_eval's default measures
OFFICIAL = {parse_measure(m).mteb_key: m for m in CRUMB.official_measures}
# scores about the model rather than the ranking: a fixed run has none (LoCoV1's share of tokens read)
MODEL_KEYS = ("doc_token", "docs_truncated", "query_token", "queries_truncated", "model_tokens")


def result_files(output: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (output / "results").rglob("*.json")
            if p.name != "model_meta.json"}


# -- round trip: --save-runs, then --runs --------------------------------------------------------------------------
def test_save_runs_then_runs_scores_every_demo_task_identically(tmp_path, capsys):
    first, second = tmp_path / "model", tmp_path / "fixed"
    assert main(["run", "--save-runs", "--output", str(first)]) == 0
    out = capsys.readouterr().out
    folder = first / "runs" / MODEL_DIR  # beside results/ and per_query/, under the model's name and revision
    # the depth recorded is the deepest ranking written: the demos' corpora are smaller than MTEB's top 1,000
    deepest = max(Counter(line.split()[0] for line in path.read_text().splitlines()).most_common(1)[0][1]
                  for path in folder.glob("*/*/*.trec"))
    assert deepest < 1000
    assert f"run file(s) in {folder.resolve()} (depth {deepest})" in out
    manifest = json.loads((folder / "runs.json").read_text())
    assert manifest["format"] == "complexir-runs/1" and manifest["depth"] == deepest
    assert manifest["system"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert manifest["revision"] == MODEL_DIR.split("/")[1]
    ran = result_files(first)
    assert sorted(manifest["tasks"]) == sorted(ran)
    for name, result in ran.items():
        assert manifest["tasks"][name]["data"]["revision"] == result["dataset_revision"]
        for entry in result["scores"]["test"]:  # every subset and split has its run file
            assert (folder / name / entry["hf_subset"] / "test.trec").is_file()
    # MaxP: the passages the model's search returned, as the task collapsed them
    clinical = read_run_file(folder / "CRUMBClinicalTrial" / "default" / "test.trec")
    assert all(":" in doc for docs in clinical.values() for doc in docs)

    assert main(["run", "--runs", str(folder), "--model-name", "tests/fixed-runs", "--output", str(second)]) == 0
    out = capsys.readouterr().out
    assert "model: tests/fixed-runs (revision 8b3219a92973c328a8e22fadcfa821b5dc75636a)" in out
    assert f"system: fixed runs {folder} (made by sentence-transformers/all-MiniLM-L6-v2, " in out
    assert "not in run: none (every query searched is ranked)" in out
    assert {row[1] for row in table_rows(out)} == set(ran)
    again = result_files(second)
    assert sorted(again) == sorted(ran)
    for name, result in ran.items():
        assert again[name]["dataset_revision"] == result["dataset_revision"]
        for entry, other in zip(result["scores"]["test"], again[name]["scores"]["test"], strict=True):
            assert entry["hf_subset"] == other["hf_subset"]
            numeric = {k for k, v in entry.items() if isinstance(v, (int, float)) and not k.startswith(MODEL_KEYS)}
            assert numeric and numeric <= set(other), (name, numeric - set(other))
            for key in numeric:
                assert other[key] == pytest.approx(entry[key], abs=1e-9, nan_ok=True), (name, key)
            assert other["queries_not_in_run"] == 0
    # per-query scores too (significance tests read them), and the run files named where the result is filed
    for per_query in (second / "per_query").rglob("*.json"):
        payload = json.loads(per_query.read_text())
        original = json.loads(next((first / "per_query").rglob(per_query.name)).read_text())
        for subset, splits in original["scores"].items():
            for key, values in splits["test"].items():
                assert payload["scores"][subset]["test"][key] == pytest.approx(values, abs=1e-9), key
    meta = json.loads(next((second / "results").rglob("model_meta.json")).read_text())
    provenance = meta["loader_kwargs"]["fixed_runs"]
    assert provenance["runs"] == str(folder.resolve()) and len(provenance["sha256"]) == 64
    assert "CRUMBClinicalTrial/default/test" in provenance["files"]
    # `complexir report` reads it as any model's results
    assert main(["report", str(second), "--out", str(tmp_path / "report"), "--allow-demo"]) == 0


# -- the official recipe on a hand-written run --------------------------------------------------------------------
def official_qrels(folder: str, split: str = "test") -> dict[str, dict[str, int]]:
    """crumb_eval's qrels of a MaxP task: the release's full_document_qrels, labels cast with int()."""
    sub = {"test": "eval", "validation": "val"}[split]
    out: dict[str, dict[str, int]] = {}
    for line in (FIXTURE / folder / sub / "query_labels.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out[row["query_id"]] = {e["id"]: int(e["label"]) for e in row["full_document_qrels"]}
    return out


def crumb_eval_recipe(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """What crumb_eval computes for a MaxP task given a run of documents (ids without ':', so its first-':' MaxP
    keeps them as they are): ir_measures' means of its default measures over the judged queries (a query missing
    from the run scores 0); clinical_trial has no binary qrels, so P, R and RR use the same qrels."""
    measures = {key: ir_measures.parse_measure(m) for key, m in OFFICIAL.items()}
    means = ir_measures.calc_aggregate(list(measures.values()), qrels, run)
    return {key: means[m] for key, m in measures.items()}


HAND_RUN = """\
trec-20211 Q0 NCT00003466 1 9.5 hand
trec-20211 Q0 NCT01119599 2 9.25 hand
trec-20211 Q0 NCT00002569 3 2.25 hand
trec-20211 Q0 NCT02423343 4 -1 hand
trec-20212 Q0 NCT02423343 1 0.8 hand
trec-20212 Q0 NCT00002569 2 0.7 hand
trec-20212 Q0 NCT01119599 3 0.1 hand
"""  # documents, not passages; trec-20213 is not ranked (it scores 0)


def test_hand_written_document_run_scores_the_official_recipe(tmp_path, capsys):
    run_file = tmp_path / "hand.trec"
    run_file.write_text(HAND_RUN)
    assert main(["run", "--runs", str(run_file), "--task", "CRUMBClinicalTrial", "--model-name", "tests/hand",
                 "--output", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "not in run: CRUMBClinicalTrial default test: 1 of 3 queries (scored 0, as trec_eval -c)" in out
    scores = result_files(tmp_path / "out")["CRUMBClinicalTrial"]["scores"]["test"][0]
    expected = crumb_eval_recipe(read_run_file(run_file), official_qrels("clinical_trial"))
    assert 0 < expected["ndcg_at_10"] < 1
    for key, value in expected.items():
        assert scores[key] == pytest.approx(value, abs=1e-12), key
    assert scores["queries_not_in_run"] == 1 and scores["judged_queries"] == 3
    # the same ranking given as passages (each document's best passage) is collapsed by MaxP to the same numbers
    passages = tmp_path / "passages.trec"
    as_passages = [line.split() for line in HAND_RUN.splitlines()]
    passages.write_text("".join(f"{q} Q0 {doc}:0 {rank} {score} hand\n" for q, _, doc, rank, score, _ in as_passages))
    assert main(["run", "--runs", str(passages), "--task", "CRUMBClinicalTrial", "--model-name", "tests/passages",
                 "--output", str(tmp_path / "out2")]) == 0
    again = result_files(tmp_path / "out2")["CRUMBClinicalTrial"]["scores"]["test"][0]
    assert {k: again[k] for k in expected} == {k: scores[k] for k in expected}


def test_tied_scores_rank_as_trec_eval(tmp_path):
    """On tied scores documents rank by id descending, as trec_eval ranks them (and as crumb_eval's nDCG, P, R and
    uncut RR, through pytrec_eval). crumb_eval's RR@10 alone comes from ir_measures' msmarco provider, which breaks
    ties by id ascending: on a tie at the first relevant document, that one measure differs (docs/runs.md)."""
    tied = HAND_RUN.replace("NCT01119599 2 9.25", "NCT01119599 2 9.5")  # tied with NCT00003466 (relevant)
    run_file = tmp_path / "tied.trec"
    run_file.write_text(tied)
    assert main(["run", "--runs", str(run_file), "--task", "CRUMBClinicalTrial", "--model-name", "tests/tied",
                 "--output", str(tmp_path / "out")]) == 0
    scores = result_files(tmp_path / "out")["CRUMBClinicalTrial"]["scores"]["test"][0]
    run, qrels = read_run_file(run_file), official_qrels("clinical_trial")
    crumb_eval = crumb_eval_recipe(run, qrels)
    # the ranking trec_eval reads from the tied run, as tie-free scores
    order = {q: sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True) for q, docs in run.items()}
    trec_order = crumb_eval_recipe({q: {d: float(len(o) - i) for i, (d, _) in enumerate(o)}
                                    for q, o in order.items()}, qrels)
    for key in OFFICIAL:
        assert scores[key] == pytest.approx(trec_order[key], abs=1e-12), key
        if key != "mrr_at_10":
            assert scores[key] == pytest.approx(crumb_eval[key], abs=1e-12), key
    assert crumb_eval["mrr_at_10"] == pytest.approx((1 + 1 / 3) / 3)  # NCT00003466 first: ties by id ascending
    assert scores["mrr_at_10"] == pytest.approx((1 / 2 + 1 / 3) / 3)  # NCT01119599 first: ties by id descending


def test_document_ids_with_colons_stand_for_themselves(tmp_path):
    """tip_of_the_tongue's documents are film titles with ':' in them: a run of documents is scored as it is (no
    split at a ':'), against the reference (ir_measures on the same ranking)."""
    from complexir.loading_scripts.crumb import build_crumb
    from complexir.tasks import TASKS_BY_NAME

    write_release(tmp_path / "release")
    build_crumb(tmp_path / "release", tmp_path / "data" / "crumb", subsets=[TASK], progress=False)
    rows = [json.loads(line) for line in (tmp_path / "release" / TASK / "eval" / "query_labels.jsonl").read_text()
            .splitlines()]
    qrels = {r["query_id"]: {e["id"]: int(e["label"]) for e in r["full_document_qrels"]} for r in rows}
    run = {"tot-0": {title: 10.0 - i for i, title in enumerate(reversed(COLON_TITLES))},
           "tot-1": {"Batman: Under the Red Hood": 1.0, "Batman: Mask of the Phantasm": 0.5, "Film 03": 0.5}}
    folder = tmp_path / "runs"
    writer = RunsFolderWriter(folder, "tests/colons", None, None)
    writer.write("CRUMBTipOfTheTongue", "default", "test", run)
    writer.close()
    task = TASKS_BY_NAME["CRUMBTipOfTheTongue"]()
    task.data_dir = tmp_path / "data"
    search = FixedRunsSearch(RunsFolder(folder), "tests/colons")
    result = mteb.evaluate(search, [task], overwrite_strategy="always", cache=None).task_results[0]
    scores = result.scores["test"][0]
    expected = crumb_eval_recipe(run, qrels)
    assert expected["ndcg_at_10"] > 0
    for key, value in expected.items():
        assert scores[key] == pytest.approx(value, abs=1e-12), key
    assert scores["queries_not_in_run"] == 3  # of the 5 queries with a positive (tot-2 has none), 2 are ranked


# -- refused, naming the file and the line -------------------------------------------------------------------------
def _run_one(tmp_path: Path, text: str, capsys, caplog, task: str = "CRUMBClinicalTrial") -> tuple[int, str]:
    run_file = tmp_path / "bad.trec"
    run_file.write_text(text)
    code = main(["run", "--runs", str(run_file), "--task", task, "--model-name", "tests/bad",
                 "--output", str(tmp_path / "out")])
    captured = capsys.readouterr()
    return code, captured.out + captured.err + caplog.text


@pytest.mark.parametrize(("line", "message"), [
    ("nope Q0 NCT00003466 1 1.0 x", "bad.trec:2: query 'nope' is not a query of CRUMBClinicalTrial (default, test)"),
    ("trec-20211 Q0 NCT99 1 1.0 x", "bad.trec:2: document 'NCT99' (query 'trec-20211') is not in the corpus of "
                                    "CRUMBClinicalTrial"),
    ("trec-20211 Q0 NCT00002569 1 nan x", "bad.trec:2: score 'nan' is not finite"),
    ("trec-20212 Q0 NCT00003466 1 1.0", "bad.trec:2: expected 6 whitespace-separated fields"),
    ("trec-20212 Q0 NCT02423343 1 1.0 x", "bad.trec:2: query 'trec-20212', document 'NCT02423343' is listed twice"),
    # two spellings of one id (percent-encoding): the same document twice, not the later line kept
    ("trec-20212 Q0 NCT%302423343 1 1.0 x", "bad.trec:2: query 'trec-20212', document 'NCT%302423343' is listed "
                                           "twice: it names 'NCT02423343', as 'NCT02423343' (query 'trec-20212', "
                                           "line 1) does"),
])
def test_bad_run_is_refused_naming_file_and_line(tmp_path, capsys, caplog, line, message):
    first = "trec-20212 Q0 NCT02423343 1 2.0 x\n"
    code, text = _run_one(tmp_path, first + line + "\n", capsys, caplog)
    assert code != 0
    assert message in text, text
    assert not (tmp_path / "out" / "results").exists() or not list((tmp_path / "out" / "results").rglob(
        "CRUMBClinicalTrial.json"))


def test_runs_folder_missing_a_task_is_refused(tmp_path, capsys):
    folder = tmp_path / "runs"
    write_run_file(folder / "CRUMBLegalQA" / "default" / "test.trec", {"q": {"d": 1.0}}, "x")
    code = main(["run", "--runs", str(folder), "--task", "CRUMBClinicalTrial", "--model-name", "tests/x",
                 "--output", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert f"{folder / 'CRUMBClinicalTrial' / 'default' / 'test.trec'}: no run for task CRUMBClinicalTrial" in err
    assert not (tmp_path / "out").exists()
    write_run_file(folder / "NotATask" / "default" / "test.trec", {"q": {"d": 1.0}}, "x")
    assert main(["run", "--runs", str(folder), "--model-name", "tests/x", "--output", str(tmp_path / "out")]) == 2
    assert f"{folder / 'NotATask'}: 'NotATask' is not a task complexir knows" in capsys.readouterr().err
    assert main(["run", "--runs", str(tmp_path / "nowhere"), "--model-name", "tests/x"]) == 2
    assert "no such runs folder or run file" in capsys.readouterr().err


def test_one_file_needs_one_task_and_runs_need_a_name(tmp_path, capsys):
    run_file = tmp_path / "one.trec"
    run_file.write_text(HAND_RUN)
    assert main(["run", "--runs", str(run_file), "--benchmark", "CRUMB", "--model-name", "tests/x",
                 "--output", str(tmp_path / "out")]) == 2
    assert "one TREC file scores exactly one task, subset and split" in capsys.readouterr().err
    assert main(["run", "--runs", str(run_file), "--task", "CRUMBClinicalTrial", "--output", str(tmp_path)]) == 2
    assert "--runs needs --model-name NAME" in capsys.readouterr().err


# -- the files ------------------------------------------------------------------------------------------------------
def test_run_files_read_back_exactly(tmp_path):
    results = {"q2": {"a": 0.1 + 0.2, "b": 1e-300, "c": -3.5}, "q1": {"z": 1 / 3, "y": 1 / 3}}
    path = write_run_file(tmp_path / "r" / "run.trec", results, "my system")
    assert read_run_file(path) == results  # repr round-trips every float
    lines = path.read_text().splitlines()
    # queries in id order, best first, ties by id descending (trec_eval), ranks from 1, the tag without spaces
    assert lines[:2] == [f"q1 Q0 z 1 {1 / 3!r} my_system", f"q1 Q0 y 2 {1 / 3!r} my_system"]
    assert write_run_file(tmp_path / "d.trec", results, "x", depth=1).read_text().count("\n") == 2
    # ids with white space (CRUMB's film titles) percent-encoded, and decoded where a run is scored
    spaced = write_run_file(tmp_path / "spaced.trec", {"q 1": {"Alien: 50% Covenant": 1.0, "50%": 0.5}}, "x")
    assert spaced.read_text().splitlines() == ["q%201 Q0 Alien:%2050%25%20Covenant 1 1.0 x", "q%201 Q0 50% 2 0.5 x"]
    assert decode_id("Alien:%2050%25%20Covenant", {"Alien: 50% Covenant"}) == "Alien: 50% Covenant"
    assert decode_id("50%", {"50%"}) == "50%" and decode_id("a%20b", {"a b", "a%20b"}) == "a%20b"
    with pytest.raises(RunsError, match="empty id"):
        write_run_file(tmp_path / "bad.trec", {"q": {"": 1.0}}, "x")
    with pytest.raises(RunsError, match="not finite"):
        write_run_file(tmp_path / "bad.trec", {"q": {"a": math.inf}}, "x")
    assert not (tmp_path / "bad.trec").exists()


def test_hand_made_folder_is_named_by_its_digest(tmp_path):
    folder = tmp_path / "runs"
    write_run_file(folder / "T" / "default" / "test.trec", {"q": {"d": 1.0}}, "x")
    runs = RunsFolder(folder)
    assert runs.system is None and runs.revision == f"runs-{runs.digest[:16]}"
    assert runs.tasks() == ["T"] and runs.run("T", "default", "test") == {"q": {"d": 1.0}}
    assert runs.run("T", "default", "validation") is None
    write_run_file(folder / "T" / "default" / "test.trec", {"q": {"d": 2.0}}, "x")
    assert RunsFolder(folder).revision != runs.revision  # other rankings, another revision
    with pytest.raises(RunsError, match="holds files complexir did not write"):  # a hand-made folder is not replaced
        RunsFolderWriter(folder, "org/a", "1", 10)
    folder = tmp_path / "made"
    writer = RunsFolderWriter(folder, "org/a", "1", 10)
    writer.write("T", "default", "test", {"q": {"d": 1.0}})
    writer.close()
    with pytest.raises(RunsError, match="holds runs of org/a"):
        RunsFolderWriter(folder, "org/b", "1", 10)
    with pytest.raises(TrecFormatError, match="the run is empty"):
        (folder / "T" / "default" / "test.trec").write_text("")
        RunsFolder(folder).run("T", "default", "test")


# -- MaxP searched again, deeper: recorded at the depth the task used ----------------------------------------------
class PassageRun:
    """An mteb search model returning a fixed passage run, its top ``top_k`` passages (ties by id descending)."""

    def __init__(self, runs):
        self.runs = runs

    def index(self, corpus, **kwargs) -> None:
        pass

    def search(self, queries, *, top_k, hf_split, **kwargs):
        run = self.runs[hf_split]
        return {q: dict(sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)[:top_k])
                for q in queries["id"]}

    @property
    def mteb_model_meta(self):
        from mteb.models.model_meta import ModelMeta

        return ModelMeta.create_empty({"name": "complexir-tests/passage-run", "revision": "1"})


def test_maxp_searched_deeper_round_trips(tmp_path):
    """Documents of 1,100 passages (crumb_oracle_fixture): MaxP searches again, to the whole corpus. The recorded
    runs hold what the task used, and scoring them gives the same numbers, every measure and split."""
    from crumb_oracle_fixture import LONG_QUERIES, long_documents_run, write_long_documents_release

    from complexir.loading_scripts.crumb import build_crumb
    from complexir.runs.folder import RecordingSearch
    from complexir.tasks import TASKS_BY_NAME

    passages = write_long_documents_release(tmp_path / "release")
    build_crumb(tmp_path / "release", tmp_path / "data" / "crumb", subsets=[TASK], progress=False)
    runs = {split: long_documents_run(passages, list(qrels)) for split, qrels in LONG_QUERIES.items()}
    scores = []
    writer = RunsFolderWriter(tmp_path / "saved", "complexir-tests/passage-run", "1", None)
    for model in (RecordingSearch(PassageRun(runs), writer), None):
        if model is None:
            writer.close()
            model = FixedRunsSearch(RunsFolder(tmp_path / "saved"), "tests/replayed")
        task = TASKS_BY_NAME["CRUMBTipOfTheTongue"]().filter_eval_splits(["test", "validation"])
        task.data_dir = tmp_path / "data"
        result = mteb.evaluate(model, [task], overwrite_strategy="always", cache=None).task_results[0]
        scores.append({split: entries[0] for split, entries in result.scores.items()})
    corpus_size = sum(map(len, passages.values()))
    assert scores[0]["test"]["maxp_passages_searched"] == corpus_size  # searched again, to the whole corpus
    assert json.loads((tmp_path / "saved" / "runs.json").read_text())["depth"] == corpus_size
    for split in ("test", "validation"):
        numeric = {k for k, v in scores[0][split].items() if isinstance(v, float)}
        assert numeric - set(scores[1][split]) == set()
        assert {k: scores[1][split][k] for k in numeric} == pytest.approx({k: scores[0][split][k] for k in numeric},
                                                                          abs=1e-12, nan_ok=True)


# -- nothing lost, nothing silent (issue 32) ------------------------------------------------------------------------
def _one_run_folder(folder: Path, data: dict | None = None) -> Path:
    writer = RunsFolderWriter(folder, "org/sys", "1", None)
    writer.write("CRUMBClinicalTrial", "default", "test", {"trec-20211": {"NCT00002569": 1.0}}, data=data)
    writer.close()
    return folder


@pytest.mark.parametrize(("manifest", "message"), [
    ('{"format": "complexir-runs/1", "revision": 5, "tasks": {}}', '"revision" must be a string, got int 5'),
    ('{"format": "complexir-runs/1", "system": ["a"], "tasks": {}}', '"system" must be a string, got list'),
    ('{"format": "complexir-runs/1", "tasks": {"CRUMBClinicalTrial": []}}', "task 'CRUMBClinicalTrial': expected"),
    ('{"format": "complexir-runs/1", "tasks": {"CRUMBClinicalTrial": {"data": {"revision": 3}}}}', "expected"),
    ('{"format": "complexir-runs/1", "depth": "deep", "tasks": {}}', '"depth" must be a whole number'),
    ('[1, 2]', "not a runs manifest"),
    ('{"format": "complexir-runs/1", "tasks"', "runs.json:1: not valid JSON"),
])
def test_a_broken_runs_json_is_named(tmp_path, capsys, manifest, message):
    folder = _one_run_folder(tmp_path / "runs")
    (folder / "runs.json").write_text(manifest)
    for args in (["run", "--runs", str(folder), "--model-name", "tests/x", "--output", str(tmp_path / "out")],
                 ["fuse", str(folder), str(folder), "--method", "rrf", "--out", str(tmp_path / "f")]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(folder / "runs.json") in err and message in err, err
        assert "unexpected error" not in err
    with pytest.raises(RunsError, match="runs.json"):  # and writing into it
        RunsFolderWriter(folder, "org/sys", "1", None)


def test_an_unfinished_runs_folder_never_reads_as_complete(tmp_path, capsys):
    writer = RunsFolderWriter(tmp_path / "runs", "org/sys", "1", None)
    writer.write("CRUMBClinicalTrial", "default", "test", {"trec-20211": {"NCT00002569": 1.0}})
    # stopped here (Ctrl-C, a full disk): no close()
    with pytest.raises(RunsError, match="did not finish"):
        RunsFolder(tmp_path / "runs")
    assert main(["run", "--runs", str(tmp_path / "runs"), "--model-name", "tests/x", "--output",
                 str(tmp_path / "out")]) == 2
    assert "runs.json: the command writing this runs folder did not finish" in capsys.readouterr().err
    writer = RunsFolderWriter(tmp_path / "runs", "org/sys", "1", None)  # written again, it is complete
    writer.write("CRUMBClinicalTrial", "default", "test", {"trec-20211": {"NCT00002569": 1.0}})
    writer.close()
    assert RunsFolder(tmp_path / "runs").system == "org/sys"


def test_a_failed_task_s_saved_runs_are_not_kept(tmp_path):
    writer = RunsFolderWriter(tmp_path / "runs", "org/sys", "1", None)
    writer.write("T1", "default", "test", {"q": {"d": 1.0}})
    writer.write("T2", "default", "test", {"q": {"d": 1.0}})  # then T2's evaluation failed part-way
    writer.discard("T2")
    writer.close()
    assert RunsFolder(tmp_path / "runs").tasks() == ["T1"] and not (tmp_path / "runs" / "T2").exists()
    writer = RunsFolderWriter(tmp_path / "runs", "org/sys", "1", None)  # T1 failed again before writing anything
    writer.discard("T1")
    writer.close()
    assert RunsFolder(tmp_path / "runs").tasks() == ["T1"]  # the runs of the earlier, finished run are kept


def test_runs_are_never_written_over_files_complexir_did_not_write(tmp_path, capsys):
    hand = tmp_path / "hand"
    write_run_file(hand / "CRUMBClinicalTrial" / "default" / "test.trec", {"trec-20211": {"NCT00002569": 1.0}}, "x")
    before = (hand / "CRUMBClinicalTrial" / "default" / "test.trec").read_bytes()
    with pytest.raises(RunsError, match="holds files complexir did not write"):
        RunsFolderWriter(hand, "org/sys", "1", None)
    # --save-runs into the folder --runs reads: it would rewrite its input
    assert main(["run", "--runs", str(hand), "--save-runs", str(hand), "--model-name", "tests/x", "--output",
                 str(tmp_path / "out")]) == 2
    assert f"--save-runs {hand} would write into the runs --runs {hand} reads" in capsys.readouterr().err
    assert (hand / "CRUMBClinicalTrial" / "default" / "test.trec").read_bytes() == before
    assert sorted(p.name for p in hand.rglob("*")) == ["CRUMBClinicalTrial", "default", "test.trec"]


def test_runs_of_other_data_are_refused_unless_allowed(tmp_path, capsys):
    folder = _one_run_folder(tmp_path / "runs", data={"revision": "local-crumb-0123456789abcdef"})
    args = ["run", "--runs", str(folder), "--model-name", "tests/x", "--output", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'runs.json'}: the runs of CRUMBClinicalTrial were made on data 'local-crumb-0123456789abcdef'" \
        in err and "--allow-other-data" in err
    assert not (tmp_path / "out").exists()
    assert main([*args, "--allow-other-data"]) == 0


@pytest.mark.parametrize(("args", "message"), [
    (["--runs", "R", "--model-name", "x", "--prompt", "query=q: "], "--runs scores fixed rankings, with no model to "
                                                                     "prompt or run: --prompt cannot apply"),
    (["--runs", "R", "--model-name", "x", "--trust-remote-code"], "--trust-remote-code cannot apply"),
    (["--release-runs", "--model-name", "x", "--long-docs", "chunk"], "--model-name, --long-docs cannot apply"),
    (["--release-runs", "--prompt", "query=q: "], "--release-runs scores the rankings the release ships, each as its "
                                                  "own system: --prompt cannot apply"),
    (["--prompt", "query=a: ", "--prompt", "query=b: "], "--prompt query= is given twice ('a: ' and 'b: ')"),
    (["--rerank-depth", "20"], "--rerank-depth sets how deep a cross-encoder reranks its --first-stage"),
    (["--release-runs", "--model", "m"], "--model cannot apply"),
    (["--release-runs", "--save-runs"], "--save-runs cannot apply"),
    (["--release-runs", "--runs", "R"], "--runs cannot apply"),
    (["--allow-other-data"], "--allow-other-data applies to --runs or a --first-stage of runs"),
])
def test_options_that_would_do_nothing_are_refused(tmp_path, capsys, args, message):
    assert main(["run", *args, "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def _fixed_run(tmp_path: Path, output: Path) -> list[str]:
    folder = tmp_path / "fixed"
    if not folder.exists():
        _one_run_folder(folder)
    return ["run", "--runs", str(folder), "--model-name", "tests/x", "--output", str(output)]


def test_a_truncated_previous_result_is_named_not_called_other_data(tmp_path, capsys, caplog):
    output = tmp_path / "out"
    assert main(_fixed_run(tmp_path, output)) == 0
    (result,) = [p for p in (output / "results").rglob("CRUMBClinicalTrial.json")]
    result.write_text(result.read_text()[:50])
    capsys.readouterr()
    assert main(_fixed_run(tmp_path, output)) == 1
    captured = capsys.readouterr()
    text = captured.out + captured.err + caplog.text
    assert f"{result}:2: not valid JSON (truncated?)" in text and "remove it, or choose another --output" in text
    assert "other data" not in text


def test_a_full_disk_leaves_every_per_query_file_whole(tmp_path, capsys, caplog, monkeypatch):
    import errno
    import os

    output = tmp_path / "out"
    assert main(_fixed_run(tmp_path, output)) == 0
    (per_query,) = list((output / "per_query").rglob("*.json"))
    before = per_query.read_bytes()
    real = Path.write_text

    def full(self, *args, **kwargs):
        if "per_query" in str(self):  # the file is opened (emptied), then the disk is full
            self.open("w").close()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    capsys.readouterr()
    assert main(_fixed_run(tmp_path, output)) == 1
    captured = capsys.readouterr()
    assert f"No space left on device: '{per_query}'" in captured.out + captured.err + caplog.text
    assert per_query.read_bytes() == before
    assert [p.name for p in per_query.parent.iterdir()] == [per_query.name]  # no temporary left behind


def test_save_runs_beside_a_run_file_is_fine_into_its_folder_is_not(tmp_path):
    from complexir.cli.option_checks import refuse_saving_into

    run_file = tmp_path / "one.trec"
    run_file.write_text("q Q0 d 1 1.0 x\n")
    refuse_saving_into(tmp_path / "saved", run_file)  # a sibling folder: the input is untouched
    for folder in (tmp_path, tmp_path / "runs" / "inner"):
        (tmp_path / "runs").mkdir(exist_ok=True)
        with pytest.raises(ValueError, match="would write into the runs"):
            refuse_saving_into(folder, run_file if folder == tmp_path else tmp_path / "runs")


def test_a_full_disk_while_mteb_saves_a_result_leaves_the_previous_one_whole(tmp_path, capsys, caplog, monkeypatch):
    import errno
    import os

    from mteb.results import TaskResult

    output = tmp_path / "out"
    assert main(_fixed_run(tmp_path, output)) == 0
    (result,) = list((output / "results").rglob("CRUMBClinicalTrial.json"))
    before = result.read_bytes()

    def full(self, path):  # mteb opens the file, writes part of it, and the disk is full
        Path(path).write_text('{"dataset_revision": ')
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(TaskResult, "to_disk", full)
    capsys.readouterr()
    assert main(_fixed_run(tmp_path, output)) == 1
    captured = capsys.readouterr()
    assert f"No space left on device: '{result}'" in captured.out + captured.err + caplog.text
    assert result.read_bytes() == before
    assert sorted(p.name for p in result.parent.iterdir() if p.name.startswith(".")) == []
def test_runs_json_records_the_depth_written_not_the_depth_asked(tmp_path):
    """MTEB searches to 1,000; a 9-document corpus gives 9 per query, and that is the depth recorded."""
    writer = RunsFolderWriter(tmp_path / "runs", "me/model", "1", None)
    nine = {q: {f"d{i}": float(i) for i in range(9)} for q in ("q1", "q2")}
    writer.write("Task", "default", "test", nine, depth=1000)
    assert json.loads(writer.close().read_text())["depth"] == 9
    writer = RunsFolderWriter(tmp_path / "runs", "me/model", "1", 5)  # a cut: 5 of the 9 kept
    writer.write("Other", "default", "test", nine)
    assert writer.depth == 9  # the folder's deepest file, the earlier one, still holds 9
    assert len((tmp_path / "runs" / "Other" / "default" / "test.trec").read_text().splitlines()) == 10
def test_run_file_repeats_are_refused_wherever_they_are_and_checked_without_building(tmp_path):
    from complexir.runs.folder import check_run_file

    cases = {  # the second listing's line: within one query's lines, or in a later stretch of the same query
        "q1 Q0 a 1 3 x\nq1 Q0 b 2 2 x\nq1 Q0 a 3 1 x\n": ("q1", "a", 3),
        "q1 Q0 a 1 3 x\nq2 Q0 a 1 3 x\nq1 Q0 b 2 2 x\nq2 Q0 c 2 2 x\nq1 Q0 a 3 1 x\n": ("q1", "a", 5),
        "q2 Q0 z 1 3 x\nq1 Q0 a 1 3 x\nq2 Q0 y 2 2 x\nq2 Q0 z 3 1 x\nq1 Q0 a 2 1 x\n": ("q2", "z", 4),
    }
    for number, (text, (query, doc, line)) in enumerate(cases.items()):
        path = tmp_path / f"repeat{number}.trec"
        path.write_text(text)
        for reader in (read_run_file, check_run_file):
            with pytest.raises(TrecFormatError, match=rf"repeat{number}.trec:{line}: query '{query}', document "
                                                      rf"'{doc}' is listed twice"):
                reader(path)
    interleaved = tmp_path / "interleaved.trec"  # a query's lines need not be together
    interleaved.write_text("q1 Q0 a 1 3 x\nq2 Q0 a 1 3 x\nq1 Q0 b 2 2.5 x\n\nq2 Q0 c 2 2 x\n")
    check_run_file(interleaved)
    assert read_run_file(interleaved) == {"q1": {"a": 3.0, "b": 2.5}, "q2": {"a": 3.0, "c": 2.0}}
    empty = tmp_path / "empty.trec"
    empty.write_text("\n")
    for reader in (read_run_file, check_run_file):
        with pytest.raises(TrecFormatError, match="the run is empty"):
            reader(empty)


def test_fixed_runs_check_names_ids_as_the_task_does(tmp_path):
    """The check keeps a run whose ids are all the task's as it is, and decodes percent-encoded ones."""
    folder = tmp_path / "runs"
    write_run_file(folder / "T" / "default" / "test.trec", {"q 1": {"Alien: Covenant": 2.0, "d2": 1.0}}, "x")
    search = FixedRunsSearch(RunsFolder(folder), "tests/x")
    search._corpus = {"Alien: Covenant", "d2"}
    assert search.check("T", "default", "test", ["q 1"]) == {"q 1": {"Alien: Covenant": 2.0, "d2": 1.0}}
    plain = tmp_path / "plain"
    write_run_file(plain / "T" / "default" / "test.trec", {"q1": {"d1": 2.0, "d2": 1.0}}, "x")
    search = FixedRunsSearch(RunsFolder(plain), "tests/x")
    search._corpus = {"d1", "d2"}
    assert search.check("T", "default", "test", ["q1", "q2"]) == {"q1": {"d1": 2.0, "d2": 1.0}}
    search = FixedRunsSearch(RunsFolder(plain), "tests/x")
    search._corpus = {"d1"}
    with pytest.raises(RunsError, match=r"test.trec:2: document 'd2' \(query 'q1'\) is not in the corpus of T"):
        search.check("T", "default", "test", ["q1"])


def test_runs_check_shows_a_bar_once_it_takes_a_while(tmp_path, capsys, monkeypatch):
    from complexir.api import fixed_runs

    run_file = tmp_path / "hand.trec"
    run_file.write_text(HAND_RUN)
    command = ["run", "--runs", str(run_file), "--task", "CRUMBClinicalTrial", "--model-name", "tests/hand"]
    assert main([*command, "--output", str(tmp_path / "quick")]) == 0
    assert "checking runs" not in capsys.readouterr().err  # a small run is checked before a bar would show
    monkeypatch.setattr(fixed_runs, "PROGRESS_AFTER_S", 0)  # as if the check had taken a while
    assert main([*command, "--output", str(tmp_path / "slow")]) == 0
    assert "checking runs: 100%" in capsys.readouterr().err
