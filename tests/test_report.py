"""complexir report: model-index YAML, merged card, tables, charts and p-values from two real result folders."""

from __future__ import annotations

import itertools
import json
import math
import re
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
    assert meta["license"] == "apache-2.0" and meta["tags"] == ["sentence-transformers", "mteb"]  # ours added
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
    table_lines = [line for line in section.splitlines() if line.startswith("|")]
    # two tables: the scores, then against the baseline (Δ, p, p Holm in one cell per metric)
    (header, _, row), (versus_header, _, versus_row) = table_lines[:3], table_lines[3:6]

    def cells_of(head: str, line: str) -> dict[str, str]:
        return dict(zip([c.strip() for c in head.strip("|").split("|")],
                        [c.strip() for c in line.strip("|").split("|")], strict=True))

    cells, versus = cells_of(header, row), cells_of(versus_header, versus_row)
    assert not any("Δ" in name or name.endswith(" p") for name in cells)  # no longer four columns per metric
    assert list(versus)[:3] == ["Task", "Subset", "Split"] and set(versus) <= set(cells)
    full = _task_result(*two_runs["full"], tiny.TASK_NAME).scores["test"][0]
    short = _task_result(*two_runs["short"], tiny.TASK_NAME).scores["test"][0]
    assert cells["Task"] == versus["Task"] == tiny.TASK_NAME
    assert float(cells["nDCG@10"]) == pytest.approx(full["ndcg_at_10"], abs=5e-5)
    assert float(cells["R@100"]) == pytest.approx(full["recall_at_100"], abs=5e-5)
    delta, p, p_holm = re.fullmatch(r"(\S+) \((\S+), (\S+)\)", versus["nDCG@10"]).groups()
    assert float(delta) == pytest.approx(full["ndcg_at_10"] - short["ndcg_at_10"], abs=1e-4)

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
    assert p == f"{exact.pvalue:.4f}" and float(p_holm) >= float(p)


def test_eval_results_files_match_mteb(report, two_runs, tiny):
    from huggingface_hub import parse_eval_result_entries

    from complexir.analysis.report import EVAL_RESULTS_SCALE

    text = (report / ".eval_results" / f"{tiny.TASK_NAME}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    # read as huggingface_hub reads the format (mteb's pydantic model cannot read back the revision it leaves out)
    assert [e.task_id for e in parse_eval_result_entries(data)] == [e["dataset"]["task_id"] for e in data]
    main = _task_result(*two_runs["full"], tiny.TASK_NAME).get_score()
    ids = {entry["dataset"]["task_id"]: entry for entry in data}
    assert set(ids) == {f"{tiny.TASK_NAME}_default_test", tiny.TASK_NAME}
    for entry in data:
        # a local build: no Hub commit to name, so no revision (never the declared "1", never a local digest)
        assert entry["dataset"]["id"] == "complexir/tiny-health"
        assert "revision" not in entry["dataset"]
        assert entry["value"] == round(main * 100, 5)
        assert entry["source"]["url"] == "https://github.com/embeddings-benchmark/mteb/"
        assert EVAL_RESULTS_SCALE in entry["notes"]


def test_benchmark_level_eval_result(report, two_runs, tiny):
    """Every task of the benchmark was scored: .eval_results/<Benchmark>.yaml holds its headline score, the mean of
    the task main scores on the scale of the per-task files, filed under the benchmark's Hub repo and name."""
    from complexir.analysis.report import EVAL_RESULTS_SCALE

    data = yaml.safe_load((report / ".eval_results" / f"{tiny.BENCHMARK_NAME}.yaml").read_text(encoding="utf-8"))
    assert len(data) == 1
    entry = data[0]
    assert entry["dataset"] == {"id": tiny.BENCHMARK.benchmark_hf_repo, "task_id": tiny.BENCHMARK_NAME}
    scores = [_task_result(*two_runs["full"], t.metadata.name).get_score() for t in tiny.BENCHMARK.tasks]
    assert entry["value"] == pytest.approx(sum(scores) / len(scores) * 100, abs=1e-6)
    assert EVAL_RESULTS_SCALE in entry["notes"]
    card = _front_matter(report / "README.md")
    assert "mteb" in card["tags"] and "sentence-transformers" in card["tags"]


def test_a_validation_run_is_never_a_tasks_score(tmp_path):
    """mteb counts the splits scored, not which: a run of CRUMB's validation split alone would be filed as the task's
    (test) score. Only its per-split entry is written."""
    from mteb.results import TaskResult

    from complexir.analysis.report import write_eval_results_folder
    from complexir.runs.results import ModelRun

    result = TaskResult(dataset_revision="local-crumb-0123456789abcdef", task_name="CRUMBLegalQA",
                        mteb_version="2.26.0", evaluation_time=1.0,
                        scores={"validation": [{"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.5}]})
    run = ModelRun(model="m", revision="r", folder=tmp_path, task_results={"CRUMBLegalQA": result})
    (path,) = write_eval_results_folder(run, tmp_path)
    assert [e["dataset"]["task_id"] for e in yaml.safe_load(path.read_text())] == ["CRUMBLegalQA_default_validation"]


def test_no_benchmark_level_result_without_every_task(tmp_path, caplog):
    """A benchmark some of whose tasks were not scored gets no benchmark-level file, and one line names the missing
    tasks; the hub revision is kept only for data read from the Hub."""
    from mteb.results import TaskResult

    from complexir.analysis.report import hub_revision, write_eval_results_folder
    from complexir.runs.results import ModelRun

    commit = "0123456789abcdef0123456789abcdef01234567"
    result = TaskResult(dataset_revision=commit, task_name="LoCoV1GovReport", mteb_version="2.26.0",
                        scores={"test": [{"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.5,
                                          "ndcg_at_10": 0.5}]}, evaluation_time=1.0)
    run = ModelRun(model="m", revision="r", folder=tmp_path, task_results={"LoCoV1GovReport": result})
    with caplog.at_level("WARNING"):
        written = write_eval_results_folder(run, tmp_path)
    assert [p.name for p in written] == ["LoCoV1GovReport.yaml"]
    lines = [r.getMessage() for r in caplog.records if "no benchmark-level result" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("LoCoV1: ") and "LoCoV1SummScreenFD" in lines[0]
    assert "LoCoV1GovReport" not in lines[0].split(":", 2)[2]
    entries = yaml.safe_load(written[0].read_text())
    assert {e["dataset"]["revision"] for e in entries} == {commit}
    assert hub_revision("local-locov1-0123456789abcdef") is None and hub_revision(commit) == commit


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


def test_report_refuses_demo_or_unnamed_data_unless_allowed(two_runs, tiny, tmp_path, monkeypatch):
    """Results whose data is the demo, or is not named at all (``dataset_revision`` "main", as mteb writes for any
    task that does not say), never enter model-index or .eval_results as benchmark results; --allow-demo writes
    them labelled."""
    import shutil

    from complexir.analysis import charts
    from complexir.analysis.report import DEMO_LABEL
    from complexir.cli.main import main

    full, meta = two_runs["full"]
    copy = tmp_path / "copy"
    shutil.copytree(full, copy)
    path = copy / "results" / meta.name.replace("/", "__") / meta.revision / f"{tiny.TASK_NAME}.json"
    result = json.loads(path.read_text())
    titles = []
    original = charts.benchmark_chart
    monkeypatch.setattr(charts, "benchmark_chart",
                        lambda rows, path, *, title, **kw: (titles.append(title), original(rows, path, title=title,
                                                                                            **kw))[1])
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
    assert all("revision" not in e["dataset"] for e in eval_results)  # no Hub commit to name
    benchmark = yaml.safe_load((tmp_path / "demo" / ".eval_results" / f"{tiny.BENCHMARK_NAME}.yaml").read_text())
    assert all(DEMO_LABEL in e["notes"] and DEMO_LABEL in e["source"]["name"] for e in benchmark)
    # every human-readable output says DEMO too: the card body, report.md and the chart's title
    body = (tmp_path / "demo" / "README.md").read_text().split("---", 2)[2]
    section = (tmp_path / "demo" / "complexir_report" / "report.md").read_text()
    for text in (body, section):
        assert "DEMO data, not benchmark scores" in text and f"### {tiny.BENCHMARK_NAME} [DEMO" in text
    assert titles and all("DEMO data" in t for t in titles)


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


def test_demo_report_ids_are_those_of_the_demo_benchmarks(tmp_path):
    """Results of our benchmarks (a task with four language subsets, a single-subset one) land on the Hub
    Benchmarks their data comes from: every (dataset.id, task_id) of .eval_results is an id of that benchmark's
    eval.yaml; no benchmark-level file, since neither benchmark was scored whole."""
    from complexir.cli.main import main
    from complexir.registry.benchmarks import get_spec

    assert main(["run", "--task", "IRSCQuery", "--task", "LoCoV1GovReport", "--output", str(tmp_path / "run")]) == 0
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "report"), "--allow-demo"]) == 0
    demo = Path(__file__).resolve().parents[1] / "complexir" / "demo"
    known = {(get_spec(b).hub_id, t["id"]) for b in ("irsc", "locov1")
             for t in yaml.safe_load((demo / b / "eval.yaml").read_text())["tasks"]}
    files = sorted((tmp_path / "report" / ".eval_results").glob("*.yaml"))
    assert [f.name for f in files] == ["IRSCQuery.yaml", "LoCoV1GovReport.yaml"]
    entries = {(e["dataset"]["id"], e["dataset"]["task_id"]) for f in files for e in yaml.safe_load(f.read_text())}
    assert ("complexir/irsc", "IRSCQuery_en-zh_test") in entries and ("complexir/locov1", "LoCoV1GovReport") in entries
    assert entries <= known
def test_chart_labels_and_legend_never_overlap(tmp_path, monkeypatch):
    """Twenty IRSC-like groups with a baseline: three measures at most per system, the benchmark's prefix off each
    tick label, and no tick label over another or over the legend."""
    import matplotlib.pyplot as plt

    from complexir.analysis import charts
    from complexir.analysis.tables import Row

    keys = ["recall_at_10", "map_at_10", "ndcg_at_10", "doc_token_share_seen", "precision_at_5", "mrr_at_10"]
    rows = [Row("IRSC", f"IRSC{kind}", subset, "test", {k: 0.5 for k in keys}, baseline={k: 0.4 for k in keys})
            for kind in ("Query", "Title", "Part", "Keyword", "Summary") for subset in ("en", "zh", "en-zh", "zh-en")]
    assert charts.chart_metrics(rows) == ["recall_at_10", "map_at_10", "ndcg_at_10"]
    assert charts.tick_labels("IRSC", [("IRSCQuery", "en-zh"), ("average", "all")]) == ["Query en-zh", "average"]
    drawn = []
    close = plt.close
    monkeypatch.setattr(plt, "close", drawn.append)
    charts.benchmark_chart(rows, tmp_path / "irsc.png", title="IRSC: model", baseline_name="base")
    (fig,) = drawn
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    assert len(ax.patches) == 20 * 6  # three measures, model and baseline
    labels = ax.get_xticklabels()
    ticks = [t.get_window_extent(renderer) for t in labels]
    assert [t.get_text() for t in labels][:2] == ["Query en", "Query zh"]
    turned = labels[0].get_rotation()
    if turned == 0:  # level: side by side
        assert not any(a.overlaps(b) for a, b in itertools.pairwise(ticks))
    else:  # turned: parallel lines, apart by the tick spacing times the sine of the angle, more than a line's height
        spacing = ax.transData.transform((1, 0))[0] - ax.transData.transform((0, 0))[0]
        line = labels[0].get_fontsize() * fig.dpi / 72 * 1.2
        assert spacing * math.sin(math.radians(turned)) > line
    legend = fig.legends[0].get_window_extent(renderer)
    assert not any(legend.overlaps(t) for t in ticks)
    close(fig)
