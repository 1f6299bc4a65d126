"""`complexir run` end to end: the packaged model on every demo benchmark, then a rerun served by the embedding
store; the store is keyed per model, revision and length, and a long-document experiment keeps its own files."""

from __future__ import annotations

import json
import math
import os

import pytest
from run_output import MODEL, MODEL_DIR, store_counts, table_rows

from complexir.api.run import demo_data_dir
from complexir.cli.main import main
from complexir.layout.validation import validate_folder
from complexir.registry.benchmarks import get_spec
from complexir.tasks import BENCHMARKS, TASKS
from complexir.tasks.layout_task import QUERY_MEAN_PREFIXES


def test_every_benchmark_ships_a_valid_demo():
    folders = sorted(p.name for p in demo_data_dir().iterdir() if p.is_dir())
    assert folders == ["coveragebench", "crumb", "irsc", "locov1"]
    for name in folders:
        assert validate_folder(demo_data_dir() / name)
    missing = [cls.metadata.name for cls in TASKS if not cls().available_in(demo_data_dir())]
    assert not missing, f"tasks without demo data: {missing}"  # every task runs on its benchmark's demo


def test_plain_run_scores_the_default_demo_subsets_and_the_rest_is_reachable():
    """The demo holds every task, but a plain ``complexir run`` scores only the subsets each spec names in
    ``demo_run_subsets`` (the same 17 tasks as before the demo grew); --benchmark and --task reach the others."""
    from complexir.api.run import select_tasks
    from complexir.hub.data_source import DataSource

    demo = DataSource.local(demo_data_dir())
    default = [t.metadata.name for t in select_tasks(None, None, demo, ["test"])]
    assert len(default) == 17 and "CRUMBLegalQAFullDocument" in default and "IRSCSummary" in default
    assert not {"CRUMBTipOfTheTongue", "LoCoV1QMSum", "CoverageBenchRAG2024Rerank"} & set(default)
    crumb = [t.metadata.name for t in select_tasks(["CRUMB"], None, demo, ["test"])]
    assert len(crumb) == 13 and "CRUMBTipOfTheTongue" in crumb
    assert [t.metadata.name for t in select_tasks(None, ["LoCoV1QMSum"], demo, ["test"])] == ["LoCoV1QMSum"]
    everything = [t.metadata.name for t in select_tasks([b.name for b in BENCHMARKS], None, demo, ["test"])]
    assert sorted(everything) == sorted(cls.metadata.name for cls in TASKS)


@pytest.mark.slow  # the main job: every demo benchmark with the real model, then a rerun
def test_run_with_no_arguments_then_cached_rerun(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default --output is ./results
    cache = tmp_path / "embeddings"
    assert main(["run", "--cache", str(cache)]) == 0
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert {row[0] for row in rows} == {"CRUMB", "IRSC", "LoCoV1", "CoverageBench"}
    runnable = [cls.metadata.name for cls in TASKS
                if get_spec(cls.benchmark_dir).in_default_demo_run(cls().upstream_subsets())]
    assert sorted({row[1] for row in rows}) == sorted(runnable)
    # The first run encodes every text once: tasks sharing a corpus (IRSC's five, CoverageBench's full and
    # rerank tasks) are served from the embedding store.
    store = store_counts(out)
    assert store["encoded"] == store["unique"] and store["served from the store"] > 0
    assert store["requested"] == store["unique"] + store["served from the store"]
    assert next(row for row in rows if row[1] == "IRSCQuery")[-1] != "cached"
    assert all(row[-1] == "cached" for row in rows if row[1] in ("IRSCTitle", "CoverageBenchCAsT2020Rerank"))

    # every number names its data: here the demo, loudly, and with a revision no Hub commit can be
    assert "data: CRUMB: DEMO copy of crumb shipped in complexir (content sha256 " in out
    assert "DEMO DATA (CRUMB, CoverageBench, IRSC, LoCoV1): " in out and "NOT benchmark scores" in out
    results = tmp_path / "results" / "results" / MODEL_DIR
    assert (results / "model_meta.json").is_file()
    for name in runnable:
        result = json.loads((results / f"{name}.json").read_text())
        assert result["task_name"] == name
        assert result["dataset_revision"].startswith("complexir-demo-")
        for entry in result["scores"]["test"]:
            assert 0.0 <= entry["main_score"] <= 1.0 + 1e-9  # α-nDCG may exceed 1 only through the greedy ideal
        per_query = json.loads((tmp_path / "results" / "per_query" / MODEL_DIR / f"{name}.json").read_text())
        assert per_query["model"] == "sentence-transformers/all-MiniLM-L6-v2"
        assert per_query["data"]["kind"] == "demo" and per_query["data"]["revision"] == result["dataset_revision"]
        for subset, splits in per_query["scores"].items():
            values = splits["test"]["ndcg_at_10"]
            entry = next(e for e in result["scores"]["test"] if e["hf_subset"] == subset)
            assert set(splits["test"]) <= set(entry)  # no per-query measure beyond what the task retrieved
            # judged queries without a positive count in with 0 (trec_eval, ndeval): per-query has them too
            assert len(values) == entry["judged_queries"]
            # every mean is the exact mean of its per-query values, unrounded in the result JSON
            reported = {k for k, v in entry.items() if k.startswith(QUERY_MEAN_PREFIXES) and isinstance(v, float)}
            assert reported <= set(splits["test"]), name
            for key, by_query in splits["test"].items():
                assert abs(math.fsum(by_query.values()) / len(by_query) - entry[key]) <= 1e-12, (name, key)

    # A rerun of one benchmark with the same cache encodes nothing and gives the same scores.
    assert main(["run", "--cache", str(cache), "--benchmark", "IRSC", "--output", str(tmp_path / "again")]) == 0
    out = capsys.readouterr().out
    again = table_rows(out)
    assert again and all(row[-1] == "cached" for row in again)
    assert store_counts(out)["encoded"] == 0
    # main score, nDCG@10, R@100: the columns every table has
    first = {tuple(r[1:4]): r[4:7] for r in rows if r[0] == "IRSC"}
    assert {tuple(r[1:4]): r[4:7] for r in again} == first


def test_run_rejects_unknown_names(capsys):
    assert main(["run", "--benchmark", "NoSuchBench"]) == 2  # bad input
    assert "unknown benchmark" in capsys.readouterr().err
    assert main(["run", "--task", "NoSuchTask"]) == 2
    assert "unknown task" in capsys.readouterr().err
    assert main(["run", "--task", "LoCoV1Govreport"]) == 2  # typos: the closest name
    assert "unknown task 'LoCoV1Govreport' (did you mean 'LoCoV1GovReport'?)" in capsys.readouterr().err
    assert main(["run", "--benchmark", "locov"]) == 2
    assert "unknown benchmark 'locov' (did you mean 'LoCoV1'?)" in capsys.readouterr().err


def _run(capsys, *args: str) -> dict[tuple[str, ...], list[str]]:
    """One ``complexir run`` in this process: its table as {(task, subset, split): [main, nDCG@10, R@100, docs/s]}."""
    assert main(["run", *args]) == 0
    rows = table_rows(capsys.readouterr().out)
    assert rows
    return {tuple(r[1:4]): [*r[4:7], r[-1]] for r in rows}


def _cached(table: dict) -> set[bool]:
    return {row[-1] == "cached" for row in table.values()}


def _scores(table: dict) -> dict:
    return {key: row[:-1] for key, row in table.items()}


def test_cache_is_keyed_by_model_revision_and_length(tmp_path, capsys):
    cache = str(tmp_path / "embeddings")
    common = ["--benchmark", "IRSC", "--task", "IRSCQuery", "--cache", cache, "--output", str(tmp_path / "out")]

    first = _run(capsys, *common)
    assert _cached(first) == {False}
    again = _run(capsys, *common)  # same model, revision and length: every vector from the cache
    assert _cached(again) == {True}
    assert _scores(again) == _scores(first)

    # A shorter max length is another model: it encodes again and scores differently.
    short = _run(capsys, *common, "--max-seq-length", "8")
    assert _cached(short) == {False}
    assert _scores(short) != _scores(first)
    # --model-name replaces the name and drops its `__max<N>`: here the first run's very name and revision,
    # so only the max length (a key of its own) keeps the first run's vectors from being served.
    renamed_short = _run(capsys, *common, "--model-name", MODEL, "--max-seq-length", "8")
    assert _cached(renamed_short) == {False}
    assert _scores(renamed_short) == _scores(short)

def test_chunked_run_keeps_its_own_per_query_scores_and_report_finds_them(tmp_path, capsys):
    from mteb.models.model_meta import ModelMeta

    from complexir.runs.results import load_run

    out = tmp_path / "out"
    common = ["--task", "LoCoV1QasperAbstract", "--output", str(out)]
    plain = _run(capsys, *common)
    plain_file = out / "per_query" / MODEL_DIR / "LoCoV1QasperAbstract.json"
    plain_bytes = plain_file.read_bytes()
    chunked = _run(capsys, *common, "--long-docs", "chunk")
    assert plain.keys() == chunked.keys()

    assert plain_file.read_bytes() == plain_bytes  # the chunked run did not overwrite the plain scores
    experiments = out / "results" / MODEL_DIR / "experiments"
    (experiment,) = [p.name for p in experiments.iterdir()]
    meta = json.loads((experiments / experiment / "model_meta.json").read_text())
    assert meta["experiment_kwargs"]["long_docs"] == "maxp"
    chunk_file = out / "per_query" / MODEL_DIR / "experiments" / experiment / "LoCoV1QasperAbstract.json"
    payload = json.loads(chunk_file.read_text())
    assert payload["experiment"] == experiment and json.loads(plain_bytes)["experiment"] is None
    chunk_result = json.loads((experiments / experiment / "LoCoV1QasperAbstract.json").read_text())
    entry = chunk_result["scores"]["test"][0]
    values = payload["scores"]["default"]["test"]["ndcg_at_10"]
    assert abs(math.fsum(values.values()) / len(values) - entry["ndcg_at_10"]) <= 1e-12

    # Both runs under one output: a choice is needed; the model name picks the plain run,
    # mteb's "NAME (k=v, ...)" or NAME/experiments/EXPERIMENT the chunked one.
    with pytest.raises(ValueError, match="experiments/" + experiment):
        load_run(out)
    assert load_run(out, model=MODEL).experiment is None
    label = ModelMeta.model_construct(name=MODEL, experiment_kwargs=meta["experiment_kwargs"])
    label = label.model_name_with_experiment
    for choice in (label, f"{MODEL}/experiments/{experiment}"):
        run = load_run(out, model=choice)
        assert run.experiment == experiment and run.label == label
        assert run.per_query["LoCoV1QasperAbstract"] == payload["scores"]
        assert run.task_results["LoCoV1QasperAbstract"].scores["test"][0]["ndcg_at_10"] == entry["ndcg_at_10"]

    # `complexir report` on the chunked folder, the plain run as baseline: per-query scores on both sides.
    report = tmp_path / "report"
    assert main(["report", str(experiments / experiment), "--baseline", str(out), "--baseline-model", MODEL,
                 "--out", str(report), "--allow-demo"]) == 0
    significance = json.loads((report / "complexir_report" / "significance.json").read_text())
    assert significance["experiment"] == experiment and significance["baseline_experiment"] is None
    tested = {t["metric"]: t for t in significance["tests"]}
    assert tested["ndcg_at_10"]["n"] == len(values)
    assert label in (report / "complexir_report" / "report.md").read_text()


def test_data_dir_hub_reads_the_hub_even_with_the_variable_set(tmp_path, monkeypatch):
    """`--data-dir hub` is the Hub whatever COMPLEXIR_DATA_DIR says: the tasks handed to mteb read the Hub repos
    in their metadata (the Hub read itself is stopped at the boundary, mteb.evaluate)."""
    import mteb

    from complexir.hub.data_source import DATA_DIR_ENV, choose_source
    from complexir.tasks.layout_task import LayoutRetrievalTask

    monkeypatch.setenv(DATA_DIR_ENV, str(demo_data_dir()))
    # what the mteb hook decides for tasks without a source of their own, with the variable set: its folder
    monkeypatch.setattr(LayoutRetrievalTask, "default_source", choose_source(None, os.environ, None))
    handed: list = []

    class HubReached(Exception):
        pass

    def evaluate(model, tasks, **kwargs):
        handed.extend(tasks)
        raise HubReached

    monkeypatch.setattr(mteb, "evaluate", evaluate)
    # the CLI reports the stop as an error (exit code != 0) after mteb.evaluate received the tasks
    assert main(["run", "--data-dir", "hub", "--task", "CRUMBLegalQA", "--task", "LoCoV1GovReport",
                 "--output", str(tmp_path)]) != 0
    assert [t.metadata.name for t in handed] == ["CRUMBLegalQA", "LoCoV1GovReport"]
    # (offline, with no repo cached, reading would build from the upstream release: the source is what counts here)
    assert [t.source.locate(t.benchmark_dir, t.metadata.dataset["path"], t.metadata.dataset["revision"])
            for t in handed] == [("complexir/crumb", "main"), ("complexir/locov1", "main")]
    assert all(t.source.is_hub and t.data_dir is None for t in handed)

    # and without --data-dir the variable wins over the packaged demos
    handed.clear()
    assert main(["run", "--task", "CRUMBLegalQA", "--output", str(tmp_path)]) != 0
    assert handed[0].data_source() == (str(demo_data_dir().resolve() / "crumb"), None)


def test_a_failing_task_is_reported_and_the_others_still_run(tmp_path, capsys, monkeypatch):
    """The first task fails while loading; the second still runs, its result and per-query files are written,
    the table shows the failure with its reason, and the exit code says something failed."""
    from complexir.tasks import TASKS_BY_NAME

    def broken(self, *args, **kwargs):
        raise OSError("disk on fire\nsecond line is not shown")

    monkeypatch.setattr(TASKS_BY_NAME["IRSCQuery"], "load_data", broken)
    out = tmp_path / "out"
    assert main(["run", "--task", "IRSCQuery", "--task", "IRSCTitle", "--output", str(out)]) == 1
    captured = capsys.readouterr()
    rows = table_rows(captured.out)
    failed = [r for r in rows if r[1] == "IRSCQuery"]
    assert len(failed) == 1 and " ".join(failed[0]).count("FAILED: OSError: disk on fire") == 1
    assert "second line" not in captured.out
    assert {r[1] for r in rows} == {"IRSCQuery", "IRSCTitle"} and len(rows) > 1
    assert "1 of 2 task(s) failed: IRSCQuery" in captured.err
    assert (out / "results" / MODEL_DIR / "IRSCTitle.json").is_file()
    assert (out / "per_query" / MODEL_DIR / "IRSCTitle.json").is_file()
    assert not (out / "per_query" / MODEL_DIR / "IRSCQuery.json").exists()
