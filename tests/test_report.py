"""complexir report: model-index YAML, merged card, tables, charts and p-values from two real result folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml


@pytest.fixture(scope="module")
def two_runs(tiny, tmp_path_factory):
    """Result folders of the packaged model and of the same model truncated to 8 tokens (a weaker run)."""
    import mteb

    from complexir.runs.results import per_query_path
    from complexir.systems.models import load_model

    base = tmp_path_factory.mktemp("report")
    tiny.build(base / "data")
    outputs = {}
    for label, length in (("full", None), ("short", 8)):
        task = tiny.ComplexIRTinyHealth()
        task.data_dir = base / "data"
        model = load_model(max_seq_length=length)
        out = base / label
        task.per_query_file = per_query_path(out, model.mteb_model_meta, task.metadata.name)
        mteb.evaluate(model, [task], cache=mteb.ResultCache(out), overwrite_strategy="always")
        outputs[label] = (out, model.mteb_model_meta)
    return outputs


EXISTING_CARD = """---
license: apache-2.0
tags:
- sentence-transformers
model-index:
- name: all-MiniLM-L6-v2
  results:
  - task:
      type: text-classification
    dataset:
      name: MTEB Banking77 (default)
      type: mteb/banking77
      config: default
      split: test
    metrics:
    - type: accuracy
      value: 0.8
---

# all-MiniLM-L6-v2

Hand-written introduction that must survive.
"""


@pytest.fixture(scope="module")
def report(two_runs, tmp_path_factory):
    from complexir.cli.main import main

    base = tmp_path_factory.mktemp("card")
    card = base / "README.md"
    card.write_text(EXISTING_CARD, encoding="utf-8")
    out = base / "out"
    (full, _), (short, _) = two_runs["full"], two_runs["short"]
    assert main(["report", str(full), "--card", str(card), "--baseline", str(short), "--out", str(out)]) == 0
    return out


def _front_matter(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---", 2)[1])


def _task_result(out: Path, meta, task: str):
    from mteb.results import TaskResult

    return TaskResult.from_disk(out / "results" / meta.name.replace("/", "__") / meta.revision / f"{task}.json")


def test_model_index_is_valid_and_merged(report, two_runs, tiny):
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results

    meta = _front_matter(report / "README.md")
    assert meta["license"] == "apache-2.0" and meta["tags"] == ["sentence-transformers"]
    index = meta["model-index"]
    assert len(index) == 1 and index[0]["name"] == "all-MiniLM-L6-v2"
    for result in index[0]["results"]:  # the Hub schema's required keys
        assert result["task"]["type"] and result["dataset"]["name"] and result["dataset"]["type"]
        assert all({"type", "value"} <= set(m) for m in result["metrics"])
    name, results = model_index_to_eval_results(index)
    assert eval_results_to_model_index(name, results) == index  # round trip through huggingface_hub
    by_metric = {(r.dataset_type, r.metric_type): r for r in results}
    assert by_metric[("mteb/banking77", "accuracy")].metric_value == 0.8  # the existing entry survives
    scores = _task_result(*two_runs["full"], tiny.TASK_NAME).scores["test"][0]
    for metric in ("ndcg_at_10", "recall_at_100"):
        entry = by_metric[("complexir/tiny-health", metric)]
        assert entry.metric_value == pytest.approx(scores[metric])
        # the config is the layout subset the task reads
        assert (entry.task_type, entry.dataset_config, entry.dataset_split) == ("text-retrieval", "health", "test")
    card = ModelCard.load(report / "README.md")
    assert "Hand-written introduction that must survive." in card.text
    assert card.text.count("<!-- complexir-report:start -->") == 1


def test_rerun_replaces_instead_of_duplicating(report, two_runs, tmp_path):
    from complexir.analysis.report import make_report

    out = tmp_path / "again"
    make_report(two_runs["full"][0], out, card=report / "README.md")
    meta = _front_matter(out / "README.md")
    before = _front_matter(report / "README.md")["model-index"][0]["results"]
    assert len(meta["model-index"][0]["results"]) == len(before)
    assert (out / "README.md").read_text(encoding="utf-8").count("## Evaluation results (complexir)") == 1


def test_table_values_and_p_values(report, two_runs, tiny):
    from scipy import stats

    section = (report / "complexir_report" / "report.md").read_text(encoding="utf-8")
    header, _, row = [line for line in section.splitlines() if line.startswith("|")][:3]
    cells = dict(zip([c.strip() for c in header.strip("|").split("|")],
                     [c.strip() for c in row.strip("|").split("|")], strict=True))
    full = _task_result(*two_runs["full"], tiny.TASK_NAME).scores["test"][0]
    short = _task_result(*two_runs["short"], tiny.TASK_NAME).scores["test"][0]
    assert cells["Task"] == tiny.TASK_NAME
    assert float(cells["nDCG@10"]) == pytest.approx(full["ndcg_at_10"], abs=5e-5)
    assert float(cells["R@100"]) == pytest.approx(full["recall_at_100"], abs=5e-5)
    assert float(cells["nDCG@10 Δ"]) == pytest.approx(full["ndcg_at_10"] - short["ndcg_at_10"], abs=1e-4)

    def per_query(label):
        out, meta = two_runs[label]
        path = out / "per_query" / meta.name.replace("/", "__") / meta.revision / f"{tiny.TASK_NAME}.json"
        return json.loads(path.read_text())["scores"]["default"]["test"]["ndcg_at_10"]

    a, b = per_query("full"), per_query("short")
    queries = sorted(a)
    x, y = [a[q] for q in queries], [b[q] for q in queries]
    assert x != y, "the truncated model should rank differently"
    exact = stats.permutation_test((x, y), lambda u, v, axis: (u - v).mean(axis=axis), vectorized=True,
                                   permutation_type="samples", n_resamples=10_000, random_state=0)
    significance = json.loads((report / "complexir_report" / "significance.json").read_text())
    test = next(t for t in significance["tests"] if t["metric"] == "ndcg_at_10")
    assert test["n"] == len(queries) == len(tiny.QUERIES)
    assert test["p_randomisation"] == pytest.approx(exact.pvalue)
    assert test["p_ttest"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
    assert cells["nDCG@10 p"] == f"{exact.pvalue:.4f}"


def test_eval_results_files_match_mteb(report, two_runs, tiny):
    data = yaml.safe_load((report / ".eval_results" / f"{tiny.TASK_NAME}.yaml").read_text(encoding="utf-8"))
    main = _task_result(*two_runs["full"], tiny.TASK_NAME).get_score()
    ids = {entry["dataset"]["task_id"]: entry for entry in data}
    assert set(ids) == {f"{tiny.TASK_NAME}_default_test", tiny.TASK_NAME}
    for entry in data:
        # the revision of the data scored (a local build: its folder name and content digest), not the declared "1"
        assert entry["dataset"]["id"] == "complexir/tiny-health"
        assert entry["dataset"]["revision"] == _task_result(*two_runs["full"], tiny.TASK_NAME).dataset_revision
        assert entry["dataset"]["revision"].startswith("local-")
        assert entry["value"] == round(main * 100, 5)
        assert entry["source"]["url"] == "https://github.com/embeddings-benchmark/mteb/"


def test_chart_is_a_png(report):
    charts = list((report / "complexir_report").glob("*.png"))
    assert [c.name for c in charts] == ["ComplexIRTiny.png"]
    data = charts[0].read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
    assert "![ComplexIRTiny results](complexir_report/ComplexIRTiny.png)" in (report / "README.md").read_text()


def test_several_models_need_a_choice(two_runs, tmp_path):
    import shutil

    from complexir.runs.results import load_run

    both = tmp_path / "both"
    for label in ("full", "short"):
        shutil.copytree(two_runs[label][0], both, dirs_exist_ok=True)
    with pytest.raises(ValueError, match="several models"):
        load_run(both)
    run = load_run(both, model=two_runs["short"][1].name)
    assert run.model == two_runs["short"][1].name and run.per_query


def test_tasks_sharing_a_repo_get_their_own_model_index_entries():
    """Most of our tasks have the MTEB subset 'default' and share a benchmark's Hub repo; the Hub groups
    model-index results by (task type, dataset, config, split, revision), so the config must tell them apart."""
    from huggingface_hub.repocard_data import eval_results_to_model_index

    from complexir.analysis.report import eval_results
    from complexir.analysis.tables import Row
    from complexir.runs.results import ModelRun

    run = ModelRun(model="m", revision="r", folder=Path("."))
    rows = [Row("CRUMB", name, "default", "test", {"ndcg_at_10": value})
            for name, value in (("CRUMBClinicalTrial", 0.5), ("CRUMBClinicalTrialFullDocument", 0.25),
                                ("CRUMBLegalQA", 0.75))]
    rows.append(Row("IRSC", "IRSCQuery", "en-zh", "test", {"recall_at_10": 1.0}))
    index = eval_results_to_model_index("m", eval_results(run, rows))[0]["results"]
    assert [(e["dataset"]["name"], e["dataset"]["config"], [m["value"] for m in e["metrics"]]) for e in index] == [
        ("CRUMBClinicalTrial (default)", "clinical_trial", [0.5]),
        ("CRUMBClinicalTrialFullDocument (default)", "clinical_trial_full", [0.25]),
        ("CRUMBLegalQA (default)", "legal_qa", [0.75]),
        ("IRSCQuery (en-zh)", "query-en-zh", [1.0]),
    ]


def test_report_refuses_demo_or_unnamed_data_unless_allowed(two_runs, tiny, tmp_path):
    """Results whose data is the demo, or is not named at all (``dataset_revision`` "main", as mteb writes for any
    task that does not say), never enter model-index or .eval_results as benchmark results; --allow-demo writes
    them labelled."""
    import shutil

    from complexir.analysis.report import DEMO_LABEL
    from complexir.cli.main import main

    full, meta = two_runs["full"]
    copy = tmp_path / "copy"
    shutil.copytree(full, copy)
    path = copy / "results" / meta.name.replace("/", "__") / meta.revision / f"{tiny.TASK_NAME}.json"
    result = json.loads(path.read_text())
    for revision in ("main", "complexir-demo-tiny-0123456789abcdef"):
        result["dataset_revision"] = revision
        path.write_text(json.dumps(result))
        assert main(["report", str(copy), "--out", str(tmp_path / "refused")]) == 2  # bad input
        assert not (tmp_path / "refused" / "README.md").exists()
    assert main(["report", str(copy), "--out", str(tmp_path / "demo"), "--allow-demo"]) == 0
    entries = _front_matter(tmp_path / "demo" / "README.md")["model-index"][0]["results"]
    assert entries and all(DEMO_LABEL in e["dataset"]["name"] for e in entries)
    assert all(e["dataset"]["revision"] == "complexir-demo-tiny-0123456789abcdef" for e in entries)
    eval_results = yaml.safe_load((tmp_path / "demo" / ".eval_results" / f"{tiny.TASK_NAME}.yaml").read_text())
    assert all(DEMO_LABEL in e["notes"] for e in eval_results)


def test_report_takes_data_built_from_upstream_as_real_but_says_so(two_runs, tiny, tmp_path):
    """A result scored on a benchmark built locally from its upstream release (the task's Hub repo was missing) is
    real data: no --allow-demo needed, never labelled demo, but labelled as built locally, with its revision."""
    import shutil

    from complexir.analysis.report import DEMO_LABEL, UPSTREAM_LABEL
    from complexir.cli.main import main

    full, meta = two_runs["full"]
    copy = tmp_path / "copy"
    shutil.copytree(full, copy)
    path = copy / "results" / meta.name.replace("/", "__") / meta.revision / f"{tiny.TASK_NAME}.json"
    result = json.loads(path.read_text())
    revision = "upstream-build-tiny-health-0123456789abcdef"
    result["dataset_revision"] = revision
    path.write_text(json.dumps(result))
    assert main(["report", str(copy), "--out", str(tmp_path / "report")]) == 0
    card = tmp_path / "report" / "README.md"
    entries = _front_matter(card)["model-index"][0]["results"]
    assert entries and all(UPSTREAM_LABEL in e["dataset"]["name"] and DEMO_LABEL not in e["dataset"]["name"]
                           for e in entries)
    assert all(e["dataset"]["revision"] == revision for e in entries)
    assert f"{tiny.TASK_NAME} (`{revision}`)" in card.read_text() and "built locally from the upstream" in \
        card.read_text()
    eval_results = yaml.safe_load((tmp_path / "report" / ".eval_results" / f"{tiny.TASK_NAME}.yaml").read_text())
    assert all(UPSTREAM_LABEL in e["notes"] for e in eval_results)


def test_run_never_overwrites_results_of_other_data(two_runs, tiny, tmp_path):
    """MTEB files results by model and task only: a run over other data must not silently replace them."""
    import shutil

    from complexir.api.run import check_no_other_data

    full, meta = two_runs["full"]
    copy = tmp_path / "copy"
    shutil.copytree(full, copy)
    task = tiny.ComplexIRTinyHealth()
    task.data_dir = full.parent / "data"
    check_no_other_data(copy, meta, task)  # same data: fine
    path = copy / "results" / meta.name.replace("/", "__") / meta.revision / f"{tiny.TASK_NAME}.json"
    result = json.loads(path.read_text())
    result["dataset_revision"] = "local-tiny-health-ffffffffffffffff"
    path.write_text(json.dumps(result))
    with pytest.raises(FileExistsError, match="holds results of other data"):
        check_no_other_data(copy, meta, task)


def test_crumb_report_tests_every_official_measure(tmp_path):
    """CRUMB's report shows crumb_eval's default measures, labelled by the measure registry, and tests each on the
    per-query values `complexir run` keeps (uncut RR included), over every judged query: paper_retrieval's P, R and RR
    over the queries of its binary qrels."""
    from complexir.cli.main import main
    from complexir.loading_scripts.crumb import build_crumb
    from complexir.metrics import parse_measure
    from complexir.registry.benchmarks import CRUMB

    build_crumb(Path(__file__).parent / "fixtures" / "crumb" / "demo_upstream", tmp_path / "data" / "crumb",
                subsets=["paper_retrieval"], progress=False)
    for label, extra in (("full", []), ("short", ["--max-seq-length", "8", "--model-name", "short"])):
        assert main(["run", "--task", "CRUMBPaperRetrieval", "--data-dir", str(tmp_path / "data"),
                     "--output", str(tmp_path / label), *extra]) == 0
    assert main(["report", str(tmp_path / "full"), "--baseline", str(tmp_path / "short"),
                 "--out", str(tmp_path / "report")]) == 0
    official = [parse_measure(m) for m in CRUMB.official_measures]
    significance = json.loads((tmp_path / "report" / "complexir_report" / "significance.json").read_text())
    tested = {t["metric"]: t["n"] for t in significance["tests"] if t["task"] == "CRUMBPaperRetrieval"}
    result = json.loads(next((tmp_path / "full" / "results").rglob("CRUMBPaperRetrieval.json")).read_text())
    scores = result["scores"]["test"][0]
    for measure in official:
        binary = measure.family in ("P", "R", "RR")
        assert tested[measure.mteb_key] == scores["binary_judged_queries" if binary else "judged_queries"], measure
    header = next(line for line in (tmp_path / "report" / "complexir_report" / "report.md").read_text().splitlines()
                  if line.startswith("| Task"))
    assert all(f" {m.label} |" in header for m in official)  # nDCG@5, P@5, MRR (uncut), MRR@10, ...
