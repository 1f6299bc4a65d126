"""Adding a benchmark is a spec, a loading script, a task module, a card template and fixtures, nothing else.

The toy benchmark ``Fifth`` lives in ``tests/fixtures/fifth/`` only. Registered here with
``complexir.registry.benchmarks.register`` (and, for the plain ``mteb`` CLI in a subprocess, through the entry point
that
folder declares), it is built, validated, run, reported and listed by mteb with no edit anywhere else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from run_output import MODEL_DIR

from complexir.cli.main import main
from complexir.registry import benchmarks

FIFTH = Path(__file__).parent / "fixtures" / "fifth"


@pytest.fixture(scope="module")
def fifth():
    sys.path.insert(0, str(FIFTH))
    try:
        import complexir_fifth_spec
    finally:
        sys.path.remove(str(FIFTH))
    sys.path.append(str(FIFTH))  # its loading script and task module are imported by name when needed
    benchmarks.register(complexir_fifth_spec.SPEC)
    yield complexir_fifth_spec.SPEC
    benchmarks.unregister(complexir_fifth_spec.SPEC.folder)
    sys.path.remove(str(FIFTH))


@pytest.fixture(scope="module")
def built(fifth, tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("fifth") / "data"
    assert main(["build", "fifth", "--source", str(FIFTH / "upstream"), "--out", str(data / "fifth"),
                 "--no-progress"]) == 0
    return data


def test_registry_knows_it(fifth) -> None:
    from complexir.tasks import benchmark_of, tasks_by_name

    assert benchmarks.get_spec("fifth") is fifth and fifth in benchmarks.all_specs()
    assert benchmark_of()["FifthFacts"] == "Fifth"
    assert tasks_by_name()["FifthFacts"].metadata.dataset["path"] == "complexir/fifth"
    with pytest.raises(ValueError, match="clashes"):
        benchmarks.register(benchmarks.BenchmarkSpec(**{**fifth.__dict__, "folder": "crumb"}))


def test_build_and_validate(built: Path, capsys) -> None:
    card = (built / "fifth" / "README.md").read_text(encoding="utf-8")
    assert "# Fifth (a toy benchmark)" in card and "license: cc-by-4.0" in card  # its own card template
    capsys.readouterr()
    assert main(["validate", str(built / "fifth")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert json.dumps(report).count("facts") >= 1


def test_run_and_report(built: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["run", "--benchmark", "Fifth", "--data-dir", str(built), "--output", str(out)]) == 0
    table = capsys.readouterr().out
    assert "FifthFacts" in table and "Fifth " in table
    result = json.loads((out / "results" / MODEL_DIR / "FifthFacts.json").read_text())
    assert result["scores"]["test"][0]["ndcg_at_10"] > 0.8  # five easy questions over their five answers
    per_query = json.loads((out / "per_query" / MODEL_DIR / "FifthFacts.json").read_text())
    assert sorted(per_query["scores"]["default"]["test"]["ndcg_at_10"]) == ["q1", "q2", "q3", "q4", "q5"]

    assert main(["report", str(out / "results"), "--out", str(tmp_path / "report"), "--debug"]) == 0
    card = (tmp_path / "report" / "README.md").read_text(encoding="utf-8")
    assert "FifthFacts" in card and "Fifth" in card

    # a full-benchmark report lands on the Hub Benchmark its build made: every (dataset.id, task_id) of its
    # .eval_results is an id of the built folder's eval.yaml, and the benchmark's value is the mean of the task
    # main scores on the files' scale
    import yaml

    from complexir.mteb.internals import hf_eval_meta

    eval_yaml = hf_eval_meta().model_validate(yaml.safe_load((built / "fifth" / "eval.yaml").read_text()))
    ids = {task.id for task in eval_yaml.tasks}
    files = sorted((tmp_path / "report" / ".eval_results").glob("*.yaml"))
    assert [f.name for f in files] == ["Fifth.yaml", "FifthFacts.yaml"]
    entries = [e for f in files for e in yaml.safe_load(f.read_text())]
    assert {(e["dataset"]["id"], e["dataset"]["task_id"]) for e in entries} <= {("complexir/fifth", i) for i in ids}
    headline = next(e["value"] for e in entries if e["dataset"]["task_id"] == "Fifth")
    assert headline == pytest.approx(result["scores"]["test"][0]["main_score"] * 100, abs=1e-6)


@pytest.mark.slow  # the mteb CLI in a subprocess
def test_plain_mteb_cli_lists_it() -> None:
    """A new process finds the benchmark through the entry point (the hook registers its tasks with mteb)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(FIFTH), os.environ.get("PYTHONPATH")])),
           "COMPLEXIR_MTEB_HOOK": "strict", "HF_HUB_OFFLINE": "1"}
    listing = subprocess.run([sys.executable, "-c", "import sys; from mteb.cli import main; sys.argv[0] = 'mteb'; "
                              "main()", "available-tasks"], env=env, capture_output=True, text=True, timeout=300)
    assert listing.returncode == 0, listing.stderr[-3000:]
    assert "- FifthFacts," in listing.stdout
