"""`complexir run` end to end: the packaged model on every demo benchmark, then a cached rerun."""

from __future__ import annotations

import json

import pytest

from complexir.cli.main import main
from complexir.cli.run_cmd import demo_data_dir
from complexir.tasks import BENCHMARKS, TASKS
from complexir.validation import validate_folder

MODEL_DIR = "sentence-transformers__all-MiniLM-L6-v2/8b3219a92973c328a8e22fadcfa821b5dc75636a"


def table_rows(out: str) -> list[list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("benchmark "))
    return [line.split() for line in lines[start + 2:] if line.strip()]


def test_every_benchmark_ships_a_valid_demo():
    folders = sorted(p.name for p in demo_data_dir().iterdir() if p.is_dir())
    assert folders == ["coveragebench", "crumb", "irsc", "locov1"]
    for name in folders:
        assert validate_folder(demo_data_dir() / name)
    for bench in BENCHMARKS:  # every benchmark has at least one task runnable on its demo
        assert any(type(t)().available_in(demo_data_dir()) for t in bench.tasks), bench.name


def test_run_with_no_arguments_then_cached_rerun(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default --output is ./results
    cache = tmp_path / "embeddings"
    assert main(["run", "--cache", str(cache)]) == 0
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert {row[0] for row in rows} == {"CRUMB", "IRSC", "LoCoV1", "CoverageBench"}
    runnable = [cls.metadata.name for cls in TASKS if cls().available_in(demo_data_dir())]
    assert sorted({row[1] for row in rows}) == sorted(runnable)
    assert all(row[-1] != "cached" for row in rows)  # the first run encodes every corpus

    results = tmp_path / "results" / "results" / MODEL_DIR
    assert (results / "model_meta.json").is_file()
    for name in runnable:
        result = json.loads((results / f"{name}.json").read_text())
        assert result["task_name"] == name
        for entry in result["scores"]["test"]:
            assert 0.0 <= entry["main_score"] <= 1.0 + 1e-9  # α-nDCG may exceed 1 only through the greedy ideal
        per_query = json.loads((tmp_path / "results" / "per_query" / MODEL_DIR / f"{name}.json").read_text())
        assert per_query["model"] == "sentence-transformers/all-MiniLM-L6-v2"
        for subset, splits in per_query["scores"].items():
            values = splits["test"]["ndcg_at_10"]
            entry = next(e for e in result["scores"]["test"] if e["hf_subset"] == subset)
            assert set(splits["test"]) <= set(entry)  # no per-query measure beyond what the task retrieved
            # CRUMB's official mean also counts judged queries without a positive (0 by definition)
            queries = entry.get("official_judged_queries", len(values))
            assert sum(values.values()) / queries == pytest.approx(entry["ndcg_at_10"], abs=1e-5)  # MTEB rounds

    # A rerun of one benchmark with the same cache encodes nothing and gives the same scores.
    assert main(["run", "--cache", str(cache), "--benchmark", "IRSC", "--output", str(tmp_path / "again")]) == 0
    again = table_rows(capsys.readouterr().out)
    assert again and all(row[-1] == "cached" for row in again)
    # main score, nDCG@10, R@100: the columns every table has
    first = {tuple(r[1:4]): r[4:7] for r in rows if r[0] == "IRSC"}
    assert {tuple(r[1:4]): r[4:7] for r in again} == first


def test_run_rejects_unknown_names(capsys):
    assert main(["run", "--benchmark", "NoSuchBench"]) == 1
    assert "unknown benchmark" in capsys.readouterr().err
    assert main(["run", "--task", "NoSuchTask"]) == 1
    assert "unknown task" in capsys.readouterr().err
